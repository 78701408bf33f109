//! Stage contribution: for each config (the best [`TOP_CONFIGS`] and the
//! baseline), the tokens each stage reclaimed over every session and request,
//! stacked in stage order. A stage that grew the history (a summary stand-in
//! larger than what it replaced) is drawn left of zero.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::data::SweepOutput;
use super::draw::{draw_legend, draw_note, font, label_at, Swatch};
use super::palette;
use super::{font_size, Chart, DrawResult, TOP_CONFIGS};
use crate::engine::Stage;
use crate::format::tokens;
use crate::sweep::figures::Metric;

/// One bar.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bar {
    /// `#rank label`, and whether it is the baseline or the chosen config.
    pub(crate) label: String,
    pub(crate) is_baseline: bool,
    pub(crate) is_chosen: bool,
    /// Tokens reclaimed by each stage, by [`Stage::index`].
    pub(crate) reclaimed: [f64; 6],
}

/// The stage-contribution bars.
#[derive(Clone, Debug)]
pub(crate) struct StageBars {
    /// Top to bottom: best rank first.
    pub(crate) bars: Vec<Bar>,
    /// Configs of the sweep not shown.
    pub(crate) hidden: usize,
    /// The sweep compared policies: labels name them, the caption says how
    /// their actions count as stages.
    compares_policies: bool,
    baseline_name: String,
    /// How the history's tokens were counted (a stage reclaims tokens of
    /// the history, before any ratio).
    units: String,
}

impl StageBars {
    /// The bars of the best [`TOP_CONFIGS`] configs, the chosen one and the
    /// baseline, in rank order.
    pub(crate) fn new(data: &SweepOutput, chosen: usize) -> StageBars {
        let mut shown: Vec<usize> = data.by_rank().into_iter().take(TOP_CONFIGS).collect();
        for extra in [Some(chosen), data.baseline().ok()].into_iter().flatten() {
            if !shown.contains(&extra) {
                shown.push(extra);
            }
        }
        shown.sort_by_key(|&i| (data.configs[i].rank, i));
        let bars = shown
            .iter()
            .map(|&i| {
                let c = &data.configs[i];
                let mut reclaimed = [0.0; 6];
                for s in Stage::ALL {
                    reclaimed[s.index()] = c.total(Metric::reclaimed(s));
                }
                Bar {
                    label: format!("#{} {}", c.rank, data.name(i)),
                    is_baseline: c.is_baseline,
                    is_chosen: i == chosen,
                    reclaimed,
                }
            })
            .collect();
        StageBars {
            bars,
            hidden: data.configs.len() - shown.len(),
            compares_policies: data.compares_policies(),
            baseline_name: data.baseline_name(),
            units: data.summary.tokens.history_axis(),
        }
    }

    /// The x range: the most negative and most positive stack.
    fn range(&self) -> (f64, f64) {
        let mut lo: f64 = 0.0;
        let mut hi: f64 = 0.0;
        for b in &self.bars {
            let pos: f64 = b.reclaimed.iter().filter(|v| **v > 0.0).sum();
            let neg: f64 = b.reclaimed.iter().filter(|v| **v < 0.0).sum();
            hi = hi.max(pos);
            lo = lo.min(neg);
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        let pad = (hi - lo) * 0.03;
        (if lo < 0.0 { lo - pad } else { 0.0 }, hi + pad)
    }

    /// How many x ticks to ask for over `lo..hi`: at most ten, and no more
    /// than one per whole token, so that ticks a token apart do not round
    /// to the same label ("0 0 0 1 1 1") when little or nothing was
    /// reclaimed.
    pub(crate) fn x_ticks(lo: f64, hi: f64) -> usize {
        ((hi - lo).floor() as usize + 1).clamp(2, 10)
    }
}

impl Chart for StageBars {
    fn stem(&self) -> String {
        "stages".to_string()
    }

