//! Token estimators (issue 13): bytes4 is smith's estimate to the byte, the
//! tokenizers count what their crates publish, and every estimator drives
//! the engine, the replay and the sweep.

use crate::test_support::estimators::*;
use crate::test_support::*;
use smith_calibrate::engine::{Config, Engine};
use smith_calibrate::estimate::{self, Estimator, Measure};
use smith_calibrate::policy::Setup;
use smith_calibrate::replay;
use smith_calibrate::transcript::{self, Message};

// ---------------------------------------------------------------------------
// Published counts.

/// The chat of OpenAI's cookbook "How to count tokens with tiktoken", as
/// tiktoken-rs 0.12.1 tests it (`src/api.rs`, `test_num_tokens_from_messages`):
/// role, name (if any) and content of each message.
const COOKBOOK: [(&str, Option<&str>, &str); 6] = [
    ("system", None, "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."),
    ("system", Some("example_user"), "New synergies will help drive top-line growth."),
    ("system", Some("example_assistant"), "Things working well together will increase revenue."),
    ("system", Some("example_user"), "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."),
    ("system", Some("example_assistant"), "Let's talk later when we're less busy about how to do better."),
    ("user", None, "This late pivot means we don't have time to boil the ocean for the client deliverable."),
];

/// The cookbook's chat framing around the text counts: 3 tokens per
/// message, 1 more per name, 3 priming the reply.
fn cookbook_tokens(e: Estimator) -> u64 {
    let mut n = 3;
    for (role, name, content) in COOKBOOK {
        n += 3 + e.text_units(role.as_bytes()) + e.text_units(content.as_bytes());
        if let Some(name) = name {
            n += 1 + e.text_units(name.as_bytes());
        }
    }
    n
}

/// Texts where pre-tokenisation is delicate: whitespace runs before a word,
/// at the end and before newlines, contractions in either case, digit runs,
/// letters with marks, CJK, emoji, a broken UTF-8 sequence.
const EDGE_TEXTS: [&[u8]; 12] = [
    b"",
    b"   leading and trailing   ",
    b"a  b\n\n  c\t\t\r\n   ",
    b"I'M sure they'll say we'D, you're, it's. DON'T",
    b"1234567 3.14159 2026-12-01T05:40:29Z",
    "na\u{ef}ve caf\u{e9} \u{2126} Stra\u{df}e e\u{301}".as_bytes(),
    "\u{4eca}\u{65e5}\u{306f}\u{4e16}\u{754c} \u{1f600}\u{1f680} \u{d55c}\u{ad6d}\u{c5b4}"
        .as_bytes(),
    b"fn main() {\n    println!(\"{}\", x /* y */);\n}\n",
    b"path/to/file.rs:12:5 https://example.com/a?b=c&d=e",
    b"\xe2\x82 broken \xff sequence",
    b"\n\n\n",
    b" ",
];

/// Every text an estimator counts in `datasets/`: block text, tool
/// arguments, tool names, signatures.
fn dataset_texts() -> Vec<Vec<u8>> {
    let mut texts = Vec::new();
    for path in dataset() {
        let session = transcript::session::load_path(&path).expect("dataset session");
        for m in &session.messages {
            for b in &m.content {
                texts.push(b.text_bytes().to_vec());
                for p in [&b.tool_args, &b.tool_name, &b.signature]
                    .into_iter()
                    .flatten()
                {
                    texts.push(p.as_bytes().to_vec());
                }
            }
        }
    }
    texts
}

#[test]
fn tokenizers_match_the_counts_tiktoken_rs_publishes() {
    // tiktoken-rs asserts 129 for gpt-4-0314 (cl100k_base) and 124 for
    // gpt-4o-2024-05-13 (o200k_base) on this chat.
    assert_eq!(cookbook_tokens(Estimator::Cl100k), 129);
    assert_eq!(cookbook_tokens(Estimator::O200k), 124);
}

#[test]
fn tokenizers_match_tiktokens_own_examples() {
    // tiktoken's tests/test_encoding.py (test_simple): cl100k_base encodes
    // "hello world" as [15339, 1917]; tiktoken-rs's api.rs test decodes
    // 15339 as "hello".
    assert_eq!(
        bpe_openai::cl100k_base().encode("hello world"),
        vec![15339, 1917]
    );
    assert_eq!(Estimator::Cl100k.text_units(b"hello world"), 2);
    assert_eq!(Estimator::O200k.text_units(b"hello world"), 2);
    // The cookbook's "tiktoken is great!": 6 cl100k tokens
    // (t, ik, token, " is", " great", "!").
    assert_eq!(Estimator::Cl100k.text_units(b"tiktoken is great!"), 6);
}

#[test]
fn tokenizers_built_from_the_committed_vocabularies_match_bpe_openais_prebuilt_ones() {
    // The estimators build o200k and cl100k at run time from the gzipped
    // tiktoken files (issue 14's size budget); bpe-openai's own functions,
    // linked into this test only, are the reference they replaced. Same
    // token ids, so the same counts, on fixed edge cases and on every text
    // of the committed dataset.
    let texts: Vec<Vec<u8>> = EDGE_TEXTS
        .iter()
        .map(|t| t.to_vec())
        .chain(dataset_texts())
        .collect();
    let bytes: usize = texts.iter().map(Vec::len).sum();
    assert!(
        texts.len() > 1_000 && bytes > 1_000_000,
        "{} texts",
        texts.len()
    );
    let pairs = [
        (
            Estimator::O200k,
            estimate::openai::o200k().unwrap(),
            bpe_openai::o200k_base(),
        ),
        (
            Estimator::Cl100k,
            estimate::openai::cl100k().unwrap(),
            bpe_openai::cl100k_base(),
        ),
    ];
    for (e, built, prebuilt) in pairs {
        let mut tokens = 0u64;
        for t in &texts {
            let s = String::from_utf8_lossy(t);
            let ids = built.encode(&s);
            assert_eq!(
                ids,
                prebuilt.encode(&*s),
                "{e} on {:?}",
                &s[..s.len().min(80)]
            );
            assert_eq!(e.text_units(t), prebuilt.count(&*s) as u64, "{e}");
            tokens += ids.len() as u64;
        }
        eprintln!(
            "{e}: {} texts, {bytes} bytes, {tokens} tokens, identical",
            texts.len()
        );
    }
}

