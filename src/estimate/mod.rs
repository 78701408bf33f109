//! Token estimators: how a message history becomes a token count.
//!
//! smith estimates `bytes / 4`, divided once over the whole history. The
//! other estimators keep that shape and change only how a piece of text
//! becomes a count: each counts the same parts of a block as smith does (its
//! text, the tool arguments as serialised, the tool name, the thinking
//! signature) plus the same flat allowance for an attachment, and the engine
//! divides the running total by the estimator's units per token once, as
//! smith divides bytes by four. So `bytes4` is smith's estimate to the byte,
//! and every other figure (trigger, target, the window's budget, tokens
//! reclaimed, price) is simply in the other estimator's tokens.
//!
//! Real tokenizers cost far more than a length, so a [`Measure`] bound to a
//! session counts every text of its record once ([`Measure::for_session`])
//! and every config of a sweep reuses those counts; only text that
//! compaction writes (a kept head, a stub, a note, a summary) is counted when
//! it appears.

pub(crate) mod claude;
#[cfg(test)]
mod estimator_tests;
pub(crate) mod openai;

use std::fmt;
use std::sync::Arc;

use std::hash::BuildHasher;
use std::sync::Mutex;

use foldhash::fast::FixedState;
use foldhash::HashMap;
use serde::Serialize;

use crate::transcript::estimate::BYTES_PER_TOKEN;
use crate::transcript::{Block, Message};

/// A way to turn text into tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    /// smith's own: UTF-8 bytes / 4. The reference, and the default.
    #[default]
    Bytes4,
    /// Unicode scalar values / 4: what bytes / 4 would be if a character
    /// outside ASCII did not count two to four times.
    Chars4,
    /// OpenAI's o200k_base BPE (GPT-4o and later).
    O200k,
    /// OpenAI's cl100k_base BPE (GPT-4, GPT-3.5).
    Cl100k,
    /// Anthropic's legacy Claude tokenizer (Claude 1 and 2), the one model
    /// vendor's tokenizer published for offline use (see [`claude`]).
    Claude2,
}

impl Estimator {
    /// Every estimator, the reference first.
    pub const ALL: [Estimator; 5] = [
        Estimator::Bytes4,
        Estimator::Chars4,
        Estimator::O200k,
        Estimator::Cl100k,
        Estimator::Claude2,
    ];

    /// The name on the command line and in every output file.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Estimator::Bytes4 => "bytes4",
            Estimator::Chars4 => "chars4",
            Estimator::O200k => "o200k",
            Estimator::Cl100k => "cl100k",
            Estimator::Claude2 => "claude2",
        }
    }

    /// What it counts, for a page or an axis: `bytes/4`, `o200k tokens`.
    pub(crate) fn counts(self) -> &'static str {
        match self {
            Estimator::Bytes4 => "bytes/4",
            Estimator::Chars4 => "characters/4",
            Estimator::O200k => "o200k tokens",
            Estimator::Cl100k => "cl100k tokens",
            Estimator::Claude2 => "claude2 tokens",
        }
    }

    /// Parses a name, saying which names exist when it is none of them.
    pub(crate) fn parse(text: &str) -> Result<Estimator, EstimatorError> {
        let t = text.trim();
        Estimator::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| EstimatorError::Unknown(t.to_string()))
    }

    /// Parses a comma-separated list (`bytes4,o200k`), repeats kept once in
    /// first-seen order; `all` stands for every estimator.
    pub fn parse_list(text: &str) -> Result<Vec<Estimator>, EstimatorError> {
        let mut out: Vec<Estimator> = Vec::new();
        for item in text.split(',') {
            if item.trim().is_empty() {
                return Err(EstimatorError::EmptyItem(text.to_string()));
            }
            let found = if item.trim().eq_ignore_ascii_case("all") {
                Estimator::ALL.to_vec()
            } else {
                vec![Estimator::parse(item)?]
            };
            for e in found {
                if !out.contains(&e) {
                    out.push(e);
                }
            }
        }
        Ok(out)
    }

    /// `bytes4, chars4, o200k, cl100k, claude2`: for messages and help.
    pub(crate) fn names() -> String {
        Estimator::ALL.map(Estimator::name).join(", ")
    }

    /// Units counted per token. A length-based estimator counts bytes or
    /// characters and divides by four once over the history, as smith does,
    /// so rounding cannot drift per message; a tokenizer counts tokens.
    pub(crate) fn per_token(self) -> u64 {
        match self {
            Estimator::Bytes4 | Estimator::Chars4 => BYTES_PER_TOKEN,
            Estimator::O200k | Estimator::Cl100k | Estimator::Claude2 => 1,
        }
    }

    /// Whether counting needs a tokenizer (and so a per-session cache).
    pub fn is_tokenizer(self) -> bool {
        self.per_token() == 1
    }

    /// The units of one piece of text. Text is bytes (a kept head may end in
    /// the middle of a character); a tokenizer sees it with the broken
    /// sequence replaced by U+FFFD, as a provider would receive it.
    pub fn text_units(self, text: &[u8]) -> u64 {
        match self {
            Estimator::Bytes4 => text.len() as u64,
            Estimator::Chars4 => chars(text),
            // The vocabularies are compiled in and the tests build them:
            // failing here is a broken build, never a property of the input.
            Estimator::O200k => openai::o200k()
                .unwrap_or_else(|e| panic!("the compiled-in o200k vocabulary: {e}"))
                .count(&String::from_utf8_lossy(text)) as u64,
            Estimator::Cl100k => openai::cl100k()
                .unwrap_or_else(|e| panic!("the compiled-in cl100k vocabulary: {e}"))
                .count(&String::from_utf8_lossy(text)) as u64,
            Estimator::Claude2 => claude::count(&String::from_utf8_lossy(text))
                .unwrap_or_else(|e| panic!("the compiled-in Claude vocabulary: {e}")),
        }
    }

    /// The units of a block counted afresh: its text, tool arguments, tool
    /// name and signature, plus the attachment allowance (smith's flat token
    /// figure, in this estimator's units).
    pub(crate) fn block_units(self, b: &Block) -> u64 {
        if self == Estimator::Bytes4 {
            return b.bytes();
        }
        let s = |v: &Option<crate::transcript::Str>| {
            v.as_deref().map_or(0, |s| self.text_units(s.as_bytes()))
        };
        self.text_units(b.text_bytes())
            + s(&b.tool_args)
            + s(&b.tool_name)
            + s(&b.signature)
            + media_units(self, b)
    }
}

