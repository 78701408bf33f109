//! `smith-calibrate transcript list|show|stats`, run as a user runs it, on
//! transcripts each test writes into a temporary directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use smith_calibrate::transcript::parse::parse_line;

use crate::common::{assert_fixture, bin, ok, output, scrub, stderr};

/// Runs the binary with `SMITH_HOME` pointing at `home` and colour and pager
/// settings cleared, so that only what the test sets counts.
fn run_in(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = bin();
    cmd.args(args)
        .env("SMITH_HOME", home)
        .env_remove("NO_COLOR")
        .env_remove("PAGER")
        .env_remove("TERM");
    for (k, v) in env {
        cmd.env(k, v);
    }
    output(&mut cmd)
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

fn synthetic(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "synthetic": true})
}

fn say(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
}

fn call(id: &str, tool: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": [
        {"type": "tool_use", "tool_call_id": id, "tool_name": tool, "tool_args": args}
    ]})
}

fn result(id: &str, text: &str, is_error: bool) -> Value {
    json!({"role": "tool", "content": [
        {"type": "tool_result", "tool_call_id": id, "text": text, "is_error": is_error}
    ]})
}

fn write_lines(path: &Path, lines: &[String]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut body = lines.join("\n");
    body.push('\n');
    fs::write(path, body).unwrap();
}

/// Writes `messages` as `dir/transcript.jsonl` and returns its path.
fn write_session(dir: &Path, messages: &[Value]) -> PathBuf {
    let path = dir.join("transcript.jsonl");
    let lines: Vec<String> = messages.iter().map(|m| m.to_string()).collect();
    write_lines(&path, &lines);
    path
}

/// A session with two turns, a synthetic nudge, thinking, four tools and a
/// long result.
fn varied_session() -> Vec<Value> {
    let long: String = (1..=30).map(|n| format!("row {n}\n")).collect();
    vec![
        json!({"role": "system", "content": [{"type": "text", "text": "You are smith."}]}),
        user("Fix the failing test in parser.rs"),
        json!({"role": "assistant", "content": [
            {"type": "thinking", "text": "The parser probably mishandles CRLF.", "signature": "sig"},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "tool_call_id": "c1", "tool_name": "read_file", "tool_args": {"path": "src/parser.rs"}},
            {"type": "tool_use", "tool_call_id": "c2", "tool_name": "grep", "tool_args": {"pattern": "fn parse", "path": "src"}}
        ]}),
        json!({"role": "tool", "content": [
            {"type": "tool_result", "tool_call_id": "c1", "text": "RESULT-ONE parser source", "is_error": false},
            {"type": "tool_result", "tool_call_id": "c2", "text": "RESULT-TWO src/parser.rs:10: fn parse", "is_error": false}
        ]}),
        call("c3", "bash", json!({"command": "cargo test\necho done"})),
        result("c3", &format!("RESULT-THREE failing\n{long}"), true),
        synthetic("Reminder: keep the todo list current."),
        say("Found it: CRLF."),
        user("Now run the whole suite"),
        call("c4", "bash", json!({"command": "cargo test --all"})),
        result("c4", "RESULT-FOUR all green", false),
        call("c5", "glob", json!({"pattern": "**/*.rs"})),
        result("c5", "RESULT-FIVE src/lib.rs", false),
        say("All tests pass."),
    ]
}

