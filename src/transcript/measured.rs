//! Tokens measured per message: what the provider counted for each message
//! of an imported session, from the prompt sizes its log recorded.
//!
//! Every request of a log with usage records its whole prompt (input, cache
//! reads and cache writes). The prompt of a request is the agent's fixed
//! prompt (system prompt and tools: nothing the transcript holds) plus the
//! messages it sent, so the growth from one request to the next is exactly
//! the tokens of what was added between them: the previous answer as it is
//! sent back, the tool results, the user's message, whatever the harness
//! injected. The attribution walks the session as the agent ran it (its own
//! compactions applied where its log records them, [`compacted`]) and gives
//! each request's prompt, less what earlier requests already measured, to
//! the messages it sends for the first time, in proportion to their bytes.
//! The first request's prompt beyond its messages is the fixed prompt; its
//! messages are counted at the session's density (tokens per byte, from the
//! growth of the requests where nothing but new messages changed).
//!
//! Two things the provider does change the count of a message already
//! sent: a model that drops the thinking of earlier turns
//! ([`drops_earlier_thinking`]) stops counting an assistant message's
//! thinking once a later turn starts, and the agent's own compactions cut
//! or replace messages. A message is then counted at its measured tokens
//! scaled by the share of its counted bytes left ([`Message::real_tokens`]),
//! which is also how a replay counts a message its policy rewrote.
//!
//! The check, on data the attribution did not use: after each of the
//! agent's compactions the request that follows sends the messages it kept
//! (measured before the compaction), the summary and the messages since
//! (estimated at the session's density) and the fixed prompt; what that
//! adds up to is held against the request's recorded prompt
//! ([`CompactionCheck`]).

use std::borrow::Borrow;
use std::sync::Arc;

use super::model::counted_tokens;
use super::session_file::{CompactBoundary, SessionFile, FORMAT_CLAUDE_CODE, FORMAT_CODEX};
pub(crate) use super::session_file::{CompactionCheck, Measured};
use super::{Block, BlockType, Message, MessageTokens, Role};

/// What a cleared tool result says after Claude Code's micro-compaction
/// (and the placeholder of the policies that clear results as it does).
pub(crate) const CLEARED_RESULT: &str = "[Old tool result content cleared]";

/// Tokens per counted byte where a session measured none: bytes / 4.
pub(crate) const DEFAULT_DENSITY: f64 = 0.25;

/// Whether the model of a session of `format` stops counting an assistant
/// message's thinking once a later turn starts. OpenAI's reasoning models
/// drop the reasoning items of earlier turns (Codex); Anthropic's models
/// before Claude Opus 4.5 and Sonnet 4.6 strip the thinking blocks of
/// earlier assistant turns, later ones keep them (Anthropic's extended
/// thinking documentation).
pub(crate) fn drops_earlier_thinking(format: &str, model: Option<&str>) -> bool {
    if format == FORMAT_CODEX {
        return true;
    }
    if format != FORMAT_CLAUDE_CODE {
        return false;
    }
    let Some(model) = model else {
        return false;
    };
    let (family, version) = claude_version(model);
    let keeps = match family {
        Some("opus") => version >= (4, 5),
        Some("sonnet") => version >= (4, 6),
        _ => version >= (5, 0),
    };
    !keeps
}

/// The family and (major, minor) version of a Claude model id:
/// `claude-opus-4-5-20251101` is (opus, (4, 5)), `claude-3-5-sonnet` is
/// (sonnet, (3, 5)), an id with no version (0, 0).
fn claude_version(model: &str) -> (Option<&'static str>, (u32, u32)) {
    let m = model.to_ascii_lowercase();
    let family = ["opus", "sonnet", "haiku"]
        .into_iter()
        .find(|f| m.contains(f));
    let numbers: Vec<u32> = m
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty() && p.len() <= 2)
        .filter_map(|p| p.parse().ok())
        .collect();
    let version = match numbers.as_slice() {
        [major, minor, ..] => (*major, *minor),
        [major] => (*major, 0),
        [] => (0, 0),
    };
    (family, version)
}

/// Where a message of the context the agent sent came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Message `i` of the transcript (as recorded, or with results cleared).
    Message(usize),
    /// The summary of compaction `j` (an index of `compact_boundaries`).
    Summary(usize),
}

