//! The context curve of one session: how large each request was, with no
//! compaction at all, under smith's defaults and under the chosen config,
//! against the window, trigger and target; each compaction marked, and the
//! stages that fired at it shown in one lane per stage below.
//!
//! The numbers come from replaying the session again (the sweep keeps only
//! sums), each config under its own policy, as the sweep ran it (its
//! [`Setup`](crate::policy::Setup)'s compactor: smith's engine for smith's configs, the policy's
//! model for the others). The "no compaction" curve is the estimate of the
//! whole recorded prefix before each request, charged as the chosen config
//! charges it (overhead and ratio), which is what smith would have sent had
//! it never compacted. The trigger and target lines are the policy's own
//! thresholds (see `Setup::budget`).

use std::sync::Arc;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::data::ConfigSummary;
use super::draw::{draw_legend, draw_line, draw_note, font, Dash, Swatch};
use super::palette;
use super::{font_size, Chart, DrawResult};
use crate::engine::{Budget, Stage};
use crate::format::tokens;
use crate::policy::Policy;
use crate::replay;
use crate::transcript::Message;

/// A compaction under the chosen config.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The request it happened before.
    pub request: usize,
    /// Charged tokens before and after it.
    pub(crate) before: i64,
    pub(crate) after: i64,
    /// The stages that changed something, in the order they ran.
    pub stages: Vec<Stage>,
}

/// The context curve of one session.
#[derive(Clone, Debug)]
pub struct ContextCurve {
    session: String,
    stem: String,
    chosen_label: String,
    chosen_rank: usize,
    chosen_policy: Policy,
    baseline_label: String,
    /// What the baseline is called ([`super::data::baseline_name`]).
    baseline_name: String,
    /// The chosen config is the baseline: one curve, not two.
    same: bool,
    /// Per request: the whole prefix, charged.
    pub full: Vec<i64>,
    /// Per request: tokens sent under the chosen config and the baseline.
    pub chosen: Vec<i64>,
    pub baseline: Vec<i64>,
    /// Compactions under the chosen config.
    pub marks: Vec<Mark>,
    /// Requests that first sent results the policy capped as they entered
    /// the history (Codex), not as a compaction: drawn hollow in the
    /// truncate lane.
    pub capped_on_arrival: Vec<usize>,
    budget: Budget,
    base_budget: Budget,
    /// The y axis's unit: how the sweep counted tokens.
    units: String,
}

impl ContextCurve {
    /// Replays `messages` under `chosen` and `baseline`, each with its own
    /// policy, and measures the uncompacted prefix before every request.
    pub fn new(
        session: &str,
        stem: String,
        messages: &[Arc<Message>],
        chosen: &ConfigSummary,
        baseline: &ConfigSummary,
        units: &crate::sweep::units::TokenUnits,
    ) -> Self {
        let compactor = chosen.setup.compactor_for(messages, None);
        let base =
            (chosen.index != baseline.index).then(|| baseline.setup.compactor_for(messages, None));
        Self::replayed(
            session,
            stem,
            messages,
            chosen,
            baseline,
            (compactor.as_ref(), base.as_deref()),
            units,
        )
    }

