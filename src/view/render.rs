//! The readable rendering of a transcript (or of a working history).
//!
//! Written straight to the output, message by message, so a large session
//! starts showing in the pager at once and no giant string is ever built.
//! The layout:
//!
//! ```text
//! ── turn 2 ──────────────────────────────────────────
//! user #4
//!   Fix the failing test
//! assistant #5
//!   thinking · 1.2 KiB, 14 lines (--thinking shows it)
//!   → read_file  src/lib.rs
//!     ← ok · 3.4 KiB, 120 lines
//!     │ //! The library.
//!     │ … 112 more lines (3.1 KiB) not shown; --full shows all
//! ```
//!
//! Each call is followed directly by its result, found by `tool_call_id` in
//! the messages after it; the tool message that carried the result is then
//! not repeated. A result whose call is missing is shown where it stands,
//! and a call without a result says so.

use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::Arc;

use regex::bytes::Regex;

use crate::engine::Strategy;
use crate::transcript::{Block, BlockType, Message, Role};

use super::args;
use super::calls::{block_at, companions, Calls, Pos};
use super::color::{Painter, Style};
use super::marks::{summary_kind, Effect, HistoryAt, Mark};
use super::select::{turn_numbers, Filter};
use super::text::{clean_into, count_lines, human_bytes, lines};
use crate::format::plural;

/// Lines of user, assistant and system text shown before it is cut.
pub(crate) const TEXT_LINES: usize = 40;
/// Lines of a tool result shown before it is cut (`--lines`).
pub(crate) const RESULT_LINES: usize = 6;
/// Characters of one line shown before it is cut.
pub(crate) const LINE_CHARS: usize = 300;
/// Characters of a call's argument summary.
pub(crate) const ARGS_CHARS: usize = 160;
/// Lines matching `--grep` shown from the hidden part of a cut result.
pub(crate) const GREP_LINES: usize = 5;

/// How much to show.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// Show every line of every text and result.
    pub(crate) full: bool,
    /// Show thinking instead of collapsing it to one line.
    pub(crate) thinking: bool,
    /// Lines of a tool result shown when it is cut.
    pub(crate) result_lines: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            full: false,
            thinking: false,
            result_lines: RESULT_LINES,
        }
    }
}

/// Messages to show and what is known about each.
pub(crate) struct Document<'a> {
    pub(crate) messages: &'a [Arc<Message>],
    /// Each message's index in the transcript; `None` for one that exists
    /// only in the working history (a summary).
    pub(crate) record_index: Vec<Option<usize>>,
    /// Each message's real turn (0 before the first prompt).
    pub(crate) turns: Vec<usize>,
    /// Compaction marks of each message (empty for a plain transcript).
    pub(crate) marks: Vec<Vec<Mark>>,
    pub(crate) calls: Calls,
}

