//! Arbitrary histories compacted under arbitrary configs, checking the
//! invariants smith is built around: every tool_use keeps exactly one
//! tool_result, nothing changes below the trigger, `after <= before` unless a
//! summary had to be added, the current turn's thinking is unchanged, and no
//! message is left without blocks.
#![no_main]

use std::collections::HashMap;
use std::sync::Arc;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use smith_calibrate::engine::{Config, Engine, EngineVersion, Strategy};
use smith_calibrate::transcript::{Block, BlockType, Message, Role};

#[derive(Arbitrary, Debug)]
struct Call {
    tool: u8,
    args: u8,
    size: u16,
    multiplier: u8,
    image: bool,
    error: bool,
}

#[derive(Arbitrary, Debug)]
struct Step {
    thinking: Option<u16>,
    text: u16,
    calls: Vec<Call>,
}

#[derive(Arbitrary, Debug)]
struct Turn {
    synthetic: bool,
    image: bool,
    document: bool,
    steps: Vec<Step>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    max_tokens: u16,
    compact_at: u8,
    compact_to: u8,
    result_cap: u16,
    window: u8,
    overhead: u16,
    ratio: u8,
    summary: u16,
    turns: Vec<Turn>,
}

const TOOLS: [&str; 5] = ["read_file", "grep", "glob", "bash", "edit_file"];

fn text(n: usize, salt: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 3);
    while out.len() < n {
        if (out.len() + salt) % 89 == 0 {
            out.extend_from_slice("—".as_bytes());
        } else {
            out.push(b'a' + ((out.len() + salt) % 26) as u8);
        }
    }
    out
}

fn media(kind: BlockType, id: Option<&str>) -> Block {
    Block {
        kind,
        tool_call_id: id.map(Into::into),
        source: Some("file.bin".into()),
        ..Block::default()
    }
}

fn build(turns: &[Turn]) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    let mut id = 0usize;
    for (t, turn) in turns.iter().take(40).enumerate() {
        let mut content = vec![Block::text(text(16, t))];
        if turn.image {
            content.push(media(BlockType::Image, None));
        }
        if turn.document {
            content.push(media(BlockType::Document, None));
        }
        h.push(Arc::new(Message::new(Role::User, content, turn.synthetic && t > 0, None)));
        for step in turn.steps.iter().take(6) {
            let mut blocks = Vec::new();
            if let Some(n) = step.thinking {
                blocks.push(Block {
                    kind: BlockType::Thinking,
                    text: Some(text(n as usize % 4000, id).into()),
                    signature: Some("sig".into()),
                    ..Block::default()
                });
            }
            blocks.push(Block::text(text(step.text as usize % 2000, id)));
            let mut results = Vec::new();
            for c in step.calls.iter().take(5) {
                id += 1;
                let call_id = format!("toolu_{id}");
                let args = format!(r#"{{"path":"f{}"}}"#, c.args % 4);
                blocks.push(Block::tool_use(&call_id, TOOLS[c.tool as usize % TOOLS.len()], &args));
                let size = (c.size as usize % 12_000) * (1 + c.multiplier as usize % 3);
                let mut r = Block::tool_result(Some(call_id.as_str().into()), text(size, id), c.error);
                if c.error && c.size % 3 == 0 {
                    r.is_error = None;
                }
                results.push(r);
                if c.image {
                    results.push(media(BlockType::Image, Some(&call_id)));
                }
            }
            h.push(Arc::new(Message::new(Role::Assistant, blocks, false, None)));
            if !results.is_empty() {
                h.push(Arc::new(Message::new(Role::Tool, results, false, None)));
            }
        }
    }
    h
}

fn pairing_holds(h: &[Arc<Message>]) -> bool {
    let mut calls: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, m) in h.iter().enumerate() {
        for b in &m.content {
            let Some(id) = b.tool_call_id.as_deref() else { continue };
            match b.kind {
                BlockType::ToolUse => {
                    calls.insert(id, (i, 0));
                }
                BlockType::ToolResult => match calls.get_mut(id) {
                    Some((at, n)) if *at < i => *n += 1,
                    _ => return false,
                },
                _ => {}
            }
        }
    }
    calls.values().all(|(_, n)| *n == 1)
}

fn current_thinking(h: &[Arc<Message>]) -> Vec<Block> {
    let start = h.iter().rposition(|m| m.starts_real_turn()).unwrap_or(0);
    h[start..]
        .iter()
        .flat_map(|m| m.content.iter().filter(|b| b.kind.is_thinking()).cloned())
        .collect()
}

fuzz_target!(|input: Input| {
    let at = 0.2 + (input.compact_at as f64 / 255.0) * 0.8;
    let config = Config {
        max_tokens: 100 + input.max_tokens as u64,
        compact_at: at,
        compact_to: at * (input.compact_to as f64 / 255.0),
        result_cap: 1 + input.result_cap as usize % 4096,
        window_turns: input.window as usize % 6,
        overhead_tokens: input.overhead as u64 % 2000,
        ratio: 1.0 + input.ratio as f64 / 255.0,
        summary_tokens: input.summary as u64 % 500,
        // Both engines: the odd summary sizes run smith after #118.
        engine: if input.summary % 2 == 1 {
            EngineVersion::Next
        } else {
            EngineVersion::V04
        },
    };
    let record = build(&input.turns);
    let engine = Engine::new(config);
    let mut working: Vec<Arc<Message>> = Vec::new();
    for message in &record {
        if message.role == Role::Assistant {
            let c = engine.compact(&working);
            if !c.triggered {
                assert!(c.messages.is_none(), "below the trigger nothing changes");
                assert_eq!(c.before, c.after);
            }
            if let Some(new) = c.messages {
                assert!(pairing_holds(&new), "pairing broken");
                assert!(new.iter().all(|m| !m.content.is_empty()), "empty message");
                assert_eq!(c.history_bytes, new.iter().map(|m| m.bytes()).sum::<u64>());
                if !matches!(c.strategy, Strategy::Summarized | Strategy::Dropped) {
                    assert!(c.after <= c.before, "after > before without a summary");
                    assert_eq!(current_thinking(&new), current_thinking(&working));
                }
                working = new;
            }
        }
        working.push(message.clone());
    }
});
