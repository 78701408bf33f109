//! The subcommands. Each file turns parsed arguments into work on the
//! library and output for a person or a program; `main.rs` only dispatches.

pub(crate) mod account_args;

/// What a command that takes many sessions reads, for every such command's
/// help: one list, so that a format read in one is named in all.
macro_rules! sessions_help {
    () => {
        "Transcripts, session directories, trees of them, session ids or names, or other agents' logs where they are: Claude Code projects folders or logs, Codex CLI rollouts, mini-swe-agent trajectories"
    };
}
pub(crate) const SESSIONS_HELP: &str = sessions_help!();
/// [`SESSIONS_HELP`] where the sessions may be left out.
pub(crate) const SESSIONS_OR_HOME_HELP: &str =
    concat!(sessions_help!(), " [default: $SMITH_HOME/sessions]");

/// What a command that takes one session reads.
pub(crate) const SESSION_HELP: &str = "A transcript.jsonl, a session directory, a session id or name, or another agent's log: a Claude Code log (or `<log>#<id>` as `transcript list` prints it), a Codex CLI rollout, a mini-swe-agent trajectory";
pub(crate) mod calibrate;
#[cfg(feature = "full")]
pub mod cli;
pub(crate) mod cost_args;
pub(crate) mod estimators;
pub(crate) mod import;
pub(crate) mod knob_args;
#[cfg(feature = "full")]
pub(crate) mod merge;
pub(crate) mod policy_args;
pub mod real_compactions;
#[cfg(feature = "full")]
pub mod recommend;
pub mod replay;
#[cfg(feature = "full")]
pub(crate) mod report;
pub(crate) mod select_args;
pub(crate) mod session_pages;
pub(crate) mod shell;
#[cfg(feature = "full")]
pub(crate) mod sweep;
#[cfg(feature = "full")]
pub(crate) mod swept_args;
pub(crate) mod synth;
pub(crate) mod transcript;

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::engine::Config;
use crate::estimate::Estimator;
use crate::policy::Setup;
use crate::transcript::Session;

/// How a command failed, which decides its exit status. The library's
/// errors are typed by area (`SpecError`, `PolicyError`, …) and say what
/// went wrong; a command decides which of these it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Nothing could be read, `--strict` met a bad line, or the work
    /// failed: 1, also for every error not marked otherwise.
    Failed,
    /// Bad arguments: 2, as clap's own.
    Usage,
    /// Stopped by Ctrl-C: 130 (128 + SIGINT), as shells use.
    Interrupted,
}

impl Exit {
    /// The process's exit status.
    pub(crate) fn code(self) -> u8 {
        match self {
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Interrupted => crate::interrupt::EXIT_INTERRUPTED,
        }
    }
}

/// An error marked with how the command failed; its message is the whole
/// error with its causes.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Failure {
    pub(crate) exit: Exit,
    pub(crate) message: String,
}

/// A usage error (exit 2).
pub(crate) fn usage(message: impl std::fmt::Display) -> anyhow::Error {
    Failure {
        exit: Exit::Usage,
        message: message.to_string(),
    }
    .into()
}

/// Nothing could be read (exit 1).
pub(crate) fn nothing_read(message: impl std::fmt::Display) -> anyhow::Error {
    Failure {
        exit: Exit::Failed,
        message: message.to_string(),
    }
    .into()
}

/// The exit status for an error, the one place it is decided: the
/// [`Exit`] it was marked with, else [`Exit::Failed`].
pub(crate) fn exit_code(e: &anyhow::Error) -> ExitCode {
    let exit = e
        .downcast_ref::<Failure>()
        .map_or_else(|| job_exit(e), |f| f.exit);
    ExitCode::from(exit.code())
}

/// How a sweep's job failed: a plan that cannot run is a usage error.
#[cfg(feature = "full")]
fn job_exit(e: &anyhow::Error) -> Exit {
    use crate::sweep::job::JobError;
    match e.downcast_ref::<JobError>() {
        Some(JobError::Plan(_)) => Exit::Usage,
        Some(JobError::Interrupted(_)) => Exit::Interrupted,
        Some(JobError::NothingRead(_)) | None => Exit::Failed,
    }
}

#[cfg(not(feature = "full"))]
fn job_exit(_: &anyhow::Error) -> Exit {
    Exit::Failed
}

/// The engine's knobs, shared by `replay` and `transcript show --at`.
#[derive(Args, Clone, Debug)]
pub(crate) struct EngineArgs {
    /// smith's knobs, one value each (from the knob table).
    #[command(flatten)]
    pub(crate) knobs: knob_args::ConfigArgs,
    /// How the engine turns the history into tokens: bytes4 (smith's
    /// bytes / 4), chars4, o200k, cl100k or claude2. Trigger, target and every figure
    /// are then in that estimator's tokens. Example: --estimator o200k
    #[arg(long, default_value_t = Estimator::Bytes4, value_name = "NAME", help_heading = "Engine")]
    pub(crate) estimator: Estimator,
    /// Also replay a window and thresholds smith itself refuses (compact-at
    /// of 1 or more, compact-to at or above compact-at, or 0): for
    /// exploring the engine, never for a config.toml
    #[arg(long, help_heading = "Engine")]
    pub(crate) beyond_smith: bool,
}

impl EngineArgs {
    /// The config these flags describe, or a usage error.
    pub(crate) fn config(&self) -> Result<Config> {
        if let Some(why) = &self.knobs.2 {
            return Err(usage(why));
        }
        let config = self.knobs.0;
        config.validate().map_err(usage)?;
        if !self.beyond_smith {
            config.check_smith_rule().map_err(usage)?;
        }
        Ok(config)
    }

    /// `setup` estimating with `--estimator`, or a usage error when its
    /// policy cannot.
    pub(crate) fn with_estimator(&self, setup: Setup) -> Result<Setup> {
        let setup = setup.with_estimator(self.estimator);
        setup.validate().map_err(usage)?;
        Ok(setup)
    }
}

/// Writes what reading a session skipped to stderr.
pub(crate) fn report_skips(session: &Session) {
    crate::messages::notes(&session.log.to_string());
    if let Some(why) = &session.meta_error {
        crate::note!("{why}");
    }
}

/// Resolves `spec` to exactly one session and loads it, reporting skipped
/// lines; fails with exit 1 when no message could be read (or any line was
/// skipped under `strict`).
pub(crate) fn load_one(spec: &str, strict: bool) -> Result<Session> {
    let found = crate::import::direct::resolve(spec).map_err(|e| nothing_read(format!("{e:#}")))?;
    if found.len() != 1 {
        return Err(usage(format!(
            "{spec} holds {} sessions; name one of them, or use `sweep` for many",
            found.len()
        )));
    }
    let session = crate::transcript::load(&found[0]).map_err(|e| nothing_read(format!("{e:#}")))?;
    check_read(&session, strict)?;
    Ok(session)
}

/// Reports skips and turns "nothing read" (or a skip under `strict`) into
/// an error.
pub(crate) fn check_read(session: &Session, strict: bool) -> Result<()> {
    report_skips(session);
    let path = session.source.transcript.display();
    if session.messages.is_empty() {
        return Err(nothing_read(format!(
            "{path}: no message could be read ({} lines, {} skipped)",
            session.log.lines,
            session.log.skipped_count()
        )));
    }
    if strict && session.log.skipped_count() > 0 {
        return Err(nothing_read(format!(
            "{path}: {} bad lines and --strict was given",
            session.log.skipped_count()
        )));
    }
    Ok(())
}
