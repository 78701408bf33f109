//! The sweep and replay under the per-request cost model (issue 16 point
//! 2 and 4): smith's own sessions, which have no timestamps, price exactly
//! as the flat model did; imported sessions get their model's prices, the
//! records' lifetimes and the cold-cache compaction knob.

use std::path::{Path, PathBuf};

use smith_calibrate::cost::Prices;
use smith_calibrate::policy::{Knobs, Policy, Setup};
use smith_calibrate::sweep::figures::{self, Metric};
use smith_calibrate::sweep::{grid, run, GridSpec, Knob, Options};

use super::common;
use common::{assert_text, run_text};

fn datasets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets")
}

fn quiet() -> Options {
    Options::silent(Some(2))
}

/// A smith grid with smith's defaults first, as sweeps build it.
fn smith_grid() -> Vec<Setup> {
    let mut spec = GridSpec::default();
    spec.set(Knob::CompactAt, "0.6,0.8").unwrap();
    spec.set(Knob::MaxTokens, "20000,120000").unwrap();
    grid::build(&spec, 100)
        .unwrap()
        .configs
        .into_iter()
        .map(Setup::smith)
        .collect()
}

/// The bundled smith sessions copied into `dir` with a `session.json` that
/// names neither provider nor model, as smith's oldest sessions do.
fn nameless_copies(dir: &Path) -> Vec<smith_calibrate::transcript::SessionRef> {
    for e in std::fs::read_dir(datasets().join("sessions")).unwrap() {
        let from = e.unwrap().path();
        if !from.join("transcript.jsonl").is_file() {
            continue;
        }
        let to = dir.join(from.file_name().unwrap());
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(from.join("transcript.jsonl"), to.join("transcript.jsonl")).unwrap();
        let mut meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(from.join("session.json")).unwrap()).unwrap();
        let obj = meta.as_object_mut().unwrap();
        obj.remove("provider");
        obj.remove("model");
        std::fs::write(to.join("session.json"), meta.to_string()).unwrap();
    }
    smith_calibrate::transcript::resolve_all(&[dir.display().to_string()]).unwrap()
}

#[test]
fn smith_sessions_naming_no_model_price_to_the_bit_as_the_flat_model() {
    let tmp = tempfile::tempdir().unwrap();
    let refs = nameless_copies(tmp.path());
    assert!(refs.len() >= 5, "the bundled datasets are there");
    let setups = smith_grid();
    let price = Metric::Price.index();
    let uncached = Metric::PriceUncached.index();
    let total = Metric::PriceTotal.index();
    let ttl = Metric::TtlApplied.index();
    let expired = Metric::ExpiredRequests.index();
    let given: Prices = "5,6.25,0.5".parse().unwrap();
    let mut priced = smith_calibrate::cost::session::Settings::default();
    priced.prices = Some(given);
    for (settings, flat) in [(Default::default(), Prices::default()), (priced, given)] {
        let sweep = run::run_priced(
            &refs,
            &setups,
            &quiet(),
            Some(&settings),
            Vec::new(),
            &|_, _, _| Ok(()),
        )
        .unwrap();
        let mut summarized = 0;
        for row in &sweep.rows {
            let v = figures::values(&row.facts, &flat);
            let old = flat.cost(&row.facts);
            assert!(row.facts.priced.is_some(), "the sweep meters every replay");
            // To the bit: the flat model's own arithmetic on the sums.
            assert_eq!(v[price].to_bits(), old.price.to_bits(), "{settings:?}");
            assert_eq!(v[uncached].to_bits(), old.price_uncached.to_bits());
            assert_eq!(v[ttl], 0.0, "no timestamps: expiry not applied");
            assert_eq!(v[expired], 0.0);
            // Output and the summarizer's requests come on top.
            assert!(v[total] > v[price], "{} vs {}", v[total], v[price]);
            summarized += row.facts.summaries;
        }
        assert!(
            summarized > 0,
            "some replay summarised: the summarizer is priced"
        );
    }
}

