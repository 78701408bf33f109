# Everyday recipes. `just --list` shows them.

# The main job: sweep the bundled sessions and write a report.
sweep:
    cargo run --release -- sweep datasets/sessions --compact-at 0.7,0.8,0.9 --compact-to 0.4..0.6:0.1 --report reports/datasets

# The test suite, as CI runs it (release profile: reuses the main build).
test:
    cargo test --release

# Formatting and lints, as CI checks them.
lint:
    cargo fmt --check
    cargo clippy --release --all-targets -- -D warnings

# A release build with line tables, for perf / flamegraphs:
# target/profiling/smith-calibrate (builds the dependencies once more).
profile:
    cargo build --profile profiling

# Everything CI does.
ci:
    bash .ci/run

# Benchmarks (release build): replay and sweep throughput, peak RSS.
bench:
    cargo bench --bench replay
    cargo bench --bench sweep
    cargo bench --bench merge
    cargo bench --bench logs

# Regenerate the committed datasets (see datasets/README.md).
datasets:
    cargo run --release -- synth --seed 15 --sessions 12 --min-mb 0.05 --max-mb 1.3 --out datasets/sessions

# Fuzz each target for MINUTES minutes (needs cargo-fuzz).
fuzz minutes="10":
    cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run parse_line -- -max_total_time=$(( {{minutes}} * 60 ))
    cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run compact -- -max_total_time=$(( {{minutes}} * 60 ))
