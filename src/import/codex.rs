//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) into
//! smith sessions.
//!
//! A rollout is one JSON object per line, `{timestamp, type, payload}`:
//!
//! - `session_meta`: the session's id, working directory, provider and
//!   the base instructions (the system prompt, whose size is the
//!   session's overhead);
//! - `turn_context`: the settings of the turn that follows, the model among
//!   them (a session can switch models between turns);
//! - `response_item`: the history as the model sees it: `message`s (the
//!   user's, the harness's `developer` and environment messages, the
//!   assistant's answers), `reasoning`, `function_call` and
//!   `custom_tool_call` with their `*_output`s, matched by `call_id`;
//! - `event_msg`: what the CLI showed, mostly repeating the history; its
//!   `token_count` carries the provider's usage of the request just answered
//!   (`info.last_token_usage`: `input_tokens` of which `cached_input_tokens`
//!   were read from OpenAI's automatic cache, `output_tokens`), repeated
//!   unchanged when nothing new was sent;
//! - `compacted`: Codex replaced the history by `replacement_history` (the
//!   user's messages and a summary): a [`CompactBoundary`] in `session.json`.
//!
//! The items a response produced (reasoning, text, calls) become one smith
//! assistant message, closed by its `token_count`; the outputs of its calls
//! one tool message after it, in call order, a call without an output
//! getting the error result [`NO_RESULT_TEXT`]. Bad lines are skipped with
//! their line number and counted; nothing is ever written into the rollouts'
//! directories.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use serde_json::{Map, Value};

use super::{
    absolute, for_each_object, mtime, plain_id, str_field, ImportedSession, Skipped, NO_RESULT_TEXT,
};
use crate::engine::constants::BYTES_PER_TOKEN;
use crate::transcript::json::value_to_string;
use crate::transcript::session_file::{
    CompactBoundary, Overhead, RequestRecord, RequestUsage, SessionFile, Source, FORMAT_CODEX,
};
use crate::transcript::{Block, BlockType, Message, ReadLog, Role, Skip, Str};

/// Codex's tool names that smith has a tool for, and smith's name.
pub(crate) const TOOL_NAMES: [(&str, &str); 3] = [
    ("exec_command", "bash"),
    ("shell", "bash"),
    ("apply_patch", "edit_file"),
];

/// How user messages Codex writes itself begin: they reach the model but
/// nobody typed them, so they do not start a real turn.
pub(crate) const HARNESS_PREFIXES: [&str; 5] = [
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<turn_aborted>",
    "# AGENTS.md instructions",
];

/// Whether `path` is a Codex rollout: `rollout-*.jsonl`.
pub(crate) fn is_rollout(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("rollout-") && name.ends_with(".jsonl")
}

/// Imports one rollout.
pub(crate) fn import_file(path: &Path) -> io::Result<ImportedSession> {
    convert(File::open(path)?, path)
}

/// smith's name for a Codex tool.
fn smith_tool_name(name: &str) -> &str {
    TOOL_NAMES
        .iter()
        .find(|(c, _)| *c == name)
        .map_or(name, |(_, s)| s)
}

#[derive(Default)]
struct Converter {
    messages: Vec<Message>,
    /// The response being assembled: its blocks and calls.
    open: Vec<Block>,
    calls: Vec<Str>,
    /// Outputs of the last response's calls, by call id.
    results: HashMap<String, Block>,
    /// Calls of the last closed response still waiting for their outputs.
    waiting: Vec<Str>,
    /// The last assistant message, and whether its usage is known.
    last_answer: Option<(usize, bool)>,
    requests: Vec<RequestUsage>,
    records: Vec<RequestRecord>,
    boundaries: Vec<CompactBoundary>,
    /// `total_token_usage.total_tokens` of the last `token_count` kept.
    last_total: Option<u64>,
    model: Option<String>,
    first_model: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    provider: Option<String>,
    /// The window the last `token_count` recorded.
    context_window: Option<u64>,
    /// `session_meta`'s `cli_version`.
    cli_version: Option<String>,
    instructions_bytes: u64,
    first_time: Option<String>,
    last_time: Option<String>,
    synthetic_results: usize,
    /// Items and content parts of a type nothing can use, by type (not
    /// damage).
    not_imported: BTreeMap<String, usize>,
    skipped: Skipped,
    notes: Vec<Skip>,
}