#[test]
fn every_tool_call_is_directly_followed_by_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), &varied_session());
    let out = ok(run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap()],
        &[],
    ));
    let lines: Vec<&str> = out.lines().collect();
    let expected = [
        ("read_file", "src/parser.rs", "RESULT-ONE"),
        ("grep", "\"fn parse\"  in src", "RESULT-TWO"),
        ("bash", "$ cargo test (+1 line)", "RESULT-THREE"),
        ("bash", "$ cargo test --all", "RESULT-FOUR"),
        ("glob", "\"**/*.rs\"", "RESULT-FIVE"),
    ];
    let calls: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with("→ "))
        .collect();
    assert_eq!(calls.len(), expected.len(), "{out}");
    for (&at, (tool, args, text)) in calls.iter().zip(expected) {
        assert_eq!(lines[at].trim(), format!("→ {tool}  {args}"), "{out}");
        assert!(
            lines[at + 1].trim_start().starts_with("← "),
            "status right after the call:\n{out}"
        );
        assert!(
            lines[at + 2].contains(text),
            "first line of the result right after:\n{out}"
        );
    }
    // The whole page: the error flag (`← ERROR · 222 B, 31 lines`), the cut
    // with its count, the tool messages not repeated after their calls, and
    // the closing count of calls and results.
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/show.txt");
}

#[test]
fn turns_roles_synthetic_messages_and_thinking_are_labelled() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), &varied_session());
    let out = ok(run_in(
        dir.path(),
        &[
            "transcript",
            "show",
            path.to_str().unwrap(),
            "--color",
            "never",
        ],
        &[],
    ));
    for header in ["── before the first prompt", "── turn 1 ", "── turn 2 "] {
        assert_eq!(out.matches(header).count(), 1, "{header}:\n{out}");
    }
    // `user #6 [synthetic]`, and thinking counted but not shown.
    assert_fixture(
        &scrub(&out, dir.path()),
        "transcript_cli/show_color_never.txt",
    );
    let out = ok(run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap(), "--thinking"],
        &[],
    ));
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/show_thinking.txt");
    // Every line of every result, nothing "not shown".
    let full = ok(run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap(), "--full"],
        &[],
    ));
    assert_fixture(&scrub(&full, dir.path()), "transcript_cli/show_full.txt");
}

#[test]
fn a_result_without_its_call_and_a_call_without_its_result_both_appear() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            user("go"),
            result("ghost", "ORPHAN-TEXT from nowhere", false),
            call("lonely", "read_file", json!({"path": "a.txt"})),
            say("gave up"),
        ],
    );
    let out = ok(run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap()],
        &[],
    ));
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/show_orphans.txt");
}

#[test]
fn bad_lines_are_reported_on_stderr_and_in_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.jsonl");
    write_lines(
        &path,
        &[
            user("hello").to_string(),
            "{not json".to_string(),
            say("hi").to_string(),
        ],
    );
    let o = run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap()],
        &[],
    );
    let out = ok(o.clone());
    assert_fixture(
        &scrub(&stderr(&o), dir.path()),
        "transcript_cli/bad_line.stderr",
    );
    // The skipped line is counted in the page too, around what was read.
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/bad_line.txt");
}

