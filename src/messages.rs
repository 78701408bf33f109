//! One way to tell the user something on stderr, and one place that
//! recognises an error as the reader of the output going away.
//!
//! Every command writes its notes (a line passed over, a file written, a
//! warning) through [`note!`](crate::note) and its final error through
//! [`error`], never with `eprintln!`: that macro panics when stderr cannot
//! be written (closed with `2>&-`, a full disk behind a redirect), and a
//! note must never stop a sweep halfway. A note names its own subject
//! (`path:line: skipped: …`, `wrote … into …`); an error line starts with
//! the program's name.
//!
//! A closed stdout (`| head`, a pager quit early) surfaces as a
//! `BrokenPipe` somewhere in an error's chain; commands just propagate it
//! and `main` asks [`is_broken_pipe`] once, then exits quietly with
//! success, as `cat` and `grep` do.

use std::fmt::Display;
use std::io::{self, Write};

/// The program's name, which starts an error line.
pub(crate) const PROGRAM: &str = "smith-calibrate";

/// Writes one line to stderr. A failure to write it is ignored: there is
/// nowhere left to report it.
pub(crate) fn note(message: impl Display) {
    let _ = writeln!(io::stderr().lock(), "{message}");
}

/// Writes lines that end in their own newlines (a report built elsewhere,
/// such as a read log) to stderr as they are, ignoring a failure as
/// [`note`] does.
pub(crate) fn notes(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// A spinner on stderr saying what a step a person waits for is doing
/// (the bootstrap's folds, the report's charts), only when stderr is a
/// terminal: piped, it draws nothing. Clear it with `finish_and_clear`.
pub(crate) fn spinner(
    message: impl Into<std::borrow::Cow<'static, str>>,
) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    let target = if io::stderr().is_terminal() {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    };
    let bar = indicatif::ProgressBar::with_draw_target(None, target);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Writes the error that stopped a command, with its causes:
/// `smith-calibrate: <error>: <cause>`.
pub(crate) fn error(e: &anyhow::Error) {
    note(format_args!("{PROGRAM}: {e:#}"));
}

/// Whether `e`, or any error in its chain, is a write into a pipe whose
/// reader is gone.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    io_kinds(e).any(|k| k == io::ErrorKind::BrokenPipe)
}

/// The kind of every I/O error in `e`'s chain, looking inside the errors
/// that hold one without naming it as their source: an [`io::Error`]
/// wrapping another error, serde_json's, and polars' (its `IO` variant and
/// the `Context` around it). What asks for a kind (a broken pipe, a full
/// disk) finds it however deep a writer put it.
pub(crate) fn io_kinds(e: &anyhow::Error) -> impl Iterator<Item = io::ErrorKind> {
    let mut kinds = Vec::new();
    for cause in e.chain() {
        collect_kinds(cause, &mut kinds, 0);
    }
    kinds.into_iter()
}

/// How deep [`io_kinds`] looks inside one error of a chain.
const MAX_NESTING: usize = 16;

fn collect_kinds(
    e: &(dyn std::error::Error + 'static),
    kinds: &mut Vec<io::ErrorKind>,
    depth: usize,
) {
    if depth > MAX_NESTING {
        return;
    }
    if let Some(io) = e.downcast_ref::<io::Error>() {
        kinds.push(io.kind());
        if let Some(inner) = io.get_ref() {
            collect_kinds(inner, kinds, depth + 1);
        }
    } else if let Some(json) = e.downcast_ref::<serde_json::Error>() {
        kinds.extend(json.io_error_kind());
    } else {
        #[cfg(feature = "full")]
        if let Some(p) = e.downcast_ref::<polars::prelude::PolarsError>() {
            match p {
                polars::prelude::PolarsError::IO { error, .. } => {
                    collect_kinds(error.as_ref(), kinds, depth + 1)
                }
                polars::prelude::PolarsError::Context { error, .. } => {
                    collect_kinds(error.as_ref(), kinds, depth + 1)
                }
                _ => {}
            }
        }
    }
    if let Some(source) = e.source() {
        collect_kinds(source, kinds, depth + 1);
    }
}

/// Writes one line to stderr through [`note`]: `note!("{path}: skipped")`.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::messages::note(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    fn pipe() -> io::Error {
        io::Error::from(io::ErrorKind::BrokenPipe)
    }

    #[test]
    fn a_broken_pipe_is_found_anywhere_in_the_chain() {
        assert!(is_broken_pipe(&anyhow::Error::from(pipe())));
        let wrapped = Err::<(), _>(pipe())
            .context("writing the table")
            .unwrap_err();
        assert!(is_broken_pipe(&wrapped));
        let json = serde_json::to_writer(BrokenWriter, &[1, 2, 3]).unwrap_err();
        assert!(is_broken_pipe(
            &anyhow::Error::from(json).context("summary")
        ));
    }

    #[test]
    fn other_errors_are_not_a_broken_pipe() {
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        assert!(!is_broken_pipe(&anyhow::Error::from(denied)));
        assert!(!is_broken_pipe(&anyhow::anyhow!("broken pipe")));
        let syntax = serde_json::from_str::<u8>("x").unwrap_err();
        assert!(!is_broken_pipe(&anyhow::Error::from(syntax)));
    }

    struct BrokenWriter;

    impl Write for BrokenWriter {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(pipe())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}
