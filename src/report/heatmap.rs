//! The heatmap: one cell per `compact_at` × `compact_to` pair, coloured by
//! one metric summed over every session, the other knobs held where the
//! chosen config (or, if its slice of the grid is smaller, the baseline) has
//! them. The cells of the chosen config and the baseline are outlined; pairs
//! the sweep left out (a target at or above the trigger) are blank.
//!
//! Only smith's configs have cells: `compact_at` and `compact_to` are
//! smith's knobs, and the rows of other policies carry smith's defaults in
//! them, which would put every other policy in the defaults' cell.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{ConfigSummary, SweepOutput};
use super::draw::{draw_line, draw_note, font, label_at, Dash};
use super::palette;
use super::{font_size, Chart, DrawResult, Metric, FONT};
use crate::format::fraction;
use crate::policy::Policy;
use crate::sweep::grid::Knob;

/// Axes beyond this many values are drawn without a number in every cell.
const MAX_ANNOTATED: usize = 12;

/// The heatmap of one metric.
#[derive(Clone, Debug)]
pub struct Heatmap {
    metric: Metric,
    /// The metric's label, in the sweep's units.
    axis: String,
    /// Distinct `compact_at` and `compact_to` values, ascending.
    pub at: Vec<f64>,
    pub to: Vec<f64>,
    /// `cells[i][j]`: the metric at `at[i]`, `to[j]`; `None` where no config.
    pub cells: Vec<Vec<Option<f64>>>,
    /// Cells of the chosen config and the baseline, if in the slice.
    pub chosen: Option<(usize, usize)>,
    pub baseline: Option<(usize, usize)>,
    /// The config whose other knobs the slice holds.
    anchor_label: String,
    /// The sweep compared policies: the caption says only smith's are here.
    compares_policies: bool,
    /// The chosen config's policy, when it is not smith (it has no cell).
    chosen_policy: Option<Policy>,
    /// The lowest and highest value of any cell: the ends of the scale.
    range: (f64, f64),
    baseline_name: String,
}

/// Whether `a` and `b` agree on every knob but the two the heatmap varies.
fn same_slice(a: &ConfigSummary, b: &ConfigSummary) -> bool {
    Knob::ALL
        .into_iter()
        .filter(|k| !matches!(k, Knob::CompactAt | Knob::CompactTo))
        .all(|k| k.get(&a.config) == k.get(&b.config))
}

fn distinct(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

impl Heatmap {
    /// The heatmap of `metric` through smith's configs in the slice of
    /// `chosen` or `baseline`, whichever holds more of them (the baseline's
    /// when `chosen` is another policy's).
    pub fn new(data: &SweepOutput, metric: Metric, chosen: usize, baseline: usize) -> Heatmap {
        let smith = |i: usize| data.configs[i].setup.policy == Policy::Smith;
        let slice = |anchor: usize| -> Vec<usize> {
            if !smith(anchor) {
                return Vec::new();
            }
            (0..data.configs.len())
                .filter(|&i| smith(i) && same_slice(&data.configs[i], &data.configs[anchor]))
                .collect()
        };
        let (mut members, mut anchor) = (slice(chosen), chosen);
        let base_members = slice(baseline);
        if base_members.len() > members.len() {
            (members, anchor) = (base_members, baseline);
        }
        let at = distinct(
            members
                .iter()
                .map(|&i| data.configs[i].config.compact_at)
                .collect(),
        );
        let to = distinct(
            members
                .iter()
                .map(|&i| data.configs[i].config.compact_to)
                .collect(),
        );
        let mut cells = vec![vec![None; to.len()]; at.len()];
        let cell_of = |c: &ConfigSummary| -> Option<(usize, usize)> {
            let i = at.iter().position(|&v| v == c.config.compact_at)?;
            let j = to.iter().position(|&v| v == c.config.compact_to)?;
            Some((i, j))
        };
        for &m in &members {
            if let Some((i, j)) = cell_of(&data.configs[m]) {
                cells[i][j].get_or_insert(data.configs[m].total(metric.figure()));
            }
        }
        let in_slice = |c: usize| {
            members
                .contains(&c)
                .then(|| cell_of(&data.configs[c]))
                .flatten()
        };
        Heatmap {
            metric,
            axis: metric.axis(&data.summary.tokens),
            chosen: in_slice(chosen),
            baseline: in_slice(baseline),
            anchor_label: data.configs[anchor].label.clone(),
            compares_policies: data.compares_policies(),
            chosen_policy: Some(data.configs[chosen].setup.policy).filter(|&p| p != Policy::Smith),
            range: value_range(&cells),
            baseline_name: data.baseline_name(),
            at,
            to,
            cells,
        }
    }

    fn colour(&self, v: f64) -> RGBColor {
        let (lo, hi) = self.range;
        palette::ramp(if hi > lo { (v - lo) / (hi - lo) } else { 0.0 })
    }
}

/// The lowest and highest value of any cell, `(0, 1)` when there is none.
fn value_range(cells: &[Vec<Option<f64>>]) -> (f64, f64) {
    let values = cells.iter().flatten().flatten().copied();
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        (0.0, 1.0)
    } else {
        (lo, hi)
    }
}

