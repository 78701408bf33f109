//! mini-swe-agent trajectories (`*.traj.json`, `trajectory_format:
//! mini-swe-agent-1`) into smith sessions.
//!
//! A trajectory is one JSON document: `messages` alternate between the model
//! and the harness after a system prompt and the task. mini-swe-agent has no
//! tool calls of its own; the model writes one fenced bash block per answer
//! and the harness runs it. So:
//!
//! - the system prompt is not history: its size is the session's overhead;
//! - the first user message is the task (a real turn);
//! - an assistant message with exactly one ```` ```bash ```` block becomes its
//!   text (the block cut out) plus one `bash` tool_use whose `command` is the
//!   block, and the user message answering it (`<returncode>…</returncode>
//!   <output>…`, a timeout notice, or the final submission) becomes the
//!   tool_result, `is_error` when the return code is not 0 or the command
//!   timed out;
//! - an assistant message the harness rejected (no block or several) stays
//!   text only, and the harness's answer ("Please always provide EXACTLY ONE
//!   action…") is a synthetic user message;
//! - `extra.response.usage` of each answer is the real size of its request.
//!
//! With [`Options::classify_commands`], plain reads, searches and listings
//! are named as smith's `read_file`, `grep` and `glob`, so that stage 1 can
//! supersede their repeats as it would smith's own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use super::{absolute, mtime, plain_id, rfc3339, ImportedSession, Skipped, NO_RESULT_TEXT};
use crate::transcript::json::value_to_string;
use crate::transcript::session_file::{
    Overhead, RequestRecord, RequestUsage, SessionFile, Source, FORMAT_MINI_SWE_AGENT,
};
use crate::transcript::{Block, Message, ReadLog, Role, Skip};

/// The trajectory format this importer reads.
pub(crate) const TRAJECTORY_FORMAT: &str = "mini-swe-agent-1";

/// How trajectory files are named.
pub(crate) const TRAJECTORY_SUFFIX: &str = ".traj.json";

/// The opening of mini-swe-agent's default format-error message, used when
/// the trajectory does not carry its own template.
pub(crate) const FORMAT_ERROR_PREFIX: &str =
    "Please always provide EXACTLY ONE action in triple backticks";

/// The opening of mini-swe-agent's default timeout message.
pub(crate) const TIMEOUT_PREFIX: &str = "The last command <command>";

/// How the command-output message of mini-swe-agent begins.
const RETURNCODE_OPEN: &str = "<returncode>";
const RETURNCODE_CLOSE: &str = "</returncode>";

/// What the importer may do beyond the plain conversion.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Name plain reads `read_file`, searches `grep`, listings `glob`.
    pub classify_commands: bool,
}

/// Whether `path` is a trajectory file.
pub fn is_trajectory(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(TRAJECTORY_SUFFIX))
}

/// The resolved/unresolved label of each task of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub path: PathBuf,
    pub resolved: HashMap<String, bool>,
}

/// Where a run's results file would be for a trajectory: `<folder>.results.json`
/// beside the trajectory's folder, or `results.json` inside it; the first
/// that exists.
pub fn results_path_for(trajectory: &Path) -> Option<PathBuf> {
    let dir = trajectory.parent()?;
    let name = dir.file_name()?.to_str()?;
    [
        dir.with_file_name(format!("{name}.results.json")),
        dir.join("results.json"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Reads a results file: either `{"instances": [{"instance_id", "resolved"}]}`
/// or SWE-bench's report with `resolved_ids` (and `unresolved_ids`).
pub fn load_results(path: &Path) -> Result<Results> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let value: Value = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{}: not valid JSON; no resolved labels from it",
            path.display()
        )
    })?;
    let mut resolved = HashMap::new();
    if let Some(instances) = value.get("instances").and_then(Value::as_array) {
        for i in instances {
            if let (Some(id), Some(r)) = (
                i.get("instance_id").and_then(Value::as_str),
                i.get("resolved").and_then(Value::as_bool),
            ) {
                resolved.insert(id.to_string(), r);
            }
        }
    }
    for (key, label) in [("resolved_ids", true), ("unresolved_ids", false)] {
        for id in value
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(id) = id.as_str() {
                resolved.insert(id.to_string(), label);
            }
        }
    }
    if resolved.is_empty() {
        bail!(
            "{}: neither \"instances\" with \"resolved\" nor \"resolved_ids\"; no resolved labels from it",
            path.display()
        );
    }
    Ok(Results {
        path: path.to_path_buf(),
        resolved,
    })
}

