//! A test that keeps the modules in the order of the data flow: no
//! top-level module may reach, through `crate::` paths, a module that
//! reaches it back (the data model using the engine, a policy using the
//! sweep). Read from the sources, so a new cycle fails `cargo test` with the
//! path that closes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules its files name as `crate::x`.
fn uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in crate::fn_length::sources(src) {
        let rel = path.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a file under src");
        let top = first.as_os_str().to_string_lossy().replace(".rs", "");
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("sources are UTF-8");
        let used = graph.entry(top.clone()).or_default();
        for line in text.lines() {
            // Comments cite modules without using them.
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let mut names = vec![rest];
                // `use crate::{a::x, b::y}`
                if let Some(group) = rest.strip_prefix('{') {
                    names = group.split(',').map(str::trim).collect();
                }
                for n in names {
                    let name: String = n
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    // `crate::note!`: an exported macro lives at the
                    // root, whichever module defines it.
                    let is_macro = n[name.len()..].starts_with('!');
                    if !name.is_empty() && name != top && !is_macro {
                        used.insert(name);
                    }
                }
            }
        }
    }
    graph
}

/// A path `from → … → from`, if there is one.
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut path = vec![from.to_string()];
    let mut seen = BTreeSet::new();
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let last = path.last().cloned().unwrap_or_default();
        for next in graph.get(&last).into_iter().flatten() {
            if next == from {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, from, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(graph, from, &mut path, &mut seen).then_some(path)
}

#[test]
fn no_top_level_module_reaches_itself() {
    let graph = uses(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "read {} modules", graph.len());
    // The data model may use leaf helpers (messages), nothing that
    // depends on anything.
    let non_leaf: Vec<&String> = graph["transcript"]
        .iter()
        .filter(|m| graph.get(*m).is_some_and(|u| !u.is_empty()))
        .collect();
    assert!(non_leaf.is_empty(), "the data model uses {non_leaf:?}");
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_through(&graph, m))
        .map(|p| p.join(" → "))
        .collect();
    assert!(cycles.is_empty(), "{cycles:#?}");
}

#[test]
fn a_cycle_is_found() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    assert_eq!(cycle_through(&graph, "a"), None);
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        cycle_through(&graph, "a"),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

/// The modules of `src/commands/mod.rs` that are commands (`cli.rs`
/// dispatches to them); the others there are clap argument groups and
/// helpers the commands share.
fn command_modules(root: &Path) -> Vec<String> {
    let cli =
        std::fs::read_to_string(root.join("src/commands/cli.rs")).expect("cli.rs is readable");
    let mods =
        std::fs::read_to_string(root.join("src/commands/mod.rs")).expect("mod.rs is readable");
    mods.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub ")
                .or(l.trim().strip_prefix("pub(crate) "))
        })
        .filter_map(|l| l.strip_prefix("mod "))
        .map(|l| l.trim_end_matches(';').to_string())
        .filter(|m| cli.contains(&format!("super::{m}::")))
        .collect()
}

