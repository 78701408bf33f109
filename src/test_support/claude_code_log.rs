//! Claude Code logs written by the tests, line by line, as Claude Code
//! writes them: for the conversion's rules inside the crate
//! (`import::claude_code_tests`) and the command's tests.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use smith_calibrate::import::{claude_code, ImportedSession};
use smith_calibrate::transcript::{Message, Role};

/// Lines of a log under construction, each with a fresh uuid chained to the
/// previous line, as Claude Code writes them.
pub(crate) struct Log {
    pub(crate) lines: Vec<String>,
    pub(crate) n: usize,
    pub(crate) last: Option<String>,
}

impl Log {
    pub(crate) fn new() -> Log {
        Log {
            lines: Vec::new(),
            n: 0,
            last: None,
        }
    }

    pub(crate) fn push(&mut self, mut v: Value) -> &mut Log {
        self.n += 1;
        let uuid = format!("00000000-0000-4000-8000-{:012x}", self.n);
        let obj = v.as_object_mut().unwrap();
        obj.entry("uuid").or_insert(json!(uuid));
        obj.entry("parentUuid").or_insert(json!(self.last));
        obj.entry("sessionId").or_insert(json!("sess"));
        obj.entry("cwd").or_insert(json!("/work/project"));
        obj.entry("timestamp")
            .or_insert(json!(format!("2026-02-10T21:{:02}:00.000Z", self.n % 60)));
        self.last = obj["uuid"].as_str().map(str::to_string);
        self.lines.push(v.to_string());
        self
    }

    pub(crate) fn raw(&mut self, line: &str) -> &mut Log {
        self.lines.push(line.to_string());
        self
    }

    pub(crate) fn user(&mut self, text: &str) -> &mut Log {
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}))
    }

    pub(crate) fn meta(&mut self, text: &str) -> &mut Log {
        self.push(
            json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": text}}),
        )
    }

    /// One line of the response `id` holding `block`.
    pub(crate) fn part(&mut self, id: &str, block: Value) -> &mut Log {
        self.part_usage(id, block, json!({"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000, "output_tokens": 1}))
    }

    pub(crate) fn part_usage(&mut self, id: &str, block: Value, usage: Value) -> &mut Log {
        self.push(json!({"type": "assistant", "message": {
            "model": "claude-opus-4-6", "id": id, "type": "message", "role": "assistant",
            "content": [block], "stop_reason": null, "usage": usage}}))
    }

    pub(crate) fn results(&mut self, results: Value) -> &mut Log {
        self.push(json!({"type": "user", "message": {"role": "user", "content": results}}))
    }

    pub(crate) fn result(&mut self, id: &str, content: Value, is_error: Option<bool>) -> &mut Log {
        let mut r = json!({"type": "tool_result", "tool_use_id": id, "content": content});
        if let Some(e) = is_error {
            r["is_error"] = json!(e);
        }
        self.results(json!([r]))
    }

    pub(crate) fn noise(&mut self) -> &mut Log {
        self.push(json!({"type": "progress", "data": {"type": "hook_progress"}}))
            .push(json!({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}))
            .push(json!({"type": "queue-operation", "operation": "enqueue"}))
            .push(json!({"type": "system", "subtype": "turn_duration", "durationMs": 5}))
    }

    pub(crate) fn text(&self) -> String {
        self.lines.join("\n") + "\n"
    }

    pub(crate) fn write(&self, path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, self.text()).unwrap();
    }

    pub(crate) fn convert(&self) -> ImportedSession {
        claude_code::convert(
            self.text().as_bytes(),
            Path::new("/logs/project/session.jsonl"),
        )
        .unwrap()
    }
}

pub(crate) fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

pub(crate) fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

pub(crate) fn texts(m: &Message) -> Vec<String> {
    m.content
        .iter()
        .map(|b| b.text_lossy().into_owned())
        .collect()
}

pub(crate) fn roles(s: &ImportedSession) -> Vec<Role> {
    s.messages.iter().map(|m| m.role).collect()
}
