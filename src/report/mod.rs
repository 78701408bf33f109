//! The report: a folder a person would rather look at than read, made from a
//! sweep's output folder.
//!
//! Each chart is one small file behind [`Chart`]: it holds the numbers it
//! shows and draws them on any plotters backend, so the same code makes the
//! inline SVG of `index.html` and the PNG beside it. [`palette`] gives every
//! stage one colour across all of them and [`draw`] the shared pieces
//! (legends, dashes, notes); [`html`] lays out the page; [`data`] reads the
//! sweep's files back and [`select`] picks the config and sessions to show.
//!
//! The charts: [`cost_loss`] (one point per config, price against a loss,
//! Pareto front), [`heatmap`] (`compact_at` × `compact_to` for one metric),
//! [`stages`] (tokens reclaimed per stage for each config), [`distribution`]
//! (a loss per session, see [`Loss`], baseline against the chosen config) and,
//! for each chosen session, [`context_curve`] (the request sizes over the
//! session with and without compaction). When the sweep compared policies
//! (`sweep --policy`), [`policies`] sets each policy's best config beside
//! the others, and every chart names the policy of the configs it shows;
//! [`palette`] gives every policy one colour and marker too.

pub(crate) mod bill;
pub mod context_curve;
pub mod cost_loss;
pub mod data;
pub(crate) mod distribution;
pub(crate) mod draw;
pub mod heatmap;
pub(crate) mod html;
pub(crate) mod misfires;
pub mod palette;
pub mod policies;
pub(crate) mod select;
pub(crate) mod stages;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

pub use data::SweepOutput;
pub use select::{Selection, SelectionError};

use crate::sweep::figures;
use crate::transcript::{self, SessionRef};

/// Size of every chart in pixels: wide enough for a laptop screen, and the
/// PNG's size.
pub const SIZE: (u32, u32) = (1200, 700);

/// Font family of every text: DejaVu Sans compiled into the binary for the
/// PNGs (registered under this name by [`register_font`], so no system font
/// or fontconfig is needed), the browser's own sans-serif for the SVGs, so the
/// page needs no web font.
pub(crate) const FONT: &str = "sans-serif";

/// DejaVu Sans (Bitstream Vera licence, `assets/fonts/DejaVuSans.LICENSE`):
/// wide Unicode coverage for the labels a transcript can put in a chart.
static EMBEDDED_FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Makes [`EMBEDDED_FONT`] the font plotters draws [`FONT`] with; once per
/// process. Bold text falls back to it too (plotters picks the nearest style
/// registered).
fn register_font() -> Result<()> {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, EMBEDDED_FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!("the compiled-in chart font could not be loaded"))
    }
}

/// Font sizes in pixels at [`SIZE`].
pub(crate) mod font_size {
    pub(crate) const TITLE: u32 = 26;
    pub(crate) const AXIS: u32 = 18;
    pub(crate) const TICK: u32 = 16;
    pub(crate) const LEGEND: u32 = 16;
    pub(crate) const NOTE: u32 = 15;
}

/// Sessions charted when none are named.
pub(crate) const DEFAULT_SESSIONS: usize = 3;

/// Rows of the ranked tables and bars when the sweep has more configs: the
/// best ones and the baseline; the files hold the rest.
pub(crate) const TOP_CONFIGS: usize = 20;

/// The metric the heatmap colours by and the cost axis measures. Its
/// value names on the command line are its figures' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Price,
    TokensSent,
    ResultsMangled,
    Summaries,
}

impl Metric {
    const ALL: [Metric; 4] = [
        Metric::Price,
        Metric::TokensSent,
        Metric::ResultsMangled,
        Metric::Summaries,
    ];

    /// The sweep's figure it shows.
    pub(crate) fn figure(self) -> figures::Metric {
        match self {
            Metric::Price => figures::Metric::Price,
            Metric::TokensSent => figures::Metric::TokensSent,
            Metric::ResultsMangled => figures::Metric::ResultsMangled,
            Metric::Summaries => figures::Metric::Summaries,
        }
    }

