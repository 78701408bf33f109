//! Every model at its provider's price, or none: hand-made Claude Code logs
//! of a DeepSeek, a GLM and an unknown model, imported and calibrated. The
//! first two are priced by their rows (whose sources `calibrate --json`
//! shows), the third is named once and left unpriced, and nothing is
//! priced as Sonnet.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::run_text;

/// A Claude Code log of two requests of `model` on a Friday: 2,000 tokens
/// of input at 08:00 UTC (DeepSeek's busy hours), then 500 of input and
/// 2,000 read from the cache at 10:01 (off-peak), answered in 100 and 200
/// tokens.
fn write_log(dir: &Path, name: &str, model: &str) {
    write_requests(
        dir,
        name,
        model,
        &[
            (
                "2026-11-20T08:00:05.000Z",
                json!({"input_tokens": 2000, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 0, "output_tokens": 100}),
            ),
            (
                "2026-11-20T10:01:05.000Z",
                json!({"input_tokens": 500, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 2000, "output_tokens": 200}),
            ),
        ],
    );
}

/// A Claude Code log of one session of `model`: a user line, then the
/// answer of each request, sent at its time with its usage.
fn write_requests(dir: &Path, name: &str, model: &str, requests: &[(&str, Value)]) {
    let session = format!("{name}-session");
    let mut lines = Vec::new();
    for (n, (t, usage)) in requests.iter().enumerate() {
        lines.push(
            json!({"type": "user", "uuid": format!("{name}-u{n}"), "sessionId": session,
               "timestamp": t, "message": {"role": "user", "content": "more"}}),
        );
        lines.push(
            json!({"type": "assistant", "uuid": format!("{name}-a{n}"), "sessionId": session,
               "timestamp": t, "requestId": format!("req_{name}_{n}"),
               "message": {"id": format!("msg_{name}_{n}"), "role": "assistant", "model": model,
                           "content": [{"type": "text", "text": "done"}], "usage": usage}}),
        );
    }
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(dir.join(format!("{name}.jsonl")), text.join("\n") + "\n").unwrap();
}

