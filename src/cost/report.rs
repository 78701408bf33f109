//! The bill check as `calibrate` prints it: per format, the error of the
//! price against the recorded usage, the misses by cause, then per session.

use std::io::{self, Write};

use comfy_table::Cell;

use super::bill::unlogged::{Tally, GAP_BUCKETS};
use super::bill::{
    Billed, Cause, PriceUsed, SessionCheck, Summary, UnloggedFit, Worst, LONG_SESSION,
};
use crate::format::{money, or_none, percent, right, signed_percent, table, whole};
use crate::screen::Table;

fn worst(w: &Option<Worst>) -> String {
    match w {
        Some(w) => format!(
            "{} ({} requests): {}",
            w.session,
            w.requests,
            signed_percent(w.error)
        ),
        None => "-".into(),
    }
}

/// Writes the summaries, then one row per session (and per request when
/// `per_request`).
pub(crate) fn write_text(
    out: &mut dyn Write,
    summaries: &[Summary],
    checks: &[SessionCheck],
    per_request: bool,
) -> io::Result<()> {
    writeln!(
        out,
        "bill check: each request as the recorded replay above sent it, priced by the sweep's meter (cache lifetime, tiers, minimum cacheable prefix, the account's cache, output), vs the recorded usage at the same prices"
    )?;
    for s in summaries {
        write_summary(out, s)?;
    }
    writeln!(out, "{}", sessions_table(checks))?;
    writeln!(
        out,
        "* {LONG_SESSION} requests or more. A short session's first request can read a prefix another session cached (the agent's fixed prompt): the check sees it only where that session is among those checked, which is most of the error of short sessions."
    )?;
    if per_request {
        for c in checks {
            writeln!(out, "\n{}", c.session)?;
            writeln!(out, "{}", requests_table(c))?;
        }
    }
    Ok(())
}

/// One format: what was checked at which prices, the error figures, the
/// tokens, the misses by cause and the recorded bill.
fn write_summary(out: &mut dyn Write, s: &Summary) -> io::Result<()> {
    writeln!(
        out,
        "{}: {} sessions, {} requests, timestamps applied the cache lifetime in {} sessions; {} requests read the fixed prompt another session had cached",
        s.format, s.sessions, s.requests, s.ttl_applied, s.shared_reads
    )?;
    if let Some(line) = s.copies.describe() {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "prices used ($ per million tokens, from src/cost/table/mod.rs):"
    )?;
    for p in &s.prices {
        writeln!(out, "{}", price_line(p))?;
    }
    writeln!(out, "{}", figures_table(s))?;
    if let Some(tail) = &s.short_tail {
        writeln!(out, "{}", tail.describe())?;
    }
    for u in &s.unlogged {
        writeln!(out, "{}", unlogged_line(u))?;
    }
    writeln!(out, "{}", tokens_table(s))?;
    if s.miss_cache_write > 0 {
        writeln!(
            out,
            "recorded cache misses (read < half the previous prompt), by cause: {} of their cache-write tokens attributed ({} without harness rewrites)",
            percent(s.attributed),
            percent(s.attributed_without_rewrite)
        )?;
        writeln!(out, "{}", misses_table(s))?;
    }
    if let Some(b) = &s.billed {
        writeln!(out, "{}", billed_line(b))?;
    }
    writeln!(out)
}

/// The account's cache beyond the log, as one kind of session shows it.
pub(crate) fn unlogged_line(u: &UnloggedFit) -> String {
    let share = |t: Tally| {
        if t.seen == 0 {
            return "none seen".to_string();
        }
        format!(
            "{} of {} requests, {} of the tokens{}",
            t.events,
            t.seen,
            percent(t.fraction()),
            if t.share().is_some() {
                ""
            } else {
                " (too few to use)"
            }
        )
    };
    let kind = u.kind.as_str();
    let [under, within, beyond] = u.fit.evicted;
    format!(
        "the account's cache beyond the log, {kind} sessions (each session priced by what the others show): the fixed prompt found cached when no logged session kept it warm: {}; warm prefixes lost early, idle under {} s: {}; {}–{} s: {}; longer: {}",
        share(u.fit.warm_elsewhere),
        GAP_BUCKETS[0],
        share(under),
        GAP_BUCKETS[0],
        GAP_BUCKETS[1],
        share(within),
        share(beyond),
    )
}

fn price_line(p: &PriceUsed) -> String {
    if !p.input.is_finite() {
        return format!(
            "  {} ({}): in no price table, not priced; {} requests, their dollars unknown",
            p.family, p.provider, p.requests
        );
    }
    format!(
        "  {} ({}): ${} input, ${} cache write 5m, ${} cache write 1h, ${} cache read, ${} output; {} requests{}{}",
        p.family,
        p.provider,
        p.input,
        p.cache_write_5m,
        p.cache_write_1h,
        p.cache_read,
        p.output,
        p.requests,
        if p.long_context_requests > 0 {
            format!(
                ", {} of them above the long-context threshold at its higher rates",
                p.long_context_requests
            )
        } else {
            String::new()
        },
        if p.nearest_for.is_empty() {
            String::new()
        } else {
            format!(
                "; for {}, which the table does not name",
                p.nearest_for.join(", ")
            )
        },
    )
}

