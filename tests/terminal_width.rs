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
    assert!(
        text.lines()
            .any(|l| l.contains("columns hidden to fit the terminal") && l.contains("--wide")),
        "{what}: no note of the hidden columns:\n{text}"
    );
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