#[test]
fn claude2_matches_the_counts_anthropic_publishes() {
    // @anthropic-ai/tokenizer 0.0.4, tests/tokenizers.test.ts: countTokens
    // gives 3 for "hello world!", 1 for "™" and for "ϰ" (NFKC first), and 1
    // for the special token "<EOT>".
    let n = |s: &str| Estimator::Claude2.text_units(s.as_bytes());
    assert_eq!(n("hello world!"), 3);
    assert_eq!(n("™"), 1);
    assert_eq!(n("ϰ"), 1);
    assert_eq!(n("<EOT>"), 1);
    // Xenova/claude-tokenizer's model card (the same vocabulary):
    // "hello world" is [9381, 2253].
    assert_eq!(n("hello world"), 2);
    // Special tokens split the text; the rest is counted as it is.
    assert_eq!(n("hello world!<EOT>hello world!"), 7);
    // A '<' that starts no special token is plain text.
    assert!(n("<EOT") >= 2, "{}", n("<EOT"));
}

#[test]
fn length_estimators_count_bytes_and_characters() {
    let text = "naïve café — 東京".as_bytes();
    assert_eq!(Estimator::Bytes4.text_units(text), text.len() as u64);
    assert_eq!(
        Estimator::Chars4.text_units(text),
        "naïve café — 東京".chars().count() as u64
    );
    // A head cut inside a character: bytes count what is kept; a tokenizer
    // sees the broken sequence as U+FFFD and does not fail.
    let cut = &text[..text.len() - 1];
    assert_eq!(Estimator::Bytes4.text_units(cut), text.len() as u64 - 1);
    assert!(Estimator::O200k.text_units(cut) > 0);
}

#[test]
fn every_estimator_counts_the_same_parts_smith_counts() {
    let img = media(
        smith_calibrate::transcript::BlockType::Image,
        Some("c1"),
        Some("shot.png"),
        None,
    );
    let m = Message::new(
        smith_calibrate::transcript::Role::Assistant,
        vec![
            smith_calibrate::transcript::Block::tool_use("c1", "read_file", r#"{"path":"a.rs"}"#),
            thinking("let me look", "c2lnbmF0dXJl"),
            img,
        ],
        false,
        None,
    );
    for e in Estimator::ALL {
        let parts = e.text_units(b"read_file")
            + e.text_units(br#"{"path":"a.rs"}"#)
            + e.text_units(b"let me look")
            + e.text_units(b"c2lnbmF0dXJl")
            + 1_600 * e.per_token();
        assert_eq!(Measure::new(e).message(&m), parts, "{e}");
    }
    assert_eq!(Measure::new(Estimator::Bytes4).message(&m), m.bytes());
}

// ---------------------------------------------------------------------------
// The engine under another estimator.

#[test]
fn a_tokenizer_moves_the_trigger_and_every_figure_is_in_its_tokens() {
    let path = &dataset()[0];
    let session = transcript::session::load_path(path).expect("dataset session");
    let config = Config {
        max_tokens: 32_000,
        ..Config::default()
    };
    for e in Estimator::ALL {
        let setup = Setup::smith(config).with_estimator(e);
        let engine = setup.compactor_for(&session.messages, session.run.as_ref());
        let measure = Measure::for_session(e, &session.messages);
        let mut checked = 0;
        let facts = replay::replay_with(&session.messages, engine.as_ref(), |r, history, _| {
            // What was sent is what the estimator says the history costs.
            assert_eq!(
                r.after,
                engine
                    .budget()
                    .charged(measure.tokens(measure.history(history))),
                "{e}: request {}",
                r.request
            );
            if r.triggered {
                assert!(r.before > engine.budget().trigger_tokens);
            }
            checked += 1;
            true
        });
        assert_eq!(checked, facts.requests);
        assert!(facts.compactions > 0, "{e}: 32k must compact this session");
    }
}

#[test]
fn the_session_cache_gives_the_same_replay_as_counting_afresh() {
    let path = &dataset()[1];
    let session = transcript::session::load_path(path).expect("dataset session");
    let config = Config {
        max_tokens: 32_000,
        ..Config::default()
    };
    for e in [Estimator::O200k, Estimator::Cl100k, Estimator::Claude2] {
        let cached = Engine::with_measure(config, Measure::for_session(e, &session.messages));
        let fresh = Engine::with_measure(config, Measure::new(e));
        let a = replay::replay(&session.messages, &cached);
        let b = replay::replay(&session.messages, &fresh);
        assert_eq!(a, b, "{e}");
    }
}

#[test]
fn policies_other_than_smith_refuse_another_estimator() {
    let s = Setup::new(
        smith_calibrate::policy::Policy::Masking,
        Config::default(),
        Default::default(),
    )
    .with_estimator(Estimator::O200k);
    let e = s.validate().unwrap_err().to_string();
    assert_text(
        &e,
        "--estimator o200k applies to smith's engine only; policy masking estimates bytes / 4",
    );
}