impl fmt::Display for Estimator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Estimator {
    type Err = EstimatorError;
    fn from_str(s: &str) -> Result<Estimator, EstimatorError> {
        Estimator::parse(s)
    }
}

/// Why `--estimator` (or a data file's `estimator` column) names no
/// estimator: a name that is none of them, or an empty item in a list.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EstimatorError {
    /// The name, trimmed.
    #[error("unknown estimator {0:?}; the estimators are {names}", names = Estimator::names())]
    Unknown(String),
    /// The whole list with the empty item.
    #[error("empty item in {0:?}; write estimators as bytes4,o200k")]
    EmptyItem(String),
}

/// Why a compiled-in vocabulary could not be built: a broken build, never a
/// property of the input. `file` is the vocabulary's file name.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VocabularyError {
    #[error("{file}: cannot gunzip: {error}")]
    Gunzip { file: String, error: std::io::Error },
    /// A line of a tiktoken file that is no base64 token and rank.
    #[error("{file}: {error}")]
    Tiktoken {
        file: String,
        error: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("{file} is not valid: {error}")]
    NotJson {
        file: String,
        error: serde_json::Error,
    },
    /// A rank line without its offset; `line` is its start.
    #[error("{file}: a rank line without an offset: {line:.40}")]
    NoOffset { file: String, line: String },
    #[error("{file}: {token:?} is not base64")]
    NotBase64 { file: String, token: String },
    #[error("{file}: {error}")]
    Pattern { file: String, error: PatternError },
}

/// Why a tiktoken pre-tokenization pattern cannot be counted through.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PatternError {
    /// It does not end in `ending`, the look-ahead it rewrites.
    #[error("unexpected pre-tokenization pattern (it should end in {0})")]
    Ending(&'static str),
    #[error("pattern: {0}")]
    Regex(Box<regex_automata::meta::BuildError>),
}

/// Unicode scalar values in UTF-8 text: every byte that does not continue a
/// sequence. A broken sequence counts once per lead byte, as a decoder that
/// replaces it would count close to.
fn chars(text: &[u8]) -> u64 {
    text.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u64
}

/// An attachment's flat allowance in `e`'s units: smith's token figure
/// (kept in bytes on the block type) times the units of a token.
fn media_units(e: Estimator, b: &Block) -> u64 {
    b.kind.media_bytes() / BYTES_PER_TOKEN * e.per_token()
}

