//! `smith-calibrate calibrate`: fit `--ratio` and `--overhead` from imported
//! sessions that carry the provider's usage, and compare the source agent's
//! own compactions with where smith's engine would compact.

use std::io::{self, Write};

use anyhow::Result;
use clap::Args;
use comfy_table::Cell;
use rayon::prelude::*;

use crate::calibrate::formats::{self, CompactionRow, FormatFit, Loaded};
use crate::calibrate::{FirstCompaction, COMPARE_MAX_TOKENS};
use crate::format::{percent, right, table, whole, NONE};
use crate::screen::Table;
use crate::stats::median_of;

use super::{nothing_read, report_skips, usage};

/// Fit smith's estimator knobs (ratio, overhead) to real provider usage.
#[derive(Args, Debug)]
#[command(
    after_help = "Reads logs with the provider's usage of every request (read in place or \
imported) and prints, per source: the fit reported ≈ (estimate + overhead) × ratio and the \
flags that apply it; where smith's engine would first compact against the agent; the agent's \
own compactions, what they removed and what was fetched again, and the loss measures held \
against those re-fetches; the claude-code and codex policies against the agents' own \
compactions, per version; the recorded replay and the bill check against the log. Every \
table is described in docs/guide.md and docs/cost-model.md.

Examples:
  smith-calibrate import claude-code --out ~/imports/claude
  smith-calibrate calibrate ~/imports/claude
  smith-calibrate calibrate ~/imports/claude --json | jq '.fits[0].flags'
  smith-calibrate calibrate ~/imports/claude --json | jq '.bill.summary'
  smith-calibrate calibrate imports/a imports/b --json | jq '.real_compactions.validation'
  smith-calibrate calibrate ~/imports/claude --cache-ttl 5m --bill-requests
  smith-calibrate calibrate ~/imports/claude --per-session-cache
  smith-calibrate calibrate ~/.codex/sessions
  smith-calibrate calibrate ~/.claude/projects --json | jq '.peer_triggers.by_version'
  smith-calibrate calibrate ~/imports/claude --estimator bytes4,chars4,o200k,cl100k"
)]
pub(crate) struct CalibrateArgs {
    #[arg(value_name = "PATH", required = true, help = super::SESSIONS_HELP)]
    pub(crate) paths: Vec<String>,
    #[command(flatten)]
    pub(crate) select: super::select_args::SelectArgs,
    /// The context window smith's engine is compared under, and the
    /// recorded replay runs in: `own`, each session's own (the window its
    /// log records, else its model's), or a number of tokens
    #[arg(long, default_value = "own", value_name = "N|own", value_parser = window_arg)]
    pub(crate) max_tokens: u64,
    /// smith's engine the comparison and the usage check replay: 0.4 (the
    /// latest release, e533ff4) or next (after #118)
    #[arg(long, value_name = "NAME", default_value = crate::engine::EngineVersion::RELEASED.as_str(),
          value_parser = |t: &str| crate::engine::EngineVersion::parse(t))]
    pub(crate) engine: crate::engine::EngineVersion,
    /// Print everything as one JSON object
    #[arg(long)]
    pub(crate) json: bool,
    /// Hold each source out in turn: fit the price model's fitted parts on
    /// the other sources and measure the held-out source's bill error with
    /// the defaults and with each optional part (--part) switched. A source
    /// is each PATH given, or each project folder when one PATH is given.
    /// Example: --validate
    #[arg(long)]
    pub(crate) validate: bool,
    #[command(flatten)]
    pub(crate) cost: super::cost_args::CostArgs,
    /// Bill check: print every request, recorded vs predicted (with
    /// --json: include them). Example: --bill-requests
    #[arg(long)]
    pub(crate) bill_requests: bool,
    /// Fail (exit 1, printing nothing) if any line or session had to be
    /// skipped
    #[arg(long)]
    pub(crate) strict: bool,
    #[command(flatten)]
    pub(crate) account: super::account_args::AccountArgs,
    /// Also fit each of these token estimators (bytes4, chars4, o200k,
    /// cl100k, claude2, or all) and compare their errors before and after the fit and
    /// their counting time. Example: --estimator bytes4,o200k
    #[arg(long, value_name = "LIST")]
    pub(crate) estimator: Option<String>,
}

