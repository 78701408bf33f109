//! Stage 3: replace the oldest turns with a summary.
//!
//! The cut is always at a real user message, which only ever starts a turn,
//! so no tool call is separated from its result. Offline there is no model:
//! the summary is a stand-in of the configured size, and a size of 0 plays a
//! failing summarizer, whose fallback drops the prefix with a note.

use std::sync::Arc;

use crate::engine::constants::{BYTES_PER_TOKEN, DROP_SUFFIX, SUMMARY_PREFIX};
use crate::engine::Stage;
use crate::estimate::Measure;
use crate::transcript::Message;

/// The first index `i > 0` of a real user message whose suffix fits
/// `target`; if none fits, the last such index; if there is none, 0.
///
/// One pass with a running suffix total instead of an estimate per
/// candidate: suffix estimates only shrink as `i` grows, so the first that
/// fits is the answer. (The engine calls [`safe_cut_index_measured`].)
#[cfg(test)]
pub(crate) fn safe_cut_index(messages: &[Arc<Message>], total_bytes: u64, target: i64) -> usize {
    safe_cut_index_measured(messages, total_bytes, target, &Measure::bytes())
}

/// [`safe_cut_index`] with the history's size `total` in `measure`'s units.
pub(crate) fn safe_cut_index_measured(
    messages: &[Arc<Message>],
    total: u64,
    target: i64,
    measure: &Measure,
) -> usize {
    safe_cut(messages, total, target, measure).0
}

/// [`safe_cut_index_measured`], and whether what survives the cut fits
/// `target` (false where the cut fell back to the last turn start, or
/// there is none).
pub(crate) fn safe_cut(
    messages: &[Arc<Message>],
    total: u64,
    target: i64,
    measure: &Measure,
) -> (usize, bool) {
    let mut suffix = total;
    let mut last = 0;
    for (i, m) in messages.iter().enumerate() {
        if i > 0 && m.starts_real_turn() {
            if (measure.tokens(suffix) as i64) <= target {
                return (i, true);
            }
            last = i;
        }
        suffix -= measure.message(m);
    }
    (last, false)
}

/// The stand-in for a model-written summary: exactly `4 * summary_tokens`
/// bytes of ASCII, so the estimate sees what a real summary of that size
/// would cost.
pub(crate) fn stand_in(summary_tokens: u64) -> Vec<u8> {
    const NOTE: &[u8] = b"[offline stand-in for the model's summary] ";
    let len = (summary_tokens * BYTES_PER_TOKEN) as usize;
    NOTE.iter().copied().cycle().take(len).collect()
}

/// The stand-in sized for `measure`: under bytes4 exactly [`stand_in`];
/// under another estimator the same note repeated to about `summary_tokens`
/// of that estimator's tokens (scaled once from the bytes4 stand-in's count,
/// so within a token or two), so the summary costs what it costs under
/// smith's estimate, in the other estimator's tokens.
pub(crate) fn stand_in_measured(summary_tokens: u64, measure: &Measure) -> Vec<u8> {
    let base = stand_in(summary_tokens);
    if measure.is_bytes4() {
        return base;
    }
    let units = measure.estimator().text_units(&base);
    if units == 0 {
        return base;
    }
    let wanted = summary_tokens * measure.per_token();
    let len = (base.len() as u128 * wanted as u128 / units as u128) as usize;
    base.iter().copied().cycle().take(len).collect()
}

/// Whether `m` is a summary or drop note a compaction wrote: a user message
/// of one text block that starts with smith's prefix, the mark smith's own
/// engine recognises a summary by.
pub(crate) fn is_summary_note(m: &Message) -> bool {
    m.role == crate::transcript::Role::User
        && m.content.len() == 1
        && m.content[0].kind == crate::transcript::BlockType::Text
        && m.content[0]
            .text_bytes()
            .starts_with(SUMMARY_PREFIX.as_bytes())
}

/// The message that replaces a summarised prefix.
pub(crate) fn summary_message(stand_in: &[u8]) -> Message {
    let mut text = Vec::with_capacity(SUMMARY_PREFIX.len() + stand_in.len());
    text.extend_from_slice(SUMMARY_PREFIX.as_bytes());
    text.extend_from_slice(stand_in);
    Message::user(text)
}

/// The message that replaces a dropped prefix of `dropped` messages.
pub(crate) fn drop_message(dropped: usize) -> Message {
    Message::user(format!("{SUMMARY_PREFIX}{dropped}{DROP_SUFFIX}").into_bytes())
}

/// The offline summary every compactor writes: the stand-in of
/// `summary_tokens` tokens, or the drop note when that is 0 (a failing
/// summarizer). smith's engine sizes it for its measure; the other policies
/// estimate bytes / 4.
#[derive(Clone, Debug)]
pub(crate) struct Summarizer {
    stand_in: Vec<u8>,
    tokens: u64,
}

impl Summarizer {
    /// The summary of `summary_tokens` tokens under bytes / 4.
    pub(crate) fn new(summary_tokens: u64) -> Summarizer {
        Summarizer::measured(summary_tokens, &Measure::bytes())
    }

    /// The summary of `summary_tokens` of `measure`'s tokens
    /// ([`stand_in_measured`]).
    pub(crate) fn measured(summary_tokens: u64, measure: &Measure) -> Summarizer {
        Summarizer {
            stand_in: stand_in_measured(summary_tokens, measure),
            tokens: summary_tokens,
        }
    }

    /// The note that replaces `replaced` messages, and its stage: summarize,
    /// or drop when the summarizer fails.
    pub(crate) fn note(&self, replaced: usize) -> (Message, Stage) {
        if self.tokens == 0 {
            (drop_message(replaced), Stage::Drop)
        } else {
            (summary_message(&self.stand_in), Stage::Summarize)
        }
    }
}