    /// What it is, for `--help`.
    fn help(self) -> &'static str {
        match self {
            Metric::Price => "Estimated price with prompt caching (USD)",
            Metric::TokensSent => "Tokens sent over all requests",
            Metric::ResultsMangled => "Tool results cut to their head or stubbed",
            Metric::Summaries => "Requests whose compaction summarized the oldest turns",
        }
    }

    /// The figure's name in a title.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Price => "Price",
            Metric::TokensSent => "Tokens sent",
            Metric::ResultsMangled => "Tool results mangled",
            Metric::Summaries => "Summaries",
        }
    }

    /// An axis or colour-bar label, with its unit: tokens as the sweep
    /// counted them (`units`).
    pub(crate) fn axis(self, units: &crate::sweep::units::TokenUnits) -> String {
        match self {
            Metric::Price => "price, all sessions (USD, with prompt caching)".to_string(),
            Metric::TokensSent => format!("tokens sent, all sessions ({})", units.axis()),
            Metric::ResultsMangled => "tool results mangled, all sessions (count)".to_string(),
            Metric::Summaries => "summaries, all sessions (count of requests)".to_string(),
        }
    }

    /// A value for a tick or a cell, in its figure's unit.
    pub(crate) fn format(self, v: f64) -> String {
        self.figure().unit().format()(v)
    }
}

impl clap::ValueEnum for Metric {
    fn value_variants<'a>() -> &'a [Self] {
        &Metric::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.figure().name()).help(self.help()))
    }
}

/// The loss the cost-against-loss chart and the distribution measure: what
/// a config destroyed that the session might have needed. Its value names
/// on the command line are its figures' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    ResultsMangled,
    StillNeeded,
    NeededAgain,
    ResultsLost,
}

impl Loss {
    const ALL: [Loss; 4] = [
        Loss::ResultsMangled,
        Loss::StillNeeded,
        Loss::NeededAgain,
        Loss::ResultsLost,
    ];

    /// The loss a report shows unless told: the loss measure the verdict
    /// gates on, whatever the sweep compared (results mangled would
    /// flatter the policies that summarise).
    pub const DEFAULT: Loss = Loss::StillNeeded;

    /// The sweep's figure it shows.
    pub fn figure(self) -> figures::Metric {
        match self {
            Loss::ResultsMangled => figures::Metric::ResultsMangled,
            Loss::StillNeeded => figures::Metric::StillNeeded,
            Loss::NeededAgain => figures::Metric::NeededAgain,
            Loss::ResultsLost => figures::Metric::ResultsLost,
        }
    }

    /// What it is, for `--help`.
    fn help(self) -> &'static str {
        match self {
            Loss::ResultsMangled => {
                "Tool results cut to their head or replaced by a stub. A policy that summarises \
                 instead mangles few and looks better than it is"
            }
            Loss::StillNeeded => {
                "Results shortened or removed while still current (a file read not edited since) \
                 whose lost identifiers, paths or numbers a later message used: the loss measure \
                 the verdict gates on"
            }
            Loss::NeededAgain => {
                "Results shortened or removed whose lost identifiers, paths or numbers a later \
                 message used while they were visible nowhere else, current or not"
            }
            Loss::ResultsLost => "Distinct results shortened or removed, by any means",
        }
    }

    /// The figure's name in a title.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Loss::ResultsMangled => "Tool results mangled",
            Loss::StillNeeded => "Tool results still needed",
            Loss::NeededAgain => "Tool results needed again",
            Loss::ResultsLost => "Tool results lost",
        }
    }

    /// The figure's name in running text and short labels.
    pub(crate) fn short(self) -> &'static str {
        match self {
            Loss::ResultsMangled => "results mangled",
            Loss::StillNeeded => "results still needed",
            Loss::NeededAgain => "results needed again",
            Loss::ResultsLost => "results lost",
        }
    }

    /// An axis label, with its unit.
    pub(crate) fn axis(self) -> &'static str {
        match self {
            Loss::ResultsMangled => "results mangled (count)",
            Loss::StillNeeded => "results still needed (count)",
            Loss::NeededAgain => "results needed again (count)",
            Loss::ResultsLost => "results lost (count)",
        }
    }

    /// What is counted, for a caption.
    pub(crate) fn meaning(self) -> &'static str {
        match self {
            Loss::ResultsMangled => "tool results whose content compaction cut to a head or a stub",
            Loss::StillNeeded => {
                "tool results shortened or removed while still current (a file read not edited since) whose lost \
                 identifiers, paths or numbers a later message used (a proxy: the rest of each session is what the \
                 agent that recorded it did next; calibrate holds it against the agents' own compactions)"
            }
            Loss::NeededAgain => {
                "tool results shortened or removed whose lost identifiers, paths or numbers a later message used \
                 while they were visible nowhere else (a proxy that did not predict real re-fetches in calibrate's \
                 validation)"
            }
            Loss::ResultsLost => "distinct tool results shortened or removed, by a cut, a stub or a summary",
        }
    }
}

