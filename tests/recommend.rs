//! `recommend`: the paired bootstrap against a reference computation, the
//! verdict on sessions made to have a known answer, smith's own rule for
//! what it accepts, and the command on the bundled and the real sessions.

use std::path::Path;

use serde_json::Value;
use smith_calibrate::engine::Config;
use smith_calibrate::policy::Setup;
use smith_calibrate::recommend::smith_config;
use smith_calibrate::recommend::{decide, MaxLoss, Settings, Verdict, DEFAULT_OBJECTIVE};
use smith_calibrate::sweep::aggregate::{summarize_values_with, ConfigSummary, PerSession};
use smith_calibrate::sweep::bootstrap::{self, resample_stream, Bootstrap};
use smith_calibrate::sweep::figures::{Metric, LOSS_MEASURE, N};

use crate::common::{self, *};

const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sessions");

/// The reference: for each resample, draw the session indices from the
/// resample's stream and add up the drawn sessions' changes and their
/// baseline; take the change as a share of that baseline when the
/// baseline's total is positive (else the plain sum); sort; take the 2.5th
/// and 97.5th percentiles by linear interpolation between ranks, times
/// the whole sample's baseline total.
fn reference(base: &[f64], changes: &[f64], draws: &Bootstrap) -> (f64, f64) {
    let n = changes.len();
    let total: f64 = base.iter().sum();
    let mut values: Vec<f64> = (0..draws.resamples)
        .map(|b| {
            let mut rng = resample_stream(draws.seed, b);
            let (mut change, mut baseline) = (0.0, 0.0);
            for _ in 0..n {
                let s = rng.below(n as u64) as usize;
                change += changes[s];
                baseline += base[s];
            }
            if total > 0.0 {
                total * (change / baseline)
            } else {
                change
            }
        })
        .collect();
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |p: f64| {
        let rank = p * (values.len() - 1) as f64;
        let lo = rank.floor() as usize;
        let hi = rank.ceil() as usize;
        values[lo] + (values[hi] - values[lo]) * (rank - lo as f64)
    };
    (at(0.025), at(0.975))
}

#[test]
fn the_bootstrap_agrees_with_a_reference_computation_on_a_fixed_seed() {
    let draws = Bootstrap {
        seed: 99,
        resamples: 4000,
    };
    // Three configs over 37 sessions, with changes of both signs and
    // sizes, one session far from the rest; the first figure's baseline is
    // a price in every session (a share of it is resampled), the second's
    // is 0 everywhere (the plain sum is).
    let baseline: Vec<[f64; 2]> = (0..37)
        .map(|s| [3.0 + (s % 7) as f64 + if s == 4 { 12.0 } else { 0.0 }, 0.0])
        .collect();
    let changes: Vec<Vec<[f64; 2]>> = (0..3)
        .map(|c| {
            (0..37)
                .map(|s| {
                    let x = ((s * 13 + c * 5) % 17) as f64 - 9.0 + if s == 4 { 40.0 } else { 0.0 };
                    [x * 0.25, ((s + c) % 4) as f64]
                })
                .collect()
        })
        .collect();
    let got = bootstrap::intervals(&baseline, &changes, &draws);
    for (c, col) in changes.iter().enumerate() {
        let [obj, loss] = got[c].expect("an interval");
        for (f, iv) in [(0, obj), (1, loss)] {
            let base: Vec<f64> = baseline.iter().map(|b| b[f]).collect();
            let values: Vec<f64> = col.iter().map(|d| d[f]).collect();
            let (lo, hi) = reference(&base, &values, &draws);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + b.abs());
            assert!(
                close(iv.lo, lo) && close(iv.hi, hi),
                "config {c} figure {f}: [{}, {}] against the reference [{lo}, {hi}]",
                iv.lo,
                iv.hi
            );
            assert!(iv.lo < iv.hi, "a spread of changes has a spread interval");
        }
    }
}

/// A config of smith's at these thresholds.
fn at(compact_at: f64, compact_to: f64) -> Setup {
    Setup::smith(Config {
        compact_at,
        compact_to,
        ..Config::default()
    })
}

