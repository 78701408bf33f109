//! The calibration of a set of sessions, per source format: the fit of
//! each format's requests and, per session, where smith's first compaction
//! lands beside the source agent's own.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;

use super::{Errors, Excluded, FirstCompaction, Fit, Point};
use crate::cost::bill;
use crate::transcript::session_file::{CompactBoundary, SessionFile};
use crate::transcript::{Session, SessionRef};

/// The fit of one source format.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FormatFit {
    pub(crate) format: String,
    pub(crate) sessions: usize,
    pub(crate) requests: usize,
    /// Sessions of this format that gave no point, by reason.
    pub(crate) excluded: BTreeMap<String, usize>,
    pub(crate) fit: Fit,
    /// Errors of smith's defaults (ratio 1, overhead 0) and of the fit.
    pub(crate) before: Errors,
    pub(crate) after: Errors,
    /// What to pass to `replay` and `sweep`.
    pub(crate) flags: String,
}

/// One session's first compaction: the source agent's and smith's.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CompactionRow {
    pub(crate) session: String,
    pub(crate) format: String,
    /// The window smith's engine was run under.
    pub(crate) window: u64,
    /// The source agent's first compaction, if it compacted.
    pub(crate) real: Option<CompactBoundary>,
    /// Reported prompt size of the last request before it.
    pub(crate) real_last_prompt: Option<u64>,
    /// Further compactions of the source agent (not compared).
    pub(crate) later_real: usize,
    /// smith's first compaction under the fitted knobs.
    pub(crate) smith: Option<FirstCompaction>,
    /// The prompt size the provider reported at the request where smith
    /// (fitted) first compacts, when that request's context is known.
    pub(crate) smith_reported: Option<u64>,
    /// smith's first compaction with ratio 1 and no overhead.
    pub(crate) smith_uncalibrated: Option<FirstCompaction>,
    /// smith's first compaction with the ratio learned from the session's
    /// own billed prompts as smith learns it (`--ratio learn`), and the
    /// overhead fitted on them.
    pub(crate) smith_learned: Option<FirstCompaction>,
}

/// The sessions of one format that gave points, the points, and the
/// sessions that gave none by reason.
#[derive(Default)]
struct Group {
    sessions: usize,
    points: Vec<Point>,
    excluded: BTreeMap<String, usize>,
}

/// One session read for the calibration.
pub(crate) struct Loaded {
    pub(crate) session: Session,
    /// The import's `session.json`; `None` for smith's own sessions.
    pub(crate) file: Option<SessionFile>,
    /// The session's messages in outline (see [`crate::transcript::outline`]).
    pub(crate) outline: std::sync::Arc<crate::transcript::outline::Outline>,
}

impl Loaded {
    /// Reads one session and the import metadata beside it.
    pub(crate) fn read(r: &SessionRef) -> anyhow::Result<Loaded> {
        let session = crate::transcript::load(r)?;
        let file = session
            .meta
            .as_ref()
            .and_then(|m| m.raw.as_ref())
            .and_then(SessionFile::from_meta);
        Ok(Loaded::new(session, file))
    }

    /// A session without its messages, for what needs only their outline
    /// (the account's reading): a log read in place is not read again.
    pub(crate) fn outlined(r: &SessionRef) -> anyhow::Result<Loaded> {
        let mut l = match crate::transcript::session::outlined(r) {
            Some((session, outline)) => {
                let file = session
                    .meta
                    .as_ref()
                    .and_then(|m| m.raw.as_ref())
                    .and_then(SessionFile::from_meta);
                Loaded {
                    session,
                    file,
                    outline,
                }
            }
            None => {
                let mut l = Loaded::read(r)?;
                l.session.messages = Vec::new();
                l
            }
        };
        // The account reads the typed file; the JSON tree it was parsed
        // from would be held for every session of the folder at once.
        if let Some(meta) = l.session.meta.as_mut() {
            meta.raw = None;
        }
        Ok(l)
    }

    /// `session`, with the import's `file` where it has one.
    pub(crate) fn new(session: Session, file: Option<SessionFile>) -> Loaded {
        let outline =
            std::sync::Arc::new(crate::transcript::outline::Outline::of(&session.messages));
        Loaded {
            session,
            file,
            outline,
        }
    }
}

/// The bill check's inputs: the sessions with usage per request, the
/// agent's fixed prompt the fitted overhead of the session's format in
/// provider tokens (`overhead × ratio`).
pub(crate) fn bill_inputs<'a>(sessions: &'a [Loaded], fits: &[FormatFit]) -> Vec<bill::Input<'a>> {
    sessions
        .iter()
        .filter_map(|l| bill_input(l, fits))
        .collect()
}

