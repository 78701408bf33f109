//! The other agents' policies: one test per documented rule on hand-built
//! histories, pairing and the Compactor contract under every policy on
//! random sessions, a sweep of every policy against their replays, and
//! their descriptions. The loss measure's cases are `loss::measure_tests`.

use std::sync::Arc;

use crate::test_support::policies::write_loss_session;
use crate::test_support::*;
use proptest::prelude::*;
use smith_calibrate::engine::{
    Compaction, Config, EditKind, EngineVersion, Stage, Strategy as Outcome,
};
use smith_calibrate::loss;
use smith_calibrate::policy::{
    claude_code, codex, context_editing, masking, opencode, Knobs, Policy, Setup,
};
use smith_calibrate::replay::{self, SessionFacts};
use smith_calibrate::transcript::{Block, BlockType, Message, Role};

// ---------------------------------------------------------------- helpers

/// `policy` at a window of `max_tokens`, smith's other knobs at their
/// defaults.
pub(crate) fn setup(policy: Policy, max_tokens: u64, knobs: Knobs) -> Setup {
    Setup::new(
        policy,
        Config {
            max_tokens,
            ..Config::default()
        },
        knobs,
    )
}

fn compact(s: &Setup, h: &[Arc<Message>]) -> Compaction {
    s.compactor().compact_measured(h, total_bytes(h))
}

/// The history a compaction returned (or the input, untouched).
fn after(c: &Compaction, h: &[Arc<Message>]) -> Vec<Arc<Message>> {
    c.messages.clone().unwrap_or_else(|| h.to_vec())
}

fn text(h: &[Arc<Message>], i: usize) -> String {
    h[i].content
        .iter()
        .find(|b| b.kind == BlockType::ToolResult || b.kind == BlockType::Text)
        .map(|b| b.text_lossy().into_owned())
        .unwrap_or_default()
}

/// `n` tool steps in one turn: call `c<i>` of `tool` answered by a result
/// of `bytes` bytes whose text names `token<i>` in its first line.
pub(crate) fn steps(h: &mut Vec<Arc<Message>>, from: usize, n: usize, tool: &str, bytes: usize) {
    for i in from..from + n {
        let id = format!("c{i}");
        h.push(call(&id, tool, &format!(r#"{{"path":"f{i}.rs"}}"#)));
        let mut body = format!("line one token{i:06}\n").into_bytes();
        while body.len() < bytes {
            body.extend_from_slice(b"more output here\n");
        }
        body.truncate(bytes.max(21));
        h.push(result(&id, &body));
    }
}

/// The default knobs, changed by `f`.
pub(crate) fn knobs(f: impl FnOnce(&mut Knobs)) -> Knobs {
    let mut k = Knobs::default();
    f(&mut k);
    k
}

// ----------------------------------------------------------------- masking

#[test]
fn masking_replaces_results_older_than_the_last_m_with_their_line_count() {
    let h = vec![
        user("go"),
        call("c1", "bash", "{}"),
        result("c1", b"one\ntwo\nthree"),
        call("c2", "bash", "{}"),
        result("c2", b"only line\n"),
        call("c3", "bash", "{}"),
        result("c3", b"kept 1\nkept 2\n"),
        call("c4", "bash", "{}"),
        result("c4", b"kept 3"),
    ];
    let s = setup(Policy::Masking, 1_000_000, knobs(|k| k.mask_window = 2));
    let c = compact(&s, &h);
    let out = after(&c, &h);
    assert_eq!(text(&out, 2), "Old environment output: (3 lines omitted)");
    assert_eq!(text(&out, 4), "Old environment output: (1 lines omitted)");
    assert_eq!(text(&out, 6), text(&h, 6), "the last M stay whole");
    assert_eq!(text(&out, 8), text(&h, 8));
    assert_eq!(c.effects.results_stubbed, 2);
    assert_eq!(c.stages, vec![Stage::Truncate]);
    assert_eq!(c.strategy, Outcome::Truncated);
    assert_eq!(c.first_changed, Some(2));
    assert_eq!(
        c.effects.reclaimed[Stage::Truncate.index()],
        total_bytes(&h) as i64 / 4 - total_bytes(&out) as i64 / 4,
        "a placeholder longer than its result reclaims a negative amount, as in SWE-agent"
    );
}

#[test]
fn masking_acts_on_every_request_whatever_its_size() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 2, "bash", 30);
    let s = setup(Policy::Masking, 1_000_000, knobs(|k| k.mask_window = 1));
    let c = compact(&s, &h);
    assert!(!c.triggered, "far below the window");
    assert_eq!(c.effects.results_stubbed, 1);
    assert!(masking::is_placeholder(
        after(&c, &h)[2].content[0].text_bytes()
    ));
}

#[test]
fn masking_leaves_masked_results_alone() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 3, "bash", 100);
    let s = setup(Policy::Masking, 1_000_000, knobs(|k| k.mask_window = 1));
    let once = after(&compact(&s, &h), &h);
    let again = compact(&s, &once);
    assert!(again.messages.is_none());
    assert_eq!(again.strategy, Outcome::None);
}

