//! RFC 3339 times without a time-zone database, shared by the listing,
//! the importers and the generator.
//!
//! Just enough calendar arithmetic to sort sessions by when they were
//! created: smith writes `created_at` as RFC 3339 with the local offset
//! (Crystal's `Time#to_json`), and a file's mtime is seconds since the
//! epoch. Both become UTC seconds; no time-zone database is needed.

use std::time::{SystemTime, UNIX_EPOCH};

/// An instant as seconds since the Unix epoch, UTC.
pub(crate) type Unix = i64;

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (a space or `t` also
/// separates date and time; the fraction is ignored).
pub(crate) fn parse_rfc3339(s: &str) -> Option<Unix> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let part = s.get(from..to)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let ob = rest.as_bytes();
            if ob.len() != 6 || !matches!(ob[0], b'+' | b'-') || ob[3] != b':' {
                return None;
            }
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            let sign = if ob[0] == b'-' { -1 } else { 1 };
            sign * (oh * 3600 + om * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Years start in March so that the leap day is the last of the year.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number from [`days_from_civil`].
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
pub(crate) fn format_rfc3339(t: Unix) -> String {
    let (y, mo, d) = civil_from_days(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// `YYYY-MM-DD HH:MM`, UTC, for tables.
pub(crate) fn format_short(t: Unix) -> String {
    let full = format_rfc3339(t);
    format!("{} {}", &full[..10], &full[11..16])
}

/// A file time as [`Unix`].
pub(crate) fn from_system_time(t: SystemTime) -> Unix {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_fractions_are_understood() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2024-04-05T14:30:12+02:00"),
            Some(1_712_320_212)
        );
        assert_eq!(
            parse_rfc3339("2024-04-05T12:30:12.123456789Z"),
            Some(1_712_320_212)
        );
        assert_eq!(
            parse_rfc3339("2024-04-05 07:30:12-05:00"),
            Some(1_712_320_212)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2024-13-05T12:30:12Z"), None);
    }

    #[test]
    fn formatting_inverts_parsing() {
        for t in [0, 951_782_400, 1_712_320_212, 4_102_444_799] {
            assert_eq!(parse_rfc3339(&format_rfc3339(t)), Some(t));
        }
        assert_eq!(format_short(1_712_320_212), "2024-04-05 12:30");
        assert_eq!(civil_from_days(days_from_civil(2000, 2, 29)), (2000, 2, 29));
    }
}
