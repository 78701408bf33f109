//! Distinctive tokens: identifiers, paths and numbers of six characters or
//! more, the things a model copies out of a tool result into what it says
//! and does next.
//!
//! Plain words are left out even when they could be identifiers
//! (`boolean`, `Manager`, `WARNING`): they are too common to say where the
//! model got them. A token is distinctive when it has a digit, one of
//! `_ . / -`, or a capital after its first letter (`QuerySet`).

/// Shortest token counted: shorter ones (`self`, `len`, `foo`) are too
/// common to say where the model got them.
pub const MIN_TOKEN_LEN: usize = 6;

/// A byte that can be part of a path-like word.
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-')
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Long enough, and not a plain word (see the module doc).
fn is_distinctive(t: &[u8]) -> bool {
    t.len() >= MIN_TOKEN_LEN
        && (t.iter().any(|c| !c.is_ascii_alphabetic())
            || (t[1..].iter().any(u8::is_ascii_uppercase) && t.iter().any(u8::is_ascii_lowercase)))
}

/// Calls `f` with each distinctive token of `text`, in order, repeats
/// included: each maximal run of letters, digits and `_ . / -` with the
/// punctuation trimmed from its ends (a path such as `src/engine/mod.rs`),
/// and inside it each run of letters, digits and `_` (in that path only
/// `engine`, which is a plain word and so not counted) — each if at least
/// [`MIN_TOKEN_LEN`] long and distinctive. A backslash and the byte after
/// it separate words, so that the escapes of JSON arguments (`\n`, `\"`)
/// do not glue a letter to the next word. Bytes outside ASCII separate
/// words.
pub fn for_each_token(text: &[u8], mut f: impl FnMut(&[u8])) {
    let n = text.len();
    let mut i = 0;
    while i < n {
        let c = text[i];
        if c == b'\\' {
            i += 2;
            continue;
        }
        if !is_word(c) {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && is_word(text[i]) {
            i += 1;
        }
        let word = trim(&text[start..i]);
        if word.len() < MIN_TOKEN_LEN {
            continue;
        }
        if is_distinctive(word) {
            f(word);
        }
        if word.iter().all(|&c| is_ident(c)) {
            continue;
        }
        for part in word.split(|&c| !is_ident(c)) {
            if is_distinctive(part) {
                f(part);
            }
        }
    }
}

/// `word` without `.`, `/` and `-` at either end.
fn trim(word: &[u8]) -> &[u8] {
    let punct = |c: &u8| matches!(c, b'.' | b'/' | b'-');
    let start = word.iter().position(|c| !punct(c)).unwrap_or(word.len());
    let end = word
        .iter()
        .rposition(|c| !punct(c))
        .map_or(start, |e| e + 1);
    &word[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_token(text.as_bytes(), |t| {
            out.push(String::from_utf8(t.to_vec()).unwrap())
        });
        out
    }

    #[test]
    fn identifiers_paths_and_long_numbers_are_tokens() {
        assert_eq!(
            tokens("see src/compaction_engine.rs:42, id 1234567 and x"),
            vec!["src/compaction_engine.rs", "compaction_engine", "1234567"]
        );
    }

    #[test]
    fn short_words_plain_words_and_punctuation_are_not() {
        assert!(tokens("the fn of a ... ------ /// x.y").is_empty());
        assert!(tokens("boolean Manager WARNING returns").is_empty());
        assert_eq!(
            tokens("QuerySet getUserName"),
            vec!["QuerySet", "getUserName"]
        );
    }

    #[test]
    fn json_escapes_do_not_glue_letters_to_words() {
        assert_eq!(
            tokens(r#"{"command":"cat\nfoo_bar_baz"}"#),
            vec!["foo_bar_baz"]
        );
    }
}