#[test]
fn nothing_readable_exits_1_and_a_missing_request_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.jsonl");
    write_lines(&path, &["garbage".to_string()]);
    let o = run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = run_in(dir.path(), &["transcript", "show", "no-such-session"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let good = write_session(&dir.path().join("s"), &[user("a"), say("b")]);
    let o = run_in(
        dir.path(),
        &["transcript", "show", good.to_str().unwrap(), "--at", "1"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_fixture(
        &scrub(&stderr(&o), dir.path()),
        "transcript_cli/at_past_the_end.stderr",
    );
}

/// The messages `show --json` selected, as their original input lines'
/// parses.
fn selected(dir: &Path, path: &Path, filter: &[&str]) -> Vec<String> {
    let mut args = vec!["transcript", "show", path.to_str().unwrap(), "--json"];
    args.extend_from_slice(filter);
    ok(run_in(dir, &args, &[]))
        .lines()
        .map(|l| parse_line(l).expect("valid smith JSON").to_json())
        .collect()
}

fn expected(messages: &[Value], picks: &[usize]) -> Vec<String> {
    picks
        .iter()
        .map(|&i| parse_line(&messages[i].to_string()).unwrap().to_json())
        .collect()
}

#[test]
fn each_filter_selects_what_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let messages = varied_session();
    let path = write_session(dir.path(), &messages);
    // Turn 2 starts at the second real prompt (#8); the synthetic #6 stays in turn 1.
    assert_eq!(
        selected(dir.path(), &path, &["--turn", "2"]),
        expected(&messages, &[8, 9, 10, 11, 12, 13])
    );
    assert_eq!(
        selected(dir.path(), &path, &["--turn", "..1"]),
        expected(&messages, &[0, 1, 2, 3, 4, 5, 6, 7])
    );
    assert_eq!(
        selected(dir.path(), &path, &["--role", "user"]),
        expected(&messages, &[1, 6, 8])
    );
    assert_eq!(
        selected(dir.path(), &path, &["--tool", "bash"]),
        expected(&messages, &[4, 5, 9, 10])
    );
    // A call matches through its result and a result through its call.
    assert_eq!(
        selected(dir.path(), &path, &["--grep", "result-four"]),
        expected(&messages, &[9, 10])
    );
    assert_eq!(
        selected(dir.path(), &path, &["--grep", "CRLF"]),
        expected(&messages, &[2, 7])
    );
    // Filters combine.
    assert_eq!(
        selected(
            dir.path(),
            &path,
            &["--tool", "bash", "--turn", "2", "--role", "tool"]
        ),
        expected(&messages, &[10])
    );
}

#[test]
fn block_filters_show_only_matching_blocks_and_count_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), &varied_session());
    let out = ok(run_in(
        dir.path(),
        &[
            "transcript",
            "show",
            path.to_str().unwrap(),
            "--tool",
            "grep",
        ],
        &[],
    ));
    // The grep call and its result only, and a count of the other blocks.
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/filter_tool.txt");
    let out = ok(run_in(
        dir.path(),
        &[
            "transcript",
            "show",
            path.to_str().unwrap(),
            "--role",
            "tool",
        ],
        &[],
    ));
    // Results only, each naming the call it answers.
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/filter_role.txt");
}

#[test]
fn json_output_round_trips_through_parse_line() {
    let dir = tempfile::tempdir().unwrap();
    let messages = varied_session();
    let path = write_session(dir.path(), &messages);
    let out = ok(run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap(), "--json"],
        &[],
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), messages.len());
    for (line, original) in lines.iter().zip(&messages) {
        let back = parse_line(line).expect("smith-format JSON");
        assert_eq!(back, parse_line(&original.to_string()).unwrap());
        assert_eq!(back.to_json(), *line, "written exactly as smith writes it");
    }
}

#[test]
fn no_color_and_color_never_write_no_escape_codes() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = varied_session();
    // Tool output with its own colours and a carriage return.
    messages.push(call("c9", "bash", json!({"command": "ls --color"})));
    messages.push(result("c9", "\u{1b}[31mred.txt\u{1b}[0m\rprogress", false));
    let path = write_session(dir.path(), &messages);
    let p = path.to_str().unwrap();
    let never = ok(run_in(
        dir.path(),
        &["transcript", "show", p, "--color", "never"],
        &[],
    ));
    assert!(!never.contains('\u{1b}'), "{never:?}");
    assert_fixture(&scrub(&never, dir.path()), "transcript_cli/color_never.txt");
    let no_color = ok(run_in(
        dir.path(),
        &["transcript", "show", p],
        &[("NO_COLOR", "1")],
    ));
    assert!(!no_color.contains('\u{1b}'));
    let always = ok(run_in(
        dir.path(),
        &["transcript", "show", p, "--color", "always"],
        &[],
    ));
    // Colour can be asked for; the recorded escape codes never pass
    // through, coloured or not.
    assert!(!always.contains("\u{1b}[31mred"));
    assert_fixture(
        &scrub(&always, dir.path()),
        "transcript_cli/color_always.txt",
    );
}