/// Summaries and per-session changes of `setups` over `sessions`, each
/// (session, config) priced by `price` and losing `loss`, through the
/// aggregation every sweep uses.
fn summarize(
    setups: &[Setup],
    sessions: usize,
    price: &(dyn Fn(usize, usize) -> f64 + Sync),
    loss: &(dyn Fn(usize, usize) -> f64 + Sync),
) -> (Vec<ConfigSummary>, PerSession) {
    let value = |s: usize, c: usize| {
        let mut v = [0.0; N];
        v[DEFAULT_OBJECTIVE.index()] = price(s, c);
        v[LOSS_MEASURE.index()] = loss(s, c);
        v
    };
    summarize_values_with(
        setups,
        sessions,
        &value,
        DEFAULT_OBJECTIVE,
        &Bootstrap {
            seed: 5,
            resamples: 2000,
        },
    )
}

fn settings() -> Settings {
    Settings {
        objective: DEFAULT_OBJECTIVE,
        max_loss: MaxLoss::Baseline,
        draws: Bootstrap {
            seed: 5,
            resamples: 2000,
        },
        folds: 5,
        top: 10,
    }
}

/// A session's price: sizes spread over a factor of ten, as real ones are.
fn size(s: usize) -> f64 {
    1.0 + ((s * 37) % 10) as f64
}

#[test]
fn a_config_truly_cheaper_at_no_loss_is_found_and_holds_out_of_sample() {
    let setups = [at(0.8, 0.5), at(0.7, 0.4), at(0.9, 0.3), at(0.85, 0.45)];
    // Config 3 is 8% cheaper in every session (with noise) and loses what
    // the baseline loses; config 1 is as dear as the baseline; config 2 is
    // cheaper still but loses more in every session.
    let price = |s: usize, c: usize| {
        let noise = ((s * 7 + c * 3) % 5) as f64 * 0.004;
        size(s)
            * match c {
                3 => 0.92 + noise,
                2 => 0.80,
                _ => 1.0,
            }
    };
    let loss = |s: usize, c: usize| (s % 3) as f64 + if c == 2 { 2.0 } else { 0.0 };
    let (mut summaries, per) = summarize(&setups, 40, &price, &loss);
    let v = decide(&mut summaries, &per, &settings());
    assert!(v.change, "{}", v.sentence);
    let chosen = v.chosen.as_ref().unwrap();
    assert_eq!((chosen.compact_at, chosen.compact_to), (0.85, 0.45));
    assert!(chosen.objective_interval_pct.unwrap().hi < 0.0);
    let oos = v.out_of_sample.as_ref().unwrap();
    assert!(oos.saving > 0.0 && oos.loss_change == 0.0, "{oos:?}");
    // Every fold chose the cheaper config too.
    assert!(oos
        .folds
        .iter()
        .all(|f| f.chosen.as_deref() == Some(chosen.label.as_str())));
    // The dearer-loss config was cheaper but refused by the loss rule.
    let lossy = v.evidence.iter().find(|e| e.config == 2).unwrap();
    assert!(!lossy.loss_ok && !lossy.chosen);
    assert!(v
        .sentence
        .starts_with("Set compact_at = 0.85 and compact_to = 0.45"));
    let back = smith_config::parse(Path::new("snippet.toml"), &v.snippet);
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    assert_eq!(
        (back.config.compact_at, back.config.compact_to),
        (0.85, 0.45)
    );
    // Without the loss rule the dearer-loss config wins.
    let any = Settings {
        max_loss: MaxLoss::Any,
        ..settings()
    };
    let (mut summaries, per) = summarize(&setups, 40, &price, &loss);
    let v = decide(&mut summaries, &per, &any);
    assert_eq!(v.chosen.unwrap().config, 2);
}