impl<'a> Document<'a> {
    /// A transcript as recorded.
    pub(crate) fn record(messages: &'a [Arc<Message>]) -> Document<'a> {
        Document {
            messages,
            record_index: (0..messages.len()).map(Some).collect(),
            turns: turn_numbers(messages),
            marks: vec![Vec::new(); messages.len()],
            calls: Calls::new(messages),
        }
    }

    /// The working history at a request; turns are the transcript's, and a
    /// summary counts as turn 0.
    pub(crate) fn history(at: &'a HistoryAt, record_turns: &[usize]) -> Document<'a> {
        Document {
            messages: &at.messages,
            record_index: at.record_index.clone(),
            turns: at
                .record_index
                .iter()
                .map(|ri| ri.and_then(|i| record_turns.get(i).copied()).unwrap_or(0))
                .collect(),
            marks: at.marks.clone(),
            calls: Calls::new(&at.messages),
        }
    }
}

/// What a rendering showed, for the footer and for tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Messages with at least one block shown (or shown through a call).
    pub(crate) messages: usize,
    pub(crate) calls: usize,
    pub(crate) results: usize,
    pub(crate) unanswered_calls: usize,
    pub(crate) orphan_results: usize,
    /// Blocks of selected messages left out by `--tool` / `--grep`.
    pub(crate) blocks_filtered: usize,
}

/// Writes the selected messages of `doc` readably and returns what it
/// showed. Stops at the first write error (a closed pager).
pub(crate) fn render(
    out: &mut dyn Write,
    doc: &Document,
    filter: &Filter,
    selected: &[bool],
    opts: &Options,
    paint: Painter,
) -> io::Result<Shown> {
    let mut r = Renderer {
        out,
        doc,
        filter,
        opts,
        paint,
        done: HashSet::new(),
        marked: HashSet::new(),
        last_turn: None,
        shown: Shown::default(),
        line: String::new(),
    };
    for i in 0..doc.messages.len() {
        if selected.get(i).copied().unwrap_or(false) {
            r.message(i)?;
        }
    }
    Ok(r.shown)
}

struct Renderer<'a, 'd> {
    out: &'a mut dyn Write,
    doc: &'a Document<'d>,
    filter: &'a Filter,
    opts: &'a Options,
    paint: Painter,
    /// Blocks already shown (results under their calls).
    done: HashSet<Pos>,
    /// Messages whose message-level marks were written.
    marked: HashSet<usize>,
    last_turn: Option<usize>,
    shown: Shown,
    /// Scratch for cleaning lines.
    line: String,
}

fn role_style(role: Role) -> Style {
    match role {
        Role::User => Style::User,
        Role::Assistant => Style::Assistant,
        Role::Tool => Style::Tool,
        Role::System => Style::System,
    }
}

impl Renderer<'_, '_> {
    fn message(&mut self, i: usize) -> io::Result<()> {
        let doc = self.doc;
        let m = &doc.messages[i];
        let mut show = Vec::with_capacity(m.content.len());
        let mut filtered = 0;
        for j in 0..m.content.len() {
            if self.done.contains(&(i, j)) {
                continue;
            }
            if self.filter.focuses_blocks()
                && !self.filter.block_matches(doc.messages, &doc.calls, (i, j))
            {
                filtered += 1;
                continue;
            }
            show.push(j);
        }
        // Everything in it that matches was shown under its calls already.
        if show.is_empty() && !m.content.is_empty() {
            self.shown.blocks_filtered += filtered;
            return Ok(());
        }
        self.shown.messages += 1;
        self.shown.blocks_filtered += filtered;
        self.turn_header(i)?;
        self.message_header(i)?;
        if m.content.is_empty() {
            writeln!(
                self.out,
                "  {}",
                self.paint.paint(Style::Dim, "(no content)")
            )?;
        }
        for j in show {
            if self.done.contains(&(i, j)) {
                continue;
            }
            self.block(i, j)?;
        }
        if filtered > 0 {
            let note = format!(
                "({} of this message not matching the filters)",
                plural(filtered, "other block")
            );
            self.note(2, note)?;
        }
        Ok(())
    }

    fn turn_header(&mut self, i: usize) -> io::Result<()> {
        let turn = self.doc.turns[i];
        if self.last_turn == Some(turn) {
            return Ok(());
        }
        self.last_turn = Some(turn);
        let title = if turn > 0 {
            format!("── turn {turn} ")
        } else if self.doc.record_index[i].is_none() {
            "── earlier turns, summarized ".to_string()
        } else {
            "── before the first prompt ".to_string()
        };
        let rule = "─".repeat(60usize.saturating_sub(title.chars().count()));
        writeln!(
            self.out,
            "{}",
            self.paint.paint(Style::Turn, format!("{title}{rule}"))
        )
    }

