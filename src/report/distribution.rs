//! The distribution of a loss per session (tool results mangled, needed
//! again or lost: see [`Loss`]), under smith's defaults and under the chosen
//! config, whatever its policy: a box (quartiles, median, whiskers to the
//! extremes) over one dot per session, each session's two dots joined so a
//! reader sees which sessions got better and which worse, not only whether
//! the totals moved.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::SweepOutput;
use super::draw::{draw_legend, font, Dash, Swatch};
use super::palette;
use super::{font_size, Chart, DrawResult, Loss, FONT};
use crate::format::{count, plural};
use crate::policy::Policy;
use crate::stats::percentile;

/// The chart: the columns across, a loss count up.
type Plot<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Beyond this many sessions the pairs are not joined (a grey wash).
const MAX_JOINED: usize = 300;

/// A per-session loss under two configs.
#[derive(Clone, Debug)]
pub(crate) struct Distribution {
    /// What is counted.
    pub(crate) loss: Loss,
    /// The loss per session, same session order in both.
    pub(crate) baseline: Vec<f64>,
    pub(crate) chosen: Vec<f64>,
    chosen_rank: usize,
    chosen_label: String,
    chosen_policy: Policy,
    /// The chosen config is the baseline.
    same: bool,
    baseline_name: String,
}

/// Quartiles and extremes of `values`.
fn five(values: &[f64]) -> [f64; 5] {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let (Some(&lo), Some(&hi)) = (v.first(), v.last()) else {
        return [0.0; 5];
    };
    let at = |p| percentile(&v, p).unwrap_or(f64::NAN);
    [lo, at(25.0), at(50.0), at(75.0), hi]
}

/// One column at `x`: the box of [`five`] with its whiskers, a dot per
/// session spread by [`jitter`], and the median and mean above the top
/// whisker, where no dot can be.
fn draw_column<DB: DrawingBackend>(
    chart: &mut Plot<'_, DB>,
    x: f64,
    values: &[f64],
    colour: RGBColor,
    radius: i32,
    spread: f64,
) -> DrawResult<DB> {
    let [lo, q1, med, q3, hi] = five(values);
    let half = 0.28;
    let style = colour.stroke_width(2);
    chart.draw_series([
        PathElement::new(vec![(x, lo), (x, q1)], style),
        PathElement::new(vec![(x, q3), (x, hi)], style),
        PathElement::new(vec![(x - half / 2.0, lo), (x + half / 2.0, lo)], style),
        PathElement::new(vec![(x - half / 2.0, hi), (x + half / 2.0, hi)], style),
    ])?;
    chart.draw_series(std::iter::once(Rectangle::new(
        [(x - half, q1), (x + half, q3)],
        style,
    )))?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(x - half, med), (x + half, med)],
        colour.stroke_width(4),
    )))?;
    chart.draw_series(values.iter().enumerate().map(|(i, &v)| {
        Circle::new(
            (x + jitter(i) * spread, v),
            radius,
            colour.mix(0.75).filled(),
        )
    }))?;
    let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
    let note = (FONT, font_size::NOTE)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    chart.draw_series(std::iter::once(
        EmptyElement::at((x, hi))
            + Text::new(
                format!(
                    "median {}, mean {}",
                    count(med),
                    count((mean * 10.0).round() / 10.0)
                ),
                (0, -12),
                note,
            ),
    ))?;
    Ok(())
}

/// A deterministic spread in `[-1, 1]` for the `i`th dot (golden-ratio
/// sequence), so dots with equal values do not hide each other.
fn jitter(i: usize) -> f64 {
    ((i as f64 * 0.618_033_988_75).fract() - 0.5) * 2.0
}

impl Distribution {
    /// `loss` per session under the baseline and `chosen`.
    pub(crate) fn new(
        data: &SweepOutput,
        chosen: usize,
        loss: Loss,
    ) -> anyhow::Result<Distribution> {
        let base = data.baseline()?;
        let values = data.per_session(loss.figure())?;
        let c = &data.configs[chosen];
        Ok(Distribution {
            loss,
            baseline: values.iter().map(|s| s[base]).collect(),
            chosen: values.iter().map(|s| s[chosen]).collect(),
            chosen_rank: c.rank,
            chosen_label: data.name(chosen),
            chosen_policy: c.setup.policy,
            same: chosen == base,
            baseline_name: data.baseline_name(),
        })
    }

