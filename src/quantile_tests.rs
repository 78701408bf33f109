//! One percentile for the whole crate: `calibrate`'s error table, the bill
//! check and the sweep's `configs.csv` print the p95 (and median) of the
//! same numbers as the same number, and no module grows a definition of
//! its own.

use std::path::Path;

use smith_calibrate::calibrate::{self, Point};
use smith_calibrate::cost::bill::{self, Kind, SessionCheck, Tokens};
use smith_calibrate::stats::{median_of, percentile_of};
use smith_calibrate::sweep::aggregate::stats;

/// Relative errors in thousandths, in no order. Seven of them, so nearest
/// rank (the 7th value, 0.300) and interpolation (0.27) tell apart at p95,
/// and the median is a value of the list either way.
const ERRORS_PERMILLE: [u64; 7] = [20, 100, 50, 300, 10, 70, 200];

fn errors() -> Vec<f64> {
    ERRORS_PERMILLE.iter().map(|&e| e as f64 / 1000.0).collect()
}

fn session(i: usize, error: f64) -> SessionCheck {
    SessionCheck {
        session: format!("s{i}"),
        format: "claude_code".into(),
        requests: 10,
        ttl_applied: false,
        fixed_prefix: 0,
        first_read: None,
        recorded: Tokens::default(),
        predicted: Tokens::default(),
        recorded_usd: 1.0,
        predicted_usd: 1.0 + error,
        // The check holds signed errors and reports their magnitude.
        error: if i % 2 == 0 { error } else { -error },
        billed_usd: None,
        unpriced_models: Vec::new(),
        shared_reads: 0,
        side_requests: Default::default(),
        compaction_agent: false,
        kind: Kind::Main,
        detail: Vec::new(),
    }
}

#[test]
fn calibrate_the_bill_check_and_the_configs_table_agree_on_the_p95() {
    let p95 = percentile_of(&mut errors(), 95.0).unwrap();
    let median = median_of(&mut errors()).unwrap();
    // Interpolated between the two closest ranks (crate::stats).
    assert!((p95 - 0.27).abs() < 1e-12, "{p95}");
    assert_eq!(median, 0.07);

    // calibrate: each point charged 1000 + e tokens against 1000 reported.
    let points: Vec<Point> = ERRORS_PERMILLE
        .iter()
        .enumerate()
        .map(|(i, &e)| Point {
            estimate: 1000 + e,
            reported: 1000,
            message_index: i,
        })
        .collect();
    let c = calibrate::errors(&points, 1.0, 0);
    assert_eq!((c.p95, c.median), (p95, median), "calibrate");

    // The bill check: one session per error.
    let checks: Vec<SessionCheck> = errors()
        .into_iter()
        .enumerate()
        .map(|(i, e)| session(i, e))
        .collect();
    let [b] = bill::summarize(&checks).try_into().expect("one format");
    assert_eq!((b.p95_error, b.median_error), (p95, median), "bill check");
    assert_eq!(
        (b.p95_error_short, b.median_error_short),
        (Some(p95), Some(median)),
        "bill check, short sessions"
    );

    // configs.csv: the distribution of a figure over sessions.
    let s = stats(&mut errors()).unwrap();
    assert_eq!((s.p95, s.median), (p95, median), "configs.csv");
}

#[test]
fn nothing_has_a_percentile_anywhere() {
    assert_eq!(percentile_of(&mut [], 95.0), None);
    assert!(stats(&mut []).is_none());
    let c = calibrate::errors(&[], 1.0, 0);
    assert!(
        c.median.is_nan() && c.p95.is_nan() && c.bias.is_nan(),
        "{c:?}"
    );
    // No session under 50 requests: no short-session percentile.
    let mut long = session(0, 0.1);
    long.requests = 60;
    let [b] = bill::summarize(&[long]).try_into().expect("one format");
    assert_eq!((b.p95_error_short, b.median_error_short), (None, None));
    assert_eq!(smith_calibrate::format::percent(c.p95), "–");
}

/// A fourth definition would come back as a function of its own or as
/// the middle element picked by hand; both are searched for in the sources.
#[test]
fn no_module_defines_a_percentile_of_its_own() {
    // Not percentiles of a figure: the fit's weighted median minimises a
    // weighted absolute error; the bootstrap's interval calls crate::stats.
    const ALLOWED: [&str; 2] = ["fn weighted_median", "fn percentile_interval"];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for path in crate::fn_length::sources(&src) {
        // This file names what it searches for.
        let this = src.join("quantile_tests.rs");
        if path == src.join("stats.rs") || path == this {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let defines = code.split("fn ").skip(1).any(|rest| {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let stat = ["quantile", "percentile", "median", "p95", "p50"]
                    .iter()
                    .any(|w| name.contains(w));
                let test = name.starts_with("the_") || name.contains("_is_");
                stat && !test && !ALLOWED.contains(&format!("fn {name}").as_str())
            });
            let by_hand = ["len() / 2]", "len() - 1) / 2", "saturating_sub(1) / 2"]
                .iter()
                .any(|p| code.contains(p));
            if defines || by_hand {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "use crate::stats instead:\n{}",
        found.join("\n")
    );
}
