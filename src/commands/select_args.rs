//! `--since`, `--until` and `--project`: the same selection of sessions on
//! every command that reads many, with dates in the local time zone unless
//! they name one.

use std::path::Path;
use std::str::FromStr;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use clap::Args;

use crate::time::{parse_rfc3339, Unix};
use crate::transcript::select::Filter;
use crate::transcript::SessionRef;

use super::usage;

/// The selection flags, flattened into each command's arguments.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct SelectArgs {
    /// Only sessions active on or after this day or instant (YYYY-MM-DD,
    /// YYYYMMDD, YYYY-MM-DDTHH:MM[:SS], in the local time zone unless an
    /// offset or Z is given)
    #[arg(long, value_name = "DATE", help_heading = "Selection")]
    pub(crate) since: Option<String>,
    /// Only sessions begun before the end of this day, or before this
    /// instant (same forms as --since)
    #[arg(long, value_name = "DATE", help_heading = "Selection")]
    pub(crate) until: Option<String>,
    /// Only sessions whose working directory or path contains TEXT (a
    /// Claude Code project folder's name, a repository's name)
    #[arg(long, value_name = "TEXT", help_heading = "Selection")]
    pub(crate) project: Option<String>,
}

impl SelectArgs {
    /// The filter these flags ask for, or a usage error naming the flag.
    pub(crate) fn filter(&self) -> Result<Filter> {
        let zone = local_zone();
        let since = self
            .since
            .as_deref()
            .map(|s| instant(s, zone, false).map_err(|e| usage(format!("--since {s:?}: {e}"))))
            .transpose()?;
        let until = self
            .until
            .as_deref()
            .map(|s| instant(s, zone, true).map_err(|e| usage(format!("--until {s:?}: {e}"))))
            .transpose()?;
        if let (Some(a), Some(b)) = (since, until) {
            if a >= b {
                return Err(usage(format!(
                    "--since {} is not before --until {}",
                    self.since.as_deref().unwrap_or_default(),
                    self.until.as_deref().unwrap_or_default()
                )));
            }
        }
        Ok(Filter {
            since,
            until,
            project: self.project.clone().filter(|p| !p.is_empty()),
        })
    }

    /// The sessions of `found` the flags keep, saying on stderr how many they
    /// left out.
    pub(crate) fn apply(&self, found: Vec<SessionRef>) -> Result<Vec<SessionRef>> {
        let filter = self.filter()?;
        let (kept, left_out) = filter.apply(found);
        if left_out > 0 {
            crate::note!(
                "{left_out} sessions left out by --since/--until/--project; {} kept",
                kept.len()
            );
        }
        Ok(kept)
    }
}

/// The local time zone: `TZ` when it names one, else the zone
/// `/etc/localtime` links to, else `/etc/timezone`, else UTC.
fn local_zone() -> Tz {
    let named = |s: &str| Tz::from_str(s.trim().trim_start_matches(':')).ok();
    if let Some(tz) = std::env::var("TZ").ok().as_deref().and_then(named) {
        return tz;
    }
    let linked = std::fs::read_link("/etc/localtime").ok().and_then(|p| {
        let p = p.to_string_lossy().into_owned();
        p.split_once("zoneinfo/").and_then(|(_, name)| named(name))
    });
    linked
        .or_else(|| {
            std::fs::read_to_string(Path::new("/etc/timezone"))
                .ok()
                .as_deref()
                .and_then(named)
        })
        .unwrap_or(Tz::UTC)
}

/// The instant `text` names in `zone`; a bare date is its first second, or
/// with `end_of_day` the first second of the next day.
fn instant(text: &str, zone: Tz, end_of_day: bool) -> Result<Unix, NoInstant> {
    let t = text.trim();
    if let Some(unix) = parse_rfc3339(t) {
        return Ok(unix);
    }
    let local = |naive: NaiveDateTime| -> Result<Unix, NoInstant> {
        zone.from_local_datetime(&naive)
            .earliest()
            .map(|d| d.timestamp())
            .ok_or(NoInstant::NotInZone(zone))
    };
    for form in ["%Y-%m-%d", "%Y%m%d"] {
        if let Ok(day) = NaiveDate::parse_from_str(t, form) {
            let day = if end_of_day {
                day.succ_opt().unwrap_or(day)
            } else {
                day
            };
            return local(day.and_hms_opt(0, 0, 0).unwrap_or_default());
        }
    }
    for form in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(t, form) {
            return local(naive);
        }
    }
    Err(NoInstant::NotADate)
}

/// Why `--since` or `--until` names no instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
enum NoInstant {
    /// A local time the zone skips (a clock moved forward).
    #[error("does not exist in {}", .0.name())]
    NotInZone(Tz),
    #[error("not a date: use YYYY-MM-DD, YYYYMMDD, YYYY-MM-DDTHH:MM[:SS] or RFC 3339")]
    NotADate,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_is_a_day_in_the_zone_given() {
        let berlin = Tz::Europe__Berlin;
        // 2026-07-01 00:00 in Berlin (summer time, +02:00).
        assert_eq!(instant("2026-07-01", berlin, false), Ok(1_782_856_800));
        assert_eq!(instant("20260701", berlin, false), Ok(1_782_856_800));
        assert_eq!(
            instant("2026-07-01", berlin, true),
            Ok(1_782_856_800 + 86_400)
        );
        assert_eq!(
            instant("2026-07-01T02:30", berlin, false),
            Ok(1_782_865_800)
        );
        // An offset or Z wins over the zone.
        assert_eq!(
            instant("2026-07-01T00:00:00Z", berlin, false),
            Ok(1_782_864_000)
        );
        assert!(instant("July 1st", berlin, false).is_err());
        // The hour skipped when summer time begins does not exist.
        assert!(instant("2026-03-29T02:30", berlin, false).is_err());
    }
}
