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
pub(crate) const MIN_TOKEN_LEN: usize = 6;

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
/// it separate words when that byte is one a JSON escape names (`\n`,
/// `\"`), so that the escapes of JSON arguments do not glue a letter to the
/// next word; before any other byte the backslash alone separates, so that
/// a Windows path keeps its parts whole. Bytes outside ASCII separate words.
///
/// This reads the whole record of a session, so it is written for speed.
/// The text is read 64 bytes at a time into bit masks, one bit per byte
/// ([`Masks`]: word bytes, letters, digits, punctuation, backslashes), and
/// words are found as runs of set bits: a word shorter than
/// [`MIN_TOKEN_LEN`] (most of them) costs a few bit operations, and a
/// longer one is decided from the masks. A word running past a block's
/// end starts the next block, so that only words of 64 bytes or more are
/// ever split between two, and only those are read byte by byte.
pub(crate) fn for_each_token(text: &[u8], mut f: impl FnMut(&[u8])) {
    let n = text.len();
    // A word still running at the end of the previous block: its start.
    let mut open: Option<usize> = None;
    // Whether the previous block ended in a backslash that escapes the
    // first byte of this one.
    let mut escaped_in = false;
    let mut base = 0;
    while base < n {
        let end = n.min(base + 64);
        let m = Masks::of(&text[base..end]);
        let (escaped, escapes_next) = if m.backslash == 0 && !escaped_in {
            // Most blocks of text: no backslash, nothing escaped.
            (0, false)
        } else {
            escaped_bytes(m.backslash, escaped_in, escapable(&text[base..end]))
        };
        escaped_in = escapes_next;
        let mut runs = m.word & !escaped;
        if let Some(start) = open {
            // The word that came in: the block's leading set bits.
            let len = (!runs).trailing_zeros() as usize;
            if len == 64 {
                base = end;
                continue;
            }
            open = None;
            word_from_classes(&text[start..base + len], &mut f);
            runs &= !((1u64 << len) - 1);
        }
        let mut next = end;
        // The run reaching the block's end, if any, starts at `tail`: it
        // is seen whole from the next block on.
        let tail = 64 - (!runs).leading_zeros() as usize;
        if tail == 0 {
            // A word of 64 bytes or more: followed across blocks.
            open = Some(base);
            runs = 0;
        } else if tail < 64 {
            // The next block starts at this word (a word byte, so no
            // backslash escapes it).
            next = base + tail;
            escaped_in = false;
            runs &= (1u64 << tail) - 1;
        }
        let (simple, paths) = word_ends(runs, &m);
        let mut ends = simple | paths;
        if ends != 0 {
            let starts = runs & !(runs << 1);
            let block = &text[base..end];
            while ends != 0 {
                let e = ends.trailing_zeros() as usize;
                ends &= ends - 1;
                // The word's start: the last start at or before its end.
                let s = 63 - (starts & (u64::MAX >> (63 - e))).leading_zeros() as usize;
                if paths & (1 << e) == 0 {
                    f(&block[s..=e]);
                } else {
                    word_in_block(block, &m, s, e + 1 - s, &mut f);
                }
            }
        }
        base = next;
    }
    if let Some(start) = open {
        word_from_classes(&text[start..], &mut f);
    }
}

/// The last bits of the words of a block (`runs`, each run of set bits a
/// word) that are [`MIN_TOKEN_LEN`] bytes or more long: in `simple` those
/// that are tokens as they are (no `. / -`; a digit or `_`, or letters with
/// a capital after the first and a small letter), in `paths` those with
/// `. / -`, which [`word_in_block`] trims and splits. Every other word (most
/// long words: `function`, `Returns`) costs nothing here, and none costs a
/// branch: what a word holds is carried to its last bit by addition (see
/// [`reaches_end`]).
#[inline]
fn word_ends(runs: u64, m: &Masks) -> (u64, u64) {
    let starts = runs & !(runs << 1);
    let ends = runs & !(runs >> 1);
    // Last bits with MIN_TOKEN_LEN - 1 set bits before them.
    let mut long = ends;
    for k in 1..MIN_TOKEN_LEN {
        long &= runs << k;
    }
    let has = |x: u64| reaches_end(runs, x & runs) & long;
    let punct = has(m.punct);
    let not_alpha = has(m.not_alpha);
    let camel = has(m.upper & !starts) & has(m.lower);
    (!punct & (not_alpha | camel) & long, punct)
}

/// The bits of the runs of `runs` from each bit of `x` (inside them) up
/// to the run's last bit: adding `x` to the runs carries each of its bits
/// up through the rest of its run, and the bits the sum changed beyond `x`
/// are those carried through.
#[inline]
fn reaches_end(runs: u64, x: u64) -> u64 {
    x | (runs & (runs.wrapping_add(x) ^ runs ^ x))
}

