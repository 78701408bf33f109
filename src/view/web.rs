//! `transcript show --html`: one session as a self-contained web page that
//! a person can scroll like a chat and hand to a colleague.
//!
//! A transcript is untrusted input (prompts, tool arguments and results can
//! hold anything, markup included), so the page never turns data into markup:
//! the session travels as JSON inside a `<script type="application/json">`
//! block with `<`, `>`, `&`, U+2028 and U+2029 escaped (nothing in it can end
//! the block or start a tag), and the page's one script builds the DOM with
//! `textContent` only. The Content-Security-Policy allows no network at all
//! and only the page's own script and style, by the hash of their text (see
//! [`super::csp`]): even a tag that slipped through could neither run nor
//! load anything, and the page is the same bytes every time.
//!
//! Large sessions stay responsive: the chat is rendered in slices as it is
//! scrolled into view, and long results are only put into the DOM when they
//! are opened. The page writes how long its first render took into
//! `#load-ms`, so a headless browser can measure it.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::engine::{Compaction, Compactor, EditKind, Stage, Strategy};
use crate::format::{escape_html, money};
use crate::replay::{replay_with, Misfire, MisfireKind, RequestFacts, SessionFacts};
use crate::transcript::{BlockType, Message, Role};

use super::select::turn_numbers;

const SCRIPT: &str = include_str!("web/view.js");
const STYLE: &str = include_str!("web/view.css");

/// A result longer than this many bytes, or lines, is collapsed with its size.
pub(crate) const COLLAPSE_BYTES: usize = 2000;
pub(crate) const COLLAPSE_LINES: usize = 24;

/// One block as the page shows it.
#[derive(Serialize)]
struct BlockView {
    /// `text`, `thinking`, `tool_use`, `tool_result`, `image`…
    t: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    err: bool,
    /// Bytes it adds to the estimate.
    bytes: u64,
}

#[derive(Serialize)]
struct MessageView {
    role: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    synthetic: bool,
    /// The real turn it belongs to (1-based; 0 before the first prompt).
    turn: usize,
    /// The request it answers, for assistant messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<usize>,
    blocks: Vec<BlockView>,
}

/// What the source log says beyond the messages, for the page to show
/// beside the replay: one entry per request it recorded, the agent's own
/// compactions, and the pages of the sessions linked to this one.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Recorded {
    /// By request (0-based, the order of the assistant messages).
    pub(crate) requests: Vec<RecordedRequest>,
    pub(crate) compactions: Vec<AgentCompaction>,
    /// Tool calls that started a subagent whose page is written beside this
    /// one.
    pub(crate) subagents: Vec<Link>,
    /// The page of the session that started this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parent: Option<Link>,
    /// The names the agent gave its tools, where the import renamed them
    /// for smith's engine, by call id.
    pub(crate) tool_names: Vec<(String, String)>,
}

/// One request as the source log recorded it.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct RecordedRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// The prompt's tokens as the provider billed them (input, cache reads
    /// and writes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<u64>,
}

/// A place where the agent compacted its own context.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct AgentCompaction {
    /// The first message of the record after it.
    pub(crate) message: usize,
    /// Requests before it.
    pub(crate) request: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trigger: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pre_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) summary_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<String>,
}

/// A link to another page of the same set; `call` names the tool call it
/// belongs to.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Link {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) call: Option<String>,
    pub(crate) href: String,
    pub(crate) label: String,
}

/// One rewrite a compaction made, located in the record.
#[derive(Serialize)]
struct LedgerEdit {
    /// Index of the message in the record; `None` for a summary of an
    /// earlier compaction.
    message: Option<usize>,
    block: Option<usize>,
    kind: &'static str,
    /// The tool whose result it was, when it was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<String>,
    bytes_before: u64,
    bytes_after: u64,
}