/// A project of three one-session logs (DeepSeek V4 Pro, GLM-4.7 and a
/// model in no table) imported under `dir`: the imported folder.
fn three_models(dir: &Path) -> std::path::PathBuf {
    let logs = dir.join("logs/-home-me-project");
    std::fs::create_dir_all(&logs).unwrap();
    write_log(&logs, "deepseek", "deepseek-v4-pro");
    write_log(&logs, "glm", "glm-4.7");
    write_log(&logs, "unknown", "mystery-coder-1");
    let out = dir.join("imported");
    let (_, err, code) = run_text(&[
        "import".to_string(),
        "claude-code".into(),
        dir.join("logs").display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    out
}

#[test]
fn every_surface_names_the_prices_the_sweep_used() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = three_models(tmp.path());
    let sweep = |out: &Path, more: &[&str]| {
        let mut args = vec![
            "sweep".to_string(),
            imported.display().to_string(),
            "--compact-at".into(),
            "0.7".into(),
            "--out".into(),
            out.display().to_string(),
        ];
        args.extend(more.iter().map(|a| a.to_string()));
        let (text, err, code) = run_text(&args);
        assert_eq!(code, Some(0), "{err}");
        text
    };
    let one = tmp.path().join("one");
    let report = tmp.path().join("report");
    let text = sweep(&one, &["--report", report.to_str().unwrap()]);
    let summary = |dir: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
    };
    let used = summary(&one)["prices"]["used"].clone();
    let lines: Vec<&str> = used["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    // One line per row the requests were billed at: DeepSeek's at the
    // rates of the hour each was sent (one in its busy hours, one after
    // them), GLM's, and the unpriced model; none at DeepSeek's base rates
    // or the flat default's Sonnet.
    assert_eq!(lines.len(), 4, "{used}");
    for line in [
        "DeepSeek V4 Pro (peak hours, from 2026-08-17) $1.32/M input, $1.32/M cache write, $0.044/M cache read (1 requests)",
        "DeepSeek V4 Pro (off-peak, from 2026-08-17) $0.66/M input, $0.66/M cache write, $0.022/M cache read (1 requests)",
    ] {
        assert!(lines.contains(&line), "{line} not in {used}");
    }
    assert!(!lines.iter().any(|l| l.contains("$0.435")), "{used}");
    let deepseek: Vec<(&str, f64, f64, u64)> = used["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["provider"] == "deepseek")
        .map(|m| {
            let f = |k: &str| m[k].as_f64().unwrap();
            let family = m["family"].as_str().unwrap();
            (
                family,
                f("input"),
                f("output"),
                m["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        deepseek,
        [
            ("DeepSeek V4 Pro (off-peak, from 2026-08-17)", 0.66, 1.98, 1),
            (
                "DeepSeek V4 Pro (peak hours, from 2026-08-17)",
                1.32,
                3.96,
                1
            ),
        ],
        "{used}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("GLM-4.6 / 4.7")),
        "{used}"
    );
    assert_eq!(used["unpriced"], json!(["mystery-coder-1"]));
    let unknown = used["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["family"] == "mystery-coder-1")
        .unwrap();
    assert_eq!(unknown["input"], Value::Null, "{unknown}");
    assert_eq!(unknown["requests"], 2, "{unknown}");
    // The terminal's header, --json and the report say the same lines.
    for line in &lines {
        assert!(text.contains(line), "{line} not in:\n{text}");
        let html = std::fs::read_to_string(report.join("index.html")).unwrap();
        let escaped = line.replace('&', "&amp;").replace('\'', "&#39;");
        assert!(html.contains(&format!("<li>{escaped}</li>")), "{line}");
    }
    assert!(!text.contains("Claude Sonnet"), "{text}");
    let json: Value = serde_json::from_str(&sweep(&tmp.path().join("json"), &["--json"])).unwrap();
    assert_eq!(json["prices"], used);
    // Shards merged say what one process said.
    let sharded = tmp.path().join("sharded");
    for k in 1..=2 {
        sweep(&sharded, &["--shard", &format!("{k}/2")]);
    }
    let (_, err, code) = run_text(&["merge".to_string(), sharded.display().to_string()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(summary(&sharded)["prices"]["used"], used);
}

#[test]
fn a_deepseek_and_a_glm_model_are_priced_by_their_rows_and_an_unknown_one_by_none() {
    let tmp = tempfile::tempdir().unwrap();
    let out = three_models(tmp.path());
    let (text, err, code) = run_text(&[
        "calibrate".to_string(),
        out.display().to_string(),
        "--json".into(),
        "--bill-requests".into(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    // The unknown model is named once, with its sessions and requests.
    let line = "warning: 1 model in no price table, so not priced: mystery-coder-1 (1 session, 2 requests)";
    assert_eq!(err.matches(line).count(), 1, "{err}");
    assert!(!err.contains("deepseek-v4-pro ("), "{err}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let bill = &v["bill"];
    // The rows' sources, as calibrate's price list shows them.
    let source = |family: &str| {
        bill["prices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["family"] == family)
            .unwrap_or_else(|| panic!("no row {family}"))["source"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(source("DeepSeek V4 Pro").contains("https://api-docs.deepseek.com/quick_start/pricing"));
    assert!(source("GLM-4.6 / 4.7").contains("https://docs.z.ai/guides/overview/pricing"));
    // Each session's recorded usage at its row's rates, by hand, as ccusage
    // 20.0.24 (`claude session --json --offline`) totals the same logs:
    // $0.003806 and $0.00238.
    let by_model = |model: &str| {
        bill["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["detail"][0]["model"] == model)
            .unwrap_or_else(|| panic!("no session of {model}: {}", bill["sessions"]))
            .clone()
    };
    let deepseek =
        (2000.0 * 1.32 + 100.0 * 3.96 + 500.0 * 0.66 + 2000.0 * 0.022 + 200.0 * 1.98) / 1e6;
    let glm = (2500.0 * 0.60 + 2000.0 * 0.11 + 300.0 * 2.20) / 1e6;
    for (model, families, usd, ccusage) in [
        (
            "deepseek-v4-pro",
            [
                "DeepSeek V4 Pro (peak hours, from 2026-08-17)",
                "DeepSeek V4 Pro (off-peak, from 2026-08-17)",
            ],
            deepseek,
            0.003806,
        ),
        ("glm-4.7", ["GLM-4.6 / 4.7", "GLM-4.6 / 4.7"], glm, 0.00238),
    ] {
        let s = by_model(model);
        let got = s["recorded_usd"].as_f64().unwrap();
        assert!((got - usd).abs() < 1e-12, "{model}: {got} vs {usd}");
        assert!(
            (got - ccusage).abs() < 1e-9,
            "{model}: {got} vs ccusage's {ccusage}"
        );
        assert_eq!(s["detail"][0]["family"], families[0]);
        assert_eq!(s["detail"][1]["family"], families[1]);
    }
    // The unknown model's tokens are counted, its dollars unknown: null,
    // not 0, not Sonnet's.
    let unknown = by_model("mystery-coder-1");
    assert!(unknown["recorded_usd"].is_null(), "{unknown}");
    assert_eq!(unknown["recorded"]["cache_read"], 2000);
    assert_eq!(unknown["recorded"]["input"], 2500);
    let summary = &bill["summary"][0];
    let used: Vec<&str> = summary["prices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["family"].as_str().unwrap())
        .collect();
    assert!(
        used.contains(&"DeepSeek V4 Pro (peak hours, from 2026-08-17)"),
        "{used:?}"
    );
    assert!(used.contains(&"GLM-4.6 / 4.7"), "{used:?}");
    assert!(used.contains(&"mystery-coder-1"), "{used:?}");
    assert!(!used.iter().any(|f| f.contains("Sonnet")), "{used:?}");
    assert!(!text.contains("Sonnet 4 / 4.5\",\"provider\":\"anthropic\",\"requests\""));
}

#[test]
fn a_sweep_leaves_an_unpriced_session_out_of_its_dollars_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = three_models(tmp.path());
    let out = tmp.path().join("sweep");
    let (text, err, code) = run_text(&[
        "sweep".to_string(),
        imported.display().to_string(),
        "--compact-at".into(),
        "0.7".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.matches("so not priced: mystery-coder-1 (1 session, 2 requests)")
            .count(),
        1,
        "{err}"
    );
    assert!(
        text.contains("mystery-coder-1: in no price table, not priced (2 requests)"),
        "{text}"
    );
    // The data files: the unknown model's session has no price (an empty
    // cell, null), the others theirs.
    let csv = std::fs::read_to_string(out.join("sessions.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (path, price) = (col("path"), col("price_total"));
    let mut priced = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        if cells[path].contains("unknown") {
            assert_eq!(cells[price], "", "{line}");
        } else {
            assert!(cells[price].parse::<f64>().unwrap() > 0.0, "{line}");
            priced += 1;
        }
    }
    assert!(priced >= 2, "{csv}");
    // The verdict in dollars is made on the two priced sessions and says
    // it left the third out.
    let verdict: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("verdict.json")).unwrap()).unwrap();
    let sentence = verdict["sentence"].as_str().unwrap();
    assert!(
        sentence.contains("Made on the priced sessions only: 1 session left out"),
        "{sentence}"
    );
    assert_eq!(verdict["sessions"], 2, "{verdict}");
}

#[test]
fn a_qwen_session_is_billed_request_by_request_at_the_tier_of_its_input() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs/-home-me-project");
    std::fs::create_dir_all(&logs).unwrap();
    // A router's prefix names the row; the second request's input (5,000
    // + 5,000 written + 30,000 read) is above Model Studio's first step.
    write_requests(
        &logs,
        "qwen",
        "qwen/qwen3-coder-plus",
        &[
            (
                "2026-11-20T08:00:05.000Z",
                json!({"input_tokens": 10000, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 0, "output_tokens": 100}),
            ),
            (
                "2026-11-20T08:01:05.000Z",
                json!({"input_tokens": 5000, "cache_creation_input_tokens": 5000,
                       "cache_read_input_tokens": 30000, "output_tokens": 200}),
            ),
        ],
    );
    let (text, err, code) = run_text(&[
        "calibrate".to_string(),
        tmp.path().join("logs").display().to_string(),
        "--json".into(),
        "--bill-requests".into(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("not priced"), "{err}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let session = &v["bill"]["sessions"][0];
    // By hand: 10,000 × $1 + 100 × $5 at the 0–32K rates, then 5,000 ×
    // $1.80 + 5,000 × $2.25 (an explicit cache write) + 30,000 × $0.18 (a
    // hit) + 200 × $9 at the 32K–128K ones.
    let first = (10_000.0 * 1.0 + 100.0 * 5.0) / 1e6;
    let second = (5_000.0 * 1.8 + 5_000.0 * 2.25 + 30_000.0 * 0.18 + 200.0 * 9.0) / 1e6;
    let detail = &session["detail"];
    for (d, usd, long) in [(&detail[0], first, false), (&detail[1], second, true)] {
        assert_eq!(d["family"], "Qwen3 Coder Plus", "{d}");
        assert_eq!(d["long_context"].as_bool().unwrap_or(false), long, "{d}");
        let got = d["recorded_usd"].as_f64().unwrap();
        assert!((got - usd).abs() < 1e-12, "{got} vs {usd}");
    }
    let total = session["recorded_usd"].as_f64().unwrap();
    assert!((total - 0.03795).abs() < 1e-12, "{total}");
    let row = v["bill"]["prices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["family"] == "Qwen3 Coder Plus")
        .unwrap();
    assert_eq!(row["tiers"].as_array().map(Vec::len), Some(3), "{row}");
    assert!(row["source"]
        .as_str()
        .unwrap()
        .contains("https://www.alibabacloud.com/help/en/model-studio/context-cache"));
}