    /// [`ContextCurve::new`] replaying with `compactor` for the chosen config
    /// and `base` for the baseline (`None` when they are one config): the
    /// compactors a sweep ran each session's row under.
    pub(crate) fn replayed(
        session: &str,
        stem: String,
        messages: &[Arc<Message>],
        chosen: &ConfigSummary,
        baseline: &ConfigSummary,
        (compactor, base): (
            &dyn crate::engine::Compactor,
            Option<&dyn crate::engine::Compactor>,
        ),
        units: &crate::sweep::units::TokenUnits,
    ) -> Self {
        let budget = *compactor.budget();
        // The uncompacted curve in the chosen config's estimator (bytes / 4
        // unless the sweep varied it).
        let measure = compactor.measure().clone();
        let mut prefix = Vec::with_capacity(messages.len() + 1);
        let mut bytes = 0u64;
        for m in messages {
            prefix.push(bytes);
            bytes += measure.message(m);
        }
        let (mut full, mut sent, mut marks) = (Vec::new(), Vec::new(), Vec::new());
        let mut capped_on_arrival = Vec::new();
        replay::replay_with(messages, compactor, |r, _, _| {
            let at = r.ratio.map_or(budget, |x| budget.at_ratio(x));
            full.push(at.charged(measure.tokens(prefix[r.message_index])));
            sent.push(r.after);
            // A cut without the truncate stage can only be an arrival cap:
            // every compaction that cuts a result runs as that stage.
            if r.effects.results_truncated > 0 && !r.stages.contains(&Stage::Truncate) {
                capped_on_arrival.push(r.request);
            }
            if !r.stages.is_empty() {
                marks.push(Mark {
                    request: r.request,
                    before: r.before,
                    after: r.after,
                    stages: r.stages.clone(),
                });
            }
            true
        });
        let same = chosen.index == baseline.index;
        // The thresholds drawn are the ones replayed: a window that is each
        // session's own is this session's, not the nominal one.
        let base_budget = base.filter(|_| !same).map_or(budget, |c| *c.budget());
        let base = match base.filter(|_| !same) {
            None => sent.clone(),
            Some(compactor) => {
                let mut base = Vec::with_capacity(sent.len());
                replay::replay_with(messages, compactor, |r, _, _| {
                    base.push(r.after);
                    true
                });
                base
            }
        };
        ContextCurve {
            session: session.to_string(),
            stem,
            chosen_label: chosen.label.clone(),
            chosen_rank: chosen.rank,
            chosen_policy: chosen.setup.policy,
            baseline_label: baseline.label.clone(),
            baseline_name: super::data::baseline_name(baseline),
            same,
            full,
            chosen: sent,
            baseline: base,
            marks,
            capped_on_arrival,
            budget,
            base_budget,
            units: units.axis(),
        }
    }

    /// How many compactions each stage fired in.
    pub fn fires(&self) -> [usize; 6] {
        let mut n = [0; 6];
        for m in &self.marks {
            for s in &m.stages {
                n[s.index()] += 1;
            }
        }
        n
    }

    /// Top of the y axis: everything sent and the window, and the
    /// uncompacted curve up to twice that (beyond, it is clipped, or the
    /// compacted curves would be a flat line at the bottom).
    fn y_max(&self) -> f64 {
        let sent = self
            .chosen
            .iter()
            .chain(&self.baseline)
            .copied()
            .max()
            .unwrap_or(0);
        let window = self.budget.max_tokens.max(self.base_budget.max_tokens);
        let floor = sent.max(window) as f64;
        let full = self.full.iter().copied().max().unwrap_or(0) as f64;
        full.clamp(floor, floor * 2.0).max(1.0) * 1.06
    }

    /// The window, trigger and target lines of `b`, each drawn once: a
    /// threshold at the height of one before it joins that one's name (the
    /// other policies aim where they act, masking acts at every request).
    fn thresholds(b: &Budget) -> Vec<(i64, Dash, String)> {
        let mut out: Vec<(i64, Dash, String)> = Vec::new();
        for (y, dash, name) in [
            (b.max_tokens, Dash::Solid, "window"),
            (b.trigger_tokens, Dash::Dashed, "trigger"),
            (b.target_tokens, Dash::Dotted, "target"),
        ] {
            match out.iter_mut().find(|t| t.0 == y) {
                Some(t) => t.2 = format!("{} = {name}", t.2),
                None => out.push((y, dash, name.to_string())),
            }
        }
        out
    }
}

/// Pixels left of both charts for their tick labels, so the curves and
/// the lanes share their x axis.
const Y_LABEL_AREA: u32 = 96;

impl Chart for ContextCurve {
    fn stem(&self) -> String {
        self.stem.clone()
    }

    fn title(&self) -> String {
        format!("Tokens per request: {}", self.session)
    }

