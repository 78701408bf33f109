//! The bad-input corpus: each broken log a user can have, and what the user
//! sees for it. Expected everywhere: no panic, `path:line: reason` for each
//! skipped line (the first few, then a count), the good lines used, exit 0
//! when anything could be read and 1 when nothing could, `--strict` turning a
//! skipped line into a failure.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{assert_text, bin, scrub, stderr};
use smith_calibrate::transcript::reader::read_transcript;

const GOOD_USER: &str = r#"{"role":"user","content":[{"type":"text","text":"hello"}]}"#;
const GOOD_ASSISTANT: &str = r#"{"role":"assistant","content":[{"type":"text","text":"hi"}]}"#;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, bytes).unwrap();
    p
}

fn replay(path: &Path, extra: &[&str]) -> Output {
    bin()
        .arg("replay")
        .arg(path)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

fn no_panic(o: &Output) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
}

/// Good lines around `bad`: user, bad, assistant.
fn around(bad: &[u8]) -> Vec<u8> {
    let mut v = GOOD_USER.as_bytes().to_vec();
    v.push(b'\n');
    v.extend_from_slice(bad);
    v.push(b'\n');
    v.extend_from_slice(GOOD_ASSISTANT.as_bytes());
    v.push(b'\n');
    v
}

fn assert_skipped_line_2(bad: &[u8], reason: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "transcript.jsonl", &around(bad));
    let o = replay(&p, &[]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_text(
        &scrub(&err, dir.path()),
        &format!("<DIR>/transcript.jsonl:2: skipped: {reason}\n"),
    );
    let v = json(&o);
    assert_eq!(v["messages"], 2, "both good lines are used");
    assert_eq!(v["lines_skipped"], 1);
    assert_eq!(v["requests"], 1);
    let strict = replay(&p, &["--strict"]);
    assert_eq!(
        strict.status.code(),
        Some(1),
        "--strict fails on a skipped line"
    );
}

#[test]
fn empty_file_reads_nothing_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "transcript.jsonl", b"");
    let o = replay(&p, &[]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert_text(
        &scrub(&stderr(&o), dir.path()),
        "smith-calibrate: <DIR>/transcript.jsonl: no message could be read (0 lines, 0 skipped)\n",
    );
}

#[test]
fn only_blank_lines_read_nothing_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "transcript.jsonl", b"\n  \n\t\r\n\n");
    let o = replay(&p, &[]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn final_line_cut_mid_json_is_skipped_and_the_rest_used() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = around(b"{\"role\":\"tool\",\"content\":[]}");
    data.extend_from_slice(br#"{"role":"assistant","content":[{"type":"text","te"#);
    let p = write(dir.path(), "transcript.jsonl", &data);
    let o = replay(&p, &[]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0));
    assert_text(
        &scrub(&stderr(&o), dir.path()),
        "<DIR>/transcript.jsonl:4: skipped: EOF while parsing a string (column 50)\n",
    );
    assert_eq!(json(&o)["messages"], 3);
}

#[test]
fn crlf_line_endings_and_a_bom_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = format!("\u{feff}{GOOD_USER}\r\n{GOOD_ASSISTANT}\r\n");
    let p = write(dir.path(), "transcript.jsonl", data.as_bytes());
    let o = replay(&p, &["--strict"]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["messages"], 2);
    assert_eq!(json(&o)["lines_skipped"], 0);
}

/// smith reads a text with broken UTF-8 and keeps its bytes (it writes such
/// texts itself when it cuts a result inside a character), so the line is
/// used, not skipped (issue 11); broken UTF-8 outside a string is not JSON.
#[test]
fn invalid_utf8_in_a_text_is_kept_as_bytes_and_outside_a_string_skips_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "transcript.jsonl",
        &around(b"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}"),
    );
    let t = read_transcript(&p).unwrap();
    assert_eq!(t.log.skipped, vec![]);
    assert_eq!(t.messages[1].content[0].text_bytes(), b"caf\xe9");
    assert_skipped_line_2(
        b"{\"role\":\"user\",\"content\":[]}\xe9",
        "invalid UTF-8 at byte 28 (column 29)",
    );
}

