//! Headless Chromium for the tests of the pages the tool writes (the sweep
//! report, the session view): finding the browser, running it with the
//! network made to fail, and reading back which requests a page made.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The headless browser, if one is installed (CI installs Debian's
/// `chromium`); `CHROMIUM` names another. Under CI (`CI` set, as `.ci/run`
/// runs) a missing browser fails the test instead of skipping it.
pub fn chromium() -> Option<PathBuf> {
    let found = find_chromium();
    if found.is_none() && std::env::var_os("CI").is_some() {
        panic!("CI is set but no chromium is installed: .ci/run installs Debian's chromium");
    }
    found
}

fn find_chromium() -> Option<PathBuf> {
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
pub struct Run {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
    pub net_log: PathBuf,
}

/// Runs headless Chromium on `page` with networking made to fail, logging
/// every network event to `<dir>/net.json`; `extra` adds flags. Its output
/// goes to files (a DOM dump overflows a pipe nobody reads while waiting).
/// Kills it after two minutes.
pub fn headless(browser: &Path, dir: &Path, page: &Path, extra: &[String]) -> Run {
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
    // Waited for on a thread of its own, so that a browser that hangs is
    // killed after two minutes without polling it.
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(status) => status.expect("chromium is waited for"),
        Err(_) => {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
            panic!("chromium did not finish in two minutes");
        }
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
pub fn page_requests(net_log: &Path) -> Vec<String> {
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

/// Opens `page` in a frame `width` pixels wide (900 high) of a page of the
/// test's own, and returns what `probe` returns: the body of a JavaScript
/// function of `doc`, the page's document, run once the page has loaded
/// and its timers have run. The page itself is not changed; its own
/// policy, which lets nothing else run in it, does not govern the frame's
/// parent. Chromium's virtual time runs the timers without waiting.
pub fn probe(browser: &Path, page: &Path, width: u32, probe: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", page.display());
    let wrapper = dir.path().join("probe.html");
    fs::write(
        &wrapper,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\">\
             <iframe id=\"f\" style=\"width:{width}px;height:900px;border:0\"></iframe><pre id=\"probe\"></pre>\
             <script>var f = document.getElementById('f');\
             f.addEventListener('load', function () {{ setTimeout(function () {{\
             var out; try {{ out = (function (doc) {{ {probe} }})(f.contentDocument); }}\
             catch (e) {{ out = 'probe failed: ' + e; }}\
             document.getElementById('probe').textContent = String(out); }}, 50); }});\
             f.src = {url};</script></body></html>",
            url = serde_json::to_string(&url).unwrap(),
        ),
    )
    .unwrap();
    let r = headless(
        browser,
        dir.path(),
        &wrapper,
        &[
            "--dump-dom".to_string(),
            "--allow-file-access-from-files".to_string(),
            "--virtual-time-budget=10000".to_string(),
        ],
    );
    assert!(r.ok, "chromium failed: {}", r.stderr);
    let at = r
        .stdout
        .find("<pre id=\"probe\">")
        .unwrap_or_else(|| panic!("no probe in {}", r.stdout))
        + "<pre id=\"probe\">".len();
    let text = &r.stdout[at..at + r.stdout[at..].find("</pre>").unwrap()];
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    assert!(!text.starts_with("probe failed"), "{text}");
    text
}
