//! The figures of one session under one config, named once.
//!
//! Every output (the sessions and configs files, the terminal table, the
//! ranking, the JSON) reads the figures through [`FIGURES`], so a figure added
//! here appears everywhere under one name, and the name is the column name.

use crate::engine::Stage;
use crate::replay::SessionFacts;

use super::cost::Prices;

/// How a figure is summed over the sessions of a config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number; the config's figure is the sum over sessions.
    Count,
    /// A whole number that is a maximum (peak tokens); the config's figure is
    /// the maximum over sessions, since a sum of peaks means nothing.
    Peak,
    /// Dollars; the config's figure is the sum over sessions.
    Price,
}

/// One figure.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    /// The column name.
    pub name: &'static str,
    pub kind: Kind,
    /// Whether the configs table reports its mean, median and p95 over
    /// sessions: for the figures a per-session distribution says something
    /// about (cost, size, damage), not for every stage counter.
    pub stats: bool,
    /// Whether the configs table reports its change against the baseline.
    pub delta: bool,
}

const fn fig(name: &'static str, kind: Kind, stats: bool, delta: bool) -> Figure {
    Figure {
        name,
        kind,
        stats,
        delta,
    }
}

use Kind::{Count, Peak, Price};

/// Every figure, in column order. The stage counters follow
/// [`Stage::ALL`]: `fires_<stage>` is the number of requests the stage
/// changed something in, `reclaimed_<stage>` the tokens it reclaimed, charged
/// like `before` and `after`. `results_lost`, `needed_again` and `refetched` are the loss
/// measure of `crate::loss`: distinct results shortened or removed, and how
/// many of them the rest of the session needed again or fetched again.
pub const FIGURES: [Figure; 46] = [
    fig("messages", Count, false, false),
    fig("requests", Count, false, false),
    fig("triggered", Count, false, true),
    fig("compactions", Count, true, true),
    fig("fires_thinking", Count, false, false),
    fig("fires_attachments", Count, false, false),
    fig("fires_duplicates", Count, false, false),
    fig("fires_truncate", Count, false, false),
    fig("fires_summarize", Count, false, false),
    fig("fires_drop", Count, false, false),
    fig("reclaimed_thinking", Count, false, false),
    fig("reclaimed_attachments", Count, false, false),
    fig("reclaimed_duplicates", Count, false, false),
    fig("reclaimed_truncate", Count, false, false),
    fig("reclaimed_summarize", Count, false, false),
    fig("reclaimed_drop", Count, false, false),
    fig("results_mangled", Count, true, true),
    fig("results_truncated", Count, false, false),
    fig("results_stubbed", Count, false, false),
    fig("results_lost", Count, true, true),
    fig("needed_again", Count, true, true),
    fig("refetched", Count, true, true),
    fig("reads_superseded", Count, false, false),
    fig("thinking_dropped", Count, false, false),
    fig("attachments_removed", Count, false, false),
    fig("summaries", Count, true, true),
    fig("drops", Count, false, true),
    fig("messages_summarized", Count, true, true),
    fig("target_misses", Count, false, true),
    fig("exhausted", Count, false, true),
    fig("peak_tokens", Peak, true, true),
    fig("peak_before", Peak, false, false),
    fig("tokens_sent", Count, true, true),
    fig("cache_read", Count, true, true),
    fig("cache_write", Count, true, true),
    fig("price", Price, true, true),
    fig("price_uncached", Price, true, true),
    // Misfires (crate::replay::misfire); target_misses and exhausted above
    // are the other two kinds.
    fig("misfire_grew", Count, false, true),
    fig("misfire_repeated", Count, false, true),
    // The cost model's parts beside `price` (crate::cost::session::Meter):
    // output, the summarizer's own requests, and the three together.
    fig("output_tokens", Count, false, false),
    fig("price_output", Price, false, false),
    fig("price_summarizer", Price, true, true),
    fig("price_total", Price, true, true),
    // Requests whose cache had expired, tokens written to the one-hour
    // tier, and 1 for a session whose records gave times (the config's sum:
    // sessions the lifetime applied to).
    fig("expired_requests", Count, false, true),
    fig("cache_write_1h", Count, false, false),
    fig("ttl_applied", Count, false, false),
];

/// Number of figures.
pub const N: usize = FIGURES.len();

/// Position of the figure named `name`.
pub fn index(name: &str) -> Option<usize> {
    FIGURES.iter().position(|f| f.name == name)
}

/// Position of a figure known to exist; for the code's own names.
pub(crate) fn at(name: &str) -> usize {
    match index(name) {
        Some(i) => i,
        None => panic!("no figure named {name}"),
    }
}

/// Names of the figures a config can be ranked by: those compared against
/// the baseline.
pub fn rankable() -> impl Iterator<Item = &'static str> {
    FIGURES.iter().filter(|f| f.delta).map(|f| f.name)
}

/// The figures of one replayed session, in [`FIGURES`] order. Whole numbers
/// are carried as `f64`, exact far beyond any token count.
pub fn values(f: &SessionFacts, prices: &Prices) -> [f64; N] {
    let e = &f.effects;
    let cost = prices.cost(f);
    let mut v = [0.0; N];
    let mut i = 0;
    let mut put = |x: f64| {
        v[i] = x;
        i += 1;
    };
    put(f.messages as f64);
    put(f.requests as f64);
    put(f.triggered as f64);
    put(f.compactions as f64);
    for s in Stage::ALL {
        put(f.stage_fires[s.index()] as f64);
    }
    for s in Stage::ALL {
        put(e.reclaimed[s.index()] as f64);
    }
    put(e.results_mangled() as f64);
    put(e.results_truncated as f64);
    put(e.results_stubbed as f64);
    put(f.results_lost as f64);
    put(f.needed_again as f64);
    put(f.refetched as f64);
    put(e.reads_superseded as f64);
    put(e.thinking_dropped as f64);
    put(e.attachments_removed as f64);
    put(f.summaries as f64);
    put(f.drops as f64);
    put(e.messages_summarized as f64);
    put(f.target_misses as f64);
    put(f.exhausted as f64);
    put(f.peak_tokens as f64);
    put(f.peak_before as f64);
    put(f.tokens_sent as f64);
    put(f.cache_read as f64);
    put(f.cache_write as f64);
    // The cost model's price where the sweep metered the replay, else the
    // flat price of the sums (equal to the bit for a smith session).
    let m = f.priced.unwrap_or(crate::replay::ModelCost {
        price: cost.price,
        price_uncached: cost.price_uncached,
        ..Default::default()
    });
    put(m.price);
    put(m.price_uncached);
    put(f.misfire_grew as f64);
    put(f.misfire_repeated as f64);
    put(m.output_tokens as f64);
    put(m.price_output);
    put(m.price_summarizer);
    put(m.price + m.price_output + m.price_summarizer);
    put(m.expired as f64);
    put(m.cache_write_1h as f64);
    put(m.ttl_applied as u8 as f64);
    debug_assert_eq!(i, N);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_columns_follow_stage_order() {
        for s in Stage::ALL {
            assert_eq!(
                FIGURES[at("fires_thinking") + s.index()].name,
                format!("fires_{}", s.as_str())
            );
            assert_eq!(
                FIGURES[at("reclaimed_thinking") + s.index()].name,
                format!("reclaimed_{}", s.as_str())
            );
        }
    }

    #[test]
    fn figure_names_are_unique() {
        for (i, f) in FIGURES.iter().enumerate() {
            assert_eq!(index(f.name), Some(i), "{}", f.name);
        }
    }
}
