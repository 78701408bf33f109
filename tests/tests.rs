//! The integration tests: one binary, so the crate and polars are linked
//! once rather than once per file, with one module per area and one helper
//! module (`common`). Every `tests/*.rs` must be declared here (Cargo's
//! automatic discovery is off); `every_test_file_is_compiled` fails if one is
//! forgotten.

#[path = "account.rs"]
mod account;
#[path = "bad_input.rs"]
mod bad_input;
#[path = "baseline.rs"]
mod baseline;
#[path = "bill.rs"]
mod bill;
#[path = "broken_folder.rs"]
mod broken_folder;
#[path = "calibrate.rs"]
mod calibrate;
mod common;
// The builders and fixtures the tests inside the crate use too.
#[path = "copies.rs"]
mod copies;
#[path = "cost_sweep.rs"]
mod cost_sweep;
#[path = "direct.rs"]
mod direct;
#[path = "engine_next.rs"]
mod engine_next;
#[path = "estimators.rs"]
mod estimators;
#[path = "help.rs"]
mod help;
#[path = "import_claude_code.rs"]
mod import_claude_code;
#[path = "import_mini_swe_agent.rs"]
mod import_mini_swe_agent;
#[path = "import_sidechain.rs"]
mod import_sidechain;
#[path = "install.rs"]
mod install;
#[path = "interrupt.rs"]
mod interrupt;
#[path = "knob_paths.rs"]
mod knob_paths;
#[path = "learned_ratio.rs"]
mod learned_ratio;
#[path = "pages_lead.rs"]
mod pages_lead;
#[path = "policies.rs"]
mod policies;
#[path = "price_validation.rs"]
mod price_validation;
#[path = "prices.rs"]
mod prices;
#[path = "progress.rs"]
mod progress;
#[path = "real_compactions.rs"]
mod real_compactions;
#[path = "real_data.rs"]
mod real_data;
#[path = "recipes.rs"]
mod recipes;
#[path = "recommend.rs"]
mod recommend;
#[path = "recorded.rs"]
mod recorded;
#[path = "report.rs"]
mod report;
#[path = "report_bill.rs"]
mod report_bill;
#[path = "report_kept.rs"]
mod report_kept;
#[path = "report_misfires.rs"]
mod report_misfires;
#[path = "restore.rs"]
mod restore;
#[path = "resume.rs"]
mod resume;
#[path = "samples.rs"]
mod samples;
#[path = "session_ids.rs"]
mod session_ids;
#[path = "session_pages.rs"]
mod session_pages;
#[path = "session_view.rs"]
mod session_view;
#[path = "shard.rs"]
mod shard;
#[path = "smith_parity.rs"]
mod smith_parity;
#[path = "summary_record.rs"]
mod summary_record;
#[path = "surfaces.rs"]
mod surfaces;
#[path = "sweep.rs"]
mod sweep;
#[path = "synth.rs"]
mod synth;
#[path = "terminal_width.rs"]
mod terminal_width;
#[path = "../src/test_support/mod.rs"]
mod test_support;
#[path = "transcript_cli.rs"]
mod transcript_cli;
#[path = "verdict.rs"]
mod verdict;

/// A test file left out of the list above would silently never run.
#[test]
fn every_test_file_is_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("tests.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/ is readable") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "tests" && !this.contains(&format!("#[path = \"{stem}.rs\"]\nmod {stem};")) {
                missing.push(name.to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "declare these in tests/tests.rs: {missing:?}"
    );
}
