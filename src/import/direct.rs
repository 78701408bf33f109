//! Other agents' logs read where they are: a Claude Code projects folder or
//! log, Codex CLI rollouts, or mini-swe-agent trajectories, given to any
//! command that reads sessions, are converted in memory exactly as `import`
//! converts them (the same files found, the same converters and ids, see
//! [`super::logs`]), so that every result is the one the imported copy
//! would give. Nothing is written anywhere. A session's id given alone is
//! looked for where each agent keeps its logs ([`super::find`]).
//!
//! A converted session's name, `<log>#<id>`, given back as a path reads
//! that one session again.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use super::find;
use super::logs::{convert, format_of, Format};
use crate::transcript::locate::{self, SessionRef, CONVERTED_SEPARATOR, TRANSCRIPT_FILE};

/// Resolves one argument as [`locate::resolve`] does, and also takes other
/// agents' logs: a log file, a `<log>#<id>` name, or a directory holding
/// logs (beside or instead of smith sessions), converted in memory. The
/// copies of another session's conversation (`crate::import::copies`) are
/// left out of a folder: their own requests are their parent's. A copy
/// named on its own (its log, its `<log>#<id>`, its session directory) is
/// read as asked.
pub(crate) fn resolve(spec: &str) -> Result<Vec<SessionRef>> {
    let mut found = resolve_listing(spec)?;
    let path = Path::new(spec);
    if path.is_dir() && !path.join(TRANSCRIPT_FILE).is_file() {
        found.retain(|r| !is_copy(r));
    }
    Ok(found)
}

/// Whether a session is a copy of another's conversation, as its
/// `session.json` says.
pub(crate) fn is_copy(session: &SessionRef) -> bool {
    locate::read_meta(session)
        .ok()
        .flatten()
        .and_then(|m| m.raw)
        .is_some_and(|raw| raw.get("copy_of").is_some_and(|c| !c.is_null()))
}

/// [`resolve`], the copies included: what `transcript list` lists.
pub(crate) fn resolve_listing(spec: &str) -> Result<Vec<SessionRef>> {
    let path = Path::new(spec);
    if !path.exists() {
        if let Some(found) = reload(path)? {
            return Ok(vec![found]);
        }
        // An id has no path separator: this was meant as a path.
        if spec.contains(std::path::MAIN_SEPARATOR) || spec.contains('/') || spec.starts_with('.') {
            bail!("{spec}: no such file or directory");
        }
        return find::find(spec, &find::default_places()).map(|s| vec![s]);
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
        super::claude_code::is_session_log(p) || format_of(p).is_some()
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

/// Resolves several arguments as [`resolve_listing`] does, keeping each
/// session once, in order: `calibrate` checks each copy's own requests
/// against its log as a session of its own.
pub(crate) fn resolve_all_listing<S: AsRef<str>>(specs: &[S]) -> Result<Vec<SessionRef>> {
    locate::resolve_each(specs, resolve_listing)
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