/// What one compaction did.
#[derive(Serialize)]
struct Ledger {
    stages: Vec<&'static str>,
    /// Raw history tokens reclaimed by each stage that ran.
    reclaimed: Vec<(&'static str, i64)>,
    edits: Vec<LedgerEdit>,
    /// Messages replaced by a summary (or dropped): how many, which record
    /// messages, which real turns.
    summarized: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    summarized_messages: Option<(usize, usize)>,
    summarized_turns: Vec<usize>,
    /// Messages before and after.
    messages_before: usize,
    messages_after: usize,
}

#[derive(Serialize)]
struct RequestView {
    r: usize,
    /// Index in the record of the assistant message answering it.
    m: usize,
    before: i64,
    after: i64,
    strategy: &'static str,
    triggered: bool,
    missed: bool,
    over: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    ledger: Option<Ledger>,
}

#[derive(Serialize)]
struct PageData<'a> {
    session: &'a str,
    config: &'a str,
    /// How its tokens were counted, for the chart's axis.
    units: &'a str,
    trigger: i64,
    target: i64,
    max: i64,
    lines_skipped: usize,
    messages: Vec<MessageView>,
    requests: Vec<RequestView>,
    misfires: Vec<Misfire>,
    /// What each kind of misfire means, by its name in `misfires`.
    misfire_kinds: std::collections::BTreeMap<&'static str, &'static str>,
    collapse_bytes: usize,
    collapse_lines: usize,
    recorded: &'a Recorded,
}

fn edit_kind(k: &EditKind) -> &'static str {
    match k {
        EditKind::ThinkingDropped { .. } => "thinking dropped",
        EditKind::AttachmentsRemoved { .. } => "attachments removed",
        EditKind::Superseded => "read superseded",
        EditKind::HeadKept => "result cut to its head",
        EditKind::Stubbed => "result collapsed to a stub",
    }
}

fn block_type(k: BlockType) -> &'static str {
    k.as_str()
}

fn message_view(m: &Message, turn: usize, request: Option<usize>) -> MessageView {
    MessageView {
        role: m.role.as_str(),
        synthetic: m.synthetic,
        turn,
        request,
        blocks: m
            .content
            .iter()
            .map(|b| BlockView {
                t: block_type(b.kind),
                text: if b.kind.is_media() {
                    Some(b.media_label().to_string())
                } else {
                    b.text.as_ref().map(|_| b.text_lossy().into_owned())
                },
                name: b.tool_name.as_ref().map(|s| s.to_string()),
                args: b.tool_args.as_ref().map(|s| s.to_string()),
                id: b.tool_call_id.as_ref().map(|s| s.to_string()),
                err: b.is_error == Some(true),
                bytes: b.bytes(),
            })
            .collect(),
    }
}

/// What each kind of misfire means, by its name, for the page's folded
/// lines.
fn misfire_kinds() -> std::collections::BTreeMap<&'static str, &'static str> {
    MisfireKind::ALL
        .iter()
        .map(|k| (k.as_str(), k.describe()))
        .collect()
}