/// Where `text` (a file of command `own`) names another command module.
fn names_another_command(text: &str, own: &str, commands: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for m in commands.iter().filter(|m| *m != own) {
            for prefix in ["super::", "commands::"] {
                let path = format!("{prefix}{m}");
                let named = code.match_indices(&path).any(|(i, _)| {
                    let after = code[i + path.len()..].chars().next();
                    !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                });
                if named {
                    found.push(format!("line {}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn no_command_reaches_into_another() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let commands = command_modules(root);
    for m in [
        "sweep",
        "recommend",
        "report",
        "merge",
        "replay",
        "calibrate",
    ] {
        assert!(
            commands.iter().any(|c| c == m),
            "{m} not among {commands:?}"
        );
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root.join("src/commands")).expect("src/commands is readable") {
        let path = entry.expect("src/commands is readable").path();
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        // The dispatcher names every command; it is none of them.
        if stem == "cli" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("sources are UTF-8");
        for hit in names_another_command(&text, &stem, &commands) {
            found.push(format!("{}: {hit}", path.display()));
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_command_naming_another_is_found() {
    let commands = vec!["sweep".to_string(), "recommend".to_string()];
    let text = "use super::usage;\nlet s = super::sweep::settle();\n// super::sweep in a comment\nuse crate::commands::recommend::X;\nsuper::sweeps_helper();";
    assert_eq!(
        names_another_command(text, "recommend", &commands),
        vec!["line 2: let s = super::sweep::settle();".to_string()]
    );
    assert_eq!(names_another_command(text, "other", &commands).len(), 2);
}

/// Every module of `src` (by its path, `a::b`) → its file's text, its
/// tests left out: a test may reach a sibling to check the two together.
fn module_texts(src: &Path) -> BTreeMap<String, String> {
    let mut texts = BTreeMap::new();
    for path in crate::fn_length::sources(src) {
        let rel = path
            .strip_prefix(src)
            .expect("under src")
            .with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let text = std::fs::read_to_string(&path).expect("sources are UTF-8");
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let code: Vec<&str> = code
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect();
        texts.insert(parts.join("::"), code.join("\n"));
    }
    texts
}

/// The modules `module`'s `text` names through `crate::`, `super::` and
/// `self::` paths, each the longest module of `known` the path starts with
/// (its own parents left out: a child names its parent's items).
fn names(module: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let own: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    let mut found = BTreeSet::new();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for (at, _) in text.match_indices("::") {
        // The path this `::` is part of, from its first segment.
        let after_last = |stop: &dyn Fn(char) -> bool| {
            text[..at]
                .char_indices()
                .rev()
                .find(|&(_, c)| stop(c))
                .map_or(0, |(i, c)| i + c.len_utf8())
        };
        let start = after_last(&|c| !(word(c) || c == ':'));
        if start != after_last(&|c| !word(c)) {
            continue; // not the path's first `::`
        }
        let end = text[at..]
            .find(|c: char| !(word(c) || c == ':'))
            .map_or(text.len(), |i| at + i);
        let head: Vec<&str> = text[start..end].split("::").collect();
        // `use a::{b, c::d}`: a path for each member of the group.
        let paths: Vec<Vec<&str>> = match text[end..].strip_prefix('{') {
            Some(inner) => inner
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|member| {
                    let mut segs = head[..head.len() - 1].to_vec();
                    segs.extend(member.trim().split("::"));
                    segs
                })
                .collect(),
            None => vec![head],
        };
        for segs in paths {
            if let Some(m) = module_named(&own, &segs, known) {
                let parent = module == m || module.starts_with(&format!("{m}::"));
                if !parent {
                    found.insert(m);
                }
            }
        }
    }
    found
}

/// The longest module of `known` that the path `segs`, written in the
/// module `own`, starts with; `None` for a path that is not the crate's.
fn module_named(own: &[&str], segs: &[&str], known: &BTreeSet<String>) -> Option<String> {
    let (mut path, mut rest) = match segs.first() {
        Some(&"crate") => (Vec::new(), &segs[1..]),
        Some(&"self") => (own.to_vec(), &segs[1..]),
        Some(&"super") => (own[..own.len().saturating_sub(1)].to_vec(), &segs[1..]),
        _ => return None,
    };
    while rest.first() == Some(&"super") {
        path.pop();
        rest = &rest[1..];
    }
    let mut best = None;
    for s in rest {
        path.push(*s);
        if known.contains(&path.join("::")) {
            best = Some(path.join("::"));
        }
    }
    best
}

#[test]
fn no_two_modules_name_each_other() {
    let texts = module_texts(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(texts.len() > 100, "read {} modules", texts.len());
    let known: BTreeSet<String> = texts.keys().cloned().collect();
    let graph: BTreeMap<&String, BTreeSet<String>> = texts
        .iter()
        .map(|(m, t)| (m, names(m, t, &known)))
        .collect();
    let pairs: Vec<String> = graph
        .iter()
        .flat_map(|(a, uses)| {
            let graph = &graph;
            uses.iter()
                .filter(move |b| {
                    a.as_str() < b.as_str() && graph.get(b).is_some_and(|u| u.contains(*a))
                })
                .map(move |b| format!("{a} ↔ {b}"))
        })
        .collect();
    assert!(pairs.is_empty(), "{pairs:#?}");
}

#[test]
fn two_modules_naming_each_other_are_found() {
    let known: BTreeSet<String> = ["sweep", "sweep::job", "sweep::dist", "engine::marks"]
        .map(String::from)
        .into();
    let job = "use super::dist;\nuse crate::engine::marks::{has_marker, X};";
    let dist = "let e = super::job::JobError::Plan(s);\nuse super::Shard;";
    assert_eq!(
        names("sweep::job", job, &known),
        ["engine::marks", "sweep::dist"].map(String::from).into()
    );
    assert_eq!(
        names("sweep::dist", dist, &known),
        ["sweep::job"].map(String::from).into()
    );
}
