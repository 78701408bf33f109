//! Misfires in every output (replay, the sweep's data files, the report with
//! links into session pages it writes) and the report's wide tables, which
//! scroll inside their own box at 1400 and 1000 pixels.
#![cfg(feature = "full")]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::chromium::{chromium, headless};
use common::*;
use serde_json::Value;
use smith_calibrate::transcript::{Block, Message};

/// A session whose late requests compact again and again under a
/// 4000-token window: every result is large and stays needed.
fn thrashing_session(turns: usize, seed: usize) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    for t in 0..turns {
        h.push(user(&format!("turn {t}: check src/f{}.rs", (t + seed) % 4)));
        let id = format!("c{t}");
        h.push(assistant_blocks(vec![
            thinking(&filler_str(250), "sig"),
            Block::tool_use(&id, "bash", &format!("{{\"cmd\":\"make t{t}\"}}")),
        ]));
        h.push(result(&id, &filler(1500 + (t * 613 + seed * 97) % 1800)));
        h.push(assistant(&format!("turn {t} done")));
    }
    h
}

/// Sessions swept under several policies and two windows, with the report.
fn sweep(tmp: &Path) -> (PathBuf, PathBuf) {
    let sessions = tmp.join("sessions");
    for (i, name) in ["ant", "bee", "cat", "dog"].iter().enumerate() {
        write_session(&sessions, name, &thrashing_session(14 + 3 * i, i));
    }
    let report = tmp.join("report");
    ok(run(&[
        "sweep",
        sessions.to_str().unwrap(),
        "--max-tokens",
        "4000,6000",
        "--compact-at",
        "0.7,0.8",
        "--policy",
        "smith,masking,claude-code,codex,opencode,context-editing",
        "--thrash-window",
        "2",
        "--rank-by",
        "misfire_repeated",
        "--report",
        report.to_str().unwrap(),
    ]));
    (sessions, report)
}