#[test]
fn when_every_config_is_equal_the_verdict_is_keep() {
    let setups = [at(0.8, 0.5), at(0.7, 0.4), at(0.9, 0.3)];
    let (mut summaries, per) = summarize(&setups, 30, &|s, _| size(s), &|s, _| (s % 2) as f64);
    let v = decide(&mut summaries, &per, &settings());
    assert!(!v.change);
    assert!(
        v.sentence.starts_with("Keep your configuration"),
        "{}",
        v.sentence
    );
    assert!(v
        .reason
        .as_deref()
        .unwrap()
        .contains("beyond its 95% interval"));
    assert_eq!(v.in_sample_saving, 0.0);
    assert_eq!(v.out_of_sample.as_ref().unwrap().saving, 0.0);
    assert_eq!(v.headroom.as_ref().unwrap().headroom, 0.0);
    // The snippet is the baseline's own.
    assert_eq!(v.snippet, "[context]\ncompact_at = 0.8\ncompact_to = 0.5\n");
}

#[test]
fn too_few_sessions_keep_the_configuration_however_clear_the_difference() {
    let setups = [at(0.8, 0.5), at(0.9, 0.3)];
    let n = smith_calibrate::recommend::MIN_SESSIONS - 1;
    let (mut summaries, per) = summarize(
        &setups,
        n,
        &|s, c| size(s) * if c == 1 { 0.5 } else { 1.0 },
        &|_, _| 0.0,
    );
    let v = decide(&mut summaries, &per, &settings());
    assert!(!v.change);
    assert!(v.reason.unwrap().contains("too few"));
    assert!(v.out_of_sample.is_none());
}

#[test]
fn a_config_smith_would_reject_is_never_recommended() {
    // Far cheaper, but compact_at 1.0 and compact_to 0 are outside what
    // smith's config accepts; 0.9/0.3 is a little cheaper and accepted.
    let setups = [at(0.8, 0.5), at(1.0, 0.5), at(0.9, 0.0), at(0.9, 0.3)];
    let price = |s: usize, c: usize| {
        size(s)
            * match c {
                1 | 2 => 0.5,
                3 => 0.9,
                _ => 1.0,
            }
    };
    let (mut summaries, per) = summarize(&setups, 30, &price, &|_, _| 0.0);
    let v = decide(&mut summaries, &per, &settings());
    let chosen = v.chosen.as_ref().expect("the accepted cheaper config");
    assert_eq!(chosen.config, 3);
    for e in &v.evidence {
        assert_eq!(
            e.accepted,
            smith_config::accepts(e.max_tokens as i64, e.compact_at, e.compact_to)
        );
    }
    assert_eq!(v.accepted, 2);
    // The headroom too is over accepted configs only.
    assert_eq!(
        v.headroom.unwrap().best_single,
        summaries[3].label,
        "best single config"
    );
    // Only rejected configs cheaper: keep.
    let setups = [at(0.8, 0.5), at(1.0, 0.5), at(0.9, 0.0)];
    let (mut summaries, per) = summarize(&setups, 30, &price, &|_, _| 0.0);
    let v = decide(&mut summaries, &per, &settings());
    assert!(!v.change, "{}", v.sentence);
}

/// `recommend` as a user runs it, its verdict read from `--json`.
fn recommend_json(args: &[&str]) -> (Verdict, Value) {
    let mut all = vec!["recommend", "--json", "--resamples", "2000"];
    all.extend_from_slice(args);
    let text = ok(run(&all));
    let value: Value = serde_json::from_str(&text).expect("--json prints JSON");
    let verdict: Verdict = serde_json::from_value(value.clone()).expect("a verdict");
    (verdict, value)
}

/// What smith would do with `snippet`: its thresholds, if it accepts them.
fn smith_reads(snippet: &str) -> Config {
    // Valid TOML, with one [context] table.
    let table: toml::Table = snippet.parse().expect("the snippet is TOML");
    assert!(table["context"].is_table());
    let read = smith_config::parse(Path::new("config.toml"), snippet);
    assert!(read.warnings.is_empty(), "smith warns: {:?}", read.warnings);
    read.config
}

