//! Fixtures shared by `src/sweep/grid_tests.rs` and `tests/sweep.rs`.
#![allow(dead_code)]

use smith_calibrate::engine::Config;
use smith_calibrate::policy::Setup;
use smith_calibrate::replay::SessionFacts;

/// smith under each config.
pub(crate) fn smith(configs: &[Config]) -> Vec<Setup> {
    configs.iter().copied().map(Setup::smith).collect()
}

// Field by field: the integration tests see only the public fields.
#[allow(clippy::field_reassign_with_default)]
pub(crate) fn facts(
    requests: usize,
    tokens_sent: i64,
    cache_read: i64,
    mangled: u64,
    peak: i64,
) -> SessionFacts {
    let mut f = SessionFacts::default();
    f.requests = requests;
    f.tokens_sent = tokens_sent;
    f.cache_read = cache_read;
    f.cache_write = tokens_sent - cache_read;
    f.peak_tokens = peak;
    f.effects.results_truncated = mangled;
    f
}
