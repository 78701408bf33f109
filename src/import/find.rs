//! A session by the id `transcript list` prints: a smith session id or
//! name, a Claude Code `cc-…` id, a Codex `codex-…` id, whole or in a short
//! form a table or an index shows (a prefix, or an id with `…` where a part
//! was left out). With only the id, it is looked for where each agent keeps
//! its logs by default; with a folder, in that folder. The error names every
//! place looked in.
//!
//! Looking is done in two rounds so that a typed id costs little where
//! logs are many: first the smith index and the logs whose path holds the
//! id's core (a Claude Code log is `<uuid>.jsonl`, its subagents under
//! `<uuid>/subagents/`; a Codex rollout's name ends in the session's id);
//! only if that finds nothing is every log of the place converted, as
//! `transcript list` would, and its ids compared.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::logs::{self, Format, NotImported};
use crate::transcript::locate::{self, Indexes, SessionRef, CONVERTED_SEPARATOR, TRANSCRIPT_FILE};

/// A folder looked in, and what it is to the person reading the error.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) dir: PathBuf,
    /// Whose folder it is and how it was found, e.g. `Claude Code's
    /// projects folder, $CLAUDE_CONFIG_DIR/projects`.
    pub(crate) what: String,
    /// Which agent's ids are worth converting every log of the place
    /// for; `None`: any (a folder the user named).
    only: Option<Format>,
}

/// `$CLAUDE_CONFIG_DIR/projects`, where Claude Code writes its logs
/// (`~/.claude/projects` when the variable is not set).
pub(crate) fn claude_projects_dir() -> PathBuf {
    locate::env_dir("CLAUDE_CONFIG_DIR", ".claude").join("projects")
}

/// `$CODEX_HOME/sessions`, where the Codex CLI writes its rollouts
/// (`~/.codex/sessions` when the variable is not set).
pub(crate) fn codex_sessions_dir() -> PathBuf {
    locate::env_dir("CODEX_HOME", ".codex").join("sessions")
}

/// Where an id given alone is looked for: smith's sessions, then Claude
/// Code's and Codex's folders.
pub(crate) fn default_places() -> Vec<Place> {
    vec![
        Place {
            dir: locate::sessions_dir(),
            what: "smith's sessions, $SMITH_HOME/sessions".into(),
            only: None,
        },
        Place {
            dir: claude_projects_dir(),
            what: "Claude Code's projects folder, $CLAUDE_CONFIG_DIR/projects".into(),
            only: Some(Format::ClaudeCode),
        },
        Place {
            dir: codex_sessions_dir(),
            what: "Codex's sessions folder, $CODEX_HOME/sessions".into(),
            only: Some(Format::Codex),
        },
    ]
}

/// The session `typed` names in the folder (or the one log) `dir`, which
/// is read in any format `transcript list` reads.
pub(crate) fn in_folder(dir: &Path, typed: &str) -> Result<SessionRef> {
    if !dir.exists() {
        bail!("{}: no such file or directory", dir.display());
    }
    let place = Place {
        dir: dir.to_path_buf(),
        what: "the folder given".into(),
        only: None,
    };
    find(typed, &[place])
}

/// The prefix of the ids a format's sessions get.
fn id_prefix(format: Format) -> &'static str {
    match format {
        Format::ClaudeCode => "cc-",
        Format::Codex => "codex-",
        Format::MiniSweAgent => "",
    }
}

/// One session a place holds, as `transcript list` names it.
#[derive(Clone)]
struct Candidate {
    id: String,
    name: Option<String>,
    source: SessionRef,
    /// A converted log's: the block types nothing could use, said if it
    /// is the one chosen.
    not_imported: NotImported,
}

impl Candidate {
    /// The session, chosen: what of its log nothing could use is said
    /// now, as it is of a log given by its path.
    fn chosen(self) -> SessionRef {
        logs::not_imported_note(&self.source, &self.not_imported);
        self.source
    }
}

/// What was typed, and the ways it can name a session.
struct Wanted<'a> {
    text: &'a str,
    /// The parts between the ellipses (`…` or `...`): a short form
    /// matches an id that starts with the first, ends with the last and
    /// holds the others in order. Without an ellipsis, one part: a prefix.
    parts: Vec<&'a str>,
    elided: bool,
}

impl<'a> Wanted<'a> {
    fn new(text: &'a str) -> Self {
        let parts: Vec<&str> = text.split(['…']).flat_map(|p| p.split("...")).collect();
        Wanted {
            text,
            elided: parts.len() > 1,
            parts,
        }
    }

