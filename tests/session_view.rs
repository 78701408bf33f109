//! `transcript show --html`: the session page in headless Chromium. It
//! renders the chat, the request timeline and a compaction's ledger with no
//! console error and no request; hostile content stays text and runs nothing;
//! a 10 MB session's load time is measured.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::chromium::{chromium, headless, page_requests};
use common::*;
use serde_json::Value;
use smith_calibrate::transcript::{Block, Message, Role};

/// A session that compacts under a 4000-token window.
fn compacting_session(turns: usize, result_bytes: usize) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    for t in 0..turns {
        h.push(user(&format!("turn {t}: look at src/f{}.rs", t % 3)));
        if t % 5 == 2 {
            h.push(synthetic_user("[harness] keep going"));
        }
        let id = format!("c{t}");
        h.push(assistant_blocks(vec![
            thinking(&filler_str(300), "sig"),
            Block::tool_use(
                &id,
                "read_file",
                &format!("{{\"path\":\"src/f{}.rs\"}}", t % 3),
            ),
        ]));
        h.push(result(&id, &filler(result_bytes + (t * 379) % 1500)));
        h.push(assistant(&format!("done with turn {t}")));
    }
    h
}

/// Writes the page of `messages` under `flags` and returns its path.
fn page(dir: &Path, name: &str, messages: &[Arc<Message>], flags: &[&str]) -> PathBuf {
    let transcript = write_session(&dir.join("sessions"), name, messages);
    let out = dir.join(format!("{name}.html"));
    let mut args = vec![
        "transcript",
        "show",
        transcript.to_str().unwrap(),
        "--html",
        out.to_str().unwrap(),
    ];
    args.extend(flags);
    ok(run(&args));
    out
}

