//! The cost model's flags, shared by the commands that price a replay: how
//! long the cache lives and the shortest prefix it keeps ([`CostArgs`]), and
//! one price for every request ([`PriceArg`], for the commands that may
//! replace the price table).

use clap::Args;

use crate::cost::session::Settings;
use crate::cost::{CacheTtl, Prices, UnknownTtl};

/// `--cache-ttl` and `--cache-min-tokens`.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct CostArgs {
    /// Cache lifetime: 5m, 1h, none, or auto (the tier the session's own
    /// records wrote to, else 5m). A request sent longer than this after the
    /// previous one reads nothing from the cache; applies only to sessions
    /// whose records carry times (imported ones), e.g. --cache-ttl 1h
    /// [default: auto]
    #[arg(long, value_name = "TTL", value_parser = parse_ttl, help_heading = "Cost model")]
    pub(crate) cache_ttl: Option<TtlChoice>,
    /// Shortest prefix that is cached, in tokens: a smaller request pays
    /// plain input. Default: an imported session's model's minimum from
    /// the price table (1024 for a model it does not know); none for smith's
    /// own sessions, where every prefix is cached, e.g. --cache-min-tokens 2048
    #[arg(long, value_name = "TOKENS", help_heading = "Cost model")]
    pub(crate) cache_min_tokens: Option<u64>,
}

/// `--price`.
#[derive(Args, Debug, Clone, Copy, Default)]
pub(crate) struct PriceArg {
    /// Prices per million tokens: input,cache_write,cache_read, for every
    /// request instead of its model's row of the price table, e.g. --price
    /// 3,3.75,0.3 [default: per model; Sonnet's where unknown]
    #[arg(long, value_name = "I,W,R", help_heading = "Cost model")]
    pub(crate) price: Option<Prices>,
}

/// A `--cache-ttl` value: a lifetime, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TtlChoice(pub(crate) Option<CacheTtl>);

/// Parses `--cache-ttl`, for clap (whose value parsers may fail with text).
fn parse_ttl(s: &str) -> Result<TtlChoice, String> {
    match s.trim() {
        "auto" => Ok(TtlChoice(None)),
        other => other
            .parse::<CacheTtl>()
            .map(|t| TtlChoice(Some(t)))
            .map_err(|UnknownTtl(text)| {
                format!("{text:?}: give a cache lifetime of 5m, 1h, none or auto")
            }),
    }
}

impl CostArgs {
    /// The cost model's settings, with `--price` if it was given.
    pub(crate) fn settings(&self, price: Option<Prices>) -> Settings {
        Settings {
            ttl: self.cache_ttl.and_then(|t| t.0),
            min_cacheable: self.cache_min_tokens,
            prices: price,
            ..Settings::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_values_parse_and_bad_ones_name_the_choices() {
        assert_eq!(parse_ttl("auto"), Ok(TtlChoice(None)));
        assert_eq!(parse_ttl("1h"), Ok(TtlChoice(Some(CacheTtl::OneHour))));
        assert_eq!(parse_ttl("none"), Ok(TtlChoice(Some(CacheTtl::None))));
        let e = parse_ttl("10m").unwrap_err();
        assert!(e.contains("5m, 1h, none or auto"), "{e}");
    }
}
