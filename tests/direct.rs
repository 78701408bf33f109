//! Other agents' logs read where they are: every command that reads
//! sessions gives on a Claude Code projects folder (or mini-swe-agent
//! trajectories) what it gives on the folder's import; and `--since`,
//! `--until`, `--project` select the same way everywhere.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// A Claude Code log of `turns` turns, each reading a file and answering,
/// with usage on every answer, begun at `start` (RFC 3339 minutes are added).
pub(crate) fn claude_log(session: &str, cwd: &str, day: &str, turns: usize) -> String {
    let mut lines = Vec::new();
    let mut last: Option<String> = None;
    let mut n = 0;
    let mut push = |mut v: Value, lines: &mut Vec<String>| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012x}");
        let obj = v.as_object_mut().unwrap();
        obj.insert("uuid".into(), json!(uuid));
        obj.insert("parentUuid".into(), json!(last));
        obj.insert("sessionId".into(), json!(session));
        obj.insert("cwd".into(), json!(cwd));
        obj.insert(
            "timestamp".into(),
            json!(format!("{day}T10:{:02}:00.000Z", n % 60)),
        );
        last = Some(uuid);
        lines.push(v.to_string());
    };
    let usage = |k: usize| {
        json!({"input_tokens": 3, "cache_creation_input_tokens": 400 + 50 * k,
               "cache_read_input_tokens": 2000 * k, "output_tokens": 20})
    };
    for k in 0..turns {
        push(
            json!({"type": "user", "message": {"role": "user",
                   "content": format!("look at part {k} of the parser")}}),
            &mut lines,
        );
        let call = format!("toolu_{session}_{k}");
        push(
            json!({"type": "assistant", "message": {"model": "claude-sonnet-4-5",
                   "id": format!("msg_{session}_{k}a"), "type": "message", "role": "assistant",
                   "content": [{"type": "tool_use", "id": call, "name": "Read",
                                "input": {"file_path": format!("/src/part{k}.rs")}}],
                   "usage": usage(k)}}),
            &mut lines,
        );
        let body = format!("fn part{k}() {{ {} }}\n", "let x = 1; ".repeat(200));
        push(
            json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": body}]}}),
            &mut lines,
        );
        push(
            json!({"type": "assistant", "message": {"model": "claude-sonnet-4-5",
                   "id": format!("msg_{session}_{k}b"), "type": "message", "role": "assistant",
                   "content": [{"type": "text", "text": format!("part{k} sets x once")}],
                   "usage": usage(k)}}),
            &mut lines,
        );
    }
    lines.join("\n") + "\n"
}

/// `~/.claude/projects` in small: two projects, one with a subagent.
pub(crate) fn projects(root: &Path) -> PathBuf {
    let projects = root.join("projects");
    let shop = projects.join("-home-me-shop");
    let blog = projects.join("-home-me-blog");
    fs::create_dir_all(shop.join("s-one").join("subagents")).unwrap();
    fs::create_dir_all(&blog).unwrap();
    fs::write(
        shop.join("s-one.jsonl"),
        claude_log("s-one", "/home/me/shop", "2026-03-02", 12),
    )
    .unwrap();
    fs::write(
        shop.join("s-one").join("subagents").join("agent-a1.jsonl"),
        claude_log("s-one", "/home/me/shop", "2026-03-02", 3),
    )
    .unwrap();
    fs::write(
        blog.join("s-two.jsonl"),
        claude_log("s-two", "/home/me/blog", "2026-03-09", 8),
    )
    .unwrap();
    projects
}

/// A sweep's `sessions.csv` and `configs.csv` without the columns that say
/// where the sessions were read: `path`, and `lines_skipped` (a log read in
/// place counts the lines its conversion skipped, which `import` reported
/// when it wrote the copy, whose transcript has none).
fn sweep_outputs(input: &Path, out: &Path) -> (String, String) {
    common::ok(common::run(&[
        "sweep".as_ref(),
        input.as_os_str(),
        "--max-tokens".as_ref(),
        "6000".as_ref(),
        "--compact-at".as_ref(),
        "0.6,0.8".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    let without = |file: &str| {
        let text = fs::read_to_string(out.join(file)).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let keep: Vec<bool> = header
            .iter()
            .map(|c| *c != "path" && !c.starts_with("lines_skipped"))
            .collect();
        // Neither file holds a comma inside a cell here.
        let cut = |line: &str| {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), keep.len(), "{line}");
            let kept: Vec<&str> = cells
                .into_iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(c, _)| c)
                .collect();
            kept.join(",")
        };
        let mut rows = vec![cut(&header.join(","))];
        rows.extend(lines.map(cut));
        rows.join("\n")
    };
    (without("sessions.csv"), without("configs.csv"))
}