    fn caption(&self) -> String {
        let sent: i64 = self.chosen.iter().sum();
        let base: i64 = self.baseline.iter().sum();
        let policy = if self.chosen_policy == Policy::Smith {
            String::new()
        } else {
            format!(", replayed under {}'s policy", self.chosen_policy)
        };
        let mut s = format!(
            "Each point is one request to the model ({} in all). The grey area is the whole recorded history before the request, \
             as smith would have sent it with no compaction; the black line is what the chosen config ({}{policy}) sends",
            self.full.len(),
            self.chosen_label
        );
        if self.same {
            s.push_str(&format!(", which is {}", self.baseline_name));
        } else {
            s.push_str(&format!(
                ", the grey dashed line what {} sends; over the session they send {} against {} tokens",
                self.baseline_name,
                tokens(sent as f64),
                tokens(base as f64)
            ));
        }
        s.push_str(&format!(
            ". Each dot is a compaction, coloured by the last stage it needed; the lanes below show every stage that fired ({} compactions).",
            self.marks.len()
        ));
        if !self.capped_on_arrival.is_empty() {
            s.push_str(&format!(
                " The hollow boxes in the truncate lane are the {} requests that first sent tool results the policy capped \
                 as they entered the history, not in a compaction.",
                self.capped_on_arrival.len()
            ));
        }
        s
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (w, h) = area.dim_in_pixel();
        let (plot, side) = area.split_horizontally(w.saturating_sub(260));
        let (top, lanes) = plot.split_vertically((h as f64 * 0.68) as u32);
        let x_max = (self.full.len().max(2) - 1) as f64;
        let y_max = self.y_max();
        self.draw_curves(&top, x_max, y_max)?;
        self.draw_lanes(&lanes, x_max)?;
        self.draw_side(&side, y_max)
    }
}

impl ContextCurve {
    /// The defaults' thresholds the chosen config does not share, drawn
    /// thin beside its own.
    fn base_lines(&self) -> Vec<(i64, Dash, String)> {
        let mine = Self::thresholds(&self.budget);
        Self::thresholds(&self.base_budget)
            .into_iter()
            .filter(|t| !self.same && !mine.iter().any(|m| m.0 == t.0))
            .collect()
    }

