//! smith's `[context]` table, read and checked the way smith reads it
//! (`Config#context` in smith's `config.cr`), and written back as the
//! snippet a user pastes.
//!
//! smith takes `max_tokens` only as a TOML integer and the two fractions as
//! a float or an integer; a key of another type counts as absent (smith's
//! default). It accepts the three only when `max_tokens > 0` and
//! `0 < compact_to < compact_at < 1`; otherwise it warns and uses its
//! default thresholds, keeping `max_tokens` if that alone was positive. A
//! file that is not valid TOML is ignored with a warning. smith keeps
//! `max_tokens` in an Int32, so a larger integer cannot be a setting it
//! runs under either.

use std::path::{Path, PathBuf};

use crate::engine::Config;

/// The file name smith reads under `$SMITH_HOME`.
pub(crate) const CONFIG_FILE: &str = "config.toml";

pub(crate) use crate::engine::budget::smith_accepts as accepts;

/// Whether smith would run under `config`'s window and thresholds if they
/// were written into its `[context]` table.
pub fn accepts_config(config: &Config) -> bool {
    config.check_smith_rule().is_ok()
}

/// Where the baseline came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    /// The `[context]` of this file (possibly partly: absent keys are
    /// smith's defaults).
    File(PathBuf),
    /// No file there: smith's defaults.
    Defaults(PathBuf),
}

/// The configuration smith would run under, as read from its file.
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    /// smith's defaults with the file's `max_tokens`, `compact_at` and
    /// `compact_to` where it gives them and smith accepts them.
    pub config: Config,
    pub(crate) source: Source,
    /// What smith would warn about, with the file's name.
    pub warnings: Vec<String>,
}

/// Reads `path` as smith reads its global config.
pub(crate) fn read(path: &Path) -> Context {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Context {
            config: Config::default(),
            source: Source::Defaults(path.to_path_buf()),
            warnings: Vec::new(),
        },
        Err(e) => Context {
            config: Config::default(),
            source: Source::Defaults(path.to_path_buf()),
            warnings: vec![format!(
                "{}: cannot read it ({e}); smith would use its defaults",
                path.display()
            )],
        },
    }
}

/// [`read`] of a file's text.
pub fn parse(path: &Path, text: &str) -> Context {
    let at = path.display();
    let defaults = Config::default();
    let mut warnings = Vec::new();
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("").trim();
            return Context {
                config: defaults,
                source: Source::Defaults(path.to_path_buf()),
                warnings: vec![format!(
                    "{at}: not valid TOML ({first}); smith ignores the file and uses its defaults"
                )],
            };
        }
    };
    let context = table.get("context").and_then(toml::Value::as_table);
    let get = |key: &str| context.and_then(|c| c.get(key));
    let max_tokens = match get("max_tokens") {
        Some(toml::Value::Integer(i)) => *i,
        Some(other) => {
            warnings.push(format!(
                "{at}: [context] max_tokens is a {}, not an integer; smith ignores it and uses {}",
                other.type_str(),
                defaults.max_tokens
            ));
            defaults.max_tokens as i64
        }
        None => defaults.max_tokens as i64,
    };
    let fraction = |key: &str, default: f64, warnings: &mut Vec<String>| match get(key) {
        Some(toml::Value::Float(f)) => *f,
        Some(toml::Value::Integer(i)) => *i as f64,
        Some(other) => {
            warnings.push(format!(
                "{at}: [context] {key} is a {}, not a number; smith ignores it and uses {default}",
                other.type_str()
            ));
            default
        }
        None => default,
    };
    let compact_at = fraction("compact_at", defaults.compact_at, &mut warnings);
    let compact_to = fraction("compact_to", defaults.compact_to, &mut warnings);
    let mut config = defaults;
    if accepts(max_tokens, compact_at, compact_to) {
        config.max_tokens = max_tokens as u64;
        config.compact_at = compact_at;
        config.compact_to = compact_to;
    } else {
        let reason = if max_tokens <= 0 {
            format!("max_tokens ({max_tokens}) must be positive")
        } else if max_tokens > i32::MAX as i64 {
            format!(
                "max_tokens ({max_tokens}) is above {}, the largest smith can hold",
                i32::MAX
            )
        } else {
            format!(
                "compact_to ({compact_to}) must be above 0 and below compact_at ({compact_at}), and both below 1"
            )
        };
        warnings.push(format!(
            "{at}: [context] {reason}; smith uses its default thresholds"
        ));
        if max_tokens > 0 && max_tokens <= i32::MAX as i64 {
            config.max_tokens = max_tokens as u64;
        }
    }
    Context {
        config,
        source: Source::File(path.to_path_buf()),
        warnings,
    }
}

