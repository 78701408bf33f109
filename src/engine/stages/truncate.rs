//! Stage 2: shorten stale tool results, largest first.
//!
//! The first lossy stage, so it runs after the free ones. Largest first means
//! a given number of tokens is reclaimed by mangling as few results as
//! possible. A result that already carries a marker collapses to a one-line
//! stub: keeping its head forever would leave, across hundreds of results, a
//! mass larger than the window.

use crate::engine::constants::TRUNCATION_MARKER;
use crate::engine::marks::{has_marker, RecordMarks};
use crate::engine::record::Recorder;
use crate::engine::working::Working;
use crate::engine::EditKind;

/// What `shorten` did to a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shortened {
    /// At most `cap` bytes and no marker: left as it is.
    Unchanged,
    /// The first `cap` bytes kept, followed by the truncation note.
    Head(Vec<u8>),
    /// Already marked: collapsed to a one-line stub.
    Stub(Vec<u8>),
}

/// [`shorten_marked`], finding the marker itself.
#[cfg(test)]
pub(crate) fn shorten(text: &[u8], cap: usize) -> Shortened {
    shorten_marked(text, cap, has_marker(text))
}

/// smith's `shorten`, with the head size as a knob (`result_cap`, 512), of
/// a text already known to hold a marker or not.
///
/// The head is exactly `cap` bytes even when that splits a character: the
/// accounting counts those bytes, and only output replaces the broken
/// sequence with U+FFFD.
fn shorten_marked(text: &[u8], cap: usize, marked: bool) -> Shortened {
    if marked {
        return Shortened::Stub(
            format!("[{} KiB {TRUNCATION_MARKER}]", text.len() / 1024).into_bytes(),
        );
    }
    if text.len() <= cap {
        return Shortened::Unchanged;
    }
    let mut out = Vec::with_capacity(cap + 80);
    out.extend_from_slice(&text[..cap]);
    out.extend_from_slice(
        format!(
            "\n\n[... {} KiB {TRUNCATION_MARKER} ...]",
            (text.len() - cap) / 1024
        )
        .as_bytes(),
    );
    Shortened::Head(out)
}

/// Shortens tool results before the `window_turns` window (0: every result),
/// largest text first, ties in transcript order, until the history fits.
/// `marks`, when given, says which of the record's results hold a marker.
pub(crate) fn run(
    w: &mut Working,
    target: i64,
    window_turns: usize,
    cap: usize,
    marks: Option<&RecordMarks>,
    record: &mut Recorder,
) -> bool {
    let protected_from = w.window_start(window_turns);
    let mut candidates: Vec<(usize, usize, usize)> = w
        .tool_result_positions(protected_from)
        .into_iter()
        .map(|(i, j)| (w.messages[i].content[j].text_len(), i, j))
        .collect();
    // Stable: equal sizes keep transcript order.
    candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
    let mut changed = false;
    for (_, index, block_index) in candidates {
        if w.fits(target) {
            return changed;
        }
        let block = &w.messages[index].content[block_index];
        let text = block.text_bytes();
        let marked = marks.map_or_else(|| has_marker(text), |m| m.holds_marker(text));
        let (new_text, kind) = match shorten_marked(text, cap, marked) {
            Shortened::Unchanged => continue,
            Shortened::Head(t) => (t, EditKind::HeadKept),
            Shortened::Stub(t) => (t, EditKind::Stubbed),
        };
        if new_text.len() >= text.len() {
            continue;
        }
        let (before, after) = w.rewrite_result(index, block_index, new_text);
        record.edit(index, Some(block_index), kind, before, after);
        changed = true;
    }
    changed
}
