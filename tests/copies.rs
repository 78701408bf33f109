//! Claude Code logs that copy another log's requests: each request billed
//! once, each copy folded into its parent. A hand-made folder holds a
//! parent, a compaction agent, a side question, a prompt suggestion and a
//! fork, each copying some of the parent's requests with the same
//! `message.id`, `requestId` and usage, then making requests of its own.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{ok, run, sweep_configs};

/// Claude Sonnet 4.5's prices per million tokens: input, 5-minute cache
/// write, cache read, output (src/cost/table.rs).
const SONNET: [f64; 4] = [3.0, 3.75, 0.3, 15.0];
const MODEL: &str = "claude-sonnet-4-5";

/// One request: its key, the time of its answer and its usage (input,
/// cache write, cache read, output).
#[derive(Clone, Copy)]
struct Request {
    n: usize,
    usage: [u64; 4],
}

impl Request {
    fn dollars(&self) -> f64 {
        let [input, write, read, output] = self.usage;
        (input as f64 * SONNET[0]
            + write as f64 * SONNET[1]
            + read as f64 * SONNET[2]
            + output as f64 * SONNET[3])
            / 1e6
    }
}

/// The lines of a user prompt and of the answer to `r`, as Claude Code
/// writes them in the file of `agent` (none: the main session).
fn turn(r: Request, agent: Option<&str>, extra: &Value, stop: Option<&str>) -> Vec<String> {
    let time = |s: usize| format!("2026-03-01T10:{:02}:{:02}.000Z", r.n, s);
    let with = |mut v: Value| {
        if let Some(a) = agent {
            v["isSidechain"] = json!(true);
            v["agentId"] = json!(a);
        }
        for (k, x) in extra.as_object().into_iter().flatten() {
            v[k] = x.clone();
        }
        v.to_string()
    };
    let [input, write, read, output] = r.usage;
    vec![
        with(json!({
            "type": "user", "uuid": format!("00000000-0000-4000-8000-{:012}", r.n * 2),
            "sessionId": "parent", "timestamp": time(0), "cwd": "/p",
            "message": {"role": "user", "content": format!("question {} {}", r.n, "x".repeat(400))}
        })),
        with(json!({
            "type": "assistant", "uuid": format!("00000000-0000-4000-8000-{:012}", r.n * 2 + 1),
            "sessionId": "parent", "timestamp": time(5), "requestId": format!("req_{}", r.n),
            "message": {"id": format!("msg_{}", r.n), "role": "assistant", "model": MODEL,
                "stop_reason": stop,
                "content": [{"type": "text", "text": format!("answer {} {}", r.n, "y".repeat(300))}],
                "usage": {"input_tokens": input, "cache_creation_input_tokens": write,
                          "cache_read_input_tokens": read, "output_tokens": output}}
        })),
    ]
}