    /// Sessions better, equal and worse under the chosen config.
    pub(crate) fn moved(&self) -> (usize, usize, usize) {
        let mut n = (0, 0, 0);
        for (b, c) in self.baseline.iter().zip(&self.chosen) {
            match c.total_cmp(b) {
                std::cmp::Ordering::Less => n.0 += 1,
                std::cmp::Ordering::Equal => n.1 += 1,
                std::cmp::Ordering::Greater => n.2 += 1,
            }
        }
        n
    }
}

impl Chart for Distribution {
    fn stem(&self) -> String {
        "distribution".to_string()
    }

    fn title(&self) -> String {
        format!(
            "{} per session ({})",
            self.loss.name(),
            plural(self.baseline.len(), "session")
        )
    }

    fn caption(&self) -> String {
        let (better, equal, worse) = self.moved();
        if self.same {
            return format!(
                "One dot per session: how many {} under {}, which is also the chosen config. The box \
                 spans the middle half of the sessions, the bar inside is the median, the whiskers reach the extremes. \
                 `report --loss` counts another loss.",
                self.loss.meaning(),
                self.baseline_name
            );
        }
        format!(
            "One dot per session: how many {}, under {} (left) and the chosen config {} (right); the \
             lines join each session's two dots. The box spans the middle half of the sessions, the bar inside is the \
             median, the whiskers reach the extremes. {better} sessions lose fewer results under the chosen config, \
             {worse} lose more, {equal} are unchanged. `report --loss` counts another loss.",
            self.loss.meaning(),
            self.baseline_name,
            self.chosen_label
        )
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (w, _) = area.dim_in_pixel();
        let (main, side) = area.split_horizontally(w.saturating_sub(230));
        let top = self
            .baseline
            .iter()
            .chain(&self.chosen)
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let y_hi = top.max(1.0) * 1.12;
        let columns = self.columns();
        let mut chart = ChartBuilder::on(&main)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(90)
            // A little room below zero: most sessions often lose nothing,
            // and their dots must not hide in the axis.
            .build_cartesian_2d(-0.6f64..1.6f64, -y_hi * 0.04..y_hi)?;
        let names = [columns[0].0.clone(), columns[1].0.clone()];
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(5)
            .x_label_formatter(&|v| {
                let i = v.round();
                if (v - i).abs() < 1e-6 && (0.0..=1.0).contains(&i) {
                    names[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| {
                if v.fract() == 0.0 && *v >= 0.0 {
                    format!("{v:.0}")
                } else {
                    String::new()
                }
            })
            .y_desc(format!("{} in the session (count)", self.loss.short()))
            .label_style(font(font_size::TICK))
            .axis_desc_style(font(font_size::AXIS))
            .bold_line_style(palette::FAINT.mix(0.6))
            .light_line_style(TRANSPARENT)
            .draw()?;

        let spread = 0.16;
        let n = self.baseline.len();
        if n <= MAX_JOINED && !self.same {
            chart.draw_series((0..n).map(|i| {
                let j = jitter(i) * spread;
                PathElement::new(
                    vec![(j, self.baseline[i]), (1.0 + j, self.chosen[i])],
                    palette::FAINT.stroke_width(1),
                )
            }))?;
        }
        let radius = if n > MAX_JOINED { 2 } else { 4 };
        for (x, (_, values, colour)) in columns.iter().enumerate() {
            draw_column(&mut chart, x as f64, values, *colour, radius, spread)?;
        }
        let entries = vec![
            (self.baseline_name.clone(), Swatch::Dot(palette::BASELINE)),
            ("chosen config".to_string(), Swatch::Dot(palette::CHOSEN)),
            (
                "same session".to_string(),
                Swatch::Line(palette::FAINT, 2, Dash::Solid),
            ),
        ];
        draw_legend(&side.margin(16, 0, 6, 0), &entries)
    }
}

impl Distribution {
    /// The two columns: their names, values and colours.
    fn columns(&self) -> [(String, &Vec<f64>, RGBColor); 2] {
        [
            (
                self.baseline_name.clone(),
                &self.baseline,
                palette::BASELINE,
            ),
            (
                if self.chosen_policy == Policy::Smith {
                    format!("chosen config (#{})", self.chosen_rank)
                } else {
                    format!("chosen: {} (#{})", self.chosen_policy, self.chosen_rank)
                },
                &self.chosen,
                palette::CHOSEN,
            ),
        ]
    }
}