/// The text of a message's content: its `input_text` / `output_text` /
/// `text` parts, joined.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The images of a message's content, as image blocks after its text: a
/// user's pasted screenshot reaches the model as an image, and the estimate
/// charges it as one (its `data:` URL's bytes would count as text). Parts of
/// any other type with no text are counted in `not_imported`.
fn content_media(
    content: Option<&Value>,
    not_imported: &mut BTreeMap<String, usize>,
) -> Vec<Block> {
    let Some(Value::Array(parts)) = content else {
        return Vec::new();
    };
    let mut media = Vec::new();
    for part in parts {
        match part.get("type").and_then(Value::as_str) {
            Some("input_image") => {
                let url = part.get("image_url").and_then(Value::as_str).unwrap_or("");
                let media_type = url
                    .strip_prefix("data:")
                    .and_then(|u| u.split([';', ',']).next())
                    .filter(|t| !t.is_empty())
                    .map(Str::from);
                media.push(Block {
                    kind: BlockType::Image,
                    media_type,
                    ..Block::default()
                });
            }
            Some(kind) if part.get("text").is_none() => {
                *not_imported.entry(kind.to_string()).or_default() += 1
            }
            _ => {}
        }
    }
    media
}

/// An output as text: a string as it is, anything else as its JSON.
fn output_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => value_to_string(other),
    }
}

/// A `reasoning` item as a thinking block: its summary's text.
fn reasoning(p: &Map<String, Value>) -> Block {
    let summary: Vec<&str> = p
        .get("summary")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if summary.is_empty() {
        // Only the encrypted reasoning, sent back with the
        // history: its size is what the model is charged.
        Block {
            kind: BlockType::RedactedThinking,
            text: Some(
                str_field(p, "encrypted_content")
                    .unwrap_or_default()
                    .into_bytes()
                    .into(),
            ),
            ..Block::default()
        }
    } else {
        Block {
            kind: BlockType::Thinking,
            text: Some(summary.join("\n").into_bytes().into()),
            ..Block::default()
        }
    }
}

impl Converter {
    fn line(&mut self, line: usize, obj: Map<String, Value>) {
        let time = str_field(&obj, "timestamp");
        if let Some(t) = &time {
            self.first_time.get_or_insert_with(|| t.clone());
            self.last_time = Some(t.clone());
        }
        let Some(payload) = obj.get("payload").and_then(Value::as_object) else {
            return self
                .skipped
                .add(line, "no \"payload\" object: not a line of a Codex rollout");
        };
        match obj.get("type").and_then(Value::as_str) {
            Some("session_meta") => self.meta(payload),
            Some("turn_context") => {
                if let Some(m) = str_field(payload, "model") {
                    self.first_model.get_or_insert_with(|| m.clone());
                    self.model = Some(m);
                }
            }
            Some("response_item") => self.item(line, payload),
            Some("event_msg") => {
                if payload.get("type").and_then(Value::as_str) == Some("token_count") {
                    self.token_count(line, payload, time);
                }
            }
            Some("compacted") => self.compacted(line, payload),
            Some(_) => {}
            None => self
                .skipped
                .add(line, "no \"type\": not a line of a Codex rollout"),
        }
    }

    fn meta(&mut self, p: &Map<String, Value>) {
        self.session_id = self.session_id.take().or_else(|| str_field(p, "id"));
        self.cwd = self.cwd.take().or_else(|| str_field(p, "cwd"));
        self.cli_version = self
            .cli_version
            .take()
            .or_else(|| str_field(p, "cli_version"));
        self.provider = self
            .provider
            .take()
            .or_else(|| str_field(p, "model_provider"));
        if let Some(t) = p
            .get("base_instructions")
            .and_then(|b| b.get("text"))
            .and_then(Value::as_str)
        {
            self.instructions_bytes = t.len() as u64;
        }
    }

