//! The loss measure held against what real agents did after their own
//! compactions.
//!
//! An imported session records where its agent compacted
//! (`session.json`'s `compact_boundaries`, with the summary it carried on
//! under) and everything it did afterwards. At each full compaction every
//! tool result in the context before it was removed; at a micro-compaction,
//! the results it names as cleared. For each removed result this module
//! asks the loss measure of [`super`] for its verdict twice, as a replay
//! would (`needed again` under the offline stand-in summary, which keeps no
//! token) and with the real summary's text counted as visible, and sets it
//! against what the agent did: which of its distinctive tokens it used
//! afterwards, whether the summary mentions it, and whether it fetched it
//! again ([`super::refetch::fetched_again`]), and what those re-fetches
//! cost by the recorded usage.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use super::index::{RecordIndex, NONE};
use super::refetch::{self, Model, ResultKind};
use super::tokens::for_each_token;
use super::track::{judge, Epoch, Event, Verdict};
use crate::transcript::session_file::{CompactBoundary, SessionFile};
use crate::transcript::{BlockType, Message, Role, Text};

/// One removed result and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RemovedResult {
    /// The tool message holding it.
    pub(crate) message_index: usize,
    pub(crate) tool: String,
    pub(crate) kind: ResultKind,
    /// The file it read or wrote, else the start of the call's arguments.
    pub(crate) target: String,
    /// Whether the summary names it (its file's name, or a distinctive
    /// token of its call's arguments).
    pub(crate) mentioned: bool,
    /// Its distinctive tokens the agent used after the compaction, and how
    /// many of those the summary holds.
    pub(crate) tokens_used_after: usize,
    pub(crate) tokens_in_summary: usize,
    /// The loss measure's verdict with the stand-in summary, and with the
    /// real summary's text counted as visible.
    pub(crate) needed_again: bool,
    pub(crate) needed_again_with_summary: bool,
    /// The loss measure's `refetched`: the same call made again.
    pub(crate) same_call_again: bool,
    /// The improved measure: still current, and a lost token used later.
    pub(crate) still_needed: bool,
    /// The assistant message that fetched it again, if one did.
    pub(crate) fetched_again_at: Option<usize>,
    /// Results removed by the same compaction after it (0: the last one
    /// before the compaction).
    pub(crate) recency: usize,
    /// A file read whose file was edited or written before the compaction.
    pub(crate) edited_since: bool,
}

/// One compaction of the source agent and what it cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RealCompaction {
    pub(crate) session: String,
    /// The group it is counted in (the path it was found under).
    pub(crate) source: String,
    /// 1-based among the session's compactions.
    pub(crate) number: usize,
    /// `full` or `microcompact`.
    pub(crate) kind: String,
    pub(crate) line: usize,
    pub(crate) message_index: usize,
    /// The request answered first after it.
    pub(crate) request: usize,
    pub(crate) trigger: Option<String>,
    pub(crate) pre_tokens: Option<u64>,
    pub(crate) summary_bytes: Option<u64>,
    pub(crate) compaction_file: Option<String>,
    /// Tool results in context before it that it removed.
    pub(crate) results: usize,
    pub(crate) mentioned: usize,
    /// Removed results with a distinctive token the agent used afterwards.
    pub(crate) used_after: usize,
    /// Distinct distinctive tokens of the removed results used afterwards,
    /// and how many of them the summary kept.
    pub(crate) tokens_used_after: usize,
    pub(crate) tokens_in_summary: usize,
    pub(crate) flagged: usize,
    pub(crate) flagged_with_summary: usize,
    pub(crate) still_needed: usize,
    pub(crate) refetched: usize,
    /// The requests that made the re-fetches, their share of the recorded
    /// tokens (prompt and output) and dollars (a request making several
    /// calls charges each call its share).
    pub(crate) refetch_requests: usize,
    pub(crate) refetch_tokens: u64,
    pub(crate) refetch_dollars: f64,
    /// A full compaction within one request of the agent's previous one
    /// (or of the session's start): the agent compacting at every request
    /// because its context cannot get below its trigger, which removes only
    /// what the last request brought. Its own misfire, kept out of the
    /// validation and of the re-fetch model's fit.
    pub(crate) misfire: bool,
    pub(crate) removed: Vec<RemovedResult>,
}