// ------------------------------------------------------------- claude-code

#[test]
fn claude_code_does_nothing_below_the_window_minus_33000() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 8, "read_file", 400);
    // 34000-token window: trigger at 1000 tokens; the history is ~820.
    let s = setup(Policy::ClaudeCode, 34_000, Knobs::default());
    assert_eq!(s.budget().trigger_tokens, 1_000);
    let c = compact(&s, &h);
    assert!(c.messages.is_none() && !c.triggered);
}

#[test]
fn claude_code_clears_old_results_of_its_tools_keeping_the_five_most_recent() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 4, "Read", 900); // Claude Code's name
    steps(&mut h, 4, 1, "todo_write", 900); // not clearable
    steps(&mut h, 5, 5, "bash", 900); // smith's name
                                      // Trigger at 2000 tokens; ~2300 before, ~1450 after clearing.
    let s = setup(Policy::ClaudeCode, 35_000, Knobs::default());
    let c = compact(&s, &h);
    let out = after(&c, &h);
    for i in 0..4 {
        assert_eq!(
            text(&out, 2 + 2 * i),
            claude_code::PLACEHOLDER,
            "result {i}"
        );
    }
    assert_eq!(text(&out, 10), text(&h, 10), "todo_write is not cleared");
    for i in 5..10 {
        assert_eq!(
            text(&out, 2 + 2 * i),
            text(&h, 2 + 2 * i),
            "the 5 most recent stay"
        );
    }
    assert_eq!(c.effects.results_stubbed, 4);
    assert_eq!(c.strategy, Outcome::Truncated, "clearing was enough");
}

#[test]
fn claude_code_summarises_the_whole_history_when_clearing_is_not_enough() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 6, "bash", 2000);
    let s = setup(Policy::ClaudeCode, 34_000, Knobs::default());
    let c = compact(&s, &h);
    let out = after(&c, &h);
    assert_eq!(c.strategy, Outcome::Summarized);
    assert_eq!(c.cut, Some(h.len()));
    assert_eq!(out.len(), 1, "only the summary is left");
    assert!(text(&out, 0).starts_with("Summary of the earlier conversation: "));
    assert_eq!(c.effects.messages_summarized, h.len() as u64);
    assert_eq!(c.stages, vec![Stage::Truncate, Stage::Summarize]);
    assert_eq!(
        c.effects.results_stubbed, 1,
        "the one clearable result beyond the 5 kept"
    );
}

// ------------------------------------------------------------------- codex

