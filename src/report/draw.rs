//! Drawing helpers every chart shares: fonts, dashed lines, the legend
//! beside a chart, notes, and category labels on a numeric axis.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::palette::Shape;
use super::{font_size, DrawResult, FONT};

/// An axis the drawing helpers can place elements on: any range of
/// plotters whose values can be copied into an element.
pub(crate) trait Axis:
    plotters::coord::ranged1d::Ranged<ValueType: Clone + 'static>
{
}

impl<R: plotters::coord::ranged1d::Ranged<ValueType: Clone + 'static>> Axis for R {}

/// A text style of `size` pixels in black.
pub(crate) fn font(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// How a legend entry looks.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Swatch {
    /// A filled square (a stage, an area).
    Fill(RGBColor),
    /// A line of a width, dashed or not.
    Line(RGBColor, u32, Dash),
    /// A filled dot.
    Dot(RGBColor),
    /// A hollow square (the baseline's marker).
    Square(RGBColor),
    /// A ring around a dot (the chosen config's marker).
    Ring(RGBColor),
    /// A filled marker of a shape (a policy).
    Marker(RGBColor, Shape),
}

/// The corners of a marker of `shape`, `r` pixels from its centre to its
/// outside, as pixel offsets from the centre. Every shape is one polygon, so
/// a marker is one element type whatever its shape.
pub(crate) fn marker_points(shape: Shape, r: i32) -> Vec<(i32, i32)> {
    let polygon = |corners: usize, turn: f64| -> Vec<(i32, i32)> {
        (0..corners)
            .map(|k| {
                let a = turn + std::f64::consts::TAU * k as f64 / corners as f64;
                let r = r as f64;
                ((r * a.cos()).round() as i32, (r * a.sin()).round() as i32)
            })
            .collect()
    };
    let up = -std::f64::consts::FRAC_PI_2;
    match shape {
        Shape::Circle => polygon(16, 0.0),
        Shape::Triangle => polygon(3, up),
        Shape::TriangleDown => polygon(3, -up),
        Shape::Diamond => polygon(4, up),
        Shape::Hexagon => polygon(6, 0.0),
        Shape::Pentagon => polygon(5, up),
        Shape::Square => {
            let s = (r as f64 * 0.8).round() as i32;
            vec![(-s, -s), (s, -s), (s, s), (-s, s)]
        }
    }
}

/// Draws a filled marker of `shape`, `r` pixels in size, at `at` in chart
/// coordinates, outlined with `outline` when given.
pub(crate) fn draw_marker<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    at: (X::ValueType, Y::ValueType),
    shape: Shape,
    r: i32,
    fill: RGBColor,
    outline: Option<ShapeStyle>,
) -> DrawResult<DB>
where
    DB: DrawingBackend,
    X: Axis,
    Y: Axis,
{
    let points = marker_points(shape, r);
    let mut ring = points.clone();
    ring.push(points[0]);
    chart.draw_series(std::iter::once(
        EmptyElement::at(at.clone()) + Polygon::new(points, fill.filled()),
    ))?;
    if let Some(style) = outline {
        chart.draw_series(std::iter::once(
            EmptyElement::at(at) + PathElement::new(ring, style),
        ))?;
    }
    Ok(())
}

/// Line patterns, told apart in greyscale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dash {
    Solid,
    Dashed,
    Dotted,
}

impl Dash {
    /// Dash and gap in pixels.
    fn pattern(self) -> Option<(i32, i32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((10, 6)),
            Dash::Dotted => Some((3, 4)),
        }
    }
}

/// Draws a polyline in chart coordinates with a dash pattern.
pub(crate) fn draw_line<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    points: Vec<(X::ValueType, Y::ValueType)>,
    style: ShapeStyle,
    dash: Dash,
) -> DrawResult<DB>
where
    DB: DrawingBackend,
    X: Axis,
    Y: Axis,
{
    match dash.pattern() {
        None => chart.draw_series(std::iter::once(PathElement::new(points, style)))?,
        Some((on, off)) => chart.draw_series(DashedLineSeries::new(points, on, off, style))?,
    };
    Ok(())
}

/// Draws a legend down `area` (pixel coordinates), one entry per row.
pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, Swatch)],
) -> DrawResult<DB> {
    let row = 30;
    let text = font(font_size::LEGEND).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, swatch)) in entries.iter().enumerate() {
        let y = 14 + row * i as i32;
        let (x0, x1) = (6, 36);
        match *swatch {
            Swatch::Fill(c) => {
                area.draw(&Rectangle::new(
                    [(x0 + 6, y - 9), (x1 - 6, y + 9)],
                    c.filled(),
                ))?;
            }
            Swatch::Line(c, width, dash) => {
                let style = c.stroke_width(width);
                match dash.pattern() {
                    None => area.draw(&PathElement::new(vec![(x0, y), (x1, y)], style))?,
                    Some((on, off)) => area.draw(&plotters::element::DashedPathElement::new(
                        vec![(x0, y), (x1, y)],
                        on,
                        off,
                        style,
                    ))?,
                }
            }
            Swatch::Dot(c) => area.draw(&Circle::new((21, y), 5, c.filled()))?,
            Swatch::Square(c) => area.draw(&Rectangle::new(
                [(14, y - 7), (28, y + 7)],
                c.stroke_width(3),
            ))?,
            Swatch::Ring(c) => {
                area.draw(&Circle::new((21, y), 4, c.filled()))?;
                area.draw(&Circle::new((21, y), 9, c.stroke_width(2)))?;
            }
            Swatch::Marker(c, shape) => {
                let at: Vec<(i32, i32)> = marker_points(shape, 7)
                    .into_iter()
                    .map(|(dx, dy)| (21 + dx, y + dy))
                    .collect();
                area.draw(&Polygon::new(at, c.filled()))?;
            }
        }
        area.draw(&Text::new(label.clone(), (x1 + 8, y), text.clone()))?;
    }
    Ok(())
}

/// The label of the category at `v` on an axis whose categories sit at
/// 0, 1, 2, ...: empty between them, so ticks at fractions stay blank.
pub(crate) fn label_at(labels: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    labels.get(i as usize).cloned().unwrap_or_default()
}

/// A note in small grey type at pixel `(x, y)` of `area`.
pub(crate) fn draw_note<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    note: &str,
    (x, y): (i32, i32),
) -> DrawResult<DB> {
    let style = (FONT, font_size::NOTE)
        .into_font()
        .color(&RGBColor(0x55, 0x55, 0x55));
    area.draw(&Text::new(note.to_string(), (x, y), style))
}
