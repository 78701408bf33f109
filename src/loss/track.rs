//! Following a replay: which record message each history position holds,
//! when each result lost text and what text it kept, and which record
//! messages each summary left in the history. Then, once the replay is
//! over, which of those losses the rest of the record needed.

use foldhash::HashMap;
use rayon::prelude::*;
use std::sync::Arc;

use crate::engine::{Compaction, EditKind};
use crate::replay::RequestFacts;
use crate::transcript::{BlockType, Message, Role, Text};

use super::index::{RecordIndex, NONE};
use super::refetch::{self, Model};
use super::Loss;

/// A result that lost text at a request: what it kept then (`None`: all
/// of it gone, summarised away).
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub(crate) request: u32,
    pub(crate) message: u32,
    pub(crate) block: u32,
    pub(crate) kept: Option<Text>,
}

/// From `from` on (until the next epoch), the record messages in the
/// history are those from `floor` on, plus `carried`.
/// `summary`: the tokens the summary itself shows (a real summary's
/// text); `None` for the offline stand-in, which is assumed to keep none.
#[derive(Clone, Debug)]
pub(crate) struct Epoch {
    pub(crate) from: u32,
    pub(crate) floor: u32,
    pub(crate) carried: Vec<u32>,
    pub(crate) summary: Option<Arc<[u32]>>,
}

/// What one replay under one policy lost, as it happened.
pub(crate) struct Tracker<'r> {
    record: &'r [Arc<Message>],
    /// Per position of the working history: its record message, or NONE.
    origins: Vec<u32>,
    /// Record messages already placed in `origins`.
    appended: usize,
    events: Vec<Event>,
    epochs: Vec<Epoch>,
    /// Record message by address, built the first time a summary carries
    /// messages (Codex).
    by_address: Option<HashMap<usize, u32>>,
    /// Per request: the tokens the replay sent (what a re-fetch would read
    /// again).
    context: Vec<i64>,
}

