//! A session as the rest of the tool sees it: its messages, its metadata and
//! the account of what could not be read.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::locate::{read_meta, SessionMeta, SessionRef};
use super::measured;
use super::model::Message;
use super::reader::{read_from, read_transcript, ReadLog};
use super::session_file::SessionFile;

/// One loaded session.
#[derive(Clone, Debug)]
pub struct Session {
    pub(crate) source: SessionRef,
    pub messages: Vec<Arc<Message>>,
    pub log: ReadLog,
    pub meta: Option<SessionMeta>,
    /// Why `session.json` was ignored, if it was there and unreadable.
    pub(crate) meta_error: Option<String>,
    /// The provider's counts of the messages, for an imported session with
    /// usage per request (see [`super::measured`]); set on the messages too.
    pub(crate) measured: Option<measured::Measured>,
    /// The agent's own compactions, for a session imported from another
    /// agent's log; `None` for smith's own.
    pub(crate) run: Option<Arc<measured::AgentRun>>,
}

impl Session {
    /// The label used in tables: the session's name, its id, or the file's.
    pub(crate) fn label(&self) -> String {
        self.meta
            .as_ref()
            .and_then(|m| m.name.clone().or_else(|| m.id.clone()))
            .unwrap_or_else(|| self.source.label())
    }

    /// Bytes of transcript read.
    pub(crate) fn bytes(&self) -> u64 {
        self.log.bytes
    }
}

/// Memory a transcript needs per byte of file while it is replayed: its text
/// held once in the messages, plus the structures around it, with room to
/// spare over the peak `benches/replay.rs` reports.
pub(crate) const MEMORY_PER_TRANSCRIPT_BYTE: u64 = 2;

/// Overrides the memory this process may count on, in bytes (tests set it;
/// otherwise `MemAvailable` from /proc/meminfo).
pub(crate) const MEMORY_LIMIT_ENV: &str = "SMITH_CALIBRATE_MEMORY_LIMIT";

fn available_memory() -> Option<u64> {
    if let Some(v) = std::env::var(MEMORY_LIMIT_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Some(v);
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Refuses a transcript that cannot fit in memory, before reading it,
/// instead of letting the system kill the process halfway.
fn check_memory(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let needed = meta.len().saturating_mul(MEMORY_PER_TRANSCRIPT_BYTE);
    match available_memory() {
        Some(available) if needed > available => anyhow::bail!(
            "{}: this {:.1} MB transcript needs about {:.1} MB of memory to replay (the whole \
             history is held, since compaction looks back over all of it) and only {:.1} MB is \
             available; free memory, or use a machine with more",
            path.display(),
            meta.len() as f64 / 1e6,
            needed as f64 / 1e6,
            available as f64 / 1e6
        ),
        _ => Ok(()),
    }
}

/// A session converted from another agent's log, without its messages:
/// its `session.json` and its messages in outline, as converted, where the
/// conversion kept them (else `None`).
pub(crate) fn outlined(
    source: &SessionRef,
) -> Option<(Session, Arc<crate::transcript::outline::Outline>)> {
    let c = source.converted.as_ref()?;
    let outline = c.outline.clone()?;
    let meta = read_meta(source).ok()??;
    let file = meta.raw.as_ref().and_then(SessionFile::from_meta)?;
    // Counts the conversion could not keep are made from the messages.
    let measured = Some(file.measured.clone()?);
    let run = Some(Arc::new(measured::AgentRun::of(&file, measured.as_ref())));
    let log = ReadLog {
        path: c.source.clone(),
        skipped: c.skipped.clone(),
        ..ReadLog::default()
    };
    Some((
        Session {
            source: source.clone(),
            messages: Vec::new(),
            log,
            meta: Some(meta),
            meta_error: None,
            measured,
            run,
        },
        outline,
    ))
}

/// Loads a session: the transcript line by line, then `session.json` if it is
/// there. Fails when the transcript cannot be opened or read, or would not
/// fit in memory.
pub fn load(source: &SessionRef) -> Result<Session> {
    let transcript = match &source.converted {
        // Converted again from another agent's log.
        Some(c) => {
            let bytes = (c.transcript)()?;
            read_from(bytes.as_slice(), &source.transcript)
        }
        None => {
            check_memory(&source.transcript)?;
            read_transcript(&source.transcript)
        }
    }
    .with_context(|| format!("{}: cannot read", source.transcript.display()))?;
    let (meta, meta_error) = match read_meta(source) {
        Ok(meta) => (meta, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let mut messages = transcript.messages;
    let mut log = transcript.log;
    if let Some(c) = &source.converted {
        // What the conversion skipped is this session's account, named by
        // the log and its lines, as `import` names them.
        let mut skipped = c.skipped.clone();
        skipped.append(&mut log.skipped);
        log.skipped = skipped;
        log.path = c.source.clone();
    }
    let file = meta
        .as_ref()
        .and_then(|m| m.raw.as_ref())
        .and_then(SessionFile::from_meta);
    let measured = file
        .as_ref()
        .and_then(|file| measured::of_file(file, &messages));
    if let Some(m) = &measured {
        measured::apply(m, &mut messages);
    }
    let run = file
        .as_ref()
        .map(|file| Arc::new(measured::AgentRun::of(file, measured.as_ref())));
    Ok(Session {
        source: source.clone(),
        messages,
        log,
        meta,
        meta_error,
        measured,
        run,
    })
}

/// Loads a transcript given by path alone.
pub fn load_path(path: &Path) -> Result<Session> {
    load(&SessionRef::file(path.to_path_buf()))
}