#[test]
fn codex_caps_results_on_arrival_and_counts_them_at_the_next_request() {
    let big: Vec<u8> = (0..1000)
        .flat_map(|i| format!("{i:05}\n").into_bytes())
        .collect();
    let h = vec![
        user("go"),
        call("c1", "bash", r#"{"command":"seq"}"#),
        result("c1", &big),
        assistant("done"),
    ];
    let s = setup(Policy::Codex, 1_000_000, Knobs::default());
    let engine = s.compactor();
    let mut seen = Vec::new();
    let facts = replay::replay_with(&h, engine.as_ref(), |r, history, c| {
        seen.push((r.request, c.edits.clone(), history.to_vec()));
        true
    });
    let (_, edits, history) = &seen[1];
    assert_eq!(edits.len(), 1);
    assert_eq!(
        (edits[0].message, edits[0].kind.clone()),
        (2, EditKind::HeadKept)
    );
    let sent = history[2].content[0].text_bytes();
    assert!(codex::is_capped(sent));
    assert!(sent.starts_with(b"00000\n") && sent.ends_with(b"00999\n"));
    assert_eq!(facts.effects.results_truncated, 1);
    assert!(facts.effects.reclaimed[Stage::Truncate.index()] > 0);
    assert_eq!(facts.compactions, 0, "a cap on arrival is not a compaction");
    assert_eq!(facts.stage_fires[Stage::Truncate.index()], 0);
}

#[test]
fn codex_compacts_at_90_percent_to_recent_user_messages_and_the_summary() {
    let mut h = vec![user("first prompt")];
    steps(&mut h, 0, 3, "bash", 1000);
    h.push(user("second prompt"));
    steps(&mut h, 3, 3, "bash", 1000);
    // 1700-token window: trigger at 1530; the history is ~1560.
    let s = setup(Policy::Codex, 1_700, Knobs::default());
    let c = compact(&s, &h);
    let out = after(&c, &h);
    assert_eq!(c.strategy, Outcome::Summarized);
    assert_eq!(c.cut, Some(h.len()));
    assert_eq!(out.len(), 3);
    assert!(Arc::ptr_eq(&out[0], &h[0]) && Arc::ptr_eq(&out[1], &h[7]));
    assert!(text(&out, 2).starts_with("Summary of the earlier conversation: "));
    assert_eq!(c.effects.messages_summarized, h.len() as u64 - 2);
}

#[test]
fn codex_keeps_user_messages_newest_first_and_cuts_the_one_that_does_not_fit() {
    let h = vec![
        user(&"a".repeat(400)),
        assistant("ok"),
        user(&"b".repeat(400)),
        assistant(&"x".repeat(6000)),
    ];
    // Room for 150 tokens of user messages: all of the newest (100 tokens)
    // and 200 bytes of the older one.
    let s = setup(Policy::Codex, 1_000, knobs(|k| k.codex_user_tokens = 150));
    let c = compact(&s, &h);
    let out = after(&c, &h);
    assert_eq!(out.len(), 3);
    assert_eq!(text(&out, 0), "a".repeat(200));
    assert!(Arc::ptr_eq(&out[1], &h[2]));
}

// ---------------------------------------------------------------- opencode

/// Two earlier turns of `per` results of 8000 bytes (2000 tokens) each,
/// then the last two turns with small results.
fn opencode_history(per: usize) -> Vec<Arc<Message>> {
    let mut h = vec![user("one")];
    steps(&mut h, 0, per, "bash", 8000);
    h.push(assistant("done one"));
    h.push(user("two"));
    steps(&mut h, per, per, "bash", 8000);
    h.push(assistant("done two"));
    h.push(user("three"));
    steps(&mut h, 2 * per, 1, "bash", 100);
    h.push(assistant("done three"));
    h.push(user("four"));
    steps(&mut h, 2 * per + 1, 1, "bash", 100);
    h
}

#[test]
fn opencode_prunes_beyond_the_protected_tokens_only_if_it_reclaims_more_than_the_minimum() {
    let h = opencode_history(15);
    // 30 results of 2000 tokens before the last two turns: the newest 20
    // are protected (40000), the 10 older (20000 tokens)... not more than
    // the minimum, so nothing happens.
    let s = setup(Policy::Opencode, 1_000_000, Knobs::default());
    let mut below = h.clone();
    below.push(user("five"));
    assert!(compact(&s, &below).messages.is_none());
    // With 16 per turn, 12 are pruned: 24000 tokens, more than 20000.
    let h = opencode_history(16);
    let mut below = h.clone();
    below.push(user("five"));
    let c = compact(&s, &below);
    let out = after(&c, &below);
    assert!(
        !c.triggered,
        "pruning runs at a new prompt below the trigger"
    );
    assert_eq!(c.effects.results_stubbed, 12);
    assert_eq!(text(&out, 2), opencode::PLACEHOLDER, "the oldest goes");
    assert_eq!(
        text(&out, 24),
        opencode::PLACEHOLDER,
        "the 12th oldest goes"
    );
    assert_eq!(
        text(&out, 26),
        text(&h, 26),
        "the 13th is within the newest 40000 tokens"
    );
}

#[test]
fn opencode_skips_the_last_two_user_turns() {
    // 31 results of 2000 tokens: 20 protected, 11 (22000 tokens) prunable.
    let big_turn_then_small = |big_first: bool| {
        let mut h = vec![user("zero")];
        steps(&mut h, 0, if big_first { 31 } else { 1 }, "bash", 8000);
        h.push(assistant("done zero"));
        h.push(user("one"));
        steps(
            &mut h,
            40,
            if big_first { 1 } else { 31 },
            "bash",
            if big_first { 100 } else { 8000 },
        );
        h.push(assistant("done one"));
        h.push(user("two"));
        steps(&mut h, 80, 1, "bash", 100);
        h.push(assistant("done two"));
        h.push(user("three"));
        h
    };
    let s = setup(Policy::Opencode, 1_000_000, Knobs::default());
    // Turn "zero" is three turns back from the new prompt: pruned.
    let h = big_turn_then_small(true);
    let c = compact(&s, &h);
    assert_eq!(c.effects.results_stubbed, 11);
    assert_eq!(text(&after(&c, &h), 2), opencode::PLACEHOLDER);
    // The same results in turn "one", the second-to-last before the new
    // prompt, are left alone.
    let h = big_turn_then_small(false);
    assert!(compact(&s, &h).messages.is_none());
    // --prune-turns 1 skips only the turn of the new prompt: turn "one" is
    // pruned too (its 11 oldest, and the one big result of turn "zero").
    let turns = |n| {
        let k = Knobs {
            prune_turns: n,
            ..Knobs::default()
        };
        setup(Policy::Opencode, 1_000_000, k)
    };
    assert_eq!(compact(&turns(1), &h).effects.results_stubbed, 12);
    // --prune-turns 3 protects turn "zero" as well.
    assert!(compact(&turns(3), &big_turn_then_small(true))
        .messages
        .is_none());
}

#[test]
fn opencode_summarises_above_the_window_minus_20000_when_pruning_is_not_enough() {
    let h = opencode_history(3);
    let s = setup(Policy::Opencode, 30_000, Knobs::default());
    assert_eq!(s.budget().trigger_tokens, 10_000);
    let c = compact(&s, &h);
    assert_eq!(c.strategy, Outcome::Summarized);
    assert_eq!(after(&c, &h).len(), 1);
}

// --------------------------------------------------------- context-editing

#[test]
fn context_editing_does_nothing_at_or_below_the_trigger() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 5, "bash", 800);
    let s = setup(
        Policy::ContextEditing,
        1_000_000,
        knobs(|k| k.context_editing_trigger = 5_000),
    );
    let c = compact(&s, &h);
    assert!(c.messages.is_none() && !c.triggered);
}

