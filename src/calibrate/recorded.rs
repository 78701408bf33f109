//! The `recorded` replay held against each log: the agent's own run
//! (`crate::policy::recorded`), counted with the tokens its log measured
//! (`crate::transcript::measured`) and priced by the sweep's own
//! [`Meter`], against the prompt tokens and the bill the log recorded.
//!
//! This is the check of the figure every config is ranked by: the sweep
//! prices a config's replay with the same meter, so a config's saving is
//! measured from a run whose price is held here against a bill. Beside it,
//! after each of the agent's compactions, the attribution's own check (the
//! kept messages and the summary against the next recorded prompt), which
//! the attribution did not use.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use crate::cost::bill;
use crate::cost::bill::unlogged::AccountView;
use crate::cost::session::{Meter, Recorded, Settings};
use crate::engine::Config;
use crate::policy::{Knobs, Policy, Setup};
use crate::replay::{self, Sizes};
use crate::stats::median_of;
use crate::transcript::measured::CompactionCheck;
use crate::transcript::session_file::SessionFile;

/// One session's recorded replay against its log.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SessionReplay {
    pub(crate) session: String,
    /// Which of the paths given it was read under (else its format).
    pub(crate) source: String,
    pub(crate) format: String,
    /// Requests with usage.
    pub(crate) requests: usize,
    /// Prompt tokens the log recorded over those requests, and what the
    /// recorded replay sent at them.
    pub(crate) recorded_tokens: u64,
    pub(crate) replayed_tokens: u64,
    pub(crate) token_error: f64,
    /// Dollars: the recorded usage at the price table's rows (what
    /// ccusage reports), and the replay's price by the sweep's meter
    /// (its requests' input side and their output).
    pub(crate) recorded_usd: f64,
    pub(crate) replayed_usd: f64,
    pub(crate) price_error: f64,
    /// Why the transcript does not hold the whole context the agent sent
    /// (its tokens are then not held to the others' bar); `None` when it
    /// does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) incomplete: Option<String>,
    /// After each of the agent's compactions: the attribution's check.
    pub(crate) compaction_checks: Vec<CompactionCheck>,
}

/// Per source: the sessions' errors summed up.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SourceReplay {
    pub(crate) source: String,
    pub(crate) sessions: usize,
    /// Sessions whose transcript holds their whole context, and over them
    /// the median and largest |token error|.
    pub(crate) whole: usize,
    pub(crate) token_error_median: Option<f64>,
    pub(crate) token_error_max: Option<f64>,
    /// Median |price error| per session, and the pooled one (total
    /// replayed against total recorded).
    pub(crate) price_error_median: Option<f64>,
    pub(crate) price_error_pooled: f64,
    /// The agent's compactions checked, the median |error| and the worst
    /// (signed).
    pub(crate) compactions: usize,
    pub(crate) compaction_error_median: Option<f64>,
    pub(crate) compaction_error_worst: Option<f64>,
}

/// The recorded replay of every imported session.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ReplayCheck {
    pub(crate) sources: Vec<SourceReplay>,
    pub(crate) sessions: Vec<SessionReplay>,
}

/// The bill check and the recorded replay of the same sessions: one run,
/// one price. Each request's prediction in `bill` is what the replay's
/// meter charged it.
#[derive(Clone, Debug)]
pub(crate) struct Checked {
    pub(crate) bill: Vec<bill::SessionCheck>,
    pub(crate) replay: ReplayCheck,
}

