//! `smith-calibrate transcript list|show|stats`: read what smith recorded the
//! way a person wants to, and see the history the model actually received.

use std::io::{self, BufWriter, IsTerminal, Write};

use anyhow::Result;
use clap::{Args, Subcommand};
use rayon::prelude::*;
use regex::bytes::Regex;

use crate::calibrate::session::for_session;
use crate::policy::Setup;
use crate::transcript::{locate, Role, Session};
use crate::view::color::{self, ColorChoice, Painter};
use crate::view::list::{self, SessionRow};
use crate::view::marks::history_at;
use crate::view::pager::Output;
use crate::view::render::{self, Document, Options, RESULT_LINES};
use crate::view::select::{self, turn_numbers, Filter, TurnRange};
use crate::view::stats;

use super::policy_args::PolicyArgs;
use super::session_pages;
use super::{nothing_read, usage, EngineArgs};

/// Read recorded sessions: list them, show one readably, or count where its
/// context goes.
#[derive(Args, Debug)]
pub(crate) struct TranscriptArgs {
    #[command(subcommand)]
    pub(crate) command: TranscriptCommand,
}

/// The `transcript` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum TranscriptCommand {
    List(ListArgs),
    Show(ShowArgs),
    Stats(StatsArgs),
    Restore(RestoreArgs),
}

/// List sessions, newest first.
#[derive(Args, Debug)]
#[command(
    after_help = "Sessions come from $SMITH_HOME/sessions (default ~/.smith/sessions) unless a
PATH is given; any directory is searched for transcript.jsonl files below it.
The creation time is taken from session.json, else the session index, else
the transcript's modification time (marked \"(mtime)\").

Examples:
  smith-calibrate transcript list
  smith-calibrate transcript list ../shared/data --json | jq '.[] | select(.tokens > 100000) | .id'"
)]
pub(crate) struct ListArgs {
    /// A directory to search instead of $SMITH_HOME/sessions (smith
    /// sessions, Claude Code logs, Codex CLI rollouts, mini-swe-agent
    /// trajectories), or one transcript or log
    pub(crate) path: Option<String>,
    /// One JSON array of sessions instead of the table
    #[arg(long)]
    pub(crate) json: bool,
    /// Fail (exit 1, printing no list) if any line or session had to be
    /// skipped
    #[arg(long)]
    pub(crate) strict: bool,
    #[command(flatten)]
    pub(crate) select: super::select_args::SelectArgs,
}

/// Show one session readably, or the history the model received at one
/// request.
#[derive(Args, Debug)]
#[command(
    after_help = "Each real turn (a prompt the user typed) gets a header; #N is a message's
0-based position among the messages read. A tool call is followed directly by
its result (with --role assistant too: a call carries its result); results
whose call is missing and calls without a result are shown and counted.

--at K replays the session under the engine flags and shows the working
history at request K (0-based: the K-th assistant message), with every
compaction effect marked ✂: thinking dropped, attachments replaced, reads
superseded, results cut to their head or collapsed to a stub, turns replaced
by a summary; 'at this request' or 'at an earlier request'. --policy shows
the history another agent's policy would have sent instead (its placeholders
and caps are marked as stubs and cuts).

Through $PAGER (else `less -R`, with LESS=FRX unless LESS is set) when stdout
is a terminal. NO_COLOR turns colour off under --color auto.

Examples:
  smith-calibrate transcript show fix-the-tests
  smith-calibrate transcript show cc-4d5611e5-241a-462a-8d15-5122611a9569
  smith-calibrate transcript show ~/logs/claude cc-4d5611e5 --at 40
  smith-calibrate transcript show ~/.smith/sessions/session-1712345678-abc123 --turn 3..5
  smith-calibrate transcript show transcript.jsonl --tool bash --grep 'error|panic'
  smith-calibrate transcript show transcript.jsonl --at 40 --max-tokens 64000
  smith-calibrate transcript show transcript.jsonl --at 40 --policy codex
  smith-calibrate transcript show transcript.jsonl --at 40 --estimator o200k
  smith-calibrate transcript show transcript.jsonl --role user --json | jq -r '.content[0].text'
  smith-calibrate transcript show fix-the-tests --html fix-the-tests.html --max-tokens 64000