/// The message a full compaction's summary stands as: a user message of
/// its text (Claude Code's `isCompactSummary` line, Codex's summary item).
pub(crate) fn summary_message(b: &CompactBoundary) -> Message {
    Message::user(b.summary.clone().unwrap_or_default().into_bytes())
}

/// `m` with the results of the calls `ids` replaced by [`CLEARED_RESULT`];
/// `None` when it holds none of them.
pub(crate) fn cleared(m: &Message, ids: &[String]) -> Option<Message> {
    let hit = |b: &Block| {
        b.kind == BlockType::ToolResult
            && b.tool_call_id
                .as_deref()
                .is_some_and(|id| ids.iter().any(|x| x == id))
            && b.text_bytes() != CLEARED_RESULT.as_bytes()
    };
    if !m.content.iter().any(hit) {
        return None;
    }
    let content = m
        .content
        .iter()
        .map(|b| {
            if hit(b) {
                Block::tool_result(
                    b.tool_call_id.clone(),
                    CLEARED_RESULT.as_bytes().to_vec(),
                    b.is_error.unwrap_or(false),
                )
            } else {
                b.clone()
            }
        })
        .collect();
    Some(m.with_content(content))
}

/// The context after the agent's compaction `b` (boundary `j`), from the
/// context before it (each message with where it came from, `None` for one
/// of unknown origin): a full compaction keeps the messages its boundary
/// names, then `summary`, then the messages from `b.message_index` on; a
/// micro-compaction clears the results it names in the messages before it.
pub(crate) fn compacted(
    j: usize,
    b: &CompactBoundary,
    before: Vec<(Option<Origin>, Arc<Message>)>,
    transcript: &[Arc<Message>],
    summary: Arc<Message>,
) -> Vec<(Option<Origin>, Arc<Message>)> {
    let after = |o: &Option<Origin>| matches!(o, Some(Origin::Message(i)) if *i >= b.message_index);
    if b.is_full() {
        let mut out: Vec<(Option<Origin>, Arc<Message>)> = b
            .kept
            .iter()
            .filter_map(|&i| Some((Some(Origin::Message(i)), transcript.get(i)?.clone())))
            .collect();
        out.push((Some(Origin::Summary(j)), summary));
        out.extend(before.into_iter().filter(|(o, _)| after(o)));
        return out;
    }
    before
        .into_iter()
        .map(
            |(o, m)| match (after(&o), cleared(&m, &b.cleared_tool_ids)) {
                (false, Some(c)) => (o, Arc::new(c)),
                _ => (o, m),
            },
        )
        .collect()
}

/// Which messages of `context` the provider counts without their thinking:
/// under a model that [`drops_earlier_thinking`], the assistant messages
/// before the last message that starts a turn.
pub(crate) fn thinking_dropped<'m, I>(context: I, drops: bool) -> Vec<bool>
where
    I: IntoIterator<Item = &'m Message>,
    I::IntoIter: DoubleEndedIterator + ExactSizeIterator + Clone,
{
    let context = context.into_iter();
    let last_turn = if drops {
        context.clone().rposition(Message::starts_real_turn)
    } else {
        None
    };
    context
        .enumerate()
        .map(|(i, m)| counts_without_thinking(i, m, last_turn))
        .collect()
}

/// Whether message `i` of a context, `m`, counts without its thinking when
/// the last message that starts a turn is `last_turn` (`None`: the model
/// keeps earlier thinking, or no turn started): an assistant message before
/// it.
pub(crate) fn counts_without_thinking(i: usize, m: &Message, last_turn: Option<usize>) -> bool {
    last_turn.is_some_and(|t| i < t) && m.role == Role::Assistant
}

/// One request with usage, as the attribution walks it.
struct Request {
    /// 0-based over the session's requests.
    index: usize,
    message_index: usize,
    prompt: u64,
}

