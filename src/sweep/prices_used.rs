//! The prices a sweep stood on, worked out once from the sessions it
//! planned and read by every surface: the terminal's header, `--json`,
//! `summary.json` (and so a merge of shards) and the report's "What was
//! swept". `--price` for every request where given; else the row of the
//! price table each imported request was billed at (its model's, at the
//! rates of the hour it was sent where they change with it: DeepSeek's
//! off-peak and peak rows, not its base one), with how many requests; the
//! rows smith's own sessions name; the flat default for sessions that name
//! no model.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::cost::session::SmithPrices;
use crate::cost::table::{lookup, ModelPrice, Unpriced};
use crate::cost::Prices;
use crate::time::parse_rfc3339;
use crate::transcript::locate::read_meta;
use crate::transcript::session_file::SessionFile;
use crate::transcript::SessionRef;

/// What the prices stood on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PricesUsed {
    /// In the words every surface prints: what the prices are per, then
    /// one line per row.
    pub(crate) heading: String,
    pub(crate) lines: Vec<String>,
    /// The rows other agents' requests were priced at, most requests first.
    pub(crate) models: Vec<ModelUse>,
    /// The models in no price table: their dollars are unknown.
    pub(crate) unpriced: Vec<String>,
}

/// One row of the price table and the requests priced at it, in
/// [`crate::sweep::summary::PRICE_UNIT`]; `None` where the model is in no
/// table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelUse {
    pub(crate) family: String,
    pub(crate) provider: String,
    pub(crate) requests: usize,
    pub(crate) input: Option<f64>,
    pub(crate) cache_write_5m: Option<f64>,
    pub(crate) cache_write_1h: Option<f64>,
    pub(crate) cache_read: Option<f64>,
    pub(crate) output: Option<f64>,
}

impl ModelUse {
    fn of(row: &ModelPrice, requests: usize) -> ModelUse {
        let known = |x: f64| x.is_finite().then_some(x);
        ModelUse {
            family: row.family.to_string(),
            provider: row.provider.to_string(),
            requests,
            input: known(row.input),
            cache_write_5m: known(row.cache_write_5m),
            cache_write_1h: known(row.cache_write_1h),
            cache_read: known(row.cache_read),
            output: known(row.output),
        }
    }
}

impl PricesUsed {
    /// The prices of the sessions of `refs`: `given` for every request,
    /// else each request's model's row; `flat` for sessions that name no
    /// model. Says once on stderr which models are in no price table.
    pub(crate) fn of(refs: &[SessionRef], given: Option<Prices>, flat: Prices) -> PricesUsed {
        if let Some(p) = given {
            return PricesUsed {
                heading: format!("{p} (--price, for every request)"),
                ..PricesUsed::default()
            };
        }
        let mut rows: Vec<(&'static ModelPrice, usize)> = Vec::new();
        let mut unrecorded = 0usize;
        let mut smith = SmithPrices::default();
        let mut unpriced = Unpriced::default();
        for r in refs {
            // The metadata the replay reads: a log read in place has no
            // session.json on disk, only the one converted with it.
            let value = read_meta(r).ok().flatten().and_then(|m| m.raw);
            let Some(file) = value.as_ref().and_then(SessionFile::from_meta) else {
                if !smith.add(value.as_ref()) {
                    unrecorded += 1;
                }
                continue;
            };
            let fallback = file.model.as_deref();
            let model_of = |q: &crate::transcript::session_file::RequestUsage| {
                q.model.as_deref().or(fallback).unwrap_or("").to_string()
            };
            let models: Vec<String> = file.requests.iter().map(model_of).collect();
            unpriced.add_session(models.iter().map(String::as_str));
            let sent: HashMap<usize, i64> = file
                .request_records
                .iter()
                .filter_map(|x| Some((x.message_index, parse_rfc3339(x.timestamp.as_deref()?)?)))
                .collect();
            for (r, model) in file.requests.iter().zip(&models) {
                // The rates of the hour it was sent, where the provider's
                // change with it (DeepSeek's peak and off-peak), as the
                // bill and the replay price it.
                let row = lookup(model)
                    .row
                    .at_time(sent.get(&r.message_index).copied());
                match rows.iter_mut().find(|x| x.0.family == row.family) {
                    Some(x) => x.1 += 1,
                    None => rows.push((row, 1)),
                }
            }
        }
        if let Some(line) = unpriced.line() {
            crate::note!("{line}");
        }
        if rows.is_empty() && smith.is_empty() {
            return PricesUsed {
                heading: flat.to_string(),
                ..PricesUsed::default()
            };
        }
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.family.cmp(b.0.family)));
        let mut lines: Vec<String> = rows
            .iter()
            .map(|(p, n)| {
                if p.is_priced() {
                    format!("{} {} ({n} requests)", p.family, p.prices())
                } else {
                    format!("{}: in no price table, not priced ({n} requests)", p.family)
                }
            })
            .collect();
        lines.extend(smith.describe());
        if unrecorded > 0 {
            lines.push(format!(
                "{flat} for the {unrecorded} sessions that record no model"
            ));
        }
        let heading = if smith.is_empty() {
            "per request's model"
        } else {
            "per request's model (smith's own sessions: the provider and model each session.json names)"
        };
        PricesUsed {
            heading: format!("{heading}:"),
            lines,
            models: rows.iter().map(|(p, n)| ModelUse::of(p, *n)).collect(),
            unpriced: unpriced.models().map(str::to_string).collect(),
        }
    }

    /// The heading and its lines as the terminal prints them, one row a
    /// line.
    pub(crate) fn text(&self) -> String {
        let lines: String = self.lines.iter().map(|p| format!("\n  {p}")).collect();
        format!("{}{lines}", self.heading)
    }
}