/// A fraction as TOML writes a float: always with a point.
fn toml_float(v: f64) -> String {
    let s = format!("{v}");
    if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

/// The `[context]` table that makes smith run under `config`'s window and
/// thresholds: `max_tokens` only where it is not smith's default, since
/// the table replaces the user's own.
pub(crate) fn snippet(config: &Config) -> String {
    let mut out = String::from("[context]\n");
    // config.toml does not choose the engine, the smith installed does: a
    // verdict for another than the latest release says which it is for.
    if config.engine != crate::engine::EngineVersion::RELEASED {
        out.push_str(&format!(
            "# for {} (--engine {}), not the latest release\n",
            config.engine.describe(),
            config.engine
        ));
    }
    if config.own_window() {
        out.push_str(
            "# max_tokens: your model's context window (each session was replayed at its own)\n",
        );
    } else if config.max_tokens != Config::default().max_tokens {
        out.push_str(&format!("max_tokens = {}\n", config.max_tokens));
    }
    out.push_str(&format!(
        "compact_at = {}\ncompact_to = {}\n",
        toml_float(config.compact_at),
        toml_float(config.compact_to)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(text: &str) -> Context {
        parse(Path::new("config.toml"), text)
    }

    #[test]
    fn smiths_rule_bounds_every_threshold() {
        assert!(accepts(120_000, 0.8, 0.5));
        assert!(!accepts(0, 0.8, 0.5));
        assert!(!accepts(120_000, 0.5, 0.5));
        assert!(!accepts(120_000, 1.0, 0.5));
        assert!(!accepts(120_000, 0.8, 0.0));
        assert!(!accepts(i32::MAX as i64 + 1, 0.8, 0.5));
    }

    #[test]
    fn the_file_is_read_as_smith_reads_it() {
        let c = ctx("[context]\nmax_tokens = 200000\ncompact_at = 0.9\ncompact_to = 0.4\n");
        assert_eq!(
            (
                c.config.max_tokens,
                c.config.compact_at,
                c.config.compact_to
            ),
            (200_000, 0.9, 0.4)
        );
        assert!(c.warnings.is_empty());
        // A float max_tokens is not an integer to smith: its default.
        let c = ctx("[context]\nmax_tokens = 64000.0\n");
        assert_eq!(c.config.max_tokens, 120_000);
        assert_eq!(c.warnings.len(), 1);
        // Bad thresholds: smith's defaults for them, the window kept.
        let c = ctx("[context]\nmax_tokens = 64000\ncompact_at = 0.5\ncompact_to = 0.6\n");
        assert_eq!(
            (
                c.config.max_tokens,
                c.config.compact_at,
                c.config.compact_to
            ),
            (64_000, 0.8, 0.5)
        );
        assert!(
            c.warnings[0].contains("must be above 0 and below"),
            "{:?}",
            c.warnings
        );
        let c = ctx("[context\n");
        assert_eq!(c.config, Config::default());
        assert!(c.warnings[0].contains("not valid TOML"));
        let c = ctx("[context]\ncompact_at = 1\ncompact_to = 0.5\n");
        assert_eq!(c.config.compact_at, 0.8);
    }

    #[test]
    fn the_snippet_reads_back_as_the_config() {
        let config = Config {
            max_tokens: 200_000,
            compact_at: 0.85,
            compact_to: 0.45,
            ..Config::default()
        };
        let text = snippet(&config);
        let back = ctx(&text);
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        assert_eq!(back.config, config);
        assert!(!snippet(&Config::default()).contains("max_tokens"));
        assert_eq!(toml_float(1.0), "1.0");
    }
}
