//! `transcript list`: one row per session, newest first.
//!
//! When a session was created comes from its `session.json`, else from the
//! session index beside it, else from the transcript's modification time;
//! the row says which, because an mtime is when smith last wrote, not when
//! the session began.

use std::path::PathBuf;

use anyhow::{Context, Result};
use comfy_table::Cell;
use serde::Serialize;

use crate::format::{right, whole};
use crate::screen::Give;
use crate::transcript::locate::{listed_id, listed_name, IndexEntry};
use crate::transcript::{self, estimate_tokens, BlockType, SessionRef};

use super::text::{human_bytes, one_line};
use crate::time::{format_rfc3339, format_short, from_system_time, parse_rfc3339, Unix};

/// Characters of the first prompt shown in the table.
pub(crate) const PROMPT_CHARS: usize = 50;

/// Where a session's creation time came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CreatedFrom {
    SessionJson,
    Index,
    Mtime,
    Unknown,
}

/// One session in the listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct SessionRow {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) first_prompt: String,
    /// The creation time as recorded (RFC 3339), or the mtime as UTC.
    pub(crate) created: Option<String>,
    pub(crate) created_unix: Option<Unix>,
    pub(crate) created_from: CreatedFrom,
    pub(crate) path: PathBuf,
    pub(crate) messages: usize,
    /// Real turns: user messages that are not synthetic.
    pub(crate) turns: usize,
    /// Bytes of the transcript file.
    pub(crate) bytes: u64,
    pub(crate) tokens: u64,
    /// Lines of the transcript that could not be read.
    pub(crate) skipped: usize,
    /// Each of them as `path:line: skipped: reason`, as every command names
    /// them on stderr.
    #[serde(skip)]
    pub(crate) skipped_lines: String,
    /// For a copy of another session's conversation, what it is and whose
    /// (`side_question of cc-…`): no session of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) copy_of: Option<String>,
}

/// Reads one session into a row. Fails only when the transcript cannot be
/// read at all; bad lines are counted in `skipped`.
pub(crate) fn row(source: &SessionRef, index: Option<&IndexEntry>) -> Result<SessionRow> {
    let session = transcript::load(source)?;
    let meta = session.meta.as_ref();
    let id = listed_id(meta, index, source);
    let copy_of = meta
        .and_then(|m| m.raw.as_ref())
        .and_then(|raw| raw.get("copy_of"))
        .and_then(|c| {
            Some(format!(
                "{} of {}",
                c.get("kind")?.as_str()?,
                c.get("parent")?.as_str()?
            ))
        });
    let name = listed_name(meta, index).or_else(|| copy_of.as_ref().map(|c| format!("copy: {c}")));
    let first_prompt = session
        .messages
        .iter()
        .find(|m| m.starts_real_turn())
        .and_then(|m| m.content.iter().find(|b| b.kind == BlockType::Text))
        .map(|b| b.text_lossy().into_owned())
        .or_else(|| index.and_then(|e| e.first_prompt.clone()))
        .map(|p| one_line(&p, PROMPT_CHARS))
        .unwrap_or_default();

    let recorded = [
        (
            meta.and_then(|m| m.created_at.clone()),
            CreatedFrom::SessionJson,
        ),
        (index.and_then(|e| e.created_at.clone()), CreatedFrom::Index),
    ];
    let mut created = recorded
        .into_iter()
        .find_map(|(s, from)| s.and_then(|s| parse_rfc3339(&s).map(|t| (Some(s), Some(t), from))));
    if created.is_none() {
        let mtime = source
            .modified()
            .with_context(|| format!("{}: cannot read", source.transcript.display()));
        created = Some(match mtime {
            Ok(t) => {
                let t = from_system_time(t);
                (Some(format_rfc3339(t)), Some(t), CreatedFrom::Mtime)
            }
            Err(_) => (None, None, CreatedFrom::Unknown),
        });
    }
    let (created, created_unix, created_from) =
        created.unwrap_or((None, None, CreatedFrom::Unknown));

    Ok(SessionRow {
        id,
        name,
        first_prompt,
        created,
        created_unix,
        created_from,
        path: source.transcript.clone(),
        messages: session.messages.len(),
        turns: session
            .messages
            .iter()
            .filter(|m| m.starts_real_turn())
            .count(),
        bytes: session.log.bytes,
        tokens: estimate_tokens(&session.messages),
        skipped: session.log.skipped_count(),
        skipped_lines: session.log.to_string(),
        copy_of,
    })
}

/// Newest first; sessions with no known time last; ties by id.
pub(crate) fn sort_newest_first(rows: &mut [SessionRow]) {
    rows.sort_by(|a, b| {
        b.created_unix
            .cmp(&a.created_unix)
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// The table.
pub(crate) fn table(rows: &[SessionRow]) -> String {
    let mut t = crate::format::table(vec![
        "id",
        "name",
        "first prompt",
        "created (UTC)",
        "messages",
        "turns",
        "size",
        "est. tokens",
        "bad lines",
        // The name every command takes for the session: an id holds only
        // under $SMITH_HOME, a log's session only with its log.
        "path",
    ]);
    // What a person came for stays: the id, then the figures; the names
    // and the prompt give way (cut at their end) before anything is hidden.
    t.priority([0, 4, 5, 6, 7, 8, 3, 1, 2, 9]);
    t.give(1, Give::End).give(2, Give::End);

    for r in rows {
        let created = match (r.created_unix, r.created_from) {
            (Some(t), CreatedFrom::Mtime) => format!("{} (mtime)", format_short(t)),
            (Some(t), _) => format_short(t),
            (None, _) => "?".to_string(),
        };
        t.add_row(vec![
            Cell::new(&r.id),
            Cell::new(r.name.as_deref().unwrap_or("")),
            Cell::new(&r.first_prompt),
            Cell::new(created),
            right(whole(r.messages as u64)),
            right(r.turns.to_string()),
            right(human_bytes(r.bytes)),
            right(whole(r.tokens)),
            right(r.skipped.to_string()),
            Cell::new(r.path.display()),
        ]);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_at(id: &str, t: Option<Unix>) -> SessionRow {
        SessionRow {
            id: id.into(),
            name: None,
            first_prompt: String::new(),
            created: None,
            created_unix: t,
            created_from: CreatedFrom::Unknown,
            path: PathBuf::new(),
            messages: 0,
            turns: 0,
            bytes: 0,
            tokens: 0,
            skipped: 0,
            skipped_lines: String::new(),
            copy_of: None,
        }
    }

    #[test]
    fn newest_first_and_unknown_times_last() {
        let mut rows = vec![
            row_at("a", Some(10)),
            row_at("b", None),
            row_at("c", Some(30)),
            row_at("d", Some(20)),
        ];
        sort_newest_first(&mut rows);
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, vec!["c", "d", "a", "b"]);
    }
}
