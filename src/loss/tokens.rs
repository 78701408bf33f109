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

/// Byte classes, one bit each, looked up in [`CLASS`]: the tokenizer
/// reads every byte of the record once, so one table load per byte
/// replaces the chain of range tests.
const WORD: u8 = 1; // letters, digits and `_ . / -`: part of a path-like word
const NOT_ALPHA: u8 = 2; // a word byte that is not a letter: digit, `_ . / -`
const PUNCT: u8 = 32; // `. / -`: trimmed from a word's ends, split on inside
const UPPER: u8 = 4;
const LOWER: u8 = 8;
const ESCAPE: u8 = 16; // `\`: it and the byte after it separate words

const fn class_of(c: u8) -> u8 {
    match c {
        b'a'..=b'z' => WORD | LOWER,
        b'A'..=b'Z' => WORD | UPPER,
        b'0'..=b'9' | b'_' => WORD | NOT_ALPHA,
        b'.' | b'/' | b'-' => WORD | NOT_ALPHA | PUNCT,
        b'\\' => ESCAPE,
        _ => 0,
    }
}

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = class_of(c as u8);
        c += 1;
    }
    t
};

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
///
/// This reads the whole record of a session, so it is written for speed:
/// one pass classifies each byte through [`CLASS`] and collects the classes
/// of a word as it goes; a word of letters alone (most of them) is decided
/// from those bits, and so is one of letters, digits and `_`; only a word
/// with `. / -` is looked at again, to trim it and split it.
pub fn for_each_token(text: &[u8], mut f: impl FnMut(&[u8])) {
    let n = text.len();
    let mut i = 0;
    while i < n {
        let c = CLASS[text[i] as usize];
        if c & WORD == 0 {
            i += if c & ESCAPE != 0 { 2 } else { 1 };
            continue;
        }
        let start = i;
        i += 1;
        // Classes of the word's bytes after its first.
        let mut rest = 0u8;
        while i < n {
            let c = CLASS[text[i] as usize];
            if c & WORD == 0 {
                break;
            }
            rest |= c;
            i += 1;
        }
        if i - start < MIN_TOKEN_LEN {
            continue;
        }
        let word = &text[start..i];
        if (c | rest) & NOT_ALPHA == 0 {
            // Letters only: nothing to trim or split; distinctive when a
            // capital follows the first letter in a word with a small one.
            if rest & UPPER != 0 && (c | rest) & LOWER != 0 {
                f(word);
            }
            continue;
        }
        if (c | rest) & PUNCT == 0 {
            // An identifier or number with a digit or `_`: nothing to trim
            // or split, and not a plain word.
            f(word);
            continue;
        }
        let word = trim(word);
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

    /// The tokenizer as first written, byte test by byte test: the
    /// reference the table-driven one must agree with.
    fn reference(text: &[u8]) -> Vec<Vec<u8>> {
        let is_word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-');
        let mut out = Vec::new();
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
                out.push(word.to_vec());
            }
            if word.iter().all(|&c| is_ident(c)) {
                continue;
            }
            for part in word.split(|&c| !is_ident(c)) {
                if is_distinctive(part) {
                    out.push(part.to_vec());
                }
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_reference(
            text in proptest::collection::vec(
                proptest::sample::select(b"aZbY0_9./-\\ \n\"xQ\xc3\xa9".to_vec()),
                0..400,
            )
        ) {
            let mut fast = Vec::new();
            for_each_token(&text, |t| fast.push(t.to_vec()));
            proptest::prop_assert_eq!(fast, reference(&text));
        }
    }

    #[test]
    fn agrees_with_the_reference_on_the_datasets() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sessions");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path().join("transcript.jsonl");
            let Ok(text) = std::fs::read(&path) else {
                continue;
            };
            let mut fast = Vec::new();
            for_each_token(&text, |t| fast.push(t.to_vec()));
            assert_eq!(fast, reference(&text), "{}", path.display());
            files += 1;
        }
        assert_eq!(files, 12);
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