pub(crate) fn run(args: CalibrateArgs) -> Result<()> {
    let estimators = check_args(&args)?;
    let sessions = load(&args)?;
    let (fits, not_imported) = formats::fit_formats(&sessions);
    let usage = crate::calibrate::usage::check(&sessions, args.smith_config());
    if fits.is_empty() {
        if usage.sessions.is_empty() {
            return Err(nothing_read(format!(
                "none of the {} sessions carries usage: no log records it per request and no smith session.json records its totals",
                sessions.len()
            )));
        }
        // smith's own sessions alone: their totals are the whole check.
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        if args.json {
            serde_json::to_writer_pretty(&mut out, &serde_json::json!({ "usage_check": usage }))?;
            writeln!(out)?;
        } else {
            let mut out = crate::screen::Wrapping::new(&mut out);
            crate::calibrate::usage::write_text(&mut out, &usage)?;
            out.flush()?;
        }
        out.flush()?;
        return Ok(());
    }
    let spinner = crate::messages::spinner(format!(
        "calibrating on {} sessions: the fits, the recorded replay, the bill check, the real compactions",
        sessions.len()
    ));
    let (bill, replay) = bill_check(&sessions, &fits, &args);
    let found = Found {
        rows: formats::compaction_rows(&sessions, &fits, &|f| args.window_of(f), args.engine),
        bill,
        replay,
        estimators: estimators
            .map(|list| super::estimators::compare(&sessions_samples(&sessions), &list)),
        real: super::real_compactions::build(real_compactions(&sessions, &args.paths)),
        triggers: peer_triggers(&sessions),
        validation: price_validation(&sessions, &fits, &args),
        fits,
        not_imported,
        usage,
    };
    spinner.finish_and_clear();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if args.json {
        print_json(&mut out, &found, &args)?;
    } else {
        let mut out = crate::screen::Wrapping::new(&mut out);
        print_text(&mut out, &found, &args)?;
        out.flush()?;
    }
    out.flush()?;
    Ok(())
}

/// What the calibration found, as both outputs print it.
struct Found {
    fits: Vec<FormatFit>,
    not_imported: usize,
    rows: Vec<CompactionRow>,
    bill: BillCheck,
    replay: crate::calibrate::recorded::ReplayCheck,
    estimators: Option<Vec<crate::calibrate::compare::EstimatorFit>>,
    real: super::real_compactions::RealReport,
    triggers: Vec<crate::calibrate::triggers::Trigger>,
    validation: Option<crate::calibrate::validate::Validation>,
    /// smith's sessions' recorded totals against their replays.
    usage: crate::calibrate::usage::UsageCheck,
}

/// `--max-tokens`: the knob's word `own`, or a window the knob accepts.
fn window_arg(text: &str) -> Result<u64, crate::knob::ValueError> {
    use crate::engine::knobs::{Knob, Typed};
    match Knob::MaxTokens.parse_one(text)? {
        Typed::Word(v) => Ok(v as u64),
        // 0 holds `own`: typed, it is a window of nothing.
        Typed::Number(0.0) => Err(crate::knob::ValueError::Window(0)),
        Typed::Number(n) => Knob::MaxTokens.check(n).map(|()| n as u64),
    }
}

impl CalibrateArgs {
    /// The window a session is compared and replayed under.
    /// What smith's own sessions replay under: the user's `[context]`
    /// (smith's defaults without one), the window given, the engine.
    fn smith_config(&self) -> crate::engine::Config {
        let path = crate::transcript::locate::smith_home()
            .join(crate::recommend::smith_config::CONFIG_FILE);
        let mut config = crate::recommend::smith_config::read(&path).config;
        if self.max_tokens != crate::engine::budget::OWN_WINDOW {
            config.max_tokens = self.max_tokens;
        }
        config.engine = self.engine;
        config
    }

    fn window_of(&self, f: &crate::transcript::session_file::SessionFile) -> u64 {
        if self.max_tokens == crate::engine::budget::OWN_WINDOW {
            crate::calibrate::session::own_window(f).unwrap_or(COMPARE_MAX_TOKENS)
        } else {
            self.max_tokens
        }
    }
}