/// Replays every session of `inputs` that carries usage as its agent ran
/// it, priced under `settings` by the meter on the view of the account
/// [`bill::read`] gives it (`views`, aligned with `inputs`: the log's
/// reading and the view; `None` without usage), and holds each request
/// against its log: the bill check. `window` is a session's context
/// window; `source_of` names the source the input at a position was read
/// under.
pub(crate) fn check(
    inputs: &[bill::Input],
    views: Vec<Option<(bill::SessionCheck, AccountView)>>,
    settings: &Settings,
    window: &(dyn Fn(&SessionFile) -> u64 + Sync),
    source_of: &(dyn Fn(usize) -> String + Sync),
) -> Checked {
    let jobs: Vec<(usize, (bill::SessionCheck, AccountView))> = views
        .into_iter()
        .enumerate()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();
    let done: Vec<(bill::SessionCheck, Option<SessionReplay>)> = jobs
        .into_par_iter()
        .map(|(k, (log, view))| {
            let input = &inputs[k];
            match one(
                input,
                Arc::new(view),
                settings,
                window(input.file),
                source_of(k),
            ) {
                Some((mut row, items)) => {
                    let priced = log.priced(&items);
                    // The check's figures are the replay's, and its record
                    // the replay's record: one price, held to one bill.
                    row.recorded_usd = priced.recorded_usd;
                    row.price_error = priced.error;
                    (priced, Some(row))
                }
                None => (log.priced(&[]), None),
            }
        })
        .collect();
    let (bill, rows): (Vec<bill::SessionCheck>, Vec<Option<SessionReplay>>) =
        done.into_iter().unzip();
    let rows: Vec<SessionReplay> = rows.into_iter().flatten().collect();
    Checked {
        bill,
        replay: ReplayCheck {
            sources: by_source(&rows),
            sessions: rows,
        },
    }
}

/// [`check`] of every input, read under `settings` ([`bill::read`]).
pub(crate) fn check_all(
    inputs: &[bill::Input],
    settings: &Settings,
    window: &(dyn Fn(&SessionFile) -> u64 + Sync),
    source_of: &(dyn Fn(usize) -> String + Sync),
) -> Checked {
    let views = bill::read(inputs, &settings.bill());
    check(inputs, views, settings, window, source_of)
}

/// The recorded replay of one input on `account`, with each request as
/// the meter priced it; `None` without measured tokens.
fn one(
    input: &bill::Input,
    account: Arc<AccountView>,
    settings: &Settings,
    max_tokens: u64,
    source: String,
) -> Option<(SessionReplay, Vec<bill::Metered>)> {
    let file = input.file;
    let measured = input.measured?;
    let messages = input.messages;
    let config = Config {
        max_tokens,
        ..Config::default()
    };
    let setup = Setup::new(Policy::Recorded, config, Knobs::default());
    let engine = setup.compactor_for(messages, input.run);
    // The copies are checked as sessions of their own here: their requests
    // are not their parent's too.
    let recorded = Recorded::from_file(file, messages)
        .without_side_requests()
        .with_account(Some(account));
    let mut meter = Meter::new(messages, Some(&recorded), *engine.budget(), 0, settings)
        .without_summarizer()
        .itemized();
    // The requests the log has usage of, by their answering message.
    let with_usage: BTreeMap<usize, u64> = file
        .requests
        .iter()
        .filter(|r| r.prompt_tokens() > 0)
        .map(|r| (r.message_index, r.prompt_tokens()))
        .collect();
    let mut replayed_tokens = 0u64;
    replay::replay_sized(
        messages,
        engine.as_ref(),
        Some(Sizes::of(measured)),
        |r, _, _| {
            meter.observe(r);
            if with_usage.contains_key(&r.message_index) {
                replayed_tokens += r.real_after.max(0) as u64;
            }
            true
        },
    );
    let (_, items) = meter.finish_itemized();
    // The requests the log has usage of are the check's: one price for both.
    let items: Vec<bill::Metered> = items
        .into_iter()
        .filter(|m| with_usage.contains_key(&m.message_index))
        .collect();
    let recorded_tokens: u64 = with_usage.values().sum();
    let recorded_usd = bill::own_recorded_dollars(file);
    let replayed_usd: f64 = items.iter().map(|m| m.usd).sum();
    let incomplete = (measured.short_requests > 0).then(|| {
        format!(
            "{} requests sent {} tokens fewer than was measured of them: the log's context and the transcript differ there",
            measured.short_requests, measured.short_tokens
        )
    });
    let row = SessionReplay {
        session: input.label.clone(),
        source,
        format: file.source.format.clone(),
        requests: with_usage.len(),
        recorded_tokens,
        replayed_tokens,
        token_error: bill::relative(replayed_tokens as f64, recorded_tokens as f64),
        recorded_usd,
        replayed_usd,
        price_error: bill::relative(replayed_usd, recorded_usd),
        incomplete,
        compaction_checks: measured.checks.clone(),
    };
    Some((row, items))
}

