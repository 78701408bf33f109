//! The sweep's grid and aggregates: lists, ranges, TOML, impossible
//! combinations, the baseline, the limit, the labels, the rows against
//! per-session replays, the Pareto front.
#![cfg(feature = "full")]

use crate::test_support::sweep::*;
use crate::test_support::*;
use smith_calibrate::cost::PriceError;
use smith_calibrate::cost::Prices;
use smith_calibrate::engine::Config;
use smith_calibrate::replay::SessionFacts;
use smith_calibrate::sweep::aggregate::{stats, summarize, Delta};
use smith_calibrate::sweep::figures::Metric;
use smith_calibrate::sweep::grid::{self, parse_values, GridSpec, Knob};
use smith_calibrate::sweep::pareto;
use smith_calibrate::sweep::run::{Row, SessionInfo, Sweep};
use std::path::{Path, PathBuf};

/// A sweep built by hand: `per_config[c][s]` is session `s` under config `c`.
fn hand_sweep(configs: Vec<Config>, per_config: Vec<Vec<SessionFacts>>) -> Sweep {
    let n_sessions = per_config[0].len();
    let sessions = (0..n_sessions)
        .map(|s| SessionInfo {
            label: format!("s{s}"),
            path: PathBuf::from(format!("s{s}.jsonl")),
            bytes: 100,
            lines: 10,
            lines_skipped: 0,
            messages: 10,
        })
        .collect();
    let mut rows = Vec::new();
    for s in 0..n_sessions {
        for (c, col) in per_config.iter().enumerate() {
            rows.push(Row {
                session: s as u32,
                config: c as u32,
                facts: col[s].clone(),
            });
        }
    }
    Sweep {
        sessions,
        configs: smith(&configs),
        rows,
        unreadable: Vec::new(),
        elapsed: std::time::Duration::ZERO,
        threads: 1,
    }
}

// ------------------------------------------------------------------- grid

#[test]
fn grid_list_keeps_order_and_drops_repeats() {
    assert_eq!(
        parse_values(Knob::CompactAt, "0.7, 0.8,0.9,0.8").unwrap(),
        vec![0.7, 0.8, 0.9]
    );
    assert_eq!(
        parse_values(Knob::ResultCap, "2048,256,512").unwrap(),
        vec![2048.0, 256.0, 512.0]
    );
}

#[test]
fn grid_float_range_is_exact_at_every_step() {
    // Adding 0.05 four times to 0.4 gives 0.6000000000000001; the range
    // must give the literal 0.6 and include it.
    assert_eq!(
        parse_values(Knob::CompactTo, "0.4..0.6:0.05").unwrap(),
        vec![0.4, 0.45, 0.5, 0.55, 0.6]
    );
    assert_eq!(
        parse_values(Knob::CompactAt, "0.1..0.3:0.1").unwrap(),
        vec![0.1, 0.2, 0.3]
    );
    let many = parse_values(Knob::Ratio, "1..2:0.01").unwrap();
    assert_eq!(many.len(), 101);
    assert_eq!(many[37], 1.37);
    assert_eq!(*many.last().unwrap(), 2.0);
}

#[test]
fn grid_integer_range_steps_by_one_unless_told() {
    assert_eq!(
        parse_values(Knob::Window, "1..4").unwrap(),
        vec![1.0, 2.0, 3.0, 4.0]
    );
    assert_eq!(
        parse_values(Knob::MaxTokens, "64000..128000:32000,200000").unwrap(),
        vec![64000.0, 96000.0, 128000.0, 200000.0]
    );
}

#[test]
fn grid_rejects_values_a_knob_cannot_take() {
    let err = |k, t| parse_values(k, t).unwrap_err().to_string();
    let errors = [
        err(Knob::CompactAt, "0.4..0.6"),
        err(Knob::CompactAt, "0.4..0.6:0"),
        err(Knob::CompactAt, "0.6..0.4:0.1"),
        err(Knob::Window, "1.5"),
        err(Knob::ResultCap, "-1"),
        err(Knob::Ratio, "0"),
        err(Knob::MaxTokens, "0"),
        err(Knob::CompactTo, "abc"),
        err(Knob::CompactTo, "0.5,,0.6"),
        err(Knob::Window, "0..1000000000"),
    ];
    assert_fixture(&(errors.join("\n") + "\n"), "sweep/grid_errors.txt");
    let mut spec = GridSpec::default();
    assert!(spec
        .set(Knob::CompactTo, "x")
        .unwrap_err()
        .to_string()
        .starts_with("--compact-to: "));
}