/// The word at bits `s..s + len` of `block`, decided from the block's
/// masks: [`word_from_classes`] without reading its bytes again.
fn word_in_block(block: &[u8], m: &Masks, s: usize, len: usize, f: &mut impl FnMut(&[u8])) {
    let bits = ((1u64 << len) - 1) << s;
    if m.not_alpha & bits == 0 {
        // Letters only: nothing to trim or split; distinctive when a
        // capital follows the first letter in a word with a small one.
        if m.upper & bits & !(1 << s) != 0 && m.lower & bits != 0 {
            f(&block[s..s + len]);
        }
        return;
    }
    let punct = m.punct & bits;
    if punct == 0 {
        // An identifier or number with a digit or `_`: nothing to trim or
        // split, and not a plain word.
        f(&block[s..s + len]);
        return;
    }
    // Trim `. / -` from both ends.
    let lead = ((!punct) >> s).trailing_zeros() as usize;
    if lead >= len {
        return;
    }
    let trail = ((!punct) << (64 - (s + len))).leading_zeros() as usize;
    let (s, len) = (s + lead, len - lead - trail);
    if len < MIN_TOKEN_LEN {
        return;
    }
    let bits = ((1u64 << len) - 1) << s;
    if m.punct & bits == 0 {
        // An identifier once trimmed: itself, not split.
        if is_distinctive_in(m, bits, s) {
            f(&block[s..s + len]);
        }
        return;
    }
    // A path: itself (it has a non-letter), then its parts.
    f(&block[s..s + len]);
    let mut parts = bits & !m.punct;
    while parts != 0 {
        let p = parts.trailing_zeros() as usize;
        let n = (!(parts >> p)).trailing_zeros() as usize;
        let part = ((1u64 << n) - 1) << p;
        parts &= !part;
        if n >= MIN_TOKEN_LEN && is_distinctive_in(m, part, p) {
            f(&block[p..p + n]);
        }
    }
}

/// [`is_distinctive`] for the run of letters, digits and `_` at `bits`
/// of a block (at least [`MIN_TOKEN_LEN`] long), first bit `s`.
fn is_distinctive_in(m: &Masks, bits: u64, s: usize) -> bool {
    m.not_alpha & bits != 0 || (m.upper & bits & !(1 << s) != 0 && m.lower & bits != 0)
}

/// One word (a maximal run of word bytes), decided from its bytes'
/// classes: the way for the rare word of 64 bytes or more.
fn word_from_classes(word: &[u8], f: &mut impl FnMut(&[u8])) {
    let Some((&first, rest)) = word.split_first() else {
        return;
    };
    if word.len() < MIN_TOKEN_LEN {
        return;
    }
    let c = CLASS[first as usize];
    let rest = rest.iter().fold(0, |acc, &b| acc | CLASS[b as usize]);
    if (c | rest) & NOT_ALPHA == 0 {
        if rest & UPPER != 0 && (c | rest) & LOWER != 0 {
            f(word);
        }
    } else if (c | rest) & PUNCT == 0 {
        f(word);
    } else {
        path_like(word, f);
    }
}

/// A word with `. / -`: trimmed, it is a token if distinctive, and so is
/// each run of letters, digits and `_` inside it.
fn path_like(word: &[u8], f: &mut impl FnMut(&[u8])) {
    let word = trim(word);
    if word.len() < MIN_TOKEN_LEN {
        return;
    }
    if is_distinctive(word) {
        f(word);
    }
    if word.iter().all(|&c| is_ident(c)) {
        return;
    }
    for part in word.split(|&c| !is_ident(c)) {
        if is_distinctive(part) {
            f(part);
        }
    }
}

/// The bytes of one block (up to 64) that a backslash escapes, given
/// whether the previous block's last backslash escapes this block's first
/// byte; and whether this block's last byte is a backslash that escapes
/// the next block's first. A backslash escaped by the one before it
/// escapes nothing (`\\n`: the `n` is a word byte).
fn escaped_bytes(backslash: u64, escaped_in: bool, escapable: u64) -> (u64, bool) {
    let mut escaped = u64::from(escaped_in) & escapable;
    let mut out = false;
    let mut rest = backslash;
    while rest != 0 {
        let at = rest.trailing_zeros();
        rest &= rest - 1;
        if escaped & (1 << at) != 0 {
            continue;
        }
        if at == 63 {
            out = true;
        } else {
            escaped |= (1 << (at + 1)) & escapable;
        }
    }
    (escaped, out)
}

/// The bytes of `block` (at most 64) a backslash before them escapes in
/// JSON (`\n`, `\"`, `\\`, `\u…`): after any other byte a backslash is
/// a separator of its own, as between the parts of a Windows path
/// (`X:\03_ACG\Custom_Addons`). Read only for blocks with a backslash.
fn escapable(block: &[u8]) -> u64 {
    block
        .iter()
        .take(64)
        .enumerate()
        .fold(0, |m, (i, &b)| m | (u64::from(is_escape_letter(b)) << i))
}

fn is_escape_letter(b: u8) -> bool {
    matches!(
        b,
        b'n' | b't' | b'r' | b'b' | b'f' | b'u' | b'"' | b'\\' | b'/'
    )
}

/// One block of text (up to 64 bytes) as bit masks, bit `i` for byte `i`;
/// bits past the block's end are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    /// Letters, digits and `_ . / -`.
    word: u64,
    /// Digits and `_ . / -`.
    not_alpha: u64,
    /// `. / -`.
    punct: u64,
    upper: u64,
    lower: u64,
    backslash: u64,
}

