//! The report when the verdict keeps the baseline: it compares the baseline
//! with the best config the verdict refused and says why that one was
//! refused, in the terminal's words; and a chart with one cell is said in
//! words rather than drawn as an empty axis.
#![cfg(feature = "full")]

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::chromium::{chromium, headless};
use crate::common::*;
use crate::report::session;

/// Five sessions (fewer than a recommendation needs, so the verdict keeps
/// the baseline) in `<tmp>/sessions`.
fn sessions(tmp: &Path) -> PathBuf {
    let dir = tmp.join("sessions");
    for (i, name) in ["alpha", "beta", "gamma", "delta", "epsilon"]
        .iter()
        .enumerate()
    {
        write_session(&dir, name, &session(10 + 4 * i, i + 1));
    }
    dir
}

/// `recommend` on `sessions` at a 4000-token window with `grid`, its data
/// in `<tmp>/<name>` and its report in `<tmp>/<name>/report`: the terminal's
/// text and the report folder.
fn recommend(tmp: &Path, sessions: &Path, name: &str, grid: &[&str]) -> (String, PathBuf) {
    let out = tmp.join(name);
    let report = out.join("report");
    let text = ok(output(
        bin()
            .arg("recommend")
            .arg(sessions)
            .args(["--max-tokens", "4000", "--resamples", "300"])
            .args(grid)
            .arg("--out")
            .arg(&out)
            .arg("--report")
            .arg(&report),
    ));
    (text, report)
}

/// The config and the reason the terminal's "best refused" line gives.
fn best_refused(text: &str) -> (String, String) {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("best refused:"))
        .unwrap_or_else(|| panic!("no best refused line in:\n{text}"))
        .trim();
    // Labels hold no ": ", reasons may.
    let (label, reason) = line.split_once(": ").expect("label: reason");
    (label.to_string(), reason.to_string())
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &html[at..];
    // Sections nest (one per session): up to the next top-level section.
    let end = rest[1..].find("<section id=").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// The cells of every `<tr>` in `html`, headings and data alike.
fn rows(html: &str) -> Vec<Vec<String>> {
    html.split("<tr>")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap_or(row.len())];
            row.split("<t")
                .skip(1)
                .filter_map(|cell| {
                    let body = &cell[cell.find('>')? + 1..];
                    Some(body[..body.find("</t").unwrap_or(body.len())].to_string())
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_kept_baseline_is_compared_with_the_best_config_refused_and_why() {
    let tmp = tempfile::tempdir().unwrap();
    let s = sessions(tmp.path());
    let grid = ["--compact-at", "0.6,0.8", "--compact-to", "0.3,0.5"];
    let (text, report) = recommend(tmp.path(), &s, "kept", &grid);
    assert!(text.starts_with("Keep your configuration"), "{text}");
    let (label, reason) = best_refused(&text);
    assert!(!reason.is_empty());
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let note = escape(&format!(
        "The verdict keeps smith's default config; the charts compare it with {label}, the best config it refused: {reason}."
    ));

    let up_close = section(&html, "sessions");
    assert!(up_close.contains(&note), "{up_close}");
    let tables = rows(up_close);
    assert!(!tables.is_empty());
    for row in &tables {
        // this session | baseline | compared | change: never one config twice.
        assert_eq!(row.len(), 4, "{row:?}");
        if row[0] == "this session" {
            assert_eq!(row[1], "smith&#39;s default config");
            assert_eq!(row[2], escape(&label));
        }
    }
    let captions: Vec<&str> = html.split("<figcaption>").skip(1).collect();
    assert!(captions.len() >= 4);
    assert!(
        captions.iter().all(|c| c.contains(&note)),
        "a caption does not say which config the charts compare"
    );

    let every = section(&html, "all-sessions");
    let heads = &rows(every)[0];
    assert!(heads
        .iter()
        .all(|h| !h.contains("defaults") && !h.ends_with("chosen")));
    assert!(heads.contains(&format!("tokens sent, {}", escape(&label))));
    assert!(heads.contains(&"tokens sent, smith&#39;s default config".to_string()));
    let configs = section(&html, "configs");
    assert!(!configs.contains("compare with the defaults"));
}

#[test]
fn a_heatmap_of_one_cell_is_said_in_words_and_stage_ticks_are_distinct() {
    let tmp = tempfile::tempdir().unwrap();
    let s = sessions(tmp.path());
    let grid = ["--compact-at", "0.8", "--compact-to", "0.5"];
    let (_, report) = recommend(tmp.path(), &s, "one", &grid);
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let at = html
        .find("<div id=\"heatmap\" class=\"no-chart\">")
        .expect("the heatmap is said in words");
    let words = &html[at..at + html[at..].find("</div>").unwrap()];
    assert!(words.contains("one pair, 0.80 / 0.50"), "{words}");
    assert!(
        words.contains("one cell and nothing to compare it with"),
        "{words}"
    );
    assert!(!html.contains("data-chart=\"heatmap\""));
    assert!(!report.join("heatmap.png").exists());
    assert!(report.join("stages.png").is_file());

    // The stages chart's x ticks: numbers, each once.
    let at = html.find("data-chart=\"stages\"").unwrap();
    let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
    let ticks: Vec<&str> = svg
        .split("</text>")
        .filter_map(|t| t.rsplit('>').next())
        .map(str::trim)
        .filter(|t| !t.is_empty() && t.trim_end_matches(['k', 'M', 'G']).parse::<f64>().is_ok())
        .collect();
    assert!(ticks.len() >= 2, "{ticks:?}");
    let mut distinct = ticks.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ticks.len(), "repeated ticks: {ticks:?}");
}

#[test]
fn chromium_shows_the_refused_config_and_why_in_a_kept_report() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the headless browser test");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let s = sessions(tmp.path());
    let grid = ["--compact-at", "0.6,0.8", "--compact-to", "0.3,0.5"];
    let (text, report) = recommend(tmp.path(), &s, "kept", &grid);
    let (label, reason) = best_refused(&text);
    let index = fs::canonicalize(report.join("index.html")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let r = headless(&browser, dir.path(), &index, &["--dump-dom".to_string()]);
    assert!(r.ok, "chromium failed: {}", r.stderr);
    let up_close = section(&r.stdout, "sessions");
    let kept = up_close
        .find("<p class=\"kept\">")
        .map(|at| &up_close[at..at + up_close[at..].find("</p>").unwrap()])
        .expect("the rendered page says which config it compares");
    // Chromium writes ' back as it is; & < > stay escaped.
    let plain = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    assert!(kept.contains(&plain(&label)), "{kept}");
    assert!(kept.contains(&plain(&reason)), "{kept}");
    let captions: Vec<&str> = up_close.split("<figcaption>").skip(1).collect();
    assert!(!captions.is_empty());
    assert!(captions.iter().all(|c| c.contains(&plain(&label))));
}