/// Every compaction of an imported session, measured. `session` and
/// `source` label the rows; `dollars` prices request `i` of
/// `file.requests` as recorded (the cost model's, `crate::cost::bill`).
pub(crate) fn analyze(
    messages: &[Arc<Message>],
    file: &SessionFile,
    session: &str,
    source: &str,
    dollars: &dyn Fn(usize) -> f64,
) -> Vec<RealCompaction> {
    if file.compact_boundaries.is_empty() {
        return Vec::new();
    }
    let index = RecordIndex::build(messages);
    let removals = Removals::of(messages, file, &index);
    let plain = judge(removals.events.clone(), removals.standin, &index);
    let seen: HashMap<(u32, u32), Verdict> = judge(removals.events, removals.with_summary, &index)
        .into_iter()
        .map(|v| ((v.message, v.block), v))
        .collect();
    let mut tally = Filling {
        messages,
        file,
        index: &index,
        dollars,
        usage: file
            .requests
            .iter()
            .enumerate()
            .map(|(i, r)| (r.message_index, i))
            .collect(),
        rows: file
            .compact_boundaries
            .iter()
            .enumerate()
            .map(|(k, b)| row(b, k, session, source, misfire(file, k)))
            .collect(),
        summaries: file
            .compact_boundaries
            .iter()
            .map(|b| Summary::new(b, &index))
            .collect(),
        used: vec![HashSet::new(); file.compact_boundaries.len()],
        kept: vec![HashSet::new(); file.compact_boundaries.len()],
        refetch_at: vec![HashSet::new(); file.compact_boundaries.len()],
    };
    for v in plain {
        let Some(&k) = removals.owner.get(&(v.message, v.block)) else {
            continue;
        };
        let with_summary = seen
            .get(&(v.message, v.block))
            .is_some_and(|w| w.needed_again);
        tally.add(k, &v, with_summary);
    }
    tally.finish()
}

/// The results the source agent's compactions removed, as events for the
/// loss measure, and the epochs they open: under the stand-in summary and
/// under the real one.
struct Removals {
    events: Vec<Event>,
    standin: Vec<Epoch>,
    with_summary: Vec<Epoch>,
    /// Per removed result: the compaction that removed it.
    owner: HashMap<(u32, u32), usize>,
}

impl Removals {
    fn of(messages: &[Arc<Message>], file: &SessionFile, index: &RecordIndex) -> Removals {
        let mut r = Removals {
            events: Vec::new(),
            standin: Vec::new(),
            with_summary: Vec::new(),
            owner: HashMap::new(),
        };
        let mut floor = 0usize;
        for (k, b) in file.compact_boundaries.iter().enumerate() {
            let at = b.message_index.min(messages.len());
            let request = b.requests_before as u32;
            let cleared: HashSet<&str> = b.cleared_tool_ids.iter().map(String::as_str).collect();
            for (i, m) in messages.iter().enumerate().take(at).skip(floor) {
                if m.role != Role::Tool {
                    continue;
                }
                for (j, blk) in m.content.iter().enumerate() {
                    if blk.kind != BlockType::ToolResult {
                        continue;
                    }
                    let key = (i as u32, j as u32);
                    let removed = b.is_full()
                        || blk
                            .tool_call_id
                            .as_deref()
                            .is_some_and(|id| cleared.contains(id));
                    if !removed || r.owner.contains_key(&key) {
                        continue;
                    }
                    r.owner.insert(key, k);
                    r.events.push(Event {
                        request,
                        message: key.0,
                        block: key.1,
                        // A micro-compaction leaves the message, empty.
                        kept: (!b.is_full()).then(|| Text::from(&[][..])),
                    });
                }
            }
            if b.is_full() {
                let epoch = Epoch {
                    from: request,
                    floor: at as u32,
                    carried: Vec::new(),
                    summary: None,
                };
                let tokens = index.tokens_of(b.summary.as_deref().unwrap_or("").as_bytes());
                r.with_summary.push(Epoch {
                    summary: Some(tokens.into()),
                    ..epoch.clone()
                });
                r.standin.push(epoch);
                floor = at;
            }
        }
        r
    }
}

