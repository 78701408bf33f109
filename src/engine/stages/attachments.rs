//! Stage 0b: attachments from turns that are over.
//!
//! An image is resent in full every request until it is dropped, which makes
//! it the most expensive thing an old turn carries. It is replaced, not
//! deleted: a note naming the file lets the model ask for it again.

use std::collections::HashMap;

use crate::engine::constants::MEDIA_MARKER;
use crate::engine::record::Recorder;
use crate::engine::working::Working;
use crate::engine::EditKind;
use crate::transcript::{Block, BlockType, Message, Role};

/// Replaces the attachments of each message before the `window_turns`
/// window. `tool_only` (the desperate pass) touches only what tools returned,
/// never what the user attached to the question being answered.
pub(crate) fn run(
    w: &mut Working,
    target: i64,
    window_turns: usize,
    tool_only: bool,
    record: &mut Recorder,
) -> bool {
    let protected_from = w.window_start(window_turns);
    let mut changed = false;
    for index in 0..protected_from {
        let message = &w.messages[index];
        if tool_only && message.role != Role::Tool {
            continue;
        }
        let media = message.content.iter().filter(|b| b.kind.is_media()).count();
        if media == 0 {
            continue;
        }
        if w.fits(target) {
            return changed;
        }
        let rebuilt = without_media(message);
        let kind = EditKind::AttachmentsRemoved { blocks: media };
        super::replace_message(w, record, index, rebuilt, kind);
        changed = true;
    }
    changed
}

/// The note that stands in for an attachment: `[label — MEDIA_MARKER]`.
pub(crate) fn media_note(block: &Block) -> String {
    format!("[{} — {}]", block.media_label(), MEDIA_MARKER)
}

/// The message with its attachments replaced by notes naming them.
///
/// In a `tool` message the note cannot be a block of its own (provider
/// adapters keep only tool_result blocks under that role), so it is appended
/// to the text of the result with the attachment's `tool_call_id`; an
/// attachment with no id, or no such result, leaves no note. In every other
/// role each attachment becomes a text block with its note.
pub(crate) fn without_media(message: &Message) -> Message {
    let content = if message.role == Role::Tool {
        let mut notes: HashMap<&str, Vec<String>> = HashMap::new();
        for block in message.content.iter().filter(|b| b.kind.is_media()) {
            if let Some(id) = block.tool_call_id.as_deref() {
                notes.entry(id).or_default().push(media_note(block));
            }
        }
        message
            .content
            .iter()
            .filter(|b| !b.kind.is_media())
            .map(|block| {
                if block.kind != BlockType::ToolResult {
                    return block.clone();
                }
                let Some(lines) = block.tool_call_id.as_deref().and_then(|id| notes.get(id)) else {
                    return block.clone();
                };
                let mut text = block.text_bytes().to_vec();
                text.extend_from_slice(b"\n\n");
                text.extend_from_slice(lines.join("\n").as_bytes());
                Block::tool_result(
                    block.tool_call_id.clone(),
                    text,
                    block.is_error.unwrap_or(false),
                )
            })
            .collect()
    } else {
        message
            .content
            .iter()
            .map(|block| {
                if block.kind.is_media() {
                    Block::text(media_note(block).into_bytes())
                } else {
                    block.clone()
                }
            })
            .collect()
    };
    message.with_content(content)
}