impl clap::ValueEnum for Loss {
    fn value_variants<'a>() -> &'a [Self] {
        &Loss::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.figure().name()).help(self.help()))
    }
}

/// What drawing on a backend returns.
pub(crate) type DrawResult<DB> =
    std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// One chart: the numbers it shows and how to draw them.
pub trait Chart {
    /// The file name without `.png`, also the chart's id in the page.
    fn stem(&self) -> String;
    /// The title drawn above the chart.
    fn title(&self) -> String;
    /// A sentence or two for the page: how to read the chart.
    fn caption(&self) -> String;
    /// Draws the chart below its title; `area` is white.
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
    /// When the chart has nothing to show (one point, no scale to read):
    /// what it would show and why it has nothing, said in place of drawing
    /// an empty axis.
    fn words(&self) -> Option<String> {
        None
    }
}

/// A chart drawn both ways.
#[derive(Clone, Debug)]
pub(crate) struct Figure {
    pub(crate) stem: String,
    pub(crate) title: String,
    pub(crate) caption: String,
    /// The SVG document, as plotters writes it.
    pub(crate) svg: String,
    /// The PNG file's bytes.
    pub(crate) png: Vec<u8>,
    /// [`Chart::words`]: the page says them instead, and there is no PNG.
    pub(crate) words: Option<String>,
}

fn draw_titled<DB: DrawingBackend, C: Chart>(
    chart: &C,
    root: &DrawingArea<DB, Shift>,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let area = root.titled(
        &chart.title(),
        (FONT, font_size::TITLE)
            .into_font()
            .style(FontStyle::Bold)
            .color(&BLACK),
    )?;
    chart.draw(&area)?;
    root.present()
}

/// Draws `chart` as SVG and as PNG, at [`SIZE`].
pub(crate) fn render<C: Chart>(chart: &C) -> Result<Figure> {
    if let Some(words) = chart.words() {
        return Ok(Figure {
            stem: chart.stem(),
            title: chart.title(),
            caption: chart.caption(),
            svg: String::new(),
            png: Vec::new(),
            words: Some(words),
        });
    }
    let (w, h) = SIZE;
    register_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        draw_titled(chart, &root)
            .map_err(|e| anyhow!("{}: cannot draw the SVG: {e}", chart.stem()))?;
    }
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw_titled(chart, &root)
            .map_err(|e| anyhow!("{}: cannot draw the PNG: {e}", chart.stem()))?;
    }
    Ok(Figure {
        stem: chart.stem(),
        title: chart.title(),
        caption: chart.caption(),
        svg,
        png: encode_png(&rgb, w, h)
            .with_context(|| format!("{}: cannot encode the PNG", chart.stem()))?,
        words: None,
    })
}

/// `rgb` (8-bit, row-major, no padding) as a PNG file.
fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Default);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(out)
}

