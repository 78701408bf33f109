//! `import mini-swe-agent`: one test per rule of the conversion, on small
//! trajectories written by the tests, then all 500 real trajectories in
//! `../shared/data/mini-swe-agent`.

use crate::common;

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use smith_calibrate::engine::{Config, Engine};
use smith_calibrate::import::mini_swe_agent::{self, Options};
use smith_calibrate::import::{self, ImportedSession, NO_RESULT_TEXT};
use smith_calibrate::replay;
use smith_calibrate::transcript::{self, BlockType, Message, Role};

const SYSTEM: &str = "You are a helpful assistant that can interact with a computer shell.";
const FORMAT_ERROR: &str = "Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.";

fn answer(content: &str, prompt: u64, cached: u64, created: i64) -> Value {
    json!({"role": "assistant", "content": content, "extra": {"response": {
        "id": "gen-1", "provider": "Google", "model": "google/gemini-3-pro-preview", "created": created,
        "usage": {"prompt_tokens": prompt, "completion_tokens": 50, "total_tokens": prompt + 50,
                  "prompt_tokens_details": {"cached_tokens": cached}}}}})
}

fn bash(thought: &str, command: &str) -> String {
    format!("THOUGHT: {thought}\n\n```bash\n{command}\n```")
}

fn observe(code: i32, output: &str) -> Value {
    json!({"role": "user", "content": format!("<returncode>{code}</returncode>\n<output>\n{output}</output>")})
}

fn trajectory(messages: Vec<Value>) -> Value {
    json!({
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "demo__demo-1",
        "info": {"exit_status": "Submitted", "config": {
            "agent": {"format_error_template": FORMAT_ERROR,
                      "timeout_template": "The last command <command>{{action['action']}}</command> timed out and has been killed."},
            "model": {"model_name": "google/gemini-3-pro-preview"},
            "environment": {"cwd": "/testbed"},
            "model_type": "minisweagent.models.openrouter_model.OpenRouterModel"}},
        "messages": messages,
    })
}

/// A trajectory exercising every rule: a read, a failing command, a reply
/// with two blocks, a timeout, and the submission.
fn full() -> Value {
    trajectory(vec![
        json!({"role": "system", "content": SYSTEM}),
        json!({"role": "user", "content": "<pr_description>Fix it</pr_description>"}),
        answer(
            &bash("Look at the file.", "cat a.py"),
            1000,
            0,
            1_763_510_516,
        ),
        observe(0, "print(1)\n"),
        answer(&bash("Run it.", "python a.py"), 1100, 900, 1_763_510_520),
        observe(1, "Traceback\n"),
        answer(
            "THOUGHT: two at once\n\n```bash\nls\n```\n\n```bash\npwd\n```",
            1200,
            1000,
            1_763_510_530,
        ),
        json!({"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."}),
        answer(
            &bash("Serve.", "python -m http.server"),
            1300,
            1100,
            1_763_510_540,
        ),
        json!({"role": "user", "content": "The last command <command>python -m http.server</command> timed out and has been killed.\n<output>\n</output>"}),
        answer(
            &bash(
                "Done.",
                "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff",
            ),
            1400,
            1200,
            1_763_510_550,
        ),
        json!({"role": "user", "content": "diff --git a/a.py b/a.py\n"}),
    ])
}

fn convert(traj: &Value, options: Options) -> ImportedSession {
    mini_swe_agent::convert(
        traj,
        Path::new("/runs/run-a/demo__demo-1.traj.json"),
        None,
        options,
    )
    .unwrap()
}

fn roles(s: &ImportedSession) -> Vec<Role> {
    s.messages.iter().map(|m| m.role).collect()
}

fn text(m: &Message, block: usize) -> String {
    m.content[block].text_lossy().into_owned()
}