/// One session's input to the bill check, if it is an import.
pub(crate) fn bill_input<'a>(l: &'a Loaded, fits: &[FormatFit]) -> Option<bill::Input<'a>> {
    let file = l.file.as_ref()?;
    let fit = fits.iter().find(|f| f.format == file.source.format);
    let fixed_prefix = fit.map_or(0, |f| {
        (f.fit.overhead_tokens as f64 * f.fit.ratio).round() as u64
    });
    Some(bill::Input {
        label: l.session.label(),
        file,
        messages: &l.session.messages,
        outline: &l.outline,
        fixed_prefix,
        ratio: fit.map_or(1.0, |f| f.fit.ratio),
        measured: l.session.measured.as_ref(),
        run: l.session.run.as_ref(),
    })
}

/// The fits of every format among `sessions`, by format name, and how many
/// sessions are not imports (they carry no usage per request). A format
/// whose requests give no point is noted and left out.
pub(crate) fn fit_formats(sessions: &[Loaded]) -> (Vec<FormatFit>, usize) {
    let (by_format, not_imported) = group_points(sessions);
    let mut fits = Vec::new();
    for (format, group) in by_format {
        let Group {
            sessions: n,
            points: pts,
            excluded,
        } = group;
        let Some(fit) = super::fit(&pts) else {
            crate::note!("{format}: no request with a known context and a reported prompt size; nothing to fit");
            continue;
        };
        fits.push(FormatFit {
            before: super::errors(&pts, 1.0, 0),
            after: super::errors(&pts, fit.ratio, fit.overhead_tokens),
            flags: format!("--ratio {} --overhead {}", fit.ratio, fit.overhead_tokens),
            format,
            sessions: n,
            requests: pts.len(),
            excluded,
            fit,
        });
    }
    (fits, not_imported)
}

/// Points per format; sessions that give none are counted by reason.
fn group_points(sessions: &[Loaded]) -> (BTreeMap<String, Group>, usize) {
    let mut by_format: BTreeMap<String, Group> = BTreeMap::new();
    let mut not_imported = 0usize;
    let per_session: Vec<Result<Vec<Point>, Excluded>> = sessions
        .par_iter()
        .map(|l| match &l.file {
            Some(f) => super::points_of_outline(&l.outline, f),
            None => Err(Excluded::NotImported),
        })
        .collect();
    for (l, pts) in sessions.iter().zip(per_session) {
        let Some(f) = &l.file else {
            not_imported += 1;
            continue;
        };
        let entry = by_format.entry(f.source.format.clone()).or_default();
        match pts {
            Ok(p) => {
                entry.sessions += 1;
                entry.points.extend(p);
            }
            Err(why) => {
                let key = serde_json::to_value(why)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                *entry.excluded.entry(key).or_default() += 1;
            }
        }
    }
    (by_format, not_imported)
}

/// The comparison rows of the imported sessions, each under its format's fit.
pub(crate) fn compaction_rows(
    sessions: &[Loaded],
    fits: &[FormatFit],
    window: &(dyn Fn(&SessionFile) -> u64 + Sync),
    engine: crate::engine::EngineVersion,
) -> Vec<CompactionRow> {
    sessions
        .par_iter()
        .filter_map(|l| {
            let f = l.file.as_ref()?;
            let fit = fits.iter().find(|x| x.format == f.source.format)?;
            compaction_row(l, f, &fit.fit, window(f), engine)
        })
        .collect()
}

/// The comparison row of a session that the source agent compacted, or that
/// smith would compact; `None` when neither.
fn compaction_row(
    l: &Loaded,
    f: &SessionFile,
    fit: &Fit,
    max_tokens: u64,
    engine: crate::engine::EngineVersion,
) -> Option<CompactionRow> {
    let messages = &l.session.messages;
    let config = |ratio, overhead| crate::engine::Config {
        engine,
        ..super::compare_config(max_tokens, ratio, overhead)
    };
    let smith = super::first_compaction(messages, config(fit.ratio, fit.overhead_tokens));
    let real = f.full_compactions().next().cloned();
    if real.is_none() && smith.is_none() {
        return None;
    }
    let real_last_prompt = real.as_ref().and_then(|b| {
        f.requests
            .iter()
            .rfind(|r| r.message_index < b.message_index)
            .map(|r| r.prompt_tokens())
    });
    // Known only while the context is: before the agent's own compaction.
    let smith_reported = smith.as_ref().and_then(|s| {
        let before_real = real
            .as_ref()
            .is_none_or(|b| s.message_index < b.message_index);
        f.requests
            .iter()
            .find(|r| f.context_complete && before_real && r.message_index == s.message_index)
            .map(|r| r.prompt_tokens())
    });
    Some(CompactionRow {
        session: l.session.label(),
        format: f.source.format.clone(),
        window: max_tokens,
        later_real: f.full_compactions().count().saturating_sub(1),
        real,
        real_last_prompt,
        smith_reported,
        smith,
        smith_uncalibrated: super::first_compaction(messages, config(1.0, 0)),
        smith_learned: {
            let setup = crate::policy::Setup::smith(config(crate::engine::learn::LEARN, 0));
            let given = super::session::Given {
                ratio: true,
                overhead: false,
            };
            let chosen = super::session::for_session(&setup, given, &l.session);
            super::first_trigger(messages, chosen.compactor(&l.session).as_ref())
        },
    })
}