#[test]
fn grid_toml_takes_flag_or_field_names_and_the_command_line_wins() {
    let text = r#"
compact-at = [0.7, 0.8, "0.9"]
compact_to = "0.4..0.5:0.05"
max-tokens = 64000
window_turns = [1, 3]
"#;
    let spec = GridSpec::from_toml(Path::new("g.toml"), text).unwrap();
    assert_eq!(spec.get(Knob::CompactAt).unwrap(), &[0.7, 0.8, 0.9]);
    assert_eq!(spec.get(Knob::CompactTo).unwrap(), &[0.4, 0.45, 0.5]);
    assert_eq!(spec.get(Knob::MaxTokens).unwrap(), &[64000.0]);
    assert_eq!(spec.get(Knob::Window).unwrap(), &[1.0, 3.0]);
    assert_eq!(spec.get(Knob::Ratio), None);
    let mut cli = GridSpec::default();
    cli.set(Knob::MaxTokens, "200000").unwrap();
    let merged = spec.overridden_by(&cli);
    assert_eq!(merged.get(Knob::MaxTokens).unwrap(), &[200000.0]);
    assert_eq!(merged.get(Knob::Window).unwrap(), &[1.0, 3.0]);
    assert_eq!(merged.product_len(), 3 * 3 * 2);

    let unknown = GridSpec::from_toml(Path::new("g.toml"), "compact_from = [0.5]")
        .unwrap_err()
        .to_string();
    assert_text(&unknown, "g.toml: unknown key `compact_from`; the keys are max-tokens, compact-at, compact-to, result-cap, window, overhead, ratio, summary-tokens, engine");
    let bad = GridSpec::from_toml(Path::new("g.toml"), "ratio = [true]")
        .unwrap_err()
        .to_string();
    assert_text(
        &bad,
        "g.toml: `ratio`: expected numbers or a string such as \"0.4..0.6:0.05\", found boolean",
    );
    let broken = GridSpec::from_toml(Path::new("g.toml"), "ratio = [")
        .unwrap_err()
        .to_string();
    assert_fixture(&broken, "sweep/toml_broken.txt");
}

#[test]
fn grid_leaves_out_targets_at_or_above_the_trigger_and_counts_them() {
    let mut spec = GridSpec::default();
    spec.set(Knob::CompactAt, "0.5,0.8").unwrap();
    spec.set(Knob::CompactTo, "0.5,0.6").unwrap();
    let g = grid::build(&spec, 100).unwrap();
    // (0.5, 0.5) and (0.5, 0.6) are impossible; (0.8, 0.5) is the baseline.
    assert_eq!(g.impossible, 2);
    assert_eq!(g.configs.len(), 2);
    assert_eq!(g.configs[0], Config::default());
    assert_eq!(
        (g.configs[1].compact_at, g.configs[1].compact_to),
        (0.8, 0.6)
    );
    assert!(g.configs.iter().all(|c| !grid::is_impossible(c)));
}

#[test]
fn grid_always_starts_with_the_baseline_even_outside_the_product() {
    let mut spec = GridSpec::default();
    spec.set(Knob::MaxTokens, "64000,200000").unwrap();
    spec.set(Knob::Window, "1,5").unwrap();
    let g = grid::build(&spec, 100).unwrap();
    assert_eq!(g.configs.len(), 5);
    assert_eq!(g.configs[0], Config::default());
    assert_eq!(
        g.configs
            .iter()
            .filter(|c| **c == Config::default())
            .count(),
        1
    );
    // First knob slowest: 64000 w1, 64000 w5, 200000 w1, 200000 w5.
    let order: Vec<(u64, usize)> = g.configs[1..]
        .iter()
        .map(|c| (c.max_tokens, c.window_turns))
        .collect();
    assert_eq!(
        order,
        vec![(64000, 1), (64000, 5), (200000, 1), (200000, 5)]
    );
    let empty = grid::build(&GridSpec::default(), 100).unwrap();
    assert_eq!(empty.configs, vec![Config::default()]);
}

