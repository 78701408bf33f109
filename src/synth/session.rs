//! One session, message by message: the agent loop smith runs, played by a
//! seeded planner.
//!
//! A session is a sequence of real turns (a user message typed by the user
//! and everything the agent did about it). Within a turn the agent works in
//! rounds, each an assistant message (maybe thinking, maybe a remark, one or
//! more `tool_use` blocks) answered by one `tool` message with one
//! `tool_result` per call, in call order. A turn ends with an answer; smith
//! injects synthetic user messages when an answer hit the output limit, when
//! a tool call was cut off, or when a stop hook blocks the end of a turn.
//!
//! [`SessionGen`] yields the messages one at a time and never holds more than
//! one round, so a 50 MB session costs a few hundred KB of memory.

use std::collections::VecDeque;
use std::sync::Arc;

use super::project::Project;
use super::rng::{mix64, Rng};
use super::text;
use super::tools::{media_ref, Phase, Sizing, Toolbox};
use super::vocab::MODELS;
use crate::engine::constants::{defaults, BYTES_PER_TOKEN};
use crate::transcript::json::SYNTHETIC_FALSE;
use crate::transcript::{Block, BlockType, Message, Role, Str};

/// The kind of session to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Many real turns, growing until the size asked for: at smith's
    /// defaults the history crosses the trigger again and again. Half of
    /// them end in one giant turn of huge results.
    Long,
    /// A few real turns that stay well below smith's default trigger, so
    /// compaction never runs at the defaults (it may at a smaller window).
    Short,
    /// One real prompt and nothing but agent work after it (synthetic
    /// continuations included), as `smith -p` runs: with no later real turn
    /// to cut at, compaction falls back to the desperate pass.
    OneTurn,
    /// A short first turn, then one long agentic turn of heavy results: at
    /// smith's defaults the recency window covers the whole history, the
    /// cheap stages cannot act, and every compaction after the first
    /// summarises its own previous summary (the `resummarized` misfire).
    Agentic,
}

impl Shape {
    /// The name used on the command line and in summaries.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Shape::Long => "long",
            Shape::Short => "short",
            Shape::OneTurn => "one-turn",
            Shape::Agentic => "agentic",
        }
    }

    /// Transcript sizes this shape is drawn from when no size is asked for.
    pub(crate) fn default_bytes(self) -> (u64, u64) {
        match self {
            Shape::Long => (500_000, 2_500_000),
            Shape::Short => (15_000, 250_000),
            Shape::OneTurn => (300_000, 1_200_000),
            Shape::Agentic => (600_000, 1_500_000),
        }
    }
}

/// The largest estimate (in bytes) a [`Shape::Short`] session reaches:
/// 80,000 tokens, safely under smith's default trigger of 96,000 (120,000 ×
/// 0.80), whatever size was asked for.
pub(crate) const SHORT_MAX_ESTIMATE_BYTES: u64 = 80_000 * BYTES_PER_TOKEN;

/// Headroom a short session keeps below its ceiling when deciding whether
/// to do another round: more than one round and a closing answer can add.
const SHORT_HEADROOM_BYTES: u64 = 90_000;

// The ceiling must leave the headroom below the default trigger.
const _: () = assert!(SHORT_MAX_ESTIMATE_BYTES < (defaults::MAX_TOKENS * 4 / 5) * BYTES_PER_TOKEN);

/// What to generate: the shape and about how many bytes of transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionSpec {
    pub(crate) shape: Shape,
    /// The transcript stops growing once it reaches this many bytes of JSON
    /// lines (it ends its turn first, so it runs a little over).
    pub(crate) target_bytes: u64,
}

impl SessionSpec {
    /// A session of `shape` of about `mb` megabytes (10^6 bytes).
    pub fn of_mb(shape: Shape, mb: f64) -> SessionSpec {
        SessionSpec {
            shape,
            target_bytes: (mb.max(0.0) * 1e6) as u64,
        }
    }
}

/// Who ran the session and how: what `session.json` says about it.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    pub(crate) cwd: String,
    pub(crate) model: String,
    pub(crate) provider: String,
    /// The model thinks (Anthropic models only): thinking blocks with
    /// signatures, now and then redacted.
    pub(crate) thinking: bool,
    /// A stop hook is configured and sometimes blocks the end of a turn.
    pub(crate) hooks: bool,
    /// Messages carry smith's `id` (older sessions have none).
    pub(crate) message_ids: bool,
    /// A long session ending in one giant turn.
    pub(crate) giant_finale: bool,
}

/// Token counts for `session.json`'s `usage`, as smith sums them over the
/// requests of a session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) total_tokens: u64,
    pub(crate) cache_creation_tokens: u64,
    pub(crate) cache_read_tokens: u64,
}

