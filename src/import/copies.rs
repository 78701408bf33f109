//! Claude Code logs that repeat another log's requests, folded so that each
//! request is billed once and each session swept once.
//!
//! Claude Code copies a parent's conversation into other files: the
//! compaction agent (`agent-acompact-*`), a side question (`/btw`,
//! `agent-aside_question-*`) and the prompt-suggestion agent
//! (`agent-aprompt_suggestion-*`) resend it with the same `message.id`,
//! `requestId` and usage, then add requests of their own; a fork (lines
//! carrying `forkedFrom`) begins with the requests before the fork, and a
//! resumed log may repeat an earlier one's. Every file's requests are
//! matched by their key ([`RequestUsage::key`]); of the files holding one
//! request, one owns it (a session of its own before a copy, an original
//! before a fork, then the earlier session), and its usage becomes the
//! largest of the copies' figures, since a log cut mid-stream keeps only a
//! stub of the answer (`stop_reason: null`, a few output tokens) where a
//! copy may hold the final one. The other holders keep the request as
//! context, marked [`RequestRecord::copied`].
//!
//! A copy of one of the three kinds is then no session of its own: it is
//! marked [`SessionFile::copy_of`], listed as such and never replayed, and
//! its own requests go to its parent's account as
//! [`SessionFile::side_requests`]. Its parent is the session that owns the
//! requests it copied, else the one its path or `sessionId` names; a copy
//! whose parent is not among the sessions read stays a session.

use std::collections::HashMap;

use super::ImportedSession;
use crate::transcript::session_file::{
    CopyKind, CopyOf, RequestRecord, SessionFile, SideRequest, FORMAT_CLAUDE_CODE,
};

/// What a fold changed, per kind of copy and in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Folded {
    /// Copies folded into their parents, per kind ([`CopyKind::ALL`]'s
    /// order).
    pub(crate) copies: [usize; 3],
    /// Requests held by more than one file, each now billed once.
    pub(crate) repeated: usize,
    /// Of those, requests whose owner's record was a stub that a copy's
    /// final usage replaced.
    pub(crate) stubs: usize,
}

fn copy_kind(file: &SessionFile) -> Option<CopyKind> {
    (file.source.format == FORMAT_CLAUDE_CODE)
        .then(|| file.source.agent_id.as_deref().and_then(CopyKind::of_agent))
        .flatten()
}

/// Folds the copies among `sessions` (ids already final): see the module.
pub(crate) fn fold(sessions: &mut [ImportedSession]) -> Folded {
    let mut folded = Folded::default();
    let owners = owners(sessions, &mut folded);
    let mut touched = vec![false; sessions.len()];
    for (owner, usage, record, holders) in owners {
        for &(s, r) in &holders {
            if (s, r) == owner {
                continue;
            }
            let index = sessions[s].file.requests[r].message_index;
            if let Some(rec) = record_at(&mut sessions[s].file, index) {
                rec.copied = true;
            }
        }
        let (s, r) = owner;
        let file = &mut sessions[s].file;
        let index = file.requests[r].message_index;
        let mine = &mut file.requests[r];
        let stub = mine.output_tokens < usage.output_tokens
            || mine.prompt_tokens() < usage.prompt_tokens();
        mine.merge_max(&usage);
        if let Some(rec) = record_at(file, index) {
            rec.merge(&record);
            rec.completed |= stub;
        }
        if stub {
            folded.stubs += 1;
            touched[s] = true;
        }
    }
    attach_copies(sessions, &mut folded);
    for (s, t) in touched.into_iter().enumerate() {
        if t {
            let session = &mut sessions[s];
            // Measured again from the completed usage (`of_file` gives back
            // the counts a file keeps, so they go first); messages let go
            // are measured when they are made again (`transcript::load`).
            session.file.measured = None;
            if session.dropped.is_none() {
                session.file.measured =
                    crate::transcript::measured::of_file(&session.file, &session.messages);
            }
        }
    }
    folded
}

/// A request: (session, request) indices.
type At = (usize, usize);