#[test]
fn a_json_array_number_or_null_is_not_a_message() {
    assert_skipped_line_2(b"[1,2,3]", "not a message: a JSON array (column 1)");
    assert_skipped_line_2(b"42", "not a message: a JSON number (column 1)");
    assert_skipped_line_2(b"null", "not a message: null (column 1)");
    assert_skipped_line_2(b"true", "not a message: a JSON boolean (column 1)");
}

/// Prose that starts like a JSON literal is called what it is, not a
/// boolean or null.
#[test]
fn text_that_only_starts_like_a_json_literal_is_not_json() {
    for (line, c) in [
        (&b"this is not json"[..], 't'),
        (b"false start", 'f'),
        (b"nothing", 'n'),
    ] {
        assert_skipped_line_2(
            line,
            &format!(
                "unexpected character '{c}' where a message should start: not JSON (column 1)"
            ),
        );
    }
}

#[test]
fn a_message_without_role_or_content_is_skipped() {
    assert_skipped_line_2(
        br#"{"content":[]}"#,
        "not a message: no \"role\" (column 15)",
    );
    assert_skipped_line_2(
        br#"{"role":"user"}"#,
        "not a message: no \"content\" array (column 16)",
    );
}

#[test]
fn unknown_role_and_unknown_block_type_are_skipped_by_name() {
    assert_skipped_line_2(
        br#"{"role":"narrator","content":[]}"#,
        "unknown role \"narrator\" (column 19)",
    );
    assert_skipped_line_2(
        br#"{"role":"user","content":[{"type":"video","text":"x"}]}"#,
        "content[0]: unknown block type \"video\" (column 42)",
    );
}

#[test]
fn a_block_with_wrong_field_types_is_skipped_naming_the_field() {
    assert_skipped_line_2(
        br#"{"role":"tool","content":[{"type":"tool_result","text":"x","is_error":"yes"}]}"#,
        "content[0].is_error: expected a boolean, found a string (column 71)",
    );
    assert_skipped_line_2(
        br#"{"role":"user","content":"hello"}"#,
        "content: expected an array of blocks, found a string (column 26)",
    );
}

#[test]
fn tool_args_that_are_a_string_or_an_array_are_kept_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let data = [
        GOOD_USER,
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"a","tool_name":"bash","tool_args":"ls -la"}]}"#,
        r#"{"role":"tool","content":[{"type":"tool_result","tool_call_id":"a","text":"x"}]}"#,
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"b","tool_name":"bash","tool_args":[1, "two"]}]}"#,
    ]
    .join("\n");
    let p = write(dir.path(), "transcript.jsonl", data.as_bytes());
    let t = read_transcript(&p).unwrap();
    assert_eq!(
        t.messages[1].content[0].tool_args.as_deref(),
        Some("\"ls -la\"")
    );
    assert_eq!(
        t.messages[3].content[0].tool_args.as_deref(),
        Some("[1,\"two\"]")
    );
    let o = replay(&p, &["--strict"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn tool_args_nested_10000_levels_deep_is_skipped_not_a_crash() {
    let mut line = br#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"a","tool_name":"x","tool_args":"#.to_vec();
    line.extend(std::iter::repeat_n(b'[', 10_000));
    line.extend(std::iter::repeat_n(b']', 10_000));
    line.extend_from_slice(b"}]}");
    assert_skipped_line_2(
        &line,
        "content[0].tool_args: nesting deeper than 512 levels (recursion limit exceeded) (column 607)",
    );
}

#[test]
fn a_single_line_of_200_mb_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x".repeat(200 << 20);
    let line = format!(
        r#"{{"role":"tool","content":[{{"type":"tool_result","tool_call_id":"a","text":"{big}"}}]}}"#
    );
    drop(big);
    let data = format!(
        "{GOOD_USER}\n{}\n{line}\n{GOOD_ASSISTANT}\n",
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"a","tool_name":"bash","tool_args":{}}]}"#
    );
    drop(line);
    let p = write(dir.path(), "transcript.jsonl", data.as_bytes());
    drop(data);
    let o = replay(&p, &["--strict"]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["messages"], 4);
    // One turn: no cut, so the desperate pass truncates the result.
    assert_eq!(v["results_truncated"], 1);
}

