//! `smith-calibrate completions` and `smith-calibrate man`: what a person who
//! installs the tool expects beside the binary, generated from the same clap
//! definitions as the parser, so they can never disagree with `--help`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Command};
use clap_complete::Shell;

use crate::output::write_atomic;

/// Print a shell completion script.
///
/// Example (bash): `smith-calibrate completions bash > ~/.local/share/bash-completion/completions/smith-calibrate`
/// Example (zsh): `smith-calibrate completions zsh > "${fpath[1]}/_smith-calibrate"`
/// Example (fish): `smith-calibrate completions fish > ~/.config/fish/completions/smith-calibrate.fish`
#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub(crate) shell: Shell,
}

/// Write man pages: without `--out`, the top-level page to stdout; with it,
/// one page per command and subcommand.
///
/// Example: `smith-calibrate man | man -l -`
/// Example: `smith-calibrate man --out ~/.local/share/man/man1`
#[derive(Args, Debug)]
pub(crate) struct ManArgs {
    /// Directory to write `smith-calibrate.1` and a page per subcommand
    /// (`smith-calibrate-sweep.1`, …) into; created if missing
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

/// Writes the completion script for `args.shell` to stdout.
pub(crate) fn completions(args: CompletionsArgs, mut cmd: Command) -> Result<()> {
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, name, &mut script);
    io::stdout().lock().write_all(&script)?;
    Ok(())
}

/// Writes the man page(s) of `cmd`.
pub(crate) fn man(args: ManArgs, cmd: Command) -> Result<()> {
    match args.out {
        None => {
            let page = render(&cmd)?;
            io::stdout().lock().write_all(&page)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
            let mut written = Vec::new();
            write_pages(&dir, cmd, &mut written)?;
            crate::note!("wrote {} man pages into {}", written.len(), dir.display());
        }
    }
    Ok(())
}

/// The roff page of one command.
fn render(cmd: &Command) -> Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut page)
        .context("cannot render the man page")?;
    Ok(page)
}

/// Writes `cmd`'s page and, recursively, one per subcommand, named
/// `parent-sub.1` as man(7) expects of subcommand pages.
fn write_pages(dir: &Path, cmd: Command, written: &mut Vec<PathBuf>) -> Result<()> {
    let cmd = if written.is_empty() {
        // The top level: fill in the generated parts (version, help
        // subcommand) the way the parser does.
        let mut cmd = cmd;
        cmd.build();
        cmd
    } else {
        cmd
    };
    let path = dir.join(format!("{}.1", cmd.get_name()));
    write_atomic(&path, &render(&cmd)?)
        .with_context(|| format!("{}: cannot write the man page", path.display()))?;
    written.push(path);
    let parent = cmd.get_name().to_string();
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let named = sub.clone().name(format!("{parent}-{}", sub.get_name()));
        write_pages(dir, named, written)?;
    }
    Ok(())
}
