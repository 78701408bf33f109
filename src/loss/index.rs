//! The record, tokenized once: which distinctive tokens each block holds,
//! where each token occurs, where the assistant used it, and where each
//! call was made. Built once per session and shared by every policy and
//! config replayed over it.

use foldhash::HashMap;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::transcript::{pool, Block, BlockType, Message, Role, Str, Text};

use super::refetch;
use super::tokens::for_each_token;
use super::vocab::Vocab;

/// A sentinel for "none" in the `u32` tables.
pub(crate) const NONE: u32 = u32::MAX;

/// Lists of `u32` indexed by a dense id, stored flat.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lists {
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Lists {
    /// Builds `n` lists from `(id, item)` pairs, each list keeping the
    /// pairs' order.
    fn build(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Lists {
        let mut starts = vec![0u32; n + 1];
        for (id, _) in pairs.clone() {
            starts[id as usize + 1] += 1;
        }
        Self::filled(starts, pairs)
    }

    /// The lists that hold, for each item of these lists, the ids of the
    /// lists it is in, ascending: `n` of them, items below `n`.
    fn by_item(n: usize, lists: &Lists) -> Lists {
        let mut starts = vec![0u32; n + 1];
        for &item in &lists.items {
            starts[item as usize + 1] += 1;
        }
        let pairs = lists.starts.windows(2).enumerate().flat_map(|(id, w)| {
            lists.items[w[0] as usize..w[1] as usize]
                .iter()
                .map(move |&item| (item, id as u32))
        });
        Self::filled(starts, pairs)
    }

    /// The lists whose lengths `starts` holds, shifted by one (the count
    /// of list `id` at `id + 1`), filled from `(id, item)` pairs in order.
    fn filled(mut starts: Vec<u32>, pairs: impl Iterator<Item = (u32, u32)>) -> Lists {
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut fill = starts.clone();
        let mut items = vec![0u32; *starts.last().unwrap_or(&0) as usize];
        for (id, item) in pairs {
            let at = &mut fill[id as usize];
            items[*at as usize] = item;
            *at += 1;
        }
        Lists { starts, items }
    }

    /// List `id`.
    pub(crate) fn get(&self, id: u32) -> &[u32] {
        let id = id as usize;
        match (self.starts.get(id), self.starts.get(id + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// What a block is to the loss measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnitKind {
    /// A tool result: what a policy shortens or removes.
    Result,
    /// Assistant text or a tool call: where the model uses a token.
    Use,
    /// Anything else the model reads (user and system text).
    Other,
}

/// One block of the record with text (thinking and attachments are left
/// out: neither is where a model shows what it used).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unit {
    pub(crate) message: u32,
    pub(crate) kind: UnitKind,
    /// For a result, the key of its call (tool name and arguments), else
    /// [`NONE`].
    pub(crate) call: u32,
}

/// The record's tokens, occurrences, uses and calls.
#[derive(Debug, Default)]
pub(crate) struct RecordIndex {
    vocab: Vocab,
    pub(crate) units: Vec<Unit>,
    /// Per unit: its distinct tokens, sorted.
    unit_tokens: Lists,
    /// Per token: the units holding it, in record order.
    postings: Lists,
    /// Per token: the assistant messages using it, ascending, once each.
    uses: Lists,
    /// Per call key: the messages making that call, ascending.
    calls: Lists,
    /// `(message, block)` of each tool result → its unit.
    results: HashMap<(u32, u32), u32>,
    /// Per message: the assistant messages before it, which for an
    /// assistant message is the number of the request it answers.
    request_of: Vec<u32>,
    /// Per request: the assistant message answering it.
    message_of: Vec<u32>,
    /// Per unit: the first unit with the same text (itself if none).
    same_as: Vec<u32>,
    /// Per file-read result: the first message after it that edits or
    /// writes the same file, an edit that failed left out (see
    /// [`super::refetch`]); from there on what it showed is stale.
    stale_from: HashMap<u32, u32>,
    /// What results kept, tokenized: by the first unit of the result's
    /// text, each kept text seen and its tokens. Every config of a sweep
    /// cuts a result to the same head, and so does a policy every copy of
    /// a repeated result.
    kept: Mutex<HashMap<u32, Vec<KeptTokens>>>,
}

/// A text a result kept, and its tokens.
type KeptTokens = (Text, Arc<[u32]>);

/// How many different kept texts of one result are remembered.
const KEPT_PER_RESULT: usize = 4;

impl RecordIndex {
    /// Tokenizes `record` once, keeping only the tokens some assistant
    /// message uses: a loss can matter only through a use (see
    /// [`super`]), so a token no assistant message holds cannot make a
    /// result needed again, and its occurrences need not be known. The
    /// assistant's own blocks are tokenized first, interning what they use;
    /// every other block is then only looked up, which spares interning
    /// and listing the bulk of the record's tokens (those of the results
    /// the model never quoted).
    pub(crate) fn build(record: &[Arc<Message>]) -> RecordIndex {
        Self::build_unless(record, &AtomicBool::new(false)).unwrap_or_default()
    }

    /// [`RecordIndex::build`], given up (`None`) as soon as `stop` is set:
    /// a build started on speculation, before it is known that anything
    /// was lost, is stopped when nothing was.
    pub(crate) fn build_unless(record: &[Arc<Message>], stop: &AtomicBool) -> Option<RecordIndex> {
        let (mut ix, texts) = RecordIndex::units(record, stop)?;
        // First the uses, interning their tokens; then the rest, looked up.
        let use_pairs = ix.intern_uses(&texts, stop)?;
        let n_tokens = ix.vocab.len();
        let used = Lists::build(ix.units.len(), use_pairs.iter().copied());
        ix.same_as = ix.first_with_text(&texts);
        ix.unit_tokens = ix.unit_lists(&texts, &used, stop)?;
        ix.postings = Lists::by_item(n_tokens, &ix.unit_tokens);
        let use_pairs: Vec<(u32, u32)> = use_pairs
            .iter()
            .map(|&(u, t)| (t, ix.units[u as usize].message))
            .collect();
        // Units come in record order, so each token's uses are ascending;
        // an assistant message with the token in two blocks counts once.
        let mut uses = Lists::build(n_tokens, use_pairs.iter().copied());
        dedup_lists(&mut uses);
        ix.uses = uses;
        Some(ix)
    }

    /// The record's units in order, with the text of each, its calls (by
    /// name and arguments) and which file reads a later write made stale;
    /// `None` once `stop` is set.
    fn units<'r>(
        record: &'r [Arc<Message>],
        stop: &AtomicBool,
    ) -> Option<(RecordIndex, Vec<&'r [u8]>)> {
        let stopped = || stop.load(Ordering::Relaxed);
        let mut ix = RecordIndex::default();
        let mut key_of_call: HashMap<Str, u32> = HashMap::default();
        let mut keys: HashMap<(Str, Str), u32> = HashMap::default();
        let mut call_pairs: Vec<(u32, u32)> = Vec::new();
        // The text of each unit, by unit.
        let mut texts: Vec<&[u8]> = Vec::new();
        let no_args = Str::from("");
        let mut requests = 0u32;
        let mut staleness = Staleness::default();
        for (i, m) in record.iter().enumerate() {
            if stopped() {
                return None;
            }
            let i = i as u32;
            ix.request_of.push(requests);
            if m.role == Role::Assistant {
                ix.message_of.push(i);
                requests += 1;
            }
            for (j, b) in m.content.iter().enumerate() {
                let (kind, text, call) = match (m.role, b.kind) {
                    (_, BlockType::ToolResult) => {
                        let call = b
                            .tool_call_id
                            .as_ref()
                            .and_then(|id| key_of_call.get(id))
                            .copied()
                            .unwrap_or(NONE);
                        (UnitKind::Result, b.text_bytes(), call)
                    }
                    (Role::Assistant, BlockType::ToolUse) => {
                        staleness.call(b, i);
                        if let Some(name) = &b.tool_name {
                            let args = b.tool_args.clone().unwrap_or_else(|| no_args.clone());
                            let next = keys.len() as u32;
                            let key = *keys.entry((name.clone(), args)).or_insert(next);
                            call_pairs.push((key, i));
                            if let Some(id) = &b.tool_call_id {
                                key_of_call.insert(id.clone(), key);
                            }
                        }
                        let args = b.tool_args.as_deref().unwrap_or("");
                        (UnitKind::Use, args.as_bytes(), NONE)
                    }
                    (Role::Assistant, BlockType::Text) => (UnitKind::Use, b.text_bytes(), NONE),
                    (_, BlockType::Text) => (UnitKind::Other, b.text_bytes(), NONE),
                    _ => continue,
                };
                let unit = ix.units.len() as u32;
                if kind == UnitKind::Result {
                    staleness.result(b, unit, i);
                    ix.results.insert((i, j as u32), unit);
                }
                ix.units.push(Unit {
                    message: i,
                    kind,
                    call,
                });
                texts.push(text);
            }
        }
        ix.calls = Lists::build(keys.len(), call_pairs.iter().copied());
        ix.stale_from = staleness.stale_from;
        Some((ix, texts))
    }

    /// Interns the tokens of the uses, each listed once per unit: the
    /// (unit, token) pairs; `None` once `stop` is set.
    fn intern_uses(&mut self, texts: &[&[u8]], stop: &AtomicBool) -> Option<Vec<(u32, u32)>> {
        let stopped = || stop.load(Ordering::Relaxed);
        let ix = self;
        let mut use_pairs: Vec<(u32, u32)> = Vec::new();
        let mut scratch: Vec<u32> = Vec::new();
        // Per token: the last unit it was listed for, so that a unit
        // lists each token once without sorting its repeats.
        let mut listed_in: Vec<u32> = Vec::new();
        for (unit, (u, text)) in ix.units.iter().zip(texts).enumerate() {
            if u.kind != UnitKind::Use {
                continue;
            }
            if stopped() {
                return None;
            }
            let unit = unit as u32;
            scratch.clear();
            let vocab = &mut ix.vocab;
            for_each_token(text, |t| {
                let id = vocab.intern(t);
                if id as usize == listed_in.len() {
                    listed_in.push(NONE);
                }
                if listed_in[id as usize] != unit {
                    listed_in[id as usize] = unit;
                    scratch.push(id);
                }
            });
            use_pairs.extend(scratch.iter().map(|&t| (unit, t)));
        }
        Some(use_pairs)
    }

    /// Every unit's distinct tokens, sorted: those of the uses as `used`
    /// holds them, those of the other units looked up. The others are most of
    /// the record's text (the results), so they are tokenized in parallel:
    /// in ranges of units of about equal text, on rayon's threads, put
    /// back in order. A text seen before (a file read again, a command's
    /// output repeated) is not tokenized again: it has the tokens of its
    /// first unit. `None` if `stop` was set.
    fn unit_lists(&self, texts: &[&[u8]], used: &Lists, stop: &AtomicBool) -> Option<Lists> {
        let first = &self.same_as;
        let total: usize = texts
            .iter()
            .zip(first)
            .enumerate()
            .filter(|&(u, (_, &f))| f as usize == u)
            .map(|(_, (t, _))| t.len())
            .sum();
        let share = total / (4 * rayon::current_num_threads()).max(1) + 1;
        let mut ranges = Vec::new();
        let (mut from, mut bytes) = (0, 0);
        for (i, t) in texts.iter().enumerate() {
            if first[i] as usize == i {
                bytes += t.len();
            }
            if bytes >= share {
                ranges.push(from..i + 1);
                (from, bytes) = (i + 1, 0);
            }
        }
        ranges.push(from..texts.len());
        let n_tokens = self.vocab.len();
        let parts = ranges
            .into_par_iter()
            .map(|range| {
                // Per unit of the range, its number of tokens; and the
                // tokens, unit after unit.
                let mut lengths = Vec::with_capacity(range.len());
                let mut tokens: Vec<u32> = Vec::new();
                // Per token: the last unit it was listed for, so that a
                // unit lists each token once.
                let mut listed_in = vec![NONE; n_tokens];
                for unit in range {
                    if stop.load(Ordering::Relaxed) {
                        return None;
                    }
                    let before = tokens.len();
                    if first[unit] as usize != unit {
                        // Listed when the parts are joined, from its first.
                    } else if self.units[unit].kind == UnitKind::Use {
                        tokens.extend_from_slice(used.get(unit as u32));
                    } else {
                        let unit = unit as u32;
                        for_each_token(texts[unit as usize], |t| {
                            if let Some(id) = self.vocab.get(t) {
                                if listed_in[id as usize] != unit {
                                    listed_in[id as usize] = unit;
                                    tokens.push(id);
                                }
                            }
                        });
                    }
                    // Sorted here, once per session, not by each of the
                    // many replays that judge what the unit lost.
                    tokens[before..].sort_unstable();
                    lengths.push((tokens.len() - before) as u32);
                }
                Some((lengths, tokens))
            })
            .collect::<Option<Vec<(Vec<u32>, Vec<u32>)>>>()?;
        let mut starts = Vec::with_capacity(texts.len() + 1);
        starts.push(0u32);
        let mut items = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
        let mut unit = 0;
        for (lengths, tokens) in &parts {
            let mut at = 0;
            for &n in lengths {
                let f = first[unit] as usize;
                if f == unit {
                    items.extend_from_slice(&tokens[at..at + n as usize]);
                    at += n as usize;
                } else {
                    items.extend_from_within(starts[f] as usize..starts[f + 1] as usize);
                }
                starts.push(items.len() as u32);
                unit += 1;
            }
        }
        Some(Lists { starts, items })
    }

    /// For each unit that is not a use, the first unit (itself if none)
    /// whose text is the same, for texts long enough to be worth it (see
    /// [`pool`]: texts read through a pool share their bytes, which makes
    /// the comparison free); a use is its own first.
    fn first_with_text(&self, texts: &[&[u8]]) -> Vec<u32> {
        let mut first: Vec<u32> = (0..texts.len() as u32).collect();
        let mut seen: HashMap<pool::Sample, u32> = HashMap::default();
        for (unit, text) in texts.iter().enumerate() {
            if self.units[unit].kind == UnitKind::Use {
                continue;
            }
            let Some(key) = pool::sample(text) else {
                continue;
            };
            match seen.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    // A different text with the same sample is tokenized
                    // on its own.
                    if pool::same_text(texts[*e.get() as usize], text) {
                        first[unit] = *e.get();
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(unit as u32);
                }
            }
        }
        first
    }

    /// The id of a token, if the record has it.
    pub(crate) fn token(&self, t: &[u8]) -> Option<u32> {
        self.vocab.get(t)
    }

    /// The distinct tokens of `text` the record has, sorted.
    pub(crate) fn tokens_of(&self, text: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        for_each_token(text, |t| {
            if let Some(id) = self.token(t) {
                out.push(id);
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The distinct tokens of `kept`, the text result `unit` kept, sorted:
    /// [`RecordIndex::tokens_of`], remembered for the next replay that
    /// keeps the same text of it (or of a copy of it).
    pub(crate) fn kept_tokens(&self, unit: u32, kept: &Text) -> Arc<[u32]> {
        let first = self.same_as.get(unit as usize).copied().unwrap_or(unit);
        let lock = || self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, tokens)) = lock()
            .get(&first)
            .and_then(|seen| seen.iter().find(|(t, _)| t == kept))
        {
            return tokens.clone();
        }
        let tokens: Arc<[u32]> = self.tokens_of(kept).into();
        let mut map = lock();
        let seen = map.entry(first).or_default();
        if seen.len() < KEPT_PER_RESULT {
            seen.push((kept.clone(), tokens.clone()));
        }
        tokens
    }

    /// Whether result `unit` still shows its file as it is when message
    /// `message` is answered: no edit or write of the file came between
    /// (always, for a result that read no file).
    pub(crate) fn current_at(&self, unit: u32, message: u32) -> bool {
        self.stale_from.get(&unit).is_none_or(|&s| s >= message)
    }

    /// Whether result `unit` read a file that a call at or after message
    /// `message` edits or writes. Claude Code refuses to edit a file not
    /// read in the context it answers from, so a read lost while current
    /// must be read again before that edit: the edit makes it needed,
    /// whatever its tokens.
    pub(crate) fn edited_after(&self, unit: u32, message: u32) -> bool {
        self.stale_from.get(&unit).is_some_and(|&s| s >= message)
    }

    /// The unit of the tool result at `(message, block)`.
    pub(crate) fn result_unit(&self, message: u32, block: u32) -> Option<u32> {
        self.results.get(&(message, block)).copied()
    }

    pub(crate) fn unit_tokens(&self, unit: u32) -> &[u32] {
        self.unit_tokens.get(unit)
    }

    pub(crate) fn postings(&self, token: u32) -> &[u32] {
        self.postings.get(token)
    }

    pub(crate) fn uses(&self, token: u32) -> &[u32] {
        self.uses.get(token)
    }

    pub(crate) fn calls(&self, key: u32) -> &[u32] {
        self.calls.get(key)
    }

    /// The request assistant message `message` answers.
    pub(crate) fn request_of(&self, message: u32) -> u32 {
        self.request_of
            .get(message as usize)
            .copied()
            .unwrap_or(NONE)
    }

    /// The assistant message answering `request`.
    pub(crate) fn message_of(&self, request: u32) -> u32 {
        self.message_of
            .get(request as usize)
            .copied()
            .unwrap_or(NONE)
    }
}

/// Which file reads a later edit or write of their file made stale, as
/// the record is read in order.
#[derive(Default)]
struct Staleness {
    /// The file each read call reads, by call id.
    read_path: HashMap<Str, String>,
    /// The edits and writes awaiting their result, by call id: the file
    /// and the message making the call.
    edits: HashMap<Str, (String, u32)>,
    /// Per file: the read results not yet made stale, with their message.
    fresh: HashMap<String, Vec<(u32, u32)>>,
    /// Per stale read result: the message of the edit or write.
    stale_from: HashMap<u32, u32>,
}

impl Staleness {
    /// Takes in tool call `b`, made by message `i`.
    fn call(&mut self, b: &Block, i: u32) {
        let Some(name) = &b.tool_name else {
            return;
        };
        let writes = refetch::writes_files(name);
        if !writes && refetch::ResultKind::of_tool(name) != refetch::ResultKind::FileRead {
            return;
        }
        let Some(path) = b.tool_args.as_deref().and_then(refetch::file_path) else {
            return;
        };
        match (&b.tool_call_id, writes) {
            (Some(id), true) => {
                self.edits.insert(id.clone(), (path, i));
            }
            // No result can say it failed: taken as made.
            (None, true) => self.edit(&path, i),
            (Some(id), false) => {
                self.read_path.insert(id.clone(), path);
            }
            (None, false) => {}
        }
    }

    /// Takes in tool result `b`, unit `unit` of message `message`.
    fn result(&mut self, b: &Block, unit: u32, message: u32) {
        let Some(id) = &b.tool_call_id else {
            return;
        };
        if let Some(path) = self.read_path.get(id) {
            self.fresh
                .entry(path.clone())
                .or_default()
                .push((unit, message));
        } else if let Some((path, at)) = self.edits.remove(id) {
            // An edit that failed or was refused (Claude Code's "File has
            // not been read yet") left the file as it was.
            if b.is_error != Some(true) {
                self.edit(&path, at);
            }
        }
    }

    /// File `path` changed by message `at`: the reads answered before it
    /// are stale from there (a read the same message asked for beside the
    /// edit is answered after it, and stays fresh).
    fn edit(&mut self, path: &str, at: u32) {
        let Staleness {
            fresh, stale_from, ..
        } = self;
        if let Some(reads) = fresh.get_mut(path) {
            reads.retain(|&(unit, message)| {
                let stale = message < at;
                if stale {
                    stale_from.insert(unit, at);
                }
                !stale
            });
        }
    }
}

/// Drops repeated adjacent items inside each list.
fn dedup_lists(lists: &mut Lists) {
    let mut starts = Vec::with_capacity(lists.starts.len());
    let mut items = Vec::with_capacity(lists.items.len());
    starts.push(0u32);
    for w in lists.starts.windows(2) {
        let list = &lists.items[w[0] as usize..w[1] as usize];
        for (k, &x) in list.iter().enumerate() {
            if k == 0 || list[k - 1] != x {
                items.push(x);
            }
        }
        starts.push(items.len() as u32);
    }
    lists.starts = starts;
    lists.items = items;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text of `n` bytes with tokens in it, told apart by `tag`.
    fn text(tag: &str, n: usize) -> Vec<u8> {
        let mut t = Vec::new();
        let mut i = 0;
        while t.len() < n {
            t.extend_from_slice(format!("{tag}_part{i} src/file_{i}.rs plain words ").as_bytes());
            i += 1;
        }
        t.truncate(n);
        t
    }

    #[test]
    fn a_text_seen_before_has_the_tokens_it_would_have_on_its_own() {
        let long = text("alpha", 4000);
        // Same length and the same bytes where texts are sampled (start,
        // middle, end), different elsewhere: compared whole, not shared.
        let mut lookalike = long.clone();
        lookalike[1000..1012].copy_from_slice(b"other_tok_99");
        let short = text("beta", 100);
        let results = [&long, &lookalike, &long, &short, &short, &long];
        // The assistant quotes tokens of every text, so that they count.
        let mut said = Vec::new();
        for t in [&long, &lookalike, &short] {
            said.extend_from_slice(t);
            said.push(b' ');
        }
        let mut record = vec![Arc::new(Message::user(&b"start"[..]))];
        for (i, r) in results.iter().enumerate() {
            let id = format!("call_{i}");
            record.push(Arc::new(Message::new(
                Role::Assistant,
                vec![
                    Block::text(said.clone()),
                    Block::tool_use(&id, "read", "{}"),
                ],
                false,
                None,
            )));
            record.push(Arc::new(Message::new(
                Role::Tool,
                vec![Block::tool_result(
                    Some(id.as_str().into()),
                    r.to_vec(),
                    false,
                )],
                false,
                None,
            )));
        }
        let ix = RecordIndex::build(&record);
        // Each unit's text, in the order the build lists units.
        let texts: Vec<&[u8]> = record
            .iter()
            .flat_map(|m| m.content.iter())
            .filter(|b| {
                matches!(
                    b.kind,
                    BlockType::Text | BlockType::ToolUse | BlockType::ToolResult
                )
            })
            .map(|b| match b.kind {
                BlockType::ToolUse => b.tool_args.as_deref().unwrap_or("").as_bytes(),
                _ => b.text_bytes(),
            })
            .collect();
        assert_eq!(texts.len(), ix.units.len());
        let results: Vec<u32> = (0..ix.units.len() as u32)
            .filter(|&u| ix.units[u as usize].kind == UnitKind::Result)
            .collect();
        // The second and third copies of `long` are its first's; the
        // lookalike and the short texts are their own.
        let shared: Vec<bool> = results
            .iter()
            .map(|&u| ix.same_as[u as usize] != u)
            .collect();
        assert_eq!(shared, [false, false, true, false, false, true]);
        for (u, text) in texts.iter().enumerate() {
            if ix.units[u].kind != UnitKind::Use {
                assert_eq!(ix.unit_tokens(u as u32), ix.tokens_of(text), "unit {u}");
            }
        }
        assert!(ix.unit_tokens(results[1]).len() > 10);
        assert_ne!(ix.unit_tokens(results[0]), ix.unit_tokens(results[1]));
    }
}
