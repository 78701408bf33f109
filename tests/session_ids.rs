//! The id `transcript list` prints is what `transcript show` (and every
//! command that reads one session) takes back: alone, looked for where
//! smith, Claude Code and Codex keep their sessions by default, or after
//! the folder it was listed from; whole, by a unique prefix, or as a
//! table on a narrow terminal shows it cut short. The ids are read from the
//! listing, never written into the test.

use crate::common;
use crate::direct::claude_log;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

/// A home directory with nothing of its own: no `.smith`, `.claude` or
/// `.codex` until a test puts one there.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The binary run with `args` as a user of this home runs it: `HOME`
    /// here, and neither `SMITH_HOME`, `CLAUDE_CONFIG_DIR` nor `CODEX_HOME`
    /// set, so every place is found from `HOME`.
    fn run(&self, args: &[&str]) -> Output {
        let mut c = common::bin();
        c.env("HOME", self.path())
            .env_remove("SMITH_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .args(args);
        common::output(&mut c)
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "{args:?}: exit {:?}\n{}",
            o.status.code(),
            common::stderr(&o)
        );
        common::stdout(&o)
    }
}

/// A Claude Code projects folder under `projects`: a session named by a
/// UUID, as Claude Code names them, with a subagent in its folder, and one
/// in another project.
fn claude_projects(projects: &Path) {
    let uuid = "4d5611e5-241a-462a-8d15-5122611a9569";
    let shop = projects.join("-home-me-shop");
    let subagents = shop.join(uuid).join("subagents");
    fs::create_dir_all(&subagents).unwrap();
    fs::write(
        shop.join(format!("{uuid}.jsonl")),
        claude_log(uuid, "/home/me/shop", "2026-03-02", 6),
    )
    .unwrap();
    fs::write(
        subagents.join("agent-a2898e3.jsonl"),
        claude_log(uuid, "/home/me/shop", "2026-03-02", 2),
    )
    .unwrap();
    let blog = projects.join("-home-me-blog");
    fs::create_dir_all(&blog).unwrap();
    fs::write(
        blog.join("9f0c2b7e-1111-4222-8333-944455556666.jsonl"),
        claude_log(
            "9f0c2b7e-1111-4222-8333-944455556666",
            "/home/me/blog",
            "2026-03-09",
            3,
        ),
    )
    .unwrap();
}

