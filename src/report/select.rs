//! What the report looks at: the config compared with the baseline and
//! the sessions charted request by request, from the command line's names
//! or by default.

use std::path::Path;

use anyhow::Result;

use super::{SweepOutput, DEFAULT_SESSIONS};
use crate::policy::Policy;
use crate::sweep::figures;

/// Why `--config` or `--session` picks nothing, or the default sessions
/// cannot be found: the first five are the user's to fix (a usage error),
/// the last is the sweep's files'.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    /// `--config N` beyond the sweep's `count` configs.
    #[error("--config {spec}: the sweep ranked {count} configs; give a rank from 1 to {count} or a config label")]
    NoRank { spec: String, count: usize },
    /// `--config POLICY` for a policy the sweep did not run; the ones it
    /// ran.
    #[error("--config {spec:?}: the sweep ran no config of {policy}; its policies are {}", .swept.join(", "))]
    NoPolicy {
        spec: String,
        policy: Policy,
        swept: Vec<&'static str>,
    },
    /// `--config LABEL` that is no config's label; the best few labels.
    #[error("--config {spec:?}: no config has that label; give a rank (1 = best), a policy, or a label such as {}", quoted(.examples))]
    NoLabel { spec: String, examples: Vec<String> },
    /// `--session LABEL` that `count` sessions share.
    #[error(
        "--session {spec:?}: {count} sessions have that label; give the transcript path instead"
    )]
    SharedLabel { spec: String, count: usize },
    /// `--session` that is no session's label or transcript; a few labels.
    #[error("--session {spec:?}: the sweep has no session with that label or transcript path; its sessions include {}", quoted(.examples))]
    NoSession { spec: String, examples: Vec<String> },
    /// The sessions that changed most could not be read from the files.
    #[error("{0:#}")]
    Data(anyhow::Error),
}

