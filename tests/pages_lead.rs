//! Pages that lead with their point (issue 36): a session page folds a run
//! of one misfire into one line so its chat comes first, its timeline has
//! a token scale, the index of a folder says what each session was and
//! sorts by any column, and neither the index nor the sweep report is
//! wider than a 1,280-pixel window. In headless Chromium, on the shared
//! real logs.

use crate::common::chromium::{chromium, probe};
use crate::common::{ok, run};

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

const SOURCES: [&str; 5] = [
    "claude-code/spotter",
    "claude-code/eduardodmb",
    "claude-code/xiaomoziyi",
    "claude-code/4thehalibit",
    "claude-code/kaceybui",
];

/// The pages of a folder of sessions, written into `out`.
fn pages(source: &Path, out: &Path) {
    pages_with(source, out, &[]);
}

/// [`pages`] with more flags.
fn pages_with(source: &Path, out: &Path, more: &[&str]) {
    let mut args = vec![
        "transcript".as_ref(),
        "show".as_ref(),
        source.as_os_str(),
        "--html".as_ref(),
        out.as_os_str(),
    ];
    args.extend(more.iter().map(|a| std::ffi::OsStr::new(*a)));
    ok(run(&args));
}

/// The text of each cell of each row of an index, by row (HTML escapes
/// left as they are: the tests compare digits and ASCII names).
fn index_rows(index: &str) -> Vec<Vec<String>> {
    let body = &index[index.find("<tbody>").expect("a body")..];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|c| {
                    let inner = &c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()];
                    // A link's text, else the cell's.
                    match inner.find("<a ") {
                        Some(a) => {
                            let t = &inner[a..];
                            t[t.find('>').unwrap() + 1..t.find("</a>").unwrap()].to_string()
                        }
                        None => inner.to_string(),
                    }
                })
                .collect()
        })
        .collect()
}

/// The page's own data, as its script reads it.
fn page_data(page: &Path) -> Value {
    let html = fs::read_to_string(page).unwrap();
    let tag = "<script type=\"application/json\" id=\"session-data\">";
    let at = html.find(tag).expect("the data") + tag.len();
    let end = at + html[at..].find("</script>").unwrap();
    serde_json::from_str(&html[at..end]).expect("the data is JSON")
}

/// The header of the index's column `name`, by its position.
fn column(index: &str, name: &str) -> usize {
    let head = &index[index.find("<thead><tr>").unwrap() + 11..index.find("</thead>").unwrap()];
    head.split("<th")
        .skip(1)
        .position(|h| h[h.find('>').unwrap() + 1..].starts_with(&format!("{name}</th>")))
        .unwrap_or_else(|| panic!("no column {name} in {head}"))
}

/// Every shared Claude Code folder's pages under `root`, and the page of
/// the session with the most misfires among them with that count.
fn most_misfires(root: &Path) -> (PathBuf, usize) {
    let mut best: Option<(PathBuf, usize)> = None;
    for (k, source) in SOURCES.iter().enumerate() {
        let out = root.join(format!("set{k}"));
        // A window given, smaller than these sessions' own: under it they
        // misfire hundreds of times, what the folding is for.
        pages_with(
            &crate::common::shared_data(source),
            &out,
            &["--max-tokens", "120000"],
        );
        let index = fs::read_to_string(out.join("index.html")).unwrap();
        let misfires = column(&index, "misfires");
        for (row, line) in index_rows(&index)
            .iter()
            .zip(index.split("<tr><td").skip(1))
        {
            let n: usize = row[misfires].parse().unwrap();
            let href = &line[line.find("href=\"").unwrap() + 6..];
            let href = &href[..href.find('"').unwrap()];
            if best.as_ref().is_none_or(|b| n > b.1) {
                best = Some((out.join(href), n));
            }
        }
    }
    best.expect("some session")
}

