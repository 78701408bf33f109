//! The command line: parse the arguments and hand them to a command.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use smith_calibrate::{commands, messages};

/// Replay smith's context compaction over recorded sessions, under other
/// thresholds, and measure what it would have done.
#[derive(Parser, Debug)]
#[command(name = "smith-calibrate", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Replay(commands::replay::ReplayArgs),
    Sweep(commands::sweep::SweepArgs),
    Report(commands::report::ReportArgs),
    Transcript(commands::transcript::TranscriptArgs),
    Synth(commands::synth::SynthArgs),
    Import(commands::import::ImportArgs),
    Calibrate(commands::calibrate::CalibrateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replay(args) => commands::replay::run(args),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Transcript(args) => commands::transcript::run(args),
        Command::Synth(args) => commands::synth::run(args),
        Command::Import(args) => commands::import::run(args),
        Command::Calibrate(args) => commands::calibrate::run(args),
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
