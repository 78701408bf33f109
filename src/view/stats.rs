//! `transcript stats`: where a session's context goes.
//!
//! Every token figure is the estimate of docs/engine.md §2, bytes / 4. A share
//! (by role, by block type) is its own bytes divided by four, so the shares
//! can sum to a few tokens less than the whole, which is divided once.

use std::collections::BTreeMap;
use std::sync::Arc;

use comfy_table::Cell;
use serde::Serialize;

use crate::engine::constants::{defaults, BYTES_PER_TOKEN};
use crate::format::{right, table};
use crate::stats::median_of;
use crate::transcript::{estimate_tokens, BlockType, Message, Role};

use super::args;
use super::calls::{block_at, Calls};
use super::text::human_bytes;

/// The tool name used for results whose call is missing and that carry no
/// name of their own.
pub(crate) const NO_CALL: &str = "(no call)";
/// Rows of the context curve in the readable output; `--json` has them all.
pub(crate) const CURVE_ROWS: usize = 24;

/// Bytes and tokens of one part of the history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Share {
    pub(crate) name: String,
    /// Messages (by role) or blocks (by type).
    pub(crate) count: usize,
    pub(crate) bytes: u64,
    pub(crate) tokens: u64,
}

/// One tool's calls and results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ToolStats {
    pub(crate) name: String,
    pub(crate) calls: usize,
    pub(crate) results: usize,
    /// Results flagged `is_error`.
    pub(crate) errors: usize,
    /// Bytes of result text.
    pub(crate) result_bytes: u64,
    /// The median result size ([`crate::stats`]), to the nearest byte.
    pub(crate) median_result_bytes: u64,
    pub(crate) max_result_bytes: u64,
}

/// One tool result, for the list of the largest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ResultSize {
    /// Index of the message holding it.
    pub(crate) message: usize,
    pub(crate) tool: String,
    /// The call's arguments on one line ("" when the call is missing).
    pub(crate) args: String,
    pub(crate) bytes: u64,
    pub(crate) is_error: bool,
}

/// The estimate before one request, with no compaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct CurvePoint {
    pub(crate) request: usize,
    /// Index of the assistant message answering it.
    pub(crate) message_index: usize,
    pub(crate) tokens: u64,
}

/// Everything `transcript stats` reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Stats {
    pub(crate) messages: usize,
    /// Real turns: user messages that are not synthetic.
    pub(crate) turns: usize,
    /// Provider requests: assistant messages.
    pub(crate) requests: usize,
    pub(crate) bytes: u64,
    pub(crate) tokens: u64,
    pub(crate) by_role: Vec<Share>,
    pub(crate) by_block: Vec<Share>,
    pub(crate) tools: Vec<ToolStats>,
    pub(crate) calls_without_result: usize,
    pub(crate) results_without_call: usize,
    pub(crate) largest_results: Vec<ResultSize>,
    pub(crate) curve: Vec<CurvePoint>,
}

