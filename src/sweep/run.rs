//! Running a sweep: every session under every config, in parallel, each
//! session read once.
//!
//! Reading and parsing a transcript costs far more than replaying it under
//! one more config, so each session is loaded once, replayed under every
//! config of the grid, and dropped; only the per-(session, config) sums are
//! kept. Each worker thread holds one session at a time, so memory follows
//! the largest sessions times the number of threads, never the corpus.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::calibrate::{
    self,
    session::{Given, SessionCalibration},
};
use crate::cost::bill::unlogged::AccountView;
use crate::cost::session::{Meter, Recorded, Settings};
use crate::engine::Compactor;
use crate::loss::{self, RecordIndex};
use crate::policy::cold;
use crate::policy::Setup;
use crate::replay::learn::Learned;
use crate::replay::SessionFacts;
use crate::sweep::account::Accounts;
use crate::sweep::estimators;
use crate::transcript::{self, Session, SessionRef};

/// A session that was read, as the output files name it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionInfo {
    /// The session's name or id, else its directory's or file's name.
    pub(crate) label: String,
    /// The transcript.
    pub path: PathBuf,
    /// Bytes of transcript read.
    pub(crate) bytes: u64,
    /// Lines in the transcript and how many of them were skipped as bad.
    pub(crate) lines: usize,
    pub lines_skipped: usize,
    /// Messages read.
    pub messages: usize,
}

/// A session left out of the sweep, and why; `summary.json`'s `skipped`
/// lists them as they are.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Unreadable {
    pub path: PathBuf,
    pub reason: String,
}

/// One session replayed under one config (a policy and its knobs): the
/// replay's sums and its loss measure. The price is derived from them (see
/// [`crate::cost`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Index into [`Sweep::sessions`].
    pub session: u32,
    /// Index into [`Sweep::configs`].
    pub config: u32,
    pub facts: SessionFacts,
}

/// Everything a sweep found.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sessions read, in the order they were given.
    pub sessions: Vec<SessionInfo>,
    /// The configs, as given: each a policy with its knobs.
    pub configs: Vec<Setup>,
    /// One row per session and config, session-major: the row of session
    /// `s` under config `c` is `rows[s * configs.len() + c]`.
    pub rows: Vec<Row>,
    /// Sessions that could not be read at all.
    pub unreadable: Vec<Unreadable>,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Worker threads used.
    pub threads: usize,
}

impl Sweep {
    /// The row of session `s` under config `c`.
    pub fn row(&self, s: usize, c: usize) -> &Row {
        &self.rows[s * self.configs.len() + c]
    }

    /// Bytes of transcript read, over all sessions.
    pub fn bytes(&self) -> u64 {
        self.sessions.iter().map(|s| s.bytes).sum()
    }

    /// Bad lines skipped, over all sessions.
    pub fn lines_skipped(&self) -> usize {
        self.sessions.iter().map(|s| s.lines_skipped).sum()
    }
}

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads; `None` for one per core.
    pub(crate) jobs: Option<usize>,
    /// Show a progress bar on stderr (the command sets this only when stderr
    /// is a terminal).
    pub(crate) progress: bool,
    /// Do not write skipped lines and unreadable sessions to stderr (they are
    /// still counted and returned).
    pub(crate) quiet: bool,
    /// Which of ratio and overhead the grid set: where it did not, each
    /// session replays under its own (`crate::calibrate::session`). Both, by
    /// default.
    pub(crate) given: Given,
    /// The account's cache beyond each imported session
    /// ([`super::account::of`]); empty: each session is priced alone.
    pub(crate) accounts: Arc<Accounts>,
}

impl Options {
    /// Silent, on `jobs` threads (`None`: one per core): no progress, no
    /// notes on stderr, the figures alone.
    pub fn silent(jobs: Option<usize>) -> Options {
        Options {
            jobs,
            quiet: true,
            ..Options::default()
        }
    }

    /// Progress on stderr exactly when it is a terminal.
    pub(crate) fn for_terminal(jobs: Option<usize>) -> Options {
        Options {
            jobs,
            progress: std::io::stderr().is_terminal(),
            quiet: false,
            given: Given::ALL,
            accounts: Arc::default(),
        }
    }
}

/// What one worker produced for one session.
type Outcome = std::result::Result<(SessionInfo, Vec<SessionFacts>), Unreadable>;

/// Runs every session of `refs` under every config of `configs`, measuring
/// the loss too (see `crate::loss`). With no configs it only reads and
/// parses: the floor a sweep cannot go below.
/// Sessions that cannot be read, or hold no message, are reported (unless
/// quiet) and listed in [`Sweep::unreadable`]; only failing to start the
/// worker threads is an error.
pub fn run(refs: &[SessionRef], configs: &[Setup], opts: &Options) -> Result<Sweep> {
    run_priced(refs, configs, opts, None, Vec::new(), &|_, _, _| Ok(()))
}

/// A session's rows known before the run: its info and one replay's facts
/// per config.
pub(crate) type Done = (SessionInfo, Vec<SessionFacts>);

