//! One test per rule of docs/engine.md (§2–§6), named after the rule. Exact marker
//! strings and byte lengths are asserted, not recomputed from the constants,
//! so a drift in a constant fails here.

use std::sync::Arc;

use crate::test_support::*;
use smith_calibrate::engine::record::Recorder;
use smith_calibrate::engine::stages;
use smith_calibrate::engine::working::Working;
use smith_calibrate::engine::{Budget, Config, Effects, Engine, Stage, Strategy};
use smith_calibrate::replay::{self, trace};
use smith_calibrate::transcript::parse::parse_line;
use smith_calibrate::transcript::{estimate_tokens, Block, BlockType, Message, Role};

fn run_stage<F>(h: &[Arc<Message>], f: F) -> (Working, Effects, bool)
where
    F: FnOnce(&mut Working, &mut Recorder) -> bool,
{
    let mut w = Working::new(h, total_bytes(h));
    let mut record = Recorder::default();
    let changed = f(&mut w, &mut record);
    (w, *record.effects(), changed)
}

/// Turn 1 (old) holds bash calls with results of the given sizes; then three
/// short real turns, the last being the current one.
fn old_results(sizes: &[usize]) -> Vec<Arc<Message>> {
    let mut h = vec![user("u1")];
    for (i, size) in sizes.iter().enumerate() {
        h.push(call(&format!("t{i}"), "bash", r#"{"command":"x"}"#));
        h.push(result(&format!("t{i}"), &filler(*size)));
    }
    h.extend([
        user("u2"),
        assistant("a2"),
        user("u3"),
        assistant("a3"),
        user("u4"),
    ]);
    h
}

// ---------------------------------------------------------------- §2 estimate

#[test]
fn estimate_counts_text_tool_args_tool_name_and_signature_bytes() {
    let m = Message::new(
        Role::Assistant,
        vec![
            Block::text("héllo".as_bytes().to_vec()),
            thinking("abc", "sig12"),
            Block::tool_use("id-is-not-counted", "grep", r#"{"pattern":"x"}"#),
        ],
        false,
        Some("0123456789abcdef".into()),
    );
    assert_eq!(m.bytes(), 6 + (3 + 5) + (4 + 15));
}

#[test]
fn estimate_charges_image_6400_and_document_20000_bytes() {
    let img = media(BlockType::Image, None, Some("a.png"), None);
    let doc = media(BlockType::Document, None, None, Some("application/pdf"));
    assert_eq!(img.bytes(), 6400);
    assert_eq!(doc.bytes(), 20000);
    let with_text = Block {
        text: Some(b"ab".to_vec().into()),
        ..img
    };
    assert_eq!(with_text.bytes(), 6402);
}

#[test]
fn estimate_divides_once_over_the_total_not_per_message() {
    let h = vec![user("abc"), user("abc")];
    assert_eq!(estimate_tokens(&h), 1);
    assert_eq!(estimate_tokens(&h[..1]), 0);
}

#[test]
fn estimate_counts_utf8_bytes_not_characters() {
    assert_eq!(user("—é🙂").bytes(), 3 + 2 + 4);
}

#[test]
fn estimate_counts_tool_args_as_compact_json_with_key_order_kept() {
    let m = parse_line(
        r#"{"role":"assistant","content":[{"type":"tool_use","tool_call_id":"a","tool_name":"glob","tool_args":{ "pattern" : "*.rs", "n": 1.50 }}]}"#,
    )
    .unwrap();
    assert_eq!(
        m.content[0].tool_args.as_deref(),
        Some(r#"{"pattern":"*.rs","n":1.5}"#)
    );
    assert_eq!(m.bytes(), 26 + 4);
}

#[test]
fn transcript_roles_and_block_types_match_case_insensitively() {
    let m = parse_line(
        r#"{"role":"TOOL","content":[{"type":"Tool_Result","text":"x","tool_call_id":"a"}]}"#,
    )
    .unwrap();
    assert_eq!(m.role, Role::Tool);
    assert_eq!(m.content[0].kind, BlockType::ToolResult);
}

#[test]
fn transcript_only_role_and_content_are_required() {
    let m = parse_line(r#"{"role":"user","content":[{"type":"text"}]}"#).unwrap();
    assert!(!m.synthetic);
    assert_eq!(m.id, None);
    assert_eq!(m.bytes(), 0);
}

// ----------------------------------------------------------------- §3 budget

#[test]
fn budget_trigger_and_target_are_truncated_products() {
    let b = Budget::new(&Config::default());
    assert_eq!((b.trigger_tokens, b.target_tokens), (96_000, 60_000));
    let b = Budget::new(&small(1001));
    assert_eq!((b.trigger_tokens, b.target_tokens), (800, 500));
    let b = Budget::new(&Config {
        compact_at: 0.333,
        compact_to: 0.1999,
        ..small(1000)
    });
    assert_eq!((b.trigger_tokens, b.target_tokens), (333, 199));
}

#[test]
fn budget_charged_adds_overhead_applies_ratio_and_rounds_half_to_even() {
    let b = Budget::new(&Config {
        ratio: 1.5,
        ..small(1000)
    });
    assert_eq!(b.charged(1), 2); // 1.5 -> 2
    assert_eq!(b.charged(3), 4); // 4.5 -> 4
    assert_eq!(b.charged(5), 8); // 7.5 -> 8
    let b = Budget::new(&Config {
        overhead_tokens: 10,
        ratio: 1.25,
        ..small(1000)
    });
    assert_eq!(b.charged(100), 138); // 137.5 -> 138
    assert_eq!(b.charged(102), 140); // 140.0
}

#[test]
fn budget_allowance_truncates_and_never_goes_below_zero() {
    let b = Budget::new(&Config {
        ratio: 1.5,
        overhead_tokens: 10,
        ..small(1000)
    });
    assert_eq!(b.allowance(500), 323); // trunc(333.3) - 10
    let b = Budget::new(&Config {
        overhead_tokens: 400,
        ..small(1000)
    });
    assert_eq!(b.allowance(300), 0);
}

// ------------------------------------------------------------ §4 compaction

#[test]
fn compact_below_or_at_trigger_returns_history_untouched() {
    // 3200 bytes = 800 tokens = the trigger of a 1000-token window.
    let h = vec![user(&filler_str(3200))];
    let c = Engine::new(small(1000)).compact(&h);
    assert!(c.messages.is_none());
    assert_eq!((c.before, c.after, c.strategy), (800, 800, Strategy::None));
    assert!(c.stages.is_empty() && !c.triggered);
    let h = vec![user(&filler_str(3204))];
    assert!(Engine::new(small(1000)).compact(&h).triggered);
}

#[test]
fn compact_target_of_zero_falls_back_to_the_ceiling_allowance() {
    // allowance(500) = 0 with 500 overhead, so the target becomes
    // allowance(1000) = 500 raw tokens instead of giving up.
    let cfg = Config {
        overhead_tokens: 500,
        ..small(1000)
    };
    let h = old_results(&[4000, 4000]);
    let c = Engine::new(cfg).compact(&h);
    assert_eq!(c.strategy, Strategy::Truncated);
    let raw = c.history_bytes / 4;
    assert!(raw <= 500);
    assert_eq!(c.after, raw as i64 + 500);
}

#[test]
fn compact_with_no_room_even_at_the_ceiling_leaves_history_untouched() {
    let cfg = Config {
        overhead_tokens: 1000,
        ..small(1000)
    };
    let h = old_results(&[4000]);
    let c = Engine::new(cfg).compact(&h);
    assert!(c.messages.is_none() && c.triggered);
    assert_eq!(c.strategy, Strategy::None);
    assert_eq!(c.before, c.after);
    assert!(c.exhausted(&Budget::new(&cfg)));
}

#[test]
fn stages_stop_as_soon_as_the_history_fits_the_target() {
    // 5050 bytes; truncating the 4000-byte result alone brings it to 409
    // tokens <= 500, so the 1000-byte result is left whole.
    let h = old_results(&[4000, 1000]);
    let c = Engine::new(small(1000)).compact(&h);
    let out = c.messages.unwrap();
    assert_eq!(c.effects.results_truncated, 1);
    assert_eq!(text_of(&out[4], 0), filler(1000));
    assert_eq!(text_of(&out[2], 0).len(), 582);
    assert_eq!(c.stages, vec![Stage::Truncate]);
    assert_eq!(c.strategy, Strategy::Truncated);
}

#[test]
fn stage0_thinking_is_dropped_only_before_the_current_turn() {
    let h = vec![
        user("u1"),
        assistant_blocks(vec![
            thinking("old thoughts", "s1"),
            Block::text(b"a1".to_vec()),
        ]),
        user("u2"),
        assistant_blocks(vec![
            Block {
                kind: BlockType::RedactedThinking,
                text: Some(b"opaque".to_vec().into()),
                ..Block::default()
            },
            Block::tool_use("t1", "bash", "{}"),
        ]),
        result("t1", b"ok"),
        user("u3"),
        assistant_blocks(vec![
            thinking("current", "s3"),
            Block::tool_use("t2", "bash", "{}"),
        ]),
        result("t2", b"ok"),
    ];
    let (w, effects, changed) = run_stage(&h, |w, l| stages::thinking::run(w, 0, l));
    assert!(changed);
    assert_eq!(effects.thinking_dropped, 2);
    assert_eq!(w.messages[1].content.len(), 1);
    assert_eq!(w.messages[3].content[0].kind, BlockType::ToolUse);
    // The current turn's thinking survives byte for byte, signature too.
    assert!(Arc::ptr_eq(&w.messages[6], &h[6]));
}

#[test]
fn stage0_thinking_is_kept_when_dropping_it_would_leave_no_blocks() {
    let h = vec![
        user("u1"),
        assistant_blocks(vec![thinking("only thoughts", "s")]),
        user("u2"),
    ];
    let (w, effects, changed) = run_stage(&h, |w, l| stages::thinking::run(w, 0, l));
    assert!(!changed);
    assert_eq!(effects.thinking_dropped, 0);
    assert!(Arc::ptr_eq(&w.messages[1], &h[1]));
}

#[test]
fn stage0b_media_in_a_tool_message_is_appended_to_its_result() {
    let tool = arc(Message::new(
        Role::Tool,
        vec![
            result_block("t1", b"out"),
            media(
                BlockType::Image,
                Some("t1"),
                Some("a.png"),
                Some("image/png"),
            ),
            media(
                BlockType::Document,
                Some("t1"),
                None,
                Some("application/pdf"),
            ),
            media(BlockType::Image, None, Some("orphan.png"), None),
        ],
        false,
        Some("00000000000000aa".into()),
    ));
    let mut h = vec![
        user("u1"),
        call("t1", "read_file", r#"{"path":"a.png"}"#),
        tool,
    ];
    h.extend([user("u2"), user("u3"), user("u4")]);
    let (w, effects, changed) = run_stage(&h, |w, l| stages::attachments::run(w, 0, 3, false, l));
    assert!(changed);
    assert_eq!(effects.attachments_removed, 3);
    let m = &w.messages[2];
    assert_eq!(m.content.len(), 1);
    let text = String::from_utf8(text_of(m, 0)).unwrap();
    assert_eq!(
        text,
        "out\n\n[a.png — removed to stay within the context window; mention it again to re-attach it]\n[application/pdf — removed to stay within the context window; mention it again to re-attach it]"
    );
    assert_eq!(m.content[0].is_error, Some(false));
    assert_eq!(m.id.as_deref(), Some("00000000000000aa"));
    assert_eq!(m.bytes(), 3 + 2 + 87 + 1 + 97);
}

#[test]
fn stage0b_media_in_other_roles_becomes_a_text_note_labelled_by_source_then_type() {
    let msg = arc(Message::new(
        Role::User,
        vec![
            Block::text(b"see".to_vec()),
            media(BlockType::Image, None, None, None),
            media(BlockType::Image, None, None, Some("image/jpeg")),
        ],
        false,
        None,
    ));
    let h = vec![msg, user("u2"), user("u3"), user("u4")];
    let (w, _, changed) = run_stage(&h, |w, l| stages::attachments::run(w, 0, 3, false, l));
    assert!(changed);
    let m = &w.messages[0];
    assert_eq!(m.content.len(), 3);
    assert_eq!(m.content[1].kind, BlockType::Text);
    let note = text_of(m, 1);
    assert_eq!(
        String::from_utf8(note.clone()).unwrap(),
        "[attachment — removed to stay within the context window; mention it again to re-attach it]"
    );
    assert_eq!(note.len(), 92);
    assert!(String::from_utf8(text_of(m, 2))
        .unwrap()
        .starts_with("[image/jpeg — "));
}

#[test]
fn stage0b_media_inside_the_three_turn_window_is_kept() {
    let img = arc(Message::new(
        Role::User,
        vec![media(BlockType::Image, None, Some("x.png"), None)],
        false,
        None,
    ));
    let h = vec![user("u1"), img, user("u3"), user("u4")];
    let (_, _, changed) = run_stage(&h, |w, l| stages::attachments::run(w, 0, 3, false, l));
    assert!(
        !changed,
        "index 1 is after the window start (u2 is not there: u1 starts it)"
    );
    let h = vec![user("u0"), h[1].clone(), user("u2"), user("u3"), user("u4")];
    let (_, _, changed) = run_stage(&h, |w, l| stages::attachments::run(w, 0, 3, false, l));
    assert!(changed);
}

fn read_session(tool: &str, args: &str, size: usize) -> Vec<Arc<Message>> {
    vec![
        user("u1"),
        call("r1", tool, args),
        result("r1", &filler(size)),
        user("u2"),
        assistant("a2"),
        user("u3"),
        assistant("a3"),
        user("u4"),
        call("r2", tool, args),
        result("r2", &filler(size)),
    ]
}

#[test]
fn stage1_superseded_read_becomes_an_exact_stub() {
    let h = read_session("read_file", r#"{"path":"src/a.rs"}"#, 2500);
    let (w, effects, changed) = run_stage(&h, |w, l| stages::duplicates::run(w, 0, 3, l));
    assert!(changed);
    assert_eq!(effects.reads_superseded, 1);
    let stub = String::from_utf8(text_of(&w.messages[2], 0)).unwrap();
    assert_eq!(
        stub,
        "[read_file: superseded by a later identical call, 2 KiB omitted by smith]"
    );
    assert_eq!(stub.len(), 73);
    // The newest call, inside the window, is kept whole.
    assert!(Arc::ptr_eq(&w.messages[9], &h[9]));
}

#[test]
fn stage1_applies_only_to_read_file_grep_and_glob() {
    for tool in ["grep", "glob"] {
        let h = read_session(tool, r#"{"pattern":"x"}"#, 2500);
        let (_, e, _) = run_stage(&h, |w, l| stages::duplicates::run(w, 0, 3, l));
        assert_eq!(e.reads_superseded, 1, "{tool}");
    }
    for tool in ["bash", "edit_file", "Read"] {
        let h = read_session(tool, r#"{"command":"make test"}"#, 2500);
        let (_, e, changed) = run_stage(&h, |w, l| stages::duplicates::run(w, 0, 3, l));
        assert!(!changed && e.reads_superseded == 0, "{tool}");
    }
}

#[test]
fn stage1_key_is_tool_name_and_exact_compact_arguments() {
    let mut h = read_session("read_file", r#"{"path":"a","limit":5}"#, 2500);
    h[8] = call("r2", "read_file", r#"{"limit":5,"path":"a"}"#);
    let (_, e, _) = run_stage(&h, |w, l| stages::duplicates::run(w, 0, 3, l));
    assert_eq!(
        e.reads_superseded, 0,
        "key order differs, so the calls differ"
    );
}

#[test]
fn stage1_keeps_text_when_the_stub_would_not_be_shorter() {
    let h = read_session("grep", r#"{"pattern":"x"}"#, 60);
    let (w, _, changed) = run_stage(&h, |w, l| stages::duplicates::run(w, 0, 3, l));
    assert!(!changed);
    assert_eq!(text_of(&w.messages[2], 0), filler(60));
}

#[test]
fn stage2_cuts_to_a_512_byte_head_and_an_exact_marker() {
    let h = old_results(&[4000]);
    let (w, e, changed) = run_stage(&h, |w, l| stages::truncate::run(w, 0, 3, 512, None, l));
    assert!(changed);
    assert_eq!(e.results_truncated, 1);
    let mut want = filler(512);
    want.extend_from_slice(
        b"\n\n[... 3 KiB truncated by smith to stay within the context window ...]",
    );
    assert_eq!(text_of(&w.messages[2], 0), want);
    assert_eq!(want.len(), 582);
}

#[test]
fn stage2_head_may_split_a_multibyte_character_and_counts_512_bytes() {
    let mut text = filler(511);
    text.extend_from_slice("é".as_bytes()); // bytes 511 and 512
    text.extend(filler(2000));
    let mut h = old_results(&[]);
    h.insert(1, call("t9", "bash", "{}"));
    h.insert(2, result("t9", &text));
    let (w, _, _) = run_stage(&h, |w, l| stages::truncate::run(w, 0, 3, 512, None, l));
    let cut = text_of(&w.messages[2], 0);
    assert_eq!(&cut[..512], &text[..512]);
    assert_eq!(cut[511], 0xC3, "the head ends inside the character");
    assert_eq!(cut.len(), 512 + 70);
    // Written as smith writes it: the partial character's byte as it is,
    // then the marker (issue 11; it used to become U+FFFD).
    let json = w.messages[2].to_json_bytes();
    let want: &[u8] = b"a\xC3\\n\\n[... 1 KiB truncated by smith";
    assert!(
        json.windows(want.len()).any(|w| w == want),
        "{}",
        String::from_utf8_lossy(&json)
    );
    assert!(std::str::from_utf8(&json).is_err(), "not UTF-8, as smith's");
}

#[test]
fn stage2_takes_largest_results_first_and_ties_in_transcript_order() {
    // Each truncation of 3000 bytes leaves 582; the target lets exactly one
    // go: the larger of 1000 and 3000, then the earlier of two equals.
    let h = old_results(&[1000, 3000]);
    let target = (total_bytes(&h) - 3000 + 582) / 4;
    let (w, _, _) = run_stage(&h, |w, l| {
        stages::truncate::run(w, target as i64, 3, 512, None, l)
    });
    assert_eq!(text_of(&w.messages[2], 0), filler(1000));
    assert_eq!(text_of(&w.messages[4], 0).len(), 582);

    let h = old_results(&[3000, 3000]);
    let target = (total_bytes(&h) - 3000 + 582) / 4;
    let (w, _, _) = run_stage(&h, |w, l| {
        stages::truncate::run(w, target as i64, 3, 512, None, l)
    });
    assert_eq!(text_of(&w.messages[2], 0).len(), 582);
    assert_eq!(text_of(&w.messages[4], 0), filler(3000));
}

#[test]
fn stage2_collapses_an_already_marked_result_to_a_stub() {
    let mut text = filler(3000);
    text.extend_from_slice(b"superseded by a later identical call");
    let mut h = old_results(&[]);
    h.insert(1, call("t9", "grep", "{}"));
    h.insert(2, result("t9", &text));
    let (w, e, _) = run_stage(&h, |w, l| stages::truncate::run(w, 0, 3, 512, None, l));
    let stub = String::from_utf8(text_of(&w.messages[2], 0)).unwrap();
    assert_eq!(
        stub,
        "[2 KiB truncated by smith to stay within the context window]"
    );
    assert_eq!(stub.len(), 60);
    assert_eq!(e.results_stubbed, 1);
}

#[test]
fn stage2_rewrites_a_result_only_when_that_makes_it_shorter() {
    let stub = b"[0 KiB truncated by smith to stay within the context window]";
    let mut h = old_results(&[512]);
    h[4] = result("t0", stub);
    h[2] = result("t0", &filler(512));
    let (_, e, changed) = run_stage(&h, |w, l| stages::truncate::run(w, 0, 3, 512, None, l));
    assert!(
        !changed,
        "512 bytes stay, and a stub of itself is not shorter"
    );
    assert_eq!(e.results_mangled(), 0);
}

#[test]
fn stage2_rewrite_keeps_call_id_error_flag_role_synthetic_and_message_id() {
    let mut block = result_block("t0", &filler(4000));
    block.is_error = Some(true);
    block.tool_name = Some("bash".into());
    let tool = arc(Message::new(
        Role::Tool,
        vec![block],
        false,
        Some("feedfacefeedface".into()),
    ));
    let mut h = old_results(&[]);
    h.insert(1, call("t0", "bash", "{}"));
    h.insert(2, tool);
    let (w, _, _) = run_stage(&h, |w, l| stages::truncate::run(w, 0, 3, 512, None, l));
    let m = &w.messages[2];
    assert_eq!(m.role, Role::Tool);
    assert!(!m.synthetic);
    assert_eq!(m.id.as_deref(), Some("feedfacefeedface"));
    let b = &m.content[0];
    assert_eq!(b.tool_call_id.as_deref(), Some("t0"));
    assert_eq!(b.is_error, Some(true));
    assert_eq!(
        b.tool_name, None,
        "smith rebuilds a result from id, text and flag only"
    );
}

#[test]
fn stage2_result_cap_knob_sets_the_head_size() {
    let h = old_results(&[4000]);
    let (w, _, _) = run_stage(&h, |w, l| stages::truncate::run(w, 0, 3, 256, None, l));
    let t = text_of(&w.messages[2], 0);
    assert_eq!(&t[..256], &filler(256)[..]);
    assert!(
        t.ends_with(b"\n\n[... 3 KiB truncated by smith to stay within the context window ...]")
    );
    assert_eq!(t.len(), 256 + 70);
}

#[test]
fn recency_window_starts_at_the_nth_last_real_user_message() {
    let h = vec![
        user("u1"),
        assistant("a"),
        synthetic_user("continue"),
        user("u2"),
        user("u3"),
        synthetic_user("continue"),
        user("u4"),
    ];
    let w = Working::new(&h, total_bytes(&h));
    assert_eq!(w.window_start(1), 6);
    assert_eq!(
        w.window_start(3),
        3,
        "synthetic messages do not start turns"
    );
    assert_eq!(w.window_start(4), 0, "N or fewer real turns: index 0");
    assert_eq!(w.window_start(9), 0);
    assert_eq!(w.window_start(0), h.len(), "N = 0 protects nothing");
}

#[test]
fn stage3_cut_is_the_first_real_user_message_whose_suffix_fits() {
    let big = filler_str(1600);
    let h = vec![
        user(&big),
        assistant(&big),
        user(&big),
        assistant(&big),
        user(&big),
        assistant(&big),
        user("x".repeat(100).as_str()),
    ];
    let total = total_bytes(&h);
    assert_eq!(stages::summarize::safe_cut_index(&h, total, 500), 6);
    assert_eq!(stages::summarize::safe_cut_index(&h, total, 825), 4);
    assert_eq!(
        stages::summarize::safe_cut_index(&h, total, 10),
        6,
        "none fits: the last one"
    );
}

#[test]
fn stage3_cut_skips_synthetic_users_and_index_zero() {
    let h = vec![
        user("u1"),
        assistant("a"),
        synthetic_user("go on"),
        assistant("b"),
    ];
    assert_eq!(
        stages::summarize::safe_cut_index(&h, total_bytes(&h), 1000),
        0
    );
}

fn long_turns(last: &str) -> Vec<Arc<Message>> {
    let big = filler_str(1600);
    vec![
        user(&big),
        assistant(&big),
        user(&big),
        assistant(&big),
        user(&big),
        assistant(&big),
        user(last),
    ]
}

#[test]
fn stage3_summary_replaces_the_prefix_with_one_exact_user_message() {
    let cfg = Config {
        summary_tokens: 10,
        ..small(1000)
    };
    let h = long_turns(&"x".repeat(100));
    let c = Engine::new(cfg).compact(&h);
    assert_eq!(c.strategy, Strategy::Summarized);
    assert_eq!(c.stages, vec![Stage::Summarize]);
    assert_eq!(c.cut, Some(6));
    assert_eq!(c.effects.messages_summarized, 6);
    let out = c.messages.clone().unwrap();
    assert_eq!(out.len(), 2);
    let s = &out[0];
    assert_eq!(
        (s.role, s.synthetic, s.id.clone()),
        (Role::User, false, None)
    );
    let text = text_of(s, 0);
    assert!(text.starts_with(b"Summary of the earlier conversation: "));
    assert_eq!(text.len(), 37 + 40);
    assert!(Arc::ptr_eq(&out[1], &h[6]));
    assert_eq!(c.after, (77 + 100) / 4);
    assert!(c.reached_target(&Budget::new(&cfg)));
}

#[test]
fn stage3_failed_summarizer_drops_the_prefix_with_the_exact_note() {
    let cfg = Config {
        summary_tokens: 0,
        ..small(1000)
    };
    let c = Engine::new(cfg).compact(&long_turns("x"));
    assert_eq!(c.strategy, Strategy::Dropped);
    assert_eq!(c.stages, vec![Stage::Drop]);
    let out = c.messages.unwrap();
    let text = String::from_utf8(text_of(&out[0], 0)).unwrap();
    assert_eq!(
        text,
        "Summary of the earlier conversation: 6 earlier messages were dropped to stay within the context window. Ask the user if you need details from before this point."
    );
    assert_eq!(text.len(), 37 + 1 + 122);
}

#[test]
fn desperate_pass_truncates_inside_the_window_when_there_is_no_turn_to_cut() {
    // One real turn: the window covers everything and there is no cut.
    let h = vec![
        user("do it"),
        call("t1", "bash", "{}"),
        result("t1", &filler(8000)),
        call("t2", "bash", "{}"),
        result("t2", &filler(8000)),
    ];
    let c = Engine::new(small(1000)).compact(&h);
    assert_eq!(c.strategy, Strategy::Truncated);
    assert_eq!(c.stages, vec![Stage::Truncate]);
    assert_eq!(c.effects.results_truncated, 2);
    assert_eq!(c.cut, None);
}

#[test]
fn desperate_pass_removes_tool_media_but_not_what_the_user_attached() {
    let user_img = arc(Message::new(
        Role::User,
        vec![
            Block::text(b"look".to_vec()),
            media(BlockType::Image, None, Some("mine.png"), None),
        ],
        false,
        None,
    ));
    let tool = arc(Message::new(
        Role::Tool,
        vec![
            result_block("t1", b"shot"),
            media(BlockType::Image, Some("t1"), Some("screen.png"), None),
        ],
        false,
        None,
    ));
    let h = vec![user_img, call("t1", "screenshot", "{}"), tool];
    let c = Engine::new(small(3000)).compact(&h);
    assert_eq!(c.stages, vec![Stage::Attachments]);
    let out = c.messages.unwrap();
    assert!(Arc::ptr_eq(&out[0], &h[0]));
    assert_eq!(out[2].content.len(), 1);
    assert!(String::from_utf8(text_of(&out[2], 0))
        .unwrap()
        .starts_with("shot\n\n[screen.png — "));
}

#[test]
fn stages_are_listed_once_each_in_the_order_they_ran() {
    // With no window the main pass truncates; still over, no cut, so the
    // desperate pass truncates again (to stubs): "truncate" appears once.
    let cfg = Config {
        window_turns: 0,
        ..small(100)
    };
    let h = vec![
        user("do it"),
        call("t1", "bash", "{}"),
        result("t1", &filler(8000)),
        call("t2", "bash", "{}"),
        result("t2", &filler(8000)),
    ];
    let c = Engine::new(cfg).compact(&h);
    assert_eq!(c.stages, vec![Stage::Truncate]);
    assert_eq!(
        (c.effects.results_truncated, c.effects.results_stubbed),
        (2, 2)
    );
}

#[test]
fn after_reached_target_and_exhausted_follow_the_charged_history() {
    let cfg = Config {
        summary_tokens: 10,
        ..small(1000)
    };
    let c = Engine::new(cfg).compact(&long_turns("x"));
    let b = Budget::new(&cfg);
    assert!(c.after <= b.target_tokens && c.reached_target(&b) && !c.exhausted(&b));
    let huge = vec![user(&filler_str(20_000))];
    let c = Engine::new(cfg).compact(&huge);
    assert!(!c.reached_target(&b) && c.exhausted(&b));
    assert_eq!(
        c.strategy,
        Strategy::None,
        "nothing to cut, nothing to truncate"
    );
}

// ---------------------------------------------------------------- §5 replay

#[test]
fn replay_compacts_before_each_assistant_message_then_appends_it() {
    let h = vec![
        user("u1"),
        assistant("a1"),
        user("u2"),
        call("t", "bash", "{}"),
        result("t", b"x"),
        assistant("a2"),
    ];
    let mut seen = Vec::new();
    let facts = replay::replay_with(&h, &Engine::new(Config::default()), |r, hist, _| {
        seen.push((r.request, r.message_index, r.history_len, hist.len()));
        true
    });
    assert_eq!(seen, vec![(0, 1, 1, 1), (1, 3, 3, 3), (2, 5, 5, 5)]);
    assert_eq!(facts.requests, 3);
}

#[test]
fn replay_summary_lives_only_in_the_working_history() {
    let mut h = long_turns("x");
    h.push(assistant("answer"));
    let engine = Engine::new(Config {
        summary_tokens: 10,
        ..small(1000)
    });
    let mut first = None;
    let facts = replay::replay_with(&h, &engine, |r, hist, _| {
        if r.request == 3 {
            first = Some(hist[0].clone());
        }
        true
    });
    assert_eq!(h.len(), 8, "the record is not changed");
    let first = first.unwrap();
    assert!(text_of(&first, 0).starts_with(b"Summary of the earlier conversation: "));
    // Requests 1, 2 and 3 each find the history over the 800 trigger (every
    // user message is 400 tokens) and cut at the newest turn that fits 500.
    assert_eq!(facts.summaries, 3);
    assert_eq!(facts.effects.messages_summarized, 2 + 3 + 3);
}

#[test]
fn replay_trace_has_the_required_keys_first_and_in_order() {
    let h = vec![user("u"), assistant("a")];
    let mut lines = Vec::new();
    replay::replay_with(&h, &Engine::new(Config::default()), |r, _, _| {
        lines.push(trace::trace_line(r));
        true
    });
    let obj = lines[0].as_object().unwrap();
    let keys: Vec<&str> = obj.keys().map(String::as_str).take(7).collect();
    assert_eq!(
        keys,
        [
            "request",
            "message_index",
            "before",
            "after",
            "strategy",
            "stages",
            "history_len"
        ]
    );
    assert_eq!(obj["strategy"], "none");
    assert_eq!(obj["stages"], serde_json::json!([]));
    assert_eq!(obj["before"], 0);
}

#[test]
fn replay_sums_tokens_sent_and_peak_over_requests() {
    let h = vec![
        user(&filler_str(400)),
        assistant(&filler_str(400)),
        user("x"),
        assistant("y"),
    ];
    let facts = replay::replay(&h, &Engine::new(Config::default()));
    assert_eq!(facts.tokens_sent, 100 + (800 + 1) / 4);
    assert_eq!(facts.peak_tokens, 200);
}

#[test]
fn replay_cache_reads_the_unchanged_prefix_and_writes_the_rest() {
    let h = vec![
        user(&filler_str(400)),
        assistant(&filler_str(400)),
        user(&filler_str(400)),
        assistant("y"),
    ];
    let mut got = Vec::new();
    replay::replay_with(&h, &Engine::new(Config::default()), |r, _, _| {
        got.push((r.cache_read, r.cache_write));
        true
    });
    assert_eq!(got, vec![(0, 100), (100, 200)]);
}

/// Every request's trace line of a replay of `record` under `engine`.
fn traced(record: &[Arc<Message>], engine: &Engine) -> Vec<u8> {
    let mut out = Vec::new();
    replay::replay_with(record, engine, |r, _, _| {
        trace::write_trace_line(&mut out, r).is_ok()
    });
    out
}

/// A sweep tells each of smith's engines which results of the record hold a
/// marker (searched once per session): what it decides must be what an
/// engine that searches decides, a result that holds the marker included.
#[test]
fn an_engine_told_the_records_marks_decides_as_one_that_searches() {
    use smith_calibrate::engine::marks::RecordMarks;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sessions");
    let marker = "truncated by smith to stay within the context window";
    let mut compared = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path().join("transcript.jsonl");
        if !path.exists() {
            continue;
        }
        let mut record = smith_calibrate::transcript::read_transcript(&path)
            .unwrap()
            .messages;
        // A long result early on that already holds the marker, as a record
        // may: stubbed, not cut, with or without the marks.
        let early = (0..record.len() / 3)
            .find(|&i| {
                record[i]
                    .content
                    .iter()
                    .any(|b| b.kind == BlockType::ToolResult)
            })
            .expect("a result in the first third");
        let content = record[early]
            .content
            .iter()
            .map(|b| match b.kind {
                BlockType::ToolResult => Block::tool_result(
                    b.tool_call_id.clone(),
                    format!("{}\n[... 9 KiB {marker} ...]", filler_str(9000)).into_bytes(),
                    false,
                ),
                _ => b.clone(),
            })
            .collect();
        record[early] = Arc::new(record[early].with_content(content));
        let marks = Arc::new(RecordMarks::of(&record));
        let marked = record[early]
            .content
            .iter()
            .find(|b| b.kind == BlockType::ToolResult)
            .unwrap();
        assert!(marks.holds_marker(marked.text_bytes()));
        for max_tokens in [16_000, 48_000, 200_000] {
            let config = Config {
                max_tokens,
                ..Config::default()
            };
            let searching = traced(&record, &Engine::new(config));
            let told = traced(&record, &Engine::new(config).with_marks(marks.clone()));
            assert!(!searching.is_empty());
            assert_eq!(searching, told, "{} at {max_tokens}", path.display());
            compared += 1;
        }
    }
    assert!(compared >= 30, "{compared} replays compared");
}
