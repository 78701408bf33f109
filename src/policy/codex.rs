//! `codex`: OpenAI Codex CLI's output caps and auto-compaction.
//!
//! Source: the public repository openai/codex (`codex-rs`): tool output is
//! formatted for the model with a limit of 10 KiB and 256 lines, keeping
//! the first and last 128 lines around an "omitted" marker; auto-compaction
//! replaces the history with a model-written summary plus the most recent
//! user messages, up to 20000 tokens of them.
//!
//! Rules modelled:
//! - every tool result is capped when it enters the history: above
//!   `codex_cap_bytes` bytes or `codex_cap_lines` lines it keeps its first
//!   `lines/2` lines (at most `bytes/2` bytes), a marker
//!   `[... omitted N of T lines ...]`, and its last `lines - lines/2` lines
//!   within the bytes left;
//! - at or above `codex_compact_at` of the window, the history becomes the
//!   most recent user messages (newest first while they fit
//!   `codex_user_tokens` tokens; the one that does not fit is cut to what is
//!   left) followed by the summary.
//!
//! Knobs (defaults): `--codex-cap-bytes` (10240), `--codex-cap-lines`
//! (256), `--codex-compact-at` (0.9), `--codex-user-tokens` (20000).
//!
//! Held against the logs (`calibrate`'s peer-trigger table): Codex 0.114.0
//! compacts once an answer has brought the context past 0.9 of the window
//! and the turn goes on, so it sends a few more requests (2 and 4 in the
//! shared rollouts) than this policy, which compacts before the first request
//! at or above it; the fraction agrees.
//!
//! Approximated: the marker's wording, and where the byte budget splits a
//! line (cuts fall on character boundaries); Codex's token limit for
//! compaction is a per-model setting, modelled as a fraction of the window;
//! the summary is smith's offline stand-in and is placed after the user
//! messages, as Codex does; Codex's initial context (instructions,
//! environment) is overhead here. Caps on arrival are counted as
//! `results_truncated` at the first request that sends the result; they are
//! not compactions.

use std::sync::Arc;

use memchr::memmem;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::record::Recorder;
use crate::engine::{Admitted, Budget, Compaction, Compactor, EditKind, Stage};
use crate::transcript::{Block, BlockType, Message, Role};

use super::knobs::{Described, PolicyKnob};
use super::{is_summary_note, line_count, untouched, Pass, Summarizer};

const MARKER_HEAD: &str = "\n[... omitted ";
const MARKER_TAIL: &str = " lines ...]\n\n";

/// One line on what is modelled, with the values its knobs took.
pub(crate) fn describe(v: &Described) -> String {
    let cap = PolicyKnob::CodexCapBytes;
    let lines = PolicyKnob::CodexCapLines;
    format!(
        "Codex CLI: every result capped on arrival at {} and {} lines (first and last {} lines around a marker); at {} of the window the history becomes the most recent user messages (up to {} tokens) plus the summary; marker wording and the compaction limit (a per-model setting) are approximated",
        v.show(cap, Described::bytes),
        v.text(lines),
        v.show(lines, |n| Described::number(n - (n / 2.0).floor())),
        v.show(PolicyKnob::CodexCompactAt, Described::percent),
        v.text(PolicyKnob::CodexUserTokens),
    )
}

/// Whether `text` carries the marker of a capped result.
pub(crate) fn is_capped(text: &[u8]) -> bool {
    memmem::find(text, MARKER_HEAD.as_bytes())
        .is_some_and(|at| memmem::find(&text[at..], MARKER_TAIL.as_bytes()).is_some())
}

