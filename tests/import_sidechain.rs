//! Claude Code's older logs keep a subagent's lines inline in the main file
//! (`isSidechain: true`): they become subagent sessions of their own, as the
//! newer `subagents/` files do, instead of skipped lines.

use std::io::Cursor;
use std::path::Path;

use serde_json::{json, Value};
use smith_calibrate::import::claude_code;
use smith_calibrate::transcript::Role;

fn line(n: usize, parent: Option<usize>, side: bool, v: Value) -> String {
    let mut v = v;
    let o = v.as_object_mut().unwrap();
    o.insert(
        "uuid".into(),
        json!(format!("00000000-0000-4000-8000-{n:012}")),
    );
    o.insert(
        "parentUuid".into(),
        json!(parent.map(|p| format!("00000000-0000-4000-8000-{p:012}"))),
    );
    o.insert("isSidechain".into(), json!(side));
    o.insert("sessionId".into(), json!("main"));
    o.insert("timestamp".into(), json!("2025-06-01T10:00:00.000Z"));
    v.to_string()
}

fn user(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text}})
}

fn answer(id: &str, text: &str) -> Value {
    json!({"type": "assistant", "message": {"id": id, "role": "assistant", "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 2000, "output_tokens": 5}}})
}

#[test]
fn inline_subagent_lines_become_sessions_of_their_own() {
    let log = [
        line(1, None, false, user("main task")),
        line(2, Some(1), false, answer("m1", "delegating")),
        // Two subagent conversations, interleaved, each a chain of its own.
        line(3, None, true, user("sub task A")),
        line(4, None, true, user("sub task B")),
        line(5, Some(3), true, answer("a1", "A done")),
        line(6, Some(4), true, answer("b1", "B done")),
        line(7, Some(2), false, user("thanks")),
        line(8, Some(7), false, answer("m2", "ok")),
    ]
    .join("\n");
    let text = log.clone();
    let all = claude_code::convert_all(Cursor::new(log), Path::new("/p/main.jsonl")).unwrap();
    assert_eq!(all.len(), 3, "the main session and two subagents");
    let main = &all[0];
    assert_eq!(main.messages.len(), 4);
    assert_eq!(main.file.requests.len(), 2);
    assert!(main.log.skipped.is_empty(), "{:?}", main.log.skipped);
    assert!(main
        .notes
        .iter()
        .any(|n| n.line == 3 && n.reason.contains("2 subagent sessions")));
    for (sub, task) in all[1..].iter().zip(["sub task A", "sub task B"]) {
        assert_eq!(sub.file.parent_id, Some(main.file.id.clone()));
        assert_ne!(sub.file.id, main.file.id);
        let roles: Vec<Role> = sub.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant]);
        assert_eq!(sub.messages[0].content[0].text_lossy(), task);
        assert_eq!(sub.file.requests.len(), 1);
    }
    assert_ne!(all[1].file.id, all[2].file.id);
    // Through the command: every session written, each subagent linked to
    // the main session (not to another session of the same file).
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("main.jsonl"), &text).unwrap();
    let out = tmp.path().join("out");
    let o = crate::common::bin()
        .args(["import", "claude-code"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut parents = Vec::new();
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path().join("session.json");
        if let Ok(text) = std::fs::read_to_string(&p) {
            let v: Value = serde_json::from_str(&text).unwrap();
            parents.push((
                v["id"].as_str().unwrap().to_string(),
                v["parent_id"].clone(),
            ));
        }
    }
    parents.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(parents.len(), 3, "{parents:?}");
    assert_eq!(parents[0], ("cc-main".to_string(), Value::Null));
    assert!(
        parents[1..].iter().all(|(_, p)| p == "cc-main"),
        "{parents:?}"
    );
    // `convert` keeps the file's own session only.
    let log = [
        line(1, None, false, user("main task")),
        line(2, None, true, user("sub")),
    ]
    .join("\n");
    let one = claude_code::convert(Cursor::new(log), Path::new("/p/main.jsonl")).unwrap();
    assert_eq!(one.messages.len(), 1);
}
