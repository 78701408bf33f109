//! `smith-calibrate replay`: one session through the engine (or another
//! policy) under one config.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use comfy_table::Cell;
use serde_json::json;

use crate::calibrate::session::for_session;
use crate::cost::session::{Meter, Recorded};
use crate::engine::Stage;
use crate::format::{right, table};
use crate::loss;
use crate::policy::cold;
use crate::policy::Setup;
use crate::replay::learn::Learned;
use crate::replay::{self, trace, ModelCost, SessionFacts};
use crate::screen::Table;
use crate::transcript::Session;

use super::policy_args::PolicyArgs;
use super::{usage, EngineArgs};

/// Replay one recorded session through smith's compaction engine, or
/// through another agent's policy (--policy).
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  smith-calibrate replay ~/.smith/sessions/session-1712345678-abc123
  smith-calibrate replay fix-the-tests --max-tokens 64000 --compact-at 0.7
  smith-calibrate replay fix-the-tests --policy masking --mask-window 5
  smith-calibrate replay fix-the-tests --estimator o200k
  smith-calibrate replay transcript.jsonl --trace | jq -c 'select(.strategy != \"none\")'
  smith-calibrate replay transcript.jsonl --emit-history-at 40 > history.jsonl
  smith-calibrate replay imported/claude-code/abc --cache-ttl 1h --cold-compact-at 0.55 --json
  smith-calibrate replay fix-the-tests --price 5,6.25,0.5 --cache-min-tokens 4096

Besides what compaction did, the summary measures the loss that mattered:
results lost (distinct tool results shortened or removed), needed again (of
those, results a later assistant message needed a lost identifier, path or
number of 6+ characters from while it was visible nowhere else in its history)
and re-fetched (results whose call was made again). The session after each
compaction was recorded under the policy smith actually ran: a proxy, not a
counterfactual.

The summary also prices the replay per request (see docs/cost-model.md for the cost
model): price (cache reads and writes at the session's model's prices, or
--price; the cache expires after --cache-ttl where the records give times),
output, the summarizer's own requests, and price_total, their sum.")]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    pub(crate) session: super::SessionArg,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    // Boxed: fifteen optional flags would double the size of the command.
    #[command(flatten)]
    pub(crate) policy: Box<PolicyArgs>,
    #[command(flatten)]
    pub(crate) prices: super::cost_args::PriceArg,
    #[command(flatten)]
    pub(crate) cost: Box<super::cost_args::CostArgs>,
    /// One JSON object per request (docs/engine.md §6)
    #[arg(long, conflicts_with_all = ["json", "emit_history_at"])]
    pub(crate) trace: bool,
    /// The session summary as one JSON object, starting with its
    /// "schema_version"
    #[arg(long, conflicts_with = "emit_history_at")]
    pub(crate) json: bool,
    /// The working history at request K (0-based) after its compaction, as
    /// smith-format JSONL
    #[arg(long, value_name = "K")]
    pub(crate) emit_history_at: Option<usize>,
    /// Fail (exit 1) if any line of the transcript had to be skipped
    #[arg(long)]
    pub(crate) strict: bool,
    /// A compaction within N requests of the previous one counts as a
    /// repeated misfire, e.g. --thrash-window 5
    #[arg(long, value_name = "N", default_value_t = crate::replay::DEFAULT_THRASH_WINDOW,
          value_parser = crate::replay::misfire::parse_thrash_window)]
    pub(crate) thrash_window: usize,
}

