//! The loss measure on hand-built cases: what a policy shortened or removed
//! and a later message used (needed again), fetched again (re-fetched) or
//! could still see elsewhere.

use std::sync::Arc;

use crate::policy::policy_tests::{knobs, setup, steps};
use crate::test_support::policies::loss_session;
use crate::test_support::*;
use smith_calibrate::engine::{Compactor, Config, EditKind, Engine};
use smith_calibrate::loss;
use smith_calibrate::policy::{Knobs, Policy};
use smith_calibrate::replay::{self, SessionFacts};
use smith_calibrate::transcript::{Block, Message, Role};

fn masking1() -> Box<dyn Compactor> {
    setup(Policy::Masking, 1_000_000, knobs(|k| k.mask_window = 1)).compactor()
}

#[test]
fn a_token_used_later_that_only_the_removed_part_held_counts_as_needed_again() {
    let f = loss::replay(
        &loss_session("", "alpha_function_xyz", false),
        masking1().as_ref(),
    );
    assert_eq!(f.results_lost, 1);
    assert_eq!((f.needed_again, f.refetched), (1, 0));
}

#[test]
fn a_token_still_visible_elsewhere_does_not_count() {
    let f = loss::replay(
        &loss_session("in alpha_function_xyz", "alpha_function_xyz", false),
        masking1().as_ref(),
    );
    assert_eq!((f.results_lost, f.needed_again), (1, 0));
}