/// The state of the turn being played.
#[derive(Clone, Copy, Debug)]
struct Turn {
    round: u32,
    /// Rounds planned; `None` runs until the size is reached.
    planned: Option<u32>,
    heavy: bool,
    /// A stop hook may still block this turn's end (once per turn).
    hook_pending: bool,
}

#[derive(Clone, Copy, Debug)]
enum State {
    StartTurn,
    InTurn(Turn),
    Done,
}

/// Generates one session's messages lazily. Iterate it for [`Message`]s;
/// [`SessionGen::last_json`] is the smith-format line of the message just
/// returned, so a writer need not serialise it again.
pub(crate) struct SessionGen {
    rng: Rng,
    spec: SessionSpec,
    profile: Profile,
    tools: Toolbox,
    state: State,
    queue: VecDeque<(Message, Vec<u8>)>,
    last_json: Vec<u8>,
    /// Bytes of JSON lines (newlines included) queued so far.
    planned_bytes: u64,
    /// The estimate of everything queued so far, in bytes (docs/engine.md §2).
    estimate_bytes: u64,
    turns: u32,
    id_salt: u64,
    message_ids: u64,
    first_prompt: Option<String>,
}

impl SessionGen {
    /// A generator for the session `seed` and `spec` determine.
    pub(crate) fn new(seed: u64, spec: SessionSpec) -> SessionGen {
        let mut rng = Rng::new(seed);
        let project = Project::new(&mut rng.fork(1));
        let (model, provider) = rng.pick(MODELS);
        let profile = Profile {
            cwd: project.cwd.clone(),
            model: model.to_string(),
            provider: provider.to_string(),
            thinking: provider == "anthropic" && rng.chance(0.8),
            hooks: rng.chance(0.35),
            message_ids: rng.chance(0.85),
            giant_finale: spec.shape == Shape::Long && rng.chance(0.5),
        };
        let id_salt = rng.next_u64();
        SessionGen {
            tools: Toolbox::new(project, id_salt),
            rng,
            spec,
            profile,
            state: State::StartTurn,
            queue: VecDeque::new(),
            last_json: Vec::new(),
            planned_bytes: 0,
            estimate_bytes: 0,
            turns: 0,
            id_salt,
            message_ids: 0,
            first_prompt: None,
        }
    }

    /// Who ran the session and how.
    pub(crate) fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The smith-format JSON line (no newline) of the message last returned.
    pub(crate) fn last_json(&self) -> &[u8] {
        &self.last_json
    }

    /// The text of the first real user message, once it has been generated.
    pub(crate) fn first_prompt(&self) -> Option<&str> {
        self.first_prompt.as_deref()
    }

    /// Real turns begun so far.
    pub(crate) fn turns(&self) -> u32 {
        self.turns
    }

    /// Queues a message, measuring it once.
    fn push(&mut self, role: Role, content: Vec<Block>, synthetic: bool) {
        let id: Option<Str> = self.profile.message_ids.then(|| {
            self.message_ids += 1;
            Arc::from(format!("{:016x}", mix64(self.id_salt ^ mix64(self.message_ids))).as_str())
        });
        let message = Message::new(role, content, synthetic, id);
        let mut json = Vec::with_capacity(message.bytes() as usize + 128);
        message.write_json(&mut json);
        // Sizes are planned on the line without smith's `"synthetic":false`,
        // so that the committed datasets stay what their seeds generate
        // while each line is in smith's exact form.
        let unplanned = if message.synthetic {
            0
        } else {
            SYNTHETIC_FALSE.len()
        };
        self.planned_bytes += (json.len() - unplanned) as u64 + 1;
        self.estimate_bytes += message.bytes();
        self.queue.push_back((message, json));
    }

    /// Whether the session has grown as far as it should.
    fn full(&self) -> bool {
        if self.planned_bytes >= self.spec.target_bytes {
            return true;
        }
        self.spec.shape == Shape::Short
            && self.estimate_bytes + SHORT_HEADROOM_BYTES >= SHORT_MAX_ESTIMATE_BYTES
    }

    /// How large each of the next `calls` results may be: a round never
    /// overshoots the size asked for by much.
    fn sizing(&self, heavy: bool, calls: usize) -> Sizing {
        let remaining = self.spec.target_bytes.saturating_sub(self.planned_bytes);
        let share = remaining / calls.max(1) as u64;
        let mut cap = if heavy {
            share.clamp(16_000, 300_000)
        } else {
            (share / 3).clamp(2_000, 300_000)
        };
        if self.spec.shape == Shape::Short {
            let room =
                SHORT_MAX_ESTIMATE_BYTES.saturating_sub(self.estimate_bytes + SHORT_HEADROOM_BYTES);
            cap = cap.min((room / 4).max(500));
        }
        Sizing { cap, heavy }
    }