fn import(format: &str, input: &Path, out: &Path) {
    common::ok(common::run(&[
        "import".as_ref(),
        format.as_ref(),
        input.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
}

#[test]
fn a_claude_code_projects_folder_sweeps_as_its_import_does() {
    let dir = tempfile::tempdir().unwrap();
    let projects = projects(dir.path());
    let imported = dir.path().join("imported");
    import("claude-code", &projects, &imported);
    let direct = sweep_outputs(&projects, &dir.path().join("direct"));
    let copy = sweep_outputs(&imported, &dir.path().join("copy"));
    assert_eq!(
        direct.0.lines().count(),
        1 + 3 * 4,
        "3 sessions × 4 configs: the recorded run (the baseline of other agents' logs) and smith's 3"
    );
    assert_eq!(direct, copy);
    // Nothing was written beside the logs.
    let mut names: Vec<String> = fs::read_dir(projects.join("-home-me-shop"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["s-one", "s-one.jsonl"]);
}

#[test]
fn calibrate_on_a_claude_code_projects_folder_is_calibrate_on_its_import() {
    let dir = tempfile::tempdir().unwrap();
    let projects = projects(dir.path());
    let imported = dir.path().join("imported");
    import("claude-code", &projects, &imported);
    let of = |p: &Path| {
        common::ok(common::run(&[
            "calibrate".as_ref(),
            p.as_os_str(),
            "--json".as_ref(),
        ]))
    };
    let direct = of(&projects);
    let v: Value = serde_json::from_str(&direct).unwrap();
    assert_eq!(
        v["bill"]["summary"][0]["sessions"].as_u64(),
        Some(3),
        "{direct}"
    );
    // Alike but for the source each session was read under: the path given.
    let unsourced = |text: &str| {
        let mut v: Value = serde_json::from_str(text).unwrap();
        let r = &mut v["recorded_replay"];
        for list in ["sources", "sessions"] {
            for s in r[list].as_array_mut().unwrap() {
                s["source"] = Value::Null;
            }
        }
        v
    };
    assert_eq!(unsourced(&direct), unsourced(&of(&imported)));
}

#[test]
fn a_converted_session_is_named_by_its_log_and_id_and_replays_by_that_name() {
    let dir = tempfile::tempdir().unwrap();
    let projects = projects(dir.path());
    let log = projects.join("-home-me-blog").join("s-two.jsonl");
    let direct = common::ok(common::run(&[
        "replay".as_ref(),
        log.as_os_str(),
        "--json".as_ref(),
    ]));
    let v: Value = serde_json::from_str(&direct).unwrap();
    let name = v["path"].as_str().unwrap().to_string();
    assert_eq!(name, format!("{}#cc-s-two", log.display()));
    // The name given back reads the same session.
    let again = common::ok(common::run(&["replay", &name, "--json"]));
    assert_eq!(direct, again);
    // And it is what the imported copy replays, but for the path.
    let imported = dir.path().join("imported");
    import("claude-code", &projects, &imported);
    let copy = common::ok(common::run(&[
        "replay".as_ref(),
        imported.join("cc-s-two").as_os_str(),
        "--json".as_ref(),
    ]));
    let mut a: Value = serde_json::from_str(&direct).unwrap();
    let mut b: Value = serde_json::from_str(&copy).unwrap();
    a["path"] = Value::Null;
    b["path"] = Value::Null;
    assert_eq!(a, b);
    // A log holding several sessions asks for one of them.
    let (_, err, code) = common::run_text(&[
        "replay".as_ref(),
        projects.join("-home-me-shop").as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("holds 2 sessions"), "{err}");
}

#[test]
fn since_until_and_project_select_the_same_sessions_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let projects = projects(dir.path());
    let ids = |args: &[&str]| -> Vec<String> {
        let mut cmd = common::bin();
        cmd.env("TZ", "Europe/Berlin")
            .args(["transcript", "list"])
            .arg(&projects)
            .args(args)
            .arg("--json");
        let out = common::ok(common::output(&mut cmd));
        let v: Value = serde_json::from_str(&out).unwrap();
        let mut ids: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    let all = ["cc-s-one", "cc-s-one-agent-a1", "cc-s-two"];
    assert_eq!(ids(&[]), all);
    assert_eq!(ids(&["--project", "shop"]), all[..2]);
    assert_eq!(ids(&["--project", "blog"]), all[2..]);
    assert_eq!(ids(&["--since", "2026-03-05"]), all[2..]);
    assert_eq!(
        ids(&["--until", "2026-03-02"]),
        all[..2],
        "until is inclusive"
    );
    assert_eq!(ids(&["--until", "2026-03-02T11:05"]), all[..2]);
    // The logs begin at 10:01Z, 11:01 in Berlin: nothing had begun by 10:30 there,
    // and a selection that keeps nothing has read nothing (exit 1).
    let mut cmd = common::bin();
    cmd.env("TZ", "Europe/Berlin")
        .args(["transcript", "list"])
        .arg(&projects)
        .args(["--until", "2026-03-02T10:30"]);
    let o = common::output(&mut cmd);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o)
            .starts_with("3 sessions left out by --since/--until/--project; 0 kept\n"),
        "{}",
        common::stderr(&o)
    );
    assert_eq!(ids(&["--until", "2026-03-02T10:30:00Z"]), all[..2]);

    // The same selection in a sweep and in calibrate.
    let out = dir.path().join("sweep");
    let mut cmd = common::bin();
    cmd.args(["sweep"])
        .arg(&projects)
        .args(["--project", "blog", "--out"])
        .arg(&out);
    let err = common::ok_stderr(common::output(&mut cmd));
    assert!(
        err.contains("2 sessions left out by --since/--until/--project; 1 kept"),
        "{err}"
    );
    let sessions = fs::read_to_string(out.join("sessions.csv")).unwrap();
    // The one session under the recorded run and smith's defaults.
    assert_eq!(sessions.lines().count(), 3, "{sessions}");
    let mut cmd = common::bin();
    cmd.args(["calibrate"])
        .arg(&projects)
        .args(["--since", "2026-03-05", "--json"]);
    let cal: Value = serde_json::from_str(&common::ok(common::output(&mut cmd))).unwrap();
    assert_eq!(
        cal["bill"]["summary"][0]["sessions"].as_u64(),
        Some(1),
        "{cal}"
    );

    // A date that is not one is a usage error naming the flag.
    let (_, err, code) = common::run_text(&[
        "transcript".as_ref(),
        "list".as_ref(),
        projects.as_os_str(),
        "--since".as_ref(),
        "last tuesday".as_ref(),
    ]);
    assert_eq!(code, Some(2));
    common::assert_text(
        &err,
        "smith-calibrate: --since \"last tuesday\": not a date: use YYYY-MM-DD, YYYYMMDD, \
         YYYY-MM-DDTHH:MM[:SS] or RFC 3339\n",
    );
}

/// Every shared Claude Code source and the mini-swe-agent run, read where
/// they are and through their import, sweep to the same rows.
#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn every_shared_log_sweeps_where_it_is_as_its_import_does() {
    let dir = tempfile::tempdir().unwrap();
    let claude = common::shared_data("claude-code");
    let mut sources: Vec<(&str, PathBuf)> = fs::read_dir(&claude)
        .unwrap()
        .map(|e| ("claude-code", e.unwrap().path()))
        .collect();
    sources.sort();
    for codex in ["msrnic", "property-estimator"] {
        sources.push(("codex", common::shared_data(&format!("codex/{codex}"))));
    }
    sources.push((
        "mini-swe-agent",
        common::shared_data("mini-swe-agent/gemini-3-pro-swebench-verified"),
    ));
    assert!(sources.len() >= 6, "{sources:?}");
    for (k, (format, source)) in sources.iter().enumerate() {
        let imported = dir.path().join(format!("imported-{k}"));
        import(format, source, &imported);
        let direct = sweep_outputs(source, &dir.path().join(format!("direct-{k}")));
        let copy = sweep_outputs(&imported, &dir.path().join(format!("copy-{k}")));
        assert!(direct.0.lines().count() > 3, "{}", source.display());
        assert!(direct == copy, "{}: the outputs differ", source.display());
    }
}

/// The price header of a sweep: its first lines, up to the table.
fn price_header(input: &Path) -> Vec<String> {
    let out = common::ok(common::run(&[
        "sweep".as_ref(),
        input.as_os_str(),
        "--max-tokens".as_ref(),
        "6000".as_ref(),
    ]));
    out.lines()
        .take_while(|l| !l.starts_with('┌'))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_folder_read_in_place_names_each_models_prices_on_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let projects = projects(dir.path());
    let blog = projects.join("-home-me-blog").join("s-two.jsonl");
    let haiku = fs::read_to_string(&blog)
        .unwrap()
        .replace("claude-sonnet-4-5", "claude-haiku-4-5");
    fs::write(&blog, haiku).unwrap();
    let header = price_header(&projects);
    assert!(
        header[0].ends_with("prices per request's model:"),
        "{header:?}"
    );
    let line_of = |family: &str| {
        let lines: Vec<&String> = header.iter().filter(|l| l.contains(family)).collect();
        assert_eq!(lines.len(), 1, "{family} on one line: {header:?}");
        lines[0].clone()
    };
    // 12 + 3 turns of two requests each in the shop, 8 in the blog.
    assert_eq!(
        line_of("Claude Sonnet 4 / 4.5"),
        "  Claude Sonnet 4 / 4.5 $3/M input, $3.75/M cache write, $0.3/M cache read (30 requests)"
    );
    assert_eq!(
        line_of("Claude Haiku 4.5"),
        "  Claude Haiku 4.5 $1/M input, $1.25/M cache write, $0.1/M cache read (16 requests)"
    );
    assert_eq!(header.len(), 3, "{header:?}");
    // The same metadata as an import's session.json.
    let imported = dir.path().join("imported");
    import("claude-code", &projects, &imported);
    assert_eq!(price_header(&imported)[1..], header[1..]);
}

/// The lines of `text` that name a skipped line of `log`.
fn skip_lines(text: &str, log: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(log) && l.contains(": skipped: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_log_read_in_place_gives_the_skipped_lines_import_gives_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let projects = projects(dir.path());
    let blog = projects.join("-home-me-blog").join("s-two.jsonl");
    let mut text = fs::read_to_string(&blog).unwrap();
    text.push_str("this is not json\n");
    let cut = claude_log("s-two", "/home/me/blog", "2026-03-09", 1);
    text.push_str(&cut[..cut.len() / 3]);
    text.push('\n');
    fs::write(&blog, &text).unwrap();
    let notes = projects.join("-home-me-blog").join("notes.jsonl");
    fs::write(&notes, "{\"foo\": 1}\n").unwrap();
    let empty = projects.join("-home-me-blog").join("empty.jsonl");
    fs::write(&empty, "").unwrap();

    let o = common::run(&[
        "import".as_ref(),
        "claude-code".as_ref(),
        projects.as_os_str(),
        "--out".as_ref(),
        dir.path().join("imported").as_os_str(),
    ]);
    let want = skip_lines(&common::stderr(&o), "s-two.jsonl");
    // Not JSON, two lines repeating earlier ones, the cut line.
    assert_eq!(want.len(), 4, "{}", common::stderr(&o));

    let sweep = |strict: bool| {
        let mut args = vec!["sweep".as_ref(), projects.as_os_str()];
        if strict {
            args.push("--strict".as_ref());
        }
        common::run(&args)
    };
    let o = sweep(false);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(skip_lines(&common::stderr(&o), "s-two.jsonl"), want);
    // A file named like a log that holds none is named, not passed over.
    for f in [&notes, &empty] {
        let line = format!("{}: skipped: ", f.display());
        assert!(common::stderr(&o).contains(&line), "{}", common::stderr(&o));
    }
    assert!(!sweep(true).status.success(), "--strict fails on them");

    let o = common::run(&["replay".as_ref(), blog.as_os_str(), "--strict".as_ref()]);
    assert!(!o.status.success(), "replay --strict fails on them");
    assert_eq!(skip_lines(&common::stderr(&o), "s-two.jsonl"), want);

    let o = common::run(&[
        "transcript".as_ref(),
        "list".as_ref(),
        blog.as_os_str(),
        "--json".as_ref(),
    ]);
    let listed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let counts: Vec<u64> = listed
        .as_array()
        .or_else(|| listed["sessions"].as_array())
        .unwrap()
        .iter()
        .map(|s| s["skipped"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [4], "{listed}");
}

#[test]
fn the_path_transcript_list_prints_is_taken_by_show_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let projects = projects(dir.path());
    let sessions = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sessions");
    for input in [projects.as_path(), sessions.as_path()] {
        round_trips(input);
    }
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn the_path_transcript_list_prints_for_codex_rollouts_is_taken_by_show_and_replay() {
    round_trips(&common::shared_data("codex/property-estimator"));
}

/// Every path `transcript list` prints for `input` is in its table, and
/// `transcript show` and `replay` take it.
fn round_trips(input: &Path) {
    let o = common::ok(common::run(&[
        "transcript".as_ref(),
        "list".as_ref(),
        input.as_os_str(),
        "--json".as_ref(),
    ]));
    let rows: Value = serde_json::from_str(&o).unwrap();
    let paths: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.len() >= 3, "{}", input.display());
    let table = common::ok(common::run(&[
        "transcript".as_ref(),
        "list".as_ref(),
        input.as_os_str(),
    ]));
    for path in paths {
        assert!(table.contains(path), "the table shows {path}");
        common::ok(common::run(&["transcript", "show", path]));
        common::ok(common::run(&["replay", path]));
    }
}
