//! The cost model's flags, shared by the commands that price a replay: how
//! long the cache lives and the shortest prefix it keeps ([`CostArgs`]), and
//! one price for every request ([`PriceArg`], for the commands that may
//! replace the price table).

use clap::Args;

use crate::cost::session::Settings;
use crate::cost::table::GivenPrice;
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
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct PriceArg {
    /// Prices per million tokens: input,cache_write,cache_read for every
    /// request instead of its model's row of the price table, e.g. --price
    /// 3,3.75,0.3; or MODEL=input,cache_write,cache_read[,output] for the
    /// requests of one model (repeat for several), the way to price a model
    /// no table names, e.g. --price my-model=1,1,0.2,5 [default: per
    /// model; a model in no table is not priced]
    #[arg(long, value_name = "[MODEL=]I,W,R[,O]", value_parser = parse_price, help_heading = "Cost model")]
    pub(crate) price: Vec<PriceChoice>,
}

/// One `--price` value: prices for every request, or one model's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PriceChoice {
    All(Prices),
    Model(GivenPrice),
}

/// Parses `--price`, for clap: `I,W,R`, or `MODEL=I,W,R[,O]`.
fn parse_price(s: &str) -> Result<PriceChoice, String> {
    let Some((model, rates)) = s.split_once('=') else {
        return s
            .parse::<Prices>()
            .map(PriceChoice::All)
            .map_err(|e| e.to_string());
    };
    let model = model.trim();
    if model.is_empty() {
        return Err(format!("{s:?}: name the model before `=`"));
    }
    let parts: Vec<&str> = rates.split(',').map(str::trim).collect();
    let (three, output) = match parts.as_slice() {
        [i, w, r] => (format!("{i},{w},{r}"), None),
        [i, w, r, o] => (format!("{i},{w},{r}"), Some(*o)),
        _ => {
            return Err(format!(
                "{s:?}: give MODEL=input,cache_write,cache_read[,output] per million tokens (e.g. my-model=1,1,0.2,5)"
            ))
        }
    };
    let prices = three.parse::<Prices>().map_err(|e| format!("{s:?}: {e}"))?;
    let output = match output.map(str::parse::<f64>) {
        None => None,
        Some(Ok(o)) if o.is_finite() && o >= 0.0 => Some(o),
        Some(_) => {
            return Err(format!(
                "{s:?}: the output price {:?} is not a number of 0 or more",
                parts[3]
            ))
        }
    };
    Ok(PriceChoice::Model(GivenPrice {
        model: model.to_string(),
        prices,
        output,
    }))
}

impl PriceArg {
    /// The prices for every request, where given (the last, if several).
    pub(crate) fn flat(&self) -> Option<Prices> {
        self.price.iter().rev().find_map(|p| match p {
            PriceChoice::All(p) => Some(*p),
            PriceChoice::Model(_) => None,
        })
    }

    /// Installs the per-model prices in the price table, before anything is
    /// priced; returns the flat prices, as [`PriceArg::flat`].
    pub(crate) fn install(&self) -> Option<Prices> {
        let given: Vec<GivenPrice> = self
            .price
            .iter()
            .filter_map(|p| match p {
                PriceChoice::Model(g) => Some(g.clone()),
                PriceChoice::All(_) => None,
            })
            .collect();
        if !given.is_empty() {
            crate::cost::table::set_given(&given);
        }
        self.flat()
    }
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
    fn a_price_is_for_every_request_or_for_one_model() {
        let all = parse_price("3,3.75,0.3").unwrap();
        assert!(matches!(all, PriceChoice::All(p) if p.input == 3.0));
        let PriceChoice::Model(g) = parse_price("qwen3-coder-plus=1,1,0.2,5").unwrap() else {
            panic!("not one model's");
        };
        assert_eq!(
            (g.model.as_str(), g.prices.cache_read, g.output),
            ("qwen3-coder-plus", 0.2, Some(5.0))
        );
        let PriceChoice::Model(g) = parse_price("glm-4.7=0.6,0.6,0.11").unwrap() else {
            panic!("not one model's");
        };
        assert_eq!(g.output, None);
        for bad in ["=1,2,3", "m=1,2", "m=1,2,3,x", "m=1,-2,3"] {
            assert!(parse_price(bad).is_err(), "{bad}");
        }
        let arg = PriceArg {
            price: vec![parse_price("m=1,1,1").unwrap(), all],
        };
        assert_eq!(arg.flat().map(|p| p.cache_write), Some(3.75));
    }

    #[test]
    fn ttl_values_parse_and_bad_ones_name_the_choices() {
        assert_eq!(parse_ttl("auto"), Ok(TtlChoice(None)));
        assert_eq!(parse_ttl("1h"), Ok(TtlChoice(Some(CacheTtl::OneHour))));
        assert_eq!(parse_ttl("none"), Ok(TtlChoice(Some(CacheTtl::None))));
        let e = parse_ttl("10m").unwrap_err();
        assert!(e.contains("5m, 1h, none or auto"), "{e}");
    }
}