/// The page's data: the record, and the replay of it under `engine`.
fn page_data<'a, C: Compactor + ?Sized>(
    record: &[Arc<Message>],
    engine: &C,
    (session, shown): (&'a str, &'a Shown<'a>),
    lines_skipped: usize,
    thrash_window: usize,
    recorded: &'a Recorded,
) -> PageData<'a> {
    let turns = turn_numbers(record);
    // The tool of each call id, for naming the results a compaction cut.
    let tools: HashMap<&str, &str> = record
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| b.kind == BlockType::ToolUse)
        .filter_map(|b| Some((b.tool_call_id.as_deref()?, b.tool_name.as_deref()?)))
        .collect();
    let mut requests = Vec::new();
    // Where each message of the working history came from in the record,
    // kept in step with the replay.
    let mut origin: Vec<Option<usize>> = Vec::new();
    let mut appended = 0usize;
    let mut observe = |r: &RequestFacts, history: &[Arc<Message>], c: &Compaction| {
        // Before this compaction: the last history plus what came since.
        origin.extend((appended..r.message_index).map(Some));
        appended = r.message_index;
        let pre = std::mem::take(&mut origin);
        let ledger = (r.strategy != Strategy::None).then(|| {
            let edits = c
                .edits
                .iter()
                .map(|e| {
                    let message = pre.get(e.message).copied().flatten();
                    let tool = message
                        .zip(e.block)
                        .and_then(|(m, b)| record.get(m)?.content.get(b))
                        .and_then(|b| b.tool_call_id.as_deref())
                        .and_then(|id| tools.get(id))
                        .map(|t| t.to_string());
                    LedgerEdit {
                        message,
                        block: e.block,
                        kind: edit_kind(&e.kind),
                        tool,
                        bytes_before: e.bytes_before,
                        bytes_after: e.bytes_after,
                    }
                })
                .collect();
            let cut = c.cut.unwrap_or(0).min(pre.len());
            let gone: Vec<usize> = pre[..cut].iter().flatten().copied().collect();
            let mut summarized_turns: Vec<usize> = gone.iter().map(|&i| turns[i]).collect();
            summarized_turns.dedup();
            Ledger {
                stages: r.stages.iter().map(|s| s.as_str()).collect(),
                reclaimed: Stage::ALL
                    .iter()
                    .filter(|s| r.stages.contains(s) || r.effects.reclaimed[s.index()] != 0)
                    .map(|s| (s.as_str(), r.effects.reclaimed[s.index()]))
                    .collect(),
                edits,
                summarized: cut,
                summarized_messages: gone.first().zip(gone.last()).map(|(a, b)| (*a, *b)),
                summarized_turns,
                messages_before: pre.len(),
                messages_after: history.len(),
            }
        });
        // After it: the kept messages are the tail of the history before.
        let kept = history
            .len()
            .min(pre.len() - c.cut.unwrap_or(0).min(pre.len()));
        origin = vec![None; history.len() - kept];
        origin.extend_from_slice(&pre[pre.len() - kept..]);
        requests.push(RequestView {
            r: r.request,
            m: r.message_index,
            before: r.before,
            after: r.after,
            strategy: r.strategy.as_str(),
            triggered: r.triggered,
            missed: r.target_missed,
            over: r.exhausted,
            ledger,
        });
        true
    };
    let mut facts: SessionFacts = replay_with(record, engine, &mut observe);
    facts.set_thrash_window(thrash_window);
    let mut request = 0;
    let messages = record
        .iter()
        .zip(&turns)
        .map(|(m, &turn)| {
            let r = (m.role == Role::Assistant).then(|| {
                request += 1;
                request - 1
            });
            message_view(m, turn, r)
        })
        .collect();
    let budget = engine.budget();
    PageData {
        session,
        config: shown.config,
        units: &shown.units,
        trigger: budget.trigger_tokens,
        target: budget.target_tokens,
        max: budget.max_tokens,
        lines_skipped,
        messages,
        requests,
        misfires: facts.counted_misfires().copied().collect(),
        misfire_kinds: misfire_kinds(),
        collapse_bytes: COLLAPSE_BYTES,
        collapse_lines: COLLAPSE_LINES,
        recorded,
    }
}

/// JSON that can sit inside a `<script>` element: nothing in it can close
/// the element, open a comment or a tag, or end a line for JavaScript.
pub(crate) fn script_safe_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 50);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// What a page says it replayed under: the config's label and how its
/// tokens were counted (an axis's form of
/// [`crate::sweep::units::TokenUnits`]).
pub struct Shown<'a> {
    pub config: &'a str,
    pub units: String,
}