--html FILE writes one self-contained page (no network, its own script only):
the chat with thinking and long results collapsed, a timeline of the requests
with the context size under the engine flags, and for each compaction (click
it) its stages, before/after and what it cut. FILE#r12 opens request 12."
)]
pub(crate) struct ShowArgs {
    #[command(flatten)]
    pub(crate) session: super::SessionArg,
    /// Only these real turns: N, A..B (both included), A.. or ..B
    #[arg(long, value_name = "N|A..B")]
    pub(crate) turn: Option<TurnRange>,
    /// Only calls of this tool and their results (name, any case)
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
    /// Only blocks matching this regular expression (case-insensitive;
    /// searches texts, results, tool names and arguments; a call and its
    /// result match together)
    #[arg(long, value_name = "REGEX", value_parser = select::grep_pattern)]
    pub(crate) grep: Option<Regex>,
    /// Only messages of this role: user, assistant, tool or system
    #[arg(long, value_parser = select::parse_role)]
    pub(crate) role: Option<Role>,
    /// Show every line of every text and result
    #[arg(long)]
    pub(crate) full: bool,
    /// Show thinking instead of one line with its size
    #[arg(long)]
    pub(crate) thinking: bool,
    /// Lines of a tool result shown before it is cut
    #[arg(long, value_name = "N", default_value_t = RESULT_LINES)]
    pub(crate) lines: usize,
    /// The selected messages as smith-format JSONL instead of text
    #[arg(long)]
    pub(crate) json: bool,
    /// Colour the output
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub(crate) color: ColorChoice,
    /// Write to stdout even on a terminal
    #[arg(long)]
    pub(crate) no_pager: bool,
    /// Show the working history at request K (0-based) under the engine flags
    #[arg(long, value_name = "K")]
    pub(crate) at: Option<usize>,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    // Boxed: fifteen optional flags would double the size of the command.
    #[command(flatten)]
    pub(crate) policy: Box<PolicyArgs>,
    /// Fail (exit 1) if any line of the transcript had to be skipped
    #[arg(long)]
    pub(crate) strict: bool,
    /// Write the session as one self-contained web page instead: the chat,
    /// a timeline of the requests under the engine flags, what each
    /// compaction cut, the agent's own compactions and recorded usage, with
    /// search and filters, e.g. --html session.html. Given a folder of
    /// sessions, PATH is a directory: a page per session, linked to its
    /// subagents' and parent's, and index.html over them
    #[arg(long, value_name = "PATH", conflicts_with_all = ["json", "at"])]
    pub(crate) html: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) select: super::select_args::SelectArgs,
    /// With --html: a compaction within N requests of the previous one is
    /// marked as repeated, e.g. --thrash-window 5
    #[arg(long, value_name = "N", default_value_t = crate::replay::DEFAULT_THRASH_WINDOW,
          value_parser = crate::replay::misfire::parse_thrash_window)]
    pub(crate) thrash_window: usize,
}

/// Count where a session's context goes: by role, by block type, by tool.
#[derive(Args, Debug)]
#[command(
    after_help = "Tokens are smith's estimate (bytes / 4). The context curve is the estimate of
the history before each request with no compaction at all.

Examples:
  smith-calibrate transcript stats fix-the-tests
  smith-calibrate transcript stats transcript.jsonl --top 20
  smith-calibrate transcript stats transcript.jsonl --json | jq '.curve[-1].tokens'"
)]
pub(crate) struct StatsArgs {
    #[command(flatten)]
    pub(crate) session: super::SessionArg,
    /// How many of the largest tool results to list
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub(crate) top: usize,
    /// Everything as one JSON object (the whole context curve included)
    #[arg(long)]
    pub(crate) json: bool,
    /// Fail (exit 1) if any line of the transcript had to be skipped
    #[arg(long)]
    pub(crate) strict: bool,
}

/// Write a new smith session from a transcript: the whole record, or the
/// history the model received at one request.
#[derive(Args, Debug)]
#[command(
    after_help = "The new session is built from transcript.jsonl, not from the compacted
session.json: by default it holds every message of the record, as smith would
have had it had it never compacted. --at K holds the history the model
received at request K (0-based), compacted under the engine flags (or
--policy): the same bytes `replay --emit-history-at K` writes.

