//! Numbers for people: tick labels, table cells and captions all write
//! tokens, dollars and changes the same way.

use crate::sweep::figures::{Metric, Unit};

/// Tokens with a k/M/G suffix: `950`, `12.5k`, `1.25M`.
pub fn tokens(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "–".to_string()
    } else if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.2}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// Dollars: whole above $100, cents above $1, four decimals below; `$0`
/// for nothing.
pub fn money(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "–".to_string()
    } else if v == 0.0 {
        "$0".to_string()
    } else if a >= 100.0 {
        format!("${v:.0}")
    } else if a >= 1.0 {
        format!("${v:.2}")
    } else {
        format!("${v:.4}")
    }
}

/// A count: a whole number, or one decimal when it is not whole (a mean).
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        "–".to_string()
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The change from `base` to `value` in percent, `=` for none, `new` for a
/// change from zero.
pub fn change(value: f64, base: f64) -> String {
    match crate::sweep::aggregate::Delta::new(value, base).pct {
        Some(p) if p.abs() < 0.05 => "=".to_string(),
        Some(p) => format!("{p:+.1}%"),
        None => "new".to_string(),
    }
}

/// A window in tokens as the config labels write it: `120k`, else the
/// number.
pub fn window(max_tokens: u64) -> String {
    if max_tokens >= 1000 && max_tokens % 1000 == 0 {
        format!("{}k", max_tokens / 1000)
    } else {
        max_tokens.to_string()
    }
}

/// `n` and the noun, singular or plural: `1 config`, `9 configs`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A fraction of the window as the knobs are written: `0.80`.
pub fn fraction(v: f64) -> String {
    format!("{v:.2}")
}

/// How a value of `figure` is written, by what it counts: dollars,
/// tokens, or a plain count.
pub fn of(figure: Metric) -> fn(f64) -> String {
    match figure.unit() {
        Unit::Usd => money,
        Unit::Tokens => tokens,
        Unit::Count => count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_use_suffixes_with_three_significant_digits() {
        assert_eq!(tokens(950.0), "950");
        assert_eq!(tokens(1234.0), "1.23k");
        assert_eq!(tokens(96_000.0), "96.0k");
        assert_eq!(tokens(1_250_000.0), "1.25M");
        assert_eq!(tokens(f64::NAN), "–");
    }

    #[test]
    fn money_keeps_cents_below_a_hundred_dollars() {
        assert_eq!(money(123.4), "$123");
        assert_eq!(money(12.345), "$12.35");
        assert_eq!(money(0.01234), "$0.0123");
        assert_eq!(money(0.0), "$0");
    }

    #[test]
    fn windows_are_written_as_labels_write_them() {
        assert_eq!(window(120_000), "120k");
        assert_eq!(window(4000), "4k");
        assert_eq!(window(4096), "4096");
    }

    #[test]
    fn change_is_signed_percent_against_the_base() {
        assert_eq!(change(90.0, 100.0), "-10.0%");
        assert_eq!(change(100.0, 100.0), "=");
        assert_eq!(change(5.0, 0.0), "new");
        assert_eq!(change(0.0, 0.0), "=");
    }
}
