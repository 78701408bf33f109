//! Parity with smith's own code, byte for byte: its reader, writer,
//! summary and sums (the commands' bytes: `tests/smith_parity.rs`).
//!
//! Every expected output here is what smith's reader and writer (Crystal's
//! `JSON::Serializable`, `JSON::Any` and `to_json`) produce for the same
//! input, settled by running Crystal on it; each test names the class of
//! input it covers. Outputs are compared as bytes, never through a JSON
//! parser, which would hide a missing `"synthetic":false` and turn a broken
//! character into U+FFFD.

use crate::test_support::{self as common, assert_fixture, assert_text};

use std::sync::Arc;

use proptest::prelude::*;
use smith_calibrate::engine::stages::summarize::{stand_in, summary_message};
use smith_calibrate::engine::{Compactor, Config, Engine, Stage, Strategy};
use smith_calibrate::policy::{Knobs, Policy, Setup};
use smith_calibrate::replay::{replay_with, trace::trace_line};
use smith_calibrate::synth::{self, SessionSpec, Shape};
use smith_calibrate::transcript::parse::parse_line;
use smith_calibrate::transcript::Message;

/// The line smith writes for `input` once read: `to_json` of what it parsed.
fn rewritten(input: &[u8]) -> Vec<u8> {
    parse_line(input)
        .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(input)))
        .to_json_bytes()
}

/// `tool_args` as smith writes them after reading `args` from a line.
fn args_rewritten(args: &str) -> Result<String, String> {
    let line = format!(
        r#"{{"role":"assistant","content":[{{"type":"tool_use","tool_call_id":"a","tool_name":"t","tool_args":{args}}}]}}"#
    );
    parse_line(&line)
        .map(|m| m.content[0].tool_args.as_deref().unwrap_or("").to_string())
        .map_err(|e| e.to_string())
}

/// Shows bytes readably in a failure.
fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ------------------------------------------------------------ the writer

#[test]
fn synthetic_false_is_written_on_every_message_before_the_id() {
    assert_eq!(
        show(&rewritten(
            br#"{"role":"user","content":[{"type":"text","text":"hi"}],"id":"47995aa81683cdb4"}"#
        )),
        r#"{"role":"user","content":[{"type":"text","text":"hi"}],"synthetic":false,"id":"47995aa81683cdb4"}"#
    );
    // A line that already had it, one that is synthetic, one without id.
    assert_eq!(
        show(&rewritten(
            br#"{"id":"x","synthetic":false,"content":[],"role":"assistant"}"#
        )),
        r#"{"role":"assistant","content":[],"synthetic":false,"id":"x"}"#
    );
    assert_eq!(
        show(&rewritten(
            br#"{"role":"user","content":[],"synthetic":true}"#
        )),
        r#"{"role":"user","content":[],"synthetic":true}"#
    );
    // `null` is the default: false, written; a null id is absent.
    assert_eq!(
        show(&rewritten(
            br#"{"role":"user","content":[],"synthetic":null,"id":null}"#
        )),
        r#"{"role":"user","content":[],"synthetic":false}"#
    );
}

#[test]
fn a_text_cut_inside_a_character_is_written_as_its_raw_bytes() {
    // smith's 512-byte head of a text of three-byte characters ends with the
    // first two bytes of one; its line carries them, then the marker.
    let mut text = "メ".repeat(170).into_bytes();
    text.extend_from_slice(&[0xE3, 0x83]);
    text.extend_from_slice(b"\n\n[... 3 KiB truncated]");
    let m = Message::new(
        smith_calibrate::transcript::Role::Tool,
        vec![smith_calibrate::transcript::Block::tool_result(
            Some("t1".into()),
            text.clone(),
            false,
        )],
        false,
        None,
    );
    let mut want = br#"{"role":"tool","content":[{"type":"tool_result","text":""#.to_vec();
    want.extend_from_slice(&"メ".repeat(170).into_bytes());
    want.extend_from_slice(b"\xE3\x83\\n\\n[... 3 KiB truncated]\",\"tool_call_id\":\"t1\",\"is_error\":false}],\"synthetic\":false}");
    assert_eq!(show(&m.to_json_bytes()), show(&want));
    assert_eq!(m.to_json_bytes(), want, "the bytes, not U+FFFD");
    // Read back, the same bytes again: such a history is accepted.
    assert_eq!(rewritten(&want), want);
    assert_eq!(
        parse_line(&want).unwrap().content[0].text_bytes(),
        &text[..]
    );
}

