//! One reader's account for every path: every command that reads sessions,
//! run over one folder of broken logs, names every skipped line as
//! `import` does (`path:line: skipped: reason`), counts it where it counts,
//! and fails under `--strict`. A command added later must be placed in one
//! of the lists below, so that none can skip the account.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common;

/// The commands that read no recorded session (they read a sweep's files,
/// make sessions, or print the program's own texts).
const READ_NO_SESSIONS: [&str; 5] = ["report", "merge", "synth", "completions", "man"];

/// A Claude Code projects folder with every kind of damage: a line that is
/// not JSON and a line cut short (s-two), a tool result without its call
/// (s-one), a `.jsonl` that holds no log, and an empty one.
struct Broken {
    _tmp: tempfile::TempDir,
    projects: PathBuf,
    /// The log with the bad lines, and the one with the orphan result.
    cut: PathBuf,
    orphan: PathBuf,
    out: PathBuf,
}

fn broken() -> Broken {
    let tmp = tempfile::tempdir().unwrap();
    let projects = crate::direct::projects(tmp.path());
    let cut = projects.join("-home-me-blog").join("s-two.jsonl");
    let mut text = fs::read_to_string(&cut).unwrap();
    text.push_str("this is not json\n");
    let tail = crate::direct::claude_log("s-two", "/home/me/blog", "2026-03-09", 1);
    text.push_str(&tail[..tail.len() / 3]);
    text.push('\n');
    fs::write(&cut, text).unwrap();
    let orphan = projects.join("-home-me-shop").join("s-one.jsonl");
    let mut text = fs::read_to_string(&orphan).unwrap();
    let line = json!({"type": "user", "uuid": "00000000-0000-4000-8000-0000000fffff",
        "sessionId": "s-one", "cwd": "/home/me/shop", "timestamp": "2026-03-02T11:00:00.000Z",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "orphan"}]}});
    text.push_str(&format!("{line}\n"));
    fs::write(&orphan, text).unwrap();
    fs::write(
        projects.join("-home-me-blog").join("notes.jsonl"),
        "{\"foo\": 1}\n",
    )
    .unwrap();
    fs::write(projects.join("-home-me-blog").join("empty.jsonl"), "").unwrap();
    let out = tmp.path().join("out");
    Broken {
        _tmp: tmp,
        projects,
        cut,
        orphan,
        out,
    }
}

/// The lines of stderr that name a skipped line or file.
fn skips(stderr: &str) -> BTreeSet<String> {
    stderr
        .lines()
        .filter(|l| l.contains(": skipped: "))
        .map(str::to_string)
        .collect()
}

fn run(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::output(common::bin().args(args))
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

fn of(log: &Path, lines: &BTreeSet<String>) -> BTreeSet<String> {
    let name = format!("{}:", log.display());
    lines
        .iter()
        .filter(|l| l.starts_with(&name))
        .cloned()
        .collect()
}

#[test]
fn every_command_names_counts_and_refuses_under_strict_every_skipped_line() {
    let b = broken();
    let p = b.projects.as_os_str();
    let o = run(&[
        os("import"),
        os("claude-code"),
        p,
        os("--out"),
        b.out.join("imported").as_os_str(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let want = skips(&common::stderr(&o));
    let (cut, orphan) = (of(&b.cut, &want), of(&b.orphan, &want));
    // Not JSON, two lines repeating earlier ones (the cut log's head) and
    // the cut line; the orphan result; the two files with no log.
    assert_eq!(cut.len(), 4, "{want:#?}");
    assert_eq!(orphan.len(), 1, "{want:#?}");
    for f in ["notes.jsonl", "empty.jsonl"] {
        assert!(want.iter().any(|l| l.contains(f)), "{f}: {want:#?}");
    }
    let bad_lines = (cut.len() + orphan.len()) as u64;

    let html = b.out.join("pages");
    let sweep_out = b.out.join("sweep");
    let folder_commands: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec![os("sweep"), p, os("--out"), sweep_out.as_os_str()],
        vec![os("recommend"), p],
        vec![os("calibrate"), p],
        vec![os("transcript"), os("list"), p],
        vec![
            os("transcript"),
            os("show"),
            p,
            os("--html"),
            html.as_os_str(),
        ],
    ];
    for args in &folder_commands {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
        let said = skips(&common::stderr(&o));
        assert!(
            said.is_superset(&cut) && said.is_superset(&orphan),
            "{args:?} said\n{said:#?}\nnot all of\n{want:#?}"
        );
        let mut strict = args.clone();
        strict.push(os("--strict"));
        let o = run(&strict);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{strict:?}: {}",
            common::stderr(&o)
        );
    }
    // Counted: the sweep's summary and the list's rows.
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(sweep_out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["lines_skipped"].as_u64(),
        Some(bad_lines),
        "{summary}"
    );
    let listed: Value = serde_json::from_str(&common::ok(run(&[
        os("transcript"),
        os("list"),
        p,
        os("--json"),
    ])))
    .unwrap();
    let counted: u64 = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["skipped"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, bad_lines);

    let page = b.out.join("one.html");
    for log in [&b.cut, &b.orphan] {
        let mine = of(log, &want);
        let one_log: Vec<Vec<&std::ffi::OsStr>> = vec![
            vec![os("replay"), log.as_os_str()],
            vec![os("transcript"), os("show"), log.as_os_str()],
            vec![
                os("transcript"),
                os("show"),
                log.as_os_str(),
                os("--html"),
                page.as_os_str(),
            ],
            vec![os("transcript"), os("stats"), log.as_os_str()],
        ];
        for args in &one_log {
            let o = run(args);
            assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
            assert_eq!(of(log, &skips(&common::stderr(&o))), mine, "{args:?}");
            let mut strict = args.clone();
            strict.push(os("--strict"));
            assert_eq!(run(&strict).status.code(), Some(1), "{strict:?}");
        }
    }

    // Every command is one of those above or reads no session.
    let covered: BTreeSet<&str> = [
        "sweep",
        "recommend",
        "calibrate",
        "transcript",
        "replay",
        "import",
    ]
    .into_iter()
    .chain(READ_NO_SESSIONS)
    .collect();
    for command in crate::install::subcommands() {
        assert!(
            covered.contains(command.as_str()),
            "{command}: add it to this test"
        );
    }
}