/// The window's range, and the estimators to compare, if asked.
fn check_args(args: &CalibrateArgs) -> Result<Option<Vec<crate::estimate::Estimator>>> {
    if args.max_tokens > i32::MAX as u64 {
        return Err(usage(format!(
            "--max-tokens must be between 1 and {}",
            i32::MAX
        )));
    }
    match &args.estimator {
        Some(list) => Ok(Some(
            crate::estimate::Estimator::parse_list(list)
                .map_err(|e| usage(format!("--estimator: {e}")))?,
        )),
        None => Ok(None),
    }
}

/// The selected sessions, read in parallel; one that cannot be read is
/// noted and left out.
fn load(args: &CalibrateArgs) -> Result<Vec<Loaded>> {
    let refs = crate::import::direct::resolve_all_listing(&args.paths)
        .map_err(|e| nothing_read(format!("{e:#}")))?;
    let refs = args.select.apply(refs)?;
    let spinner = crate::messages::spinner(format!("reading {} sessions", refs.len()));
    let loaded: Vec<Result<Loaded>> = refs.par_iter().map(Loaded::read).collect();
    spinner.finish_and_clear();
    let mut sessions = Vec::with_capacity(loaded.len());
    let mut unreadable = 0;
    for l in loaded {
        match l {
            Ok(l) => {
                report_skips(&l.session);
                sessions.push(l);
            }
            Err(e) => {
                unreadable += 1;
                crate::note!("{e:#}");
            }
        }
    }
    let bad_lines: usize = sessions.iter().map(|l| l.session.log.skipped_count()).sum();
    if args.strict && (bad_lines > 0 || unreadable > 0) {
        return Err(nothing_read(format!(
            "{bad_lines} bad lines and {unreadable} unreadable sessions (see above) and --strict was given"
        )));
    }
    Ok(sessions)
}

fn print_json(out: &mut dyn Write, found: &Found, args: &CalibrateArgs) -> Result<()> {
    let mut value = serde_json::json!({
        "fits": found.fits,
        "not_imported": found.not_imported,
        "compaction": {
            "max_tokens": crate::engine::window_label(args.max_tokens),
            "sessions": found.rows,
        },
        "bill": found.bill.json(args.bill_requests),
        "recorded_replay": found.replay,
        "real_compactions": found.real,
        "peer_triggers": {
            "compactions": found.triggers,
            "by_version": crate::calibrate::triggers::by_version(&found.triggers),
        },
    });
    if let (Some(v), Some(map)) = (&found.validation, value.as_object_mut()) {
        map.insert("price_validation".into(), serde_json::to_value(v)?);
    }
    if let (Some(e), Some(map)) = (&found.estimators, value.as_object_mut()) {
        map.insert("estimators".into(), super::estimators::json(e));
    }
    if let (false, Some(map)) = (found.usage.sessions.is_empty(), value.as_object_mut()) {
        map.insert("usage_check".into(), serde_json::to_value(&found.usage)?);
    }
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)?;
    Ok(())
}

fn print_text(out: &mut dyn Write, found: &Found, args: &CalibrateArgs) -> Result<()> {
    write_text(
        out,
        &found.fits,
        &found.rows,
        found.not_imported,
        args.max_tokens,
    )?;
    writeln!(out)?;
    super::real_compactions::write_text(out, &found.real)?;
    crate::calibrate::triggers::write_text(out, &found.triggers)?;
    crate::calibrate::recorded::write_text(out, &found.replay)?;
    if let Some(v) = &found.validation {
        crate::calibrate::validate::write_text(out, v)?;
    } else if args.validate {
        writeln!(out, "--validate: one source only (give two PATHs or more, or one holding several projects); nothing could be held out\n")?;
    }
    crate::cost::report::write_text(
        out,
        &found.bill.summaries,
        &found.bill.sessions,
        args.bill_requests,
    )?;
    if let Some(e) = &found.estimators {
        super::estimators::write_text(out, e)?;
    }
    crate::calibrate::usage::write_text(out, &found.usage)?;
    Ok(())
}

/// The log a session was read from (the converted log for one read in
/// place), canonical, and the first of `roots` it is under.
fn found_under<'r>(
    l: &Loaded,
    roots: &'r [(std::path::PathBuf, &String)],
) -> Option<(
    std::path::PathBuf,
    Option<&'r (std::path::PathBuf, &'r String)>,
)> {
    let file = l
        .session
        .source
        .converted
        .as_ref()
        .map_or(&l.session.source.transcript, |c| &c.source);
    let at = std::fs::canonicalize(file).ok()?;
    let root = roots.iter().find(|(root, _)| at.starts_with(root));
    Some((at, root))
}

