//! The command line: the arguments parsed and handed to a command, and the
//! exit status decided; `main.rs` only calls [`main`].

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::messages;

/// The version and the engines it replays: the default, the latest smith
/// release's, ported from the named revision of smith's context.cr.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (engine: smith context.cr @ ",
    crate::smith_revision!(),
    " = --engine 0.4, the default; --engine next = smith after #118)"
);

/// Replay smith's context compaction over recorded sessions, under other
/// thresholds, and measure what it would have done.
#[derive(Parser, Debug)]
#[command(name = "smith-calibrate", version = VERSION, propagate_version = true)]
struct Cli {
    /// Print every column of every table. On a terminal a table wider than
    /// the window keeps the columns that matter first and says how many it
    /// hides; piped or redirected output always has them all.
    #[arg(long, global = true)]
    wide: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Replay(super::replay::ReplayArgs),
    Sweep(Box<super::sweep::SweepArgs>),
    Recommend(Box<super::recommend::RecommendArgs>),
    Report(super::report::ReportArgs),
    Transcript(super::transcript::TranscriptArgs),
    Synth(super::synth::SynthArgs),
    Import(super::import::ImportArgs),
    Calibrate(super::calibrate::CalibrateArgs),
    Merge(super::merge::MergeArgs),
    Completions(super::shell::CompletionsArgs),
    Man(super::shell::ManArgs),
}

/// Parses the arguments, runs the command and says how it ended.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    crate::screen::set_wide(cli.wide);
    let result = match cli.command {
        Command::Replay(args) => super::replay::run(args),
        Command::Sweep(args) => super::sweep::run(*args),
        Command::Recommend(args) => super::recommend::run(*args),
        Command::Report(args) => super::report::run(args),
        Command::Transcript(args) => super::transcript::run(args),
        Command::Synth(args) => super::synth::run(args),
        Command::Import(args) => super::import::run(args),
        Command::Calibrate(args) => super::calibrate::run(args),
        Command::Merge(args) => super::merge::run(args),
        Command::Completions(args) => super::shell::completions(args, Cli::command()),
        Command::Man(args) => super::shell::man(args, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of the output went away (`| head`, a pager quit):
        // what it wanted is written, so that is a success.
        Err(e) if messages::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            messages::error(&e);
            super::exit_code(&e)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The cost model's flags are one fact each, defined once (a shared
    /// `Args` struct) and so read the same in every command that takes
    /// them: a second definition drifts (`--cache-ttl` once took `auto` in
    /// one command only, `--price` had three help texts).
    #[test]
    fn each_cost_model_flag_is_described_once() {
        let cli = Cli::command();
        let mut helps: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for command in cli.get_subcommands() {
            for arg in command.get_arguments() {
                if arg.get_help_heading() != Some("Cost model") {
                    continue;
                }
                let (Some(long), Some(help)) = (arg.get_long(), arg.get_help()) else {
                    continue;
                };
                let text = format!("{help} {:?}", arg.get_value_names());
                helps
                    .entry(long.to_string())
                    .or_default()
                    .entry(text)
                    .or_default()
                    .push(command.get_name().to_string());
            }
        }
        let drifted: Vec<_> = helps.iter().filter(|(_, texts)| texts.len() > 1).collect();
        assert!(drifted.is_empty(), "{drifted:#?}");
        for shared in ["price", "cache-ttl", "cache-min-tokens"] {
            let takers: Vec<&String> = helps[shared].values().flatten().collect();
            assert!(takers.len() >= 3, "--{shared}: {takers:?}");
        }
    }
}
