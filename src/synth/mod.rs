//! A seeded generator of realistic smith sessions, for tests, benchmarks
//! and the committed `datasets/`.
//!
//! A seed fixes everything, byte for byte and for good: the randomness is an
//! in-house xoshiro256** ([`rng`]) and nothing here depends on a crate's
//! choices (hash order, float formatting of transcendental functions).
//!
//! The pieces, from the inside out:
//! - [`project`]: the imaginary repository a session works on;
//! - [`code`], [`logs`], [`text`]: source files, command output, prose;
//! - [`tools`]: smith's tools, their arguments and their results;
//! - [`session`]: the agent loop, message by message ([`SessionGen`]);
//! - [`meta`]: `session.json` and the index entry;
//! - [`corpus`]: many sessions streamed to disk in smith's layout.
//!
//! ```no_run
//! use smith_calibrate::synth::{self, Shape, SessionSpec};
//! // One long session of about 10 MB, in memory.
//! let messages = synth::generate_session(42, SessionSpec::of_mb(Shape::Long, 10.0));
//! # let _ = messages;
//! ```

pub(crate) mod code;
pub(crate) mod corpus;
#[cfg(test)]
mod generator_tests;
pub(crate) mod logs;
pub(crate) mod meta;
pub(crate) mod project;
pub(crate) mod rng;
pub(crate) mod session;
pub(crate) mod text;
pub(crate) mod tools;
pub(crate) mod usage;
pub(crate) mod vocab;

use std::sync::Arc;

pub(crate) use corpus::{write_corpus, write_transcript};
pub use corpus::{write_session, CorpusSpec, SizeSpec};
pub use rng::Rng;
pub(crate) use session::SessionGen;
pub use session::{SessionSpec, Shape};

use crate::transcript::Message;

/// The session `seed` and `spec` determine, all messages in memory. For
/// big sessions prefer iterating [`SessionGen`] or [`write_transcript`].
pub fn generate_session(seed: u64, spec: SessionSpec) -> Vec<Message> {
    SessionGen::new(seed, spec).collect()
}

/// [`generate_session`] shared the way the replay takes a history.
pub fn generate_history(seed: u64, spec: SessionSpec) -> Vec<Arc<Message>> {
    SessionGen::new(seed, spec).map(Arc::new).collect()
}

/// The session as `transcript.jsonl` bytes: what a parser benchmark reads.
pub fn transcript_bytes(seed: u64, spec: SessionSpec) -> Vec<u8> {
    let mut out = Vec::with_capacity(spec.target_bytes as usize + (1 << 20));
    // Writing into a Vec cannot fail.
    let _ = write_transcript(seed, spec, &mut out);
    out
}
