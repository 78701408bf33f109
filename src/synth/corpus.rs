//! Writing generated sessions to disk in smith's layout:
//! `DIR/<id>/transcript.jsonl`, `DIR/<id>/session.json`, `DIR/index.json`.
//!
//! Sessions are streamed: each message goes to disk as it is generated, so
//! a corpus of any size costs the memory of one round. Every file is written
//! under a temporary name in its directory and renamed into place
//! ([`crate::output`]).

use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::meta::{self, Meta};
use super::rng::{mix64, Rng};
use super::session::{SessionGen, SessionSpec, Shape};
use crate::output::{write_atomic, write_atomic_with};
use crate::transcript::locate::{derive_name, first_prompt_label, SESSION_FILE, TRANSCRIPT_FILE};

/// Marks a directory as the generator's output, so it may be overwritten by
/// the next run without `--force`; it lists what that run wrote.
pub(crate) const MARKER_FILE: &str = ".smith-calibrate-synth.json";

/// How big the sessions of a corpus are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeSpec {
    /// Each shape's own range ([`Shape::default_bytes`]).
    ShapeDefault,
    /// About this many transcript bytes each.
    Fixed(u64),
    /// Spread log-uniformly between these many bytes.
    Range(u64, u64),
}

/// A corpus: how many sessions, of which shapes and sizes, from which seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorpusSpec {
    pub seed: u64,
    pub sessions: usize,
    /// `None` mixes the shapes (long 40%, short 40%, one-turn 20%).
    pub shape: Option<Shape>,
    pub size: SizeSpec,
}

/// One session of a corpus, planned but not yet generated.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub(crate) id: String,
    pub(crate) seed: u64,
    pub(crate) spec: SessionSpec,
    pub(crate) created_unix: u64,
}

/// Corpora start on a day in 2025, chosen by the seed.
const EPOCH_2025: u64 = 1_735_689_600;
/// Sessions of a corpus start this far apart (plus less than this again).
const SESSION_SPACING_SECS: u64 = 6 * 3600;
/// How often each shape is drawn under `--shape mixed`: long, short, one-turn.
const MIX_WEIGHTS: [u32; 3] = [40, 40, 20];
/// Salts that keep a session's planning draws (shape, size, time, id) and
/// its timing draws apart from the stream that generates its messages.
const PLAN_SALT: u64 = 0xc0_4905;
const TIMING_SALT: u64 = 0x7157;

impl CorpusSpec {
    /// The `index`-th session: independent of every other, so any one can
    /// be regenerated alone.
    pub fn session(&self, index: usize) -> Planned {
        let seed = mix64(self.seed ^ mix64(index as u64 + 1));
        let mut rng = Rng::new(seed ^ PLAN_SALT);
        let shape = self.shape.unwrap_or_else(|| {
            [Shape::Long, Shape::Short, Shape::OneTurn][rng.weighted(&MIX_WEIGHTS)]
        });
        let target_bytes = match self.size {
            SizeSpec::ShapeDefault => {
                let (lo, hi) = shape.default_bytes();
                rng.log_uniform(lo, hi)
            }
            SizeSpec::Fixed(b) => b,
            SizeSpec::Range(lo, hi) => rng.log_uniform(lo, hi),
        };
        let start = EPOCH_2025 + Rng::new(self.seed).below(300 * 86_400);
        let created_unix =
            start + index as u64 * SESSION_SPACING_SECS + rng.below(SESSION_SPACING_SECS - 600);
        Planned {
            id: format!("session-{created_unix}-{}", rng.hex(6)),
            seed,
            spec: SessionSpec {
                shape,
                target_bytes,
            },
            created_unix,
        }
    }
}

/// What was written for one session.
#[derive(Clone, Debug)]
pub struct SessionStats {
    pub(crate) meta: Meta,
    pub(crate) shape: Shape,
    /// Bytes of `transcript.jsonl`.
    pub bytes: u64,
    pub(crate) turns: u32,
}

/// What was written for a corpus.
#[derive(Clone, Debug, Default)]
pub(crate) struct CorpusStats {
    pub(crate) sessions: Vec<SessionStats>,
    pub(crate) bytes: u64,
    pub(crate) messages: u64,
}

/// A transcript streamed out by [`write_transcript`].
pub(crate) struct Written {
    /// The generator, spent: what it learned along the way (profile, first
    /// prompt, turns, usage).
    pub(crate) generator: SessionGen,
    /// Bytes written, newlines included.
    pub(crate) bytes: u64,
    pub(crate) messages: u64,
}

/// Streams one session's transcript to `out` as smith-format JSONL.
pub(crate) fn write_transcript<W: Write + ?Sized>(
    seed: u64,
    spec: SessionSpec,
    out: &mut W,
) -> io::Result<Written> {
    let mut generator = SessionGen::new(seed, spec);
    let (mut bytes, mut messages) = (0u64, 0u64);
    while generator.next().is_some() {
        let line = generator.last_json();
        out.write_all(line)?;
        out.write_all(b"\n")?;
        bytes += line.len() as u64 + 1;
        messages += 1;
    }
    Ok(Written {
        generator,
        bytes,
        messages,
    })
}

/// Writes one planned session into `dir/<id>/`.
pub fn write_session(dir: &Path, planned: &Planned) -> Result<SessionStats> {
    write_named_session(dir, planned, &mut HashSet::new())
}