/// Labels as an error lists them: each quoted, joined by commas.
fn quoted(labels: &[String]) -> String {
    labels
        .iter()
        .map(|l| format!("{l:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The config a report compares with the baseline unless told: the one
/// the verdict recommends; when it keeps the baseline, the best config it
/// refused ([`refused`]); when there is no verdict, for a sweep ranked by a price, the one whose price with its expected
/// re-fetches (`price_with_refetch`) is lowest, so that a config cheap only
/// because it loses what the agent would fetch again is not chosen; else
/// the best by the sweep's own ranking. Ties go to the better rank.
pub(crate) fn default_chosen(data: &SweepOutput) -> usize {
    // The verdict's config when it changes one: the charts then show what
    // the headline recommends, never another.
    if let Some(c) = data.verdict().and_then(|v| v.chosen.as_ref()) {
        if c.config < data.configs.len() {
            return c.config;
        }
    }
    // When it keeps the baseline, the best config it refused: comparing
    // the baseline with itself would show nothing.
    if let Some((i, _)) = refused(data) {
        return i;
    }
    let order = data.by_rank();
    if !data.summary.rank_by.is_price() {
        return order[0];
    }
    let with = |i: usize| data.configs[i].total(figures::Metric::PriceWithRefetch);
    order
        .iter()
        .copied()
        .min_by(|&a, &b| with(a).total_cmp(&with(b)))
        .unwrap_or(order[0])
}

/// When the verdict keeps the baseline, the best config it refused
/// ([`crate::recommend::Verdict::best_refused`]) and why, in the words the
/// terminal prints.
pub(crate) fn refused(data: &SweepOutput) -> Option<(usize, String)> {
    let v = data.verdict().filter(|v| !v.change)?;
    let e = v.best_refused()?;
    let i = match data.configs.get(e.config) {
        Some(c) if c.label == e.label => e.config,
        _ => data.configs.iter().position(|c| c.label == e.label)?,
    };
    Some((i, v.refused_because(e)))
}

/// What the page and the captions say when the config compared is the one
/// the verdict refused: which, and why it was refused.
pub(crate) fn kept_note(data: &SweepOutput, chosen: usize) -> Option<String> {
    let (i, why) = refused(data).filter(|(i, _)| *i == chosen)?;
    Some(format!(
        "The verdict keeps {}; the charts compare it with {}, the best config it refused: {why}.",
        data.baseline_name(),
        data.name(i)
    ))
}

/// The config compared with the baseline, and the sessions given a section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Index of the chosen config.
    pub chosen: usize,
    /// Indices of the sessions charted, in the order given.
    pub sessions: Vec<usize>,
    /// Write a page per session named under "Compactions that went wrong"
    /// into `sessions/` and link its requests there (`report
    /// --session-pages`); without it the report stays one file.
    pub(crate) session_pages: bool,
}

impl Selection {
    /// The config `config` names (a rank such as `1`, a label, or a policy
    /// such as `codex` for its best config; the best when `None`) and the sessions `sessions` name (labels or transcript
    /// paths; when empty, the [`DEFAULT_SESSIONS`] sessions whose tokens sent
    /// changed most against the baseline). The error says what to give
    /// instead.
    pub fn new(
        data: &SweepOutput,
        config: Option<&str>,
        sessions: &[String],
    ) -> std::result::Result<Selection, SelectionError> {
        let chosen = match config {
            None => default_chosen(data),
            Some(spec) => choose_config(data, spec)?,
        };
        let sessions = if sessions.is_empty() {
            most_changed(data, chosen).map_err(SelectionError::Data)?
        } else {
            let mut picked = Vec::new();
            for spec in sessions {
                let s = choose_session(data, spec)?;
                if !picked.contains(&s) {
                    picked.push(s);
                }
            }
            picked
        };
        Ok(Selection {
            chosen,
            sessions,
            session_pages: false,
        })
    }
}

fn choose_config(data: &SweepOutput, spec: &str) -> std::result::Result<usize, SelectionError> {
    if let Ok(rank) = spec.trim().parse::<usize>() {
        return data
            .configs
            .iter()
            .position(|c| c.rank == rank)
            .ok_or_else(|| SelectionError::NoRank {
                spec: spec.to_string(),
                count: data.configs.len(),
            });
    }
    if let Some(i) = data.configs.iter().position(|c| c.label == spec) {
        return Ok(i);
    }
    if let Some(policy) = Policy::parse(spec) {
        return data
            .best_of(policy, None)
            .ok_or_else(|| SelectionError::NoPolicy {
                spec: spec.to_string(),
                policy,
                swept: data.policies().into_iter().map(Policy::as_str).collect(),
            });
    }
    Err(SelectionError::NoLabel {
        spec: spec.to_string(),
        examples: data
            .by_rank()
            .iter()
            .take(5)
            .map(|&i| data.configs[i].label.clone())
            .collect(),
    })
}

fn choose_session(data: &SweepOutput, spec: &str) -> std::result::Result<usize, SelectionError> {
    let by_label: Vec<usize> = (0..data.sessions.len())
        .filter(|&s| data.sessions[s].label == spec)
        .collect();
    match by_label.as_slice() {
        [one] => return Ok(*one),
        [] => {}
        _ => {
            return Err(SelectionError::SharedLabel {
                spec: spec.to_string(),
                count: by_label.len(),
            })
        }
    }
    let path = Path::new(spec);
    if let Some(s) = data.sessions.iter().position(|s| s.path == path) {
        return Ok(s);
    }
    Err(SelectionError::NoSession {
        spec: spec.to_string(),
        examples: data
            .sessions
            .iter()
            .take(8)
            .map(|s| s.label.clone())
            .collect(),
    })
}

/// The sessions whose tokens sent under `chosen` differ most from the
/// baseline's, largest change first (ties: the larger session first).
fn most_changed(data: &SweepOutput, chosen: usize) -> Result<Vec<usize>> {
    let base = data.baseline()?;
    let sent = data.per_session(figures::Metric::TokensSent)?;
    let mut order: Vec<usize> = (0..data.sessions.len()).collect();
    let change = |s: usize| {
        let d = (sent[s][chosen] - sent[s][base]).abs();
        if d.is_nan() {
            -1.0
        } else {
            d
        }
    };
    order.sort_by(|&a, &b| {
        change(b)
            .total_cmp(&change(a))
            .then(sent[b][base].total_cmp(&sent[a][base]))
            .then(a.cmp(&b))
    });
    order.truncate(DEFAULT_SESSIONS);
    Ok(order)
}
