//! The stages of compaction, cheapest and least lossy first. Each walks its
//! candidates in a fixed order, stops as soon as the history fits the raw
//! allowance (checked before each candidate), and returns whether it changed
//! anything. Each records what it rewrote into a
//! [`crate::engine::record::Recorder`].

pub(crate) mod attachments;
pub(crate) mod duplicates;
pub(crate) mod summarize;
pub(crate) mod thinking;
pub(crate) mod truncate;

use super::record::Recorder;
use super::working::Working;
use super::EditKind;
use crate::transcript::Message;

/// Puts `rebuilt` in place of message `index` and records that as an edit of
/// the whole message (thinking dropped, attachments replaced).
fn replace_message(
    w: &mut Working,
    record: &mut Recorder,
    index: usize,
    rebuilt: Message,
    kind: EditKind,
) {
    let before = w.messages[index].bytes();
    let after = rebuilt.bytes();
    w.replace(index, rebuilt);
    record.edit(index, None, kind, before, after);
}