#[test]
fn grid_above_the_limit_is_refused_before_it_is_built() {
    let mut spec = GridSpec::default();
    spec.set(Knob::CompactAt, "0.6..0.9:0.1").unwrap();
    spec.set(Knob::CompactTo, "0.2..0.5:0.1").unwrap();
    let err = grid::build(&spec, 10).unwrap_err();
    assert!(matches!(
        err,
        grid::SpecError::TooManyConfigs {
            total: Some(16),
            limit: 10,
            ..
        }
    ));
    let err = err.to_string();
    assert_text(&err, "the grid has 16 configs (4 compact-at × 4 compact-to), more than the limit of 10; use fewer values or larger steps, or raise --max-configs");
    assert!(grid::build(&spec, 16).is_ok());
}

#[test]
fn grid_labels_tell_close_fractions_apart() {
    let a = Config {
        compact_at: 0.825,
        ..Config::default()
    };
    let b = Config {
        compact_at: 0.83,
        ..Config::default()
    };
    assert_ne!(grid::label(&a), grid::label(&b));
    assert_eq!(grid::label(&Config::default()), Config::default().label());
}

// ------------------------------------------------------------- aggregates

#[test]
fn the_percentiles_interpolate_between_ranks() {
    let mut v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
    let s = stats(&mut v).unwrap();
    assert_eq!(s.mean, 5.5);
    assert_eq!(s.median, 5.5);
    assert!((s.p95 - 9.55).abs() < 1e-12, "{}", s.p95);
    let s = stats(&mut [3.0, 1.0, 2.0]).unwrap();
    assert_eq!((s.mean, s.median, s.p95), (2.0, 2.0, 2.9));
    assert_eq!(
        stats(&mut [7.0]).unwrap(),
        smith_calibrate::sweep::aggregate::Stats {
            mean: 7.0,
            median: 7.0,
            p95: 7.0
        }
    );
    assert!(stats(&mut []).is_none());
}

#[test]
fn deltas_against_the_baseline_in_percent_and_absolute() {
    assert_eq!(
        Delta::new(110.0, 100.0),
        Delta {
            abs: 10.0,
            pct: Some(10.0)
        }
    );
    assert_eq!(
        Delta::new(75.0, 100.0),
        Delta {
            abs: -25.0,
            pct: Some(-25.0)
        }
    );
    assert_eq!(
        Delta::new(5.0, 0.0),
        Delta {
            abs: 5.0,
            pct: None
        }
    );
    assert_eq!(
        Delta::new(0.0, 0.0),
        Delta {
            abs: 0.0,
            pct: Some(0.0)
        }
    );
}

