//! Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`)
//! into smith sessions.
//!
//! A Claude Code log is one JSON object per line, most of them not history:
//! `progress`, `file-history-snapshot`, `queue-operation` and `system` lines
//! are the harness talking to itself. Of the `user` and `assistant` lines:
//!
//! - one model response is spread over several `assistant` lines sharing
//!   `message.id`, one content block each, and the tools it calls may already
//!   run (and their results be logged) before its last line is written. The
//!   lines of one `message.id` become one smith assistant message;
//! - the results of its calls arrive as separate `user` lines, in any order:
//!   they become one `tool` message right after it, in the order of the
//!   calls. A call with no result in the file gets an error result
//!   ([`NO_RESULT_TEXT`]) so the session keeps smith's pairing invariant;
//! - user lines that arrive while a response is still open (hook output,
//!   interruption marks, skill prompts) follow its tool message;
//! - `isMeta` user lines, and those the harness wrote (see
//!   [`HARNESS_PREFIXES`]), are `synthetic`: they do not start a real turn;
//! - a `compact_boundary` and the `isCompactSummary` line after it mark where
//!   Claude Code compacted; the summary is not history, and the mark goes to
//!   `session.json` ([`CompactBoundary`]);
//! - `message.usage` is kept once per response, the largest of each figure
//!   over its lines, as the real prompt size of that request.
//!
//! `subagents/agent-*.jsonl` files are sessions of their own, linked to the
//! session of the directory they sit in. Older logs keep a subagent's lines
//! in the main file, marked `isSidechain: true`: [`convert_all`] sets them
//! aside, follows their `parentUuid` chains, and makes each chain a subagent
//! session of its own, linked to the main one, with the lines' own numbers.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use serde_json::{Map, Value};

use super::server_tools::{is_server_tool_block, server_tool_block};
use super::{
    absolute, for_each_object, mtime, plain_id, str_field, ImportedSession, Skipped, NO_RESULT_TEXT,
};
use crate::transcript::json::value_to_string;
use crate::transcript::session_file::{
    CompactBoundary, RequestRecord, RequestUsage, SessionFile, Source, FORMAT_CLAUDE_CODE,
    MICROCOMPACT,
};
use crate::transcript::{Block, BlockType, Message, ReadLog, Role, Skip, Str};

/// Claude Code's tool names that smith has a tool for, and smith's name.
/// The mapping matters to stage 1, which supersedes only `read_file`, `grep`
/// and `glob` calls; other tools keep their own names.
pub(crate) const TOOL_NAMES: [(&str, &str); 7] = [
    ("Read", "read_file"),
    ("Grep", "grep"),
    ("Glob", "glob"),
    ("Bash", "bash"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("Write", "write_file"),
];

/// The name Claude Code gave a call that the import renamed to smith's
/// `name` (the inverse of [`TOOL_NAMES`]; an edit with a list of `edits` was
/// a `MultiEdit`); `None` for a name the import kept.
pub(crate) fn agent_tool_name(name: &str, args: Option<&str>) -> Option<&'static str> {
    if name == "edit_file" && args.is_some_and(|a| a.contains("\"edits\"")) {
        return Some("MultiEdit");
    }
    TOOL_NAMES
        .iter()
        .find(|(_, smith)| *smith == name)
        .map(|(agent, _)| *agent)
}

/// How user lines that Claude Code wrote itself begin. They reach the model
/// but nobody typed them, so they are `synthetic` and do not start a real
/// turn (the recency window counts turns the user started).
pub(crate) const HARNESS_PREFIXES: [&str; 8] = [
    // The caveat written before the output of a local slash command.
    "<local-command-caveat>",
    // The output of a local slash command (`/mcp`, `/compact`, ...).
    "<local-command-stdout>",
    "<local-command-stderr>",
    // The output of a `!` shell command typed at the prompt.
    "<bash-stdout>",
    "<bash-stderr>",
    // A background task finished.
    "<task-notification>",
    // Hook output and reminders.
    "<system-reminder>",
    // The mark an interruption leaves: `[Request interrupted by user]` and
    // `[Request interrupted by user for tool use]`.
    "[Request interrupted by user",
];

