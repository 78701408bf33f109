//! `show --at K`: the working history as the model received it at request
//! K, with each compaction effect marked on the message it touched.
//!
//! Two sources say what happened. The compaction of request K reports its
//! own rewrites ([`Edit`]s, indexed before any summary cut). Rewrites of
//! earlier requests are visible only in the history itself: the messages
//! after a summary are the transcript's own, one for one, so each can be
//! compared with its record, and the texts the engine writes carry the
//! markers of `engine/constants.rs`, which say which rewrite it was (the
//! other policies' placeholders and caps are recognised too, see
//! `crate::policy::placeholder_kind`).

use std::sync::Arc;

use memchr::memmem;

use crate::engine::constants::{
    DROP_SUFFIX, MEDIA_MARKER, SUMMARY_PREFIX, SUPERSEDED_MARKER, TRUNCATION_MARKER,
};
use crate::engine::{Compaction, Compactor, Edit, EditKind, Stage, Strategy};
use crate::replay::{replay_with, RequestFacts};
use crate::transcript::{Block, Message, Role};

use super::text::human_bytes;
use crate::format::plural;

/// When an effect happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum When {
    /// In the compaction run just before request K.
    ThisRequest,
    /// In the compaction of an earlier request; the history still shows it.
    Earlier,
}

/// What compaction did to a message or a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    ThinkingDropped {
        blocks: usize,
    },
    AttachmentsRemoved {
        blocks: usize,
    },
    /// A read replaced by a note that a later identical call superseded it.
    Superseded,
    /// A result cut to its head, with the truncation note.
    HeadKept,
    /// A result cut to its first and last lines around a marker (Codex's
    /// cap on arrival).
    HeadTailKept,
    /// A result collapsed to a one-line stub.
    Stubbed,
    /// A result whose text differs from the record in no way the engine
    /// names (kept so that no difference goes unmentioned).
    Rewritten,
    /// The message that replaced the first `replaced` transcript messages.
    Summary {
        replaced: usize,
    },
    /// The drop note that replaced them when the summarizer failed.
    Dropped {
        replaced: usize,
    },
}

/// One effect, on a message (`block: None`) or on one of its blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    pub(crate) block: Option<usize>,
    pub(crate) effect: Effect,
    pub(crate) when: When,
    /// Bytes the estimate lost against the record, when the record is known.
    pub(crate) bytes_lost: Option<i64>,
    /// Bytes lost in the compaction of this request, from its edit.
    pub(crate) bytes_lost_now: Option<u64>,
}

impl Mark {
    /// The mark in words, e.g. `at this request: result cut to its head (40.2 KiB lost)`.
    pub(crate) fn describe(&self) -> String {
        let when = match self.when {
            When::ThisRequest => "at this request",
            When::Earlier => "at an earlier request",
        };
        let what = match self.effect {
            Effect::ThinkingDropped { blocks } => {
                format!("{} dropped", plural(blocks, "thinking block"))
            }
            Effect::AttachmentsRemoved { blocks } => {
                format!("{} replaced by a note", plural(blocks, "attachment"))
            }
            Effect::Superseded => "read superseded by a later identical call".to_string(),
            Effect::HeadKept => "result cut to its head".to_string(),
            Effect::HeadTailKept => "result cut to its first and last lines".to_string(),
            Effect::Stubbed => "result collapsed to a stub".to_string(),
            Effect::Rewritten => "result rewritten".to_string(),
            Effect::Summary { replaced } => format!(
                "summary replacing the first {} of the transcript",
                plural(replaced, "message")
            ),
            Effect::Dropped { replaced } => format!(
                "drop note replacing the first {} of the transcript",
                plural(replaced, "message")
            ),
        };
        let mut lost = Vec::new();
        if let Some(now) = self.bytes_lost_now {
            lost.push(format!("{} lost at this request", human_bytes(now)));
        }
        match self.bytes_lost {
            Some(b) if b >= 0 && Some(b as u64) != self.bytes_lost_now => {
                lost.push(format!("{} lost against the record", human_bytes(b as u64)))
            }
            Some(b) if b < 0 => lost.push(format!(
                "{} larger than the record",
                human_bytes(b.unsigned_abs())
            )),
            _ => {}
        }
        if lost.is_empty() {
            format!("{when}: {what}")
        } else {
            format!("{when}: {what} ({})", lost.join(", "))
        }
    }
}