/// The source an imported session is counted under: the first of `paths`
/// it was found under, else its format.
fn source_of<'a>(l: &'a Loaded, roots: &'a [(std::path::PathBuf, &String)]) -> Option<&'a str> {
    let f = l.file.as_ref()?;
    let root = found_under(l, roots).and_then(|(_, r)| r);
    Some(root.map_or(f.source.format.as_str(), |(_, p)| p.as_str()))
}

fn roots(paths: &[String]) -> Vec<(std::path::PathBuf, &String)> {
    paths
        .iter()
        .filter_map(|p| Some((std::fs::canonicalize(p).ok()?, p)))
        .collect()
}

/// Every compaction of the source agents, measured, per source.
fn real_compactions(
    sessions: &[Loaded],
    paths: &[String],
) -> Vec<crate::loss::real::RealCompaction> {
    let roots = roots(paths);
    let per: Vec<Vec<crate::loss::real::RealCompaction>> = sessions
        .par_iter()
        .map(|l| {
            let (Some(f), Some(source)) = (&l.file, source_of(l, &roots)) else {
                return Vec::new();
            };
            crate::loss::real::analyze(&l.session.messages, f, &l.session.label(), source, &|i| {
                crate::cost::bill::request_dollars(f, i)
            })
        })
        .collect();
    per.into_iter().flatten().collect()
}

/// Every automatic compaction of a Claude Code or Codex log, against where
/// the policy copying its agent would have compacted, at the session's own
/// window.
fn peer_triggers(sessions: &[Loaded]) -> Vec<crate::calibrate::triggers::Trigger> {
    use crate::calibrate::{session::own_window, triggers};
    sessions
        .iter()
        .filter_map(|l| {
            let f = l.file.as_ref()?;
            Some(triggers::of_session(&l.session.label(), f, own_window(f)?))
        })
        .flatten()
        .collect()
}

/// How `calibrate`'s flags price: the cache lifetime, the minimum prefix
/// and the account's cache.
fn cost_settings(args: &CalibrateArgs) -> crate::cost::session::Settings {
    args.account.settings(crate::cost::session::Settings {
        ttl: args.cost.cache_ttl.and_then(|t| t.0),
        min_cacheable: args.cost.cache_min_tokens,
        ..Default::default()
    })
}

/// `--validate`: the imported sessions by source (each PATH; each project
/// folder where one PATH is given), each held out in turn.
fn price_validation(
    sessions: &[Loaded],
    fits: &[FormatFit],
    args: &CalibrateArgs,
) -> Option<crate::calibrate::validate::Validation> {
    use std::collections::BTreeMap;
    if !args.validate {
        return None;
    }
    let roots = roots(&args.paths);
    let one_root = roots.len() < 2;
    let mut by: BTreeMap<String, Vec<crate::cost::bill::Input>> = BTreeMap::new();
    for l in sessions {
        let Some(input) = formats::bill_input(l, fits) else {
            continue;
        };
        let source = if one_root {
            project_of(l, &roots)
        } else {
            source_of(l, &roots).map(str::to_string)
        };
        by.entry(source.unwrap_or_default())
            .or_default()
            .push(input);
    }
    let sources: Vec<(String, Vec<crate::cost::bill::Input>)> = by.into_iter().collect();
    crate::calibrate::validate::validate(&sources, &cost_settings(args), &|f| args.window_of(f))
}

/// The project folder a session's log is in: the first folder under the
/// PATH it was found under.
fn project_of(l: &Loaded, roots: &[(std::path::PathBuf, &String)]) -> Option<String> {
    let (at, found) = found_under(l, roots)?;
    let (root, name) = found?;
    let rel = at.strip_prefix(root).ok()?;
    let mut parts = rel.components();
    let first = parts.next()?;
    // A log directly under the PATH is its own project.
    let project = if parts.next().is_some() {
        first.as_os_str().to_string_lossy().into_owned()
    } else {
        String::new()
    };
    Some(format!("{}/{}", name.trim_end_matches('/'), project))
}