    /// The tokens sent per request: without compaction, under the defaults
    /// and under the chosen config, its thresholds, and each compaction as a
    /// drop from before to after.
    fn draw_curves<DB: DrawingBackend>(
        &self,
        top: &DrawingArea<DB, Shift>,
        x_max: f64,
        y_max: f64,
    ) -> DrawResult<DB> {
        let mut chart = ChartBuilder::on(top)
            .margin_left(10)
            .margin_right(20)
            .margin_top(10)
            .x_label_area_size(30)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        chart
            .configure_mesh()
            .y_desc(format!("tokens sent ({})", self.units))
            .y_label_formatter(&|v| tokens(*v))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .label_style(font(font_size::TICK))
            .axis_desc_style(font(font_size::AXIS))
            .bold_line_style(palette::FAINT.mix(0.6))
            .light_line_style(TRANSPARENT)
            .draw()?;

        let at = |v: &[i64]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(i, &y)| (i as f64, y as f64))
                .collect()
        };
        chart.draw_series(
            AreaSeries::new(at(&self.full), 0.0, palette::NO_COMPACTION_FILL.filled())
                .border_style(palette::NO_COMPACTION_LINE.stroke_width(2)),
        )?;
        let line = |y: i64| vec![(0.0, y as f64), (x_max, y as f64)];
        for (y, dash, _) in Self::thresholds(&self.budget) {
            draw_line(
                &mut chart,
                line(y),
                palette::THRESHOLD.stroke_width(2),
                dash,
            )?;
        }
        for (y, dash, _) in self.base_lines() {
            draw_line(&mut chart, line(y), palette::BASELINE.stroke_width(1), dash)?;
        }
        if !self.same {
            draw_line(
                &mut chart,
                at(&self.baseline),
                palette::BASELINE.stroke_width(2),
                Dash::Dashed,
            )?;
        }
        draw_line(
            &mut chart,
            at(&self.chosen),
            palette::CHOSEN.stroke_width(2),
            Dash::Solid,
        )?;
        for m in &self.marks {
            let last = m.stages.last().copied().unwrap_or(Stage::Truncate);
            let c = palette::stage(last);
            let x = m.request as f64;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, m.before as f64), (x, m.after as f64)],
                c.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Circle::new(
                (x, m.after as f64),
                5,
                c.filled(),
            )))?;
        }
        Ok(())
    }

    /// One lane per stage, first stage on top: a tick where it fired, a
    /// hollow one in truncate where results were capped on arrival.
    fn draw_lanes<DB: DrawingBackend>(
        &self,
        lanes: &DrawingArea<DB, Shift>,
        x_max: f64,
    ) -> DrawResult<DB> {
        let fires = self.fires();
        let lane = |s: Stage| (Stage::ALL.len() - 1 - s.index()) as f64;
        let mut strip = ChartBuilder::on(lanes)
            .margin_left(10)
            .margin_right(20)
            .margin_top(6)
            .x_label_area_size(56)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(0f64..x_max, -0.5f64..5.5f64)?;
        let lane_name = |v: &f64| -> String {
            let i = v.round();
            if (v - i).abs() > 1e-6 || !(0.0..=5.0).contains(&i) {
                return String::new();
            }
            let s = Stage::ALL[Stage::ALL.len() - 1 - i as usize];
            format!("{} ×{}", s.as_str(), fires[s.index()])
        };
        strip
            .configure_mesh()
            .x_desc("request (one per assistant message)")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_labels(12)
            .y_label_formatter(&lane_name)
            .label_style(font(font_size::TICK - 2))
            .axis_desc_style(font(font_size::AXIS))
            .disable_y_mesh()
            .bold_line_style(palette::FAINT.mix(0.6))
            .light_line_style(TRANSPARENT)
            .draw()?;
        let half = (x_max / 500.0).max(0.3);
        for s in Stage::ALL {
            let y = lane(s);
            strip.draw_series(
                self.marks
                    .iter()
                    .filter(|m| m.stages.contains(&s))
                    .map(|m| {
                        let x = m.request as f64;
                        Rectangle::new(
                            [(x - half, y - 0.32), (x + half, y + 0.32)],
                            palette::stage(s).filled(),
                        )
                    }),
            )?;
        }
        let y = lane(Stage::Truncate);
        strip.draw_series(self.capped_on_arrival.iter().map(|&r| {
            let x = r as f64;
            Rectangle::new(
                [(x - half, y - 0.32), (x + half, y + 0.32)],
                palette::stage(Stage::Truncate).stroke_width(2),
            )
        }))?;
        Ok(())
    }

    /// The legend and the notes beside the charts.
    fn draw_side<DB: DrawingBackend>(
        &self,
        side: &DrawingArea<DB, Shift>,
        y_max: f64,
    ) -> DrawResult<DB> {
        let mut entries = vec![(
            "no compaction".to_string(),
            Swatch::Fill(palette::NO_COMPACTION_FILL),
        )];
        if !self.same {
            entries.push((
                self.baseline_name.clone(),
                Swatch::Line(palette::BASELINE, 2, Dash::Dashed),
            ));
        }
        let chosen = if self.same {
            format!("{} (#{})", self.baseline_name, self.chosen_rank)
        } else if self.chosen_policy != Policy::Smith {
            format!("chosen: {} (#{})", self.chosen_policy, self.chosen_rank)
        } else {
            format!("chosen config (#{})", self.chosen_rank)
        };
        entries.push((chosen, Swatch::Line(palette::CHOSEN, 2, Dash::Solid)));
        for (y, dash, name) in Self::thresholds(&self.budget) {
            entries.push((
                format!("{name} {}", tokens(y as f64)),
                Swatch::Line(palette::THRESHOLD, 2, dash),
            ));
        }
        for s in Stage::ALL {
            entries.push((s.as_str().to_string(), Swatch::Fill(palette::stage(s))));
        }
        let side = side.margin(10, 0, 6, 0);
        draw_legend(&side, &entries)?;
        let mut y = 14 + 30 * entries.len() as i32 + 10;
        let mut note = |text: String| {
            let r = draw_note(&side, &text, (6, y));
            y += 22;
            r
        };
        note("chosen:".to_string())?;
        note(format!("  {}", self.chosen_label))?;
        if !self.same {
            note(format!("{}:", self.baseline_name))?;
            note(format!("  {}", self.baseline_label))?;
        }
        if !self.capped_on_arrival.is_empty() {
            note(format!(
                "hollow in truncate: {}",
                self.capped_on_arrival.len()
            ))?;
            note("  requests sending results".to_string())?;
            note("  capped on arrival".to_string())?;
        }
        if !self.base_lines().is_empty() {
            note("thin grey lines: the".to_string())?;
            note("  defaults' thresholds".to_string())?;
        }
        let peak = self.full.iter().copied().max().unwrap_or(0) as f64;
        if peak > y_max {
            note(format!("no compaction peaks at {}", tokens(peak)))?;
            note("(clipped at the top)".to_string())?;
        }
        Ok(())
    }
}
