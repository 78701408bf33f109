//! What every config is compared with: the recorded run (each session's
//! agent's own compactions, at its model's window) for other agents' logs,
//! smith's defaults (or the user's configuration) for smith's own sessions,
//! and whatever `--baseline` names instead, through the table, the data
//! files, the verdict and the merge of shards.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{self, bin, column_f64, ok, ok_stderr, output, read_csv, untimed, DATA_FILES};

/// `sweep PATH --out DIR` with `extra`; stdout.
fn sweep_into(path: &Path, out: &Path, extra: &[&str]) -> String {
    let mut cmd = bin();
    cmd.arg("sweep").arg(path).arg("--out").arg(out).args(extra);
    ok(output(&mut cmd))
}

/// Config 0 of `configs.csv` in `dir`: its policy and label.
fn config_zero(dir: &Path) -> (String, String) {
    let frame = read_csv(&dir.join("configs.csv"));
    let row = column_f64(&frame, "config")
        .iter()
        .position(|&c| c == 0.0)
        .unwrap();
    let at = |name: &str| {
        let c = frame.column(name).unwrap().str().unwrap().clone();
        c.get(row).unwrap().to_string()
    };
    (at("policy"), at("config_label"))
}

/// The `window_used` of every session's config-0 row in `dir`.
fn baseline_windows(dir: &Path) -> Vec<i64> {
    let frame = read_csv(&dir.join("sessions.csv"));
    column_f64(&frame, "config")
        .into_iter()
        .zip(column_f64(&frame, "window_used"))
        .filter(|(c, _)| *c == 0.0)
        .map(|(_, w)| w as i64)
        .collect()
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn every_shared_log_source_is_compared_with_its_recorded_run_at_its_models_window() {
    let tmp = tempfile::tempdir().unwrap();
    for (source, windows) in [
        ("claude-code/spotter", &[200_000, 1_000_000][..]),
        ("claude-code/eduardodmb", &[200_000, 1_000_000]),
        ("claude-code/xiaomoziyi", &[200_000, 1_000_000]),
        ("claude-code/4thehalibit", &[200_000, 1_000_000]),
        ("claude-code/kaceybui", &[200_000, 1_000_000]),
        // What the rollouts record (model_context_window), GPT-5's window
        // for a rollout that records none.
        ("codex/msrnic", &[258_400, 400_000]),
        ("codex/property-estimator", &[258_400]),
    ] {
        let path = common::shared_data(source);
        let out = tmp.path().join(source.replace('/', "-"));
        let table = sweep_into(&path, &out, &[]);
        assert_eq!(
            config_zero(&out),
            ("recorded".to_string(), "recorded own".to_string()),
            "{source}"
        );
        let used = baseline_windows(&out);
        assert!(!used.is_empty(), "{source}");
        assert!(
            used.iter().all(|w| windows.contains(&(*w as u64))),
            "{source}: {used:?}"
        );
        assert_eq!(summary(&out)["grid"]["baseline"], "recorded", "{source}");
        assert!(
            table.contains("Δ: change against the baseline, what happened:"),
            "{source}: {table}"
        );
        // smith is swept at the sessions' own window too.
        assert!(
            table.contains("own 0.80/0.50 cap512 w3"),
            "{source}: {table}"
        );

        let mut cmd = bin();
        cmd.arg("recommend").arg(&path).arg("--json");
        let verdict: Value = serde_json::from_str(&ok(output(&mut cmd))).unwrap();
        assert_eq!(verdict["baseline"]["policy"], "recorded", "{source}");
        assert_eq!(verdict["baseline"]["label"], "recorded own", "{source}");
        let sentence = verdict["sentence"].as_str().unwrap();
        assert!(
            sentence.starts_with("Keep the agent's own compaction")
                || sentence.contains("in the recorded run"),
            "{source}: {sentence}"
        );
    }
    // The window follows the recorded prompts: a Claude session whose
    // prompt outgrew 200k ran on a 1M variant.
    let edu = tmp.path().join("claude-code-eduardodmb");
    assert!(baseline_windows(&edu).contains(&1_000_000));
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn baseline_chooses_smiths_defaults_or_a_config_file_instead() {
    let tmp = tempfile::tempdir().unwrap();
    let spotter = common::shared_data("claude-code/spotter");

    let defaults = tmp.path().join("defaults");
    let table = sweep_into(&spotter, &defaults, &["--baseline", "defaults"]);
    assert_eq!(
        config_zero(&defaults),
        ("smith".to_string(), "own 0.80/0.50 cap512 w3".to_string())
    );
    assert_eq!(summary(&defaults)["grid"]["baseline"], "smith");
    assert!(table.contains("Δ: change against the baseline, smith's defaults."));
    assert!(baseline_windows(&defaults).iter().all(|&w| w == 200_000));

    let at_120k = tmp.path().join("120k");
    sweep_into(
        &spotter,
        &at_120k,
        &["--baseline", "defaults", "--max-tokens", "120000"],
    );
    assert_eq!(config_zero(&at_120k).1, "120k 0.80/0.50 cap512 w3");

    let config = tmp.path().join("config.toml");
    fs::write(&config, "[context]\ncompact_at = 0.7\ncompact_to = 0.4\n").unwrap();
    let mine = tmp.path().join("mine");
    let table = sweep_into(
        &spotter,
        &mine,
        &[
            "--baseline",
            config.to_str().unwrap(),
            "--max-tokens",
            "200000",
        ],
    );
    // The file's [context] as smith reads it: its window is smith's
    // default, since it names none.
    assert_eq!(config_zero(&mine).1, "120k 0.70/0.40 cap512 w3");
    assert!(
        table.contains(&format!("the [context] of {}", config.display())),
        "{table}"
    );

    let mut cmd = bin();
    cmd.arg("sweep")
        .arg(&spotter)
        .args(["--baseline", "yesterday"]);
    let o = output(&mut cmd);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o)
            .contains("\"yesterday\" is neither recorded, defaults nor a smith config.toml"),
        "{}",
        common::stderr(&o)
    );
}