    /// Plans the next step and queues its messages.
    fn refill(&mut self) {
        match self.state {
            State::Done => {}
            State::StartTurn => self.start_turn(),
            State::InTurn(turn) => self.step(turn),
        }
    }

    fn start_turn(&mut self) {
        let first = self.turns == 0;
        let ended = match self.spec.shape {
            Shape::OneTurn => true,
            Shape::Agentic => self.turns >= 2,
            Shape::Long | Shape::Short => false,
        };
        if !first && (self.full() || ended) {
            self.state = State::Done;
            return;
        }
        self.turns += 1;
        let rng = &mut self.rng;
        let prompt = text::user_prompt(&self.tools.project, rng, first);
        if first {
            self.first_prompt = Some(prompt.clone());
        }
        let mut content = vec![Block::text(prompt.into_bytes())];
        if rng.chance(if first { 0.15 } else { 0.08 }) {
            content.extend(user_attachments(rng));
        }
        let giant =
            self.profile.giant_finale && self.planned_bytes * 10 >= self.spec.target_bytes * 8;
        let planned = match self.spec.shape {
            Shape::OneTurn => None,
            Shape::Agentic => first.then_some(1),
            _ if giant => None,
            Shape::Short => Some(self.rng.log_uniform(1, 8) as u32),
            Shape::Long => Some(self.rng.log_uniform(1, 14) as u32),
        };
        let heavy = giant;
        self.push(Role::User, content, false);
        self.state = State::InTurn(Turn {
            round: 0,
            planned,
            heavy,
            hook_pending: self.profile.hooks && self.rng.chance(0.3),
        });
    }

    /// One round of the turn, or its end.
    fn step(&mut self, mut turn: Turn) {
        let done = match turn.planned {
            Some(n) => turn.round >= n,
            None => false,
        } || (turn.round > 0 && self.full());
        if done {
            self.end_turn(turn);
            return;
        }
        let progress = match turn.planned {
            Some(n) => turn.round * 10 / n.max(1),
            None => self.rng.below(10) as u32,
        };
        let phase = match progress {
            0..=3 => Phase::Explore,
            4..=6 => Phase::Edit,
            _ => Phase::Verify,
        };
        // A one-turn run alternates ordinary stretches with heavy ones.
        let agent_work = matches!(self.spec.shape, Shape::OneTurn | Shape::Agentic);
        let heavy = turn.heavy || (agent_work && self.rng.chance(0.35));
        if self.rng.chance(0.03) {
            self.cut_off_reply(phase == Phase::Edit);
        } else if self.spec.shape == Shape::OneTurn && self.profile.hooks && self.rng.chance(0.04) {
            // The agent thought it was done; the stop hook disagreed.
            self.blocked_answer();
        }
        self.round(turn, phase, heavy);
        turn.round += 1;
        self.state = State::InTurn(turn);
    }

    /// An assistant message with its calls, and the tool message answering
    /// them: one `tool_result` per call, in call order, each followed by the
    /// attachment it brought back.
    fn round(&mut self, turn: Turn, phase: Phase, heavy: bool) {
        let mut content = self.thinking_blocks();
        if self.rng.chance(0.45) {
            let remark = text::remark(&self.tools.project, &mut self.rng);
            content.push(Block::text(remark.into_bytes()));
        }
        let calls = match phase {
            Phase::Explore => [1, 1, 1, 1, 1, 1, 2, 2, 3, 4][self.rng.below(10) as usize],
            _ if self.rng.chance(0.15) => 2,
            _ => 1,
        };
        let sizing = self.sizing(heavy, calls);
        let mut results = Vec::with_capacity(calls * 2);
        if turn.round == 0 && turn.planned.is_none_or(|n| n >= 6) && self.rng.chance(0.3) {
            let call = self.tools.todo(&mut self.rng);
            content.push(call.tool_use);
            results.push(call.result);
        }
        for _ in 0..calls {
            let call = self.tools.call(&mut self.rng, phase, sizing);
            content.push(call.tool_use);
            results.push(call.result);
            results.extend(call.media);
        }
        self.push(Role::Assistant, content, false);
        self.push(Role::Tool, results, false);
    }

    /// A reply that ran into the output limit. Text is carried on after a
    /// synthetic "continue"; a cut-off tool call is dropped and the model is
    /// asked to retry smaller.
    fn cut_off_reply(&mut self, was_tool_call: bool) {
        let mut content = self.thinking_blocks();
        let length = self.rng.range_usize(300, 4_000);
        let mut said = text::paragraph(&mut self.rng, length);
        // Cut mid-word, as an output limit does.
        let cut = super::code::floor_char_boundary(&said, said.len() * 9 / 10);
        said.truncate(cut);
        content.push(Block::text(said.into_bytes()));
        self.push(Role::Assistant, content, false);
        let ask = if was_tool_call {
            text::RETRY_SMALLER_TEXT
        } else {
            text::CONTINUE_TEXT
        };
        self.push(Role::User, vec![Block::text(ask.as_bytes().to_vec())], true);
    }

