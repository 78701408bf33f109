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
pub(crate) const SESSION_HELP: &str = "A transcript.jsonl, a session directory, another agent's log (a Claude Code log, a Codex CLI rollout, a mini-swe-agent trajectory), or a session's id or name as `transcript list` prints it (smith's, Claude Code's cc-…, Codex's codex-…; a unique prefix, or a short form with …, will do), looked for in $SMITH_HOME/sessions, Claude Code's projects folder ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects) and Codex's sessions folder ($CODEX_HOME/sessions, else ~/.codex/sessions); or a folder, with ID";

/// What the second argument of a command that takes one session is.
const SESSION_ID_HELP: &str = "With SESSION a folder (or a log holding several sessions): the id or name of one session in it, as `transcript list SESSION` prints it, e.g. `transcript show ~/logs cc-4d5611e5`";

/// The one session a command reads: as one argument, or as a folder and
/// the id of a session in it.
#[derive(Args, Clone, Debug)]
pub(crate) struct SessionArg {
    #[arg(help = SESSION_HELP, value_name = "SESSION")]
    pub(crate) reference: String,
    #[arg(help = SESSION_ID_HELP, value_name = "ID")]
    pub(crate) id: Option<String>,
}

impl SessionArg {
    /// The sessions the arguments name: one, or (a folder without an ID)
    /// every session in it. Nothing found is exit 1.
    pub(crate) fn resolve(&self) -> Result<Vec<crate::transcript::SessionRef>> {
        let found = match &self.id {
            None => crate::import::direct::resolve(&self.reference),
            Some(id) => crate::import::find::in_folder(std::path::Path::new(&self.reference), id)
                .map(|s| vec![s]),
        };
        found.map_err(|e| nothing_read(format!("{e:#}")))
    }

    /// The arguments as a person typed them, for messages.
    pub(crate) fn typed(&self) -> String {
        match &self.id {
            None => self.reference.clone(),
            Some(id) => format!("{} {id}", self.reference),
        }
    }

    /// The one session named, loaded (see [`load_found`]).
    pub(crate) fn load(&self, strict: bool) -> Result<Session> {
        load_found(&self.resolve()?, &self.typed(), strict)
    }
}
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

/// Loads the one session of `found` (what `spec` resolved to), reporting
/// skipped lines; fails with exit 1 when no message could be read (or any
/// line was skipped under `strict`), and with exit 2 when `spec` named
/// several sessions.
fn load_found(
    found: &[crate::transcript::SessionRef],
    spec: &str,
    strict: bool,
) -> Result<Session> {
    if found.len() != 1 {
        return Err(usage(format!(
            "{spec} holds {} sessions; name one of them (`transcript list {spec}` prints their ids; give one after the folder), or use `sweep` for many",
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