#[test]
fn unpaired_results_calls_and_duplicate_ids_replay_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    let big = "y".repeat(5000);
    let lines = [
        GOOD_USER.to_string(),
        // A result with no call, a call with no result, and two calls
        // sharing one id.
        format!(r#"{{"role":"tool","content":[{{"type":"tool_result","tool_call_id":"orphan","text":"{big}"}}]}}"#),
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"lost","tool_name":"grep","tool_args":{"pattern":"x"}}]}"#.to_string(),
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"dup","tool_name":"read_file","tool_args":{"path":"a"}}]}"#.to_string(),
        format!(r#"{{"role":"tool","content":[{{"type":"tool_result","tool_call_id":"dup","text":"{big}"}}]}}"#),
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"dup","tool_name":"read_file","tool_args":{"path":"a"}}]}"#.to_string(),
        format!(r#"{{"role":"tool","content":[{{"type":"tool_result","tool_call_id":"dup","text":"{big}"}}]}}"#),
        r#"{"role":"user","content":[{"type":"text","text":"next"}]}"#.to_string(),
        GOOD_ASSISTANT.to_string(),
    ];
    let p = write(dir.path(), "transcript.jsonl", lines.join("\n").as_bytes());
    let o = bin()
        .args(["replay", "--json", "--strict", "--max-tokens", "3000"])
        .arg(&p)
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["messages"], 9);
    assert_eq!(v["requests"], 4);
}

