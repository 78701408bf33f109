//! Other agents' logs read where they are: a Claude Code projects folder or
//! log, Codex CLI rollouts, or mini-swe-agent trajectories, given to any command that reads
//! sessions, are converted in memory exactly as `import` converts them (the
//! same files found, the same converters, the same ids), so that every result
//! is the one the imported copy would give. Nothing is written anywhere.
//!
//! A converted session goes by `<log>#<id>` (its [`SessionRef::transcript`]),
//! which names the log it came from and, since a Claude Code log can hold
//! subagent sessions inline, which of its sessions it is; the same name given
//! back as a path reads that one session again.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use serde_json::Value;

use super::{claude_code, codex, convert_files_multi, mini_swe_agent, ImportedSession};
use crate::transcript::locate::{
    self, Converted, SessionRef, CONVERTED_SEPARATOR, TRANSCRIPT_FILE,
};

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

/// Resolves one argument as [`locate::resolve`] does, and also takes other
/// agents' logs: a log file, a `<log>#<id>` name, or a directory holding
/// logs (beside or instead of smith sessions), converted in memory.
pub(crate) fn resolve(spec: &str) -> Result<Vec<SessionRef>> {
    let path = Path::new(spec);
    if !path.exists() {
        if let Some(found) = reload(path)? {
            return Ok(vec![found]);
        }
        // An id has no path separator: this was meant as a path.
        if spec.contains(std::path::MAIN_SEPARATOR) || spec.contains('/') || spec.starts_with('.') {
            bail!("{spec}: no such file or directory");
        }
        return super::find::find(spec, &super::find::default_places()).map(|s| vec![s]);
    }
    if path.is_file() {
        return match format_of(path) {
            Some(format) => convert(format, &[path.to_path_buf()]),
            None => locate::resolve_path(path),
        };
    }
    if path.join(TRANSCRIPT_FILE).is_file() {
        return locate::resolve_path(path);
    }
    // One walk, one sniff of each file: a `.jsonl` that holds no log is
    // named as `import` names it, unless it belongs to a smith session.
    let files = locate::walk_files(path, None, &|p| {
        claude_code::is_session_log(p) || format_of(p).is_some()
    });
    let mut found: Vec<SessionRef> = Vec::new();
    let mut logs: Vec<(Format, PathBuf)> = Vec::new();
    for p in files {
        if p.file_name().is_some_and(|n| n == TRANSCRIPT_FILE) {
            found.push(SessionRef::file(p));
        } else if let Some(format) = format_of(&p) {
            logs.push((format, p));
        } else if !p
            .parent()
            .is_some_and(|d| d.join(TRANSCRIPT_FILE).is_file())
        {
            let what = match std::fs::metadata(&p) {
                Ok(m) if m.len() == 0 => "it is empty",
                _ => "it holds no smith transcript, Claude Code log or Codex rollout",
            };
            crate::note!("{}: skipped: {what}", p.display());
        }
    }
    for format in Format::ALL {
        let of_format: Vec<PathBuf> = logs
            .iter()
            .filter(|(f, _)| *f == format)
            .map(|(_, p)| p.clone())
            .collect();
        if !of_format.is_empty() {
            found.extend(convert(format, &of_format)?);
        }
    }
    if found.is_empty() {
        bail!(
            "{}: no {TRANSCRIPT_FILE}, Claude Code log (*.jsonl), Codex rollout \
             (rollout-*.jsonl) or mini-swe-agent trajectory (*.traj.json) found in this \
             directory or below it",
            path.display()
        );
    }
    Ok(found)
}

/// Resolves several arguments, keeping each session once, in order.
pub(crate) fn resolve_all<S: AsRef<str>>(specs: &[S]) -> Result<Vec<SessionRef>> {
    locate::resolve_each(specs, resolve)
}

/// The session a `<log>#<id>` name stands for, converted again from its log
/// alone; `None` when `name` is not of that form.
pub(crate) fn reload(name: &Path) -> Result<Option<SessionRef>> {
    let text = name.to_string_lossy();
    let Some((log, id)) = text.rsplit_once(CONVERTED_SEPARATOR) else {
        return Ok(None);
    };
    let log = Path::new(log);
    let Some(format) = log.is_file().then(|| format_of(log)).flatten() else {
        return Ok(None);
    };
    let sessions = convert(format, &[log.to_path_buf()])?;
    // Converted with the rest of its folder, the id may have had a suffix
    // that kept it apart from a session of another log with the same id.
    let own_id = |r: &SessionRef| {
        r.transcript
            .to_string_lossy()
            .rsplit_once(CONVERTED_SEPARATOR)
            .map(|(_, i)| i.to_string())
            .unwrap_or_default()
    };
    let deduped = |i: &str| {
        id.strip_prefix(i)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|h| h.len() == 8 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    sessions
        .iter()
        .find(|r| own_id(r) == id)
        .or_else(|| sessions.iter().find(|r| deduped(&own_id(r))))
        .cloned()
        .map(Some)
        .ok_or_else(|| anyhow!("{}: holds no session {id:?}", log.display()))
}

/// Converts `logs` of one format as one `import` run would, reporting the
/// logs that gave no session on stderr.
fn convert(format: Format, logs: &[PathBuf]) -> Result<Vec<SessionRef>> {
    let (sessions, failures, not_imported) = convert_reporting(format, logs)?;
    for failure in &failures {
        crate::note!("{failure}");
    }
    // Named once for the folder, as `import`'s summary names them.
    if let Some(clause) = super::not_imported_clause(&not_imported) {
        crate::note!("{}: {clause}", folder_of(logs).display());
    }
    Ok(sessions)
}

/// [`convert`], passing over the logs that give no session, and the block
/// types none of them could use, without a word: for a search among logs,
/// where they are not what was asked for.
pub(crate) fn convert_quietly(format: Format, logs: &[PathBuf]) -> Result<Vec<SessionRef>> {
    convert_reporting(format, logs).map(|(sessions, _, _)| sessions)
}

/// The block types the sessions of one conversion could not use, by type.
type NotImported = std::collections::BTreeMap<String, usize>;

/// The sessions of `logs`, why each log that gave none gave none, and the
/// block types none of them could use (counted over them all).
fn convert_reporting(
    format: Format,
    logs: &[PathBuf],
) -> Result<(Vec<SessionRef>, Vec<String>, NotImported)> {
    let converter = Converter::new(format, logs, None, mini_swe_agent::Options::default())?;
    let (mut sessions, failures) = convert_files_multi(logs, |f| converter.convert(f));
    let mut not_imported = NotImported::new();
    for s in &sessions {
        super::add_not_imported(&mut not_imported, &s.file.import.not_imported);
    }
    // In the order of the imported copy's directories, `<id>/`: sums over
    // sessions are then added in the same order, to the last bit.
    sessions.sort_by(|a, b| a.file.id.cmp(&b.file.id));
    let sessions = sessions.iter().map(to_ref).collect::<Result<Vec<_>>>()?;
    Ok((sessions, failures, not_imported))
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

/// A converted session as the rest of the tool reads it.
fn to_ref(session: &ImportedSession) -> Result<SessionRef> {
    let source = PathBuf::from(&session.file.source.path);
    let name = format!(
        "{}{CONVERTED_SEPARATOR}{}",
        source.display(),
        session.file.id
    );
    Ok(SessionRef::converted(
        PathBuf::from(name),
        Converted {
            transcript: session.transcript_bytes(),
            meta: session.meta_bytes()?,
            skipped: session.log.skipped.clone(),
            source,
        },
    ))
}
