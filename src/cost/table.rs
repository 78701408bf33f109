//! The price table: one row per model family that appears in the logs the
//! project calibrates on, each number with where it came from and when.
//!
//! Every price in the program comes from here: the sweep's default `--price`
//! (the [`DEFAULT_MODEL`] row), the bill check, and the per-model pricing of
//! imported sessions. Prices are dollars per million tokens, as the providers
//! quote them; the cache columns are written out rather than derived from
//! multipliers so that each figure is the provider's own (and `0.30` stays
//! `0.30`, not `3 × 0.1`). A test holds the Anthropic rows to the documented
//! multipliers ([`WRITE_5M_MULTIPLIER`], [`WRITE_1H_MULTIPLIER`],
//! [`READ_MULTIPLIER`]).

use serde::Serialize;

use super::Prices;

/// Anthropic's five-minute cache write, as a multiple of the input price.
pub const WRITE_5M_MULTIPLIER: f64 = 1.25;
/// Anthropic's one-hour cache write, as a multiple of the input price.
pub const WRITE_1H_MULTIPLIER: f64 = 2.0;
/// A cache read, as a multiple of the input price (Anthropic and Gemini).
pub const READ_MULTIPLIER: f64 = 0.1;

/// The cacheable prefix assumed for a model the table does not know.
pub const DEFAULT_MIN_CACHEABLE: u64 = 1024;

/// How a provider caches prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKind {
    /// The client marks what to cache; writing costs a premium by lifetime
    /// and reads are discounted (Anthropic).
    Explicit,
    /// The provider caches on its own: writing costs plain input and hits are
    /// discounted but not promised (Gemini's implicit caching).
    Implicit,
}

/// The prices of one model family.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelPrice {
    /// What the row covers, for people.
    pub family: &'static str,
    /// Substrings of a model id that pick this row (the first row with a
    /// match wins, so more specific rows come first).
    pub ids: &'static [&'static str],
    pub input: f64,
    pub output: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
    /// The shortest prefix the provider caches: below it a request pays full
    /// input and nothing is cached.
    pub min_cacheable: u64,
    /// Cache reads come in whole blocks of this many tokens (1: any
    /// length).
    pub cache_block: u64,
    pub cache: CacheKind,
    /// Where the numbers come from.
    pub source: &'static str,
    /// When they were read there.
    pub as_of: &'static str,
}

const ANTHROPIC_PRICING: &str = "prices: https://platform.claude.com/docs/en/about-claude/pricing; minimum cacheable prompt: https://platform.claude.com/docs/en/build-with-claude/prompt-caching";

/// The model whose prices are the sweep's default `--price`.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// The table. Anthropic rows: the pricing page's base input, 5-minute and
/// 1-hour cache writes, cache hits and output, and the prompt-caching page's
/// minimum cacheable length. Gemini: the Gemini API pricing page (prompts up
/// to 200k tokens), as OpenRouter passes it on for the mini-swe-agent run.
pub const MODEL_PRICES: [ModelPrice; 7] = [
    ModelPrice {
        family: "Claude Opus 4.5 / 4.6",
        ids: &["opus-4-5", "opus-4-6", "opus-4.5", "opus-4.6"],
        input: 5.0,
        output: 25.0,
        cache_write_5m: 6.25,
        cache_write_1h: 10.0,
        cache_read: 0.50,
        min_cacheable: 4096,
        cache_block: 1,
        cache: CacheKind::Explicit,
        source: ANTHROPIC_PRICING,
        as_of: "2026-02",
    },
    ModelPrice {
        family: "Claude Opus 4 / 4.1",
        ids: &["opus-4"],
        input: 15.0,
        output: 75.0,
        cache_write_5m: 18.75,
        cache_write_1h: 30.0,
        cache_read: 1.50,
        min_cacheable: 1024,
        cache_block: 1,
        cache: CacheKind::Explicit,
        source: ANTHROPIC_PRICING,
        as_of: "2026-02",
    },
    ModelPrice {
        family: "Claude Sonnet 4 / 4.5",
        ids: &["sonnet-4", "sonnet"],
        input: 3.0,
        output: 15.0,
        cache_write_5m: 3.75,
        cache_write_1h: 6.0,
        cache_read: 0.30,
        min_cacheable: 1024,
        cache_block: 1,
        cache: CacheKind::Explicit,
        source: ANTHROPIC_PRICING,
        as_of: "2026-02",
    },
    ModelPrice {
        family: "Claude Haiku 4.5",
        ids: &["haiku-4-5", "haiku-4.5", "haiku"],
        input: 1.0,
        output: 5.0,
        cache_write_5m: 1.25,
        cache_write_1h: 2.0,
        cache_read: 0.10,
        min_cacheable: 4096,
        cache_block: 1,
        cache: CacheKind::Explicit,
        source: ANTHROPIC_PRICING,
        as_of: "2026-02",
    },
    ModelPrice {
        family: "Claude Haiku 3.5",
        ids: &["haiku-3-5", "haiku-3.5"],
        input: 0.80,
        output: 4.0,
        cache_write_5m: 1.0,
        cache_write_1h: 1.6,
        cache_read: 0.08,
        min_cacheable: 2048,
        cache_block: 1,
        cache: CacheKind::Explicit,
        source: ANTHROPIC_PRICING,
        as_of: "2026-02",
    },
    ModelPrice {
        family: "Gemini 3 Pro (preview), prompts up to 200k tokens",
        ids: &["gemini-3-pro"],
        input: 2.0,
        output: 12.0,
        // Implicit caching: what is not read from the cache is plain input.
        cache_write_5m: 2.0,
        cache_write_1h: 2.0,
        cache_read: 0.20,
        min_cacheable: 4096,
        // Not documented: the recorded hits of the mini-swe-agent run are
        // whole multiples of 2048 tokens, less a few dozen.
        cache_block: 2048,
        cache: CacheKind::Implicit,
        source: "https://ai.google.dev/gemini-api/docs/pricing (and the per-response `cost` OpenRouter recorded in the trajectories)",
        as_of: "2025-11",
    },
    // Last, so that every more specific Claude row is tried first.
    ModelPrice {
        family: "Claude (unknown version): priced as Sonnet 4.5",
        ids: &["claude"],
        input: 3.0,
        output: 15.0,
        cache_write_5m: 3.75,
        cache_write_1h: 6.0,
        cache_read: 0.30,
        min_cacheable: DEFAULT_MIN_CACHEABLE,
        cache_block: 1,
        cache: CacheKind::Explicit,
        source: ANTHROPIC_PRICING,
        as_of: "2026-02",
    },
];

