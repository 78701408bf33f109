//! Importing other agents' recorded sessions as smith sessions, so that the
//! replay and the calibration can start from real data.
//!
//! Each format has its own converter ([`claude_code`], [`codex`],
//! [`mini_swe_agent`])
//! that turns one source file into an [`ImportedSession`]: smith messages plus
//! the facts smith's own record lacks (where the session came from, what the
//! provider reported for each request, where the agent compacted by itself).
//! This module holds what they share: the `session.json` they write, the
//! pairing check every imported session must pass, and the writer that puts a
//! session directory in place atomically.
//!
//! The output directory is laid out like `$SMITH_HOME/sessions`:
//! `OUT/<id>/transcript.jsonl`, `OUT/<id>/session.json` and `OUT/index.json`,
//! so `SMITH_HOME` pointing at its parent lets ids and names resolve.

pub mod claude_code;
#[cfg(test)]
mod claude_code_tests;
pub(crate) mod codex;
pub(crate) mod copies;
pub(crate) mod direct;
pub(crate) mod find;
pub(crate) mod logs;
pub mod mini_swe_agent;
pub(crate) mod restore;
mod server_tools;
use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::transcript::locate::{SESSION_FILE, TRANSCRIPT_FILE};
use crate::transcript::reader::{for_each_line, SKIPS_DESCRIBED_PER_FILE};
use crate::transcript::session_file::{ImportCounts, SessionFile, SmithUsage};
use crate::transcript::{BlockType, Message, ReadLog, Role, Skip};

/// The text of the error result given to a tool call whose result the source
/// never recorded (an interrupted call, a crash mid-turn). smith's history
/// must pair every `tool_use` with one `tool_result`, as a provider would
/// reject the request otherwise; an error result says "nothing came back"
/// without inventing output.
pub const NO_RESULT_TEXT: &str = "[no result recorded]";

/// The name of the session index in an output directory.
pub(crate) const INDEX_FILE: &str = "index.json";

/// One converted session, ready to be written.
#[derive(Clone, Debug)]
pub struct ImportedSession {
    pub file: SessionFile,
    pub messages: Vec<Message>,
    /// Lines (or messages) of the source that could not be used.
    pub log: ReadLog,
    /// Repairs that kept the session usable, e.g. a synthetic result; each
    /// names the source line it is about.
    pub notes: Vec<Skip>,
    /// The source file of the parent session (a subagent's), whose final id
    /// becomes `parent_id` once every id of the run is known.
    pub(crate) parent_path: Option<String>,
    /// Claude Code: a line carried `forkedFrom` (see [`copies`]).
    pub(crate) forked: bool,
    /// Set when the messages were let go once converted (see
    /// [`convert_files_light`]).
    pub(crate) dropped: Option<Dropped>,
}

/// What is left of a session's messages once they are let go: enough to
/// make them again from the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Its position among the sessions its converter made of its log.
    pub(crate) position: usize,
    /// Its transcript's size in bytes.
    pub(crate) transcript_len: u64,
    /// Its messages in outline: what reading the account needs of them.
    pub(crate) outline: std::sync::Arc<crate::transcript::outline::Outline>,
    /// Its transcript as converted, where the folder is small enough to
    /// keep (see [`convert_files_light`]).
    pub(crate) held: Option<std::sync::Arc<Vec<u8>>>,
}

impl ImportedSession {
    /// The session's `transcript.jsonl`, as an import writes it.
    pub(crate) fn transcript_bytes(&self) -> Vec<u8> {
        let mut transcript = Vec::with_capacity(1 << 16);
        for m in &self.messages {
            m.write_json(&mut transcript);
            transcript.push(b'\n');
        }
        transcript
    }

    /// The session's `session.json`, as an import writes it.
    pub(crate) fn meta_bytes(&self) -> Result<Vec<u8>> {
        let mut meta = serde_json::to_vec_pretty(&self.file)?;
        meta.push(b'\n');
        Ok(meta)
    }

    /// A converter's finished session, its counts and usage totals filled
    /// in from the messages.
    pub(crate) fn new(
        file: SessionFile,
        messages: Vec<Message>,
        log: ReadLog,
        notes: Vec<Skip>,
        parent_path: Option<String>,
    ) -> ImportedSession {
        let mut session = ImportedSession {
            file,
            messages,
            log,
            notes,
            parent_path,
            forked: false,
            dropped: None,
        };
        session.count();
        session.file.measured =
            crate::transcript::measured::of_file(&session.file, &session.messages);
        session
    }

