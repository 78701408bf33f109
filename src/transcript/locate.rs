//! From what the user typed to transcript files: a `transcript.jsonl`, a
//! session directory, a tree of them, or a session id or name resolved the way
//! smith resolves it (through `$SMITH_HOME/sessions/index.json`).
//!
//! Nothing here writes: smith's session directories are only ever read.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

/// The file smith appends every message to.
pub(crate) const TRANSCRIPT_FILE: &str = "transcript.jsonl";
/// The file smith keeps a session's metadata in, beside the transcript.
pub(crate) const SESSION_FILE: &str = "session.json";

/// One session found on disk.
#[derive(Clone, Debug)]
pub struct SessionRef {
    /// The transcript to read; for a session converted in memory from
    /// another agent's log, the name it goes by (`<log>#<id>`, see
    /// [`Converted`]), which is what tables and data files show as its path.
    pub transcript: PathBuf,
    /// The session in smith's form when it was converted from another
    /// agent's log as it was found, rather than read from a smith session.
    pub(crate) converted: Option<Arc<Converted>>,
}

/// A session converted in memory from another agent's log, byte for byte
/// what `import` would have written as its `transcript.jsonl` and
/// `session.json`, so that reading it gives the same session. Only its
/// `session.json` is kept: the transcript is made again from the log when
/// the session is loaded, so that what a folder costs in memory is its
/// sessions' metadata, not its logs.
pub(crate) struct Converted {
    /// The `session.json` an import writes beside it.
    pub(crate) meta: Vec<u8>,
    /// The log it was converted from: what changes when the session does.
    pub(crate) source: PathBuf,
    /// The lines of `source` the conversion could not use (numbered in
    /// it), so that a log read in place gives the account `import` gives.
    pub(crate) skipped: Vec<crate::transcript::reader::Skip>,
    /// The transcript's size in bytes.
    pub(crate) transcript_len: u64,
    /// The transcript's messages in outline, made with it.
    pub(crate) outline: Option<Arc<crate::transcript::outline::Outline>>,
    /// Makes the transcript (smith's form, one message per line) again.
    pub(crate) transcript: Box<dyn Fn() -> Result<Vec<u8>> + Send + Sync>,
}

impl std::fmt::Debug for Converted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Converted")
            .field("source", &self.source)
            .field("transcript_len", &self.transcript_len)
            .finish_non_exhaustive()
    }
}

/// Separates a converted session's log from its id in the name it goes by.
pub(crate) const CONVERTED_SEPARATOR: char = '#';

// Sessions are told apart, ordered and deduplicated by the name they go by.
impl PartialEq for SessionRef {
    fn eq(&self, other: &Self) -> bool {
        self.transcript == other.transcript
    }
}

impl Eq for SessionRef {}

impl PartialOrd for SessionRef {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SessionRef {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.transcript.cmp(&other.transcript)
    }
}

impl SessionRef {
    /// A smith session's transcript on disk.
    pub fn file(transcript: PathBuf) -> SessionRef {
        SessionRef {
            transcript,
            converted: None,
        }
    }

    /// A session converted from `converted.source`, going by `name`.
    pub(crate) fn converted(name: PathBuf, converted: Converted) -> SessionRef {
        SessionRef {
            transcript: name,
            converted: Some(Arc::new(converted)),
        }
    }

    /// The files whose change changes the session: the transcript and
    /// `session.json` beside it, or the log it was converted from.
    pub(crate) fn files(&self) -> Vec<PathBuf> {
        match &self.converted {
            Some(c) => vec![c.source.clone()],
            None => vec![self.transcript.clone(), self.session_json()],
        }
    }

    /// Bytes of transcript to read (smith's form).
    pub(crate) fn size(&self) -> u64 {
        match &self.converted {
            Some(c) => c.transcript_len,
            None => fs::metadata(&self.transcript).map_or(0, |m| m.len()),
        }
    }

    /// When the session last changed on disk: the transcript's or the
    /// source log's modification time.
    pub(crate) fn modified(&self) -> std::io::Result<std::time::SystemTime> {
        let path = match &self.converted {
            Some(c) => &c.source,
            None => &self.transcript,
        };
        fs::metadata(path)?.modified()
    }

    /// The directory holding the transcript (and `session.json`, if any).
    pub fn dir(&self) -> &Path {
        self.transcript.parent().unwrap_or(Path::new("."))
    }

