//! The report: every chart as a valid PNG, one self-contained `index.html`
//! with every chart inline, the numbers behind the charts, the choice of
//! config and sessions, the errors, and the page in headless Chromium
//! (every chart in the rendered DOM, a screenshot with content, and no
//! request leaving the page).
#![cfg(feature = "full")]

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::chromium::{chromium, headless, page_requests};
use common::*;
use polars::prelude::DataFrame;
use smith_calibrate::engine::{Budget, Engine, Stage};
use smith_calibrate::policy::Policy;
use smith_calibrate::replay;
use smith_calibrate::report::context_curve::ContextCurve;
use smith_calibrate::report::cost_loss::CostLoss;
use smith_calibrate::report::heatmap::Heatmap;
use smith_calibrate::report::policies::{Comparison, COLUMNS};
use smith_calibrate::report::{Chart, Loss, Metric, Selection, SelectionError, SweepOutput};
use smith_calibrate::sweep::figures;
use smith_calibrate::sweep::units::TokenUnits;
use smith_calibrate::transcript::{Block, BlockType, Message, Role};

// ---------------------------------------------------------------- helpers

/// A session of `turns` real turns that makes every stage fire under a
/// window of a few thousand tokens: thinking, an image now and then,
/// repeated reads, large results. `seed` varies the sizes.
pub(crate) fn session(turns: usize, seed: usize) -> Vec<Arc<Message>> {
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

const NAMES: [&str; 5] = ["alpha", "beta", "gamma", "delta", "epsilon"];

/// Five sessions swept over a small grid (2 × 2 × 2 configs and smith's
/// defaults) into `<tmp>/sweep`.
struct Fixture {
    tmp: tempfile::TempDir,
}

/// Runs `sweep` over `sessions` at a 4000-token window with `flags`, each
/// of `outputs` a flag and its directory, and checks that it succeeded.
fn sweep_sessions(sessions: &Path, flags: &[&str], outputs: &[(&str, &Path)]) {
    let mut command = bin();
    command
        .arg("sweep")
        .arg(sessions)
        .args(["--max-tokens", "4000"])
        .args(flags);
    for (flag, dir) in outputs {
        command.arg(flag).arg(dir);
    }
    let o = output(&mut command);
    assert!(o.status.success(), "sweep failed: {}", stderr(&o));
}

/// Runs `report` on the sweep in `sweep` into `out` with `extra` flags,
/// checks that it succeeded, and gives `out` back.
fn report_of(sweep: &Path, out: PathBuf, extra: &[&str]) -> PathBuf {
    let o = output(
        bin()
            .arg("report")
            .arg(sweep)
            .arg("--out")
            .arg(&out)
            .args(extra),
    );
    assert!(o.status.success(), "report failed: {}", stderr(&o));
    out
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let sessions = tmp.path().join("sessions");
        for (i, name) in NAMES.iter().enumerate() {
            write_session(&sessions, name, &session(10 + 4 * i, i + 1));
        }
        sweep_sessions(
            &sessions,
            &[
                "--compact-at",
                "0.6,0.8",
                "--compact-to",
                "0.3,0.5",
                "--summary-tokens",
                "0,200",
            ],
            &[("--out", &tmp.path().join("sweep"))],
        );
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
        report_of(&self.sweep(), self.tmp.path().join(name), extra)
    }
}

/// Like [`session`], with something worth needing again: every result ends
/// with a path and a number of its own, past any head a truncation keeps,
/// and two turns later the assistant names that path, so a policy that cut
/// or removed the result lost something the session used afterwards.
fn policy_session(turns: usize, seed: usize) -> Vec<Arc<Message>> {
    let path = |t: usize| format!("src/mod_{seed}/item_{t}.rs:{}", 40_000 + t * 7 + seed);
    let mut h = Vec::new();
    for t in 0..turns {
        h.push(user(&format!(
            "turn {t}: {}",
            filler_str(60 + (t * 37 + seed * 11) % 150)
        )));
        let id = format!("c{t}");
        let args = format!("{{\"path\":\"src/f{}.rs\"}}", (t + seed) % 3);
        h.push(assistant_blocks(vec![
            thinking(&filler_str(100 + (t * 13 + seed) % 200), "sig"),
            Block::tool_use(&id, "read_file", &args),
        ]));
        let size = 600 + (t * 7919 + seed * 104_729) % (2600 + seed * 500);
        let mut text = filler(size);
        text.extend_from_slice(format!("\nsee {}\n", path(t)).as_bytes());
        h.push(arc(Message::new(
            Role::Tool,
            vec![result_block(&id, &text)],
            false,
            None,
        )));
        let looked_back = if t >= 2 {
            format!("; back to {}", path(t - 2))
        } else {
            String::new()
        };
        h.push(assistant(&format!("done with turn {t}{looked_back}")));
    }
    h
}