    /// Fills the counts and the usage totals from the messages.
    fn count(&mut self) {
        let c = &mut self.file.import;
        c.messages = self.messages.len();
        c.tool_calls = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter(|b| b.kind == BlockType::ToolUse)
            .count();
        c.synthetic_user_messages = self
            .messages
            .iter()
            .filter(|m| m.role == Role::User && m.synthetic)
            .count();
        c.skipped = self.log.skipped_count();
        self.file.usage = SmithUsage::total(&self.file.requests);
    }

    /// Writes what could not be used and what was repaired to `out`:
    /// `path:line: skipped: reason` and `path:line: note: reason`, a few of
    /// each per file and a count of the rest.
    pub fn report(&self, out: &mut dyn Write) -> std::io::Result<()> {
        self.log.report(out)?;
        let path = self.log.path.display();
        for note in self.notes.iter().take(SKIPS_DESCRIBED_PER_FILE) {
            match note.line {
                0 => writeln!(out, "{path}: note: {}", note.reason)?,
                n => writeln!(out, "{path}:{n}: note: {}", note.reason)?,
            }
        }
        if self.notes.len() > SKIPS_DESCRIBED_PER_FILE {
            writeln!(
                out,
                "{path}: {} more notes ({} in all)",
                self.notes.len() - SKIPS_DESCRIBED_PER_FILE,
                self.notes.len()
            )?;
        }
        Ok(())
    }

    /// What `index.json` says about the session.
    pub(crate) fn index_entry(&self) -> serde_json::Value {
        let f = &self.file;
        let mut e = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            e.insert(k.to_string(), v);
        };
        put("id", f.id.clone().into());
        put(
            "created_at",
            f.created_at.clone().unwrap_or_default().into(),
        );
        put(
            "updated_at",
            f.updated_at.clone().unwrap_or_default().into(),
        );
        put("first_prompt", first_prompt(&self.messages).into());
        put("message_count", self.messages.len().into());
        if let Some(n) = &f.name {
            put("name", n.clone().into());
        }
        if let Some(p) = &f.parent_id {
            put("parent_id", p.clone().into());
        }
        if let Some(p) = &f.provider {
            put("provider", p.clone().into());
        }
        if let Some(m) = &f.model {
            put("model", m.clone().into());
        }
        serde_json::Value::Object(e)
    }
}

/// The lines (or messages) of an agent's log a converter could not use,
/// each with why, kept apart from the log until the session is finished.
#[derive(Debug, Default)]
pub(crate) struct Skipped(Vec<Skip>);

impl Skipped {
    /// Records line `line` as skipped for `reason`.
    pub(crate) fn add(&mut self, line: usize, reason: impl Into<String>) {
        self.0.push(Skip::new(line, reason));
    }

    /// Moves the skipped lines into `log`, whose skipped lines are then all
    /// in line order.
    pub(crate) fn move_to(&mut self, log: &mut ReadLog) {
        log.skipped.append(&mut self.0);
        log.skipped.sort_by_key(|s| s.line);
    }
}

/// Calls `f` with each line of an agent's log whose lines are JSON objects,
/// read as [`for_each_line`] reads them: the line's number and its object.
/// A line that is no object is recorded in `log` as skipped, with why, as
/// one that is not UTF-8 is.
pub(crate) fn for_each_object<R: Read>(
    reader: R,
    log: &mut ReadLog,
    mut f: impl FnMut(usize, serde_json::Map<String, serde_json::Value>),
) -> std::io::Result<()> {
    for_each_line(reader, log, |line, text, log| match json_object(text) {
        Ok(obj) => f(line, obj),
        Err(reason) => log.skipped.push(Skip::new(line, reason.to_string())),
    })
}

/// Why a line of an agent's log is not the JSON object each line is, as
/// the line's skip reports it.
#[derive(Debug, thiserror::Error)]
enum NotAnObject {
    #[error("not a JSON object")]
    OtherValue,
    #[error("not valid JSON: {0}")]
    NotJson(serde_json::Error),
}

/// A line of an agent's log as the JSON object each line is, or why not.
fn json_object(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, NotAnObject> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(obj)) => Ok(obj),
        Ok(_) => Err(NotAnObject::OtherValue),
        Err(e) => Err(NotAnObject::NotJson(e)),
    }
}

