//! What smith's estimate charges, in the terms of the data model: a block's
//! bytes, a flat figure per attachment, and four bytes to a token. These
//! belong to the transcript rather than to the engine because a message
//! knows its own size ([`super::Message::bytes`]); the engine, the policies
//! and the report read them from here (re-exported by
//! `engine::constants`, beside the rest of smith's numbers).

/// What an image is assumed to cost, in tokens: Anthropic caps an image near
/// 1600 tokens and smith does not parse dimensions, so it takes the ceiling.
pub(crate) const IMAGE_TOKENS: u64 = 1_600;

/// What a document (PDF) is assumed to cost, in tokens: page-count dependent
/// and regularly worse than an image, so a larger flat figure.
pub(crate) const DOCUMENT_TOKENS: u64 = 5_000;

/// Bytes per estimated token: smith's estimate is `bytes / 4`, divided once
/// over the whole history so per-message rounding cannot drift.
pub(crate) const BYTES_PER_TOKEN: u64 = 4;