/// A session whose replay under a 4000-token window truncates a result at
/// one request, summarizes at a later one, and carries the summary after.
fn compacting_session() -> Vec<Value> {
    let big: String = (0..250)
        .map(|n| format!("{n:04} {}\n", "a".repeat(34)))
        .collect();
    let medium: String = (0..75)
        .map(|n| format!("{n:04} {}\n", "b".repeat(34)))
        .collect();
    vec![
        user("first"),
        call("c1", "bash", json!({"command": "make"})),
        result("c1", &big, false),
        say("built"),
        user("second"),
        call("c2", "bash", json!({"command": "make test"})),
        result("c2", &medium, false),
        say("tested"),
        user("third"),
        say("noted"),
        user(&format!("fourth {}", "q".repeat(9500))),
        say("read it"),
        user("fifth"),
        say("done"),
    ]
}

const SMALL: [&str; 6] = [
    "--max-tokens",
    "4000",
    "--window",
    "1",
    "--summary-tokens",
    "50",
];

/// `(request, strategy, stages)` of each request, from `replay --trace`.
fn trace(dir: &Path, path: &Path) -> Vec<(usize, String, Vec<String>)> {
    let mut args = vec!["replay", path.to_str().unwrap(), "--trace"];
    args.extend_from_slice(&SMALL);
    ok(run_in(dir, &args, &[]))
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let stages = v["stages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            (
                v["request"].as_u64().unwrap() as usize,
                v["strategy"].as_str().unwrap().to_string(),
                stages,
            )
        })
        .collect()
}

fn show_at(dir: &Path, path: &Path, k: usize, extra: &[&str]) -> String {
    let k = k.to_string();
    let mut args = vec!["transcript", "show", path.to_str().unwrap(), "--at", &k];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(extra);
    ok(run_in(dir, &args, &[]))
}

#[test]
fn at_k_marks_a_truncated_result_where_it_happened() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), &compacting_session());
    let requests = trace(dir.path(), &path);
    let k = requests
        .iter()
        .find(|(_, s, stages)| s == "truncated" && stages.contains(&"truncate".to_string()))
        .map(|r| r.0)
        .expect("the session truncates at some request");
    let out = show_at(dir.path(), &path, k, &["--lines", "20"]);
    // The mark sits under the first result, right after its cut text.
    let call = out.find("→ bash  $ make\n").expect("the first call");
    let next = out.find("→ bash  $ make test").expect("the second call");
    let marked = &out[call..next];
    // 10000 bytes became 512 + the note: the loss is the difference.
    let note = "\n\n[... 9 KiB truncated by smith to stay within the context window ...]";
    let lost = 10_000 - 512 - note.len() as u64;
    assert!(
        marked.contains(&format!(
            "{:.1} KiB lost at this request",
            lost as f64 / 1024.0
        )),
        "{marked}"
    );
    // The whole page: `request {k} — the history as the model received it`,
    // the mark, and the cut text itself.
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/at_truncated.txt");
    // The next request shows the same cut as an earlier one.
    let later = show_at(dir.path(), &path, k + 1, &[]);
    assert_fixture(
        &scrub(&later, dir.path()),
        "transcript_cli/at_truncated_later.txt",
    );
    // --json is exactly the history the replay computes.
    let k_s = k.to_string();
    let mut args = vec!["replay", path.to_str().unwrap(), "--emit-history-at", &k_s];
    args.extend_from_slice(&SMALL);
    let history = ok(run_in(dir.path(), &args, &[]));
    assert_eq!(show_at(dir.path(), &path, k, &["--json"]), history);
}