/// Every request more than one session holds: its owner, the largest
/// usage and record over its holders, and the holders.
fn owners(
    sessions: &[ImportedSession],
    folded: &mut Folded,
) -> Vec<(
    At,
    crate::transcript::session_file::RequestUsage,
    RequestRecord,
    Vec<At>,
)> {
    let mut holders: HashMap<&str, Vec<At>> = HashMap::new();
    for (s, session) in sessions.iter().enumerate() {
        for (r, u) in session.file.requests.iter().enumerate() {
            if let Some(k) = u.key.as_deref() {
                let list = holders.entry(k).or_default();
                // A file holds each request once: its own lines of one
                // response are merged already.
                if list.last().is_none_or(|&(last, _)| last != s) {
                    list.push((s, r));
                }
            }
        }
    }
    let rank = |s: usize| {
        let f = &sessions[s].file;
        (
            copy_kind(f).is_some(),
            sessions[s].forked,
            f.created_at.is_none(),
            f.created_at.clone(),
            f.id.clone(),
        )
    };
    let mut out = Vec::new();
    for (_, list) in holders {
        if list.len() < 2 {
            continue;
        }
        folded.repeated += 1;
        let owner = *list
            .iter()
            .min_by_key(|(s, _)| rank(*s))
            .expect("two holders");
        let mut usage = sessions[owner.0].file.requests[owner.1].clone();
        let mut record = RequestRecord::default();
        for &(s, r) in &list {
            let f = &sessions[s].file;
            usage.merge_max(&f.requests[r]);
            if let Some(rec) = f
                .request_records
                .iter()
                .find(|x| x.message_index == f.requests[r].message_index)
            {
                record.merge(rec);
            }
        }
        out.push((owner, usage, record, list));
    }
    // In a fixed order, so that a fold is the same on every run.
    out.sort_by_key(|(owner, ..)| *owner);
    out
}

fn record_at(file: &mut SessionFile, index: usize) -> Option<&mut RequestRecord> {
    file.request_records
        .iter_mut()
        .find(|x| x.message_index == index)
}

/// Marks each copy of a known kind whose parent is among `sessions` and
/// moves its own requests to the parent.
fn attach_copies(sessions: &mut [ImportedSession], folded: &mut Folded) {
    let by_id: HashMap<String, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.file.id.clone(), i))
        .collect();
    let mut moves: Vec<(usize, usize, CopyKind)> = Vec::new();
    for (c, session) in sessions.iter().enumerate() {
        let Some(kind) = copy_kind(&session.file) else {
            continue;
        };
        let parent = parent_of(sessions, c)
            .or_else(|| {
                session
                    .file
                    .parent_id
                    .as_ref()
                    .and_then(|p| by_id.get(p).copied())
            })
            .filter(|&p| p != c && copy_kind(&sessions[p].file).is_none());
        if let Some(p) = parent {
            moves.push((c, p, kind));
        }
    }
    for (c, p, kind) in moves {
        let copy = &mut sessions[c].file;
        let own: Vec<SideRequest> = copy
            .requests
            .iter()
            .filter_map(|u| {
                let rec = copy
                    .request_records
                    .iter()
                    .find(|x| x.message_index == u.message_index)
                    .cloned()
                    .unwrap_or_default();
                (!rec.copied).then(|| SideRequest {
                    kind,
                    from: copy.id.clone(),
                    usage: crate::transcript::session_file::RequestUsage {
                        model: u.model.clone().or_else(|| copy.model.clone()),
                        ..u.clone()
                    },
                    record: rec,
                })
            })
            .collect();
        let parent_id = sessions[p].file.id.clone();
        sessions[c].file.copy_of = Some(CopyOf {
            kind,
            parent: parent_id,
        });
        sessions[p].file.side_requests.extend(own);
        folded.copies[kind as usize] += 1;
    }
}

/// The session that owns most of the requests session `c` copied.
fn parent_of(sessions: &[ImportedSession], c: usize) -> Option<usize> {
    let copy = &sessions[c].file;
    let copied: std::collections::HashSet<&str> = copy
        .requests
        .iter()
        .filter(|u| {
            copy.request_records
                .iter()
                .any(|x| x.message_index == u.message_index && x.copied)
        })
        .filter_map(|u| u.key.as_deref())
        .collect();
    if copied.is_empty() {
        return None;
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for (s, session) in sessions.iter().enumerate() {
        if s == c {
            continue;
        }
        let n = session
            .file
            .requests
            .iter()
            .filter(|u| u.key.as_deref().is_some_and(|k| copied.contains(&k)))
            .filter(|u| {
                !session
                    .file
                    .request_records
                    .iter()
                    .any(|x| x.message_index == u.message_index && x.copied)
            })
            .count();
        if n > 0 {
            votes.insert(s, n);
        }
    }
    votes
        .into_iter()
        .max_by_key(|&(s, n)| (n, std::cmp::Reverse(s)))
        .map(|(s, _)| s)
}