#[test]
fn context_editing_clears_all_but_the_three_most_recent_results() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 6, "bash", 800);
    let s = setup(
        Policy::ContextEditing,
        1_000_000,
        knobs(|k| k.context_editing_trigger = 1_000),
    );
    let c = compact(&s, &h);
    let out = after(&c, &h);
    for i in 0..3 {
        assert_eq!(text(&out, 2 + 2 * i), context_editing::PLACEHOLDER);
    }
    for i in 3..6 {
        assert_eq!(text(&out, 2 + 2 * i), text(&h, 2 + 2 * i));
    }
    assert_eq!(c.effects.results_stubbed, 3);
}

#[test]
fn context_editing_spares_excluded_tools() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 2, "Memory", 800);
    steps(&mut h, 2, 4, "bash", 800);
    let s = setup(
        Policy::ContextEditing,
        1_000_000,
        knobs(|k| {
            k.context_editing_trigger = 1_000;
            k.exclude_tools = vec!["memory".into()];
        }),
    );
    let out = after(&compact(&s, &h), &h);
    assert_eq!(text(&out, 2), text(&h, 2));
    assert_eq!(text(&out, 4), text(&h, 4));
    assert_eq!(text(&out, 6), context_editing::PLACEHOLDER);
}

#[test]
fn context_editing_clears_nothing_unless_it_reclaims_clear_at_least() {
    let mut h = vec![user("go")];
    steps(&mut h, 0, 5, "bash", 800);
    let k = |at_least| {
        knobs(|k| {
            k.context_editing_trigger = 500;
            k.clear_at_least = at_least;
        })
    };
    // Two results of ~200 tokens can go: ~396 tokens.
    let c = compact(&setup(Policy::ContextEditing, 1_000_000, k(500)), &h);
    assert!(c.messages.is_none() && c.triggered);
    let c = compact(&setup(Policy::ContextEditing, 1_000_000, k(300)), &h);
    assert_eq!(c.effects.results_stubbed, 2);
}