/// The provider's counts of `messages`, the transcript of the imported
/// session `file`, from the prompt sizes of its requests.
pub(crate) fn attribute<M: Borrow<Message>>(file: &SessionFile, messages: &[M]) -> Measured {
    let transcript: Vec<Arc<Message>> = messages
        .iter()
        .map(|m| Arc::new(m.borrow().clone().with_measured(None)))
        .collect();
    let model = file
        .requests
        .iter()
        .find_map(|r| r.model.as_deref())
        .or(file.model.as_deref());
    let drops = drops_earlier_thinking(&file.source.format, model);
    let requests: Vec<Request> = file
        .requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.prompt_tokens() > 0 && r.message_index <= transcript.len())
        .map(|(index, r)| Request {
            index,
            message_index: r.message_index,
            prompt: r.prompt_tokens(),
        })
        .collect();
    let density = density(file, &transcript, &requests, drops);
    let mut walk = Walk {
        file,
        transcript: &transcript,
        drops,
        density,
        context: Vec::new(),
        next_message: 0,
        next_boundary: 0,
        measured: Measured {
            density,
            drops_thinking: drops,
            tokens: vec![None; transcript.len()],
            summaries: vec![None; file.compact_boundaries.len()],
            ..Measured::default()
        },
        fixed: None,
        compacted_since: None,
    };
    for r in &requests {
        walk.advance_to(r.message_index);
        walk.measure(r);
    }
    walk.measured
}

/// Tokens per counted byte over the requests that sent nothing but new
/// messages since the previous one (no compaction between, no thinking
/// dropped): their growth over the bytes added.
fn density(
    file: &SessionFile,
    transcript: &[Arc<Message>],
    requests: &[Request],
    drops: bool,
) -> f64 {
    let (mut tokens, mut bytes) = (0u64, 0u64);
    for pair in requests.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let compacted = file
            .compact_boundaries
            .iter()
            .any(|x| x.message_index > a.message_index && x.message_index <= b.message_index);
        let added = &transcript[a.message_index.min(b.message_index)..b.message_index];
        let new_turn = added.iter().any(|m| m.starts_real_turn());
        if compacted || (drops && new_turn) || b.prompt <= a.prompt {
            continue;
        }
        tokens += b.prompt - a.prompt;
        bytes += added.iter().map(|m| m.bytes()).sum::<u64>();
    }
    if tokens == 0 || bytes == 0 {
        DEFAULT_DENSITY
    } else {
        tokens as f64 / bytes as f64
    }
}

/// The attribution's walk through the session as the agent ran it.
struct Walk<'a> {
    file: &'a SessionFile,
    transcript: &'a [Arc<Message>],
    drops: bool,
    density: f64,
    /// The context as the agent holds it now.
    context: Vec<(Option<Origin>, Arc<Message>)>,
    next_message: usize,
    next_boundary: usize,
    measured: Measured,
    fixed: Option<u64>,
    /// The first of the agent's compactions since the last measured
    /// request, if any.
    compacted_since: Option<usize>,
}