#[test]
fn a_token_used_only_where_the_model_still_saw_it_whole_does_not_count() {
    // Used by message 3, which answered a request that still had the
    // result whole; by message 5 the token is visible in message 3.
    let mut h = loss_session("", "alpha_function_xyz", false);
    h[3] = arc(Message::new(
        Role::Assistant,
        vec![
            Block::text(b"found alpha_function_xyz".to_vec()),
            Block::tool_use("c2", "bash", r#"{"command":"ls"}"#),
        ],
        false,
        None,
    ));
    let f = loss::replay(&h, masking1().as_ref());
    assert_eq!((f.results_lost, f.needed_again), (1, 0));
}

#[test]
fn a_repeated_call_counts_as_refetched() {
    let f = loss::replay(&loss_session("", "nothing", true), masking1().as_ref());
    assert_eq!(f.refetched, 1);
    assert_eq!(
        f.needed_again, 0,
        "the repeated call's own args name no lost token"
    );
}

#[test]
fn a_result_shortened_twice_counts_once() {
    // smith: cut to its head at one request, to a stub at a later one.
    let big = {
        let mut b = b"head_token_aaaa ".to_vec();
        b.extend(std::iter::repeat_n(b'x', 3000));
        b.extend_from_slice(b" tail_token_bbbb");
        b
    };
    let mut h = vec![user("one"), call("c1", "bash", "{}"), result("c1", &big)];
    for t in 0..8 {
        h.push(user(&format!("turn {t}")));
        h.push(assistant(&"y".repeat(600)));
    }
    h.push(assistant("using tail_token_bbbb and head_token_aaaa"));
    let engine = Engine::new(Config {
        max_tokens: 1_600,
        summary_tokens: 50,
        ..Config::default()
    });
    let mut kinds = Vec::new();
    replay::replay_with(&h, &engine, |_, _, c| {
        kinds.extend(
            c.edits
                .iter()
                .filter(|e| e.message == 2)
                .map(|e| e.kind.clone()),
        );
        true
    });
    assert_eq!(
        kinds,
        vec![EditKind::HeadKept, EditKind::Stubbed],
        "the result must be cut to its head, then stubbed, for this test"
    );
    let f = loss::replay(&h, &engine);
    assert_eq!(f.results_lost, 1);
    assert_eq!(f.needed_again, 1);
}

/// `prompt`, six bash steps and an assistant message naming token000003,
/// replayed under claude-code at a 34000 window, which summarises
/// everything before message 13.
fn summarised_then_used(prompt: &str) -> SessionFacts {
    let mut h = vec![user(prompt)];
    steps(&mut h, 0, 6, "bash", 2000);
    h.push(assistant("now token000003 matters"));
    let s = setup(Policy::ClaudeCode, 34_000, Knobs::default());
    loss::replay(&h, s.compactor().as_ref())
}

#[test]
fn a_result_summarised_away_is_lost_and_a_later_use_of_its_tokens_counts() {
    let f = summarised_then_used("go");
    assert!(f.summaries >= 1);
    assert_eq!(f.results_lost, 6);
    assert_eq!(f.needed_again, 1);
}

#[test]
fn a_token_kept_by_a_cap_does_not_count_and_one_cut_from_the_middle_does() {
    let body = |mark: usize| -> Vec<u8> {
        (0..600)
            .flat_map(|i| {
                if i == mark {
                    format!("line {i} special_name_{mark}\n").into_bytes()
                } else {
                    format!("line {i}\n").into_bytes()
                }
            })
            .collect()
    };
    let session = |mark: usize| {
        vec![
            user("go"),
            call("c1", "bash", r#"{"command":"run"}"#),
            result("c1", &body(mark)),
            assistant(&format!("look at special_name_{mark}")),
        ]
    };
    let s = setup(Policy::Codex, 1_000_000, Knobs::default());
    let head = loss::replay(&session(10), s.compactor().as_ref());
    assert_eq!((head.results_lost, head.needed_again), (1, 0));
    let middle = loss::replay(&session(300), s.compactor().as_ref());
    assert_eq!((middle.results_lost, middle.needed_again), (1, 1));
}

/// One capped result whose head (codex: the first 50 bytes of a one-line
/// result capped at 100) ends inside `cut_here_value_zz`, leaving
/// `cut_here_value` at its end; the same word whole, and
/// `other_token_99`, come only after the cut. Then `after` follows.
fn cut_mid_token_session(after: Vec<Arc<Message>>) -> Vec<Arc<Message>> {
    let mut body = format!("see {} cut_here_value_zz", "a".repeat(31));
    assert_eq!(
        body.find("_zz"),
        Some(50),
        "the cut must fall inside the word"
    );
    body.push_str(" then cut_here_value and other_token_99 ");
    body.push_str(&"filler ".repeat(40));
    let mut h = vec![
        user("go"),
        call("c1", "bash", r#"{"command":"run"}"#),
        result("c1", body.as_bytes()),
    ];
    h.extend(after);
    h
}

fn codex_cap100() -> Box<dyn Compactor> {
    setup(Policy::Codex, 1_000_000, knobs(|k| k.codex_cap_bytes = 100)).compactor()
}

/// (results lost, needed again, re-fetched).
fn loss_of(h: &[Arc<Message>], c: &dyn Compactor) -> (u64, u64, u64) {
    let f = loss::replay(h, c);
    (f.results_lost, f.needed_again, f.refetched)
}

#[test]
fn a_token_the_head_cut_through_is_lost_though_it_starts_before_the_cut() {
    let h = cut_mid_token_session(vec![assistant("use cut_here_value_zz")]);
    assert_eq!(loss_of(&h, codex_cap100().as_ref()), (1, 1, 0));
}

#[test]
fn what_the_cut_left_of_a_word_is_kept_when_it_is_a_token_itself() {
    // `cut_here_value` occurs whole only past the cut, but the head ends
    // with those very characters: the model still sees the token.
    let h = cut_mid_token_session(vec![assistant("use cut_here_value")]);
    assert_eq!(loss_of(&h, codex_cap100().as_ref()), (1, 0, 0));
}

#[test]
fn a_token_only_past_the_cut_is_lost() {
    let h = cut_mid_token_session(vec![assistant("use other_token_99")]);
    assert_eq!(loss_of(&h, codex_cap100().as_ref()), (1, 1, 0));
}

#[test]
fn a_repeated_call_whose_result_is_cut_the_same_way_shows_the_lost_token_nowhere() {
    // Both results lose `other_token_99`: each counts as needed again, and
    // the first as re-fetched.
    let again = cut_mid_token_session(Vec::new())[1..].to_vec();
    let mut after = again;
    after.push(assistant("use other_token_99"));
    let h = cut_mid_token_session(after);
    assert_eq!(loss_of(&h, codex_cap100().as_ref()), (2, 2, 1));
}

#[test]
fn a_token_visible_only_in_a_summarised_message_counts_as_needed_again() {
    // The prompt names token000003 too, but the summary took it away with
    // the results.
    let f = summarised_then_used("go and look for token000003");
    assert!(f.summaries >= 1);
    assert_eq!((f.results_lost, f.needed_again, f.refetched), (6, 1, 0));
}
