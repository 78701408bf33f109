//! `import claude-code`: one test per rule of the conversion, on small logs
//! written by the tests (`test_support::claude_code_log`).

use serde_json::json;
use smith_calibrate::import::{self, NO_RESULT_TEXT};
use smith_calibrate::transcript::{BlockType, Role};

use crate::test_support::claude_code_log::*;

#[test]
fn only_user_and_assistant_lines_are_history() {
    let mut log = Log::new();
    log.noise()
        .user("hi")
        .noise()
        .part("m1", text("hello"))
        .noise();
    let s = log.convert();
    assert_eq!(roles(&s), vec![Role::User, Role::Assistant]);
    assert!(s.log.skipped.is_empty(), "{:?}", s.log.skipped);
    assert_eq!(s.log.lines, 14);
}

#[test]
fn lines_sharing_a_message_id_are_one_assistant_message() {
    let mut log = Log::new();
    log.user("go")
        .part("m1", text("\n\n"))
        .part(
            "m1",
            json!({"type": "thinking", "thinking": "let me see", "signature": "c2ln"}),
        )
        .part("m1", text("Looking."))
        .part(
            "m1",
            tool_use("t1", "Bash", json!({"command": "ls", "timeout": 30000})),
        )
        .result("t1", json!("a\nb"), Some(false));
    let s = log.convert();
    assert_eq!(roles(&s), vec![Role::User, Role::Assistant, Role::Tool]);
    let a = &s.messages[1];
    let kinds: Vec<BlockType> = a.content.iter().map(|b| b.kind).collect();
    assert_eq!(
        kinds,
        vec![
            BlockType::Text,
            BlockType::Thinking,
            BlockType::Text,
            BlockType::ToolUse
        ]
    );
    assert_eq!(a.content[1].signature.as_deref(), Some("c2ln"));
    assert_eq!(a.content[1].text_lossy(), "let me see");
    let call = &a.content[3];
    assert_eq!(call.tool_call_id.as_deref(), Some("t1"));
    assert_eq!(
        call.tool_args.as_deref(),
        Some(r#"{"command":"ls","timeout":30000}"#)
    );
    assert_eq!(s.file.requests.len(), 1);
}

#[test]
fn results_become_one_tool_message_in_the_order_of_the_calls() {
    let mut log = Log::new();
    log.user("go")
        .part("m1", tool_use("tA", "Read", json!({"file_path": "/a"})))
        .part("m1", tool_use("tB", "Grep", json!({"pattern": "x"})))
        .part("m1", tool_use("tC", "WebFetch", json!({"url": "u"})))
        // Results arrive out of order, one per line, in every content shape.
        .result("tC", json!([text("one"), text("two"), {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]), None)
        .result("tB", json!("no matches"), Some(true))
        .result("tA", json!(null), None);
    let s = log.convert();
    assert_eq!(roles(&s), vec![Role::User, Role::Assistant, Role::Tool]);
    let tool = &s.messages[2];
    let ids: Vec<&str> = tool
        .content
        .iter()
        .map(|b| b.tool_call_id.as_deref().unwrap())
        .collect();
    assert_eq!(ids, vec!["tA", "tB", "tC", "tC"]);
    let kinds: Vec<BlockType> = tool.content.iter().map(|b| b.kind).collect();
    assert_eq!(
        kinds,
        vec![
            BlockType::ToolResult,
            BlockType::ToolResult,
            BlockType::ToolResult,
            BlockType::Image
        ]
    );
    assert_eq!(tool.content[0].text_lossy(), "");
    assert_eq!(tool.content[0].is_error, Some(false));
    assert_eq!(tool.content[1].is_error, Some(true));
    assert_eq!(tool.content[2].text_lossy(), "one\ntwo");
    assert_eq!(tool.content[3].media_type.as_deref(), Some("image/png"));
    assert!(import::pairing_problems(&s.messages).is_empty());
}

#[test]
fn results_logged_between_lines_of_their_response_still_follow_it() {
    // Claude Code runs a call as soon as it streams in: the result of the
    // first Read is logged before the second Read's line.
    let mut log = Log::new();
    log.user("go")
        .part("m1", tool_use("t1", "Read", json!({"file_path": "/a"})))
        .result("t1", json!("A"), None)
        .part("m1", tool_use("t2", "Read", json!({"file_path": "/b"})))
        .result("t2", json!("B"), None)
        .part("m2", text("done"));
    let s = log.convert();
    assert_eq!(
        roles(&s),
        vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(s.messages[1].content.len(), 2);
    assert_eq!(texts(&s.messages[2]), vec!["A", "B"]);
    assert_eq!(s.file.requests.len(), 2);
    assert_eq!(s.file.requests[1].message_index, 3);
}

#[test]
fn tool_names_map_to_smiths_where_smith_has_the_tool() {
    let names = [
        "Read",
        "Grep",
        "Glob",
        "Bash",
        "Edit",
        "MultiEdit",
        "Write",
        "WebFetch",
        "Task",
    ];
    let mut log = Log::new();
    log.user("go");
    for (i, n) in names.iter().enumerate() {
        log.part("m1", tool_use(&format!("t{i}"), n, json!({})));
    }
    for i in 0..names.len() {
        log.result(&format!("t{i}"), json!("ok"), None);
    }
    let s = log.convert();
    let got: Vec<&str> = s.messages[1]
        .content
        .iter()
        .map(|b| b.tool_name.as_deref().unwrap())
        .collect();
    assert_eq!(
        got,
        vec![
            "read_file",
            "grep",
            "glob",
            "bash",
            "edit_file",
            "edit_file",
            "write_file",
            "WebFetch",
            "Task"
        ]
    );
}

#[test]
fn a_compaction_is_marked_in_session_json_and_its_summary_kept_out_of_the_transcript() {
    let summary = "This session is being continued from a previous conversation. Summary: x";
    let mut log = Log::new();
    log.user("go")
        .part("m1", tool_use("t1", "Bash", json!({"command": "ls"})))
        .result("t1", json!("out"), None)
        .push(json!({"type": "system", "subtype": "compact_boundary", "parentUuid": null,
                     "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 167094}}))
        .push(json!({"type": "user", "isCompactSummary": true, "isVisibleInTranscriptOnly": true,
                     "message": {"role": "user", "content": summary}}))
        .part("m2", text("continuing"));
    let s = log.convert();
    assert_eq!(
        roles(&s),
        vec![Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert!(s
        .messages
        .iter()
        .all(|m| !texts(m).iter().any(|t| t.contains("continued from"))));
    let b = &s.file.compact_boundaries;
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].message_index, 3);
    assert_eq!(b[0].requests_before, 1);
    assert_eq!(b[0].pre_tokens, Some(167094));
    assert_eq!(b[0].trigger.as_deref(), Some("auto"));
    assert_eq!(b[0].summary_bytes, Some(summary.len() as u64));
    assert_eq!(b[0].line, 4);
}

#[test]
fn meta_and_harness_written_user_lines_are_synthetic() {
    let mut log = Log::new();
    log.user("fix the bug")
        .meta("<local-command-caveat>Caveat: generated by local commands</local-command-caveat>")
        .user("<command-name>/mcp</command-name>")
        .user("<local-command-stdout>Reconnected</local-command-stdout>")
        .user("<task-notification>\n<task-id>b1</task-id>")
        .results(json!([text("[Request interrupted by user]")]))
        .meta("Base directory for this skill: /x")
        .user("thanks");
    let s = log.convert();
    let synthetic: Vec<bool> = s.messages.iter().map(|m| m.synthetic).collect();
    assert_eq!(
        synthetic,
        vec![false, true, false, true, true, true, true, false]
    );
    assert_eq!(s.file.import.synthetic_user_messages, 5);
}

#[test]
fn user_lines_logged_while_a_response_is_open_follow_its_tool_message() {
    let mut log = Log::new();
    log.user("go")
        .part("m1", tool_use("t1", "Edit", json!({"file_path": "/a"})))
        .meta("<system-reminder>PostToolUse hook: compile error</system-reminder>")
        .result("t1", json!("edited"), None)
        .part("m2", text("ok"));
    let s = log.convert();
    assert_eq!(
        roles(&s),
        vec![
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::User,
            Role::Assistant
        ]
    );
    assert!(s.messages[3].synthetic);
}

#[test]
fn usage_is_kept_once_per_response_with_the_largest_figures() {
    let mut log = Log::new();
    log.user("go")
        .part_usage("m1", text("a"), json!({"input_tokens": 3, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 500, "output_tokens": 1}))
        .part_usage("m1", text("b"), json!({"input_tokens": 3, "cache_creation_input_tokens": 12, "cache_read_input_tokens": 500, "output_tokens": 40}))
        .part_usage("m1", text("c"), json!({"input_tokens": 2, "cache_creation_input_tokens": 12, "cache_read_input_tokens": 500, "output_tokens": 7}))
        .user("more")
        .part_usage("m2", text("d"), json!({"input_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 900, "output_tokens": 2}));
    let s = log.convert();
    let r = &s.file.requests;
    assert_eq!(r.len(), 2);
    assert_eq!(
        (
            r[0].message_index,
            r[0].input_tokens,
            r[0].cache_creation_input_tokens,
            r[0].cache_read_input_tokens,
            r[0].output_tokens
        ),
        (1, 3, 12, 500, 40)
    );
    assert_eq!(r[0].prompt_tokens(), 515);
    assert_eq!(r[0].model.as_deref(), Some("claude-opus-4-6"));
    assert_eq!((r[1].message_index, r[1].prompt_tokens()), (3, 901));
    assert_eq!(s.file.usage.completion_tokens, 42);
}

#[test]
fn a_call_without_a_result_gets_an_error_result() {
    let mut log = Log::new();
    log.user("go")
        .part(
            "m1",
            tool_use("t1", "Bash", json!({"command": "sleep 100"})),
        )
        .part("m1", tool_use("t2", "Bash", json!({"command": "ls"})))
        .result("t2", json!("x"), None)
        .results(json!([text("[Request interrupted by user for tool use]")]))
        .user("try again");
    let s = log.convert();
    assert_eq!(
        roles(&s),
        vec![
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::User,
            Role::User
        ]
    );
    let tool = &s.messages[2];
    assert_eq!(tool.content[0].tool_call_id.as_deref(), Some("t1"));
    assert_eq!(tool.content[0].text_lossy(), NO_RESULT_TEXT);
    assert_eq!(tool.content[0].is_error, Some(true));
    assert_eq!(tool.content[1].text_lossy(), "x");
    assert_eq!(s.file.import.synthetic_results, 1);
    assert_eq!(s.notes.len(), 1);
    assert_eq!(s.notes[0].line, 2);
    assert!(import::pairing_problems(&s.messages).is_empty());
}

/// A response that searched the web with Anthropic's server tool: the call,
/// its result and the answer, one block a line as Claude Code writes them.
fn web_search_log(with_search: bool) -> (Log, Vec<serde_json::Value>) {
    let call = json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
                      "input": {"query": "serde flatten attribute"}});
    let result = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
        {"type": "web_search_result", "url": "https://serde.rs/attr-flatten.html",
         "title": "Struct flattening", "encrypted_content": "EpcBCioIBxgCIiQ4ZjEw".repeat(40),
         "page_age": null}]});
    let first = json!({"input_tokens": 3, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 1000, "output_tokens": 60,
                       "server_tool_use": {"web_search_requests": 1}});
    let mut log = Log::new();
    log.user("how does serde's flatten work?");
    let blocks = if with_search {
        vec![call, result, text("It inlines the fields.")]
    } else {
        vec![text("It inlines the fields.")]
    };
    for b in &blocks {
        log.part_usage("m1", b.clone(), first.clone());
    }
    log.user("thanks").part_usage(
        "m2",
        text("welcome"),
        json!({"input_tokens": 3, "cache_creation_input_tokens": 500,
               "cache_read_input_tokens": 1000, "output_tokens": 2}),
    );
    (log, blocks)
}

#[test]
fn a_server_tools_call_and_result_are_context_of_the_assistant_message_and_priced() {
    let (log, blocks) = web_search_log(true);
    let s = log.convert();
    assert_eq!(
        roles(&s),
        vec![Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
    let a = &s.messages[1];
    // In the assistant message, in the order streamed, each as its JSON.
    let expected: Vec<String> = blocks
        .iter()
        .map(|b| match b["type"].as_str() {
            Some("text") => b["text"].as_str().unwrap().to_string(),
            _ => crate::transcript::json::value_to_string(b),
        })
        .collect();
    assert_eq!(texts(a), expected);
    assert!(a.content.iter().all(|b| b.kind == BlockType::Text));
    // Not a client tool call: nothing to pair, and nothing reported.
    assert_eq!(s.file.import.tool_calls, 0);
    assert!(import::pairing_problems(&s.messages).is_empty());
    assert!(s.log.skipped.is_empty(), "{:?}", s.log.skipped);
    assert!(s.file.import.not_imported.is_empty());
    assert_eq!(s.file.requests.len(), 2);
    // The estimate counts them: the message's bytes are the blocks' bytes.
    let json_bytes: usize = expected.iter().map(String::len).sum();
    assert_eq!(a.bytes(), json_bytes as u64);
    // The replay prices them: the second request's growth (500 tokens) is
    // given to what it sent first (the answer and "thanks") by their bytes,
    // so the answer with the search carries more of it than the same
    // answer without.
    let tokens = |s: &import::ImportedSession, i: usize| {
        let m = s.file.measured.as_ref().unwrap();
        m.tokens[i].expect("measured").tokens
    };
    assert_eq!(tokens(&s, 1) + tokens(&s, 2), 500);
    let share = tokens(&s, 1) as f64 / 500.0;
    let expected_share = a.bytes() as f64 / (a.bytes() + s.messages[2].bytes()) as f64;
    assert!(
        (share - expected_share).abs() < 0.01,
        "{share} {expected_share}"
    );
    let (plain, _) = web_search_log(false);
    let plain = plain.convert();
    assert!(tokens(&plain, 1) < tokens(&s, 1));
}

#[test]
fn a_block_type_nothing_can_use_is_counted_once_by_type_not_skipped_line_by_line() {
    let mut log = Log::new();
    log.user("go");
    for k in 0..12 {
        let id = format!("m{k}");
        log.part(&id, json!({"type": "fancy_new_block", "data": k}))
            .part(&id, text("ok"))
            .results(json!([{"type": "video", "source": {}}, text("next")]));
    }
    // A block that is no block at all is damage, named by its line.
    log.results(json!([{"source": {}}]));
    let s = log.convert();
    let counted: Vec<(&str, usize)> = s
        .file
        .import
        .not_imported
        .iter()
        .map(|(k, n)| (k.as_str(), *n))
        .collect();
    assert_eq!(counted, vec![("fancy_new_block", 12), ("video", 12)]);
    let skips: Vec<(usize, &str)> = s
        .log
        .skipped
        .iter()
        .map(|k| (k.line, k.reason.as_str()))
        .collect();
    assert_eq!(skips, vec![(38, "content[0]: a block without a \"type\"")]);
    assert_eq!(s.file.import.skipped, 1);
    // The rest of each line is imported.
    assert_eq!(s.messages.len(), 1 + 2 * 12);
    // Summed over sessions and named once, with each type's count.
    let mut totals = import::Totals::default();
    totals.add(&s.file.import);
    totals.add(&s.file.import);
    assert_eq!(
        import::not_imported_clause(&totals.not_imported).as_deref(),
        Some("48 blocks of a type nothing here can use left out: \"fancy_new_block\" (24), \"video\" (24)")
    );
}