/// Runs of one kind of misfire over consecutive requests, as `(kind,
/// first, last, count)`, in the order of their first request.
fn runs(data: &Value) -> Vec<(String, u64, u64, usize)> {
    let mut runs: Vec<(String, u64, u64, usize)> = Vec::new();
    for f in data["misfires"].as_array().unwrap() {
        let (kind, r) = (f["kind"].as_str().unwrap(), f["request"].as_u64().unwrap());
        match runs.iter_mut().rev().find(|x| x.0 == kind) {
            Some(x) if x.2 + 1 == r => {
                x.2 = r;
                x.3 += 1;
            }
            _ => runs.push((kind.to_string(), r, r, 1)),
        }
    }
    runs.sort_by_key(|x| x.1);
    runs
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_session_with_the_most_misfires_folds_each_run_into_one_line_above_its_chat() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the session page test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (page, counted) = most_misfires(tmp.path());
    let data = page_data(&page);
    let misfires = data["misfires"].as_array().unwrap().len();
    // The page: hundreds of misfires, three or so a request.
    assert!(
        counted >= 300 && misfires >= 300,
        "{counted}, {misfires}: {page:?}"
    );
    let expected = runs(&data);
    assert!(expected.len() < 20, "{expected:?}");
    let got = probe(
        &browser,
        &page,
        1280,
        "var lines = doc.querySelectorAll('#misfires > ul > li');\
         var out = [];\
         lines.forEach(function (li) {\
           var d = li.querySelector('details');\
           if (!d) { out.push('one|' + li.textContent); return; }\
           var shut = d.getBoundingClientRect().height;\
           d.open = true;\
           out.push(d.querySelector('summary').textContent + '|' + d.querySelectorAll('li').length + '|' + shut + '|' + d.getBoundingClientRect().height);\
           d.open = false;\
         });\
         out.push('chat|' + Math.round(doc.getElementById('m0').getBoundingClientRect().top));\
         return out.join('\\n');",
    );
    let lines: Vec<&str> = got.lines().collect();
    let (chat, lines) = lines.split_last().unwrap();
    assert_eq!(lines.len(), expected.len(), "{got}\n{expected:?}");
    let kinds = &data["misfire_kinds"];
    for (line, (kind, from, to, n)) in lines.iter().zip(&expected) {
        let parts: Vec<&str> = line.split('|').collect();
        if *n == 1 {
            assert_eq!(parts[0], "one", "{line}");
            assert!(parts[1].contains(&format!("at request {from}:")), "{line}");
            continue;
        }
        assert_eq!(
            parts[0],
            format!(
                "requests {from}–{to}: {}, at each of {n} requests",
                kinds[kind.as_str()].as_str().unwrap()
            ),
            "{got}"
        );
        // Folded: one line high until it is opened, then all its requests
        // are listed, a line each.
        assert_eq!(parts[1], n.to_string(), "{line}");
        let (shut, open) = (
            parts[2].parse::<f64>().unwrap(),
            parts[3].parse::<f64>().unwrap(),
        );
        assert!(shut > 0.0 && shut < 30.0, "{line}");
        assert!(open > shut * *n as f64, "{line}");
    }
    // The chat's first message is in the first window (900 px high).
    let top: i64 = chat.strip_prefix("chat|").unwrap().parse().unwrap();
    assert!(top < 900, "the chat starts at {top} px");
}