/// A Codex CLI rollout in the dated folders Codex writes them in.
fn codex_sessions(sessions: &Path) {
    let day = sessions.join("2026/03/11");
    fs::create_dir_all(&day).unwrap();
    let id = "019cdf2f-4636-72b1-a2c7-da076cdfd180";
    let at = |s: u32, kind: &str, payload: serde_json::Value| {
        json!({"timestamp": format!("2026-03-11T23:15:{s:02}.000Z"), "type": kind, "payload": payload})
            .to_string()
    };
    let count = |input: u64, output: u64| {
        json!({"type": "token_count", "info": {
            "total_token_usage": {"total_tokens": input + output},
            "last_token_usage": {"input_tokens": input, "cached_input_tokens": 0,
                                 "output_tokens": output, "reasoning_output_tokens": 0},
            "model_context_window": 258400}})
    };
    let lines = [
        at(
            0,
            "session_meta",
            json!({"id": id, "cwd": "/home/me/api", "cli_version": "0.114.0",
                   "model_provider": "openai"}),
        ),
        at(1, "turn_context", json!({"model": "gpt-5.4"})),
        at(
            2,
            "response_item",
            json!({"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "list the files"}]}),
        ),
        at(
            3,
            "response_item",
            json!({"type": "function_call", "name": "exec_command",
                   "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1"}),
        ),
        at(4, "event_msg", count(1200, 30)),
        at(
            5,
            "response_item",
            json!({"type": "function_call_output", "call_id": "c1", "output": "a.rs b.rs"}),
        ),
        at(
            6,
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": "two files"}]}),
        ),
        at(7, "event_msg", count(1300, 10)),
    ];
    fs::write(
        day.join(format!("rollout-2026-03-11T23-15-00-{id}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

/// The ids in the `id` column of `transcript list`'s table, each the first
/// word of its cell (a mark may follow it).
fn listed_ids(table: &str) -> Vec<String> {
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with('│')).collect();
    assert!(
        rows.first().is_some_and(|h| h.contains(" id ")),
        "no id column:\n{table}"
    );
    rows[1..]
        .iter()
        .filter_map(|row| {
            let cell = row.trim_start_matches('│').split('┆').next()?;
            cell.split_whitespace().next().map(str::to_string)
        })
        .collect()
}

/// What `transcript show` prints for `session` (one or two arguments).
fn shown(home: &Home, session: &[&str]) -> String {
    let mut args = vec!["transcript", "show"];
    args.extend_from_slice(session);
    args.push("--no-pager");
    home.ok(&args)
}

/// Every id `transcript list FOLDER` prints names its session alone and
/// after FOLDER: `transcript show` prints it as it prints the session's
/// path, and `replay`, `--at` and `--html` take it too.
fn every_listed_id_is_taken_back(home: &Home, folder: &Path, at_least: usize) -> Vec<String> {
    let folder_arg = folder.to_str().unwrap();
    let ids = listed_ids(&home.ok(&["transcript", "list", folder_arg]));
    assert!(ids.len() >= at_least, "{ids:?}");
    // The first rows are enough to show it: each run replays a session.
    let ids: Vec<String> = ids.into_iter().take(4).collect();
    let listed: serde_json::Value =
        serde_json::from_str(&home.ok(&["transcript", "list", folder_arg, "--json"])).unwrap();
    for id in &ids {
        let row = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} is not an id of the listing"));
        let by_path = shown(home, &[row["path"].as_str().unwrap()]);
        assert_eq!(shown(home, &[id]), by_path, "transcript show {id}");
        assert_eq!(
            shown(home, &[folder_arg, id]),
            by_path,
            "transcript show FOLDER {id}"
        );
        home.ok(&["replay", id, "--json"]);
        home.ok(&["replay", folder_arg, id, "--json"]);
        home.ok(&["transcript", "show", id, "--at", "0", "--no-pager"]);
        home.ok(&["transcript", "stats", folder_arg, id]);
        let page = home.path().join("page.html");
        home.ok(&["transcript", "show", id, "--html", page.to_str().unwrap()]);
        assert!(fs::read_to_string(&page).unwrap().contains("<html"));
    }
    ids
}

#[test]
fn claude_code_ids_are_found_in_the_projects_folder_and_in_a_folder_given() {
    let home = Home::new();
    let projects = home.path().join(".claude/projects");
    claude_projects(&projects);
    let ids = every_listed_id_is_taken_back(&home, &projects, 3);
    assert!(ids.iter().any(|id| id.contains("-agent-")), "{ids:?}");
    // A unique prefix will do; one that names several sessions lists them.
    let blog = ids.iter().find(|id| id.starts_with("cc-9f0c")).unwrap();
    assert_eq!(
        shown(&home, &["cc-9f0c2b7e"]),
        shown(&home, &[blog.as_str()])
    );
    let o = home.run(&["transcript", "show", "cc-4d5611e5"]);
    assert_eq!(o.status.code(), Some(1));
    let err = common::stderr(&o);
    assert!(err.contains("\"cc-4d5611e5\" names 2 sessions"), "{err}");
    for id in ids.iter().filter(|id| id.starts_with("cc-4d5611e5")) {
        assert!(err.contains(id.as_str()), "{id} is not named: {err}");
    }
}

#[test]
fn a_session_found_by_its_id_names_the_block_types_nothing_could_use_once() {
    let home = Home::new();
    let projects = home.path().join(".claude/projects");
    claude_projects(&projects);
    // A block of a type no importer can use before each answer of blog's.
    let log = projects.join("-home-me-blog/9f0c2b7e-1111-4222-8333-944455556666.jsonl");
    let lines: Vec<String> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let answer = v["type"] == "assistant";
            if let Some(blocks) = v["message"]["content"].as_array_mut() {
                if answer && blocks.iter().any(|b| b["type"] == "text") {
                    blocks.insert(0, json!({"type": "fancy_new_block"}));
                }
            }
            v.to_string()
        })
        .collect();
    fs::write(&log, lines.join("\n") + "\n").unwrap();
    let o = home.run(&["transcript", "show", "cc-9f0c2b7e", "--no-pager"]);
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("fancy_new_block"))
        .collect();
    let clause = "3 blocks of a type nothing here can use left out: \"fancy_new_block\" (3)";
    assert_eq!(notes, [format!("{}: {clause}", log.display())], "{err}");
    // A session of a log with none says nothing of it.
    let o = home.run(&[
        "transcript",
        "show",
        "cc-4d5611e5-241a-462a-8d15-5122611a9569",
        "--no-pager",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(!common::stderr(&o).contains("fancy_new_block"));
}

#[test]
fn claude_code_config_dir_moves_the_projects_folder() {
    let home = Home::new();
    let config = home.path().join("elsewhere");
    claude_projects(&config.join("projects"));
    let mut c = common::bin();
    c.env("HOME", home.path())
        .env("CLAUDE_CONFIG_DIR", &config)
        .env_remove("CODEX_HOME")
        .args(["transcript", "show", "cc-9f0c2b7e", "--no-pager"]);
    let o = common::output(&mut c);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

#[test]
fn codex_ids_are_found_in_the_sessions_folder_and_codex_home_moves_it() {
    let home = Home::new();
    let sessions = home.path().join(".codex/sessions");
    codex_sessions(&sessions);
    let ids = every_listed_id_is_taken_back(&home, &sessions, 1);
    assert!(ids.iter().all(|id| id.starts_with("codex-")), "{ids:?}");
    let moved = home.path().join("codex-home");
    fs::rename(home.path().join(".codex"), &moved).unwrap();
    let mut c = common::bin();
    c.env("HOME", home.path()).env("CODEX_HOME", &moved).args([
        "transcript",
        "show",
        &ids[0],
        "--no-pager",
    ]);
    let o = common::output(&mut c);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

/// `$SMITH_HOME` at the home's default, `~/.smith`, holding the bundled
/// sessions and their index.
fn smith_home(home: &Home) -> PathBuf {
    let smith = home.path().join(".smith");
    fs::create_dir_all(&smith).unwrap();
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sessions");
    std::os::unix::fs::symlink(&bundled, smith.join("sessions")).unwrap();
    smith.join("sessions")
}

#[test]
fn smith_ids_and_names_are_found_in_smith_home_and_in_a_folder_given() {
    let home = Home::new();
    let sessions = smith_home(&home);
    let ids = every_listed_id_is_taken_back(&home, &sessions, 3);
    let listed: serde_json::Value = serde_json::from_str(&home.ok(&[
        "transcript",
        "list",
        sessions.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    let first = &listed[0];
    let name = first["name"].as_str().unwrap();
    let by_id = shown(&home, &[first["id"].as_str().unwrap()]);
    assert_eq!(shown(&home, &[name]), by_id, "by name {name}");
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sessions");
    assert_eq!(shown(&home, &[bundled.to_str().unwrap(), &ids[0]]), {
        let row = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == ids[0].as_str())
            .unwrap();
        shown(&home, &[row["path"].as_str().unwrap()])
    });
}

#[test]
fn an_unknown_id_names_every_place_looked_in_and_which_are_missing() {
    let home = Home::new();
    claude_projects(&home.path().join(".claude/projects"));
    for args in [
        &["transcript", "show", "cc-0000dead"][..],
        &["replay", "cc-0000dead"],
        &["transcript", "stats", "no-such-session"],
    ] {
        let o = home.run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = common::scrub(&common::stderr(&o), home.path());
        let typed = args[args.len() - 1];
        common::assert_text(
            &err,
            &format!(
                "smith-calibrate: no session \"{typed}\"; looked in:\n  \
                 <DIR>/.smith/sessions (smith's sessions, $SMITH_HOME/sessions): does not exist\n  \
                 <DIR>/.claude/projects (Claude Code's projects folder, $CLAUDE_CONFIG_DIR/projects)\n  \
                 <DIR>/.codex/sessions (Codex's sessions folder, $CODEX_HOME/sessions): does not exist\n\
                 `transcript list FOLDER` prints the ids of a folder's sessions; \
                 `transcript show FOLDER ID` looks in FOLDER\n"
            ),
        );
    }
    let folder = home.path().join(".claude/projects");
    let o = home.run(&[
        "transcript",
        "show",
        folder.to_str().unwrap(),
        "cc-0000dead",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = common::scrub(&common::stderr(&o), home.path());
    assert!(
        err.contains(
            "no session \"cc-0000dead\"; looked in:\n  <DIR>/.claude/projects (the folder given)\n"
        ),
        "{err}"
    );
    let missing = home.path().join("nope");
    let o = home.run(&[
        "transcript",
        "show",
        missing.to_str().unwrap(),
        "cc-0000dead",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("nope: no such file or directory"),
        "{}",
        common::stderr(&o)
    );
}

/// On a terminal narrower than the listing, its ids are cut short with an
/// ellipsis; each still names its session.
#[test]
fn an_id_as_a_narrow_terminal_shows_it_is_taken_back() {
    let home = Home::new();
    let projects = home.path().join(".claude/projects");
    claude_projects(&projects);
    let folder = projects.to_str().unwrap();
    let mut c = common::bin();
    c.env("HOME", home.path());
    let Some((status, table)) =
        crate::common::terminal::run_with(c, &["transcript", "list", folder], 60, "2>/dev/null")
    else {
        return;
    };
    assert!(status.success(), "{table}");
    let cut: Vec<String> = listed_ids(&table)
        .into_iter()
        .filter(|id| id.contains('…'))
        .collect();
    assert!(!cut.is_empty(), "no id was cut:\n{table}");
    let whole = listed_ids(&home.ok(&["transcript", "list", folder]));
    for short in &cut {
        let (head, tail) = short.split_once('…').unwrap();
        let meant: Vec<&String> = whole
            .iter()
            .filter(|id| id.starts_with(head) && id.ends_with(tail))
            .collect();
        assert_eq!(meant.len(), 1, "{short} names {meant:?}");
        assert_eq!(shown(&home, &[short]), shown(&home, &[meant[0]]), "{short}");
    }
}