impl Chart for Heatmap {
    fn stem(&self) -> String {
        "heatmap".to_string()
    }

    fn title(&self) -> String {
        let mut t = format!("{} by compact_at × compact_to", self.metric.name());
        if self.compares_policies {
            t.push_str(", smith's configs");
        }
        t
    }

    fn caption(&self) -> String {
        let base = &self.baseline_name;
        let outlines = match (self.chosen.is_some(), self.baseline.is_some()) {
            (true, true) => {
                format!("The chosen config's cell has a black outline, {base} a dashed grey one")
            }
            (true, false) => format!(
                "The chosen config's cell has a black outline; {base} differs from these configs in a knob or its \
                 policy, so it has no cell here"
            ),
            (false, true) => match self.chosen_policy {
                Some(_) => format!("{base} has the dashed grey outline"),
                None => format!(
                    "{base} has the dashed grey outline; the chosen config differs from these in another knob, so \
                     it has no cell here"
                ),
            },
            (false, false) => format!("Neither the chosen config nor {base} is in this slice"),
        };
        let mut s = format!(
            "Each cell is one config: where compaction acts (compact_at, across) and what it aims at (compact_to, up), \
             coloured by {}, lighter is lower. The other knobs are held as in {}. {outlines}; blank cells are pairs the \
             sweep did not run (a target at or above the trigger). `report --metric` picks another figure.",
            self.axis,
            self.anchor_label
        );
        if self.compares_policies {
            s.push_str(
                " Only smith's configs are here: compact_at and compact_to are smith's knobs, which the other policies \
                 do not have",
            );
            match self.chosen_policy {
                Some(p) => s.push_str(&format!(
                    "; the chosen config is {p}'s, so it has no cell (the Policies section compares it)."
                )),
                None => s.push_str(" (the Policies section compares them)."),
            }
        }
        s
    }

