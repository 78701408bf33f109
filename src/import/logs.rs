//! Other agents' logs as files: which agent wrote a file (told from its
//! first line), the one converter per format that `import` and the logs
//! read where they are both use, and the conversion of logs into sessions
//! in memory, exactly as `import` converts them (the same converters, the
//! same ids), so that a session read in place is the imported copy.
//!
//! A converted session goes by `<log>#<id>` (its [`SessionRef::transcript`]),
//! which names the log it came from and, since a Claude Code log can hold
//! subagent sessions inline, which of its sessions it is.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Result};
use serde_json::Value;

use super::{claude_code, codex, convert_files_light, mini_swe_agent, ImportedSession};
use crate::transcript::locate::{Converted, SessionRef, CONVERTED_SEPARATOR, TRANSCRIPT_FILE};

/// The agents whose logs are read directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Format {
    ClaudeCode,
    Codex,
    MiniSweAgent,
}

impl Format {
    /// Every format, in the order their sessions are listed.
    pub(crate) const ALL: [Format; 3] = [Format::ClaudeCode, Format::Codex, Format::MiniSweAgent];
}

/// How much of a log's first line is read to tell its format: enough for
/// the first line of every log seen, which carries its keys in the first
/// few hundred bytes.
const SNIFF_BYTES: u64 = 1 << 16;

/// The format of the log at `path`, or `None` for a smith transcript or a
/// file of no format read here. A smith transcript is `transcript.jsonl`,
/// or a JSONL file whose lines are messages with a `role`; every line of a
/// Claude Code log has a `type` (`user`, `summary`, `permission-mode`, …)
/// and none a `role` at the top; a Codex rollout's lines wrap theirs in a
/// `payload`.
pub(crate) fn format_of(path: &Path) -> Option<Format> {
    if mini_swe_agent::is_trajectory(path) {
        return Some(Format::MiniSweAgent);
    }
    if codex::is_rollout(path) {
        return Some(Format::Codex);
    }
    if path.file_name().is_some_and(|n| n == TRANSCRIPT_FILE) || !claude_code::is_session_log(path)
    {
        return None;
    }
    let file = File::open(path).ok()?;
    let mut first = Vec::new();
    for line in BufReader::new(file.take(SNIFF_BYTES)).split(b'\n') {
        let line = line.ok()?;
        if !line.iter().all(u8::is_ascii_whitespace) {
            first = line;
            break;
        }
    }
    let claude_code = match serde_json::from_slice::<Value>(&first) {
        Ok(Value::Object(obj)) => {
            obj.get("type").is_some_and(Value::is_string)
                && !obj.contains_key("role")
                && !obj.contains_key("payload")
        }
        Ok(_) => false,
        // A first line longer than the sniff: smith writes `role` first
        // and Codex `timestamp`; a Claude Code line begins with another key.
        Err(_) => {
            let head = String::from_utf8_lossy(&first);
            let first_key = head
                .strip_prefix('{')
                .map(str::trim_start)
                .and_then(|h| h.strip_prefix('"'))
                .and_then(|h| h.split_once('"'))
                .map(|(k, _)| k);
            first_key.is_some_and(|k| k != "role" && k != "timestamp") && head.contains("\"type\"")
        }
    };
    claude_code.then_some(Format::ClaudeCode)
}

/// Converts `logs` of one format as one `import` run would, saying on
/// stderr which logs gave no session and, once for them all, the block
/// types nothing could use.
pub(crate) fn convert(format: Format, logs: &[PathBuf]) -> Result<Vec<SessionRef>> {
    let (sessions, failures) = convert_reporting(format, logs)?;
    for failure in &failures {
        crate::note!("{failure}");
    }
    // Named once for the folder, as `import`'s summary names them.
    let mut not_imported = NotImported::new();
    for (_, types) in &sessions {
        super::add_not_imported(&mut not_imported, types);
    }
    if let Some(clause) = super::not_imported_clause(&not_imported) {
        crate::note!("{}: {clause}", folder_of(logs).display());
    }
    Ok(sessions.into_iter().map(|(session, _)| session).collect())
}

/// [`convert`] without a word: for a search among logs, where the logs
/// that give no session are not what was asked for. Each session comes
/// with the block types it could not use, for the one that is chosen to
/// say (see [`not_imported_note`]).
pub(crate) fn convert_quietly(format: Format, logs: &[PathBuf]) -> Result<Vec<ConvertedSession>> {
    convert_reporting(format, logs).map(|(sessions, _)| sessions)
}

/// Says on stderr, naming its log, which block types of one session read
/// in place nothing could use, as [`convert`] says it of a folder.
pub(crate) fn not_imported_note(session: &SessionRef, types: &NotImported) {
    if let Some(clause) = super::not_imported_clause(types) {
        let log = session.converted.as_ref().map(|c| c.source.as_path());
        crate::note!("{}: {clause}", log.unwrap_or(&session.transcript).display());
    }
}

/// The block types a session could not use, by type (its
/// `import.not_imported`).
pub(crate) type NotImported = BTreeMap<String, usize>;

/// A converted session and the block types it could not use.
pub(crate) type ConvertedSession = (SessionRef, NotImported);