/// Names, on one line, the models of the imported sessions that no price
/// table prices, with their sessions and requests: their dollars are
/// unknown in every figure below.
fn say_unpriced(imported: &[&Loaded]) {
    let mut unpriced = crate::cost::table::Unpriced::default();
    for file in imported.iter().filter_map(|l| l.file.as_ref()) {
        unpriced.add_session(
            file.requests
                .iter()
                .map(|r| r.model.as_deref().or(file.model.as_deref()).unwrap_or("")),
        );
    }
    if let Some(line) = unpriced.line() {
        crate::note!("{line}");
    }
}

/// The bill check and the recorded replay of every imported session: one
/// run, each request priced by the sweep's meter on the account's view.
fn bill_check(
    sessions: &[Loaded],
    fits: &[FormatFit],
    args: &CalibrateArgs,
) -> (BillCheck, crate::calibrate::recorded::ReplayCheck) {
    use crate::cost::bill;
    let imported: Vec<&Loaded> = sessions
        .iter()
        .filter(|l| formats::bill_input(l, fits).is_some())
        .collect();
    let inputs = formats::bill_inputs(sessions, fits);
    let cost = cost_settings(args);
    let roots = roots(&args.paths);
    let checked =
        crate::calibrate::recorded::check_all(&inputs, &cost, &|f| args.window_of(f), &|k| {
            source_of(imported[k], &roots)
                .unwrap_or_default()
                .to_string()
        });
    say_unpriced(&imported);
    let bill = BillCheck {
        summaries: bill::summarize(&checked.bill),
        settings: cost.bill(),
        sessions: checked.bill,
    };
    (bill, checked.replay)
}

struct BillCheck {
    settings: crate::cost::bill::Settings,
    summaries: Vec<crate::cost::bill::Summary>,
    sessions: Vec<crate::cost::bill::SessionCheck>,
}

impl BillCheck {
    fn json(&self, per_request: bool) -> serde_json::Value {
        let mut sessions = serde_json::to_value(&self.sessions).unwrap_or_default();
        if !per_request {
            if let Some(list) = sessions.as_array_mut() {
                for s in list {
                    if let Some(o) = s.as_object_mut() {
                        o.remove("detail");
                    }
                }
            }
        }
        serde_json::json!({
            "settings": self.settings,
            "prices": &crate::cost::MODEL_PRICES[..],
            "summary": self.summaries,
            "sessions": sessions,
        })
    }
}

/// The imported sessions as samples for the estimator comparison.
fn sessions_samples(sessions: &[Loaded]) -> Vec<crate::calibrate::compare::Sample<'_>> {
    sessions
        .iter()
        .filter_map(|l| {
            let file = l.file.as_ref()?;
            Some(crate::calibrate::compare::Sample {
                format: &file.source.format,
                messages: &l.session.messages,
                file,
            })
        })
        .collect()
}

/// How far each of smith's first compactions lands from the agent's own,
/// in requests, over the sessions where both compacted: the median signed
/// gap (negative: smith first), the median absolute gap, and in how many
/// sessions the agent compacted and smith never did.
fn gaps(
    rows: &[CompactionRow],
    of: impl Fn(&CompactionRow) -> &Option<FirstCompaction>,
) -> (Option<f64>, Option<f64>, usize, usize) {
    let mut signed = Vec::new();
    let mut never = 0;
    let mut real = 0;
    for r in rows {
        let Some(b) = &r.real else { continue };
        real += 1;
        match of(r) {
            Some(c) => signed.push(c.request as f64 - b.requests_before as f64),
            None => never += 1,
        }
    }
    let mut abs: Vec<f64> = signed.iter().map(|g: &f64| g.abs()).collect();
    (median_of(&mut signed), median_of(&mut abs), never, real)
}

fn write_text(
    out: &mut dyn Write,
    fits: &[FormatFit],
    rows: &[CompactionRow],
    not_imported: usize,
    max_tokens: u64,
) -> io::Result<()> {
    for f in fits {
        write_fit(out, f)?;
    }
    if not_imported > 0 {
        writeln!(
            out,
            "{not_imported} sessions are not imports and carry no usage per request; left out\n"
        )?;
    }
    if rows.is_empty() {
        return Ok(());
    }
    let at = crate::engine::Config::default().compact_at;
    let window = if max_tokens == crate::engine::budget::OWN_WINDOW {
        "each session's own window".to_string()
    } else {
        format!("--max-tokens {max_tokens}")
    };
    writeln!(
        out,
        "first compaction: the source agent's own, and smith's engine under {window} (trigger at {at} of it, in charged tokens)"
    )?;
    writeln!(out, "{}", first_compactions_table(rows))?;
    let line = |name: &str, of: fn(&CompactionRow) -> &Option<FirstCompaction>| {
        gap_line(name, gaps(rows, of))
    };
    writeln!(
        out,
        "{}",
        line("smith, ratio learned", |r| &r.smith_learned)
    )?;
    writeln!(
        out,
        "{}",
        line("smith, ratio 1, overhead 0", |r| &r.smith_uncalibrated)
    )?;
    writeln!(
        out,
        "{}",
        line("smith, fitted ratio and overhead", |r| &r.smith)
    )
}

