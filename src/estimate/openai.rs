//! OpenAI's o200k_base and cl100k_base tokenizers, built at run time from
//! the compact vocabularies committed under `assets/tokenizers/` (the
//! `o200k` and `cl100k` estimators).
//!
//! `bpe-openai`'s own `o200k_base()`/`cl100k_base()` embed their encoders
//! precomputed, tens of megabytes that would dominate the installed
//! binary. The gzipped vocabularies are a tenth of that; building the same
//! encoder from them is paid once per process, and only by a run that uses
//! the estimator. Those two functions are never called here, so the linker
//! drops their tables.
//!
//! The encoder, the hash factor and the pre-tokenisation are the ones
//! `bpe-openai` uses, so every count is unchanged (`tests/estimators.rs`
//! compares both on fixed strings and on every text of `datasets/`).

use std::cell::RefCell;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

use bpe::byte_pair_encoding::{read_tiktoken, BytePairEncoding};
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

use super::{PatternError, VocabularyError};

/// A multiplier under which the vocabularies' 32-bit token hashes do not
/// collide (`BytePairEncoding` keys its table by them): the one
/// `bpe-openai` builds its own o200k and cl100k encoders with.
pub(crate) const HASH_FACTOR: u64 = 17_846_336_922_010_275_747;

/// tiktoken's `cl100k_base` pre-tokenisation pattern as OpenAI publishes it.
pub(crate) const CL100K_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// tiktoken's `o200k_base` pre-tokenisation pattern as OpenAI publishes it
/// (its seven alternatives joined with `|`).
pub(crate) const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// The gzipped tiktoken files, unchanged (see `assets/tokenizers/README.md`).
const O200K_GZ: &[u8] = include_bytes!("../../assets/tokenizers/o200k_base.tiktoken.gz");
const CL100K_GZ: &[u8] = include_bytes!("../../assets/tokenizers/cl100k_base.tiktoken.gz");

static O200K: LazyLock<Result<Counter, VocabularyError>> =
    LazyLock::new(|| build("o200k_base", O200K_GZ, O200K_PATTERN));
static CL100K: LazyLock<Result<Counter, VocabularyError>> =
    LazyLock::new(|| build("cl100k_base", CL100K_GZ, CL100K_PATTERN));

/// A byte-pair encoding and the pre-tokenisation it counts through: the
/// pieces `bpe-openai`'s `Tokenizer` would make, found with a regex cache
/// of each thread's own. `Tokenizer::count` takes a cache from the regex's
/// shared pool for every piece (a word or so), and on all threads but the
/// first that pool goes through a lock: in a sweep under o200k, taking and
/// returning those caches was an eighth of the time.
pub(crate) struct Counter {
    bpe: BytePairEncoding,
    split: Regex,
    /// Per pattern of `split`: whether its match ends in one character of
    /// look-ahead, which is not part of the piece.
    lookahead: Vec<bool>,
    /// Which of the thread's caches is this one's.
    id: usize,
}

thread_local! {
    /// Each `Counter`'s regex cache on this thread, by `Counter::id`.
    static CACHES: RefCell<Vec<(usize, Cache)>> = const { RefCell::new(Vec::new()) };
}

impl Counter {
    /// The number of tokens `text` encodes to.
    pub(crate) fn count(&self, text: &str) -> usize {
        let mut count = 0;
        self.pieces(text, |piece| count += self.bpe.count(piece));
        count
    }

    /// The tokens `text` encodes to.
    #[cfg(test)]
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut tokens = Vec::new();
        self.pieces(text, |piece| {
            tokens.extend(self.bpe.encode_via_backtracking(piece))
        });
        tokens
    }

    /// Calls `f` with each piece of `text` as `bpe-openai`'s pre-tokeniser
    /// splits it: each match anchored where the last ended, in the rest of
    /// the text; a look-ahead pattern's last character given back; the
    /// first place nothing matches ends the text.
    fn pieces(&self, text: &str, mut f: impl FnMut(&[u8])) {
        CACHES.with(|caches| {
            let mut caches = caches.borrow_mut();
            let at = match caches.iter().position(|(id, _)| *id == self.id) {
                Some(at) => at,
                None => {
                    caches.push((self.id, self.split.create_cache()));
                    caches.len() - 1
                }
            };
            let cache = &mut caches[at].1;
            let mut last = 0;
            while let Some(m) = self
                .split
                .search_with(cache, &Input::new(&text[last..]).anchored(Anchored::Yes))
            {
                let start = last;
                let mut end = last + m.end();
                if self.lookahead[m.pattern().as_usize()] {
                    end -= text[start..end]
                        .chars()
                        .next_back()
                        .map_or(0, char::len_utf8);
                }
                if end == start {
                    // Only a look-ahead character: never with these
                    // patterns, whose look-ahead one matches at least two.
                    break;
                }
                f(&text.as_bytes()[start..end]);
                last = end;
            }
        })
    }
}

/// The o200k_base tokenizer, built on first use.
pub(crate) fn o200k() -> Result<&'static Counter, &'static VocabularyError> {
    O200K.as_ref()
}

/// The cl100k_base tokenizer, built on first use.
pub(crate) fn cl100k() -> Result<&'static Counter, &'static VocabularyError> {
    CL100K.as_ref()
}

/// Gunzips a tiktoken file (a base64 token and its rank per line, in rank
/// order) and builds its encoder and pre-tokeniser.
fn build(name: &str, gz: &[u8], pattern: &str) -> Result<Counter, VocabularyError> {
    let file = format!("{name}.tiktoken.gz");
    let mut text = String::new();
    if let Err(error) = flate2::read::GzDecoder::new(gz).read_to_string(&mut text) {
        return Err(VocabularyError::Gunzip { file, error });
    }
    let tokens = match read_tiktoken(&text) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = Box::new(error);
            return Err(VocabularyError::Tiktoken { file, error });
        }
    };
    let bpe = BytePairEncoding::from_dictionary(tokens, Some(HASH_FACTOR));
    lookahead_tokenizer(bpe, pattern).map_err(|error| VocabularyError::Pattern {
        file: name.to_string(),
        error,
    })
}

/// A tokenizer for a tiktoken pattern ending in `\s+(?!\S)|\s+`. The regex
/// engine has no look-ahead, so that ending is rewritten as `bpe-openai`
/// does: a whitespace run at the end of the text, a whitespace run plus one
/// character it gives back (`\s+\s`), and a whitespace run.
pub(crate) fn lookahead_tokenizer(
    bpe: BytePairEncoding,
    pattern: &str,
) -> Result<Counter, PatternError> {
    static NEXT_ID: AtomicUsize = AtomicUsize::new(0);
    let ending = r"\s+(?!\S)|\s+";
    let Some(head) = pattern.strip_suffix(ending) else {
        return Err(PatternError::Ending(ending));
    };
    let main = format!(r"{head}\s+$");
    let split = Regex::new_many(&[main.as_str(), r"\s+\s", r"\s+"])
        .map_err(|e| PatternError::Regex(Box::new(e)))?;
    Ok(Counter {
        bpe,
        split,
        lookahead: vec![false, true, false],
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_vocabularies_build_and_count() {
        assert_eq!(o200k().unwrap().count("hello world"), 2);
        assert_eq!(cl100k().unwrap().count("hello world"), 2);
    }

    #[test]
    fn a_pattern_without_the_lookahead_ending_is_refused() {
        let bpe = BytePairEncoding::from_dictionary(vec![b"a".to_vec()], Some(HASH_FACTOR));
        assert!(lookahead_tokenizer(bpe, r"\p{L}+").is_err());
    }
}
