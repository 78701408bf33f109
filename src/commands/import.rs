//! `smith-calibrate import`: other agents' recorded sessions into smith
//! session directories that `replay`, `sweep` and `calibrate` read.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::import::logs::{Converter, Format};
use crate::import::{self, claude_code, codex, mini_swe_agent, Outcome};

use super::{nothing_read, usage};

/// Import sessions of other coding agents as smith sessions.
#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    #[command(subcommand)]
    pub(crate) format: ImportFormat,
}

/// The formats `import` reads.
#[derive(Subcommand, Debug)]
pub(crate) enum ImportFormat {
    ClaudeCode(ClaudeCodeArgs),
    Codex(CodexArgs),
    MiniSweAgent(MiniSweAgentArgs),
}

/// What `import claude-code --help` says after the flags.
const CLAUDE_CODE_HELP: &str =
    "Each log becomes OUT/<id>/transcript.jsonl and OUT/<id>/session.json \
(where it came from, the provider's usage per request, Claude Code's own compactions), and \
OUT/index.json lists them. A re-run replaces its own output; the input is only read.

Examples:
  smith-calibrate import claude-code --out ~/imports/claude
  smith-calibrate import claude-code ~/.claude/projects/-home-me-myproject --out imports
  smith-calibrate calibrate imports";

/// What `import codex --help` says after the flags.
const CODEX_HELP: &str =
    "Each rollout becomes OUT/<id>/transcript.jsonl and OUT/<id>/session.json \
(the model of each turn, OpenAI's usage per request with its cached input, Codex's own \
compactions with their summaries, the base instructions' size as overhead), and OUT/index.json \
lists them. A re-run replaces its own output; the input is only read.

Examples:
  smith-calibrate import codex --out ~/imports/codex
  smith-calibrate import codex ~/.codex/sessions/2026/03 --out imports
  smith-calibrate calibrate imports";

/// Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`,
/// with `subagents/agent-*.jsonl` as sessions of their own).
#[derive(Args, Debug)]
#[command(after_help = CLAUDE_CODE_HELP)]
pub(crate) struct ClaudeCodeArgs {
    /// Log files or directories searched for *.jsonl [default: ~/.claude/projects]
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) to: ImportTo,
}

/// Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
#[derive(Args, Debug)]
#[command(after_help = CODEX_HELP)]
pub(crate) struct CodexArgs {
    /// Rollout files or directories searched for rollout-*.jsonl [default:
    /// ~/.codex/sessions]
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) to: ImportTo,
}

/// mini-swe-agent trajectories (`*.traj.json`, format mini-swe-agent-1).
#[derive(Args, Debug)]
#[command(
    after_help = "Each trajectory becomes OUT/<id>/transcript.jsonl and OUT/<id>/session.json \
(usage per request, the system prompt's size as overhead, and the resolved label from \
<folder>.results.json beside the trajectories' folder when it exists). A re-run replaces its \
own output; the input is only read.

Examples:
  smith-calibrate import mini-swe-agent runs/gemini-3-pro-swebench-verified --out imports
  smith-calibrate import mini-swe-agent runs/x --out imports --classify-commands
  smith-calibrate calibrate imports"
)]
pub(crate) struct MiniSweAgentArgs {
    /// Trajectory files or directories searched for *.traj.json
    #[arg(value_name = "PATH", required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Directory to write the sessions into (created if missing)
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Name plain reads (cat, nl, head, tail, sed -n) read_file, grep/rg grep
    /// and find/ls glob, so that smith's duplicate stage sees them. A
    /// trajectory is one real turn (the task), which smith's recency window
    /// protects whole: replay with --window 0 to let that stage act
    #[arg(long)]
    pub(crate) classify_commands: bool,
    /// The results file with each task's resolved label [default:
    /// <folder>.results.json beside each trajectory's folder]
    #[arg(long, value_name = "FILE")]
    pub(crate) results: Option<PathBuf>,
    /// Print the totals as one JSON object
    #[arg(long)]
    pub(crate) json: bool,
}

/// Where `import` writes and how it reports, the same for every format.
#[derive(Args, Debug)]
pub(crate) struct ImportTo {
    /// Directory to write the sessions into (created if missing)
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Print the totals as one JSON object
    #[arg(long)]
    pub(crate) json: bool,
}

impl ImportTo {
    /// Converts `files` as `format` into `out` and reports what it did.
    fn import(
        &self,
        format: Format,
        files: &[PathBuf],
        results: Option<&Path>,
        options: mini_swe_agent::Options,
    ) -> Result<()> {
        let converter = Converter::new(format, files, results, options)?;
        let outcome = import::import_files_multi(files, &self.out, |f| converter.convert(f))?;
        finish(&outcome, &self.out, self.json)
    }
}

