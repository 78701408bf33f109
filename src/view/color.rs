//! ANSI styling, written by hand: a handful of SGR codes is all a transcript
//! needs, and a crate would add nothing but a dependency.
//!
//! Whether to colour at all follows the usual conventions: `--color never`
//! and `--color always` are obeyed as given (a flag typed for this run beats
//! the environment, as no-color.org asks); under `auto` the output is
//! coloured only when it goes to a terminal, `NO_COLOR` is unset or empty and
//! `TERM` is not `dumb`.

use std::fmt;

/// The `--color` flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour when writing to a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always colour, even into a pipe or a file.
    Always,
    /// Never colour.
    Never,
}

/// The decision, from the flag and the facts about the environment. Pure so
/// that it can be tested without a terminal.
pub(crate) fn decide(
    choice: ColorChoice,
    to_terminal: bool,
    no_color: bool,
    dumb_term: bool,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => to_terminal && !no_color && !dumb_term,
    }
}

/// The decision for this process: reads `NO_COLOR` and `TERM`.
pub(crate) fn enabled(choice: ColorChoice, to_terminal: bool) -> bool {
    // no-color.org: "when present and not an empty string".
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    decide(choice, to_terminal, no_color, dumb)
}

/// What a piece of text is, which decides how it looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// A turn header.
    Turn,
    User,
    Assistant,
    Tool,
    System,
    /// Labels of messages the agent wrote itself (synthetic, summary).
    Synthetic,
    /// Secondary information: sizes, ids, collapsed thinking.
    Dim,
    /// A tool call's name.
    Call,
    /// An error flag.
    Error,
    /// A compaction effect.
    Mark,
    /// A line that matched `--grep`.
    Match,
    /// A header line of a section.
    Heading,
}

impl Style {
    /// The SGR parameters.
    fn code(self) -> &'static str {
        match self {
            Style::Turn => "1;4",
            Style::User => "1;32",
            Style::Assistant => "1;36",
            Style::Tool => "1;33",
            Style::System => "1;35",
            Style::Synthetic => "35",
            Style::Dim => "2",
            Style::Call => "1;34",
            Style::Error => "1;31",
            Style::Mark => "1;91",
            Style::Match => "1;93",
            Style::Heading => "1",
        }
    }
}

/// Paints text, or passes it through untouched when colour is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Painter {
    pub(crate) enabled: bool,
}

impl Painter {
    /// A painter that colours when `enabled`.
    pub(crate) fn new(enabled: bool) -> Painter {
        Painter { enabled }
    }

    /// `text` in `style`, as something to format.
    pub(crate) fn paint<T: fmt::Display>(&self, style: Style, text: T) -> Painted<T> {
        Painted {
            style,
            text,
            enabled: self.enabled,
        }
    }
}

/// Text with a style, written with its escape codes only when colour is on.
pub(crate) struct Painted<T> {
    style: Style,
    text: T,
    enabled: bool,
}

impl<T: fmt::Display> fmt::Display for Painted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.enabled {
            write!(f, "\x1b[{}m{}\x1b[0m", self.style.code(), self.text)
        } else {
            self.text.fmt(f)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_and_no_color_and_pipes_leave_text_plain() {
        assert!(!decide(ColorChoice::Never, true, false, false));
        assert!(!decide(ColorChoice::Auto, true, true, false));
        assert!(!decide(ColorChoice::Auto, false, false, false));
        assert!(!decide(ColorChoice::Auto, true, false, true));
    }

    #[test]
    fn always_beats_the_environment_and_auto_colours_a_terminal() {
        assert!(decide(ColorChoice::Always, false, true, true));
        assert!(decide(ColorChoice::Auto, true, false, false));
    }

    #[test]
    fn a_disabled_painter_writes_no_escape() {
        let off = Painter::new(false);
        assert_eq!(off.paint(Style::Error, "x").to_string(), "x");
        let on = Painter::new(true);
        assert_eq!(
            on.paint(Style::Error, "x").to_string(),
            "\x1b[1;31mx\x1b[0m"
        );
    }
}