/// Counts of one session's texts, made once and shared by every config.
///
/// Keyed by the address of the shared text (`Arc` data) and of the message:
/// a working history shares both with the record until compaction rewrites
/// them, and `keep` holds the record so that no address can be reused while
/// the counts live. Text that compaction writes (heads, stubs, notes, the
/// summary) has no stable address and comes back at every later request, so
/// its counts are kept by content (length and a 64-bit hash) in `written`.
struct Counts {
    texts: HashMap<usize, u64>,
    messages: HashMap<usize, u64>,
    written: Mutex<HashMap<(usize, u64), u64>>,
    _keep: Vec<Arc<Message>>,
}

impl Counts {
    fn empty() -> Counts {
        Counts {
            texts: HashMap::default(),
            messages: HashMap::default(),
            written: Mutex::new(HashMap::default()),
            _keep: Vec::new(),
        }
    }

    /// The count of a text not in the record, counted once per content.
    fn written(&self, estimator: Estimator, bytes: &[u8]) -> u64 {
        let key = (bytes.len(), FixedState::with_seed(0x13).hash_one(bytes));
        let known = self
            .written
            .lock()
            .map(|m| m.get(&key).copied())
            .unwrap_or(None);
        if let Some(n) = known {
            return n;
        }
        let n = estimator.text_units(bytes);
        if let Ok(mut m) = self.written.lock() {
            m.insert(key, n);
        }
        n
    }
}

/// Calls `f` with each text of a block that the estimate counts (its text,
/// and a call's arguments, a tool's name, a thinking block's signature),
/// keyed by its address.
fn each_text<'b>(b: &'b Block, mut f: impl FnMut(usize, &'b [u8])) {
    if let Some(t) = &b.text {
        f(t.as_ptr() as usize, t);
    }
    for s in [&b.tool_args, &b.tool_name, &b.signature]
        .into_iter()
        .flatten()
    {
        f(s.as_ptr() as usize, s.as_bytes());
    }
}

/// An estimator, with the counts of one session when it is a tokenizer.
/// What the engine measures a history with.
#[derive(Clone)]
pub struct Measure {
    estimator: Estimator,
    counts: Option<Arc<Counts>>,
}

impl fmt::Debug for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Measure")
            .field("estimator", &self.estimator)
            .field(
                "cached_messages",
                &self.counts.as_ref().map(|c| c.messages.len()),
            )
            .finish()
    }
}

/// smith's bytes / 4, as a constant so a compactor can lend it.
pub(crate) static BYTES4: Measure = Measure::bytes();

impl Default for Measure {
    fn default() -> Measure {
        Measure::bytes()
    }
}

impl Measure {
    /// smith's estimate.
    pub(crate) const fn bytes() -> Measure {
        Measure {
            estimator: Estimator::Bytes4,
            counts: None,
        }
    }

    /// `estimator` with no counts made up front: a tokenizer counts each
    /// text when first measured and keeps the count by content.
    pub(crate) fn new(estimator: Estimator) -> Measure {
        Measure {
            estimator,
            counts: (estimator != Estimator::Bytes4).then(|| Arc::new(Counts::empty())),
        }
    }

    /// `estimator` with every text of `messages` counted once, in parallel:
    /// what a replay or a sweep of that session should use. Texts are told
    /// apart by address, so one that the record holds more than once
    /// (shared when read, see `transcript::pool`) is counted once.
    pub(crate) fn for_session(estimator: Estimator, messages: &[Arc<Message>]) -> Measure {
        if estimator == Estimator::Bytes4 {
            return Measure::new(estimator);
        }
        use rayon::prelude::*;
        let mut texts: HashMap<usize, u64> = HashMap::default();
        let mut distinct: Vec<(usize, &[u8])> = Vec::new();
        for b in messages.iter().flat_map(|m| &m.content) {
            each_text(b, |key, bytes| {
                if let std::collections::hash_map::Entry::Vacant(e) = texts.entry(key) {
                    e.insert(0);
                    distinct.push((key, bytes));
                }
            });
        }
        let counted: Vec<u64> = distinct
            .par_iter()
            .map(|&(_, bytes)| estimator.text_units(bytes))
            .collect();
        for (&(key, _), n) in distinct.iter().zip(counted) {
            texts.insert(key, n);
        }
        let by_message = messages
            .iter()
            .map(|m| {
                let mut total = 0;
                for b in &m.content {
                    total += media_units(estimator, b);
                    each_text(b, |key, _| total += texts.get(&key).copied().unwrap_or(0));
                }
                (Arc::as_ptr(m) as usize, total)
            })
            .collect();
        Measure {
            estimator,
            counts: Some(Arc::new(Counts {
                texts,
                messages: by_message,
                written: Mutex::new(HashMap::default()),
                _keep: messages.to_vec(),
            })),
        }
    }