/// The whole page for `record` replayed under `engine`.
pub fn page<C: Compactor + ?Sized>(
    record: &[Arc<Message>],
    engine: &C,
    session: &str,
    shown: &Shown,
    lines_skipped: usize,
    thrash_window: usize,
    recorded: &Recorded,
) -> String {
    let config = shown.config;
    let data = page_data(
        record,
        engine,
        (session, shown),
        lines_skipped,
        thrash_window,
        recorded,
    );
    let json = serde_json::to_string(&data).unwrap_or_else(|_| "{}".into());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         {csp}\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>{title}</h1><p class=\"lead\">replayed under {config_text}; \
         <span id=\"load-ms\">not rendered: this page needs JavaScript</span></p></header>\n\
         <nav id=\"links\"></nav>\n\
         <section id=\"timeline\" aria-label=\"requests\"></section>\n\
         <section id=\"agent\"></section>\n\
         <section id=\"ledger\" aria-live=\"polite\"></section>\n\
         <section id=\"misfires\"></section>\n\
         <section id=\"find\" aria-label=\"search and filters\"></section>\n\
         <main id=\"chat\"></main>\n\
         <script type=\"application/json\" id=\"session-data\">{data}</script>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        csp = super::csp::meta(&[SCRIPT], &[STYLE]),
        title = escape_html(&format!("Session {session}")),
        config_text = escape_html(config),
        data = script_safe_json(&json),
    )
}

/// One session in the index of a set of pages.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct IndexRow {
    pub(crate) label: String,
    /// The session's page, beside the index.
    pub(crate) href: String,
    pub(crate) parent: Option<String>,
    pub(crate) started: Option<String>,
    /// The directory the agent worked in.
    pub(crate) project: Option<String>,
    /// The first prompt a person typed, whole.
    pub(crate) prompt: Option<String>,
    pub(crate) bytes: u64,
    pub(crate) messages: usize,
    pub(crate) requests: usize,
    /// Compactions the agent made itself, as its log records them.
    pub(crate) agent_compactions: usize,
    /// Compactions of the replay under the page's config.
    pub(crate) compactions: usize,
    pub(crate) misfires: usize,
    /// Dollars of the recorded usage, for a session that has it.
    pub(crate) recorded_usd: Option<f64>,
}

/// Characters of a first prompt shown in its cell (the cell's tooltip
/// holds more); the cell cuts it to its width as well.
const PROMPT_CHARS: usize = 160;
/// Characters of a first prompt in the tooltip.
const PROMPT_TITLE_CHARS: usize = 600;

