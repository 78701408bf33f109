//! The loss measured on real compactions: a hand-made Claude Code log whose
//! compactions, summary, re-fetches and costs are known, held to each part
//! (import, the per-compaction account, the validation figures, the
//! re-fetch model and its price in a replay); then every compaction of the
//! shared Claude Code logs.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use smith_calibrate::commands::real_compactions;
use smith_calibrate::cost::model_price;
use smith_calibrate::import::claude_code;
use smith_calibrate::loss::real::{self, RealCompaction, Tally};
use smith_calibrate::loss::refetch::{Model, ResultKind, MIN_CELL, MODEL};
use smith_calibrate::sweep::figures::Metric;

const MODEL_ID: &str = "claude-opus-4-6";

/// A log under construction: uuids chained, a minute per line.
struct Log {
    lines: Vec<String>,
    n: usize,
}

impl Log {
    fn push(&mut self, mut v: Value) -> &mut Log {
        self.n += 1;
        let o = v.as_object_mut().unwrap();
        o.insert(
            "uuid".into(),
            json!(format!("00000000-0000-4000-8000-{:012x}", self.n)),
        );
        if self.n > 1 {
            o.insert(
                "parentUuid".into(),
                json!(format!("00000000-0000-4000-8000-{:012x}", self.n - 1)),
            );
        }
        o.insert("sessionId".into(), json!("sess"));
        o.insert("timestamp".into(), json!(time(self.n)));
        self.lines.push(v.to_string());
        self
    }

    fn user(&mut self, text: &str) -> &mut Log {
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}))
    }

    /// One response: `text` and, if given, one call.
    fn assistant(
        &mut self,
        id: &str,
        text: &str,
        call: Option<(&str, &str, Value)>,
        usage: [u64; 4],
    ) -> &mut Log {
        let mut content = vec![json!({"type": "text", "text": text})];
        if let Some((call_id, name, input)) = call {
            content.push(json!({"type": "tool_use", "id": call_id, "name": name, "input": input}));
        }
        self.push(json!({"type": "assistant", "message": {
            "model": MODEL_ID, "id": id, "role": "assistant", "content": content,
            "usage": {"input_tokens": usage[0], "cache_read_input_tokens": usage[1],
                      "cache_creation_input_tokens": usage[2], "output_tokens": usage[3]}}}))
    }

    fn result(&mut self, call_id: &str, text: &str) -> &mut Log {
        self.push(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": text}]}}),
        )
    }
}

fn time(n: usize) -> String {
    format!("2026-02-10T{:02}:{:02}:00.000Z", 10 + n / 60, n % 60)
}

const USAGE: [u64; 4] = [3, 1000, 200, 50];
const SUMMARY: &str = "Summary: the user asked to fix the failing test gamma_case_7. \
We read src/alpha_module.rs and ran the tests.";

