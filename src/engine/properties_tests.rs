//! Property tests of the invariants smith's compaction is built around,
//! checked on every compaction of randomly generated sessions under random
//! configs (the fuzz target checks the same with coverage guidance).

use std::sync::Arc;

use crate::test_support::*;
use proptest::prelude::*;
use smith_calibrate::engine::{Config, Engine, EngineVersion, Strategy as Outcome};
use smith_calibrate::transcript::{Block, BlockType, Message, Role};

#[derive(Clone, Debug)]
struct Call {
    tool: usize,
    args: usize,
    size: usize,
    error: bool,
    image: bool,
}

#[derive(Clone, Debug)]
struct Step {
    thinking: Option<usize>,
    text: usize,
    calls: Vec<Call>,
}

#[derive(Clone, Debug)]
pub(super) struct Turn {
    synthetic: bool,
    image: bool,
    steps: Vec<Step>,
}

const TOOLS: [&str; 5] = ["read_file", "grep", "glob", "bash", "edit_file"];

fn call_strategy() -> impl Strategy<Value = Call> {
    (
        0..TOOLS.len(),
        0..3usize,
        prop_oneof![0..600usize, 400..3000usize, 3000..9000usize],
        any::<bool>(),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(tool, args, size, error, image)| Call {
            tool,
            args,
            size,
            error,
            image,
        })
}

fn step_strategy() -> impl Strategy<Value = Step> {
    (
        prop::option::of(0..800usize),
        0..400usize,
        prop::collection::vec(call_strategy(), 0..4),
    )
        .prop_map(|(thinking, text, calls)| Step {
            thinking,
            text,
            calls,
        })
}

pub(super) fn turn_strategy() -> impl Strategy<Value = Turn> {
    (
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
        prop::collection::vec(step_strategy(), 1..4),
    )
        .prop_map(|(synthetic, image, steps)| Turn {
            synthetic,
            image,
            steps,
        })
}

pub(super) fn config_strategy() -> impl Strategy<Value = Config> {
    (
        200u64..6000,
        0.3f64..1.0,
        0.05f64..0.9,
        8usize..1024,
        0usize..5,
        0u64..300,
        1.0f64..2.0,
        0u64..300,
        prop::sample::select(EngineVersion::ALL.to_vec()),
    )
        .prop_map(
            |(max, at, to, cap, window, overhead, ratio, summary, engine)| Config {
                max_tokens: max,
                compact_at: at,
                compact_to: to.min(at),
                result_cap: cap,
                window_turns: window,
                overhead_tokens: overhead,
                ratio,
                summary_tokens: summary,
                engine,
            },
        )
}

/// Text of `n` bytes with a two-byte character every 97 bytes, so heads
/// often split one.
fn text(n: usize, salt: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 2);
    while out.len() < n {
        if (out.len() + salt) % 97 == 0 {
            out.extend_from_slice("é".as_bytes());
        } else {
            out.push(b'a' + ((out.len() + salt) % 26) as u8);
        }
    }
    out
}

pub(super) fn build(turns: &[Turn]) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    let mut id = 0usize;
    for (t, turn) in turns.iter().enumerate() {
        let mut content = vec![Block::text(text(20, t))];
        if turn.image {
            content.push(media(BlockType::Image, None, Some("shot.png"), None));
        }
        h.push(arc(Message::new(
            Role::User,
            content,
            turn.synthetic && t > 0,
            None,
        )));
        for step in &turn.steps {
            let mut blocks = Vec::new();
            if let Some(n) = step.thinking {
                blocks.push(thinking(&String::from_utf8(text(n, id)).unwrap(), "sig"));
            }
            blocks.push(Block::text(text(step.text, id)));
            let mut results = Vec::new();
            for c in &step.calls {
                id += 1;
                let call_id = format!("toolu_{id}");
                let args = format!(r#"{{"path":"f{}.rs"}}"#, c.args);
                blocks.push(Block::tool_use(&call_id, TOOLS[c.tool], &args));
                let mut r = result_block(&call_id, &text(c.size, id));
                r.is_error = Some(c.error);
                results.push(r);
                if c.image {
                    results.push(media(
                        BlockType::Image,
                        Some(&call_id),
                        None,
                        Some("image/png"),
                    ));
                }
            }
            h.push(arc(Message::new(Role::Assistant, blocks, false, None)));
            if !results.is_empty() {
                h.push(arc(Message::new(Role::Tool, results, false, None)));
            }
        }
    }
    h
}

/// Thinking blocks from the current turn on (window of one real turn).
fn current_thinking(h: &[Arc<Message>]) -> Vec<Block> {
    let start = h.iter().rposition(|m| m.starts_real_turn()).unwrap_or(0);
    h[start..]
        .iter()
        .flat_map(|m| m.content.iter().filter(|b| b.kind.is_thinking()).cloned())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn compaction_invariants_hold_on_every_request(
        turns in prop::collection::vec(turn_strategy(), 1..12),
        config in config_strategy(),
    ) {
        let record = build(&turns);
        let engine = Engine::new(config);
        let mut working: Vec<Arc<Message>> = Vec::new();
        for message in &record {
            if message.role == Role::Assistant {
                let c = engine.compact(&working);
                match &c.messages {
                    None => prop_assert!(c.triggered || c.before == c.after),
                    Some(new) => {
                        prop_assert!(c.triggered, "below the trigger nothing changes");
                        prop_assert!(pairing_holds(new).is_ok(), "{:?}", pairing_holds(new));
                        if !matches!(c.strategy, Outcome::Summarized | Outcome::Dropped) {
                            prop_assert!(c.after <= c.before);
                            prop_assert_eq!(
                                current_thinking(new), current_thinking(&working),
                                "the current turn's thinking survives byte for byte"
                            );
                        }
                        prop_assert!(new.iter().all(|m| !m.content.is_empty()), "no message left without blocks");
                        prop_assert_eq!(c.history_bytes, total_bytes(new));
                        working = new.clone();
                    }
                }
                if !c.triggered {
                    prop_assert!(c.messages.is_none());
                }
            }
            working.push(message.clone());
        }
        prop_assert!(pairing_holds(&record).is_ok());
    }
}
