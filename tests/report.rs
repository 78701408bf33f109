//! The report: every chart as a valid PNG, one self-contained `index.html`
//! with every chart inline, the numbers behind the charts, the choice of
//! config and sessions, the errors, and the page in headless Chromium
//! (every chart in the rendered DOM, a screenshot with content, and no
//! request leaving the page).
#![cfg(feature = "full")]

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use smith_calibrate::engine::{Budget, Engine};
use smith_calibrate::replay;
use smith_calibrate::report::context_curve::ContextCurve;
use smith_calibrate::report::heatmap::Heatmap;
use smith_calibrate::report::{Metric, Selection, SweepOutput};
use smith_calibrate::transcript::{Block, BlockType, Message, Role};

// ---------------------------------------------------------------- helpers

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_smith-calibrate"));
    c.env("SMITH_HOME", "/nonexistent-smith-home")
        .env("NO_COLOR", "1");
    c
}

fn run(c: &mut Command) -> Output {
    c.output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A session of `turns` real turns that makes every stage fire under a
/// window of a few thousand tokens: thinking, an image now and then,
/// repeated reads, large results. `seed` varies the sizes.
fn session(turns: usize, seed: usize) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    for t in 0..turns {
        h.push(user(&format!(
            "turn {t}: {}",
            filler_str(80 + (t * 37 + seed * 11) % 200)
        )));
        let id = format!("c{t}");
        let args = format!("{{\"path\":\"src/f{}.rs\"}}", (t + seed) % 3);
        h.push(assistant_blocks(vec![
            thinking(&filler_str(150 + (t * 13 + seed) % 300), "sig"),
            Block::tool_use(&id, "read_file", &args),
        ]));
        let size = 400 + (t * 7919 + seed * 104_729) % (2500 + seed * 700);
        let mut result = vec![result_block(&id, &filler(size))];
        if t % 4 == seed % 4 {
            result.push(media(
                BlockType::Image,
                Some(&id),
                Some("shot.png"),
                Some("image/png"),
            ));
        }
        h.push(arc(Message::new(Role::Tool, result, false, None)));
        h.push(assistant(&format!("done with turn {t}")));
    }
    h
}

/// Writes `messages` as `<dir>/<name>/transcript.jsonl`.
fn write_session(dir: &Path, name: &str, messages: &[Arc<Message>]) -> PathBuf {
    let session = dir.join(name);
    fs::create_dir_all(&session).unwrap();
    let mut buf = Vec::new();
    for m in messages {
        m.write_json(&mut buf);
        buf.push(b'\n');
    }
    let path = session.join("transcript.jsonl");
    fs::write(&path, buf).unwrap();
    path
}

const NAMES: [&str; 5] = ["alpha", "beta", "gamma", "delta", "epsilon"];

/// Five sessions swept over a small grid (2 × 2 × 2 configs and smith's
/// defaults) into `<tmp>/sweep`.
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let sessions = tmp.path().join("sessions");
        for (i, name) in NAMES.iter().enumerate() {
            write_session(&sessions, name, &session(10 + 4 * i, i + 1));
        }
        let o = run(bin()
            .args(["sweep"])
            .arg(&sessions)
            .args([
                "--max-tokens",
                "4000",
                "--compact-at",
                "0.6,0.8",
                "--compact-to",
                "0.3,0.5",
                "--summary-tokens",
                "0,200",
                "--out",
            ])
            .arg(tmp.path().join("sweep")));
        assert!(o.status.success(), "sweep failed: {}", stderr(&o));
        Fixture { tmp }
    }

    fn sweep(&self) -> PathBuf {
        self.tmp.path().join("sweep")
    }

    fn sessions(&self) -> PathBuf {
        self.tmp.path().join("sessions")
    }

    /// Runs `report` into `<tmp>/<name>` with `extra` flags.
    fn report(&self, name: &str, extra: &[&str]) -> PathBuf {
        let out = self.tmp.path().join(name);
        let o = run(bin()
            .arg("report")
            .arg(self.sweep())
            .arg("--out")
            .arg(&out)
            .args(extra));
        assert!(o.status.success(), "report failed: {}", stderr(&o));
        out
    }
}

/// The PNG files of a folder, by stem.
fn pngs(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".png").map(str::to_string)
        })
        .collect()
}

