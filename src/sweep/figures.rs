//! The figures of one session under one config, named once.
//!
//! A figure is a [`Metric`]: the enum's variants are the columns of the
//! sessions and configs files, in order, and every output (those files, the
//! terminal table, the ranking, `summary.json`, the report) names a figure by
//! its variant. The only place a figure is found by its name is
//! [`Metric::from_name`], for what a user types (`--rank-by`) and what a
//! file says (`summary.json`'s `rank_by`); a typo in the code is then a
//! compile error instead of a panic at run time.

use crate::engine::{Effects, Stage};
use crate::replay::{MisfireKind, ModelCost, SessionFacts};

use crate::cost::Prices;

/// How a figure is summed over the sessions of a config, and so how it is
/// written: whole numbers as integers, dollars as floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A whole number; the config's figure is the sum over sessions.
    Count,
    /// A whole number that is a maximum (peak tokens); the config's figure is
    /// the maximum over sessions, since a sum of peaks means nothing.
    Peak,
    /// Dollars; the config's figure is the sum over sessions.
    Price,
    /// A count that is an expectation (re-fetches a model expects), so a
    /// fraction: the config's figure is the sum over sessions, written as
    /// a float.
    Expected,
}

use Kind::{Count, Expected, Peak, Price};

/// What a figure's value counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// US dollars.
    Usd,
    /// Estimated tokens.
    Tokens,
    /// Anything else counted: requests, results, sessions, messages.
    Count,
}

impl Unit {
    /// How a value in this unit is written for people: dollars, tokens, or
    /// a plain count ([`crate::format`]).
    pub fn format(self) -> fn(f64) -> String {
        match self {
            Unit::Usd => crate::format::money,
            Unit::Tokens => crate::format::tokens,
            Unit::Count => crate::format::count,
        }
    }
}