/// The `model` of assistant lines Claude Code wrote without asking a model
/// (API errors, "No response requested."): not a response, not a request.
pub(crate) const SYNTHETIC_MODEL: &str = "<synthetic>";

/// smith's name for a Claude Code tool.
pub(crate) fn smith_tool_name(name: &str) -> &str {
    TOOL_NAMES
        .iter()
        .find(|(cc, _)| *cc == name)
        .map_or(name, |(_, smith)| smith)
}

/// Whether a user text was written by the harness rather than typed.
pub fn harness_written(text: &str) -> bool {
    let t = text.trim_start();
    HARNESS_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// Whether `path` is a Claude Code session log: a `.jsonl` file.
pub fn is_session_log(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// How a log file stands among its siblings, from its path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Main,
    /// `<project>/<parent>/subagents/agent-<id>.jsonl`; `parent` is the stem
    /// of `<project>/<parent>.jsonl`.
    Subagent {
        parent: Option<String>,
    },
}

fn kind_of(path: &Path) -> Kind {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = path.parent();
    let in_subagents = dir
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == "subagents");
    if in_subagents {
        let parent = dir
            .and_then(Path::parent)
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str())
            .map(str::to_string);
        return Kind::Subagent { parent };
    }
    if stem.starts_with("agent-") {
        // The older layout kept subagent logs beside the sessions; the
        // parent is named by the lines' `sessionId`.
        return Kind::Subagent { parent: None };
    }
    Kind::Main
}

/// Imports one log file's own session (see [`import_file_all`]).
pub fn import_file(path: &Path) -> io::Result<ImportedSession> {
    let file = File::open(path)?;
    convert(file, path)
}

/// Imports one log file: its session, then the subagent sessions found
/// inline in it.
pub(crate) fn import_file_all(path: &Path) -> io::Result<Vec<ImportedSession>> {
    let file = File::open(path)?;
    convert_all(file, path)
}

/// Converts a Claude Code log read from `reader` into its own session only
/// (see [`convert_all`] for the subagents kept inline).
pub fn convert<R: Read>(reader: R, path: &Path) -> io::Result<ImportedSession> {
    let mut all = convert_all(reader, path)?;
    Ok(all.swap_remove(0))
}

/// Converts a Claude Code log read from `reader`: its session first, then
/// one subagent session per chain of inline `isSidechain` lines. `path`
/// names it in reports, in `source.path` and decides whether it is a
/// subagent's. Only an I/O error fails; bad lines are skipped and counted.
pub fn convert_all<R: Read>(reader: R, path: &Path) -> io::Result<Vec<ImportedSession>> {
    let kind = kind_of(path);
    let mut c = Converter {
        subagent: kind != Kind::Main,
        ..Converter::default()
    };
    let mut log = ReadLog {
        path: path.to_path_buf(),
        ..ReadLog::default()
    };
    for_each_object(reader, &mut log, |line_no, obj| c.line(line_no, obj))?;
    c.close();
    if kind == Kind::Main && c.messages.is_empty() && !c.sidechain.is_empty() {
        // Nothing but subagent lines: a subagent's own log under another
        // name (copies renamed `<day>-<project>-agent-<id>.jsonl`), read as
        // a file of the older layout's `agent-<id>.jsonl` would be.
        let mut sub = Converter::of_sidechain(std::mem::take(&mut c.sidechain));
        c.skipped.move_to(&mut log);
        sub.skipped.move_to(&mut log);
        return Ok(vec![sub.finish(path, Kind::Subagent { parent: None }, log)]);
    }
    let sidechain = std::mem::take(&mut c.sidechain);
    let lines = log.lines;
    let chains = chains(sidechain);
    if let Some(first) = chains.first().and_then(|ch| ch.first()) {
        c.notes.push(Skip {
            line: first.0,
            reason: format!(
                "subagent lines (isSidechain) imported as {} subagent sessions of their own",
                chains.len()
            ),
        });
    }
    // Lines that were not UTF-8 or not an object (in the log already) and
    // lines that were not usable, in file order.
    c.skipped.move_to(&mut log);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("session")
        .to_string();
    let agents: Vec<Option<String>> = chains
        .iter()
        .map(|ch| ch.iter().find_map(|l| l.4.clone()))
        .collect();
    let mut out = vec![c.finish(path, kind, log)];
    for (k, chain) in chains.into_iter().enumerate() {
        let mut sub = Converter::of_sidechain(chain);
        // Named after its agent; the chain's number keeps two chains of one
        // agent (or of none) apart.
        sub.name = Some(match agents[k].as_deref() {
            Some(a) if agents.iter().filter(|x| x.as_deref() == Some(a)).count() == 1 => {
                format!("agent-{a}")
            }
            Some(a) => format!("agent-{a}-{}", k + 1),
            None => format!("sidechain-{}", k + 1),
        });
        let mut sub_log = ReadLog {
            path: path.to_path_buf(),
            lines,
            ..ReadLog::default()
        };
        sub.skipped.move_to(&mut sub_log);
        out.push(sub.finish(
            path,
            Kind::Subagent {
                parent: Some(stem.clone()),
            },
            sub_log,
        ));
    }
    Ok(out)
}

