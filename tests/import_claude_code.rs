//! `import claude-code`: what it reports, skips, links and refuses on small
//! logs written by the tests (`test_support::claude_code_log`), the command,
//! then every real log in `../shared/data/claude-code`. The conversion's
//! rules are tested inside the crate (`import::claude_code_tests`).

use crate::common;
use common::claude_code_log::*;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use smith_calibrate::import::{self, claude_code, ImportedSession};
use smith_calibrate::transcript::{self, Role};

// ---------------------------------------------------------------- builders

fn skip_lines(s: &ImportedSession) -> Vec<usize> {
    s.log.skipped.iter().map(|k| k.line).collect()
}

// ------------------------------------------------------------------- rules

#[test]
fn unusable_lines_are_reported_with_their_line_and_the_rest_imported() {
    let mut log = Log::new();
    log.user("go"); // line 1
    log.raw("{not json"); // 2
    log.raw("[1, 2]"); // 3
    log.raw(r#"{"uuid": "u-x", "message": {}}"#); // 4: no type
    log.result("nobody", json!("orphan"), None); // 5
    let dup = log.lines[0].clone();
    log.raw(&dup); // 6: same uuid as line 1
    log.push(json!({"type": "assistant", "message": {"model": "<synthetic>", "id": "s", "role": "assistant",
                    "content": [text("API Error")]}})); // 7
    log.push(json!({"type": "user", "message": {"role": "user", "content": 5}})); // 8
    log.part("m1", json!({"id": "x"})); // 9: a block without a type
    log.part("m1", text("fine")); // 10
    let s = log.convert();
    // Line 7 is Claude Code's own `<synthetic>` line: left out, counted as
    // written by the agent, not as damage.
    assert_eq!(skip_lines(&s), vec![2, 3, 4, 5, 6, 8, 9]);
    assert_eq!(s.file.import.agent_written, 1);
    let reasons: Vec<&str> = s.log.skipped.iter().map(|k| k.reason.as_str()).collect();
    // Each reason whole: not JSON, the orphan result naming its call
    // `nobody`, the line that repeats line 1, the block without a type.
    common::assert_fixture(
        &(reasons.join("\n") + "\n"),
        "import_claude_code/skip_reasons.txt",
    );
    assert_eq!(roles(&s), vec![Role::User, Role::Assistant]);
    assert_eq!(texts(&s.messages[1]), vec!["fine"]);
    assert_eq!(s.file.import.skipped, 7);
    let mut report = Vec::new();
    s.report(&mut report).unwrap();
    let report = String::from_utf8(report).unwrap();
    common::assert_fixture(&report, "import_claude_code/skip_report.txt");
}

#[test]
fn a_late_line_of_a_response_already_followed_by_another_is_skipped() {
    let mut log = Log::new();
    log.user("go")
        .part("m1", text("a"))
        .part("m2", text("b"))
        .part("m1", text("late"));
    let s = log.convert();
    assert_eq!(
        roles(&s),
        vec![Role::User, Role::Assistant, Role::Assistant]
    );
    assert_eq!(skip_lines(&s), vec![4]);
    common::assert_text(
        &s.log.skipped[0].reason,
        "a late line of the response begun on line 2, which another response followed",
    );
}

#[test]
fn a_subagents_line_in_a_main_log_is_not_its_history() {
    let mut log = Log::new();
    log.user("go")
        .push(json!({"type": "user", "isSidechain": true, "message": {"role": "user", "content": "sub task"}}))
        .part("m1", text("done"));
    let s = log.convert();
    assert_eq!(roles(&s), vec![Role::User, Role::Assistant]);
    // Issue 16: not skipped any more but imported as a subagent session of
    // its own (tests/import_sidechain.rs); the main session notes it.
    assert!(skip_lines(&s).is_empty());
    assert!(s
        .notes
        .iter()
        .any(|n| n.line == 2 && n.reason.contains("isSidechain")));
}

#[test]
fn a_log_that_continues_a_conversation_recorded_elsewhere_has_an_incomplete_context() {
    let mut log = Log::new();
    log.push(json!({"type": "user", "parentUuid": "not-in-this-file", "message": {"role": "user", "content": "Summarize"}}))
        .part("m1", text("summary"));
    let s = log.convert();
    assert!(!s.file.context_complete);
    common::assert_text(s.file.context_note.as_deref().unwrap(), "line 1 continues a conversation recorded elsewhere (parentUuid not-in-this-file is not in this log): the model saw more than this transcript");
    let mut whole = Log::new();
    whole.user("go").part("m1", text("x"));
    assert!(whole.convert().file.context_complete);
}

#[test]
fn subagent_logs_are_sessions_linked_to_their_parent() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("projects").join("-home-me-app");
    let mut main = Log::new();
    main.user("go")
        .part("m1", tool_use("t1", "Task", json!({"prompt": "explore"})))
        .result("t1", json!([text("found it")]), None);
    main.write(&project.join("abc.jsonl"));
    let mut sub = Log::new();
    sub.push(
        json!({"type": "user", "isSidechain": true, "agentId": "a1", "sessionId": "abc",
                   "message": {"role": "user", "content": "explore"}}),
    )
    .push(
        json!({"type": "assistant", "isSidechain": true, "agentId": "a1", "sessionId": "abc",
                     "message": {"model": "claude-haiku-4-5", "id": "s1", "role": "assistant",
                                 "content": [text("found it")], "usage": {"input_tokens": 9}}}),
    );
    sub.write(&project.join("abc").join("subagents").join("agent-a1.jsonl"));
    let out = tmp.path().join("out");
    let files = import::find_files(
        &tmp.path().join("projects"),
        &out,
        &claude_code::is_session_log,
    )
    .unwrap();
    assert_eq!(files.len(), 2);
    let outcome = import::import_files(&files, &out, |f| Ok(claude_code::import_file(f)?)).unwrap();
    let ids: Vec<&str> = outcome
        .sessions
        .iter()
        .map(|s| s.file.id.as_str())
        .collect();
    assert_eq!(ids, vec!["cc-abc-agent-a1", "cc-abc"]);
    let child = &outcome.sessions[0].file;
    assert_eq!(child.parent_id.as_deref(), Some("cc-abc"));
    assert_eq!(child.source.agent_id.as_deref(), Some("a1"));
    assert!(child.context_complete);
    let index: Vec<Value> =
        serde_json::from_slice(&fs::read(out.join("index.json")).unwrap()).unwrap();
    let parents: BTreeMap<String, Option<String>> = index
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["parent_id"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(parents["cc-abc-agent-a1"].as_deref(), Some("cc-abc"));
    assert_eq!(parents["cc-abc"], None);
}

#[test]
fn a_reimport_replaces_its_own_output_and_never_touches_the_input() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in").join("s1.jsonl");
    let mut log = Log::new();
    log.user("go").part("m1", text("ok"));
    log.write(&input);
    let before = fs::read(&input).unwrap();
    let out = tmp.path().join("out");
    // A stale file from an earlier run must disappear with the replacement.
    fs::create_dir_all(out.join("cc-s1")).unwrap();
    fs::write(
        out.join("cc-s1").join("session.json"),
        r#"{"id":"cc-s1","source":{"format":"claude-code","path":"x"}}"#,
    )
    .unwrap();
    fs::write(out.join("cc-s1").join("stale"), "old").unwrap();
    // So must what an interrupted run left behind.
    let leftover = out.join(".cc-s1.tmp-999-0");
    fs::create_dir_all(&leftover).unwrap();
    fs::write(leftover.join("transcript.jsonl"), "").unwrap();
    let files = vec![input.clone()];
    import::import_files(&files, &out, |f| Ok(claude_code::import_file(f)?)).unwrap();
    let first = fs::read(out.join("cc-s1").join("transcript.jsonl")).unwrap();
    import::import_files(&files, &out, |f| Ok(claude_code::import_file(f)?)).unwrap();
    assert_eq!(
        fs::read(out.join("cc-s1").join("transcript.jsonl")).unwrap(),
        first
    );
    assert!(!out.join("cc-s1").join("stale").exists());
    assert_eq!(fs::read(&input).unwrap(), before);
    let names: BTreeSet<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["cc-s1".to_string(), "index.json".to_string()])
    );
    let index: Vec<Value> =
        serde_json::from_slice(&fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(index.len(), 1);
    let in_dir: Vec<_> = fs::read_dir(input.parent().unwrap()).unwrap().collect();
    assert_eq!(in_dir.len(), 1);
}