impl Walk<'_> {
    /// Appends the transcript's messages before `end`, applying each
    /// compaction where it stands.
    fn advance_to(&mut self, end: usize) {
        loop {
            let boundary = self.file.compact_boundaries.get(self.next_boundary);
            match boundary {
                // A compaction applies once every message before it is in.
                Some(b) if b.message_index <= self.next_message => {
                    let before = std::mem::take(&mut self.context);
                    let summary = Arc::new(summary_message(b));
                    self.context =
                        compacted(self.next_boundary, b, before, self.transcript, summary);
                    self.compacted_since.get_or_insert(self.next_boundary);
                    self.next_boundary += 1;
                }
                _ if self.next_message < end => {
                    let i = self.next_message;
                    self.context
                        .push((Some(Origin::Message(i)), self.transcript[i].clone()));
                    self.next_message += 1;
                }
                _ => break,
            }
        }
    }

    /// The measured tokens of a message of the context.
    fn tokens_of(&self, origin: Option<Origin>) -> Option<MessageTokens> {
        match origin? {
            Origin::Message(i) => self.measured.tokens.get(i).copied().flatten(),
            Origin::Summary(j) => self.measured.summaries.get(j).copied().flatten(),
        }
    }

    fn set_tokens(&mut self, origin: Option<Origin>, t: MessageTokens) {
        match origin {
            Some(Origin::Message(i)) => self.measured.tokens[i] = Some(t),
            Some(Origin::Summary(j)) => self.measured.summaries[j] = Some(t),
            None => {}
        }
    }

    /// Gives request `r`'s prompt, less what is already measured of it, to
    /// the messages it sends first.
    fn measure(&mut self, r: &Request) {
        let dropped = thinking_dropped(self.context.iter().map(|(_, m)| m.as_ref()), self.drops);
        let mut known = 0u64;
        // Each new message with the bytes the provider counts of it and the
        // weight it takes of the prompt.
        let mut new: Vec<(Option<Origin>, u64, u64)> = Vec::new();
        let mut kept_bytes = 0u64;
        for ((origin, m), &d) in self.context.iter().zip(&dropped) {
            let counted = m.counted_bytes(d);
            match self.tokens_of(*origin) {
                Some(t) => {
                    known += counted_tokens(Some(t), counted, 0.0);
                    kept_bytes += counted;
                }
                None => new.push((*origin, counted, counted)),
            }
        }
        // A summary whose text the log does not hold whole (Codex keeps it
        // encrypted) weighs what the log says the compaction left, less the
        // messages it kept.
        for (origin, counted, weight) in &mut new {
            if let Some(Origin::Summary(j)) = origin {
                let left = self.file.compact_boundaries[*j].summary_bytes.unwrap_or(0);
                *weight = (*counted).max(left.saturating_sub(kept_bytes));
            }
        }
        let new_bytes: u64 = new.iter().map(|x| x.2).sum();
        let estimate = (new_bytes as f64 * self.density).round() as u64;
        let fixed = *self
            .fixed
            .get_or_insert_with(|| r.prompt.saturating_sub(known + estimate));
        if let Some(j) = self.compacted_since.take() {
            let b = &self.file.compact_boundaries[j];
            let predicted = fixed + known + estimate;
            self.measured.checks.push(CompactionCheck {
                line: b.line,
                kind: b.kind.clone().unwrap_or_else(|| "full".into()),
                request: r.index,
                kept: known,
                estimated: estimate,
                fixed_prompt: fixed,
                predicted,
                recorded: r.prompt,
            });
        }
        self.measured.fixed_prompt = fixed;
        let residual = r.prompt as i64 - fixed as i64 - known as i64;
        if new.is_empty() {
            if residual != 0 {
                self.measured.drift_requests += 1;
                self.measured.drift_tokens += residual;
            }
            return;
        }
        if residual < 0 {
            self.measured.short_requests += 1;
            self.measured.short_tokens += residual.unsigned_abs();
        }
        let shares = apportion(
            residual.max(0) as u64,
            &new.iter().map(|x| x.2).collect::<Vec<_>>(),
        );
        for ((origin, bytes, _), tokens) in new.into_iter().zip(shares) {
            self.set_tokens(origin, MessageTokens { tokens, bytes });
        }
    }
}

/// `total` split over parts in proportion to `weights`, in whole numbers
/// that add up to it (largest remainders first); all of it to the last part
/// where every weight is 0.
fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u64 = weights.iter().sum();
    let mut out = vec![0u64; weights.len()];
    if weights.is_empty() {
        return out;
    }
    if sum == 0 {
        *out.last_mut().expect("not empty") = total;
        return out;
    }
    let mut remainders: Vec<(u128, usize)> = Vec::with_capacity(weights.len());
    let mut given = 0u64;
    for (i, &w) in weights.iter().enumerate() {
        let exact = total as u128 * w as u128;
        out[i] = (exact / sum as u128) as u64;
        given += out[i];
        remainders.push((exact % sum as u128, i));
    }
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in remainders.into_iter().take((total - given) as usize) {
        out[i] += 1;
    }
    out
}

/// The session's counts: as its `session.json` keeps them, else worked out
/// from its requests (an import of an earlier version); `None` for a
/// session without usage per request.
pub(crate) fn of_file<M: Borrow<Message>>(file: &SessionFile, messages: &[M]) -> Option<Measured> {
    if let Some(m) = &file.measured {
        return Some(m.clone());
    }
    file.requests
        .iter()
        .any(|r| r.prompt_tokens() > 0)
        .then(|| attribute(file, messages))
}

/// Gives each message of `messages` its measured tokens.
pub(crate) fn apply(measured: &Measured, messages: &mut [Arc<Message>]) {
    for (m, t) in messages.iter_mut().zip(&measured.tokens) {
        if m.measured != *t {
            Arc::make_mut(m).measured = *t;
        }
    }
}

/// The agent's own compactions of an imported session, as its log recorded
/// them, with the tokens measured of each summary: what the `recorded`
/// policy replays.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AgentRun {
    /// In the order they happened.
    pub(crate) compactions: Vec<CompactBoundary>,
    /// Per compaction: the measured tokens of its summary, if any request
    /// sent it.
    pub(crate) summaries: Vec<Option<MessageTokens>>,
}

