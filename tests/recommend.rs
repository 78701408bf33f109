//! `recommend`, the command, on the bundled and the real sessions. The
//! paired bootstrap and the verdict on sessions made to have a known answer
//! are tested inside the crate (`recommend::verdict_tests`).

use std::path::Path;

use serde_json::Value;
use smith_calibrate::engine::Config;
use smith_calibrate::recommend::smith_config;
use smith_calibrate::recommend::Verdict;
use smith_calibrate::sweep::figures::Metric;

use crate::common::{self, *};

const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sessions");

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
    // Every figure of the verdict's tables at the terminal's precision: no
    // cell holds a number of more than two decimals (an interval of the
    // loss was written as raw floats, "+6.642857142857142 … +9.5…").
    for cell in html[verdict..swept].split("<td").skip(1) {
        let text = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
        let digits_after_point = text
            .split(|c: char| !c.is_ascii_digit() && c != '.')
            .filter_map(|number| number.split_once('.'))
            .map(|(_, decimals)| decimals.len())
            .max()
            .unwrap_or(0);
        assert!(digits_after_point <= 2, "{text}");
    }
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
