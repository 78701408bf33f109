//! Policies compared: each policy's best config (by the sweep's ranking)
//! beside the others' on the same sessions, as the table of the page's
//! "Policies" section and as one chart of grouped bars.
//!
//! A policy's row is its best-ranked config. Configs of different windows
//! are not alike (a 64k window is cheaper and loses more than a 200k one
//! whatever the policy), so when the sweep ran several `max_tokens` there is
//! also one row per policy per window, and the chart groups its bars by
//! window. Every figure is the total over all sessions, as in
//! `configs.parquet`, and the change is against smith's defaults (config 0,
//! in the sweep even when smith was not asked for).

use plotters::coord::Shift;
use plotters::prelude::*;

use anyhow::Result;

use super::data::SweepOutput;
use super::draw::{draw_legend, draw_line, draw_marker, draw_note, font, label_at, Dash, Swatch};
use super::palette;
use super::{font_size, Chart, DrawResult};
use crate::engine::window_label as window;
use crate::format::{count, money, plural, tokens};
use crate::policy::Policy;
use crate::sweep::figures::Metric;

/// The columns of the comparison table: what a policy costs, what it sent
/// and wrote to the cache, and what it lost, counted five ways. Each is
/// headed by its [`Metric::label`] and written by its unit
/// ([`crate::sweep::figures::Unit::format`]).
pub const COLUMNS: [Metric; 10] = [
    Metric::Price,
    Metric::TokensSent,
    Metric::CacheWrite,
    Metric::ResultsMangled,
    Metric::ResultsLost,
    crate::sweep::figures::LOSS_MEASURE,
    Metric::NeededAgain,
    Metric::Refetched,
    Metric::Summaries,
    Metric::Exhausted,
];

/// A panel of the chart: the figure, the panel's title with its unit, the y
/// axis's unit, and how a tick is written.
type Panel = (Metric, &'static str, &'static str, fn(f64) -> String);

/// The panels of the chart, in reading order (three across, two down).
const PANELS: [Panel; 6] = [
    (Metric::Price, "Price (USD)", "USD", money),
    (Metric::TokensSent, "Tokens sent", "tokens", tokens),
    (Metric::CacheWrite, "Cache writes", "tokens", tokens),
    (Metric::ResultsMangled, "Results mangled", "results", count),
    (
        crate::sweep::figures::LOSS_MEASURE,
        "Results still needed",
        "results",
        count,
    ),
    (Metric::Summaries, "Summaries", "requests", count),
];

/// One row of the comparison: a policy and the config that stands for it.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyRow {
    pub policy: Policy,
    /// Index of the config (its best, overall or at `window`).
    pub config: usize,
    /// The window the row is the best at; `None` for the best overall.
    pub(crate) window: Option<u64>,
}

/// Every policy's best config, overall and per window.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// One row per policy, best rank first.
    pub best: Vec<PolicyRow>,
    /// When the sweep ran several windows: per window (ascending) that has
    /// configs of at least two policies, one row per policy, best first.
    pub by_window: Vec<(u64, Vec<PolicyRow>)>,
    /// Index of the baseline.
    pub(crate) baseline: usize,
}

impl Comparison {
    /// The rows of `data`'s policies.
    pub fn new(data: &SweepOutput) -> Result<Comparison> {
        let baseline = data.baseline()?;
        let rows = |window: Option<u64>| -> Vec<PolicyRow> {
            let mut rows: Vec<PolicyRow> = data
                .policies()
                .into_iter()
                .filter_map(|policy| {
                    data.best_of(policy, window).map(|config| PolicyRow {
                        policy,
                        config,
                        window,
                    })
                })
                .collect();
            rows.sort_by_key(|r| (data.configs[r.config].rank, r.config));
            rows
        };
        let windows = data.windows();
        let by_window = if windows.len() > 1 {
            windows
                .into_iter()
                .map(|w| (w, rows(Some(w))))
                .filter(|(_, rows)| rows.len() > 1)
                .collect()
        } else {
            Vec::new()
        };
        Ok(Comparison {
            best: rows(None),
            by_window,
            baseline,
        })
    }
}

