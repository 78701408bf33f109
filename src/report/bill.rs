//! The report's "How far to trust the price" section: `calibrate`'s bill
//! check (`crate::cost::bill`) run on the swept sessions that recorded
//! their usage, so a reader sees how close the cost model comes to real
//! bills before reading any ranking built on it.

use std::fmt::Write as _;

use super::data::SweepOutput;
use crate::calibrate::formats::{bill_inputs, fit_formats, Loaded};
use crate::cost::bill;
use crate::format::{escape_html, money, percent, signed_percent};
use crate::transcript::session_file::SessionFile;

/// The section's HTML. Sessions whose transcript can no longer be read are
/// counted in the section, not fatal: the rest of the report stands.
pub(crate) fn section(data: &SweepOutput) -> String {
    let mut h = String::from("<section id=\"trust\">\n<h2>How far to trust the price</h2>\n");
    let mut unreadable = 0usize;
    let loaded: Vec<Loaded> = data
        .sessions
        .iter()
        .filter_map(|row| match super::load_row(&row.path) {
            Ok(session) => {
                let file = session
                    .meta
                    .as_ref()
                    .and_then(|m| m.raw.as_ref())
                    .and_then(SessionFile::from_meta);
                Some(Loaded::new(session, file))
            }
            Err(_) => {
                unreadable += 1;
                None
            }
        })
        .collect();
    let (fits, _) = fit_formats(&loaded);
    let inputs = bill_inputs(&loaded, &fits);
    let checked = crate::calibrate::recorded::check_all(
        &inputs,
        &crate::cost::session::Settings::default(),
        &|f| {
            crate::calibrate::session::own_window(f).unwrap_or(crate::calibrate::COMPARE_MAX_TOKENS)
        },
        &|_| String::new(),
    );
    let summaries = bill::summarize(&checked.bill);
    // smith's own sessions record their totals: held against their replay
    // under the config the sweep compared every other with.
    let base = data
        .configs
        .first()
        .map_or_else(crate::engine::Config::default, |c| c.config);
    let usage = crate::calibrate::usage::check(&loaded, base);
    if !usage.sessions.is_empty() {
        usage_section(&mut h, &usage);
    }
    if summaries.is_empty() {
        if usage.sessions.is_empty() {
            h.push_str(
                "<p class=\"bill-none\">No swept session carries recorded usage, so there is no bill to check the \
                 price against (neither a smith session.json with usage totals nor a log with usage per request).</p>\n",
            );
        }
    } else {
        h.push_str(
            "<p>The sessions imported with their recorded usage, priced by the cost model and compared with what \
             was recorded, as <code>calibrate</code> does. Agent's fixed prompt: fitted per format and kind of \
             session from the recorded partial reads (where they show none, the format's fitted overhead × ratio), \
             as <code>calibrate</code> fits it.</p>\n",
        );
        h.push_str(
            "<div class=\"scroll\"><table class=\"bill\">\n<thead><tr><th>format</th><th>sessions</th><th>requests</th>\
             <th>recorded</th><th>predicted</th><th>total error</th><th>median |error|</th>\
             <th>p95 |error|</th><th>worst session</th><th>misses by cause (tokens written)</th></tr></thead>\n<tbody>\n",
        );
        for s in &summaries {
            let worst = s.worst.as_ref().map_or_else(String::new, |w| {
                format!("{} ({})", signed_percent(w.error), escape_html(&w.session))
            });
            let misses = s
                .misses
                .iter()
                .map(|(cause, m)| format!("{}: {}", escape_html(cause.as_str()), m.cache_write))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td></tr>",
                escape_html(&s.format),
                s.sessions,
                s.requests,
                money(s.recorded_usd),
                money(s.predicted_usd),
                signed_percent(s.total_error),
                percent(s.median_error),
                percent(s.p95_error),
                worst,
                misses
            );
        }
        h.push_str("</tbody></table></div>\n");
        for u in summaries.iter().flat_map(|s| &s.unlogged) {
            let _ = writeln!(
                h,
                "<p class=\"bill-unlogged\">{}</p>",
                escape_html(&crate::cost::report::unlogged_line(u))
            );
        }
    }
    real_compactions(&mut h, &loaded);
    if unreadable > 0 {
        let _ = writeln!(
            h,
            "<p class=\"warning\">{unreadable} swept session(s) could not be read again and are left out of the check.</p>"
        );
    }
    h.push_str("</section>\n");
    h
}