/// One format's fit: what it was fitted on, the fit, its errors before and
/// after, and the flags that apply it.
fn write_fit(out: &mut dyn Write, f: &FormatFit) -> io::Result<()> {
    let excluded: Vec<String> = f
        .excluded
        .iter()
        .map(|(k, n)| format!("{n} {}", k.replace('_', " ")))
        .collect();
    writeln!(
        out,
        "{}: {} requests with a known context in {} sessions{}",
        f.format,
        f.requests,
        f.sessions,
        if excluded.is_empty() {
            String::new()
        } else {
            format!(" (left out: {})", excluded.join(", "))
        }
    )?;
    writeln!(
        out,
        "fit: reported ≈ (estimate + {}) × {}   [free fit: ratio {:.4}, overhead {:.0}]",
        f.fit.overhead_tokens, f.fit.ratio, f.fit.free_ratio, f.fit.free_overhead
    )?;
    if let Some(why) = &f.fit.constrained {
        writeln!(out, "note: {why}")?;
    }
    let mut t = table(vec![
        "charge",
        "median |error|",
        "p95 |error|",
        "median bias",
    ]);
    for (name, e) in [
        ("smith's defaults (ratio 1, overhead 0)", f.before),
        ("fitted", f.after),
    ] {
        t.add_row(vec![
            Cell::new(name),
            right(percent(e.median)),
            right(percent(e.p95)),
            right(percent(e.bias)),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(out, "flags for replay and sweep: {}\n", f.flags)
}

/// Per session: where the agent first compacted and where smith's engine
/// would have, three ways.
fn first_compactions_table(rows: &[CompactionRow]) -> Table {
    let mut t = table(vec![
        "session",
        "agent compacted before",
        "its preTokens / last prompt",
        "smith (fitted) compacts at",
        "smith (ratio 1, overhead 0)",
        "smith (ratio learned)",
    ]);
    let at = |c: &Option<FirstCompaction>, reported: Option<u64>| match c {
        Some(c) => format!(
            "request {} (message {}), {} tokens{}",
            c.request,
            c.message_index,
            crate::format::count(c.before as f64),
            reported.map_or(String::new(), |r| format!(" (reported {})", whole(r)))
        ),
        None => "never".into(),
    };
    for r in rows {
        let (real, sizes) = match &r.real {
            Some(b) => (
                format!(
                    "request {} (message {}), {}{}",
                    b.requests_before,
                    b.message_index,
                    b.trigger.as_deref().unwrap_or("?"),
                    if r.later_real > 0 {
                        format!(", +{} later", r.later_real)
                    } else {
                        String::new()
                    }
                ),
                format!(
                    "{} / {}",
                    b.pre_tokens.map_or("?".into(), whole),
                    r.real_last_prompt.map_or("?".into(), whole)
                ),
            ),
            None => ("never".into(), "".into()),
        };
        t.add_row(vec![
            r.session.clone(),
            real,
            sizes,
            at(&r.smith, r.smith_reported),
            at(&r.smith_uncalibrated, None),
            at(&r.smith_learned, None),
        ]);
    }
    t
}

/// The gaps of [`gaps`] in a sentence.
fn gap_line(
    name: &str,
    (signed, abs, never, real): (Option<f64>, Option<f64>, usize, usize),
) -> String {
    format!(
        "{name}: against the agent's first compaction in {} sessions, median gap {} requests (|gap| {}); never compacts in {never} of {real}",
        real - never,
        signed.map_or(NONE.into(), |x| format!("{x:+}")),
        abs.map_or(NONE.into(), |x| format!("{x}")),
    )
}
