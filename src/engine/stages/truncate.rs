//! Stage 2: shorten stale tool results, largest first.
//!
//! The first lossy stage, so it runs after the free ones. Largest first means
//! a given number of tokens is reclaimed by mangling as few results as
//! possible. A result that already carries a marker collapses to a one-line
//! stub: keeping its head forever would leave, across hundreds of results, a
//! mass larger than the window.

use std::sync::LazyLock;

use memchr::memmem;

use crate::engine::constants::{SUPERSEDED_MARKER, TRUNCATION_MARKER};
use crate::engine::marks::RecordMarks;
use crate::engine::record::Recorder;
use crate::engine::working::Working;
use crate::engine::EditKind;

/// What `shorten` did to a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shortened {
    /// At most `cap` bytes and no marker: left as it is.
    Unchanged,
    /// The first `cap` bytes kept, followed by the truncation note.
    Head(Vec<u8>),
    /// Already marked: collapsed to a one-line stub.
    Stub(Vec<u8>),
}

/// [`shorten_marked`], finding the marker itself.
#[cfg(test)]
pub fn shorten(text: &[u8], cap: usize) -> Shortened {
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

/// Whether `text` holds the truncation or the superseded marker, read
/// once: both hold [`MARKERS_SHARE`], so each place it occurs is checked
/// for either marker around it, rather than the text (a stale result, up
/// to 256 KiB) being searched twice.
pub(crate) fn has_marker(text: &[u8]) -> bool {
    // A searcher built once: building one costs more than a short search.
    static SHARED: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(MARKERS_SHARE.as_bytes()));
    static AT: LazyLock<[(&[u8], usize); 2]> = LazyLock::new(|| {
        [TRUNCATION_MARKER, SUPERSEDED_MARKER].map(|m| {
            // Both hold it (a test says so); 0 would only make a marker
            // never found, not a wrong one found.
            (m.as_bytes(), m.find(MARKERS_SHARE).unwrap_or(0))
        })
    });
    SHARED.find_iter(text).any(|at| {
        AT.iter().any(|&(marker, offset)| {
            at.checked_sub(offset)
                .and_then(|start| text.get(start..start + marker.len()))
                == Some(marker)
        })
    })
}

/// What both markers hold.
const MARKERS_SHARE: &str = "ed by ";

/// Shortens tool results before the `window_turns` window (0: every result),
/// largest text first, ties in transcript order, until the history fits.
/// `marks`, when given, says which of the record's results hold a marker.
pub fn run(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_markers_hold_what_they_share() {
        assert!(TRUNCATION_MARKER.contains(MARKERS_SHARE));
        assert!(SUPERSEDED_MARKER.contains(MARKERS_SHARE));
    }

    #[test]
    fn one_pass_finds_a_marker_where_two_searches_do() {
        let two = |t: &[u8]| {
            memmem::find(t, TRUNCATION_MARKER.as_bytes()).is_some()
                || memmem::find(t, SUPERSEDED_MARKER.as_bytes()).is_some()
        };
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for marker in [TRUNCATION_MARKER, SUPERSEDED_MARKER] {
            let m = marker.as_bytes();
            texts.push(m.to_vec());
            // Cut short at either end, and whole after noise that shares
            // the common part.
            texts.push(m[..m.len() - 1].to_vec());
            texts.push(m[1..].to_vec());
            texts.push([b"used by followed by ".as_slice(), m, b" tail"].concat());
            texts.push([b"x".repeat(300).as_slice(), m].concat());
        }
        texts.push(b"caused by the cache, reused by everyone".to_vec());
        texts.push(b"ed by ".to_vec());
        texts.push(b"[12 KiB truncated by smith to stay within the context window]".to_vec());
        texts.push(b"superseded by a later identical cal".to_vec());
        texts.push(Vec::new());
        for t in &texts {
            assert_eq!(has_marker(t), two(t), "{}", String::from_utf8_lossy(t));
        }
        assert_eq!(texts.iter().filter(|t| has_marker(t)).count(), 7);
    }
}
