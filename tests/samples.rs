//! The sample outputs in README.md and docs/guide.md, run and held: a
//! sample that no longer matches what the binary prints fails here, so a
//! change of figures cannot leave the documentation behind unseen.
//!
//! The convention (CONTRIBUTING.md describes it for writers):
//!
//! - `<!-- sample: smith-calibrate ARGS -->` on the line just before a fenced
//!   code block marks the block as what `smith-calibrate ARGS` prints on
//!   standard output. ARGS are split on whitespace (no quoting), and paths
//!   are relative to the repository's root, as a reader's clone runs them.
//!   The comment renders as nothing.
//! - Every line shown must be a line of that output, in order, each directly
//!   after the one before it, from the first line of the output to the last,
//!   except for two elisions:
//!   - a line that is `…` alone stands for any number of lines (none too);
//!   - a line ending in ` …` (a space, then the ellipsis) matches a line that
//!     starts with what comes before the space (a table cut at its width).
//!
//!   Everything else is compared exactly, figures included (an ellipsis
//!   inside a line, such as an interval's `-10.1%…+0.0%`, is literal text);
//!   only trailing whitespace is ignored.
//! - The directory given to `--out` or `--report` is replaced by a temporary
//!   one, so the test never writes into the clone.
//! - A path under `../shared/` in ARGS is the shared real data, beside the
//!   repository where the project is developed; where it is absent the block
//!   is skipped, and the test prints which and why.
//! - A fenced block that looks like a program's output (no info string, or
//!   `text`, `console`, `output`, or a drawn table in it) must carry the
//!   marker, so a sample cannot be added without being held.

use crate::common::{bin, output, stderr, stdout};
use std::path::{Path, PathBuf};

const DOCUMENTS: [&str; 2] = ["README.md", "docs/guide.md"];
const MARKER: &str = "<!-- sample:";
const ELISION: &str = "…";

/// One marked block: where it is, the command its marker names and the
/// lines it shows.
struct Sample {
    at: String,
    args: Vec<String>,
    shown: Vec<String>,
}

/// A fenced block without a marker that looks like output, or a marker
/// without its block: `path:line: reason`.
type Unmarked = String;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether a fenced block with this info string and body reads as what a
/// program printed rather than what a reader types.
fn looks_like_output(info: &str, body: &[&str]) -> bool {
    let drawn = body
        .iter()
        .any(|l| l.contains('│') || l.contains('┆') || l.contains('┌'));
    matches!(info, "" | "text" | "console" | "output") || drawn
}

/// The marked samples of one markdown file, and the problems with its
/// markers: a marker not directly before a fence, an output-like block
/// without one.
fn samples_of(path: &str, text: &str) -> (Vec<Sample>, Vec<Unmarked>) {
    let lines: Vec<&str> = text.lines().collect();
    let (mut samples, mut problems) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(rest) = line.strip_prefix(MARKER) {
            let fence = lines.get(i + 1).map(|l| l.trim_start());
            if !fence.is_some_and(|l| l.starts_with("```")) {
                problems.push(format!(
                    "{path}:{}: a sample marker must stand on the line just before its fenced block",
                    i + 1
                ));
            }
            let command = rest.trim_end_matches("-->").trim();
            let mut words = command.split_whitespace().map(str::to_string);
            if words.next().as_deref() != Some("smith-calibrate") {
                problems.push(format!(
                    "{path}:{}: a sample marker names `smith-calibrate ARGS`, not `{command}`",
                    i + 1
                ));
            }
            let args: Vec<String> = words.collect();
            i += 1;
            if let Some((body, end)) = block_at(&lines, i) {
                samples.push(Sample {
                    at: format!("{path}:{}", i + 1),
                    args,
                    shown: body.iter().map(|l| l.trim_end().to_string()).collect(),
                });
                i = end;
            }
            continue;
        }
        if let Some(info) = line.strip_prefix("```") {
            if let Some((body, end)) = block_at(&lines, i) {
                if looks_like_output(info.trim(), &body) {
                    problems.push(format!(
                        "{path}:{}: this block looks like a program's output but has no \
                         `{MARKER} smith-calibrate ARGS -->` line before it",
                        i + 1
                    ));
                }
                i = end;
                continue;
            }
        }
        i += 1;
    }
    (samples, problems)
}

