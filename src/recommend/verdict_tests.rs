//! The paired bootstrap against a reference computation, the verdict on
//! sessions made to have a known answer, and smith's own rule for what it
//! accepts.

use std::path::Path;

use smith_calibrate::engine::Config;
use smith_calibrate::policy::Setup;
use smith_calibrate::recommend::smith_config;
use smith_calibrate::recommend::{decide, MaxLoss, Settings, DEFAULT_OBJECTIVE};
use smith_calibrate::sweep::aggregate::{summarize_values_with, ConfigSummary, PerSession};
use smith_calibrate::sweep::bootstrap::{self, resample_stream, Bootstrap};
use smith_calibrate::sweep::figures::{LOSS_MEASURE, N};

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
    let why = v.refused_because(lossy);
    assert!(
        why.starts_with("its change in still_needed (+")
            && why.ends_with("is outside --max-loss baseline"),
        "{why}"
    );
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
    // The best config it refused is one it weighed, and its interval of
    // the change is why.
    let refused = v.best_refused().unwrap();
    assert!(!refused.baseline && refused.accepted);
    assert_eq!(
        v.refused_because(refused),
        format!(
            "its {} is the baseline's in every resample (95% interval of the change =)",
            v.objective
        )
    );
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