/// Which rewrite a text shows, by the markers the engine writes into it.
pub(crate) fn classify_text(text: &[u8]) -> Option<Effect> {
    let has = |marker: &str| memmem::find(text, marker.as_bytes()).is_some();
    let stub_end = format!("{TRUNCATION_MARKER}]");
    if text.starts_with(b"[") && text.ends_with(stub_end.as_bytes()) && !text.contains(&b'\n') {
        return Some(Effect::Stubbed);
    }
    if text.starts_with(b"[") && has(SUPERSEDED_MARKER) && !text.contains(&b'\n') {
        return Some(Effect::Superseded);
    }
    let head_end = format!("{TRUNCATION_MARKER} ...]");
    if text.ends_with(head_end.as_bytes()) && has("\n\n[... ") {
        return Some(Effect::HeadKept);
    }
    match crate::policy::placeholder_kind(text) {
        Some(EditKind::HeadKept) => Some(Effect::HeadTailKept),
        Some(_) => Some(Effect::Stubbed),
        None => None,
    }
}

/// Whether a message is a summary or drop note the engine wrote, and which.
pub(crate) fn summary_kind(message: &Message, replaced: usize) -> Option<Effect> {
    if message.role != Role::User || message.content.len() != 1 {
        return None;
    }
    let text = message.content[0].text_bytes();
    if !text.starts_with(SUMMARY_PREFIX.as_bytes()) {
        return None;
    }
    if text.ends_with(DROP_SUFFIX.as_bytes()) {
        Some(Effect::Dropped { replaced })
    } else {
        Some(Effect::Summary { replaced })
    }
}

/// The working history at one request, ready to be shown.
#[derive(Clone, Debug)]
pub(crate) struct HistoryAt {
    pub(crate) facts: RequestFacts,
    /// The history as sent.
    pub(crate) messages: Vec<Arc<Message>>,
    /// Each message's index in the transcript; `None` for a summary, which
    /// exists only in the working history.
    pub(crate) record_index: Vec<Option<usize>>,
    /// The marks of each message.
    pub(crate) marks: Vec<Vec<Mark>>,
    /// Where this request's compaction cut for a summary, if it did.
    pub(crate) cut: Option<usize>,
    /// The request whose compaction wrote the summary at the head, if any.
    pub(crate) summary_request: Option<usize>,
    /// Rewrites made by this request's compaction, and how many of them
    /// were on messages its summary then replaced.
    pub(crate) edits: usize,
    pub(crate) edits_summarized: usize,
}

impl HistoryAt {
    /// Stages of this request's compaction that changed something.
    pub(crate) fn stages(&self) -> &[Stage] {
        &self.facts.stages
    }

    /// This request's strategy.
    pub(crate) fn strategy(&self) -> Strategy {
        self.facts.strategy
    }
}

/// Replays `record` under `engine` (smith's, or another policy) up to
/// request `k` (0-based) and marks its history. `None` when the session has
/// no request `k`.
pub(crate) fn history_at<C: Compactor + ?Sized>(
    record: &[Arc<Message>],
    engine: &C,
    k: usize,
) -> Option<HistoryAt> {
    let mut summary_request = None;
    let mut found: Option<(RequestFacts, Vec<Arc<Message>>, Compaction)> = None;
    replay_with(record, engine, |r, history, c| {
        if c.cut.is_some() {
            summary_request = Some(r.request);
        }
        if r.request == k {
            found = Some((r.clone(), history.to_vec(), c.clone()));
            return false;
        }
        true
    });
    let (facts, messages, compaction) = found?;
    Some(mark(record, facts, messages, &compaction, summary_request))
}

