//! `index.html`: the whole report in one file that opens from disk with no
//! network: the CSS is inline, the charts are inline SVG, there are no
//! scripts, images, fonts or links out of the page (its only links are
//! anchors within it and the session pages beside it), and the text uses
//! the system's own fonts. Its Content-Security-Policy (`crate::view::csp`)
//! says so to the browser: no script at all, its one style sheet by hash,
//! nothing loaded. It prints:
//! the contents list is hidden on paper, and figures and tables are kept
//! whole on a page.

mod policies;
mod sessions;

use std::fmt::Write as _;

use anyhow::Result;

use super::data::{SweepOutput, CONFIGS_FILE, SESSIONS_FILE, SUMMARY_FILE};
use super::policies::{Comparison, PolicyRow, COLUMNS};
use super::{palette, Figure, Loss, SessionSection, TOP_CONFIGS};
use crate::engine::window_label as window;
use crate::engine::Stage;
use crate::format::{change, count, escape_html, money, plural, tokens};
use crate::policy::{Policy, PolicyKnob};
use crate::sweep::aggregate::Delta;
use crate::sweep::figures;

/// Rows of the table of every session before the page says "and N more".
const MAX_SESSION_ROWS: usize = 200;

/// The figures of the key-number cards and the per-session tables, each
/// headed by its label and written by its unit.
const KEY_FIGURES: [figures::Metric; 9] = [
    figures::Metric::Price,
    figures::Metric::TokensSent,
    figures::Metric::CacheWrite,
    figures::Metric::ResultsMangled,
    figures::LOSS_MEASURE,
    figures::Metric::Summaries,
    figures::Metric::Drops,
    figures::Metric::Compactions,
    figures::Metric::Exhausted,
];

/// Everything the page shows.
pub(crate) struct Page<'a> {
    pub(crate) data: &'a SweepOutput,
    /// Index of the chosen config.
    pub(crate) chosen: usize,
    /// What the cost-against-loss chart and the distribution count.
    pub(crate) loss: Loss,
    /// The policies compared and their chart, when the sweep had several.
    pub(crate) comparison: Option<(&'a Comparison, &'a Figure)>,
    /// The charts over all sessions.
    pub(crate) overview: &'a [Figure],
    pub(crate) sessions: &'a [SessionSection],
    /// Sessions that could not be charted.
    pub(crate) warnings: &'a [String],
    /// The "Compactions that went wrong" section (`super::misfires`).
    pub(crate) misfires: String,
    /// The "How far to trust the price" section (`super::bill`), shown
    /// before any ranking.
    pub(crate) bill: String,
}

/// The SVG plotters wrote, ready to sit inside HTML: without the XML
/// namespace (the HTML parser supplies it, and the page then holds no URL at
/// all), tagged with the chart's name and its title for screen readers.
pub(crate) fn inline_svg(figure: &Figure) -> String {
    let svg = figure.svg.trim();
    let svg = svg
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .unwrap_or(svg)
        .trim_start();
    let svg = svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    svg.replacen(
        "<svg ",
        &format!(
            "<svg class=\"chart\" data-chart=\"{}\" role=\"img\" aria-label=\"{}\" ",
            escape_html(&figure.stem),
            escape_html(&figure.title)
        ),
        1,
    )
}