    fn title(&self) -> String {
        "Tokens reclaimed per stage, by config".to_string()
    }

    fn caption(&self) -> String {
        let mut s = "Each bar is one config, best rank at the top: how many tokens of history each compaction stage removed, \
                     summed over every request of every session. Cheap stages (thinking, duplicates) reclaim without losing \
                     anything the model still needs; truncate, summarize and drop lose content."
            .to_string();
        if self.compares_policies {
            s.push_str(
                " The other policies' actions count under the stage they resemble: a result replaced by a placeholder \
                 (masked, cleared, pruned) or capped on arrival under truncate, the history replaced by a summary under \
                 summarize (drop when the summary fails).",
            );
        }
        if self.hidden > 0 {
            s.push_str(&format!(
                " {} more configs are not drawn; configs.csv has reclaimed_<stage> for all of them.",
                self.hidden
            ));
        }
        s
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (w, _) = area.dim_in_pixel();
        let (main, side) = area.split_horizontally(w.saturating_sub(190));
        let n = self.bars.len();
        let (lo, hi) = self.range();
        // Row 0 (the best) at the top: bar `i` sits at y = n - 1 - i.
        let labels: Vec<String> = self
            .bars
            .iter()
            .rev()
            .map(|b| {
                let mark = match (b.is_chosen, b.is_baseline) {
                    (true, true) => "  ◆ ■",
                    (true, false) => "  ◆",
                    (false, true) => "  ■",
                    _ => "",
                };
                format!("{}{mark}", b.label)
            })
            .collect();
        let mut chart = ChartBuilder::on(&main)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(330)
            .build_cartesian_2d(lo..hi, -0.5..n as f64 - 0.5)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n + 1)
            .y_label_formatter(&|v| label_at(&labels, *v))
            .x_labels(StageBars::x_ticks(lo, hi))
            .x_label_formatter(&|v| tokens(*v))
            .x_desc(format!("tokens reclaimed, all sessions ({})", self.units))
            .label_style(font(if n > 14 {
                font_size::TICK - 2
            } else {
                font_size::TICK
            }))
            .axis_desc_style(font(font_size::AXIS))
            .bold_line_style(palette::FAINT.mix(0.6))
            .light_line_style(TRANSPARENT)
            .draw()?;
        for s in Stage::ALL {
            let colour = palette::stage(s);
            chart.draw_series(self.bars.iter().enumerate().filter_map(|(i, b)| {
                let v = b.reclaimed[s.index()];
                if v == 0.0 {
                    return None;
                }
                // Stack after the earlier stages with the same sign.
                let before: f64 = b.reclaimed[..s.index()]
                    .iter()
                    .filter(|x| x.signum() == v.signum())
                    .sum();
                let y = (n - 1 - i) as f64;
                Some(Rectangle::new(
                    [(before, y - 0.36), (before + v, y + 0.36)],
                    colour.filled(),
                ))
            }))?;
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, -0.5), (0.0, n as f64 - 0.5)],
            BLACK.stroke_width(1),
        )))?;

        let entries: Vec<(String, Swatch)> = Stage::ALL
            .iter()
            .map(|&s| (s.as_str().to_string(), Swatch::Fill(palette::stage(s))))
            .collect();
        let side = side.margin(16, 0, 4, 0);
        draw_legend(&side, &entries)?;
        let y = 14 + 30 * entries.len() as i32 + 12;
        draw_note(&side, "◆ chosen config", (6, y))?;
        draw_note(&side, &format!("■ {}", self.baseline_name), (6, y + 22))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_no_closer_than_a_token() {
        // Nothing reclaimed: the range is 0..1.03, ticked 0 and 1.
        assert_eq!(StageBars::x_ticks(0.0, 1.03), 2);
        assert_eq!(StageBars::x_ticks(0.0, 5.2), 6);
        assert_eq!(StageBars::x_ticks(-2.0, 1e6), 10);
    }
}