/// The string at `key` of a log line's object.
pub(crate) fn str_field(
    obj: &serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<String> {
    obj.get(key)
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
}

/// smith's `first_prompt`: the first user message's first text, trimmed, cut
/// to 60 characters with an ellipsis.
pub(crate) fn first_prompt(messages: &[Message]) -> String {
    let Some(user) = messages.iter().find(|m| m.starts_real_turn()) else {
        return "(empty session)".into();
    };
    let Some(text) = user.content.iter().find(|b| b.kind == BlockType::Text) else {
        return "(empty prompt)".into();
    };
    let text = text.text_lossy();
    let text = text.trim();
    if text.chars().count() > 60 {
        let head: String = text.chars().take(57).collect();
        format!("{head}...")
    } else {
        text.to_string()
    }
}

/// Checks the invariant every imported session keeps: each `tool_use` is
/// answered by exactly one `tool_result` in a later message, and each
/// `tool_result` answers a `tool_use` before it. Returns what is wrong, empty
/// when nothing is.
pub fn pairing_problems<M: Borrow<Message>>(messages: &[M]) -> Vec<String> {
    let mut problems = Vec::new();
    // id -> (index of the call's message, results seen)
    let mut calls: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        for b in &m.borrow().content {
            let id = b.tool_call_id.as_deref().unwrap_or("");
            match b.kind {
                BlockType::ToolUse if calls.insert(id, (i, 0)).is_some() => {
                    problems.push(format!("message {i}: tool call id {id:?} used twice"));
                }
                BlockType::ToolResult => match calls.get_mut(id) {
                    Some((at, n)) if *at < i => *n += 1,
                    _ => problems.push(format!(
                        "message {i}: result for {id:?} answers no earlier call"
                    )),
                },
                _ => {}
            }
        }
    }
    let mut unanswered: Vec<(usize, &str, usize)> = calls
        .iter()
        .filter(|(_, (_, n))| *n != 1)
        .map(|(id, (at, n))| (*at, *id, *n))
        .collect();
    unanswered.sort();
    for (at, id, n) in unanswered {
        problems.push(format!(
            "message {at}: tool call {id:?} has {n} results, not 1"
        ));
    }
    problems
}

/// Turns any text into a session id smith accepts as a directory name:
/// ASCII letters, digits, `.`, `_` and `-`; everything else becomes `-`.
pub(crate) fn plain_id(text: &str) -> String {
    let id: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let id = id.trim_start_matches('.').to_string();
    if id.is_empty() {
        "session".into()
    } else {
        id
    }
}