/// Computes the stats of `messages`, keeping the `top` largest results.
pub(crate) fn compute(messages: &[Arc<Message>], top: usize) -> Stats {
    let calls = Calls::new(messages);
    let mut by_role: Vec<Share> = Role::ALL
        .iter()
        .map(|r| Share {
            name: r.as_str().into(),
            ..Share::default()
        })
        .collect();
    let mut by_block: Vec<Share> = BlockType::ALL
        .iter()
        .map(|k| Share {
            name: k.as_str().into(),
            ..Share::default()
        })
        .collect();
    let mut curve = Vec::new();
    let mut running = 0u64;
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Assistant {
            curve.push(CurvePoint {
                request: curve.len(),
                message_index: i,
                tokens: running / BYTES_PER_TOKEN,
            });
        }
        running += m.bytes();
        let role = &mut by_role[Role::ALL.iter().position(|r| *r == m.role).unwrap_or(0)];
        role.count += 1;
        role.bytes += m.bytes();
        for b in &m.content {
            let share = &mut by_block[BlockType::ALL
                .iter()
                .position(|k| *k == b.kind)
                .unwrap_or(0)];
            share.count += 1;
            share.bytes += b.bytes();
        }
    }
    for s in by_role.iter_mut().chain(by_block.iter_mut()) {
        s.tokens = s.bytes / BYTES_PER_TOKEN;
    }

    let mut tools: BTreeMap<String, (ToolStats, Vec<u64>)> = BTreeMap::new();
    fn entry<'a>(
        tools: &'a mut BTreeMap<String, (ToolStats, Vec<u64>)>,
        name: &str,
    ) -> &'a mut (ToolStats, Vec<u64>) {
        let e = tools.entry(name.to_string()).or_default();
        e.0.name = name.to_string();
        e
    }
    for &c in &calls.calls {
        let name = block_at(messages, c)
            .and_then(|b| b.tool_name.as_deref())
            .unwrap_or("(unnamed)");
        entry(&mut tools, name).0.calls += 1;
    }
    let mut results = Vec::with_capacity(calls.results.len());
    for &r in &calls.results {
        let Some(b) = block_at(messages, r) else {
            continue;
        };
        let name = calls.tool_name(messages, r).unwrap_or(NO_CALL);
        let bytes = b.text_len() as u64;
        let is_error = b.is_error == Some(true);
        let (t, sizes) = entry(&mut tools, name);
        t.results += 1;
        t.errors += usize::from(is_error);
        t.result_bytes += bytes;
        sizes.push(bytes);
        let args = calls
            .call_of(r)
            .and_then(|c| block_at(messages, c))
            .map(|c| args::summarize(c.tool_args.as_deref(), 80))
            .unwrap_or_default();
        results.push(ResultSize {
            message: r.0,
            tool: name.to_string(),
            args,
            bytes,
            is_error,
        });
    }
    let mut tools: Vec<ToolStats> = tools
        .into_values()
        .map(|(mut t, sizes)| {
            t.max_result_bytes = sizes.iter().copied().max().unwrap_or(0);
            let mut sizes: Vec<f64> = sizes.into_iter().map(|b| b as f64).collect();
            t.median_result_bytes = median_of(&mut sizes).map_or(0, |m| m.round() as u64);
            t
        })
        .collect();
    tools.sort_by(|a, b| {
        b.result_bytes
            .cmp(&a.result_bytes)
            .then_with(|| a.name.cmp(&b.name))
    });
    // Stable: equal sizes stay in transcript order.
    results.sort_by_key(|r| std::cmp::Reverse(r.bytes));
    results.truncate(top);

    Stats {
        messages: messages.len(),
        turns: messages.iter().filter(|m| m.starts_real_turn()).count(),
        requests: curve.len(),
        bytes: running,
        tokens: estimate_tokens(messages),
        by_role,
        by_block,
        tools,
        calls_without_result: calls.unanswered().count(),
        results_without_call: calls.orphans().count(),
        largest_results: results,
        curve,
    }
}