/// The row of a model id (`claude-opus-4-6`, `google/gemini-3-pro-preview`),
/// if the table knows it.
pub fn model_price(model: &str) -> Option<&'static ModelPrice> {
    model_row(model).and_then(|i| MODEL_PRICES.get(i))
}

/// The position in [`MODEL_PRICES`] of a model id's row, if the table
/// knows it.
pub fn model_row(model: &str) -> Option<usize> {
    let m = model.to_ascii_lowercase();
    MODEL_PRICES
        .iter()
        .position(|p| p.ids.iter().any(|id| m.contains(id)))
}

/// The row of [`DEFAULT_MODEL`], looked up once: a session that records no
/// model is priced at it request by request.
pub fn default_model() -> &'static ModelPrice {
    static ROW: std::sync::LazyLock<&'static ModelPrice> =
        std::sync::LazyLock::new(|| model_price(DEFAULT_MODEL).unwrap_or(&MODEL_PRICES[2]));
    *ROW
}

impl ModelPrice {
    /// The flat prices the sweep ranks by: input, 5-minute write, read.
    pub fn prices(&self) -> Prices {
        Prices {
            input: self.input,
            cache_write: self.cache_write_5m,
            cache_read: self.cache_read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_rows_follow_the_documented_multipliers() {
        for p in MODEL_PRICES
            .iter()
            .filter(|p| p.cache == CacheKind::Explicit)
        {
            let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
            assert!(
                near(p.cache_write_5m, p.input * WRITE_5M_MULTIPLIER),
                "{}",
                p.family
            );
            assert!(
                near(p.cache_write_1h, p.input * WRITE_1H_MULTIPLIER),
                "{}",
                p.family
            );
            assert!(
                near(p.cache_read, p.input * READ_MULTIPLIER),
                "{}",
                p.family
            );
        }
    }

    #[test]
    fn the_models_of_the_logs_find_their_rows() {
        let family = |m: &str| model_price(m).map(|p| p.family);
        assert_eq!(family("claude-opus-4-6"), Some("Claude Opus 4.5 / 4.6"));
        assert_eq!(
            family("claude-opus-4-1-20250805"),
            Some("Claude Opus 4 / 4.1")
        );
        assert_eq!(
            family("claude-sonnet-4-5-20250929"),
            Some("Claude Sonnet 4 / 4.5")
        );
        assert_eq!(
            family("claude-haiku-4-5-20251001"),
            Some("Claude Haiku 4.5")
        );
        assert_eq!(
            family("google/gemini-3-pro-preview"),
            Some("Gemini 3 Pro (preview), prompts up to 200k tokens")
        );
        assert_eq!(family("gpt-4o"), None);
    }

    #[test]
    fn the_sweeps_default_price_is_sonnets_row_unchanged() {
        let p = Prices::default();
        assert_eq!((p.input, p.cache_write, p.cache_read), (3.0, 3.75, 0.30));
    }
}
