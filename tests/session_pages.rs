//! The session page as a reader of another agent's log uses it: the agent's
//! own compactions, each request's time, model and recorded usage, search
//! with next and previous, filters, the agent's tool names, subagent pages
//! linked both ways and an index over a folder; in headless Chromium.

use crate::common::chromium::{chromium, headless, page_requests};
use crate::common::{ok, run};

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// Claude Code log lines chained by uuid, as Claude Code writes them.
struct Log {
    session: String,
    lines: Vec<String>,
    last: Option<String>,
    n: usize,
}

impl Log {
    fn new(session: &str) -> Log {
        Log {
            session: session.into(),
            lines: Vec::new(),
            last: None,
            n: 0,
        }
    }

    fn push(&mut self, mut v: Value) -> &mut Log {
        self.n += 1;
        let uuid = format!("{}-{:08}", self.session, self.n);
        let obj = v.as_object_mut().unwrap();
        obj.insert("uuid".into(), json!(uuid));
        obj.insert("parentUuid".into(), json!(self.last));
        obj.insert("sessionId".into(), json!(self.session));
        obj.insert("cwd".into(), json!("/home/me/shop"));
        obj.insert(
            "timestamp".into(),
            json!(format!("2026-03-02T10:{:02}:00.000Z", self.n % 60)),
        );
        self.last = Some(uuid);
        self.lines.push(v.to_string());
        self
    }

    fn user(&mut self, text: &str) -> &mut Log {
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}))
    }

    fn call(&mut self, id: &str, name: &str, input: Value) -> &mut Log {
        let n = self.n;
        self.push(
            json!({"type": "assistant", "message": {"model": "claude-sonnet-4-5",
            "id": format!("msg_{n}"), "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 500,
                      "cache_read_input_tokens": 1000 + 10 * n as u64, "output_tokens": 20}}}),
        )
    }

    fn result(&mut self, id: &str, text: &str) -> &mut Log {
        self.push(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": text}]}}),
        )
    }

    fn answer(&mut self, text: &str) -> &mut Log {
        let n = self.n;
        self.push(
            json!({"type": "assistant", "message": {"model": "claude-sonnet-4-5",
            "id": format!("msg_{n}"), "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 300,
                      "cache_read_input_tokens": 1000 + 10 * n as u64, "output_tokens": 30}}}),
        )
    }

    fn compaction(&mut self, summary: &str) -> &mut Log {
        self.push(json!({"type": "system", "subtype": "compact_boundary",
            "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 151234}}));
        self.push(json!({"type": "user", "isCompactSummary": true,
            "message": {"role": "user", "content": summary}}))
    }

    fn write(&self, path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, self.lines.join("\n") + "\n").unwrap();
    }
}

const TASK: &str = "find every caller of parse_price";

/// A project folder: a session that reads, greps and runs, starts a
/// subagent with a `Task` call, and is compacted by the agent; the
/// subagent's log beside it.
fn project(root: &Path) -> PathBuf {
    let dir = root.join("projects").join("-home-me-shop");
    let mut main = Log::new("s-main");
    main.user("fix the price rounding");
    for k in 0..4 {
        let id = format!("toolu_read_{k}");
        main.call(
            &id,
            "Read",
            json!({"file_path": format!("/src/price{k}.rs")}),
        )
        .result(
            &id,
            &format!("fn price{k}() {{ needle {k} }}\n{}", "// line\n".repeat(40)),
        )
        .answer(&format!("price{k} read"));
    }
    main.call(
        "toolu_task",
        "Task",
        json!({"description": "callers", "prompt": TASK, "subagent_type": "Explore"}),
    )
    .result("toolu_task", "three callers")
    .compaction("Summary: the rounding bug is in price2; three callers.")
    .user("now fix it")
    .call("toolu_bash", "Bash", json!({"command": "cargo test"}))
    .result("toolu_bash", "test result: ok. needle passed")
    .answer("fixed: the needle was rounding");
    main.write(&dir.join("s-main.jsonl"));
    let mut sub = Log::new("s-main");
    sub.user(TASK)
        .call("toolu_grep", "Grep", json!({"pattern": "parse_price"}))
        .result("toolu_grep", "a.rs\nb.rs\nc.rs")
        .answer("three callers");
    sub.write(&dir.join("s-main").join("subagents").join("agent-x1.jsonl"));
    dir
}

fn pages(root: &Path) -> PathBuf {
    let dir = project(root);
    let out = root.join("pages");
    ok(run(&[
        "transcript".as_ref(),
        "show".as_ref(),
        dir.as_os_str(),
        "--html".as_ref(),
        out.as_os_str(),
    ]));
    out
}

/// The page's DOM after load under `fragment`, with no console message and
/// no request.
fn dom(browser: &Path, page: &Path, fragment: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let r = headless(
        browser,
        dir.path(),
        &PathBuf::from(format!("{}{fragment}", page.display())),
        &[
            "--dump-dom".to_string(),
            "--enable-logging=stderr".to_string(),
            "--v=0".to_string(),
        ],
    );
    assert!(r.ok, "chromium failed: {}", r.stderr);
    let console: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .collect();
    assert!(console.is_empty(), "console: {console:?}");
    let requests = page_requests(&r.net_log);
    assert!(requests.is_empty(), "the page made requests: {requests:?}");
    r.stdout
}

/// The `<article>` of message `i` in a DOM dump.
fn article(dom: &str, i: usize) -> &str {
    let at = dom
        .find(&format!("id=\"m{i}\""))
        .unwrap_or_else(|| panic!("message {i} is rendered"));
    let start = dom[..at].rfind("<article").unwrap();
    &dom[start..start + dom[start..].find('>').unwrap()]
}

#[test]
fn the_index_lists_every_session_and_links_a_subagent_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let out = pages(tmp.path());
    let index = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("Content-Security-Policy"));
    // Its one script only sorts, allowed by its hash and nothing else.
    assert_eq!(index.matches("<script>").count(), 1, "{index}");
    assert!(!index.contains("unsafe-inline"));
    assert_eq!(index.matches("<tr><td data-v=").count(), 2, "{index}");
    assert!(index.contains("<title>2 sessions from "), "{index}");
    assert!(
        index.contains("<a href=\"cc-s-main.html\">cc-s-main</a>"),
        "{index}"
    );
    // The subagent names its parent; each row its project and first prompt.
    assert!(
        index.contains(
            " messages, a subagent started by cc-s-main\"><a href=\"cc-s-main-agent-x1.html\">cc-s-main-agent-x1</a>"
        ),
        "{index}"
    );
    assert!(
        index.contains("<td title=\"/home/me/shop\">shop</td><td>fix the price rounding</td>"),
        "{index}"
    );
    assert!(
        index.contains(&format!(
            "<td title=\"/home/me/shop\">shop</td><td>{TASK}</td>"
        )),
        "{index}"
    );
    for page in ["cc-s-main.html", "cc-s-main-agent-x1.html"] {
        assert!(out.join(page).is_file(), "{page}");
    }
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the browser half: SKIPPED");
        return;
    };
    let main = dom(&browser, &out.join("cc-s-main.html"), "");
    // The Task call links to the subagent's page, which links back.
    let call = &main[main.find("toolu_task</span>").expect("the Task call")..];
    assert!(
        call.starts_with("toolu_task</span> <a class=\"link\" href=\"cc-s-main-agent-x1.html\">open the subagent session cc-s-main-agent-x1</a>"),
        "{}",
        &call[..300.min(call.len())]
    );
    let sub = dom(&browser, &out.join("cc-s-main-agent-x1.html"), "");
    assert!(
        sub.contains("A subagent of <a class=\"link\" href=\"cc-s-main.html\">cc-s-main</a>"),
        "{sub}"
    );
    assert!(sub.contains("<title>Session cc-s-main-agent-x1</title>"));
}