/// The results file of each trajectory of a run: the one named with
/// `--results`, else each folder's own ([`results_path_for`]), each read
/// once. A results file that cannot be read is reported and passed over.
#[derive(Debug, Default)]
pub(crate) struct ResultsLookup {
    explicit: Option<Results>,
    beside: HashMap<PathBuf, Option<Results>>,
}

impl ResultsLookup {
    /// Reads the results files that `files` need: `explicit`, or those
    /// beside their folders. Fails only when `explicit` cannot be read.
    pub(crate) fn new(files: &[PathBuf], explicit: Option<&Path>) -> Result<ResultsLookup> {
        let mut lookup = ResultsLookup {
            explicit: explicit.map(load_results).transpose()?,
            beside: HashMap::new(),
        };
        if lookup.explicit.is_none() {
            for f in files {
                if let Some(p) = results_path_for(f) {
                    lookup.beside.entry(p).or_insert_with_key(|p| {
                        load_results(p).map_err(|e| crate::note!("{e:#}")).ok()
                    });
                }
            }
        }
        Ok(lookup)
    }

    /// The results that label `trajectory`'s task, if any.
    pub(crate) fn for_file(&self, trajectory: &Path) -> Option<&Results> {
        self.explicit.as_ref().or_else(|| {
            results_path_for(trajectory)
                .and_then(|p| self.beside.get(&p))
                .and_then(Option::as_ref)
        })
    }
}

/// Imports one trajectory file. Fails only when the file cannot be read or is
/// not a trajectory at all; messages that cannot be used are skipped.
pub fn import_file(
    path: &Path,
    results: Option<&Results>,
    options: Options,
) -> Result<ImportedSession> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let value: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: not valid JSON, not a trajectory", path.display()))?;
    convert(&value, path, results, options)
}

/// A fenced ```` ```bash ```` block found in an answer, as mini-swe-agent's
/// own pattern ```` ```bash\s*\n(.*?)\n``` ```` (dot matching newlines) finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    /// Byte range of the whole block, fences included.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The command, stripped of surrounding whitespace as mini-swe-agent does.
    pub(crate) command: String,
}

/// Every bash block of `text`, left to right, non-overlapping.
pub(crate) fn bash_actions(text: &str) -> Vec<Action> {
    const OPEN: &str = "```bash";
    const CLOSE: &str = "\n```";
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(rel) = text[from..].find(OPEN) {
        let start = from + rel;
        let after = start + OPEN.len();
        // `\s*\n`: the whitespace run after the tag must hold a newline; the
        // body starts after one of them, the last one first (greedy), and
        // `(.*?)\n```` takes the first closing fence after it.
        let run_end = text[after..]
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map_or(text.len(), |(i, _)| after + i);
        let newlines: Vec<usize> = text[after..run_end]
            .match_indices('\n')
            .map(|(i, _)| after + i)
            .collect();
        let matched = newlines.iter().rev().find_map(|&nl| {
            let body = nl + 1;
            text[body..].find(CLOSE).map(|c| (body, body + c))
        });
        match matched {
            Some((body, close)) => {
                let end = close + CLOSE.len();
                found.push(Action {
                    start,
                    end,
                    command: text[body..close].trim().to_string(),
                });
                from = end;
            }
            None => from = after,
        }
    }
    found
}

/// The smith tool a command stands for under `--classify-commands`, or
/// `bash`. Only a plain command counts: a single pipeline (no `;`, `&&`,
/// `||`, `&`, redirection, substitution or second line) whose first program
/// reads (`cat`, `nl`, `head`, `tail`, `sed -n` without `-i`), searches
/// (`grep`, `egrep`, `fgrep`, `rg`) or lists (`ls`, `find` without actions
/// that run or delete), and whose later stages only filter text.
pub(crate) fn classify(command: &str) -> &'static str {
    let Some(stages) = pipeline(command) else {
        return "bash";
    };
    let Some(first) = stages.first() else {
        return "bash";
    };
    let kind = match first.first().map(String::as_str) {
        Some("cat" | "nl" | "head" | "tail") => "read_file",
        Some("sed") if sed_reads(first) => "read_file",
        Some("grep" | "egrep" | "fgrep" | "rg") => "grep",
        Some("ls") => "glob",
        Some("find") if !first.iter().any(|w| FIND_ACTIONS.contains(&w.as_str())) => "glob",
        _ => return "bash",
    };
    let filters_only = stages[1..]
        .iter()
        .all(|stage| match stage.first().map(String::as_str) {
            Some("sed") => !stage
                .iter()
                .any(|w| w == "-i" || w.starts_with("-i") || w == "--in-place"),
            Some(p) => FILTERS.contains(&p),
            None => false,
        });
    if filters_only {
        kind
    } else {
        "bash"
    }
}

