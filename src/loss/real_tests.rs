//! The loss measured on real compactions, on a hand-made Claude Code log
//! whose compactions, summary, re-fetches and costs are known
//! (`test_support::real_compactions`): the import, the per-compaction
//! account, the validation figures and the re-fetch model.

use std::path::Path;

use smith_calibrate::commands::real_compactions;
use smith_calibrate::cost::table::model_price;
use smith_calibrate::import::claude_code;
use smith_calibrate::loss::real::{self, RealCompaction, Tally};
use smith_calibrate::loss::refetch::{Model, ResultKind, MIN_CELL, MODEL};

use crate::test_support::real_compactions::*;

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
    pub(crate) type Imported = (
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