/// Console messages Chromium logged for the page (errors, CSP refusals).
fn console(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

fn dump(browser: &Path, page: &Path, fragment: &str) -> (String, String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let url_page = PathBuf::from(format!("{}{fragment}", page.display()));
    let r = headless(
        browser,
        dir.path(),
        &url_page,
        &[
            "--dump-dom".to_string(),
            "--enable-logging=stderr".to_string(),
            "--v=0".to_string(),
        ],
    );
    assert!(r.ok, "chromium failed: {}", r.stderr);
    let requests = page_requests(&r.net_log);
    (r.stdout, r.stderr, requests)
}

fn load_ms(dom: &str) -> f64 {
    let at = dom
        .find("id=\"load-ms\" data-ms=\"")
        .expect("the page rendered and measured itself");
    let rest = &dom[at + "id=\"load-ms\" data-ms=\"".len()..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

#[test]
fn the_page_is_self_contained_and_declares_a_strict_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let out = page(
        tmp.path(),
        "plain",
        &compacting_session(6, 800),
        &["--max-tokens", "4000"],
    );
    let html = fs::read_to_string(&out).unwrap();
    let csp_at = html
        .find("http-equiv=\"Content-Security-Policy\" content=\"")
        .unwrap();
    let csp = &html[csp_at..html[csp_at..].find("\">").unwrap() + csp_at];
    assert!(csp.contains("default-src 'none';"), "{csp}");
    assert!(csp.contains("script-src 'sha256-"), "{csp}");
    assert!(csp.contains("style-src 'sha256-"), "{csp}");
    assert!(!csp.contains("unsafe") && !csp.contains("nonce"), "{csp}");
    // By hash, not by a nonce: the same session gives the same page.
    let again = page(
        tmp.path(),
        "plain",
        &compacting_session(6, 800),
        &["--max-tokens", "4000"],
    );
    assert_eq!(fs::read(&again).unwrap(), html.as_bytes());
    // The SVG namespace in the script is the only URL; nothing is loaded.
    assert_eq!(
        html.matches("http://").count(),
        html.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(!html.contains("https://") && !html.contains("src=\""));
    assert_eq!(
        html.matches("<script").count(),
        2,
        "one data block and one script"
    );
}

#[test]
fn chromium_shows_the_chat_timeline_and_a_compactions_ledger() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the session page test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let messages = compacting_session(24, 1200);
    let flags = ["--max-tokens", "4000", "--summary-tokens", "1200"];
    let out = page(tmp.path(), "view", &messages, &flags);

    // The compactions the replay reports are the page's markers.
    let transcript = tmp.path().join("sessions/view/transcript.jsonl");
    let mut args = vec!["replay", transcript.to_str().unwrap(), "--trace"];
    args.extend(flags);
    let trace = ok(run(&args));
    let compactions: Vec<Value> = trace
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["strategy"] != "none")
        .collect();
    assert!(compactions.len() >= 2, "the fixture must compact");
    let summarized = compactions
        .iter()
        .find(|v| v["strategy"] == "summarized")
        .expect("a summary in the fixture");
    let truncated = compactions
        .iter()
        .find(|v| v["results_mangled"].as_u64() > Some(0))
        .expect("a truncation in the fixture");

    let (dom, stderr, requests) = dump(&browser, &out, "");
    assert!(
        console(&stderr).is_empty(),
        "console: {:?}",
        console(&stderr)
    );
    assert!(requests.is_empty(), "the page made requests: {requests:?}");
    assert_eq!(
        dom.matches("class=\"compaction").count(),
        compactions.len(),
        "one timeline marker per compaction"
    );
    assert_eq!(
        dom.matches("class=\"after\"").count(),
        trace.lines().count()
    );
    assert!(dom.contains("id=\"m0\""), "the chat is rendered");
    assert!(
        dom.contains("badge synthetic"),
        "synthetic messages are marked"
    );
    assert!(
        dom.contains("<summary>thinking · 303 B</summary>"),
        "thinking is collapsed with its size"
    );
    load_ms(&dom);

    // A summary's ledger: before/after, its stages, what it summarised.
    let r = summarized["request"].as_u64().unwrap();
    let (dom, stderr, _) = dump(&browser, &out, &format!("#r{r}"));
    assert!(
        console(&stderr).is_empty(),
        "console: {:?}",
        console(&stderr)
    );
    let panel = &dom[dom
        .find(&format!("id=\"ledger-{r}\""))
        .expect("the ledger opens")..];
    assert!(panel.contains(&format!("Compaction at request {r}: summarized")));
    assert!(panel.contains(&format!(
        "{} tokens → {} tokens",
        fmt(summarized["before"].as_i64().unwrap()),
        fmt(summarized["after"].as_i64().unwrap())
    )));
    assert!(
        panel.contains("messages replaced by a summary (record #0–#"),
        "{}",
        &panel[..2000.min(panel.len())]
    );
    assert!(
        panel.contains("), turns 1."),
        "{}",
        &panel[..1500.min(panel.len())]
    );

    // A truncation's ledger names the results it cut and their bytes.
    let r = truncated["request"].as_u64().unwrap();
    let (dom, _, _) = dump(&browser, &out, &format!("#r{r}"));
    let panel = &dom[dom
        .find(&format!("id=\"ledger-{r}\""))
        .expect("the ledger opens")..];
    assert!(
        panel.contains("What it cut ("),
        "{}",
        &panel[..1500.min(panel.len())]
    );
    assert!(
        panel.contains("<td>result cut to its head</td><td>read_file</td>")
            || panel.contains("<td>result collapsed to a stub</td><td>read_file</td>")
    );

    // A screenshot to look at.
    let dir = tempfile::tempdir().unwrap();
    let shot = std::env::var_os("SESSION_VIEW_SHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.path().join("shot.png"));
    let url = PathBuf::from(format!("{}#r{}", out.display(), summarized["request"]));
    let r = headless(
        &browser,
        dir.path(),
        &url,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1300,1500".to_string(),
        ],
    );
    assert!(r.ok, "{}", r.stderr);
    assert!(
        fs::metadata(&shot).unwrap().len() > 20_000,
        "the screenshot is nearly empty"
    );
}

/// `1234` as the page prints it: `1,234`.
fn fmt(n: i64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Content a colleague's transcript could carry to attack whoever opens it.
const HOSTILE: [&str; 7] = [
    "</script><script>document.title='PWNED-1'</script>",
    "<img src=x onerror=\"document.title='PWNED-2'\">",
    "<svg onload=\"document.title='PWNED-3'\"></svg>",
    "<a href=\"javascript:document.title='PWNED-4'\">click</a>",
    "\u{2028}\u{2029}'\"--><!--<script>document.title='PWNED-5'</script>",
    "<img src=\"http://example.invalid/leak.png\">",
    "<iframe srcdoc=\"<script>parent.document.title='PWNED-6'</script>\"></iframe>",
];

#[test]
fn hostile_content_renders_as_text_and_nothing_runs() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the hostile content test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut h = Vec::new();
    for (i, evil) in HOSTILE.iter().enumerate() {
        h.push(user(evil));
        let id = format!("c{i}</script>");
        let args = serde_json::json!({ "cmd": evil }).to_string();
        h.push(assistant_blocks(vec![
            thinking(evil, "sig"),
            Block::tool_use(&id, evil, &args),
        ]));
        let mut long = evil.repeat(200).into_bytes();
        long.extend_from_slice(&filler(500));
        h.push(arc(Message::new(
            Role::Tool,
            vec![result_block(
                &id,
                if i % 2 == 0 { evil.as_bytes() } else { &long },
            )],
            false,
            None,
        )));
        h.push(assistant(evil));
    }
    let name = "evil";
    let out = page(tmp.path(), name, &h, &["--max-tokens", "3000"]);
    for fragment in ["", "#r3", "#m5"] {
        let (dom, stderr, requests) = dump(&browser, &out, fragment);
        assert!(
            dom.contains("<title>Session evil</title>"),
            "a payload ran: {}",
            &dom[..300.min(dom.len())]
        );
        assert!(!dom.contains("PWNED-") || !dom.contains("<title>PWNED"));
        assert!(requests.is_empty(), "the page made requests: {requests:?}");
        // Only the page's own two script elements and no element the
        // payloads name: everything they hold is text.
        assert_eq!(dom.matches("<script").count(), 2, "{fragment}");
        for tag in ["<img", "<svg onload", "<iframe", "<a href"] {
            assert!(!dom.contains(tag), "{tag} became an element ({fragment})");
        }
        assert!(
            dom.contains("&lt;img src=x onerror=\"document.title='PWNED-2'\"&gt;"),
            "the payload is shown as text"
        );
        // Only CSP reports may appear, never a script error; and none at all
        // here, since nothing tried to run.
        assert!(
            console(&stderr).is_empty(),
            "console: {:?}",
            console(&stderr)
        );
    }
}

#[test]
fn a_ten_megabyte_session_loads_and_its_time_is_measured() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH (CI installs Debian's chromium); skipping the 10 MB load test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let messages = compacting_session(1600, 5200);
    let transcript_bytes: usize = messages.iter().map(|m| m.to_json().len() + 1).sum();
    assert!(transcript_bytes > 10_000_000, "{transcript_bytes} bytes");
    let out = page(tmp.path(), "big", &messages, &["--max-tokens", "32000"]);
    let (dom, stderr, _) = dump(&browser, &out, "");
    assert!(
        console(&stderr).is_empty(),
        "console: {:?}",
        console(&stderr)
    );
    let ms = load_ms(&dom);
    eprintln!(
        "session page: {:.1} MB transcript, {:.1} MB page, {} messages, loaded in {ms:.0} ms in headless Chromium (goal: under 2000 ms)",
        transcript_bytes as f64 / 1e6,
        fs::metadata(&out).unwrap().len() as f64 / 1e6,
        messages.len()
    );
    // Rendered lazily: the DOM holds a slice of the chat, not all of it.
    assert!(dom.contains("id=\"m149\"") && !dom.contains("id=\"m5000\""));
}
