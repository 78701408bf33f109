//! The terminal table of a sweep: its ranked configs, the columns a
//! person reads first, the intervals, the prices each row stands on, and
//! the verdict under it.

use std::io::{self, Write};

use comfy_table::Cell;

use crate::format::{change, count, money, right, table, tokens};
use crate::recommend::Verdict;
use crate::sweep::aggregate::{ConfigSummary, Delta};
use crate::sweep::figures::{self, Metric};
use crate::sweep::job::{Outcome, Planned};
use crate::sweep::tables;

/// Rows of the terminal table when no top is given.
pub(crate) const DEFAULT_TOP: usize = 20;

/// The ranked configs on stdout as JSON: an object of the schema version,
/// the prices the sweep stood on and the configs' rows, the best `top`
/// (all without).
pub(crate) fn print_json(
    outcome: &Outcome<Verdict>,
    prices: &crate::sweep::prices_used::PricesUsed,
    top: Option<usize>,
) -> io::Result<()> {
    let summaries = &outcome.summaries[..];
    let order = tables::rank_order(summaries);
    let shown: Vec<usize> = order
        .iter()
        .copied()
        .take(top.unwrap_or(order.len()))
        .collect();
    let printed = serde_json::json!({
        "schema_version": crate::sweep::columns::SCHEMA_VERSION,
        "prices": prices,
        "tokens": outcome.tokens,
        "configs": tables::configs_table(summaries).rows_json(&shown),
    });
    let stdout = io::stdout();
    let mut out = stdout.lock();
    serde_json::to_writer_pretty(&mut out, &printed)
        .map_err(io::Error::from)
        .and_then(|()| writeln!(out))
}

/// The ranked configs on stdout as the terminal table (the best `top`,
/// [`DEFAULT_TOP`] without) under the `prices` the sweep stood on
/// ([`Planned::prices_used`]), then the cost model's note and the verdict
/// (none for a shard).
pub(crate) fn print(
    p: &Planned,
    outcome: &Outcome<Verdict>,
    prices: &str,
    top: Option<usize>,
) -> io::Result<()> {
    let (sweep, summaries) = (&outcome.sweep, &outcome.summaries[..]);
    let verdict = outcome.verdict.as_ref();
    let order = tables::rank_order(summaries);
    let top = top.unwrap_or(DEFAULT_TOP);
    let chosen = verdict.and_then(|v| v.chosen.as_ref()).map(|c| c.config);
    let heading = Heading {
        prices,
        sessions: sweep.sessions.len(),
        baseline: &p.baseline_source,
        calibration: outcome.calibration.clone(),
        tokens: outcome.tokens.describe(),
    };
    let table = terminal_table(summaries, &order, top, p.rank_by, &heading, chosen);
    let note = &outcome.cost_note;
    let decision = verdict.map_or(
        "No verdict: a shard decides nothing; `merge` decides on every shard's sessions."
            .to_string(),
        |v| format!("Verdict: {}", v.sentence),
    );
    let stdout = io::stdout();
    let mut out = crate::screen::Wrapping::new(stdout.lock());
    writeln!(out, "{table}")
        .and_then(|()| writeln!(out, "{note}"))
        .and_then(|()| writeln!(out, "{decision}"))
        .and_then(|()| out.flush())
}

/// A change as a signed whole number, `=` for none.
fn whole_change(d: Delta) -> String {
    if d.abs == 0.0 {
        "=".to_string()
    } else {
        format!("{:+.0}", d.abs)
    }
}

/// The interval of a config's change in `figure` against the baseline, as
/// percentages of the baseline's total (`base`), or in the figure's unit
/// when the baseline's total is 0.
pub(crate) fn interval_text(s: &ConfigSummary, figure: Metric, base: f64) -> String {
    let Some(iv) = s.interval else {
        return "-".to_string();
    };
    let iv = if figure == crate::sweep::figures::LOSS_MEASURE {
        iv.loss
    } else {
        iv.objective
    };
    iv.describe(base, figure.is_price())
}

