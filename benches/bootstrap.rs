//! The cost of the paired bootstrap every sweep and `recommend` draw: the
//! intervals of 100 configs over a few hundred and a few thousand sessions
//! with the default 10,000 resamples, on all cores.
//!
//! Run with `cargo bench --bench bootstrap` (release). Settings, optional:
//! `BOOTSTRAP_BENCH_CONFIGS` (default 100), `BOOTSTRAP_BENCH_RESAMPLES`
//! (default 10,000).

use std::time::Instant;

use smith_calibrate::sweep::bootstrap::{intervals, Bootstrap, DEFAULT_RESAMPLES};
use smith_calibrate::synth::Rng;

fn env_num(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

fn main() {
    let configs = env_num("BOOTSTRAP_BENCH_CONFIGS", 100);
    let resamples = env_num("BOOTSTRAP_BENCH_RESAMPLES", DEFAULT_RESAMPLES);
    let draws = Bootstrap { seed: 1, resamples };
    println!(
        "{:>8} {:>8} {:>8} {:>10} {:>10} {:>14}",
        "configs", "sessions", "changed", "resamples", "ms", "M products/s"
    );
    // Every session changed by every config (the worst case), and a third
    // of them (a real corpus, where most sessions never reach a trigger).
    for (sessions, changed) in [(300, 1.0), (2000, 1.0), (300, 0.33), (2000, 0.33)] {
        let mut rng = Rng::new(sessions as u64);
        // Of the sessions changed, most change little, a few a lot.
        let changes: Vec<Vec<[f64; 2]>> = (0..configs)
            .map(|_| {
                (0..sessions)
                    .map(|_| {
                        if !rng.chance(changed) {
                            return [0.0, 0.0];
                        }
                        let big = rng.chance(0.1);
                        let x = rng.unit() - 0.6;
                        [if big { x * 5.0 } else { x * 0.05 }, rng.below(4) as f64]
                    })
                    .collect()
            })
            .collect();
        // The baseline's price per session; each change is at most its
        // whole.
        let baseline: Vec<[f64; 2]> = (0..sessions).map(|_| [5.0 + rng.unit(), 4.0]).collect();
        // One run to warm the threads, then the best of three.
        let _ = intervals(&baseline, &changes, &draws);
        let best = (0..3)
            .map(|_| {
                let t = Instant::now();
                let iv = intervals(&baseline, &changes, &draws);
                assert_eq!(iv.len(), configs);
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        let products = (configs * sessions * resamples * 2) as f64;
        println!(
            "{configs:>8} {sessions:>8} {changed:>8} {resamples:>10} {:>10.0} {:>14.0}",
            best * 1e3,
            products / best / 1e6
        );
    }
}