    /// `session.json` beside the transcript.
    pub(crate) fn session_json(&self) -> PathBuf {
        self.dir().join(SESSION_FILE)
    }

    /// A short name for tables: the session directory's name, or the file's
    /// stem for a transcript outside a session directory.
    pub fn label(&self) -> String {
        let file_name = self.transcript.file_name().and_then(|n| n.to_str());
        if file_name == Some(TRANSCRIPT_FILE) {
            if let Some(dir) = self.dir().file_name().and_then(|n| n.to_str()) {
                return dir.to_string();
            }
        }
        self.transcript
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("transcript")
            .to_string()
    }
}

/// `$HOME`, the user's home directory (empty when unset).
pub(crate) fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The directory the environment variable `var` names, else `default`
/// under the home directory: how smith, Claude Code and Codex each find
/// their own folder.
pub(crate) fn env_dir(var: &str, default: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => home_dir().join(default),
    }
}

/// `$SMITH_HOME`, defaulting to `~/.smith`.
pub(crate) fn smith_home() -> PathBuf {
    env_dir("SMITH_HOME", ".smith")
}

/// `$SMITH_HOME/sessions`.
pub(crate) fn sessions_dir() -> PathBuf {
    smith_home().join("sessions")
}

/// One entry of smith's `sessions/index.json`.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct IndexEntry {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) first_prompt: Option<String>,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
    // Nothing but the generator's tests reads these: they check that it
    // writes smith's whole index entry.
    #[serde(default)]
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) updated_at: Option<String>,
    #[serde(default)]
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) message_count: Option<u64>,
}

/// Session indexes by directory, read once each.
#[derive(Default)]
pub(crate) struct Indexes {
    by_dir: HashMap<PathBuf, Vec<IndexEntry>>,
    /// Indexes that could not be read, with why.
    pub(crate) errors: Vec<String>,
}

impl Indexes {
    /// The index entry for a session directory, from `index.json` in its
    /// parent directory.
    pub(crate) fn entry(&mut self, session_dir: &Path) -> Option<IndexEntry> {
        let parent = session_dir.parent()?.to_path_buf();
        let id = session_dir.file_name()?.to_str()?.to_string();
        if !self.by_dir.contains_key(&parent) {
            let entries = match read_index(&parent) {
                Ok(entries) => entries,
                Err(e) => {
                    self.errors.push(format!("{e:#}"));
                    Vec::new()
                }
            };
            self.by_dir.insert(parent.clone(), entries);
        }
        self.by_dir[&parent].iter().find(|e| e.id == id).cloned()
    }
}

/// The id `transcript list` prints for a session, and the one every
/// command takes back: its `session.json` id, else its index entry's, else
/// its label.
pub(crate) fn listed_id(
    meta: Option<&SessionMeta>,
    index: Option<&IndexEntry>,
    source: &SessionRef,
) -> String {
    meta.and_then(|m| m.id.clone())
        .or_else(|| index.map(|e| e.id.clone()))
        .unwrap_or_else(|| source.label())
}

/// The name `transcript list` prints for a session: its `session.json`
/// name, else its index entry's.
pub(crate) fn listed_name(
    meta: Option<&SessionMeta>,
    index: Option<&IndexEntry>,
) -> Option<String> {
    meta.and_then(|m| m.name.clone())
        .or_else(|| index.and_then(|e| e.name.clone()))
}

/// smith's `name` of an index entry for a first prompt: its first five
/// words, lower case, anything but letters, digits and dashes turned into
/// spaces, joined by dashes. `None` when nothing is left. The generator and
/// the restore both name sessions with it.
pub(crate) fn derive_name(prompt: &str) -> Option<String> {
    let cleaned: String = prompt
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().take(5).collect();
    let name = words.join("-");
    let name = name.trim_matches('-');
    (!name.is_empty()).then(|| name.to_string())
}

/// smith's `first_prompt` for the index: the prompt stripped, and if longer
/// than 60 characters its first 58 and `...`.
pub(crate) fn first_prompt_label(prompt: &str) -> String {
    let text = prompt.trim();
    if text.chars().count() > 60 {
        let head: String = text.chars().take(58).collect();
        format!("{head}...")
    } else {
        text.to_string()
    }
}

