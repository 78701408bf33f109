//! Source-code-like text: lines of a project's language, whole files as
//! `read_file` shows them (numbered lines), grep matches, markdown.

use super::project::{File, FileKind, Language, Project};
use super::rng::{mix64, Rng};
use super::vocab::{ADJECTIVES, DIRS, NON_ASCII, NOUNS, PROSE, VERBS};

/// smith's `read_file` cap: output beyond 256 KiB is cut and marked.
pub(crate) const READ_CAP_BYTES: usize = 256 * 1024;

/// A `snake_case` function name.
pub(crate) fn fn_name(rng: &mut Rng) -> String {
    format!("{}_{}", rng.pick(VERBS), rng.pick(NOUNS))
}

/// A `CamelCase` type name.
pub(crate) fn type_name(rng: &mut Rng) -> String {
    let mut s = String::new();
    if rng.chance(0.3) {
        push_camel(&mut s, rng.pick(ADJECTIVES));
    }
    push_camel(&mut s, rng.pick(NOUNS));
    s
}

fn push_camel(out: &mut String, word: &str) {
    let mut chars = word.chars();
    if let Some(c) = chars.next() {
        out.extend(c.to_uppercase());
        out.push_str(chars.as_str());
    }
}

/// A variable name.
pub(crate) fn var_name(rng: &mut Rng) -> String {
    if rng.chance(0.3) {
        format!("{}_{}", rng.pick(ADJECTIVES), rng.pick(NOUNS))
    } else {
        rng.pick(NOUNS).to_string()
    }
}

/// A few words of prose, now and then with a non-ASCII word in it.
pub(crate) fn phrase(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        if rng.chance(0.03) {
            s.push_str(rng.pick(NON_ASCII));
        } else if rng.chance(0.25) {
            s.push_str(rng.pick(NOUNS));
        } else {
            s.push_str(rng.pick(PROSE));
        }
    }
    s
}

/// A phrase of `lo..=hi` words.
pub(crate) fn phrase_of(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let words = rng.range_usize(lo, hi);
    phrase(rng, words)
}

/// One line of code in `lang`, indented, without a newline.
pub(crate) fn code_line(lang: &Language, rng: &mut Rng, out: &mut String) {
    let template = rng.pick(lang.templates);
    if template.is_empty() {
        return;
    }
    let depth = rng.weighted(&[3, 6, 5, 3, 1]);
    let width = if lang.name == "go" {
        1
    } else if lang.name == "python" || lang.name == "rust" {
        4
    } else {
        2
    };
    let indent = if lang.name == "go" { '\t' } else { ' ' };
    for _ in 0..depth * width {
        out.push(indent);
    }
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('f') => out.push_str(&fn_name(rng)),
            Some('F') => {
                push_camel(out, rng.pick(VERBS));
                push_camel(out, rng.pick(NOUNS));
            }
            Some('v') => out.push_str(&var_name(rng)),
            Some('T') => out.push_str(&type_name(rng)),
            Some('n') => out.push_str(&rng.log_uniform(1, 70_000).to_string()),
            Some('s') => out.push_str(&phrase_of(rng, 2, 6)),
            Some('c') => out.push_str(&phrase_of(rng, 3, 14)),
            Some('d') => out.push_str(rng.pick(DIRS)),
            Some(other) => {
                out.push('$');
                out.push(other);
            }
            None => out.push('$'),
        }
    }
}

/// One line of markdown, without a newline.
pub(crate) fn markdown_line(rng: &mut Rng, out: &mut String) {
    match rng.weighted(&[2, 3, 10, 5, 2, 4]) {
        0 => {
            out.push_str("## ");
            out.push_str(&phrase_of(rng, 2, 5));
        }
        1 => {}
        2 => out.push_str(&phrase_of(rng, 8, 22)),
        3 => {
            out.push_str("- ");
            out.push_str(&phrase_of(rng, 4, 12));
        }
        4 => out.push_str("```"),
        _ => {
            out.push_str("    ");
            out.push_str(&fn_name(rng));
            out.push_str("(--");
            out.push_str(rng.pick(NOUNS));
            out.push(')');
        }
    }
}

/// One line of a manifest (`Cargo.toml`, `package.json`, …).
fn manifest_line(rng: &mut Rng, out: &mut String) {
    out.push_str(rng.pick(NOUNS));
    out.push_str(" = \"");
    out.push_str(&rng.range(0, 4).to_string());
    out.push('.');
    out.push_str(&rng.range(0, 30).to_string());
    out.push('"');
}

/// One line of `file`'s text as of its current version.
fn file_line(project: &Project, file: &File, rng: &mut Rng, out: &mut String) {
    match file.kind {
        FileKind::Code | FileKind::Test => code_line(project.lang, rng, out),
        FileKind::Markdown => markdown_line(rng, out),
        FileKind::Manifest => manifest_line(rng, out),
        // Binary files are never rendered as text.
        FileKind::Image | FileKind::Pdf => {}
    }
}

/// What `read_file` returns for `file`: lines `start..=end` (1-based; the
/// whole file when `None`), each as `N: text`, cut at smith's 256 KiB cap.
pub(crate) fn read_output(project: &Project, file: &File, range: Option<(u64, u64)>) -> String {
    let mut rng = Rng::new(file.seed ^ mix64(file.version as u64));
    let (start, end) = range.unwrap_or((1, u64::MAX));
    let full = range.is_none();
    let mut out = String::with_capacity(if full { file.bytes as usize + 64 } else { 4096 });
    let mut line = String::new();
    let mut number = 0u64;
    let mut body_bytes = 0u64;
    while number < end {
        number += 1;
        line.clear();
        file_line(project, file, &mut rng, &mut line);
        body_bytes += line.len() as u64 + 8;
        if number >= start {
            out.push_str(&number.to_string());
            out.push_str(": ");
            out.push_str(&line);
            out.push('\n');
            if out.len() > READ_CAP_BYTES {
                break;
            }
        }
        if body_bytes >= file.bytes {
            break;
        }
    }
    if out.len() > READ_CAP_BYTES {
        let cut = floor_char_boundary(&out, READ_CAP_BYTES);
        out.truncate(cut);
        out.push_str("\n\n... [Content truncated at 256 KiB limit]");
    }
    out
}

/// The largest char boundary of `s` at or below `at`.
pub(crate) fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `count` grep matches (`path:line: text`) from the project's source files.
pub(crate) fn grep_output(project: &Project, rng: &mut Rng, count: usize, wide: bool) -> String {
    let sources = project.of_kind(&[FileKind::Code, FileKind::Test]);
    let mut out = String::new();
    let mut line = String::new();
    for i in 0..count {
        if i > 0 {
            out.push('\n');
        }
        let file = &project.files[rng.pick(&sources)];
        out.push_str(&file.path);
        out.push(':');
        out.push_str(&rng.range(1, file.lines()).to_string());
        out.push_str(": ");
        line.clear();
        code_line(project.lang, rng, &mut line);
        out.push_str(&line);
        // A repo-wide grep also hits minified bundles and lockfiles: lines
        // of several KB each are what make such a result huge.
        if wide && rng.chance(0.15) {
            for _ in 0..rng.range(20, 120) {
                out.push_str(";var ");
                out.push_str(&var_name(rng));
                out.push('=');
                out.push_str(&fn_name(rng));
                out.push_str("()");
            }
        }
    }
    out
}
