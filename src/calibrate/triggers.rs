//! The peer policies held against the agents they copy: where the
//! `claude-code` policy (on Claude Code logs) and the `codex` policy (on
//! Codex rollouts) would have compacted, against where the agent did, per
//! agent version.
//!
//! Only the trigger is held here, not the summary: the question is whether
//! the policy's threshold is the agent's. Both agents decide on the
//! provider's own count of the context, so the policy's threshold is applied
//! to the recorded prompt of each request, not to an estimate from bytes.
//! Between two of the agent's compactions the recorded history is the one
//! the policy would have seen had it compacted at the same place, so every
//! compaction, not only the first, is a fair comparison: the policy fires
//! before the first request of the stretch whose recorded prompt reaches its
//! trigger, or before the request the agent compacted instead of sending
//! (whose context is the agent's `preTokens`), or later than the agent.

use std::io::{self, Write};

use serde::Serialize;

use crate::format::{right, table, whole, NONE};
use crate::policy::{Knobs, Policy, Setup};
use crate::stats::median_of;
use crate::transcript::session_file::{SessionFile, FORMAT_CLAUDE_CODE, FORMAT_CODEX};

/// One of the agent's automatic compactions, and where the policy would
/// have compacted instead.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Trigger {
    pub(crate) session: String,
    pub(crate) policy: &'static str,
    /// The agent's version where it compacted (`?` where the log does not
    /// say).
    pub(crate) version: String,
    pub(crate) window: u64,
    /// The policy's trigger in tokens, at the session's window with the
    /// policy's default knobs.
    pub(crate) trigger_tokens: u64,
    /// 1-based request the agent compacted before (the first one sent with
    /// the compacted context).
    pub(crate) request: usize,
    /// The context the agent compacted, by its own count (`preTokens`),
    /// else the last recorded prompt before it.
    pub(crate) agent_tokens: u64,
    /// The request the policy compacts before; `None`: not by `request`.
    pub(crate) policy_request: Option<usize>,
}

impl Trigger {
    /// Requests the policy compacts before the agent (negative: earlier);
    /// `None` when the policy would compact later.
    pub(crate) fn offset(&self) -> Option<i64> {
        self.policy_request.map(|p| p as i64 - self.request as i64)
    }
}

/// The policy that copies the agent of a log's format.
pub(crate) fn policy_of(format: &str) -> Option<Policy> {
    match format {
        FORMAT_CLAUDE_CODE => Some(Policy::ClaudeCode),
        FORMAT_CODEX => Some(Policy::Codex),
        _ => None,
    }
}

/// The trigger, in tokens of the provider's count, of `policy` at its
/// default knobs in a window of `window` tokens: the policy's own
/// arithmetic (ratio 1 and no overhead, since the count is the provider's).
pub(crate) fn trigger_tokens(policy: Policy, window: u64) -> u64 {
    let config = super::compare_config(window, 1.0, 0);
    Setup::new(policy, config, Knobs::default())
        .budget()
        .trigger_tokens
        .max(0) as u64
}

/// Every automatic full compaction of `file` (whose agent ran under
/// `window`), against where the policy copying its agent would have
/// compacted.
pub(crate) fn of_session(session: &str, file: &SessionFile, window: u64) -> Vec<Trigger> {
    let Some(policy) = policy_of(&file.source.format) else {
        return Vec::new();
    };
    let trigger = trigger_tokens(policy, window);
    let mut start = 0;
    let mut out = Vec::new();
    for b in &file.compact_boundaries {
        if !b.is_full() {
            continue;
        }
        let stretch = start;
        start = b.message_index;
        if b.trigger.as_deref() == Some("manual") {
            continue;
        }
        // Requests of the stretch since the previous compaction, 0-based
        // positions in the session's requests.
        let before: Vec<(usize, u64)> = file
            .requests
            .iter()
            .enumerate()
            .filter(|(_, r)| r.message_index >= stretch && r.message_index < b.message_index)
            .map(|(i, r)| (i, r.prompt_tokens()))
            .collect();
        let request = before.last().map_or(0, |(i, _)| i + 1);
        let last = before.iter().rev().map(|(_, t)| *t).find(|&t| t > 0);
        let Some(agent_tokens) = b.pre_tokens.or(last) else {
            continue;
        };
        let policy_request = before
            .iter()
            .find(|(_, t)| *t >= trigger)
            .map(|(i, _)| i + 1)
            .or((agent_tokens >= trigger).then_some(request + 1));
        out.push(Trigger {
            session: session.to_string(),
            policy: policy.as_str(),
            version: b.agent_version.clone().unwrap_or_else(|| "?".into()),
            window,
            trigger_tokens: trigger,
            request: request + 1,
            agent_tokens,
            policy_request,
        });
    }
    out
}