#[test]
fn the_sweep_note_says_expiry_was_not_applied_to_smith_sessions() {
    let d = datasets().display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data").display().to_string();
    let report = tmp.path().join("report");
    let (out, err, code) = run_text(&[
        "sweep",
        &d,
        "--compact-at",
        "0.7",
        "--out",
        &data,
        "--report",
        &report.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let said = "expiry was NOT applied: no session has timestamps";
    assert!(out.contains(said), "{out}");
    assert!(out.contains("price_total adds them"), "{out}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(&data).join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["cost_model"]["sessions_with_lifetime"], 0.0);
    assert!(summary["cost_model"]["note"]
        .as_str()
        .unwrap()
        .contains(said));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains(said), "the report carries the note");
}

#[test]
fn cold_compact_on_smith_sessions_without_times_leaves_the_replay_byte_for_byte() {
    let d = datasets().display().to_string();
    let refs = smith_calibrate::transcript::resolve_all(&[d]).unwrap();
    let t = refs[0].transcript.display().to_string();
    for k in ["0", "5", "30"] {
        let (plain, _, c1) = run_text(&[
            "replay",
            &t,
            "--max-tokens",
            "20000",
            "--emit-history-at",
            k,
        ]);
        let (cold, err, c2) = run_text(&[
            "replay",
            &t,
            "--max-tokens",
            "20000",
            "--cold-compact-at",
            "0.3",
            "--emit-history-at",
            k,
        ]);
        assert_eq!(c1, c2, "{err}");
        assert_eq!(plain, cold, "request {k}");
        if c1 == Some(0) {
            assert!(!plain.is_empty());
        }
    }
    let (_, err, _) = run_text(&["replay", &t, "--cold-compact-at", "0.3"]);
    assert_text(&err, "note: --cold-compact-at changes nothing here: the session's records give no times, so no request is known to find the cache cold\n");
}

#[test]
fn a_sweep_varies_cold_compact_at_with_off_first_and_labels_it() {
    let mut spec = smith_calibrate::sweep::plan::PolicySpec::default();
    spec.set(
        smith_calibrate::policy::PolicyKnob::ColdCompactAt,
        "0.55,0.65",
    )
    .unwrap();
    let g = grid::build(&GridSpec::default(), 100).unwrap();
    let plan = smith_calibrate::sweep::plan::build(
        &g,
        &spec,
        smith_calibrate::sweep::plan::BaselineKind::Smith,
        100,
    )
    .unwrap();
    let labels: Vec<String> = plan.setups.iter().map(Setup::label).collect();
    assert_eq!(plan.setups.len(), 3, "{labels:?}");
    assert_eq!(
        plan.setups[0],
        Setup::smith(Default::default()),
        "baseline: off"
    );
    assert!(labels[1].ends_with("cold0.55"), "{labels:?}");
    assert!(labels[2].ends_with("cold0.65"), "{labels:?}");
    assert_eq!(
        plan.setups[1].knobs,
        Knobs {
            cold_compact_at: 0.55,
            ..Knobs::default()
        }
    );
    assert_eq!(plan.setups[1].policy, Policy::Smith);
    let mut bad = smith_calibrate::sweep::plan::PolicySpec::default();
    let e = bad
        .set(smith_calibrate::policy::PolicyKnob::ColdCompactAt, "1.5")
        .unwrap_err()
        .to_string();
    assert!(e.contains("--cold-compact-at"), "{e}");
}

/// Reads a CSV written by the sweep into header → column.
fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            // The labels hold no comma or quote in these sweeps.
            head.iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn on_the_real_claude_code_logs_the_sweep_prices_per_model_with_the_records_lifetimes() {
    // spotter's sessions, mostly Opus, whose cold-cache figure was measured
    // outside the sweep.
    let dir = common::shared_data("claude-code/spotter");
    let tmp = tempfile::tempdir().unwrap();
    let imported = tmp.path().join("cc");
    let (_, err, code) = run_text(&[
        "import",
        "claude-code",
        &dir.display().to_string(),
        "--out",
        &imported.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let im = imported.display().to_string();
    let out = tmp.path().join("out");
    let (table, err, code) = run_text(&[
        "sweep",
        &im,
        "--ratio",
        "1.515",
        "--overhead",
        "17165",
        "--cold-compact-at",
        "0.55",
        "--rank-by",
        "price_total",
        // Compacting while the cache is cold against smith's own config,
        // not against what the agent did.
        "--baseline",
        "defaults",
        "--max-tokens",
        "120000",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    println!("{table}");
    let rows = csv_rows(&out.join("configs.csv"));
    let f = |r: &std::collections::HashMap<String, String>, k: &str| -> f64 {
        r.get(k)
            .unwrap_or_else(|| panic!("no {k}"))
            .parse()
            .unwrap()
    };
    let base = rows
        .iter()
        .find(|r| f(r, "cold_compact_at") == 0.0)
        .unwrap();
    let cold = rows
        .iter()
        .find(|r| f(r, "cold_compact_at") == 0.55)
        .unwrap();
    let change = f(cold, "price_total_delta_pct");
    println!(
        "baseline: price ${:.2}, price_total ${:.2} (output ${:.2}, summarizer ${:.2}), lifetime applied to {} sessions, {} expired requests; cold-compact-at 0.55: price_total {change:+.2}%",
        f(base, "price"),
        f(base, "price_total"),
        f(base, "price_output"),
        f(base, "price_summarizer"),
        f(base, "ttl_applied"),
        f(base, "expired_requests"),
    );
    // The records' times reach the sweep, and compacting while the cache is
    // cold pays a little, as measured outside the sweep (-0.86% there).
    assert!(f(base, "ttl_applied") > 0.0);
    assert!(f(base, "expired_requests") > 0.0);
    assert!((-1.2..-0.5).contains(&change), "{change}");
    // Mostly Opus at $5 input: above the flat Sonnet price of the sums.
    let flat_sonnet = (f(base, "cache_write") * 3.75 + f(base, "cache_read") * 0.3) / 1e6;
    assert!(
        f(base, "price") > flat_sonnet,
        "{} vs {flat_sonnet}",
        f(base, "price")
    );
    assert!(table.contains("expiry applied to"), "{table}");

    // --price overrides every session's model: Sonnet's prices for these
    // mostly-Opus sessions come out cheaper.
    let out3 = tmp.path().join("sonnet");
    let (_, err, code) = run_text(&[
        "sweep",
        &im,
        "--ratio",
        "1.515",
        "--overhead",
        "17165",
        "--price",
        "3,3.75,0.3",
        "--baseline",
        "defaults",
        "--max-tokens",
        "120000",
        "--out",
        &out3.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let sonnet = csv_rows(&out3.join("configs.csv"));
    println!(
        "price per model ${:.2}, with --price 3,3.75,0.3 ${:.2}",
        f(base, "price"),
        f(&sonnet[0], "price")
    );
    assert!(f(&sonnet[0], "price") < 0.8 * f(base, "price"));

    // No lifetime: nothing expires, and the price is lower or equal.
    let out2 = tmp.path().join("none");
    let (_, err, code) = run_text(&[
        "sweep",
        &im,
        "--ratio",
        "1.515",
        "--overhead",
        "17165",
        "--cache-ttl",
        "none",
        "--out",
        &out2.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let none = csv_rows(&out2.join("configs.csv"));
    assert_eq!(f(&none[0], "expired_requests"), 0.0);
    assert_eq!(f(&none[0], "ttl_applied"), 0.0);
    assert!(f(&none[0], "price") <= f(base, "price"));

    // Off is smith's replay to the byte, on an imported session with times.
    let refs = smith_calibrate::transcript::resolve_all(std::slice::from_ref(&im)).unwrap();
    let t = refs[0].transcript.display().to_string();
    let (a, _, _) = run_text(&["replay", &t, "--trace"]);
    let (b, _, _) = run_text(&["replay", &t, "--trace", "--cold-compact-at", "0"]);
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

/// `replay --json` and `replay --trace` of one session.
fn replayed(path: &Path) -> (serde_json::Value, Vec<serde_json::Value>) {
    let p = path.display().to_string();
    let (out, err, code) = run_text(&["replay", &p, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (trace, err, code) = run_text(&["replay", &p, "--trace"]);
    assert_eq!(code, Some(0), "{err}");
    let lines = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (json, lines)
}

/// The bundled session whose `session.json` names `provider`.
fn bundled_of(provider: &str) -> PathBuf {
    std::fs::read_dir(datasets().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|d| {
            std::fs::read(d.join("session.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| v["provider"] == provider)
        })
        .unwrap_or_else(|| panic!("a bundled session of {provider}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn a_smith_session_naming_openai_is_priced_at_openais_row_with_its_automatic_caching() {
    let dir = bundled_of("openai");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
    let model = meta["model"].as_str().unwrap();
    assert!(model.starts_with("gpt-"), "{model}");
    let row = smith_calibrate::cost::table::model_price(model).unwrap();
    assert_eq!(row.provider, "openai");
    let (json, trace) = replayed(&dir);
    // Request by request: nothing cached below the minimum prefix, the
    // prefix served in whole 128-token steps, the rest at the input price
    // (no write premium), cached input at the model's discount.
    let (mut want, mut stepped) = (0.0, 0);
    for r in &trace {
        let after = r["after"].as_i64().unwrap();
        let read = r["cache_read"].as_i64().unwrap();
        let write = r["cache_write"].as_i64().unwrap();
        if after < row.min_cacheable as i64 {
            want += after as f64 * row.input;
            continue;
        }
        let served = read / 128 * 128;
        stepped += i64::from(served != read);
        want += served as f64 * row.cache_read + (write + read - served) as f64 * row.input;
    }
    want /= 1e6;
    assert!(stepped > 0, "some prefix is not a whole number of steps");
    let price = json["cost"]["price"].as_f64().unwrap();
    assert!(close(price, want), "{price} vs {want}");
    // Not Sonnet's default row, which the session was priced at before.
    let sonnet = smith_calibrate::cost::Prices::default();
    let (read, write) = (
        json["cache_read"].as_i64().unwrap(),
        json["cache_write"].as_i64().unwrap(),
    );
    assert!(price < sonnet.cached(read, write) / 2.0, "{price}");
    let prices = json["prices"].as_str().unwrap();
    assert!(prices.contains(row.family), "{prices}");
    assert!(
        prices.contains("automatic caching from 1024 tokens in 128-token steps"),
        "{prices}"
    );
    assert!(prices.contains("billed by openai"), "{prices}");
}

#[test]
fn a_smith_session_on_ollama_is_free_and_says_so() {
    let (json, _) = replayed(&bundled_of("ollama"));
    let cost = &json["cost"];
    assert!(json["tokens_sent"].as_i64().unwrap() > 0);
    for k in ["price", "price_uncached", "price_output", "price_total"] {
        assert_eq!(cost[k].as_f64(), Some(0.0), "{k}: {cost}");
    }
    let prices = json["prices"].as_str().unwrap();
    assert!(
        prices.contains("Ollama") && prices.contains("free"),
        "{prices}"
    );
}

#[test]
fn a_smith_session_through_openrouter_pays_the_routed_models_input_for_every_token() {
    let dir = bundled_of("openrouter");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("session.json")).unwrap()).unwrap();
    let row = smith_calibrate::cost::table::model_price(meta["model"].as_str().unwrap()).unwrap();
    assert_eq!(row.provider, "anthropic", "the routed model's row");
    let (json, _) = replayed(&dir);
    // smith marks nothing for caching there: every prompt token is input.
    let sent = json["tokens_sent"].as_i64().unwrap();
    let price = json["cost"]["price"].as_f64().unwrap();
    assert!(close(price, sent as f64 * row.input / 1e6), "{price}");
    assert!(json["prices"].as_str().unwrap().contains("no caching"));
}

#[test]
fn a_smith_session_naming_a_model_in_no_table_is_not_priced() {
    let tmp = tempfile::tempdir().unwrap();
    let from = bundled_of("anthropic");
    let to = tmp.path().join("s");
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(from.join("transcript.jsonl"), to.join("transcript.jsonl")).unwrap();
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(from.join("session.json")).unwrap()).unwrap();
    meta["model"] = "claude-opus-9-1".into();
    std::fs::write(to.join("session.json"), meta.to_string()).unwrap();
    let p = to.display().to_string();
    let (out, err, code) = run_text(&["replay", &p, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        json["prices"]
            .as_str()
            .unwrap()
            .contains("claude-opus-9-1: in no price table, not priced"),
        "{}",
        json["prices"]
    );
    // Its tokens are counted, its dollars unknown: null, not 0 and not
    // another model's.
    assert!(json["cache_read"].as_i64().unwrap() > 0);
    for figure in ["price", "price_output", "price_total"] {
        assert!(json["cost"][figure].is_null(), "{figure}: {}", json["cost"]);
    }
    // With its rates given, it is priced at them.
    let (out, err, code) = run_text(&[
        "replay",
        &p,
        "--json",
        "--price",
        "claude-opus-9-1=4,5,0.4,20",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (read, write) = (
        json["cache_read"].as_i64().unwrap(),
        json["cache_write"].as_i64().unwrap(),
    );
    let price = json["cost"]["price"].as_f64().unwrap();
    // The replay's reads and writes at the given rates (a prompt under the
    // minimum cacheable prefix pays input, the same 4 as no discount here
    // would give a write: within a few percent).
    let given = (read as f64 * 0.4 + write as f64 * 5.0) / 1e6;
    assert!((price / given - 1.0).abs() < 0.05, "{price} vs {given}");
}

#[test]
fn the_sweep_header_names_the_prices_of_each_smith_session() {
    let d = datasets().join("sessions").display().to_string();
    let (out, err, code) = run_text(&["sweep", &d, "--compact-at", "0.7"]);
    assert_eq!(code, Some(0), "{err}");
    // The header up to the table: the sentence, then one model a line.
    let head: Vec<&str> = out.lines().take_while(|l| !l.starts_with('┌')).collect();
    assert!(
        head[0].contains("the provider and model each session.json names"),
        "{head:?}"
    );
    for want in [
        "local model (Ollama): free",
        "automatic caching from 1024 tokens in 128-token steps",
        "no caching: smith marks nothing for caching through OpenRouter",
        "Claude Haiku 4.5",
    ] {
        let lines = head[1..].iter().filter(|l| l.contains(want)).count();
        assert_eq!(lines, 1, "{want} on one line: {head:?}");
    }
    // No line names two models, and none holds more than one model's prices and caching.
    for line in &head[1..] {
        assert_eq!(line.matches("/M input").count(), 1, "{line}");
        assert!(line.chars().count() <= 200, "{line}");
    }
}
