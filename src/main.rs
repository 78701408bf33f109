//! The command line: parse the arguments and hand them to a command.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use smith_calibrate::{commands, messages};

/// The version and the smith revision whose compaction the engine ports.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (engine: smith context.cr @ ",
    smith_calibrate::smith_revision!(),
    ")"
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
    Replay(commands::replay::ReplayArgs),
    Sweep(Box<commands::sweep::SweepArgs>),
    Recommend(Box<commands::recommend::RecommendArgs>),
    Report(commands::report::ReportArgs),
    Transcript(commands::transcript::TranscriptArgs),
    Synth(commands::synth::SynthArgs),
    Import(commands::import::ImportArgs),
    Calibrate(commands::calibrate::CalibrateArgs),
    Merge(commands::merge::MergeArgs),
    Completions(commands::shell::CompletionsArgs),
    Man(commands::shell::ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    smith_calibrate::screen::set_wide(cli.wide);
    let result = match cli.command {
        Command::Replay(args) => commands::replay::run(args),
        Command::Sweep(args) => commands::sweep::run(*args),
        Command::Recommend(args) => commands::recommend::run(*args),
        Command::Report(args) => commands::report::run(args),
        Command::Transcript(args) => commands::transcript::run(args),
        Command::Synth(args) => commands::synth::run(args),
        Command::Import(args) => commands::import::run(args),
        Command::Calibrate(args) => commands::calibrate::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Completions(args) => commands::shell::completions(args, Cli::command()),
        Command::Man(args) => commands::shell::man(args, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of the output went away (`| head`, a pager quit):
        // what it wanted is written, so that is a success.
        Err(e) if messages::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            messages::error(&e);
            commands::exit_code(&e)
        }
    }
}