/// The body of the fenced block opening at `lines[open]`, and the index
/// after its closing fence; `None` when `lines[open]` opens no block.
fn block_at<'a>(lines: &[&'a str], open: usize) -> Option<(Vec<&'a str>, usize)> {
    let fence = lines.get(open)?.trim_start();
    if !fence.starts_with("```") {
        return None;
    }
    let close = (open + 1..lines.len()).find(|&k| lines[k].trim() == "```")?;
    Some((lines[open + 1..close].to_vec(), close + 1))
}

/// Whether one shown line stands for this output line.
fn line_matches(shown: &str, real: &str) -> bool {
    let real = real.trim_end();
    match shown.strip_suffix(&format!(" {ELISION}")) {
        Some(prefix) => real.starts_with(prefix),
        None => shown == real,
    }
}

/// Whether `shown` (with its elisions) is exactly `real`, line for line.
fn held_from(shown: &[String], real: &[&str]) -> bool {
    let Some((first, rest)) = shown.split_first() else {
        return real.is_empty();
    };
    if first == ELISION {
        return (0..=real.len()).any(|k| held_from(rest, &real[k..]));
    }
    match real.split_first() {
        Some((line, more)) => line_matches(first, line) && held_from(rest, more),
        None => false,
    }
}

/// `Ok` when the sample's lines are the output's; else which of them could
/// not be placed (the first line after the longest part of the sample that
/// holds, shown lines being matched from the top) and the whole output.
fn held(shown: &[String], out: &str) -> Result<(), String> {
    let real: Vec<&str> = out.lines().collect();
    if held_from(shown, &real) {
        return Ok(());
    }
    // The longest leading part that can still be placed, elided tail open.
    let placed = (0..shown.len())
        .rev()
        .find(|&n| {
            let mut part = shown[..n].to_vec();
            part.push(ELISION.to_string());
            held_from(&part, &real)
        })
        .unwrap_or(0);
    Err(format!(
        "line {} of the sample is not where the output has it:\n  {}\nthe output:\n{out}",
        placed + 1,
        shown
            .get(placed)
            .map_or("(the end of the sample)", String::as_str),
    ))
}

/// The command's arguments with `--out`/`--report` sent to `scratch`; `Err`
/// with the reason to skip the sample when it reads a path under
/// `../shared/` that is not there. Such paths are passed as written (the
/// command runs from the repository's root), since the output prints them.
fn arguments(args: &[String], scratch: &Path) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    let mut redirect = false;
    for (k, a) in args.iter().enumerate() {
        if redirect {
            out.push(scratch.join(format!("out-{k}")).display().to_string());
            redirect = false;
            continue;
        }
        redirect = a == "--out" || a == "--report";
        if a.starts_with("../shared/") && !root().join(a).exists() {
            return Err(format!("needs {a}, absent beside this clone"));
        }
        out.push(a.clone());
    }
    Ok(out)
}

/// Every marked sample of the documents, and every marker problem.
fn all_samples() -> (Vec<Sample>, Vec<Unmarked>) {
    let (mut samples, mut problems) = (Vec::new(), Vec::new());
    for doc in DOCUMENTS {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        let (s, p) = samples_of(doc, &text);
        samples.extend(s);
        problems.extend(p);
    }
    (samples, problems)
}

/// What the sample's command prints on standard output, run from the
/// repository's root; `Err` with the reason when it is skipped.
fn run_sample(sample: &Sample, scratch: &Path) -> Result<String, String> {
    let args = arguments(&sample.args, scratch)?;
    let o = output(bin().args(&args).current_dir(root()));
    assert!(
        o.status.success(),
        "{}: `smith-calibrate {}` exited {:?}:\n{}",
        sample.at,
        sample.args.join(" "),
        o.status.code(),
        stderr(&o)
    );
    Ok(stdout(&o))
}