/// What a column of the terminal table shows of its figure, and how.
#[derive(Clone, Copy)]
enum Shows {
    /// The total over sessions.
    Total(fn(f64) -> String),
    /// The change of the total against the baseline in percent, `=` for
    /// none and `new` for a change from zero.
    Percent,
    /// The change of the total against the baseline, a whole number.
    Whole,
}

/// The columns of the terminal table after the config's own: header, the
/// figure, what of it. A ranking figure none of them shows gets columns of
/// its own.
const COLUMNS: [(&str, Metric, Shows); 13] = [
    ("price", Metric::Price, Shows::Total(money)),
    ("Δ price", Metric::Price, Shows::Percent),
    ("tokens sent", Metric::TokensSent, Shows::Total(tokens)),
    ("cache write", Metric::CacheWrite, Shows::Total(tokens)),
    ("Δ write", Metric::CacheWrite, Shows::Percent),
    ("mangled", Metric::ResultsMangled, Shows::Total(count)),
    ("Δ mangled", Metric::ResultsMangled, Shows::Whole),
    ("still needed", figures::LOSS_MEASURE, Shows::Total(count)),
    ("refetched", Metric::Refetched, Shows::Total(count)),
    ("compactions", Metric::Compactions, Shows::Total(count)),
    ("summaries", Metric::Summaries, Shows::Total(count)),
    ("exhausted", Metric::Exhausted, Shows::Total(count)),
    ("peak", Metric::PeakTokens, Shows::Total(tokens)),
];

/// A cell of a column of [`COLUMNS`].
fn cell(s: &ConfigSummary, figure: Metric, shows: Shows) -> String {
    match shows {
        Shows::Total(f) => f(s.total(figure)),
        Shows::Percent => change(s.delta(figure).pct),
        Shows::Whole => whole_change(s.delta(figure)),
    }
}

/// The figures a terminal too narrow for every column keeps after the
/// ranking figure and its interval: the loss the verdict gates on, then
/// the price and the tool results it mangled.
const KEEP_FIRST: [&str; 6] = [
    "still needed",
    "price",
    "Δ price",
    "mangled",
    "Δ mangled",
    "refetched",
];

/// The terminal table's columns, the one to keep longest first: the rank
/// and the config, the ranking figure and its interval (`ci_at` and the
/// columns before it), then [`KEEP_FIRST`]; the rest follow in their order.
fn keep_first(header: &[String], ci_at: usize) -> Vec<usize> {
    let named = KEEP_FIRST
        .iter()
        .filter_map(|name| header.iter().position(|h| h == name));
    (0..=ci_at).chain(named).collect()
}

/// What the lines around the table say: the prices, the sessions and the
/// baseline.
struct Heading<'a> {
    prices: &'a str,
    sessions: usize,
    baseline: &'a str,
    /// The ratio and overhead the rows used where sessions chose them.
    calibration: Option<String>,
    /// What the token figures count.
    tokens: String,
}