// ------------------------------------------------- properties, every policy

#[derive(Clone, Debug)]
struct Turn {
    synthetic: bool,
    steps: Vec<Vec<(usize, usize)>>,
}

const TOOLS: [&str; 6] = ["read_file", "grep", "bash", "edit_file", "skill", "Memory"];

fn turn_strategy() -> impl Strategy<Value = Turn> {
    let call = (
        0..TOOLS.len(),
        prop_oneof![0..400usize, 400..3000usize, 3000..12000usize],
    );
    (
        prop::bool::weighted(0.2),
        prop::collection::vec(prop::collection::vec(call, 0..4), 1..4),
    )
        .prop_map(|(synthetic, steps)| Turn { synthetic, steps })
}

fn body(n: usize, salt: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 8);
    let mut line = 0;
    while out.len() < n {
        out.extend_from_slice(format!("ident_{salt}_{line:04} é\n").as_bytes());
        line += 1;
    }
    out.truncate(n);
    out
}

fn build(turns: &[Turn]) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    let mut id = 0usize;
    for (t, turn) in turns.iter().enumerate() {
        h.push(arc(Message::new(
            Role::User,
            vec![Block::text(format!("prompt {t}").into_bytes())],
            turn.synthetic && t > 0,
            None,
        )));
        for step in &turn.steps {
            let mut blocks = vec![Block::text(
                format!("step using ident_{id}_0001").into_bytes(),
            )];
            let mut results = Vec::new();
            for &(tool, size) in step {
                id += 1;
                let cid = format!("toolu_{id}");
                blocks.push(Block::tool_use(
                    &cid,
                    TOOLS[tool],
                    &format!(r#"{{"path":"f{}.rs"}}"#, id % 4),
                ));
                results.push(result_block(&cid, &body(size, id)));
            }
            h.push(arc(Message::new(Role::Assistant, blocks, false, None)));
            if !results.is_empty() {
                h.push(arc(Message::new(Role::Tool, results, false, None)));
            }
        }
    }
    h.push(assistant("the end"));
    h
}