/// The rows being filled, one per compaction, with what each counts by
/// distinct token or request.
struct Filling<'a> {
    messages: &'a [Arc<Message>],
    file: &'a SessionFile,
    index: &'a RecordIndex,
    dollars: &'a dyn Fn(usize) -> f64,
    /// The request answered by each assistant message, by message index.
    usage: HashMap<usize, usize>,
    rows: Vec<RealCompaction>,
    summaries: Vec<Summary>,
    used: Vec<HashSet<u32>>,
    kept: Vec<HashSet<u32>>,
    refetch_at: Vec<HashSet<usize>>,
}

impl Filling<'_> {
    /// Counts removed result `v` in compaction `k`'s row;
    /// `with_summary`: its verdict with the real summary visible.
    fn add(&mut self, k: usize, v: &Verdict, with_summary: bool) {
        let (messages, index) = (self.messages, self.index);
        let b = &self.file.compact_boundaries[k];
        let (message, block) = (v.message as usize, v.block as usize);
        let from = index.message_of(v.first);
        let call = refetch::call_of(messages, message, block);
        let tool = call
            .and_then(|c| c.tool_name.as_deref())
            .unwrap_or("")
            .to_string();
        let args = call.and_then(|c| c.tool_args.as_deref()).unwrap_or("");
        let path = refetch::file_path(args);
        let s = &self.summaries[k];
        let tokens: Vec<u32> = if from == NONE {
            Vec::new()
        } else {
            index
                .unit_tokens(v.unit)
                .iter()
                .copied()
                .filter(|&t| index.uses(t).last().is_some_and(|&m| m >= from))
                .collect()
        };
        let in_summary = tokens.iter().filter(|t| s.has(**t)).count();
        let fetched_again_at = refetch::fetched_again(messages, message, block, b.message_index);
        let r = RemovedResult {
            message_index: message,
            kind: ResultKind::of_tool(&tool),
            target: path
                .clone()
                .unwrap_or_else(|| args.chars().take(80).collect()),
            mentioned: s.mentions(path.as_deref(), args),
            tokens_used_after: tokens.len(),
            tokens_in_summary: in_summary,
            needed_again: v.needed_again,
            needed_again_with_summary: with_summary,
            same_call_again: v.refetched,
            fetched_again_at,
            recency: 0,
            edited_since: !index.current_at(v.unit, b.message_index as u32),
            still_needed: v.still_needed,
            tool,
        };
        let row = &mut self.rows[k];
        row.results += 1;
        row.mentioned += usize::from(r.mentioned);
        row.used_after += usize::from(!tokens.is_empty());
        row.flagged += usize::from(r.needed_again);
        row.still_needed += usize::from(r.still_needed);
        row.flagged_with_summary += usize::from(r.needed_again_with_summary);
        self.used[k].extend(tokens.iter().copied());
        self.kept[k].extend(tokens.iter().copied().filter(|t| s.has(*t)));
        row.removed.push(r);
        if let Some(at) = fetched_again_at {
            self.refetch(k, at);
        }
    }

    /// Compaction `k`'s removed result fetched again by assistant message
    /// `at`: that request's share of the recorded tokens and dollars (a
    /// request making several calls charges each call its share).
    fn refetch(&mut self, k: usize, at: usize) {
        let row = &mut self.rows[k];
        row.refetched += 1;
        self.refetch_at[k].insert(at);
        let calls = self.messages[at]
            .content
            .iter()
            .filter(|b| b.kind == BlockType::ToolUse)
            .count()
            .max(1);
        if let Some(&i) = self.usage.get(&at) {
            let u = &self.file.requests[i];
            let share = 1.0 / calls as f64;
            row.refetch_tokens +=
                ((u.prompt_tokens() + u.output_tokens) as f64 * share).round() as u64;
            row.refetch_dollars += (self.dollars)(i) * share;
        }
    }

    /// The rows with their distinct counts, each compaction's removed
    /// results in message order.
    fn finish(mut self) -> Vec<RealCompaction> {
        for (k, row) in self.rows.iter_mut().enumerate() {
            row.tokens_used_after = self.used[k].len();
            row.tokens_in_summary = self.kept[k].len();
            row.refetch_requests = self.refetch_at[k].len();
            row.removed.sort_by_key(|r| r.message_index);
            let n = row.removed.len();
            for (i, r) in row.removed.iter_mut().enumerate() {
                r.recency = n - 1 - i;
            }
        }
        self.rows
    }
}