#[test]
fn misfires_are_columns_of_every_data_file_and_lines_of_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let (sessions, report) = sweep(tmp.path());

    // replay --json agrees with its own trace about growth and repeats.
    let t = sessions.join("cat/transcript.jsonl");
    let t = t.to_str().unwrap();
    let flags = ["--max-tokens", "4000", "--thrash-window", "2"];
    let mut args = vec!["replay", t, "--json"];
    args.extend(flags);
    let summary: Value = serde_json::from_str(&ok(run(&args))).unwrap();
    let args = ["replay", t, "--trace", "--max-tokens", "4000"];
    let trace: Vec<Value> = ok(run(&args))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let compactions: Vec<(u64, i64, i64)> = trace
        .iter()
        .filter(|v| v["strategy"] != "none")
        .map(|v| {
            (
                v["request"].as_u64().unwrap(),
                v["before"].as_i64().unwrap(),
                v["after"].as_i64().unwrap(),
            )
        })
        .collect();
    let grew = compactions.iter().filter(|(_, b, a)| a > b).count() as u64;
    let repeated = compactions
        .windows(2)
        .filter(|w| w[1].0 - w[0].0 <= 2)
        .count() as u64;
    assert!(repeated > 0, "the fixture must thrash");
    assert_eq!(summary["misfire_grew"], grew);
    assert_eq!(summary["misfire_repeated"], repeated);
    assert_eq!(summary["thrash_window"], 2);
    let listed = summary["misfires"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "repeated")
        .count() as u64;
    assert_eq!(listed, repeated);
    let mut args = vec!["replay", t];
    args.extend(flags);
    let table = ok(run(&args));
    assert!(
        table.contains("misfire: repeated (compaction repeated within the thrash window) at "),
        "{table}"
    );

    // Every data file has the columns, and the configs' totals are the
    // sessions' sums.
    let data = &report;
    let by_session = read_csv(&data.join("sessions.csv"));
    let configs = read_csv(&data.join("configs.csv"));
    for name in [
        "misfire_grew",
        "misfire_repeated",
        "target_misses",
        "exhausted",
    ] {
        let per_session = column_f64(&by_session, name);
        let config_of = column_f64(&by_session, "config");
        let totals = column_f64(&configs, name);
        let index = column_f64(&configs, "config");
        for (row, c) in index.iter().enumerate() {
            let sum: f64 = per_session
                .iter()
                .zip(&config_of)
                .filter(|(_, k)| *k == c)
                .map(|(v, _)| v)
                .sum();
            assert_eq!(totals[row], sum, "{name} of config {c}");
        }
    }
    let json: Value =
        serde_json::from_slice(&fs::read(data.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["thrash_window"], 2);

    // Without --session-pages the report names sessions and requests and
    // stays one file; with it, each request links into a session page it
    // wrote, which opens that compaction.
    let plain = fs::read_to_string(report.join("index.html")).unwrap();
    assert!(plain.contains("<section id=\"misfires\">"));
    assert!(!plain.contains("href=\"sessions/"));
    assert!(!report.join("sessions").exists());
    let paged = tmp.path().join("paged");
    ok(run(&[
        "report",
        report.to_str().unwrap(),
        "--out",
        paged.to_str().unwrap(),
        "--session-pages",
    ]));
    let report = paged;
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let section = &html[html
        .find("<section id=\"misfires\">")
        .expect("the misfires section")..];
    let section = &section[..section.find("</section>").unwrap()];
    let chosen = column_f64(&configs, "rank")
        .iter()
        .position(|&r| r == 1.0)
        .unwrap();
    let repeated_total = column_f64(&configs, "misfire_repeated")[chosen];
    assert!(
        section.contains(&format!("<strong>repeated</strong> (compaction repeated within the thrash window, column <code>misfire_repeated</code>): {} in", repeated_total as u64)),
        "{section}"
    );
    let links: Vec<&str> = section
        .split("href=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    let requests: Vec<&str> = links.iter().copied().filter(|l| l.contains("#r")).collect();
    if repeated_total > 0.0 {
        assert!(!requests.is_empty(), "{section}");
    }
    for l in &requests {
        let (page, r) = l.split_once("#r").unwrap();
        assert!(
            page.starts_with("sessions/") && page.ends_with(".html"),
            "{l}"
        );
        let view = fs::read_to_string(report.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(view.contains("Content-Security-Policy"));
        let r: usize = r.parse().unwrap();
        assert!(
            view.contains(&format!("\"r\":{r},")),
            "{page} has no request {r}"
        );
    }
}

#[test]
fn wide_tables_scroll_inside_their_box_at_1400_and_1000_pixels() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the table layout test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (_, report) = sweep(tmp.path());
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    // A probe: for each table, whether the page itself overflows, and
    // whether the last column can be scrolled into its box. The report's
    // policy runs no script; the probed copy's allows the probe, by hash.
    let probe = r#"<script>
addEventListener('load', function () {
  var out = [];
  var doc = document.documentElement;
  out.push('page ' + doc.scrollWidth + ' ' + doc.clientWidth);
  document.querySelectorAll('table').forEach(function (t, i) {
    var box = t.parentElement;
    var style = getComputedStyle(box).overflowX;
    box.scrollLeft = box.scrollWidth;
    var cells = t.querySelectorAll('thead th');
    var last = cells[cells.length - 1].getBoundingClientRect();
    var edge = box.getBoundingClientRect();
    out.push('table ' + i + ' ' + style + ' ' + Math.round(t.getBoundingClientRect().width) + ' ' +
      box.clientWidth + ' ' + Math.round(last.right - edge.right));
  });
  var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = out.join('\n');
  document.body.appendChild(pre);
});
</script></body>"#;
    let probe_text = &probe["<script>".len()..probe.find("</script>").unwrap()];
    assert!(html.contains("script-src 'none';"));
    let html = html.replacen(
        "script-src 'none';",
        &format!(
            "script-src {};",
            smith_calibrate::view::csp::hash_source(probe_text)
        ),
        1,
    );
    let probed = report.join("probe.html");
    fs::write(&probed, html.replace("</body>", probe)).unwrap();
    let mut scrolled = 0;
    for width in [1400, 1000] {
        let dir = tempfile::tempdir().unwrap();
        let r = headless(
            &browser,
            dir.path(),
            &probed,
            &[
                "--dump-dom".to_string(),
                format!("--window-size={width},1000"),
            ],
        );
        assert!(r.ok, "{}", r.stderr);
        let start = r.stdout.find("<pre id=\"probe\">").expect("the probe ran");
        let text = &r.stdout[start + "<pre id=\"probe\">".len()..];
        let text = &text[..text.find("</pre>").unwrap()];
        let mut lines = text.lines();
        let page: Vec<i64> = lines
            .next()
            .unwrap()
            .split(' ')
            .skip(1)
            .map(|n| n.parse().unwrap())
            .collect();
        assert!(
            page[0] <= page[1],
            "at {width}px the page itself is wider than the window: {text}"
        );
        let mut tables = 0;
        for line in lines {
            let f: Vec<&str> = line.split(' ').collect();
            let (overflow, table, box_width, past): (&str, i64, i64, i64) = (
                f[2],
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
            );
            tables += 1;
            assert!(
                past <= 1,
                "at {width}px table {} ends {past}px past its box after scrolling: {text}",
                f[1]
            );
            if table > box_width + 1 {
                assert!(
                    overflow == "auto" || overflow == "scroll",
                    "at {width}px table {} is cut off: {text}",
                    f[1]
                );
                scrolled += 1;
            }
        }
        assert!(tables >= 4, "{text}");

        // Screenshots of the ranked configs and the policies, to look at
        // (kept where REPORT_SHOTS says).
        for (name, hide) in [
            ("configs", "header,nav,#swept,#verdict"),
            ("policies", "header,nav,#swept,#verdict,#configs"),
        ] {
            let page = report.join(format!("{name}-{width}.html"));
            fs::write(
                &page,
                html.replace(
                    "</head>",
                    &format!("<style>{hide}{{display:none}}</style></head>"),
                ),
            )
            .unwrap();
            let shots = std::env::var_os("REPORT_SHOTS")
                .map(PathBuf::from)
                .unwrap_or_else(|| dir.path().to_path_buf());
            let shot = shots.join(format!("{name}-{width}.png"));
            let r = headless(
                &browser,
                dir.path(),
                &page,
                &[
                    format!("--screenshot={}", shot.display()),
                    format!("--window-size={width},900"),
                ],
            );
            assert!(r.ok, "{}", r.stderr);
            assert!(fs::metadata(&shot).unwrap().len() > 20_000);
        }
    }
    assert!(
        scrolled > 0,
        "at 1000px some table must need its scroll box, or this test checks nothing"
    );
}