#[test]
fn on_the_bundled_sessions_the_verdict_has_intervals_folds_headroom_and_a_snippet() {
    let (v, json) = recommend_json(&[SESSIONS]);
    eprintln!("datasets/sessions: {}", v.sentence);
    assert_eq!(v.sessions, 12);
    assert_eq!(v.baseline.label, "120k 0.80/0.50 cap512 w3");
    assert!(v.configs > 50, "the default grid: {}", v.configs);
    assert!(v.evidence.iter().all(|e| e.accepted));
    assert!(v
        .evidence
        .iter()
        .skip(1)
        .any(|e| e.objective_interval_pct.is_some()));
    assert!(v.out_of_sample.is_some() && v.headroom.is_some());
    let config = smith_reads(&v.snippet);
    let expected = v.chosen.as_ref().unwrap_or(&v.baseline);
    assert_eq!(
        (config.compact_at, config.compact_to),
        (expected.compact_at, expected.compact_to)
    );
    for key in [
        "sentence",
        "evidence",
        "out_of_sample",
        "headroom",
        "snippet",
    ] {
        assert!(json.get(key).is_some(), "--json has {key}");
    }
    // The same seed gives the same verdict; the text says the same.
    let (again, _) = recommend_json(&[SESSIONS]);
    assert_eq!(again, v);
    let text = ok(run(&["recommend", SESSIONS, "--resamples", "2000"]));
    assert!(text.starts_with(&v.sentence), "{text}");
    assert!(text.contains("saving out of sample"));
    assert!(text.contains(&v.snippet));
}

#[test]
fn the_baseline_is_the_users_context_as_smith_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("config.toml"),
        "[context]\nmax_tokens = 64000\ncompact_at = 0.85\ncompact_to = 0.4\n",
    )
    .unwrap();
    let o = output(bin().env("SMITH_HOME", tmp.path()).args([
        "recommend",
        SESSIONS,
        "--json",
        "--resamples",
        "500",
        "--compact-at",
        "0.7,0.9",
        "--compact-to",
        "0.3",
    ]));
    let v: Verdict = serde_json::from_str(&ok(o)).unwrap();
    assert_eq!(
        (
            v.baseline.max_tokens,
            v.baseline.compact_at,
            v.baseline.compact_to
        ),
        (64_000, 0.85, 0.4)
    );
    // The grid runs under the user's window: two configs and the baseline.
    assert_eq!(v.configs, 3);
    assert!(v.evidence.iter().all(|e| e.max_tokens == 64_000));
    // A config smith would reject: its thresholds fall back, its window stays.
    std::fs::write(
        tmp.path().join("config.toml"),
        "[context]\nmax_tokens = 64000\ncompact_at = 0.4\ncompact_to = 0.6\n",
    )
    .unwrap();
    let o = output(bin().env("SMITH_HOME", tmp.path()).args([
        "recommend",
        SESSIONS,
        "--json",
        "--resamples",
        "500",
        "--compact-at",
        "0.9",
    ]));
    assert!(
        stderr(&o).contains("smith uses its default thresholds"),
        "{}",
        stderr(&o)
    );
    let v: Verdict = serde_json::from_str(&ok(o)).unwrap();
    assert_eq!(
        (
            v.baseline.max_tokens,
            v.baseline.compact_at,
            v.baseline.compact_to
        ),
        (64_000, 0.8, 0.5)
    );
}

#[test]
fn window_and_cap_are_swept_only_for_smiths_maintainers() {
    let o = run(&["recommend", SESSIONS, "--window", "2,3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--for-maintainers"), "{}", stderr(&o));
    let (v, _) = recommend_json(&[
        SESSIONS,
        "--for-maintainers",
        "--window",
        "2,3",
        "--compact-at",
        "0.9",
        "--compact-to",
        "0.3",
    ]);
    let note = v.maintainers_note.expect("a note for the maintainers");
    assert!(note.contains("smith's maintainers"), "{note}");
    // What config.toml cannot say stays out of the snippet.
    assert!(!v.snippet.contains("window"));
    smith_reads(&v.snippet);
}

