//! Cost against loss: one point per config, what it costs (price, or tokens
//! sent) against what it destroys: tool results mangled (top) and requests
//! whose compaction summarized or dropped the oldest turns (bottom). The
//! Pareto front of cost against results mangled is drawn as a staircase:
//! every config off it has another that costs no more and mangles no more.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::SweepOutput;
use super::draw::{draw_legend, draw_line, font, Dash, Swatch};
use super::format::plural;
use super::palette;
use super::{font_size, Chart, DrawResult, Metric, FONT};
use crate::sweep::pareto;

/// Front points labelled with their rank when there are at most this many.
const MAX_LABELLED: usize = 10;

/// One config.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub rank: usize,
    pub label: String,
    /// Price or tokens sent.
    pub cost: f64,
    pub mangled: f64,
    /// Summaries plus drops.
    pub lost: f64,
    pub is_baseline: bool,
    pub is_chosen: bool,
    /// On the front of cost against results mangled.
    pub front: bool,
}

/// The cost-against-loss chart.
#[derive(Clone, Debug)]
pub struct CostLoss {
    /// [`Metric::Price`] or [`Metric::TokensSent`].
    pub cost: Metric,
    pub points: Vec<Point>,
}

impl CostLoss {
    /// Every config of the sweep; the cost axis is tokens sent when `metric`
    /// is, else price.
    pub fn new(data: &SweepOutput, chosen: usize, metric: Metric) -> CostLoss {
        let cost = if metric == Metric::TokensSent {
            Metric::TokensSent
        } else {
            Metric::Price
        };
        let mut points: Vec<Point> = data
            .configs
            .iter()
            .enumerate()
            .map(|(i, c)| Point {
                rank: c.rank,
                label: c.label.clone(),
                cost: c.total(cost.figure()),
                mangled: c.total("results_mangled"),
                lost: c.total("summaries") + c.total("drops"),
                is_baseline: c.is_baseline,
                is_chosen: i == chosen,
                front: false,
            })
            .collect();
        let on = pareto::front(
            &points
                .iter()
                .map(|p| (p.cost, p.mangled))
                .collect::<Vec<_>>(),
        );
        for (p, on) in points.iter_mut().zip(on) {
            p.front = on;
        }
        CostLoss { cost, points }
    }

    fn x_range(&self) -> (f64, f64) {
        let (lo, hi) = self
            .points
            .iter()
            .map(|p| p.cost)
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if lo > hi {
            return (0.0, 1.0);
        }
        let pad = if hi > lo {
            (hi - lo) * 0.08
        } else {
            hi.abs().max(1e-6) * 0.05
        };
        ((lo - pad).max(0.0), hi + pad)
    }