It is written as smith writes a session: session.json (smith's fields; cwd,
model, provider, usage, todos and context_ratio kept from the source, parent_id
the source's id) with transcript.jsonl beside it and the attachments it names
copied into media/. The source session is never modified.

--into-smith-home makes it a new session under $SMITH_HOME/sessions with a
fresh id and a name saying where it came from (e.g. fix-the-tests-restored-at-40),
registered in index.json under a lock, so `smith resume NAME` finds it. An
index that is not a list of sessions is an error, and nothing is written.

Examples:
  smith-calibrate transcript restore fix-the-tests --out /tmp/fix-the-tests-full
  smith-calibrate transcript restore fix-the-tests --at 40 --into-smith-home
  smith-calibrate transcript restore transcript.jsonl --at 40 --max-tokens 64000 --out restored/"
)]
pub(crate) struct RestoreArgs {
    #[command(flatten)]
    pub(crate) session: super::SessionArg,
    /// The history at request K (0-based) under the engine flags, instead of
    /// the whole record
    #[arg(long, value_name = "K")]
    pub(crate) at: Option<usize>,
    /// Write the session into DIR (created; must not exist or be empty)
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "into_smith_home",
        conflicts_with = "into_smith_home"
    )]
    pub(crate) out: Option<std::path::PathBuf>,
    /// Write it as a new session into $SMITH_HOME/sessions and its index
    #[arg(long)]
    pub(crate) into_smith_home: bool,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
    // Boxed: fifteen optional flags would double the size of the command.
    #[command(flatten)]
    pub(crate) policy: Box<PolicyArgs>,
    /// What was written as one JSON object on stdout
    #[arg(long)]
    pub(crate) json: bool,
    /// Fail (exit 1) if any line of the transcript had to be skipped
    #[arg(long)]
    pub(crate) strict: bool,
}

pub(crate) fn run(args: TranscriptArgs) -> Result<()> {
    match args.command {
        TranscriptCommand::List(a) => run_list(a),
        TranscriptCommand::Show(a) => run_show(a),
        TranscriptCommand::Stats(a) => run_stats(a),
        TranscriptCommand::Restore(a) => run_restore(a),
    }
}

fn run_restore(args: RestoreArgs) -> Result<()> {
    use crate::import::restore::{self, Target};
    let setup = args.policy.setup(args.engine.config()?)?;
    let session = args.session.load(args.strict)?;
    let chosen = for_session(&setup, args.engine.knobs.given(), &session);
    let (history, what) = match args.at {
        None => (session.messages.clone(), "whole".to_string()),
        Some(k) => {
            let engine = chosen.compactor(&session);
            let mut found = None;
            let facts =
                crate::replay::replay_with(&session.messages, engine.as_ref(), |r, h, _| {
                    if r.request == k {
                        found = Some(h.to_vec());
                        return false;
                    }
                    true
                });
            match found {
                Some(h) => (h, format!("at-{k}")),
                None => {
                    return Err(usage(format!(
                        "request {k} does not exist: the session has {} requests (0..{})",
                        facts.requests,
                        facts.requests.saturating_sub(1)
                    )))
                }
            }
        }
    };
    let target = match &args.out {
        Some(dir) => Target::Dir(dir.clone()),
        None => Target::SmithHome(locate::sessions_dir()),
    };
    if let Target::Dir(dir) = &target {
        let source = crate::import::absolute(session.source.dir());
        if crate::import::absolute(dir).starts_with(&source) {
            return Err(usage(format!(
                "--out {} lies inside the session it restores ({}); choose a directory outside it",
                dir.display(),
                source.display()
            )));
        }
    }
    let done = restore::restore(&session, &history, &what, &target)?;
    if done.media_missing > 0 {
        crate::note!(
            "{} attachments the history names are not in {}; smith will show them as missing",
            done.media_missing,
            session.source.dir().join("media").display()
        );
    }
    crate::note!(
        "restored {} messages of {} ({}) as {}{} in {}",
        done.messages,
        session.label(),
        if what == "whole" {
            "the whole record".to_string()
        } else {
            format!("request {} under {}", args.at.unwrap_or(0), setup.label())
        },
        done.id,
        done.name
            .as_deref()
            .map(|n| format!(" named {n}"))
            .unwrap_or_default(),
        done.dir.display()
    );
    let mut out = io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, &done)
            .map_err(io::Error::from)
            .and_then(|_| writeln!(out))
    } else {
        writeln!(out, "{}", done.dir.display())
    };
    written?;
    Ok(())
}

/// What a file is that no line of reads as a message.
const NOT_A_LOG: &str =
    "not a log of any format this reads (a smith transcript.jsonl, a Claude Code log, \
     a Codex rollout, a mini-swe-agent trajectory): no line of it is a message";

