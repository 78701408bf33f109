//! Compactions that went wrong, found while replaying.
//!
//! Five kinds, each a column of every output and a line of the report:
//! a compaction whose result is larger than its input (`grew`), a compaction
//! that follows another within a few requests (`repeated`: the first one bought
//! too little room), a compaction that ended above its target
//! (`target_missed`, counted as [`super::SessionFacts::target_misses`]) and a
//! request sent over the window (`over_window`, counted as
//! [`super::SessionFacts::exhausted`]) and a compaction that summarised only
//! its own previous summary (`resummarized`), and a request smith's estimate
//! fitted into the window whose real size did not (`overflow`). Target misses and requests over
//! the window have their own counts; this module adds the others and
//! remembers *where* each happened so a report can name the requests.

use serde::{Deserialize, Serialize};

/// How many requests after a compaction another one counts as repeated,
/// unless `--thrash-window` says otherwise.
pub const DEFAULT_THRASH_WINDOW: usize = 3;

/// The largest `--thrash-window` accepted: repeats further apart than this are
/// not remembered, so a wider window could not be honoured afterwards.
pub(crate) const MAX_THRASH_WINDOW: usize = 64;

/// The kind of a misfire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum MisfireKind {
    /// The history after compaction was larger than before it.
    Grew,
    /// A compaction within the thrash window of the previous one.
    Repeated,
    /// A triggered compaction that ended above the target.
    TargetMissed,
    /// A request sent with more than `max_tokens` of history.
    OverWindow,
    /// A compaction that summarised only the previous summary, or that
    /// summarised and reclaimed nothing while every cheaper stage did
    /// nothing: in one long agentic turn the recency window covers the
    /// whole history, so the cheap stages cannot act and each compaction
    /// replaces its own previous summary (a failure smith's changelog
    /// names).
    Resummarized,
    /// A request whose real size, as the provider counts it, was over the
    /// window while smith's estimate fitted: smith would have sent more
    /// than the model takes. Its `before` is the estimate, `after` the real
    /// size.
    Overflow,
}

impl MisfireKind {
    /// Every kind, in the order outputs list them.
    pub(crate) const ALL: [MisfireKind; 6] = [
        MisfireKind::Grew,
        MisfireKind::Repeated,
        MisfireKind::TargetMissed,
        MisfireKind::OverWindow,
        MisfireKind::Resummarized,
        MisfireKind::Overflow,
    ];

    /// The name used in JSON and in the report.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MisfireKind::Grew => "grew",
            MisfireKind::Repeated => "repeated",
            MisfireKind::TargetMissed => "target_missed",
            MisfireKind::OverWindow => "over_window",
            MisfireKind::Resummarized => "resummarized",
            MisfireKind::Overflow => "overflow",
        }
    }

    /// What it means, for people.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            MisfireKind::Grew => "compaction made the history larger",
            MisfireKind::Repeated => "compaction repeated within the thrash window",
            MisfireKind::TargetMissed => "compaction ended above its target",
            MisfireKind::OverWindow => "request sent over the window",
            MisfireKind::Resummarized => {
                "compaction summarised only its previous summary, reclaiming next to nothing"
            }
            MisfireKind::Overflow => {
                "request over the window as the provider counts it, though smith's estimate fitted"
            }
        }
    }
}

/// One misfire at one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Misfire {
    pub kind: MisfireKind,
    /// 0-based request.
    pub(crate) request: usize,
    /// Index in the transcript of the assistant message answering it.
    pub(crate) message_index: usize,
    /// For `repeated`: requests since the previous compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gap: Option<usize>,
    /// Charged tokens before and after this request's compaction.
    pub before: i64,
    pub after: i64,
}

/// Requests of one kind named in a line before the rest are only counted.
pub(crate) const REQUESTS_NAMED: usize = 12;