/// Called by a worker with each session it replayed (its index in `refs`),
/// before it takes the next: where a resumable sweep makes the rows durable.
pub(crate) type OnDone<'a> = dyn Fn(usize, &SessionInfo, &[SessionFacts]) -> Result<()> + Sync + 'a;

/// [`run`], pricing every replay with the cost model under `cost`
/// (lifetime, minimum prefix, `--price`), as `sweep` does; `None` leaves
/// the rows to the flat price of their sums (what [`run`] gives). The
/// sessions of `done` (indexed as `refs`; empty for none) are taken as
/// already replayed, and every session replayed now is handed to
/// `on_done`; the first error `on_done` returns stops the run at the next
/// session and is returned. The sweep is the same, row for row, as one
/// run over all of `refs`.
pub fn run_priced(
    refs: &[SessionRef],
    configs: &[Setup],
    opts: &Options,
    cost: Option<&Settings>,
    mut done: Vec<Option<Done>>,
    on_done: &OnDone,
) -> Result<Sweep> {
    done.resize_with(refs.len(), || None);
    let todo: Vec<usize> = (0..refs.len()).filter(|&i| done[i].is_none()).collect();
    let failed: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let threads = opts
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("sweep-{i}"))
        .build()
        .context("cannot start the sweep's worker threads")?;
    let engines: Vec<Box<dyn Compactor>> = configs.iter().map(Setup::compactor).collect();
    let bar = opts.progress.then(|| progress_bar(refs));
    if let Some(bar) = &bar {
        let before: u64 = done.iter().flatten().map(|(info, _)| info.bytes).sum();
        bar.inc(before);
    }
    let say = |text: &str| {
        if opts.quiet || text.is_empty() {
            return;
        }
        match &bar {
            Some(bar) => bar.suspend(|| crate::messages::notes(text)),
            None => crate::messages::notes(text),
        }
    };

    // Each thread takes the next session until none are left, rather than
    // rayon splitting the list: a thread that is waiting for help with its
    // own session's configs may only steal configs, never start loading a
    // second session, which is what keeps memory at one session per thread.
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(refs.len() - todo.len());
    let per_thread: Vec<Vec<(usize, Outcome)>> = pool.broadcast(|_| {
        let mut mine = Vec::new();
        loop {
            if crate::interrupt::interrupted() || stop.load(Ordering::Relaxed) {
                break;
            }
            let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let r = &refs[i];
            let account = opts.accounts.get(&r.transcript).cloned();
            let outcome = replay_session(r, configs, &engines, cost, opts.given, account, &say);
            if let Ok((info, facts)) = &outcome {
                if let Err(e) = on_done(i, info, facts) {
                    stop.store(true, Ordering::Relaxed);
                    let mut first = failed.lock().unwrap_or_else(|p| p.into_inner());
                    first.get_or_insert(e);
                }
            }
            if let Some(bar) = &bar {
                let bytes = match &outcome {
                    Ok((info, _)) => info.bytes,
                    Err(_) => r.size(),
                };
                let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                bar.inc(bytes);
                bar.set_message(format!("{n}/{} sessions", refs.len()));
            }
            mine.push((i, outcome));
        }
        mine
    });
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }

    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut outcomes: Vec<(usize, Outcome)> = per_thread.into_iter().flatten().collect();
    outcomes.extend(
        done.into_iter()
            .enumerate()
            .filter_map(|(i, d)| d.map(|d| (i, Ok(d)))),
    );
    outcomes.sort_by_key(|(i, _)| *i);
    let mut sweep = Sweep {
        sessions: Vec::new(),
        configs: configs.to_vec(),
        rows: Vec::new(),
        unreadable: Vec::new(),
        elapsed: Duration::ZERO,
        threads,
    };
    for (_, outcome) in outcomes {
        match outcome {
            Ok((info, facts)) => {
                let s = sweep.sessions.len() as u32;
                sweep.sessions.push(info);
                sweep
                    .rows
                    .extend(facts.into_iter().enumerate().map(|(c, facts)| Row {
                        session: s,
                        config: c as u32,
                        facts,
                    }));
            }
            Err(u) => sweep.unreadable.push(u),
        }
    }
    sweep.elapsed = started.elapsed();
    Ok(sweep)
}