#[test]
fn at_k_marks_the_summary_and_what_it_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), &compacting_session());
    let requests = trace(dir.path(), &path);
    let k = requests
        .iter()
        .find(|(_, s, _)| s == "summarized")
        .map(|r| r.0)
        .expect("the session is summarized at some request");
    assert!(k + 1 < requests.len(), "a request follows the summary");
    let out = show_at(dir.path(), &path, k, &[]);
    // The cut is at the fourth prompt (#10): ten transcript messages
    // replaced by `user history 0 · not in the transcript [summary]`, the
    // summarized calls gone.
    assert!(
        !out.contains("→ bash"),
        "the summarized calls are gone: {out}"
    );
    assert_fixture(&scrub(&out, dir.path()), "transcript_cli/at_summary.txt");
    // The next request: the same summary, written at request k.
    let after = show_at(dir.path(), &path, k + 1, &[]);
    assert_fixture(
        &scrub(&after, dir.path()),
        "transcript_cli/at_summary_later.txt",
    );
}

fn write_meta(dir: &Path, id: &str, created: Option<&str>) {
    let mut meta = json!({"id": id, "cwd": "/tmp", "model": "m", "provider": "p", "messages": []});
    if let Some(c) = created {
        meta["created_at"] = json!(c);
    }
    fs::write(dir.join("session.json"), meta.to_string()).unwrap();
}

#[test]
fn list_sorts_sessions_newest_first_from_every_source_of_time() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    // From session.json, with an offset: 2024-03-01T10:00:00Z.
    let a = sessions.join("session-a");
    write_session(
        &a,
        &[
            user("alpha prompt that is quite long and goes on and on beyond fifty characters"),
            say("ok"),
        ],
    );
    write_meta(&a, "session-a", Some("2024-03-01T12:00:00+02:00"));
    // From the index only: 2024-05-01.
    let b = sessions.join("session-b");
    write_session(
        &b,
        &[
            user("beta"),
            say("ok"),
            synthetic("nudge"),
            user("again"),
            say("ok"),
        ],
    );
    fs::write(
        sessions.join("index.json"),
        json!([{"id": "session-b", "name": "beta-name", "created_at": "2024-05-01T00:00:00Z",
                "updated_at": "2024-05-01T00:00:00Z", "first_prompt": "beta", "message_count": 5}])
        .to_string(),
    )
    .unwrap();
    // From the mtime only: 2024-04-01, with a bad line.
    let c = sessions.join("session-c");
    let path_c = c.join("transcript.jsonl");
    write_lines(&path_c, &[user("gamma").to_string(), "oops".to_string()]);
    let april = SystemTime::UNIX_EPOCH + Duration::from_secs(1_711_929_600);
    fs::File::options()
        .write(true)
        .open(&path_c)
        .unwrap()
        .set_modified(april)
        .unwrap();

    let out = ok(run_in(home.path(), &["transcript", "list", "--json"], &[]));
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["session-b", "session-c", "session-a"]);
    assert_eq!(rows[0]["name"], "beta-name");
    assert_eq!(rows[0]["created_from"], "index");
    assert_eq!(rows[1]["created_from"], "mtime");
    assert_eq!(rows[2]["created_from"], "session_json");
    assert_eq!(rows[2]["created_unix"], 1_709_287_200);
    assert_eq!(
        (rows[0]["messages"].as_u64(), rows[0]["turns"].as_u64()),
        (Some(5), Some(2))
    );
    assert_eq!(rows[1]["skipped"], 1);
    // Tokens: the text bytes of the session, divided by four once.
    assert_eq!(rows[0]["tokens"], ("beta".len() + 2 + 5 + 5 + 2) as u64 / 4);
    assert_eq!(
        rows[0]["bytes"],
        fs::metadata(b.join("transcript.jsonl")).unwrap().len()
    );
    let prompt = rows[2]["first_prompt"].as_str().unwrap();
    assert_eq!(prompt.chars().count(), 50);
    assert!(prompt.starts_with("alpha prompt") && prompt.ends_with('…'));

    let table = ok(run_in(home.path(), &["transcript", "list"], &[]));
    let (pb, pc, pa) = (
        table.find("session-b"),
        table.find("session-c"),
        table.find("session-a"),
    );
    assert!(pb < pc && pc < pa, "{table}");
    assert!(table.contains("2024-04-01 00:00 (mtime)"), "{table}");
    // A PATH lists the sessions below it.
    let only = ok(run_in(
        home.path(),
        &["transcript", "list", a.to_str().unwrap(), "--json"],
        &[],
    ));
    assert_eq!(serde_json::from_str::<Vec<Value>>(&only).unwrap().len(), 1);
}