/// Whether the agent's compaction `k` is a misfire of its own: an
/// automatic full one at most one request after its previous full one, or
/// after the session's start.
fn misfire(file: &SessionFile, k: usize) -> bool {
    let b = &file.compact_boundaries[k];
    let previous = file.compact_boundaries[..k]
        .iter()
        .rfind(|p| p.is_full())
        .map_or(0, |p| p.requests_before);
    // A `/compact` the user typed is theirs, however soon it came.
    let manual = b.trigger.as_deref() == Some("manual");
    b.is_full() && !manual && b.requests_before.saturating_sub(previous) <= 1
}

fn row(
    b: &CompactBoundary,
    k: usize,
    session: &str,
    source: &str,
    misfire: bool,
) -> RealCompaction {
    RealCompaction {
        session: session.to_string(),
        source: source.to_string(),
        number: k + 1,
        kind: b.kind.clone().unwrap_or_else(|| "full".into()),
        line: b.line,
        message_index: b.message_index,
        request: b.requests_before,
        trigger: b.trigger.clone(),
        pre_tokens: b.pre_tokens,
        summary_bytes: b.summary_bytes,
        compaction_file: b.compaction_file.clone(),
        results: 0,
        mentioned: 0,
        used_after: 0,
        tokens_used_after: 0,
        tokens_in_summary: 0,
        flagged: 0,
        flagged_with_summary: 0,
        still_needed: 0,
        refetched: 0,
        refetch_requests: 0,
        refetch_tokens: 0,
        refetch_dollars: 0.0,
        misfire,
        removed: Vec::new(),
    }
}

/// A compaction's summary as the measure reads it: its tokens the record
/// uses (sorted ids), and its text and every distinctive token in it, for
/// mentions.
struct Summary {
    ids: Vec<u32>,
    text: String,
    words: HashSet<Vec<u8>>,
}

impl Summary {
    fn new(b: &CompactBoundary, index: &RecordIndex) -> Summary {
        let text = b.summary.clone().unwrap_or_default();
        let mut words = HashSet::new();
        for_each_token(text.as_bytes(), |t| {
            words.insert(t.to_vec());
        });
        Summary {
            ids: index.tokens_of(text.as_bytes()),
            text,
            words,
        }
    }

    fn has(&self, t: u32) -> bool {
        self.ids.binary_search(&t).is_ok()
    }

    /// Whether it names a result: a file by its name (a summary writes
    /// paths relative, or only the name), another call by a distinctive
    /// token of its arguments.
    fn mentions(&self, path: Option<&str>, args: &str) -> bool {
        if self.text.is_empty() {
            return false;
        }
        if let Some(p) = path {
            let name = p.rsplit(['/', '\\']).next().unwrap_or(p);
            return !name.is_empty() && self.text.contains(name);
        }
        let mut found = false;
        for_each_token(args.as_bytes(), |t| {
            found |= self.words.contains(t);
        });
        found
    }
}

/// The validation figures of a set of compactions: how well each way of
/// flagging removed results predicts the real re-fetches.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Tally {
    pub(crate) source: String,
    /// Full compactions and micro-compactions counted.
    pub(crate) compactions: usize,
    /// The agent's own misfires ([`RealCompaction::misfire`]), not counted.
    pub(crate) misfires: usize,
    pub(crate) removed: usize,
    pub(crate) refetched: usize,
    /// Per predictor: `(flagged, flagged and re-fetched)`.
    pub(crate) standin: (usize, usize),
    pub(crate) with_summary: (usize, usize),
    pub(crate) still_needed: (usize, usize),
    pub(crate) mentioned: (usize, usize),
    /// Tokens of removed results used afterwards, and kept by the summary
    /// (full compactions only).
    pub(crate) tokens_used_after: usize,
    pub(crate) tokens_in_summary: usize,
    /// What [`Model`] expected, for the cross-source check.
    pub(crate) expected: f64,
    pub(crate) refetch_dollars: f64,
}