pub(crate) fn run(args: ReplayArgs) -> Result<()> {
    let setup = args
        .engine
        .with_estimator(args.policy.setup(args.engine.config()?)?)?;
    // Never freed: the process ends with this command, and handing the
    // record's many small allocations back one by one would only delay
    // the exit.
    let session = std::mem::ManuallyDrop::new(args.session.load(args.strict)?);
    // The session's own ratio and overhead where the flags leave them.
    let chosen = for_session(&setup, args.engine.knobs.given(), &session);
    let setup = chosen.setup;
    let settings = args.cost.settings(args.prices.install());
    // smith's own session is priced by the provider and model it names.
    let (recorded, named) = Recorded::of_session_or_smith(&session);
    let own = setup.compactor_for(&session.messages, session.run.as_ref());
    let cold = cold::for_session(
        &setup,
        own.as_ref(),
        &session.messages,
        recorded.as_ref(),
        &settings,
    );
    let fixed: &dyn crate::engine::Compactor = match &cold {
        Some(c) => c,
        None => own.as_ref(),
    };
    let learned = chosen.ratios.map(|r| Learned::new(fixed, r));
    let engine: &dyn crate::engine::Compactor = match &learned {
        Some(l) => l,
        None => fixed,
    };
    if setup.knobs.cold_compact_at != 0.0 && cold.is_none() {
        crate::note!(
            "note: --cold-compact-at changes nothing here: the session's records give no times, so no request is known to find the cache cold"
        );
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());

    if let Some(k) = args.emit_history_at {
        let mut found = false;
        replay::replay_with(&session.messages, engine, |r, history, _| {
            if r.request != k {
                return true;
            }
            found = true;
            let mut buf = Vec::new();
            for m in history {
                m.write_json(&mut buf);
                buf.push(b'\n');
            }
            let _ = out.write_all(&buf);
            false
        });
        out.flush()?;
        if !found {
            let requests = replay::replay(&session.messages, engine).requests;
            return Err(usage(format!(
                "request {k} does not exist: the session has {requests} requests (0..{})",
                requests.saturating_sub(1)
            )));
        }
        return Ok(());
    }

    if args.trace {
        let mut failed = None;
        let sizes = replay::Sizes::of_session(&session);
        replay::replay_sized(&session.messages, engine, sizes, |r, _, _| {
            if let Err(e) = trace::write_trace_line(&mut out, r) {
                failed = Some(e);
                return false;
            }
            true
        });
        if let Some(e) = failed {
            return Err(e.into());
        }
        out.flush()?;
        return Ok(());
    }

    let mut meter = Meter::new(
        &session.messages,
        recorded.as_ref().or(named.as_ref()),
        *engine.budget(),
        setup.config.summary_tokens,
        &settings,
    );
    let mut facts = loss::replay_observed_concurrently(
        &session.messages,
        engine,
        replay::Sizes::of_session(&session),
        |r| meter.observe(r),
    );
    let refetch = facts.refetch;
    facts.priced = Some(meter.finish_with(&refetch));
    facts.set_thrash_window(args.thrash_window);
    facts.calibration = chosen.calibration;
    let prices =
        crate::cost::session::prices_named(recorded.as_ref().or(named.as_ref()), &settings);
    if args.json {
        let mut value = summary_json(&session, &chosen.shown, &facts);
        value["prices"] = prices.into();
        serde_json::to_writer_pretty(&mut out, &value)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}", summary_table(&session, &chosen.shown, &facts))?;
        writeln!(out, "prices: {prices}")?;
    }
    out.flush()?;
    Ok(())
}

/// The version of the layout of `replay --json`: what a reader checks
/// before it trusts a field to be there.
pub const JSON_SCHEMA_VERSION: u32 = 1;

