//! Help that tells the truth: examples a person can copy whole, the inputs
//! every command reads, and one definition of each flag shared by commands.

use crate::common::{bin, ok};

/// `--help` of `path` (a subcommand and its own subcommands).
fn help(path: &[String]) -> String {
    ok(bin().args(path).arg("--help").output().unwrap())
}

/// Every command path: each subcommand and its subcommands, depth first.
fn commands() -> Vec<Vec<String>> {
    fn walk(path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let text = help(&path);
        out.push(path.clone());
        let Some(list) = text.split("Commands:\n").nth(1) else {
            return;
        };
        for name in list
            .lines()
            .take_while(|l| l.starts_with("  "))
            .filter(|l| !l[2..].starts_with(' '))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| *n != "help")
        {
            let mut p = path.clone();
            p.push(name.to_string());
            walk(p, out);
        }
    }
    let mut out = Vec::new();
    for top in crate::install::subcommands() {
        walk(vec![top], &mut out);
    }
    out
}

#[test]
fn every_example_is_one_whole_command_line() {
    let mut examples = 0;
    for path in commands() {
        let text = help(&path);
        let Some(block) = text.split("\nExamples:\n").nth(1) else {
            continue;
        };
        for line in block.lines().take_while(|l| !l.trim().is_empty()) {
            examples += 1;
            // Piped, clap wraps at 100 columns: a longer line would be split.
            assert!(line.chars().count() <= 100, "{path:?}: {line:?}");
            let command = line.split_whitespace().find(|w| !w.contains('='));
            assert!(
                matches!(command, Some("smith-calibrate" | "for")),
                "{path:?}: not a command of its own (a wrapped one?): {line:?}"
            );
        }
    }
    assert!(examples >= 40, "{examples} examples");
}

#[test]
fn every_command_that_reads_sessions_names_every_format_it_reads() {
    for path in [
        &["sweep"][..],
        &["recommend"],
        &["calibrate"],
        &["replay"],
        &["transcript", "show"],
        &["transcript", "stats"],
        &["transcript", "list"],
    ] {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        let text = help(&path).split_whitespace().collect::<Vec<_>>().join(" ");
        for format in [
            "Claude Code",
            "Codex CLI rollout",
            "mini-swe-agent trajector",
        ] {
            assert!(text.contains(format), "{path:?} does not name {format}");
        }
    }
}

#[test]
fn the_cache_lifetime_and_the_window_are_one_flag_across_commands() {
    let flag = |path: &[&str], name: &str| -> String {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        let text = help(&path);
        let at = text
            .find(&format!("--{name} "))
            .unwrap_or_else(|| panic!("{path:?} has no --{name}"));
        let rest = &text[at..];
        let end = rest.find("\n      --").unwrap_or(rest.len());
        rest[..end].split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let ttl = flag(&["sweep"], "cache-ttl");
    assert!(ttl.contains("auto"), "{ttl}");
    for path in [&["calibrate"][..], &["recommend"], &["replay"]] {
        assert_eq!(flag(path, "cache-ttl"), ttl, "{path:?}");
    }
    // The same words parse everywhere: `auto` and the window's `own`.
    let tmp = tempfile::tempdir().unwrap();
    let projects = crate::direct::projects(tmp.path());
    for args in [
        &["calibrate", "--cache-ttl", "auto", "--max-tokens", "own"][..],
        &["calibrate", "--max-tokens", "200000"],
    ] {
        ok(bin().args(args).arg(&projects).output().unwrap());
    }
    let o = bin()
        .args(["calibrate", "--max-tokens", "0"])
        .arg(&projects)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(flag(&["calibrate"], "max-tokens").contains("[default: own]"));
}