pub(crate) fn run(args: ImportArgs) -> Result<()> {
    match args.format {
        ImportFormat::ClaudeCode(a) => run_claude_code(a),
        ImportFormat::Codex(a) => run_codex(a),
        ImportFormat::MiniSweAgent(a) => run_mini_swe_agent(a),
    }
}

fn run_claude_code(args: ClaudeCodeArgs) -> Result<()> {
    let paths = or_under_home(args.paths, &[".claude", "projects"]);
    let files = discover(
        &paths,
        &args.to.out,
        &claude_code::is_session_log,
        "*.jsonl",
    )?;
    args.to
        .import(Format::ClaudeCode, &files, None, Default::default())
}

fn run_codex(args: CodexArgs) -> Result<()> {
    let paths = or_under_home(args.paths, &[".codex", "sessions"]);
    let files = discover(&paths, &args.to.out, &codex::is_rollout, "rollout-*.jsonl")?;
    args.to
        .import(Format::Codex, &files, None, Default::default())
}

fn run_mini_swe_agent(args: MiniSweAgentArgs) -> Result<()> {
    let files = discover(
        &args.paths,
        &args.out,
        &mini_swe_agent::is_trajectory,
        "*.traj.json",
    )?;
    let options = mini_swe_agent::Options {
        classify_commands: args.classify_commands,
    };
    // Its --json comes after its own flags in the help, so it is not
    // flattened from `ImportTo`.
    let to = ImportTo {
        out: args.out,
        json: args.json,
    };
    to.import(
        Format::MiniSweAgent,
        &files,
        args.results.as_deref(),
        options,
    )
}

/// `paths`, or where the agent keeps its logs under `$HOME` when none is
/// given.
fn or_under_home(paths: Vec<PathBuf>, under: &[&str]) -> Vec<PathBuf> {
    if !paths.is_empty() {
        return paths;
    }
    let mut dir = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    dir.extend(under);
    vec![dir]
}

/// The input files: each path must exist; directories are searched (the
/// output directory excluded), and the output may not lie inside an input.
fn discover(
    paths: &[PathBuf],
    out: &Path,
    wanted: &dyn Fn(&Path) -> bool,
    pattern: &str,
) -> Result<Vec<PathBuf>> {
    for p in paths {
        if !p.exists() {
            return Err(nothing_read(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    import::check_output_outside(out, paths).map_err(|e| usage(format!("{e:#}")))?;
    let mut files = Vec::new();
    for p in paths {
        let found =
            import::find_files(p, out, wanted).map_err(|e| nothing_read(format!("{e:#}")))?;
        if found.is_empty() {
            crate::note!("{}: no {pattern} file found here", p.display());
        }
        files.extend(found);
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(nothing_read(format!("no {pattern} file to import")));
    }
    Ok(files)
}

/// Reports what was skipped or repaired (stderr) and the totals (stdout).
fn finish(outcome: &Outcome, out: &Path, json: bool) -> Result<()> {
    for f in &outcome.failures {
        crate::note!("{f}");
    }
    for s in &outcome.sessions {
        let mut report = Vec::new();
        s.report(&mut report)?;
        crate::messages::notes(&String::from_utf8_lossy(&report));
    }
    let t = &outcome.totals;
    if t.sessions == 0 {
        return Err(nothing_read(format!(
            "no session could be imported from {} files",
            t.files
        )));
    }
    let stdout = io::stdout();
    let mut o = stdout.lock();
    if json {
        let value = serde_json::json!({
            "out": out,
            "totals": t,
            "sessions": outcome.sessions.iter().map(|s| serde_json::json!({
                "id": s.file.id,
                "source": s.file.source.path,
                "counts": s.file.import,
            })).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut o, &value)?;
        writeln!(o)?;
    } else {
        writeln!(
            o,
            "imported {} sessions from {} files into {}: {} messages, {} tool calls",
            t.sessions,
            t.files,
            out.display(),
            t.messages,
            t.tool_calls
        )?;
        writeln!(
            o,
            "{} source lines skipped, {} files failed, {} tool calls given a \"{}\" result, {} synthetic user messages{}",
            t.skipped,
            t.files_failed,
            t.synthetic_results,
            import::NO_RESULT_TEXT,
            t.synthetic_user_messages,
            if t.agent_written > 0 {
                format!(
                    "; {} lines Claude Code wrote itself (model \"<synthetic>\") left out, as they are no model response",
                    t.agent_written
                )
            } else {
                String::new()
            }
        )?;
        if let Some(clause) = import::not_imported_clause(&t.not_imported) {
            writeln!(o, "{clause}")?;
        }
        writeln!(o, "next: smith-calibrate calibrate {}", out.display())?;
    }
    Ok(())
}