#[test]
fn an_existing_directory_that_is_not_an_import_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in").join("s1.jsonl");
    let mut log = Log::new();
    log.user("go").part("m1", text("ok"));
    log.write(&input);
    let out = tmp.path().join("out");
    let theirs = out.join("cc-s1");
    fs::create_dir_all(&theirs).unwrap();
    fs::write(theirs.join("session.json"), r#"{"id":"cc-s1","model":"x"}"#).unwrap();
    let err =
        import::import_files(&[input], &out, |f| Ok(claude_code::import_file(f)?)).unwrap_err();
    common::assert_text(&common::scrub(&format!("{err:#}"), tmp.path()), "1 sessions could not be written: <DIR>/out/cc-s1: exists and is not an imported session; move it away or choose another --out");
    assert_eq!(
        fs::read_to_string(theirs.join("session.json")).unwrap(),
        r#"{"id":"cc-s1","model":"x"}"#
    );
}

#[test]
fn an_output_directory_inside_the_input_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("projects");
    fs::create_dir_all(&input).unwrap();
    assert!(
        import::check_output_outside(&input.join("out"), std::slice::from_ref(&input)).is_err()
    );
    assert!(
        import::check_output_outside(&tmp.path().join("out"), std::slice::from_ref(&input)).is_ok()
    );
    // The binary says so and exits 2 without writing anything.
    let mut log = Log::new();
    log.user("go").part("m1", text("ok"));
    log.write(&input.join("p").join("s.jsonl"));
    let status = crate::common::bin()
        .args(["import", "claude-code"])
        .arg(&input)
        .arg("--out")
        .arg(input.join("p").join("out"))
        .output()
        .unwrap();
    assert_eq!(
        status.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(!input.join("p").join("out").exists());
}

