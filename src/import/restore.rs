//! `transcript restore`: a new smith session built from a transcript, so a
//! history that compaction destroyed in `session.json` can be resumed again.
//!
//! The session is written the way smith writes its own: `session.json` with
//! smith's fields in smith's order (its `messages` are the restored history,
//! each written by the same writer as a transcript line), `transcript.jsonl`
//! beside it holding the same messages, and the attachments those messages
//! name copied into `media/`. The source session is only ever read.
//!
//! Registering in `$SMITH_HOME/sessions/index.json` happens under an
//! exclusive lock file (created with `create_new`, so two restores cannot both
//! hold it), and the index is read, checked, and rewritten atomically inside
//! it: a concurrent restore waits instead of overwriting the other's entry. A
//! malformed index is refused before anything is written, since it may be
//! smith's and rewriting it would lose what it holds.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};

use crate::transcript::locate::{first_prompt_label, SESSION_FILE, TRANSCRIPT_FILE};
use crate::transcript::{BlockType, Message, Role, Session};

use super::{plain_id, INDEX_FILE};

/// The lock file beside `index.json` that one restore holds while it
/// rewrites the index.
pub(crate) const LOCK_FILE: &str = "index.json.lock";

/// How long a restore waits for another one to release the index.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Where the restored session goes.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// This directory, which must not exist yet or be empty.
    Dir(PathBuf),
    /// A new session in this sessions directory (`$SMITH_HOME/sessions`),
    /// registered in its `index.json`.
    SmithHome(PathBuf),
}

/// What was restored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Restored {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    /// The session directory written.
    pub(crate) dir: PathBuf,
    pub(crate) messages: usize,
    /// Attachment files copied into `media/`, and those the source lacked.
    pub(crate) media_copied: usize,
    pub(crate) media_missing: usize,
}

/// Writes `history` as a new session restored from `session`. `what` says
/// what of it was restored (`whole`, `at-40`), for the name.
pub(crate) fn restore(
    session: &Session,
    history: &[Arc<Message>],
    what: &str,
    target: &Target,
) -> Result<Restored> {
    let now = unix_now();
    match target {
        Target::Dir(dir) => {
            if dir.exists() && !is_empty_dir(dir) {
                bail!(
                    "{}: exists and is not empty; a restore never writes into an existing session, choose a new directory",
                    dir.display()
                );
            }
            let id = dir
                .file_name()
                .map(|n| plain_id(&n.to_string_lossy()))
                .unwrap_or_else(|| new_id(now));
            let meta = session_json(session, &id, None, now);
            write_dir(dir, session, history, &meta)
                .map(|(copied, missing)| restored(&id, None, dir, history, copied, missing))
        }
        Target::SmithHome(sessions) => {
            fs::create_dir_all(sessions)
                .with_context(|| format!("{}: cannot create", sessions.display()))?;
            let lock = Lock::acquire(&sessions.join(LOCK_FILE), LOCK_WAIT)?;
            let index_path = sessions.join(INDEX_FILE);
            let (index, original) = read_index(&index_path)?;
            let mut id = new_id(now);
            while sessions.join(&id).exists() || index.iter().any(|e| e["id"] == id.as_str()) {
                id = new_id(now);
            }
            let name = unique_name(&base_name(session, what), &index);
            let dir = sessions.join(&id);
            let meta = session_json(session, &id, Some(&name), now);
            let (copied, missing) = write_dir(&dir, session, history, &meta)?;
            let entry = index_entry(&meta, history);
            let written = (|| -> Result<()> {
                // Compare before replacing: a writer that ignores the lock
                // (smith itself) may have saved meanwhile, and its entry
                // must not be lost.
                let (mut now_index, now_bytes) = read_index(&index_path)?;
                if now_bytes != original {
                    crate::note!(
                        "{}: changed while restoring; adding to the new contents",
                        index_path.display()
                    );
                }
                now_index.insert(0, entry);
                let mut bytes = serde_json::to_vec(&now_index)?;
                bytes.push(b'\n');
                crate::output::write_atomic(&index_path, &bytes)?;
                Ok(())
            })();
            drop(lock);
            if let Err(e) = written {
                let _ = fs::remove_dir_all(&dir);
                return Err(e.context(format!(
                    "{}: not registered, so the session was removed again",
                    dir.display()
                )));
            }
            Ok(restored(&id, Some(name), &dir, history, copied, missing))
        }
    }
}

