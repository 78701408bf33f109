//! Fixtures shared by `src/estimate/estimator_tests.rs` and `tests/estimators.rs`.
#![allow(dead_code)]

use smith_calibrate::transcript::{self};
use std::path::{Path, PathBuf};

pub(crate) const DATASET_DIR: &str = "datasets/sessions";

// ---------------------------------------------------------------------------
// bytes4 parity with the code before estimators.

pub(crate) fn dataset() -> Vec<PathBuf> {
    let mut refs: Vec<PathBuf> = transcript::locate::resolve_path(Path::new(DATASET_DIR))
        .expect("the committed dataset")
        .into_iter()
        .map(|r| r.transcript)
        .collect();
    refs.sort();
    refs
}
