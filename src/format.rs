//! Numbers and text for people: the terminal tables, `calibrate`, the
//! transcript view and the HTML report all write tokens, dollars,
//! percentages and counts through these functions, so one value reads the
//! same wherever it is printed. A value that is not there (an empty
//! percentile, see [`crate::stats`]) prints as [`NONE`].

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Row};

use crate::screen::Table;

/// What a missing or non-finite value prints as.
pub(crate) const NONE: &str = "–";

/// Tokens with a k/M/G suffix and three significant digits: `950`,
/// `1.25k`, `12.5k`, `1.25M`.
pub(crate) fn tokens(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        NONE.to_string()
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

/// Dollars, the one way every table, page and report writes them: two
/// decimals with thousands separators (`$1,234.50`, `-$3.20`, `$0.00`),
/// and `<$0.01` for an amount that is not nothing but rounds to it (a
/// saving written `$0.00` read as none).
pub fn money(v: f64) -> String {
    if !v.is_finite() {
        return NONE.to_string();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let cents = (v.abs() * 100.0).round();
    if cents == 0.0 && v != 0.0 {
        return format!("{sign}<$0.01");
    }
    let dollars = (cents / 100.0).trunc() as u64;
    let rest = (cents % 100.0) as u64;
    let sign = if cents == 0.0 { "" } else { sign };
    format!("{sign}${}.{rest:02}", whole(dollars))
}

/// A whole number with thousands separators, as every surface writes a
/// count of tokens, bytes or requests in full: `1,351,849,280`, `950`.
pub(crate) fn whole(n: u64) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped
}

/// A count: a whole number, or one decimal when it is not whole (a mean),
/// with thousands separators as [`whole`] writes them.
pub(crate) fn count(v: f64) -> String {
    if !v.is_finite() {
        return NONE.to_string();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let tenths = (v.abs() * 10.0).round() as u64;
    if v.fract() == 0.0 {
        let sign = if tenths == 0 { "" } else { sign };
        format!("{sign}{}", whole(tenths / 10))
    } else {
        format!("{sign}{}.{}", whole(tenths / 10), tenths % 10)
    }
}

/// A fraction as a percentage with one decimal: `0.123` is `12.3%`.
pub fn percent(fraction: f64) -> String {
    if fraction.is_finite() {
        format!("{:.1}%", fraction * 100.0)
    } else {
        NONE.to_string()
    }
}

/// A percentage to a tenth, without the sign of a negative zero (a
/// `-0.04` is `0.0%`, not `-0.0%`).
pub(crate) fn percent_tenths(p: f64) -> String {
    let tenths = (p * 10.0).round() / 10.0;
    if tenths == 0.0 {
        "0.0%".to_string()
    } else {
        format!("{tenths:.1}%")
    }
}

/// A signed fraction as a percentage with its sign: `-0.05` is `-5.0%`.
pub fn signed_percent(fraction: f64) -> String {
    if fraction.is_finite() {
        format!("{:+.1}%", fraction * 100.0)
    } else {
        NONE.to_string()
    }
}

/// `v` written by `write`, or [`NONE`] when there is none.
pub(crate) fn or_none(v: Option<f64>, write: fn(f64) -> String) -> String {
    v.map_or(NONE.to_string(), write)
}

/// A change already in percent (as [`crate::sweep::aggregate::Delta`]
/// keeps it): `=` only for none, `+<0.1%` for one under a twentieth of a
/// percent, `+12.5%`, and `new` for a change from zero (no percentage).
pub(crate) fn change(pct: Option<f64>) -> String {
    match pct {
        Some(0.0) => "=".to_string(),
        Some(p) if p.abs() < 0.05 => format!("{}<0.1%", if p > 0.0 { '+' } else { '-' }),
        Some(p) => format!("{p:+.1}%"),
        None => "new".to_string(),
    }
}

/// A window in tokens as the config labels write it: `120k`, else the
/// number.
pub(crate) fn window(max_tokens: u64) -> String {
    if max_tokens >= 1000 && max_tokens % 1000 == 0 {
        format!("{}k", max_tokens / 1000)
    } else {
        max_tokens.to_string()
    }
}

/// A fraction of the window as the knobs are written: `0.80`.
pub(crate) fn fraction(v: f64) -> String {
    format!("{v:.2}")
}

/// `n` and the noun, singular or plural: `1 config`, `9 configs`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A terminal table in the one style every command prints, under `header`;
/// it prints fitted to the terminal (see [`crate::screen`]).
pub(crate) fn table(header: impl Into<Row>) -> Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(header);
    Table::new(t)
}

/// A table cell aligned right, as numbers are.
pub(crate) fn right(v: impl ToString) -> Cell {
    Cell::new(v.to_string()).set_alignment(CellAlignment::Right)
}

/// `text` with HTML's special characters escaped, for text nodes and
/// attribute values alike.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_use_suffixes_with_three_significant_digits() {
        assert_eq!(tokens(950.0), "950");
        assert_eq!(tokens(1250.0), "1.25k");
        assert_eq!(tokens(96_000.0), "96.0k");
        assert_eq!(tokens(1_250_000.0), "1.25M");
        assert_eq!(tokens(f64::NAN), NONE);
    }

    #[test]
    fn money_has_two_decimals_and_thousands_separators() {
        assert_eq!(money(123.4), "$123.40");
        assert_eq!(money(12.345), "$12.35");
        assert_eq!(money(19.4343), "$19.43");
        assert_eq!(money(1_234_567.891), "$1,234,567.89");
        assert_eq!(money(999.999), "$1,000.00");
        assert_eq!(money(-3.2), "-$3.20");
        assert_eq!(money(0.01234), "$0.01");
        assert_eq!(money(0.0), "$0.00");
        assert_eq!(money(0.004), "<$0.01");
        assert_eq!(money(-0.004), "-<$0.01");
        assert_eq!(money(f64::INFINITY), NONE);
    }

    #[test]
    fn whole_numbers_have_thousands_separators() {
        assert_eq!(whole(1_351_849_280), "1,351,849,280");
        assert_eq!(whole(96_708), "96,708");
        assert_eq!(whole(950), "950");
        assert_eq!(whole(0), "0");
    }

    #[test]
    fn percentages_of_fractions_and_changes() {
        assert_eq!(percent(0.1234), "12.3%");
        assert_eq!(signed_percent(-0.05), "-5.0%");
        assert_eq!(signed_percent(0.05), "+5.0%");
        assert_eq!(percent(f64::NAN), NONE);
        assert_eq!(change(Some(-10.0)), "-10.0%");
        assert_eq!(change(Some(0.01)), "+<0.1%");
        assert_eq!(change(Some(-0.01)), "-<0.1%");
        assert_eq!(change(Some(0.0)), "=");
        assert_eq!(percent_tenths(-0.04), "0.0%");
        assert_eq!(change(None), "new");
    }

    #[test]
    fn windows_are_written_as_labels_write_them() {
        assert_eq!(window(120_000), "120k");
        assert_eq!(window(4000), "4k");
        assert_eq!(window(4096), "4096");
    }

    #[test]
    fn counts_plurals_and_escapes() {
        assert_eq!(count(3.0), "3");
        assert_eq!(count(2.5), "2.5");
        assert_eq!(count(1_234_567.0), "1,234,567");
        assert_eq!(count(12_345.25), "12,345.3");
        assert_eq!(count(-0.5), "-0.5");
        assert_eq!(count(-1234.0), "-1,234");
        assert_eq!(plural(1, "config"), "1 config");
        assert_eq!(plural(0, "config"), "0 configs");
        assert_eq!(
            escape_html("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
