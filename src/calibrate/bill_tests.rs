//! The bill check on hand-made logs whose usage is known: what the log's
//! reading finds (causes, misses, the account) and what the recorded
//! replay's meter predicts of each request.

use std::collections::HashSet;
use std::sync::Arc;

use crate::cost::bill::*;
use crate::cost::CacheTtl;
use crate::transcript::measured::{self, AgentRun, Measured};
use crate::transcript::session_file::{
    CompactBoundary, RequestRecord, RequestUsage, SessionFile, Source, FORMAT_CLAUDE_CODE,
};
use crate::transcript::{Block, Message, Role};

const OPUS: &str = "claude-opus-4-6";

/// A request answered by message `index`, `prompt` tokens of which the
/// log says `read` came from the cache, sent at `second`,
/// writing in the `tier` lifetime.
fn req(
    index: usize,
    model: &str,
    prompt: u64,
    read: u64,
    second: i64,
    tier: CacheTtl,
) -> (RequestUsage, RequestRecord) {
    let write = prompt - read - 3;
    (
        RequestUsage {
            message_index: index,
            input_tokens: 3,
            cache_creation_input_tokens: write,
            cache_read_input_tokens: read,
            output_tokens: 100,
            model: Some(model.into()),
            key: None,
        },
        RequestRecord {
            message_index: index,
            timestamp: Some(crate::time::format_rfc3339(1_770_000_000 + second)),
            cache_write_5m: Some(if tier == CacheTtl::OneHour { 0 } else { write }),
            cache_write_1h: Some(if tier == CacheTtl::OneHour { write } else { 0 }),
            ..RequestRecord::default()
        },
    )
}

fn file(reqs: Vec<(RequestUsage, RequestRecord)>) -> SessionFile {
    let (requests, request_records) = reqs.into_iter().unzip();
    SessionFile {
        id: "s".into(),
        source: Source {
            format: FORMAT_CLAUDE_CODE.into(),
            ..Source::default()
        },
        requests,
        request_records,
        ..SessionFile::default()
    }
}

/// The transcript a hand-made log stands for: before each request's
/// answer a user message (`first`, else 400 bytes), the answers 80 bytes;
/// measured and run as an import's are.
struct Built {
    messages: Vec<Arc<Message>>,
    measured: Option<Measured>,
    run: Option<Arc<AgentRun>>,
}

fn built(f: &SessionFile, first: Option<&Message>) -> Built {
    let answers: HashSet<usize> = f.requests.iter().map(|r| r.message_index).collect();
    let last = answers.iter().copied().max().unwrap_or(0);
    let mut messages: Vec<Arc<Message>> = (0..=last)
        .map(|i| {
            Arc::new(if answers.contains(&i) {
                Message::new(
                    Role::Assistant,
                    vec![Block::text("z".repeat(80).as_bytes())],
                    false,
                    None,
                )
            } else if i == 0 && first.is_some() {
                first.cloned().expect("checked")
            } else {
                Message::user("q".repeat(400).as_bytes())
            })
        })
        .collect();
    let measured = measured::of_file(f, &messages);
    if let Some(m) = &measured {
        measured::apply(m, &mut messages);
    }
    let run = Some(Arc::new(AgentRun::of(f, measured.as_ref())));
    Built {
        messages,
        measured,
        run,
    }
}

/// The bill check of `files` under `settings`, each with its own
/// transcript, a fixed prompt of 20 000 tokens and `ratio`.
fn check_with(
    files: &[SessionFile],
    settings: &Settings,
    built: &[Built],
    ratio: f64,
) -> Vec<SessionCheck> {
    let outlines: Vec<crate::transcript::outline::Outline> = built
        .iter()
        .map(|b| crate::transcript::outline::Outline::of(&b.messages))
        .collect();
    let inputs: Vec<Input> = files
        .iter()
        .zip(built)
        .zip(&outlines)
        .map(|((f, b), outline)| Input {
            label: f.id.clone(),
            file: f,
            messages: &b.messages,
            outline,
            fixed_prefix: 20_000,
            ratio,
            measured: b.measured.as_ref(),
            run: b.run.as_ref(),
        })
        .collect();
    let priced = crate::cost::session::Settings {
        ttl: settings.ttl,
        min_cacheable: settings.min_cacheable,
        prices: None,
        parts: settings.parts,
    };
    super::recorded::check_all(&inputs, &priced, &|_| 1_000_000, &|_| String::new()).bill
}

