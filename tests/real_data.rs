//! The commands on real sessions: every Claude Code log and a slice of the
//! mini-swe-agent trajectories in `../shared/data`, imported, then read back
//! with `transcript show`, `transcript stats` and `sweep`.
//!
//! `../shared/data` is present in CI and absent in a user's clone; there these
//! tests are reported as ignored (see `common::shared_data`).

use crate::common;

use std::path::{Path, PathBuf};

use common::run;

use smith_calibrate::transcript::{self, BlockType};

/// Imports all Claude Code logs and the first `n` trajectories into `out`.
fn import(data: &Path, out: &Path, n: usize) -> Vec<PathBuf> {
    let cc = out.join("cc");
    // Per source, so that a source added to the shared data does not move
    // the others' counts. xiaomoziyi's 31 subagent logs, renamed
    // `<day>-<project>-agent-<id>.jsonl`, are one session each, as an
    // `agent-<id>.jsonl` is.
    for (source, want) in [("spotter", 20), ("eduardodmb", 142), ("xiaomoziyi", 47)] {
        let o = run(&[
            "import",
            "claude-code",
            data.join("claude-code").join(source).to_str().unwrap(),
            "--out",
            cc.join(source).to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let found = transcript::resolve(cc.join(source).to_str().unwrap()).unwrap();
        assert_eq!(found.len(), want, "{source}: Claude Code sessions imported");
    }
    let msa_dir = data.join("mini-swe-agent/gemini-3-pro-swebench-verified");
    let mut trajs: Vec<PathBuf> = std::fs::read_dir(&msa_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".traj.json"))
        .collect();
    trajs.sort();
    trajs.truncate(n);
    let msa = out.join("msa");
    let mut args: Vec<String> = vec!["import".into(), "mini-swe-agent".into()];
    args.extend(trajs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".to_string(), msa.display().to_string()]);
    let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut sessions = transcript::resolve(cc.to_str().unwrap()).unwrap();
    sessions.extend(transcript::resolve(msa.to_str().unwrap()).unwrap());
    assert_eq!(sessions.len() - n, 20 + 142 + 47, "Claude Code sessions");
    sessions
        .into_iter()
        .map(|s| s.dir().to_path_buf())
        .collect()
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn transcript_show_renders_every_real_tool_call_with_its_result() {
    let data = common::shared_data("");
    let tmp = tempfile::tempdir().unwrap();
    let sessions = import(&data, tmp.path(), 40);
    for dir in &sessions {
        let session =
            transcript::load(&transcript::resolve(dir.to_str().unwrap()).unwrap()[0]).unwrap();
        let count = |kind: BlockType| {
            session
                .messages
                .iter()
                .flat_map(|m| &m.content)
                .filter(|b| b.kind == kind)
                .count()
        };
        let (calls, results) = (count(BlockType::ToolUse), count(BlockType::ToolResult));
        let tools: std::collections::BTreeSet<String> = session
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| b.tool_name.as_deref().map(|n| format!("  → {n}  ")))
            .collect();
        assert_eq!(
            calls,
            results,
            "{}: imports keep the pairing",
            dir.display()
        );
        let o = run(&[
            "transcript",
            "show",
            dir.to_str().unwrap(),
            "--no-pager",
            "--color",
            "never",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", dir.display());
        let out = String::from_utf8_lossy(&o.stdout);
        // A call is "  → NAME  args" at the message's indent; its result
        // "    ← ok|ERROR · ..." right under it. (Model text can contain
        // arrows too, so the tool name anchors the match.)
        let shown_calls = out
            .lines()
            .filter(|l| tools.iter().any(|t| l.starts_with(t.as_str())))
            .count();
        let shown_results = out
            .lines()
            .filter(|l| l.starts_with("    ← ok ") || l.starts_with("    ← ERROR "))
            .count();
        assert_eq!(
            (shown_calls, shown_results),
            (calls, results),
            "{}",
            dir.display()
        );
        let footer = out.lines().last().unwrap_or_default();
        assert!(
            footer.contains(&format!(
                "{} messages · {calls} tool calls, {results} results shown",
                session.messages.len()
            )),
            "{}: {footer}",
            dir.display()
        );
        let o = run(&["transcript", "stats", dir.to_str().unwrap(), "--json"]);
        assert_eq!(o.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["messages"], session.messages.len());
    }
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn sweep_and_show_at_work_on_imported_real_sessions() {
    let data = common::shared_data("");
    let tmp = tempfile::tempdir().unwrap();
    let sessions = import(&data, tmp.path(), 10);
    let o = run(&[
        "sweep",
        tmp.path().to_str().unwrap(),
        "--max-tokens",
        "64000,200000",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rows = crate::common::sweep_configs(&o.stdout);
    assert!(rows.len() >= 3, "baseline plus two windows");
    // A copy of its parent's conversation (spotter's five compaction
    // agents) is imported, and listed, but never swept.
    let copy = |d: &PathBuf| {
        let meta = std::fs::read_to_string(d.join("session.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&meta).unwrap()["copy_of"].is_object()
    };
    let swept = sessions.iter().filter(|d| !copy(d)).count();
    assert_eq!(swept, sessions.len() - 5, "spotter's compaction agents");
    assert!(rows.iter().all(|r| r["sessions"] == swept));
    // The 64k window makes the long Claude Code sessions compact.
    let compacted: i64 = rows
        .iter()
        .map(|r| r["compactions"].as_i64().unwrap())
        .sum();
    assert!(compacted > 0);
    let main = sessions
        .iter()
        .find(|d| d.ends_with("cc-4d5611e5-241a-462a-8d15-5122611a9569"))
        .unwrap();
    let o = run(&[
        "transcript",
        "show",
        main.to_str().unwrap(),
        "--at",
        "60",
        "--max-tokens",
        "64000",
        "--no-pager",
        "--color",
        "never",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o2 = run(&[
        "replay",
        main.to_str().unwrap(),
        "--emit-history-at",
        "60",
        "--max-tokens",
        "64000",
    ]);
    let o3 = run(&[
        "transcript",
        "show",
        main.to_str().unwrap(),
        "--at",
        "60",
        "--max-tokens",
        "64000",
        "--json",
    ]);
    assert_eq!(
        o2.stdout, o3.stdout,
        "show --at --json is the replay's history"
    );
    assert!(!o2.stdout.is_empty());
}