/// A line set aside: number, object, uuid, parentUuid, agentId.
type SideLine = (
    usize,
    Map<String, Value>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// Groups inline subagent lines into conversations: a line joins the chain
/// of its parent, or starts one.
fn chains(lines: Vec<SideLine>) -> Vec<Vec<SideLine>> {
    let mut of_uuid: HashMap<String, usize> = HashMap::new();
    let mut chains: Vec<Vec<SideLine>> = Vec::new();
    for l in lines {
        let k = match l.3.as_ref().and_then(|p| of_uuid.get(p)) {
            Some(&k) => k,
            None => {
                chains.push(Vec::new());
                chains.len() - 1
            }
        };
        if let Some(u) = &l.2 {
            of_uuid.insert(u.clone(), k);
        }
        chains[k].push(l);
    }
    chains
}

/// A `tool_result` block the importer cannot file with a call: the block
/// is dropped with this as its reason, and the three cases differ in what
/// the log lost (an id, the call, or nothing: a duplicate).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum OrphanResult {
    /// The block names no call.
    #[error("tool_result without a tool_use_id")]
    NoId,
    /// The call it names was not made by the response before it.
    #[error("result for tool call {0}, which the response before it did not make")]
    NoCall(String),
    /// The call already has a result, which is kept.
    #[error("a second result for tool call {0}, first one kept")]
    Second(String),
}

/// One model response being assembled from its lines.
#[derive(Default)]
struct Response {
    key: String,
    /// The line it began on.
    line: usize,
    id: Option<Str>,
    blocks: Vec<Block>,
    /// Tool call ids in call order, with the line that made each.
    calls: Vec<(Str, usize)>,
    results: HashMap<Str, Vec<Block>>,
    result_id: Option<Str>,
    /// User messages that arrived while it was open.
    after: Vec<Message>,
    usage: Option<RequestUsage>,
    record: RequestRecord,
    model: Option<String>,
}

#[derive(Default)]
struct Converter {
    subagent: bool,
    /// In a main log, the subagent lines set aside for [`chains`].
    sidechain: Vec<SideLine>,
    /// The session's name when it is not the file's stem (an inline
    /// subagent).
    name: Option<String>,
    skipped: Skipped,
    /// `<synthetic>` lines left out (not damage).
    agent_written: usize,
    /// Blocks of a type nothing can use, by type (not damage).
    not_imported: BTreeMap<String, usize>,
    notes: Vec<Skip>,
    messages: Vec<Message>,
    requests: Vec<RequestUsage>,
    records: Vec<RequestRecord>,
    /// The `timestamp` of the line being read.
    line_time: Option<String>,
    boundaries: Vec<CompactBoundary>,
    /// The `timestamp` of each boundary's line, to find the compaction
    /// call's own log by.
    boundary_times: Vec<Option<String>>,
    assistants: usize,
    synthetic_results: usize,
    open: Option<Response>,
    /// Keys of the responses already written out -> the line each began on.
    closed: HashMap<String, usize>,
    /// uuid -> line it was first seen on.
    uuids: HashMap<String, usize>,
    /// History lines whose parent had not been seen when they were read.
    parents_unseen: Vec<(usize, String)>,
    first_time: Option<String>,
    last_time: Option<String>,
    cwd: Option<String>,
    session_id: Option<String>,
    agent_id: Option<String>,
    model: Option<String>,
}

