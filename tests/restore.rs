//! `transcript restore`: a new smith session from a transcript, checked
//! byte for byte against `replay --emit-history-at`, with the session index
//! updated under two concurrent restores and refused when malformed.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use common::*;
use serde_json::Value;
use smith_calibrate::transcript::{Block, Message};

fn run_in(home: &Path, args: &[&str]) -> Output {
    crate::common::bin()
        .args(args)
        .env("SMITH_HOME", home)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn ok(o: Output) -> Vec<u8> {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// A session that compacts under a 4000-token window: thinking, large
/// results, repeated reads.
fn long_session(turns: usize) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    for t in 0..turns {
        h.push(user(&format!("turn {t}: please look at src/f{}.rs", t % 3)));
        let id = format!("c{t}");
        h.push(assistant_blocks(vec![
            thinking(&filler_str(200 + t * 7), "sig"),
            Block::tool_use(
                &id,
                "read_file",
                &format!("{{\"path\":\"src/f{}.rs\"}}", t % 3),
            ),
        ]));
        h.push(result(&id, &filler(900 + (t * 379) % 2000)));
        h.push(assistant(&format!("done with turn {t}")));
    }
    h
}

/// `<home>/sessions/<name>` holding the transcript and a smith session.json.
fn smith_session(home: &Path, name: &str, messages: &[Arc<Message>]) -> PathBuf {
    let transcript = write_session(&home.join("sessions"), name, messages);
    let dir = transcript.parent().unwrap().to_path_buf();
    fs::write(
        dir.join("session.json"),
        format!(
            r#"{{"id":"{name}","created_at":"2025-03-01T10:00:00+01:00","updated_at":"2025-03-01T11:00:00+01:00","cwd":"/src/project","model":"claude-sonnet-4-5","provider":"anthropic","messages":[],"usage":{{"prompt_tokens":11,"completion_tokens":22,"total_tokens":33,"cache_creation_tokens":4,"cache_read_tokens":5}},"todos":[{{"content":"fix it","status":"pending"}}],"name":"{name}","context_ratio":1.25}}"#
        ),
    )
    .unwrap();
    dir
}

/// Every file under `dir` with its bytes, to prove nothing changed.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The bytes of `"messages":[...]` that `lines` (JSONL) make in session.json.
fn messages_field(lines: &[u8]) -> Vec<u8> {
    let mut field = b"\"messages\":[".to_vec();
    let body: Vec<&[u8]> = lines
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    field.extend_from_slice(&body.join(&b","[..]));
    field.push(b']');
    field
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn restore_at_k_is_the_emitted_history_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let source = smith_session(home.path(), "long", &long_session(30));
    let transcript = source.join("transcript.jsonl");
    let t = transcript.to_str().unwrap();
    let engine = ["--max-tokens", "4000", "--compact-at", "0.7"];
    let mut compacted = 0;
    for k in [0usize, 5, 17, 29] {
        let ks = k.to_string();
        let mut args = vec!["replay", t, "--emit-history-at", &ks];
        args.extend(engine);
        let emitted = ok(run_in(home.path(), &args));
        let out = home.path().join(format!("restored-{k}"));
        let o = out.to_str().unwrap();
        let mut args = vec!["transcript", "restore", t, "--at", &ks, "--out", o];
        args.extend(engine);
        ok(run_in(home.path(), &args));
        let restored = fs::read(out.join("transcript.jsonl")).unwrap();
        assert_eq!(restored, emitted, "request {k}: transcript.jsonl differs");
        let meta = fs::read(out.join("session.json")).unwrap();
        assert!(
            contains(&meta, &messages_field(&emitted)),
            "request {k}: session.json's messages are not the emitted history's bytes"
        );
        // Read back through the reader, the history is the same again.
        let shown = ok(run_in(
            home.path(),
            &[
                "transcript",
                "show",
                out.to_str().unwrap(),
                "--json",
                "--no-pager",
            ],
        ));
        assert_eq!(shown, emitted, "request {k}: reading the restore back");
        if emitted.len() < fs::read(&transcript).unwrap().len() / 2 {
            compacted += 1;
        }
    }
    assert!(
        compacted >= 2,
        "the late requests must be compacted histories"
    );
}

#[test]
fn whole_record_restore_holds_every_message_and_smiths_fields() {
    let home = tempfile::tempdir().unwrap();
    let mut record = long_session(12);
    record.insert(5, synthetic_user("[harness] continue"));
    let source = smith_session(home.path(), "whole", &record);
    let before = snapshot(&source);
    let out = home.path().join("copy");
    ok(run_in(
        home.path(),
        &[
            "transcript",
            "restore",
            "whole",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let original = fs::read(source.join("transcript.jsonl")).unwrap();
    assert_eq!(fs::read(out.join("transcript.jsonl")).unwrap(), original);
    let meta_bytes = fs::read(out.join("session.json")).unwrap();
    assert!(contains(&meta_bytes, &messages_field(&original)));
    let meta: Value = serde_json::from_slice(&meta_bytes).unwrap();
    let keys: Vec<&str> = meta
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "created_at",
            "updated_at",
            "cwd",
            "model",
            "provider",
            "messages",
            "usage",
            "todos",
            "parent_id",
            "context_ratio"
        ]
    );
    assert_eq!(meta["messages"].as_array().unwrap().len(), record.len());
    assert_eq!(meta["cwd"], "/src/project");
    assert_eq!(meta["model"], "claude-sonnet-4-5");
    assert_eq!(meta["provider"], "anthropic");
    assert_eq!(meta["usage"]["cache_read_tokens"], 5);
    assert_eq!(meta["todos"][0]["content"], "fix it");
    assert_eq!(meta["parent_id"], "whole");
    assert!(contains(&meta_bytes, b"\"context_ratio\":1.25}"));
    assert_eq!(snapshot(&source), before, "the source session was modified");

    // An existing non-empty directory is refused and left alone, and so is
    // the source itself.
    let existing = home.path().join("existing");
    fs::create_dir(&existing).unwrap();
    fs::write(existing.join("keep.txt"), "mine").unwrap();
    let o = run_in(
        home.path(),
        &[
            "transcript",
            "restore",
            "whole",
            "--out",
            existing.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_text(&scrub(&err, home.path()), "smith-calibrate: <DIR>/existing: exists and is not empty; a restore never writes into an existing session, choose a new directory\n");
    assert_eq!(snapshot(&existing).len(), 1);
    let inside = source.join("sub");
    let o = run_in(
        home.path(),
        &[
            "transcript",
            "restore",
            "whole",
            "--out",
            inside.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_text(&scrub(&stderr(&o), home.path()), "smith-calibrate: --out <DIR>/sessions/whole/sub lies inside the session it restores (<DIR>/sessions/whole); choose a directory outside it\n");
    assert_eq!(snapshot(&source), before);
}

#[test]
fn two_concurrent_restores_into_smith_home_both_stay_in_the_index() {
    let home = tempfile::tempdir().unwrap();
    smith_session(home.path(), "busy", &long_session(8));
    let index = home.path().join("sessions/index.json");
    fs::write(
        &index,
        r#"[{"id":"busy","created_at":"2025-03-01T10:00:00+01:00","updated_at":"2025-03-01T11:00:00+01:00","first_prompt":"turn 0","message_count":32,"name":"busy"}]"#,
    )
    .unwrap();
    for round in 0..3 {
        let spawn = |at: &str| {
            crate::common::bin()
                .args([
                    "transcript",
                    "restore",
                    "busy",
                    "--into-smith-home",
                    "--json",
                    "--at",
                    at,
                ])
                .env("SMITH_HOME", home.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn("3"), spawn("3"));
        let a: Value = serde_json::from_slice(&ok(a.wait_with_output().unwrap())).unwrap();
        let b: Value = serde_json::from_slice(&ok(b.wait_with_output().unwrap())).unwrap();
        assert_ne!(a["id"], b["id"]);
        assert_ne!(a["name"], b["name"], "names must stay unambiguous");
        let entries: Vec<Value> = serde_json::from_slice(&fs::read(&index).unwrap()).unwrap();
        assert_eq!(entries.len(), 3 + 2 * round, "round {round}: {entries:#?}");
        for id in [&a["id"], &b["id"], &Value::from("busy")] {
            assert!(entries.iter().any(|e| &e["id"] == id), "{id} lost");
        }
        for r in [&a, &b] {
            let dir = PathBuf::from(r["dir"].as_str().unwrap());
            assert_eq!(dir.parent().unwrap(), home.path().join("sessions"));
            let meta: Value =
                serde_json::from_slice(&fs::read(dir.join("session.json")).unwrap()).unwrap();
            assert_eq!(meta["id"], r["id"]);
            assert!(r["name"]
                .as_str()
                .unwrap()
                .starts_with("busy-restored-at-3"));
            let entry = entries.iter().find(|e| e["id"] == r["id"]).unwrap();
            assert_eq!(entry["name"], r["name"]);
            assert_eq!(entry["parent_id"], "busy");
            assert_eq!(
                entry["message_count"],
                meta["messages"].as_array().unwrap().len()
            );
            assert_eq!(entry["first_prompt"], "turn 0: please look at src/f0.rs");
        }
    }
    assert!(!home.path().join("sessions/index.json.lock").exists());
    // The restore resolves by its name like any session.
    let entries: Vec<Value> = serde_json::from_slice(&fs::read(&index).unwrap()).unwrap();
    let name = entries[0]["name"].as_str().unwrap().to_string();
    ok(run_in(home.path(), &["transcript", "stats", &name]));
}

#[test]
fn a_malformed_index_is_named_and_nothing_is_written() {
    let home = tempfile::tempdir().unwrap();
    smith_session(home.path(), "broken", &long_session(4));
    let index = home.path().join("sessions/index.json");
    fs::write(&index, "[{\"id\": \"broken\",\n  oops}]").unwrap();
    let before = snapshot(home.path());
    let dir = home.path().join("sessions/broken");
    let o = run_in(
        home.path(),
        &[
            "transcript",
            "restore",
            dir.to_str().unwrap(),
            "--into-smith-home",
        ],
    );
    assert!(
        !o.status.success(),
        "a malformed index must stop the restore"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_text(&scrub(&err, home.path()), "smith-calibrate: <DIR>/sessions/index.json:2: not a list of sessions (key must be a string at line 2 column 3); nothing was written. Repair or move it away, then restore again\n");
    assert_eq!(snapshot(home.path()), before, "something was written");
}

#[test]
fn a_request_past_the_end_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    let source = smith_session(home.path(), "short", &long_session(2));
    let out = home.path().join("x");
    let o = run_in(
        home.path(),
        &[
            "transcript",
            "restore",
            source.to_str().unwrap(),
            "--at",
            "9",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_text(
        &scrub(&stderr(&o), home.path()),
        "smith-calibrate: request 9 does not exist: the session has 4 requests (0..3)\n",
    );
    assert!(!out.exists());
}

/// The shared real data (see `common::shared_data`); the test calling this
/// is reported as ignored where it is absent.
fn shared_data() -> Option<PathBuf> {
    Some(crate::common::shared_data(""))
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn real_claude_code_sessions_restore_to_the_emitted_history() {
    let Some(data) = shared_data() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let imported = tmp.path().join("cc");
    ok(run_in(
        tmp.path(),
        &[
            "import",
            "claude-code",
            data.join("claude-code").to_str().unwrap(),
            "--out",
            imported.to_str().unwrap(),
        ],
    ));
    // The three largest sessions, each at a late request under a window
    // small enough to compact.
    let mut transcripts: Vec<(u64, PathBuf)> = fs::read_dir(&imported)
        .unwrap()
        .map(|e| e.unwrap().path().join("transcript.jsonl"))
        .filter(|p| p.is_file())
        .map(|p| (fs::metadata(&p).unwrap().len(), p))
        .collect();
    transcripts.sort();
    let mut checked = 0;
    for (_, t) in transcripts.iter().rev().take(3) {
        let t = t.to_str().unwrap();
        let summary: Value = serde_json::from_slice(&ok(run_in(
            tmp.path(),
            &["replay", t, "--json", "--max-tokens", "30000"],
        )))
        .unwrap();
        let requests = summary["requests"].as_u64().unwrap();
        if requests == 0 {
            continue;
        }
        let k = (requests * 9 / 10).to_string();
        let emitted = ok(run_in(
            tmp.path(),
            &[
                "replay",
                t,
                "--emit-history-at",
                &k,
                "--max-tokens",
                "30000",
            ],
        ));
        let out = tmp.path().join(format!("restored-{checked}"));
        ok(run_in(
            tmp.path(),
            &[
                "transcript",
                "restore",
                t,
                "--at",
                &k,
                "--max-tokens",
                "30000",
                "--out",
                out.to_str().unwrap(),
            ],
        ));
        assert_eq!(
            fs::read(out.join("transcript.jsonl")).unwrap(),
            emitted,
            "{t} at {k}"
        );
        assert!(contains(
            &fs::read(out.join("session.json")).unwrap(),
            &messages_field(&emitted)
        ));
        checked += 1;
    }
    assert!(checked > 0);
    eprintln!("restored {checked} real sessions at a late request, byte for byte");
}
