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