#[test]
fn config_summaries_sum_take_peaks_as_maxima_and_rank() {
    let base = Config::default();
    let cheap = Config {
        compact_to: 0.3,
        ..base
    };
    let rough = Config {
        compact_to: 0.2,
        ..base
    };
    // Three sessions under each config.
    let sweep = hand_sweep(
        vec![base, cheap, rough],
        vec![
            vec![
                facts(10, 1000, 0, 0, 300),
                facts(20, 3000, 1000, 0, 500),
                facts(5, 2000, 1000, 1, 900),
            ],
            vec![
                facts(10, 800, 400, 2, 200),
                facts(20, 2000, 1500, 2, 400),
                facts(5, 1200, 1000, 2, 600),
            ],
            vec![
                facts(10, 700, 500, 9, 100),
                facts(20, 1900, 1500, 9, 300),
                facts(5, 1100, 1000, 9, 500),
            ],
        ],
    );
    let prices = Prices {
        input: 1.0,
        cache_write: 10.0,
        cache_read: 1.0,
    };
    let s = summarize(&sweep, &prices, Metric::Price);
    assert_eq!(s[0].total(Metric::Requests), 35.0);
    assert_eq!(s[0].total(Metric::TokensSent), 6000.0);
    assert_eq!(s[0].total(Metric::CacheWrite), 4000.0);
    assert_eq!(
        s[0].total(Metric::PeakTokens),
        900.0,
        "a peak is a maximum, not a sum"
    );
    let peak = s[0].stats[Metric::PeakTokens.index()].unwrap();
    assert_eq!((peak.mean, peak.median), (1700.0 / 3.0, 500.0));
    assert!((peak.p95 - 860.0).abs() < 1e-9);
    // price = (write * 10 + read * 1) / 1e6
    assert!((s[0].total(Metric::Price) - (4000.0 * 10.0 + 2000.0) / 1e6).abs() < 1e-15);
    assert!((s[1].total(Metric::Price) - (1100.0 * 10.0 + 2900.0) / 1e6).abs() < 1e-15);
    assert_eq!(s[0].total(Metric::PriceUncached), 6000.0 / 1e6);
    // Deltas: the baseline against itself is nothing; the others are %.
    assert_eq!(s[0].delta(Metric::Price).abs, 0.0);
    assert_eq!(
        s[1].delta(Metric::TokensSent),
        Delta {
            abs: -2000.0,
            pct: Some(-2000.0 / 6000.0 * 100.0)
        }
    );
    assert_eq!(
        s[2].delta(Metric::ResultsMangled),
        Delta {
            abs: 26.0,
            pct: Some(2600.0)
        }
    );
    // Ranked by price: rough (10*1000*... cheapest), cheap, base.
    let ranks: Vec<usize> = s.iter().map(|c| c.rank).collect();
    assert_eq!(ranks, vec![3, 2, 1]);
    assert!(s[0].is_baseline && !s[1].is_baseline);
    // Every one is a trade-off: cheaper costs more mangled results.
    assert!(s.iter().all(|c| c.pareto));
    let by_mangled = summarize(&sweep, &prices, Metric::ResultsMangled);
    let ranks: Vec<usize> = by_mangled.iter().map(|c| c.rank).collect();
    assert_eq!(ranks, vec![1, 2, 3]);
}

// ----------------------------------------------------------------- pareto

#[test]
fn pareto_front_keeps_only_undominated_points() {
    let points = [
        (1.0, 5.0), // cheapest with its damage: on
        (2.0, 3.0), // on
        (3.0, 3.0), // dominated by (2, 3)
        (4.0, 1.0), // on
        (2.0, 3.0), // equal to an on-front point: on as well
        (5.0, 5.0), // dominated
        (1.0, 6.0), // dominated by (1, 5)
        (4.0, 1.0), // equal: on
        (6.0, 0.0), // least damage: on
    ];
    let on = pareto::front(&points);
    assert_eq!(
        on,
        vec![true, true, false, true, true, false, false, true, true]
    );
    assert!(pareto::front(&[]).is_empty());
    assert_eq!(pareto::front(&[(3.0, 3.0)]), vec![true]);
}

#[test]
fn prices_parse_three_numbers_or_say_what_is_expected() {
    assert_eq!("3,3.75,0.3".parse::<Prices>().unwrap(), Prices::default());
    assert_eq!(
        " 15 , 18.75, 1.5 ".parse::<Prices>().unwrap(),
        Prices {
            input: 15.0,
            cache_write: 18.75,
            cache_read: 1.5
        }
    );
    let err = "3,3.75".parse::<Prices>().unwrap_err();
    assert_eq!(err, PriceError::NotThree("3,3.75".into()));
    assert_text(&err.to_string(), "\"3,3.75\": give three prices per million tokens, input,cache_write,cache_read (e.g. 3,3.75,0.3)");
    let err = "3,x,0.3".parse::<Prices>().unwrap_err();
    assert!(
        matches!(&err, PriceError::Bad { name: "cache_write", text, .. } if text == "x"),
        "{err:?}"
    );
    assert_text(
        &err.to_string(),
        "\"3,x,0.3\": the cache_write price \"x\" is not a number of 0 or more",
    );
    let err = "3,3.75,-1".parse::<Prices>().unwrap_err();
    assert!(
        matches!(&err, PriceError::Bad { name: "cache_read", text, .. } if text == "-1"),
        "{err:?}"
    );
    assert_text(
        &err.to_string(),
        "\"3,3.75,-1\": the cache_read price \"-1\" is not a number of 0 or more",
    );
}