/// One predictor's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Scores {
    pub(crate) flagged: usize,
    pub(crate) hits: usize,
    /// Re-fetch rate of the flagged over that of the rest (`None` when
    /// either side is empty or the rest had none).
    pub(crate) lift: Option<f64>,
    /// Share of real re-fetches that were flagged.
    pub(crate) recall: Option<f64>,
    /// Share of flags that were re-fetched.
    pub(crate) precision: Option<f64>,
}

fn ratio(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl Tally {
    pub(crate) fn new(source: &str) -> Tally {
        Tally {
            source: source.to_string(),
            ..Tally::default()
        }
    }

    /// Counts one compaction in.
    pub(crate) fn add(&mut self, c: &RealCompaction) {
        if c.misfire {
            self.misfires += 1;
            return;
        }
        self.compactions += 1;
        for r in &c.removed {
            let hit = r.fetched_again_at.is_some();
            self.removed += 1;
            self.refetched += usize::from(hit);
            for (p, flag) in [
                (&mut self.standin, r.needed_again),
                (&mut self.with_summary, r.needed_again_with_summary),
                (&mut self.still_needed, r.still_needed),
                (&mut self.mentioned, r.mentioned),
            ] {
                p.0 += usize::from(flag);
                p.1 += usize::from(flag && hit);
            }
        }
        if c.kind == "full" {
            self.tokens_used_after += c.tokens_used_after;
            self.tokens_in_summary += c.tokens_in_summary;
        }
        self.refetch_dollars += c.refetch_dollars;
    }

    /// Adds what `model` expects of `c`'s removed results.
    pub(crate) fn add_expected(&mut self, c: &RealCompaction, model: &Model) {
        self.expected += model.expected(c.removed.iter().map(|r| (r.kind, r.still_needed)));
    }

    /// The figures of one predictor.
    pub(crate) fn scores(&self, (flagged, hits): (usize, usize)) -> Scores {
        let rest = self.removed - flagged;
        let rest_hits = self.refetched - hits;
        let lift = match (ratio(hits, flagged), ratio(rest_hits, rest)) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        Scores {
            flagged,
            hits,
            lift,
            recall: ratio(hits, self.refetched),
            precision: ratio(hits, flagged),
        }
    }

    /// The share of later-used tokens the real summaries kept (the stand-in
    /// assumes none).
    pub(crate) fn retention(&self) -> Option<f64> {
        ratio(self.tokens_in_summary, self.tokens_used_after)
    }
}

/// The observations a re-fetch model is fitted on: per removed result, its
/// kind, the verdict of `still needed`, and whether it was fetched again.
pub(crate) fn observations(
    rows: &[RealCompaction],
) -> impl Iterator<Item = (ResultKind, bool, bool)> + '_ {
    rows.iter().flat_map(|c| {
        c.removed
            .iter()
            .map(|r| (r.kind, r.still_needed, r.fetched_again_at.is_some()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(requests_before: usize, trigger: &str, kind: Option<&str>) -> CompactBoundary {
        CompactBoundary {
            requests_before,
            trigger: Some(trigger.into()),
            kind: kind.map(str::to_string),
            ..CompactBoundary::default()
        }
    }

    #[test]
    fn a_full_compaction_one_request_after_the_last_is_the_agents_misfire() {
        let file = SessionFile {
            compact_boundaries: vec![
                at(1, "auto", None),  // at the session's start
                at(40, "auto", None), // a real one
                at(
                    40,
                    "auto",
                    Some(crate::transcript::session_file::MICROCOMPACT),
                ), // a micro-compaction: not counted
                at(41, "auto", None), // one request after the last full one
                at(42, "manual", None), // the user's, however soon
                at(80, "auto", None),
            ],
            ..SessionFile::default()
        };
        let misfires: Vec<bool> = (0..6).map(|k| misfire(&file, k)).collect();
        assert_eq!(misfires, [true, false, false, true, false, false]);
    }
}