/// [`write_session`], with a name none of `taken` has (smith keeps session
/// names unique: a clash gets the next free numeric suffix).
fn write_named_session(
    dir: &Path,
    planned: &Planned,
    taken: &mut HashSet<String>,
) -> Result<SessionStats> {
    let session_dir = dir.join(&planned.id);
    fs::create_dir_all(&session_dir)
        .with_context(|| format!("{}: cannot create", session_dir.display()))?;
    let mut written = None;
    write_atomic_with(&session_dir.join(TRANSCRIPT_FILE), |out| {
        written = Some(write_transcript(planned.seed, planned.spec, out)?);
        Ok::<(), std::io::Error>(())
    })?;
    let Some(Written {
        generator,
        bytes,
        messages,
    }) = written
    else {
        bail!("{}: the transcript was not written", session_dir.display());
    };

    // A request every half minute or so: the session lasted as long as its
    // messages took.
    let mut rng = Rng::new(planned.seed ^ TIMING_SALT);
    let duration = messages * rng.range(8, 40) + rng.below(600);
    let prompt = generator.first_prompt().unwrap_or("");
    let name = derive_name(&first_prompt_label(prompt)).map(|name| {
        let mut unique = name.clone();
        let mut n = 2;
        while !taken.insert(unique.clone()) {
            unique = format!("{name}-{n}");
            n += 1;
        }
        unique
    });
    let meta = Meta {
        id: planned.id.clone(),
        created_unix: planned.created_unix,
        updated_unix: planned.created_unix + duration,
        name,
        first_prompt: first_prompt_label(prompt),
        message_count: messages,
    };
    // The usage smith would have recorded: the engine's own requests over
    // the transcript just written, at the provider's known ratio.
    let record = crate::transcript::reader::read_transcript(&session_dir.join(TRANSCRIPT_FILE))
        .with_context(|| format!("{}: cannot read it back", session_dir.display()))?;
    let usage = super::usage::replayed(&record.messages, generator.profile());
    let json = meta::session_json(&meta, generator.profile(), usage);
    write_atomic(&session_dir.join(SESSION_FILE), &serde_json::to_vec(&json)?)?;
    Ok(SessionStats {
        meta,
        shape: planned.spec.shape,
        bytes,
        turns: generator.turns(),
    })
}

/// Writes a whole corpus into `out`, calling `each` after every session.
///
/// Refuses a non-empty `out` that an earlier run did not write, unless
/// `force`; sessions an earlier run wrote and this one does not are removed,
/// and entries of `index.json` that are not the generator's are kept.
pub(crate) fn write_corpus(
    out: &Path,
    spec: &CorpusSpec,
    force: bool,
    mut each: impl FnMut(&SessionStats),
) -> Result<CorpusStats> {
    let previous = prepare_dir(out, force)?;
    let planned: Vec<Planned> = (0..spec.sessions).map(|i| spec.session(i)).collect();
    let ours: HashSet<&str> = planned.iter().map(|p| p.id.as_str()).collect();

    // Sessions of the previous run that this one does not write again.
    for old in previous.iter().filter(|id| !ours.contains(id.as_str())) {
        remove_session(out, old);
    }

    let mut stats = CorpusStats::default();
    let mut names: HashSet<String> = HashSet::new();
    for p in &planned {
        let s = write_named_session(out, p, &mut names)?;
        stats.bytes += s.bytes;
        stats.messages += s.meta.message_count;
        each(&s);
        stats.sessions.push(s);
    }

    let mut index = foreign_index_entries(out, &previous, &ours);
    index.extend(stats.sessions.iter().map(|s| meta::index_entry(&s.meta)));
    write_atomic(
        &out.join("index.json"),
        &serde_json::to_vec_pretty(&Value::Array(index))?,
    )?;

    let marker = json!({
        "generator": "smith-calibrate synth",
        "seed": spec.seed,
        "sessions": spec.sessions,
        "shape": spec.shape.map_or("mixed", Shape::as_str),
        "ids": planned.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
    });
    write_atomic(&out.join(MARKER_FILE), &serde_json::to_vec_pretty(&marker)?)?;
    Ok(stats)
}

/// Makes sure `out` may be written; returns the ids an earlier run wrote.
fn prepare_dir(out: &Path, force: bool) -> Result<Vec<String>> {
    if !out.exists() {
        fs::create_dir_all(out).with_context(|| format!("{}: cannot create", out.display()))?;
        return Ok(Vec::new());
    }
    if !out.is_dir() {
        bail!(
            "{}: not a directory; give a directory to write sessions into",
            out.display()
        );
    }
    let marker = out.join(MARKER_FILE);
    if marker.is_file() {
        let value: Value = fs::read(&marker)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        let ids = value["ids"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        return Ok(ids);
    }
    let empty = fs::read_dir(out)
        .with_context(|| format!("{}: cannot read", out.display()))?
        .next()
        .is_none();
    if !empty && !force {
        bail!(
            "{}: not empty and not written by `smith-calibrate synth`; choose a new or empty directory, or pass --force to add the sessions to it",
            out.display()
        );
    }
    Ok(Vec::new())
}

/// Removes a session an earlier run wrote: only its two files, and the
/// directory if nothing else is in it.
fn remove_session(out: &Path, id: &str) {
    // Ids come from the marker file: never follow one out of `out`.
    if id.contains('/') || id.contains('\\') || id.starts_with('.') {
        return;
    }
    let dir = out.join(id);
    let _ = fs::remove_file(dir.join(TRANSCRIPT_FILE));
    let _ = fs::remove_file(dir.join(SESSION_FILE));
    let _ = fs::remove_dir(&dir);
}

/// Entries of an existing `index.json` that belong to neither this run nor
/// the previous one: sessions someone else put there survive.
fn foreign_index_entries(out: &Path, previous: &[String], ours: &HashSet<&str>) -> Vec<Value> {
    let Ok(bytes) = fs::read(out.join("index.json")) else {
        return Vec::new();
    };
    let Ok(Value::Array(entries)) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter(|e| {
            let id = e["id"].as_str().unwrap_or("");
            !ours.contains(id) && !previous.iter().any(|p| p == id)
        })
        .collect()
}
