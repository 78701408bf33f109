//! Token estimators (issue 13): bytes4 is smith's estimate to the byte, the
//! tokenizers count what their crates publish, and every estimator drives
//! the engine, the replay and the sweep.

use crate::common;
use crate::test_support::estimators::*;
use common::*;
use smith_calibrate::estimate::Estimator;

/// Digests of bytes4 outputs on `datasets/`, written by the binary before
/// estimators existed (commit a1e7b8d) with `tests/fixtures/make_bytes4_parity.py`.
const PARITY_FIXTURE: &str = "tests/fixtures/bytes4_parity.txt";

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
            // model's figures, one misfire kind, `resummarized`, the
            // prices it names and the engine its config ran (smith 0.4's,
            // the default) since: without them it is the bytes of then.
            let bytes = if what == "json" {
                let text =
                    String::from_utf8(without_refetch_figures(&o.stdout)).expect("JSON is UTF-8");
                assert!(prices.is_match(&text), "{a:?} names its prices");
                let engine = ",\n    \"engine\": \"0.4\"\n  }";
                assert!(text.contains(engine), "{a:?} names its engine");
                let text = text.replacen(engine, "\n  }", 1);
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