/// A label with each UUID in it cut to its first eight digits: the rest
/// tells sessions of one folder apart no better and made the column wider
/// than the page.
pub(crate) fn short_id(label: &str) -> String {
    let b = label.as_bytes();
    let mut out = String::with_capacity(label.len());
    let mut i = 0;
    while i < b.len() {
        if is_uuid(&b[i..]) && (i == 0 || !b[i - 1].is_ascii_hexdigit()) {
            out.push_str(&label[i..i + 8]);
            out.push('…');
            i += 36;
        } else {
            let c = label[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Whether `b` starts with a UUID (`8-4-4-4-12` hex digits) not followed
/// by another hex digit.
fn is_uuid(b: &[u8]) -> bool {
    b.len() >= 36
        && b[..36].iter().enumerate().all(|(k, c)| {
            if matches!(k, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
        && b.get(36).is_none_or(|c| !c.is_ascii_hexdigit())
}

/// The parts of a working directory, Windows' or Unix's, last first.
fn parts_from_end(cwd: &str) -> Vec<&str> {
    cwd.rsplit(['/', '\\']).filter(|s| !s.is_empty()).collect()
}

/// Each row's project as the index shows it: the end of its working
/// directory that tells it from every other project of the index (the
/// last part, or as many more as it takes: sessions from `/a/x/dl` and
/// `/b/y/dl` are `x/dl` and `y/dl`, not both `dl`).
fn project_names(cwds: &[Option<&str>]) -> Vec<String> {
    let mut distinct: Vec<&str> = cwds.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let parts: Vec<Vec<&str>> = distinct.iter().map(|c| parts_from_end(c)).collect();
    let name_of = |k: usize| -> String {
        let mine = &parts[k];
        let mut n = 1;
        while n < mine.len()
            && parts
                .iter()
                .enumerate()
                .any(|(j, other)| j != k && other.len() >= n && other[..n] == mine[..n])
        {
            n += 1;
        }
        let mut shown: Vec<&str> = mine.iter().take(n).copied().collect();
        shown.reverse();
        match shown.join("/") {
            empty if empty.is_empty() => distinct[k].to_string(),
            name => name,
        }
    };
    cwds.iter()
        .map(|c| match c {
            Some(c) => name_of(distinct.binary_search(c).unwrap_or(0)),
            None => String::new(),
        })
        .collect()
}

/// `2026-02-11T20:31:53.375Z` as `2026-02-11 20:31`; other text as it is.
fn minute(time: &str) -> String {
    match (time.get(..10), time.get(11..16)) {
        (Some(d), Some(t)) if time.as_bytes().get(10) == Some(&b'T') => format!("{d} {t}"),
        _ => time.to_string(),
    }
}

/// A prompt on one line, whitespace runs as one space.
fn one_line(text: &str, max_chars: usize) -> String {
    let flat: Vec<&str> = text.split_whitespace().collect();
    super::text::cut_chars(&flat.join(" "), max_chars)
}

const INDEX_STYLE: &str = "body{margin:0 auto;max-width:1240px;padding:0 20px;font:15px/1.5 system-ui,sans-serif;color:#1d1d1f}\
h1{font-size:1.5rem;overflow-wrap:anywhere}.lead{color:#5f6368}\
table{border-collapse:collapse;font-size:.85rem;width:100%;table-layout:fixed}\
th,td{padding:3px 6px;border-bottom:1px solid #eee;text-align:left;vertical-align:top;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\
th{white-space:normal;cursor:pointer;user-select:none;vertical-align:bottom}th:hover{background:#f3f3f6}\
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\
col:nth-child(1){width:14em}col:nth-child(2){width:10.5em}col:nth-child(3){width:8em}col:nth-child(5){width:6em}\
col:nth-child(6){width:8.5em}col:nth-child(7){width:8.5em}col:nth-child(8){width:5.5em}col:nth-child(9){width:6.5em}";

/// Sorts the index by the column whose header is clicked (again: the
/// other way), by each cell's `data-v` where it has one, else its text.
const INDEX_SCRIPT: &str = "(function(){'use strict';\
var t=document.getElementById('sessions'),body=t.tBodies[0],heads=t.tHead.rows[0].cells;\
function key(row,k,num){var c=row.cells[k],v=c.getAttribute('data-v');if(v===null)v=c.textContent;\
return num?(v===''?-Infinity:Number(v)):v.toLowerCase();}\
function sort(k,dir){var num=heads[k].classList.contains('n'),s=dir==='ascending'?1:-1;\
var rows=Array.prototype.slice.call(body.rows).map(function(r,i){return{r:r,i:i,v:key(r,k,num)};});\
rows.sort(function(a,b){return a.v<b.v?-s:a.v>b.v?s:a.i-b.i;});\
rows.forEach(function(x){body.appendChild(x.r);});\
Array.prototype.forEach.call(heads,function(h,j){if(j===k)h.setAttribute('aria-sort',dir);else h.removeAttribute('aria-sort');});}\
Array.prototype.forEach.call(heads,function(h,k){h.tabIndex=0;\
function go(){sort(k,h.getAttribute('aria-sort')==='ascending'?'descending':'ascending');}\
h.addEventListener('click',go);h.addEventListener('keydown',function(e){if(e.key==='Enter')go();});});})();";

/// The index's columns (their widths are the style's): header, whether numeric (right-aligned,
/// sorted as numbers).
const INDEX_COLUMNS: [(&str, bool); 9] = [
    ("session", false),
    ("began", false),
    ("project", false),
    ("first prompt", false),
    ("requests", true),
    ("compactions by the agent", true),
    ("compactions replayed", true),
    ("misfires", true),
    ("recorded cost", true),
];

/// A cell: `shown` escaped, its full text as a tooltip when it was cut,
/// `value` for sorting when it differs from what is shown.
fn cell(shown: &str, full: Option<&str>, value: Option<&str>, numeric: bool) -> String {
    let mut attrs = String::new();
    if numeric {
        attrs.push_str(" class=\"n\"");
    }
    if let Some(f) = full.filter(|f| *f != shown) {
        attrs.push_str(&format!(" title=\"{}\"", escape_html(f)));
    }
    if let Some(v) = value {
        attrs.push_str(&format!(" data-v=\"{}\"", escape_html(v)));
    }
    format!("<td{attrs}>{}</td>", escape_html(shown))
}

/// One row of the index.
fn index_row(r: &IndexRow, project: &str) -> String {
    let started = r.started.as_deref().unwrap_or("");
    let cwd = r.project.as_deref().unwrap_or("");
    let prompt = r.prompt.as_deref().unwrap_or("");
    let parent = r.parent.as_deref().unwrap_or("");
    let label = short_id(&r.label);
    // The session's full name, size and parent in its tooltip.
    let about = match parent {
        "" => format!(
            "{}, {:.1} KB, {} messages",
            r.label,
            r.bytes as f64 / 1024.0,
            r.messages
        ),
        p => format!(
            "{}, {:.1} KB, {} messages, a subagent started by {p}",
            r.label,
            r.bytes as f64 / 1024.0,
            r.messages
        ),
    };
    let mut row = format!(
        "<tr><td data-v=\"{}\" title=\"{}\"><a href=\"{}\">{}</a></td>",
        escape_html(&r.label),
        escape_html(&about),
        escape_html(&r.href),
        escape_html(&label)
    );
    row.push_str(&cell(&minute(started), Some(started), Some(started), false));
    row.push_str(&cell(project, Some(cwd), None, false));
    row.push_str(&cell(
        &one_line(prompt, PROMPT_CHARS),
        Some(&one_line(prompt, PROMPT_TITLE_CHARS)),
        None,
        false,
    ));
    for n in [r.requests, r.agent_compactions, r.compactions, r.misfires] {
        let shown = crate::format::whole(n as u64);
        row.push_str(&cell(&shown, None, Some(&n.to_string()), true));
    }
    let usd = r.recorded_usd.map(money).unwrap_or_default();
    let value = r.recorded_usd.map(|d| d.to_string()).unwrap_or_default();
    row.push_str(&cell(&usd, None, Some(&value), true));
    row.push_str("</tr>\n");
    row
}

/// The index of a set of session pages, titled after what it lists: a row
/// per session with a link to its page, sortable by any column. Every
/// value is escaped; the one script only reorders the rows.
pub(crate) fn index_page(source: &str, config: &str, rows: &[IndexRow]) -> String {
    let title = format!(
        "{} from {source}",
        crate::format::plural(rows.len(), "session")
    );
    let usd: f64 = rows.iter().filter_map(|r| r.recorded_usd).sum();
    let mut body = format!(
        "<h1>{}</h1>\n<p class=\"lead\">replayed under {}; recorded cost {}; click a column to sort by it</p>\n\
         <table id=\"sessions\">\n<colgroup>",
        escape_html(&title),
        escape_html(config),
        money(usd)
    );
    body.push_str(&"<col>".repeat(INDEX_COLUMNS.len()));
    body.push_str("</colgroup>\n<thead><tr>");
    for (name, numeric) in INDEX_COLUMNS {
        let class = if numeric { " class=\"n\"" } else { "" };
        body.push_str(&format!("<th{class}>{name}</th>"));
    }
    body.push_str("</tr></thead>\n<tbody>\n");
    let cwds: Vec<Option<&str>> = rows.iter().map(|r| r.project.as_deref()).collect();
    for (r, project) in rows.iter().zip(project_names(&cwds)) {
        body.push_str(&index_row(r, &project));
    }
    body.push_str("</tbody>\n</table>\n");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         {csp}\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{title}</title>\n<style>{INDEX_STYLE}</style>\n</head>\n<body>\n{body}\
         <script>{INDEX_SCRIPT}</script>\n</body>\n</html>\n",
        csp = super::csp::meta(&[INDEX_SCRIPT], &[INDEX_STYLE]),
        title = escape_html(&title),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_safe_json_leaves_nothing_that_ends_the_element() {
        let v = serde_json::json!({"t": "</script><script>alert(1)</script>&<!--\u{2028}\u{2029}"});
        let safe = script_safe_json(&v.to_string());
        for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
            assert!(!safe.contains(bad), "{bad:?} left in {safe}");
        }
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn the_page_allows_only_its_own_script_and_style_and_is_the_same_every_time() {
        let record = vec![Arc::new(Message::new(
            Role::User,
            vec![crate::transcript::Block::text(&b"hi"[..])],
            false,
            None,
        ))];
        let engine = crate::engine::Engine::new(Default::default());
        let page = || {
            page(
                &record,
                &engine,
                "s",
                &Shown {
                    config: "defaults",
                    units: crate::sweep::units::TokenUnits::default().axis(),
                },
                0,
                3,
                &Recorded::default(),
            )
        };
        let html = page();
        assert_eq!(html, page(), "the same input gives the same bytes");
        assert!(html.contains(&super::super::csp::meta(&[SCRIPT], &[STYLE])));
        assert!(html.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(html.contains(&format!("<style>{STYLE}</style>")));
        assert!(!html.contains("nonce"));
    }

    #[test]
    fn an_index_cuts_uuids_to_eight_digits_and_names_the_projects_folder() {
        assert_eq!(
            short_id("cc-4d5611e5-241a-462a-8d15-5122611a9569-agent-a2898e3"),
            "cc-4d5611e5…-agent-a2898e3"
        );
        assert_eq!(short_id("cc-short"), "cc-short");
        // Not a UUID: a hex digit too many.
        let long = "4d5611e5-241a-462a-8d15-5122611a95690";
        assert_eq!(short_id(long), long);
        assert_eq!(
            project_names(&[
                Some("/home/me/shop/"),
                Some("S:\\01_Repos\\BeFirst_APIs"),
                None
            ]),
            ["shop", "BeFirst_APIs", ""]
        );
        assert_eq!(minute("2026-02-12T16:02:23.545Z"), "2026-02-12 16:02");
    }

    /// The page's script writes every count of tokens or messages through
    /// `num` (thousands separators, as the terminal writes them), never as
    /// the bare number: the page mixed `96,708` and `96708`.
    #[test]
    fn the_page_writes_every_count_with_thousands_separators() {
        for field in [
            ".before",
            ".after",
            ".output",
            ".prompt",
            "D.max",
            "D.trigger",
            "D.target",
            "messages.length",
            ".messages_before",
            ".messages_after",
        ] {
            for (at, _) in SCRIPT.match_indices(field) {
                // The whole expression: `q.before`, `D.messages.length`.
                let start = SCRIPT[..at]
                    .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                    .map_or(0, |i| i + 1);
                let before = SCRIPT[..start].trim_end();
                let after = SCRIPT[at + field.len()..].trim_start();
                assert!(
                    !before.ends_with('+') && !after.starts_with('+'),
                    "{field} written bare: {}",
                    &SCRIPT[start.saturating_sub(40)..(at + 40).min(SCRIPT.len())]
                );
            }
        }
    }

    #[test]
    fn projects_are_named_by_as_much_of_their_directory_as_tells_them_apart() {
        let names = project_names(&[
            Some("/home/u/shop/dl"),
            Some("/home/u/blog/dl"),
            Some("/home/u/shop/dl"),
            Some("/srv/blog/dl"),
            Some("/home/u/notes"),
            Some("/"),
        ]);
        assert_eq!(
            names,
            [
                "shop/dl",
                "u/blog/dl",
                "shop/dl",
                "srv/blog/dl",
                "notes",
                "/"
            ]
        );
    }
}
