//! `smith-calibrate synth`: a seeded corpus of realistic smith sessions.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::synth::{write_corpus, CorpusSpec, Shape, SizeSpec};

use super::usage;

/// Which shapes of session to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ShapeArg {
    /// Long, short and one-turn sessions, 40/40/20
    Mixed,
    /// Many real turns; crosses the default trigger again and again
    Long,
    /// A few turns that stay below the default trigger
    Short,
    /// One prompt and only agent work after it: the desperate pass
    OneTurn,
    /// A short turn, then one long agentic turn: compaction summarises its
    /// own summary (the resummarized misfire)
    Agentic,
}

impl ShapeArg {
    fn shape(self) -> Option<Shape> {
        match self {
            ShapeArg::Mixed => None,
            ShapeArg::Long => Some(Shape::Long),
            ShapeArg::Short => Some(Shape::Short),
            ShapeArg::OneTurn => Some(Shape::OneTurn),
            ShapeArg::Agentic => Some(Shape::Agentic),
        }
    }
}

/// Generate realistic smith sessions from a seed, in smith's on-disk layout
/// (DIR/<id>/transcript.jsonl, DIR/<id>/session.json, DIR/index.json).
///
/// The same seed and flags give byte-identical files on every machine.
/// Sessions hold real and synthetic user turns, thinking with signatures,
/// repeated identical reads, bash reruns, edits, results from a few bytes to
/// 256 KiB, multi-byte characters across byte 512, errors, images and
/// documents. Without a size flag each shape draws its own size (long
/// 0.5-2.5 MB, short 15-250 KB, one-turn 0.3-1.2 MB). Short sessions never
/// grow past 80,000 estimated tokens, whatever size is asked.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  smith-calibrate synth --seed 1 --sessions 20 --out /tmp/corpus
  smith-calibrate synth --seed 7 --sessions 1 --shape long --mb-per-session 50 --out /tmp/big
  smith-calibrate synth --seed 3 --sessions 300 --min-mb 0.2 --max-mb 2 --out /tmp/corpus-300
  SMITH_HOME=/tmp/fake smith-calibrate synth --seed 1 --sessions 5 --out /tmp/fake/sessions")]
pub(crate) struct SynthArgs {
    /// Seed of the corpus: same seed and flags, same bytes
    #[arg(long, value_name = "N")]
    pub(crate) seed: u64,
    /// Number of sessions to generate
    #[arg(long, value_name = "M")]
    pub(crate) sessions: usize,
    /// Directory to write into (created if missing)
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Which kinds of session
    #[arg(long, value_enum, default_value_t = ShapeArg::Mixed)]
    pub(crate) shape: ShapeArg,
    /// About this many MB (10^6 bytes) of transcript per session
    #[arg(long, value_name = "F", conflicts_with_all = ["min_mb", "max_mb"])]
    pub(crate) mb_per_session: Option<f64>,
    /// Smallest session size in MB (sizes spread log-uniformly up to --max-mb)
    #[arg(long, value_name = "F", requires = "max_mb")]
    pub(crate) min_mb: Option<f64>,
    /// Largest session size in MB
    #[arg(long, value_name = "F", requires = "min_mb")]
    pub(crate) max_mb: Option<f64>,
    /// Write into a non-empty directory that an earlier `synth` did not
    /// write (its other files are left alone; index.json keeps their entries)
    #[arg(long)]
    pub(crate) force: bool,
}

fn mb_to_bytes(flag: &str, mb: f64) -> Result<u64> {
    if !mb.is_finite() || mb <= 0.0 || mb > 1e6 {
        return Err(usage(format!(
            "--{flag} {mb}: give a size in MB above 0, e.g. --{flag} 1.5"
        )));
    }
    Ok((mb * 1e6) as u64)
}

/// Runs `synth`.
pub(crate) fn run(args: SynthArgs) -> Result<()> {
    if args.sessions == 0 {
        return Err(usage(
            "--sessions 0: nothing to generate; ask for at least one session",
        ));
    }
    let size = match (args.mb_per_session, args.min_mb, args.max_mb) {
        (Some(mb), _, _) => SizeSpec::Fixed(mb_to_bytes("mb-per-session", mb)?),
        (None, Some(lo), Some(hi)) => {
            let (lo, hi) = (mb_to_bytes("min-mb", lo)?, mb_to_bytes("max-mb", hi)?);
            if lo > hi {
                return Err(usage("--min-mb is above --max-mb; swap them"));
            }
            SizeSpec::Range(lo, hi)
        }
        _ => SizeSpec::ShapeDefault,
    };
    let spec = CorpusSpec {
        seed: args.seed,
        sessions: args.sessions,
        shape: args.shape.shape(),
        size,
    };
    let stats = write_corpus(&args.out, &spec, args.force, |s| {
        crate::note!(
            "{}  {:<8} {:>8.2} MB {:>7} messages {:>5} turns  {}",
            s.meta.id,
            s.shape.as_str(),
            s.bytes as f64 / 1e6,
            s.meta.message_count,
            s.turns,
            s.meta.name.as_deref().unwrap_or("(unnamed)")
        );
    })?;
    crate::note!(
        "{} sessions, {:.2} MB, {} messages written to {}",
        stats.sessions.len(),
        stats.bytes as f64 / 1e6,
        stats.messages,
        args.out.display()
    );
    Ok(())
}