/// smith's recorded usage against the replay, as `calibrate` prints it.
fn usage_section(h: &mut String, c: &crate::calibrate::usage::UsageCheck) {
    let pct = |e: Option<f64>| e.map_or("-".to_string(), signed_percent);
    h.push_str(
        "<p>smith's own sessions record the tokens they were billed in all (<code>session.json</code>'s \
         <code>usage</code>): each is held against its replay under the baseline's config, at the ratio and \
         overhead its provider's totals fit, as <code>calibrate</code> does. Billed prompt = input + cache \
         reads + cache writes (smith's summarizer calls are in neither).</p>\n\
         <div class=\"scroll\"><table class=\"bill\">\n<thead><tr><th>session</th><th>provider</th><th>requests</th>\
         <th>recorded prompt</th><th>replayed</th><th>error</th><th>cache read error</th><th>whole</th></tr></thead>\n<tbody>\n",
    );
    for s in &c.sessions {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape_html(&s.session),
            escape_html(&s.provider),
            s.replayed.requests,
            crate::format::count(s.recorded.billed() as f64),
            crate::format::count(s.replayed.billed as f64),
            pct(s.billed_error),
            pct(s.read_error),
            escape_html(s.not_whole.as_deref().unwrap_or("yes"))
        );
    }
    h.push_str("</tbody></table></div>\n<ul>\n");
    for f in &c.fits {
        let _ = writeln!(
            h,
            "<li>{}: ratio {:.4}, overhead {}{}, fitted on {} sessions that never compact; median |error| {} at \
             each session's saved ratio, {} at the fit</li>",
            escape_html(&f.provider),
            f.ratio,
            f.overhead_tokens,
            if f.overhead_shared { " (the other providers')" } else { "" },
            f.sessions,
            f.median_error_before.map_or("-".to_string(), percent),
            f.median_error_after.map_or("-".to_string(), percent)
        );
    }
    h.push_str("</ul>\n");
}

/// What each of the source agent's own compactions removed, and what the
/// agent fetched again after it, priced from the recorded usage: the account
/// `calibrate` prints (`crate::loss::real`), for the swept sessions.
fn real_compactions(h: &mut String, loaded: &[Loaded]) {
    let rows: Vec<crate::loss::real::RealCompaction> = loaded
        .iter()
        .filter_map(|l| Some((&l.session, l.file.as_ref()?)))
        .flat_map(|(s, file)| {
            crate::loss::real::analyze(&s.messages, file, &s.label(), &file.source.format, &|i| {
                bill::request_dollars(file, i)
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h3>The agent's own compactions</h3>\n<p>{} compactions recorded in the swept sessions: the tool \
         results each removed, those its summary mentions, those whose distinctive tokens the agent used \
         afterwards, and those it fetched again, with what the re-fetching requests cost as recorded.</p>",
        rows.len()
    );
    h.push_str(
        "<div class=\"scroll\"><table class=\"bill\">\n<thead><tr><th>session</th><th>#</th><th>kind</th><th>request</th>\
         <th>tokens before</th><th>results removed</th><th>mentioned</th><th>used after</th>\
         <th>fetched again</th><th>re-fetch requests</th><th>re-fetch tokens</th><th>re-fetch cost</th></tr></thead>\n<tbody>\n",
    );
    for r in &rows {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape_html(&r.session),
            r.number,
            escape_html(&r.kind),
            r.request,
            r.pre_tokens.map(|t| t.to_string()).unwrap_or_default(),
            r.results,
            r.mentioned,
            r.used_after,
            r.refetched,
            r.refetch_requests,
            r.refetch_tokens,
            money(r.refetch_dollars)
        );
    }
    h.push_str("</tbody></table></div>\n");
}