fn restored(
    id: &str,
    name: Option<String>,
    dir: &Path,
    history: &[Arc<Message>],
    media_copied: usize,
    media_missing: usize,
) -> Restored {
    Restored {
        id: id.to_string(),
        name,
        dir: dir.to_path_buf(),
        messages: history.len(),
        media_copied,
        media_missing,
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// smith's id shape, `session-<unix seconds>-<6 hex digits>`; the digits
/// come from the clock's nanoseconds and the process id, so two processes
/// restoring in the same second still differ.
fn new_id(now: u64) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    let seed = format!("{nanos}-{}-{:?}", std::process::id(), Instant::now());
    let hash = seed.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!("session-{now}-{:06x}", hash & 0xff_ffff)
}

fn is_empty_dir(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

/// A name that says where the session came from: the source's name (or id)
/// and what was restored, e.g. `fix-the-tests-restored-at-40`.
fn base_name(session: &Session, what: &str) -> String {
    let source = session
        .meta
        .as_ref()
        .and_then(|m| m.name.clone().or_else(|| m.id.clone()))
        .unwrap_or_else(|| session.label());
    let what = if what == "whole" {
        String::new()
    } else {
        format!("-{what}")
    };
    plain_id(&format!("{source}-restored{what}"))
}

/// `base`, or `base-2`, `base-3`… when the index already has that name:
/// resuming by name must stay unambiguous.
fn unique_name(base: &str, index: &[Value]) -> String {
    let taken = |n: &str| index.iter().any(|e| e["name"].as_str() == Some(n));
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|i| format!("{base}-{i}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| base.to_string())
}

/// The index as a list of entries, and its bytes; missing is empty. Anything
/// but a JSON array is an error naming the file.
fn read_index(path: &Path) -> Result<(Vec<Value>, Vec<u8>)> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot read", path.display())),
    };
    let index: Vec<Value> = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: not a list of sessions ({e}); nothing was written. Repair or move it away, then restore again",
            path.display(),
            e.line()
        )
    })?;
    Ok((index, bytes))
}

/// An exclusive lock on the index, held while the file exists.
struct Lock {
    path: PathBuf,
}

impl Lock {
    fn acquire(path: &Path, wait: Duration) -> Result<Lock> {
        let started = Instant::now();
        loop {
            match OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(Lock {
                        path: path.to_path_buf(),
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    if started.elapsed() > wait {
                        bail!(
                            "{}: another restore has held the session index for {}s; if none is running, remove this file and try again",
                            path.display(),
                            wait.as_secs()
                        );
                    }
                    std::thread::sleep(Duration::from_millis(15));
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("{}: cannot create", path.display()))
                }
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// `session.json` in smith's field order: `id, created_at, updated_at, cwd,
/// model, provider, messages, usage, todos, name, parent_id, context_ratio`.
/// What the source's `session.json` says is kept (cwd, model, provider,
/// usage, todos, the measured ratio); the parent is the source. `messages`
/// holds a placeholder the writer replaces with the history's own bytes.
fn session_json(session: &Session, id: &str, name: Option<&str>, now: u64) -> Map<String, Value> {
    let raw = session
        .meta
        .as_ref()
        .and_then(|m| m.raw.as_ref())
        .and_then(|r| r.as_object());
    let get = |k: &str| raw.and_then(|r| r.get(k)).cloned();
    let text = |k: &str, fallback: &str| {
        get(k)
            .filter(Value::is_string)
            .unwrap_or_else(|| fallback.into())
    };
    let time = crate::time::format_rfc3339(now as i64);
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let mut m = Map::new();
    m.insert("id".into(), id.into());
    m.insert("created_at".into(), time.clone().into());
    m.insert("updated_at".into(), time.into());
    m.insert("cwd".into(), text("cwd", &cwd));
    m.insert("model".into(), text("model", "unknown"));
    m.insert("provider".into(), text("provider", "unknown"));
    m.insert("messages".into(), Value::Null);
    m.insert(
        "usage".into(),
        get("usage").filter(Value::is_object).unwrap_or_else(|| {
            json!({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                   "cache_creation_tokens": 0, "cache_read_tokens": 0})
        }),
    );
    m.insert(
        "todos".into(),
        get("todos").filter(Value::is_array).unwrap_or(json!([])),
    );
    if let Some(n) = name {
        m.insert("name".into(), n.into());
    }
    let parent = session
        .meta
        .as_ref()
        .and_then(|m| m.id.clone())
        .unwrap_or_else(|| session.label());
    m.insert("parent_id".into(), parent.into());
    m.insert(
        "context_ratio".into(),
        get("context_ratio")
            .filter(Value::is_number)
            .unwrap_or(json!(1.0)),
    );
    m
}

/// The bytes of `session.json`: `meta` with its `messages` written message
/// by message by the transcript writer, so they are the same bytes as the
/// transcript's lines.
fn session_bytes(meta: &Map<String, Value>, history: &[Arc<Message>]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(history.iter().map(|m| m.bytes() as usize).sum::<usize>() * 2);
    out.push(b'{');
    for (i, (k, v)) in meta.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(serde_json::to_string(k)?.as_bytes());
        out.push(b':');
        if k == "messages" {
            out.push(b'[');
            for (j, m) in history.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                m.write_json(&mut out);
            }
            out.push(b']');
        } else {
            crate::transcript::json::write_value(v, &mut out);
        }
    }
    out.extend_from_slice(b"}\n");
    Ok(out)
}

/// smith's index entry for the new session.
fn index_entry(meta: &Map<String, Value>, history: &[Arc<Message>]) -> Value {
    let mut e = Map::new();
    for k in ["id", "created_at", "updated_at"] {
        e.insert(k.into(), meta[k].clone());
    }
    e.insert("first_prompt".into(), first_prompt(history).into());
    e.insert("message_count".into(), history.len().into());
    for k in ["name", "parent_id", "provider", "model", "usage"] {
        if let Some(v) = meta.get(k) {
            e.insert(k.into(), v.clone());
        }
    }
    Value::Object(e)
}

/// smith's `first_prompt`: the first user message's first text block.
fn first_prompt(history: &[Arc<Message>]) -> String {
    let Some(user) = history.iter().find(|m| m.role == Role::User) else {
        return "(empty session)".into();
    };
    match user.content.iter().find(|b| b.kind == BlockType::Text) {
        Some(b) => first_prompt_label(&b.text_lossy()),
        None => "(empty prompt)".into(),
    }
}

/// Writes the session directory through a hidden temporary directory beside
/// it and one rename, so it appears whole or not at all. Returns the media
/// files copied and those the source did not have.
fn write_dir(
    dir: &Path,
    session: &Session,
    history: &[Arc<Message>],
    meta: &Map<String, Value>,
) -> Result<(usize, usize)> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).with_context(|| format!("{}: cannot create", parent.display()))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> Result<(usize, usize)> {
        fs::create_dir(&tmp).with_context(|| format!("{}: cannot create", tmp.display()))?;
        let mut transcript = Vec::with_capacity(1 << 16);
        for m in history {
            m.write_json(&mut transcript);
            transcript.push(b'\n');
        }
        crate::output::write_synced(&tmp.join(TRANSCRIPT_FILE), &transcript)?;
        crate::output::write_synced(&tmp.join(SESSION_FILE), &session_bytes(meta, history)?)?;
        let media = copy_media(session, history, &tmp)?;
        // The directory's entries durable before it is renamed into place.
        crate::output::sync_dir(&tmp)?;
        // Onto an empty directory (or none): never over a session.
        fs::rename(&tmp, dir).with_context(|| {
            format!(
                "{}: cannot write (it must not exist, or be empty)",
                dir.display()
            )
        })?;
        crate::output::sync_dir(&parent)?;
        Ok(media)
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}