/// A chosen session's section: its figures, or why it could not be charted.
#[derive(Clone, Debug)]
pub(crate) struct SessionSection {
    /// Index into [`SweepOutput::sessions`].
    pub(crate) session: usize,
    pub(crate) figure: std::result::Result<Figure, NoCurve>,
}

/// Why a chosen session has no context curve: the error that stopped it,
/// with its causes, as the warning and the page print it.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NoCurve(pub(crate) String);

/// What [`write()`] wrote.
#[derive(Clone, Debug)]
pub(crate) struct Written {
    /// `index.html`.
    pub(crate) index: PathBuf,
    /// The PNG files.
    pub(crate) pngs: Vec<PathBuf>,
    /// Sessions that could not be charted, and why.
    pub(crate) warnings: Vec<String>,
}

impl Written {
    /// Tells the user what was written and where to look.
    pub(crate) fn say(&self) {
        for w in &self.warnings {
            crate::note!("{w}");
        }
        crate::note!(
            "wrote {} and {} PNG charts; open {}",
            self.index
                .file_name()
                .map_or("index.html".into(), |n| n.to_string_lossy()),
            self.pngs.len(),
            self.index.display()
        );
    }
}

/// A file name part from a label: lowercase letters, digits and dashes.
pub(crate) fn slug(label: &str) -> String {
    let mut s = String::new();
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s: String = s.trim_matches('-').chars().take(48).collect();
    if s.is_empty() {
        "session".to_string()
    } else {
        s.trim_end_matches('-').to_string()
    }
}

/// Reads a chosen session again and charts it.
fn session_figure(
    data: &SweepOutput,
    session: usize,
    chosen: usize,
    stem: String,
) -> Result<Figure> {
    let info = &data.sessions[session];
    let loaded = load_row(&info.path)
        .with_context(|| format!("{}: cannot read the session again", info.path.display()))?;
    if loaded.messages.is_empty() {
        return Err(anyhow!("{}: no message could be read", info.path.display()));
    }
    let b = data.baseline()?;
    let base = &data.configs[b];
    // Each config replays under its own policy (see `ContextCurve::new`),
    // and with the ratio and overhead the session chose where it did.
    let given = crate::calibrate::session::Given::ALL;
    let mine =
        crate::calibrate::session::for_session(&data.setup_of(session, chosen), given, &loaded)
            .compactor(&loaded);
    let theirs = (b != chosen).then(|| {
        crate::calibrate::session::for_session(&data.setup_of(session, b), given, &loaded)
            .compactor(&loaded)
    });
    let curve = context_curve::ContextCurve::replayed(
        &info.label,
        stem,
        &loaded.messages,
        &data.configs[chosen],
        base,
        (mine.as_ref(), theirs.as_deref()),
        &data.summary.tokens,
    );
    render(&curve)
}