/// smith's own sessions keep smith's defaults at smith's window; asked
/// for, their recorded run is smith under its defaults.
#[test]
fn smiths_own_sessions_keep_smiths_defaults_unless_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sessions");
    let plain = tmp.path().join("plain");
    sweep_into(&data, &plain, &["--compact-at", "0.7,0.8"]);
    assert_eq!(
        config_zero(&plain),
        ("smith".to_string(), "120k 0.80/0.50 cap512 w3".to_string())
    );
    let recorded = tmp.path().join("recorded");
    sweep_into(
        &data,
        &recorded,
        &["--compact-at", "0.7,0.8", "--baseline", "recorded"],
    );
    assert_eq!(config_zero(&recorded).0, "recorded");
    // smith's run of its own sessions is smith under its defaults, at its
    // default window: the recorded run and the defaults cost the same.
    let configs = read_csv(&recorded.join("configs.csv"));
    let price = column_f64(&configs, "price");
    let labels = configs
        .column("config_label")
        .unwrap()
        .str()
        .unwrap()
        .clone();
    let of = |label: &str| {
        let i = labels.into_iter().position(|l| l == Some(label)).unwrap();
        price[i]
    };
    assert_eq!(of("recorded own"), of("120k 0.80/0.50 cap512 w3"));
    assert!(baseline_windows(&recorded).iter().all(|&w| w == 120_000));
}