/// Declares [`Metric`] from one table: each row is a variant, its column
/// name, its [`Kind`], its [`Unit`], its label in the report's tables,
/// whether the configs table gives its distribution over sessions
/// (`stats`), whether it is compared against the baseline and so can rank
/// configs (`delta`), and its value in one session (`value`), an
/// expression of the names the table's first line gives the session's
/// facts, their effects, its cost under the cost model and the flat
/// prices. The row order is the column order.
macro_rules! metrics {
    (
        value($f:ident, $e:ident, $m:ident, $prices:ident);
        $($(#[$doc:meta])* $variant:ident = $name:literal, $kind:expr, $unit:ident, $label:literal, stats $stats:literal, delta $delta:literal, value $value:expr;)*
    ) => {
        /// One figure of a replayed session (and, summed or maximised over
        /// sessions, of a config). Every figure is lower-is-better: a config
        /// ranks first on the smallest value.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Metric {
            $($(#[$doc])* $variant,)*
        }

        impl Metric {
            /// Every figure, in column order: `Metric::ALL[m.index()] == m`.
            pub const ALL: [Metric; N] = [$(Metric::$variant,)*];

            /// The column name in the data files, and the name `--rank-by`
            /// and `summary.json` use.
            pub const fn name(self) -> &'static str {
                match self { $(Metric::$variant => $name,)* }
            }

            /// How the figure adds up over sessions and is written.
            pub(crate) const fn kind(self) -> Kind {
                match self { $(Metric::$variant => $kind,)* }
            }

            /// What the figure counts, so a value is shown as dollars, as
            /// tokens or as a plain count.
            pub const fn unit(self) -> Unit {
                match self { $(Metric::$variant => Unit::$unit,)* }
            }

            /// The figure as the report's tables head it ("tokens sent",
            /// "over the window").
            pub(crate) const fn label(self) -> &'static str {
                match self { $(Metric::$variant => $label,)* }
            }

            /// Whether the configs table reports its mean, median and p95
            /// over sessions: for the figures a per-session distribution
            /// says something about (cost, size, damage), not for every
            /// stage counter.
            pub const fn stats(self) -> bool {
                match self { $(Metric::$variant => $stats,)* }
            }

            /// Whether the figure is compared against the baseline (its
            /// `_delta` columns, `delta_vs_baseline`), which is also what
            /// makes it one configs can be ranked by.
            pub const fn delta(self) -> bool {
                match self { $(Metric::$variant => $delta,)* }
            }

            /// The figure's value in one replayed session (see [`values`]).
            fn value(self, $f: &SessionFacts, $e: &Effects, $m: &ModelCost, $prices: &Prices) -> f64 {
                match self { $(Metric::$variant => $value,)* }
            }
        }

        /// Number of figures.
        pub(crate) const N: usize = [$($name,)*].len();
    };
}

metrics! {
    value(f, e, m, prices);
    Messages = "messages", Count, Count, "messages", stats false, delta false, value f.messages as f64;
    Requests = "requests", Count, Count, "requests", stats false, delta false, value f.requests as f64;
    Triggered = "triggered", Count, Count, "triggered", stats false, delta true, value f.triggered as f64;
    Compactions = "compactions", Count, Count, "compactions", stats true, delta true, value f.compactions as f64;
    /// `fires_<stage>`, in [`Stage::ALL`] order: the requests the stage
    /// changed something in.
    FiresThinking = "fires_thinking", Count, Count, "fires thinking", stats false, delta false, value fires(f, Stage::Thinking);
    FiresAttachments = "fires_attachments", Count, Count, "fires attachments", stats false, delta false, value fires(f, Stage::Attachments);
    FiresDuplicates = "fires_duplicates", Count, Count, "fires duplicates", stats false, delta false, value fires(f, Stage::Duplicates);
    FiresTruncate = "fires_truncate", Count, Count, "fires truncate", stats false, delta false, value fires(f, Stage::Truncate);
    FiresSummarize = "fires_summarize", Count, Count, "fires summarize", stats false, delta false, value fires(f, Stage::Summarize);
    FiresDrop = "fires_drop", Count, Count, "fires drop", stats false, delta false, value fires(f, Stage::Drop);
    /// `reclaimed_<stage>`, in [`Stage::ALL`] order: the tokens the stage
    /// reclaimed, charged like `before` and `after`.
    ReclaimedThinking = "reclaimed_thinking", Count, Tokens, "reclaimed thinking", stats false, delta false, value reclaimed(e, Stage::Thinking);
    ReclaimedAttachments = "reclaimed_attachments", Count, Tokens, "reclaimed attachments", stats false, delta false, value reclaimed(e, Stage::Attachments);
    ReclaimedDuplicates = "reclaimed_duplicates", Count, Tokens, "reclaimed duplicates", stats false, delta false, value reclaimed(e, Stage::Duplicates);
    ReclaimedTruncate = "reclaimed_truncate", Count, Tokens, "reclaimed truncate", stats false, delta false, value reclaimed(e, Stage::Truncate);
    ReclaimedSummarize = "reclaimed_summarize", Count, Tokens, "reclaimed summarize", stats false, delta false, value reclaimed(e, Stage::Summarize);
    ReclaimedDrop = "reclaimed_drop", Count, Tokens, "reclaimed drop", stats false, delta false, value reclaimed(e, Stage::Drop);
    ResultsMangled = "results_mangled", Count, Count, "results mangled", stats true, delta true, value e.results_mangled() as f64;
    ResultsTruncated = "results_truncated", Count, Count, "results truncated", stats false, delta false, value e.results_truncated as f64;
    ResultsStubbed = "results_stubbed", Count, Count, "results stubbed", stats false, delta false, value e.results_stubbed as f64;
    /// The loss measure of `crate::loss`: distinct results shortened or
    /// removed, and how many of them the rest of the session needed again
    /// or fetched again.
    ResultsLost = "results_lost", Count, Count, "results lost", stats true, delta true, value f.results_lost as f64;
    NeededAgain = "needed_again", Count, Count, "needed again", stats true, delta true, value f.needed_again as f64;
    Refetched = "refetched", Count, Count, "re-fetched", stats true, delta true, value f.refetched as f64;
    StillNeeded = "still_needed", Count, Count, "still needed", stats true, delta true, value f.still_needed as f64;
    ReadsSuperseded = "reads_superseded", Count, Count, "reads superseded", stats false, delta false, value e.reads_superseded as f64;
    ThinkingDropped = "thinking_dropped", Count, Count, "thinking dropped", stats false, delta false, value e.thinking_dropped as f64;
    AttachmentsRemoved = "attachments_removed", Count, Count, "attachments removed", stats false, delta false, value e.attachments_removed as f64;
    Summaries = "summaries", Count, Count, "summaries", stats true, delta true, value f.summaries as f64;
    Drops = "drops", Count, Count, "drops", stats false, delta true, value f.drops as f64;
    /// Summaries smith after #118 did not keep: refused before the call
    /// (the prefix was only an earlier summary), discarded after it (larger
    /// than what they would replace; the call is still paid).
    SummariesRefused = "summaries_refused", Count, Count, "summaries refused", stats false, delta true, value f.summaries_refused as f64;
    SummariesDiscarded = "summaries_discarded", Count, Count, "summaries discarded", stats false, delta true, value f.summaries_discarded as f64;
    MessagesSummarized = "messages_summarized", Count, Count, "messages summarized", stats true, delta true, value e.messages_summarized as f64;
    TargetMisses = "target_misses", Count, Count, "target misses", stats false, delta true, value f.target_misses as f64;
    Exhausted = "exhausted", Count, Count, "over the window", stats false, delta true, value f.exhausted as f64;
    PeakTokens = "peak_tokens", Peak, Tokens, "peak tokens", stats true, delta true, value f.peak_tokens as f64;
    PeakBefore = "peak_before", Peak, Tokens, "peak before", stats false, delta false, value f.peak_before as f64;
    TokensSent = "tokens_sent", Count, Tokens, "tokens sent", stats true, delta true, value f.tokens_sent as f64;
    CacheRead = "cache_read", Count, Tokens, "cache read", stats true, delta true, value f.cache_read as f64;
    CacheWrite = "cache_write", Count, Tokens, "cache writes", stats true, delta true, value f.cache_write as f64;
    Price = "price", Price, Usd, "price", stats true, delta true, value m.price;
    PriceUncached = "price_uncached", Price, Usd, "price uncached", stats true, delta true, value m.price_uncached;
    /// Misfires (`crate::replay::misfire`); target_misses and exhausted
    /// above are the other two kinds.
    MisfireGrew = "misfire_grew", Count, Count, "misfire grew", stats false, delta true, value f.misfire_grew as f64;
    MisfireRepeated = "misfire_repeated", Count, Count, "misfire repeated", stats false, delta true, value f.misfire_repeated as f64;
    MisfireResummarized = "misfire_resummarized", Count, Count, "misfire resummarized", stats false, delta true, value f.misfire_resummarized as f64;
    MisfireOverflow = "misfire_overflow", Count, Count, "misfire overflow", stats false, delta true, value f.misfire_overflow as f64;
    /// The provider's count of what was sent (`crate::replay::real`): the
    /// estimate's `tokens_sent` and `peak_tokens` where the session
    /// measured nothing.
    RealTokensSent = "real_tokens_sent", Count, Tokens, "real tokens sent", stats true, delta true, value f.real_tokens_sent as f64;
    RealPeakTokens = "real_peak_tokens", Peak, Tokens, "real peak tokens", stats true, delta true, value f.real_peak_tokens as f64;
    /// The cost model's parts beside `price` (`crate::cost::session::Meter`):
    /// output, the summarizer's own requests, and the three together.
    OutputTokens = "output_tokens", Count, Tokens, "output tokens", stats false, delta false, value m.output_tokens as f64;
    PriceOutput = "price_output", Price, Usd, "price output", stats false, delta false, value m.price_output;
    PriceSummarizer = "price_summarizer", Price, Usd, "price summarizer", stats true, delta true, value m.price_summarizer;
    PriceTotal = "price_total", Price, Usd, "price total", stats true, delta true, value m.price + m.price_output + m.price_summarizer;
    /// Requests whose cache had expired, tokens written to the one-hour
    /// tier, and 1 for a session whose records gave times (the config's
    /// sum: sessions the lifetime applied to).
    ExpiredRequests = "expired_requests", Count, Count, "expired requests", stats false, delta true, value m.expired as f64;
    CacheWrite1h = "cache_write_1h", Count, Tokens, "cache write 1h", stats false, delta false, value m.cache_write_1h as f64;
    /// What the account's cache beyond each imported session changed:
    /// tokens its cold requests read that another session, or the
    /// account's other work, kept cached, and tokens of warm prefixes
    /// expected lost to early evictions.
    AccountRead = "account_read", Count, Tokens, "account read", stats false, delta false, value m.account_read as f64;
    AccountEvicted = "account_evicted", Count, Tokens, "account evicted", stats false, delta false, value m.account_evicted as f64;
    TtlApplied = "ttl_applied", Count, Count, "ttl applied", stats false, delta false, value m.ttl_applied as u8 as f64;
    /// The price of a loss (`crate::loss::refetch`): the re-fetches the
    /// model expects of the lost results, and `price_total` plus what they
    /// would cost.
    RefetchExpected = "refetch_expected", Expected, Count, "re-fetches expected", stats true, delta true, value f.refetch.expected;
    PriceWithRefetch = "price_with_refetch", Price, Usd, "price with re-fetches", stats true, delta true, value {
        let refetch = if f.priced.is_some() {
            m.price_refetch
        } else {
            crate::cost::session::refetch_dollars(&f.refetch, prices, None)
        };
        m.price + m.price_output + m.price_summarizer + refetch
    };
}

/// The loss measure: of the results a config shortened or removed, those
/// still current where they were lost whose lost tokens a later message
/// used. Of the loss figures it is the one that predicts what agents
/// fetched again after their own compactions (`calibrate`'s validation;
/// `needed_again` did no better than chance there). Every sweep gives the
/// interval of its change against the baseline, and the verdict holds a
/// config to it.
pub const LOSS_MEASURE: Metric = Metric::StillNeeded;

impl Metric {
    /// Position in [`Metric::ALL`], the column order: the index into the
    /// per-figure arrays (`[f64; N]`).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The figure whose column is `name`: for names from outside the code
    /// (a user's `--rank-by`, a file's `rank_by`).
    pub(crate) fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the figure is in dollars (written as money, not a count).
    pub(crate) const fn is_price(self) -> bool {
        matches!(self.kind(), Kind::Price)
    }

    /// The figures configs can be ranked by: those compared against the
    /// baseline.
    pub fn rankable() -> impl Iterator<Item = Metric> {
        Metric::ALL.into_iter().filter(|m| m.delta())
    }

    /// `fires_<stage>`.
    #[cfg(test)]
    pub(crate) const fn fires(stage: Stage) -> Metric {
        match stage {
            Stage::Thinking => Metric::FiresThinking,
            Stage::Attachments => Metric::FiresAttachments,
            Stage::Duplicates => Metric::FiresDuplicates,
            Stage::Truncate => Metric::FiresTruncate,
            Stage::Summarize => Metric::FiresSummarize,
            Stage::Drop => Metric::FiresDrop,
        }
    }

    /// `reclaimed_<stage>`.
    pub(crate) const fn reclaimed(stage: Stage) -> Metric {
        match stage {
            Stage::Thinking => Metric::ReclaimedThinking,
            Stage::Attachments => Metric::ReclaimedAttachments,
            Stage::Duplicates => Metric::ReclaimedDuplicates,
            Stage::Truncate => Metric::ReclaimedTruncate,
            Stage::Summarize => Metric::ReclaimedSummarize,
            Stage::Drop => Metric::ReclaimedDrop,
        }
    }

    /// The figure counting misfires of `kind`.
    pub(crate) const fn misfires(kind: MisfireKind) -> Metric {
        match kind {
            MisfireKind::Grew => Metric::MisfireGrew,
            MisfireKind::Repeated => Metric::MisfireRepeated,
            MisfireKind::TargetMissed => Metric::TargetMisses,
            MisfireKind::OverWindow => Metric::Exhausted,
            MisfireKind::Resummarized => Metric::MisfireResummarized,
            MisfireKind::Overflow => Metric::MisfireOverflow,
        }
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The figures of one replayed session, indexed by [`Metric::index`]. Whole
/// numbers are carried as `f64`, exact far beyond any token count. Each
/// figure's value is a column of its row in the table, so a figure cannot
/// be added without one.
pub fn values(f: &SessionFacts, prices: &Prices) -> [f64; N] {
    // The cost model's price where the sweep metered the replay, else the
    // flat price of the sums (equal to the bit for a smith session).
    let m = f.priced.unwrap_or_else(|| {
        let cost = prices.cost(f);
        ModelCost {
            price: cost.price,
            price_uncached: cost.price_uncached,
            ..Default::default()
        }
    });
    Metric::ALL.map(|metric| metric.value(f, &f.effects, &m, prices))
}

/// `fires_<stage>` of a session.
fn fires(f: &SessionFacts, s: Stage) -> f64 {
    f.stage_fires[s.index()] as f64
}

/// `reclaimed_<stage>` of a session.
fn reclaimed(e: &Effects, s: Stage) -> f64 {
    e.reclaimed[s.index()] as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_columns_are_named_after_their_stage() {
        for s in Stage::ALL {
            assert_eq!(Metric::fires(s).name(), format!("fires_{}", s.as_str()));
            assert_eq!(
                Metric::reclaimed(s).name(),
                format!("reclaimed_{}", s.as_str())
            );
        }
    }

    #[test]
    fn metric_names_are_unique_and_found_by_name() {
        for (i, m) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(m.index(), i, "{m}");
            assert_eq!(Metric::from_name(m.name()), Some(m), "{m}");
        }
        assert_eq!(Metric::from_name("result_mangled"), None);
    }

    #[test]
    fn every_price_figure_is_named_price_and_counts_dollars() {
        for m in Metric::ALL {
            assert_eq!(m.is_price(), m.name().starts_with("price"), "{m}");
            assert_eq!(m.is_price(), m.unit() == Unit::Usd, "{m}");
        }
    }
}