/// The session summary as JSON: its schema version, the policy and config,
/// what was read, the sums and the loss measure.
pub(crate) fn summary_json(
    session: &Session,
    setup: &Setup,
    f: &SessionFacts,
) -> serde_json::Value {
    let budget = setup.budget();
    let stages: serde_json::Map<String, serde_json::Value> = Stage::ALL
        .iter()
        .map(|s| {
            (
                s.as_str().to_string(),
                json!({"fires": f.stage_fires[s.index()], "reclaimed": f.effects.reclaimed[s.index()]}),
            )
        })
        .collect();
    let refetch = json!({
        "expected": f.refetch.expected,
        "read_tokens": f.refetch.read_tokens,
        "write_tokens": f.refetch.write_tokens,
        "output_tokens": f.refetch.output_tokens,
    });
    let mut value = json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "session": session.label(),
        "path": PathBuf::from(&session.source.transcript),
        "policy": setup.policy,
        "config": setup.config,
        "policy_knobs": setup.knobs,
        "label": setup.label(),
        "trigger_tokens": budget.trigger_tokens,
        "target_tokens": budget.target_tokens,
        "messages": f.messages,
        "lines_skipped": session.log.skipped_count(),
        "requests": f.requests,
        "triggered": f.triggered,
        "compactions": f.compactions,
        "stages": stages,
        "results_mangled": f.effects.results_mangled(),
        "results_truncated": f.effects.results_truncated,
        "results_stubbed": f.effects.results_stubbed,
        "results_lost": f.results_lost,
        "needed_again": f.needed_again,
        "refetched": f.refetched,
        "still_needed": f.still_needed,
        "refetch_expected": f.refetch.expected,
        "refetch": refetch,
        "reads_superseded": f.effects.reads_superseded,
        "thinking_dropped": f.effects.thinking_dropped,
        "attachments_removed": f.effects.attachments_removed,
        "summaries": f.summaries,
        "drops": f.drops,
        "messages_summarized": f.effects.messages_summarized,
        "target_misses": f.target_misses,
        "exhausted": f.exhausted,
        "peak_tokens": f.peak_tokens,
        "peak_before": f.peak_before,
        "tokens_sent": f.tokens_sent,
        "cache_read": f.cache_read,
        "cache_write": f.cache_write,
        "misfire_grew": f.misfire_grew,
        "misfire_repeated": f.misfire_repeated,
        "misfire_resummarized": f.misfire_resummarized,
        "thrash_window": f.window(),
        "misfires": f.counted_misfires().collect::<Vec<_>>(),
        "cost": cost_json(f),
    });
    if let Some(map) = value.as_object_mut() {
        map.insert("estimator".into(), json!(setup.estimator));
    }
    // Only under an engine that can refuse or discard a summary, so 0.4's
    // summary stays as it was.
    if let (true, Some(map)) = (setup.config.engine.fixes_118(), value.as_object_mut()) {
        map.insert("summaries_refused".into(), json!(f.summaries_refused));
        map.insert("summaries_discarded".into(), json!(f.summaries_discarded));
    }
    // Only where the session chose the ratio or overhead, for the same
    // reason.
    if let (Some(c), Some(map)) = (&f.calibration, value.as_object_mut()) {
        map.insert("ratio_mode".into(), json!(c.ratio_mode));
        map.insert("calibration".into(), json!(c));
    }
    value
}

/// The cost model's figures of a replay, or null where it was not priced.
fn cost_json(f: &SessionFacts) -> serde_json::Value {
    f.priced.map_or(serde_json::Value::Null, |m| {
        json!({
            "price": m.price,
            "price_uncached": m.price_uncached,
            "output_tokens": m.output_tokens,
            "price_output": m.price_output,
            "price_summarizer": m.price_summarizer,
            "price_total": m.price + m.price_output + m.price_summarizer,
            "price_refetch": m.price_refetch,
            "price_with_refetch": m.price + m.price_output + m.price_summarizer + m.price_refetch,
            "expired_requests": m.expired,
            "cache_write_1h": m.cache_write_1h,
            "ttl_applied": m.ttl_applied,
        })
    })
}

/// The readable summary: the session and its budget, the figures, and
/// what each stage did.
fn summary_table(session: &Session, setup: &Setup, f: &SessionFacts) -> String {
    format!(
        "{}\n{}\n{}{}",
        head_table(session, setup, f),
        totals_table(f),
        stages_table(f),
        crate::replay::misfire::lines(f)
    )
}

