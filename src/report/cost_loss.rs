//! Cost against loss: one point per config, what it costs (price, or tokens
//! sent) against what it destroys: a loss of tool results (top: results
//! mangled, needed again or lost, see [`Loss`]) and requests whose
//! compaction summarized or dropped the oldest turns (bottom). The Pareto
//! front of cost against that loss is drawn as a staircase: every config off
//! it has another that costs no more and loses no more. When the sweep
//! compared policies every point has its policy's colour and marker, and the
//! front's points are named by policy and config beside the chart.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::SweepOutput;
use super::draw::{draw_legend, draw_line, draw_marker, draw_note, font, Dash, Swatch};
use super::palette;
use super::{font_size, Chart, DrawResult, Loss, Metric, FONT};
use crate::format::plural;

use crate::policy::Policy;
use crate::sweep::{figures, pareto};

/// A panel's chart: cost across, a loss up.
type Plot<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Front points labelled with their rank when there are at most this many.
const MAX_LABELLED: usize = 10;

/// Front points named beside the chart, best rank first.
const MAX_NAMED: usize = 8;

/// One config.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub(crate) rank: usize,
    /// The config's name, with its policy when the sweep compared policies.
    pub label: String,
    pub policy: Policy,
    /// Price or tokens sent.
    pub cost: f64,
    /// On a price axis, the price plus the expected re-fetches' cost
    /// (`price_with_refetch − price_total`); else `cost`.
    pub(crate) with_refetch: f64,
    /// The loss the chart measures.
    pub loss: f64,
    /// Summaries plus drops.
    pub(crate) summaries: f64,
    pub is_baseline: bool,
    pub(crate) is_chosen: bool,
    /// On the front of cost against the loss.
    pub front: bool,
}

/// The cost-against-loss chart.
#[derive(Clone, Debug)]
pub struct CostLoss {
    /// [`Metric::Price`] or [`Metric::TokensSent`].
    pub(crate) cost: Metric,
    /// What the top panel counts.
    pub(crate) loss: Loss,
    pub points: Vec<Point>,
    /// Points coloured by policy (the sweep compared policies).
    pub by_policy: bool,
    pub(crate) baseline_name: String,
    /// The cost axis's label, in the sweep's units.
    cost_axis: String,
}

