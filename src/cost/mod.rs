//! The cost model: what requests cost with prompt caching, and how close
//! that comes to what providers billed.
//!
//! - [`table`]: the prices per model family, with their sources and dates:
//!   the one definition of every price in the program;
//! - [`prices`]: the flat price the sweep ranks replayed sessions by;
//! - [`bill`]: the bill check, pricing the requests of imported sessions as
//!   the source agent sent them (cache lifetime, lifetime tiers, minimum
//!   cacheable prefix, output) and comparing with the recorded usage.

pub(crate) mod bill;
mod prices;
pub(crate) mod report;
pub mod session;
pub mod table;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

pub use prices::{Cost, Prices};
pub(crate) use prices::{PriceError, TOKENS_PER_PRICE_UNIT};
pub(crate) use table::MODEL_PRICES;

/// How long a cached prefix survives without being used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheTtl {
    /// Anthropic's default lifetime.
    #[serde(rename = "5m")]
    FiveMinutes,
    /// Anthropic's extended lifetime (writes cost 2× input instead of 1.25×).
    #[serde(rename = "1h")]
    OneHour,
    /// Never expires: what the flat model assumes.
    None,
}

impl CacheTtl {
    /// The lifetime in seconds; `None` for a cache that never expires.
    pub(crate) fn seconds(self) -> Option<i64> {
        match self {
            CacheTtl::FiveMinutes => Some(5 * 60),
            CacheTtl::OneHour => Some(60 * 60),
            CacheTtl::None => None,
        }
    }
}

/// A cache lifetime that is none of [`CacheTtl`]'s; the text, trimmed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: give a cache lifetime of 5m, 1h or none")]
pub struct UnknownTtl(pub(crate) String);

impl FromStr for CacheTtl {
    type Err = UnknownTtl;

    fn from_str(s: &str) -> Result<CacheTtl, UnknownTtl> {
        match s.trim() {
            "5m" => Ok(CacheTtl::FiveMinutes),
            "1h" => Ok(CacheTtl::OneHour),
            "none" => Ok(CacheTtl::None),
            other => Err(UnknownTtl(other.to_string())),
        }
    }
}

impl fmt::Display for CacheTtl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
            CacheTtl::None => "none",
        })
    }
}
