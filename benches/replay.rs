//! Replay throughput against the parse alone, on generated sessions of 1, 10
//! and 50 MB. Run with `cargo bench --bench replay`.
//!
//! For each size it prints MB/s of transcript for:
//! - `serde_json (skim)`: every line parsed into `IgnoredAny`, the floor of
//!   any JSON reader;
//! - `serde_json (Value)`: every line parsed into a `serde_json::Value`, what
//!   "parsing the same bytes with serde_json alone" costs a program that
//!   keeps the data;
//! - `read`: this crate's reader, lines into `Message`s;
//! - `replay only`: the engine over the parsed messages at smith's defaults;
//! - `read + replay`: what `smith-calibrate replay --trace` does;
//! - `replay + loss`: the engine and the loss measure over the parsed
//!   messages (`loss::replay`), and `loss share`, the loss measure's time
//!   (that minus `replay only`) over `read + replay`: what the measure adds
//!   to what `smith-calibrate replay --json` does without it (goal: 0.5 or
//!   less);
//! - `all MB/s`: read, replay and loss, the reading and the replay on one
//!   thread (the index's lookups use rayon's), and `x trace`, its time
//!   over `read + replay`: the ratio of `replay --json` to `replay --trace`,
//!   which skips the loss measure, with no thread overlapping another;
//! - `file MB/s`, `trace MB/s`, `json MB/s`: what the commands do now, from
//!   a file: reading it (in parallel chunks from 4 MB on), then replaying
//!   (`--trace`), or replaying with the record index built on a second
//!   thread meanwhile (`loss::replay_observed_concurrently`, `--json`), and
//!   `x par`, `json` over `trace`.
//!
//! The goal: read + replay at most 1.5× the Value parse, and time per MB
//! flat across sizes (linear growth). `REPLAY_BENCH_MB=1,10,50` picks sizes.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use smith_calibrate::engine::{Config, Engine};
use smith_calibrate::synth::{self, SessionSpec, Shape};
use smith_calibrate::transcript::reader::{read_from, read_transcript};
use smith_calibrate::{loss, replay};

fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn lines(bytes: &[u8]) -> impl Iterator<Item = &str> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| std::str::from_utf8(l).expect("generated lines are UTF-8"))
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let sizes: Vec<f64> = std::env::var("REPLAY_BENCH_MB")
        .unwrap_or_else(|_| "1,10,50".into())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("REPLAY_BENCH_MB: numbers separated by commas")
        })
        .collect();
    let engine = Engine::new(Config::default());
    println!(
        "{:>7} {:>9} {:>8} {:>12} {:>12} {:>10} {:>12} {:>12} {:>9} {:>9} {:>10} {:>13} {:>10} {:>9} {:>8} {:>10} {:>10} {:>10} {:>6}",
        "size MB",
        "messages",
        "requests",
        "skim MB/s",
        "Value MB/s",
        "read MB/s",
        "replay MB/s",
        "read+rep MB/s",
        "x Value",
        "x read",
        "ms per MB",
        "rep+loss MB/s",
        "loss share",
        "all MB/s",
        "x trace",
        "file MB/s",
        "trace MB/s",
        "json MB/s",
        "x par"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    for mb in sizes {
        let bytes = synth::transcript_bytes(7, SessionSpec::of_mb(Shape::Long, mb));
        let size = bytes.len() as f64 / 1e6;
        let runs = if size < 5.0 {
            7
        } else if size < 20.0 {
            3
        } else {
            2
        };
        let skim = best_of(runs, || {
            for l in lines(&bytes) {
                black_box(serde_json::from_str::<serde::de::IgnoredAny>(l).ok());
            }
        });
        let value = best_of(runs, || {
            for l in lines(&bytes) {
                black_box(serde_json::from_str::<serde_json::Value>(l).ok());
            }
        });
        let read = best_of(runs, || {
            black_box(read_from(&bytes[..], Path::new("bench")).expect("in memory"));
        });
        let transcript = read_from(&bytes[..], Path::new("bench")).expect("in memory");
        let facts = replay::replay(&transcript.messages, &engine);
        let replay_only = best_of(runs, || {
            black_box(replay::replay(&transcript.messages, &engine));
        });
        let both = best_of(runs, || {
            let t = read_from(&bytes[..], Path::new("bench")).expect("in memory");
            black_box(replay::replay(&t.messages, &engine));
        });
        let with_loss = best_of(runs, || {
            black_box(loss::replay(&transcript.messages, &engine));
        });
        let all = best_of(runs, || {
            let t = read_from(&bytes[..], Path::new("bench")).expect("in memory");
            black_box(loss::replay(&t.messages, &engine));
        });
        let path = dir.path().join(format!("{mb}.jsonl"));
        std::fs::write(&path, &bytes).expect("the temporary file");
        let read_file = || read_transcript(&path).expect("the temporary file");
        let file = best_of(runs, || {
            black_box(read_file());
        });
        let trace = best_of(runs, || {
            black_box(replay::replay(&read_file().messages, &engine));
        });
        let json = best_of(runs, || {
            let t = read_file();
            black_box(loss::replay_observed_concurrently(
                &t.messages,
                &engine,
                None,
                |_| {},
            ));
        });
        let loss_share = with_loss.saturating_sub(replay_only).as_secs_f64() / both.as_secs_f64();
        let rate = |d: Duration| size / d.as_secs_f64();
        println!(
            "{:>7.1} {:>9} {:>8} {:>12.0} {:>12.0} {:>10.0} {:>12.0} {:>12.0} {:>9.2} {:>9.2} {:>10.2} {:>13.0} {:>10.2} {:>9.0} {:>8.2} {:>10.0} {:>10.0} {:>10.0} {:>6.2}",
            size,
            transcript.messages.len(),
            facts.requests,
            rate(skim),
            rate(value),
            rate(read),
            rate(replay_only),
            rate(both),
            both.as_secs_f64() / value.as_secs_f64(),
            both.as_secs_f64() / read.as_secs_f64(),
            both.as_secs_f64() * 1e3 / size,
            rate(with_loss),
            loss_share,
            rate(all),
            all.as_secs_f64() / both.as_secs_f64(),
            rate(file),
            rate(trace),
            rate(json),
            json.as_secs_f64() / trace.as_secs_f64(),
        );
        println!(
            "        compactions {} (summaries {}, results mangled {}), peak {} tokens",
            facts.compactions,
            facts.summaries,
            facts.effects.results_mangled(),
            facts.peak_tokens
        );
        // `transcript show --html`: replay, ledger and page in one pass.
        let mut page_bytes = 0;
        let page = best_of(runs, || {
            let html = smith_calibrate::view::web::page(
                &transcript.messages,
                &engine,
                "bench",
                &smith_calibrate::view::web::Shown {
                    config: "defaults",
                    units: smith_calibrate::sweep::units::TokenUnits::default().axis(),
                },
                0,
                replay::DEFAULT_THRASH_WINDOW,
                &smith_calibrate::view::web::Recorded::default(),
            );
            page_bytes = html.len();
            black_box(html);
        });
        println!(
            "        session page {:.0} MB/s ({:.1} MB of HTML), misfires: grew {} repeated {}",
            rate(page),
            page_bytes as f64 / 1e6,
            facts.misfire_grew,
            facts.misfire_repeated
        );
    }
    println!("peak RSS {:.0} MB", peak_rss_mb());
}
