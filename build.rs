//! Tells the tests where the shared real data is, and whether it is there;
//! and links the binary at a fixed address on Linux (see the end).
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
    link_at_a_fixed_address();
}

/// On Linux with glibc the binary is linked as an executable at a fixed
/// address rather than a position-independent one: loading that one means
/// rewriting some 72,000 pointers (the tables of polars and clap, among
/// others) in 1.6 MB of pages copied for the purpose, about 1 ms and 420
/// page faults of every start (3.1 → 2.1 ms for `--version`, measured with
/// `perf stat -r 200`), which is a third of a `--help` and 1.5% of
/// replaying a 26 MB session. What is given up is the randomised address
/// of the program's own code (the libraries, heap and stack keep theirs);
/// the tool reads logs, runs nothing it reads, and is written in safe Rust
/// but for a few SIMD loops. Tests and benches are linked as usual.
fn link_at_a_fixed_address() {
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
