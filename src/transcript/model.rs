//! The types of a smith transcript: one [`Message`] per line of
//! `transcript.jsonl`, mirroring smith's `LLM::Message` and `ContentBlock`.
//!
//! Messages are immutable once built and shared through [`Arc`]: the replay
//! keeps a working history that differs from the previous request's only where
//! compaction rewrote something, and that sharing is also what tells the cost
//! model which prefix a provider could have served from its cache.

use std::sync::Arc;

use super::estimate::{BYTES_PER_TOKEN, DOCUMENT_TOKENS, IMAGE_TOKENS};

/// An immutable string shared between the record and every working history.
pub type Str = Arc<str>;

/// Block text. Bytes rather than `str`: smith cuts a stale result at exactly
/// 512 bytes even when that splits a character, the estimate counts those 512
/// bytes, and smith writes them out as they are (Crystal strings are bytes).
/// A line read back with such a text keeps its bytes too.
pub type Text = Arc<[u8]>;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    /// The name smith writes.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Parses a role the way smith's enum does: case-insensitively.
    pub(crate) fn parse(name: &str) -> Option<Role> {
        // The names smith writes, as they are, before any other spelling.
        if let Some(&role) = Role::ALL.iter().find(|r| r.as_str() == name) {
            return Some(role);
        }
        match normalise_enum_name(name).as_str() {
            "system" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }

    /// Every role, in smith's declaration order.
    pub(crate) const ALL: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];
}

/// What a content block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BlockType {
    #[default]
    Text,
    ToolUse,
    ToolResult,
    Thinking,
    RedactedThinking,
    Image,
    Document,
}

impl BlockType {
    /// The name smith writes.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BlockType::Text => "text",
            BlockType::ToolUse => "tool_use",
            BlockType::ToolResult => "tool_result",
            BlockType::Thinking => "thinking",
            BlockType::RedactedThinking => "redacted_thinking",
            BlockType::Image => "image",
            BlockType::Document => "document",
        }
    }

    /// Parses a block type the way Crystal parses an enum member: case does
    /// not matter and neither do the underscores between words (`tool_use`,
    /// `TOOL_USE` and `ToolUse` are one type).
    pub(crate) fn parse(name: &str) -> Option<BlockType> {
        // The names smith writes, as they are, before any other spelling.
        if let Some(&kind) = BlockType::ALL.iter().find(|t| t.as_str() == name) {
            return Some(kind);
        }
        match normalise_enum_name(name).as_str() {
            "text" => Some(BlockType::Text),
            "tooluse" => Some(BlockType::ToolUse),
            "toolresult" => Some(BlockType::ToolResult),
            "thinking" => Some(BlockType::Thinking),
            "redactedthinking" => Some(BlockType::RedactedThinking),
            "image" => Some(BlockType::Image),
            "document" => Some(BlockType::Document),
            _ => None,
        }
    }

    /// Every block type, in smith's declaration order.
    pub(crate) const ALL: [BlockType; 7] = [
        BlockType::Text,
        BlockType::ToolUse,
        BlockType::ToolResult,
        BlockType::Thinking,
        BlockType::RedactedThinking,
        BlockType::Image,
        BlockType::Document,
    ];

    /// Thinking in either form: both are dropped by stage 0.
    pub fn is_thinking(self) -> bool {
        matches!(self, BlockType::Thinking | BlockType::RedactedThinking)
    }

    /// An attachment: replaced by a note in stage 0b.
    pub(crate) fn is_media(self) -> bool {
        matches!(self, BlockType::Image | BlockType::Document)
    }

    /// What the estimate charges for the block beyond its text, in bytes.
    pub(crate) fn media_bytes(self) -> u64 {
        match self {
            BlockType::Image => IMAGE_TOKENS * BYTES_PER_TOKEN,
            BlockType::Document => DOCUMENT_TOKENS * BYTES_PER_TOKEN,
            _ => 0,
        }
    }
}