    fn message_header(&mut self, i: usize) -> io::Result<()> {
        let doc = self.doc;
        let m = &doc.messages[i];
        let mut labels: Vec<String> = Vec::new();
        match summary_kind(m, 0) {
            Some(Effect::Dropped { .. }) => labels.push("drop note".into()),
            Some(_) => labels.push("summary".into()),
            None => {}
        }
        if m.synthetic {
            labels.push("synthetic".into());
        }
        let place = match doc.record_index[i] {
            Some(ri) if ri != i => format!("#{ri} · history {i}"),
            Some(ri) => format!("#{ri}"),
            None => format!("history {i} · not in the transcript"),
        };
        write!(
            self.out,
            "{} {}",
            self.paint.paint(role_style(m.role), m.role.as_str()),
            self.paint.paint(Style::Dim, place)
        )?;
        if !labels.is_empty() {
            write!(
                self.out,
                " {}",
                self.paint
                    .paint(Style::Synthetic, format!("[{}]", labels.join(", ")))
            )?;
        }
        writeln!(self.out)?;
        self.message_marks(i, 2)
    }

    /// The marks on message `i` as a whole, once: under its header, or
    /// under the first of its results shown beneath a call.
    fn message_marks(&mut self, i: usize, indent: usize) -> io::Result<()> {
        if !self.marked.insert(i) {
            return Ok(());
        }
        let doc = self.doc;
        for mark in doc.marks[i].iter().filter(|k| k.block.is_none()) {
            self.mark_line(mark, indent)?;
        }
        Ok(())
    }

    fn mark_line(&mut self, mark: &Mark, indent: usize) -> io::Result<()> {
        writeln!(
            self.out,
            "{:indent$}{}",
            "",
            self.paint
                .paint(Style::Mark, format!("✂ {}", mark.describe()))
        )
    }

    fn block_marks(&mut self, pos: Pos, indent: usize) -> io::Result<()> {
        let doc = self.doc;
        for mark in doc.marks[pos.0].iter().filter(|k| k.block == Some(pos.1)) {
            self.mark_line(mark, indent)?;
        }
        Ok(())
    }

    fn block(&mut self, i: usize, j: usize) -> io::Result<()> {
        let doc = self.doc;
        let m = &doc.messages[i];
        let b = &m.content[j];
        self.done.insert((i, j));
        match b.kind {
            BlockType::Text => {
                let limit = if self.opts.full {
                    None
                } else {
                    Some(TEXT_LINES)
                };
                // Blank lines around a reply say nothing; indentation does.
                let text = b.text_bytes();
                let start = text.iter().position(|c| !matches!(c, b'\n' | b'\r'));
                match start {
                    None if text.is_empty() => {}
                    None => {
                        let note = format!("(blank text · {})", human_bytes(text.len() as u64));
                        self.note(2, note)?;
                    }
                    Some(start) => {
                        let end = text
                            .iter()
                            .rposition(|c| !matches!(c, b'\n' | b'\r'))
                            .map_or(text.len(), |e| e + 1);
                        self.text(&text[start..end], 2, limit, None)?;
                    }
                }
            }
            BlockType::Thinking => {
                if self.opts.thinking {
                    writeln!(
                        self.out,
                        "  {}",
                        self.paint.paint(
                            Style::Dim,
                            format!("thinking · {}", human_bytes(b.text_len() as u64))
                        )
                    )?;
                    self.text_styled(b.text_bytes(), 4, None, Style::Dim)?;
                } else {
                    let note = format!(
                        "thinking · {}, {} (--thinking shows it)",
                        human_bytes(b.text_len() as u64),
                        plural(count_lines(b.text_bytes()), "line")
                    );
                    self.note(2, note)?;
                }
            }
            BlockType::RedactedThinking => {
                let note = format!(
                    "redacted thinking · {} (encrypted by the provider)",
                    human_bytes(b.bytes())
                );
                self.note(2, note)?;
            }
            BlockType::ToolUse => self.call(i, j)?,
            // Its marks go under its text, with the result's indent.
            BlockType::ToolResult => return self.standalone_result(i, j),
            BlockType::Image | BlockType::Document => self.attachment(b, 2)?,
        }
        self.block_marks((i, j), 2)
    }

