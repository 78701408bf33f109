//! Every surface of one sweep states the same window, prices, units and
//! baseline: the terminal (piped and on a 100-column terminal), `--json`,
//! `summary.json`, the report's HTML and the session pages, for smith's
//! own sessions (`datasets/sessions`) and for a folder of Claude Code logs.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use serde_json::Value;
use smith_calibrate::sweep::units::TokenUnits;

use crate::common::{run_text, terminal};

/// Whitespace of a wrapped text made single spaces, so that a sentence
/// reads the same however a surface wrapped it.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The JSON a session page's script reads.
fn page_data(page: &Path) -> Value {
    let html = fs::read_to_string(page).unwrap();
    let tag = "<script type=\"application/json\" id=\"session-data\">";
    let at = html.find(tag).expect("the data") + tag.len();
    let end = at + html[at..].find("</script>").unwrap();
    serde_json::from_str(&html[at..end]).expect("the data is JSON")
}

/// Each session's window, as `sessions.csv` says the sweep used it.
fn windows_used(out: &Path) -> HashMap<String, u64> {
    let csv = fs::read_to_string(out.join("sessions.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (session, window) = (at("session"), at("window_used"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|f| {
            (
                f[session].trim_matches('"').to_string(),
                f[window].parse().unwrap(),
            )
        })
        .collect()
}

fn check_every_surface(path: &Path, own_window: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let (out, report, pages) = (
        tmp.path().join("out"),
        tmp.path().join("r"),
        tmp.path().join("p"),
    );
    let path = path.to_str().unwrap();
    let grid = ["--compact-at", "0.7,0.8"];
    let mut args = vec!["sweep", path];
    args.extend(grid);
    let piped = {
        let mut a = args.clone();
        a.extend([
            "--out",
            out.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ]);
        let (text, err, code) = run_text(&a);
        assert_eq!(code, Some(0), "{err}");
        text
    };
    let json: Value = {
        let mut a = args.clone();
        a.push("--json");
        let (text, err, code) = run_text(&a);
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str(&text).unwrap()
    };
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let on_terminal = terminal::run(&args, 100, "2>/dev/null").map(|(status, text)| {
        assert!(status.success(), "{text}");
        text
    });
    let mut texts = vec![("piped", flat(&piped))];
    texts.extend(on_terminal.iter().map(|t| ("terminal", flat(t))));

    // Units: one resolution, stated alike everywhere.
    assert_eq!(json["tokens"], summary["tokens"]);
    let units: TokenUnits = serde_json::from_value(summary["tokens"].clone()).unwrap();
    let sentence = format!("Units: {}.", units.describe());
    for (name, text) in &texts {
        assert!(text.contains(&sentence), "{name}: {sentence} not in {text}");
    }
    assert!(
        html.contains(&html_escaped(&units.describe())),
        "report footer"
    );
    assert_eq!(units.baseline_measured(), own_window, "{units:?}");
    assert!(!units.axis().is_empty());

    // Prices: every line the sweep priced by, on every surface.
    let lines = summary["prices"]["used"]["lines"].as_array().unwrap();
    assert!(!lines.is_empty(), "{summary}");
    assert_eq!(json["prices"]["lines"], summary["prices"]["used"]["lines"]);
    for line in lines {
        let line = line.as_str().unwrap();
        for (name, text) in &texts {
            assert!(text.contains(&flat(line)), "{name}: {line} not in {text}");
        }
        assert!(html.contains(&html_escaped(line)), "report: {line}");
    }

    // The baseline, by the name summary.json gives it.
    let baseline = summary["baseline"]["label"].as_str().unwrap();
    let rows = json["configs"].as_array().unwrap();
    let base_row = rows.iter().find(|r| r["is_baseline"] == true).unwrap();
    assert_eq!(base_row["config_label"], baseline);
    for (name, text) in &texts {
        assert!(text.contains(baseline), "{name}: {baseline} not in {text}");
    }
    assert!(html.contains(&html_escaped(baseline)), "report: {baseline}");

    // The window: each session's own for logs (no single trigger to
    // state), smith's default for smith's sessions; a session page draws
    // the window its session was swept at.
    let windows = windows_used(&out);
    let trigger = &summary["baseline"]["trigger_tokens"];
    if own_window {
        assert!(trigger.is_null(), "{trigger}");
        assert!(base_row["trigger_tokens"].is_null(), "{base_row}");
        assert!(html.contains("own"), "report: the own window");
    } else {
        assert_eq!(trigger.as_i64(), Some(96_000), "{trigger}");
        assert!(windows.values().all(|&w| w == 120_000), "{windows:?}");
    }
    let (_, err, code) = run_text(&[
        "transcript",
        "show",
        path,
        "--html",
        pages.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let mut seen = 0;
    for page in fs::read_dir(&pages).unwrap().flatten().map(|e| e.path()) {
        if page.file_name().unwrap() == "index.html" || page.extension().is_none_or(|e| e != "html")
        {
            continue;
        }
        let data = page_data(&page);
        let session = data["session"].as_str().unwrap();
        let Some(&window) = windows.get(session) else {
            continue;
        };
        seen += 1;
        assert_eq!(data["max"].as_u64(), Some(window), "{}", page.display());
        let page_units = data["units"].as_str().unwrap();
        assert!(
            units.axis().starts_with(page_units),
            "{}: {page_units} against the sweep's {}",
            page.display(),
            units.axis()
        );
    }
    assert!(seen > 0, "no session page matched a swept session");
}

#[test]
fn smiths_sessions_state_one_window_price_unit_and_baseline_everywhere() {
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sessions");
    check_every_surface(&dataset, false);
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn claude_code_logs_state_one_window_price_unit_and_baseline_everywhere() {
    check_every_surface(&crate::common::shared_data("claude-code/kaceybui"), true);
}