impl<'r> Tracker<'r> {
    pub(crate) fn new(record: &'r [Arc<Message>]) -> Tracker<'r> {
        Tracker {
            record,
            origins: Vec::new(),
            appended: 0,
            events: Vec::new(),
            epochs: Vec::new(),
            by_address: None,
            context: Vec::new(),
        }
    }

    /// Whether nothing was lost.
    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Takes in one request: `history` as sent, after compaction `c`.
    pub(crate) fn observe(&mut self, r: &RequestFacts, history: &[Arc<Message>], c: &Compaction) {
        let request = r.request as u32;
        if self.context.len() <= r.request {
            self.context.resize(r.request + 1, 0);
        }
        self.context[r.request] = r.after;
        let at = r.message_index;
        self.origins.extend((self.appended..at).map(|i| i as u32));
        self.appended = at;
        let Some(cut) = c.cut else {
            // Rewritten in place: positions are unchanged.
            let input = std::mem::take(&mut self.origins);
            self.record_edits(request, &input, history, 0, 0, c);
            self.origins = if input.len() == history.len() {
                input
            } else {
                // Not the shape the Compactor contract promises.
                vec![NONE; history.len()]
            };
            return;
        };
        let input = std::mem::take(&mut self.origins);
        let cut = cut.min(input.len());
        let tail = input.len() - cut;
        let Some(summary_at) = history.len().checked_sub(tail + 1) else {
            // Not the shape the Compactor contract promises: lose track of
            // positions rather than misattribute losses.
            self.origins = vec![NONE; history.len()];
            return;
        };
        let carried: Vec<u32> = history[..summary_at]
            .iter()
            .map(|m| self.address_of(m))
            .collect();
        for &i in &input[..cut] {
            if i != NONE && !carried.contains(&i) {
                self.summarized(request, i);
            }
        }
        self.record_edits(request, &input, history, summary_at + 1, cut, c);
        let mut origins = carried;
        origins.push(NONE);
        origins.extend_from_slice(&input[cut..]);
        self.epochs.push(Epoch {
            from: request,
            floor: origins.get(summary_at + 1).copied().unwrap_or(at as u32),
            carried: origins[..summary_at]
                .iter()
                .copied()
                .filter(|&i| i != NONE)
                .collect(),
            summary: None,
        });
        self.origins = origins;
    }

    /// The results compaction `c` rewrote in place. `input` holds the
    /// origins of the history it compacted; input position `p >= cut` is
    /// history position `offset + p - cut`.
    fn record_edits(
        &mut self,
        request: u32,
        input: &[u32],
        history: &[Arc<Message>],
        offset: usize,
        cut: usize,
        c: &Compaction,
    ) {
        for e in &c.edits {
            let rewrote_result = matches!(
                e.kind,
                EditKind::HeadKept | EditKind::Stubbed | EditKind::Superseded
            );
            if !rewrote_result || e.message < cut {
                continue;
            }
            let (Some(&origin), Some(block)) = (input.get(e.message), e.block) else {
                continue;
            };
            let Some(shown) = history.get(offset + e.message - cut) else {
                continue;
            };
            if origin == NONE {
                continue;
            }
            if let Some((b, kept)) = self.record_block(origin, shown, block) {
                self.events.push(Event {
                    request,
                    message: origin,
                    block: b,
                    kept: Some(kept),
                });
            }
        }
    }

    /// Every result of record message `i`, summarised away at `request`.
    fn summarized(&mut self, request: u32, i: u32) {
        let m = &self.record[i as usize];
        if m.role != Role::Tool {
            return;
        }
        for (j, b) in m.content.iter().enumerate() {
            if b.kind == BlockType::ToolResult {
                self.events.push(Event {
                    request,
                    message: i,
                    block: j as u32,
                    kept: None,
                });
            }
        }
    }

    /// The record message a carried message is, by address.
    fn address_of(&mut self, m: &Arc<Message>) -> u32 {
        let record = self.record;
        let map = self.by_address.get_or_insert_with(|| {
            record
                .iter()
                .enumerate()
                .map(|(i, m)| (Arc::as_ptr(m) as usize, i as u32))
                .collect()
        });
        map.get(&(Arc::as_ptr(m) as usize)).copied().unwrap_or(NONE)
    }

    /// The block of record message `origin` that block `block` of `shown`
    /// is, and the text it shows: by call id, else by its place among the
    /// message's results (results are rewritten, never added or removed).
    fn record_block(&self, origin: u32, shown: &Message, block: usize) -> Option<(u32, Text)> {
        let b = shown.content.get(block)?;
        if b.kind != BlockType::ToolResult {
            return None;
        }
        let kept = b.text.clone().unwrap_or_else(|| Arc::from(&[][..]));
        let record = &self.record[origin as usize];
        let results = Message::tool_result_indices;
        if let Some(id) = &b.tool_call_id {
            if let Some(j) = record.content.iter().position(|r| {
                r.kind == BlockType::ToolResult && r.tool_call_id.as_ref() == Some(id)
            }) {
                return Some((j as u32, kept));
            }
        }
        let nth = results(shown).iter().position(|&j| j == block)?;
        let j = *results(record).get(nth)?;
        Some((j as u32, kept))
    }

    /// What the losses cost the rest of the record, the expected
    /// re-fetches priced by `model`.
    pub(crate) fn evaluate(self, index: &RecordIndex, model: &Model) -> Loss {
        Evaluation::new(self.events, self.epochs, index).run(self.record, &self.context, model)
    }
}

/// How many of `n` results one task judges: a few tasks per thread, and
/// none of fewer than 64 results (below that, handing out the work costs
/// more than it saves).
fn run_length(n: usize) -> usize {
    n.div_ceil(4 * rayon::current_num_threads()).max(64)
}

/// The items of sorted `a` in neither sorted `b` nor sorted `c`, in one
/// pass over the three.
fn difference(a: &[u32], b: &[u32], c: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    let (mut j, mut k) = (0, 0);
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j < b.len() && b[j] == x {
            continue;
        }
        while k < c.len() && c[k] < x {
            k += 1;
        }
        if k < c.len() && c[k] == x {
            continue;
        }
        out.push(x);
    }
    out
}

