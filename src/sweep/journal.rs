//! `sweep --resume`: the rows of every finished session, kept on disk as the
//! sweep goes, so a sweep killed at any point (even by SIGKILL or a power
//! cut) continues where it stopped instead of starting over.
//!
//! The journal lives in `OUT/.resume/all/` (or `OUT/.resume/shard=K/`): a
//! `manifest.json` saying which sweep it belongs to, and `journal`, an
//! append-only file of one record per finished session. A record is
//! `length (u32 LE) | FNV-1a 64 of the payload (u64 LE) | payload`, the
//! payload being JSON: the session's index in the sweep, its transcript and
//! its facts under every config, every field of them (the misfires with
//! where each happened, which `--thrash-window` counts from afterwards,
//! included), in whole numbers or as the bits of a float, so JSON keeps
//! them exactly. Each record is handed to the kernel in one write as soon as
//! its session is done, which is enough to survive the process being
//! killed; the file is also synced to disk at most every
//! [`SYNC_EVERY`] and at the end, which bounds what a machine crash loses.
//! On resume, reading stops at the first record that is short or whose
//! checksum fails (the one a crash interrupted); the file is cut back there
//! and those sessions are replayed again, so a partial row can never reach
//! the outputs, which are only written, whole, when every session is done.
//!
//! The manifest holds a fingerprint of the inputs (each transcript's and
//! `session.json`'s path, size and modification time), of the configs (every
//! policy and knob value), of the prices and of the shard. A sweep whose
//! fingerprint differs refuses to resume and says what changed.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::policy::Setup;
use crate::replay::SessionFacts;
use crate::transcript::SessionRef;

use super::run::{Done, SessionInfo};
use super::shard::{fnv1a64, Shard};
use crate::cost::Prices;

/// The folder under `--out` that holds the journals.
pub const DIR: &str = ".resume";
/// The manifest's file name.
pub(crate) const MANIFEST: &str = "manifest.json";
/// The journal's file name.
pub const JOURNAL: &str = "journal";
/// How often the journal is synced to disk at most.
pub(crate) const SYNC_EVERY: Duration = Duration::from_secs(1);
/// Bytes before a record's payload: its length and its checksum.
const HEADER: usize = 12;
/// Format of the records; a journal of another format is refused. Format 1
/// did not keep where each misfire happened.
const FORMAT: u32 = 2;

/// The journal folder of a sweep into `out`, for all sessions or one shard.
pub fn dir_for(out: &Path, shard: Option<Shard>) -> PathBuf {
    out.join(DIR).join(match shard {
        Some(s) => format!("shard={}", s.index),
        None => "all".to_string(),
    })
}

/// What identifies a sweep: the sessions read, the configs, the prices and
/// the shard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub(crate) tool: String,
    pub(crate) format: u32,
    /// `K/N`, or null for an unsharded sweep.
    pub(crate) shard: Option<String>,
    /// Each input file as path, size in bytes and modification time in
    /// nanoseconds since 1970, in sweep order.
    pub(crate) inputs: Vec<(String, u64, u64)>,
    /// FNV-1a 64 of every config's policy and knob values, in hex.
    pub(crate) configs: String,
    pub(crate) config_count: usize,
    /// `input,cache_write,cache_read`.
    pub(crate) prices: String,
    /// The cost model's settings (`Settings::describe`); empty in journals
    /// written before the sweep had them.
    #[serde(default)]
    pub(crate) cost: String,
}

impl Manifest {
    /// The manifest of a sweep of `refs` under `configs`.
    pub fn new(
        refs: &[SessionRef],
        configs: &[Setup],
        prices: &Prices,
        shard: Option<Shard>,
    ) -> Manifest {
        let mut inputs = Vec::new();
        for r in refs {
            for path in r.files() {
                if let Ok(meta) = fs::metadata(&path) {
                    let mtime = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
                    inputs.push((path.display().to_string(), meta.len(), mtime));
                }
            }
        }
        // Debug shows every field of every setup, floats exactly.
        let configs_text = format!("{configs:?}");
        Manifest {
            tool: concat!("smith-calibrate ", env!("CARGO_PKG_VERSION")).to_string(),
            format: FORMAT,
            shard: shard.map(|s| s.to_string()),
            inputs,
            configs: format!("{:016x}", fnv1a64(configs_text.as_bytes())),
            config_count: configs.len(),
            prices: format!(
                "{},{},{}",
                prices.input, prices.cache_write, prices.cache_read
            ),
            cost: String::new(),
        }
    }

