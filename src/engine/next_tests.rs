//! smith after #118 (docs/engine.md §4.9): its changelog's reproduction,
//! each rule and each decision where the changelog is silent, and the
//! differential against 0.4: wherever no compaction reaches a changed rule,
//! the two engines send the same bytes.

use std::sync::Arc;

use proptest::prelude::*;

use super::properties_tests::{build, config_strategy, turn_strategy};
use crate::test_support::engines::changelog_session;
use crate::test_support::*;
use smith_calibrate::engine::{Compaction, Config, Engine, EngineVersion, Strategy, Withheld};
use smith_calibrate::replay::{self, trace};
use smith_calibrate::transcript::{Message, Role};

/// The changelog's knobs: a 70,000-token window, compacting at 0.85 to 0.5.
fn changelog_config(engine: EngineVersion) -> Config {
    Config {
        max_tokens: 70_000,
        compact_at: 0.85,
        compact_to: 0.5,
        engine,
        ..Config::default()
    }
}

/// The compaction before the closing answer (the history up to the 30th
/// result).
fn last_request(h: &[Arc<Message>], engine: EngineVersion) -> Compaction {
    Engine::new(changelog_config(engine)).compact(&h[..h.len() - 1])
}

#[test]
fn next_reproduces_the_changelog_truncating_14_of_30_results_and_calling_no_summarizer() {
    let before = changelog_session();
    let c = last_request(&before, EngineVersion::Next);
    assert_eq!((c.before, c.after), (60_212, 34_249));
    assert_eq!(c.strategy, Strategy::Truncated);
    assert_eq!(c.effects.results_truncated, 14);
    assert_eq!(c.effects.results_stubbed, 0);
    assert_eq!(c.effects.messages_summarized, 0);
    assert_eq!(c.withheld, None);
    let h = c.messages.expect("a new history");
    assert_eq!(h.len(), before.len() - 1, "nothing was cut away");
    for i in 0..3 {
        assert!(
            Arc::ptr_eq(&h[i], &before[i]),
            "the short turn is untouched"
        );
    }
    // Largest first, ties in history order: the first fourteen results.
    let cut: Vec<usize> = (0..30)
        .filter(|i| text_of(&h[4 + 2 * i], 0).len() < 8_000)
        .collect();
    assert_eq!(cut, (0..14).collect::<Vec<_>>());
    assert!(text_of(&h[4], 0)
        .ends_with(b"\n\n[... 7 KiB truncated by smith to stay within the context window ...]"));
}

#[test]
fn release_0_4_summarizes_the_short_turn_of_the_changelog_session() {
    let c = last_request(&changelog_session(), EngineVersion::V04);
    assert_eq!(c.before, 60_212);
    assert_eq!(c.strategy, Strategy::Summarized);
    assert_eq!(c.effects.messages_summarized, 2);
    assert_eq!(c.effects.results_truncated, 0);
    let h = c.messages.expect("a new history");
    assert!(text_of(&h[0], 0).starts_with(b"Summary of the earlier conversation: "));
    assert!(
        c.after > c.before,
        "the stand-in is larger than the short turn"
    );
}

#[test]
fn a_replay_of_the_changelog_session_differs_only_at_its_last_request() {
    let h = changelog_session();
    let traces = |e| {
        let mut lines = Vec::new();
        replay::replay_with(&h, &Engine::new(changelog_config(e)), |r, _, _| {
            lines.push(trace::trace_line(r));
            true
        });
        lines
    };
    let (old, new) = (traces(EngineVersion::V04), traces(EngineVersion::Next));
    assert_eq!(old.len(), 32);
    assert_eq!(old[..31], new[..31]);
    assert_eq!(new[31]["strategy"], "truncated");
    assert_eq!(old[31]["strategy"], "summarized");
}