/// The log of [`write_log`] imported into `dir/imports`, which it returns.
fn imported_log(dir: &Path) -> PathBuf {
    let log = write_log(dir);
    let out = dir.join("imports");
    common::ok(common::run(&[
        "import".as_ref(),
        "claude-code".as_ref(),
        log.parent().unwrap().as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    out
}

/// The hand-made session: four results before a full compaction (a file
/// read fetched again after it, a command whose token the summary keeps, a
/// read of a file edited before the compaction and read again after, the
/// edit), then a micro-compaction clearing the re-read.
fn write_log(dir: &Path) -> PathBuf {
    let mut log = Log {
        lines: Vec::new(),
        n: 0,
    };
    let alpha = "fn alpha_helper_fn() { beta_value_42 }";
    log.user("fix the bug")
        .assistant("r1", "reading", Some(("t1", "Read", json!({"file_path": "/w/src/alpha_module.rs"}))), USAGE)
        .result("t1", alpha)
        .assistant("r2", "testing", Some(("t2", "Bash", json!({"command": "cargo test --quiet"}))), USAGE)
        .result("t2", "test result: FAILED gamma_case_7")
        .assistant("r3", "reading", Some(("t3", "Read", json!({"file_path": "/w/src/delta_file.rs"}))), USAGE)
        .result("t3", "struct DeltaThing { epsilon_field_9: u32 }")
        .assistant("r4", "editing", Some(("t4", "Edit", json!({"file_path": "/w/src/delta_file.rs", "old_string": "u32", "new_string": "u64"}))), USAGE)
        .result("t4", "The file has been updated.")
        .push(json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                     "compactMetadata": {"trigger": "auto", "preTokens": 5000}}))
        .push(json!({"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": SUMMARY}}))
        // Fetched again: the same path, another range (message 9).
        .assistant("r5", "Looking at alpha_helper_fn again", Some(("t5", "Read", json!({"file_path": "/w/src/alpha_module.rs", "offset": 1}))), [5, 2000, 300, 60])
        .result("t5", alpha)
        // Not fetched again: the file was edited since the first read.
        .assistant("r6", "checking the edit", Some(("t6", "Read", json!({"file_path": "/w/src/delta_file.rs"}))), USAGE)
        .result("t6", "struct DeltaThing { epsilon_field_9: u64 }")
        .push(json!({"type": "system", "subtype": "microcompact_boundary", "content": "Context microcompacted",
                     "microcompactMetadata": {"trigger": "auto", "preTokens": 4000, "tokensSaved": 120,
                                              "compactedToolIds": ["t5"]}}))
        .assistant("r7", "gamma_case_7 is the failing case", None, USAGE)
        .assistant("r8", "it returns beta_value_42", None, USAGE);
    let project = dir.join("proj");
    let subagents = project.join("sess").join("subagents");
    fs::create_dir_all(&subagents).unwrap();
    // The compaction call: ends the line before the boundary (line 10).
    let call = json!({"type": "assistant", "agentId": "acompact-abc123", "sessionId": "sess", "uuid": "c1",
                      "timestamp": time(9),
                      "message": {"model": MODEL_ID, "id": "c", "role": "assistant",
                                  "content": [{"type": "text", "text": SUMMARY}]}});
    fs::write(
        subagents.join("agent-acompact-abc123.jsonl"),
        format!("{call}\n"),
    )
    .unwrap();
    // Another, hours earlier: not this compaction's.
    let old = json!({"type": "assistant", "agentId": "acompact-old000", "sessionId": "sess", "uuid": "c2",
                     "timestamp": "2026-02-09T01:00:00.000Z",
                     "message": {"model": MODEL_ID, "id": "d", "role": "assistant", "content": [{"type": "text", "text": "x"}]}});
    fs::write(
        subagents.join("agent-acompact-old000.jsonl"),
        format!("{old}\n"),
    )
    .unwrap();
    let path = project.join("sess.jsonl");
    fs::write(&path, log.lines.join("\n") + "\n").unwrap();
    path
}

fn measured(dir: &Path) -> (claude_code_session::Imported, Vec<RealCompaction>) {
    let path = write_log(dir);
    let s = claude_code::import_file(&path).unwrap();
    let messages: Vec<_> = s
        .messages
        .iter()
        .cloned()
        .map(std::sync::Arc::new)
        .collect();
    let file = s.file.clone();
    let rows = real::analyze(&messages, &s.file, "sess", "hand-made", &|i| {
        smith_calibrate::cost::bill::request_dollars(&file, i)
    });
    ((s, messages), rows)
}

mod claude_code_session {
    pub type Imported = (
        smith_calibrate::import::ImportedSession,
        Vec<std::sync::Arc<smith_calibrate::transcript::Message>>,
    );
}