/// Loads one session, reports what was skipped, replays it under every
/// engine and lets it go.
fn replay_session(
    r: &SessionRef,
    configs: &[Setup],
    engines: &[Box<dyn Compactor>],
    cost: Option<&Settings>,
    given: Given,
    account: Option<Arc<AccountView>>,
    say: &(dyn Fn(&str) + Sync),
) -> Outcome {
    let session = load_session(r, say)?;
    // Tokenized once, by the first replay that lost something, for all.
    let index: OnceLock<RecordIndex> = OnceLock::new();
    // smith's own session is priced by the provider and model it names.
    let (recorded, named) = Recorded::of_session_or_smith(&session);
    let recorded = recorded.map(|r| r.with_account(account));
    // A tokenizer estimator counts the session's texts once, before the
    // grid, and every config with that estimator shares the counts.
    let bound = estimators::bind(configs, &session.messages, session.run.as_ref());
    let chosen: Vec<&dyn Compactor> = engines
        .iter()
        .zip(&bound)
        .map(|(shared, own)| own.as_deref().unwrap_or(shared.as_ref()))
        .collect();
    // What the session says about ratio and overhead, read once for every
    // config that leaves them to it.
    let calibration = SessionCalibration::of(&session);
    let requests = calibrate::session::requests(&session.messages);
    // Priced by the cost model in the same pass as the replay.
    let replay_one = |(setup, e): (&Setup, &dyn Compactor)| {
        let chosen = calibrate::session::for_session_with(setup, given, &calibration, requests);
        // A config the session chose knobs for gets its own engine.
        let own = chosen.calibration.is_some().then(|| {
            chosen
                .setup
                .compactor_for(&session.messages, session.run.as_ref())
        });
        let (setup, e): (&Setup, &dyn Compactor) = match &own {
            Some(own) => (&chosen.setup, own.as_ref()),
            None => (setup, e),
        };
        let mut facts = {
            // Compacting while the cache is cold needs this session's
            // times: its engine is built here, per session.
            let cold = cost.and_then(|cost| {
                cold::for_session(setup, e, &session.messages, recorded.as_ref(), cost)
            });
            let e: &dyn Compactor = match &cold {
                Some(c) => c,
                None => e,
            };
            let learned = chosen.ratios.clone().map(|r| Learned::new(e, r));
            let e: &dyn Compactor = match &learned {
                Some(l) => l,
                None => e,
            };
            match cost {
                None => loss::replay_observed(
                    &session.messages,
                    e,
                    &index,
                    crate::replay::Sizes::of_session(&session),
                    |_| {},
                ),
                Some(cost) => {
                    let mut meter = Meter::new(
                        &session.messages,
                        recorded.as_ref().or(named.as_ref()),
                        *e.budget(),
                        setup.config.summary_tokens,
                        cost,
                    );
                    // The agent's own summaries were its own requests,
                    // sessions of their own in its log.
                    if setup.policy == crate::policy::Policy::Recorded && session.run.is_some() {
                        meter = meter.without_summarizer();
                    }
                    let mut facts = loss::replay_observed(
                        &session.messages,
                        e,
                        &index,
                        crate::replay::Sizes::of_session(&session),
                        |r| meter.observe(r),
                    );
                    let refetch = facts.refetch;
                    facts.priced = Some(meter.finish_with(&refetch));
                    facts
                }
            }
        };
        facts.calibration = chosen.calibration;
        facts
    };
    // Across configs in parallel too: idle threads then help with the last,
    // largest sessions instead of waiting for them.
    let facts: Vec<SessionFacts> = if chosen.len() > 1 {
        configs
            .par_iter()
            .zip(chosen.par_iter())
            .map(|(s, e)| replay_one((s, *e)))
            .collect()
    } else {
        configs
            .iter()
            .zip(chosen.iter())
            .map(|(s, e)| replay_one((s, *e)))
            .collect()
    };
    let info = SessionInfo {
        label: session.label(),
        path: r.transcript.clone(),
        bytes: session.bytes(),
        lines: session.log.lines,
        lines_skipped: session.log.skipped_count(),
        messages: session.messages.len(),
    };
    Ok((info, facts))
}

/// Loads one session for the sweep, reporting what was skipped in it, or
/// why it is passed over (unreadable, or no message in it).
fn load_session(r: &SessionRef, say: &(dyn Fn(&str) + Sync)) -> Result<Session, Unreadable> {
    let session = transcript::load(r).map_err(|e| {
        let reason = format!("{e:#}");
        say(&format!("{reason}; session skipped\n"));
        Unreadable {
            path: r.transcript.clone(),
            reason,
        }
    })?;
    say(&skip_report(&session));
    if session.messages.is_empty() {
        let reason = format!(
            "no message could be read ({} lines, {} skipped)",
            session.log.lines,
            session.log.skipped_count()
        );
        say(&format!(
            "{}: {reason}; session skipped\n",
            r.transcript.display()
        ));
        return Err(Unreadable {
            path: r.transcript.clone(),
            reason,
        });
    }
    Ok(session)
}

/// What `commands::report_skips` prints for a session, as one string so that
/// lines from parallel workers do not interleave.
fn skip_report(session: &Session) -> String {
    let mut buf = Vec::new();
    let _ = session.log.report(&mut buf);
    if let Some(why) = &session.meta_error {
        buf.extend_from_slice(why.as_bytes());
        buf.push(b'\n');
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// A bar over the bytes to read, showing sessions done, MB/s and the time
/// left.
fn progress_bar(refs: &[SessionRef]) -> ProgressBar {
    let total: u64 = refs.iter().map(SessionRef::size).sum();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {msg}, {bytes}/{total_bytes} {binary_bytes_per_sec}, ETA {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(format!("0/{} sessions", refs.len()));
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