/// Decodes a PNG fully; returns width, height and the share of pixels that
/// are not (near) white.
fn decode(path: &Path) -> (u32, u32, f64) {
    let bytes = fs::read(path).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{}: no PNG signature",
        path.display()
    );
    assert_eq!(
        &bytes[12..16],
        b"IHDR",
        "{}: IHDR is not the first chunk",
        path.display()
    );
    let ihdr_w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let ihdr_h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder
        .read_info()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader
        .next_frame(&mut buf)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!((info.width, info.height), (ihdr_w, ihdr_h));
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let inked = pixels
        .chunks(channels)
        .filter(|px| px.iter().take(3).any(|&c| c < 235))
        .count();
    (
        info.width,
        info.height,
        inked as f64 / (info.width * info.height) as f64,
    )
}

/// The value of every `attr="..."` in `html`.
fn attribute_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let needle = format!(" {attr}=\"");
    html.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            &rest[..rest.find('"').unwrap_or(rest.len())]
        })
        .collect()
}

// ---------------------------------------------------------------- PNGs

#[test]
fn report_writes_a_valid_png_of_sensible_size_for_every_chart() {
    let f = Fixture::new();
    let out = f.report("report", &[]);
    let found = pngs(&out);
    for stem in ["cost-loss", "heatmap", "stages", "distribution"] {
        assert!(found.contains(stem), "no {stem}.png in {found:?}");
    }
    let curves: Vec<&String> = found.iter().filter(|s| s.starts_with("context-")).collect();
    assert_eq!(
        curves.len(),
        3,
        "three sessions charted by default: {found:?}"
    );
    for stem in &found {
        let (w, h, inked) = decode(&out.join(format!("{stem}.png")));
        assert!(w > 300 && h > 300, "{stem}.png is {w}×{h}");
        assert_eq!((w, h), smith_calibrate::report::SIZE, "{stem}.png");
        // Axes, labels and data, not a blank or a flood fill.
        assert!(
            inked > 0.01 && inked < 0.9,
            "{stem}.png: {:.1}% of pixels inked",
            inked * 100.0
        );
    }
    let leftovers: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

// ---------------------------------------------------------------- index.html

#[test]
fn index_html_is_one_self_contained_file_with_an_inline_svg_per_chart() {
    let f = Fixture::new();
    let out = f.report("report", &[]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let lower = html.to_lowercase();
    for banned in [
        "http://",
        "https://",
        "<script",
        "<link",
        "<img",
        "<iframe",
        "<object",
        "<embed",
        "@import",
        "@font-face",
        "url(",
    ] {
        assert!(!lower.contains(banned), "index.html contains {banned}");
    }
    for attr in ["src", "srcset", "xlink:href", "action", "data"] {
        let values = attribute_values(&html, attr);
        assert!(
            values.is_empty(),
            "index.html has {attr}= attributes: {values:?}"
        );
    }
    for href in attribute_values(&html, "href") {
        assert!(href.starts_with('#'), "a link out of the page: {href}");
        assert!(
            html.contains(&format!("id=\"{}\"", &href[1..])),
            "a link to a missing anchor: {href}"
        );
    }
    let charts: BTreeSet<String> = attribute_values(&html, "data-chart")
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(charts, pngs(&out), "one inline SVG per PNG, same names");
    assert_eq!(
        html.matches("<svg").count(),
        charts.len(),
        "exactly one <svg> per chart"
    );
    assert_eq!(html.matches("</svg>").count(), charts.len());
    assert!(html.contains("@media print"), "no print styles");
}

#[test]
fn index_html_says_what_was_swept_and_ranks_the_configs() {
    let f = Fixture::new();
    let out = f.report("report", &[]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    assert_eq!(data.configs.len(), 9, "2×2×2 and the baseline");
    assert!(
        html.contains("5 sessions replayed under 9 configs"),
        "the lead sentence"
    );
    assert!(
        html.contains(&f.sessions().display().to_string()),
        "where the sessions came from"
    );
    for knob in ["compact_at", "compact_to", "summary_tokens"] {
        assert!(
            html.contains(&format!("<code>{knob}</code>")),
            "the grid axis {knob}"
        );
    }
    // The ranked table: every config (9 ≤ the top shown), best first, the
    // baseline and the front marked.
    let table = &html[html.find("<section id=\"configs\">").unwrap()..];
    let table = &table[table.find("<tbody>").unwrap()..table.find("</tbody>").unwrap()];
    let mut last = 0;
    for &i in &data.by_rank() {
        let c = &data.configs[i];
        let at = table
            .find(&format!(
                "<td>{}</td><td class=\"l\"><span class=\"cfg\">{}</span>",
                c.rank, c.label
            ))
            .unwrap_or_else(|| panic!("rank {} missing", c.rank));
        assert!(at > last, "rank {} out of order", c.rank);
        last = at;
    }
    assert_eq!(
        table
            .matches("<span class=\"mark\">defaults</span>")
            .count(),
        1
    );
    let front = data.configs.iter().filter(|c| c.pareto).count();
    assert!(front >= 1);
    assert_eq!(table.matches("★ front</span>").count(), front);
    for name in NAMES {
        assert!(
            html.contains(&format!(">{name}</td>")),
            "session {name} in the table of every session"
        );
    }
    assert_eq!(html.matches("<section class=\"session\">").count(), 3);
}

// ---------------------------------------------------------------- choices

#[test]
fn default_sessions_are_those_whose_tokens_sent_changed_most() {
    let f = Fixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    let sel = Selection::new(&data, None, &[]).unwrap();
    assert_eq!(sel.chosen, data.by_rank()[0]);
    let base = data.baseline().unwrap();
    let sent = data.per_session("tokens_sent").unwrap();
    let change = |s: usize| (sent[s][sel.chosen] - sent[s][base]).abs();
    assert_eq!(sel.sessions.len(), 3);
    for w in sel.sessions.windows(2) {
        assert!(change(w[0]) >= change(w[1]));
    }
    let least_shown = change(*sel.sessions.last().unwrap());
    for s in (0..data.sessions.len()).filter(|s| !sel.sessions.contains(s)) {
        assert!(
            change(s) <= least_shown,
            "{} changed more than a shown one",
            data.sessions[s].label
        );
    }
}

#[test]
fn session_and_config_flags_pick_what_is_charted() {
    let f = Fixture::new();
    let out = f.report(
        "picked",
        &[
            "--session",
            "beta",
            "--session",
            "delta",
            "--config",
            "2",
            "--metric",
            "results_mangled",
        ],
    );
    let curves: Vec<String> = pngs(&out)
        .into_iter()
        .filter(|s| s.starts_with("context-"))
        .collect();
    assert_eq!(curves, vec!["context-beta", "context-delta"]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    let second = data.configs.iter().find(|c| c.rank == 2).unwrap();
    assert!(html.contains(&format!(
        "Chosen: <strong>{}</strong> (rank 2 of 9",
        second.label
    )));
    assert!(
        html.contains("Tool results mangled by compact_at × compact_to"),
        "the heatmap's metric"
    );
    // A session can also be named by its transcript path.
    let path = f.sessions().join("gamma").join("transcript.jsonl");
    let out = f.report("by-path", &["--session", path.to_str().unwrap()]);
    assert!(pngs(&out).contains("context-gamma"));
}

#[test]
fn unknown_session_or_config_is_a_usage_error_naming_the_choices() {
    let f = Fixture::new();
    let o = run(bin()
        .arg("report")
        .arg(f.sweep())
        .args(["--session", "nosuch", "--out"])
        .arg(f.tmp.path().join("x")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--session \"nosuch\"") && stderr(&o).contains("\"alpha\""),
        "{}",
        stderr(&o)
    );
    let o = run(bin()
        .arg("report")
        .arg(f.sweep())
        .args(["--config", "99", "--out"])
        .arg(f.tmp.path().join("x")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("from 1 to 9"), "{}", stderr(&o));
    assert!(
        !f.tmp.path().join("x").exists(),
        "nothing written on a usage error"
    );
}

#[test]
fn a_folder_without_sweep_output_says_which_command_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(bin()
        .arg("report")
        .arg(tmp.path())
        .arg("--out")
        .arg(tmp.path().join("r")));
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("summary.json") && err.contains("sweep --out"),
        "{err}"
    );
    assert!(!tmp.path().join("r").exists());
}

#[test]
fn a_session_moved_since_the_sweep_is_reported_and_the_rest_still_written() {
    let f = Fixture::new();
    fs::remove_dir_all(f.sessions().join("beta")).unwrap();
    let out = f.tmp.path().join("moved");
    let o = run(bin()
        .arg("report")
        .arg(f.sweep())
        .args(["--session", "beta", "--session", "alpha", "--out"])
        .arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("beta") && stderr(&o).contains("cannot read the session again"),
        "{}",
        stderr(&o)
    );
    let found = pngs(&out);
    assert!(
        found.contains("context-alpha") && !found.contains("context-beta"),
        "{found:?}"
    );
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("No context curve: "));
}

// ---------------------------------------------------------------- numbers

#[test]
fn context_curve_is_the_replay_under_both_configs_and_the_uncompacted_prefix() {
    let f = Fixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    let messages = session(18, 4);
    let chosen = &data.configs[data.by_rank()[0]];
    let base = &data.configs[data.baseline().unwrap()];
    assert!(
        !chosen.is_baseline,
        "the small windows beat smith's 120k here"
    );
    let curve = ContextCurve::new("s", "context-s".into(), &messages, chosen, base);

    let budget = Budget::new(&chosen.config);
    let mut expected_full = Vec::new();
    let mut bytes = 0;
    for m in &messages {
        if m.role == Role::Assistant {
            expected_full.push(budget.charged(bytes / 4));
        }
        bytes += m.bytes();
    }
    assert_eq!(curve.full, expected_full);

    let mut sent = Vec::new();
    let mut compactions = Vec::new();
    let facts = replay::replay_with(&messages, &Engine::new(chosen.config), |r, _, _| {
        sent.push(r.after);
        if !r.stages.is_empty() {
            compactions.push((r.request, r.stages.clone()));
        }
        true
    });
    assert_eq!(curve.chosen, sent);
    assert_eq!(curve.chosen.iter().sum::<i64>(), facts.tokens_sent);
    let marks: Vec<_> = curve
        .marks
        .iter()
        .map(|m| (m.request, m.stages.clone()))
        .collect();
    assert_eq!(marks, compactions);
    assert!(!marks.is_empty(), "the small window compacts");
    assert_eq!(
        curve.fires().iter().sum::<usize>(),
        compactions.iter().map(|c| c.1.len()).sum::<usize>()
    );

    let base_facts = replay::replay(&messages, &Engine::new(base.config));
    assert_eq!(curve.baseline.iter().sum::<i64>(), base_facts.tokens_sent);
    assert_eq!(
        curve.baseline, curve.full,
        "smith's 120k window never compacts this session"
    );
}

#[test]
fn heatmap_cells_are_the_configs_totals_and_impossible_pairs_are_empty() {
    let f = Fixture::new();
    let tmp = tempfile::tempdir().unwrap();
    // 0.5 against 0.5 is impossible: the sweep leaves it out.
    let o = run(bin()
        .arg("sweep")
        .arg(f.sessions())
        .args([
            "--max-tokens",
            "4000",
            "--compact-at",
            "0.5,0.7",
            "--compact-to",
            "0.3,0.5",
            "--out",
        ])
        .arg(tmp.path()));
    assert!(o.status.success(), "{}", stderr(&o));
    let data = SweepOutput::read(tmp.path()).unwrap();
    let chosen = data.by_rank()[0];
    let map = Heatmap::new(&data, Metric::TokensSent, chosen, data.baseline().unwrap());
    assert_eq!(map.at, vec![0.5, 0.7]);
    assert_eq!(map.to, vec![0.3, 0.5]);
    assert_eq!(map.cells[0][1], None, "0.5/0.5 was not run");
    for (i, &at) in map.at.iter().enumerate() {
        for (j, &to) in map.to.iter().enumerate() {
            let config = data.configs.iter().find(|c| {
                c.config.max_tokens == 4000
                    && c.config.compact_at == at
                    && c.config.compact_to == to
            });
            assert_eq!(
                map.cells[i][j],
                config.map(|c| c.total("tokens_sent")),
                "{at}/{to}"
            );
        }
    }
    let c = &data.configs[chosen].config;
    let cell = (
        map.at.iter().position(|&v| v == c.compact_at).unwrap(),
        map.to.iter().position(|&v| v == c.compact_to).unwrap(),
    );
    assert_eq!(map.chosen, Some(cell));
    assert_eq!(map.baseline, None, "smith's 120k window is another slice");
}

// ---------------------------------------------------------------- sweep --report

#[test]
fn sweep_report_writes_data_and_report_in_one_go() {
    let f = Fixture::new();
    let dir = f.tmp.path().join("both");
    let o = run(bin()
        .arg("sweep")
        .arg(f.sessions())
        .args([
            "--max-tokens",
            "4000",
            "--compact-at",
            "0.6,0.8",
            "--report",
        ])
        .arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    for file in [
        "configs.parquet",
        "sessions.parquet",
        "summary.json",
        "index.html",
        "heatmap.png",
        "cost-loss.png",
    ] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    // With --out too, the data go there and the report into --report.
    let (data, report) = (f.tmp.path().join("data"), f.tmp.path().join("rep"));
    let o = run(bin()
        .arg("sweep")
        .arg(f.sessions())
        .args(["--max-tokens", "4000", "--out"])
        .arg(&data)
        .arg("--report")
        .arg(&report));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(data.join("summary.json").is_file() && !data.join("index.html").exists());
    assert!(report.join("index.html").is_file() && !report.join("summary.json").exists());
}

// ---------------------------------------------------------------- Chromium

/// The headless browser, if one is installed (CI installs Debian's
/// `chromium`); `CHROMIUM` names another.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// What headless Chromium did: its exit status, what it printed, and the
/// net log of the run.
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
    net_log: PathBuf,
}

/// Runs headless Chromium on `page` with networking made to fail, logging
/// every network event to `<dir>/net.json`; `extra` adds flags. Its output
/// goes to files (a DOM dump overflows a pipe nobody reads while waiting).
/// Kills it after two minutes.
fn headless(browser: &Path, dir: &Path, page: &Path, extra: &[String]) -> Run {
    let net_log = dir.join("net.json");
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--log-net-log={}", net_log.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(&err).unwrap())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Run {
        ok: status.success(),
        stdout: fs::read_to_string(&out).unwrap_or_default(),
        stderr: fs::read_to_string(&err).unwrap_or_default(),
        net_log,
    }
}

/// The URLs of the network requests the page made (not those of the
/// browser itself, whose requests have no initiating origin), from a
/// Chromium net log.
fn page_requests(net_log: &Path) -> Vec<String> {
    let text = fs::read_to_string(net_log).unwrap_or_else(|e| panic!("{}: {e}", net_log.display()));
    let log: serde_json::Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .expect("the net log is JSON");
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        .as_u64()
        .expect("event types");
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["type"].as_u64() == Some(start_job))
        .filter(|e| e["params"]["url"].is_string())
        .filter(|e| e["params"]["initiator"].as_str() != Some("not an origin"))
        .map(|e| e["params"]["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn chromium_renders_every_chart_and_the_page_requests_nothing() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the headless browser test");
        return;
    };
    let f = Fixture::new();
    let out = f.report("report", &[]);
    let index = fs::canonicalize(out.join("index.html")).unwrap();
    let charts = pngs(&out);

    // The net-log check itself: a page that does load something is caught.
    let probe = f.tmp.path().join("probe.html");
    fs::write(
        &probe,
        "<!DOCTYPE html><p>x</p><img src=\"http://example.invalid/x.png\">",
    )
    .unwrap();
    let probe_dir = tempfile::tempdir().unwrap();
    let r = headless(
        &browser,
        probe_dir.path(),
        &probe,
        &["--dump-dom".to_string()],
    );
    assert!(r.ok, "chromium failed: {}", r.stderr);
    let caught = page_requests(&r.net_log);
    assert!(
        caught.iter().any(|u| u.contains("example.invalid")),
        "the net-log check misses a page request: {caught:?}"
    );

    // The report: every chart in the rendered DOM, with its drawing.
    let dir = tempfile::tempdir().unwrap();
    let r = headless(&browser, dir.path(), &index, &["--dump-dom".to_string()]);
    assert!(r.ok, "chromium failed: {}", r.stderr);
    let dom = &r.stdout;
    for stem in &charts {
        let at = dom
            .find(&format!("data-chart=\"{stem}\""))
            .unwrap_or_else(|| panic!("{stem} is not in the rendered DOM"));
        let svg = &dom[at..];
        let svg = &svg[..svg
            .find("</svg>")
            .unwrap_or_else(|| panic!("{stem}: unclosed svg"))];
        assert!(
            svg.matches("<text").count() >= 5,
            "{stem}: too few labels in the rendered SVG"
        );
        assert!(
            svg.contains("<polyline") || svg.contains("<rect") || svg.contains("<circle"),
            "{stem}: nothing drawn"
        );
    }
    let requests = page_requests(&r.net_log);
    assert!(
        requests.is_empty(),
        "the page made network requests: {requests:?}"
    );

    // A screenshot of the top of the page has text and the first charts.
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let r = headless(
        &browser,
        dir.path(),
        &index,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".to_string(),
            "--hide-scrollbars".to_string(),
        ],
    );
    assert!(r.ok, "chromium failed: {}", r.stderr);
    let (w, h, inked) = decode(&shot);
    assert_eq!((w, h), (1280, 2000));
    assert!(
        inked > 0.05,
        "the screenshot is nearly blank: {:.1}% inked",
        inked * 100.0
    );
}