#[test]
fn the_page_shows_the_agents_compaction_its_records_and_tool_names() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the session page test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = pages(tmp.path());
    let main = dom(&browser, &out.join("cc-s-main.html"), "");
    // The agent compacted after the Task's result: the marker stands before
    // the next message, in the list and on the timeline.
    assert!(main.contains("1 compactions by the agent itself"), "{main}");
    assert!(
        main.contains("The agent compacted its context (auto) at 151,234 tokens, after request 8")
    );
    let marker = main
        .find("<aside class=\"agent-compaction\" id=\"agent-0\">")
        .expect("the marker");
    let next = main[marker..].find("<article").unwrap() + marker;
    assert!(
        main[next..].starts_with("<article class=\"msg user\" id=\"m15\""),
        "{}",
        &main[next..next + 80]
    );
    assert_eq!(
        main.matches("class=\"agent\"").count(),
        1,
        "one timeline mark"
    );
    // Each answer with its time, model and billed prompt beside the replay's.
    assert!(
        main.contains("assistant · turn 1 · #1 · request 0 · 2026-03-02 10:02:00Z · claude-sonnet-4-5 · billed 1,513 tokens in, 20 out · replay sent"),
        "{main}"
    );
    // The agent's own tool names, not smith's.
    assert!(main.contains("→ Read</span>") && main.contains("→ Bash</span>"));
    assert!(!main.contains("→ read_file</span>") && !main.contains("→ bash</span>"));
    assert!(main.contains("result of toolu_read_0 (Read)"));
}