/// The readable report: one table per question.
pub(crate) fn tables(s: &Stats, label: &str, skipped: usize) -> String {
    let mut overview = table(vec![
        "session",
        "messages",
        "turns",
        "requests",
        "size",
        "est. tokens",
        "bad lines",
    ]);
    overview.add_row(vec![
        Cell::new(label),
        right(s.messages),
        right(s.turns),
        right(s.requests),
        right(human_bytes(s.bytes)),
        right(s.tokens),
        right(skipped),
    ]);

    let mut roles = table(vec!["role", "messages", "bytes", "est. tokens"]);
    for r in s.by_role.iter().filter(|r| r.count > 0) {
        roles.add_row(vec![
            Cell::new(&r.name),
            right(r.count),
            right(r.bytes),
            right(r.tokens),
        ]);
    }
    let mut blocks = table(vec!["block type", "blocks", "bytes", "est. tokens"]);
    for b in s.by_block.iter().filter(|b| b.count > 0) {
        blocks.add_row(vec![
            Cell::new(&b.name),
            right(b.count),
            right(b.bytes),
            right(b.tokens),
        ]);
    }

    let mut tools = table(vec![
        "tool",
        "calls",
        "results",
        "errors",
        "result bytes",
        "median",
        "max",
    ]);
    for t in &s.tools {
        tools.add_row(vec![
            Cell::new(&t.name),
            right(t.calls),
            right(t.results),
            right(t.errors),
            right(t.result_bytes),
            right(t.median_result_bytes),
            right(t.max_result_bytes),
        ]);
    }

    let mut largest = table(vec!["message", "tool", "arguments", "bytes", "error"]);
    for r in &s.largest_results {
        largest.add_row(vec![
            right(format!("#{}", r.message)),
            Cell::new(&r.tool),
            Cell::new(&r.args),
            right(r.bytes),
            Cell::new(if r.is_error { "yes" } else { "" }),
        ]);
    }

    let window = defaults::MAX_TOKENS;
    let mut curve = table(vec![
        "request",
        "message",
        "est. tokens before",
        "% of 120k",
    ]);
    for p in sample(&s.curve, CURVE_ROWS) {
        curve.add_row(vec![
            right(p.request),
            right(format!("#{}", p.message_index)),
            right(p.tokens),
            right(format!("{:.1}", p.tokens as f64 * 100.0 / window as f64)),
        ]);
    }

    let mut out = format!("{overview}\n\nTokens by role\n{roles}\n\nTokens by block type\n{blocks}\n\nTools\n{tools}\n");
    if s.calls_without_result > 0 || s.results_without_call > 0 {
        out.push_str(&format!(
            "{} calls without a result, {} results without a call\n",
            s.calls_without_result, s.results_without_call
        ));
    }
    out.push_str(&format!(
        "\nLargest results\n{largest}\n\nContext before each request, no compaction"
    ));
    if s.curve.len() > CURVE_ROWS {
        out.push_str(&format!(
            " ({} of {} requests; --json has all)",
            CURVE_ROWS.min(s.curve.len()),
            s.curve.len()
        ));
    }
    out.push_str(&format!("\n{curve}"));
    out
}

/// At most `rows` points spread evenly over the curve, first and last
/// always included.
pub(crate) fn sample(curve: &[CurvePoint], rows: usize) -> Vec<&CurvePoint> {
    if curve.len() <= rows {
        return curve.iter().collect();
    }
    if rows < 2 {
        return curve.iter().take(rows).collect();
    }
    let last = curve.len() - 1;
    (0..rows).map(|k| &curve[k * last / (rows - 1)]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Block;

    #[test]
    fn the_median_is_interpolated_and_errors_are_counted() {
        let mut messages = vec![Arc::new(Message::user("go".as_bytes()))];
        for (n, size, err) in [
            (1, 10, false),
            (2, 30, true),
            (3, 20, false),
            (4, 40, false),
        ] {
            let id = format!("c{n}");
            messages.push(Arc::new(Message::new(
                Role::Assistant,
                vec![Block::tool_use(&id, "bash", "{}")],
                false,
                None,
            )));
            messages.push(Arc::new(Message::new(
                Role::Tool,
                vec![Block::tool_result(
                    Some(id.as_str().into()),
                    vec![b'x'; size],
                    err,
                )],
                false,
                None,
            )));
        }
        let s = compute(&messages, 2);
        let bash = &s.tools[0];
        assert_eq!((bash.calls, bash.results, bash.errors), (4, 4, 1));
        assert_eq!(
            (
                bash.result_bytes,
                bash.median_result_bytes,
                bash.max_result_bytes
            ),
            (100, 25, 40)
        );
        assert_eq!(
            s.largest_results
                .iter()
                .map(|r| r.bytes)
                .collect::<Vec<_>>(),
            vec![40, 30]
        );
        assert_eq!(s.requests, 4);
        assert_eq!(s.curve[0].tokens, 0);
    }

    #[test]
    fn a_sampled_curve_keeps_its_ends() {
        let curve: Vec<CurvePoint> = (0..100)
            .map(|i| CurvePoint {
                request: i,
                message_index: i,
                tokens: i as u64,
            })
            .collect();
        let s = sample(&curve, 5);
        assert_eq!(s.len(), 5);
        assert_eq!((s[0].request, s[4].request), (0, 99));
        assert_eq!(sample(&curve[..3], 5).len(), 3);
    }
}