/// The recorded baseline and the sessions' own window survive a sharded
/// sweep: the merge rebuilds the same configs and writes the same files.
#[test]
fn a_recorded_baseline_merges_from_shards_as_one_process_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let projects = crate::direct::projects(tmp.path());
    let args = ["--compact-at", "0.6,0.8", "--jobs", "1"];
    let single = tmp.path().join("single");
    sweep_into(&projects, &single, &args);
    assert_eq!(config_zero(&single).1, "recorded own");
    let sharded = tmp.path().join("sharded");
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let mut all = args.to_vec();
        all.extend(["--shard", &shard]);
        sweep_into(&projects, &sharded, &all);
    }
    ok_stderr(bin().arg("merge").arg(&sharded).output().unwrap());
    for name in DATA_FILES {
        assert!(
            fs::read(single.join(name)).unwrap() == fs::read(sharded.join(name)).unwrap(),
            "{name} differs between one process and the merged shards"
        );
    }
    assert_eq!(
        untimed(&single.join("summary.json")),
        untimed(&sharded.join("summary.json"))
    );
}

/// The verdict a sweep decides, for a re-based report in this test.
fn decide(
    s: &mut [smith_calibrate::sweep::ConfigSummary],
    per: &smith_calibrate::sweep::aggregate::PerSession,
    by: smith_calibrate::sweep::figures::Metric,
) -> serde_json::Value {
    let settings = smith_calibrate::recommend::Settings::for_sweep(by);
    serde_json::to_value(smith_calibrate::recommend::decide(s, per, &settings)).unwrap()
}

#[test]
fn a_finished_sweep_rebased_in_the_report_is_the_sweep_run_against_that_baseline() {
    use smith_calibrate::report::data::SweepOutput;
    let tmp = tempfile::tempdir().unwrap();
    let (run, against) = (tmp.path().join("run"), tmp.path().join("against"));
    let sweep = |out: &Path, extra: &[&str]| {
        let o = common::output(
            common::bin()
                .args(["sweep", "datasets/sessions", "--compact-at", "0.7,0.8"])
                .args(extra)
                .arg("--out")
                .arg(out),
        );
        assert!(o.status.success(), "{}", common::stderr(&o));
    };
    sweep(&run, &[]);
    let file = tmp.path().join("config.toml");
    std::fs::write(&file, "[context]\ncompact_at = 0.7\ncompact_to = 0.5\n").unwrap();
    sweep(&against, &["--baseline", file.to_str().unwrap()]);

    let label = "120k 0.70/0.50 cap512 w3";
    let mut rebased = SweepOutput::read(&run).unwrap();
    let base = rebased.config_named(label).unwrap();
    assert_eq!(base, 1, "the sweep's second config");
    rebased.rebase(base, &decide).unwrap();
    let direct = SweepOutput::read(&against).unwrap();
    assert_eq!(rebased.configs.len(), direct.configs.len());
    for c in &rebased.configs {
        let d = direct.configs.iter().find(|d| d.label == c.label).unwrap();
        assert_eq!(c.is_baseline, d.is_baseline, "{}", c.label);
        assert_eq!(c.totals, d.totals, "{}", c.label);
        assert_eq!(c.deltas, d.deltas, "{}", c.label);
        assert_eq!(c.interval, d.interval, "{}", c.label);
        assert_eq!(
            (c.rank, c.tied, c.pareto),
            (d.rank, d.tied, d.pareto),
            "{}",
            c.label
        );
    }
    assert_eq!(rebased.baseline_name(), format!("the baseline ({label})"));
    let (r, d) = (rebased.verdict().unwrap(), direct.verdict().unwrap());
    assert_eq!(r.sentence, d.sentence);
    assert_eq!(r.baseline.label, label);

    // The command: the report goes beside the sweep's own, naming the
    // baseline; a config the sweep does not have is refused, naming it.
    let o = common::output(
        common::bin()
            .arg("report")
            .arg(&run)
            .args(["--baseline", label]),
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let page = run
        .join("baseline-120k_0.70_0.50_cap512_w3")
        .join("index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!("the baseline ({label})")),
        "{page:?}"
    );
    assert!(
        !run.join("index.html").exists(),
        "the sweep's own folder is left as it was"
    );
    let o = common::output(
        common::bin()
            .arg("report")
            .arg(&run)
            .args(["--baseline", "0.6/0.3"]),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("\"0.6/0.3\""),
        "{}",
        common::stderr(&o)
    );
}
