//! Tells the tests whether the shared real data is here.
//!
//! Tests that read `../shared/data` (real Claude Code logs and
//! mini-swe-agent runs, present where the project is developed and absent
//! in a user's clone) carry
//! `#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]`,
//! so that without the data the test runner lists them as ignored instead
//! of passing them without a check. This script sets `has_shared_data` when
//! the directory exists, unless `SMITH_CALIBRATE_NO_SHARED_DATA` is set to
//! anything but `0` or nothing (to see the ignored listing without moving
//! the data away).

use std::path::Path;

const OVERRIDE: &str = "SMITH_CALIBRATE_NO_SHARED_DATA";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(has_shared_data)");
    println!("cargo::rerun-if-env-changed={OVERRIDE}");
    println!("cargo::rerun-if-changed=build.rs");
    let data = Path::new("../shared/data");
    // Watching the directory makes cargo re-check it (and its files) on
    // every build; when it is absent there is nothing to watch, and a copy
    // that appears later is noticed after `touch build.rs`.
    if data.is_dir() {
        println!("cargo::rerun-if-changed=../shared/data");
    }
    let forced_off = std::env::var(OVERRIDE).is_ok_and(|v| !v.is_empty() && v != "0");
    if data.is_dir() && !forced_off {
        println!("cargo::rustc-cfg=has_shared_data");
    }
}
