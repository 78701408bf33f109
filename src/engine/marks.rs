//! Which of a record's tool results hold one of smith's markers, found once
//! for all the replays of a session.
//!
//! Stage 2 stubs a stale result that already holds the truncation or the
//! superseded marker instead of cutting it again, so it searches each
//! result it is about to cut. A sweep replays one record under many
//! configs, which would search the same results once per config. Searched
//! once here, a result of the record is then looked up by its address; any
//! other text (one a stage wrote) is searched when it is cut.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, LazyLock};

use memchr::memmem;
use rayon::prelude::*;

use super::constants::{SUPERSEDED_MARKER, TRUNCATION_MARKER};
use crate::transcript::{BlockType, Message};

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

/// The record's results that hold no marker, by address and length.
pub(crate) struct RecordMarks {
    clean: HashSet<(usize, usize)>,
    /// The record, kept alive so that no other text can take the address
    /// of one of its results.
    _keep: Vec<Arc<Message>>,
}

impl RecordMarks {
    /// Searches every tool result of `record` once, on rayon's threads.
    pub(crate) fn of(record: &[Arc<Message>]) -> RecordMarks {
        let clean = record
            .par_iter()
            .flat_map_iter(|m| {
                m.content
                    .iter()
                    .filter(|b| b.kind == BlockType::ToolResult)
                    .map(|b| b.text_bytes())
                    .filter(|t| !has_marker(t))
                    .map(|t| (t.as_ptr() as usize, t.len()))
                    .collect::<Vec<_>>()
            })
            .collect();
        RecordMarks {
            clean,
            _keep: record.to_vec(),
        }
    }

    /// Whether `text` holds the truncation or the superseded marker: known
    /// for a result of the record, searched for any other text.
    pub(crate) fn holds_marker(&self, text: &[u8]) -> bool {
        !self.clean.contains(&(text.as_ptr() as usize, text.len())) && has_marker(text)
    }
}

impl fmt::Debug for RecordMarks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordMarks")
            .field("clean_results", &self.clean.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Block;

    #[test]
    fn a_result_of_the_record_is_known_and_any_other_text_is_searched() {
        let texts = [
            b"plain output".to_vec(),
            format!("head\n\n[... 3 KiB {TRUNCATION_MARKER} ...]").into_bytes(),
            format!("[read_file: {SUPERSEDED_MARKER}, 1 KiB omitted by smith]").into_bytes(),
            Vec::new(),
        ];
        let record: Vec<Arc<Message>> = texts
            .iter()
            .map(|t| {
                Arc::new(Message::new(
                    crate::transcript::Role::Tool,
                    vec![Block::tool_result(Some("id".into()), t.clone(), false)],
                    false,
                    None,
                ))
            })
            .collect();
        let marks = RecordMarks::of(&record);
        let of = |i: usize| record[i].content[0].text_bytes();
        assert_eq!(
            (0..4)
                .map(|i| marks.holds_marker(of(i)))
                .collect::<Vec<_>>(),
            [false, true, true, false]
        );
        // The same bytes elsewhere are searched, with the same answer.
        for t in &texts {
            assert_eq!(marks.holds_marker(t), has_marker(t));
        }
        // A text of the record's address but another length is searched.
        let marked = of(1);
        assert!(!marks.holds_marker(&marked[..4]));
        assert_eq!(marks.clean.len(), 2);
    }

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