/// The comparison of one policy against one version of its agent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct VersionTriggers {
    pub(crate) policy: &'static str,
    pub(crate) version: String,
    pub(crate) compactions: usize,
    /// The policy compacts before the same request as the agent, before an
    /// earlier one, or not by it.
    pub(crate) same: usize,
    pub(crate) early: usize,
    pub(crate) late: usize,
    /// Requests early (negative) over the compactions the policy makes by
    /// the agent's request: median, least and most.
    pub(crate) median_offset: Option<f64>,
    pub(crate) offset_range: Option<(i64, i64)>,
    /// Tokens below the window at which the agent compacted (median, least,
    /// most), and the policy's (its reserve).
    pub(crate) agent_room: (u64, u64, u64),
    pub(crate) policy_room: u64,
}

/// [`VersionTriggers`] per policy and version, versions in order.
pub(crate) fn by_version(rows: &[Trigger]) -> Vec<VersionTriggers> {
    let mut keys: Vec<(&'static str, &str)> = rows
        .iter()
        .map(|r| (r.policy, r.version.as_str()))
        .collect();
    keys.sort_by(|a, b| (a.0, version_key(a.1)).cmp(&(b.0, version_key(b.1))));
    keys.dedup();
    keys.into_iter()
        .map(|(policy, version)| {
            let of: Vec<&Trigger> = rows
                .iter()
                .filter(|r| r.policy == policy && r.version == version)
                .collect();
            let offsets: Vec<i64> = of.iter().filter_map(|r| r.offset()).collect();
            let mut rooms: Vec<u64> = of
                .iter()
                .map(|r| r.window.saturating_sub(r.agent_tokens))
                .collect();
            rooms.sort_unstable();
            let mut as_f64: Vec<f64> = offsets.iter().map(|&o| o as f64).collect();
            let mut rooms_f64: Vec<f64> = rooms.iter().map(|&r| r as f64).collect();
            VersionTriggers {
                policy,
                version: version.to_string(),
                compactions: of.len(),
                same: offsets.iter().filter(|&&o| o == 0).count(),
                early: offsets.iter().filter(|&&o| o < 0).count(),
                late: of.len() - offsets.len(),
                median_offset: median_of(&mut as_f64),
                offset_range: offsets
                    .iter()
                    .min()
                    .zip(offsets.iter().max())
                    .map(|(a, b)| (*a, *b)),
                agent_room: (
                    median_of(&mut rooms_f64).map_or(0, |m| m.round() as u64),
                    rooms.first().copied().unwrap_or(0),
                    rooms.last().copied().unwrap_or(0),
                ),
                policy_room: of
                    .first()
                    .map_or(0, |r| r.window.saturating_sub(r.trigger_tokens)),
            }
        })
        .collect()
}

/// A version's numbers for ordering (`2.1.6` before `2.1.39`).
fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '-'])
        .map(|p| p.parse().unwrap_or(u64::MAX))
        .collect()
}