/// `50k` as 50000.
fn tick_value(t: &str) -> f64 {
    match t.strip_suffix('k') {
        Some(k) => k.parse::<f64>().unwrap() * 1e3,
        None => match t.strip_suffix('M') {
            Some(m) => m.parse::<f64>().unwrap() * 1e6,
            None => t.parse().unwrap(),
        },
    }
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_timeline_has_a_token_scale_up_to_its_tallest_request() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the session page test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log = crate::common::shared_data("claude-code/spotter")
        .join("4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
    let page = tmp.path().join("page.html");
    ok(run(&[
        "transcript",
        "show",
        log.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]));
    let data = page_data(&page);
    let got = probe(
        &browser,
        &page,
        1280,
        "var svg = doc.querySelector('#timeline svg').getBoundingClientRect();\
         return Array.prototype.map.call(doc.querySelectorAll('#timeline .tick.y'), function (t) {\
           var r = t.getBoundingClientRect();\
           return t.textContent + '|' + ((r.top + r.bottom) / 2 - svg.top) / svg.height;\
         }).join('\\n');",
    );
    let ticks: Vec<(f64, f64)> = got
        .lines()
        .map(|l| {
            let (v, at) = l.split_once('|').unwrap();
            (tick_value(v), at.parse().unwrap())
        })
        .collect();
    assert!(ticks.len() >= 3, "{got}");
    let top = data["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["before"].as_f64().unwrap())
        .chain(
            data["recorded"]["requests"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r["prompt"].as_f64()),
        )
        .fold(data["max"].as_f64().unwrap(), f64::max);
    let step = ticks[1].0 - ticks[0].0;
    assert_eq!(ticks[0].0, 0.0, "{got}");
    for (k, (v, at)) in ticks.iter().enumerate() {
        assert_eq!(*v, step * k as f64, "evenly spaced: {got}");
        // Each label stands where its value is on the chart (the chart's
        // bars reach (H - 6) / H of its height at `top`).
        let want = 1.0 - v / top * (134.0 / 140.0);
        assert!((at - want).abs() < 0.03, "{v} at {at}, not {want}: {got}");
    }
    let last = ticks.last().unwrap().0;
    assert!(last <= top && last + step > top, "{last} + {step} vs {top}");
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_index_says_what_each_session_was_and_sorts_by_a_clicked_column() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the index test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let source = crate::common::shared_data("claude-code/spotter");
    pages(&source, &tmp.path().join("pages"));
    let page = tmp.path().join("pages").join("index.html");
    let index = fs::read_to_string(&page).unwrap();
    let rows = index_rows(&index);
    assert!(
        index.contains(&format!(
            "<title>{} sessions from {}</title>",
            rows.len(),
            source.display()
        )),
        "{}",
        &index[..600]
    );
    for name in [
        "session",
        "began",
        "project",
        "first prompt",
        "requests",
        "compactions by the agent",
        "compactions replayed",
        "misfires",
        "recorded cost",
    ] {
        column(&index, name);
    }
    // The session the other tests open: its date, project, prompt, and
    // its id cut to eight digits.
    let main = rows
        .iter()
        .find(|r| r[0] == "cc-4d5611e5…")
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(main[column(&index, "began")], "2026-02-12 16:02");
    assert_eq!(main[column(&index, "project")], "spotter-dov");
    assert!(
        main[column(&index, "first prompt")].starts_with("Work on bead spotter-dov."),
        "{main:?}"
    );
    let requests = column(&index, "requests");
    let before: Vec<u64> = rows.iter().map(|r| r[requests].parse().unwrap()).collect();
    let probe_sort = format!(
        "var th = doc.querySelectorAll('#sessions th')[{requests}];\
         function col() {{ return Array.prototype.map.call(doc.querySelectorAll('#sessions tbody tr'),\
           function (r) {{ return r.cells[{requests}].textContent; }}).join(','); }}\
         th.click(); var up = col() + '|' + th.getAttribute('aria-sort');\
         th.click(); return up + '\\n' + col() + '|' + th.getAttribute('aria-sort');"
    );
    let got = probe(&browser, &page, 1280, &probe_sort);
    let parse = |l: &str| -> (Vec<u64>, String) {
        let (v, dir) = l.split_once('|').unwrap();
        (
            v.split(',').map(|n| n.parse().unwrap()).collect(),
            dir.to_string(),
        )
    };
    let mut lines = got.lines();
    let (up, up_dir) = parse(lines.next().unwrap());
    let (down, down_dir) = parse(lines.next().unwrap());
    let mut sorted = before.clone();
    sorted.sort();
    assert_ne!(before, sorted, "the folder's order is not already sorted");
    assert_eq!((up, up_dir.as_str()), (sorted.clone(), "ascending"));
    sorted.reverse();
    assert_eq!((down, down_dir.as_str()), (sorted, "descending"));
}

/// `document.documentElement.scrollWidth` of `page` in a 1,280-pixel window.
fn width_at_1280(browser: &Path, page: &Path) -> u64 {
    probe(
        browser,
        page,
        1280,
        "return doc.documentElement.scrollWidth;",
    )
    .parse()
    .unwrap()
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_index_and_the_report_fit_a_1280_pixel_window() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the width test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The folder with the most sessions and the longest prompts and names.
    for source in ["claude-code/spotter", "claude-code/eduardodmb"] {
        let out = tmp.path().join(source.replace('/', "-"));
        pages(&crate::common::shared_data(source), &out);
        let w = width_at_1280(&browser, &out.join("index.html"));
        assert!(w <= 1280, "{source}'s index is {w} px wide");
    }
    // The report of imported sessions, with the recorded bill's tables.
    let report = tmp.path().join("report");
    ok(run(&[
        "sweep".as_ref(),
        crate::common::shared_data("claude-code/spotter").as_os_str(),
        "--report".as_ref(),
        report.as_os_str(),
    ]));
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<table class=\"bill\">"), "the bill's table");
    let w = width_at_1280(&browser, &report.join("index.html"));
    assert!(w <= 1280, "the report is {w} px wide");
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_report_names_its_cost_model_once_and_writes_money_one_way() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report");
    ok(run(&[
        "sweep".as_ref(),
        crate::common::shared_data("claude-code/spotter").as_os_str(),
        "--report".as_ref(),
        report.as_os_str(),
    ]));
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        html.contains("<dt>Cost model</dt><dd class=\"cost-note\">price = "),
        "{html}"
    );
    assert!(!html.to_lowercase().contains("cost model: cost model"));
    // The recorded run is kept: no saving, said as such.
    assert!(
        html.contains("<dt>saving in sample</dt><dd>none: the verdict keeps the baseline</dd>"),
        "{}",
        &html[html.find("saving in sample").unwrap()..][..200]
    );
    // Every amount in dollars has two decimals (the prices per million
    // tokens are rates, written as the terminal writes them).
    let prices = html.find("<dt>Prices</dt>").unwrap();
    let outside_prices = format!(
        "{}{}",
        &html[..prices],
        &html[prices + html[prices..].find("</dd>").unwrap()..]
    );
    let mut amounts = 0;
    for (at, _) in outside_prices.match_indices('$') {
        let rest = &outside_prices[at + 1..];
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
            .collect();
        let digits = digits.trim_end_matches(['.', ',']);
        if digits.is_empty() {
            continue;
        }
        amounts += 1;
        let cents = digits.rsplit_once('.').map(|(_, c)| c.len());
        assert_eq!(
            cents,
            Some(2),
            "${digits} in …{}…",
            &outside_prices[at.saturating_sub(60)..at + 20]
        );
    }
    assert!(amounts > 10, "{amounts} amounts");
}