fn figures_table(s: &Summary) -> Table {
    let rows: Vec<(&str, String)> = vec![
        ("recorded usage priced", money(s.recorded_usd)),
        ("predicted", money(s.predicted_usd)),
        ("error on the total", signed_percent(s.total_error)),
        ("median |error| per session", percent(s.median_error)),
        ("p95 |error| per session", percent(s.p95_error)),
        ("worst session", worst(&s.worst)),
        ("worst session of ≥50 requests", worst(&s.worst_long)),
        (
            "sessions of ≥50 requests within 15%",
            format!("{} of {}", s.long_within_bound, s.long_sessions),
        ),
        (
            "median |error|, sessions under 50 requests",
            or_none(s.median_error_short, percent),
        ),
        (
            "p95 |error|, sessions under 50 requests",
            or_none(s.p95_error_short, percent),
        ),
    ];
    let mut t = table(vec!["figure", "value"]);
    for (k, v) in rows {
        t.add_row(vec![Cell::new(k), right(v)]);
    }
    t
}

fn tokens_table(s: &Summary) -> Table {
    let mut t = table(vec![
        "tokens",
        "input",
        "cache read",
        "cache write 5m",
        "cache write 1h",
        "output",
    ]);
    for (name, k) in [("recorded", &s.recorded), ("predicted", &s.predicted)] {
        t.add_row(vec![
            Cell::new(name),
            right(whole(k.input)),
            right(whole(k.cache_read)),
            right(whole(k.cache_write_5m)),
            right(whole(k.cache_write_1h)),
            right(whole(k.output)),
        ]);
    }
    t
}

fn misses_table(s: &Summary) -> Table {
    let mut t = table(vec!["cause", "requests", "cache-write tokens", "share"]);
    for c in Cause::ALL {
        let m = s.misses.get(&c).copied().unwrap_or_default();
        t.add_row(vec![
            Cell::new(c.as_str()),
            right(whole(m.requests as u64)),
            right(whole(m.cache_write)),
            right(percent(m.cache_write as f64 / s.miss_cache_write as f64)),
        ]);
    }
    t
}

fn billed_line(b: &Billed) -> String {
    format!(
        "against the {} sessions' recorded bill ({}): recorded usage at the table's prices {} on the total, median |error| {}, worst {}; the model's prediction {} on the total, median |error| {}, worst {}",
        b.sessions,
        money(b.billed_usd),
        signed_percent(b.priced_total_error),
        percent(b.priced_median_error),
        worst(&b.priced_worst),
        signed_percent(b.predicted_total_error),
        percent(b.predicted_median_error),
        worst(&b.predicted_worst),
    )
}

fn sessions_table(checks: &[SessionCheck]) -> Table {
    let mut t = table(vec![
        "session",
        "requests",
        "ttl applied",
        "recorded $",
        "predicted $",
        "error",
        "billed $",
        "misses",
    ]);
    // The figures a person came for before the ids cut short: the
    // prediction and its error first.
    t.priority([0, 4, 5, 3, 6, 1, 7, 2]);
    for c in checks {
        let misses = c.detail.iter().filter(|d| d.miss.is_some()).count();
        t.add_row(vec![
            Cell::new(format!(
                "{}{}",
                c.session,
                if c.requests < LONG_SESSION { "" } else { " *" }
            )),
            right(whole(c.requests as u64)),
            Cell::new(if c.ttl_applied { "yes" } else { "no" }),
            right(money(c.recorded_usd)),
            right(money(c.predicted_usd)),
            right(signed_percent(c.error)),
            right(c.billed_usd.map_or("-".into(), money)),
            right(whole(misses as u64)),
        ]);
    }
    t
}

fn requests_table(c: &SessionCheck) -> Table {
    let mut t = table(vec![
        "message",
        "model",
        "gap s",
        "read rec/pred",
        "write rec/pred",
        "input rec/pred",
        "$ rec/pred",
        "cold",
        "miss",
    ]);
    for d in &c.detail {
        t.add_row(vec![
            right(d.message_index.to_string()),
            Cell::new(&d.model),
            right(d.gap_seconds.map_or("-".into(), |g| g.to_string())),
            right(format!(
                "{}/{}",
                whole(d.recorded.cache_read),
                whole(d.predicted.cache_read)
            )),
            right(format!(
                "{}/{}",
                whole(d.recorded.cache_write()),
                whole(d.predicted.cache_write())
            )),
            right(format!(
                "{}/{}",
                whole(d.recorded.input),
                whole(d.predicted.input)
            )),
            right(format!(
                "{}/{}",
                money(d.recorded_usd),
                money(d.predicted_usd)
            )),
            Cell::new(d.cold.map_or("", Cause::as_str)),
            Cell::new(d.miss.map_or("", Cause::as_str)),
        ]);
    }
    t
}
