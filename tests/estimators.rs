//! Token estimators (issue 13): bytes4 is smith's estimate to the byte, the
//! tokenizers count what their crates publish, and every estimator drives
//! the engine, the replay and the sweep.

use crate::common;

use std::path::{Path, PathBuf};

use smith_calibrate::engine::{Config, Engine};
use smith_calibrate::estimate::{self, Estimator, Measure};
use smith_calibrate::policy::Setup;
use smith_calibrate::replay;
use smith_calibrate::transcript::{self, Message};

use common::*;

const DATASET_DIR: &str = "datasets/sessions";

/// Digests of bytes4 outputs on `datasets/`, written by the binary before
/// estimators existed (commit a1e7b8d) with `tests/fixtures/make_bytes4_parity.py`.
const PARITY_FIXTURE: &str = "tests/fixtures/bytes4_parity.txt";

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
// bytes4 parity with the code before estimators.

fn dataset() -> Vec<PathBuf> {
    let mut refs: Vec<PathBuf> = transcript::locate::resolve_path(Path::new(DATASET_DIR))
        .expect("the committed dataset")
        .into_iter()
        .map(|r| r.transcript)
        .collect();
    refs.sort();
    refs
}

/// The configs of the fixture, by index (as `tests/fixtures/make_bytes4_parity.py` has them).
fn parity_config(i: &str) -> Vec<&'static str> {
    match i {
        "0" => vec![],
        "1" => vec!["--max-tokens", "32000"],
        "2" => vec![
            "--max-tokens",
            "48000",
            "--compact-at",
            "0.7",
            "--compact-to",
            "0.4",
            "--result-cap",
            "256",
            "--window",
            "1",
            "--summary-tokens",
            "0",
        ],
        other => panic!("fixture: no config {other}"),
    }
}

/// FNV-1a 64 of the bytes, as the fixture's generator computes it.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `replay --json` without the figures added since the fixture was written
/// (the re-fetch model's: `still_needed`, `refetch_expected`, `refetch`,
/// `cost.price_refetch`, `cost.price_with_refetch`) and the fields made
/// stable since (`estimator`, named for bytes4 too, and `prune_turns` of
/// `policy_knobs` at its default), each on lines of its own (the
/// estimator's, the last, with the comma before it): every other byte must
/// be as before.
fn without_refetch_figures(json: &[u8]) -> Vec<u8> {
    // The estimator is the summary's last field but for the prices (which
    // the caller takes out).
    // The schema version opens the summary.
    let version = format!(
        "{{\n  \"schema_version\": {},\n",
        smith_calibrate::commands::replay::JSON_SCHEMA_VERSION
    );
    let text = String::from_utf8_lossy(json);
    assert!(text.starts_with(&version), "replay --json: {text:.40}");
    let text = text
        .replacen(&version, "{\n", 1)
        .replace(",\n  \"estimator\": \"bytes4\"\n}", "\n}")
        .replace("\n  \"estimator\": \"bytes4\",\n", "\n");
    let mut out = String::new();
    let mut in_block = false;
    for line in text.split_inclusive('\n') {
        if in_block {
            in_block = !line.starts_with("  },");
            continue;
        }
        if line.starts_with("  \"refetch\": {") {
            in_block = true;
            continue;
        }
        if [
            "  \"still_needed\": ",
            "  \"refetch_expected\": ",
            "    \"price_refetch\": ",
            "    \"price_with_refetch\": ",
            "    \"prune_turns\": ",
        ]
        .iter()
        .any(|p| line.starts_with(p))
        {
            continue;
        }
        out.push_str(line);
    }
    out.into_bytes()
}