    fn call(&mut self, i: usize, j: usize) -> io::Result<()> {
        let doc = self.doc;
        let b = &doc.messages[i].content[j];
        self.shown.calls += 1;
        let name = b.tool_name.as_deref().unwrap_or("(unnamed tool)");
        let summary = args::summarize(b.tool_args.as_deref(), ARGS_CHARS);
        writeln!(
            self.out,
            "  → {}  {}",
            self.paint.paint(Style::Call, name),
            clean(&summary)
        )?;
        match doc.calls.result_of((i, j)) {
            Some(r) => {
                if !self.done.contains(&r) {
                    self.result_body(r, 4)?;
                }
            }
            None => {
                self.shown.unanswered_calls += 1;
                let id = b.tool_call_id.as_deref().unwrap_or("none");
                let note = format!("← no result recorded for this call (tool_call_id {id})");
                writeln!(self.out, "    {}", self.paint.paint(Style::Error, note))?;
            }
        }
        Ok(())
    }

    fn standalone_result(&mut self, i: usize, j: usize) -> io::Result<()> {
        let doc = self.doc;
        let b = &doc.messages[i].content[j];
        match doc
            .calls
            .call_of((i, j))
            .and_then(|c| Some((c, block_at(doc.messages, c)?)))
        {
            Some((c, call)) => {
                let place = match doc.record_index[c.0] {
                    Some(ri) => format!("#{ri}"),
                    None => format!("history {}", c.0),
                };
                let summary = args::summarize(call.tool_args.as_deref(), ARGS_CHARS);
                writeln!(
                    self.out,
                    "  ↳ result of {}  {} {}",
                    self.paint.paint(
                        Style::Call,
                        call.tool_name.as_deref().unwrap_or("(unnamed tool)")
                    ),
                    clean(&summary),
                    self.paint.paint(Style::Dim, format!("(called in {place})"))
                )?;
            }
            None => {
                self.shown.orphan_results += 1;
                let why = match b.tool_call_id.as_deref() {
                    Some(id) => format!("↳ result with no matching call (tool_call_id {id})"),
                    None => "↳ result without a tool_call_id".to_string(),
                };
                let named = b
                    .tool_name
                    .as_deref()
                    .map(|n| format!(" · tool {n}"))
                    .unwrap_or_default();
                writeln!(
                    self.out,
                    "  {}",
                    self.paint.paint(Style::Error, format!("{why}{named}"))
                )?;
            }
        }
        self.result_body((i, j), 4)
    }

    /// A result's status line, its text (cut unless `--full`), attachments
    /// it came with and its marks.
    fn result_body(&mut self, pos: Pos, indent: usize) -> io::Result<()> {
        let doc = self.doc;
        let m = &doc.messages[pos.0];
        let b = &m.content[pos.1];
        self.done.insert(pos);
        self.shown.results += 1;
        let text = b.text_bytes();
        let status = if b.is_error == Some(true) {
            self.paint.paint(Style::Error, "ERROR").to_string()
        } else {
            "ok".to_string()
        };
        let size = if text.is_empty() {
            "empty".to_string()
        } else {
            format!(
                "{}, {}",
                human_bytes(text.len() as u64),
                plural(count_lines(text), "line")
            )
        };
        writeln!(self.out, "{:indent$}← {status} · {size}", "")?;
        let limit = if self.opts.full {
            None
        } else {
            Some(self.opts.result_lines)
        };
        let filter = self.filter;
        self.text(
            text,
            indent,
            limit,
            filter.grep.as_ref().filter(|_| !self.opts.full),
        )?;
        for c in companions(m, pos.1) {
            if self.done.insert((pos.0, c)) {
                self.attachment(&m.content[c], indent)?;
            }
        }
        self.block_marks(pos, indent)?;
        self.message_marks(pos.0, indent)
    }