/// Five sessions swept over three policies (smith, masking, codex) and two
/// windows into `<tmp>/sweep`: smith's 2 × 2 grid and defaults, masking
/// with two windows × two values of M, codex with two windows and a cap
/// small enough to cut results on arrival.
struct PolicyFixture {
    tmp: tempfile::TempDir,
}

impl PolicyFixture {
    fn new() -> PolicyFixture {
        let tmp = tempfile::tempdir().unwrap();
        let sessions = tmp.path().join("sessions");
        for (i, name) in NAMES.iter().enumerate() {
            write_session(&sessions, name, &policy_session(10 + 4 * i, i + 1));
        }
        let o = output(
            bin()
                .args(["sweep"])
                .arg(&sessions)
                .args([
                    "--policy",
                    "smith,masking,codex",
                    "--max-tokens",
                    "4000,8000",
                    "--compact-at",
                    "0.6,0.8",
                    "--mask-window",
                    "2,5",
                    "--codex-cap-bytes",
                    "2048",
                    "--out",
                ])
                .arg(tmp.path().join("sweep")),
        );
        assert!(o.status.success(), "sweep failed: {}", stderr(&o));
        PolicyFixture { tmp }
    }

    fn sweep(&self) -> PathBuf {
        self.tmp.path().join("sweep")
    }

    fn report(&self, name: &str, extra: &[&str]) -> PathBuf {
        report_of(&self.sweep(), self.tmp.path().join(name), extra)
    }
}

/// `configs.csv` of a sweep folder.
fn configs_csv(sweep: &Path) -> DataFrame {
    read_csv(&sweep.join("configs.csv"))
}

fn column_str(frame: &DataFrame, name: &str) -> Vec<String> {
    frame
        .column(name)
        .unwrap_or_else(|_| panic!("no column {name}"))
        .str()
        .unwrap()
        .into_iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect()
}

/// The part of `html` from `start` to the first `end` after it.
fn between<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in the page"));
    let rest = &html[from..];
    &rest[..rest
        .find(end)
        .unwrap_or_else(|| panic!("no {end} after {start}"))]
}

/// The rows of a policy table: each row's `data-policy` and the exact
/// values (`title`) of its cells, in column order.
fn policy_rows(table: &str) -> Vec<(String, Vec<f64>)> {
    table
        .split("<tr class=\"policy")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap()];
            let policy = attribute_values(row, "data-policy")[0].to_string();
            let values = attribute_values(row, "title")
                .into_iter()
                .map(|v| v.parse::<f64>().unwrap())
                .collect();
            (policy, values)
        })
        .collect()
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

/// Checks that the `index.html` of the report in `out` loads nothing from
/// outside, links only to its own anchors, and holds one inline SVG per PNG
/// beside it, with the same names.
fn assert_self_contained(out: &Path) {
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
    assert_eq!(charts, pngs(out), "one inline SVG per PNG, same names");
    assert_eq!(
        html.matches("<svg").count(),
        charts.len(),
        "exactly one <svg> per chart"
    );
    assert_eq!(html.matches("</svg>").count(), charts.len());
    assert!(html.contains("@media print"), "no print styles");
}