/// Sorted `a` and sorted `b` (disjoint) merged, in one pass over both.
fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// A result's losses: per request, the tokens it lost then.
struct Lost {
    unit: u32,
    /// Where the result is in the record.
    message: u32,
    block: u32,
    first: u32,
    changes: Vec<(u32, Vec<u32>)>,
}

/// How the loss measure judged one lost result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) unit: u32,
    pub(crate) message: u32,
    pub(crate) block: u32,
    /// The request that first lost it.
    pub(crate) first: u32,
    pub(crate) needed_again: bool,
    /// The same call made again (tool name and arguments).
    pub(crate) refetched: bool,
    pub(crate) still_needed: bool,
}

/// Judges lost results given as events, under the history `epochs` say:
/// the loss measure's own verdict on each, in unit order.
pub(crate) fn judge(events: Vec<Event>, epochs: Vec<Epoch>, index: &RecordIndex) -> Vec<Verdict> {
    let e = Evaluation::new(events, epochs, index);
    let mut seen = HashMap::default();
    e.lost
        .iter()
        .map(|l| Verdict {
            unit: l.unit,
            message: l.message,
            block: l.block,
            first: l.first,
            needed_again: e.needed_again(l, &mut seen),
            refetched: e.refetched(l),
            still_needed: e.still_needed(l),
        })
        .collect()
}

impl Lost {
    /// The losses of one result from its events (`(unit, event)`, all of
    /// one unit, by request).
    fn of(events: &[(u32, Event)], index: &RecordIndex) -> Lost {
        let unit = events[0].0;
        let all = index.unit_tokens(unit);
        let mut lost = Lost {
            unit,
            message: events[0].1.message,
            block: events[0].1.block,
            first: events[0].1.request,
            changes: Vec::new(),
        };
        let mut gone: Vec<u32> = Vec::new();
        // The text the previous event kept: a result cut the same way
        // again (each request re-cuts a stale result to the same head)
        // loses nothing new, and is not tokenized again.
        let mut previous: Option<&Text> = None;
        for (k, (_, e)) in events.iter().enumerate() {
            if k > 0 && (e.kept.as_ref() == previous || gone.len() == all.len()) {
                // Kept the same text, or all its tokens are gone already.
                continue;
            }
            previous = e.kept.as_ref();
            let kept = e
                .kept
                .as_ref()
                .map(|t| index.kept_tokens(unit, t))
                .unwrap_or_default();
            let newly = difference(all, &kept, &gone);
            if newly.is_empty() {
                continue;
            }
            gone = union(&gone, &newly);
            lost.changes.push((e.request, newly));
        }
        lost
    }
}

struct Evaluation<'a> {
    index: &'a RecordIndex,
    lost: Vec<Lost>,
    by_unit: HashMap<u32, usize>,
    epochs: Vec<Epoch>,
}