/// The ranked configs: the best `top`, and the baseline wherever it ranks.
fn terminal_table(
    summaries: &[ConfigSummary],
    order: &[usize],
    top: usize,
    rank_by: Metric,
    heading: &Heading,
    chosen: Option<usize>,
) -> String {
    let Heading {
        prices,
        sessions,
        baseline,
        ref calibration,
        ref tokens,
    } = *heading;
    let extra = !COLUMNS.iter().any(|&(_, figure, _)| figure == rank_by);
    let mut header = vec![
        "#".to_string(),
        "policy".to_string(),
        "config".to_string(),
        String::new(),
    ];
    if extra {
        header.push(rank_by.to_string());
        header.push(format!("Δ {rank_by}"));
    }
    header.extend(COLUMNS.iter().map(|(h, _, _)| h.to_string()));
    // The interval beside the change it bounds: after the ranking figure's
    // own columns, or after price's.
    let ci_at = if extra || rank_by == Metric::Price {
        6
    } else {
        4
    };
    header.insert(ci_at, format!("Δ {rank_by} 95% CI"));
    let priority = keep_first(&header, ci_at);
    let mut table = table(header);
    table.priority(priority);
    // The marks (baseline, chosen, ★, tied) wrap before a figure is hidden.
    table.give(3, crate::screen::Give::Wrap);

    let mut rows: Vec<usize> = order.iter().copied().take(top).collect();
    let base = summaries.iter().position(|s| s.is_baseline);
    for extra in [base, chosen].into_iter().flatten() {
        if !rows.contains(&extra) {
            rows.push(extra);
        }
    }
    let hidden = summaries.len() - rows.len();
    let base_total = summaries
        .iter()
        .find(|s| s.is_baseline)
        .map_or(0.0, |b| b.total(rank_by));
    for i in rows {
        let s = &summaries[i];
        let interval = interval_text(s, rank_by, base_total);
        let mut marks = Vec::new();
        if s.is_baseline {
            marks.push("baseline");
        }
        if chosen == Some(i) {
            marks.push("chosen");
        }
        if s.pareto {
            marks.push("★");
        }
        if s.tied {
            marks.push("tied");
        }
        let mut cells = vec![
            right(s.rank),
            Cell::new(s.setup.policy),
            Cell::new(s.setup.knobs_label()),
            Cell::new(marks.join(" ")),
        ];
        if extra {
            let v = s.total(rank_by);
            let d = s.delta(rank_by);
            let v = if rank_by.is_price() {
                money(v)
            } else if rank_by.kind() == crate::sweep::figures::Kind::Expected {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            };
            cells.push(right(v));
            cells.push(right(change(d.pct)));
        }
        for &(_, figure, shows) in &COLUMNS {
            cells.push(right(cell(s, figure, shows)));
        }
        cells.insert(ci_at, right(interval));
        table.add_row(cells);
    }
    format!(
        "{sessions} sessions under {} configs, ranked by {rank_by} (lowest first); prices {prices}\n{table}\n{}",
        summaries.len(),
        legend(summaries, baseline, calibration.as_deref(), tokens, hidden),
    )
}

/// The lines under the table: what its marks, intervals and loss columns
/// mean, the baseline the changes are against, the calibration the rows
/// used, and how many configs `top` left out (`hidden`).
fn legend(
    summaries: &[ConfigSummary],
    baseline: &str,
    calibration: Option<&str>,
    tokens: &str,
    hidden: usize,
) -> String {
    let paragraph = crate::screen::paragraph;
    let ci = paragraph(&[
        &format!(
            "95% CI: paired bootstrap over sessions ({} resamples, seed {}); chosen: the verdict's config (below); tied: its",
            crate::sweep::bootstrap::DEFAULT_RESAMPLES,
            crate::sweep::bootstrap::DEFAULT_SEED,
        ),
        "interval overlaps the chosen config's (the first config's when the verdict keeps the baseline).",
    ]);
    let loss = engines_of(summaries) + &paragraph(&[
        "still needed: results shortened or removed while still current whose lost identifiers, paths or numbers a later",
        "message used (the loss the verdict gates on); refetched: results whose call was made again (a proxy: the rest of",
        "each session is what the agent that recorded it did next).",
    ]);
    format!(
        "★ on the Pareto front: no other config is both cheaper and mangles fewer tool results.\n\
         {ci}\n\
         Δ: change against the baseline, {baseline}. mangled: tool results cut to their head or stubbed.\n\
         {loss}\nUnits: {tokens}.{}{}",
        calibration.map_or(String::new(), |c| format!("\n{c}.")),
        if hidden > 0 {
            format!("\n{hidden} more configs not shown (--top N, or --out DIR for all)")
        } else {
            String::new()
        }
    )
}

/// The line naming the engines smith's rows ran (none without smith rows).
fn engines_of(summaries: &[ConfigSummary]) -> String {
    let mut engines: Vec<crate::engine::EngineVersion> = summaries
        .iter()
        .filter(|s| s.setup.policy == crate::policy::Policy::Smith)
        .map(|s| s.config.engine)
        .collect();
    engines.sort();
    engines.dedup();
    if engines.is_empty() {
        return String::new();
    }
    let named: Vec<String> = engines
        .iter()
        .map(|e| format!("{e} ({})", e.describe()))
        .collect();
    format!("smith's engine: {}.\n", named.join(" and "))
}