/// One long turn of `results` results of `size` bytes after a summary
/// note (what a replay holds after its first compaction of such a turn).
fn after_a_summary(results: usize, size: usize) -> Vec<Arc<Message>> {
    let mut h = vec![user(
        "Summary of the earlier conversation: what was done before",
    )];
    h.push(user("carry on"));
    for i in 0..results {
        h.push(call(&format!("c{i}"), "bash", r#"{"command":"ls"}"#));
        h.push(result(&format!("c{i}"), &filler(size)));
    }
    h
}

#[test]
fn a_prefix_of_only_a_summary_is_refused_and_the_shortened_history_returned() {
    // Results already at their head cannot shrink to the target, so a cut
    // is needed, and the only prefix left is the earlier summary.
    let h = after_a_summary(60, 600);
    let config = Config {
        max_tokens: 8_000,
        ..changelog_config(EngineVersion::Next)
    };
    let c = Engine::new(config).compact(&h);
    assert_eq!(c.withheld, Some(Withheld::Refused));
    assert_eq!(c.strategy, Strategy::Truncated);
    let kept = c.messages.expect("results were cut");
    assert!(Arc::ptr_eq(&kept[0], &h[0]), "the summary stays");
    assert!(c.after < c.before);
    // 0.4 summarizes its own summary.
    let old = Engine::new(Config {
        engine: EngineVersion::V04,
        ..config
    })
    .compact(&h);
    assert_eq!(old.strategy, Strategy::Summarized);
    assert_eq!(old.effects.messages_summarized, 1);
}

#[test]
fn a_drop_note_counts_as_a_summary_and_is_refused_too() {
    let mut h = after_a_summary(60, 600);
    h[0] = user(
        "Summary of the earlier conversation: 7 earlier messages were dropped to stay within \
         the context window. Ask the user if you need details from before this point.",
    );
    let config = Config {
        max_tokens: 8_000,
        summary_tokens: 0,
        ..changelog_config(EngineVersion::Next)
    };
    let c = Engine::new(config).compact(&h);
    assert_eq!(c.withheld, Some(Withheld::Refused));
}

#[test]
fn a_summary_larger_than_what_it_replaces_is_discarded_after_the_call() {
    // A short first turn, then one long turn whose results are already at
    // their head: the cut can only take the short turn, whose 1,000-token
    // stand-in is larger than it.
    let mut h = vec![user("short"), assistant("reply")];
    h.extend(after_a_summary(60, 600).into_iter().skip(1));
    let config = Config {
        max_tokens: 8_000,
        ..changelog_config(EngineVersion::Next)
    };
    let c = Engine::new(config).compact(&h);
    let replaced = (h[0].bytes() + h[1].bytes()) / 4;
    assert_eq!(c.withheld, Some(Withheld::Discarded { read: replaced }));
    assert_eq!(c.strategy, Strategy::Truncated);
    assert!(c.after < c.before);
    // A failing summarizer's drop note is no summary that came back: kept.
    let dropped = Engine::new(Config {
        summary_tokens: 0,
        ..config
    })
    .compact(&h);
    assert_eq!(dropped.strategy, Strategy::Dropped);
    assert_eq!(dropped.withheld, None);
}

#[test]
fn a_summary_that_helps_is_kept_after_the_window_pass() {
    // The tail cannot fit even at its heads, the prefix is a real turn
    // (a long prompt) larger than a summary: summarized as 0.4 would,
    // after the pass.
    let mut h = vec![user(&filler_str(10_000)), assistant("ok")];
    h.extend(after_a_summary(60, 600).into_iter().skip(1));
    let config = Config {
        max_tokens: 8_000,
        ..changelog_config(EngineVersion::Next)
    };
    let c = Engine::new(config).compact(&h);
    assert_eq!(c.strategy, Strategy::Summarized);
    assert_eq!(c.withheld, None);
    assert_eq!(c.effects.messages_summarized, 2);
    assert!(c.effects.results_truncated > 0, "the window pass ran first");
}

/// Every request's trace line, the history it sent and its strategy.
type Walked = Vec<(String, Vec<Arc<Message>>, Strategy)>;

fn walk(record: &[Arc<Message>], config: Config) -> Walked {
    let mut out = Vec::new();
    replay::replay_with(record, &Engine::new(config), |r, sent, _| {
        out.push((trace::trace_line(r).to_string(), sent.to_vec(), r.strategy));
        true
    });
    out
}

/// Whether two histories are the same bytes: the same messages shared from
/// the record, or rewritten ones that write the same JSON.
fn same_bytes(a: &[Arc<Message>], b: &[Arc<Message>]) -> bool {
    let json = |m: &Message| {
        let mut bytes = Vec::new();
        smith_calibrate::transcript::json::write_message(m, &mut bytes);
        bytes
    };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| Arc::ptr_eq(x, y) || json(x) == json(y))
}

/// The differential: the engines agree request by request, byte for byte,
/// up to the first request at which 0.4 summarizes (the only place a rule
/// changed); a session where 0.4 never does is the same throughout.
/// Returns how many requests were compared and whether a changed rule was
/// reached.
pub(crate) fn engines_agree_until_a_changed_rule(
    record: &[Arc<Message>],
    config: Config,
) -> (usize, bool) {
    let old = walk(
        record,
        Config {
            engine: EngineVersion::V04,
            ..config
        },
    );
    let new = walk(
        record,
        Config {
            engine: EngineVersion::Next,
            ..config
        },
    );
    assert_eq!(old.len(), new.len());
    for (i, (o, n)) in old.iter().zip(&new).enumerate() {
        if matches!(o.2, Strategy::Summarized | Strategy::Dropped) {
            return (i, true);
        }
        assert_eq!(o.0, n.0, "request {i}: traces differ");
        assert!(same_bytes(&o.1, &n.1), "request {i}: histories differ");
    }
    (old.len(), false)
}

/// The differential on every shared Claude Code and Codex log, at smith's
/// default thresholds and at 0.60/0.50, under a 120k and a 200k window.
#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn engines_write_the_same_bytes_on_the_shared_logs_until_a_changed_rule() {
    let sources = [
        "claude-code/spotter",
        "claude-code/eduardodmb",
        "claude-code/xiaomoziyi",
        "claude-code/4thehalibit",
        "claude-code/kaceybui",
        "codex/msrnic",
        "codex/property-estimator",
    ];
    for source in sources {
        let dir = shared_data(source).display().to_string();
        let (mut sessions, mut requests, mut reached) = (0, 0, 0);
        for r in smith_calibrate::transcript::locate::resolve_each(
            &[dir],
            smith_calibrate::import::direct::resolve,
        )
        .unwrap()
        {
            let Ok(s) = smith_calibrate::transcript::load(&r) else {
                continue;
            };
            sessions += 1;
            for (max_tokens, compact_at) in [(120_000, 0.8), (120_000, 0.6), (200_000, 0.8)] {
                let config = Config {
                    max_tokens,
                    compact_at,
                    ..Config::default()
                };
                let (n, changed) = engines_agree_until_a_changed_rule(&s.messages, config);
                requests += n;
                reached += changed as usize;
            }
        }
        println!(
            "{source}: {sessions} sessions, {requests} requests byte-identical under both engines; \
             {reached} of {} replays reached a changed rule",
            sessions * 3
        );
        assert!(sessions > 0 && requests > 0, "{source}: nothing compared");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn engines_write_the_same_bytes_wherever_no_changed_rule_is_reached(
        turns in prop::collection::vec(turn_strategy(), 1..12),
        config in config_strategy(),
    ) {
        engines_agree_until_a_changed_rule(&build(&turns), config);
    }
}

#[test]
fn the_changelog_session_replays_with_the_recorded_roles() {
    let h = changelog_session();
    assert_eq!(h.iter().filter(|m| m.role == Role::Assistant).count(), 32);
    assert_eq!(total_bytes(&h[..3]), 248);
}