/// The sessions of `logs`, each with the block types it could not use, and
/// why each log that gave none gave none.
fn convert_reporting(
    format: Format,
    logs: &[PathBuf],
) -> Result<(Vec<ConvertedSession>, Vec<String>)> {
    let size: u64 = logs
        .iter()
        .filter_map(|l| std::fs::metadata(l).ok())
        .map(|m| m.len())
        .sum();
    convert_holding(format, logs, size <= super::HELD_LOGS_BYTES)
}

/// [`convert_reporting`], the transcripts kept as converted if `hold`, else
/// made again from the logs when each session is loaded.
fn convert_holding(
    format: Format,
    logs: &[PathBuf],
    hold: bool,
) -> Result<(Vec<ConvertedSession>, Vec<String>)> {
    let converter = Arc::new(Converter::new(
        format,
        logs,
        None,
        mini_swe_agent::Options::default(),
    )?);
    let (mut sessions, failures) = convert_files_light(logs, |f| converter.convert(f), hold);
    // In the order of the imported copy's directories, `<id>/`: sums over
    // sessions are then added in the same order, to the last bit.
    sessions.sort_by(|a, b| a.file.id.cmp(&b.file.id));
    let sessions = sessions
        .iter()
        .map(|s| Ok((to_ref(s, &converter)?, s.file.import.not_imported.clone())))
        .collect::<Result<Vec<_>>>()?;
    Ok((sessions, failures))
}

/// What a note about all of `logs` names: the one log, or the folder that
/// holds every one of them.
fn folder_of(logs: &[PathBuf]) -> PathBuf {
    if let [one] = logs {
        return one.clone();
    }
    let mut common = logs
        .first()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for p in logs {
        while !p.starts_with(&common) && common.pop() {}
    }
    common
}

/// How the files of one format become sessions, the one converter per
/// format that `import` and the logs read where they are both use. A log's
/// own session comes first.
pub(crate) struct Converter {
    format: Format,
    /// mini-swe-agent: the resolved labels of the files' tasks.
    results: Option<mini_swe_agent::ResultsLookup>,
    options: mini_swe_agent::Options,
}

impl Converter {
    /// The converter of `format` for `files`; for mini-swe-agent, the
    /// results file `results` (else those beside the files' folders) and
    /// `options`.
    pub(crate) fn new(
        format: Format,
        files: &[PathBuf],
        results: Option<&Path>,
        options: mini_swe_agent::Options,
    ) -> Result<Converter> {
        let results = match format {
            Format::MiniSweAgent => Some(mini_swe_agent::ResultsLookup::new(files, results)?),
            Format::ClaudeCode | Format::Codex => None,
        };
        Ok(Converter {
            format,
            results,
            options,
        })
    }

    /// The sessions of one file.
    pub(crate) fn convert(&self, f: &Path) -> Result<Vec<ImportedSession>> {
        match (self.format, &self.results) {
            (Format::ClaudeCode, _) => {
                claude_code::import_file_all(f).map_err(|e| anyhow!("cannot read: {e}"))
            }
            (Format::Codex, _) => codex::import_file(f)
                .map(|s| vec![s])
                .map_err(|e| anyhow!("cannot read: {e}")),
            (Format::MiniSweAgent, results) => {
                let results = results.as_ref().and_then(|r| r.for_file(f));
                mini_swe_agent::import_file(f, results, self.options).map(|s| vec![s])
            }
        }
    }
}

/// A converted session as the rest of the tool reads it: its transcript is
/// made again by `converter` from its log when it is loaded, and refused
/// if the log changed since (a session still being written, say), since
/// its `session.json` would no longer describe it.
fn to_ref(session: &ImportedSession, converter: &Arc<Converter>) -> Result<SessionRef> {
    let source = PathBuf::from(&session.file.source.path);
    let name = format!(
        "{}{CONVERTED_SEPARATOR}{}",
        source.display(),
        session.file.id
    );
    let (position, transcript_len, outline, held) = match &session.dropped {
        Some(d) => (
            d.position,
            d.transcript_len,
            d.outline.clone(),
            d.held.clone(),
        ),
        None => bail!("{name}: converted without its position in its log"),
    };
    let read_as = stamp(&source);
    let (converter, log) = (Arc::clone(converter), source.clone());
    let transcript = move || -> Result<Vec<u8>> {
        if let Some(held) = &held {
            return Ok(held.to_vec());
        }
        if stamp(&log) != read_as {
            bail!(
                "{}: the log changed since it was read; read it again",
                log.display()
            );
        }
        let mut all = converter.convert(&log)?;
        if position >= all.len() {
            bail!(
                "{}: holds fewer sessions than when it was read",
                log.display()
            );
        }
        Ok(all.swap_remove(position).transcript_bytes())
    };
    Ok(SessionRef::converted(
        PathBuf::from(name),
        Converted {
            // Compact: it is held for every session of the folder.
            meta: serde_json::to_vec(&session.file)?,
            skipped: session.log.skipped.clone(),
            source,
            transcript_len,
            outline: Some(outline),
            transcript: Box::new(transcript),
        },
    ))
}

/// What tells a log's versions apart: its size and modification time.
fn stamp(log: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(log).ok()?;
    Some((m.len(), m.modified().ok()?))
}

#[cfg(test)]
#[path = "logs_tests.rs"]
mod tests;