    /// An answer that a stop hook blocked: the turn goes on.
    fn blocked_answer(&mut self) {
        let mut content = self.thinking_blocks();
        let answer = text::final_answer(&self.tools.project, &mut self.rng);
        content.push(Block::text(answer.into_bytes()));
        self.push(Role::Assistant, content, false);
        let complaint = text::stop_hook(&self.tools.project, &mut self.rng);
        self.push(Role::User, vec![Block::text(complaint.into_bytes())], true);
    }

    /// The turn's closing answer; a stop hook may block it and send the
    /// agent back to work in the same turn.
    fn end_turn(&mut self, mut turn: Turn) {
        let mut content = self.thinking_blocks();
        let answer = text::final_answer(&self.tools.project, &mut self.rng);
        content.push(Block::text(answer.into_bytes()));
        self.push(Role::Assistant, content, false);
        if self.rng.chance(0.04) {
            // Cut off at the output limit: continued after a synthetic ask.
            self.push(
                Role::User,
                vec![Block::text(text::CONTINUE_TEXT.as_bytes().to_vec())],
                true,
            );
            let length = self.rng.range_usize(100, 1_500);
            let rest = text::paragraph(&mut self.rng, length);
            self.push(Role::Assistant, vec![Block::text(rest.into_bytes())], false);
        }
        if turn.hook_pending && !self.full() {
            let complaint = text::stop_hook(&self.tools.project, &mut self.rng);
            self.push(Role::User, vec![Block::text(complaint.into_bytes())], true);
            turn.hook_pending = false;
            turn.planned = Some(turn.round + self.rng.range(1, 4) as u32);
            self.state = State::InTurn(turn);
            return;
        }
        self.state = if self.spec.shape == Shape::OneTurn {
            State::Done
        } else {
            State::StartTurn
        };
    }

    /// Thinking for an assistant message, when the model thinks: usually
    /// plain thinking with its signature, sometimes redacted.
    fn thinking_blocks(&mut self) -> Vec<Block> {
        if !self.profile.thinking || !self.rng.chance(0.6) {
            return Vec::new();
        }
        let rng = &mut self.rng;
        let block = if rng.chance(0.07) {
            let length = rng.range_usize(400, 3_000);
            Block {
                kind: BlockType::RedactedThinking,
                text: Some(rng.base64(length).into_bytes().into()),
                ..Block::default()
            }
        } else {
            let thought = text::thinking(&self.tools.project, rng);
            let length = rng.range_usize(280, 900);
            Block {
                kind: BlockType::Thinking,
                text: Some(thought.into_bytes().into()),
                signature: Some(rng.base64(length).as_str().into()),
                ..Block::default()
            }
        };
        vec![block]
    }
}

impl Iterator for SessionGen {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        while self.queue.is_empty() {
            if matches!(self.state, State::Done) {
                return None;
            }
            self.refill();
        }
        let (message, json) = self.queue.pop_front()?;
        self.last_json = json;
        Some(message)
    }
}

/// What a user attaches to a prompt: a screenshot (named, or pasted and so
/// without a name), now and then a PDF, rarely something with neither name
/// nor type.
fn user_attachments(rng: &mut Rng) -> Vec<Block> {
    let mut blocks = Vec::new();
    for _ in 0..rng.range(1, 3) {
        let seed = rng.next_u64();
        let block = match rng.weighted(&[10, 5, 4, 1]) {
            0 => Block {
                kind: BlockType::Image,
                media_type: Some("image/png".into()),
                source: Some(
                    format!("Screenshot {}.png", rng.range(1, 28))
                        .as_str()
                        .into(),
                ),
                ..Block::default()
            },
            1 => Block {
                kind: BlockType::Image,
                media_type: Some(
                    rng.pick(&["image/png", "image/jpeg"])
                        .to_string()
                        .as_str()
                        .into(),
                ),
                ..Block::default()
            },
            2 => Block {
                kind: BlockType::Document,
                media_type: Some("application/pdf".into()),
                source: Some(
                    format!(
                        "{}-Entwurf–v{}.pdf",
                        rng.pick(super::vocab::NOUNS),
                        rng.range(1, 9)
                    )
                    .as_str()
                    .into(),
                ),
                ..Block::default()
            },
            _ => Block {
                kind: BlockType::Image,
                ..Block::default()
            },
        };
        blocks.push(Block {
            media_ref: Some(media_ref(seed, 0).as_str().into()),
            ..block
        });
    }
    blocks
}