/// Draws every chart of the sweep in `data` and writes `index.html` and one
/// PNG per chart into `out` (created if missing), each file atomically;
/// `index.html` last, so a page that exists has all its PNGs beside it.
/// `metric` colours the heatmap (and, if tokens sent, is the cost axis);
/// `loss` is what the cost-against-loss chart and the distribution count.
pub(crate) fn write(
    data: &SweepOutput,
    selection: &Selection,
    metric: Metric,
    loss: Loss,
    out: &Path,
) -> Result<Written> {
    let chosen = selection.chosen;
    let base = data.baseline()?;
    let comparison = data
        .compares_policies()
        .then(|| policies::Comparison::new(data))
        .transpose()?;
    let policy_figure = comparison
        .as_ref()
        .map(|c| render(&policies::PolicyChart::new(data, c)))
        .transpose()?;
    let overview = vec![
        render(&cost_loss::CostLoss::new(data, chosen, metric, loss))?,
        render(&heatmap::Heatmap::new(data, metric, chosen, base))?,
        render(&stages::StageBars::new(data, chosen))?,
        render(&distribution::Distribution::new(data, chosen, loss)?)?,
    ];
    let mut warnings = Vec::new();
    let mut used: Vec<String> = overview
        .iter()
        .chain(&policy_figure)
        .map(|f| f.stem.clone())
        .collect();
    let mut sections = Vec::new();
    for &s in &selection.sessions {
        let mut stem = format!("context-{}", slug(&data.sessions[s].label));
        let mut n = 2;
        while used.contains(&stem) {
            stem = format!("context-{}-{n}", slug(&data.sessions[s].label));
            n += 1;
        }
        used.push(stem.clone());
        let figure = session_figure(data, s, chosen, stem).map_err(|e| {
            let why = NoCurve(format!("{e:#}"));
            warnings.push(format!("{why}; its context curve is left out"));
            why
        });
        sections.push(SessionSection { session: s, figure });
    }

    // The captions say which config the charts compare, where the verdict
    // kept the baseline and the report chose one it refused.
    let mut overview = overview;
    if let Some(note) = select::kept_note(data, chosen) {
        let figures = overview
            .iter_mut()
            .chain(sections.iter_mut().filter_map(|s| s.figure.as_mut().ok()));
        for f in figures {
            f.caption = format!("{note} {}", f.caption);
        }
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create the report folder", out.display()))?;
    let mut pngs = Vec::new();
    let figures = overview
        .iter()
        .chain(&policy_figure)
        .chain(sections.iter().filter_map(|s| s.figure.as_ref().ok()))
        .filter(|f| f.words.is_none());
    for f in figures {
        let path = out.join(format!("{}.png", f.stem));
        crate::output::write_atomic(&path, &f.png)?;
        pngs.push(path);
    }
    let misfires = misfires::Misfires::find(data, chosen, selection.session_pages);
    misfires.write_views(out)?;
    warnings.extend(misfires.warnings.iter().cloned());
    let page = html::Page {
        misfires: misfires.html(data, chosen),
        bill: bill::section(data),
        data,
        chosen,
        loss,
        comparison: comparison.as_ref().zip(policy_figure.as_ref()),
        overview: &overview,
        sessions: &sections,
        warnings: &warnings,
    };
    let index = out.join("index.html");
    crate::output::write_atomic(&index, page.render()?.as_bytes())?;
    Ok(Written {
        index,
        pngs,
        warnings,
    })
}

/// Reads the sweep output in `sweep_dir` and writes its report into `out`
/// with the defaults: the best config, the sessions that changed most, the
/// heatmap of price, the loss of [`Loss::DEFAULT`]. What
/// `sweep --report` does.
pub(crate) fn write_default(sweep_dir: &Path, out: &Path) -> Result<Written> {
    let data = SweepOutput::read(sweep_dir)?;
    let selection = Selection::new(&data, None, &[]).map_err(|e| anyhow!("{e}"))?;
    write(&data, &selection, Metric::Price, Loss::DEFAULT, out)
}

/// [`write_default`] with a spinner while it draws: the report a sweep's
/// `--report DIR` asks for beside its data files in `data`.
pub(crate) fn draw(data: &Path, dir: &Path) -> Result<Written> {
    let spinner = crate::messages::spinner("drawing the report");
    let written = write_default(data, dir);
    spinner.finish_and_clear();
    written
}

/// A swept session read again by the path its row names: a smith
/// transcript, or a `<log>#<id>` converted from another agent's log.
pub(crate) fn load_row(path: &Path) -> Result<transcript::Session> {
    let source = match crate::import::direct::reload(path)? {
        Some(converted) => converted,
        None => SessionRef::file(path.to_path_buf()),
    };
    transcript::load(&source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_keeps_letters_and_digits_and_joins_the_rest_with_dashes() {
        assert_eq!(slug("Fix the Parser (v2)!"), "fix-the-parser-v2");
        assert_eq!(slug("ünïcode/…"), "n-code");
        assert_eq!(slug("///"), "session");
    }

    #[test]
    fn png_encoding_writes_the_signature_and_size() {
        let png = encode_png(&[255; 4 * 3 * 3], 4, 3).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 4);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 3);
    }
}