    /// Why a sweep described by `self` cannot continue the journal of
    /// `old`, or `None` when it can.
    pub(crate) fn differences(&self, old: &Manifest) -> Option<String> {
        let mut why = Vec::new();
        if self.tool != old.tool || self.format != old.format {
            why.push(format!(
                "it was written by {} (format {}), this is {}",
                old.tool, old.format, self.tool
            ));
        }
        if self.shard != old.shard {
            why.push(format!(
                "the shard was {}, now {}",
                old.shard.as_deref().unwrap_or("none"),
                self.shard.as_deref().unwrap_or("none")
            ));
        }
        if self.configs != old.configs || self.config_count != old.config_count {
            why.push(format!(
                "the grid or the policies changed ({} configs then, {} now)",
                old.config_count, self.config_count
            ));
        }
        if self.prices != old.prices {
            why.push(format!("--price was {}, now {}", old.prices, self.prices));
        }
        if self.cost != old.cost {
            why.push(format!(
                "the cost model was {:?}, now {:?}",
                old.cost, self.cost
            ));
        }
        if self.inputs != old.inputs {
            let then: std::collections::HashMap<&str, (u64, u64)> = old
                .inputs
                .iter()
                .map(|(p, s, m)| (p.as_str(), (*s, *m)))
                .collect();
            let now: std::collections::HashSet<&str> =
                self.inputs.iter().map(|(p, _, _)| p.as_str()).collect();
            let mut changes = Vec::new();
            for (p, s, m) in &self.inputs {
                match then.get(p.as_str()) {
                    None => changes.push(format!("{p} is new")),
                    Some(&(s0, m0)) if (s0, m0) != (*s, *m) => {
                        changes.push(format!("{p} changed ({s0} bytes then, {s} now)"))
                    }
                    _ => {}
                }
            }
            for (p, _, _) in &old.inputs {
                if !now.contains(p.as_str()) {
                    changes.push(format!("{p} is gone"));
                }
            }
            if changes.is_empty() {
                changes.push("the sessions are listed in another order".into());
            }
            let n = changes.len();
            changes.truncate(3);
            why.push(format!(
                "the sessions changed: {}{}",
                changes.join("; "),
                if n > 3 {
                    format!(" and {} more", n - 3)
                } else {
                    String::new()
                }
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// One record's payload.
#[derive(Serialize, Deserialize)]
struct Record {
    /// Index of the session in the sweep.
    i: usize,
    info: SessionInfo,
    facts: Vec<SessionFacts>,
}

/// An open journal, appended to by the sweep's workers.
pub struct Journal {
    dir: PathBuf,
    file: Mutex<(File, Instant)>,
}

/// What opening a journal found.
pub struct Opened {
    pub(crate) journal: Journal,
    /// The sessions already done, indexed as the sweep's sessions.
    pub(crate) done: Vec<Option<Done>>,
    /// Sessions whose rows were recovered.
    pub(crate) recovered: usize,
    /// Bytes at the end that were not a whole record (a write cut short)
    /// and were dropped.
    pub(crate) dropped_bytes: u64,
    /// Whether there was a journal to continue.
    pub(crate) continued: bool,
}

impl Journal {
    /// Opens the journal in `dir` for the sweep `manifest` describes, over
    /// `refs`: continues one whose manifest matches, refuses one that does
    /// not, and starts one where there is none.
    pub fn open(
        dir: &Path,
        manifest: &Manifest,
        refs: &[SessionRef],
        configs: usize,
    ) -> Result<Opened> {
        let manifest_path = dir.join(MANIFEST);
        let journal_path = dir.join(JOURNAL);
        let mut done: Vec<Option<Done>> = Vec::new();
        done.resize_with(refs.len(), || None);
        let existing = match fs::read_to_string(&manifest_path) {
            Ok(text) => Some(serde_json::from_str::<Manifest>(&text).with_context(|| {
                format!(
                    "{}: not a manifest this tool wrote; remove {} to start over",
                    manifest_path.display(),
                    dir.display()
                )
            })?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(anyhow!("{}: cannot read: {e}", manifest_path.display())),
        };
        if let Some(old) = &existing {
            if let Some(why) = manifest.differences(old) {
                bail!(
                    "cannot resume: this is not the sweep that was interrupted: {why}. Run it as before to resume, or remove {} (or drop --resume) to start over",
                    dir.display()
                );
            }
        }
        let continued = existing.is_some() && journal_path.exists();
        let (mut recovered, mut dropped_bytes) = (0, 0);
        let file = if continued {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&journal_path)
                .with_context(|| format!("{}: cannot open", journal_path.display()))?;
            let total = file
                .metadata()
                .with_context(|| format!("{}: cannot read", journal_path.display()))?
                .len();
            let mut reader = io::BufReader::new(&mut file);
            let valid = read_records(&mut reader, &journal_path, |payload| {
                let record: Record = serde_json::from_slice(payload).with_context(|| {
                    format!(
                        "{}: a record that passed its checksum is not valid",
                        journal_path.display()
                    )
                })?;
                let Some(r) = refs.get(record.i) else {
                    bail!(
                        "{}: session {} is not in this sweep; remove {} to start over",
                        journal_path.display(),
                        record.i,
                        dir.display()
                    );
                };
                if r.transcript != record.info.path || record.facts.len() != configs {
                    bail!(
                        "{}: the record of session {} does not match {}; remove {} to start over",
                        journal_path.display(),
                        record.i,
                        r.transcript.display(),
                        dir.display()
                    );
                }
                if done[record.i].is_none() {
                    recovered += 1;
                }
                done[record.i] = Some((record.info, record.facts));
                Ok(())
            })?;
            dropped_bytes = total - valid;
            file.set_len(valid)
                .and_then(|()| file.seek(SeekFrom::End(0)).map(drop))
                .and_then(|()| file.sync_all())
                .with_context(|| {
                    format!(
                        "{}: cannot cut off the unfinished record",
                        journal_path.display()
                    )
                })?;
            file
        } else {
            fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
            // The journal first, empty, then the manifest that makes it
            // count: a crash between the two leaves no manifest, so a start
            // over.
            let file = File::create(&journal_path)
                .and_then(|f| f.sync_all().map(|()| f))
                .with_context(|| format!("{}: cannot create", journal_path.display()))?;
            let text = serde_json::to_vec_pretty(manifest)?;
            // Its rename and the journal's creation made durable together.
            crate::output::write_atomic(&manifest_path, &text)?;
            file
        };
        Ok(Opened {
            journal: Journal {
                dir: dir.to_path_buf(),
                file: Mutex::new((file, Instant::now())),
            },
            done,
            recovered,
            dropped_bytes,
            continued,
        })
    }

    /// Appends the record of session `i`, in one write; syncs if the last
    /// sync is [`SYNC_EVERY`] old.
    pub(crate) fn append(
        &self,
        i: usize,
        info: &SessionInfo,
        facts: &[SessionFacts],
    ) -> Result<()> {
        #[derive(Serialize)]
        struct RecordRef<'a> {
            i: usize,
            info: &'a SessionInfo,
            facts: &'a [SessionFacts],
        }
        let payload = serde_json::to_vec(&RecordRef { i, info, facts })
            .with_context(|| format!("{}: cannot journal this session", info.path.display()))?;
        let len = u32::try_from(payload.len())
            .map_err(|_| anyhow!("{}: record too large", info.path.display()))?;
        let mut buf = Vec::with_capacity(HEADER + payload.len());
        buf.extend_from_slice(&len.to_le_bytes());
        buf.extend_from_slice(&fnv1a64(&payload).to_le_bytes());
        buf.extend_from_slice(&payload);
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let (file, synced) = &mut *guard;
        let path = self.path();
        file.write_all(&buf)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        if synced.elapsed() >= SYNC_EVERY {
            file.sync_data()
                .with_context(|| format!("{}: cannot sync", path.display()))?;
            *synced = Instant::now();
        }
        Ok(())
    }

    /// Syncs everything written.
    pub(crate) fn sync(&self) -> Result<()> {
        let guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .0
            .sync_data()
            .with_context(|| format!("{}: cannot sync", self.path().display()))
    }

    /// The journal file.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join(JOURNAL)
    }

    /// Removes the journal and its manifest: the sweep's outputs are
    /// written and nothing is left to resume.
    pub(crate) fn finish(self, out: &Path) -> Result<()> {
        drop(self.file);
        fs::remove_dir_all(&self.dir).with_context(|| {
            format!("{}: cannot remove the finished journal", self.dir.display())
        })?;
        // The `.resume` folder too, once no shard's journal is left in it.
        let _ = fs::remove_dir(out.join(DIR));
        Ok(())
    }
}

/// Hands the payload of each whole, valid record at the start of `r` to
/// `each`, in order, and returns the bytes they take: reading stops at the
/// first record that is short or fails its checksum. Streamed, so a journal
/// of millions of rows is never in memory whole.
fn read_records(
    r: &mut impl Read,
    path: &Path,
    mut each: impl FnMut(&[u8]) -> Result<()>,
) -> Result<u64> {
    let cannot = |e: io::Error| anyhow!("{}: cannot read: {e}", path.display());
    let mut valid = 0u64;
    let mut header = [0u8; HEADER];
    let mut payload = Vec::new();
    loop {
        if read_full(r, &mut header).map_err(cannot)? < HEADER {
            break;
        }
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let mut sum = [0u8; 8];
        sum.copy_from_slice(&header[4..]);
        // Grown as bytes arrive, not allocated from a length that may be
        // the garbage of a torn header.
        payload.clear();
        let got = r
            .by_ref()
            .take(len as u64)
            .read_to_end(&mut payload)
            .map_err(cannot)?;
        if got < len || fnv1a64(&payload) != u64::from_le_bytes(sum) {
            break;
        }
        each(&payload)?;
        valid += (HEADER + len) as u64;
    }
    Ok(valid)
}

/// Reads into `buf` until it is full or the input ends; the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Whole records in the journal at `path`: how far a sweep got.
pub fn count_records(path: &Path) -> usize {
    let mut n = 0;
    if let Ok(file) = File::open(path) {
        let _ = read_records(&mut io::BufReader::new(file), path, |_| {
            n += 1;
            Ok(())
        });
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> (Vec<Vec<u8>>, u64) {
        let mut records = Vec::new();
        let valid = read_records(&mut io::Cursor::new(bytes), Path::new("journal"), |p| {
            records.push(p.to_vec());
            Ok(())
        })
        .unwrap();
        (records, valid)
    }

    /// Every field of a session's facts and every figure, written to a
    /// journal and read back by the resume: the same, and the same again
    /// under every thrash window the sweep may apply afterwards.
    #[test]
    fn the_journal_keeps_every_field_and_every_figure() {
        use crate::replay::every_field;
        use crate::sweep::figures::{self, Metric};

        let tmp = tempfile::tempdir().unwrap();
        let transcript = tmp.path().join("s").join("transcript.jsonl");
        fs::create_dir_all(transcript.parent().unwrap()).unwrap();
        fs::write(&transcript, "{}\n").unwrap();
        let refs = vec![SessionRef::file(transcript.clone())];
        let setups = vec![Setup::smith(Default::default()); 2];
        let prices: Prices = "3,3.75,0.3".parse().unwrap();
        let manifest = Manifest::new(&refs, &setups, &prices, None);
        let dir = tmp.path().join("journal");
        let info = SessionInfo {
            label: "s".into(),
            path: transcript,
            bytes: 3,
            lines: 1,
            lines_skipped: 0,
            messages: 40,
        };
        let facts = vec![every_field::set(0), every_field::set(1)];
        let opened = Journal::open(&dir, &manifest, &refs, 2).unwrap();
        opened.journal.append(0, &info, &facts).unwrap();
        opened.journal.sync().unwrap();
        drop(opened);

        let reopened = Journal::open(&dir, &manifest, &refs, 2).unwrap();
        assert!(reopened.continued);
        let (back_info, back) = reopened.done[0].clone().expect("the session is recovered");
        assert_eq!(back_info, info);
        for (c, (before, after)) in facts.iter().zip(&back).enumerate() {
            let lost = every_field::differing(before, after);
            assert!(lost.is_empty(), "config {c}: the journal loses {lost:?}");
            for window in [None, Some(1), Some(3), Some(5), Some(64)] {
                let (mut x, mut y) = (before.clone(), after.clone());
                if let Some(w) = window {
                    x.set_thrash_window(w);
                    y.set_thrash_window(w);
                }
                let (vx, vy) = (figures::values(&x, &prices), figures::values(&y, &prices));
                for m in Metric::ALL {
                    let i = m.index();
                    assert!(
                        window.is_some() || vx[i] != 0.0,
                        "{m} is 0 in the facts under test: set it"
                    );
                    assert!(
                        vx[i].to_bits() == vy[i].to_bits(),
                        "config {c}, window {window:?}: {m} is {} before the journal, {} after",
                        vx[i],
                        vy[i]
                    );
                }
                let lost = every_field::differing(&x, &y);
                assert!(lost.is_empty(), "window {window:?}: {lost:?}");
            }
        }
    }

    #[test]
    fn a_torn_or_corrupt_tail_ends_the_valid_records() {
        let mut bytes = Vec::new();
        for payload in [&b"{\"a\":1}"[..], b"{\"b\":22}"] {
            bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&fnv1a64(payload).to_le_bytes());
            bytes.extend_from_slice(payload);
        }
        let whole = bytes.len();
        assert_eq!(
            parse(&bytes),
            (
                vec![b"{\"a\":1}".to_vec(), b"{\"b\":22}".to_vec()],
                whole as u64
            )
        );
        // Cut inside the second record: only the first counts.
        let first = (HEADER + 7) as u64;
        for cut in first as usize..whole {
            assert_eq!(parse(&bytes[..cut]).1, first, "cut at {cut}");
        }
        // A flipped byte in the second payload: its checksum fails.
        let mut bad = bytes.clone();
        bad[whole - 2] ^= 1;
        assert_eq!(parse(&bad).1, first);
    }
}