/// One bar: a policy's figures under one config.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bar {
    pub(crate) policy: Policy,
    pub(crate) config: usize,
    /// The figures of [`PANELS`], in order.
    pub(crate) values: [f64; 6],
}

/// The policy chart: one panel per figure, in each one bar per policy,
/// grouped by window when the sweep ran several.
#[derive(Clone, Debug)]
pub(crate) struct PolicyChart {
    /// Per group: its label on the x axis and its bars.
    pub(crate) groups: Vec<(String, Vec<Bar>)>,
    /// What the x axis shows.
    x_desc: String,
    /// The baseline's figures of [`PANELS`].
    pub(crate) baseline: [f64; 6],
    /// The policies drawn, in [`Policy::ALL`] order: the legend.
    pub(crate) policies: Vec<Policy>,
    sessions: usize,
    rank_by: Metric,
    /// Config labels of the bars when there is one group: notes beside.
    notes: Vec<(Policy, String)>,
    baseline_name: String,
}

impl PolicyChart {
    /// The chart of `comparison`: its rows per window if it has them, else
    /// its best row of each policy.
    pub(crate) fn new(data: &SweepOutput, comparison: &Comparison) -> PolicyChart {
        let values = |i: usize| -> [f64; 6] {
            let c = &data.configs[i];
            let mut v = [0.0; 6];
            for (slot, (name, ..)) in v.iter_mut().zip(PANELS) {
                *slot = c.total(name);
            }
            v
        };
        let bars = |rows: &[PolicyRow]| -> Vec<Bar> {
            let mut bars: Vec<Bar> = rows
                .iter()
                .map(|r| Bar {
                    policy: r.policy,
                    config: r.config,
                    values: values(r.config),
                })
                .collect();
            // The same policy in the same place in every group.
            bars.sort_by_key(|b| Policy::ALL.iter().position(|&p| p == b.policy));
            bars
        };
        let groups: Vec<(String, Vec<Bar>)> = if comparison.by_window.is_empty() {
            let label = match data.windows().as_slice() {
                [w] => format!("{} window", window(*w)),
                _ => "any window".to_string(),
            };
            vec![(label, bars(&comparison.best))]
        } else {
            comparison
                .by_window
                .iter()
                .map(|(w, rows)| (window(*w), bars(rows)))
                .collect()
        };
        let mut policies: Vec<Policy> = groups
            .iter()
            .flat_map(|(_, bars)| bars.iter().map(|b| b.policy))
            .collect();
        policies.sort_by_key(|&p| Policy::ALL.iter().position(|&q| q == p));
        policies.dedup();
        let notes = if groups.len() == 1 {
            groups[0]
                .1
                .iter()
                .map(|b| (b.policy, data.configs[b.config].setup.knobs_label()))
                .collect()
        } else {
            Vec::new()
        };
        let x_desc = if comparison.by_window.is_empty() {
            "best config of each policy"
        } else {
            "window (max_tokens)"
        }
        .to_string();
        PolicyChart {
            groups,
            x_desc,
            baseline: values(comparison.baseline),
            policies,
            sessions: data.sessions.len(),
            rank_by: data.summary.rank_by,
            notes,
            baseline_name: data.baseline_name(),
        }
    }

