//! The flags a command that sweeps reads (`sweep`, `recommend`): the
//! sessions, smith's knobs and the baseline.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::sweep::grid::{GridSpec, Knob};
use crate::sweep::job::Baseline;
use crate::transcript::{self, SessionRef};

use super::{nothing_read, usage};

/// What a command that sweeps reads: the sessions and smith's knobs, the
/// same flags for `sweep` and `recommend`.
#[derive(Args, Debug)]
pub(crate) struct Swept {
    #[arg(value_name = "PATHS", help = super::SESSIONS_OR_HOME_HELP)]
    pub(crate) paths: Vec<String>,
    #[command(flatten)]
    pub(crate) select: super::select_args::SelectArgs,

    /// smith's knobs, each a list (from the knob table).
    #[command(flatten)]
    pub(crate) knobs: super::knob_args::Given<Knob>,
    /// Also replay windows and thresholds smith itself refuses (compact-at
    /// of 1 or more, compact-to at or above compact-at, or 0): for
    /// exploring the engine, never for a config.toml
    #[arg(long, help_heading = "Grid")]
    pub(crate) beyond_smith: bool,
    /// What every config is compared with: recorded (each session's agent's
    /// own run as its log recorded it, at the session's own window),
    /// defaults (smith's), or a smith config.toml whose [context] is the
    /// baseline [default: recorded when every session is another agent's
    /// log, else smith's defaults (recommend: your config.toml)]
    #[arg(long, value_name = "recorded|defaults|FILE", help_heading = "Grid")]
    pub(crate) baseline: Option<BaselineArg>,
}

/// What `--baseline` asks for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BaselineArg {
    Recorded,
    Defaults,
    File(PathBuf),
}

/// A `--baseline` that names nothing it can be.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is neither recorded, defaults nor a smith config.toml that exists")]
pub(crate) struct BaselineArgError(String);

impl std::str::FromStr for BaselineArg {
    type Err = BaselineArgError;

    fn from_str(text: &str) -> Result<BaselineArg, BaselineArgError> {
        match text {
            "recorded" => Ok(BaselineArg::Recorded),
            "defaults" => Ok(BaselineArg::Defaults),
            path if Path::new(path).is_file() => Ok(BaselineArg::File(PathBuf::from(path))),
            other => Err(BaselineArgError(other.to_string())),
        }
    }
}

impl Swept {
    /// `spec` with each knob the flags give replaced by the flags' values.
    pub(crate) fn overridden(&self, spec: GridSpec) -> Result<GridSpec> {
        let mut given = GridSpec::default();
        for (knob, text) in &self.knobs.0 {
            given.set(*knob, text).map_err(usage)?;
        }
        Ok(spec.overridden_by(&given))
    }

    /// The sessions: those PATHS name (by default `$SMITH_HOME/sessions`),
    /// as the selection flags keep them; with the paths as given, for the
    /// outputs that record them. Nothing found is an error (exit 1).
    pub(crate) fn sessions(&self) -> Result<(Vec<String>, Vec<SessionRef>)> {
        let paths: Vec<String> = if self.paths.is_empty() {
            let dir = transcript::locate::sessions_dir();
            if !dir.is_dir() {
                return Err(nothing_read(format!(
                    "{}: no sessions directory; give PATHS, or set SMITH_HOME to where smith keeps its sessions",
                    dir.display()
                )));
            }
            vec![dir.display().to_string()]
        } else {
            self.paths.clone()
        };
        let refs = self.select.apply(resolve(&paths))?;
        if refs.is_empty() {
            return Err(nothing_read(format!(
                "no transcript found in {}",
                paths.join(", ")
            )));
        }
        Ok((paths, refs))
    }
}

/// Resolves every PATH, reporting (and passing over) those that name
/// nothing, keeping each transcript once.
fn resolve(paths: &[String]) -> Vec<SessionRef> {
    // A PATH that names nothing is reported and passed over, so the
    // resolver never fails.
    transcript::locate::resolve_each(paths, |spec| {
        Ok(crate::import::direct::resolve(spec).unwrap_or_else(|e| {
            crate::note!("{e:#}; skipped");
            Vec::new()
        }))
    })
    .unwrap_or_default()
}

impl BaselineArg {
    /// The baseline the job is given; a smith config file is read here,
    /// its warnings said.
    pub(crate) fn baseline(&self) -> Baseline {
        match self {
            BaselineArg::Recorded => Baseline::Recorded,
            BaselineArg::Defaults => Baseline::Defaults,
            BaselineArg::File(path) => {
                let context = crate::recommend::smith_config::read(path);
                for w in &context.warnings {
                    crate::note!("warning: {w}");
                }
                Baseline::Config {
                    config: context.config,
                    source: format!("the [context] of {}", path.display()),
                }
            }
        }
    }
}