/// Crystal matches `camelcase.downcase` of the name against the member's:
/// that drops underscores and case.
fn normalise_enum_name(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The label of an attachment that has neither a `source` nor a
/// `media_type`: what smith's note about a removed attachment names it by.
pub(crate) const MEDIA_FALLBACK_LABEL: &str = "attachment";

/// One content block. Absent fields are `None` and are not written out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub kind: BlockType,
    pub text: Option<Text>,
    pub tool_call_id: Option<Str>,
    pub tool_name: Option<Str>,
    /// The arguments of a tool call as compact JSON, serialised the way smith
    /// (Crystal's `JSON::Any#to_json`) serialises them, keys in their order.
    pub tool_args: Option<Str>,
    pub is_error: Option<bool>,
    pub signature: Option<Str>,
    pub media_type: Option<Str>,
    pub source: Option<Str>,
    pub media_ref: Option<Str>,
}

impl Block {
    /// A plain text block.
    pub fn text(text: impl Into<Text>) -> Block {
        Block {
            kind: BlockType::Text,
            text: Some(text.into()),
            ..Block::default()
        }
    }

    /// A tool result as smith builds one when it rewrites a result: only the
    /// id, the text and the error flag (smith's `ContentBlock.tool_result`).
    pub fn tool_result(id: Option<Str>, text: impl Into<Text>, is_error: bool) -> Block {
        Block {
            kind: BlockType::ToolResult,
            text: Some(text.into()),
            tool_call_id: id,
            is_error: Some(is_error),
            ..Block::default()
        }
    }

    /// A tool call.
    pub fn tool_use(id: &str, name: &str, args_json: &str) -> Block {
        Block {
            kind: BlockType::ToolUse,
            tool_call_id: Some(id.into()),
            tool_name: Some(name.into()),
            tool_args: Some(args_json.into()),
            ..Block::default()
        }
    }

    /// Bytes of the text, 0 when absent.
    pub(crate) fn text_len(&self) -> usize {
        self.text.as_ref().map_or(0, |t| t.len())
    }

    /// The text as bytes, empty when absent.
    pub fn text_bytes(&self) -> &[u8] {
        self.text.as_deref().unwrap_or(&[])
    }

    /// The text for display, broken UTF-8 replaced by U+FFFD.
    pub fn text_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.text_bytes())
    }

    /// What this block adds to the estimate, in bytes (docs/engine.md §2).
    pub(crate) fn bytes(&self) -> u64 {
        let len = |s: &Option<Str>| s.as_ref().map_or(0, |s| s.len()) as u64;
        self.text_len() as u64
            + len(&self.tool_args)
            + len(&self.tool_name)
            + len(&self.signature)
            + self.kind.media_bytes()
    }

    /// How a note about this attachment names it: `source`, else
    /// `media_type`, else a generic word.
    pub(crate) fn media_label(&self) -> &str {
        self.source
            .as_deref()
            .or(self.media_type.as_deref())
            .unwrap_or(MEDIA_FALLBACK_LABEL)
    }
}

/// One message of the history.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
    /// Written by the agent, not typed by the user: a synthetic user message
    /// neither starts a real turn nor is a place to cut.
    pub synthetic: bool,
    pub(crate) id: Option<Str>,
    bytes: u64,
    /// What the provider counted for this message, where a log recorded it
    /// (see [`crate::transcript::measured`]): kept through every rewrite of
    /// its content, so that a rewritten message is counted as its measured
    /// tokens scaled by the bytes left of it.
    pub(crate) measured: Option<MessageTokens>,
}

/// A message's tokens as the provider counted them, and the bytes it was
/// counted at (its [`Message::counted_bytes`] then): the rate at which a
/// rewritten copy of it is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "(u64, u64)", into = "(u64, u64)")]
pub(crate) struct MessageTokens {
    pub(crate) tokens: u64,
    pub(crate) bytes: u64,
}