#[test]
fn every_sample_output_is_what_the_command_prints() {
    let (samples, problems) = all_samples();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(!samples.is_empty(), "no marked sample in {DOCUMENTS:?}");
    let scratch = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for sample in &samples {
        match run_sample(sample, scratch.path()) {
            Err(reason) => println!("{}: skipped: {reason}", sample.at),
            Ok(out) => {
                if let Err(why) = held(&sample.shown, &out) {
                    failures.push(format!(
                        "{} (`smith-calibrate {}`): {why}",
                        sample.at,
                        sample.args.join(" ")
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The check itself must see a changed figure: each sample, with one digit
/// of it changed, no longer holds against the same output.
#[test]
fn a_changed_figure_in_a_sample_fails() {
    let (samples, _) = all_samples();
    let scratch = tempfile::tempdir().unwrap();
    for sample in &samples {
        let Ok(out) = run_sample(sample, scratch.path()) else {
            continue;
        };
        let Some((row, col)) = sample.shown.iter().enumerate().find_map(|(r, l)| {
            let digit = l.char_indices().find(|(_, c)| c.is_ascii_digit())?;
            Some((r, digit.0))
        }) else {
            continue;
        };
        let mut changed = sample.shown.clone();
        let old = changed[row].as_bytes()[col];
        let new = if old == b'9' { '0' } else { (old + 1) as char };
        changed[row].replace_range(col..col + 1, &new.to_string());
        assert!(
            held(&changed, &out).is_err(),
            "{}: changing line {} to `{}` still holds",
            sample.at,
            row + 1,
            changed[row]
        );
    }
}

#[test]
fn the_elisions_match_what_they_say() {
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let out = "first 1\n┌──┬──┐ wide\nrow 12 ┆ 3\nrow 13 ┆ 4\nlast 7\n";
    assert!(held(&lines(&["first 1", "┌──┬ …", "…", "last 7"]), out).is_ok());
    assert!(held(&lines(&["first 1", "…", "row 13 ┆ 4", "last 7"]), out).is_ok());
    // Lines with no elision between them must be adjacent in the output.
    assert!(held(&lines(&["first 1", "row 12 ┆ 3", "…"]), out).is_err());
    // The output's first and last lines are the sample's unless elided.
    assert!(held(&lines(&["row 12 ┆ 3", "…"]), out).is_err());
    assert!(held(&lines(&["first 1", "…", "row 13 ┆ 4"]), out).is_err());
    // An ellipsis inside a line is literal, and a prefix keeps its figures.
    assert!(held(&lines(&["first…1", "…"]), out).is_err());
    assert!(held(&lines(&["first 1", "row 12 ┆ 4 …", "…"]), out).is_err());
    assert!(held(&lines(&["first 1", "┌──┬──┐ wide", "row 12 …", "…"]), out).is_ok());
}

#[test]
fn an_output_block_without_a_marker_is_found() {
    let doc = "text\n\n```\n12 sessions\n```\n\n```sh\nsmith-calibrate sweep\n```\n\
               <!-- sample: smith-calibrate sweep x -->\n\n```\nnot adjacent\n```\n";
    let (samples, problems) = samples_of("doc.md", doc);
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].starts_with("doc.md:3:"), "{problems:?}");
    assert!(problems[1].starts_with("doc.md:10:"), "{problems:?}");
    assert!(problems[2].starts_with("doc.md:12:"), "{problems:?}");
    assert!(samples.is_empty());
    let marked = "<!-- sample: smith-calibrate sweep d --compact-at 0.7 -->\n```\na\n…\n```\n";
    let (samples, problems) = samples_of("doc.md", marked);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(samples[0].args, ["sweep", "d", "--compact-at", "0.7"]);
    assert_eq!(samples[0].shown, ["a", "…"]);
}

#[test]
fn a_sample_on_absent_shared_data_is_skipped_with_its_reason() {
    let scratch = Path::new("/scratch");
    let args = ["calibrate", "../shared/data/no-such-source"].map(String::from);
    let reason = arguments(&args, scratch).unwrap_err();
    assert!(reason.contains("../shared/data/no-such-source"), "{reason}");
    let args = ["sweep", "datasets/sessions", "--report", "reports/datasets"].map(String::from);
    assert_eq!(
        arguments(&args, scratch).unwrap(),
        ["sweep", "datasets/sessions", "--report", "/scratch/out-3"]
    );
}
