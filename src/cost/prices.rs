//! The flat price of a replayed session: what its requests would have cost
//! with Anthropic-style prompt caching, one set of prices for every request.
//!
//! The replay already splits every request into the tokens a cache could
//! serve (the prefix unchanged since the previous request) and the tokens
//! written to it (everything after; after a compaction that rewrote message
//! *i*, everything from *i* on). Here those are priced: reads are cheap,
//! writes cost a premium over plain input. That is why a compaction is not
//! free even when it makes requests smaller, and why compacting further
//! (a lower `compact-to`) can pay off: fewer compactions, fewer rewrites.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::replay::SessionFacts;

/// Tokens per unit the prices are quoted in.
pub(crate) const TOKENS_PER_PRICE_UNIT: f64 = 1_000_000.0;

/// Prices in dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Prices {
    /// Plain (uncached) input.
    pub(crate) input: f64,
    /// Writing to the prompt cache.
    pub(crate) cache_write: f64,
    /// Reading from the prompt cache.
    pub(crate) cache_read: f64,
}

impl Default for Prices {
    /// Claude Sonnet's list prices from the price table
    /// ([`super::table::DEFAULT_MODEL`]): $3 input, $3.75 cache write
    /// (5-minute cache, 1.25×), $0.30 cache read (0.1×).
    fn default() -> Self {
        super::table::default_model().prices()
    }
}

/// Why a `--price` value is no prices: not three of them, or one that is
/// not a number of 0 or more. Each carries the whole value as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    #[error("{0:?}: give three prices per million tokens, input,cache_write,cache_read (e.g. 3,3.75,0.3)")]
    NotThree(String),
    /// The value, which price (`input`, `cache_write`, `cache_read`), and
    /// its text.
    #[error("{value:?}: the {name} price {text:?} is not a number of 0 or more")]
    Bad {
        value: String,
        name: &'static str,
        text: String,
    },
}

impl FromStr for Prices {
    type Err = PriceError;

    /// `input,cache_write,cache_read`, e.g. `3,3.75,0.3`.
    fn from_str(s: &str) -> Result<Prices, PriceError> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let [input, write, read] = parts.as_slice() else {
            return Err(PriceError::NotThree(s.to_string()));
        };
        let p = |name: &'static str, t: &str| -> Result<f64, PriceError> {
            match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(PriceError::Bad {
                    value: s.to_string(),
                    name,
                    text: t.to_string(),
                }),
            }
        };
        Ok(Prices {
            input: p("input", input)?,
            cache_write: p("cache_write", write)?,
            cache_read: p("cache_read", read)?,
        })
    }
}

impl fmt::Display for Prices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "${}/M input, ${}/M cache write, ${}/M cache read",
            self.input, self.cache_write, self.cache_read
        )
    }
}

/// What a session cost under one config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Cost {
    /// With prompt caching: cache writes and cache reads priced separately.
    pub price: f64,
    /// Every token sent at the plain input price, for comparison.
    pub price_uncached: f64,
}

impl Prices {
    /// The price of `cache_read` and `cache_write` tokens.
    pub fn cached(&self, cache_read: i64, cache_write: i64) -> f64 {
        (cache_write as f64 * self.cache_write + cache_read as f64 * self.cache_read)
            / TOKENS_PER_PRICE_UNIT
    }

    /// The price of `tokens` at the plain input price.
    pub(crate) fn uncached(&self, tokens: i64) -> f64 {
        tokens as f64 * self.input / TOKENS_PER_PRICE_UNIT
    }

    /// The cost of a replayed session.
    pub fn cost(&self, f: &SessionFacts) -> Cost {
        Cost {
            price: self.cached(f.cache_read, f.cache_write),
            price_uncached: self.uncached(f.tokens_sent),
        }
    }
}