/// The table `calibrate` prints.
pub(crate) fn write_text(out: &mut dyn Write, rows: &[Trigger]) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "peer policies against the agents they copy: where each would compact, at the agent's own automatic compactions (recorded prompt tokens, the session's window, the policy's default knobs)"
    )?;
    let mut t = table(vec![
        "policy",
        "version",
        "compactions",
        "same",
        "earlier",
        "later",
        "requests early (range)",
        "agent's room (range)",
        "policy's room",
    ]);
    for v in by_version(rows) {
        t.add_row(vec![
            comfy_table::Cell::new(v.policy),
            comfy_table::Cell::new(&v.version),
            right(v.compactions.to_string()),
            right(v.same.to_string()),
            right(v.early.to_string()),
            right(v.late.to_string()),
            right(match (v.median_offset, v.offset_range) {
                (Some(m), Some((lo, hi))) => format!("{m:+} ({lo:+}…{hi:+})"),
                _ => NONE.to_string(),
            }),
            right(format!(
                "{} ({}…{})",
                whole(v.agent_room.0),
                whole(v.agent_room.1),
                whole(v.agent_room.2)
            )),
            right(whole(v.policy_room)),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "same / earlier / later: the policy compacts before the agent's request, before an earlier one, or not by it (the agent compacted below the policy's trigger); room: tokens below the window where the agent compacted (its count), and the policy's trigger\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::session_file::{CompactBoundary, RequestUsage};

    fn request(message_index: usize, prompt: u64) -> RequestUsage {
        RequestUsage {
            message_index,
            input_tokens: prompt,
            ..RequestUsage::default()
        }
    }

    fn log(prompts: &[u64], boundaries: Vec<CompactBoundary>) -> SessionFile {
        let mut f = SessionFile {
            requests: prompts
                .iter()
                .enumerate()
                .map(|(i, &p)| request(2 * i + 1, p))
                .collect(),
            compact_boundaries: boundaries,
            ..SessionFile::default()
        };
        f.source.format = FORMAT_CLAUDE_CODE.into();
        f
    }

    fn boundary(message_index: usize, pre: Option<u64>, trigger: &str) -> CompactBoundary {
        CompactBoundary {
            message_index,
            pre_tokens: pre,
            trigger: Some(trigger.into()),
            agent_version: Some("2.1.6".into()),
            ..CompactBoundary::default()
        }
    }

    #[test]
    fn the_policy_fires_where_the_recorded_prompt_reaches_its_trigger() {
        assert_eq!(trigger_tokens(Policy::ClaudeCode, 200_000), 167_000);
        assert_eq!(trigger_tokens(Policy::Codex, 258_400), 232_560);
        // Requests 1..=4 before the first boundary (message 8), 5..=6 after.
        let f = log(
            &[100_000, 168_000, 150_000, 160_000, 20_000, 150_000],
            vec![
                boundary(8, Some(166_000), "auto"),
                boundary(12, Some(170_000), "auto"),
            ],
        );
        let rows = of_session("s", &f, 200_000);
        assert_eq!(rows.len(), 2);
        // The agent compacted before request 5; the policy before request 2.
        assert_eq!((rows[0].request, rows[0].policy_request), (5, Some(2)));
        assert_eq!(rows[0].offset(), Some(-3));
        // Before request 7: only the agent's own count (170k) reaches 167k.
        assert_eq!((rows[1].request, rows[1].offset()), (7, Some(0)));
        let v = by_version(&rows);
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].same, v[0].early, v[0].late), (1, 1, 0));
        assert_eq!(v[0].agent_room, (32_000, 30_000, 34_000));
        assert_eq!(v[0].policy_room, 33_000);
    }

    #[test]
    fn a_compaction_below_the_trigger_is_late_and_manual_ones_are_left_out() {
        let f = log(
            &[100_000, 150_000, 20_000, 30_000],
            vec![
                boundary(4, Some(155_000), "auto"),
                boundary(8, Some(31_000), "manual"),
            ],
        );
        let rows = of_session("s", &f, 200_000);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].request, rows[0].offset()), (3, None));
        let v = by_version(&rows);
        assert_eq!((v[0].late, v[0].median_offset), (1, None));
    }

    #[test]
    fn versions_sort_by_their_numbers() {
        let mut v = ["2.1.39", "2.0.76", "2.1.6", "2.1.150"];
        v.sort_by_key(|s| version_key(s));
        assert_eq!(v, ["2.0.76", "2.1.6", "2.1.39", "2.1.150"]);
    }
}
