//! A session as the rest of the tool sees it: its messages, its metadata and
//! the account of what could not be read.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::locate::{read_meta, SessionMeta, SessionRef};
use super::model::Message;
use super::reader::{read_transcript, ReadLog};

/// One loaded session.
#[derive(Clone, Debug)]
pub struct Session {
    pub source: SessionRef,
    pub messages: Vec<Arc<Message>>,
    pub log: ReadLog,
    pub meta: Option<SessionMeta>,
    /// Why `session.json` was ignored, if it was there and unreadable.
    pub meta_error: Option<String>,
}

impl Session {
    /// The label used in tables: the session's name, its id, or the file's.
    pub fn label(&self) -> String {
        self.meta
            .as_ref()
            .and_then(|m| m.name.clone().or_else(|| m.id.clone()))
            .unwrap_or_else(|| self.source.label())
    }

    /// Bytes of transcript read.
    pub fn bytes(&self) -> u64 {
        self.log.bytes
    }
}

/// Loads a session: the transcript line by line, then `session.json` if it is
/// there. Fails only when the transcript itself cannot be opened or read.
pub fn load(source: &SessionRef) -> Result<Session> {
    let transcript = read_transcript(&source.transcript)
        .with_context(|| format!("{}: cannot read", source.transcript.display()))?;
    let (meta, meta_error) = match read_meta(source) {
        Ok(meta) => (meta, None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    Ok(Session {
        source: source.clone(),
        messages: transcript.messages,
        log: transcript.log,
        meta,
        meta_error,
    })
}

/// Loads a transcript given by path alone.
pub fn load_path(path: &Path) -> Result<Session> {
    load(&SessionRef {
        transcript: path.to_path_buf(),
    })
}