fn flag(obj: &Map<String, Value>, key: &str) -> bool {
    obj.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// smith's optional message id: 16 hex characters, here the start of the
/// line's uuid, so an imported message can be traced back to its line.
fn short_id(uuid: Option<&str>) -> Option<Str> {
    let hex: String = uuid?
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    (hex.len() == 16).then(|| hex.into())
}

fn text_block(text: &str) -> Block {
    Block::text(text.as_bytes().to_vec())
}

impl Converter {
    /// A subagent's session read from the lines set aside for it.
    fn of_sidechain(lines: Vec<SideLine>) -> Converter {
        let mut sub = Converter {
            subagent: true,
            ..Converter::default()
        };
        for (line, obj, _, _, _) in lines {
            sub.line(line, obj);
        }
        sub.close();
        sub
    }

    fn line(&mut self, line: usize, obj: Map<String, Value>) {
        if !self.subagent && flag(&obj, "isSidechain") {
            let (uuid, parent, agent) = (
                str_field(&obj, "uuid"),
                str_field(&obj, "parentUuid"),
                str_field(&obj, "agentId"),
            );
            self.sidechain.push((line, obj, uuid, parent, agent));
            return;
        }
        let uuid = str_field(&obj, "uuid");
        if let Some(u) = &uuid {
            if let Some(first) = self.uuids.get(u) {
                let first = *first;
                return self
                    .skipped
                    .add(line, format!("repeats line {first} (same uuid)"));
            }
            self.uuids.insert(u.clone(), line);
        }
        self.line_time = str_field(&obj, "timestamp");
        if let Some(t) = &self.line_time {
            self.first_time.get_or_insert_with(|| t.clone());
            self.last_time = Some(t.clone());
        }
        for (slot, key) in [
            (&mut self.cwd, "cwd"),
            (&mut self.session_id, "sessionId"),
            (&mut self.agent_id, "agentId"),
        ] {
            if slot.is_none() {
                *slot = str_field(&obj, key);
            }
        }
        match obj.get("type").and_then(Value::as_str) {
            Some("assistant") | Some("user") => self.history(line, &obj, uuid.as_deref()),
            Some("system")
                if obj.get("subtype").and_then(Value::as_str) == Some("compact_boundary") =>
            {
                self.boundary(line, &obj)
            }
            Some("system")
                if obj.get("subtype").and_then(Value::as_str) == Some("microcompact_boundary") =>
            {
                self.microcompact(line, &obj)
            }
            // progress, file-history-snapshot, queue-operation, other system
            // lines, summaries, titles: the harness's own bookkeeping.
            Some(_) => {}
            None => self
                .skipped
                .add(line, "no \"type\": not a line of a Claude Code log"),
        }
    }

    fn history(&mut self, line: usize, obj: &Map<String, Value>, uuid: Option<&str>) {
        if let Some(parent) = obj.get("parentUuid").and_then(Value::as_str) {
            if !self.uuids.contains_key(parent) {
                self.parents_unseen.push((line, parent.to_string()));
            }
        }
        let Some(message) = obj.get("message").and_then(Value::as_object) else {
            return self.skipped.add(line, "no \"message\" object");
        };
        // A plain string is one text block.
        let wrapped;
        let blocks: &[Value] = match message.get("content") {
            Some(Value::String(s)) => {
                wrapped = [serde_json::json!({"type": "text", "text": s})];
                &wrapped
            }
            Some(Value::Array(a)) => a,
            _ => {
                return self
                    .skipped
                    .add(line, "message.content is neither a string nor a list")
            }
        };
        if obj.get("type").and_then(Value::as_str) == Some("assistant") {
            self.assistant(line, message, blocks, uuid)
        } else {
            self.user(line, obj, blocks, uuid)
        }
    }

    fn assistant(
        &mut self,
        line: usize,
        message: &Map<String, Value>,
        blocks: &[Value],
        uuid: Option<&str>,
    ) {
        let model = str_field(message, "model");
        // Claude Code writes these itself (an interrupted or refused
        // request's stand-in answer): no model response, and no damage.
        if model.as_deref() == Some(SYNTHETIC_MODEL) {
            self.agent_written += 1;
            return;
        }
        let key = str_field(message, "id")
            .or_else(|| uuid.map(str::to_string))
            .unwrap_or_else(|| format!("line {line}"));
        if let Some(first) = self.closed.get(&key) {
            let first = *first;
            return self.skipped.add(
                line,
                format!("a late line of the response begun on line {first}, which another response followed"),
            );
        }
        if self.open.as_ref().is_some_and(|r| r.key != key) {
            self.close();
        }
        if self.open.is_none() {
            self.open = Some(Response {
                key,
                line,
                id: short_id(uuid),
                model: model.clone(),
                ..Response::default()
            });
            if self.model.is_none() {
                self.model = model;
            }
        }
        let mut skips = Vec::new();
        let r = self.open.as_mut().expect("opened above");
        for (i, b) in blocks.iter().enumerate() {
            let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
            let s = |k: &str| b.get(k).and_then(Value::as_str);
            match kind {
                "text" => r.blocks.push(text_block(s("text").unwrap_or(""))),
                "thinking" => r.blocks.push(Block {
                    kind: BlockType::Thinking,
                    text: Some(s("thinking").unwrap_or("").as_bytes().to_vec().into()),
                    signature: s("signature").map(Str::from),
                    ..Block::default()
                }),
                "redacted_thinking" => r.blocks.push(Block {
                    kind: BlockType::RedactedThinking,
                    text: Some(s("data").unwrap_or("").as_bytes().to_vec().into()),
                    ..Block::default()
                }),
                "tool_use" => {
                    let Some(id) = s("id") else {
                        skips.push(format!(
                            "content[{i}]: tool_use without an id, not imported"
                        ));
                        continue;
                    };
                    if r.calls.iter().any(|(c, _)| &**c == id) {
                        skips.push(format!("content[{i}]: tool call {id} repeated, kept once"));
                        continue;
                    }
                    let name = smith_tool_name(s("name").unwrap_or("unknown"));
                    let args = b
                        .get("input")
                        .map_or_else(|| "{}".to_string(), value_to_string);
                    r.blocks.push(Block::tool_use(id, name, &args));
                    r.calls.push((id.into(), line));
                }
                kind if is_server_tool_block(kind) => r.blocks.push(server_tool_block(b)),
                "" => skips.push(format!("content[{i}]: a block without a \"type\"")),
                // A type nothing can use: counted and named once per file.
                other => *self.not_imported.entry(other.to_string()).or_default() += 1,
            }
        }
        if let Some(u) = message.get("usage").and_then(Value::as_object) {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let usage = RequestUsage {
                input_tokens: n("input_tokens"),
                cache_creation_input_tokens: n("cache_creation_input_tokens"),
                cache_read_input_tokens: n("cache_read_input_tokens"),
                output_tokens: n("output_tokens"),
                ..RequestUsage::default()
            };
            r.usage
                .get_or_insert_with(RequestUsage::default)
                .merge_max(&usage);
            // The split of the writes by cache lifetime, in logs new
            // enough to record it.
            let split = u.get("cache_creation").and_then(Value::as_object);
            let tier = |k: &str| split.and_then(|c| c.get(k)).and_then(Value::as_u64);
            r.record.merge(&RequestRecord {
                timestamp: self.line_time.clone(),
                cache_write_5m: tier("ephemeral_5m_input_tokens"),
                cache_write_1h: tier("ephemeral_1h_input_tokens"),
                ..RequestRecord::default()
            });
        }
        for reason in skips {
            self.skipped.add(line, reason);
        }
    }

    fn user(
        &mut self,
        line: usize,
        obj: &Map<String, Value>,
        blocks: &[Value],
        uuid: Option<&str>,
    ) {
        if flag(obj, "isCompactSummary") {
            return self.summary(line, blocks);
        }
        let mut content = Vec::new();
        let mut skips = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            match b.get("type").and_then(Value::as_str).unwrap_or("") {
                "tool_result" => {
                    if let Err(why) = self.result(b, uuid) {
                        skips.push(format!("content[{i}]: {why}"));
                    }
                }
                "text" => content.push(text_block(
                    b.get("text").and_then(Value::as_str).unwrap_or(""),
                )),
                "image" => content.push(media(BlockType::Image, b, None)),
                "document" => content.push(media(BlockType::Document, b, None)),
                kind if is_server_tool_block(kind) => content.push(server_tool_block(b)),
                "" => skips.push(format!("content[{i}]: a block without a \"type\"")),
                other => *self.not_imported.entry(other.to_string()).or_default() += 1,
            }
        }
        for reason in skips {
            self.skipped.add(line, reason);
        }
        if content.is_empty() {
            return;
        }
        let first_text = content
            .iter()
            .find(|b| b.kind == BlockType::Text)
            .map(|b| b.text_lossy().into_owned())
            .unwrap_or_default();
        let synthetic = flag(obj, "isMeta") || harness_written(&first_text);
        let message = Message::new(Role::User, content, synthetic, short_id(uuid));
        match &mut self.open {
            Some(r) => r.after.push(message),
            None => self.messages.push(message),
        }
    }

    /// Files one `tool_result` block with the open response's call.
    fn result(&mut self, b: &Value, uuid: Option<&str>) -> Result<(), OrphanResult> {
        let id = b
            .get("tool_use_id")
            .and_then(Value::as_str)
            .ok_or(OrphanResult::NoId)?;
        let Some(r) = self
            .open
            .as_mut()
            .filter(|r| r.calls.iter().any(|(c, _)| &**c == id))
        else {
            return Err(OrphanResult::NoCall(id.to_string()));
        };
        if r.results.contains_key(id) {
            return Err(OrphanResult::Second(id.to_string()));
        }
        let id: Str = id.into();
        let is_error = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let mut text = String::new();
        let mut extra = Vec::new();
        match b.get("content") {
            Some(Value::String(s)) => text.push_str(s),
            Some(Value::Array(parts)) => {
                for part in parts {
                    match part.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
                        }
                        Some("image") => {
                            extra.push(media(BlockType::Image, part, Some(id.clone())))
                        }
                        Some("document") => {
                            extra.push(media(BlockType::Document, part, Some(id.clone())))
                        }
                        // Anything else is shown as its JSON: it reached the
                        // model in some form, and its size should count.
                        _ => {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(&value_to_string(part));
                        }
                    }
                }
            }
            Some(Value::Null) | None => {}
            Some(other) => text.push_str(&value_to_string(other)),
        }
        let mut blocks = vec![Block::tool_result(
            Some(id.clone()),
            text.into_bytes(),
            is_error,
        )];
        blocks.extend(extra);
        r.results.insert(id, blocks);
        if r.result_id.is_none() {
            r.result_id = short_id(uuid);
        }
        Ok(())
    }

    fn boundary(&mut self, line: usize, obj: &Map<String, Value>) {
        self.close();
        let meta = obj.get("compactMetadata").and_then(Value::as_object);
        self.boundaries.push(CompactBoundary {
            message_index: self.messages.len(),
            requests_before: self.assistants,
            pre_tokens: meta
                .and_then(|m| m.get("preTokens"))
                .and_then(Value::as_u64),
            trigger: meta.and_then(|m| str_field(m, "trigger")),
            summary_bytes: None,
            line,
            agent_version: str_field(obj, "version"),
            ..CompactBoundary::default()
        });
        self.boundary_times.push(self.line_time.clone());
    }

    /// A micro-compaction: old tool results cleared in place, the messages
    /// kept.
    fn microcompact(&mut self, line: usize, obj: &Map<String, Value>) {
        self.close();
        let meta = obj.get("microcompactMetadata").and_then(Value::as_object);
        let n = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_u64);
        let cleared = meta
            .and_then(|m| m.get("compactedToolIds"))
            .and_then(Value::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        self.boundaries.push(CompactBoundary {
            message_index: self.messages.len(),
            requests_before: self.assistants,
            pre_tokens: n("preTokens"),
            trigger: meta.and_then(|m| str_field(m, "trigger")),
            line,
            kind: Some(MICROCOMPACT.into()),
            tokens_saved: n("tokensSaved"),
            cleared_tool_ids: cleared,
            agent_version: str_field(obj, "version"),
            ..CompactBoundary::default()
        });
        self.boundary_times.push(self.line_time.clone());
    }

    /// The summary after a boundary: its size goes to the boundary (a new
    /// one if the file has a summary without a boundary line).
    fn summary(&mut self, line: usize, blocks: &[Value]) {
        let texts: Vec<&str> = blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let bytes: usize = texts.iter().map(|t| t.len()).sum();
        let text = texts.join("\n");
        self.close();
        let at = self.messages.len();
        match self.boundaries.last_mut() {
            Some(b) if b.is_full() && b.message_index == at && b.summary_bytes.is_none() => {
                b.summary_bytes = Some(bytes as u64);
                b.summary = Some(text);
            }
            _ => {
                self.boundaries.push(CompactBoundary {
                    message_index: at,
                    requests_before: self.assistants,
                    summary_bytes: Some(bytes as u64),
                    summary: Some(text),
                    line,
                    ..CompactBoundary::default()
                });
                self.boundary_times.push(self.line_time.clone());
            }
        }
    }

    /// Writes out the open response: the assistant message, one tool message
    /// with its results in call order, then what arrived meanwhile.
    fn close(&mut self) {
        let Some(r) = self.open.take() else {
            return;
        };
        self.closed.insert(r.key.clone(), r.line);
        if !r.blocks.is_empty() {
            let index = self.messages.len();
            self.messages
                .push(Message::new(Role::Assistant, r.blocks, false, r.id));
            self.assistants += 1;
            if let Some(mut usage) = r.usage {
                usage.message_index = index;
                usage.model = r.model;
                self.requests.push(usage);
                self.records.push(RequestRecord {
                    message_index: index,
                    ..r.record
                });
            }
            if !r.calls.is_empty() {
                let mut results = r.results;
                let mut content = Vec::with_capacity(r.calls.len());
                for (id, line) in r.calls {
                    match results.remove(&id) {
                        Some(blocks) => content.extend(blocks),
                        None => {
                            self.synthetic_results += 1;
                            self.notes.push(Skip {
                                line,
                                reason: format!(
                                    "tool call {id} has no result in the log; given the error result {NO_RESULT_TEXT:?}"
                                ),
                            });
                            content.push(Block::tool_result(
                                Some(id),
                                NO_RESULT_TEXT.as_bytes().to_vec(),
                                true,
                            ));
                        }
                    }
                }
                self.messages
                    .push(Message::new(Role::Tool, content, false, r.result_id));
            }
        }
        self.messages.extend(r.after);
    }

    fn finish(self, path: &Path, kind: Kind, log: ReadLog) -> ImportedSession {
        let source_path = absolute(path);
        let file_stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("session");
        let stem = self.name.as_deref().unwrap_or(file_stem);
        let (id, parent_id, parent_path) = match &kind {
            Kind::Main => (plain_id(&format!("cc-{stem}")), None, None),
            Kind::Subagent { parent } => {
                let parent = parent.clone().or_else(|| self.session_id.clone());
                let id = match &parent {
                    Some(p) => plain_id(&format!("cc-{p}-{stem}")),
                    None => plain_id(&format!("cc-{stem}")),
                };
                // The parent's log: beside the `subagents` directory's
                // parent, or beside this file in the older flat layout.
                let project = match path.parent() {
                    Some(d) if d.file_name().is_some_and(|n| n == "subagents") => {
                        d.parent().and_then(Path::parent)
                    }
                    other => other,
                };
                let parent_path = match (&parent, project) {
                    (Some(p), Some(dir)) => Some(
                        absolute(&dir.join(format!("{p}.jsonl")))
                            .display()
                            .to_string(),
                    ),
                    _ => None,
                };
                (
                    id,
                    parent.map(|p| plain_id(&format!("cc-{p}"))),
                    parent_path,
                )
            }
        };
        let dangling: Vec<&(usize, String)> = self
            .parents_unseen
            .iter()
            .filter(|(_, p)| !self.uuids.contains_key(p))
            .collect();
        let context_note = dangling.first().map(|(line, parent)| {
            format!(
                "line {line} continues a conversation recorded elsewhere (parentUuid {parent} is not in this log): the model saw more than this transcript"
            )
        });
        let fallback_time = mtime(path);
        let mut boundaries = self.boundaries;
        if kind == Kind::Main {
            link_compaction_files(path, &mut boundaries, &self.boundary_times);
        }
        let mut file = SessionFile {
            id,
            name: None,
            created_at: self.first_time.or_else(|| fallback_time.clone()),
            updated_at: self.last_time.or(fallback_time),
            cwd: self.cwd,
            model: self.model,
            provider: Some("anthropic".into()),
            parent_id,
            source: Source {
                format: FORMAT_CLAUDE_CODE.into(),
                path: source_path.display().to_string(),
                lines: log.lines,
                session_id: self.session_id,
                agent_id: self.agent_id,
                instance_id: None,
            },
            context_complete: context_note.is_none(),
            context_note,
            requests: self.requests,
            request_records: self.records,
            compact_boundaries: boundaries,
            ..SessionFile::default()
        };
        file.import.synthetic_results = self.synthetic_results;
        file.import.agent_written = self.agent_written;
        file.import.not_imported = self.not_imported;
        ImportedSession::new(file, self.messages, log, self.notes, parent_path)
    }
}