fn check(files: &[SessionFile], settings: &Settings) -> Vec<SessionCheck> {
    let built: Vec<Built> = files.iter().map(|f| built(f, None)).collect();
    check_with(files, settings, &built, 1.0)
}

fn run(f: &SessionFile, settings: Settings) -> SessionCheck {
    check(std::slice::from_ref(f), &settings).remove(0)
}

/// Each input's view of the account.
fn accounts(files: &[SessionFile], settings: &Settings) -> Vec<Option<unlogged::AccountView>> {
    let inputs: Vec<Input> = files
        .iter()
        .map(|f| Input {
            label: f.id.clone(),
            file: f,
            messages: &[],
            outline: &crate::transcript::outline::EMPTY,
            fixed_prefix: 20_000,
            ratio: 1.0,
            measured: None,
            run: None,
        })
        .collect();
    crate::cost::bill::accounts(&inputs, settings)
}

/// Every part on, the lifetime from the records.
const AUTO: Settings = Settings {
    ttl: None,
    min_cacheable: None,
    parts: Parts::ALL_ON,
};

const PER_SESSION: Parts = Parts::ALL_ON.without(Part::SharedCache);
const LOG_ALONE: Parts = Parts::ALL_ON
    .without(Part::ColdReadShare)
    .without(Part::EvictionShare);

#[test]
fn a_warm_cache_serves_the_previous_prompt_and_the_rest_is_written() {
    let f = file(vec![
        req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
        req(3, OPUS, 60_000, 50_000, 30, CacheTtl::FiveMinutes),
    ]);
    let c = run(&f, AUTO);
    let d = &c.detail[1];
    assert_eq!(d.predicted.cache_read, 50_000);
    assert_eq!(d.predicted.cache_write_5m, 10_000);
    assert_eq!((d.cold, d.miss), (None, None));
    assert!(c.ttl_applied);
}

#[test]
fn a_gap_longer_than_the_five_minute_lifetime_reads_nothing() {
    let f = file(vec![
        req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
        req(3, OPUS, 60_000, 0, 301, CacheTtl::FiveMinutes),
    ]);
    let d = &run(&f, AUTO).detail[1];
    assert_eq!(d.predicted.cache_read, 0);
    assert_eq!(d.predicted.cache_write_5m, 60_000);
    assert_eq!(d.cold, Some(Cause::TtlExpiry));
    assert_eq!(d.miss, Some(Cause::TtlExpiry));
}

#[test]
fn the_one_hour_tier_survives_the_same_gap_and_costs_twice_the_input() {
    let f = file(vec![
        req(1, OPUS, 50_000, 0, 0, CacheTtl::OneHour),
        req(3, OPUS, 60_000, 50_000, 301, CacheTtl::OneHour),
    ]);
    let c = run(&f, AUTO);
    let d = &c.detail[1];
    assert_eq!(d.cold, None);
    assert_eq!(d.predicted.cache_write_1h, 10_000);
    let opus = crate::cost::table::model_price(OPUS).unwrap();
    let write_only = Tokens {
        cache_write_1h: 1_000_000,
        ..Tokens::default()
    };
    assert_eq!(write_only.dollars(opus), 2.0 * opus.input);
    // A fixed lifetime overrides the records, and `none` never expires.
    let d = &run(
        &f,
        Settings {
            ttl: Some(CacheTtl::FiveMinutes),
            ..AUTO
        },
    )
    .detail[1];
    assert_eq!(d.cold, Some(Cause::TtlExpiry));
    let c = run(
        &f,
        Settings {
            ttl: Some(CacheTtl::None),
            ..AUTO
        },
    );
    assert_eq!(c.detail[1].cold, None);
    assert!(!c.ttl_applied);
}

