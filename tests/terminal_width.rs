//! On a terminal the tables fit its width: the sweep, recommend and
//! calibrate, run under a pseudo-terminal 100 columns wide (util-linux's
//! `script`), print no line wider than that and say which columns `--wide`
//! brings back; with `--wide` every column is there again, as piped.

use crate::common;

use std::path::Path;

/// The terminal's width in the runs below.
const COLUMNS: usize = 100;

/// What the binary run with `args` writes to stdout when stdout is a
/// terminal `COLUMNS` wide, as a person sees it; `None` without `script` to
/// make the terminal. Standard error goes to a file: the progress and notes
/// are not tables.
fn on_terminal(args: &[&str], dir: &Path) -> Option<String> {
    let errors = dir.join("terminal-stderr.txt");
    let redirect = format!("2>{}", common::terminal::quoted(errors.to_str()?));
    let (status, shown) = common::terminal::run(args, COLUMNS, &redirect)?;
    let errors = std::fs::read_to_string(&errors).unwrap_or_default();
    assert!(status.success(), "{args:?}: {errors}");
    Some(shown)
}

/// The first header line of each of `text`'s tables (the line after a top
/// border), cell by cell.
fn headers(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[0].starts_with('┌'))
        .map(|w| {
            w[1].trim_matches('│')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// How many columns `text`'s tables show in all.
fn columns(text: &str) -> usize {
    headers(text).iter().map(Vec::len).sum()
}

/// Every line of `text` fits the terminal, and a note says how many
/// columns are hidden and that `--wide` shows them.
fn assert_fits(text: &str, what: &str) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= COLUMNS,
            "{what}: a line of {} characters on a {COLUMNS}-column terminal:\n{line}\n\n{text}",
            line.chars().count()
        );
    }
    // A note read whole: a long one wraps onto lines indented under it.
    let lines: Vec<&str> = text.lines().collect();
    let noted = lines.iter().enumerate().any(|(i, l)| {
        let rest = lines[i + 1..].iter().take_while(|m| m.starts_with("  "));
        l.contains("columns hidden to fit the terminal")
            && std::iter::once(l).chain(rest).any(|m| m.contains("--wide"))
    });
    assert!(noted, "{what}: no note of the hidden columns:\n{text}");
}

/// The run fits the terminal, and with `--wide` its tables have the
/// headers they have when piped.
fn check(args: &[&str], dir: &Path, what: &str) {
    let Some(fitted) = on_terminal(args, dir) else {
        return;
    };
    assert_fits(&fitted, what);
    let piped = common::ok(common::run(args));
    let wide: Vec<&str> = args.iter().copied().chain(["--wide"]).collect();
    let wide = on_terminal(&wide, dir).expect("script ran once already");
    assert!(!headers(&piped).is_empty(), "{what}: no table:\n{piped}");
    assert!(
        columns(&fitted) < columns(&piped),
        "{what}: nothing hidden:\n{fitted}"
    );
    assert_eq!(
        headers(&wide),
        headers(&piped),
        "{what}: --wide on a terminal"
    );
    assert!(
        !wide.contains("columns hidden"),
        "{what}: --wide still hides:\n{wide}"
    );
}

#[test]
fn the_sweep_and_recommend_fit_a_terminal_and_wide_shows_every_column() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let out = out.to_str().unwrap();
    let grid = ["--compact-at", "0.7,0.8", "--compact-to", "0.4,0.5"];
    let sweep: Vec<&str> = ["sweep", "datasets/sessions"]
        .into_iter()
        .chain(grid)
        .chain(["--out", out])
        .collect();
    check(&sweep, tmp.path(), "sweep");
    let recommend: Vec<&str> = ["recommend", "datasets/sessions"]
        .into_iter()
        .chain(grid)
        .collect();
    check(&recommend, tmp.path(), "recommend");
}

#[test]
fn calibrate_fits_a_terminal_and_wide_shows_every_column() {
    let tmp = tempfile::tempdir().unwrap();
    let imported = crate::calibrate::imported_log(tmp.path());
    check(
        &["calibrate", imported.to_str().unwrap()],
        tmp.path(),
        "calibrate",
    );
}

