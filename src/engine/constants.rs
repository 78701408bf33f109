//! Every number and string that the replay must agree on with smith, in one
//! place, each with the reason it has the value it has.
//!
//! These mirror smith's `Context` module (`src/smith/context.cr`). A change
//! here is a change of parity: the tests in `src/engine/rules_tests.rs` assert the
//! exact bytes of every marker below.

/// The commit of smith's `src/smith/context.cr` whose behaviour this engine
/// reproduces, as a macro so that `concat!` can build `--version` from it.
#[macro_export]
macro_rules! smith_revision {
    () => {
        "e533ff4"
    };
}

/// [`smith_revision!`] as a constant. `--version` names it, so a user can
/// tell which smith a verdict speaks for.
pub const SMITH_REVISION: &str = smith_revision!();

/// Bytes of a stale tool result that survive truncation. smith keeps a head so
/// the call keeps an identity; 512 bytes is small enough that hundreds of
/// truncated results still fit a window (smith's `OLD_RESULT_BYTES`).
pub(crate) const OLD_RESULT_BYTES: usize = 512;

/// Written into every truncated result and recognised later: a result that
/// already carries it collapses to a one-line stub instead of keeping its
/// head forever.
pub(crate) const TRUNCATION_MARKER: &str = "truncated by smith to stay within the context window";

/// Written into a read that a later identical read superseded; also
/// recognised by truncation, which collapses such a stub further.
pub(crate) const SUPERSEDED_MARKER: &str = "superseded by a later identical call";

/// Replaces an attachment once its turn is over. It names the file so the
/// model can ask for it again instead of facing a hole it cannot see.
pub(crate) const MEDIA_MARKER: &str =
    "removed to stay within the context window; mention it again to re-attach it";

/// Real turns left alone by the lossy stages (0b, 1, 2). Three cover "read the
/// file, edit it, run the tests" whole.
pub(crate) const RECENCY_WINDOW_TURNS: usize = 3;

/// Real turns whose thinking survives stage 0. One: Anthropic validates the
/// signatures of the current turn's thinking, so that turn must go back byte
/// for byte; older turns' thinking is worthless to the model.
pub(crate) const THINKING_WINDOW_TURNS: usize = 1;

/// Tools whose repeated identical call makes the earlier result redundant.
/// `bash` is deliberately absent: `make test` twice is a before and an after,
/// not a duplicate.
pub(crate) const SUPERSEDABLE_TOOLS: [&str; 3] = ["read_file", "grep", "glob"];

/// The four bytes to a token of smith's estimate. It is defined with the
/// data model, which sizes a message by it (as it does by the image and
/// document figures, `transcript::estimate`, and the label of an attachment
/// without a source, `transcript::model`), and named here beside the rest of
/// smith's numbers.
pub(crate) use crate::transcript::estimate::BYTES_PER_TOKEN;

/// The prefix of the user message that replaces summarised turns.
pub(crate) const SUMMARY_PREFIX: &str = "Summary of the earlier conversation: ";

/// The tail of the drop text, used when the summarizer fails: the full text is
/// `"<N>" + DROP_SUFFIX` with N the number of messages dropped.
pub(crate) const DROP_SUFFIX: &str = " earlier messages were dropped to stay within the context window. Ask the user if you need details from before this point.";

/// smith clamps the ratio it learns to this range (`RATIO_MIN`,
/// `RATIO_MAX`): below 1 a bytes / 4 estimate would be trusted to overcount,
/// above 2 a measurement error is likelier than a real ratio.
pub(crate) const RATIO_MIN: f64 = 1.0;
/// The upper bound of smith's learned ratio.
pub(crate) const RATIO_MAX: f64 = 2.0;

/// How far smith moves its ratio towards each new observation
/// (`RATIO_SMOOTHING`): low enough that one odd request cannot put a session
/// into permanent compaction.
pub(crate) const RATIO_SMOOTHING: f64 = 0.3;

/// smith's defaults for the knobs of [`crate::engine::Config`].
pub(crate) mod defaults {
    /// The context window smith assumes when nothing else is configured.
    pub(crate) const MAX_TOKENS: u64 = 120_000;
    /// 80 rather than 85: one repo-wide grep is tens of thousands of tokens,
    /// and at 85 it lands over the window before compaction is consulted.
    pub(crate) const COMPACT_AT: f64 = 0.80;
    /// 50 rather than 60: each compaction costs a full cache write of the
    /// surviving prefix, so halving how often it runs beats marginal fidelity.
    pub(crate) const COMPACT_TO: f64 = 0.50;
    /// Provider tokens over estimated tokens; 1.0 until calibrated.
    pub(crate) const RATIO: f64 = 1.0;
    /// Everything in a request that is not history; unknown offline, so 0.
    pub(crate) const OVERHEAD_TOKENS: u64 = 0;
    /// Size of the offline stand-in for a model-written summary.
    pub(crate) const SUMMARY_TOKENS: u64 = 1_000;
}