#[test]
fn the_system_prompt_is_overhead_and_the_first_user_message_the_task() {
    let s = convert(&full(), Options::default());
    let o = s.file.overhead.as_ref().unwrap();
    assert_eq!(o.system_prompt_bytes, SYSTEM.len() as u64);
    assert_eq!(o.tokens, SYSTEM.len() as u64 / 4);
    assert!(s.messages.iter().all(|m| m.role != Role::System));
    assert_eq!(s.messages[0].role, Role::User);
    assert!(!s.messages[0].synthetic);
    assert_eq!(
        text(&s.messages[0], 0),
        "<pr_description>Fix it</pr_description>"
    );
    assert_eq!(s.file.name.as_deref(), Some("demo__demo-1"));
    assert_eq!(s.file.id, "msa-run-a-demo__demo-1");
    assert_eq!(s.file.cwd.as_deref(), Some("/testbed"));
    assert_eq!(s.file.provider.as_deref(), Some("openrouter"));
    assert_eq!(s.file.created_at.as_deref(), Some("2025-11-19T00:01:56Z"));
}

#[test]
fn an_answer_with_one_bash_block_is_its_thought_plus_a_bash_call() {
    let s = convert(&full(), Options::default());
    let a = &s.messages[1];
    assert_eq!(a.role, Role::Assistant);
    assert_eq!(a.content.len(), 2);
    assert_eq!(text(a, 0), "THOUGHT: Look at the file.");
    let call = &a.content[1];
    assert_eq!(call.kind, BlockType::ToolUse);
    assert_eq!(call.tool_name.as_deref(), Some("bash"));
    assert_eq!(call.tool_args.as_deref(), Some(r#"{"command":"cat a.py"}"#));
}

#[test]
fn the_output_of_a_command_is_its_result_and_a_nonzero_return_code_an_error() {
    let s = convert(&full(), Options::default());
    let ok = &s.messages[2];
    assert_eq!(ok.role, Role::Tool);
    assert_eq!(
        ok.content[0].tool_call_id,
        s.messages[1].content[1].tool_call_id
    );
    assert_eq!(
        text(ok, 0),
        "<returncode>0</returncode>\n<output>\nprint(1)\n</output>"
    );
    assert_eq!(ok.content[0].is_error, Some(false));
    assert_eq!(s.messages[4].content[0].is_error, Some(true));
}

#[test]
fn a_rejected_answer_stays_text_and_the_format_error_is_synthetic() {
    let s = convert(&full(), Options::default());
    let a = &s.messages[5];
    assert_eq!(a.role, Role::Assistant);
    assert!(a.content.iter().all(|b| b.kind == BlockType::Text));
    assert!(text(a, 0).contains("```bash\nls"));
    let err = &s.messages[6];
    assert_eq!(err.role, Role::User);
    assert!(err.synthetic);
    assert!(text(err, 0).starts_with("Please always provide EXACTLY ONE action"));
    assert_eq!(s.file.import.synthetic_user_messages, 1);
}

#[test]
fn a_timeout_is_an_error_result() {
    let s = convert(&full(), Options::default());
    let t = &s.messages[8];
    assert_eq!(t.role, Role::Tool);
    assert_eq!(t.content[0].is_error, Some(true));
    assert!(text(t, 0).contains("timed out"));
}

#[test]
fn the_submission_is_the_result_of_the_last_command() {
    let s = convert(&full(), Options::default());
    assert_eq!(
        roles(&s),
        vec![
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant,
            Role::Tool
        ]
    );
    let last = s.messages.last().unwrap();
    assert_eq!(text(last, 0), "diff --git a/a.py b/a.py\n");
    assert_eq!(last.content[0].is_error, Some(false));
    assert_eq!(s.file.import.tool_calls, 4);
    assert!(import::pairing_problems(&s.messages).is_empty());
    assert!(s.log.skipped.is_empty());
}

#[test]
fn usage_of_each_answer_is_kept_per_request() {
    let s = convert(&full(), Options::default());
    let r = &s.file.requests;
    assert_eq!(r.len(), 5);
    let idx: Vec<usize> = r.iter().map(|r| r.message_index).collect();
    assert_eq!(idx, vec![1, 3, 5, 7, 9]);
    assert_eq!(
        (
            r[1].input_tokens,
            r[1].cache_read_input_tokens,
            r[1].output_tokens
        ),
        (200, 900, 50)
    );
    assert_eq!(r[1].prompt_tokens(), 1100);
    assert_eq!(r[0].model.as_deref(), Some("google/gemini-3-pro-preview"));
}

#[test]
fn a_last_command_without_output_gets_an_error_result() {
    let traj = trajectory(vec![
        json!({"role": "system", "content": SYSTEM}),
        json!({"role": "user", "content": "task"}),
        answer(&bash("Go.", "make"), 100, 0, 1),
    ]);
    let s = convert(&traj, Options::default());
    assert_eq!(roles(&s), vec![Role::User, Role::Assistant, Role::Tool]);
    assert_eq!(text(&s.messages[2], 0), NO_RESULT_TEXT);
    assert_eq!(s.messages[2].content[0].is_error, Some(true));
    assert_eq!(s.file.import.synthetic_results, 1);
    assert_eq!(s.notes.len(), 1);
}

#[test]
fn messages_that_cannot_be_used_are_reported_by_position() {
    let traj = trajectory(vec![
        json!({"role": "system", "content": SYSTEM}),
        json!({"role": "user", "content": "task"}),
        json!({"role": "tool", "content": "?"}),
        json!({"role": "assistant"}),
        answer("no block here", 100, 0, 1),
        observe(0, "ran anyway"),
    ]);
    let s = convert(&traj, Options::default());
    let skipped: Vec<(usize, &str)> = s
        .log
        .skipped
        .iter()
        .map(|k| (k.line, k.reason.as_str()))
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped[0].0, 3);
    common::assert_text(skipped[0].1, "role \"tool\" not imported (only the first system prompt, user and assistant messages are)");
    assert_eq!(skipped[1].0, 4);
    // The reply to an answer without a block is used, as a synthetic user
    // message, and said so.
    assert_eq!(s.notes.len(), 1);
    assert_eq!(s.notes[0].line, 6);
    assert_eq!(roles(&s), vec![Role::User, Role::Assistant, Role::User]);
    assert!(s.messages[2].synthetic);
    assert!(import::pairing_problems(&s.messages).is_empty());
    let mut report = Vec::new();
    s.report(&mut report).unwrap();
    common::assert_fixture(
        &String::from_utf8(report).unwrap(),
        "import_mini_swe_agent/skip_report.txt",
    );
}

#[test]
fn the_resolved_label_comes_from_the_results_file_beside_the_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run-a");
    fs::create_dir_all(&run).unwrap();
    let mut second = full();
    second["instance_id"] = json!("demo__demo-2");
    fs::write(run.join("demo__demo-1.traj.json"), full().to_string()).unwrap();
    fs::write(run.join("demo__demo-2.traj.json"), second.to_string()).unwrap();
    fs::write(
        tmp.path().join("run-a.results.json"),
        json!({"total": 2, "instances": [{"instance_id": "demo__demo-1", "resolved": true},
                                          {"instance_id": "demo__demo-2", "resolved": false}]})
        .to_string(),
    )
    .unwrap();
    let traj = run.join("demo__demo-1.traj.json");
    assert_eq!(
        mini_swe_agent::results_path_for(&traj),
        Some(tmp.path().join("run-a.results.json"))
    );
    let results = mini_swe_agent::load_results(&tmp.path().join("run-a.results.json")).unwrap();
    let out = tmp.path().join("out");
    let outcome = import::import_files(&[traj, run.join("demo__demo-2.traj.json")], &out, |f| {
        mini_swe_agent::import_file(f, Some(&results), Options::default())
    })
    .unwrap();
    let labels: Vec<Option<bool>> = outcome.sessions.iter().map(|s| s.file.resolved).collect();
    assert_eq!(labels, vec![Some(true), Some(false)]);
    let on_disk: Value = serde_json::from_slice(
        &fs::read(out.join("msa-run-a-demo__demo-1").join("session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk["resolved"], json!(true));
    assert_eq!(on_disk["source"]["format"], json!("mini-swe-agent"));

    // SWE-bench's own report form.
    let report = tmp.path().join("report.json");
    fs::write(
        &report,
        json!({"resolved_ids": ["a"], "unresolved_ids": ["b"]}).to_string(),
    )
    .unwrap();
    let r = mini_swe_agent::load_results(&report).unwrap();
    assert_eq!(
        r.resolved,
        HashMap::from([("a".to_string(), true), ("b".to_string(), false)])
    );
    fs::write(&report, "{}").unwrap();
    assert!(mini_swe_agent::load_results(&report).is_err());
}

#[test]
fn classify_commands_names_reads_so_that_stage_one_supersedes_their_repeats() {
    let big = "x".repeat(40_000);
    let mut messages = vec![
        json!({"role": "system", "content": SYSTEM}),
        json!({"role": "user", "content": "task"}),
    ];
    let batch = |messages: &mut Vec<Value>| {
        messages.push(answer(
            &bash("Read it.", "nl -ba a.py | sed -n '1,400p'"),
            100,
            0,
            1,
        ));
        messages.push(observe(0, &big));
        messages.push(answer(&bash("Search.", "grep -rn foo ."), 100, 0, 1));
        messages.push(observe(0, "a.py:1:foo"));
        messages.push(answer(&bash("List.", "ls -la"), 100, 0, 1));
        messages.push(observe(0, "a.py"));
        messages.push(answer(&bash("Edit.", "sed -i 's/a/b/' a.py"), 100, 0, 1));
        messages.push(observe(0, ""));
    };
    batch(&mut messages);
    batch(&mut messages);
    let traj = trajectory(messages);
    let plain = convert(&traj, Options::default());
    let classified = convert(
        &traj,
        Options {
            classify_commands: true,
        },
    );
    let tools = |s: &ImportedSession| -> Vec<String> {
        s.messages
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|b| b.tool_name.as_deref().map(str::to_string))
            .take(4)
            .collect()
    };
    assert_eq!(tools(&plain), vec!["bash", "bash", "bash", "bash"]);
    assert_eq!(
        tools(&classified),
        vec!["read_file", "grep", "glob", "bash"]
    );
    let superseded = |s: &ImportedSession| {
        let history: Vec<Arc<Message>> = s.messages.iter().cloned().map(Arc::new).collect();
        // A trajectory is one real turn (the task): under smith's recency
        // window it is all protected, so the window is off here.
        let engine = Engine::new(Config {
            max_tokens: 20_000,
            window_turns: 0,
            ..Config::default()
        });
        replay::replay(&history, &engine).effects.reads_superseded
    };
    assert_eq!(superseded(&plain), 0);
    assert!(superseded(&classified) >= 1);
}

#[test]
fn the_command_imports_a_run_and_exits_1_on_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run-a");
    fs::create_dir_all(&run).unwrap();
    fs::write(run.join("demo__demo-1.traj.json"), full().to_string()).unwrap();
    fs::write(run.join("broken.traj.json"), "{ not json").unwrap();
    let out = tmp.path().join("out");
    let r = crate::common::bin()
        .args(["import", "mini-swe-agent"])
        .arg(&run)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let totals: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(totals["totals"]["sessions"], json!(1));
    assert_eq!(totals["totals"]["files_failed"], json!(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(stderr.contains("broken.traj.json: skipped: "), "{stderr}");
    let r = crate::common::bin()
        .args(["import", "mini-swe-agent"])
        .arg(run.join("broken.traj.json"))
        .arg("--out")
        .arg(tmp.path().join("out2"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
}

// --------------------------------------------------------------- real data

/// Counts of a trajectory straight from its JSON: answers, answers the
/// harness ran (exactly one bash block), and format errors.
fn source_counts(v: &Value) -> (usize, usize, usize) {
    let msgs = v["messages"].as_array().unwrap();
    let answers = msgs.iter().filter(|m| m["role"] == "assistant").count();
    let ran = msgs
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter(|m| m["content"].as_str().unwrap().matches("```bash").count() == 1)
        .count();
    let format_errors = msgs
        .iter()
        .filter(|m| {
            m["role"] == "user"
                && m["content"]
                    .as_str()
                    .unwrap()
                    .starts_with("Please always provide EXACTLY ONE action")
        })
        .count();
    (answers, ran, format_errors)
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn all_real_trajectories_import_with_the_counts_of_their_source() {
    let dir = common::shared_data("mini-swe-agent/gemini-3-pro-swebench-verified");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let files = import::find_files(&dir, &out, &mini_swe_agent::is_trajectory).unwrap();
    assert_eq!(files.len(), 500);
    let results =
        mini_swe_agent::load_results(&mini_swe_agent::results_path_for(&files[0]).unwrap())
            .unwrap();
    let started = std::time::Instant::now();
    let outcome = import::import_files(&files, &out, |f| {
        mini_swe_agent::import_file(f, Some(&results), Options::default())
    })
    .unwrap();
    let import_time = started.elapsed();
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(outcome.sessions.len(), 500);
    assert_eq!(outcome.totals.skipped, 0);
    assert_eq!(outcome.totals.synthetic_results, 0);

    let mut resolved = 0;
    for (file, s) in files.iter().zip(&outcome.sessions) {
        let name = file.display();
        let v: Value = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
        let (answers, ran, format_errors) = source_counts(&v);
        let c = &s.file.import;
        assert!(s.log.skipped.is_empty(), "{name}: {:?}", s.log.skipped);
        assert!(s.notes.is_empty(), "{name}: {:?}", s.notes);
        // task + answers + one result per command run + format errors
        assert_eq!(c.messages, 1 + answers + ran + format_errors, "{name}");
        assert_eq!(c.tool_calls, ran, "{name}");
        assert_eq!(c.synthetic_user_messages, format_errors, "{name}");
        assert_eq!(
            answers,
            ran + format_errors,
            "{name}: every answer is run or rejected"
        );
        assert_eq!(s.file.requests.len(), answers, "{name}");
        let system = v["messages"][0]["content"].as_str().unwrap();
        assert_eq!(
            s.file.overhead.as_ref().unwrap().system_prompt_bytes,
            system.len() as u64
        );
        resolved += s.file.resolved.expect("every task has a label") as usize;
    }
    let passed = serde_json::from_slice::<Value>(&fs::read(&results.path).unwrap()).unwrap()
        ["passed"]
        .as_u64()
        .unwrap();
    assert_eq!(resolved as u64, passed);

    // Every transcript reads back cleanly and keeps the pairing invariant.
    let found = transcript::resolve_all(&[out.display().to_string()]).unwrap();
    assert_eq!(found.len(), 500);
    let mut messages = 0;
    for r in &found {
        let back = transcript::load(r).unwrap();
        assert!(back.log.skipped.is_empty(), "{}", r.transcript.display());
        let problems = import::pairing_problems(&back.messages);
        assert!(
            problems.is_empty(),
            "{}: {problems:?}",
            r.transcript.display()
        );
        messages += back.messages.len();
    }
    assert_eq!(messages, outcome.totals.messages);
    println!(
        "imported 500 trajectories ({} messages, {} tool calls) in {import_time:.2?}; read back in {:.2?}",
        outcome.totals.messages,
        outcome.totals.tool_calls,
        started.elapsed() - import_time
    );
}