fn mark(
    record: &[Arc<Message>],
    facts: RequestFacts,
    messages: Vec<Arc<Message>>,
    c: &Compaction,
    summary_request: Option<usize>,
) -> HistoryAt {
    // The summary note: the first message after smith's summaries; after
    // Codex's, the recent user messages it carried come first.
    let summary_at = if summary_request.is_some() {
        messages.iter().rposition(|m| {
            summary_kind(m, 0).is_some() && !record.iter().any(|r| Arc::ptr_eq(r, m))
        })
    } else {
        None
    };
    let first_own = summary_at.map_or(0, |s| s + 1);
    let kept = messages.len() - first_own;
    // The messages after a summary are the transcript's own, up to the
    // assistant message that answers this request.
    let start = facts.message_index.saturating_sub(kept);
    let record_index: Vec<Option<usize>> = (0..messages.len())
        .map(|h| {
            if h >= first_own {
                let ri = start + h - first_own;
                (ri < record.len()).then_some(ri)
            } else if Some(h) == summary_at {
                None
            } else {
                // Carried beside the summary: the record's own message.
                record[..start.min(record.len())]
                    .iter()
                    .position(|r| Arc::ptr_eq(r, &messages[h]))
            }
        })
        .collect();

    // This request's edits, by position in the history as sent.
    let mut now: Vec<Vec<&Edit>> = vec![Vec::new(); messages.len()];
    let mut edits_summarized = 0;
    for e in &c.edits {
        let h = match c.cut {
            Some(cut) if e.message < cut => {
                edits_summarized += 1;
                continue;
            }
            Some(cut) => first_own + e.message - cut,
            None => e.message,
        };
        if let Some(slot) = now.get_mut(h) {
            slot.push(e);
        }
    }

    let marks = messages
        .iter()
        .enumerate()
        .map(|(h, shown)| match record_index[h] {
            None => {
                let when = if c.cut.is_some() {
                    When::ThisRequest
                } else {
                    When::Earlier
                };
                let replaced_bytes: u64 = record[..start.min(record.len())]
                    .iter()
                    .map(|m| m.bytes())
                    .sum();
                summary_kind(shown, start)
                    .map(|effect| Mark {
                        block: None,
                        effect,
                        when,
                        bytes_lost: Some(replaced_bytes as i64 - shown.bytes() as i64),
                        bytes_lost_now: None,
                    })
                    .into_iter()
                    .collect()
            }
            Some(ri) if Arc::ptr_eq(&record[ri], shown) => Vec::new(),
            Some(ri) => compare(&record[ri], shown, &now[h]),
        })
        .collect();

    HistoryAt {
        facts,
        messages,
        record_index,
        marks,
        cut: c.cut,
        summary_request,
        edits: c.edits.len(),
        edits_summarized,
    }
}