/// One line per kind of misfire a session had, naming its requests (the
/// first [`REQUESTS_NAMED`]): what `replay` prints below its tables. Empty
/// when nothing misfired.
pub(crate) fn lines(f: &super::SessionFacts) -> String {
    let mut out = String::new();
    for kind in MisfireKind::ALL {
        let at: Vec<&Misfire> = f.counted_misfires().filter(|m| m.kind == kind).collect();
        if at.is_empty() {
            continue;
        }
        let named: Vec<String> = at
            .iter()
            .take(REQUESTS_NAMED)
            .map(|m| match m.gap {
                Some(g) => format!("{} ({g} after the last)", m.request),
                None => format!("{} ({} → {} tokens)", m.request, m.before, m.after),
            })
            .collect();
        let more = match at.len().saturating_sub(REQUESTS_NAMED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        out.push_str(&format!(
            "\nmisfire: {} ({}) at {} request{}: {}{more}",
            kind.as_str(),
            kind.describe(),
            at.len(),
            if at.len() == 1 { "" } else { "s" },
            named.join(", ")
        ));
    }
    out
}

/// Why a `--thrash-window` value is no window.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ThrashWindowError {
    /// Not a whole number: the text given.
    #[error("{0:?} is not a number of requests")]
    NotANumber(String),
    /// Outside 1 to [`MAX_THRASH_WINDOW`].
    #[error("{0} is out of range: a compaction repeated within 1 to {MAX_THRASH_WINDOW} requests")]
    OutOfRange(usize),
}

/// Parses `--thrash-window`: 1 to [`MAX_THRASH_WINDOW`] requests.
pub(crate) fn parse_thrash_window(text: &str) -> Result<usize, ThrashWindowError> {
    let n: usize = text
        .parse()
        .map_err(|_| ThrashWindowError::NotANumber(text.to_string()))?;
    if n == 0 || n > MAX_THRASH_WINDOW {
        return Err(ThrashWindowError::OutOfRange(n));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Strategy;
    use crate::replay::{RequestFacts, SessionFacts};

    fn request(request: usize, before: i64, after: i64, strategy: Strategy) -> RequestFacts {
        RequestFacts {
            before,
            strategy,
            triggered: strategy != Strategy::None,
            cache_write: 0,
            ..crate::replay::sent(request, 2 * request + 1, after)
        }
    }

    #[test]
    fn growth_and_repeats_are_counted_and_located() {
        let mut f = SessionFacts::default();
        // Compactions at requests 1, 3, 8 and 9; the one at 3 grew.
        for r in 0..10 {
            let strategy = if [1, 3, 8, 9].contains(&r) {
                Strategy::Truncated
            } else {
                Strategy::None
            };
            let after = if r == 3 { 120 } else { 90 };
            let mut facts = request(r, 100, after, strategy);
            facts.exhausted = r == 9;
            f.add(&facts);
        }
        assert_eq!(f.misfire_grew, 1);
        // 3 is 2 after 1, 9 is 1 after 8; 8 is 5 after 3, outside 3.
        assert_eq!(f.misfire_repeated, 2);
        let repeated: Vec<(usize, Option<usize>)> = f
            .counted_misfires()
            .filter(|m| m.kind == MisfireKind::Repeated)
            .map(|m| (m.request, m.gap))
            .collect();
        assert_eq!(repeated, vec![(3, Some(2)), (9, Some(1))]);
        let grew = f
            .counted_misfires()
            .find(|m| m.kind == MisfireKind::Grew)
            .unwrap();
        assert_eq!(
            (grew.request, grew.message_index, grew.before, grew.after),
            (3, 7, 100, 120)
        );
        f.set_thrash_window(5);
        assert_eq!(f.misfire_repeated, 3);
        f.set_thrash_window(1);
        assert_eq!(f.misfire_repeated, 1);
        let text = lines(&f);
        assert!(text.contains("misfire: grew"), "{text}");
        assert!(text.contains("misfire: repeated (compaction repeated within the thrash window) at 1 request: 9 (1 after the last)"), "{text}");
        assert!(
            text.contains("misfire: over_window (request sent over the window) at 1 request: 9"),
            "{text}"
        );
    }

    #[test]
    fn thrash_window_accepts_one_to_the_maximum_only() {
        assert_eq!(parse_thrash_window("3"), Ok(3));
        assert_eq!(
            parse_thrash_window(&MAX_THRASH_WINDOW.to_string()),
            Ok(MAX_THRASH_WINDOW)
        );
        assert_eq!(
            parse_thrash_window("0"),
            Err(ThrashWindowError::OutOfRange(0))
        );
        assert_eq!(
            parse_thrash_window("65"),
            Err(ThrashWindowError::OutOfRange(65))
        );
        assert!(parse_thrash_window("x")
            .unwrap_err()
            .to_string()
            .contains("\"x\""));
    }
}