#[test]
fn index_html_is_one_self_contained_file_with_an_inline_svg_per_chart() {
    let f = Fixture::new();
    let out = f.report("report", &[]);
    assert_self_contained(&out);
    // smith alone: nothing to compare policies with.
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        !html.contains("id=\"policies\""),
        "a Policies section for smith alone"
    );
    assert!(!pngs(&out).contains("policies"));
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
            .matches("<span class=\"mark\">baseline</span>")
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
    let sent = data.per_session(figures::Metric::TokensSent).unwrap();
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
    // Asked for, not recommended: compared, and said to be so.
    assert!(html.contains(&format!(
        "Compared: <strong>{}</strong> (rank 2 of 9",
        second.label
    )));
    assert!(html.contains("not recommended: see the verdict"));
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
    let o = output(
        bin()
            .arg("report")
            .arg(f.sweep())
            .args(["--session", "nosuch", "--out"])
            .arg(f.tmp.path().join("x")),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_text(&scrub(&stderr(&o), f.tmp.path()), "smith-calibrate: --session \"nosuch\": the sweep has no session with that label or transcript path; its sessions include \"alpha\", \"beta\", \"delta\", \"epsilon\", \"gamma\"\n");
    let o = output(
        bin()
            .arg("report")
            .arg(f.sweep())
            .args(["--config", "99", "--out"])
            .arg(f.tmp.path().join("x")),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_text(&scrub(&stderr(&o), f.tmp.path()), "smith-calibrate: --config 99: the sweep ranked 9 configs; give a rank from 1 to 9 or a config label\n");
    assert!(
        !f.tmp.path().join("x").exists(),
        "nothing written on a usage error"
    );
}

#[test]
fn a_folder_without_sweep_output_says_which_command_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let o = output(
        bin()
            .arg("report")
            .arg(tmp.path())
            .arg("--out")
            .arg(tmp.path().join("r")),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_text(&scrub(&err, tmp.path()), "smith-calibrate: <DIR>/summary.json: cannot read it; is <DIR> the folder `smith-calibrate sweep --out` wrote?: No such file or directory (os error 2)\n");
    assert!(!tmp.path().join("r").exists());
}

#[test]
fn a_session_moved_since_the_sweep_is_reported_and_the_rest_still_written() {
    let f = Fixture::new();
    fs::remove_dir_all(f.sessions().join("beta")).unwrap();
    let out = f.tmp.path().join("moved");
    let o = output(
        bin()
            .arg("report")
            .arg(f.sweep())
            .args(["--session", "beta", "--session", "alpha", "--out"])
            .arg(&out),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_fixture(
        &scrub(&stderr(&o), f.tmp.path()),
        "report/session_moved.stderr",
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
    let curve = ContextCurve::new(
        "s",
        "context-s".into(),
        &messages,
        chosen,
        base,
        &TokenUnits::default(),
    );

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
    sweep_sessions(
        &f.sessions(),
        &[
            "--compact-at",
            "0.5,0.7",
            "--compact-to",
            "0.3,0.5",
            "--rank-by",
            "price",
        ],
        &[("--out", tmp.path())],
    );
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
                config.map(|c| c.total(figures::Metric::TokensSent)),
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
    sweep_sessions(
        &f.sessions(),
        &["--compact-at", "0.6,0.8"],
        &[("--report", &dir)],
    );
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
    sweep_sessions(
        &f.sessions(),
        &[],
        &[("--out", &data), ("--report", &report)],
    );
    assert!(data.join("summary.json").is_file() && !data.join("index.html").exists());
    assert!(report.join("index.html").is_file() && !report.join("summary.json").exists());
}

// ---------------------------------------------------------------- policies

#[test]
fn every_config_reads_back_as_the_policy_and_knobs_the_sweep_ran() {
    let f = PolicyFixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    assert_eq!(
        data.policies(),
        vec![Policy::Smith, Policy::Masking, Policy::Codex]
    );
    assert!(data.compares_policies());
    // 4 of smith's grid and its defaults, 2 windows × 2 M, 2 windows.
    assert_eq!(data.configs.len(), 11);
    let csv = configs_csv(&f.sweep());
    let mask = column_f64(&csv, "mask_window");
    let cap = column_f64(&csv, "codex_cap_bytes");
    for (r, i) in column_f64(&csv, "config").into_iter().enumerate() {
        let c = &data.configs[i as usize];
        // The label the sweep wrote is the label of the setup read back.
        assert_eq!(c.setup.label(), c.label, "config {i}");
        match c.setup.policy {
            Policy::Masking => assert_eq!(c.setup.knobs.mask_window as f64, mask[r]),
            Policy::Codex => assert_eq!(c.setup.knobs.codex_cap_bytes as f64, cap[r]),
            _ => assert!(mask[r].is_nan() && cap[r].is_nan()),
        }
    }
    assert_eq!(data.windows(), vec![4000, 8000, 120_000]);
}

#[test]
fn a_policy_is_described_with_the_values_its_knobs_took_in_the_sweep() {
    let f = PolicyFixture::new();
    let out = f.report("report", &[]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    // The fixture caps codex at 2048 bytes; its default is 10 KiB.
    assert!(
        html.contains("capped on arrival at 2 KiB and 256 lines"),
        "{html}"
    );
    assert!(!html.contains("10 KiB"));
    // Knobs left at their defaults are described at them.
    assert!(html.contains("at 90% of the window"));
}

#[test]
fn policy_table_has_one_row_per_policy_with_the_numbers_of_configs_csv() {
    let f = PolicyFixture::new();
    let out = f.report("report", &[]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let csv = configs_csv(&f.sweep());
    let policy = column_str(&csv, "policy");
    let rank = column_f64(&csv, "rank");
    let window = column_f64(&csv, "max_tokens");
    // The row of configs.csv each policy's comparison row must show: its
    // lowest rank, over all windows or at one.
    let best = |p: &str, w: Option<f64>| -> usize {
        (0..policy.len())
            .filter(|&r| policy[r] == p && w.is_none_or(|w| window[r] == w))
            .min_by(|&a, &b| rank[a].total_cmp(&rank[b]))
            .unwrap_or_else(|| panic!("no {p} row"))
    };
    let check = |rows: &[(String, Vec<f64>)], w: Option<f64>| {
        for (p, values) in rows {
            let r = best(p, w);
            assert_eq!(values.len(), COLUMNS.len(), "{p}: one value per column");
            for (name, v) in COLUMNS.iter().zip(values) {
                let expected = column_f64(&csv, name.name())[r];
                assert!(
                    (v - expected).abs() <= 1e-9 * expected.abs().max(1.0),
                    "{p} {name}: the page says {v}, configs.csv {expected}"
                );
            }
        }
    };

    let section = between(&html, "<section id=\"policies\">", "</section>");
    let table = between(section, "<table id=\"policy-best\">", "</table>");
    let rows = policy_rows(table);
    let names: Vec<&str> = rows.iter().map(|(p, _)| p.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        vec!["codex", "masking", "smith"],
        "one row per policy"
    );
    let ranks: Vec<f64> = names.iter().map(|p| rank[best(p, None)]).collect();
    assert!(
        ranks.windows(2).all(|w| w[0] < w[1]),
        "best first: {ranks:?}"
    );
    check(&rows, None);
    // The shown text is the value as the table writes it, with its change.
    for name in COLUMNS {
        let fmt = name.unit().format();
        let r = best("codex", None);
        let v = column_f64(&csv, name.name())[r];
        assert!(
            table.contains(&format!("title=\"{v}\">{}<span class=\"delta", fmt(v))),
            "codex {name}: {} not in the table",
            fmt(v)
        );
    }

    // Several windows: like against like, one group per window of the
    // sweep's policies (120k holds smith's defaults alone: no group).
    let by_window = between(section, "<table id=\"policy-windows\">", "</table>");
    let groups: Vec<&str> = by_window.split("<tr class=\"group\">").skip(1).collect();
    assert_eq!(groups.len(), 2, "a group for 4k and one for 8k");
    for (group, w) in groups.iter().zip([4000.0, 8000.0]) {
        assert!(
            group.contains(&format!("{}k window", w / 1000.0)),
            "{group}"
        );
        let rows = policy_rows(group);
        assert_eq!(rows.len(), 3, "three policies at {w}");
        check(&rows, Some(w));
    }
    // The headline names the cheapest of the rows.
    let cheapest = rows
        .iter()
        .min_by(|a, b| a.1[0].total_cmp(&b.1[0]))
        .map(|(p, _)| p.clone())
        .unwrap();
    assert!(
        section.contains(&format!("Cheapest: <strong>{cheapest}</strong>"))
            || section.contains(&format!("too: <strong>{cheapest}</strong>")),
        "the headline"
    );
}

#[test]
fn policy_chart_is_a_valid_png_and_inline_svg_with_one_colour_per_policy() {
    let f = PolicyFixture::new();
    let out = f.report("report", &[]);
    assert!(pngs(&out).contains("policies"), "{:?}", pngs(&out));
    let (w, h, inked) = decode(&out.join("policies.png"));
    assert_eq!((w, h), smith_calibrate::report::SIZE);
    assert!(inked > 0.02 && inked < 0.9, "{:.1}% inked", inked * 100.0);
    assert_self_contained(&out);

    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let section = between(&html, "<section id=\"policies\">", "</section>");
    let svg = between(section, "data-chart=\"policies\"", "</svg>");
    for p in ["smith", "masking", "codex"] {
        assert!(svg.contains(&format!(">\n{p}\n<")), "{p} not in the legend");
        let colour = smith_calibrate::report::palette::hex(
            smith_calibrate::report::palette::policy(Policy::parse(p).unwrap()),
        );
        assert!(
            svg.to_lowercase().contains(&colour),
            "no bar in {p}'s colour {colour}"
        );
    }
    for title in ["Price (USD)", "Results still needed", "Cache writes"] {
        assert!(svg.contains(title), "no panel {title}");
    }
    assert!(html.contains("<a href=\"#policies\">Policies compared</a>"));
    // What was swept names each policy's knobs and the values they took.
    let swept = between(&html, "<section id=\"swept\">", "</section>");
    assert!(swept.contains("<code>mask_window</code> 2, 5"), "{swept}");
    assert!(
        swept.contains("<code>codex_cap_bytes</code> 2048"),
        "{swept}"
    );
    // The page's tables swatch each policy in its chart colour, by a class
    // of the page's style sheet (the policy allows no style attribute).
    assert!(section.contains("<span class=\"swatch policy-codex\"></span>"));
    assert!(html.contains(&format!(
        ".swatch.policy-codex {{ background: {}; }}",
        smith_calibrate::report::palette::hex(smith_calibrate::report::palette::policy(
            Policy::Codex
        ))
    )));
    assert!(!html.contains(" style=\""), "a style attribute");
}

/// The context curve of a config of `policy` against its replay under the
/// policy's own compactor, and against smith's engine under the same
/// window, which must differ.
fn assert_curve_replays_policy(data: &SweepOutput, policy: Policy, messages: &[Arc<Message>]) {
    let row = &data.configs[data.best_of(policy, None).unwrap()];
    assert_eq!(row.setup.policy, policy);
    let base = &data.configs[data.baseline().unwrap()];
    let curve = ContextCurve::new(
        "s",
        "context-s".into(),
        messages,
        row,
        base,
        &TokenUnits::default(),
    );

    let compactor = row.setup.compactor();
    let (mut sent, mut marks, mut arrivals) = (Vec::new(), Vec::new(), Vec::new());
    let facts = replay::replay_with(messages, compactor.as_ref(), |r, _, _| {
        sent.push(r.after);
        if !r.stages.is_empty() {
            marks.push((r.request, r.stages.clone()));
        }
        if r.effects.results_truncated > 0 && !r.stages.contains(&Stage::Truncate) {
            arrivals.push(r.request);
        }
        true
    });
    assert_eq!(curve.chosen, sent, "{policy}: the requests sent");
    assert_eq!(curve.chosen.iter().sum::<i64>(), facts.tokens_sent);
    let curve_marks: Vec<_> = curve
        .marks
        .iter()
        .map(|m| (m.request, m.stages.clone()))
        .collect();
    assert_eq!(curve_marks, marks, "{policy}: the compactions");
    assert_eq!(curve.capped_on_arrival, arrivals);

    let smith = replay::replay(messages, &Engine::new(row.config));
    assert_ne!(
        facts.tokens_sent, smith.tokens_sent,
        "{policy}: smith's engine under the same window would send the same"
    );
    // The baseline is still smith's defaults, replayed by smith's engine.
    let base_facts = replay::replay(messages, &Engine::new(base.config));
    assert_eq!(curve.baseline.iter().sum::<i64>(), base_facts.tokens_sent);
}

#[test]
fn context_curve_of_another_policy_replays_that_policy_not_smiths_engine() {
    let f = PolicyFixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    let messages = policy_session(18, 4);
    assert_curve_replays_policy(&data, Policy::Masking, &messages);
    assert_curve_replays_policy(&data, Policy::Codex, &messages);

    // Codex cuts results as they arrive: the curve shows where.
    let codex = &data.configs[data.best_of(Policy::Codex, None).unwrap()];
    let base = &data.configs[data.baseline().unwrap()];
    let curve = ContextCurve::new(
        "s",
        "context-s".into(),
        &messages,
        codex,
        base,
        &TokenUnits::default(),
    );
    assert!(!curve.capped_on_arrival.is_empty(), "a 2048-byte cap cuts");
    assert_fixture(&curve.caption(), "report/codex_curve_caption.txt");

    // End to end: the report of a chosen masking config says so.
    let out = f.report("masking", &["--config", "masking", "--session", "gamma"]);
    assert!(pngs(&out).contains("context-gamma"));
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("replayed under masking&#39;s policy"),
        "the context curve's caption"
    );
}

#[test]
fn config_flag_takes_a_policy_for_its_best_config() {
    let f = PolicyFixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    for p in [Policy::Smith, Policy::Masking, Policy::Codex] {
        let sel = Selection::new(&data, Some(p.as_str()), &[]).unwrap();
        let best = data.best_of(p, None).unwrap();
        assert_eq!(sel.chosen, best, "{p}");
        assert!(data
            .configs
            .iter()
            .filter(|c| c.setup.policy == p)
            .all(|c| c.rank >= data.configs[best].rank));
    }
    let err = Selection::new(&data, Some("opencode"), &[]).unwrap_err();
    assert!(
        matches!(&err, SelectionError::NoPolicy { policy, .. } if *policy == Policy::Opencode),
        "{err:?}"
    );
    assert_text(&err.to_string(), "--config \"opencode\": the sweep ran no config of opencode; its policies are smith, masking, codex");
}

#[test]
fn heatmap_holds_only_smiths_configs_when_policies_are_compared() {
    let f = PolicyFixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    let base = data.baseline().unwrap();
    let smith = data.best_of(Policy::Smith, Some(4000)).unwrap();
    let map = Heatmap::new(&data, Metric::Price, smith, base);
    assert_eq!(map.at, vec![0.6, 0.8]);
    assert_eq!(map.to, vec![0.5]);
    for (i, &at) in map.at.iter().enumerate() {
        let c = data
            .configs
            .iter()
            .find(|c| {
                c.setup.policy == Policy::Smith
                    && c.config.max_tokens == 4000
                    && c.config.compact_at == at
            })
            .unwrap();
        assert_eq!(
            map.cells[i][0],
            Some(c.total(figures::Metric::Price)),
            "{at}"
        );
    }
    assert_fixture(&map.caption(), "report/heatmap_caption_smith.txt");

    // A masking config carries smith's defaults in compact_at/compact_to but
    // has no cell: the map falls back to the baseline's slice.
    let masking = data.best_of(Policy::Masking, None).unwrap();
    let map = Heatmap::new(&data, Metric::Price, masking, base);
    assert_eq!(map.chosen, None);
    assert_eq!((map.at.clone(), map.to.clone()), (vec![0.8], vec![0.5]));
    assert_eq!(
        map.cells[0][0],
        Some(data.configs[base].total(figures::Metric::Price))
    );
    assert_fixture(&map.caption(), "report/heatmap_caption_masking.txt");
}

#[test]
fn cost_loss_and_distribution_count_the_loss_asked_for() {
    let f = PolicyFixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    // The measure the verdict gates on, whatever was compared.
    assert_eq!(Loss::DEFAULT.figure(), figures::LOSS_MEASURE);

    let chosen = data.by_rank()[0];
    let needed: f64 = data
        .configs
        .iter()
        .map(|c| c.total(figures::Metric::NeededAgain))
        .sum();
    assert!(
        needed > 0.0,
        "the fixture's sessions need lost results again"
    );
    for loss in [Loss::ResultsMangled, Loss::NeededAgain, Loss::ResultsLost] {
        let chart = CostLoss::new(&data, chosen, Metric::Price, loss);
        for (p, c) in chart.points.iter().zip(&data.configs) {
            assert_eq!(p.loss, c.total(loss.figure()), "{}", loss.figure());
            assert_eq!(p.policy, c.setup.policy);
        }
        // The front is of price against this loss: nothing off it is
        // dominated by nothing.
        for p in chart.points.iter().filter(|p| !p.front) {
            assert!(chart.points.iter().any(|q| q.front
                && q.cost <= p.cost
                && q.loss <= p.loss
                && (q.cost < p.cost || q.loss < p.loss)));
        }
        assert!(chart.by_policy);
    }
    let smith_point = CostLoss::new(&data, chosen, Metric::Price, Loss::NeededAgain)
        .points
        .into_iter()
        .find(|p| p.policy == Policy::Smith && !p.is_baseline)
        .unwrap();
    assert!(
        smith_point.label.starts_with("smith "),
        "{}",
        smith_point.label
    );

    let out = f.report("lost", &["--loss", "results_lost"]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("Tool results lost per session"),
        "the distribution's title"
    );
    let out = f.report("default", &[]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("Tool results still needed per session"));
    assert!(
        html.contains("results still needed (count)"),
        "the cost-loss axis"
    );
}

#[test]
fn comparison_rows_are_each_policys_lowest_rank() {
    let f = PolicyFixture::new();
    let data = SweepOutput::read(&f.sweep()).unwrap();
    let cmp = Comparison::new(&data).unwrap();
    assert_eq!(cmp.best.len(), 3);
    for r in &cmp.best {
        let lowest = data
            .configs
            .iter()
            .filter(|c| c.setup.policy == r.policy)
            .map(|c| c.rank)
            .min()
            .unwrap();
        assert_eq!(data.configs[r.config].rank, lowest, "{}", r.policy);
    }
    let windows: Vec<u64> = cmp.by_window.iter().map(|(w, _)| *w).collect();
    assert_eq!(windows, vec![4000, 8000]);
    for (w, rows) in &cmp.by_window {
        assert!(rows
            .iter()
            .all(|r| data.configs[r.config].config.max_tokens == *w));
    }
}

// ---------------------------------------------------------------- Chromium

#[test]
fn chromium_renders_every_chart_and_the_page_requests_nothing() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the headless browser test");
        return;
    };
    let f = Fixture::new();
    let single = f.report("report", &[]);
    let pf = PolicyFixture::new();
    let compared = pf.report("report", &[]);

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

    // Each report, smith alone and policies compared: every chart in the
    // rendered DOM with its drawing, no request, a screenshot with content.
    for out in [&single, &compared] {
        let index = fs::canonicalize(out.join("index.html")).unwrap();
        let charts = pngs(out);
        if out == &compared {
            assert!(charts.contains("policies"), "{charts:?}");
        }
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
}

/// Pixels darker than near-white in the rectangle `x` × `y` of an RGB(A) PNG.
fn inked_in(path: &Path, x: std::ops::Range<u32>, y: std::ops::Range<u32>) -> usize {
    let decoder = png::Decoder::new(std::io::Cursor::new(fs::read(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let mut inked = 0;
    for row in y {
        for col in x.clone() {
            let at = (row as usize * info.width as usize + col as usize) * channels;
            if buf[at..at + 3].iter().any(|&c| c < 128) {
                inked += 1;
            }
        }
    }
    inked
}

#[test]
fn chart_text_is_drawn_with_the_compiled_in_font_not_a_system_one() {
    let fx = Fixture::new();
    let out = fx.report("font", &[]);
    // The title band (above the plot, centred) holds nothing but the title's
    // glyphs: ink there is rendered text. 26-pixel DejaVu Sans over a
    // 30-odd-character title inks thousands of pixels; an empty band none.
    let (w, _) = smith_calibrate::report::SIZE;
    let title = inked_in(&out.join("cost-loss.png"), w / 4..w * 3 / 4, 0..34);
    assert!(
        title > 1000,
        "title band of cost-loss.png has {title} dark pixels"
    );
    // Nothing links the system font stack: the binary names no fontconfig
    // or freetype library for the dynamic loader to find.
    let binary = fs::read(env!("CARGO_BIN_EXE_smith-calibrate")).unwrap();
    for lib in [&b"libfontconfig"[..], b"libfreetype"] {
        assert!(
            !binary.windows(lib.len()).any(|w| w == lib),
            "the binary refers to {}",
            String::from_utf8_lossy(lib)
        );
    }
}

// ---------------------------------------------------------------- hostile input

/// Markup and script where a report shows text: folder names (no `/`),
/// session names from `session.json`, tool names and their arguments.
const HOSTILE: [&str; 5] = [
    "<img src=x onerror=\"document.title='PWNED-1'\">",
    "\"'><svg onload=\"document.title='PWNED-2'\">",
    "</title></style></script><script>document.title='PWNED-3'</script>",
    "<iframe srcdoc=\"<script>parent.document.title='PWNED-4'</script>\"></iframe>",
    "--><!--<a href=\"javascript:document.title='PWNED-5'\">x</a><style>body{display:none}</style>",
];

/// A compacting session whose tool names, arguments and texts are `evil`.
fn hostile_session(evil: &str, turns: usize) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    for t in 0..turns {
        h.push(user(&format!("{evil} turn {t}: {}", filler_str(200))));
        let id = format!("c{t}");
        let args = serde_json::json!({ "path": evil, "n": t }).to_string();
        h.push(assistant_blocks(vec![
            thinking(&format!("{evil} {}", filler_str(300)), "sig"),
            Block::tool_use(&id, evil, &args),
        ]));
        let mut result = evil.as_bytes().to_vec();
        result.extend_from_slice(&filler(1500 + (t * 613 + turns * 97) % 1800));
        h.push(arc(Message::new(
            Role::Tool,
            vec![result_block(&id, &result)],
            false,
            None,
        )));
        h.push(assistant(&format!("{evil} done {t}")));
    }
    h
}

/// Every `.html` file under `dir`.
fn html_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "html") {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// The report of sessions named, kept and working with markup: every page
/// it writes declares a policy allowing no script but its own, by hash, no
/// style but its own and nothing loaded, the same bytes when drawn again;
/// in headless Chromium nothing of the payloads becomes an element, nothing
/// runs, nothing is requested, and nothing is refused (the hashes match).
#[test]
fn hostile_names_paths_and_tools_render_as_text_and_nothing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp
        .path()
        .join("corpus <b onmouseover=\"document.title='PWNED-0'\">");
    for (i, evil) in HOSTILE.iter().enumerate() {
        let folder = if evil.contains('/') {
            format!("s{i}")
        } else {
            evil.to_string()
        };
        let transcript = write_session(&corpus, &folder, &hostile_session(evil, 14 + 3 * i));
        if evil.contains('/') {
            let meta = serde_json::json!({ "id": format!("s{i}"), "name": evil });
            fs::write(transcript.with_file_name("session.json"), meta.to_string()).unwrap();
        }
    }
    let data = tmp.path().join("data '\"><img src=x onerror=alert(1)>");
    let report = tmp.path().join("report");
    sweep_sessions(
        &corpus,
        &[
            "--compact-at",
            "0.7,0.8",
            "--thrash-window",
            "2",
            // Ranked first, then, is a config of the small window, which
            // misfires: its sessions get pages.
            "--rank-by",
            "tokens_sent",
        ],
        &[("--out", &data)],
    );
    let report = report_of(&data, report, &["--session-pages"]);
    let again = report_of(&data, tmp.path().join("again"), &["--session-pages"]);
    let pages = html_files(&report);
    assert!(
        pages.len() > 1,
        "the index and at least one session page: {pages:?}: {}",
        between(
            &fs::read_to_string(report.join("index.html")).unwrap(),
            "<section id=\"misfires\">",
            "</section>"
        )
    );
    for page in &pages {
        let html = fs::read_to_string(page).unwrap();
        let name = page.strip_prefix(&report).unwrap();
        assert_eq!(
            fs::read_to_string(again.join(name)).unwrap(),
            html,
            "{}: drawn again, other bytes",
            name.display()
        );
        let csp_at = html
            .find("<meta http-equiv=\"Content-Security-Policy\" content=\"")
            .unwrap_or_else(|| panic!("{}: no policy", name.display()));
        assert!(
            csp_at < html.find("<style>").unwrap(),
            "the policy comes first"
        );
        let csp = &html[csp_at..csp_at + html[csp_at..].find("\">").unwrap()];
        assert!(csp.contains("default-src 'none';"), "{csp}");
        assert!(csp.contains("style-src 'sha256-"), "{csp}");
        assert!(!csp.contains("unsafe") && !csp.contains("nonce"), "{csp}");
        assert!(
            !html.contains(" style=\""),
            "{}: a style attribute",
            name.display()
        );
        for evil in HOSTILE {
            assert!(!html.contains(evil), "{}: {evil} as it is", name.display());
        }
        assert!(
            !html.contains("<img") && !html.contains("<iframe") && !html.contains("<svg onload"),
            "{}: a payload became markup",
            name.display()
        );
    }
    let index = fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        index.contains("script-src 'none';"),
        "the report runs no script"
    );
    assert!(
        index.contains("&lt;img src=x onerror=&quot;document.title=&#39;PWNED-1&#39;&quot;&gt;"),
        "a hostile folder name is shown as text"
    );

    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the hostile report test in the browser: SKIPPED");
        return;
    };
    for page in &pages {
        let name = page.strip_prefix(&report).unwrap().display().to_string();
        let dir = tempfile::tempdir().unwrap();
        let r = headless(
            &browser,
            dir.path(),
            &fs::canonicalize(page).unwrap(),
            &[
                "--dump-dom".to_string(),
                "--enable-logging=stderr".to_string(),
                "--v=0".to_string(),
            ],
        );
        assert!(r.ok, "chromium failed: {}", r.stderr);
        let dom = &r.stdout;
        let title = &dom[dom.find("<title>").expect("a title")..];
        let title = &title[..title.find("</title>").unwrap()];
        // A payload that ran would have set the title to its PWNED-n.
        let own = if name == "index.html" {
            "<title>Compaction report: "
        } else {
            "<title>Session "
        };
        assert!(title.starts_with(own), "{name}: a payload ran: {title}");
        let scripts = if name == "index.html" { 0 } else { 2 };
        assert_eq!(
            dom.matches("<script").count(),
            scripts,
            "{name}: the page's own scripts only"
        );
        for tag in ["<img", "<iframe", "<svg onload", "<a href=\"javascript"] {
            assert!(!dom.contains(tag), "{name}: {tag} became an element");
        }
        let requests = page_requests(&r.net_log);
        assert!(requests.is_empty(), "{name}: requests {requests:?}");
        let console: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .collect();
        assert!(console.is_empty(), "{name}: console {console:?}");
    }
}

#[test]
fn report_without_out_writes_beside_the_data_it_reads() {
    let f = Fixture::new();
    let elsewhere = f.tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    let o = output(bin().arg("report").arg(f.sweep()).current_dir(&elsewhere));
    assert!(o.status.success(), "report failed: {}", stderr(&o));
    assert!(f.sweep().join("index.html").is_file());
    assert!(f.sweep().join("configs.parquet").is_file(), "the data stay");
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing in the current folder"
    );
}