fn run_list(args: ListArgs) -> Result<()> {
    let root = match &args.path {
        Some(p) => std::path::PathBuf::from(p),
        None => locate::sessions_dir(),
    };
    if !root.exists() {
        return Err(nothing_read(match &args.path {
            Some(_) => format!("{}: no such file or directory", root.display()),
            None => format!(
                "{}: no sessions directory; smith keeps sessions in $SMITH_HOME/sessions (set SMITH_HOME or give a PATH)",
                root.display()
            ),
        }));
    }
    let sources = crate::import::direct::resolve_listing(&root.to_string_lossy())
        .map_err(|e| nothing_read(format!("{e:#}")))?;
    let sources = args.select.apply(sources)?;
    let mut indexes = locate::Indexes::default();
    let work: Vec<_> = sources
        .into_iter()
        .map(|s| {
            let entry = indexes.entry(s.dir());
            (s, entry)
        })
        .collect();
    for e in &indexes.errors {
        crate::note!("{e}; names and dates from it are not used");
    }
    let results: Vec<Result<SessionRow>> = work
        .par_iter()
        .map(|(source, entry)| list::row(source, entry.as_ref()))
        .collect();
    let mut rows = Vec::with_capacity(results.len());
    let mut failed = 0;
    let mut not_logs = Vec::new();
    for r in results {
        match r {
            // Not one line of it is a message: no damaged session, but no
            // log of any format this reads.
            Ok(row) if row.messages == 0 && row.skipped > 0 => not_logs.push(row.path),
            Ok(row) => rows.push(row),
            Err(e) => {
                failed += 1;
                crate::note!("{e:#}");
            }
        }
    }
    if rows.is_empty() && failed == 0 && not_logs.len() == 1 {
        return Err(nothing_read(format!(
            "{}: {NOT_A_LOG}",
            not_logs[0].display()
        )));
    }
    for path in &not_logs {
        crate::note!("{}: skipped: {NOT_A_LOG}", path.display());
    }
    if rows.is_empty() {
        return Err(nothing_read(format!(
            "{}: none of the {} transcripts could be read",
            root.display(),
            failed + not_logs.len()
        )));
    }
    for r in &rows {
        crate::messages::notes(&r.skipped_lines);
    }
    let damaged = rows.iter().filter(|r| r.skipped > 0).count();
    if args.strict && (damaged > 0 || failed > 0) {
        return Err(nothing_read(format!(
            "{damaged} sessions with bad lines and {failed} unreadable ones (see above) and --strict was given"
        )));
    }
    if damaged > 0 {
        crate::note!(
            "{damaged} of {} sessions have lines that could not be read (column 'bad lines'); `transcript show` names them",
            rows.len()
        );
    }
    list::sort_newest_first(&mut rows);
    let mut out = BufWriter::new(io::stdout().lock());
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, &rows)
            .map_err(io::Error::from)
            .and_then(|_| writeln!(out))
    } else {
        writeln!(out, "{}", list::table(&rows))
    };
    written.and_then(|_| out.flush())?;
    Ok(())
}

/// `setup` at each session's own window where the sessions are other
/// agents' (`others`) and no window was given: the window `sweep` replays
/// them at.
fn as_swept(setup: &Setup, args: &ShowArgs, others: bool) -> Setup {
    let mut setup = setup.clone();
    if others && !args.engine.knobs.1.contains(&crate::sweep::Knob::MaxTokens) {
        setup.config.max_tokens = crate::engine::budget::OWN_WINDOW;
    }
    setup
}