/// Reads `index.json` in `sessions`; a missing file is an empty index.
pub(crate) fn read_index(sessions: &Path) -> Result<Vec<IndexEntry>> {
    let path = sessions.join("index.json");
    match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{}: not a smith session index", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("{}: cannot read", path.display())),
    }
}

/// Resolves one argument to the sessions it names. A path that exists is
/// taken as a path; anything else as a session id or name.
pub fn resolve(spec: &str) -> Result<Vec<SessionRef>> {
    let path = Path::new(spec);
    if path.exists() {
        return resolve_path(path);
    }
    // A session id or name has no path separator: this was meant as a path.
    if spec.contains(std::path::MAIN_SEPARATOR) || spec.contains('/') || spec.starts_with('.') {
        bail!("{spec}: no such file or directory");
    }
    resolve_reference(spec, &sessions_dir())
}

/// Resolves several arguments, keeping each session once, in order.
pub fn resolve_all<S: AsRef<str>>(specs: &[S]) -> Result<Vec<SessionRef>> {
    resolve_each(specs, resolve)
}

/// Every argument of `specs` resolved by `resolve`, each session (by its
/// transcript) kept once, in order: the one dedupe of every resolver.
pub(crate) fn resolve_each<S: AsRef<str>>(
    specs: &[S],
    resolve: impl Fn(&str) -> Result<Vec<SessionRef>>,
) -> Result<Vec<SessionRef>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for spec in specs {
        for found in resolve(spec.as_ref())? {
            if seen.insert(found.transcript.clone()) {
                out.push(found);
            }
        }
    }
    Ok(out)
}

/// A file is taken as a transcript; a directory with a `transcript.jsonl` is
/// one session; any other directory is searched recursively.
pub fn resolve_path(path: &Path) -> Result<Vec<SessionRef>> {
    let meta = fs::metadata(path).with_context(|| format!("{}: cannot read", path.display()))?;
    if meta.is_file() {
        return Ok(vec![SessionRef::file(path.to_path_buf())]);
    }
    let direct = path.join(TRANSCRIPT_FILE);
    if direct.is_file() {
        return Ok(vec![SessionRef::file(direct)]);
    }
    let found: Vec<SessionRef> = walk_files(path, None, &|p| {
        p.file_name().is_some_and(|n| n == TRANSCRIPT_FILE)
    })
    .into_iter()
    .map(SessionRef::file)
    .collect();
    if found.is_empty() {
        bail!(
            "{}: no {TRANSCRIPT_FILE} found in this directory or below it",
            path.display()
        );
    }
    Ok(found)
}

/// Files below `dir` that `wanted` accepts, sorted. Each directory is
/// visited once even through symbolic links (by canonical path), so a loop
/// ends; `skip` (canonical, e.g. an output directory inside the input) is
/// passed over; an unreadable directory is reported and passed over.
pub(crate) fn walk_files(
    dir: &Path,
    skip: Option<&Path>,
    wanted: &dyn Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut visited = HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(canonical) = fs::canonicalize(&dir) else {
            continue;
        };
        if Some(canonical.as_path()) == skip || !visited.insert(canonical) {
            continue;
        }
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                crate::note!("{}: skipped: cannot read directory: {e}", dir.display());
                continue;
            }
        };
        let mut subdirs = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = fs::metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                subdirs.push(path);
            } else if meta.is_file() && wanted(&path) {
                found.push(path);
            }
        }
        subdirs.sort();
        stack.extend(subdirs.into_iter().rev());
    }
    found.sort();
    found
}

/// Resolves an id or a name as smith does: an id wins (from the index or as a
/// directory under `sessions`), then a unique name.
pub(crate) fn resolve_reference(reference: &str, sessions: &Path) -> Result<Vec<SessionRef>> {
    let wanted = reference.trim();
    let index = read_index(sessions)?;
    let by_id = |id: &str| -> Result<Vec<SessionRef>> {
        let transcript = sessions.join(id).join(TRANSCRIPT_FILE);
        if transcript.is_file() {
            Ok(vec![SessionRef::file(transcript)])
        } else {
            Err(anyhow!(
                "session {id:?} is in {} but {} does not exist",
                sessions.join("index.json").display(),
                transcript.display()
            ))
        }
    };
    if index.iter().any(|e| e.id == wanted) || sessions.join(wanted).is_dir() {
        return by_id(wanted);
    }
    let matches: Vec<&IndexEntry> = index
        .iter()
        .filter(|e| e.name.as_deref() == Some(wanted))
        .collect();
    match matches.len() {
        0 => bail!(
            "{wanted:?} is neither a path nor a session id or name in {} (set SMITH_HOME to look elsewhere)",
            sessions.display()
        ),
        1 => by_id(&matches[0].id),
        _ => {
            let ids: Vec<&str> = matches.iter().map(|e| e.id.as_str()).collect();
            bail!(
                "session name {wanted:?} is ambiguous: {}; use the id instead",
                ids.join(", ")
            )
        }
    }
}

