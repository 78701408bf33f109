//! What a person who installs the binary expects beside it: `--version`
//! naming the smith revision, shell completions and man pages generated
//! from the same clap definitions as the parser.

use std::collections::BTreeSet;

use crate::common::{bin, ok};

/// Every subcommand, as `smith-calibrate --help` lists them.
fn subcommands() -> BTreeSet<String> {
    let help = ok(bin().arg("--help").output().unwrap());
    let list = help
        .split("Commands:\n")
        .nth(1)
        .expect("--help has a Commands section");
    let names: BTreeSet<String> = list
        .lines()
        .take_while(|l| l.starts_with("  "))
        // A name starts its line after two spaces; wrapped help is indented further.
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 9, "{names:?}");
    names
}

#[test]
fn version_names_the_smith_revision_the_engine_ports() {
    let v = ok(bin().arg("--version").output().unwrap());
    assert_eq!(
        v,
        format!(
            "smith-calibrate {} (engine: smith context.cr @ {})\n",
            env!("CARGO_PKG_VERSION"),
            smith_calibrate::engine::constants::SMITH_REVISION
        )
    );
}

#[test]
fn completions_for_bash_zsh_and_fish_name_every_subcommand() {
    let subs = subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(bin().args(["completions", shell]).output().unwrap());
        assert!(script.len() > 1000, "{shell}: {} bytes", script.len());
        for sub in &subs {
            assert!(script.contains(sub.as_str()), "{shell} script lacks {sub}");
        }
        // Flags of a subcommand are completed too, not just the names.
        assert!(script.contains("compact-at"), "{shell}: no --compact-at");
    }
    let bad = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn man_pages_cover_every_subcommand() {
    let subs = subcommands();
    let page = ok(bin().arg("man").output().unwrap());
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq"),
        "not roff: {:.60}",
        page
    );
    assert!(page.contains(".TH smith-calibrate 1"));
    for sub in &subs {
        assert!(
            page.contains(&format!(
                "smith\\-calibrate\\-{}(1)",
                sub.replace('-', "\\-")
            )),
            "top page does not list {sub}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["man", "--out"])
        .arg(dir.path().join("man1"))
        .output()
        .unwrap();
    ok(o);
    let written: BTreeSet<String> = std::fs::read_dir(dir.path().join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for sub in &subs {
        let name = format!("smith-calibrate-{sub}.1");
        assert!(written.contains(&name), "no {name} in {written:?}");
        let body = std::fs::read_to_string(dir.path().join("man1").join(&name)).unwrap();
        assert!(body.contains(".SH SYNOPSIS"), "{name} has no synopsis");
    }
    assert!(written.contains("smith-calibrate.1"));
    assert!(written.contains("smith-calibrate-sweep.1"));
}