impl AgentRun {
    /// The run of `file`, with the summaries `measured` counted.
    pub(crate) fn of(file: &SessionFile, measured: Option<&Measured>) -> AgentRun {
        let summaries = (0..file.compact_boundaries.len())
            .map(|j| measured.and_then(|m| m.summaries.get(j).copied().flatten()))
            .collect();
        AgentRun {
            compactions: file.compact_boundaries.clone(),
            summaries,
        }
    }

    /// The message compaction `j`'s summary stands as, with its measured
    /// tokens.
    pub(crate) fn summary(&self, j: usize) -> Message {
        summary_message(&self.compactions[j])
            .with_measured(self.summaries.get(j).copied().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::session_file::{RequestUsage, Source};

    fn usage(message_index: usize, prompt: u64) -> RequestUsage {
        RequestUsage {
            message_index,
            cache_read_input_tokens: prompt,
            ..RequestUsage::default()
        }
    }

    #[test]
    fn apportioning_adds_up_and_follows_the_weights() {
        assert_eq!(apportion(10, &[1, 1, 2]), vec![3, 2, 5]);
        assert_eq!(apportion(7, &[0, 0]), vec![0, 7]);
        assert_eq!(apportion(0, &[3, 4]), vec![0, 0]);
        let parts = apportion(1_000_003, &[17, 1, 999, 4242]);
        assert_eq!(parts.iter().sum::<u64>(), 1_000_003);
    }

    #[test]
    fn claude_versions_decide_whether_earlier_thinking_counts() {
        let drops = |m| drops_earlier_thinking(FORMAT_CLAUDE_CODE, Some(m));
        assert!(drops("claude-sonnet-4-5-20250929"));
        assert!(!drops("claude-sonnet-4-6"));
        assert!(drops("claude-opus-4-1-20250805"));
        assert!(!drops("claude-opus-4-5-20251101"));
        assert!(!drops("claude-opus-4-6"));
        assert!(drops("claude-haiku-4-5-20251001"));
        assert!(drops("claude-3-5-sonnet-20241022"));
        assert!(drops_earlier_thinking(FORMAT_CODEX, Some("gpt-5.4")));
        assert!(!drops_earlier_thinking(
            "mini-swe-agent",
            Some("gemini-3-pro")
        ));
    }

    /// user, assistant (request 0), tool, assistant (request 1), user,
    /// assistant (request 2): each text `n` bytes long.
    fn session(prompts: [u64; 3]) -> (SessionFile, Vec<Message>) {
        let text = |n: usize| vec![b'x'; n];
        let messages = vec![
            Message::user(text(400)),
            Message::new(Role::Assistant, vec![Block::text(text(100))], false, None),
            Message::new(
                Role::Tool,
                vec![Block::tool_result(Some("t1".into()), text(300), false)],
                false,
                None,
            ),
            Message::new(Role::Assistant, vec![Block::text(text(200))], false, None),
            Message::user(text(80)),
            Message::new(Role::Assistant, vec![Block::text(text(40))], false, None),
        ];
        let file = SessionFile {
            id: "s".into(),
            source: Source {
                format: FORMAT_CLAUDE_CODE.into(),
                ..Source::default()
            },
            requests: vec![
                usage(1, prompts[0]),
                usage(3, prompts[1]),
                usage(5, prompts[2]),
            ],
            ..SessionFile::default()
        };
        (file, messages)
    }

    #[test]
    fn growth_goes_to_the_messages_added_and_the_first_prompt_to_the_fixed_one() {
        // Growth 1 = 200 tokens for 400 bytes, growth 2 = 140 for 280: a
        // density of 0.5 tokens a byte; the first message is 200 tokens of
        // the first prompt, the rest the fixed prompt.
        let (file, messages) = session([10_200, 10_400, 10_540]);
        let m = attribute(&file, &messages);
        assert_eq!(m.density, 0.5);
        assert_eq!(m.fixed_prompt, 10_000);
        let tokens: Vec<Option<u64>> = m.tokens.iter().map(|t| t.map(|t| t.tokens)).collect();
        assert_eq!(
            tokens,
            vec![Some(200), Some(50), Some(150), Some(100), Some(40), None]
        );
        assert!(m.checks.is_empty());
        assert_eq!((m.short_requests, m.drift_requests), (0, 0));
    }

    #[test]
    fn a_request_smaller_than_what_was_measured_is_counted_not_hidden() {
        let (file, messages) = session([10_200, 10_400, 10_300]);
        let m = attribute(&file, &messages);
        assert_eq!(m.short_requests, 1);
        assert_eq!(m.short_tokens, 100);
        assert_eq!(m.tokens[3].map(|t| t.tokens), Some(0));
    }

    #[test]
    fn a_full_compaction_is_checked_against_the_next_prompt() {
        let (mut file, messages) = session([10_200, 10_400, 10_300]);
        // Claude Code compacted before the user's second message: the
        // context is then the summary and what follows it.
        file.compact_boundaries.push(CompactBoundary {
            message_index: 4,
            requests_before: 2,
            summary: Some("s".repeat(160)),
            summary_bytes: Some(160),
            line: 9,
            ..CompactBoundary::default()
        });
        let m = attribute(&file, &messages);
        // The growth over the compaction is left out of the density.
        assert_eq!(m.density, 0.5);
        assert_eq!(m.checks.len(), 1);
        let c = &m.checks[0];
        // Summary 160 bytes and the user's 80, at 0.5 tokens a byte.
        assert_eq!(
            (c.kept, c.estimated, c.predicted, c.recorded),
            (0, 120, 10_120, 10_300)
        );
        assert!((c.error() - (-180.0 / 10_300.0)).abs() < 1e-12);
        // The request's prompt beyond the fixed prompt goes to the summary
        // and the user's message, so that a replay sends it again.
        let summary = m.summaries[0].expect("measured").tokens;
        let user = m.tokens[4].expect("measured").tokens;
        assert_eq!(summary + user, 300);
        assert_eq!(m.short_requests, 0);
    }

    #[test]
    fn a_micro_compaction_keeps_the_measured_messages_scaled_to_what_is_left() {
        let (mut file, messages) = session([10_200, 10_400, 10_300]);
        file.compact_boundaries.push(CompactBoundary {
            message_index: 4,
            requests_before: 2,
            kind: Some(super::super::session_file::MICROCOMPACT.into()),
            cleared_tool_ids: vec!["t1".into()],
            line: 9,
            ..CompactBoundary::default()
        });
        let m = attribute(&file, &messages);
        let c = &m.checks[0];
        // The tool message had 300 bytes at 150 tokens; cleared to the
        // 33-byte placeholder it counts 150 × 33 / 300, rounded.
        let placeholder = CLEARED_RESULT.len() as u64;
        assert_eq!(placeholder, 33);
        // The answer of request 1 is first sent now: estimated, with the
        // user's message.
        let kept = 200 + 50 + (150 * 33 + 150) / 300;
        assert_eq!(c.kept, kept);
        assert_eq!(c.estimated, (200 + 80) / 2);
        assert_eq!(c.recorded, 10_300);
    }

    #[test]
    fn earlier_thinking_stops_counting_where_the_model_drops_it() {
        let think = |n: usize| Block {
            kind: BlockType::Thinking,
            text: Some(vec![b't'; n].into()),
            ..Block::default()
        };
        let (mut file, mut messages) = session([10_200, 10_500, 10_540]);
        file.requests
            .iter_mut()
            .for_each(|r| r.model = Some("claude-sonnet-4-5".into()));
        // The first answer thinks 100 bytes: counted at request 1, dropped
        // at request 2, which starts a new turn.
        messages[1] = Message::new(
            Role::Assistant,
            vec![think(100), Block::text(vec![b'x'; 100])],
            false,
            None,
        );
        let m = attribute(&file, &messages);
        assert!(m.drops_thinking);
        let t1 = m.tokens[1].expect("measured");
        assert_eq!(t1.bytes, 200);
        // At request 2 the first answer counts half its tokens (its text
        // alone); what is left of the prompt goes to the new messages.
        let counted_now = counted_tokens(Some(t1), messages[1].counted_bytes(true), 0.0);
        assert_eq!(counted_now * 2, t1.tokens);
        let sent: u64 = [0, 2, 3, 4]
            .iter()
            .map(|&i| m.tokens[i].expect("measured").tokens)
            .sum::<u64>()
            + counted_now
            + m.fixed_prompt;
        assert_eq!(sent, 10_540);
    }
}