#[test]
fn rejected_thresholds_in_the_grid_are_never_recommended_by_the_command() {
    let grid = [
        SESSIONS,
        "--compact-at",
        "0.6,0.9,1.0",
        "--compact-to",
        "0,0.2,0.3",
        "--max-loss",
        "any",
    ];
    // Refused unless asked for, naming smith's rule.
    let mut plain = vec!["recommend", "--resamples", "200"];
    plain.extend_from_slice(&grid);
    let refused = run(&plain);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("smith runs only 0 < compact-to < compact-at < 1"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let mut beyond = grid.to_vec();
    beyond.push("--beyond-smith");
    let (v, _) = recommend_json(&beyond);
    assert!(v.accepted < v.configs);
    if let Some(c) = &v.chosen {
        assert!(c.accepted);
    }
    let config = smith_reads(&v.snippet);
    assert!(smith_config::accepts_config(&config));
}

#[test]
fn the_report_opens_with_the_verdict_and_the_tables_carry_the_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let d = dir.to_str().unwrap();
    ok(run(&[
        "recommend",
        SESSIONS,
        "--resamples",
        "500",
        "--compact-at",
        "0.7,0.9",
        "--compact-to",
        "0.3,0.5",
        "--report",
        d,
    ]));
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let verdict = html
        .find("id=\"recommendation\"")
        .expect("a verdict section");
    let swept = html.find("id=\"swept\"").unwrap();
    assert!(verdict < swept, "the verdict comes first");
    assert!(html.contains("95% CI"));
    let configs = read_csv(&dir.join("configs.csv"));
    for column in smith_calibrate::sweep::tables::INTERVAL_COLUMNS {
        let name = column.name();
        assert!(configs.column(name).is_ok(), "configs.csv has {name}");
    }
    let lo = column_f64(&configs, "objective_delta_lo");
    let hi = column_f64(&configs, "objective_delta_hi");
    assert_eq!((lo[0], hi[0]), (0.0, 0.0), "the baseline against itself");
    assert!(lo.iter().zip(&hi).all(|(l, h)| l <= h));
    let v: Verdict =
        serde_json::from_str(&std::fs::read_to_string(dir.join("verdict.json")).unwrap()).unwrap();
    assert_eq!(v.configs, configs.height());
}

#[test]
fn objective_and_loss_limit_are_checked() {
    let o = run(&["recommend", SESSIONS, "--objective", "no_such_figure"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["recommend", SESSIONS, "--max-loss", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("baseline, any"), "{}", stderr(&o));
    let (v, _) = recommend_json(&[SESSIONS, "--objective", "price", "--max-loss", "5%"]);
    assert_eq!(v.objective, Metric::Price);
    assert_eq!(v.max_loss, "5%");
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn on_the_real_claude_code_logs_the_verdict_is_one_smith_accepts() {
    let data = common::shared_data("claude-code");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("imported");
    ok(run(&[
        "import",
        "claude-code",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    for extra in [
        &[][..],
        &[
            "--max-tokens",
            "200000",
            "--ratio",
            "1.515",
            "--overhead",
            "17165",
        ][..],
    ] {
        let mut args = vec![out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (v, _) = recommend_json(&args);
        let oos = v.out_of_sample.as_ref().expect("enough sessions for folds");
        eprintln!(
            "claude-code {extra:?}: {} sessions; in sample {:?}%, out of sample {:?}%, headroom {:?}%\n  {}",
            v.sessions,
            v.in_sample_saving_pct,
            oos.saving_pct,
            v.headroom.as_ref().and_then(|h| h.headroom_pct),
            v.sentence
        );
        assert!(v.sessions >= smith_calibrate::recommend::MIN_SESSIONS);
        let config = smith_reads(&v.snippet);
        assert!(smith_config::accepts_config(&config));
        if v.change {
            assert!(oos.saving > 0.0);
            assert!(
                v.chosen
                    .as_ref()
                    .unwrap()
                    .objective_interval_pct
                    .unwrap()
                    .hi
                    < 0.0
            );
        }
    }
}

#[test]
fn the_help_states_the_grid_recommend_sweeps() {
    let help = ok(run(&["recommend", "--help"]));
    use smith_calibrate::commands::recommend::{DEFAULT_COMPACT_AT, DEFAULT_COMPACT_TO};
    for (flag, default) in [
        ("--compact-at", DEFAULT_COMPACT_AT),
        ("--compact-to", DEFAULT_COMPACT_TO),
        ("--max-tokens", "your max_tokens"),
    ] {
        let at = help.find(&format!("{flag} <LIST>")).expect(flag);
        let text = &help[at..];
        let text = &text[..text.find("\n\n").unwrap_or(text.len())];
        // clap wraps the help to the terminal: compare the words.
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(&format!("[default: {default}")), "{text}");
    }
}