fn setup_strategy() -> impl Strategy<Value = Setup> {
    (
        0..Policy::ALL.len(),
        300u64..8000,
        0u64..200,
        0u64..200,
        (0usize..6, 0u64..8000, 64usize..3000, 2usize..60),
        (0.3f64..1.0, 0u64..600, 0u64..2000, 0u64..600, 0usize..4),
        (100u64..6000, 0usize..5, 0u64..400, any::<bool>()),
    )
        .prop_map(
            |(
                p,
                max,
                overhead,
                summary,
                (m, reserve, cap_b, cap_l),
                (at, users, protect, min, turns),
                (trig, keep, least, excl),
            )| {
                let config = Config {
                    max_tokens: max,
                    overhead_tokens: overhead,
                    summary_tokens: summary,
                    ..Config::default()
                };
                let k = Knobs {
                    mask_window: m,
                    claude_code_keep: m,
                    claude_code_reserve: reserve,
                    codex_cap_bytes: cap_b,
                    codex_cap_lines: cap_l,
                    codex_compact_at: at,
                    codex_user_tokens: users,
                    opencode_reserve: reserve,
                    prune_protect: protect,
                    prune_minimum: min,
                    prune_turns: turns,
                    context_editing_trigger: trig,
                    clear_keep: keep,
                    clear_at_least: least,
                    exclude_tools: if excl {
                        vec!["memory".into()]
                    } else {
                        Vec::new()
                    },
                    cold_compact_at: 0.0,
                };
                Setup::new(Policy::ALL[p], config, k)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn every_policy_keeps_pairing_and_the_compactor_contract_on_every_request(
        turns in prop::collection::vec(turn_strategy(), 1..10),
        s in setup_strategy(),
    ) {
        let record = build(&turns);
        prop_assert!(pairing_holds(&record).is_ok());
        let engine = s.compactor();
        let budget = *engine.budget();
        let mut prev_len = 0usize;
        let mut prev_index = 0usize;
        let mut failure: Option<String> = None;
        replay::replay_with(&record, engine.as_ref(), |r, history, c| {
            let input_len = prev_len + (r.message_index - prev_index);
            let check = (|| -> Result<(), String> {
                pairing_holds(history)?;
                if history.iter().any(|m| m.content.is_empty()) {
                    return Err("a message without blocks".into());
                }
                if c.history_bytes != total_bytes(history) {
                    return Err(format!("history_bytes {} vs {}", c.history_bytes, total_bytes(history)));
                }
                if c.after != budget.charged(c.history_bytes / 4) {
                    return Err("after is not the charged estimate".into());
                }
                match c.cut {
                    None if history.len() != input_len => {
                        Err(format!("rewritten in place but {} → {} messages", input_len, history.len()))
                    }
                    Some(cut) => {
                        let at = history.len().checked_sub(input_len - cut + 1).ok_or("too short")?;
                        let note = history[at].content[0].text_bytes();
                        if note.starts_with(b"Summary of the earlier conversation: ") { Ok(()) } else { Err(format!("no summary note at {at}")) }
                    }
                    None => Ok(()),
                }
            })();
            if let Err(e) = check {
                failure = Some(format!("{} request {}: {e}", s.label(), r.request));
                return false;
            }
            prev_len = history.len();
            prev_index = r.message_index;
            true
        });
        prop_assert!(failure.is_none(), "{}", failure.unwrap_or_default());
        // The loss measure never counts more than it lost.
        let f = loss::replay(&record, engine.as_ref());
        prop_assert!(f.needed_again <= f.results_lost && f.refetched <= f.results_lost);
    }
}

// ---------------------------------------------------------------- the sweep

#[test]
fn sweep_rows_of_every_policy_equal_the_replay_of_that_policy() {
    use smith_calibrate::sweep::run::{self, Options};
    use smith_calibrate::transcript::SessionRef;
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for s in 0..3 {
        let turns: Vec<Turn> = (0..6 + s)
            .map(|t| Turn {
                synthetic: false,
                steps: vec![vec![(t % 4, 3000 + 700 * t), (2, 500)], vec![(0, 9000)]],
            })
            .collect();
        let h = build(&turns);
        let sdir = dir.path().join(format!("s{s}"));
        std::fs::create_dir_all(&sdir).unwrap();
        let mut text = String::new();
        for m in &h {
            text.push_str(&m.to_json());
            text.push('\n');
        }
        let p = sdir.join("transcript.jsonl");
        std::fs::write(&p, text).unwrap();
        paths.push(p);
    }
    let setups: Vec<Setup> = Policy::ALL
        .iter()
        .map(|&p| {
            setup(
                p,
                12_000,
                knobs(|k| {
                    k.mask_window = 3;
                    k.context_editing_trigger = 6_000;
                }),
            )
        })
        .collect();
    let refs: Vec<SessionRef> = paths.iter().map(|p| SessionRef::file(p.clone())).collect();
    let opts = Options::silent(Some(2));
    let sweep = run::run(&refs, &setups, &opts).unwrap();
    let mut lost_somewhere = 0;
    for (s, p) in paths.iter().enumerate() {
        let session = smith_calibrate::transcript::session::load_path(p).unwrap();
        for (c, setup) in setups.iter().enumerate() {
            let expected: SessionFacts = loss::replay(
                &session.messages,
                setup
                    .compactor_for(&session.messages, session.run.as_ref())
                    .as_ref(),
            );
            assert_eq!(
                sweep.row(s, c).facts,
                expected,
                "session {s} {}",
                setup.label()
            );
            lost_somewhere += usize::from(expected.results_lost > 0);
        }
    }
    assert!(
        lost_somewhere >= 10,
        "most policies must lose results here: {lost_somewhere}"
    );
}

#[test]
fn a_setup_reads_back_from_the_configs_table() {
    use smith_calibrate::cost::Prices;
    use smith_calibrate::export::Values;
    use smith_calibrate::policy::{PolicyKnob, Value};
    use smith_calibrate::sweep::figures::Metric;
    use smith_calibrate::sweep::grid::Knob;
    use smith_calibrate::sweep::run::{self, Options};
    use smith_calibrate::sweep::{summarize, tables};
    use smith_calibrate::transcript::SessionRef;
    let dir = tempfile::tempdir().unwrap();
    let p = write_loss_session(dir.path());
    let setups = vec![
        Setup::smith(Config::default()),
        setup(Policy::Masking, 64_000, knobs(|k| k.mask_window = 4)),
        setup(
            Policy::ContextEditing,
            200_000,
            knobs(|k| {
                k.clear_keep = 2;
                k.exclude_tools = vec!["Memory".into(), "todo".into()];
            }),
        ),
        setup(Policy::Codex, 200_000, knobs(|k| k.codex_compact_at = 0.75)),
    ];
    let opts = Options::silent(Some(1));
    let sweep = run::run(&[SessionRef::file(p)], &setups, &opts).unwrap();
    let summaries = summarize(&sweep, &Prices::default(), Metric::Price);
    let table = tables::configs_table(&summaries);
    let float = |name: &str, i: usize| match table.get(name) {
        Some(Values::Int(v)) => Some(v[i] as f64),
        Some(Values::Float(v)) => Some(v[i]),
        Some(Values::OptInt(v)) => v[i].map(|x| x as f64),
        Some(Values::OptFloat(v)) => v[i],
        other => panic!("{name}: {other:?}"),
    };
    let text = |name: &str, i: usize| match table.get(name) {
        Some(Values::Str(v)) => v[i].clone(),
        other => panic!("{name}: {other:?}"),
    };
    for (i, expected) in setups.iter().enumerate() {
        let mut config = Config::default();
        for k in Knob::ALL {
            if k == Knob::Engine {
                config.engine = EngineVersion::parse(&text(k.field(), i)).unwrap();
                continue;
            }
            let v = float(k.field(), i).unwrap();
            match k {
                Knob::MaxTokens => config.max_tokens = v as u64,
                Knob::CompactAt => config.compact_at = v,
                Knob::CompactTo => config.compact_to = v,
                Knob::ResultCap => config.result_cap = v as usize,
                Knob::Window => config.window_turns = v as usize,
                Knob::Overhead => config.overhead_tokens = v as u64,
                Knob::Ratio => config.ratio = v,
                Knob::SummaryTokens => config.summary_tokens = v as u64,
                Knob::Engine => unreachable!("read by name above"),
            }
        }
        // Each policy knob read back as its kind says, from its column alone.
        let back = Setup::from_columns(&text("policy", i), config, |k: PolicyKnob| {
            match k.get(&Knobs::default()) {
                Value::Names(_) => Some(Value::Names(
                    text(&k.field(), i)
                        .split(',')
                        .filter(|t| !t.is_empty())
                        .map(String::from)
                        .collect(),
                )),
                Value::Number(_) => float(&k.field(), i).map(Value::Number),
            }
        })
        .unwrap();
        assert_eq!(&back, expected);
        assert_eq!(
            float("trigger_tokens", i),
            Some(expected.budget().trigger_tokens as f64)
        );
    }
}

#[test]
fn descriptions_are_made_from_the_knobs_values() {
    // At the defaults, each reads as the policy's documented behaviour.
    let at_defaults = [
        (Policy::ClaudeCode, "Claude Code: at the window minus 33000 tokens, clear old Read/Bash/Grep/Glob/WebSearch/WebFetch/Edit/Write results keeping the 5 most recent, then summarise the whole history if still above; the summary is smith's offline stand-in and recently read files are not re-attached"),
        (Policy::Codex, "Codex CLI: every result capped on arrival at 10 KiB and 256 lines (first and last 128 lines around a marker); at 90% of the window the history becomes the most recent user messages (up to 20000 tokens) plus the summary; marker wording and the compaction limit (a per-model setting) are approximated"),
        (Policy::Opencode, "opencode: prune at each new prompt and at the window minus 20000 (skip the last 2 user turns, protect the newest 40000 tokens of tool output, clear older outputs only if that reclaims more than 20000 tokens), then summarise the whole history if still above; its output reserve is modelled as a fixed 20000 tokens and the summary is smith's offline stand-in"),
        (Policy::ContextEditing, "Anthropic context editing (clear_tool_uses_20250919): above 100000 input tokens, clear every tool result but the 3 most recent (minus exclude_tools), if that reclaims at least clear_at_least tokens; the placeholder text is approximated and tool inputs are kept"),
    ];
    for (p, text) in at_defaults {
        assert_eq!(p.describe_knobs(&Knobs::default()), text, "{p}");
        assert_eq!(p.describe(&|_| Vec::new()), text, "{p}");
    }
    let knobs = Knobs {
        codex_cap_bytes: 4096,
        codex_cap_lines: 100,
        codex_compact_at: 0.7,
        ..Knobs::default()
    };
    let codex = Policy::Codex.describe_knobs(&knobs);
    assert!(
        codex.contains("at 4 KiB and 100 lines (first and last 50 lines"),
        "{codex}"
    );
    assert!(codex.contains("at 70% of the window"), "{codex}");
    assert!(!codex.contains("10 KiB"), "{codex}");
    let odd = Policy::Codex.describe_knobs(&Knobs {
        codex_cap_bytes: 5000,
        ..Knobs::default()
    });
    assert!(odd.contains("at 5000 bytes and"), "{odd}");
    // A sweep's several values are all named.
    let swept = Policy::ClaudeCode.describe(&|k| match k {
        smith_calibrate::policy::PolicyKnob::ClaudeCodeKeep => vec![2.0, 8.0],
        _ => Vec::new(),
    });
    assert!(swept.contains("keeping the 2 or 8 most recent"), "{swept}");
    let least = Policy::ContextEditing.describe_knobs(&Knobs {
        clear_at_least: 5000,
        ..Knobs::default()
    });
    assert!(least.contains("at least 5000 tokens"), "{least}");
}