/// The longest prefix of `text` of at most `n` bytes that ends on a
/// character boundary.
fn head_bytes(text: &[u8], n: usize) -> &[u8] {
    if text.len() <= n {
        return text;
    }
    let mut end = n;
    while end > 0 && (text[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    &text[..end]
}

/// The longest suffix of `text` of at most `n` bytes that starts on a
/// character boundary.
fn tail_bytes(text: &[u8], n: usize) -> &[u8] {
    if text.len() <= n {
        return text;
    }
    let mut start = text.len() - n;
    while start < text.len() && (text[start] & 0xC0) == 0x80 {
        start += 1;
    }
    &text[start..]
}

/// `text` capped to `max_bytes` and `max_lines`, or `None` when it is
/// within both (or capping would not make it shorter).
pub(crate) fn cap(text: &[u8], max_bytes: usize, max_lines: usize) -> Option<Vec<u8>> {
    let total = line_count(text);
    if text.len() <= max_bytes && total <= max_lines {
        return None;
    }
    let head_lines = max_lines / 2;
    let tail_lines = max_lines - head_lines;
    // Where the first `head_lines` lines end and the last `tail_lines` begin.
    let head_end = if head_lines == 0 {
        0
    } else {
        memchr::memchr_iter(b'\n', text)
            .nth(head_lines - 1)
            .map_or(text.len(), |i| i + 1)
    };
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let tail_start = if tail_lines == 0 {
        text.len()
    } else {
        memchr::memrchr_iter(b'\n', body)
            .nth(tail_lines - 1)
            .map_or(0, |i| i + 1)
    }
    .max(head_end);
    let head = head_bytes(&text[..head_end], max_bytes / 2);
    let tail_all = &text[tail_start..];
    // The marker reports at most `total` omitted lines: room for its longest form.
    let digits = total.to_string().len();
    let marker_len = MARKER_HEAD.len() + MARKER_TAIL.len() + " of ".len() + 2 * digits;
    let room = max_bytes.saturating_sub(head.len() + marker_len);
    let tail = tail_bytes(tail_all, room);
    let omitted = total.saturating_sub(line_count(head) + line_count(tail));
    let mut out = Vec::with_capacity(max_bytes);
    out.extend_from_slice(head);
    out.extend_from_slice(format!("{MARKER_HEAD}{omitted} of {total}{MARKER_TAIL}").as_bytes());
    out.extend_from_slice(tail);
    (out.len() < text.len()).then_some(out)
}

/// Codex's caps and compaction.
#[derive(Clone, Debug)]
pub(crate) struct Codex {
    budget: Budget,
    cap_bytes: usize,
    cap_lines: usize,
    user_tokens: u64,
    summarizer: Summarizer,
}

impl Codex {
    /// Codex under `budget` (trigger at its fraction of the window).
    pub(crate) fn new(
        budget: Budget,
        cap_bytes: usize,
        cap_lines: usize,
        user_tokens: u64,
        summarizer: Summarizer,
    ) -> Codex {
        Codex {
            budget,
            cap_bytes,
            cap_lines,
            user_tokens,
            summarizer,
        }
    }

    /// The user messages kept beside the summary, in transcript order.
    fn recent_user_messages(&self, messages: &[Arc<Message>]) -> Vec<Arc<Message>> {
        let mut room = self.user_tokens.saturating_mul(BYTES_PER_TOKEN);
        let mut kept = Vec::new();
        for m in messages.iter().rev() {
            if m.role != Role::User || is_summary_note(m) {
                continue;
            }
            if m.bytes() <= room {
                room -= m.bytes();
                kept.push(m.clone());
                continue;
            }
            // The one that does not fit keeps the head of its text.
            let text: Vec<u8> = m
                .content
                .iter()
                .filter(|b| b.kind == BlockType::Text)
                .flat_map(|b| b.text_bytes().iter().copied())
                .collect();
            let head = head_bytes(&text, room as usize);
            if !head.is_empty() {
                kept.push(Arc::new(Message::new(
                    Role::User,
                    vec![Block::text(head.to_vec())],
                    m.synthetic,
                    m.id.clone(),
                )));
            }
            break;
        }
        kept.reverse();
        kept
    }
}

impl Compactor for Codex {
    fn name(&self) -> &str {
        "codex"
    }

    budget_methods!();

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let before = self.budget.charged(bytes / BYTES_PER_TOKEN);
        if before < self.budget.trigger_tokens {
            return untouched(before, bytes, false);
        }
        let carried = self.recent_user_messages(messages);
        Pass::new(messages, bytes, before, true).summarize_all(
            carried,
            &self.summarizer,
            &self.budget,
        )
    }

    fn admit(&self, message: &Arc<Message>) -> Admitted {
        if message.role != Role::Tool {
            return Admitted::unchanged(message);
        }
        let mut content = message.content.clone();
        let mut capped = Vec::new();
        for (j, b) in content.iter_mut().enumerate() {
            if b.kind != BlockType::ToolResult {
                continue;
            }
            let Some(text) = cap(b.text_bytes(), self.cap_bytes, self.cap_lines) else {
                continue;
            };
            *b = Block::tool_result(b.tool_call_id.clone(), text, b.is_error.unwrap_or(false));
            capped.push(j);
        }
        if capped.is_empty() {
            return Admitted::unchanged(message);
        }
        let rebuilt = message.with_content(content);
        let (before, after) = (message.bytes(), rebuilt.bytes());
        let mut record = Recorder::default();
        for j in capped {
            record.edit(0, Some(j), EditKind::HeadKept, before, after);
        }
        record.reclaimed(Stage::Truncate, ((before - after) / BYTES_PER_TOKEN) as i64);
        record.admitted(Arc::new(rebuilt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::knobs::defaults::codex::{CAP_BYTES, CAP_LINES};

    fn lines(n: usize, width: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            out.extend_from_slice(format!("{i:0width$}\n").as_bytes());
        }
        out
    }

    #[test]
    fn a_result_within_both_caps_is_left_alone() {
        assert_eq!(cap(&lines(256, 9), CAP_BYTES, CAP_LINES), None);
    }

    #[test]
    fn too_many_lines_keep_the_first_and_last_half() {
        let text = lines(1000, 4);
        let out = cap(&text, CAP_BYTES, CAP_LINES).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("0000\n0001\n"), "{s}");
        assert!(
            s.contains("0127\n\n[... omitted 744 of 1000 lines ...]\n\n0872\n"),
            "{s}"
        );
        assert!(s.ends_with("0999\n"));
        assert!(is_capped(s.as_bytes()));
    }

    #[test]
    fn too_many_bytes_keep_at_most_half_the_cap_from_the_head() {
        // 100 lines of 200 bytes: within the line cap, so every line is
        // "head" and the byte budget cuts it, as Codex's does.
        let text = lines(100, 199);
        let out = cap(&text, CAP_BYTES, CAP_LINES).unwrap();
        assert!(out.len() <= CAP_BYTES, "{}", out.len());
        let marker = memmem::find(&out, MARKER_HEAD.as_bytes()).unwrap();
        assert_eq!(marker, CAP_BYTES / 2);
        assert_eq!(&out[..marker], &text[..marker]);
    }
}