    /// Draws the panel of figure `k` of [`PANELS`].
    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        k: usize,
        bottom_row: bool,
    ) -> DrawResult<DB> {
        let (_, title, unit, fmt) = PANELS[k];
        let top = self
            .groups
            .iter()
            .flat_map(|(_, bars)| bars.iter().map(|b| b.values[k]))
            .chain([self.baseline[k]])
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let y_hi = if top > 0.0 { top * 1.12 } else { 1.0 };
        let n = self.groups.len();
        let labels: Vec<String> = self.groups.iter().map(|(l, _)| l.clone()).collect();
        let mut chart = ChartBuilder::on(area)
            .caption(title, font(font_size::AXIS))
            .margin_left(6)
            .margin_right(14)
            .margin_top(4)
            .x_label_area_size(if bottom_row { 46 } else { 26 })
            .y_label_area_size(78)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, 0f64..y_hi)?;
        let y_label = |v: &f64| {
            // Counts have no fractional ticks.
            if unit != "USD" && unit != "tokens" && v.fract() != 0.0 {
                String::new()
            } else {
                fmt(*v)
            }
        };
        let mut mesh = chart.configure_mesh();
        if bottom_row {
            mesh.x_desc(self.x_desc.as_str());
        }
        mesh.disable_x_mesh()
            .x_labels(n + 1)
            .y_labels(5)
            .x_label_formatter(&|v| label_at(&labels, *v))
            .y_label_formatter(&y_label)
            .y_desc(unit)
            .label_style(font(font_size::TICK - 2))
            .axis_desc_style(font(font_size::TICK))
            .bold_line_style(palette::FAINT.mix(0.6))
            .light_line_style(TRANSPARENT)
            .draw()?;
        for (g, (_, bars)) in self.groups.iter().enumerate() {
            let width = 0.8 / bars.len().max(1) as f64;
            for (j, b) in bars.iter().enumerate() {
                let x0 = g as f64 - 0.4 + width * j as f64 + width * 0.08;
                let x1 = x0 + width * 0.84;
                let v = b.values[k];
                let colour = palette::policy(b.policy);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, v)],
                    colour.filled(),
                )))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, v)],
                    palette::CHOSEN.mix(0.5).stroke_width(1),
                )))?;
                // The policy's marker on top: a bar of 0 is still seen.
                draw_marker(
                    &mut chart,
                    ((x0 + x1) / 2.0, v),
                    palette::policy_shape(b.policy),
                    5,
                    colour,
                    Some(palette::CHOSEN.stroke_width(1)),
                )?;
            }
        }
        draw_line(
            &mut chart,
            vec![(-0.5, self.baseline[k]), (n as f64 - 0.5, self.baseline[k])],
            palette::BASELINE.stroke_width(2),
            Dash::Dashed,
        )
    }
}

impl Chart for PolicyChart {
    fn stem(&self) -> String {
        "policies".to_string()
    }

    fn title(&self) -> String {
        format!(
            "Policies side by side on the same {}",
            plural(self.sessions, "session")
        )
    }

    fn caption(&self) -> String {
        let which = if self.groups.len() > 1 {
            "Bars are grouped by window: in each group, each policy's best config at that window"
        } else {
            "Each bar is one policy's best config"
        };
        format!(
            "{which}, by the sweep's ranking ({}), with its totals over all {}; the dashed grey line is {}. Lower is better in every panel. Results mangled counts only results cut to a head or a stub, \
             so a policy that summarises instead shows few; results still needed counts the lost results that were \
             still current (a file read not edited since) and whose identifiers, paths or numbers a later message \
             used, whatever removed them (a proxy: the rest of each session is what the agent that recorded it did \
             next). The table above has the numbers.",
            self.rank_by,
            plural(self.sessions, "session"),
            self.baseline_name
        )
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (w, _) = area.dim_in_pixel();
        let (main, side) = area.split_horizontally(w.saturating_sub(220));
        let panels = main.split_evenly((2, 3));
        for (k, panel) in panels.iter().enumerate() {
            self.panel(panel, k, k >= 3)?;
        }
        let mut entries: Vec<(String, Swatch)> = self
            .policies
            .iter()
            .map(|&p| {
                (
                    p.as_str().to_string(),
                    Swatch::Marker(palette::policy(p), palette::policy_shape(p)),
                )
            })
            .collect();
        entries.push((
            self.baseline_name.clone(),
            Swatch::Line(palette::BASELINE, 2, Dash::Dashed),
        ));
        let side = side.margin(14, 0, 6, 0);
        draw_legend(&side, &entries)?;
        let mut y = 14 + 30 * entries.len() as i32 + 8;
        if !self.notes.is_empty() {
            draw_note(&side, "configs:", (6, y))?;
            y += 22;
            for (p, label) in &self.notes {
                let text: String = format!("{p}: {label}");
                let text = if text.chars().count() > 26 {
                    format!("{}…", text.chars().take(25).collect::<String>())
                } else {
                    text
                };
                draw_note(&side, &text, (6, y))?;
                y += 20;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_panel_of_the_chart_is_a_column_of_the_table() {
        for (figure, ..) in PANELS {
            assert!(COLUMNS.contains(&figure), "{figure}");
        }
    }
}