#[test]
fn below_the_minimum_cacheable_prefix_everything_is_plain_input() {
    // Opus 4.6 caches from 4096 tokens on.
    let f = file(vec![
        req(1, OPUS, 4000, 0, 0, CacheTtl::FiveMinutes),
        req(3, OPUS, 4090, 0, 10, CacheTtl::FiveMinutes),
    ]);
    let d = &run(&f, AUTO).detail[1];
    assert_eq!(d.predicted.input, 4090);
    assert_eq!(d.predicted.cache_write(), 0);
    let d = &run(
        &f,
        Settings {
            min_cacheable: Some(1024),
            ..AUTO
        },
    )
    .detail[1];
    assert_eq!(d.predicted.cache_read, 4000);
}

#[test]
fn after_the_agents_compaction_only_the_fixed_prompt_is_read() {
    let mut f = file(vec![
        req(1, OPUS, 150_000, 0, 0, CacheTtl::FiveMinutes),
        req(5, OPUS, 40_000, 21_000, 60, CacheTtl::FiveMinutes),
    ]);
    f.compact_boundaries.push(CompactBoundary {
        message_index: 3,
        requests_before: 1,
        summary_bytes: Some(200),
        summary: Some("s".repeat(200)),
        ..CompactBoundary::default()
    });
    // The first question holds all of the first prompt but 20 100 tokens
    // of fixed prompt (129 900 tokens at 4 bytes a token).
    let question = Message::user("q".repeat(4 * 129_900).as_bytes());
    let b = [built(&f, Some(&question))];
    let at = |parts: Parts| {
        let s = Settings { parts, ..AUTO };
        check_with(std::slice::from_ref(&f), &s, &b, 1.0).remove(0)
    };
    // The fixed prompt as given (20 000), not fitted from the log's one
    // partial read (21 000).
    let given = AUTO.parts.without(Part::FixedPromptFit);
    let c = at(given);
    let d = &c.detail[1];
    assert_eq!(d.predicted.cache_read, 20_000);
    assert_eq!(d.cold, Some(Cause::AgentCompaction));
    assert_eq!(d.miss, Some(Cause::AgentCompaction));
    // Fitted, 21 000: no more than the replay's own prefix across the
    // summary, the fixed prompt as measured.
    assert_eq!(at(AUTO.parts).detail[1].predicted.cache_read, 20_100);
    // Off, that prefix is read whatever the fixed prompt.
    let off = at(given.without(Part::CompactionCause));
    assert_eq!(off.detail[1].predicted.cache_read, 20_100);
}

#[test]
fn a_model_the_session_has_not_used_reads_nothing_and_an_unexplained_miss_is_named() {
    let f = file(vec![
        req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
        req(3, "claude-haiku-4-5", 30_000, 0, 5, CacheTtl::FiveMinutes),
        req(5, OPUS, 60_000, 50_000, 10, CacheTtl::FiveMinutes),
        req(7, OPUS, 70_000, 1000, 15, CacheTtl::FiveMinutes),
    ]);
    let c = run(&f, AUTO);
    assert_eq!(c.detail[1].cold, Some(Cause::ModelSwitch));
    assert_eq!(c.detail[1].miss, Some(Cause::ModelSwitch));
    // Back on Opus, its own cache is still warm.
    assert_eq!(c.detail[2].predicted.cache_read, 50_000);
    assert_eq!(c.detail[2].miss, None);
    assert_eq!(c.detail[3].miss, Some(Cause::Unexplained));
    let s = &summarize(&[c])[0];
    // Its writes and its plain input: all it sent again.
    assert_eq!(s.misses[&Cause::Unexplained].cache_write, 70_000 - 1000);
    assert!(s.attributed < 0.9);
}