impl CostLoss {
    /// Every config of the sweep; the cost axis is tokens sent when `metric`
    /// is, else price; the top panel counts `loss`.
    pub fn new(data: &SweepOutput, chosen: usize, metric: Metric, loss: Loss) -> CostLoss {
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
                label: data.name(i),
                policy: c.setup.policy,
                cost: c.total(cost.figure()),
                with_refetch: c.total(cost.figure())
                    + if cost == Metric::Price {
                        (c.total(figures::Metric::PriceWithRefetch)
                            - c.total(figures::Metric::PriceTotal))
                        .max(0.0)
                    } else {
                        0.0
                    },
                loss: c.total(loss.figure()),
                summaries: c.total(figures::Metric::Summaries) + c.total(figures::Metric::Drops),
                is_baseline: c.is_baseline,
                is_chosen: i == chosen,
                front: false,
            })
            .collect();
        let on = pareto::front(&points.iter().map(|p| (p.cost, p.loss)).collect::<Vec<_>>());
        for (p, on) in points.iter_mut().zip(on) {
            p.front = on;
        }
        CostLoss {
            cost_axis: cost.axis(&data.summary.tokens),
            cost,
            loss,
            points,
            by_policy: data.compares_policies(),
            baseline_name: data.baseline_name(),
        }
    }

    /// The front's points, best rank first.
    pub(crate) fn front(&self) -> Vec<&Point> {
        let mut front: Vec<&Point> = self.points.iter().filter(|p| p.front).collect();
        front.sort_by_key(|p| p.rank);
        front
    }

    fn x_range(&self) -> (f64, f64) {
        let (lo, hi) = self
            .points
            .iter()
            .flat_map(|p| [p.cost, p.with_refetch])
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

        if staircase {
            self.draw_refetches(&mut chart, y)?;
        }
        if self.by_policy {
            for p in self.points.iter().filter(|p| !p.front) {
                draw_marker(
                    &mut chart,
                    (p.cost, y(p)),
                    palette::policy_shape(p.policy),
                    5,
                    palette::policy(p.policy),
                    None,
                )?;
            }
        } else {
            chart.draw_series(
                self.points
                    .iter()
                    .filter(|p| !p.front)
                    .map(|p| Circle::new((p.cost, y(p)), 4, palette::OTHER.filled())),
            )?;
        }
        let mut front: Vec<&Point> = self.points.iter().filter(|p| p.front).collect();
        front.sort_by(|a, b| a.cost.total_cmp(&b.cost));
        self.draw_front(&mut chart, &front, y, staircase)
    }

    /// What each config's expected re-fetches add to its price: a whisker
    /// to the right, ending in a tick.
    fn draw_refetches<DB: DrawingBackend>(
        &self,
        chart: &mut Plot<'_, DB>,
        y: fn(&Point) -> f64,
    ) -> DrawResult<DB> {
        for p in self.points.iter().filter(|p| p.with_refetch > p.cost) {
            let at = y(p);
            draw_line(
                chart,
                vec![(p.cost, at), (p.with_refetch, at)],
                palette::REFETCH.stroke_width(2),
                Dash::Solid,
            )?;
            chart.draw_series(std::iter::once(
                EmptyElement::at((p.with_refetch, at))
                    + PathElement::new(vec![(0, -5), (0, 5)], palette::REFETCH.stroke_width(2)),
            ))?;
        }
        Ok(())
    }

    /// The Pareto front, as a staircase when `staircase`, its configs
    /// larger and outlined and their ranks tagged when few enough to read;
    /// then the defaults' square and the chosen config's ring.
    fn draw_front<DB: DrawingBackend>(
        &self,
        chart: &mut Plot<'_, DB>,
        front: &[&Point],
        y: fn(&Point) -> f64,
        staircase: bool,
    ) -> DrawResult<DB> {
        if staircase && front.len() > 1 {
            let mut steps = Vec::new();
            for (k, p) in front.iter().enumerate() {
                if k > 0 {
                    steps.push((p.cost, y(front[k - 1])));
                }
                steps.push((p.cost, y(p)));
            }
            draw_line(chart, steps, palette::CHOSEN.stroke_width(2), Dash::Solid)?;
        }
        if self.by_policy {
            for p in front {
                draw_marker(
                    chart,
                    (p.cost, y(p)),
                    palette::policy_shape(p.policy),
                    8,
                    palette::policy(p.policy),
                    Some(palette::CHOSEN.stroke_width(2)),
                )?;
            }
        } else {
            chart.draw_series(
                front
                    .iter()
                    .map(|p| Circle::new((p.cost, y(p)), 6, palette::CHOSEN.filled())),
            )?;
        }
        let tag = (FONT, font_size::NOTE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        if staircase && front.len() <= MAX_LABELLED {
            chart.draw_series(front.iter().filter(|p| !p.is_chosen && !p.is_baseline).map(
                |p| {
                    let tag_text = if self.by_policy {
                        format!("#{} {}", p.rank, p.policy)
                    } else {
                        format!("#{}", p.rank)
                    };
                    EmptyElement::at((p.cost, y(p))) + Text::new(tag_text, (9, -6), tag.clone())
                },
            ))?;
        }
        for p in self.points.iter().filter(|p| p.is_baseline) {
            chart.draw_series(std::iter::once(
                EmptyElement::at((p.cost, y(p)))
                    + Rectangle::new([(-9, -9), (9, 9)], palette::BASELINE.stroke_width(3))
                    + Text::new(self.baseline_name.clone(), (12, -10), tag.clone()),
            ))?;
        }
        for p in self.points.iter().filter(|p| p.is_chosen) {
            let name = if p.is_baseline {
                String::new()
            } else if self.by_policy {
                format!("#{} chosen ({})", p.rank, p.policy)
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
        let mut s = format!(
            "One point per config. Across: {}. Up, top: {}; bottom: requests whose compaction replaced the oldest \
             turns by a summary or dropped them. Lower and further left is better. The {front} {} joined by the \
             staircase are the Pareto front: no other config is both cheaper and loses fewer results this way. The \
             square is {}, the ring the chosen config.{}",
            &self.cost_axis,
            self.loss.meaning(),
            if self.by_policy {
                "outlined points"
            } else {
                "black points"
            },
            self.baseline_name,
            if self.cost == Metric::Price {
                " The whisker right of a point is what its expected re-fetches would add to its price \
                 (price_with_refetch − price_total: lost results the agent would likely fetch again, each \
                 one more request over the context, priced by the re-fetch model of src/loss/refetch.rs); \
                 the chosen config is the one cheapest with them."
            } else {
                ""
            },
        );
        if self.by_policy {
            s.push_str(
                " Colour and shape give each config's policy. Results mangled counts only cuts and stubs, which \
                 flatters the policies that summarise instead; `report --loss` picks results_mangled, still_needed, \
                 needed_again or results_lost.",
            );
        } else {
            s.push_str(
                " `report --loss` picks results_mangled, still_needed, needed_again or results_lost.",
            );
        }
        s
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (w, h) = area.dim_in_pixel();
        let (main, side) = area.split_horizontally(w.saturating_sub(250));
        let (top, bottom) = main.split_vertically((h as f64 * 0.58) as u32);
        self.panel(&top, |p| p.loss, self.loss.axis(), None, true)?;
        self.panel(
            &bottom,
            |p| p.summaries,
            "summaries + drops (count)",
            Some(&self.cost_axis),
            false,
        )?;
        let mut entries = Vec::new();
        if self.by_policy {
            let mut policies: Vec<Policy> = self.points.iter().map(|p| p.policy).collect();
            policies.sort_by_key(|&p| Policy::ALL.iter().position(|&q| q == p));
            policies.dedup();
            for p in policies {
                entries.push((
                    p.as_str().to_string(),
                    Swatch::Marker(palette::policy(p), palette::policy_shape(p)),
                ));
            }
            entries.push((
                "Pareto front".to_string(),
                Swatch::Line(palette::CHOSEN, 2, Dash::Solid),
            ));
        } else {
            entries.push(("config".to_string(), Swatch::Dot(palette::OTHER)));
            entries.push(("Pareto front".to_string(), Swatch::Dot(palette::CHOSEN)));
        }
        entries.push((
            self.baseline_name.clone(),
            Swatch::Square(palette::BASELINE),
        ));
        entries.push(("chosen config".to_string(), Swatch::Ring(palette::CHOSEN)));
        if self.cost == Metric::Price && self.points.iter().any(|p| p.with_refetch > p.cost) {
            entries.push((
                "+ expected re-fetches".to_string(),
                Swatch::Line(palette::REFETCH, 2, Dash::Solid),
            ));
        }
        let side = side.margin(16, 0, 6, 0);
        draw_legend(&side, &entries)?;
        if self.by_policy {
            // The front by name: the tags on the chart give rank and policy.
            let mut y = 14 + 30 * entries.len() as i32 + 8;
            draw_note(&side, "front, best rank first:", (6, y))?;
            y += 22;
            let front = self.front();
            for p in front.iter().take(MAX_NAMED) {
                let text = format!("#{} {}", p.rank, p.label);
                let text = if text.chars().count() > 30 {
                    format!("{}…", text.chars().take(29).collect::<String>())
                } else {
                    text
                };
                draw_note(&side, &text, (6, y))?;
                y += 20;
            }
            if front.len() > MAX_NAMED {
                draw_note(
                    &side,
                    &format!("and {} more", front.len() - MAX_NAMED),
                    (6, y),
                )?;
            }
        }
        Ok(())
    }
}
