//! Output through a pager when a person is reading, as git does.
//!
//! When stdout is a terminal the rendering is piped into `$PAGER` (run by
//! the shell, so it may carry arguments), or `less -R` when `PAGER` is unset.
//! `LESS` defaults to `FRX` as in git: short output is printed and less
//! exits, colours pass through, the screen is not cleared on exit. A
//! `PAGER` that is empty or `cat` means no pager. If the pager cannot be
//! started the output goes straight to stdout. The pager reads while the
//! rendering is written, so a large session is on screen at once.

use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

/// Where the rendering goes.
pub(crate) enum Output {
    /// A pager reading from a pipe.
    Pager {
        child: Child,
        stdin: BufWriter<ChildStdin>,
    },
    /// Standard output.
    Direct(BufWriter<Stdout>),
}

/// What `$PAGER` asks for: `None` for no pager, else the command line.
pub(crate) fn pager_command(pager_env: Option<&str>) -> Option<String> {
    match pager_env.map(str::trim) {
        None => Some("less -R".to_string()),
        Some("") | Some("cat") => None,
        Some(cmd) => Some(cmd.to_string()),
    }
}

impl Output {
    /// A pager if `allowed` and stdout is a terminal, else stdout.
    pub(crate) fn open(allowed: bool) -> Output {
        if allowed && io::stdout().is_terminal() {
            let env = std::env::var("PAGER").ok();
            if let Some(cmd) = pager_command(env.as_deref()) {
                if let Some(out) = Output::spawn(&cmd, env.is_some()) {
                    return out;
                }
            }
        }
        Output::direct()
    }

    /// Standard output, buffered.
    pub(crate) fn direct() -> Output {
        Output::Direct(BufWriter::with_capacity(1 << 16, io::stdout()))
    }

    /// Whether a pager is reading (so colour under `auto` is wanted: the
    /// pager shows it on the terminal).
    pub(crate) fn is_pager(&self) -> bool {
        matches!(self, Output::Pager { .. })
    }

    fn spawn(cmd: &str, from_env: bool) -> Option<Output> {
        // The default is started directly, so a missing `less` fails here
        // and the output falls back to stdout instead of into a dead pipe.
        let mut command = if from_env {
            let mut c = Command::new("sh");
            c.arg("-c").arg(cmd);
            c
        } else {
            let mut parts = cmd.split_whitespace();
            let mut c = Command::new(parts.next()?);
            c.args(parts);
            c
        };
        if std::env::var_os("LESS").is_none() {
            command.env("LESS", "FRX");
        }
        let mut child = command.stdin(Stdio::piped()).spawn().ok()?;
        let stdin = child.stdin.take()?;
        Some(Output::Pager {
            child,
            stdin: BufWriter::with_capacity(1 << 16, stdin),
        })
    }

    /// Flushes, closes the pipe and waits for the pager to be quit. A pager
    /// quit before the end comes back, once it has been waited for, as a
    /// `BrokenPipe` error, which `main` takes for success. Returns `false` when the pager
    /// never ran (the shell found no such command, exit 126 or 127): the
    /// caller should then write the output again, directly.
    pub(crate) fn finish(self) -> io::Result<bool> {
        match self {
            Output::Direct(mut out) => out.flush().map(|_| true),
            Output::Pager { mut child, stdin } => {
                let flushed = match stdin.into_inner() {
                    Ok(pipe) => {
                        drop(pipe);
                        Ok(())
                    }
                    Err(e) => Err(e.into_error()),
                };
                let status = child.wait()?;
                if matches!(status.code(), Some(126 | 127)) {
                    return Ok(false);
                }
                flushed.map(|_| true)
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Pager { stdin, .. } => stdin.write(buf),
            Output::Direct(out) => out.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Pager { stdin, .. } => stdin.write_all(buf),
            Output::Direct(out) => out.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Pager { stdin, .. } => stdin.flush(),
            Output::Direct(out) => out.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pager_defaults_to_less_and_cat_or_empty_means_none() {
        assert_eq!(pager_command(None).as_deref(), Some("less -R"));
        assert_eq!(pager_command(Some("")), None);
        assert_eq!(pager_command(Some("cat")), None);
        assert_eq!(pager_command(Some("more -s")).as_deref(), Some("more -s"));
    }
}