#[test]
fn a_miss_that_reads_a_length_another_request_read_is_an_early_eviction() {
    // Session b opens reading the fixed prompt (17 504 tokens) that a
    // kept warm; later, with nothing changed and within the lifetime,
    // a reads only that prefix again, then a length no one else read.
    let files = vec![
        session(
            "a",
            None,
            vec![
                req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
                req(3, OPUS, 60_000, 50_000, 30, CacheTtl::FiveMinutes),
                req(5, OPUS, 70_000, 17_504, 60, CacheTtl::FiveMinutes),
                req(7, OPUS, 80_000, 70_000, 90, CacheTtl::FiveMinutes),
                req(9, OPUS, 90_000, 23_456, 120, CacheTtl::FiveMinutes),
            ],
        ),
        session(
            "b",
            None,
            vec![req(1, OPUS, 40_000, 17_504, 10, CacheTtl::FiveMinutes)],
        ),
    ];
    let checks = check(&files, &AUTO);
    let a = checks.iter().find(|c| c.session == "a").unwrap();
    assert_eq!(a.detail[2].cold, None, "nothing in the log made it cold");
    assert_eq!(a.detail[2].miss, Some(Cause::EarlyEviction));
    assert_eq!(a.detail[4].miss, Some(Cause::Unexplained));
    // The prediction does not know of it: the full previous prompt.
    assert_eq!(a.detail[2].predicted.cache_read, 60_000);
    let s = &summarize(&checks)[0];
    assert_eq!(s.misses[&Cause::EarlyEviction].cache_write, 70_000 - 17_504);
    // Read lengths in whole blocks (OpenAI's) are no evidence.
    let mut openai = files.clone();
    for f in &mut openai {
        f.provider = Some("openai".into());
        for r in &mut f.requests {
            r.model = Some("gpt-5.4".into());
        }
    }
    let checks = check(&openai, &AUTO);
    let a = checks.iter().find(|c| c.session == "a").unwrap();
    assert_eq!(a.detail[2].miss, Some(Cause::Unexplained));
}

#[test]
fn the_short_tail_says_how_much_of_its_error_is_the_first_request() {
    // Short sessions an hour apart: none finds another's prompt warm,
    // yet "late" recorded reading 15 000 tokens at its first request.
    let mut files: Vec<SessionFile> = (0..20)
        .map(|k| {
            session(
                &format!("s{k}"),
                None,
                vec![
                    req(1, OPUS, 30_000, 0, 3600 * k, CacheTtl::FiveMinutes),
                    req(
                        3,
                        OPUS,
                        40_000,
                        30_000,
                        3600 * k + 20,
                        CacheTtl::FiveMinutes,
                    ),
                ],
            )
        })
        .collect();
    files.push(session(
        "late",
        None,
        vec![
            req(1, OPUS, 30_000, 15_000, 3600 * 30, CacheTtl::FiveMinutes),
            req(
                3,
                OPUS,
                40_000,
                30_000,
                3600 * 30 + 20,
                CacheTtl::FiveMinutes,
            ),
        ],
    ));
    let checks = check(&files, &AUTO);
    let s = &summarize(&checks)[0];
    let tail = s.short_tail.as_ref().unwrap();
    let late = checks.iter().find(|c| c.session == "late").unwrap();
    assert!(late.error > 0.1, "{}", late.error);
    assert_eq!(tail.sessions, 1, "{tail:?}");
    assert_eq!(tail.first_read_unforeseen, 1);
    assert_eq!(tail.first_read_overestimated, 0);
    // All but the rest's recorded 3 tokens of plain input per request.
    assert!(tail.first_request_share > 0.999, "{tail:?}");
    assert!((tail.recorded_usd - late.recorded_usd).abs() < 1e-12);
    // The rest of every session is priced right.
    assert!(tail.p95_error_first_as_recorded < 1e-3, "{tail:?}");
    assert!(tail
        .describe()
        .contains("100% of their dollar error is their first request"));
}

/// A session `id` of `kind` made of `reqs`.
fn session(id: &str, agent: Option<&str>, reqs: Vec<(RequestUsage, RequestRecord)>) -> SessionFile {
    let mut f = file(reqs);
    f.id = id.into();
    f.source.agent_id = agent.map(str::to_string);
    f.created_at = f.request_records.first().and_then(|r| r.timestamp.clone());
    f
}