/// Copies the attachments the history names (`media_ref`, a digest) from the
/// source session's `media/`, so smith can load their bytes on resume.
fn copy_media(session: &Session, history: &[Arc<Message>], dir: &Path) -> Result<(usize, usize)> {
    let source = session.source.dir().join("media");
    let mut refs: Vec<&str> = history
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| b.media_ref.as_deref())
        .filter(|r| !r.is_empty() && plain_id(r) == *r)
        .collect();
    refs.sort_unstable();
    refs.dedup();
    let (mut copied, mut missing) = (0, 0);
    for r in refs {
        let from = source.join(r);
        if !from.is_file() {
            missing += 1;
            continue;
        }
        let to = dir.join("media");
        fs::create_dir_all(&to).with_context(|| format!("{}: cannot create", to.display()))?;
        let bytes = fs::read(&from).with_context(|| format!("{}: cannot read", from.display()))?;
        crate::output::write_synced(&to.join(r), &bytes)?;
        copied += 1;
    }
    if copied > 0 {
        crate::output::sync_dir(&dir.join("media"))?;
    }
    Ok((copied, missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_a_counter_when_taken() {
        let index = vec![
            json!({"id": "a", "name": "x-restored"}),
            json!({"id": "b", "name": "x-restored-2"}),
        ];
        assert_eq!(unique_name("x-restored", &index), "x-restored-3");
        assert_eq!(unique_name("y", &index), "y");
    }

    #[test]
    fn ids_have_smiths_shape() {
        let id = new_id(1_700_000_000);
        assert!(id.starts_with("session-1700000000-"), "{id}");
        assert_eq!(id.len(), "session-1700000000-".len() + 6);
    }

    #[test]
    fn a_held_lock_times_out_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        let held = Lock::acquire(&path, Duration::from_secs(1)).unwrap();
        let err = Lock::acquire(&path, Duration::from_millis(50))
            .err()
            .unwrap();
        assert!(err.to_string().contains("index.json.lock"), "{err}");
        drop(held);
        assert!(!path.exists());
        assert!(Lock::acquire(&path, Duration::from_millis(50)).is_ok());
    }
}
