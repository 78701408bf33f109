//! Tells the tests where the shared real data is, and whether it is there.
//!
//! Tests that read the shared data (real Claude Code logs and mini-swe-agent
//! runs, `../shared/data` beside the repository where the project is
//! developed, absent in a user's clone) carry
//! `#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]`, so
//! that without the data the test runner lists them as ignored instead of
//! passing them without a check. This script sets `has_shared_data` when the
//! directory exists and passes its path on as `SHARED_DATA_DIR`
//! (`tests/common::shared_data` reads it).
//!
//! Two variables override it: `SMITH_CALIBRATE_SHARED_DATA=<dir>` names
//! another place (a git worktree is not beside `shared/`), and
//! `SMITH_CALIBRATE_NO_SHARED_DATA=1` builds as if the data were absent, to
//! see the ignored listing without moving anything.

use std::path::PathBuf;

const PLACE: &str = "SMITH_CALIBRATE_SHARED_DATA";
const OFF: &str = "SMITH_CALIBRATE_NO_SHARED_DATA";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(has_shared_data)");
    println!("cargo::rerun-if-env-changed={PLACE}");
    println!("cargo::rerun-if-env-changed={OFF}");
    println!("cargo::rerun-if-changed=build.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let data = match std::env::var_os(PLACE) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => manifest.join("../shared/data"),
    };
    println!("cargo::rustc-env=SHARED_DATA_DIR={}", data.display());
    // Watching the directory makes cargo re-check it on every build; when it
    // is absent there is nothing to watch, and a copy that appears later is
    // noticed after `touch build.rs`.
    if data.is_dir() {
        println!("cargo::rerun-if-changed={}", data.display());
    }
    let off = std::env::var(OFF).is_ok_and(|v| !v.is_empty() && v != "0");
    if data.is_dir() && !off {
        println!("cargo::rustc-cfg=has_shared_data");
    }
}
