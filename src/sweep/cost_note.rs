//! What a sweep's price rests on, in one paragraph under its table (and in
//! `summary.json`): which prices, which lifetime, and for how many sessions
//! the lifetime could apply at all. smith's transcripts carry no times, so
//! for its sessions expiry was not applied, and the note says so rather than
//! letting `price` look like a bill.

use super::aggregate::ConfigSummary;
use super::figures::Metric;
use crate::cost::session::Settings;

/// How the note starts, naming what it is where it stands alone (under
/// the terminal's table, in `summary.json`).
pub(crate) const LEAD: &str = "cost model: ";

/// The note where a label already names it (the report's "Cost model").
pub(crate) fn under_its_label(note: &str) -> &str {
    note.strip_prefix(LEAD).unwrap_or(note)
}

/// The note, from the baseline's sums (`ttl_applied` counts sessions);
/// `settings` where known (the terminal), `None` where only the figures are
/// (the output files, which merged shards must write alike).
pub(crate) fn note(summaries: &[ConfigSummary], settings: Option<&Settings>) -> String {
    let Some(base) = summaries.iter().find(|s| s.is_baseline) else {
        return String::new();
    };
    let sessions = base.sessions as f64;
    let timed = base.total(Metric::TtlApplied);
    let lifetime = match (settings.and_then(|s| s.ttl), timed > 0.0) {
        (Some(t), _) => format!("cache lifetime {t}"),
        (None, true) => {
            "cache lifetime from each session's records (5m where they show none)".into()
        }
        (None, false) => "cache lifetime auto".into(),
    };
    let expiry = if timed == 0.0 {
        "expiry was NOT applied: no session has timestamps (smith's transcripts record none), so every request reads the previous one's prefix".to_string()
    } else if timed < sessions {
        format!(
            "expiry applied to {timed:.0} of {sessions:.0} sessions (those whose records carry times; {} requests of the baseline found the cache expired), NOT to the other {:.0}",
            base.total(Metric::ExpiredRequests),
            sessions - timed
        )
    } else {
        format!(
            "expiry applied to all {sessions:.0} sessions ({} requests of the baseline found the cache expired)",
            base.total(Metric::ExpiredRequests)
        )
    };
    let (read, lost) = (
        base.total(Metric::AccountRead),
        base.total(Metric::AccountEvicted),
    );
    let account = if read > 0.0 || lost > 0.0 {
        format!(
            "; the imported sessions share their account's cache: the baseline's cold requests read {} tokens of the fixed prompt another session or the account's other work kept cached, and {} tokens of its warm prefixes are expected lost to early evictions",
            crate::format::tokens(read),
            crate::format::tokens(lost)
        )
    } else {
        String::new()
    };
    format!(
        "{LEAD}price = each request's cache reads and writes at {} ({lifetime}; {expiry}{account}). \
         Not in price: output (baseline {}) and the summarizer's own requests ({}); price_total adds them ({}).",
        match settings.map(|s| s.prices) {
            Some(Some(p)) => format!("--price {p}"),
            Some(None) => "its session's model's prices (Sonnet's where it names none)".into(),
            None => "its session's model's prices (Sonnet's where it names none), or --price where given".into(),
        },
        crate::format::money(base.total(Metric::PriceOutput)),
        crate::format::money(base.total(Metric::PriceSummarizer)),
        crate::format::money(base.total(Metric::PriceTotal)),
    )
}