#[test]
fn the_import_keeps_each_compaction_with_its_summary_what_it_cleared_and_its_call() {
    let tmp = tempfile::tempdir().unwrap();
    let ((s, _), _) = measured(tmp.path());
    let b = &s.file.compact_boundaries;
    assert_eq!(b.len(), 2, "{b:?}");
    assert!(b[0].is_full());
    assert_eq!(b[0].summary.as_deref(), Some(SUMMARY));
    assert_eq!(b[0].summary_bytes, Some(SUMMARY.len() as u64));
    assert_eq!(b[0].pre_tokens, Some(5000));
    assert_eq!(b[0].requests_before, 4);
    let file = b[0]
        .compaction_file
        .as_deref()
        .expect("the compaction call is linked");
    assert!(file.ends_with("agent-acompact-abc123.jsonl"), "{file}");
    assert_eq!(b[1].kind.as_deref(), Some("microcompact"));
    assert_eq!(b[1].tokens_saved, Some(120));
    assert_eq!(b[1].cleared_tool_ids, vec!["t5".to_string()]);
    assert_eq!(b[1].summary, None);
    assert_eq!(b[1].compaction_file, None);
    // Only the full compaction restarts the context: calibrate's points
    // and the bill see one.
    assert_eq!(s.file.full_compactions().count(), 1);
    // session.json keeps them, and a file without the new fields reads.
    let text = serde_json::to_string(&s.file).unwrap();
    let back: smith_calibrate::transcript::session_file::SessionFile =
        serde_json::from_str(&text).unwrap();
    assert_eq!(back.compact_boundaries, s.file.compact_boundaries);
    let old: smith_calibrate::transcript::session_file::CompactBoundary =
        serde_json::from_str(r#"{"message_index": 3, "requests_before": 1, "line": 4}"#).unwrap();
    assert!(old.is_full() && old.summary.is_none() && old.cleared_tool_ids.is_empty());
}

#[test]
fn each_real_compaction_says_what_it_removed_what_was_used_and_fetched_again_and_the_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let ((s, messages), rows) = measured(tmp.path());
    assert_eq!(rows.len(), 2);
    let full = &rows[0];
    assert_eq!(
        (full.kind.as_str(), full.number, full.request),
        ("full", 1, 4)
    );
    assert_eq!(full.results, 4);
    let by_target = |t: &str| full.removed.iter().find(|r| r.target.contains(t)).unwrap();
    let alpha = by_target("alpha_module.rs");
    let test = by_target("cargo test");
    let delta = full
        .removed
        .iter()
        .find(|r| r.target.contains("delta_file.rs") && r.tool == "read_file")
        .unwrap();
    let edit = full.removed.iter().find(|r| r.tool == "edit_file").unwrap();
    assert_eq!(alpha.kind, ResultKind::FileRead);
    assert_eq!(test.kind, ResultKind::Command);
    assert_eq!(edit.kind, ResultKind::Other);
    // The summary names the file read and keeps the test's token.
    assert!(alpha.mentioned && !test.mentioned && !delta.mentioned);
    assert_eq!(full.mentioned, 1);
    // alpha_helper_fn (r5) and beta_value_42 (r8) of the read, gamma_case_7
    // (r7) of the command; the summary holds the last only.
    assert_eq!((alpha.tokens_used_after, alpha.tokens_in_summary), (2, 0));
    assert_eq!((test.tokens_used_after, test.tokens_in_summary), (1, 1));
    assert_eq!(delta.tokens_used_after, 0);
    assert_eq!(
        (
            full.used_after,
            full.tokens_used_after,
            full.tokens_in_summary
        ),
        (2, 3, 1)
    );
    // needed again: both, under the stand-in; with the summary visible, not
    // the command's any more.
    assert!(alpha.needed_again && alpha.needed_again_with_summary);
    assert!(test.needed_again && !test.needed_again_with_summary);
    assert!(!delta.needed_again && !edit.needed_again);
    assert_eq!((full.flagged, full.flagged_with_summary), (2, 1));
    // still needed: current and used later; the edited file's read is stale.
    assert!(alpha.still_needed && test.still_needed && !delta.still_needed);
    assert!(delta.edited_since && !alpha.edited_since);
    // Fetched again: the read of the same path (r5, message 9: the
    // boundary came after 9 messages), not the read of the edited file.
    let r5 = 9;
    assert_eq!(
        messages[r5].content[0].text_lossy(),
        "Looking at alpha_helper_fn again"
    );
    assert_eq!(alpha.fetched_again_at, Some(r5));
    assert_eq!(delta.fetched_again_at, None);
    assert_eq!(test.fetched_again_at, None);
    assert_eq!(full.refetched, 1);
    // Its cost: r5's recorded request, its only call.
    let p = model_price(MODEL_ID).unwrap();
    let dollars =
        (5.0 * p.input + 2000.0 * p.cache_read + 300.0 * p.cache_write_5m + 60.0 * p.output) / 1e6;
    assert_eq!(full.refetch_requests, 1);
    assert_eq!(full.refetch_tokens, 5 + 2000 + 300 + 60);
    assert!(
        (full.refetch_dollars - dollars).abs() < 1e-12,
        "{} {dollars}",
        full.refetch_dollars
    );
    // The micro-compaction removed the re-read it names; r8 used its token.
    let micro = &rows[1];
    assert_eq!((micro.kind.as_str(), micro.results), ("microcompact", 1));
    assert!(micro.removed[0].needed_again && micro.removed[0].still_needed);
    assert_eq!(micro.refetched, 0);
    assert_eq!(s.file.compact_boundaries.len(), rows.len());
}

