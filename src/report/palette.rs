//! The colours of every chart, named once.
//!
//! Each compaction stage has one colour, the same in every chart and in the
//! HTML legend, so a reader who learnt that orange is `truncate` on the
//! context curve reads the stage bars without looking at a legend again. The
//! six stage colours are the Okabe–Ito set (distinguishable with the common
//! colour-vision deficiencies, and in greyscale print by their lightness);
//! everything that is not a stage (configs, thresholds, the curve without
//! compaction) is drawn in greys and told apart by line style and marker
//! shape, so no grey can be mistaken for a stage.
//!
//! Each policy (smith and the other agents' policies a sweep compares) has
//! its own colour and marker shape too, the same in every chart that tells
//! policies apart and in the HTML tables. They come from Paul Tol's muted
//! and dark sets, chosen to differ from every stage colour: a chart coloured
//! by policy never shows stages, but a reader who has just learnt the stage
//! colours should not read a policy as one.

use plotters::style::RGBColor;

use crate::engine::Stage;
use crate::policy::Policy;

/// The colour of each stage, by [`Stage::index`].
pub(crate) const STAGES: [RGBColor; 6] = [
    RGBColor(0xCC, 0x79, 0xA7), // thinking: reddish purple
    RGBColor(0x56, 0xB4, 0xE9), // attachments: sky blue
    RGBColor(0x00, 0x9E, 0x73), // duplicates: bluish green
    RGBColor(0xE6, 0x9F, 0x00), // truncate: orange
    RGBColor(0x00, 0x72, 0xB2), // summarize: blue
    RGBColor(0xD5, 0x5E, 0x00), // drop: vermillion
];

/// The colour of `stage`.
pub(crate) fn stage(stage: Stage) -> RGBColor {
    STAGES[stage.index()]
}

/// The colour of each policy, by its position in [`Policy::ALL`].
pub(crate) const POLICIES: [RGBColor; Policy::ALL.len()] = [
    RGBColor(0x33, 0x22, 0x88), // smith: indigo
    RGBColor(0x99, 0x99, 0x33), // masking: olive
    RGBColor(0x88, 0x22, 0x55), // claude-code: wine
    RGBColor(0x44, 0xAA, 0x99), // codex: teal
    RGBColor(0xDD, 0xCC, 0x77), // opencode: sand
    RGBColor(0x8C, 0x51, 0x0A), // context-editing: brown
    RGBColor(0xCC, 0x66, 0x77), // recorded: rose
];

/// Marker shapes, so policies stay apart in greyscale and for readers who
/// do not tell the colours apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Circle,
    Triangle,
    Square,
    Diamond,
    TriangleDown,
    Hexagon,
    Pentagon,
}

/// The marker shape of each policy, by its position in [`Policy::ALL`].
pub(crate) const POLICY_SHAPES: [Shape; Policy::ALL.len()] = [
    Shape::Circle,
    Shape::Triangle,
    Shape::Square,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Hexagon,
    Shape::Pentagon,
];

fn policy_index(policy: Policy) -> usize {
    Policy::ALL
        .iter()
        .position(|&p| p == policy)
        .unwrap_or_default()
}

/// The colour of `policy`.
pub fn policy(policy: Policy) -> RGBColor {
    POLICIES[policy_index(policy)]
}

/// The marker shape of `policy`.
pub(crate) fn policy_shape(policy: Policy) -> Shape {
    POLICY_SHAPES[policy_index(policy)]
}

/// The config being looked at (best by rank unless `--config` says
/// otherwise): the darkest ink on every chart.
pub(crate) const CHOSEN: RGBColor = RGBColor(0x1A, 0x1A, 0x1A);
/// smith's defaults, the baseline: mid grey, dashed where it is a line.
pub(crate) const BASELINE: RGBColor = RGBColor(0x80, 0x80, 0x80);
/// The history as it would have grown with no compaction at all.
pub(crate) const NO_COMPACTION_LINE: RGBColor = RGBColor(0xA8, 0xA8, 0xA8);
/// Fill under the no-compaction curve.
pub(crate) const NO_COMPACTION_FILL: RGBColor = RGBColor(0xEC, 0xEC, 0xEC);
/// Configs that are neither chosen, baseline nor on the Pareto front.
pub(crate) const OTHER: RGBColor = RGBColor(0xB5, 0xB5, 0xB5);
/// What a config's expected re-fetches add to its price (the whisker of
/// the cost-against-loss chart).
pub(crate) const REFETCH: RGBColor = RGBColor(0x6A, 0x6A, 0x6A);
/// Threshold lines (window, trigger, target).
pub(crate) const THRESHOLD: RGBColor = RGBColor(0x44, 0x44, 0x44);
/// Faint lines: per-session pairs, grid lines.
pub(crate) const FAINT: RGBColor = RGBColor(0xD4, 0xD4, 0xD4);
/// A heatmap cell no config of the sweep fills.
pub(crate) const EMPTY_CELL: RGBColor = RGBColor(0xF3, 0xF3, 0xF3);

/// Stops of the heatmap's sequential scale (viridis, reversed so that low,
/// usually better, values are light).
const RAMP: [(u8, u8, u8); 5] = [
    (0xFD, 0xE7, 0x25),
    (0x5E, 0xC9, 0x62),
    (0x21, 0x91, 0x8C),
    (0x3B, 0x52, 0x8B),
    (0x44, 0x01, 0x54),
];

/// The heatmap colour of `t` in `[0, 1]` (clamped; `NaN` reads as 0).
pub(crate) fn ramp(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let pos = t * (RAMP.len() - 1) as f64;
    let i = (pos.floor() as usize).min(RAMP.len() - 2);
    let f = pos - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Whether text on `c` should be white rather than black (relative
/// luminance below one half).
pub(crate) fn is_dark(c: RGBColor) -> bool {
    let l = 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
    l < 128.0
}

/// `#rrggbb`, for the HTML legend.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_has_its_own_colour_and_none_is_grey() {
        for (i, a) in STAGES.iter().enumerate() {
            assert!(!(a.0 == a.1 && a.1 == a.2), "stage {i} is grey");
            for b in &STAGES[i + 1..] {
                assert_ne!((a.0, a.1, a.2), (b.0, b.1, b.2));
            }
        }
    }

    #[test]
    fn every_policy_has_its_own_colour_and_shape_unlike_any_stage_or_grey() {
        for (i, a) in POLICIES.iter().enumerate() {
            assert!(!(a.0 == a.1 && a.1 == a.2), "policy {i} is grey");
            assert!(!STAGES.contains(a), "policy {i} has a stage's colour");
            for b in &POLICIES[i + 1..] {
                assert_ne!((a.0, a.1, a.2), (b.0, b.1, b.2));
            }
            assert!(!POLICY_SHAPES[i + 1..].contains(&POLICY_SHAPES[i]));
        }
        assert_eq!(hex(policy(Policy::Codex)), "#44aa99");
        assert_eq!(policy_shape(Policy::Smith), Shape::Circle);
    }

    #[test]
    fn ramp_runs_from_light_to_dark() {
        assert!(!is_dark(ramp(0.0)));
        assert!(is_dark(ramp(1.0)));
        assert_eq!(hex(ramp(0.0)), "#fde725");
        assert_eq!(hex(ramp(1.0)), "#440154");
        assert_eq!(hex(ramp(f64::NAN)), "#fde725");
    }
}
