//! Anthropic's legacy Claude tokenizer, offline (the `claude2` estimator).
//!
//! The vocabulary is the one Anthropic published in the npm package
//! `@anthropic-ai/tokenizer` 0.0.4 (see `assets/tokenizers/README.md` for
//! its origin and licence), compiled into the binary. It is a byte-level BPE
//! in tiktoken's format, so the same fast encoder as o200k and cl100k
//! (`bpe-openai`'s) counts it; the only differences are the published
//! package's NFKC normalisation and its five special tokens, each counted as
//! one token as the package's `countTokens` does.

use std::sync::LazyLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::Deserialize;
use unicode_normalization::UnicodeNormalization;

/// The vocabulary file, unchanged.
const VOCAB: &str = include_str!("../../assets/tokenizers/claude.json");
/// Its name, as its errors start.
const FILE: &str = "claude.json";

/// `bpe-openai`'s hash factor (see [`super::openai::HASH_FACTOR`]) keeps
/// the 64 995 tokens' 32-bit hashes apart too; `tests/estimators.rs` builds
/// the tokenizer, which would fail on a collision.
use super::openai::{lookahead_tokenizer, Counter, HASH_FACTOR};
use super::VocabularyError;

#[derive(Deserialize)]
struct File {
    pat_str: String,
    special_tokens: std::collections::BTreeMap<String, u32>,
    bpe_ranks: String,
}

struct Claude {
    tokenizer: Counter,
    specials: Vec<String>,
}

static CLAUDE: LazyLock<Result<Claude, VocabularyError>> = LazyLock::new(build);

/// Builds the tokenizer from the vocabulary (a few hundred milliseconds,
/// once per process).
fn build() -> Result<Claude, VocabularyError> {
    let name = || FILE.to_string();
    let file: File = serde_json::from_str(VOCAB).map_err(|error| VocabularyError::NotJson {
        file: name(),
        error,
    })?;
    // Lines of `<first> <offset> <token> <token> ...`, base64 tokens ranked
    // from the offset on.
    let mut ranked: Vec<(u32, Vec<u8>)> = Vec::new();
    for line in file.bpe_ranks.lines().filter(|l| !l.is_empty()) {
        let mut parts = line.split(' ');
        let _first = parts.next();
        let offset: u32 =
            parts
                .next()
                .and_then(|o| o.parse().ok())
                .ok_or_else(|| VocabularyError::NoOffset {
                    file: name(),
                    line: line.to_string(),
                })?;
        for (i, token) in parts.enumerate() {
            let bytes = base64(token).ok_or_else(|| VocabularyError::NotBase64 {
                file: name(),
                token: token.to_string(),
            })?;
            ranked.push((offset + i as u32, bytes));
        }
    }
    ranked.sort();
    let bpe =
        BytePairEncoding::from_dictionary(ranked.into_iter().map(|(_, t)| t), Some(HASH_FACTOR));
    let tokenizer =
        lookahead_tokenizer(bpe, &file.pat_str).map_err(|error| VocabularyError::Pattern {
            file: name(),
            error,
        })?;
    Ok(Claude {
        tokenizer,
        specials: file.special_tokens.into_keys().collect(),
    })
}

/// Standard base64 with padding, as the vocabulary writes it.
fn base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let n = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    Some(out)
}

/// Tokens of `text` under the legacy Claude tokenizer: NFKC-normalised, a
/// special token's text counted as that one token. `Err` only if the
/// compiled-in vocabulary could not be read, which the tests rule out.
pub(crate) fn count(text: &str) -> Result<u64, &'static VocabularyError> {
    let claude = CLAUDE.as_ref()?;
    let normalized: String = text.nfkc().collect();
    let mut rest = normalized.as_str();
    let mut n = 0u64;
    // Split at each special token, as tiktoken does with every special
    // allowed: the text between is tokenized as it is.
    while rest.contains('<') {
        let next = claude
            .specials
            .iter()
            .filter_map(|s| rest.find(s.as_str()).map(|at| (at, s.len())))
            .min();
        let Some((at, len)) = next else { break };
        n += claude.tokenizer.count(&rest[..at]) as u64 + 1;
        rest = &rest[at + len..];
    }
    Ok(n + claude.tokenizer.count(rest) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_the_vocabularys_forms() {
        assert_eq!(base64("IQ==").unwrap(), b"!");
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64("aGk=").unwrap(), b"hi");
        assert_eq!(base64("aGV5").unwrap(), b"hey");
        assert!(base64("a$==").is_none());
    }
}