/// A session `id` of a first request at `second` reading `first_read`,
/// then `warm` requests ten seconds apart each reading the previous
/// prompt, except those in `evicted`, which read only 20 000 tokens.
fn run_of(id: &str, second: i64, first_read: u64, warm: usize, evicted: &[usize]) -> SessionFile {
    let mut reqs = vec![req(
        1,
        OPUS,
        30_000,
        first_read,
        second,
        CacheTtl::FiveMinutes,
    )];
    for k in 1..=warm {
        let prompt = 30_000 + 1_000 * k as u64;
        let read = if evicted.contains(&k) {
            20_000
        } else {
            prompt - 1_000
        };
        let at = second + 10 * k as i64;
        reqs.push(req(
            2 * k + 1,
            OPUS,
            prompt,
            read,
            at,
            CacheTtl::FiveMinutes,
        ));
    }
    session(id, None, reqs)
}

#[test]
fn a_cold_request_reads_the_fixed_prompt_as_often_as_the_other_sessions_did() {
    // 22 sessions an hour apart, so none keeps another's prompt warm;
    // all but s0 found the fixed prompt cached all the same.
    let files: Vec<SessionFile> = (0..22)
        .map(|k| {
            run_of(
                &format!("s{k}"),
                3600 * k,
                if k == 0 { 0 } else { 20_000 },
                2,
                &[],
            )
        })
        .collect();
    let checks = check(&files, &AUTO);
    let of = |id: &str| checks.iter().find(|c| c.session == id).unwrap();
    // s0 is priced by the 21 others (all read it), not by its own record.
    assert_eq!(of("s0").detail[0].predicted.cache_read, 20_000);
    // s1 by s0's miss and the 20 others' reads.
    assert_eq!(of("s1").detail[0].predicted.cache_read, 19_048);
    assert_eq!(of("s1").detail[0].cold, None);
    // None of it counts as a read another logged session cached.
    assert_eq!(of("s1").shared_reads, 0);
    let s = &summarize(&checks)[0];
    let main = s.unlogged.iter().find(|u| u.kind == Kind::Main).unwrap();
    assert_eq!(
        (main.fit.warm_elsewhere.seen, main.fit.warm_elsewhere.events),
        (22, 21)
    );
    // Alone on the log, the first request reads what the log shows.
    let alone = check(&files[..1], &AUTO);
    assert_eq!(alone[0].detail[0].predicted.cache_read, 0);
    let plain = check(
        &files,
        &Settings {
            parts: LOG_ALONE,
            ..AUTO
        },
    );
    assert_eq!(plain[1].session, "s1");
    assert_eq!(plain[1].detail[0].predicted.cache_read, 0);
}

#[test]
fn early_evictions_are_priced_by_the_share_the_other_sessions_lost() {
    let files = vec![
        run_of("a", 0, 0, 30, &[14, 16, 18, 20, 22]),
        run_of("b", 3600, 0, 30, &[]),
        run_of("c", 7200, 0, 30, &[]),
    ];
    let checks = check(&files, &AUTO);
    let of = |id: &str| checks.iter().find(|c| c.session == id).unwrap();
    // a's own evictions do not price a: each warm request reads all
    // of the previous prompt.
    let a = of("a");
    assert_eq!(a.detail[14].miss, Some(Cause::EarlyEviction));
    for k in 1..=30 {
        assert_eq!(a.detail[k].predicted.cache_read, 29_000 + 1_000 * k as u64);
    }
    // b and c are priced by a's: of every warm prefix past the fixed
    // prompt, the share a lost of its own.
    let (b, c) = (of("b"), of("c"));
    for k in 1..=30 {
        let full = 29_000 + 1_000 * k as u64;
        assert!(b.detail[k].predicted.cache_read < full, "{k}");
        assert_eq!(b.detail[k].predicted, c.detail[k].predicted, "{k}");
    }
    // The share is what a lost of what a, b and c held warm, less b's
    // own (none lost): lost / (a's + c's at risk).
    let at_risk: u64 = (1..=30u64).map(|k| 9_000 + 1_000 * k).sum();
    let lost: u64 = [14u64, 16, 18, 20, 22]
        .iter()
        .map(|k| 9_000 + 1_000 * k)
        .sum();
    let share = lost as f64 / (2 * at_risk) as f64;
    let k = 5;
    let full = 29_000 + 1_000 * k as u64;
    let expect = full - ((full - 20_000) as f64 * share).round() as u64;
    assert_eq!(b.detail[k].predicted.cache_read, expect);
    assert!(b.predicted_usd > b.recorded_usd);
}