fn write(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn req(n: usize, prompt: u64, output: u64) -> Request {
    Request {
        n,
        usage: [3, 1_000, prompt - 1_003, output],
    }
}

/// The folder: the parent's four requests (its last cut mid-answer, the
/// final usage only in the side question's copy), the copies and the fork.
/// Returns the dollars of the requests each file makes on its own: the
/// parent's (final usage), the compaction agent's, the side question's, the
/// prompt suggestion's and the fork's; then what the final answer of the
/// parent's cut request costs beyond its stub.
fn folder(root: &Path, with_copies: bool) -> [f64; 6] {
    let parent: Vec<Request> = (1..=4)
        .map(|n| req(n, 20_000 + 3_000 * n as u64, 200))
        .collect();
    let stub = Request {
        usage: [3, 1_000, parent[3].usage[2], 7],
        ..parent[3]
    };
    let none = json!({});
    let mut lines = Vec::new();
    for r in &parent[..3] {
        lines.extend(turn(*r, None, &none, Some("end_turn")));
    }
    lines.extend(turn(stub, None, &none, None));
    write(&root.join("proj/parent.jsonl"), &lines);

    let own = [
        req(10, 40_000, 900),
        req(11, 36_000, 120),
        req(12, 33_000, 40),
        req(13, 30_000, 300),
    ];
    let fork_extra = json!({"forkedFrom": {"sessionId": "parent", "messageUuid": "x"}});
    let mut fork = Vec::new();
    for r in &parent[..2] {
        fork.extend(turn(*r, None, &fork_extra, Some("end_turn")));
    }
    fork.extend(turn(own[3], None, &none, Some("end_turn")));
    write(&root.join("proj/fork.jsonl"), &fork);

    if with_copies {
        let sub = root.join("proj/parent/subagents");
        let copy = |agent: &str, copied: &[Request], mine: Request| {
            let mut lines = Vec::new();
            for r in copied {
                lines.extend(turn(*r, Some(agent), &none, Some("end_turn")));
            }
            lines.extend(turn(mine, Some(agent), &none, Some("end_turn")));
            write(&sub.join(format!("agent-{agent}.jsonl")), &lines);
        };
        copy("acompact-1a2b3c", &parent[..3], own[0]);
        copy("aside_question-4d5e6f", &parent[..4], own[1]);
        copy("aprompt_suggestion-7a8b9c", &parent[3..4], own[2]);
    }
    let parent_usd: f64 = parent.iter().map(Request::dollars).sum();
    [
        parent_usd,
        own[0].dollars(),
        own[1].dollars(),
        own[2].dollars(),
        own[3].dollars(),
        parent[3].dollars() - stub.dollars(),
    ]
}

fn calibrate_bill(dir: &Path) -> Value {
    let out = ok(run(&["calibrate", dir.to_str().unwrap(), "--json"]));
    let v: Value = serde_json::from_str(&out).expect("calibrate --json");
    v["bill"]["summary"][0].clone()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn each_request_is_billed_once_and_the_copies_own_requests_go_to_the_parent() {
    let tmp = tempfile::tempdir().unwrap();
    let [parent, compaction, side, suggestion, fork, _] = folder(tmp.path(), true);
    let bill = calibrate_bill(tmp.path());
    // Each copy is checked by its own requests, as a session of its own.
    assert_eq!(bill["sessions"], 5, "{bill}");
    let total = bill["recorded_usd"].as_f64().unwrap();
    let want = parent + compaction + side + suggestion + fork;
    assert!(close(total, want), "recorded ${total} != ${want}");
    let copies = &bill["copies"];
    assert_eq!(copies["copies"], json!([1, 1, 1]), "{copies}");
    assert_eq!(copies["requests"], 3, "{copies}");
    // The fork's two, and the eight the copies resent.
    assert_eq!(copies["copied_requests"], 10, "{copies}");
    assert_eq!(copies["completed"], 1, "the parent's stub: {copies}");
    assert!(bill["predicted_usd"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_copies_are_listed_as_what_they_are_and_never_swept() {
    let tmp = tempfile::tempdir().unwrap();
    folder(tmp.path(), true);
    let dir = tmp.path().to_str().unwrap();
    let listed: Value =
        serde_json::from_str(&ok(run(&["transcript", "list", dir, "--json"]))).unwrap();
    let rows = listed.as_array().unwrap();
    assert_eq!(rows.len(), 5, "{listed}");
    let mut marks: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            r["copy_of"]
                .as_str()
                .map(|c| c.split(" of ").next().unwrap().to_string())
        })
        .collect();
    marks.sort();
    assert_eq!(marks, ["compaction", "prompt_suggestion", "side_question"]);
    for r in rows.iter().filter(|r| r["copy_of"].is_string()) {
        assert!(
            r["copy_of"].as_str().unwrap().ends_with("of cc-parent"),
            "{r}"
        );
    }
}

#[test]
fn a_sweep_of_parents_and_copies_is_the_parents_plus_the_copies_own_requests() {
    let with = tempfile::tempdir().unwrap();
    let without = tempfile::tempdir().unwrap();
    let [_, compaction, side, suggestion, _, completed] = folder(with.path(), true);
    folder(without.path(), false);
    let sweep = |dir: &Path| {
        let o = run(&[
            "sweep",
            dir.to_str().unwrap(),
            "--compact-at",
            "0.8",
            "--compact-to",
            "0.5",
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        sweep_configs(&o.stdout)
    };
    let (a, b) = (sweep(with.path()), sweep(without.path()));
    assert_eq!(a.len(), b.len());
    for x in &a {
        let y = b
            .iter()
            .find(|y| y["config_label"] == x["config_label"])
            .expect("the same configs");
        assert_eq!(x["sessions"], 2, "{}", x["config_label"]);
        assert_eq!(x["sessions"], y["sessions"]);
        assert_eq!(
            x["requests"], y["requests"],
            "the copies' requests are not replayed"
        );
        // The agent's own run paid for its compaction agent; under smith's
        // engine smith's summarizer stands in for it.
        let recorded = x["policy"] == "recorded";
        // And the parent's cut request is billed at the final usage its
        // copy holds, where the parent alone has only the stub.
        let side_usd = side + suggestion + completed + if recorded { compaction } else { 0.0 };
        // The prompts' price and the answers'.
        let paid = |c: &Value| c["price"].as_f64().unwrap() + c["price_output"].as_f64().unwrap();
        let (px, py) = (paid(x), paid(y));
        assert!(
            (px - py - side_usd).abs() < 1e-6,
            "{}: ${px} with the copies, ${py} without, side requests ${side_usd}",
            x["config_label"]
        );
    }
}

/// ccusage 20.0.24 (`ccusage session --json --offline`, installed from the
/// npm registry by hand, each source under `$CLAUDE_CONFIG_DIR/projects`),
/// its `totals.totalCost` per shared Claude Code source, measured
/// 2026-12-07. Per session it agrees to the cent as well wherever it names
/// sessions by their log (all but xiaomoziyi, whose renamed files it groups
/// by folder); no shared log keeps a stub whose final usage only a copy
/// holds, so nothing here differs from ccusage by one.
const CCUSAGE_TOTALS: [(&str, f64); 5] = [
    ("spotter", 51.7044178),
    ("eduardodmb", 185.522451),
    ("xiaomoziyi", 110.2545789),
    ("4thehalibit", 18.57233615),
    ("kaceybui", 13.6739962),
];

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_recorded_bill_of_every_shared_claude_code_source_is_ccusages_to_the_cent() {
    for (source, ccusage) in CCUSAGE_TOTALS {
        let dir = crate::common::shared_data(&format!("claude-code/{source}"));
        let bill = calibrate_bill(&dir);
        let ours = bill["recorded_usd"].as_f64().unwrap();
        println!(
            "{source}: recorded ${ours:.4}, ccusage ${ccusage:.4}, copies {}",
            bill["copies"]
        );
        assert!(
            (ours - ccusage).abs() < 0.005,
            "{source}: ${ours:.4} against ccusage's ${ccusage:.4}"
        );
    }
}