/// The marks of a message that differs from its record.
fn compare(record: &Message, shown: &Message, now: &[&Edit]) -> Vec<Mark> {
    let mut marks = Vec::new();
    let edit_of = |pred: &dyn Fn(&EditKind) -> bool, block: Option<usize>| {
        now.iter()
            .find(|e| pred(&e.kind) && (block.is_none() || e.block == block))
            .or_else(|| now.iter().find(|e| pred(&e.kind)))
    };
    let when_of = |edit: Option<&&Edit>| {
        if edit.is_some() {
            When::ThisRequest
        } else {
            When::Earlier
        }
    };

    let count = |m: &Message, f: fn(&Block) -> bool| -> (usize, u64) {
        m.content
            .iter()
            .filter(|b| f(b))
            .fold((0, 0), |(n, bytes), b| (n + 1, bytes + b.bytes()))
    };
    let (rt, rt_bytes) = count(record, |b| b.kind.is_thinking());
    let (st, st_bytes) = count(shown, |b| b.kind.is_thinking());
    if st < rt {
        let edit = edit_of(&|k| matches!(k, EditKind::ThinkingDropped { .. }), None);
        marks.push(Mark {
            block: None,
            effect: Effect::ThinkingDropped { blocks: rt - st },
            when: when_of(edit),
            bytes_lost: Some(rt_bytes as i64 - st_bytes as i64),
            bytes_lost_now: edit.map(|e| e.bytes_before.saturating_sub(e.bytes_after)),
        });
    }
    let (rm, rm_bytes) = count(record, |b| b.kind.is_media());
    let (sm, sm_bytes) = count(shown, |b| b.kind.is_media());
    if sm < rm {
        let edit = edit_of(&|k| matches!(k, EditKind::AttachmentsRemoved { .. }), None);
        marks.push(Mark {
            block: None,
            effect: Effect::AttachmentsRemoved { blocks: rm - sm },
            when: when_of(edit),
            bytes_lost: Some(rm_bytes as i64 - sm_bytes as i64),
            bytes_lost_now: edit.map(|e| e.bytes_before.saturating_sub(e.bytes_after)),
        });
    }

    // Results are rewritten in place, never added or removed: the k-th
    // result of the history is the k-th of the record.
    let results = Message::tool_result_indices;
    let (rr, sr) = (results(record), results(shown));
    let paired: Vec<(Option<usize>, usize)> = if rr.len() == sr.len() {
        rr.iter()
            .copied()
            .map(Some)
            .zip(sr.iter().copied())
            .collect()
    } else {
        sr.iter().map(|&j| (None, j)).collect()
    };
    for (rj, sj) in paired {
        let text = shown.content[sj].text_bytes();
        let before = rj.map(|rj| record.content[rj].text_bytes());
        if before == Some(text) {
            continue;
        }
        let effect = match classify_text(text) {
            Some(effect) => effect,
            // Notes appended for attachments the tool returned: already
            // marked on the message.
            None if memmem::find(text, MEDIA_MARKER.as_bytes()).is_some() => continue,
            None if before.is_some() => Effect::Rewritten,
            None => continue,
        };
        let kind_matches = move |k: &EditKind| match effect {
            Effect::Superseded => *k == EditKind::Superseded,
            Effect::HeadKept | Effect::HeadTailKept => *k == EditKind::HeadKept,
            Effect::Stubbed => *k == EditKind::Stubbed,
            _ => false,
        };
        let edit = edit_of(&kind_matches, Some(sj));
        marks.push(Mark {
            block: Some(sj),
            effect,
            when: when_of(edit),
            bytes_lost: before.map(|b| b.len() as i64 - text.len() as i64),
            bytes_lost_now: edit.map(|e| e.bytes_before.saturating_sub(e.bytes_after)),
        });
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stages::duplicates::superseded_stub;
    use crate::engine::stages::truncate::{shorten, Shortened};

    #[test]
    fn the_engines_own_texts_are_recognised() {
        let big = vec![b'x'; 5000];
        let Shortened::Head(head) = shorten(&big, 512) else {
            panic!("a 5000-byte text keeps its head")
        };
        assert_eq!(classify_text(&head), Some(Effect::HeadKept));
        let Shortened::Stub(stub) = shorten(&head, 512) else {
            panic!("a marked text collapses")
        };
        assert_eq!(classify_text(&stub), Some(Effect::Stubbed));
        let superseded = superseded_stub("read_file", 9000);
        assert_eq!(
            classify_text(superseded.as_bytes()),
            Some(Effect::Superseded)
        );
        assert_eq!(classify_text(b"plain output"), None);
    }

    #[test]
    fn summary_and_drop_notes_are_told_apart() {
        let summary = Message::user(format!("{SUMMARY_PREFIX}what happened").into_bytes());
        let dropped = Message::user(format!("{SUMMARY_PREFIX}7{DROP_SUFFIX}").into_bytes());
        assert_eq!(
            summary_kind(&summary, 7),
            Some(Effect::Summary { replaced: 7 })
        );
        assert_eq!(
            summary_kind(&dropped, 7),
            Some(Effect::Dropped { replaced: 7 })
        );
        assert_eq!(summary_kind(&Message::user("hello".as_bytes()), 7), None);
    }

    #[test]
    fn a_mark_says_when_and_how_much() {
        let m = Mark {
            block: Some(0),
            effect: Effect::HeadKept,
            when: When::ThisRequest,
            bytes_lost: Some(4096),
            bytes_lost_now: Some(4096),
        };
        assert_eq!(
            m.describe(),
            "at this request: result cut to its head (4.0 KiB lost at this request)"
        );
    }
}