#[test]
fn a_session_that_is_one_huge_result_replays() {
    let dir = tempfile::tempdir().unwrap();
    let big = "z".repeat(3 << 20);
    let data = format!(
        r#"{{"role":"tool","content":[{{"type":"tool_result","tool_call_id":"a","text":"{big}"}}]}}"#
    );
    let p = write(dir.path(), "transcript.jsonl", data.as_bytes());
    let o = replay(&p, &[]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(json(&o)["requests"], 0);
}

#[test]
fn session_json_missing_corrupt_or_disagreeing_never_stops_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let data = around(br#"{"role":"tool","content":[]}"#);
    // Missing.
    let a = write(dir.path(), "a/transcript.jsonl", &data);
    let o = replay(&a, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(json(&o)["session"], "a");
    // Corrupt: reported, transcript still used.
    let b = write(dir.path(), "b/transcript.jsonl", &data);
    write(dir.path(), "b/session.json", b"{\"id\": \"b\", ");
    let o = replay(&b, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_text(&scrub(&stderr(&o), dir.path()), "<DIR>/b/session.json: not valid JSON, metadata ignored: EOF while parsing a value at line 1 column 12\n");
    assert_eq!(json(&o)["messages"], 3);
    // Disagreeing: session.json's own messages are not the transcript's; the
    // transcript is what is replayed.
    let c = write(dir.path(), "c/transcript.jsonl", &data);
    write(
        dir.path(),
        "c/session.json",
        br#"{"id":"session-1-abc","name":"named","messages":[]}"#,
    );
    let o = replay(&c, &[]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(v["session"], "named");
    assert_eq!(v["messages"], 3);
}

#[test]
fn a_tree_with_unreadable_files_a_symlink_loop_and_a_non_transcript_is_walked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree");
    write(&root, "s1/transcript.jsonl", &around(b""));
    write(&root, "notes/readme.txt", b"not a transcript");
    // A file named like a transcript that is not one: read, all lines bad.
    write(
        &root,
        "junk/transcript.jsonl",
        b"\x89PNG\r\n\x1a\n\x00\x00binary",
    );
    // A symlink loop and a dangling link named like a transcript.
    std::os::unix::fs::symlink(&root, root.join("s1/loop")).unwrap();
    fs::create_dir_all(root.join("gone")).unwrap();
    std::os::unix::fs::symlink(root.join("nowhere"), root.join("gone/transcript.jsonl")).unwrap();
    let found = smith_calibrate::transcript::resolve(root.to_str().unwrap()).unwrap();
    let names: Vec<String> = found.iter().map(|s| s.label()).collect();
    assert_eq!(
        names,
        vec!["junk", "s1"],
        "the loop ends, the dangling link is passed over"
    );
    // Reading the junk transcript reports its lines and reads nothing.
    let o = replay(&root.join("junk"), &[]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert_text(
        &scrub(&stderr(&o), dir.path()),
        "<DIR>/tree/junk/transcript.jsonl:1: skipped: invalid UTF-8 at byte 0 (column 1)\n\
         <DIR>/tree/junk/transcript.jsonl:2: skipped: unexpected character '\\u{1a}' where a message should start: not JSON (column 1)\n\
         <DIR>/tree/junk/transcript.jsonl:3: skipped: unexpected character '\\0' where a message should start: not JSON (column 1)\n\
         smith-calibrate: <DIR>/tree/junk/transcript.jsonl: no message could be read (3 lines, 3 skipped)\n",
    );
}

#[test]
fn skipped_lines_are_described_for_the_first_five_then_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = format!("{GOOD_USER}\n");
    for i in 0..12 {
        data.push_str(&format!("garbage {i}\n"));
    }
    data.push_str(GOOD_ASSISTANT);
    let p = write(dir.path(), "transcript.jsonl", data.as_bytes());
    let o = replay(&p, &[]);
    let err = stderr(&o);
    assert_eq!(err.matches(": skipped: ").count(), 5, "{err}");
    let described: String = (2..=6)
        .map(|n| {
            format!("<DIR>/transcript.jsonl:{n}: skipped: unexpected character 'g' where a message should start: not JSON (column 1)\n")
        })
        .collect();
    assert_text(
        &scrub(&err, dir.path()),
        &format!(
            "{described}<DIR>/transcript.jsonl: skipped 7 more bad lines (12 in all); \
             run `transcript show` on it to see what could be read\n"
        ),
    );
    assert_eq!(json(&o)["lines_skipped"], 12);
}

#[test]
fn an_index_naming_a_missing_session_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    fs::create_dir_all(&sessions).unwrap();
    fs::write(
        sessions.join("index.json"),
        br#"[{"id":"session-1-abcdef","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","first_prompt":"x","message_count":2,"name":"fix-it"}]"#,
    )
    .unwrap();
    let o = bin()
        .env("SMITH_HOME", home.path())
        .args(["replay", "fix-it"])
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_text(
        &scrub(&err, home.path()),
        "smith-calibrate: session \"session-1-abcdef\" is in <DIR>/sessions/index.json \
         but <DIR>/sessions/session-1-abcdef/transcript.jsonl does not exist\n",
    );
    let o = bin()
        .env("SMITH_HOME", home.path())
        .args(["replay", "no-such-thing"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_text(
        &scrub(&stderr(&o), home.path()),
        "smith-calibrate: no session \"no-such-thing\"; looked in:\n  \
         <DIR>/sessions (smith's sessions, $SMITH_HOME/sessions)\n  \
         /nonexistent-claude-config/projects (Claude Code's projects folder, $CLAUDE_CONFIG_DIR/projects): does not exist\n  \
         /nonexistent-codex-home/sessions (Codex's sessions folder, $CODEX_HOME/sessions): does not exist\n\
         `transcript list FOLDER` prints the ids of a folder's sessions; `transcript show FOLDER ID` looks in FOLDER\n",
    );
}

#[test]
fn a_session_is_found_by_id_and_by_name_through_the_index() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    write(&sessions, "session-2-abcdef/transcript.jsonl", &around(b""));
    fs::write(
        sessions.join("index.json"),
        br#"[{"id":"session-2-abcdef","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","first_prompt":"x","message_count":2,"name":"fix-it"}]"#,
    )
    .unwrap();
    for reference in ["fix-it", "session-2-abcdef"] {
        let o = bin()
            .env("SMITH_HOME", home.path())
            .args(["replay", "--json", reference])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{reference}: {}", stderr(&o));
        assert_eq!(json(&o)["messages"], 2);
    }
}

#[test]
fn bad_arguments_exit_2() {
    let o = bin()
        .args(["replay", "x", "--ratio", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_text(
        &stderr(&o),
        "smith-calibrate: ratio must be a positive number, not 0\n",
    );
    let o = bin().args(["replay"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn nothing_is_written_into_the_session_directory() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "s/transcript.jsonl", &around(b"broken"));
    let before: Vec<_> = fs::read_dir(dir.path().join("s"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let bytes = fs::read(&p).unwrap();
    for args in [
        vec!["--json"],
        vec!["--trace"],
        vec!["--emit-history-at", "0"],
    ] {
        bin().arg("replay").arg(&p).args(&args).output().unwrap();
    }
    let after: Vec<_> = fs::read_dir(dir.path().join("s"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(before, after);
    assert_eq!(fs::read(&p).unwrap(), bytes);
}

#[test]
fn a_session_too_large_for_memory_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "transcript.jsonl", &around(b""));
    let o = bin()
        .env("SMITH_CALIBRATE_MEMORY_LIMIT", "100")
        .arg("replay")
        .arg(&p)
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("of memory to replay") && err.contains("free memory"),
        "{err}"
    );
}

#[test]
fn a_grid_of_millions_of_configs_is_refused_before_it_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "transcript.jsonl", &around(b""));
    let o = bin()
        .arg("sweep")
        .arg(&p)
        .args([
            "--compact-at",
            "0.5..0.99:0.001",
            "--compact-to",
            "0.1..0.49:0.001",
            "--result-cap",
            "100..200",
        ])
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    assert_text(&scrub(&stderr(&o), dir.path()), "smith-calibrate: the grid has 19390081 configs (491 compact-at × 391 compact-to × 101 result-cap), \
         more than the limit of 100000; use fewer values or larger steps, or raise --max-configs\n");
}

#[test]
fn sweep_reports_bad_lines_per_file_and_strict_makes_them_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/transcript.jsonl", &around(b"{broken"));
    write(dir.path(), "b/transcript.jsonl", &around(b""));
    let out = dir.path().join("out");
    let o = bin()
        .arg("sweep")
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a/transcript.jsonl:2: skipped: "),
        "{}",
        stderr(&o)
    );
    let strict_out = dir.path().join("strict");
    let o = bin()
        .arg("sweep")
        .arg(dir.path().join("a"))
        .arg(dir.path().join("b"))
        .arg("--strict")
        .arg("--out")
        .arg(&strict_out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_text(&scrub(&stderr(&o), dir.path()), "<DIR>/a/transcript.jsonl:2: skipped: unexpected character 'b' where a key was expected (column 2)\n\
         smith-calibrate: 1 bad lines and 0 unreadable sessions (see above) and --strict was given: nothing was written\n");
    assert!(fs::read_dir(&strict_out).map_or(true, |d| d.count() == 0));
}

/// A reader that went away before anything was written (`| head`, a pager
/// quit): every command stops quietly with success, whatever it was
/// writing, and says nothing but its usual notes (what synth wrote, what
/// the sweep replayed).
#[test]
fn a_closed_stdout_ends_every_command_quietly_with_success() {
    let sessions = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sessions");
    let session = format!("{sessions}/session-1753552297-0837b5");
    let tmp = tempfile::tempdir().unwrap();
    let synth_out = tmp.path().join("synth");
    let synth_out = synth_out.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["replay", &session, "--json"], ""),
        (&["replay", &session, "--trace"], ""),
        (&["replay", &session], ""),
        (&["replay", &session, "--emit-history-at", "3"], ""),
        (&["transcript", "show", &session, "--no-pager"], ""),
        (&["transcript", "stats", &session, "--json"], ""),
        (&["transcript", "list", sessions], ""),
        (
            &["sweep", sessions, "--compact-at", "0.7,0.8"],
            "replayed 12 sessions",
        ),
        (
            &[
                "synth",
                "--seed",
                "1",
                "--sessions",
                "1",
                "--shape",
                "short",
                "--out",
                synth_out,
            ],
            "1 sessions,",
        ),
    ];
    for (args, stderr_has) in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = bin().args(args).stdout(writer).output().unwrap();
        let err = stderr(&o);
        assert!(o.status.success(), "{args:?}: {:?}\n{err}", o.status);
        if stderr_has.is_empty() {
            assert_eq!(err, "", "{args:?}");
        } else {
            assert!(err.contains(stderr_has), "{args:?}: {err}");
            assert!(!err.contains("smith-calibrate:"), "{args:?}: {err}");
        }
    }
}

/// A threshold out of smith's range is refused naming the flag and its
/// value, also where the window is each session's own (held as 0, never
/// given); a grid whose every combination is impossible is refused (exit
/// 2), not run as the baseline alone.
#[test]
fn a_threshold_out_of_range_names_its_flag_and_an_empty_grid_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("s");
    crate::common::write_session(
        &sessions,
        "one",
        &[crate::common::user("hello"), crate::common::assistant("hi")],
    );
    let s = sessions.display().to_string();
    for (args, says) in [
        (
            vec!["sweep", &s, "--compact-at", "1.5"],
            "--compact-at 1.5 is not a fraction of the window above 0 and below 1: smith runs only",
        ),
        (
            vec!["sweep", &s, "--compact-at", "1.5", "--max-tokens", "own"],
            "--compact-at 1.5 is not a fraction of the window above 0 and below 1: smith runs only",
        ),
        (
            vec!["sweep", &s, "--compact-at", "0.8", "--compact-to", "0.9"],
            "every one of the 1 combinations asked for has its target at or above its trigger",
        ),
        (
            vec![
                "recommend",
                &s,
                "--compact-at",
                "0.5",
                "--compact-to",
                "0.6,0.7",
            ],
            "every one of the 2 combinations asked for has its target at or above its trigger",
        ),
    ] {
        let o = bin().args(&args).output().unwrap();
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("max-tokens 0"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A path that does not exist says so first, and a file no line of which
/// is a message is no damaged session but no log at all (exit 1).
#[test]
fn a_missing_path_says_so_and_a_file_of_no_format_is_refused_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope").display().to_string();
    for cmd in ["recommend", "sweep", "replay"] {
        let o = bin().args([cmd, &missing]).output().unwrap();
        no_panic(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.trim_start_matches("smith-calibrate: ")
                .starts_with(&format!("{missing}: no such file or directory")),
            "{cmd}: {err}"
        );
        assert!(!err.contains("SMITH_HOME"), "{cmd}: {err}");
    }
    let text = write(tmp.path(), "notes.txt", b"this is not json\nhello\n");
    let o = bin()
        .args(["transcript", "list"])
        .arg(&text)
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains(
            "not a log of any format this reads (a smith transcript.jsonl, a Claude Code log"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("a JSON boolean"), "{}", stderr(&o));
}