    pub(crate) fn estimator(&self) -> Estimator {
        self.estimator
    }

    /// Whether this is smith's bytes / 4.
    pub(crate) fn is_bytes4(&self) -> bool {
        self.estimator == Estimator::Bytes4
    }

    /// Units per token (see [`Estimator::per_token`]).
    pub(crate) fn per_token(&self) -> u64 {
        self.estimator.per_token()
    }

    /// Tokens of a running total of units: divided once, rounding down.
    pub(crate) fn tokens(&self, units: u64) -> u64 {
        units / self.per_token()
    }

    /// The units of a message; under bytes4 exactly [`Message::bytes`].
    pub(crate) fn message(&self, m: &Message) -> u64 {
        if self.is_bytes4() {
            return m.bytes();
        }
        if let Some(n) = self
            .counts
            .as_ref()
            .and_then(|c| c.messages.get(&(m as *const Message as usize)))
        {
            return *n;
        }
        m.content.iter().map(|b| self.block(b)).sum()
    }

    /// The units of a block; under bytes4 exactly [`Block::bytes`].
    pub(crate) fn block(&self, b: &Block) -> u64 {
        let Some(counts) = &self.counts else {
            return self.estimator.block_units(b);
        };
        let count = |key: usize, bytes: &[u8]| match counts.texts.get(&key) {
            Some(n) => *n,
            None => counts.written(self.estimator, bytes),
        };
        let mut n = media_units(self.estimator, b);
        each_text(b, |key, bytes| n += count(key, bytes));
        n
    }

    /// The units of a whole history.
    pub(crate) fn history(&self, messages: &[Arc<Message>]) -> u64 {
        messages.iter().map(|m| self.message(m)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes4_is_smiths_byte_count() {
        let m = Message::new(
            crate::transcript::Role::Assistant,
            vec![
                Block::text(&b"h\xc3\xa9llo"[..]),
                Block::tool_use("c1", "read_file", r#"{"path":"a.rs"}"#),
            ],
            false,
            None,
        );
        assert_eq!(Measure::bytes().message(&m), m.bytes());
        // "héllo", "read_file" and the arguments; the call id is not counted,
        // as smith does not count it.
        assert_eq!(Measure::new(Estimator::Chars4).message(&m), 5 + 9 + 15);
    }

    #[test]
    fn session_cache_agrees_with_counting_afresh() {
        let msgs: Vec<Arc<Message>> = vec![
            Arc::new(Message::user(
                &b"Please read the file and fix the failing test."[..],
            )),
            Arc::new(Message::new(
                crate::transcript::Role::Assistant,
                vec![Block::tool_use(
                    "c1",
                    "read_file",
                    r#"{"path":"src/main.rs"}"#,
                )],
                false,
                None,
            )),
        ];
        for e in Estimator::ALL {
            let cached = Measure::for_session(e, &msgs);
            let fresh = Measure::new(e);
            for m in &msgs {
                assert_eq!(cached.message(m), fresh.message(m), "{e}");
                let rebuilt = m.with_content(m.content.clone());
                assert_eq!(cached.message(&rebuilt), fresh.message(m), "{e}");
            }
        }
    }

    #[test]
    fn names_round_trip_and_lists_parse() {
        for e in Estimator::ALL {
            assert_eq!(Estimator::parse(e.name()), Ok(e));
        }
        assert_eq!(
            Estimator::parse_list("o200k, bytes4,o200k").unwrap(),
            vec![Estimator::O200k, Estimator::Bytes4]
        );
        assert_eq!(
            Estimator::parse_list("all").unwrap(),
            Estimator::ALL.to_vec()
        );
        let e = Estimator::parse("gpt2").unwrap_err();
        assert_eq!(e, EstimatorError::Unknown("gpt2".into()));
        let e = e.to_string();
        assert!(e.contains("bytes4, chars4, o200k, cl100k, claude2"), "{e}");
        assert_eq!(
            Estimator::parse_list("bytes4,,o200k"),
            Err(EstimatorError::EmptyItem("bytes4,,o200k".into()))
        );
    }
}