#[test]
fn the_command_imports_a_directory_and_the_sessions_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("projects");
    let mut log = Log::new();
    log.user("go")
        .part("m1", tool_use("t1", "Read", json!({"file_path": "/a"})))
        .result("t1", json!("contents"), None)
        .part("m2", text("done"));
    log.write(&input.join("p").join("s.jsonl"));
    let out = tmp.path().join("out");
    let run = crate::common::bin()
        .args(["import", "claude-code"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    common::assert_fixture(
        &common::scrub(&stdout, tmp.path()),
        "import_claude_code/imported.txt",
    );
    let found = transcript::resolve_all(&[out.display().to_string()]).unwrap();
    assert_eq!(found.len(), 1);
    let session = transcript::load(&found[0]).unwrap();
    assert!(session.log.skipped.is_empty());
    assert_eq!(session.messages.len(), 4);
    assert_eq!(session.meta.as_ref().unwrap().id.as_deref(), Some("cc-s"));
    assert!(import::pairing_problems(&session.messages).is_empty());

    // Nothing to import is exit 1.
    let empty = tmp.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let run = crate::common::bin()
        .args(["import", "claude-code"])
        .arg(&empty)
        .arg("--out")
        .arg(tmp.path().join("out2"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
}

#[test]
fn a_block_type_nothing_can_use_is_named_once_per_folder_by_import_and_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("projects");
    for name in ["a", "b"] {
        let mut log = Log::new();
        log.user("go");
        for k in 0..4 {
            let id = format!("m{k}");
            log.part(&id, json!({"type": "fancy_new_block"}))
                .part(&id, text("ok"));
        }
        log.write(&input.join("p").join(format!("{name}.jsonl")));
    }
    let clause = "8 blocks of a type nothing here can use left out: \"fancy_new_block\" (8)";
    let out = tmp.path().join("out");
    let run = crate::common::bin()
        .args(["import", "claude-code"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = (common::stdout(&run), common::stderr(&run));
    assert!(run.status.success(), "{stderr}");
    assert_eq!(stdout.matches(clause).count(), 1, "{stdout}");
    assert!(!stderr.contains("fancy_new_block"), "{stderr}");
    // Read where they are: one note for the folder, nothing per line.
    let run = crate::common::bin()
        .args(["transcript", "list"])
        .arg(&input)
        .output()
        .unwrap();
    let stderr = common::stderr(&run);
    assert!(run.status.success(), "{stderr}");
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("fancy_new_block"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].ends_with(&format!("/p: {clause}")), "{stderr}");
}

// --------------------------------------------------------------- real data

/// What a log should import to, counted straight from its lines.
#[derive(Debug, Default, PartialEq)]
struct Expected {
    assistants: usize,
    tool_messages: usize,
    tool_calls: usize,
    users: usize,
    synthetic_users: usize,
    boundaries: Vec<u64>,
    /// message.id -> (prompt tokens, largest output tokens)
    usage: BTreeMap<String, (u64, u64)>,
}

fn expected(path: &Path) -> Expected {
    let mut e = Expected::default();
    let mut responses: Vec<String> = Vec::new();
    let mut calls: HashMap<String, BTreeSet<String>> = HashMap::new();
    for line in fs::read_to_string(path).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("system") if v["subtype"] == "compact_boundary" => e
                .boundaries
                .push(v["compactMetadata"]["preTokens"].as_u64().unwrap()),
            Some("assistant") => {
                let id = v["message"]["id"].as_str().unwrap().to_string();
                if !responses.contains(&id) {
                    responses.push(id.clone());
                }
                for b in v["message"]["content"].as_array().unwrap() {
                    if b["type"] == "tool_use" {
                        calls
                            .entry(id.clone())
                            .or_default()
                            .insert(b["id"].as_str().unwrap().to_string());
                    }
                }
                let u = &v["message"]["usage"];
                let n = |k: &str| u[k].as_u64().unwrap_or(0);
                let prompt = n("input_tokens")
                    + n("cache_creation_input_tokens")
                    + n("cache_read_input_tokens");
                let slot = e.usage.entry(id).or_insert((0, 0));
                slot.0 = slot.0.max(prompt);
                slot.1 = slot.1.max(n("output_tokens"));
            }
            Some("user") if v["isCompactSummary"] != true => {
                let c = &v["message"]["content"];
                let first_text = match c {
                    Value::String(s) => Some(s.clone()),
                    Value::Array(a) => a
                        .iter()
                        .find(|b| b["type"] == "text")
                        .and_then(|b| b["text"].as_str().map(str::to_string)),
                    _ => None,
                };
                if let Some(t) = first_text {
                    e.users += 1;
                    if v["isMeta"] == true || claude_code::harness_written(&t) {
                        e.synthetic_users += 1;
                    }
                }
            }
            _ => {}
        }
    }
    e.assistants = responses.len();
    e.tool_messages = calls.len();
    e.tool_calls = calls.values().map(BTreeSet::len).sum();
    e
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn every_real_claude_code_log_imports_with_the_counts_of_its_source() {
    let dir = common::shared_data("claude-code");
    let started = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let all = import::find_files(&dir, &out, &claude_code::is_session_log).unwrap();
    assert!(all.len() >= 20, "{} logs", all.len());
    // A log of nothing but file-history snapshots has no history to import,
    // and the import says so; every other log gives its session.
    let has_history = |f: &Path| {
        fs::read_to_string(f).unwrap().lines().any(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            matches!(v["type"].as_str(), Some("user" | "assistant"))
        })
    };
    let (files, empty): (Vec<_>, Vec<_>) = all.into_iter().partition(|f| has_history(f));
    let outcome = import::import_files(&files, &out, |f| Ok(claude_code::import_file(f)?)).unwrap();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(outcome.sessions.len(), files.len());
    let nothing = import::import_files(&empty, &tmp.path().join("empty"), |f| {
        Ok(claude_code::import_file(f)?)
    })
    .unwrap();
    assert_eq!(
        nothing.failures.len(),
        empty.len(),
        "{:?}",
        nothing.failures
    );
    assert!(nothing
        .failures
        .iter()
        .all(|f| f.ends_with("skipped: no history in it (no message could be imported)")));
    let mut messages = 0;
    let mut partial = 0;
    for (file, s) in files.iter().zip(&outcome.sessions) {
        let name = file.display();
        // spotter's logs, which the converter was built on, import whole.
        // The later sources have lines it cannot use, each named with why:
        // a result whose call is not in the response before it (a
        // compaction call's log opens with one; a few sessions have them
        // mid-way). Their sessions are not held to the line counts below.
        let known = |k: &smith_calibrate::transcript::Skip| {
            k.reason
                .ends_with("which the response before it did not make")
        };
        assert!(
            s.log.skipped.iter().all(known),
            "{name}: {:?}",
            s.log.skipped
        );
        if file.to_string_lossy().contains("/spotter/") {
            assert!(s.log.skipped.is_empty(), "{name}: {:?}", s.log.skipped);
            assert_eq!(s.file.import.synthetic_results, 0, "{name}: {:?}", s.notes);
        }
        let orphans = s
            .log
            .skipped
            .iter()
            .filter(|k| {
                k.reason
                    .ends_with("which the response before it did not make")
            })
            .count();
        if orphans > 0 {
            partial += 1;
        }
        // Sessions with Claude Code's own `<synthetic>` lines (left out,
        // counted as written by the agent) are not held to them either.
        if !s.log.skipped.is_empty()
            || s.file.import.synthetic_results > 0
            || s.file.import.agent_written > 0
        {
            continue;
        }
        let e = expected(file);
        let c = &s.file.import;
        assert_eq!(
            c.messages,
            e.assistants + e.tool_messages + e.users,
            "{name}"
        );
        assert_eq!(c.tool_calls, e.tool_calls, "{name}");
        assert_eq!(c.synthetic_user_messages, e.synthetic_users, "{name}");
        let pre: Vec<u64> = s
            .file
            .full_compactions()
            .map(|b| b.pre_tokens.unwrap())
            .collect();
        assert_eq!(pre, e.boundaries, "{name}");
        assert!(
            s.file
                .full_compactions()
                .all(|b| b.summary_bytes.unwrap() > 1000 && b.summary.is_some()),
            "{name}"
        );
        // One request per response, with the largest figures of its lines.
        assert_eq!(s.file.requests.len(), e.usage.len(), "{name}");
        let got: BTreeSet<(u64, u64)> = s
            .file
            .requests
            .iter()
            .map(|r| (r.prompt_tokens(), r.output_tokens))
            .collect();
        let want: BTreeSet<(u64, u64)> = e.usage.values().copied().collect();
        assert_eq!(got, want, "{name}");

        // Read back through smith's reader: same messages, every call paired.
        let back =
            transcript::session::load_path(&out.join(&s.file.id).join("transcript.jsonl")).unwrap();
        assert!(back.log.skipped.is_empty(), "{name}");
        assert_eq!(back.messages.len(), c.messages, "{name}");
        let problems = import::pairing_problems(&back.messages);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        for r in &s.file.requests {
            assert_eq!(
                back.messages[r.message_index].role,
                Role::Assistant,
                "{name}"
            );
        }
        messages += c.messages;
    }
    let subagents = outcome
        .sessions
        .iter()
        .filter(|s| s.file.parent_id.is_some())
        .count();
    assert_eq!(
        subagents,
        files
            .iter()
            .filter(|f| {
                // In `subagents/`, or an older layout's (or a renamed copy's)
                // `agent-<id>.jsonl` beside the sessions.
                let name = f.file_name().unwrap().to_string_lossy();
                f.to_string_lossy().contains("/subagents/")
                    || name.starts_with("agent-")
                    || name.contains("-agent-")
            })
            .count()
    );
    // Results it cannot pair stay the exception: 21 of the 209 logs here
    // (all but spotter's), an open limitation of the converter.
    assert!(
        partial * 8 <= files.len(),
        "{partial} of {} logs lost results",
        files.len()
    );
    println!(
        "imported {} Claude Code logs ({} subagents, {} messages; {} with results not paired) in {:.2?}",
        files.len(),
        subagents,
        messages,
        partial,
        started.elapsed()
    );
}