fn run_show(args: ShowArgs) -> Result<()> {
    let setup = args
        .engine
        .with_estimator(args.policy.setup(args.engine.config()?)?)?;
    let filter = Filter {
        turns: args.turn,
        role: args.role,
        tool: args.tool.clone(),
        grep: args.grep.clone(),
    };
    if let Some(path) = &args.html {
        let found = args.select.apply(args.session.resolve()?)?;
        if found.len() > 1 {
            let given = args.engine.knobs.given();
            return session_pages::write_set(
                path,
                &args.session.typed(),
                &found,
                &as_swept(
                    &setup,
                    &args,
                    found.iter().all(locate::recorded_by_another_agent),
                ),
                given,
                args.thrash_window,
                args.strict,
            );
        }
    }
    let session = args.session.load(args.strict)?;
    let imported = session
        .meta
        .as_ref()
        .and_then(|m| m.raw.as_ref())
        .and_then(crate::transcript::session_file::SessionFile::from_meta)
        .is_some();
    // The session's own ratio and overhead where the flags leave them.
    let chosen = for_session(
        &as_swept(&setup, &args, imported),
        args.engine.knobs.given(),
        &session,
    );
    if let Some(path) = &args.html {
        return session_pages::write_one(path, &session, &chosen, args.thrash_window);
    }
    let record_turns = turn_numbers(&session.messages);

    let engine = chosen.compactor(&session);
    let at = match args.at {
        None => None,
        Some(k) => match history_at(&session.messages, engine.as_ref(), k) {
            Some(at) => Some(at),
            None => {
                let requests = session
                    .messages
                    .iter()
                    .filter(|m| m.role == Role::Assistant)
                    .count();
                return Err(usage(format!(
                    "request {k} does not exist: the session has {requests} requests (0..{})",
                    requests.saturating_sub(1)
                )));
            }
        },
    };
    let doc = match &at {
        Some(at) => Document::history(at, &record_turns),
        None => Document::record(&session.messages),
    };
    let selected = filter.select(doc.messages, &doc.turns, &doc.calls);

    if args.json {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        let mut buf = Vec::new();
        let mut written = Ok(());
        for (m, _) in doc.messages.iter().zip(&selected).filter(|(_, s)| **s) {
            buf.clear();
            m.write_json(&mut buf);
            buf.push(b'\n');
            written = out.write_all(&buf);
            if written.is_err() {
                break;
            }
        }
        written.and_then(|_| out.flush())?;
        return Ok(());
    }

    let mut out = Output::open(!args.no_pager);
    let to_terminal = out.is_pager() || io::stdout().is_terminal();
    let paint = Painter::new(color::enabled(args.color, to_terminal));
    let opts = Options {
        full: args.full,
        thinking: args.thinking,
        result_lines: args.lines,
    };
    let show = |out: &mut dyn Write| {
        write_show(
            out,
            &session,
            at.as_ref(),
            &setup,
            &doc,
            &filter,
            &selected,
            &opts,
            paint,
        )
    };
    let written = show(&mut out);
    if !out.finish()? {
        crate::note!("smith-calibrate: the pager in $PAGER could not be started; writing directly (set PAGER, or pass --no-pager)");
        let mut direct = Output::direct();
        let written = show(&mut direct);
        direct.finish()?;
        return Ok(written?);
    }
    written?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn write_show(
    out: &mut dyn Write,
    session: &Session,
    at: Option<&crate::view::marks::HistoryAt>,
    setup: &Setup,
    doc: &Document,
    filter: &Filter,
    selected: &[bool],
    opts: &Options,
    paint: Painter,
) -> io::Result<()> {
    if let Some(at) = at {
        render::write_at_header(out, at, &setup.label(), paint)?;
    }
    let shown = render::render(out, doc, filter, selected, opts, paint)?;
    let count = selected.iter().filter(|s| **s).count();
    render::write_footer(out, &shown, count, doc.messages.len(), filter, paint)?;
    let skipped = session.log.skipped_count();
    if skipped > 0 {
        writeln!(
            out,
            "── {skipped} lines of {} could not be read and are not shown (reported on stderr; first at line {})",
            session.source.transcript.display(),
            session.log.skipped[0].line
        )?;
    }
    Ok(())
}

fn run_stats(args: StatsArgs) -> Result<()> {
    let session = args.session.load(args.strict)?;
    let s = stats::compute(&session.messages, args.top);
    let mut out = BufWriter::new(io::stdout().lock());
    let written = if args.json {
        let mut map = serde_json::Map::new();
        map.insert("session".into(), session.label().into());
        map.insert(
            "path".into(),
            session
                .source
                .transcript
                .to_string_lossy()
                .into_owned()
                .into(),
        );
        map.insert("lines_skipped".into(), session.log.skipped_count().into());
        if let serde_json::Value::Object(fields) = serde_json::to_value(&s)? {
            map.extend(fields);
        }
        serde_json::to_writer_pretty(&mut out, &map)
            .map_err(io::Error::from)
            .and_then(|_| writeln!(out))
    } else {
        writeln!(
            out,
            "{}",
            stats::tables(&s, &session.label(), session.log.skipped_count())
        )
    };
    written.and_then(|_| out.flush())?;
    Ok(())
}