#[test]
fn broken_utf8_inside_a_string_is_read_and_written_unchanged() {
    let line = b"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\xff\xe3\x83b\"}],\"synthetic\":false}";
    assert_eq!(rewritten(line), line.to_vec());
    assert_eq!(
        parse_line(line).unwrap().content[0].text_bytes(),
        b"a\xff\xe3\x83b"
    );
    // In an ignored field too (Crystal skips it); outside a string it is
    // not JSON.
    let ignored = b"{\"role\":\"user\",\"content\":[],\"note\":\"\xff\"}";
    assert_eq!(
        show(&rewritten(ignored)),
        r#"{"role":"user","content":[],"synthetic":false}"#
    );
    let err = parse_line(b"{\"role\":\"user\",\xff\"content\":[]}").unwrap_err();
    assert_eq!(err.column, 16, "{err}");
    assert_text(&err.to_string(), "invalid UTF-8 at byte 15 (column 16)");
}

#[test]
fn escapes_are_read_and_written_as_crystal_does() {
    // Named escapes stay named, other controls and DEL become \u00xx in
    // lower case, `\/` becomes `/`, everything non-ASCII is written raw,
    // U+2028 included; a surrogate pair is one character.
    assert_eq!(
        args_rewritten(r#""\u0000\u007f\u001f\b\f/\/\u00E9\u2028\ud83d\ude00\t\n\r\"\\""#).unwrap(),
        "\"\\u0000\\u007f\\u001f\\b\\f//é\u{2028}😀\\t\\n\\r\\\"\\\\\""
    );
    // A raw DEL in a text is escaped on the way out.
    assert_eq!(
        show(&rewritten(
            b"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\x7fy\"}]}"
        )),
        r#"{"role":"user","content":[{"type":"text","text":"x\u007fy"}],"synthetic":false}"#
    );
}

#[test]
fn lone_surrogates_bad_escapes_and_raw_controls_fail_the_line() {
    // Each input and the reason the line fails (a high or low surrogate
    // alone, an unknown escape, fewer than four hex digits, a raw control
    // character), named at content[0].tool_args.
    let errors: String = [
        r#""\ud800""#,
        r#""\ud800x""#,
        r#""\ud800\u0041""#,
        r#""\udc00""#,
        r#""\a""#,
        r#""\U00e9""#,
        r#""\u12""#,
        "\"tab\tin\"",
        "\"nl\nin\"",
    ]
    .iter()
    .map(|args| format!("{args:?} → {}\n", args_rewritten(args).unwrap_err()))
    .collect();
    assert_fixture(&errors, "smith_parity/bad_escapes.txt");
    // In a field smith ignores, a lone surrogate still fails the line.
    let err = parse_line(r#"{"role":"user","content":[],"x":"\ud800"}"#).unwrap_err();
    assert_text(
        &err.to_string(),
        "a high surrogate \\u escape without a low one (column 36)",
    );
}

// ------------------------------------------------------------ numbers

#[test]
fn numbers_are_rewritten_as_int64_or_float64_the_way_crystal_prints_them() {
    for (input, want) in [
        ("9223372036854775807", "9223372036854775807"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("-0", "0"),
        ("-0.0", "-0.0"),
        ("1.0", "1.0"),
        ("1E5", "100000.0"),
        ("1e5", "100000.0"),
        ("1.0e+2", "100.0"),
        ("0.1", "0.1"),
        ("2.5e-5", "2.5e-5"),
        ("1e-400", "0.0"),
        ("5e-324", "5.0e-324"),
        ("1.5e300", "1.5e+300"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("100000000000000000000.0", "1.0e+20"),
        ("123456789012345678901234567890.5", "1.2345678901234568e+29"),
    ] {
        assert_eq!(
            args_rewritten(&format!(r#"{{"n":{input}}}"#)).unwrap(),
            format!(r#"{{"n":{want}}}"#),
            "{input}"
        );
    }
}

#[test]
fn an_integer_outside_int64_or_a_float_outside_float64_fails_the_line() {
    // Each number and the reason, naming it and smith's own error
    // (Invalid Int64 for the integers, Invalid Float64 for the floats).
    let errors: String = [
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "-18446744073709551616",
        "123456789012345678901234567890",
        "1e400",
        "-1e400",
        "1.8e308",
    ]
    .iter()
    .map(|input| {
        let err = args_rewritten(&format!(r#"{{"n":[1,{input}]}}"#)).unwrap_err();
        format!("{input} → {err}\n")
    })
    .collect();
    assert_fixture(&errors, "smith_parity/out_of_range_numbers.txt");
    // Crystal only checks the syntax of a number in a field it ignores.
    for input in ["99999999999999999999", "1e400"] {
        let line = format!(r#"{{"role":"user","content":[],"x":{input}}}"#);
        assert!(parse_line(&line).is_ok(), "{input}");
    }
}

#[test]
fn number_syntax_outside_json_fails_the_line() {
    for input in [
        "01", "1.", ".5", "+1", "1e", "-", "1e+", "0x1", "NaN", "Infinity",
    ] {
        assert!(
            args_rewritten(&format!(r#"{{"n":{input}}}"#)).is_err(),
            "{input} was accepted"
        );
        let ignored = format!(r#"{{"role":"user","content":[],"x":{input}}}"#);
        assert!(
            parse_line(&ignored).is_err(),
            "{input} was accepted when ignored"
        );
    }
}

// ------------------------------------------------------------ structure

#[test]
fn a_repeated_key_in_tool_args_keeps_its_place_and_takes_the_last_value() {
    assert_eq!(
        args_rewritten(r#"{"a":1,"b":2,"a":3}"#).unwrap(),
        r#"{"a":3,"b":2}"#
    );
    assert_eq!(
        args_rewritten(r#"{"z":1,"a":{"y":[],"x":null,"y":true}}"#).unwrap(),
        r#"{"z":1,"a":{"y":true,"x":null}}"#
    );
    // Past the size where repeated keys are found through a hash map.
    let keys: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
    let input = format!("{{{},\"k3\":\"again\",\"k39\":0}}", keys.join(","));
    let mut want: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
    want[3] = r#""k3":"again""#.into();
    want[39] = r#""k39":0"#.into();
    assert_eq!(
        args_rewritten(&input).unwrap(),
        format!("{{{}}}", want.join(","))
    );
    // Whitespace goes, key order stays.
    assert_eq!(
        args_rewritten("{ \"b\" : [ 1 , true ] ,\r\n\t\"a\" : false }").unwrap(),
        r#"{"b":[1,true],"a":false}"#
    );
}

#[test]
fn a_repeated_field_of_a_message_or_block_takes_the_last_value() {
    assert_eq!(
        show(&rewritten(
            br#"{"role":"user","content":[{"type":"text","text":"a","text":"b"}],"role":"tool","content":[]}"#
        )),
        r#"{"role":"tool","content":[],"synthetic":false}"#
    );
    assert_eq!(
        show(&rewritten(
            br#"{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}"#
        )),
        r#"{"role":"user","content":[{"type":"text","text":"b"}],"synthetic":false}"#
    );
}

#[test]
fn nesting_deeper_than_512_levels_fails_the_line_kept_or_ignored() {
    // The message is level 1, content 2, a block 3: tool_args may open 509
    // more levels; a field of the message 511.
    let args = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
    assert!(args_rewritten(&args(509)).is_ok());
    let err = args_rewritten(&args(510)).unwrap_err();
    assert_text(&err, "content[0].tool_args: nesting deeper than 512 levels (recursion limit exceeded) (column 607)");
    let ignored = |d: usize| format!(r#"{{"role":"user","content":[],"x":{}}}"#, args(d));
    assert!(parse_line(&ignored(511)).is_ok());
    assert!(parse_line(&ignored(512)).is_err());
}

#[test]
fn only_json_whitespace_and_nothing_after_the_message() {
    assert!(parse_line(" \t{\"role\":\"user\",\"content\":[]} \r\n").is_ok());
    for line in [
        "{\"role\":\"user\",\u{c}\"content\":[]}",
        "{\"role\":\"user\",\u{b}\"content\":[]}",
        "{\"role\":\"user\",\u{a0}\"content\":[]}",
        "{\"role\":\"user\",\"content\":[]}x",
        "{\"role\":\"user\",\"content\":[]}{",
        "{\"role\":\"user\",\"content\":[],}",
        "{\"role\":\"user\",\"content\":[1,]}",
    ] {
        assert!(parse_line(line).is_err(), "{line:?} was accepted");
    }
}

#[test]
fn field_types_are_smiths() {
    // Each line and the reason, naming the field of the wrong type.
    let errors: String = [
        r#"{"role":1,"content":[]}"#,
        r#"{"role":"user","content":null}"#,
        r#"{"role":"user","content":[],"synthetic":1}"#,
        r#"{"role":"user","content":[],"id":5}"#,
        r#"{"role":"user","content":[{"type":1}]}"#,
        r#"{"role":"user","content":[{"type":"text","tool_name":[]}]}"#,
    ]
    .iter()
    .map(|line| format!("{line} → {}\n", parse_line(line).unwrap_err()))
    .collect();
    assert_fixture(&errors, "smith_parity/field_types.txt");
    // Enum names: case and underscores do not matter, other characters do.
    assert!(parse_line(r#"{"role":"Tool_","content":[{"type":"tool__use"}]}"#).is_ok());
    assert!(parse_line(r#"{"role":"user","content":[{"type":"tool-use"}]}"#).is_err());
    // A null `tool_args` is absent (written without it).
    assert_eq!(
        show(&rewritten(
            br#"{"role":"assistant","content":[{"type":"tool_use","tool_args":null,"is_error":null}]}"#
        )),
        r#"{"role":"assistant","content":[{"type":"tool_use"}],"synthetic":false}"#
    );
}

// ------------------------------------------------------------ end to end

// ------------------------------------------------------------ reclaimed

/// The reclaimed figures of one request, as the trace lists them.
fn listed(r: &smith_calibrate::replay::RequestFacts) -> serde_json::Map<String, serde_json::Value> {
    trace_line(r)["reclaimed"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_summary_of_a_summary_is_listed_with_0_reclaimed() {
    // The prefix cut away is only the previous summary, and the new summary
    // is the same size: the stage ran, changed the history, reclaimed 0.
    let config = Config {
        max_tokens: 2000,
        ..Config::default()
    };
    let history = vec![
        Arc::new(summary_message(&stand_in(config.summary_tokens))),
        common::user(&"u".repeat(3000)),
        common::assistant("ok"),
    ];
    let engine = Engine::new(config);
    let mut seen = 0;
    replay_with(&history, &engine, |r, _, _| {
        if r.strategy == Strategy::Summarized {
            seen += 1;
            assert_eq!(r.stages, vec![Stage::Summarize]);
            assert_eq!(r.before, r.after);
            let l = listed(r);
            assert_eq!(l.get("summarize"), Some(&serde_json::json!(0)), "{l:?}");
        }
        true
    });
    assert_eq!(seen, 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// On every request that compacted, under any ratio and overhead, the
    /// per-stage figures are charged tokens that add up to exactly
    /// `before - after`, and every stage that fired is listed.
    #[test]
    fn reclaimed_per_stage_sums_to_before_minus_after(
        seed in 0u64..1000,
        shape in prop_oneof![Just(Shape::Long), Just(Shape::Short), Just(Shape::OneTurn)],
        max_tokens in 6_000u64..40_000,
        ratio in 1.0f64..2.0,
        overhead in 0u64..2_000,
        summary_tokens in prop_oneof![Just(0u64), Just(50), Just(1000)],
    ) {
        let messages: Vec<Arc<Message>> = synth::generate_session(seed, SessionSpec::of_mb(shape, 0.15))
            .into_iter()
            .map(Arc::new)
            .collect();
        let config = Config {
            max_tokens,
            ratio,
            overhead_tokens: overhead,
            summary_tokens,
            ..Config::default()
        };
        let engine = Engine::new(config);
        sums_hold(&messages, &engine).map_err(TestCaseError::fail)?;
        // The other agents' policies report their stages the same way
        // (Codex's cap on arrival is not part of a request's compaction:
        // its `before` already counts the capped result).
        for policy in Policy::ALL {
            if matches!(policy, Policy::Smith | Policy::Codex) {
                continue;
            }
            let setup = Setup::new(policy, config, Knobs::default());
            let compactor = setup.compactor();
            if let Err(e) = sums_hold(&messages, compactor.as_ref()) {
                return Err(TestCaseError::fail(format!("{}: {e}", policy.as_str())));
            }
        }
    }
}

/// Checks every compacting request of a replay: the per-stage figures add
/// up to `before - after`, and every stage that fired is listed.
fn sums_hold<C: Compactor + ?Sized>(messages: &[Arc<Message>], engine: &C) -> Result<(), String> {
    let mut failure = None;
    replay_with(messages, engine, |r, _, _| {
        if r.strategy == Strategy::None && r.stages.is_empty() {
            return true;
        }
        let sum: i64 = r.effects.reclaimed.iter().sum();
        let l = listed(r);
        let listed_sum: i64 = l.values().map(|v| v.as_i64().unwrap_or(0)).sum();
        let all_listed = r.stages.iter().all(|s| l.contains_key(s.as_str()));
        if sum != r.before - r.after || listed_sum != sum || !all_listed {
            failure = Some(format!(
                "request {}: before {} after {} stages {:?} reclaimed {:?} listed {l:?}",
                r.request, r.before, r.after, r.stages, r.effects.reclaimed
            ));
            return false;
        }
        true
    });
    failure.map_or(Ok(()), Err)
}