#[test]
fn a_replay_is_priced_by_the_shares_and_warm_prompts_the_check_priced_by() {
    // As above, and d starts 15 s into a's run, whose prompt is warm.
    let files = vec![
        run_of("a", 0, 0, 30, &[14, 16, 18, 20, 22]),
        run_of("b", 3600, 0, 30, &[]),
        run_of("c", 7200, 0, 30, &[]),
        run_of("d", 15, 20_000, 2, &[]),
    ];
    let checks = check(&files, &AUTO);
    let views = accounts(&files, &AUTO);
    let b = checks.iter().find(|c| c.session == "b").unwrap();
    let view_b = views[1].as_ref().unwrap();
    // The share the check priced b's warm requests by is the view's.
    let k = 5;
    let full = 29_000 + 1_000 * k as u64;
    let lost = ((full - 20_000) as f64 * view_b.evicted(10)).round() as u64;
    assert!(lost > 0);
    assert_eq!(b.detail[k].predicted.cache_read, full - lost);
    // d's first request (message 1) found a's prompt warm; a's did not
    // find another's, nor did b's, and no cold request finds the fixed
    // prompt elsewhere in these logs.
    assert_eq!(views[3].as_ref().unwrap().cold_read(1), 1.0);
    assert_eq!(views[0].as_ref().unwrap().cold_read(1), 0.0);
    assert_eq!(view_b.cold_read(1), 0.0);
    // Each session alone: no warm prompt of another; the logs alone: no
    // shares.
    let alone = accounts(
        &files,
        &Settings {
            parts: PER_SESSION,
            ..AUTO
        },
    );
    assert_eq!(alone[3].as_ref().unwrap().cold_read(1), 0.0);
    assert_eq!(alone[1].as_ref().unwrap().evicted(10), view_b.evicted(10));
    let plain = accounts(
        &files,
        &Settings {
            parts: LOG_ALONE,
            ..AUTO
        },
    );
    assert_eq!(plain[1].as_ref().unwrap().evicted(10), 0.0);
    assert_eq!(plain[3].as_ref().unwrap().cold_read(1), 1.0);
}

#[test]
fn one_account_one_cache_a_new_session_reads_the_fixed_prompt_another_kept_warm() {
    let files = vec![
        session(
            "a",
            None,
            vec![
                req(1, OPUS, 30_000, 20_000, 0, CacheTtl::FiveMinutes),
                req(3, OPUS, 40_000, 30_000, 200, CacheTtl::FiveMinutes),
            ],
        ),
        // Within five minutes of a's last request: warm.
        session(
            "b",
            None,
            vec![req(1, OPUS, 25_000, 20_000, 400, CacheTtl::FiveMinutes)],
        ),
        // Long after: cold.
        session(
            "c",
            None,
            vec![req(1, OPUS, 25_000, 0, 2_000, CacheTtl::FiveMinutes)],
        ),
        // A subagent sends other tools and another system prompt.
        session(
            "d",
            Some("a1"),
            vec![req(1, OPUS, 25_000, 0, 410, CacheTtl::FiveMinutes)],
        ),
    ];
    let checks = check(&files, &AUTO);
    let first = |id: &str| &checks.iter().find(|c| c.session == id).unwrap().detail[0];
    assert_eq!(first("b").predicted.cache_read, 20_000);
    assert_eq!(first("c").predicted.cache_read, 0);
    assert_eq!(first("d").predicted.cache_read, 0);
    assert_eq!(summarize(&checks)[0].shared_reads, 1);
    // Priced alone, nothing is shared.
    let alone = check(
        &files,
        &Settings {
            parts: PER_SESSION,
            ..AUTO
        },
    );
    let b = alone.iter().find(|c| c.session == "b").unwrap();
    assert_eq!(b.detail[0].predicted.cache_read, 0);
    assert_eq!(summarize(&alone)[0].shared_reads, 0);
}