    /// Whether `id` is what was typed in a short form: a prefix of it, or
    /// its parts around what an ellipsis left out.
    fn abbreviates(&self, id: &str) -> bool {
        if !self.elided {
            return id.starts_with(self.text);
        }
        let (first, rest) = self.parts.split_first().expect("split gives one part");
        let (last, middle) = rest.split_last().expect("an ellipsis gives two");
        let Some(mut left) = id.strip_prefix(first) else {
            return false;
        };
        for part in middle {
            match left.find(part) {
                Some(i) => left = &left[i + part.len()..],
                None => return false,
            }
        }
        left.ends_with(last)
    }

    /// The part of the id a log's path holds: without the agent's prefix,
    /// up to the first ellipsis and before a subagent's `-agent-` (its
    /// file is under its parent's folder); `None` when too short to tell
    /// logs apart by.
    fn core(&self) -> Option<&'a str> {
        let first = self.parts[0];
        let bare = ["cc-", "codex-"]
            .iter()
            .find_map(|p| first.strip_prefix(p))
            .unwrap_or(first);
        let core = bare.split("-agent-").next().unwrap_or(bare);
        (core.chars().count() >= 6).then_some(core)
    }
}

/// How the sessions a search found name what was typed.
enum Found {
    One(Candidate),
    Many(Vec<(String, PathBuf)>),
    None,
}

/// Picks from `candidates` what `wanted` names: an id, else a name, else a
/// short form; several sessions are an ambiguity, never a guess.
fn pick(candidates: Vec<Candidate>, wanted: &Wanted, short_forms: bool) -> Found {
    let tiers: [&dyn Fn(&Candidate) -> bool; 3] = [
        &|c| c.id == wanted.text,
        &|c| c.name.as_deref() == Some(wanted.text),
        &|c| short_forms && wanted.abbreviates(&c.id),
    ];
    for matches in tiers {
        let mut hits: BTreeMap<PathBuf, &Candidate> = BTreeMap::new();
        for c in candidates.iter().filter(|c| matches(c)) {
            hits.entry(c.source.transcript.clone()).or_insert(c);
        }
        match hits.len() {
            0 => continue,
            1 => {
                let c = hits.into_values().next().expect("one");
                return Found::One(c.clone());
            }
            _ => {
                let mut many: Vec<(String, PathBuf)> = hits
                    .into_values()
                    .map(|c| (c.id.clone(), c.source.files().swap_remove(0)))
                    .collect();
                many.sort();
                return Found::Many(many);
            }
        }
    }
    Found::None
}

/// The smith sessions below `dir` (or `dir` itself), named as `transcript
/// list` names them: by the id of their index entry, else their
/// directory's name (smith names a session's directory by its id).
fn smith_sessions(dir: &Path) -> Vec<Candidate> {
    let transcripts = if dir.join(TRANSCRIPT_FILE).is_file() {
        vec![dir.join(TRANSCRIPT_FILE)]
    } else if dir.is_dir() {
        locate::walk_files(dir, None, &|p| {
            p.file_name().is_some_and(|n| n == TRANSCRIPT_FILE)
        })
    } else {
        Vec::new()
    };
    let mut indexes = Indexes::default();
    transcripts
        .into_iter()
        .map(|t| {
            let source = SessionRef::file(t);
            let entry = indexes.entry(source.dir());
            Candidate {
                id: locate::listed_id(None, entry.as_ref(), &source),
                name: locate::listed_name(None, entry.as_ref()),
                source,
                not_imported: NotImported::new(),
            }
        })
        .collect()
}

/// The other agents' logs in a place (the place itself when it is one
/// log), by format.
fn logs_in(dir: &Path) -> Vec<(Format, PathBuf)> {
    let files = if dir.is_file() {
        vec![dir.to_path_buf()]
    } else {
        locate::walk_files(dir, None, &|p| {
            super::claude_code::is_session_log(p) || logs::format_of(p).is_some()
        })
    };
    files
        .into_iter()
        .filter_map(|p| logs::format_of(&p).map(|f| (f, p)))
        .collect()
}

/// The sessions `found` (logs) hold, converted as `transcript list`
/// converts them, with their ids; logs that give none are passed over
/// quietly (a search is no listing).
fn converted(found: &[(Format, PathBuf)]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for format in Format::ALL {
        let files: Vec<PathBuf> = found
            .iter()
            .filter(|(f, _)| *f == format)
            .map(|(_, p)| p.clone())
            .collect();
        if files.is_empty() {
            continue;
        }
        let Ok(sessions) = logs::convert_quietly(format, &files) else {
            continue;
        };
        out.extend(sessions.into_iter().map(|(source, not_imported)| {
            let id = source
                .transcript
                .to_string_lossy()
                .rsplit_once(CONVERTED_SEPARATOR)
                .map(|(_, id)| id.to_string())
                .unwrap_or_else(|| source.label());
            Candidate {
                id,
                name: None,
                source,
                not_imported,
            }
        }));
    }
    out
}

