//! The parts of a [`super::job::Job`] for sweeps that outgrow one process:
//! a shard (take one shard of the sessions, write Hive-partitioned rows)
//! and resuming (journal finished sessions, continue after a kill).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{anyhow, Result};

use super::aggregate::ConfigSummary;
use super::journal::{self, Journal, Manifest, Opened};
use super::merge::{self, ShardPlace};
use super::run::{self, Options, Sweep};
use super::shard::{self, Shard};
use super::tables::SummaryInput;
use crate::cost::Prices;
use crate::policy::Setup;
use crate::transcript::SessionRef;

/// `--shard`, from the flag and the environment.
pub(crate) fn shard_of(flag: Option<&str>) -> Result<Option<Shard>> {
    flag.map(|text| Shard::parse(text, &|k| std::env::var(k).ok()))
        .transpose()
        .map_err(|e| anyhow::anyhow!("--shard: {e}"))
}

/// The sessions of `refs` in `shard` (all of them without one), with each
/// one's position among all of `refs`. Each session's key is taken against
/// the first of `paths` that is a directory holding it (see
/// [`shard::key`]).
pub(crate) fn take_shard(
    paths: &[String],
    refs: Vec<SessionRef>,
    shard: Option<Shard>,
) -> (Vec<SessionRef>, Vec<usize>) {
    let Some(shard) = shard else {
        let ordinals = (0..refs.len()).collect();
        return (refs, ordinals);
    };
    let dirs: Vec<&Path> = paths.iter().map(Path::new).filter(|p| p.is_dir()).collect();
    let mut taken = Vec::new();
    let mut ordinals = Vec::new();
    for (i, r) in refs.into_iter().enumerate() {
        let spec = dirs
            .iter()
            .find(|d| r.transcript.starts_with(d))
            .copied()
            .unwrap_or(r.transcript.as_path());
        if shard.takes(&shard::key(spec, &r.transcript)) {
            taken.push(r);
            ordinals.push(i);
        }
    }
    (taken, ordinals)
}

/// Opens (or starts) the journal of a `--resume` sweep into `out` and says
/// what it found; a journal that cannot be opened is the error.
pub(crate) fn open_journal(
    out: &Path,
    shard: Option<Shard>,
    refs: &[SessionRef],
    setups: &[Setup],
    prices: &Prices,
    cost: &crate::cost::session::Settings,
) -> Result<Opened> {
    let dir = journal::dir_for(out, shard);
    let mut manifest = Manifest::new(refs, setups, prices, shard);
    manifest.cost = cost.describe();
    let opened = Journal::open(&dir, &manifest, refs, setups.len())?;
    if opened.continued {
        crate::note!(
            "resuming: {} of {} sessions were finished before; replaying the other {}{}",
            opened.recovered,
            refs.len(),
            refs.len() - opened.recovered,
            match opened.dropped_bytes {
                0 => String::new(),
                n => format!(" (dropped {n} bytes of a record cut short)"),
            }
        );
    } else {
        crate::note!(
            "journal of finished sessions: {} (an interrupted sweep continues with --resume)",
            opened.journal.path().display()
        );
    }
    Ok(opened)
}

/// Runs the sweep, through the journal when there is one. `pause_after`
/// is `--test-pause-after`: see [`crate::interrupt::pause_for_tests`].
pub(crate) fn run_sweep(
    refs: &[SessionRef],
    setups: &[Setup],
    options: &Options,
    cost: &crate::cost::session::Settings,
    journal: Option<&mut Opened>,
    pause_after: Option<usize>,
) -> Result<Sweep> {
    let finished = AtomicUsize::new(0);
    let pause = |n: usize| {
        if pause_after == Some(n) {
            crate::interrupt::pause_for_tests(&format!(
                "paused after {n} sessions (--test-pause-after): waiting for Ctrl-C or the end of stdin"
            ));
        }
    };
    pause(0);
    let finished_one = || pause(finished.fetch_add(1, Ordering::SeqCst) + 1);
    match journal {
        None => run::run_priced(refs, setups, options, Some(cost), Vec::new(), &|_, _, _| {
            finished_one();
            Ok(())
        }),
        Some(opened) => {
            let done = std::mem::take(&mut opened.done);
            let j = &opened.journal;
            let sweep = run::run_priced(
                refs,
                setups,
                options,
                Some(cost),
                done,
                &|i, info, facts| {
                    j.append(i, info, facts)?;
                    finished_one();
                    Ok(())
                },
            )?;
            j.sync()?;
            Ok(sweep)
        }
    }
}

/// What an interrupted sweep with a journal keeps.
pub(crate) fn interrupted_note(journal: Option<&Opened>, sweep: &Sweep) -> String {
    match journal {
        Some(o) => format!(
            "; the rows of {} sessions are kept in {}: run the same command with --resume to continue",
            sweep.sessions.len(),
            o.journal.path().display()
        ),
        None => String::new(),
    }
}

/// Writes a shard's outputs into `out`: `refs` are the shard's sessions,
/// `ordinals` their positions among the `listed` sessions of the sweep.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_shard(
    out: &Path,
    shard: Shard,
    refs: &[SessionRef],
    ordinals: &[usize],
    listed: usize,
    sweep: &Sweep,
    summaries: &[ConfigSummary],
    input: &SummaryInput,
) -> Result<()> {
    // Each session is read or unreadable; both lists name it by transcript.
    let at: HashMap<&Path, usize> = refs
        .iter()
        .zip(ordinals)
        .map(|(r, &o)| (r.transcript.as_path(), o))
        .collect();
    let ordinal = |p: &Path| {
        at.get(p).copied().ok_or_else(|| {
            anyhow!(
                "{}: replayed but not among the shard's sessions",
                p.display()
            )
        })
    };
    let read: Vec<usize> = sweep
        .sessions
        .iter()
        .map(|s| ordinal(&s.path))
        .collect::<Result<_>>()?;
    let skipped: Vec<usize> = sweep
        .unreadable
        .iter()
        .map(|u| ordinal(&u.path))
        .collect::<Result<_>>()?;
    let written = merge::write_shard(
        out,
        &ShardPlace {
            shard,
            ordinals: &read,
            skipped_ordinals: &skipped,
            listed,
        },
        sweep,
        summaries,
        input,
    )?;
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.strip_prefix(out).ok().map(|p| p.display().to_string()))
        .collect();
    crate::note!(
        "shard {shard}: wrote {} into {}; once every shard is done, `smith-calibrate merge {}` writes the sweep's outputs",
        names.join(", "),
        out.display(),
        out.display()
    );
    Ok(())
}