/// Makes ids unique within one run: a repeated id gets a short hash of its
/// source path appended, so the result is the same on every run. Children are
/// then linked to their parent's final id through `parent_path`.
pub(crate) fn dedupe_ids(sessions: &mut [ImportedSession]) {
    let mut count: HashMap<String, usize> = HashMap::new();
    for s in sessions.iter() {
        *count.entry(s.file.id.clone()).or_default() += 1;
    }
    for s in sessions.iter_mut() {
        if count[&s.file.id] > 1 {
            s.file.id = format!("{}-{:08x}", s.file.id, fnv1a(&s.file.source.path) as u32);
        }
    }
    // Only a file's own session can be a parent: the subagent sessions a
    // Claude Code log holds inline share its path.
    let by_path: HashMap<String, String> = sessions
        .iter()
        .filter(|s| s.parent_path.is_none())
        .map(|s| (s.file.source.path.clone(), s.file.id.clone()))
        .collect();
    for s in sessions.iter_mut() {
        if let Some(id) = s.parent_path.as_ref().and_then(|p| by_path.get(p)) {
            s.file.parent_id = Some(id.clone());
        }
    }
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Refuses an output directory that lies inside one of the inputs: an import
/// never writes into what it reads. `inputs` are files or directories; a
/// file's directory counts as input.
pub fn check_output_outside(out: &Path, inputs: &[PathBuf]) -> Result<()> {
    let out = absolute(out);
    for input in inputs {
        let dir = if input.is_file() {
            input.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            input.clone()
        };
        let dir = absolute(&dir);
        if out.starts_with(&dir) {
            bail!(
                "--out {} lies inside the input {}: an import never writes where it reads; choose a directory outside it",
                out.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// The canonical form of a path, or of its nearest existing ancestor with the
/// rest appended (the output directory may not exist yet).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    if let Ok(c) = fs::canonicalize(path) {
        return c;
    }
    let base = std::env::current_dir().unwrap_or_default().join(path);
    let mut tail = Vec::new();
    let mut cur = base.as_path();
    loop {
        if let Ok(c) = fs::canonicalize(cur) {
            let mut p = c;
            for part in tail.iter().rev() {
                p.push(part);
            }
            return p;
        }
        match (cur.file_name(), cur.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name.to_os_string());
                cur = parent;
            }
            _ => return base,
        }
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes one session directory, `out/<id>/`, atomically: the transcript and
/// `session.json` are written into a hidden temporary directory beside it,
/// which is then renamed into place. A directory already there is replaced
/// only if it is itself an import (its `session.json` names a source
/// format), so a re-run replaces its own output and never a smith session.
pub(crate) fn write_session(out: &Path, session: &ImportedSession) -> Result<PathBuf> {
    let id = &session.file.id;
    let dest = out.join(id);
    if dest.exists() && !is_import_dir(&dest) {
        bail!(
            "{}: exists and is not an imported session; move it away or choose another --out",
            dest.display()
        );
    }
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = out.join(format!(".{id}.tmp-{}-{n}", std::process::id()));
    let result = (|| -> Result<()> {
        fs::create_dir(&tmp).with_context(|| format!("{}: cannot create", tmp.display()))?;
        crate::output::write_synced(&tmp.join(TRANSCRIPT_FILE), &session.transcript_bytes())?;
        crate::output::write_synced(&tmp.join(SESSION_FILE), &session.meta_bytes()?)?;
        // The directory's entries durable before it is renamed into place.
        crate::output::sync_dir(&tmp)?;
        if dest.exists() {
            let old = out.join(format!(".{id}.old-{}-{n}", std::process::id()));
            fs::rename(&dest, &old)
                .with_context(|| format!("{}: cannot replace", dest.display()))?;
            fs::rename(&tmp, &dest).with_context(|| format!("{}: cannot write", dest.display()))?;
            crate::output::sync_dir(out)?;
            let _ = fs::remove_dir_all(&old);
        } else {
            fs::rename(&tmp, &dest).with_context(|| format!("{}: cannot write", dest.display()))?;
            crate::output::sync_dir(out)?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result.map(|()| dest)
}

/// Removes the hidden temporary directories an interrupted import left in
/// `out` (`.<id>.tmp-*` and `.<id>.old-*`): the transcript inside one would
/// otherwise be found by a search of `out` as if it were a session.
fn remove_leftovers(out: &Path) {
    let Ok(entries) = fs::read_dir(out) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with('.') && (name.contains(".tmp-") || name.contains(".old-"));
        if ours && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether `dir` holds a session an import wrote.
fn is_import_dir(dir: &Path) -> bool {
    fs::read(dir.join(SESSION_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| SessionFile::from_meta(&v))
        .is_some()
}

/// Adds `entries` to `out/index.json`, replacing entries with the same ids
/// and keeping every other one, and writes it atomically. An index that
/// cannot be parsed is an error (it may be smith's; it is not overwritten).
pub(crate) fn update_index(out: &Path, entries: &[serde_json::Value]) -> Result<()> {
    let path = out.join(INDEX_FILE);
    let mut index: Vec<serde_json::Value> = match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{}: not a list of sessions; move it away and import again",
                path.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot read", path.display())),
    };
    let ours: HashSet<&str> = entries.iter().filter_map(|e| e["id"].as_str()).collect();
    index.retain(|e| !e["id"].as_str().is_some_and(|id| ours.contains(id)));
    index.extend(entries.iter().cloned());
    let mut bytes = serde_json::to_vec_pretty(&index)?;
    bytes.push(b'\n');
    crate::output::write_atomic(&path, &bytes)?;
    Ok(())
}

/// What one `import` run did, summed over its sessions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub(crate) files: usize,
    pub(crate) sessions: usize,
    pub messages: usize,
    pub tool_calls: usize,
    pub(crate) synthetic_user_messages: usize,
    pub synthetic_results: usize,
    pub skipped: usize,
    /// Lines the agents wrote by design, left out (not damage).
    pub(crate) agent_written: usize,
    /// Blocks of a type nothing can use, by type (see
    /// [`ImportCounts::not_imported`]).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) not_imported: BTreeMap<String, usize>,
    /// Source files that could not be read at all.
    pub(crate) files_failed: usize,
}

impl Totals {
    /// Adds one session's counts.
    pub(crate) fn add(&mut self, c: &ImportCounts) {
        self.sessions += 1;
        self.messages += c.messages;
        self.tool_calls += c.tool_calls;
        self.synthetic_user_messages += c.synthetic_user_messages;
        self.synthetic_results += c.synthetic_results;
        self.skipped += c.skipped;
        self.agent_written += c.agent_written;
        add_not_imported(&mut self.not_imported, &c.not_imported);
    }
}

/// Adds one session's blocks left out by type to `into`.
pub(crate) fn add_not_imported(into: &mut BTreeMap<String, usize>, from: &BTreeMap<String, usize>) {
    for (kind, n) in from {
        *into.entry(kind.clone()).or_default() += n;
    }
}

/// How a summary names the blocks left out because nothing can use their
/// type, once for all the files it sums, each type with its count:
/// `3 blocks of a type nothing here can use left out: "foo" (2), "bar" (1)`;
/// `None` when there were none.
pub(crate) fn not_imported_clause(types: &BTreeMap<String, usize>) -> Option<String> {
    if types.is_empty() {
        return None;
    }
    let total: usize = types.values().sum();
    let named: Vec<String> = types.iter().map(|(k, n)| format!("{k:?} ({n})")).collect();
    Some(format!(
        "{total} blocks of a type nothing here can use left out: {}",
        named.join(", ")
    ))
}

/// What importing a set of files produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The sessions written, in file order (their messages already dropped
    /// to keep memory flat; the counts stay in `file.import`).
    pub sessions: Vec<ImportedSession>,
    /// Files that could not be imported at all, each with why.
    pub failures: Vec<String>,
    pub totals: Totals,
}

/// Converts every file with `convert` (in parallel), makes the ids unique,
/// writes each session directory into `out` atomically and adds them to
/// `out/index.json`. A file that fails to convert is recorded in
/// [`Outcome::failures`] and the rest go on; a session that cannot be written
/// is an error, after the others have been written.
pub fn import_files<F>(files: &[PathBuf], out: &Path, convert: F) -> Result<Outcome>
where
    F: Fn(&Path) -> Result<ImportedSession> + Sync,
{
    import_files_multi(files, out, |f| convert(f).map(|s| vec![s]))
}

/// [`import_files`] for a format whose file can hold several sessions (a
/// Claude Code log with its subagents inline): `convert` returns the file's
/// own session first.
pub(crate) fn import_files_multi<F>(files: &[PathBuf], out: &Path, convert: F) -> Result<Outcome>
where
    F: Fn(&Path) -> Result<Vec<ImportedSession>> + Sync,
{
    use rayon::prelude::*;
    fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create the output directory", out.display()))?;
    remove_leftovers(out);
    let mut outcome = Outcome::default();
    let (mut sessions, failures) = convert_files_multi(files, convert);
    outcome.failures = failures;
    let written: Vec<Result<serde_json::Value>> = sessions
        .par_iter_mut()
        .map(|s| {
            let r = write_session(out, s).map(|_| s.index_entry());
            s.messages = Vec::new();
            r
        })
        .collect();
    let mut errors = Vec::new();
    let mut entries = Vec::new();
    for (s, w) in sessions.iter().zip(written) {
        match w {
            Ok(entry) => {
                outcome.totals.add(&s.file.import);
                entries.push(entry);
            }
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    outcome.totals.files = files.len();
    outcome.totals.files_failed = outcome.failures.len();
    update_index(out, &entries)?;
    outcome.sessions = sessions;
    if !errors.is_empty() {
        bail!(
            "{} sessions could not be written: {}",
            errors.len(),
            errors.join("; ")
        );
    }
    Ok(outcome)
}

/// Converts every file with `convert` (in parallel) and makes the ids
/// unique across them, as an import does before it writes anything: the
/// sessions with a history, in file order, and the files that gave none,
/// each with why.
pub(crate) fn convert_files_multi<F>(
    files: &[PathBuf],
    convert: F,
) -> (Vec<ImportedSession>, Vec<String>)
where
    F: Fn(&Path) -> Result<Vec<ImportedSession>> + Sync,
{
    convert_files_with(files, convert, Ok)
}

/// Logs up to this many bytes in all are kept converted while they are
/// swept: their transcripts (about a third of the logs' size) then cost
/// less memory than the rest of a sweep holds. A larger folder's
/// transcripts are made again from the logs, one session at a time, so
/// that memory stays flat in the folder's size (`benches/logs.rs`).
pub(crate) const HELD_LOGS_BYTES: u64 = 192 << 20;

/// [`convert_files_multi`], each session's messages let go as soon as its
/// log is converted ([`ImportedSession::dropped`] says where to make them
/// again): a folder read in place then holds its sessions' metadata, not
/// its logs, and its transcripts only if `hold`.
pub(crate) fn convert_files_light<F>(
    files: &[PathBuf],
    convert: F,
    hold: bool,
) -> (Vec<ImportedSession>, Vec<String>)
where
    F: Fn(&Path) -> Result<Vec<ImportedSession>> + Sync,
{
    convert_files_with(files, convert, |mut all| {
        for (position, s) in all.iter_mut().enumerate() {
            let transcript = s.transcript_bytes();
            s.dropped = Some(Dropped {
                position,
                transcript_len: transcript.len() as u64,
                outline: std::sync::Arc::new(crate::transcript::outline::Outline::of(&s.messages)),
                held: hold.then(|| std::sync::Arc::new(transcript)),
            });
            s.messages = Vec::new();
        }
        Ok(all)
    })
}

/// Converts `files` in parallel, each file's sessions passed through
/// `keep` as soon as it is converted, then makes the ids unique and folds
/// the copies (see [`copies`]); a session without messages is left out.
fn convert_files_with<F, K>(
    files: &[PathBuf],
    convert: F,
    keep: K,
) -> (Vec<ImportedSession>, Vec<String>)
where
    F: Fn(&Path) -> Result<Vec<ImportedSession>> + Sync,
    K: Fn(Vec<ImportedSession>) -> Result<Vec<ImportedSession>> + Sync,
{
    use rayon::prelude::*;
    let converted: Vec<Result<Vec<ImportedSession>>> = files
        .par_iter()
        .map(|f| convert(f).and_then(&keep))
        .collect();
    let mut failures = Vec::new();
    let mut sessions = Vec::with_capacity(converted.len());
    for (file, result) in files.iter().zip(converted) {
        match result {
            Ok(all) => {
                for (k, s) in all.into_iter().enumerate() {
                    let empty = s
                        .dropped
                        .as_ref()
                        .map_or(s.messages.is_empty(), |d| d.transcript_len == 0);
                    if empty {
                        if k == 0 {
                            failures.push(format!(
                                "{}: skipped: no history in it (no message could be imported)",
                                file.display()
                            ));
                        }
                    } else {
                        sessions.push(s);
                    }
                }
            }
            Err(e) => failures.push(format!("{}: skipped: {e:#}", file.display())),
        }
    }
    dedupe_ids(&mut sessions);
    copies::fold(&mut sessions);
    (sessions, failures)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time, as the importers write times.
pub(crate) fn rfc3339(unix: i64) -> String {
    crate::time::format_rfc3339(unix)
}

/// The modification time of `path` as [`rfc3339`], the fallback timestamp
/// of a source that records none.
pub(crate) fn mtime(path: &Path) -> Option<String> {
    let t = fs::metadata(path).ok()?.modified().ok()?;
    let secs = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    Some(rfc3339(secs as i64))
}

/// Files under `root` (or `root` itself) that `wanted` accepts, sorted, each
/// directory visited once even through symbolic links, skipping `skip` (the
/// output directory) and reporting unreadable directories.
pub fn find_files(
    root: &Path,
    skip: &Path,
    wanted: &dyn Fn(&Path) -> bool,
) -> Result<Vec<PathBuf>> {
    let meta = fs::metadata(root).with_context(|| format!("{}: cannot read", root.display()))?;
    if meta.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let skip = absolute(skip);
    Ok(crate::transcript::locate::walk_files(
        root,
        Some(&skip),
        wanted,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Block;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_763_510_516), "2025-11-19T00:01:56Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn plain_id_keeps_only_safe_characters() {
        assert_eq!(plain_id("cc-ab/../x y"), "cc-ab-..-x-y");
        assert_eq!(plain_id("..hidden"), "hidden");
        assert_eq!(plain_id(""), "session");
    }

    #[test]
    fn pairing_problems_finds_missing_extra_and_orphan_results() {
        let call = |id: &str| {
            Message::new(
                Role::Assistant,
                vec![Block::tool_use(id, "bash", "{}")],
                false,
                None,
            )
        };
        let result = |id: &str| {
            Message::new(
                Role::Tool,
                vec![Block::tool_result(
                    Some(id.into()),
                    "ok".as_bytes().to_vec(),
                    false,
                )],
                false,
                None,
            )
        };
        assert!(pairing_problems(&[call("a"), result("a")]).is_empty());
        assert_eq!(pairing_problems(&[call("a")]).len(), 1);
        assert_eq!(
            pairing_problems(&[call("a"), result("a"), result("a")]).len(),
            1
        );
        assert_eq!(pairing_problems(&[result("a"), call("a")]).len(), 2);
    }
}
