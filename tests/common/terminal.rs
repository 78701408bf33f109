//! The binary run under a pseudo-terminal (util-linux's `script`), for the
//! tests of what a person sees on a terminal: fitted tables, spinners.

use std::process::{Command, ExitStatus};

/// `arg` quoted for `sh -c`.
fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// The binary run with `args` on a terminal `columns` wide, with the
/// environment of [`super::bin`] and the shell redirection `redirect`
/// (`> /dev/null`, `2>FILE`) after it: its exit status and what the
/// terminal showed ([`plain`]). `None` where this machine has no `script`.
pub fn run(args: &[&str], columns: usize, redirect: &str) -> Option<(ExitStatus, String)> {
    run_with(super::bin(), args, columns, redirect)
}

/// [`run`] with the environment of `bin` (the binary, as [`super::bin`]
/// makes it, with more set).
pub fn run_with(
    bin: Command,
    args: &[&str],
    columns: usize,
    redirect: &str,
) -> Option<(ExitStatus, String)> {
    let mut line = format!(
        "stty cols {columns} rows 50; {}",
        quote(bin.get_program().to_str()?)
    );
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    line.push(' ');
    line.push_str(redirect);
    let mut script = Command::new("script");
    script.args(["-qec", &line, "/dev/null"]);
    for (key, value) in bin.get_envs() {
        match value {
            Some(v) => script.env(key, v),
            None => script.env_remove(key),
        };
    }
    match script.output() {
        Ok(out) => Some((out.status, plain(&String::from_utf8_lossy(&out.stdout)))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: no `script` (util-linux) to run the binary on a terminal");
            None
        }
        Err(e) => panic!("script: {e}"),
    }
}

/// `arg` quoted for the shell line of [`run`]'s redirection.
pub fn quoted(arg: &str) -> String {
    quote(arg)
}

/// `text` without terminal escape sequences and carriage returns.
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                if chars.next_if_eq(&'[').is_some() {
                    // A control sequence ends at its first letter.
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}