    fn words(&self) -> Option<String> {
        self.one_cell()
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (w, _) = area.dim_in_pixel();
        let (main, bar) = area.split_horizontally(w.saturating_sub(230));
        let (nx, ny) = (self.at.len() as i32, self.to.len() as i32);
        let mut chart = ChartBuilder::on(&main)
            .margin(14)
            .x_label_area_size(64)
            .y_label_area_size(96)
            .build_cartesian_2d(-0.5..nx as f64 - 0.5, -0.5..ny as f64 - 0.5)?;
        let (at, to): (Vec<String>, Vec<String>) = (
            self.at.iter().map(|&v| fraction(v)).collect(),
            self.to.iter().map(|&v| fraction(v)).collect(),
        );
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(self.at.len() + 1)
            .y_labels(self.to.len() + 1)
            .x_label_formatter(&|v| label_at(&at, *v))
            .y_label_formatter(&|v| label_at(&to, *v))
            .x_desc("compact_at: compact above this fraction of the window")
            .y_desc("compact_to: compact down to this fraction")
            .label_style(font(font_size::TICK))
            .axis_desc_style(font(font_size::AXIS))
            .draw()?;

        let annotate = self.at.len() <= MAX_ANNOTATED && self.to.len() <= MAX_ANNOTATED;
        let cell = |i: usize, j: usize| {
            let (x, y) = (i as f64, j as f64);
            [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)]
        };
        for (i, column) in self.cells.iter().enumerate() {
            for (j, v) in column.iter().enumerate() {
                let fill = v.map_or(palette::EMPTY_CELL, |v| self.colour(v));
                chart.draw_series(std::iter::once(Rectangle::new(cell(i, j), fill.filled())))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    cell(i, j),
                    WHITE.stroke_width(2),
                )))?;
                if annotate {
                    let ink = if palette::is_dark(fill) { WHITE } else { BLACK };
                    let text = v.map_or("–".to_string(), |v| self.metric.format(v));
                    let style = (FONT, font_size::TICK)
                        .into_font()
                        .color(&ink)
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    chart.draw_series(std::iter::once(Text::new(
                        text,
                        (i as f64, j as f64),
                        style,
                    )))?;
                }
            }
        }
        if let Some((i, j)) = self.baseline {
            if self.chosen != Some((i, j)) {
                let [(x0, y0), (x1, y1)] = cell(i, j);
                let ring = vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)];
                draw_line(
                    &mut chart,
                    ring,
                    palette::BASELINE.stroke_width(4),
                    Dash::Dashed,
                )?;
            }
        }
        if let Some((i, j)) = self.chosen {
            chart.draw_series(std::iter::once(Rectangle::new(
                cell(i, j),
                palette::CHOSEN.stroke_width(4),
            )))?;
        }

        // The colour bar; with one value there is no scale to read.
        let (lo, hi) = self.range;
        let (_, bh) = bar.dim_in_pixel();
        let bh = bh as i32;
        if hi > lo {
            self.draw_scale(&bar, lo, hi)?;
        } else {
            bar.draw(&Rectangle::new(
                [(4, 14), (60, 70)],
                self.colour(lo).filled(),
            ))?;
            draw_note(
                &bar,
                &format!("every cell: {}", self.metric.format(lo)),
                (4, 90),
            )?;
        }
        draw_note(&bar, self.metric.figure().name(), (4, bh - 132))?;
        draw_note(&bar, "(sum over sessions)", (4, bh - 110))?;
        if self.chosen.is_some() {
            draw_note(&bar, "black frame: chosen", (4, bh - 76))?;
        }
        if self.baseline.is_some() && self.baseline != self.chosen {
            draw_note(
                &bar,
                &format!("dashed: {}", self.baseline_name),
                (4, bh - 54),
            )?;
        }
        Ok(())
    }
}

impl Heatmap {
    /// What [`Chart::words`] says when at most one cell has a value: one
    /// colour on a scale of one value compares nothing.
    fn one_cell(&self) -> Option<String> {
        let mut filled = self.cells.iter().enumerate().flat_map(|(i, column)| {
            column
                .iter()
                .enumerate()
                .filter_map(move |(j, v)| v.map(|v| (i, j, v)))
        });
        let first = filled.next();
        if filled.next().is_some() {
            return None;
        }
        let what = format!(
            "This chart colours each pair of compact_at (where compaction acts) and compact_to (what it aims at) \
             that smith's configs ran by {}",
            self.axis
        );
        Some(match first {
            Some((i, j, v)) => format!(
                "{what}; the sweep ran one pair, {} / {} (the other knobs as in {}), at {}, so there is one cell and \
                 nothing to compare it with. Sweep several values of --compact-at or --compact-to to see how {} \
                 changes with them.",
                fraction(self.at[i]),
                fraction(self.to[j]),
                self.anchor_label,
                self.metric.format(v),
                self.metric.name().to_lowercase()
            ),
            None => format!(
                "{what}; no config of smith's shares its other knobs with the compared config or {}, so there is \
                 no cell to draw.",
                self.baseline_name
            ),
        })
    }

    /// The colour bar from `lo` to `hi`, labelled in the metric's unit.
    fn draw_scale<DB: DrawingBackend>(
        &self,
        bar: &DrawingArea<DB, Shift>,
        lo: f64,
        top: f64,
    ) -> DrawResult<DB> {
        let mut scale = ChartBuilder::on(bar)
            .margin_top(14)
            .margin_bottom(150)
            .margin_right(10)
            .y_label_area_size(0)
            .right_y_label_area_size(110)
            .build_cartesian_2d(0f64..1f64, lo..top)?;
        scale
            .configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_labels(6)
            .y_label_formatter(&|v| self.metric.format(*v))
            .label_style(font(font_size::TICK))
            .draw()?;
        let steps = 64;
        scale.draw_series((0..steps).map(|k| {
            let a = lo + (top - lo) * k as f64 / steps as f64;
            let b = lo + (top - lo) * (k + 1) as f64 / steps as f64;
            Rectangle::new([(0.0, a), (1.0, b)], self.colour((a + b) / 2.0).filled())
        }))?;
        Ok(())
    }
}