#[test]
fn validation_figures_count_flags_against_real_refetches() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, rows) = measured(tmp.path());
    let mut t = Tally::new("hand-made");
    for c in &rows {
        t.add(c);
    }
    assert_eq!((t.compactions, t.removed, t.refetched), (2, 5, 1));
    // Stand-in: alpha, the command and the re-read flagged; alpha fetched
    // again.
    let s = t.scores(t.standin);
    assert_eq!((s.flagged, s.hits), (3, 1));
    assert_eq!(s.recall, Some(1.0));
    assert_eq!(s.precision, Some(1.0 / 3.0));
    // No re-fetch among the unflagged: no lift to give.
    assert_eq!(s.lift, None);
    let w = t.scores(t.with_summary);
    assert_eq!((w.flagged, w.hits), (2, 1));
    assert_eq!(t.retention(), Some(1.0 / 3.0));
    // Lift where both sides have re-fetches.
    let mut u = t.clone();
    u.removed = 10;
    u.refetched = 3;
    u.standin = (4, 2);
    let s = u.scores(u.standin);
    assert_eq!(s.lift, Some((2.0 / 4.0) / (1.0 / 6.0)));
}

#[test]
fn the_refetch_model_is_fitted_per_kind_and_flag_and_falls_back_on_thin_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, rows) = measured(tmp.path());
    let m = Model::fit(real::observations(&rows), 2);
    let cell = |k: ResultKind, f: bool| {
        *m.cells
            .iter()
            .find(|c| c.kind == k && c.flagged == f)
            .unwrap()
    };
    // alpha (fetched again) and the re-read: file reads still needed.
    assert_eq!(
        (
            cell(ResultKind::FileRead, true).removed,
            cell(ResultKind::FileRead, true).refetched
        ),
        (2, 1)
    );
    assert_eq!(cell(ResultKind::FileRead, false).removed, 1);
    assert_eq!(cell(ResultKind::Command, true).removed, 1);
    assert_eq!(cell(ResultKind::Other, false).removed, 1);
    // Every cell is below MIN_CELL: all results pooled, 1 of 5.
    const { assert!(MIN_CELL > 2) };
    assert_eq!(m.probability(ResultKind::FileRead, true), 0.2);
    // The bundled model: a full cell's own rate.
    let c = MODEL.cells[1];
    assert!(c.kind == ResultKind::FileRead && c.flagged && c.removed >= MIN_CELL);
    assert_eq!(MODEL.probability(ResultKind::FileRead, true), c.rate());
    assert_eq!(
        MODEL.expected([(ResultKind::FileRead, true), (ResultKind::FileRead, true)]),
        2.0 * c.rate()
    );
    // The report over two sources predicts each from the other.
    let mut other = rows.clone();
    for r in &mut other {
        r.source = "copy".into();
    }
    let report = real_compactions::build(rows.iter().cloned().chain(other).collect());
    assert_eq!(report.validation.len(), 3);
    assert_eq!(report.validation[2].tally.source, real_compactions::POOLED);
    assert_eq!(report.validation[2].tally.removed, 10);
    assert_eq!(report.cross_source.len(), 2);
    let x = &report.cross_source[0];
    assert_eq!(x.actual, 1);
    assert!((x.expected - 1.0).abs() < 1e-9, "{x:?}");
    assert_eq!(report.model.compactions, 4);
}

#[test]
fn calibrate_prints_and_exports_the_real_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let out = imported_log(tmp.path());
    let text = common::ok(common::run(&["calibrate".as_ref(), out.as_os_str()]));
    assert!(text.contains("real compactions: 2"), "{text}");
    assert!(
        text.contains("the loss measure against the real re-fetches"),
        "{text}"
    );
    assert!(
        text.contains("re-fetch model refitted on these logs: 2 compactions"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&common::ok(common::run(&[
        "calibrate".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
    ])))
    .unwrap();
    let r = &json["real_compactions"];
    assert_eq!(r["compactions"].as_array().unwrap().len(), 2);
    assert_eq!(r["compactions"][0]["refetched"], 1);
    assert_eq!(r["validation"][0]["removed"], 5);
    assert_eq!(r["validation"][0]["standin"]["recall"], 1.0);
    assert_eq!(r["bundled_model"]["compactions"], MODEL.compactions);
}