    fn item(&mut self, line: usize, p: &Map<String, Value>) {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "message" => {
                let text = content_text(p.get("content"));
                let media = content_media(p.get("content"), &mut self.not_imported);
                match p.get("role").and_then(Value::as_str) {
                    Some("assistant") => {
                        self.start_answer();
                        self.open.push(Block::text(text.into_bytes()));
                        self.open.extend(media);
                    }
                    Some(role @ ("user" | "developer" | "system")) => {
                        self.close_answer();
                        self.flush_results();
                        let t = text.trim_start();
                        let synthetic =
                            role != "user" || HARNESS_PREFIXES.iter().any(|h| t.starts_with(h));
                        let mut content = vec![Block::text(text.into_bytes())];
                        content.extend(media);
                        self.messages
                            .push(Message::new(Role::User, content, synthetic, None));
                    }
                    other => self
                        .skipped
                        .add(line, format!("message of role {other:?} not imported")),
                }
            }
            "reasoning" => {
                self.start_answer();
                self.open.push(reasoning(p));
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let Some(id) = str_field(p, "call_id") else {
                    return self
                        .skipped
                        .add(line, format!("{kind} without a call_id, not imported"));
                };
                self.start_answer();
                if self.calls.iter().any(|c| **c == *id) {
                    return self
                        .skipped
                        .add(line, format!("tool call {id} repeated, kept once"));
                }
                let name = smith_tool_name(p.get("name").and_then(Value::as_str).unwrap_or(
                    if kind == "local_shell_call" {
                        "shell"
                    } else {
                        "unknown"
                    },
                ));
                let args = match (p.get("arguments"), p.get("input"), p.get("action")) {
                    (Some(Value::String(a)), _, _) => a.clone(),
                    (_, Some(Value::String(i)), _) => serde_json::json!({ "input": i }).to_string(),
                    (_, _, Some(a)) => value_to_string(a),
                    _ => "{}".into(),
                };
                self.open.push(Block::tool_use(&id, name, &args));
                self.calls.push(id.into());
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                let Some(id) = str_field(p, "call_id") else {
                    return self
                        .skipped
                        .add(line, format!("{kind} without a call_id, not imported"));
                };
                self.close_answer();
                if !self.waiting.iter().any(|c| **c == *id) {
                    return self.skipped.add(
                        line,
                        format!(
                            "output of tool call {id}, which the response before it did not make"
                        ),
                    );
                }
                if self.results.contains_key(&id) {
                    return self.skipped.add(
                        line,
                        format!("a second output for tool call {id}, first one kept"),
                    );
                }
                let text = output_text(p.get("output"));
                self.results.insert(
                    id.clone(),
                    Block::tool_result(Some(id.as_str().into()), text.into_bytes(), false),
                );
            }
            // A web search the model ran within its response: the call
            // (its query or page) is sent back with the history as the
            // model's own output, so it is text of the assistant message,
            // its bytes the item's JSON. The results stay on OpenAI's side
            // and are not in the rollout.
            "web_search_call" => {
                self.start_answer();
                self.open.push(Block::text(
                    value_to_string(&Value::Object(p.clone())).into_bytes(),
                ));
            }
            // Codex's own undo snapshots: never sent to the model.
            "ghost_snapshot" => {}
            "" => self.skipped.add(line, "response item without a \"type\""),
            // A type nothing can use: counted and named once per folder.
            other => *self.not_imported.entry(other.to_string()).or_default() += 1,
        }
    }

    /// A response item of the assistant: the previous response's outputs
    /// are all in.
    fn start_answer(&mut self) {
        if self.open.is_empty() {
            self.flush_results();
        }
    }

    /// Writes out the response being assembled.
    fn close_answer(&mut self) {
        if self.open.is_empty() {
            return;
        }
        let index = self.messages.len();
        self.messages.push(Message::new(
            Role::Assistant,
            std::mem::take(&mut self.open),
            false,
            None,
        ));
        self.last_answer = Some((index, false));
        self.waiting = std::mem::take(&mut self.calls);
    }

    /// Writes out the outputs of the last response's calls, in call order.
    fn flush_results(&mut self) {
        if self.waiting.is_empty() {
            return;
        }
        let mut content = Vec::with_capacity(self.waiting.len());
        for id in std::mem::take(&mut self.waiting) {
            match self.results.remove(&*id) {
                Some(b) => content.push(b),
                None => {
                    self.synthetic_results += 1;
                    self.notes.push(Skip {
                        line: 0,
                        reason: format!(
                            "tool call {id} has no output in the rollout; given the error result {NO_RESULT_TEXT:?}"
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
        self.results.clear();
        self.messages
            .push(Message::new(Role::Tool, content, false, None));
    }

    fn token_count(&mut self, line: usize, p: &Map<String, Value>, time: Option<String>) {
        let Some(info) = p.get("info").and_then(Value::as_object) else {
            // Rate limits alone: no request.
            return;
        };
        let total = info
            .get("total_token_usage")
            .and_then(|t| t.get("total_tokens"))
            .and_then(Value::as_u64);
        if total.is_some() && total == self.last_total {
            // The same count again: nothing was sent since.
            return;
        }
        if let Some(w) = info.get("model_context_window").and_then(Value::as_u64) {
            self.context_window = Some(w);
        }
        let Some(last) = info.get("last_token_usage").and_then(Value::as_object) else {
            return self
                .skipped
                .add(line, "token_count without last_token_usage");
        };
        let n = |k: &str| last.get(k).and_then(Value::as_u64).unwrap_or(0);
        self.close_answer();
        let Some((index, false)) = self.last_answer else {
            return self.skipped.add(
                line,
                "token_count with no response since the last one: its usage is not kept",
            );
        };
        self.last_total = total;
        self.last_answer = Some((index, true));
        let input = n("input_tokens");
        let cached = n("cached_input_tokens").min(input);
        self.requests.push(RequestUsage {
            message_index: index,
            input_tokens: input - cached,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cached,
            output_tokens: n("output_tokens"),
            model: self.model.clone(),
        });
        self.records.push(RequestRecord {
            message_index: index,
            timestamp: time,
            ..RequestRecord::default()
        });
    }

    fn compacted(&mut self, line: usize, p: &Map<String, Value>) {
        self.close_answer();
        self.flush_results();
        let history = p.get("replacement_history").and_then(Value::as_array);
        let bytes: u64 = history.map_or(0, |h| {
            h.iter()
                .map(|item| content_text(item.get("content")).len() as u64)
                .sum()
        });
        let message = str_field(p, "message").filter(|m| !m.is_empty());
        // The summary is the replacement history's last message that the
        // user did not type, else the payload's own message.
        let summary = history
            .and_then(|h| {
                h.iter().rev().find_map(|item| {
                    let text = content_text(item.get("content"));
                    (!text.is_empty() && item.get("role").and_then(Value::as_str) != Some("user"))
                        .then_some(text)
                })
            })
            .or(message);
        let pre_tokens = self.requests.last().map(RequestUsage::prompt_tokens);
        let kept = history.map_or_else(Vec::new, |h| self.kept_messages(h));
        self.boundaries.push(CompactBoundary {
            message_index: self.messages.len(),
            requests_before: self.requests.len(),
            pre_tokens,
            trigger: None,
            summary_bytes: Some(bytes),
            line,
            kind: None,
            tokens_saved: pre_tokens.map(|t| t.saturating_sub(bytes / BYTES_PER_TOKEN)),
            summary,
            cleared_tool_ids: Vec::new(),
            compaction_file: None,
            kept,
            agent_version: self.cli_version.clone(),
        });
    }

    /// The messages of the transcript a `replacement_history` carries on:
    /// its user and developer messages matched, from the last back, each
    /// with the latest earlier user message of the same text, so that the
    /// kept messages stand in the history's order.
    fn kept_messages(&self, history: &[Value]) -> Vec<usize> {
        let mut kept: Vec<usize> = Vec::new();
        let mut before = self.messages.len();
        for item in history.iter().rev() {
            let role = item.get("role").and_then(Value::as_str);
            if !matches!(role, Some("user" | "developer" | "system")) {
                continue;
            }
            let text = content_text(item.get("content"));
            // The text is the message's first block; images may follow it.
            let found = self.messages[..before].iter().rposition(|m| {
                m.role == Role::User
                    && m.content.first().is_some_and(|b| {
                        b.kind == BlockType::Text && b.text_bytes() == text.as_bytes()
                    })
                    && m.content[1..].iter().all(|b| b.kind.is_media())
            });
            if let Some(i) = found {
                kept.push(i);
                before = i;
            }
        }
        kept.reverse();
        kept
    }

    fn finish(mut self, path: &Path, log: ReadLog) -> ImportedSession {
        self.close_answer();
        self.flush_results();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("rollout");
        let id = plain_id(&format!(
            "codex-{}",
            self.session_id.as_deref().unwrap_or(stem)
        ));
        let fallback = mtime(path);
        let mut log = log;
        self.skipped.move_to(&mut log);
        let mut file = SessionFile {
            id,
            created_at: self.first_time.or_else(|| fallback.clone()),
            updated_at: self.last_time.or(fallback),
            cwd: self.cwd,
            model: self.first_model,
            provider: Some(self.provider.unwrap_or_else(|| "openai".into())),
            context_window: self.context_window,
            source: Source {
                format: FORMAT_CODEX.into(),
                path: absolute(path).display().to_string(),
                lines: log.lines,
                session_id: self.session_id,
                agent_id: None,
                instance_id: None,
            },
            requests: self.requests,
            request_records: self.records,
            compact_boundaries: self.boundaries,
            overhead: (self.instructions_bytes > 0).then_some(Overhead {
                system_prompt_bytes: self.instructions_bytes,
                tokens: self.instructions_bytes / BYTES_PER_TOKEN,
            }),
            ..SessionFile::default()
        };
        file.import.synthetic_results = self.synthetic_results;
        file.import.not_imported = self.not_imported;
        ImportedSession::new(file, self.messages, log, self.notes, None)
    }
}

/// Converts a rollout read from `reader`; `path` names it in reports and in
/// `source.path`. Only an I/O error fails; bad lines are skipped and
/// counted.
pub(crate) fn convert<R: Read>(reader: R, path: &Path) -> io::Result<ImportedSession> {
    let mut c = Converter::default();
    let mut log = ReadLog {
        path: path.to_path_buf(),
        ..ReadLog::default()
    };
    for_each_object(reader, &mut log, |line_no, obj| c.line(line_no, obj))?;
    Ok(c.finish(path, log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::pairing_problems;
    use serde_json::json;

    fn rollout(lines: &[Value]) -> ImportedSession {
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        convert(
            std::io::Cursor::new(text.join("\n")),
            Path::new("rollout-x.jsonl"),
        )
        .unwrap()
    }

    fn at(n: u32, kind: &str, payload: Value) -> Value {
        json!({"timestamp": format!("2026-03-11T23:15:{n:02}.000Z"), "type": kind, "payload": payload})
    }

    fn count(total: u64, input: u64, cached: u64, output: u64) -> Value {
        json!({"type": "token_count", "info": {
            "total_token_usage": {"total_tokens": total},
            "last_token_usage": {"input_tokens": input, "cached_input_tokens": cached,
                                 "output_tokens": output, "reasoning_output_tokens": 10},
            "model_context_window": 258400}})
    }

    #[test]
    fn a_rollout_becomes_a_paired_session_with_usage_per_request() {
        let s = rollout(&[
            at(
                0,
                "session_meta",
                json!({"id": "019c", "cwd": "/w", "cli_version": "0.114.0",
                "model_provider": "openai", "base_instructions": {"text": "You are Codex."}}),
            ),
            at(1, "turn_context", json!({"model": "gpt-5.4"})),
            at(
                1,
                "response_item",
                json!({"type": "message", "role": "developer",
                "content": [{"type": "input_text", "text": "<permissions instructions>x"}]}),
            ),
            at(
                2,
                "response_item",
                json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "fix it"}]}),
            ),
            at(
                3,
                "response_item",
                json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
            ),
            at(
                3,
                "response_item",
                json!({"type": "function_call", "name": "exec_command",
                "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1"}),
            ),
            at(
                3,
                "response_item",
                json!({"type": "function_call", "name": "exec_command",
                "arguments": "{\"cmd\":\"pwd\"}", "call_id": "c2"}),
            ),
            at(4, "event_msg", count(12394, 12088, 7808, 306)),
            // Repeated unchanged: not a request.
            at(4, "event_msg", count(12394, 12088, 7808, 306)),
            at(
                5,
                "response_item",
                json!({"type": "function_call_output", "call_id": "c2", "output": "/w"}),
            ),
            at(
                5,
                "response_item",
                json!({"type": "function_call_output", "call_id": "c1", "output": "a b"}),
            ),
            "not json".into(),
            at(
                6,
                "response_item",
                json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}]}),
            ),
            at(7, "event_msg", count(25000, 12500, 12288, 50)),
        ]);
        let f = &s.file;
        assert_eq!(f.source.format, FORMAT_CODEX);
        assert_eq!(f.provider.as_deref(), Some("openai"));
        assert_eq!(f.model.as_deref(), Some("gpt-5.4"));
        assert_eq!(f.id, "codex-019c");
        assert!(pairing_problems(&s.messages).is_empty());
        let roles: Vec<Role> = s.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::User,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Assistant
            ]
        );
        assert!(s.messages[0].synthetic && !s.messages[1].synthetic);
        // Results in call order.
        let ids: Vec<&str> = s.messages[3]
            .content
            .iter()
            .filter_map(|b| b.tool_call_id.as_deref())
            .collect();
        assert_eq!(ids, ["c1", "c2"]);
        assert_eq!(s.messages[2].content[1].tool_name.as_deref(), Some("bash"));
        assert_eq!(f.requests.len(), 2);
        let r = &f.requests[0];
        assert_eq!(
            (
                r.message_index,
                r.input_tokens,
                r.cache_read_input_tokens,
                r.output_tokens
            ),
            (2, 12088 - 7808, 7808, 306)
        );
        assert_eq!(r.prompt_tokens(), 12088);
        assert_eq!(f.requests[1].message_index, 4);
        assert_eq!(
            f.request_records[1].timestamp.as_deref(),
            Some("2026-03-11T23:15:07.000Z")
        );
        assert_eq!(f.overhead.as_ref().unwrap().system_prompt_bytes, 14);
        // The bad line is named by its number.
        assert_eq!(s.log.skipped.len(), 1);
        assert_eq!(s.log.skipped[0].line, 12);
    }

    #[test]
    fn a_compaction_is_a_boundary_with_its_summary() {
        let s = rollout(&[
            at(1, "turn_context", json!({"model": "gpt-5.3-codex"})),
            at(
                2,
                "response_item",
                json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "go"}]}),
            ),
            at(
                3,
                "response_item",
                json!({"type": "function_call", "name": "shell",
                "arguments": "{}", "call_id": "c1"}),
            ),
            at(4, "event_msg", count(100_000, 90_000, 80_000, 500)),
            at(
                5,
                "compacted",
                json!({"message": "", "replacement_history": [
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "summary of it all"}]}
                ]}),
            ),
            at(
                6,
                "response_item",
                json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "ok"}]}),
            ),
            at(7, "event_msg", count(110_000, 3_000, 0, 20)),
        ]);
        let f = &s.file;
        assert!(pairing_problems(&s.messages).is_empty());
        // The call without an output got the error result.
        assert_eq!(f.import.synthetic_results, 1);
        let b = &f.compact_boundaries[0];
        assert_eq!((b.requests_before, b.line, b.kind.as_deref()), (1, 5, None));
        assert_eq!(b.summary.as_deref(), Some("summary of it all"));
        assert_eq!(b.summary_bytes, Some(2 + 17));
        assert_eq!(b.pre_tokens, Some(90_000));
        assert_eq!(b.message_index, 3);
        assert_eq!(f.requests[1].message_index, 3);
    }

    #[test]
    fn every_item_type_is_imported_ignored_or_counted_on_purpose() {
        let search = json!({"type": "web_search_call", "status": "completed",
            "action": {"type": "search", "query": "serde flatten"}});
        let mut lines = vec![
            at(1, "turn_context", json!({"model": "gpt-5.4"})),
            at(
                2,
                "response_item",
                json!({"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "what is this?"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}),
            ),
            at(3, "response_item", search.clone()),
            at(
                3,
                "response_item",
                json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "a crate"}]}),
            ),
            at(4, "event_msg", count(2_000, 1_500, 0, 40)),
            at(
                5,
                "response_item",
                json!({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
            ),
            at(5, "response_item", json!({"status": "completed"})),
        ];
        for n in 0..7 {
            lines.push(at(
                6 + n,
                "response_item",
                json!({"type": "shiny_new_item", "n": n}),
            ));
        }
        let s = rollout(&lines);
        let roles: Vec<Role> = s.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant]);
        // The pasted image is an image block after the text, not text.
        let user: Vec<BlockType> = s.messages[0].content.iter().map(|b| b.kind).collect();
        assert_eq!(user, [BlockType::Text, BlockType::Image]);
        assert_eq!(
            s.messages[0].content[1].media_type.as_deref(),
            Some("image/png")
        );
        // The web search is the answer's first text, its bytes the item's
        // JSON, and the request that answered it prices them.
        let answer = &s.messages[1];
        assert_eq!(answer.content[0].text_lossy(), value_to_string(&search));
        assert_eq!(answer.content[1].text_lossy(), "a crate");
        assert_eq!(s.file.requests[0].message_index, 1);
        // The item with no type is damage, named by its line; the ghost
        // snapshot is Codex's own; the 7 unknown items are one count.
        let lines: Vec<usize> = s.log.skipped.iter().map(|k| k.line).collect();
        assert_eq!(lines, [7]);
        let counted: Vec<(&str, usize)> = s
            .file
            .import
            .not_imported
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect();
        assert_eq!(counted, [("shiny_new_item", 7)]);
    }

    #[test]
    fn rollouts_are_found_by_name() {
        assert!(is_rollout(Path::new(
            "a/2026/03/09/rollout-2026-03-09T17-36-24-019c.jsonl"
        )));
        assert!(!is_rollout(Path::new("a/history.jsonl")));
    }
}