#[test]
fn search_steps_through_matches_and_filters_hide_and_show() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the session page test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = pages(tmp.path());
    let page = out.join("cc-s-main.html");
    // "needle" is in the four read results (#2, #5, #8, #11), the test's
    // output (#17) and the last answer (#18).
    let at = |d: &str| -> (String, usize) {
        let c = &d[d.find("id=\"search-count\"").expect("the counter")..];
        let n: usize = c[c.find("data-at=\"").unwrap() + 9..]
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let text = c[c.find('>').unwrap() + 1..c.find('<').unwrap()].to_string();
        (text, n)
    };
    let d = dom(&browser, &page, "#q=needle");
    assert_eq!(at(&d), ("1 of 6 messages".to_string(), 2));
    assert!(article(&d, 2).contains("hit current"));
    let d = dom(&browser, &page, "#q=needle&n=3");
    assert_eq!(at(&d), ("3 of 6 messages".to_string(), 8));
    let d = dom(&browser, &page, "#q=needle&n=-1");
    assert_eq!(
        at(&d),
        ("6 of 6 messages".to_string(), 18),
        "previous from the start is the last"
    );
    let d = dom(&browser, &page, "#q=needle&n=7");
    assert_eq!(
        at(&d),
        ("1 of 6 messages".to_string(), 2),
        "next after the last is the first"
    );

    // Hiding tool messages hides the results and skips them in a search.
    let d = dom(&browser, &page, "#hide=role:tool&q=needle");
    assert!(article(&d, 2).contains("hidden"), "{}", article(&d, 2));
    assert!(!article(&d, 1).contains("hidden"));
    assert_eq!(at(&d), ("1 of 1 messages".to_string(), 18));
    assert!(d.contains("id=\"show-role-tool\">"), "its box unticked");
    // One tool: only its calls and results stay.
    let d = dom(&browser, &page, "#tool=Bash");
    assert!(!article(&d, 16).contains("hidden"), "the Bash call");
    assert!(!article(&d, 17).contains("hidden"), "its result");
    assert!(article(&d, 1).contains("hidden"), "a Read call");
    assert!(article(&d, 0).contains("hidden"), "a prompt");
    // Shown again when nothing is hidden.
    let d = dom(&browser, &page, "");
    assert_eq!(
        d.matches("<article class=\"msg").count(),
        d.matches("<article").count()
    );
    assert!(!d.contains("<article class=\"msg tool\" id=\"m2\" hidden"));
}

/// The page of a shared Claude Code session that the agent compacted
/// shows that compaction where the log has it.
#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_page_of_a_shared_session_shows_the_agents_compaction() {
    let Some(browser) = chromium() else {
        eprintln!("note: no chromium on PATH; skipping the session page test: SKIPPED");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log = crate::common::shared_data("claude-code/spotter")
        .join("258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let page = tmp.path().join("page.html");
    let name = format!("{}#cc-258c7280-ae70-4798-800f-63464d01a85d", log.display());
    ok(run(&[
        "transcript",
        "show",
        &name,
        "--html",
        page.to_str().unwrap(),
    ]));
    // The chat renders in slices: open it at the message after the
    // compaction, as the list's link does.
    let d = dom(&browser, &page, "#m207");
    assert!(d.contains("1 compactions by the agent itself"));
    assert!(
        d.contains("The agent compacted its context (auto) at 167,094 tokens"),
        "{}",
        &d[..3000]
    );
    let marker = d
        .find("<aside class=\"agent-compaction\" id=\"agent-0\">")
        .expect("the marker");
    let next = d[marker..].find("<article").unwrap() + marker;
    assert!(
        d[next..next + 80].contains(" id=\"m207\""),
        "{}",
        &d[next..next + 80]
    );
    assert!(!d[next..next + 80].contains("hidden"));
}

/// A sweep's report over a log the agent compacted, read where it is,
/// accounts for that compaction as `calibrate` does.
#[test]
fn the_report_accounts_for_the_agents_own_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let report = tmp.path().join("report");
    ok(run(&[
        "sweep".as_ref(),
        dir.as_os_str(),
        "--report".as_ref(),
        report.as_os_str(),
    ]));
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let at = html
        .find("<h3>The agent's own compactions</h3>")
        .expect("the section");
    let section = &html[at..];
    assert!(section.contains("<p>1 compactions recorded in the swept sessions"));
    // The four reads and the Task's result were in context before it.
    assert!(
        section.contains(
            "<tr><td>cc-s-main</td><td>1</td><td>full</td><td>9</td><td>151234</td><td>5</td>"
        ),
        "{}",
        &section[..1500.min(section.len())]
    );
    assert!(!html.contains("could not be read again"));
}