impl<'a> Evaluation<'a> {
    fn new(events: Vec<Event>, epochs: Vec<Epoch>, index: &'a RecordIndex) -> Evaluation<'a> {
        let mut keyed: Vec<(u32, Event)> = events
            .into_iter()
            .filter_map(|e| index.result_unit(e.message, e.block).map(|u| (u, e)))
            .collect();
        keyed.sort_by_key(|(u, e)| (*u, e.request));
        // Each result's events are judged apart from the others', so on
        // rayon's threads, in order.
        let results: Vec<&[(u32, Event)]> = keyed.chunk_by(|a, b| a.0 == b.0).collect();
        let lost: Vec<Lost> = results
            .par_iter()
            .with_min_len(run_length(results.len()))
            .map(|events| Lost::of(events, index))
            .collect();
        let by_unit = lost.iter().enumerate().map(|(i, l)| (l.unit, i)).collect();
        Evaluation {
            index,
            lost,
            by_unit,
            epochs,
        }
    }

    fn run(self, record: &[Arc<Message>], context: &[i64], model: &Model) -> Loss {
        // Each result is judged apart from the others, so on rayon's
        // threads, in a few long runs of results: what a run learns of a
        // token's visibility it keeps for its next results (the same
        // answer whichever run asks), and a small session is not cut into
        // more tasks than it is worth.
        let verdicts: Vec<Vec<(bool, bool, bool)>> = self
            .lost
            .par_chunks(run_length(self.lost.len()))
            .map(|run| {
                let mut seen = HashMap::default();
                run.iter()
                    .map(|l| {
                        (
                            self.refetched(l),
                            self.needed_again(l, &mut seen),
                            self.still_needed(l),
                        )
                    })
                    .collect()
            })
            .collect();
        let mut loss = Loss {
            results_lost: self.lost.len() as u64,
            ..Loss::default()
        };
        // Summed in record order, so that the expectation's last bits do
        // not depend on how the runs were scheduled.
        for (l, (refetched, needed, still)) in self.lost.iter().zip(verdicts.into_iter().flatten())
        {
            loss.refetched += u64::from(refetched);
            loss.needed_again += u64::from(needed);
            loss.still_needed += u64::from(still);
            let (kind, result_tokens, call_tokens) =
                refetch::describe(record, l.message as usize, l.block as usize);
            let at = context.get(l.first as usize).copied().unwrap_or(0);
            loss.refetch.add(
                model.probability(kind, still),
                at,
                result_tokens,
                call_tokens,
            );
        }
        loss
    }

    /// Whether the call of lost result `l` was made again from the request
    /// that first lost it on.
    fn refetched(&self, l: &Lost) -> bool {
        let call = self.index.units[l.unit as usize].call;
        if call == NONE {
            return false;
        }
        let from = self.index.message_of(l.first);
        let calls = self.index.calls(call);
        calls.partition_point(|&m| m < from) < calls.len()
    }

    /// Whether result `l` was still current where it was lost (for a file
    /// read: its file not edited or written since) and either a later
    /// assistant message uses a token it lost, visible elsewhere or not,
    /// or (a file read) its file is edited or written later, which the
    /// agent may do only once it has read the file again.
    fn still_needed(&self, l: &Lost) -> bool {
        let from = self.index.message_of(l.first);
        if !self.index.current_at(l.unit, from) {
            return false;
        }
        if self.index.edited_after(l.unit, from) {
            return true;
        }
        l.changes.iter().any(|(request, tokens)| {
            let from = self.index.message_of(*request);
            tokens
                .iter()
                .any(|&t| self.index.uses(t).last().is_some_and(|&m| m >= from))
        })
    }

    /// Whether a token lost from result `l` was used later while the model
    /// could see it nowhere else. `seen` remembers, per `(token, assistant
    /// message)`, whether the token was visible elsewhere then.
    fn needed_again(&self, l: &Lost, seen: &mut HashMap<(u32, u32), bool>) -> bool {
        for (request, tokens) in &l.changes {
            let from = self.index.message_of(*request);
            for &t in tokens {
                let uses = self.index.uses(t);
                let start = uses.partition_point(|&m| m < from);
                for &j in &uses[start..] {
                    let visible = *seen
                        .entry((t, j))
                        .or_insert_with(|| self.visible_elsewhere(t, j));
                    if !visible {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether token `t` was in the history answered by assistant message
    /// `j`, in a block that still showed it. A result that lost `t` by
    /// then does not show it, the one being judged included.
    fn visible_elsewhere(&self, t: u32, j: u32) -> bool {
        let q = self.index.request_of(j);
        let epoch = self
            .epochs
            .partition_point(|e| e.from <= q)
            .checked_sub(1)
            .map(|i| &self.epochs[i]);
        if epoch
            .and_then(|e| e.summary.as_ref())
            .is_some_and(|s| s.binary_search(&t).is_ok())
        {
            return true;
        }
        let units = &self.index.units;
        let postings = self.index.postings(t);
        let end = postings.partition_point(|&u| units[u as usize].message < j);
        for &u in postings[..end].iter().rev() {
            let m = units[u as usize].message;
            if let Some(e) = epoch {
                if m < e.floor && !e.carried.contains(&m) {
                    // Summarised away; so is everything older, but for
                    // messages a summary carried.
                    if e.carried.iter().all(|&c| c > m) {
                        return false;
                    }
                    continue;
                }
            }
            if let Some(&i) = self.by_unit.get(&u) {
                let lost_by_then = self.lost[i]
                    .changes
                    .iter()
                    .take_while(|(r, _)| *r <= q)
                    .any(|(_, toks)| toks.binary_search(&t).is_ok());
                if lost_by_then {
                    continue;
                }
            }
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Block;

    fn message(role: Role, block: Block) -> Arc<Message> {
        Arc::new(Message::new(role, vec![block], false, None))
    }

    /// A file read, removed at request 2, in a record where the file is
    /// edited after the removal (`edit_at` 5) or before it (3): whether
    /// `still needed` flags it. No assistant message quotes the read.
    fn still_needed_with_edit_at(edit_at: usize) -> bool {
        let read = r#"{"path":"/src/parser.rs"}"#;
        let edit = r#"{"path":"/src/parser.rs","old_string":"a","new_string":"b"}"#;
        let text = |t: &str| message(Role::Assistant, Block::text(t.as_bytes().to_vec()));
        let call = |id: &str, name, args| message(Role::Assistant, Block::tool_use(id, name, args));
        let result = |id: &str, t: &str| {
            let b = Block::tool_result(Some(id.into()), t.as_bytes().to_vec(), false);
            message(Role::Tool, b)
        };
        let mut record = vec![
            Arc::new(Message::user(&b"fix the parser"[..])),
            call("a", "read_file", read),
            result(
                "a",
                "fn parse_expression_tree() { unreachable_branch_seven }",
            ),
            text("reading on"),
            Arc::new(Message::user(&b"go on"[..])),
            text("now the change"),
        ];
        record[edit_at] = call("b", "edit_file", edit);
        record.insert(edit_at + 1, result("b", "edited"));
        let index = RecordIndex::build(&record);
        let removed = Event {
            request: 2,
            message: 2,
            block: 0,
            kept: None,
        };
        let epoch = Epoch {
            from: 2,
            floor: 3,
            carried: Vec::new(),
            summary: None,
        };
        let verdicts = judge(vec![removed], vec![epoch], &index);
        assert_eq!(verdicts.len(), 1);
        verdicts[0].still_needed
    }

    #[test]
    fn a_current_read_whose_file_is_edited_after_it_was_lost_is_still_needed() {
        // Claude Code edits only a file read in the context: the edit after
        // the removal needs the read again, though no message quotes it.
        assert!(still_needed_with_edit_at(5));
        // Edited before it was lost, it showed a file that is gone.
        assert!(!still_needed_with_edit_at(3));
    }

    #[test]
    fn difference_keeps_what_neither_other_list_holds() {
        let lists: [&[u32]; 6] = [
            &[],
            &[1],
            &[0, 2, 4, 6, 8],
            &[1, 2, 3],
            &[5, 6, 7, 8, 9],
            &[0, 9],
        ];
        for a in lists {
            for b in lists {
                for c in lists {
                    let want: Vec<u32> = a
                        .iter()
                        .copied()
                        .filter(|x| !b.contains(x) && !c.contains(x))
                        .collect();
                    assert_eq!(difference(a, b, c), want, "{a:?} - {b:?} - {c:?}");
                }
            }
        }
    }
}