    fn attachment(&mut self, b: &Block, indent: usize) -> io::Result<()> {
        let mut parts = vec![b.kind.as_str().to_string(), b.media_label().to_string()];
        if let Some(t) = b.media_type.as_deref() {
            if b.source.is_some() {
                parts.push(t.to_string());
            }
        }
        if let Some(r) = b.media_ref.as_deref() {
            parts.push(format!("ref {}", super::text::cut_chars(r, 12)));
        }
        if b.text_len() > 0 {
            parts.push(human_bytes(b.text_len() as u64));
        }
        let line = clean(&format!("[attachment: {}]", parts.join(" · ")));
        writeln!(
            self.out,
            "{:indent$}{}",
            "",
            self.paint.paint(Style::Heading, line)
        )
    }

    fn text(
        &mut self,
        text: &[u8],
        indent: usize,
        limit: Option<usize>,
        grep: Option<&Regex>,
    ) -> io::Result<()> {
        self.lines(text, indent, limit, grep, None)
    }

    /// A dimmed line of `note` at `indent` columns: what the view says
    /// about the transcript rather than what it holds.
    fn note(&mut self, indent: usize, note: String) -> io::Result<()> {
        writeln!(
            self.out,
            "{:indent$}{}",
            "",
            self.paint.paint(Style::Dim, note)
        )
    }

    fn text_styled(
        &mut self,
        text: &[u8],
        indent: usize,
        limit: Option<usize>,
        style: Style,
    ) -> io::Result<()> {
        self.lines(text, indent, limit, None, Some(style))
    }

    /// Writes up to `limit` lines of `text`, then what was cut, then (with
    /// `--grep`) the matching lines from the part that was cut.
    fn lines(
        &mut self,
        text: &[u8],
        indent: usize,
        limit: Option<usize>,
        grep: Option<&Regex>,
        style: Option<Style>,
    ) -> io::Result<()> {
        let prefix = if indent > 2 { "│ " } else { "" };
        let max_chars = if self.opts.full {
            None
        } else {
            Some(LINE_CHARS)
        };
        let mut shown_bytes = 0usize;
        let mut shown_lines = 0usize;
        for line in lines(text) {
            if limit.is_some_and(|l| shown_lines >= l) {
                break;
            }
            shown_lines += 1;
            shown_bytes += line.len() + 1;
            self.line.clear();
            let left = clean_into(line, &mut self.line, max_chars);
            write!(self.out, "{:indent$}", "")?;
            if !prefix.is_empty() {
                write!(self.out, "{}", self.paint.paint(Style::Dim, prefix))?;
            }
            match style {
                Some(s) => write!(self.out, "{}", self.paint.paint(s, &self.line))?,
                None => self.out.write_all(self.line.as_bytes())?,
            }
            if left > 0 {
                write!(
                    self.out,
                    "{}",
                    self.paint.paint(
                        Style::Dim,
                        format!(" … (+{} on this line)", human_bytes(left as u64))
                    )
                )?;
            }
            writeln!(self.out)?;
        }
        let Some(limit) = limit else {
            return Ok(());
        };
        let total = count_lines(text);
        if total <= limit {
            return Ok(());
        }
        let hidden_bytes = text.len().saturating_sub(shown_bytes);
        let note = format!(
            "… {} not shown; --full shows all",
            n_more_lines(total - shown_lines, hidden_bytes),
        );
        self.note(indent, note)?;
        if let Some(re) = grep {
            let mut matches = 0usize;
            for (n, line) in lines(text).enumerate().skip(shown_lines) {
                if !re.is_match(line) {
                    continue;
                }
                matches += 1;
                if matches > GREP_LINES {
                    continue;
                }
                self.line.clear();
                clean_into(line, &mut self.line, Some(LINE_CHARS));
                let numbered = format!("{}: {}", n + 1, self.line);
                writeln!(
                    self.out,
                    "{:indent$}{}{}",
                    "",
                    self.paint.paint(Style::Dim, prefix),
                    self.paint.paint(Style::Match, numbered)
                )?;
            }
            if matches > GREP_LINES {
                let more = matches - GREP_LINES;
                let note = format!("… {}", plural(more, "more matching line"));
                self.note(indent, note)?;
            }
        }
        Ok(())
    }
}

/// `3 more lines (1.2 KiB)`.
fn n_more_lines(n: usize, bytes: usize) -> String {
    let noun = if n == 1 { "line" } else { "lines" };
    format!("{n} more {noun} ({})", human_bytes(bytes as u64))
}

/// A one-line text made safe to print.
fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    clean_into(s.as_bytes(), &mut out, None);
    out
}