const CSS: &str = r#"
:root { color-scheme: light; --ink: #1a1a1a; --muted: #555; --line: #ddd; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f4f4; color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 32px 64px; background: #fff; }
h1 { font-size: 1.9rem; margin: 0 0 .3rem; }
h2 { font-size: 1.4rem; margin: 2.4rem 0 .7rem; padding-bottom: .2rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.15rem; margin: 2rem 0 .4rem; }
p, li, dd { max-width: 75em; }
.lead { color: var(--muted); margin-top: 0; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: .88em;
  background: #f3f3f3; padding: 0 .25em; border-radius: 3px; word-break: break-all; }
nav ol { columns: 2; margin: .4rem 0; }
a { color: #0b5394; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1.2rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(112px, 1fr)); gap: 12px; margin: .8rem 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: .55rem .8rem; }
.card .k { color: var(--muted); font-size: .85rem; }
.card .v { font-size: 1.3rem; font-weight: 600; }
.card .d { font-size: .9rem; }
.better { color: #1b7f3b; }
.worse { color: #b3261e; }
.scroll { overflow-x: auto; max-width: 100%; }
/* A table wider than its column scrolls inside this box; the shadows at its
   edges say there is more to the side even where scrollbars are hidden. */
.scroll { background: linear-gradient(to right, #fff 30%, rgba(255,255,255,0)) left / 40px 100% no-repeat local,
  linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) right / 40px 100% no-repeat local,
  radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.18), rgba(0,0,0,0)) left / 14px 100% no-repeat scroll,
  radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.18), rgba(0,0,0,0)) right / 14px 100% no-repeat scroll; }
ul.misfires li { margin: .3rem 0; }
table { border-collapse: collapse; font-size: .85rem; width: 100%; }
th, td { padding: .3rem .36rem; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.l { white-space: normal; }
.cfg { white-space: nowrap; margin-right: .2em; }
th { border-bottom: 2px solid var(--line); background: #fafafa; white-space: normal; vertical-align: bottom; }
th.l, td.l { text-align: left; }
tr.baseline td { background: #f1f1f1; }
tr.group th { text-align: left; background: #fff; border-bottom: 1px solid var(--line); padding-top: .8rem; }
.delta { display: block; font-size: .8rem; }
.policy-name { white-space: nowrap; }
tr.chosen td { font-weight: 600; }
.mark { display: inline-block; font-size: .75rem; font-weight: 600; border-radius: 3px; padding: 0 .35em; margin-left: .3em; border: 1px solid currentColor; }
figure { margin: 1.2rem 0 2.2rem; }
figure svg.chart { display: block; width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: var(--muted); font-size: .93rem; margin-top: .4rem; }
.swatch { display: inline-block; width: .95em; height: .95em; border-radius: 2px; vertical-align: -.12em; margin-right: .3em; }
.stages { display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; padding: 0; list-style: none; }
.warning { border-left: 4px solid #b3261e; background: #fdf3f2; padding: .4rem .8rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media (max-width: 700px) { main { padding: 16px; } nav ol { columns: 1; } }
@media print {
  @page { margin: 14mm; }
  body { background: #fff; font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  nav { display: none; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  figure, table, .card, dl.facts { break-inside: avoid; page-break-inside: avoid; }
  section.session { break-before: page; page-break-before: always; }
  .scroll { overflow: visible; }
  a { color: inherit; text-decoration: none; }
}
"#;

/// A price per million tokens as the terminal writes it (`3`, `3.75`,
/// `0.3`: a rate, not an amount, so not [`money`]), or `?` where it is no
/// number.
fn per_million(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        "?".to_string()
    }
}

/// The class of a change: `better` when lower, `worse` when higher.
fn direction(value: f64, base: f64) -> &'static str {
    if value < base {
        "better"
    } else if value > base {
        "worse"
    } else {
        ""
    }
}

/// A change as text with the class saying whether lower (better) or
/// higher (worse).
fn change_html(value: f64, base: f64) -> String {
    format!(
        "<span class=\"{}\">{}</span>",
        direction(value, base),
        escape_html(&change(Delta::new(value, base).pct))
    )
}

/// A table cell: `value` written by `fmt` over its change against `base`;
/// hovering shows the exact value.
fn value_cell(value: f64, base: f64, fmt: fn(f64) -> String) -> String {
    format!(
        "<td title=\"{value}\">{}<span class=\"delta {}\">{}</span></td>",
        escape_html(&fmt(value)),
        direction(value, base),
        escape_html(&change(Delta::new(value, base).pct))
    )
}

/// The "Recommendation" section: `recommend`'s verdict, its evidence and
/// the snippet to paste, first on the page.
fn recommendation(h: &mut String, v: &crate::recommend::Verdict) {
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}%"));
    let _ = write!(
        h,
        "<section id=\"recommendation\">\n<h2>Recommendation</h2>\n<p class=\"lead\"><strong>{}</strong></p>\n<dl class=\"facts\">\n\
         <dt>objective</dt><dd>{} (lower is better), loss measure {} (--max-loss {})</dd>\n\
         <dt>saving in sample</dt><dd>{}</dd>\n<dt>saving out of sample</dt><dd>{}</dd>\n<dt>headroom</dt><dd>{}</dd>\n\
         <dt>intervals</dt><dd>{:.0}% paired bootstrap over {} sessions, {} resamples, seed {}</dd>\n</dl>\n",
        escape_html(&v.sentence),
        escape_html(v.objective.name()),
        escape_html(v.loss_measure.name()),
        escape_html(&v.max_loss),
        escape_html(&crate::recommend::saving_in_sample(v)),
        escape_html(&v.out_of_sample.as_ref().map_or("not measured (too few sessions)".to_string(), |o| {
            format!("{} over {} folds", pct(o.saving_pct), o.folds.len())
        })),
        escape_html(&v.headroom.as_ref().map_or("-".to_string(), |hr| {
            format!(
                "{} (each session under its own best config in hindsight: {}; the best single config, {}: {})",
                pct(hr.headroom_pct),
                pct(hr.hindsight_saving_pct),
                hr.best_single,
                pct(hr.best_single_saving_pct)
            )
        })),
        v.confidence * 100.0,
        v.sessions,
        v.bootstrap.resamples,
        v.bootstrap.seed
    );
    let _ = write!(
        h,
        "<p>{}</p>\n<pre><code>{}</code></pre>\n",
        if v.change {
            "Paste into smith's <code>config.toml</code>, in place of its <code>[context]</code> table:"
        } else {
            "Nothing to change; your <code>[context]</code> as smith reads it:"
        },
        escape_html(&v.snippet)
    );
    if let Some(o) = &v.other_engine {
        let _ = writeln!(
            h,
            "<p>The same rule on the same sessions: {}.</p>",
            escape_html(&o.line)
        );
    }
    if let Some(note) = &v.maintainers_note {
        let _ = writeln!(h, "<p class=\"warning\">{}</p>", escape_html(note));
    }
    h.push_str(
        "<div class=\"scroll\"><table>\n<thead><tr><th class=\"l\">config</th><th>smith accepts</th><th>objective</th>\
         <th>Δ</th><th>95% CI</th><th>loss</th><th>Δ loss</th><th>95% CI</th></tr></thead>\n<tbody>\n",
    );
    for e in &v.evidence {
        let mut marks = String::new();
        for (on, name) in [
            (e.baseline, "baseline"),
            (e.chosen, "chosen"),
            (e.tied, "tied"),
            (!e.loss_ok && !e.baseline, "loss"),
        ] {
            if on {
                let _ = write!(marks, "<span class=\"mark\">{name}</span>");
            }
        }
        let _ = writeln!(
            h,
            "<tr><td class=\"l\"><span class=\"cfg\">{}</span>{marks}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.0}</td><td>{}</td><td>{}</td></tr>",
            escape_html(&e.label),
            if e.accepted { "yes" } else { "no" },
            escape_html(&v.objective.unit().format()(e.objective)),
            e.objective_change_text(),
            e.objective_interval_text(),
            e.loss,
            e.loss_change_text(),
            e.loss_interval_text(),
        );
    }
    h.push_str("</tbody></table></div>\n</section>\n");
}

/// The page's lead after what was replayed: the verdict, the one decision
/// `sweep` and `recommend` print too; without one, the lowest config of the
/// ranking, said to be no recommendation.
fn headline(d: &SweepOutput, verdict: Option<&crate::recommend::Verdict>, rank_by: &str) -> String {
    let best = d.by_rank()[0];
    match verdict {
        Some(v) => format!("Verdict: <strong>{}</strong>", escape_html(&v.sentence)),
        None => format!(
            "Lowest {}: <strong>{}</strong>{} (a ranking, not a recommendation: these files carry no verdict; \
             run the sweep or <code>recommend</code> again for one)",
            escape_html(rank_by),
            escape_html(&d.name(best)),
            if d.configs[best].is_baseline {
                ", the baseline"
            } else {
                ""
            }
        ),
    }
}

/// A policy's name after a swatch of its colour in the charts.
fn policy_name(p: Policy) -> String {
    format!(
        "<span class=\"policy-name\"><span class=\"swatch policy-{}\"></span>{}</span>",
        p.as_str(),
        escape_html(p.as_str())
    )
}

/// The page's one style sheet: [`CSS`] and a class per colour of the
/// charts' swatches (the policy can allow no `style` attribute).
fn style() -> String {
    let mut css = CSS.to_string();
    for p in Policy::ALL {
        let _ = writeln!(
            css,
            ".swatch.policy-{} {{ background: {}; }}",
            p.as_str(),
            palette::hex(palette::policy(p))
        );
    }
    for s in Stage::ALL {
        let _ = writeln!(
            css,
            ".swatch.stage-{} {{ background: {}; }}",
            s.as_str(),
            palette::hex(palette::stage(s))
        );
    }
    css
}

impl Page<'_> {
    /// The page.
    pub(crate) fn render(&self) -> Result<String> {
        let mut h = String::new();
        let d = self.data;
        let chosen = &d.configs[self.chosen];
        let base = &d.configs[d.baseline()?];
        let rank_by = d.summary.rank_by.name();
        let style = style();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{}\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"referrer\" content=\"no-referrer\">\n\
             <title>Compaction report: {} × {}</title>\n<style>{style}</style>\n</head>\n<body>\n<main>\n",
            crate::view::csp::meta(&[], &[&style]),
            plural(d.sessions.len(), "session"),
            plural(d.configs.len(), "config")
        );
        let verdict = d.verdict();
        let policies = d.policies();
        let (heading, of_policies) = if d.compares_policies() {
            (
                "How smith's compaction and other agents' policies would have done",
                format!(
                    " of {} policies ({})",
                    policies.len(),
                    policies
                        .iter()
                        .map(|p| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        } else {
            (
                "How smith's compaction would have done",
                " of the compaction engine".to_string(),
            )
        };
        let headline = headline(d, verdict, rank_by);
        let _ = write!(
            h,
            "<header>\n<h1>{heading}</h1>\n<p class=\"lead\">{} replayed under {}{}, \
             ranked by {} (lowest first). {headline}.</p>\n</header>\n",
            plural(d.sessions.len(), "session"),
            plural(d.configs.len(), "config"),
            escape_html(&of_policies),
            escape_html(rank_by),
        );
        h.push_str("<nav><strong>Contents</strong><ol>\n");
        if verdict.is_some() {
            h.push_str("<li><a href=\"#recommendation\">Recommendation</a></li>\n");
        }
        h.push_str(
            "<li><a href=\"#swept\">What was swept</a></li>\n\
             <li><a href=\"#trust\">How far to trust the price</a></li>\n\
             <li><a href=\"#verdict\">The compared config against the baseline</a></li>\n\
             <li><a href=\"#configs\">Configs, ranked</a></li>\n",
        );
        if self.comparison.is_some() {
            h.push_str("<li><a href=\"#policies\">Policies compared</a></li>\n");
        }
        for f in self.overview {
            let _ = writeln!(
                h,
                "<li><a href=\"#{}\">{}</a></li>",
                escape_html(&f.stem),
                escape_html(&f.title)
            );
        }
        h.push_str("<li><a href=\"#misfires\">Compactions that went wrong</a></li>\n");
        h.push_str("<li><a href=\"#sessions\">Sessions up close</a></li>\n<li><a href=\"#all-sessions\">Every session</a></li>\n</ol></nav>\n");
        for w in self.warnings {
            let _ = writeln!(h, "<p class=\"warning\">{}</p>", escape_html(w));
        }
        if let Some(v) = verdict {
            recommendation(&mut h, v);
        }
        self.swept(&mut h);
        h.push_str(&self.bill);
        self.verdict(&mut h, chosen, base);
        self.config_table(&mut h, rank_by);
        if let Some((comparison, figure_of)) = self.comparison {
            self.policies(&mut h, comparison, figure_of, rank_by);
        }
        h.push_str("<section id=\"charts\">\n<h2>Charts</h2>\n<p>Every stage of compaction has one colour in every chart:</p>\n");
        h.push_str(&stage_legend());
        for f in self.overview {
            figure(&mut h, f);
        }
        h.push_str("</section>\n");
        h.push_str(&self.misfires);
        self.session_sections(&mut h)?;
        self.all_sessions(&mut h)?;
        let _ = write!(
            h,
            "<footer>Made by {} from <code>{}</code> ({}, {}, {}). The numbers are estimates: {}; prices assume prompt \
             caching as the sweep's cost model describes. The PNG files beside this page are the same charts.</footer>\n\
             </main>\n</body>\n</html>\n",
            escape_html(&d.summary.tool),
            escape_html(&d.dir.display().to_string()),
            CONFIGS_FILE,
            SESSIONS_FILE,
            SUMMARY_FILE,
            escape_html(&d.summary.tokens.describe())
        );
        Ok(h)
    }

    fn swept(&self, h: &mut String) {
        let d = self.data;
        let s = &d.summary;
        h.push_str("<section id=\"swept\">\n<h2>What was swept</h2>\n<dl class=\"facts\">\n");
        let paths: Vec<String> = s
            .paths
            .iter()
            .map(|p| format!("<code>{}</code>", escape_html(p)))
            .collect();
        let _ = writeln!(
            h,
            "<dt>Sessions from</dt><dd>{}</dd>",
            if paths.is_empty() {
                "?".into()
            } else {
                paths.join(", ")
            }
        );
        let bytes = s.bytes as f64;
        let _ = writeln!(
            h,
            "<dt>Sessions</dt><dd>{} read ({:.1} MB of transcript){}{}</dd>",
            d.sessions.len(),
            bytes / 1e6,
            match s.sessions_skipped {
                0 => String::new(),
                n => format!(", {n} could not be read"),
            },
            match s.lines_skipped {
                0 => String::new(),
                n => format!(", {n} bad lines skipped"),
            }
        );
        let _ = write!(h, "<dt>Grid</dt><dd>{} configs", s.grid.configs);
        if let n @ 1.. = s.grid.impossible_left_out {
            let _ = write!(
                h,
                " ({n} combinations left out: their target was at or above their trigger)"
            );
        }
        let _ = writeln!(
            h,
            "; the baseline, {}, is always in</dd>",
            escape_html(&self.data.baseline_name())
        );
        for (knob, values) in &s.grid.axes.0 {
            let values: Vec<String> = values.iter().map(|v| v.for_people(knob)).collect();
            let _ = writeln!(
                h,
                "<dt><code>{}</code></dt><dd>{}</dd>",
                escape_html(knob),
                escape_html(&values.join(", "))
            );
        }
        if d.compares_policies() {
            self.swept_policies(h);
        }
        if let Some(file) = &s.grid.file {
            let _ = writeln!(
                h,
                "<dt>Grid file</dt><dd><code>{}</code></dd>",
                escape_html(&file.display().to_string())
            );
        }
        self.swept_prices(h);
        // What the price rests on (the sweep's cost model), above the ranking.
        let _ = writeln!(
            h,
            "<dt>Cost model</dt><dd class=\"cost-note\">{}</dd>",
            escape_html(crate::sweep::cost_note::under_its_label(&s.cost_model.note))
        );
        // Only where sessions chose them, so other reports stay as they were.
        if let Some(c) = &s.calibration {
            let rows = d.sessions.len() * d.configs.len();
            let line = c.describe(rows);
            let line = line.strip_prefix("ratio and overhead: ").unwrap_or(&line);
            let _ = writeln!(
                h,
                "<dt>Ratio and overhead</dt><dd>{}</dd>",
                escape_html(line)
            );
        }
        let _ = writeln!(
            h,
            "<dt>Ranked by</dt><dd>{} (lowest first; ties go to fewer results mangled, then lower price)</dd>",
            escape_html(s.rank_by.name())
        );
        h.push_str("</dl>\n</section>\n");
    }

    /// The prices the sweep stood on, in the words the terminal used:
    /// per model where the sessions named one (summary.json's
    /// `prices.used`), else the flat prices of a summary that predates it.
    fn swept_prices(&self, h: &mut String) {
        let p = &self.data.summary.prices;
        if p.used.heading.is_empty() {
            let _ = writeln!(
                h,
                "<dt>Prices</dt><dd>${} input, ${} cache write, ${} cache read per million tokens</dd>",
                per_million(p.input),
                per_million(p.cache_write),
                per_million(p.cache_read)
            );
            return;
        }
        let _ = write!(
            h,
            "<dt>Prices</dt><dd>{}",
            escape_html(p.used.heading.trim_end_matches(':'))
        );
        if !p.used.lines.is_empty() {
            h.push_str("<ul>");
            for line in &p.used.lines {
                let _ = write!(h, "<li>{}</li>", escape_html(line));
            }
            h.push_str("</ul>");
        }
        h.push_str("</dd>\n");
    }

    fn verdict(
        &self,
        h: &mut String,
        chosen: &super::data::ConfigSummary,
        base: &super::data::ConfigSummary,
    ) {
        let recommended = self
            .data
            .verdict()
            .and_then(|v| v.chosen.as_ref())
            .is_some_and(|c| c.config == chosen.index);
        let (heading, what) = if recommended {
            ("The recommended config against the baseline", "Recommended")
        } else if chosen.is_baseline {
            ("The baseline", "Compared")
        } else {
            (
                "A config compared with the baseline (not recommended: see the verdict)",
                "Compared",
            )
        };
        let _ = write!(
            h,
            "<section id=\"verdict\">\n<h2>{heading}</h2>\n<p>{what}: <strong>{}</strong> \
             (rank {} of {}{}); the baseline: <strong>{}</strong> (rank {}). Totals over all {} sessions; the change is \
             against the baseline, green where it is lower.</p>\n<div class=\"cards\">\n",
            escape_html(&self.data.name(chosen.index)),
            chosen.rank,
            self.data.configs.len(),
            if chosen.pareto { ", on the Pareto front" } else { "" },
            escape_html(&base.label),
            base.rank,
            self.data.sessions.len()
        );
        for figure in KEY_FIGURES {
            let (heading, fmt) = (figure.label(), figure.unit().format());
            let (v, b) = (chosen.total(figure), base.total(figure));
            let _ = writeln!(
                h,
                "<div class=\"card\"><div class=\"k\">{heading}</div><div class=\"v\">{}</div><div class=\"d\">{} vs {}</div></div>",
                escape_html(&fmt(v)),
                change_html(v, b),
                escape_html(&fmt(b))
            );
        }
        h.push_str("</div>\n</section>\n");
    }

    fn config_table(&self, h: &mut String, rank_by: &str) {
        let d = self.data;
        let base_i = d.configs.iter().position(|c| c.is_baseline).unwrap_or(0);
        let base = &d.configs[base_i];
        let mut rows: Vec<usize> = d.by_rank().into_iter().take(TOP_CONFIGS).collect();
        for extra in [self.chosen, base_i] {
            if !rows.contains(&extra) {
                rows.push(extra);
            }
        }
        rows.sort_by_key(|&i| (d.configs[i].rank, i));
        let _ = write!(
            h,
            "<section id=\"configs\">\n<h2>Configs, ranked by {}</h2>\n<p>Totals over all sessions, and under the first five \
             their change against {}, green where it is lower. <span class=\"mark\">baseline</span> marks it, <span class=\"mark\">★ front</span> \
             the Pareto front of price against results mangled (no other config is both cheaper and mangles fewer), \
             <span class=\"mark\">chosen</span> the config the charts compare with {}, \
             <span class=\"mark\">tied</span> a config whose 95% interval of the change overlaps the best one's \
             (a paired bootstrap over sessions: the data cannot tell the two apart).{}</p>\n",
            escape_html(rank_by),
            escape_html(&d.baseline_name()),
            escape_html(&d.baseline_name()),
            if d.configs.len() > rows.len() {
                format!(
                    " The best {} are shown; <code>{}</code> holds all {}.",
                    TOP_CONFIGS,
                    CONFIGS_FILE.replace("parquet", "csv"),
                    d.configs.len()
                )
            } else {
                String::new()
            }
        );
        let by_policy = d.compares_policies();
        let _ = write!(
            h,
            "<div class=\"scroll\"><table>\n<thead><tr><th>#</th>{}<th class=\"l\">config</th>\
             <th>Δ {} 95% CI</th><th>price</th><th>tokens sent</th><th>cache writes</th><th>results mangled</th><th>{}</th>\
             <th>summa&shy;ries</th><th>drops</th><th>compac&shy;tions</th><th>over window</th><th>peak</th></tr></thead>\n<tbody>\n",
            if by_policy { "<th class=\"l\">policy</th>" } else { "" },
            escape_html(rank_by),
            escape_html(figures::LOSS_MEASURE.label())
        );
        let rank_figure = d.summary.rank_by;
        for i in rows {
            let c = &d.configs[i];
            let mut class = Vec::new();
            let mut marks = String::new();
            if c.is_baseline {
                class.push("baseline");
                marks.push_str("<span class=\"mark\">baseline</span>");
            }
            if c.pareto {
                marks.push_str("<span class=\"mark\">★ front</span>");
            }
            if i == self.chosen {
                class.push("chosen");
                marks.push_str("<span class=\"mark\">chosen</span>");
            }
            if c.tied {
                marks.push_str("<span class=\"mark\">tied</span>");
            }
            let policy = if by_policy {
                format!("<td class=\"l\">{}</td>", policy_name(c.setup.policy))
            } else {
                String::new()
            };
            let _ = write!(
                h,
                "<tr class=\"{}\"><td>{}</td>{policy}<td class=\"l\"><span class=\"cfg\">{}</span>{marks}</td>",
                class.join(" "),
                c.rank,
                // The policy has its own column.
                escape_html(&if by_policy { c.setup.knobs_label() } else { c.label.clone() }),
            );
            let _ = write!(
                h,
                "<td>{}</td>",
                escape_html(&c.interval.map_or("-".to_string(), |i| {
                    i.objective
                        .describe(base.total(rank_figure), rank_figure.is_price())
                }))
            );
            for figure in [
                figures::Metric::Price,
                figures::Metric::TokensSent,
                figures::Metric::CacheWrite,
                figures::Metric::ResultsMangled,
                figures::LOSS_MEASURE,
            ] {
                h.push_str(&value_cell(
                    c.total(figure),
                    base.total(figure),
                    figure.unit().format(),
                ));
            }
            let _ = writeln!(
                h,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                count(c.total(figures::Metric::Summaries)),
                count(c.total(figures::Metric::Drops)),
                count(c.total(figures::Metric::Compactions)),
                count(c.total(figures::Metric::Exhausted)),
                tokens(c.total(figures::Metric::PeakTokens)),
            );
        }
        h.push_str("</tbody></table></div>\n</section>\n");
    }
}

/// The stage colours as an HTML list.
fn stage_legend() -> String {
    let mut h = String::from("<ul class=\"stages\">\n");
    for s in Stage::ALL {
        let _ = writeln!(
            h,
            "<li><span class=\"swatch stage-{}\"></span>{}</li>",
            s.as_str(),
            s.as_str()
        );
    }
    h.push_str("</ul>\n");
    h
}

fn figure(h: &mut String, f: &Figure) {
    if let Some(words) = &f.words {
        let _ = write!(
            h,
            "<div id=\"{}\" class=\"no-chart\">\n<h3>{}</h3>\n<p>{}</p>\n</div>\n",
            escape_html(&f.stem),
            escape_html(&f.title),
            escape_html(words)
        );
        return;
    }
    let _ = write!(
        h,
        "<figure id=\"{}\">\n{}\n<figcaption><strong>{}.</strong> {} <span class=\"file\">(<code>{}.png</code>)</span></figcaption>\n</figure>\n",
        escape_html(&f.stem),
        inline_svg(f),
        escape_html(&f.title),
        escape_html(&f.caption),
        escape_html(&f.stem)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_svg_drops_the_namespace_url_and_names_the_chart() {
        let f = Figure {
            stem: "heatmap".into(),
            title: "a <b>".into(),
            caption: String::new(),
            svg: "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" xmlns=\"http://www.w3.org/2000/svg\">\n</svg>\n".into(),
            png: Vec::new(),
            words: None,
        };
        let s = inline_svg(&f);
        assert!(!s.contains("http"), "{s}");
        assert!(s.starts_with("<svg class=\"chart\" data-chart=\"heatmap\" role=\"img\" aria-label=\"a &lt;b&gt;\" width=\"10\""), "{s}");
    }
}