fn head_table(session: &Session, setup: &Setup, f: &SessionFacts) -> Table {
    let b = &setup.budget();
    let mut head = table(vec![
        "session",
        "policy",
        "config",
        "trigger",
        "target",
        "messages",
        "bad lines",
    ]);
    head.add_row(vec![
        session.label(),
        setup.policy.to_string(),
        setup.knobs_label(),
        b.trigger_tokens.to_string(),
        b.target_tokens.to_string(),
        f.messages.to_string(),
        session.log.skipped_count().to_string(),
    ]);
    head
}

/// The figures, the calibration first and the price last when there are.
fn totals_table(f: &SessionFacts) -> Table {
    let mut rows = figure_rows(f);
    if let Some(c) = &f.calibration {
        rows.insert(0, ("ratio and overhead", c.describe()));
    }
    if let Some(m) = &f.priced {
        rows.extend(price_rows(f, m));
    }
    let mut totals = table(vec!["figure", "value"]);
    for (k, v) in rows {
        totals.add_row(vec![Cell::new(k), right(v)]);
    }
    totals
}

fn figure_rows(f: &SessionFacts) -> Vec<(&'static str, String)> {
    vec![
        ("requests", f.requests.to_string()),
        ("over the trigger", f.triggered.to_string()),
        ("compactions", f.compactions.to_string()),
        (
            "results mangled (head kept / stubbed)",
            format!(
                "{} ({} / {})",
                f.effects.results_mangled(),
                f.effects.results_truncated,
                f.effects.results_stubbed
            ),
        ),
        (
            "results lost / needed again / re-fetched",
            format!("{} / {} / {}", f.results_lost, f.needed_again, f.refetched),
        ),
        ("results still needed", f.still_needed.to_string()),
        ("reads superseded", f.effects.reads_superseded.to_string()),
        (
            "thinking blocks dropped",
            f.effects.thinking_dropped.to_string(),
        ),
        (
            "attachments removed",
            f.effects.attachments_removed.to_string(),
        ),
        (
            "summaries / drops",
            format!("{} / {}", f.summaries, f.drops),
        ),
        (
            "messages summarized away",
            f.effects.messages_summarized.to_string(),
        ),
        ("target misses", f.target_misses.to_string()),
        (
            "misfires: grew / repeated / resummarized",
            format!(
                "{} / {} / {}",
                f.misfire_grew, f.misfire_repeated, f.misfire_resummarized
            ),
        ),
        ("exhausted requests", f.exhausted.to_string()),
        ("peak tokens sent", f.peak_tokens.to_string()),
        ("total tokens sent", f.tokens_sent.to_string()),
        (
            "cache read / write tokens",
            format!("{} / {}", f.cache_read, f.cache_write),
        ),
    ]
}

fn price_rows(f: &SessionFacts, m: &ModelCost) -> [(&'static str, String); 5] {
    [
        ("price: cache reads + writes", format!("${:.4}", m.price)),
        (
            "output / summarizer",
            format!("${:.4} / ${:.4}", m.price_output, m.price_summarizer),
        ),
        (
            "price_total",
            format!("${:.4}", m.price + m.price_output + m.price_summarizer),
        ),
        (
            "re-fetches expected / price_with_refetch",
            format!(
                "{:.2} / ${:.4}",
                f.refetch.expected,
                m.price + m.price_output + m.price_summarizer + m.price_refetch
            ),
        ),
        (
            "cache expired (requests)",
            if m.ttl_applied {
                m.expired.to_string()
            } else {
                "not applied: no timestamps".to_string()
            },
        ),
    ]
}

fn stages_table(f: &SessionFacts) -> Table {
    let mut stages = table(vec!["stage", "fired in requests", "tokens reclaimed"]);
    for s in Stage::ALL {
        stages.add_row(vec![
            Cell::new(s.as_str()),
            right(f.stage_fires[s.index()]),
            right(f.effects.reclaimed[s.index()]),
        ]);
    }
    stages
}