#[test]
fn a_request_answered_at_the_moment_another_was_sent_had_not_cached_anything_yet() {
    // Two subagents started together: neither finds the other's prompt.
    let files = vec![
        session(
            "x",
            Some("a1"),
            vec![req(1, OPUS, 25_000, 0, 100, CacheTtl::FiveMinutes)],
        ),
        session(
            "y",
            Some("a2"),
            vec![req(1, OPUS, 25_000, 0, 100, CacheTtl::FiveMinutes)],
        ),
    ];
    let checks = check(&files, &AUTO);
    assert!(checks.iter().all(|c| c.detail[0].predicted.cache_read == 0));
}

#[test]
fn a_compaction_agent_without_its_parent_reads_all_but_its_instruction() {
    let instruction = Message::user("x".repeat(4000).as_bytes());
    let f = session(
        "cc-p-agent-acompact-1",
        Some("acompact-1"),
        vec![req(1, OPUS, 150_000, 149_000, 0, CacheTtl::FiveMinutes)],
    );
    let b = [built(&f, Some(&instruction))];
    let c = check_with(std::slice::from_ref(&f), &AUTO, &b, 1.5).remove(0);
    // 4000 bytes / 4 × 1.5 = 1500 tokens of instruction.
    assert_eq!(c.detail[0].predicted.cache_read, 148_500);
}

#[test]
fn each_request_is_billed_at_its_families_rates_and_the_check_names_them() {
    let mut f = file(vec![
        req(1, "claude-sonnet-4-5", 150_000, 0, 0, CacheTtl::FiveMinutes),
        req(
            3,
            "claude-sonnet-4-5",
            250_000,
            150_000,
            10,
            CacheTtl::FiveMinutes,
        ),
        req(5, "claude-opus-4-7", 30_000, 0, 20, CacheTtl::FiveMinutes),
    ]);
    f.provider = Some("anthropic".into());
    let c = run(&f, AUTO);
    let sonnet = crate::cost::table::model_price("claude-sonnet-4-5").unwrap();
    // Above 200k the whole request is at the long-context rates.
    assert!(c.detail[1].long_context && !c.detail[0].long_context);
    let d = &c.detail[1];
    let at_long = d.predicted.dollars(&sonnet.at(250_000));
    assert!(
        (d.predicted_usd - at_long).abs() < 1e-12,
        "{} {at_long}",
        d.predicted_usd
    );
    assert!(d.predicted_usd > d.predicted.dollars(sonnet));
    // Opus 4.7 at $5 per million input, not Opus 4's $15.
    assert_eq!(c.detail[2].family, "Claude Opus 4.7");
    let s = &summarize(&[c])[0];
    let families: Vec<(&str, usize, usize)> = s
        .prices
        .iter()
        .map(|p| (p.family.as_str(), p.requests, p.long_context_requests))
        .collect();
    assert_eq!(
        families,
        [("Claude Sonnet 4 / 4.5", 2, 1), ("Claude Opus 4.7", 1, 0)]
    );
    assert_eq!(s.prices[1].input, 5.0);
    // Ollama bills nothing.
    let mut local = file(vec![req(
        1,
        "llama3:8b",
        30_000,
        0,
        0,
        CacheTtl::FiveMinutes,
    )]);
    local.provider = Some("ollama".into());
    let c = run(&local, AUTO);
    assert_eq!(c.predicted_usd, 0.0);
    assert_eq!(c.recorded_usd, 0.0);
}

#[test]
fn the_fixed_prompt_is_the_median_partial_read() {
    let f = file(vec![
        req(1, OPUS, 50_000, 18_000, 0, CacheTtl::FiveMinutes),
        req(3, OPUS, 150_000, 50_000, 5, CacheTtl::FiveMinutes),
        req(5, OPUS, 40_000, 21_000, 10, CacheTtl::FiveMinutes),
        req(7, OPUS, 45_000, 19_000, 15, CacheTtl::FiveMinutes),
    ]);
    assert_eq!(fit_fixed_prefix(&[&f]), Some(19_000));
    assert_eq!(fit_fixed_prefix(&[&file(vec![])]), None);
}
