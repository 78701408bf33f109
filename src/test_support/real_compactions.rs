//! A hand-made Claude Code log whose compactions, summary, re-fetches and
//! costs are known: measured inside the crate (`loss::real_tests`) and
//! imported, calibrated and replayed by the commands' tests.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

pub(crate) const MODEL_ID: &str = "claude-opus-4-6";

/// A log under construction: uuids chained, a minute per line.
pub(crate) struct Log {
    pub(crate) lines: Vec<String>,
    pub(crate) n: usize,
}

impl Log {
    pub(crate) fn push(&mut self, mut v: Value) -> &mut Log {
        self.n += 1;
        let o = v.as_object_mut().unwrap();
        o.insert(
            "uuid".into(),
            json!(format!("00000000-0000-4000-8000-{:012x}", self.n)),
        );
        if self.n > 1 {
            o.insert(
                "parentUuid".into(),
                json!(format!("00000000-0000-4000-8000-{:012x}", self.n - 1)),
            );
        }
        o.insert("sessionId".into(), json!("sess"));
        o.insert("timestamp".into(), json!(time(self.n)));
        self.lines.push(v.to_string());
        self
    }

    pub(crate) fn user(&mut self, text: &str) -> &mut Log {
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}))
    }

    /// One response: `text` and, if given, one call.
    pub(crate) fn assistant(
        &mut self,
        id: &str,
        text: &str,
        call: Option<(&str, &str, Value)>,
        usage: [u64; 4],
    ) -> &mut Log {
        let mut content = vec![json!({"type": "text", "text": text})];
        if let Some((call_id, name, input)) = call {
            content.push(json!({"type": "tool_use", "id": call_id, "name": name, "input": input}));
        }
        self.push(json!({"type": "assistant", "message": {
            "model": MODEL_ID, "id": id, "role": "assistant", "content": content,
            "usage": {"input_tokens": usage[0], "cache_read_input_tokens": usage[1],
                      "cache_creation_input_tokens": usage[2], "output_tokens": usage[3]}}}))
    }

    pub(crate) fn result(&mut self, call_id: &str, text: &str) -> &mut Log {
        self.push(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": text}]}}),
        )
    }
}

pub(crate) fn time(n: usize) -> String {
    format!("2026-02-10T{:02}:{:02}:00.000Z", 10 + n / 60, n % 60)
}

pub(crate) const USAGE: [u64; 4] = [3, 1000, 200, 50];

pub(crate) const SUMMARY: &str = "Summary: the user asked to fix the failing test gamma_case_7. \
We read src/alpha_module.rs and ran the tests.";

/// The hand-made session: four results before a full compaction (a file
/// read fetched again after it, a command whose token the summary keeps, a
/// read of a file edited before the compaction and read again after, the
/// edit), then a micro-compaction clearing the re-read.
pub(crate) fn write_log(dir: &Path) -> PathBuf {
    let mut log = Log {
        lines: Vec::new(),
        n: 0,
    };
    let alpha = "fn alpha_helper_fn() { beta_value_42 }";
    log.user("fix the bug")
        .assistant("r1", "reading", Some(("t1", "Read", json!({"file_path": "/w/src/alpha_module.rs"}))), USAGE)
        .result("t1", alpha)
        .assistant("r2", "testing", Some(("t2", "Bash", json!({"command": "cargo test --quiet"}))), USAGE)
        .result("t2", "test result: FAILED gamma_case_7")
        .assistant("r3", "reading", Some(("t3", "Read", json!({"file_path": "/w/src/delta_file.rs"}))), USAGE)
        .result("t3", "struct DeltaThing { epsilon_field_9: u32 }")
        .assistant("r4", "editing", Some(("t4", "Edit", json!({"file_path": "/w/src/delta_file.rs", "old_string": "u32", "new_string": "u64"}))), USAGE)
        .result("t4", "The file has been updated.")
        .push(json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                     "compactMetadata": {"trigger": "auto", "preTokens": 5000}}))
        .push(json!({"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": SUMMARY}}))
        // Fetched again: the same path, another range (message 9).
        .assistant("r5", "Looking at alpha_helper_fn again", Some(("t5", "Read", json!({"file_path": "/w/src/alpha_module.rs", "offset": 1}))), [5, 2000, 300, 60])
        .result("t5", alpha)
        // Not fetched again: the file was edited since the first read.
        .assistant("r6", "checking the edit", Some(("t6", "Read", json!({"file_path": "/w/src/delta_file.rs"}))), USAGE)
        .result("t6", "struct DeltaThing { epsilon_field_9: u64 }")
        .push(json!({"type": "system", "subtype": "microcompact_boundary", "content": "Context microcompacted",
                     "microcompactMetadata": {"trigger": "auto", "preTokens": 4000, "tokensSaved": 120,
                                              "compactedToolIds": ["t5"]}}))
        .assistant("r7", "gamma_case_7 is the failing case", None, USAGE)
        .assistant("r8", "it returns beta_value_42", None, USAGE);
    let project = dir.join("proj");
    let subagents = project.join("sess").join("subagents");
    fs::create_dir_all(&subagents).unwrap();
    // The compaction call: ends the line before the boundary (line 10).
    let call = json!({"type": "assistant", "agentId": "acompact-abc123", "sessionId": "sess", "uuid": "c1",
                      "timestamp": time(9),
                      "message": {"model": MODEL_ID, "id": "c", "role": "assistant",
                                  "content": [{"type": "text", "text": SUMMARY}]}});
    fs::write(
        subagents.join("agent-acompact-abc123.jsonl"),
        format!("{call}\n"),
    )
    .unwrap();
    // Another, hours earlier: not this compaction's.
    let old = json!({"type": "assistant", "agentId": "acompact-old000", "sessionId": "sess", "uuid": "c2",
                     "timestamp": "2026-02-09T01:00:00.000Z",
                     "message": {"model": MODEL_ID, "id": "d", "role": "assistant", "content": [{"type": "text", "text": "x"}]}});
    fs::write(
        subagents.join("agent-acompact-old000.jsonl"),
        format!("{old}\n"),
    )
    .unwrap();
    let path = project.join("sess.jsonl");
    fs::write(&path, log.lines.join("\n") + "\n").unwrap();
    path
}