/// The error for an id found nowhere: every place looked in, and which
/// of them do not exist.
fn not_found(typed: &str, places: &[Place]) -> anyhow::Error {
    let mut text = format!("no session {typed:?}; looked in:");
    for p in places {
        let missing = if p.dir.exists() {
            ""
        } else {
            ": does not exist"
        };
        text.push_str(&format!("\n  {} ({}){missing}", p.dir.display(), p.what));
    }
    text.push_str(
        "\n`transcript list FOLDER` prints the ids of a folder's sessions; \
         `transcript show FOLDER ID` looks in FOLDER",
    );
    anyhow::anyhow!(text)
}

/// The error for a short form that names several sessions.
fn ambiguous(typed: &str, found: &[(String, PathBuf)]) -> anyhow::Error {
    let mut text = format!(
        "{typed:?} names {} sessions; give one of their ids:",
        found.len()
    );
    for (id, path) in found {
        text.push_str(&format!("\n  {id}  {}", path.display()));
    }
    anyhow::anyhow!(text)
}

/// The session `typed` names in `places`, or an error that says where it
/// was looked for (or which sessions it could be).
pub(crate) fn find(typed: &str, places: &[Place]) -> Result<SessionRef> {
    let wanted = Wanted::new(typed.trim());
    if wanted.text.is_empty() {
        bail!("an empty session id");
    }
    let present: Vec<&Place> = places.iter().filter(|p| p.dir.exists()).collect();
    // smith's own index says what a name or an id is, as smith resolves
    // it (an entry whose directory is gone is an error of its own).
    for place in &present {
        let index = locate::read_index(&place.dir).unwrap_or_default();
        let listed = index
            .iter()
            .any(|e| e.id == wanted.text || e.name.as_deref() == Some(wanted.text));
        if listed || place.dir.join(wanted.text).join(TRANSCRIPT_FILE).is_file() {
            let found = locate::resolve_reference(wanted.text, &place.dir)?;
            if let Some(one) = found.into_iter().next() {
                return Ok(one);
            }
        }
    }
    let mut candidates = Vec::new();
    let mut all_logs = Vec::with_capacity(present.len());
    for place in &present {
        candidates.extend(smith_sessions(&place.dir));
        let found = logs_in(&place.dir);
        if let Some(core) = wanted.core() {
            let near: Vec<(Format, PathBuf)> = found
                .iter()
                .filter(|(_, p)| {
                    p.strip_prefix(&place.dir)
                        .unwrap_or(p)
                        .to_string_lossy()
                        .contains(core)
                })
                .cloned()
                .collect();
            candidates.extend(converted(&near));
        }
        all_logs.push((*place, found));
    }
    match pick(candidates, &wanted, true) {
        Found::One(c) => return Ok(c.chosen()),
        Found::Many(m) => return Err(ambiguous(wanted.text, &m)),
        Found::None => {}
    }
    // Every log of each place whose agent's ids this could be.
    let mut candidates = Vec::new();
    for (place, found) in &all_logs {
        let worth: Vec<(Format, PathBuf)> = found
            .iter()
            .filter(|(f, _)| match place.only {
                None => true,
                Some(only) => *f == only && wanted.text.starts_with(id_prefix(only)),
            })
            .cloned()
            .collect();
        candidates.extend(converted(&worth));
    }
    match pick(candidates, &wanted, true) {
        Found::One(c) => Ok(c.chosen()),
        Found::Many(m) => Err(ambiguous(wanted.text, &m)),
        Found::None => Err(not_found(wanted.text, places)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms_are_prefixes_or_ids_with_a_part_left_out() {
        let id = "cc-4d5611e5-241a-462a-8d15-5122611a9569-agent-a2898e3";
        for short in [
            "cc-4d5611e5",
            "cc-4d5611e5…-agent-a2898e3",
            "cc-4d5611e5-24…a2898e3",
            "cc-4d5611e5...a2898e3",
            "cc-4d…8d15…a2898e3",
            "cc-4d5611e5…",
        ] {
            assert!(Wanted::new(short).abbreviates(id), "{short}");
        }
        for other in [
            "cc-4d5611e6",
            "cc-4d5611e5…agent-x",
            "4d5611e5",
            "cc-4d…a289…8d15",
        ] {
            assert!(!Wanted::new(other).abbreviates(id), "{other}");
        }
    }

    #[test]
    fn the_core_is_what_a_log_path_holds() {
        let core = |t: &str| Wanted::new(t).core().map(str::to_string);
        assert_eq!(
            core("cc-4d5611e5-241a-462a-8d15-5122611a9569-agent-a2898e3").as_deref(),
            Some("4d5611e5-241a-462a-8d15-5122611a9569")
        );
        assert_eq!(core("codex-019cdf2f…d180").as_deref(), Some("019cdf2f"));
        assert_eq!(core("cc-ab"), None);
    }
}
