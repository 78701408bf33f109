//! Stage 0: thinking from turns that are over.
//!
//! Bulky, worthless once its turn is finished, and free to drop. The current
//! turn keeps its thinking byte for byte because Anthropic validates the
//! signatures on it: that is a protocol rule, which is why its window is one
//! turn and not the three of the lossy stages.

use crate::engine::constants::THINKING_WINDOW_TURNS;
use crate::engine::record::Recorder;
use crate::engine::working::Working;
use crate::engine::EditKind;

/// Drops `thinking` and `redacted_thinking` blocks from each message before
/// the current turn, unless that would leave the message with no blocks.
pub(crate) fn run(w: &mut Working, target: i64, record: &mut Recorder) -> bool {
    let protected_from = w.window_start(THINKING_WINDOW_TURNS);
    let mut changed = false;
    for index in 0..protected_from {
        let message = &w.messages[index];
        if !message.content.iter().any(|b| b.kind.is_thinking()) {
            continue;
        }
        if w.fits(target) {
            return changed;
        }
        let kept: Vec<_> = message
            .content
            .iter()
            .filter(|b| !b.kind.is_thinking())
            .cloned()
            .collect();
        // A message with no blocks serialises to `content: null`, which
        // providers reject; no thinking is worth that.
        if kept.is_empty() {
            continue;
        }
        let dropped = message.content.len() - kept.len();
        let rebuilt = message.with_content(kept);
        let kind = EditKind::ThinkingDropped { blocks: dropped };
        super::replace_message(w, record, index, rebuilt, kind);
        changed = true;
    }
    changed
}