/// `replay --json` as it was before the misfire kind `resummarized`: its
/// count's line and its entries in `misfires` taken out of the text, which
/// must hold as many of them as the count says.
fn without_resummarized(text: &str, args: &[&str]) -> String {
    let count_line = regex::Regex::new(r#"(?m)^  "misfire_resummarized": (\d+),\n"#).unwrap();
    let count: usize = count_line
        .captures(text)
        .unwrap_or_else(|| panic!("{args:?}: no misfire_resummarized"))[1]
        .parse()
        .unwrap();
    let text = count_line.replace(text, "");
    let entry =
        regex::Regex::new(r#"(?s)\n    \{\n      "kind": "resummarized",.*?\n    \},?"#).unwrap();
    assert_eq!(entry.find_iter(&text).count(), count, "{args:?}");
    let text = entry.replace_all(&text, "");
    // The entry that now ends the list lost its comma to the one removed
    // after it, or kept one that no longer leads anywhere.
    text.replace("},\n  ],", "}\n  ],")
        .replace("\"misfires\": [\n  ],", "\"misfires\": [],")
}

/// Every output of the fixture (`replay --trace`, `--json` and the working
/// history written by `--emit-history-at K` at the first and last
/// compactions and the last request, for 12 sessions under 3 configs), as
/// bytes: written by the binary before estimators existed (commit a1e7b8d),
/// compared here by length and FNV-1a of the exact bytes, with no flag and
/// with `--estimator bytes4`.
#[test]
fn bytes4_outputs_on_the_dataset_are_byte_identical_to_before_estimators() {
    let fixture = std::fs::read_to_string(PARITY_FIXTURE).expect("the parity fixture");
    // Then every smith session was priced at the default row; now by the
    // provider and model its session.json names. Copies that name neither,
    // read by the same relative paths, price as then.
    let then = tempfile::tempdir().unwrap();
    for from in dataset() {
        let dir = from.parent().unwrap();
        let to = then.path().join(dir);
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(&from, to.join("transcript.jsonl")).unwrap();
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
        let obj = meta.as_object_mut().unwrap();
        obj.remove("provider");
        obj.remove("model");
        std::fs::write(to.join("session.json"), meta.to_string()).unwrap();
    }
    let prices = regex::Regex::new(r#",\n  "prices": "[^\n]*"\n\}"#).unwrap();
    let mut checked = 0;
    for line in fixture.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let [session, config, what, len, hash] = f[..] else {
            panic!("fixture line {line:?}");
        };
        let path = format!("{DATASET_DIR}/{session}");
        let mut args = vec!["replay", path.as_str()];
        let k;
        match what.split_once('@') {
            None if what == "trace" => args.push("--trace"),
            None if what == "json" => args.push("--json"),
            Some(("history", at)) => {
                k = at.to_string();
                args.extend(["--emit-history-at", k.as_str()]);
            }
            _ => panic!("fixture: {what}"),
        }
        args.extend(parity_config(config));
        for estimator in [None, Some("bytes4")] {
            let mut a = args.clone();
            if let Some(e) = estimator {
                a.extend(["--estimator", e]);
            }
            let o = bin().args(&a).current_dir(then.path()).output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{a:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            // The summary has gained its schema version, the re-fetch
            // model's figures, one misfire kind, `resummarized`, and the
            // prices it names since:
            // without them it is the bytes of then.
            let bytes = if what == "json" {
                let text =
                    String::from_utf8(without_refetch_figures(&o.stdout)).expect("JSON is UTF-8");
                assert!(prices.is_match(&text), "{a:?} names its prices");
                without_resummarized(&prices.replace(&text, "\n}"), &a).into_bytes()
            } else {
                o.stdout.clone()
            };
            assert_eq!(
                (bytes.len().to_string(), format!("{:016x}", fnv(&bytes))),
                (len.to_string(), hash.to_string()),
                "{a:?} differs from before estimators"
            );
            checked += 1;
        }
    }
    assert!(checked >= 200, "only {checked} outputs checked");
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

// ---------------------------------------------------------------------------
// The commands.

#[test]
fn replay_with_estimator_bytes4_writes_the_same_bytes_as_without() {
    let path = dataset()[0].display().to_string();
    for extra in [
        &["--trace"][..],
        &["--json"],
        &["--emit-history-at", "30"],
        &[],
    ] {
        let mut plain = vec!["replay", path.as_str(), "--max-tokens", "32000"];
        plain.extend_from_slice(extra);
        let mut named = plain.clone();
        named.extend_from_slice(&["--estimator", "bytes4"]);
        let (a, b) = (run(&plain), run(&named));
        assert_eq!(
            a.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert_eq!(a.stdout, b.stdout, "{extra:?}");
    }
}

#[test]
fn replay_and_show_take_a_tokenizer() {
    let path = dataset()[0].display().to_string();
    let o = run(&[
        "replay",
        &path,
        "--max-tokens",
        "32000",
        "--estimator",
        "o200k",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["estimator"], "o200k");
    assert!(
        v["label"].as_str().unwrap().ends_with(" o200k"),
        "{}",
        v["label"]
    );
    let b4 = run(&["replay", &path, "--max-tokens", "32000", "--json"]);
    let b4: serde_json::Value = serde_json::from_slice(&b4.stdout).expect("json");
    assert_eq!(b4["estimator"], "bytes4", "named even at smith's own");
    assert_ne!(
        v["peak_before"], b4["peak_before"],
        "o200k counts differ from bytes / 4"
    );

    let o = run(&[
        "transcript",
        "show",
        &path,
        "--at",
        "30",
        "--max-tokens",
        "32000",
        "--estimator",
        "cl100k",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["replay", &path, "--estimator", "gpt2"]);
    assert_eq!(o.status.code(), Some(2));
    assert_text(&stderr(&o), "error: invalid value 'gpt2' for '--estimator <NAME>': unknown estimator \"gpt2\"; the estimators are bytes4, chars4, o200k, cl100k, claude2\n\nFor more information, try '--help'.\n");
    let o = run(&[
        "replay",
        &path,
        "--policy",
        "masking",
        "--estimator",
        "o200k",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_text(&stderr(&o), "smith-calibrate: --estimator o200k applies to smith's engine only; policy masking estimates bytes / 4\n");
}

#[test]
fn a_sweep_varies_the_estimator_like_a_knob() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let o = run(&[
        "sweep",
        DATASET_DIR,
        "--max-tokens",
        "32000,64000",
        "--estimator",
        "bytes4,o200k,chars4",
        "--out",
        out.to_str().expect("utf-8"),
        "--json",
        "-j",
        "2",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rows = crate::common::sweep_configs(&o.stdout);
    // The grid (the 120k baseline, 32k, 64k) under each of 3 estimators.
    assert_eq!(rows.len(), 9);
    let csv = std::fs::read_to_string(out.join("configs.csv")).expect("configs.csv");
    let header = csv.lines().next().expect("header");
    assert!(header.split(',').any(|c| c == "estimator"), "{header}");
    for e in ["bytes4", "o200k", "chars4"] {
        assert!(
            csv.lines().skip(1).any(|l| l.contains(&format!(",{e},"))),
            "{e}: {csv}"
        );
    }
    let labels: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["config_label"].as_str())
        .collect();
    assert!(labels.iter().any(|l| l.ends_with(" o200k")), "{labels:?}");

    // A sweep that does not vary it has the column all the same.
    let plain = dir.path().join("plain");
    let o = run(&[
        "sweep",
        DATASET_DIR,
        "--max-tokens",
        "32000",
        "--out",
        plain.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let csv = std::fs::read_to_string(plain.join("configs.csv")).expect("configs.csv");
    assert!(csv.lines().next().expect("header").contains(",estimator,"));
    assert!(csv.lines().nth(1).expect("a row").contains(",bytes4,"));
}

// ---------------------------------------------------------------------------
// Against reality: the recorded prompt sizes of `../shared/data`.

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn calibrate_compares_every_estimator_on_real_sessions() {
    let data = crate::common::shared_data("");
    let dir = tempfile::tempdir().expect("temp dir");
    let cc = dir.path().join("cc");
    let o = run(&[
        "import",
        "claude-code",
        data.join("claude-code").to_str().expect("utf-8"),
        "--out",
        cc.to_str().expect("utf-8"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&[
        "calibrate",
        cc.to_str().expect("utf-8"),
        "--estimator",
        "all",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let fits = v["estimators"]["fits"].as_array().expect("fits");
    assert_eq!(fits.len(), Estimator::ALL.len());
    for f in fits {
        let (before, after) = (&f["before"], &f["after"]);
        eprintln!(
            "claude-code {:>8}: median {:.1}% -> {:.1}%, p95 {:.1}% -> {:.1}%, worst {:.1}% -> {:.1}% ({} requests, {:.0} ms/MB)",
            f["estimator"].as_str().unwrap_or("?"),
            before["median"].as_f64().unwrap_or(0.0) * 100.0,
            after["median"].as_f64().unwrap_or(0.0) * 100.0,
            before["p95"].as_f64().unwrap_or(0.0) * 100.0,
            after["p95"].as_f64().unwrap_or(0.0) * 100.0,
            f["worst_before"].as_f64().unwrap_or(0.0) * 100.0,
            f["worst_after"].as_f64().unwrap_or(0.0) * 100.0,
            f["requests"],
            f["ms_per_mb"].as_f64().unwrap_or(0.0),
        );
        // Every estimator sees the same requests; the fit must help.
        assert_eq!(f["requests"], fits[0]["requests"]);
        assert!(after["median"].as_f64() < before["median"].as_f64(), "{f}");
    }
    let verdicts = v["estimators"]["verdicts"].as_array().expect("verdicts");
    assert_eq!(verdicts.len(), 1);
    eprintln!("{}", verdicts[0]);
    assert!(verdicts[0].as_str().expect("text").contains("closest is"));
}