/// The header of `show --at K`: the request, the config and what its
/// compaction did.
pub(crate) fn write_at_header(
    out: &mut dyn Write,
    at: &HistoryAt,
    config_label: &str,
    paint: Painter,
) -> io::Result<()> {
    let f = &at.facts;
    let title = format!(
        "request {} — the history as the model received it, answered by transcript #{}",
        f.request, f.message_index
    );
    writeln!(out, "{}", paint.paint(Style::Heading, title))?;
    writeln!(out, "config: {config_label}")?;
    let stages: Vec<&str> = at.stages().iter().map(|s| s.as_str()).collect();
    writeln!(
        out,
        "tokens before compaction {} → sent {} · strategy {} · stages {} · {} messages in the history",
        f.before,
        f.after,
        at.strategy().as_str(),
        if stages.is_empty() { "none".to_string() } else { stages.join(", ") },
        f.history_len
    )?;
    let mut did = Vec::new();
    if at.edits > 0 {
        let mut rewrote = format!("rewrote {} blocks or messages", at.edits);
        if at.edits_summarized > 0 {
            rewrote.push_str(&format!(
                " ({} of them in messages its summary then replaced)",
                at.edits_summarized
            ));
        }
        did.push(rewrote);
    }
    if let Some(cut) = at.cut {
        let by = if at.strategy() == Strategy::Dropped {
            "a drop note"
        } else {
            "a summary"
        };
        did.push(format!(
            "replaced the first {cut} messages of the history by {by}"
        ));
    }
    if !did.is_empty() {
        let line = format!("this request's compaction {}", did.join(" and "));
        writeln!(out, "{}", paint.paint(Style::Mark, line))?;
    }
    if let Some(r) = at.summary_request.filter(|_| at.cut.is_none()) {
        writeln!(
            out,
            "{}",
            paint.paint(
                Style::Mark,
                format!("the summary at its head was written at request {r}")
            )
        )?;
    }
    writeln!(out)
}

