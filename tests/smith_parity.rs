//! Parity with smith's own code, byte for byte, through the command: the
//! history `replay --emit-history-at` writes is what smith's writer writes.
//! The reader's, writer's and engine's parity is tested inside the crate
//! (`transcript::parity_tests`).

use crate::common;
use common::{assert_text, bin, output, scrub};

use std::fs;
use std::path::Path;

use smith_calibrate::transcript::reader::read_transcript;

/// Shows bytes readably in a failure.
fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A session exercising every class at once: ids, an escaped and repeated
/// tool_args key, a tool result of three-byte characters that truncation cuts
/// inside one, an out-of-range integer on a line smith skips (so every later
/// request is one message off if it is not skipped), a synthetic message.
fn parity_session(dir: &Path) -> std::path::PathBuf {
    let big = "メ".repeat(1334); // 4002 bytes
    let lines = [
        r#"{"role":"user","content":[{"type":"text","text":"fix it"}],"synthetic":false,"id":"47995aa81683cdb4"}"#.to_string(),
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"t1","tool_name":"bash","tool_args":{"cmd":"ls","s":"\u00e9\t\u0000\u007f\/\ud83d\ude00","n":-0,"f":1E5,"big":9223372036854775807,"cmd":"cat"}}]}"#.to_string(),
        format!(r#"{{"role":"tool","content":[{{"type":"tool_result","text":"{big}","tool_call_id":"t1"}}]}}"#),
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"t2","tool_name":"bash","tool_args":{"n":18446744073709551616}}]}"#.to_string(),
        r#"{"role":"user","content":[{"type":"text","text":"b"}]}"#.to_string(),
        r#"{"role":"user","content":[{"type":"text","text":"c"}]}"#.to_string(),
        r#"{"role":"user","content":[{"type":"text","text":"d"}]}"#.to_string(),
        r#"{"role":"user","content":[{"type":"text","text":"go on"}],"synthetic":true}"#.to_string(),
        r#"{"role":"assistant","content":[{"type":"text","text":"done"}]}"#.to_string(),
    ];
    let sdir = dir.join("session-parity");
    fs::create_dir_all(&sdir).unwrap();
    let p = sdir.join("transcript.jsonl");
    fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
fn emit_history_at_writes_exactly_smiths_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = parity_session(dir.path());
    let o = output(
        bin()
            .args(["replay", "--max-tokens", "1000", "--emit-history-at", "1"])
            .arg(&p),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_text(&scrub(&err, dir.path()), "<DIR>/session-parity/transcript.jsonl:4: skipped: content[0].tool_args: 18446744073709551616 does not fit a signed 64-bit integer (smith: Invalid Int64) (column 107)\n");

    let mut want: Vec<u8> = Vec::new();
    want.extend_from_slice(br#"{"role":"user","content":[{"type":"text","text":"fix it"}],"synthetic":false,"id":"47995aa81683cdb4"}"#);
    want.push(b'\n');
    want.extend_from_slice(r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"t1","tool_name":"bash","tool_args":{"cmd":"cat","s":"é\t\u0000\u007f/😀","n":0,"f":100000.0,"big":9223372036854775807}}],"synthetic":false}"#.as_bytes());
    want.push(b'\n');
    // The result, cut by stage 2 at 512 bytes: 170 characters and two bytes
    // of the 171st, then the marker; rebuilt with `is_error` (smith's
    // `tool_result` constructor always sets it).
    want.extend_from_slice(br#"{"role":"tool","content":[{"type":"tool_result","text":""#);
    want.extend_from_slice("メ".repeat(170).as_bytes());
    want.extend_from_slice(b"\xE3\x83");
    want.extend_from_slice(br#"\n\n[... 3 KiB truncated by smith to stay within the context window ...]","tool_call_id":"t1","is_error":false}],"synthetic":false}"#);
    want.push(b'\n');
    for t in ["b", "c", "d"] {
        want.extend_from_slice(
            format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"{t}"}}],"synthetic":false}}"#
            )
            .as_bytes(),
        );
        want.push(b'\n');
    }
    want.extend_from_slice(
        br#"{"role":"user","content":[{"type":"text","text":"go on"}],"synthetic":true}"#,
    );
    want.push(b'\n');
    assert_eq!(show(&o.stdout), show(&want));
    assert_eq!(o.stdout, want, "byte for byte");

    // The written history is smith input: read back, it is the same
    // history, and written again, the same bytes.
    let back = dir.path().join("back/transcript.jsonl");
    fs::create_dir_all(back.parent().unwrap()).unwrap();
    fs::write(&back, &o.stdout).unwrap();
    let t = read_transcript(&back).unwrap();
    assert!(t.log.skipped.is_empty(), "{:?}", t.log.skipped);
    let again: Vec<u8> = t
        .messages
        .iter()
        .flat_map(|m| {
            let mut l = m.to_json_bytes();
            l.push(b'\n');
            l
        })
        .collect();
    assert_eq!(again, want);

    // The trace of that request: truncate reclaimed all of before - after.
    let o = output(
        bin()
            .args(["replay", "--max-tokens", "1000", "--trace"])
            .arg(&p),
    );
    let lines: Vec<serde_json::Value> = o
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "the skipped line is not a request");
    let r = &lines[1];
    assert_eq!(r["message_index"], 7);
    assert_eq!(r["stages"], serde_json::json!(["truncate"]));
    let (before, after) = (r["before"].as_i64().unwrap(), r["after"].as_i64().unwrap());
    assert!(before > 800, "{r}");
    assert_eq!(
        r["reclaimed"],
        serde_json::json!({"truncate": before - after})
    );
}