#[test]
fn list_without_sessions_says_where_it_looked_and_exits_1() {
    let home = tempfile::tempdir().unwrap();
    let o = run_in(home.path(), &["transcript", "list"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_fixture(
        &scrub(&stderr(&o), home.path()),
        "transcript_cli/list_nothing.stderr",
    );
}

#[test]
fn show_and_stats_resolve_a_session_by_name() {
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    write_session(&sessions.join("session-x"), &[user("named one"), say("ok")]);
    fs::write(
        sessions.join("index.json"),
        json!([{"id": "session-x", "name": "fix-the-tests", "created_at": "2024-05-01T00:00:00Z",
                "updated_at": "2024-05-01T00:00:00Z", "first_prompt": "named one", "message_count": 2}])
        .to_string(),
    )
    .unwrap();
    let out = ok(run_in(
        home.path(),
        &["transcript", "show", "fix-the-tests"],
        &[],
    ));
    assert_fixture(&scrub(&out, home.path()), "transcript_cli/show_by_name.txt");
    let out = ok(run_in(
        home.path(),
        &["transcript", "stats", "session-x", "--json"],
        &[],
    ));
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["messages"], 2);
}

#[test]
fn stats_equal_independently_computed_values() {
    let dir = tempfile::tempdir().unwrap();
    // Sizes chosen by hand; every figure below is computed from them here.
    let r = |n: usize| "r".repeat(n);
    let (a1, a2, a3) = (r(100), r(3000), r(50));
    let messages = vec![
        user("abcdefgh"),                              // 8 bytes
        call("c1", "read_file", json!({"path": "x"})), // 9 + 12
        result("c1", &a1, false),                      // 100
        call("c2", "read_file", json!({"path": "y"})), // 9 + 12
        result("c2", &a2, true),                       // 3000
        call("c3", "bash", json!({"command": "ls"})),  // 4 + 16
        result("c3", &a3, false),                      // 50
        call("c4", "read_file", json!({"path": "z"})), // 9 + 12, no result
        result("zz", "orphan!", false),                // 7, no call
        say("done"),                                   // 4
    ];
    let path = write_session(dir.path(), &messages);
    let out = ok(run_in(
        dir.path(),
        &[
            "transcript",
            "stats",
            path.to_str().unwrap(),
            "--json",
            "--top",
            "2",
        ],
        &[],
    ));
    let s: Value = serde_json::from_str(&out).unwrap();

    let call_bytes = [9 + 12, 9 + 12, 4 + 16, 9 + 12];
    let total: u64 = 8 + call_bytes.iter().sum::<u64>() + 100 + 3000 + 50 + 7 + 4;
    assert_eq!(s["messages"], 10);
    assert_eq!(s["turns"], 1);
    assert_eq!(s["requests"], 5);
    assert_eq!(s["bytes"], total);
    assert_eq!(s["tokens"], total / 4);

    let share = |list: &Value, name: &str| -> (u64, u64, u64) {
        let e = list
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap();
        (
            e["count"].as_u64().unwrap(),
            e["bytes"].as_u64().unwrap(),
            e["tokens"].as_u64().unwrap(),
        )
    };
    assert_eq!(share(&s["by_role"], "user"), (1, 8, 2));
    assert_eq!(share(&s["by_role"], "assistant"), (5, 83 + 4, 21));
    assert_eq!(share(&s["by_role"], "tool"), (4, 3157, 789));
    assert_eq!(share(&s["by_block"], "tool_use"), (4, 83, 20));
    assert_eq!(share(&s["by_block"], "tool_result"), (4, 3157, 789));
    assert_eq!(share(&s["by_block"], "text"), (2, 12, 3));

    let tool = |name: &str| {
        s["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    let read = tool("read_file");
    assert_eq!(
        (
            read["calls"].as_u64(),
            read["results"].as_u64(),
            read["errors"].as_u64()
        ),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(read["result_bytes"], 3100);
    // Of 100 and 3000: interpolated between the two (crate::stats).
    assert_eq!(read["median_result_bytes"], 1550);
    assert_eq!(read["max_result_bytes"], 3000);
    let bash = tool("bash");
    assert_eq!(
        (bash["calls"].as_u64(), bash["result_bytes"].as_u64()),
        (Some(1), Some(50))
    );
    let orphan = tool("(no call)");
    assert_eq!(
        (orphan["calls"].as_u64(), orphan["results"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(s["calls_without_result"], 1);
    assert_eq!(s["results_without_call"], 1);

    let largest: Vec<(u64, u64)> = s["largest_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["message"].as_u64().unwrap(), r["bytes"].as_u64().unwrap()))
        .collect();
    assert_eq!(largest, vec![(4, 3000), (2, 100)]);

    // Tokens before each assistant message, no compaction.
    let sizes: Vec<u64> = vec![8, 21, 100, 21, 3000, 20, 50, 21, 7, 4];
    let curve: Vec<(u64, u64)> = s["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["message_index"].as_u64().unwrap(),
                p["tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(u64, u64)> = [1usize, 3, 5, 7, 9]
        .iter()
        .map(|&i| (i as u64, sizes[..i].iter().sum::<u64>() / 4))
        .collect();
    assert_eq!(curve, want);

    let table = ok(run_in(
        dir.path(),
        &["transcript", "stats", path.to_str().unwrap()],
        &[],
    ));
    assert_fixture(&scrub(&table, dir.path()), "transcript_cli/stats.txt");
}

#[test]
fn at_k_marks_dropped_thinking_and_a_replaced_attachment() {
    let dir = tempfile::tempdir().unwrap();
    let messages = vec![
        user("one"),
        json!({"role": "assistant", "content": [
            {"type": "thinking", "text": "t".repeat(2000), "signature": "s"},
            {"type": "tool_use", "tool_call_id": "c1", "tool_name": "screenshot", "tool_args": {}}
        ]}),
        json!({"role": "tool", "content": [
            {"type": "tool_result", "tool_call_id": "c1", "text": "took it", "is_error": false},
            {"type": "image", "tool_call_id": "c1", "media_type": "image/png", "media_ref": "abc123"}
        ]}),
        say("saw it"),
        user("two"),
        say("ok"),
        user(&format!("three {}", "q".repeat(4500))),
        say("fine"),
    ];
    let path = write_session(dir.path(), &messages);
    let k = trace(dir.path(), &path)
        .iter()
        .find(|(_, _, stages)| stages.contains(&"attachments".to_string()))
        .map(|r| r.0)
        .expect("the attachment is removed at some request");
    let out = show_at(dir.path(), &path, k, &[]);
    // The thinking mark before the call; the tool message is shown only
    // through its call, so the attachment's note and mark go there, once.
    assert_fixture(
        &scrub(&out, dir.path()),
        "transcript_cli/at_thinking_and_attachment.txt",
    );
    assert_eq!(
        out.matches("attachment replaced by a note").count(),
        1,
        "{out}"
    );
    // In the record, the same attachment is shown by type and reference.
    let plain = ok(run_in(
        dir.path(),
        &["transcript", "show", path.to_str().unwrap()],
        &[],
    ));
    assert_fixture(
        &scrub(&plain, dir.path()),
        "transcript_cli/show_attachment.txt",
    );
}
