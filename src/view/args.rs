//! A tool call's arguments on one line: what a reader needs to know which
//! call this was (`read_file src/main.rs`, `grep "fn main" in src`,
//! `bash $ cargo test`), not the JSON.
//!
//! Tools differ between agents and versions, so this goes by argument names
//! rather than tool names: a command is shown as its first line, a pattern
//! quoted, a path as it is, and everything else as `key=value` with long
//! texts replaced by their size.

use serde_json::{Map, Value};

use super::text::{cut_chars, human_bytes, one_line};

/// Argument names holding a shell command: shown first, as `$ line`.
const COMMAND_KEYS: [&str; 3] = ["command", "cmd", "script"];
/// Argument names holding what is searched for: shown quoted.
const PATTERN_KEYS: [&str; 4] = ["pattern", "query", "regex", "search"];
/// Argument names holding where: shown as they are.
const PATH_KEYS: [&str; 9] = [
    "path",
    "file_path",
    "filePath",
    "file",
    "filename",
    "url",
    "dir",
    "directory",
    "notebook_path",
];
/// Strings longer than this are shown by size, not content.
const INLINE_VALUE_CHARS: usize = 40;

/// One line saying what a call with these arguments (compact JSON) does,
/// at most `max_chars` characters.
pub(crate) fn summarize(args_json: Option<&str>, max_chars: usize) -> String {
    let Some(raw) = args_json else {
        return String::new();
    };
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => cut_chars(&summarize_object(&map), max_chars),
        Ok(Value::Null) => String::new(),
        Ok(other) => one_line(&other.to_string(), max_chars),
        Err(_) => one_line(raw, max_chars),
    }
}

fn summarize_object(map: &Map<String, Value>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut used: Vec<&str> = Vec::new();

    if let Some((key, Value::String(cmd))) = find(map, &COMMAND_KEYS) {
        used.push(key);
        let total = super::text::count_lines(cmd.trim().as_bytes());
        let first = cmd.trim().lines().next().unwrap_or("");
        let mut part = format!("$ {}", one_line(first, 200));
        if total > 1 {
            let more = total - 1;
            part.push_str(&format!(
                " (+{more} line{})",
                if more == 1 { "" } else { "s" }
            ));
        }
        parts.push(part);
    }
    if let Some((key, value)) = find(map, &PATTERN_KEYS) {
        if let Some(text) = scalar(value) {
            used.push(key);
            parts.push(format!("{:?}", one_line(&text, 80)));
        }
    }
    if let Some((key, value)) = find(map, &PATH_KEYS) {
        if let Some(text) = scalar(value) {
            used.push(key);
            let path = one_line(&text, 120);
            if parts.is_empty() {
                parts.push(path);
            } else {
                parts.push(format!("in {path}"));
            }
        }
    }
    for (key, value) in map {
        if used.contains(&key.as_str()) {
            continue;
        }
        parts.push(format!("{key}={}", short_value(value)));
    }
    parts.join("  ")
}

fn find<'a>(
    map: &'a Map<String, Value>,
    keys: &[&'static str],
) -> Option<(&'static str, &'a Value)> {
    keys.iter().find_map(|k| map.get(*k).map(|v| (*k, v)))
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn short_value(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() > INLINE_VALUE_CHARS || s.contains('\n') => {
            format!("<{}>", human_bytes(s.len() as u64))
        }
        Value::String(s) => format!("{:?}", one_line(s, INLINE_VALUE_CHARS)),
        Value::Array(items) => format!("[{} items]", items.len()),
        Value::Object(map) => format!("{{{} keys}}", map.len()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_shows_its_path_and_range() {
        assert_eq!(
            summarize(
                Some(r#"{"path":"src/main.rs","offset":10,"limit":50}"#),
                100
            ),
            "src/main.rs  offset=10  limit=50"
        );
    }

    #[test]
    fn a_grep_shows_its_pattern_and_where() {
        assert_eq!(
            summarize(Some(r#"{"pattern":"fn main","path":"src"}"#), 100),
            r#""fn main"  in src"#
        );
    }

    #[test]
    fn a_command_shows_its_first_line_and_how_many_more() {
        assert_eq!(
            summarize(
                Some(r#"{"command":"cd x\nmake\nmake test","timeout":60}"#),
                100
            ),
            "$ cd x (+2 lines)  timeout=60"
        );
    }

    #[test]
    fn long_texts_are_shown_by_size() {
        let args = format!(r#"{{"path":"a","content":"{}"}}"#, "x".repeat(2000));
        assert_eq!(summarize(Some(&args), 100), "a  content=<2.0 KiB>");
    }

    #[test]
    fn bad_json_and_no_args_still_give_a_line() {
        assert_eq!(summarize(Some("{not json"), 100), "{not json");
        assert_eq!(summarize(None, 100), "");
        assert_eq!(summarize(Some("{}"), 100), "");
        assert!(summarize(Some(r#"{"path":"abcdefghij"}"#), 5).ends_with('…'));
    }
}