/// What `session.json` says about a session, as far as it could be read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionMeta {
    pub id: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) provider: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) created_at: Option<String>,
    pub(crate) updated_at: Option<String>,
    pub(crate) parent_id: Option<String>,
    /// How many messages `session.json` holds (its own copy of the history).
    pub(crate) messages: Option<u64>,
    /// Everything else in the file, for importers' provenance and usage.
    pub raw: Option<serde_json::Value>,
}

/// Why a `session.json` gives no metadata; `path` is the file (or, for a
/// log read where it is, the transcript it stands for). Each message holds
/// its cause, as the note the reader writes for it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MetaError {
    #[error("{}: cannot read: {error}", .path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: not valid JSON, metadata ignored: {error}", .path.display())]
    NotJson {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error("{}: not a JSON object, metadata ignored", .path.display())]
    NotObject { path: PathBuf },
}

/// Reads `session.json` beside a transcript. Missing is `Ok(None)`; a file that
/// cannot be read or parsed is an error the caller reports and goes on from.
pub(crate) fn read_meta(session: &SessionRef) -> Result<Option<SessionMeta>, MetaError> {
    if let Some(c) = &session.converted {
        return meta_from_bytes(&c.meta, &session.transcript).map(Some);
    }
    let path = session.session_json();
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(MetaError::Read { path, error }),
    };
    meta_from_bytes(&bytes, &path).map(Some)
}

/// Whether another agent recorded the session (an import of its log, or
/// the log read in place), as its `session.json` tells: an import names
/// the format it came from.
pub(crate) fn recorded_by_another_agent(session: &SessionRef) -> bool {
    if session.converted.is_some() {
        return true;
    }
    let Ok(Some(meta)) = read_meta(session) else {
        return false;
    };
    meta.raw
        .as_ref()
        .and_then(|raw| {
            raw.get("source")?
                .get("format")?
                .as_str()
                .map(|f| !f.is_empty())
        })
        .unwrap_or(false)
}

/// Parses the bytes of a `session.json` read from (or standing for) `path`.
fn meta_from_bytes(bytes: &[u8], path: &Path) -> Result<SessionMeta, MetaError> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|error| MetaError::NotJson {
            path: path.to_path_buf(),
            error,
        })?;
    let Some(obj) = value.as_object() else {
        return Err(MetaError::NotObject {
            path: path.to_path_buf(),
        });
    };
    let s = |k: &str| obj.get(k).and_then(|v| v.as_str()).map(str::to_string);
    Ok(SessionMeta {
        id: s("id"),
        name: s("name"),
        model: s("model"),
        provider: s("provider"),
        cwd: s("cwd"),
        created_at: s("created_at"),
        updated_at: s("updated_at"),
        parent_id: s("parent_id"),
        messages: obj
            .get("messages")
            .and_then(|m| m.as_array())
            .map(|a| a.len() as u64),
        raw: Some(value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_first_five_words_of_the_prompt() {
        assert_eq!(
            derive_name("Fix the failing test in src/x.rs, please now").as_deref(),
            Some("fix-the-failing-test-in")
        );
        assert_eq!(
            derive_name("Bitte prüfe die Änderungen").as_deref(),
            Some("bitte-pr-fe-die-nderungen")
        );
        assert_eq!(derive_name("!!! ???"), None);
    }

    #[test]
    fn long_first_prompts_are_cut_to_58_characters_and_dots() {
        let long = "é".repeat(70);
        let label = first_prompt_label(&long);
        assert_eq!(label.chars().count(), 61);
        assert!(label.ends_with("..."));
        assert_eq!(first_prompt_label("  short  "), "short");
    }
}