impl From<(u64, u64)> for MessageTokens {
    fn from((tokens, bytes): (u64, u64)) -> MessageTokens {
        MessageTokens { tokens, bytes }
    }
}

impl From<MessageTokens> for (u64, u64) {
    fn from(m: MessageTokens) -> (u64, u64) {
        (m.tokens, m.bytes)
    }
}

impl Message {
    /// Builds a message and measures it once.
    pub fn new(role: Role, content: Vec<Block>, synthetic: bool, id: Option<Str>) -> Message {
        let bytes = content.iter().map(Block::bytes).sum();
        Message {
            role,
            content,
            synthetic,
            id,
            bytes,
            measured: None,
        }
    }

    /// The same message (role, synthetic, id, measured tokens) with other
    /// content, as smith rebuilds a message whose blocks it rewrote.
    pub(crate) fn with_content(&self, content: Vec<Block>) -> Message {
        Message {
            measured: self.measured,
            ..Message::new(self.role, content, self.synthetic, self.id.clone())
        }
    }

    /// The same message with `measured` as its provider count.
    pub(crate) fn with_measured(mut self, measured: Option<MessageTokens>) -> Message {
        self.measured = measured;
        self
    }

    /// Bytes of the thinking blocks (text and signature): what a provider
    /// that drops the thinking of earlier turns no longer counts.
    pub(crate) fn thinking_bytes(&self) -> u64 {
        self.content
            .iter()
            .filter(|b| b.kind.is_thinking())
            .map(Block::bytes)
            .sum()
    }

    /// The bytes a provider counts of this message: all of them, or all
    /// but its thinking where `thinking_dropped`.
    pub(crate) fn counted_bytes(&self, thinking_dropped: bool) -> u64 {
        if thinking_dropped && self.role == Role::Assistant {
            self.bytes - self.thinking_bytes()
        } else {
            self.bytes
        }
    }

    /// The tokens the provider counts for this message: its measured count,
    /// scaled by the share of its counted bytes left where it was rewritten
    /// (or its thinking dropped since); where nothing was measured,
    /// `density` tokens per counted byte.
    pub(crate) fn real_tokens(&self, thinking_dropped: bool, density: f64) -> u64 {
        counted_tokens(self.measured, self.counted_bytes(thinking_dropped), density)
    }

    /// A user message with one text block.
    pub fn user(text: impl Into<Text>) -> Message {
        Message::new(Role::User, vec![Block::text(text)], false, None)
    }

    /// What this message adds to the estimate, in bytes (docs/engine.md §2).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// A user message that the user wrote: where a real turn starts.
    pub fn starts_real_turn(&self) -> bool {
        self.role == Role::User && !self.synthetic
    }

    /// Indices of the message's `tool_result` blocks, in order.
    pub(crate) fn tool_result_indices(&self) -> Vec<usize> {
        self.content
            .iter()
            .enumerate()
            .filter(|(_, b)| b.kind == BlockType::ToolResult)
            .map(|(j, _)| j)
            .collect()
    }
}

/// The tokens of a message the provider counts `counted` bytes of, given
/// its measured count (see [`Message::real_tokens`]).
pub(crate) fn counted_tokens(measured: Option<MessageTokens>, counted: u64, density: f64) -> u64 {
    match measured {
        Some(m) if m.bytes == counted || m.bytes == 0 => m.tokens,
        Some(m) => {
            ((m.tokens as u128 * counted as u128 + m.bytes as u128 / 2) / m.bytes as u128) as u64
        }
        None => (counted as f64 * density).round() as u64,
    }
}

/// `estimate_tokens`: the sum of message bytes divided by four, once.
pub(crate) fn estimate_tokens<'a, I>(messages: I) -> u64
where
    I: IntoIterator<Item = &'a Arc<Message>>,
{
    messages.into_iter().map(|m| m.bytes()).sum::<u64>() / BYTES_PER_TOKEN
}