/// The magnitudes of `values`.
fn sizes_of(values: impl Iterator<Item = f64>) -> Vec<f64> {
    values.map(f64::abs).collect()
}

fn by_source(rows: &[SessionReplay]) -> Vec<SourceReplay> {
    let mut groups: BTreeMap<&str, Vec<&SessionReplay>> = BTreeMap::new();
    for r in rows {
        groups.entry(&r.source).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|(source, rs)| {
            let whole: Vec<&&SessionReplay> =
                rs.iter().filter(|r| r.incomplete.is_none()).collect();
            let checks: Vec<f64> = rs
                .iter()
                .flat_map(|r| r.compaction_checks.iter().map(CompactionCheck::error))
                .collect();
            let (recorded, replayed) = rs.iter().fold((0.0, 0.0), |(a, b), r| {
                (a + r.recorded_usd, b + r.replayed_usd)
            });
            SourceReplay {
                source: source.to_string(),
                sessions: rs.len(),
                whole: whole.len(),
                token_error_median: median_of(&mut sizes_of(whole.iter().map(|r| r.token_error))),
                token_error_max: whole.iter().map(|r| r.token_error.abs()).reduce(f64::max),
                price_error_median: median_of(&mut sizes_of(rs.iter().map(|r| r.price_error))),
                price_error_pooled: bill::relative(replayed, recorded),
                compactions: checks.len(),
                compaction_error_median: median_of(&mut sizes_of(checks.iter().copied())),
                compaction_error_worst: checks.iter().copied().reduce(|a, b| {
                    if b.abs() > a.abs() {
                        b
                    } else {
                        a
                    }
                }),
            }
        })
        .collect()
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{:.2}%", 100.0 * v))
}

/// The check as text: per source, then the sessions whose transcript
/// lacks part of their context, each with its reason.
pub(crate) fn write_text(out: &mut dyn Write, c: &ReplayCheck) -> io::Result<()> {
    if c.sessions.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "recorded replay: each session replayed as its agent ran it (`--policy recorded`), counted with the tokens its log measured and priced by the sweep's meter, against the log"
    )?;
    let mut t = crate::format::table(vec![
        "source",
        "sessions",
        "whole",
        "tokens: median |err|",
        "max",
        "price: median |err|",
        "pooled",
        "compactions",
        "check: median |err|",
        "worst",
    ]);
    for s in &c.sources {
        t.add_row(vec![
            s.source.clone(),
            s.sessions.to_string(),
            s.whole.to_string(),
            pct(s.token_error_median),
            pct(s.token_error_max),
            pct(s.price_error_median),
            format!("{:+.2}%", 100.0 * s.price_error_pooled),
            s.compactions.to_string(),
            pct(s.compaction_error_median),
            s.compaction_error_worst
                .map_or_else(|| "-".to_string(), |v| format!("{:+.1}%", 100.0 * v)),
        ]);
    }
    writeln!(out, "{t}")?;
    for s in c.sessions.iter().filter(|s| s.incomplete.is_some()) {
        writeln!(
            out,
            "  {} ({}): tokens {:+.2}%; {}",
            s.session,
            s.source,
            100.0 * s.token_error,
            s.incomplete.as_deref().unwrap_or_default()
        )?;
    }
    writeln!(
        out,
        "the check after a compaction: the messages the agent kept (as measured before it), its summary and the messages since (at the session's density) and the fixed prompt, against the next recorded prompt; per compaction in --json (`recorded_replay.sessions[].compaction_checks`)\n"
    )
}