/// The last lines: what was shown and what was left out, so that nothing
/// is missing without a word.
pub(crate) fn write_footer(
    out: &mut dyn Write,
    shown: &Shown,
    selected: usize,
    total: usize,
    filter: &Filter,
    paint: Painter,
) -> io::Result<()> {
    let mut parts = vec![if filter.is_active() {
        format!("{selected} of {total} messages selected by the filters")
    } else {
        format!("{total} messages")
    }];
    parts.push(format!(
        "{} tool calls, {} results shown",
        shown.calls, shown.results
    ));
    if shown.unanswered_calls > 0 {
        parts.push(format!("{} calls without a result", shown.unanswered_calls));
    }
    if shown.orphan_results > 0 {
        parts.push(format!("{} results without a call", shown.orphan_results));
    }
    if shown.blocks_filtered > 0 {
        parts.push(format!(
            "{} blocks of selected messages filtered out",
            shown.blocks_filtered
        ));
    }
    writeln!(
        out,
        "{}",
        paint.paint(Style::Dim, format!("── {}", parts.join(" · ")))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_plain(messages: &[Arc<Message>], filter: &Filter, opts: &Options) -> (String, Shown) {
        let doc = Document::record(messages);
        let selected = filter.select(messages, &doc.turns, &doc.calls);
        let mut out = Vec::new();
        let shown = render(&mut out, &doc, filter, &selected, opts, Painter::new(false)).unwrap();
        (String::from_utf8(out).unwrap(), shown)
    }

    fn session() -> Vec<Arc<Message>> {
        let lines: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        vec![
            Arc::new(Message::user("look at lib.rs".as_bytes())),
            Arc::new(Message::new(
                Role::Assistant,
                vec![
                    Block {
                        kind: BlockType::Thinking,
                        text: Some("secret plan".as_bytes().into()),
                        ..Block::default()
                    },
                    Block::tool_use("c1", "read_file", r#"{"path":"src/lib.rs"}"#),
                ],
                false,
                None,
            )),
            Arc::new(Message::new(
                Role::Tool,
                vec![Block::tool_result(
                    Some("c1".into()),
                    lines.into_bytes(),
                    false,
                )],
                false,
                None,
            )),
        ]
    }

    #[test]
    fn a_call_is_directly_followed_by_its_result_and_the_tool_message_is_not_repeated() {
        let (text, shown) = render_plain(&session(), &Filter::default(), &Options::default());
        let call = text.find("→ read_file  src/lib.rs").expect("the call");
        let result = text.find("← ok · 151 B, 20 lines").expect("the result");
        assert!(call < result);
        assert_eq!(
            text[call..result].matches('\n').count(),
            1,
            "nothing between call and result:\n{text}"
        );
        assert!(!text.contains("tool #2"), "{text}");
        assert_eq!((shown.calls, shown.results), (1, 1));
    }

    #[test]
    fn a_long_result_is_cut_with_a_count_and_full_shows_it_all() {
        let (text, _) = render_plain(&session(), &Filter::default(), &Options::default());
        assert!(
            text.contains("│ line 6\n") && !text.contains("│ line 7\n"),
            "{text}"
        );
        assert!(
            text.contains("… 14 more lines (109 B) not shown; --full shows all"),
            "{text}"
        );
        let full = Options {
            full: true,
            ..Options::default()
        };
        let (text, _) = render_plain(&session(), &Filter::default(), &full);
        assert!(
            text.contains("│ line 20\n") && !text.contains("more lines"),
            "{text}"
        );
    }

    #[test]
    fn attachments_are_shown_by_label_and_type_under_their_result() {
        let image = |source: Option<&str>, id: Option<&str>| Block {
            kind: BlockType::Image,
            source: source.map(Into::into),
            media_type: Some("image/png".into()),
            tool_call_id: id.map(Into::into),
            ..Block::default()
        };
        let messages = vec![
            Arc::new(Message::new(
                Role::User,
                vec![Block::text("see".as_bytes()), image(Some("shot.png"), None)],
                false,
                None,
            )),
            Arc::new(Message::new(
                Role::Assistant,
                vec![Block::tool_use("c1", "screenshot", "{}")],
                false,
                None,
            )),
            Arc::new(Message::new(
                Role::Tool,
                vec![
                    Block::tool_result(Some("c1".into()), "took it".as_bytes(), false),
                    image(None, Some("c1")),
                ],
                false,
                None,
            )),
        ];
        let (text, _) = render_plain(&messages, &Filter::default(), &Options::default());
        assert!(
            text.contains("  [attachment: image · shot.png · image/png]"),
            "{text}"
        );
        let call = text.find("→ screenshot").unwrap();
        let under = &text[call..];
        assert!(
            under.contains("│ took it\n    [attachment: image · image/png]"),
            "{text}"
        );
        assert!(!text.contains("tool #2"), "{text}");
    }

    #[test]
    fn thinking_is_collapsed_unless_asked_for() {
        let (text, _) = render_plain(&session(), &Filter::default(), &Options::default());
        assert!(text.contains("thinking · 11 B, 1 line (--thinking shows it)"));
        assert!(!text.contains("secret plan"));
        let opts = Options {
            thinking: true,
            ..Options::default()
        };
        let (text, _) = render_plain(&session(), &Filter::default(), &opts);
        assert!(text.contains("secret plan"));
    }

    #[test]
    fn grep_shows_matching_lines_from_the_cut_part() {
        let filter = Filter {
            grep: Some(super::super::select::grep_pattern("LINE 17").unwrap()),
            ..Filter::default()
        };
        let (text, _) = render_plain(&session(), &filter, &Options::default());
        assert!(text.contains("│ 17: line 17"), "{text}");
    }
}