/// What the notes under `text`'s tables name as hidden, each note read
/// whole (a long one wraps onto lines indented under it): one list of
/// headers each (a header may hold a comma itself).
fn named_hidden(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut named = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find("columns hidden to fit the terminal: ") else {
            continue;
        };
        let mut note = line[at..].to_string();
        for more in &lines[i + 1..] {
            match more.strip_prefix("  ") {
                Some(rest) => {
                    note.push(' ');
                    note.push_str(rest.trim_start());
                }
                None => break,
            }
        }
        let list = note
            .trim_start_matches("columns hidden to fit the terminal: ")
            .split("; ")
            .next()
            .unwrap_or("");
        named.push(list.to_string());
    }
    named
}

/// Every header cell of `text`'s tables, a wrapped header read whole.
fn whole_headers(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with('┌') {
            continue;
        }
        let mut cells: Vec<String> = Vec::new();
        for row in lines[i + 1..].iter().take_while(|l| !l.starts_with('╞')) {
            let parts: Vec<&str> = row.trim_matches('│').split('┆').collect();
            cells.resize(cells.len().max(parts.len()), String::new());
            for (k, p) in parts.iter().enumerate() {
                let p = p.trim();
                if !p.is_empty() {
                    if !cells[k].is_empty() && !cells[k].ends_with('_') {
                        cells[k].push(' ');
                    }
                    cells[k].push_str(p);
                }
            }
        }
        out.extend(cells);
    }
    out
}

/// On a terminal 100 columns wide the run keeps `figures` (headers as
/// piped), no line is wider than the terminal, and the note under each
/// table names every column it hid.
fn keeps_figures_and_names_the_rest(args: &[&str], dir: &Path, figures: &[&str]) {
    keeps_figures(args, dir, figures, &[]);
}

/// [`keeps_figures_and_names_the_rest`], where the columns `empty` have
/// nothing in them here and go unnamed.
fn keeps_figures(args: &[&str], dir: &Path, figures: &[&str], empty: &[&str]) {
    let Some(fitted) = on_terminal(args, dir) else {
        return;
    };
    let what = args.join(" ");
    for line in fitted.lines() {
        assert!(
            line.chars().count() <= COLUMNS,
            "{what}: a line of {} characters:\n{line}\n\n{fitted}",
            line.chars().count()
        );
    }
    let shown = whole_headers(&fitted);
    for figure in figures {
        assert!(
            shown.iter().any(|h| h == figure),
            "{what}: {figure:?} is not shown ({shown:?}):\n{fitted}"
        );
    }
    let piped = whole_headers(&common::ok(common::run(args)));
    let named = named_hidden(&fitted);
    for header in &piped {
        let kept = shown.iter().any(|h| h == header);
        let hidden = named.iter().any(|list| list.contains(header.as_str()));
        assert!(
            kept || hidden || header.is_empty() || empty.contains(&header.as_str()),
            "{what}: {header:?} is neither shown nor named as hidden:\n{fitted}"
        );
    }
}

const LIST_FIGURES: [&str; 5] = ["messages", "turns", "size", "est. tokens", "bad lines"];

#[test]
fn the_listing_calibrate_and_sweep_keep_their_figures_at_100_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    keeps_figures_and_names_the_rest(
        &["transcript", "list", "datasets/sessions"],
        tmp.path(),
        &LIST_FIGURES,
    );
    keeps_figures_and_names_the_rest(
        &["calibrate", "datasets/sessions"],
        tmp.path(),
        &["recorded prompt", "replayed", "error"],
    );
    keeps_figures_and_names_the_rest(
        &[
            "sweep",
            "datasets/sessions",
            "--compact-at",
            "0.7,0.8",
            "--compact-to",
            "0.4,0.5",
            "--out",
            out.to_str().unwrap(),
        ],
        tmp.path(),
        &["price_with_refetch", "still needed"],
    );
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn the_listing_calibrate_and_sweep_keep_their_figures_at_100_columns_on_claude_code_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let spotter = common::shared_data("claude-code/spotter");
    let spotter = spotter.to_str().unwrap();
    // Claude Code sessions have no name: the empty column goes unnamed.
    keeps_figures(
        &["transcript", "list", spotter],
        tmp.path(),
        &LIST_FIGURES,
        &["name"],
    );
    keeps_figures_and_names_the_rest(
        &["calibrate", spotter],
        tmp.path(),
        &["predicted $", "error", "recorded $", "value"],
    );
    keeps_figures_and_names_the_rest(
        &["sweep", spotter, "--out", out.to_str().unwrap()],
        tmp.path(),
        &["price_with_refetch", "still needed"],
    );
}