impl Masks {
    /// The masks of `block` (at most 64 bytes), from [`CLASS`], a byte at
    /// a time.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn by_table(block: &[u8]) -> Masks {
        let mut m = Masks::default();
        for (i, &b) in block.iter().enumerate().take(64) {
            let c = CLASS[b as usize];
            let bit = 1u64 << i;
            let set = |on: bool| if on { bit } else { 0 };
            m.word |= set(c & WORD != 0);
            m.not_alpha |= set(c & NOT_ALPHA != 0);
            m.punct |= set(c & PUNCT != 0);
            m.upper |= set(c & UPPER != 0);
            m.lower |= set(c & LOWER != 0);
            m.backslash |= set(c & ESCAPE != 0);
        }
        m
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn of(block: &[u8]) -> Masks {
        Masks::by_table(block)
    }

    /// The masks of `block` (at most 64 bytes), 16 bytes per instruction
    /// with SSE2, which every x86-64 processor has: the same classes as
    /// [`CLASS`] (the tests hold the two to each other).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn of(block: &[u8]) -> Masks {
        use std::arch::x86_64::*;
        let mut padded = [0u8; 64];
        let block = if block.len() >= 64 {
            &block[..64]
        } else {
            // A NUL is no word byte and no backslash.
            padded[..block.len()].copy_from_slice(block);
            &padded[..]
        };
        let mut m = Masks::default();
        for (k, lane) in block.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 is part of the x86-64 baseline, and `lane` is 16
            // readable bytes (`loadu` needs no alignment).
            let lane_masks = unsafe {
                let v = _mm_loadu_si128(lane.as_ptr().cast());
                // Bytes in `lo..lo + len`: shifted so that the range starts
                // at i8::MIN, one signed comparison tests it.
                let within = |lo: u8, len: u8| {
                    let shifted = _mm_add_epi8(v, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
                    _mm_cmplt_epi8(shifted, _mm_set1_epi8((0x80u8.wrapping_add(len)) as i8))
                };
                let lower = within(b'a', 26);
                let upper = within(b'A', 26);
                let punct = within(b'-', 3); // `-`, `.`, `/`
                let other = _mm_or_si128(
                    within(b'0', 10),
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8)),
                );
                let not_alpha = _mm_or_si128(other, punct);
                let word = _mm_or_si128(not_alpha, _mm_or_si128(lower, upper));
                let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
                let bits = |x| u64::from(_mm_movemask_epi8(x) as u16);
                [
                    bits(word),
                    bits(not_alpha),
                    bits(punct),
                    bits(upper),
                    bits(lower),
                    bits(backslash),
                ]
            };
            let at = 16 * k;
            m.word |= lane_masks[0] << at;
            m.not_alpha |= lane_masks[1] << at;
            m.punct |= lane_masks[2] << at;
            m.upper |= lane_masks[3] << at;
            m.lower |= lane_masks[4] << at;
            m.backslash |= lane_masks[5] << at;
        }
        m
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
                let escapes = text.get(i + 1).is_some_and(|&n| is_escape_letter(n));
                i += if escapes { 2 } else { 1 };
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

    proptest::proptest! {
        #[test]
        fn block_masks_agree_with_the_class_table(
            block in proptest::collection::vec(proptest::num::u8::ANY, 0..=64)
        ) {
            proptest::prop_assert_eq!(Masks::of(&block), Masks::by_table(&block));
        }

        /// Long words and runs of backslashes across the 64-byte blocks.
        #[test]
        fn agrees_with_the_reference_across_blocks(
            parts in proptest::collection::vec(
                (proptest::sample::select(vec![
                    "a", "Q", "7", "_", ".", "/", "-", "\\", " ", "\"", "\u{e9}",
                ]), 1usize..90),
                0..12,
            )
        ) {
            let text: String = parts.iter().map(|(p, n)| p.repeat(*n)).collect();
            let mut fast = Vec::new();
            for_each_token(text.as_bytes(), |t| fast.push(t.to_vec()));
            proptest::prop_assert_eq!(fast, reference(text.as_bytes()));
        }
    }

    #[test]
    fn a_word_ending_on_a_block_boundary_or_running_across_one_is_one_word() {
        for len in [63, 64, 65, 127, 128, 129, 200] {
            let word = "ab_".repeat(len / 3 + 1)[..len].to_string();
            for pad in 0..3 {
                let text = format!("{}{word}", " ".repeat(pad));
                let mut got = Vec::new();
                for_each_token(text.as_bytes(), |t| got.push(t.to_vec()));
                let want = reference(text.as_bytes());
                assert_eq!(got, want, "len {len} pad {pad}");
                assert_eq!(want.len(), 1, "len {len} pad {pad}");
            }
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
    fn a_windows_path_in_plain_text_keeps_every_part_whole() {
        assert_eq!(
            tokens(r"cd X:\03_ACG\Custom_Addons\style_crm"),
            vec!["03_ACG", "Custom_Addons", "style_crm"]
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
