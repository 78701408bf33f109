//! A test that keeps every function short enough to read in one sitting:
//! no `fn` in `src/` may span more than [`LONGEST`] lines from its
//! signature to its closing brace. A long function is where steps of the
//! data flow hide inside each other; the test names each one that grows
//! past the limit, so it is split when it is written, not in a later pass.
//! Files are held the same way, at [`LONGEST_FILE`] lines.

use std::path::{Path, PathBuf};

/// The most lines a function may span, its signature and braces included.
const LONGEST: usize = 120;

/// The most lines a file of `src/` may have: past it, a file holds more
/// than one idea and a reader cannot hold it.
const LONGEST_FILE: usize = 1000;

/// Every `.rs` file under `dir`.
pub(crate) fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("src is readable").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text with comments, strings and character literals blanked out
/// (newlines kept), so that braces and `fn` are only ever code.
pub(crate) fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            blank(&mut out, start, i);
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            blank(&mut out, start, i);
        } else if b[i] == b'r'
            && matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // r"…" or r#"…"#: no escapes, ends at the quote and as many #.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                i += 1;
                continue;
            }
            j += 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = (j + close.len()).min(b.len());
            blank(&mut out, start, i);
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            blank(&mut out, start, i);
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', '"'), or else a
            // lifetime, which is left as it is.
            let len = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            match len {
                Some(n) => {
                    i += n;
                    blank(&mut out, start, i);
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// `(first line, lines spanned, name)` of every function with a body.
fn functions(text: &str) -> Vec<(usize, usize, String)> {
    let code = code_only(text);
    let line_of = |at: usize| code[..at].iter().filter(|&&c| c == b'\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].windows(3).position(|w| w == b"fn ") {
        let at = i + p;
        i = at + 3;
        let word_start = at == 0 || !(code[at - 1].is_ascii_alphanumeric() || code[at - 1] == b'_');
        if !word_start {
            continue;
        }
        let name: String = code[at + 3..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .map(|&c| c as char)
            .collect();
        if name.is_empty() {
            continue; // `fn(` as a type
        }
        // The body opens at the first `{` before any `;` (a declaration in
        // a trait has none).
        let Some(open) = code[i..].iter().position(|&c| c == b'{' || c == b';') else {
            continue;
        };
        let open = i + open;
        if code[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut end = open;
        for (k, &c) in code[open..].iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let (first, last) = (line_of(at), line_of(end));
        found.push((first, last - first + 1, name));
    }
    found
}

#[test]
fn no_function_in_src_is_longer_than_the_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = Vec::new();
    for file in sources(&src) {
        let text = std::fs::read_to_string(&file).expect("sources are UTF-8");
        for (line, lines, name) in functions(&text) {
            if lines > LONGEST {
                let rel = file.strip_prefix(&src).expect("under src");
                long.push(format!("{}:{line} {name}: {lines} lines", rel.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_file_in_src_is_longer_than_the_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<String> = sources(&src)
        .into_iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(&file).expect("sources are UTF-8");
            let lines = text.lines().count();
            let rel = file
                .strip_prefix(&src)
                .expect("under src")
                .display()
                .to_string();
            (lines > LONGEST_FILE).then(|| format!("{rel}: {lines} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {LONGEST_FILE} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_count_sees_through_strings_comments_and_nesting() {
    let text = "fn a() {\n    let s = \"}\";\n    // }\n    let c = '}';\n    fn inner<'x>(v: &'x str) -> &'x str { v }\n    let r = r#\"{\"#;\n}\nfn b();\nfn c() { }\n";
    let found = functions(text);
    assert_eq!(
        found,
        vec![
            (1, 7, "a".to_string()),
            (5, 1, "inner".to_string()),
            (9, 1, "c".to_string())
        ]
    );
}

#[test]
fn a_long_function_is_named() {
    let body = "    let x = 1;\n".repeat(LONGEST);
    let text = format!("fn long() {{\n{body}}}\n");
    let found = functions(&text);
    assert_eq!(found, vec![(1, LONGEST + 2, "long".to_string())]);
}