#[test]
fn a_replay_prices_its_expected_refetches() {
    let tmp = tempfile::tempdir().unwrap();
    let out = imported_log(tmp.path());
    let session = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().is_some_and(|n| n == "cc-sess"))
        .unwrap();
    // Masking all but the last result loses the others.
    let json: Value = serde_json::from_str(&common::ok(common::run(&[
        "replay".as_ref(),
        session.as_os_str(),
        "--json".as_ref(),
        "--policy".as_ref(),
        "masking".as_ref(),
        "--mask-window".as_ref(),
        "1".as_ref(),
    ])))
    .unwrap();
    let lost = json["results_lost"].as_u64().unwrap();
    let still = json["still_needed"].as_u64().unwrap();
    let expected = json["refetch_expected"].as_f64().unwrap();
    assert!(lost > 0, "{json}");
    // Each lost result weighs between the model's least and largest rate.
    let rates: Vec<f64> = ResultKind::ALL
        .iter()
        .flat_map(|&k| [MODEL.probability(k, false), MODEL.probability(k, true)])
        .collect();
    let (lo, hi) = rates
        .iter()
        .fold((1.0f64, 0.0f64), |(a, b), &r| (a.min(r), b.max(r)));
    assert!(
        expected >= lo * lost as f64 - 1e-9 && expected <= hi * lost as f64 + 1e-9,
        "{json}"
    );
    assert!(still <= lost);
    let cost = &json["cost"];
    let total = cost["price_total"].as_f64().unwrap();
    let refetch = cost["price_refetch"].as_f64().unwrap();
    assert_eq!(
        cost["price_with_refetch"].as_f64().unwrap(),
        total + refetch
    );
    assert_eq!(refetch > 0.0, expected > 0.0, "{json}");
    // Both figures are sweep figures, rankable.
    for m in [Metric::RefetchExpected, Metric::PriceWithRefetch] {
        assert!(Metric::rankable().any(|r| r == m), "{m}");
    }
}

/// Every compaction of the shared Claude Code logs appears in `calibrate`,
/// full and micro, and every full one carries its summary.
#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn every_real_compaction_of_the_shared_logs_appears() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    let mut want_full = 0usize;
    let mut want_micro = 0usize;
    for source in ["spotter", "eduardodmb", "xiaomoziyi"] {
        let data = common::shared_data(&format!("claude-code/{source}"));
        for entry in walk(&data) {
            let text = fs::read_to_string(&entry).unwrap_or_default();
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                if v["type"] == "system" && v["isSidechain"] != true {
                    match v["subtype"].as_str() {
                        Some("compact_boundary") => want_full += 1,
                        Some("microcompact_boundary") => want_micro += 1,
                        _ => {}
                    }
                }
            }
        }
        let out = tmp.path().join(source);
        common::output(
            common::bin()
                .args(["import", "claude-code"])
                .arg(&data)
                .arg("--out")
                .arg(&out),
        );
        dirs.push(out);
    }
    let json: Value = serde_json::from_str(&common::ok(common::run(
        &std::iter::once("calibrate".into())
            .chain(dirs.iter().map(|d| d.as_os_str().to_owned()))
            .chain(std::iter::once("--json".into()))
            .collect::<Vec<std::ffi::OsString>>(),
    )))
    .unwrap();
    let rows = json["real_compactions"]["compactions"].as_array().unwrap();
    let full: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "full").collect();
    let micro = rows.iter().filter(|r| r["kind"] == "microcompact").count();
    assert_eq!(full.len(), want_full);
    assert_eq!(micro, want_micro);
    assert!(full.iter().filter(|r| r["summary_bytes"].is_u64()).count() >= want_full - 1);
    let v = &json["real_compactions"]["validation"];
    let pooled = v.as_array().unwrap().last().unwrap();
    assert_eq!(pooled["source"], real_compactions::POOLED);
    assert!(pooled["refetched"].as_u64().unwrap() > 0);
    // The improved measure predicts re-fetches on every source.
    for s in v.as_array().unwrap() {
        if s["refetched"].as_u64().unwrap() > 0 {
            assert!(s["still_needed"]["recall"].as_f64().unwrap() >= 0.8, "{s}");
        }
    }
    assert_eq!(
        json["real_compactions"]["cross_source"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
    out
}
