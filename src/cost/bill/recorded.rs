//! Reading what the log recorded: each request's record, time, model,
//! lifetime tier and recorded price, and the prompt rewrites it shows.

use super::types::{Input, Tokens};
use crate::cost::table::{price_for, ModelPrice};
use crate::cost::CacheTtl;
use crate::time::parse_rfc3339;
use crate::transcript::session_file::{
    RequestRecord, RequestUsage, SessionFile, SideRequest, FORMAT_CLAUDE_CODE,
};

pub(super) fn record_of<'a>(
    file: &'a SessionFile,
    i: usize,
    r: &RequestUsage,
) -> Option<&'a RequestRecord> {
    match file.request_records.get(i) {
        Some(x) if x.message_index == r.message_index => Some(x),
        _ => file
            .request_records
            .iter()
            .find(|x| x.message_index == r.message_index),
    }
}

pub(super) fn time_of(rec: Option<&RequestRecord>) -> Option<i64> {
    rec.and_then(|x| x.timestamp.as_deref())
        .and_then(parse_rfc3339)
}

pub(super) fn model_of(r: &RequestUsage, file: &SessionFile) -> String {
    r.model
        .clone()
        .or_else(|| file.model.clone())
        .unwrap_or_default()
}

/// What a session's recorded usage costs at the price table's rows, request
/// by request as the provider billed it: the figure ccusage reports for the
/// same log.
pub(crate) fn recorded_dollars(file: &SessionFile) -> f64 {
    own_recorded_dollars(file)
        + file
            .side_requests
            .iter()
            .map(|s| {
                let (tokens, price) = side_priced(file, s);
                tokens.dollars(&price)
            })
            .sum::<f64>()
}

/// [`recorded_dollars`] of the session's own requests, without its copies'.
pub(crate) fn own_recorded_dollars(file: &SessionFile) -> f64 {
    (0..file.requests.len())
        .filter(|&i| !copied(file, i))
        .map(|i| request_dollars(file, i))
        .sum()
}

/// Whether request `i` of `file` is another log's, copied into this one
/// (`crate::import::copies`): billed there, not here.
fn copied(file: &SessionFile, i: usize) -> bool {
    file.requests
        .get(i)
        .and_then(|r| record_of(file, i, r))
        .is_some_and(|x| x.copied)
}

/// A side request's recorded tokens and the prices of its model at its
/// prompt's length, as [`request_dollars`] prices a request of the session.
pub(crate) fn side_priced(file: &SessionFile, side: &SideRequest) -> (Tokens, ModelPrice) {
    let u = &side.usage;
    let price = price_for(file.provider.as_deref(), &model_of(u, file))
        .at_time(time_of(Some(&side.record)))
        .at(u.prompt_tokens());
    (recorded_tokens(u, Some(&side.record)), price)
}

/// The recorded split of a request's cache writes: (5-minute, 1-hour),
/// whatever the split leaves out counted in `tier`.
pub(super) fn recorded_split(
    r: &RequestUsage,
    rec: Option<&RequestRecord>,
    tier: CacheTtl,
) -> (u64, u64) {
    let total = r.cache_creation_input_tokens;
    let w5 = rec.and_then(|x| x.cache_write_5m).unwrap_or(0).min(total);
    let w1 = rec
        .and_then(|x| x.cache_write_1h)
        .unwrap_or(0)
        .min(total - w5);
    let rest = total - w5 - w1;
    match tier {
        CacheTtl::OneHour => (w5, w1 + rest),
        _ => (w5 + rest, w1),
    }
}

/// What a request's recorded usage says went where: its writes split by
/// lifetime as its record shows (the rest to five minutes).
pub(crate) fn recorded_tokens(r: &RequestUsage, rec: Option<&RequestRecord>) -> Tokens {
    let tier = tier_of(rec).unwrap_or(CacheTtl::FiveMinutes);
    split_tokens(r, recorded_split(r, rec, tier))
}

/// A request's recorded usage with its writes split (5-minute, 1-hour).
pub(super) fn split_tokens(r: &RequestUsage, (w5, w1): (u64, u64)) -> Tokens {
    Tokens {
        input: r.input_tokens,
        cache_read: r.cache_read_input_tokens,
        cache_write_5m: w5,
        cache_write_1h: w1,
        output: r.output_tokens,
    }
}

/// Dollars of request `i` of `file.requests` as recorded, at its model's
/// prices (the session's model, else the nearest family's row).
pub(crate) fn request_dollars(file: &SessionFile, i: usize) -> f64 {
    let Some(u) = file.requests.get(i) else {
        return 0.0;
    };
    // Priced as the bill check prices it: the provider's row of the
    // request's model, at the rates of the hour it was sent and of the
    // prompt's length.
    let rec = file.request_records.get(i);
    let price = price_for(file.provider.as_deref(), &model_of(u, file))
        .at_time(time_of(rec))
        .at(u.prompt_tokens());
    recorded_tokens(u, file.request_records.get(i)).dollars(&price)
}

/// The lifetime a request's record shows it writing in, if it wrote.
pub(super) fn tier_of(rec: Option<&RequestRecord>) -> Option<CacheTtl> {
    let rec = rec?;
    let w5 = rec.cache_write_5m.unwrap_or(0);
    let w1 = rec.cache_write_1h.unwrap_or(0);
    if w1 > w5 {
        Some(CacheTtl::OneHour)
    } else if w5 > 0 {
        Some(CacheTtl::FiveMinutes)
    } else {
        None
    }
}

/// Whether a user message between two requests is a background task's
/// notification (in a Claude Code session).
pub(super) fn rewritten(input: &Input, from: usize, to: usize) -> bool {
    input.file.source.format == FORMAT_CLAUDE_CODE && input.outline.rewrites_between(from, to)
}

pub(crate) use crate::transcript::outline::rewrites_prompt_at;