/// `find` options that run something or change the file system.
const FIND_ACTIONS: [&str; 6] = ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint"];

/// Programs that only transform text on a pipe.
const FILTERS: [&str; 14] = [
    "head", "tail", "grep", "egrep", "fgrep", "rg", "nl", "wc", "sort", "uniq", "cut", "tr", "cat",
    "column",
];

/// `sed -n …` without in-place editing: a read of a line range.
fn sed_reads(words: &[String]) -> bool {
    let quiet = words.iter().any(|w| {
        w == "-n"
            || w == "--quiet"
            || w == "--silent"
            || (w.starts_with('-') && !w.starts_with("--") && w.contains('n'))
    });
    let in_place = words.iter().any(|w| {
        w == "--in-place" || (w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
    });
    quiet && !in_place
}

/// Splits a command into pipeline stages of words, honouring quotes and
/// backslashes; `None` when it is anything but one plain pipeline.
fn pipeline(command: &str) -> Option<Vec<Vec<String>>> {
    let mut stages = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => word.push(ch),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        '$' if chars.peek() == Some(&'(') => return None,
                        '`' => return None,
                        ch => word.push(ch),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            '|' => {
                if chars.peek() == Some(&'|') {
                    return None;
                }
                if in_word {
                    stages.last_mut()?.push(std::mem::take(&mut word));
                    in_word = false;
                }
                stages.push(Vec::new());
            }
            ';' | '&' | '>' | '<' | '`' | '\n' | '(' | ')' => return None,
            '$' if chars.peek() == Some(&'(') => return None,
            c if c.is_whitespace() => {
                if in_word {
                    stages.last_mut()?.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        stages.last_mut()?.push(word);
    }
    if stages.iter().any(Vec::is_empty) {
        return None;
    }
    Some(stages)
}

/// The text of a message's `content`: a string, or the texts of a list of
/// parts joined by newlines.
fn content_text(m: &Value) -> Option<String> {
    match m.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// The literal opening of a Jinja template, up to its first `{{` or `{%`.
fn template_prefix(template: &str) -> &str {
    let end = [template.find("{{"), template.find("{%")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(template.len());
    template[..end].trim()
}

/// The usage of one answer: OpenAI-style `prompt_tokens` (cached part in
/// `prompt_tokens_details.cached_tokens`) or Anthropic-style fields.
fn usage_of(m: &Value) -> Option<RequestUsage> {
    let u = m.pointer("/extra/response/usage")?.as_object()?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    if let Some(prompt) = n("prompt_tokens") {
        let cached = u
            .get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(prompt);
        return Some(RequestUsage {
            input_tokens: prompt - cached,
            cache_read_input_tokens: cached,
            output_tokens: n("completion_tokens").unwrap_or(0),
            ..RequestUsage::default()
        });
    }
    Some(RequestUsage {
        input_tokens: n("input_tokens")?,
        cache_creation_input_tokens: n("cache_creation_input_tokens").unwrap_or(0),
        cache_read_input_tokens: n("cache_read_input_tokens").unwrap_or(0),
        output_tokens: n("output_tokens").unwrap_or(0),
        ..RequestUsage::default()
    })
}

/// How the harness answered an assistant message.
enum Answer {
    /// It ran the command; the text is the output message.
    Output { text: String, is_error: bool },
    /// It rejected the answer's format.
    FormatError(String),
    /// No answer follows (the run ended).
    None,
}

/// The session being built from a trajectory's messages.
#[derive(Default)]
struct Builder {
    messages: Vec<Message>,
    skipped: Skipped,
    notes: Vec<Skip>,
    synthetic_results: usize,
    classify_commands: bool,
}

fn text_message(role: Role, text: String, synthetic: bool) -> Message {
    Message::new(role, vec![Block::text(text.into_bytes())], synthetic, None)
}

impl Builder {
    fn note(&mut self, line: usize, reason: String) {
        self.notes.push(Skip { line, reason });
    }

    /// The first user message is the task; any later one that answers no
    /// command came from the harness.
    fn user(&mut self, at: usize, text: String) {
        let synthetic = self.messages.iter().any(|m| m.role == Role::User);
        if synthetic {
            self.note(
                at,
                "a user message that answers no command; kept as a synthetic user message".into(),
            );
        }
        self.messages
            .push(text_message(Role::User, text, synthetic));
    }

    /// An answer of the model and the harness's reply to it (message `at`
    /// and the one after).
    fn assistant(&mut self, at: usize, text: String, answer: Answer) {
        let actions = bash_actions(&text);
        let action = match answer {
            Answer::FormatError(reply) => {
                self.messages
                    .push(text_message(Role::Assistant, text, false));
                self.messages.push(text_message(Role::User, reply, true));
                return;
            }
            _ if actions.is_empty() => {
                self.messages
                    .push(text_message(Role::Assistant, text, false));
                if let Answer::Output { text: reply, .. } = answer {
                    self.note(
                        at + 1,
                        "answers an assistant message without a bash block; kept as a synthetic user message".into(),
                    );
                    self.messages.push(text_message(Role::User, reply, true));
                }
                return;
            }
            _ => &actions[0],
        };
        if actions.len() > 1 {
            self.note(
                at,
                format!(
                    "{} bash blocks, yet the harness ran a command; the first is taken",
                    actions.len()
                ),
            );
        }
        // The thought around the block stays text; the block is the call.
        let mut thought = text[..action.start].trim_end().to_string();
        let tail = text[action.end..].trim();
        if !tail.is_empty() {
            if !thought.is_empty() {
                thought.push_str("\n\n");
            }
            thought.push_str(tail);
        }
        let tool = if self.classify_commands {
            classify(&action.command)
        } else {
            "bash"
        };
        let id = format!("call-{at}");
        let args = value_to_string(&serde_json::json!({ "command": action.command }));
        let mut content = Vec::with_capacity(2);
        if !thought.trim().is_empty() {
            content.push(Block::text(thought.into_bytes()));
        }
        content.push(Block::tool_use(&id, tool, &args));
        self.messages
            .push(Message::new(Role::Assistant, content, false, None));
        let result = match answer {
            Answer::Output { text, is_error } => {
                Block::tool_result(Some(id.as_str().into()), text.into_bytes(), is_error)
            }
            _ => {
                self.synthetic_results += 1;
                self.note(
                    at,
                    format!("the command has no output in the trajectory; given the error result {NO_RESULT_TEXT:?}"),
                );
                Block::tool_result(
                    Some(id.as_str().into()),
                    NO_RESULT_TEXT.as_bytes().to_vec(),
                    true,
                )
            }
        };
        self.messages
            .push(Message::new(Role::Tool, vec![result], false, None));
    }
}

/// Converts a parsed trajectory. `path` names it in reports and in
/// `source.path`; skipped messages are reported as `path:N` with N the
/// 1-based position in `messages`.
pub fn convert(
    traj: &Value,
    path: &Path,
    results: Option<&Results>,
    options: Options,
) -> Result<ImportedSession> {
    let Some(raw) = traj.get("messages").and_then(Value::as_array) else {
        bail!(
            "{}: no \"messages\" list, not a mini-swe-agent trajectory",
            path.display()
        );
    };
    let mut notes = Vec::new();
    if let Some(format) = traj.get("trajectory_format").and_then(Value::as_str) {
        if format != TRAJECTORY_FORMAT {
            notes.push(Skip {
                line: 0,
                reason: format!("trajectory_format {format:?}, read as {TRAJECTORY_FORMAT}"),
            });
        }
    }
    let config = traj.pointer("/info/config");
    let mut b = Builder {
        notes,
        classify_commands: options.classify_commands,
        ..Builder::default()
    };
    let walked = walk(raw, &Prefixes::of(config), &mut b);
    let Builder {
        messages,
        mut skipped,
        mut notes,
        synthetic_results,
        ..
    } = b;
    let mut log = ReadLog {
        path: path.to_path_buf(),
        lines: raw.len(),
        ..ReadLog::default()
    };
    skipped.move_to(&mut log);
    let mut file = session_file(traj, path, walked, results, &mut notes);
    file.import.synthetic_results = synthetic_results;
    Ok(ImportedSession::new(file, messages, log, notes, None))
}

/// How the harness's answers open when they are not a command's output:
/// the run's own templates where its config records them.
struct Prefixes {
    format_error: String,
    timeout: String,
}

impl Prefixes {
    fn of(config: Option<&Value>) -> Prefixes {
        let template = |key: &str, default: &'static str| -> String {
            config
                .and_then(|c| c.pointer(&format!("/agent/{key}")))
                .and_then(Value::as_str)
                .map(|t| template_prefix(t).to_string())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| default.to_string())
        };
        Prefixes {
            format_error: template("format_error_template", FORMAT_ERROR_PREFIX),
            timeout: template("timeout_template", TIMEOUT_PREFIX),
        }
    }

    /// The harness's answer to an assistant message: `reply`, the user
    /// message after it.
    fn answer(&self, reply: String) -> Answer {
        let opening = reply.trim_start();
        if opening.starts_with(&self.format_error) {
            Answer::FormatError(reply)
        } else {
            let is_error =
                opening.starts_with(&self.timeout) || return_code(&reply).is_some_and(|rc| rc != 0);
            Answer::Output {
                text: reply,
                is_error,
            }
        }
    }
}

/// What the walk over the messages gathers beside the messages themselves.
#[derive(Default)]
struct Walked {
    requests: Vec<RequestUsage>,
    records: Vec<RequestRecord>,
    system_bytes: Option<u64>,
    times: Vec<i64>,
    model: Option<String>,
}

/// Walks the trajectory's messages into `b`: each assistant message with
/// the harness's answer after it, and what each request reported.
fn walk(raw: &[Value], prefixes: &Prefixes, b: &mut Builder) -> Walked {
    let mut w = Walked::default();
    let mut i = 0;
    while i < raw.len() {
        let m = &raw[i];
        let at = i + 1;
        i += 1;
        let Some(text) = content_text(m) else {
            b.skipped.add(at, "message without a text content");
            continue;
        };
        match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "system" if w.system_bytes.is_none() && b.messages.is_empty() => {
                w.system_bytes = Some(text.len() as u64);
            }
            "user" => b.user(at, text),
            "assistant" => {
                // The harness's answer is the next message, if it is a user's.
                let answer = match raw.get(i) {
                    Some(next) if next.get("role").and_then(Value::as_str) == Some("user") => {
                        i += 1;
                        prefixes.answer(content_text(next).unwrap_or_default())
                    }
                    _ => Answer::None,
                };
                w.request(m, b.messages.len());
                b.assistant(at, text, answer);
            }
            other => b.skipped.add(
                at,
                format!("role {other:?} not imported (only the first system prompt, user and assistant messages are)"),
            ),
        }
    }
    w
}

impl Walked {
    /// What the response of assistant message `m` (at `message_index`)
    /// reported: its usage, model, time and cost.
    fn request(&mut self, m: &Value, message_index: usize) {
        if let Some(mut u) = usage_of(m) {
            u.message_index = message_index;
            u.model = m
                .pointer("/extra/response/model")
                .and_then(Value::as_str)
                .map(str::to_string);
            if self.model.is_none() {
                self.model = u.model.clone();
            }
            self.records.push(RequestRecord {
                message_index,
                timestamp: m
                    .pointer("/extra/response/created")
                    .and_then(Value::as_i64)
                    .map(rfc3339),
                cost: m
                    .pointer("/extra/response/usage/cost")
                    .and_then(Value::as_f64)
                    .filter(|c| c.is_finite() && *c >= 0.0),
                ..RequestRecord::default()
            });
            self.requests.push(u);
        }
        if let Some(t) = m.pointer("/extra/response/created").and_then(Value::as_i64) {
            self.times.push(t);
        }
    }
}

/// The session's `session.json`: its id from the run folder and the
/// instance, what the walk gathered, the run's config and outcome, and the
/// resolved label from `results` (noted in `notes` when it has none).
fn session_file(
    traj: &Value,
    path: &Path,
    w: Walked,
    results: Option<&Results>,
    notes: &mut Vec<Skip>,
) -> SessionFile {
    let config = traj.pointer("/info/config");
    let lines = traj
        .get("messages")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(TRAJECTORY_SUFFIX))
        .unwrap_or("trajectory");
    let instance = traj
        .get("instance_id")
        .and_then(Value::as_str)
        .unwrap_or(stem)
        .to_string();
    let run = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("run");
    let resolved = results.and_then(|r| r.resolved.get(&instance).copied());
    if results.is_some() && resolved.is_none() {
        notes.push(Skip {
            line: 0,
            reason: format!("{instance} is not in the results file; no resolved label"),
        });
    }
    let model = w.model.or_else(|| {
        config
            .and_then(|c| c.pointer("/model/model_name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    // `minisweagent.models.openrouter_model.OpenRouterModel` -> `openrouter`.
    let provider = config
        .and_then(|c| c.get("model_type"))
        .and_then(Value::as_str)
        .and_then(|t| t.rsplit('.').nth(1))
        .map(|m| m.trim_end_matches("_model").to_string());
    let fallback = mtime(path);
    SessionFile {
        id: plain_id(&format!("msa-{run}-{instance}")),
        name: Some(instance.clone()),
        created_at: w
            .times
            .iter()
            .min()
            .map(|t| rfc3339(*t))
            .or_else(|| fallback.clone()),
        updated_at: w.times.iter().max().map(|t| rfc3339(*t)).or(fallback),
        cwd: config
            .and_then(|c| c.pointer("/environment/cwd"))
            .and_then(Value::as_str)
            .map(str::to_string),
        model,
        provider,
        source: Source {
            format: FORMAT_MINI_SWE_AGENT.into(),
            path: absolute(path).display().to_string(),
            lines,
            instance_id: Some(instance),
            ..Source::default()
        },
        context_complete: true,
        requests: w.requests,
        request_records: w.records,
        recorded_cost: traj
            .pointer("/info/model_stats/instance_cost")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0),
        overhead: w.system_bytes.map(|b| Overhead {
            system_prompt_bytes: b,
            tokens: b / crate::engine::constants::BYTES_PER_TOKEN,
        }),
        resolved,
        exit_status: traj
            .pointer("/info/exit_status")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..SessionFile::default()
    }
}

/// The number in a leading `<returncode>N</returncode>`, if there is one.
pub(crate) fn return_code(text: &str) -> Option<i64> {
    let rest = text.trim_start().strip_prefix(RETURNCODE_OPEN)?;
    let end = rest.find(RETURNCODE_CLOSE)?;
    rest[..end].trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_actions_follow_mini_swe_agents_pattern() {
        let a = bash_actions("THOUGHT: x\n\n```bash\nls -la\n```\n");
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].command, "ls -la");
        assert_eq!(a[0].start, 12);
        // The whitespace run may hold several newlines; an empty body matches.
        assert_eq!(bash_actions("```bash\n\n```")[0].command, "");
        // No newline after the tag: not a block.
        assert!(bash_actions("```bash ls```").is_empty());
        assert_eq!(bash_actions("```bash\na\n```\n```bash\nb\n```").len(), 2);
        // Multi-line bodies end at the first closing fence.
        assert_eq!(
            bash_actions("```bash\ncat <<'EOF' > f\nx\nEOF\n```")[0].command,
            "cat <<'EOF' > f\nx\nEOF"
        );
    }

    #[test]
    fn classify_names_plain_reads_searches_and_listings() {
        assert_eq!(classify("cat a.py"), "read_file");
        assert_eq!(classify("nl -ba a.py | sed -n '10,20p'"), "read_file");
        assert_eq!(classify("sed -n '1,5p;9p' a.py"), "read_file");
        assert_eq!(classify("sed -i 's/a/b/' a.py"), "bash");
        assert_eq!(classify("grep -rn \"foo|bar\" src"), "grep");
        assert_eq!(classify("grep x a | head -n 5"), "grep");
        assert_eq!(classify("find . -name '*.py'"), "glob");
        assert_eq!(classify("find . -name x -delete"), "bash");
        assert_eq!(classify("ls -R"), "glob");
        assert_eq!(classify("cat <<'EOF' > f\nx\nEOF"), "bash");
        assert_eq!(classify("cd x && cat a"), "bash");
        assert_eq!(classify("cat a > b"), "bash");
        assert_eq!(classify("grep x $(ls)"), "bash");
        assert_eq!(classify("cat a | python3 -"), "bash");
        assert_eq!(classify("python3 x.py"), "bash");
    }

    #[test]
    fn return_code_reads_the_leading_tag() {
        assert_eq!(return_code("<returncode>0</returncode>\n<output>"), Some(0));
        assert_eq!(return_code("<returncode>-9</returncode>"), Some(-9));
        assert_eq!(return_code("output <returncode>1</returncode>"), None);
    }
}
