//! A test that keeps one error style per layer: the library's functions
//! fail with a typed error of their area (`knob::ValueError`,
//! `grid::SpecError`, `policy::PolicyError`, …) whose variants carry what a
//! caller tells apart, the commands with `anyhow`. A bare `String` as an
//! error hides both, so no `Result<_, String>` (nor a `FromStr` failing with
//! `String`) may appear in `src/` outside [`ALLOWED`]: a third-party API
//! that wants text.

use std::path::Path;

use crate::fn_length::{code_only, sources};

/// `(file under src/, function)` that may fail with a `String`: clap's
/// value parsers, whose errors clap prints after its own prefix.
const ALLOWED: &[(&str, &str)] = &[
    ("commands/cost_args.rs", "parse_ttl"),
    ("commands/cost_args.rs", "parse_price"),
    ("view/select.rs", "parse_role"),
    ("view/select.rs", "grep_pattern"),
];

/// `(line, enclosing fn)` of every `Result<…, String>` and `Err = String` in
/// `code` (text with comments and strings blanked).
fn string_errors(code: &[u8]) -> Vec<(usize, String)> {
    let line_of = |at: usize| code[..at].iter().filter(|&&c| c == b'\n').count() + 1;
    let squeezed = |from: usize, to: usize| -> String {
        code[from..to]
            .iter()
            .filter(|c| !c.is_ascii_whitespace())
            .map(|&c| c as char)
            .collect()
    };
    let word_before =
        |at: usize| at > 0 && (code[at - 1].is_ascii_alphanumeric() || code[at - 1] == b'_');
    let mut found = Vec::new();
    for (at, _) in code.windows(7).enumerate().filter(|(_, w)| w == b"Result<") {
        if word_before(at) {
            continue;
        }
        // The type arguments up to the matching `>`; `->` inside (a `fn`
        // type) is no bracket.
        let (mut depth, mut commas, mut end) = (1usize, Vec::new(), None);
        for (k, &c) in code[at + 7..].iter().enumerate() {
            let i = at + 7 + k;
            match c {
                b'<' | b'(' | b'[' => depth += 1,
                b'>' if code[i - 1] != b'-' => depth -= 1,
                b')' | b']' => depth -= 1,
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
            if depth == 0 {
                end = Some(i);
                break;
            }
        }
        let Some(end) = end else { continue };
        // The error type: the last argument, before a trailing comma.
        let mut bounds: Vec<usize> = commas;
        bounds.push(end);
        if bounds.len() > 1 && squeezed(bounds[bounds.len() - 2] + 1, end).is_empty() {
            bounds.pop();
        }
        if let [.., from, to] = bounds[..] {
            if squeezed(from + 1, to) == "String" {
                found.push(at);
            }
        }
    }
    for (at, _) in code.windows(3).enumerate().filter(|(_, w)| w == b"Err") {
        if word_before(at) {
            continue;
        }
        let rest = squeezed(at, (at + 40).min(code.len()));
        if rest.starts_with("Err=String;") {
            found.push(at);
        }
    }
    found.sort();
    found
        .into_iter()
        .map(|at| (line_of(at), enclosing_fn(code, at)))
        .collect()
}

/// The name of the last `fn` that starts before `at`: the function whose
/// signature or body holds it (empty outside any).
fn enclosing_fn(code: &[u8], at: usize) -> String {
    let Some(p) = code[..at].windows(3).rposition(|w| w == b"fn ") else {
        return String::new();
    };
    code[p + 3..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .map(|&c| c as char)
        .collect()
}

#[test]
fn no_string_errors_in_src_outside_the_allow_list() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for file in sources(&src) {
        let rel = file.strip_prefix(&src).expect("under src");
        let rel = rel.to_string_lossy().replace('\\', "/");
        // A test's check fails with the text its assertion prints; the rule
        // is the library's.
        if rel.ends_with("_tests.rs") || rel.starts_with("test_support/") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("sources are UTF-8");
        for (line, name) in string_errors(&code_only(&text)) {
            if !ALLOWED.contains(&(rel.as_str(), name.as_str())) {
                bad.push(format!("{rel}:{line} (in fn {name})"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "errors as String; give the area's error type a variant instead:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_string_error_form_is_found() {
    let text = "fn a() -> Result<(), String> {}\n\
                fn b(check: impl Fn(f64) -> Result<(), String>) {}\n\
                static C: LazyLock<Result<Vec<u8>, String>> = x;\n\
                impl FromStr for D { type Err = String; }\n\
                fn e() -> std::result::Result<\n    Map<String, Value>,\n    String,\n> {}\n";
    let found = string_errors(&code_only(text));
    let lines: Vec<usize> = found.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, vec![1, 2, 3, 4, 5]);
    assert_eq!(found[1].1, "b");
}

#[test]
fn typed_errors_and_strings_in_text_pass() {
    let text = "fn a() -> Result<String, ValueError> {}\n\
                fn b() -> Result<Map<String, String>, SpecError> {}\n\
                fn c() -> anyhow::Result<String> {}\n\
                // fn d() -> Result<(), String>\n\
                fn e() { let s = \"Result<(), String>\"; }\n\
                struct MyResult<T, E>(T, E); fn f() -> MyResult<u8, String> {}\n";
    assert_eq!(string_errors(&code_only(text)), vec![]);
}