    /// Draws one panel: `y` of every point against its cost.
    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        y: fn(&Point) -> f64,
        y_desc: &str,
        x_desc: Option<&str>,
        staircase: bool,
    ) -> DrawResult<DB> {
        let (x_lo, x_hi) = self.x_range();
        let y_hi = self.points.iter().map(y).fold(0.0, f64::max).max(1.0) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .margin_left(10)
            .margin_right(24)
            .margin_top(8)
            .x_label_area_size(if x_desc.is_some() { 56 } else { 30 })
            .y_label_area_size(90)
            .build_cartesian_2d(x_lo..x_hi, 0f64..y_hi)?;
        let cost = self.cost;
        let x_label = |v: &f64| cost.format(*v);
        let y_label = |v: &f64| {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.y_desc(y_desc)
            .x_labels(8)
            .y_labels(6)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style(font(font_size::TICK))
            .axis_desc_style(font(font_size::AXIS))
            .bold_line_style(palette::FAINT.mix(0.6))
            .light_line_style(TRANSPARENT);
        if let Some(d) = x_desc {
            mesh.x_desc(d);
        }
        mesh.draw()?;

        chart.draw_series(
            self.points
                .iter()
                .filter(|p| !p.front)
                .map(|p| Circle::new((p.cost, y(p)), 4, palette::OTHER.filled())),
        )?;
        let mut front: Vec<&Point> = self.points.iter().filter(|p| p.front).collect();
        front.sort_by(|a, b| a.cost.total_cmp(&b.cost));
        if staircase && front.len() > 1 {
            let mut steps = Vec::new();
            for (k, p) in front.iter().enumerate() {
                if k > 0 {
                    steps.push((p.cost, y(front[k - 1])));
                }
                steps.push((p.cost, y(p)));
            }
            draw_line(
                &mut chart,
                steps,
                palette::CHOSEN.stroke_width(2),
                Dash::Solid,
            )?;
        }
        chart.draw_series(
            front
                .iter()
                .map(|p| Circle::new((p.cost, y(p)), 6, palette::CHOSEN.filled())),
        )?;
        let tag = (FONT, font_size::NOTE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        if front.len() <= MAX_LABELLED {
            chart.draw_series(front.iter().filter(|p| !p.is_chosen && !p.is_baseline).map(
                |p| {
                    EmptyElement::at((p.cost, y(p)))
                        + Text::new(format!("#{}", p.rank), (7, -5), tag.clone())
                },
            ))?;
        }
        for p in self.points.iter().filter(|p| p.is_baseline) {
            chart.draw_series(std::iter::once(
                EmptyElement::at((p.cost, y(p)))
                    + Rectangle::new([(-9, -9), (9, 9)], palette::BASELINE.stroke_width(3))
                    + Text::new("smith's defaults".to_string(), (12, -10), tag.clone()),
            ))?;
        }
        for p in self.points.iter().filter(|p| p.is_chosen) {
            let name = if p.is_baseline {
                String::new()
            } else {
                format!("#{} chosen", p.rank)
            };
            chart.draw_series(std::iter::once(
                EmptyElement::at((p.cost, y(p)))
                    + Circle::new((0, 0), 11, palette::CHOSEN.stroke_width(2))
                    + Text::new(
                        name,
                        (13, 18),
                        tag.clone().pos(Pos::new(HPos::Left, VPos::Top)),
                    ),
            ))?;
        }
        Ok(())
    }
}

impl Chart for CostLoss {
    fn stem(&self) -> String {
        "cost-loss".to_string()
    }

    fn title(&self) -> String {
        format!("Cost against loss: {}", plural(self.points.len(), "config"))
    }

    fn caption(&self) -> String {
        let front = self.points.iter().filter(|p| p.front).count();
        format!(
            "One point per config. Across: {}. Up, top: tool results whose content compaction cut to a head or a stub; \
             bottom: requests whose compaction replaced the oldest turns by a summary or dropped them. Lower and further \
             left is better. The {front} black points joined by the staircase are the Pareto front: no other config is \
             both cheaper and mangles fewer results. The square is smith's defaults, the ring the chosen config.",
            self.cost.axis()
        )
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (w, h) = area.dim_in_pixel();
        let (main, side) = area.split_horizontally(w.saturating_sub(230));
        let (top, bottom) = main.split_vertically((h as f64 * 0.58) as u32);
        self.panel(&top, |p| p.mangled, "results mangled (count)", None, true)?;
        self.panel(
            &bottom,
            |p| p.lost,
            "summaries + drops (count)",
            Some(self.cost.axis()),
            false,
        )?;
        let entries = vec![
            ("config".to_string(), Swatch::Dot(palette::OTHER)),
            ("Pareto front".to_string(), Swatch::Dot(palette::CHOSEN)),
            (
                "smith's defaults".to_string(),
                Swatch::Square(palette::BASELINE),
            ),
            ("chosen config".to_string(), Swatch::Ring(palette::CHOSEN)),
        ];
        draw_legend(&side.margin(16, 0, 6, 0), &entries)
    }
}