/// An image or document block: only its kind and media type are kept (the
/// estimate charges a flat size for media, and the bytes would bloat the
/// transcript); in a tool message it carries the call's id, as smith's do.
fn media(kind: BlockType, b: &Value, tool_call_id: Option<Str>) -> Block {
    let media_type = b
        .get("source")
        .and_then(|s| s.get("media_type"))
        .and_then(Value::as_str)
        .map(Str::from);
    Block {
        kind,
        media_type,
        tool_call_id,
        ..Block::default()
    }
}

/// How long before its boundary line a compaction call's log may end and
/// still be the one that wrote that summary: the call ends, then the
/// harness writes the boundary, within a second in the logs seen.
const COMPACTION_FILE_SLACK_SECONDS: i64 = 120;

/// Links each full compaction of a main log to the `agent-acompact-*` log
/// of the call that made it: the one in `<session>/subagents/` whose last
/// line is the latest at or before the boundary's, within
/// [`COMPACTION_FILE_SLACK_SECONDS`]; each file is linked once.
fn link_compaction_files(
    path: &Path,
    boundaries: &mut [CompactBoundary],
    times: &[Option<String>],
) {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir.join(stem).join("subagents")) else {
        return;
    };
    let mut files: Vec<(i64, std::path::PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            is_session_log(p)
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("agent-acompact-"))
        })
        .filter_map(|p| Some((last_time(&p)?, p)))
        .collect();
    files.sort();
    for (b, t) in boundaries.iter_mut().zip(times) {
        let Some(at) = t.as_deref().and_then(crate::time::parse_rfc3339) else {
            continue;
        };
        if !b.is_full() {
            continue;
        }
        let Some(k) = files
            .iter()
            .rposition(|(end, _)| *end <= at && at - end <= COMPACTION_FILE_SLACK_SECONDS)
        else {
            continue;
        };
        let (_, p) = files.remove(k);
        b.compaction_file = Some(absolute(&p).display().to_string());
    }
}

/// The `timestamp` of the last line of a log that has one, in seconds.
fn last_time(path: &Path) -> Option<i64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().rev().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        v.get("timestamp")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_rfc3339)
    })
}
