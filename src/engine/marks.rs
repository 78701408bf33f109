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
use std::sync::Arc;

use rayon::prelude::*;

use super::stages::truncate::has_marker;
use crate::transcript::{BlockType, Message};

/// The record's results that hold no marker, by address and length.
pub struct RecordMarks {
    clean: HashSet<(usize, usize)>,
    /// The record, kept alive so that no other text can take the address
    /// of one of its results.
    _keep: Vec<Arc<Message>>,
}

impl RecordMarks {
    /// Searches every tool result of `record` once, on rayon's threads.
    pub fn of(record: &[Arc<Message>]) -> RecordMarks {
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
    pub fn holds_marker(&self, text: &[u8]) -> bool {
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
    use crate::engine::constants::{SUPERSEDED_MARKER, TRUNCATION_MARKER};
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
}
