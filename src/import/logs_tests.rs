//! A folder read in place gives the same sessions whether it keeps its
//! transcripts or makes them again from its logs.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::test_support::claude_code_log::{text, tool_use, Log};

/// Each session's name, `session.json` and transcript, the transcript as
/// loading makes it.
fn sessions(format: Format, logs: &[PathBuf], hold: bool) -> Vec<(PathBuf, Vec<u8>, Vec<u8>)> {
    let (sessions, _) = convert_holding(format, logs, hold).unwrap();
    sessions
        .into_iter()
        .map(|(r, _)| {
            let c = r.converted.as_ref().expect("a converted session");
            let transcript = (c.transcript)().unwrap();
            assert_eq!(
                transcript.len() as u64,
                c.transcript_len,
                "{}",
                r.transcript.display()
            );
            (r.transcript.clone(), c.meta.clone(), transcript)
        })
        .collect()
}

fn small_log(dir: &Path) -> PathBuf {
    let mut log = Log::new();
    log.user("list the files")
        .part_usage(
            "msg_1",
            tool_use("toolu_1", "Bash", json!({"command": "ls"})),
            json!({"input_tokens": 10, "cache_creation_input_tokens": 900, "output_tokens": 20}),
        )
        .result("toolu_1", json!("a.rs\nb.rs"), None)
        .part_usage(
            "msg_2",
            text("Two files."),
            json!({"input_tokens": 5, "cache_read_input_tokens": 900, "output_tokens": 4}),
        );
    let path = dir.join("s.jsonl");
    log.write(&path);
    path
}

#[test]
fn a_transcript_made_again_is_the_one_kept_and_a_changed_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let logs = vec![small_log(dir.path())];
    let held = sessions(Format::ClaudeCode, &logs, true);
    let made = sessions(Format::ClaudeCode, &logs, false);
    assert_eq!(held.len(), 1);
    assert!(!held[0].2.is_empty());
    assert_eq!(held, made);

    // A session still being written: its session.json no longer describes
    // the log, so the transcript is refused rather than mixed with it.
    let (refs, _) = convert_holding(Format::ClaudeCode, &logs, false).unwrap();
    let (kept, _) = convert_holding(Format::ClaudeCode, &logs, true).unwrap();
    let mut more = std::fs::read_to_string(&logs[0]).unwrap();
    more.push_str(&Log::new().user("one more thing").text());
    std::fs::write(&logs[0], more).unwrap();
    let c = refs[0].0.converted.as_ref().unwrap();
    let err = (c.transcript)().unwrap_err().to_string();
    assert!(err.contains("the log changed since it was read"), "{err}");
    assert!(err.contains("s.jsonl"), "{err}");
    // One kept is the one the metadata was made with.
    let c = kept[0].0.converted.as_ref().unwrap();
    assert_eq!((c.transcript)().unwrap(), held[0].2);
}

fn jsonl_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            jsonl_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn real_logs_made_again_give_the_sessions_kept() {
    for source in [
        "claude-code/4thehalibit",
        "claude-code/kaceybui",
        "codex/msrnic",
    ] {
        let mut logs = Vec::new();
        jsonl_under(&crate::test_support::shared_data(source), &mut logs);
        logs.sort();
        let format = format_of(&logs[0]).unwrap();
        let logs: Vec<PathBuf> = logs
            .into_iter()
            .filter(|l| format_of(l) == Some(format))
            .collect();
        let held = sessions(format, &logs, true);
        let made = sessions(format, &logs, false);
        assert!(held.len() > 3, "{source}: {} sessions", held.len());
        assert_eq!(held.len(), made.len(), "{source}");
        for (h, m) in held.iter().zip(&made) {
            assert_eq!(h.0, m.0, "{source}");
            assert!(
                h.1 == m.1,
                "{source}: {}: session.json differs",
                h.0.display()
            );
            assert!(
                h.2 == m.2,
                "{source}: {}: transcript differs",
                h.0.display()
            );
        }
    }
}
