//! The price table held to its sources: rows, aliases, unknown models.

use super::*;

/// Anthropic's five-minute cache write, as a multiple of the input price.
const WRITE_5M_MULTIPLIER: f64 = 1.25;
/// A cache read, as a multiple of the input price (Anthropic, Gemini and
/// OpenAI's GPT-5 family alike).
const READ_MULTIPLIER: f64 = 0.1;

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn anthropic_rows_follow_the_documented_multipliers() {
    for p in MODEL_PRICES
        .iter()
        .filter(|p| p.provider == "anthropic" && p.family != "Claude Haiku 3")
    {
        assert!(
            near(p.cache_write_5m, p.input * WRITE_5M_MULTIPLIER),
            "{}",
            p.family
        );
        assert!(
            near(p.cache_write_1h, p.input * WRITE_1H_MULTIPLIER),
            "{}",
            p.family
        );
        assert!(
            near(p.cache_read, p.input * READ_MULTIPLIER),
            "{}",
            p.family
        );
        for l in p.tiers {
            assert!(near(l.cache_write_5m, l.input * WRITE_5M_MULTIPLIER));
            assert!(near(l.cache_write_1h, l.input * WRITE_1H_MULTIPLIER));
            assert!(near(l.cache_read, l.input * READ_MULTIPLIER));
        }
    }
}

#[test]
fn openai_and_gemini_rows_write_at_the_input_price() {
    for p in MODEL_PRICES
        .iter()
        .filter(|p| p.cache != CacheKind::Explicit)
    {
        assert_eq!(p.cache_write_5m, p.input, "{}", p.family);
        assert_eq!(p.cache_write_1h, p.input, "{}", p.family);
        assert!(p.cache_read < p.input, "{}", p.family);
    }
}

/// Each model's row, by the ids the logs and smith's list use: one case
/// a line, `model id | family | input | output`, prices per million
/// tokens; `#` begins a comment.
fn assert_rows(cases: &str) {
    let cases = cases
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    for case in cases {
        let cells: Vec<&str> = case.split('|').map(str::trim).collect();
        let [model, family, input, output] = cells[..] else {
            panic!("{case}: not 4 cells");
        };
        let (input, output): (f64, f64) = (input.parse().unwrap(), output.parse().unwrap());
        let p = model_price(model).unwrap_or_else(|| panic!("{model}: no row"));
        assert_eq!(
            (p.family, p.input, p.output),
            (family, input, output),
            "{model}"
        );
    }
}

#[test]
fn every_claude_family_prices_its_models() {
    assert_rows(
        "
    claude-fable-5-2 | Claude Fable 5.2 | 8.0 | 40.0
    claude-fable-5 | Claude Fable 5 | 10.0 | 50.0
    claude-opus-5-5 | Claude Opus 5.5 | 4.0 | 20.0
    anthropic/claude-opus-5 | Claude Opus 5 | 5.0 | 25.0
    claude-opus-4-8 | Claude Opus 4.8 | 5.0 | 25.0
    # Under the Opus 4 row this was $15 per million input.
    claude-opus-4-7 | Claude Opus 4.7 | 5.0 | 25.0
    claude-opus-4-7-20260301 | Claude Opus 4.7 | 5.0 | 25.0
    claude-opus-4-6 | Claude Opus 4.5 / 4.6 | 5.0 | 25.0
    claude-opus-4-5-20251101 | Claude Opus 4.5 / 4.6 | 5.0 | 25.0
    anthropic/claude-opus-4.6 | Claude Opus 4.5 / 4.6 | 5.0 | 25.0
    claude-opus-4-1-20250805 | Claude Opus 4 / 4.1 | 15.0 | 75.0
    claude-opus-4-20250514 | Claude Opus 4 / 4.1 | 15.0 | 75.0
    claude-3-opus-20240229 | Claude 3 Opus | 15.0 | 75.0
    claude-sonnet-5-5 | Claude Sonnet 5 / 5.5 | 2.0 | 10.0
    claude-sonnet-5 | Claude Sonnet 5 / 5.5 | 2.0 | 10.0
    claude-sonnet-4-6 | Claude Sonnet 4.6 | 3.0 | 15.0
    claude-sonnet-4-5-20250929 | Claude Sonnet 4 / 4.5 | 3.0 | 15.0
    claude-sonnet-4-20250514 | Claude Sonnet 4 / 4.5 | 3.0 | 15.0
    claude-3-7-sonnet-20250219 | Claude Sonnet 3.5 / 3.7 | 3.0 | 15.0
    claude-3-5-sonnet-20241022 | Claude Sonnet 3.5 / 3.7 | 3.0 | 15.0
    claude-haiku-4-5-20251001 | Claude Haiku 4.5 | 1.0 | 5.0
    claude-3-5-haiku-20241022 | Claude Haiku 3.5 | 0.80 | 4.0
    claude-3-haiku-20240307 | Claude Haiku 3 | 0.25 | 1.25
    ",
    );
}

#[test]
fn every_openai_and_gemini_family_prices_its_models() {
    assert_rows(
        "
    gpt-5.5 | GPT-5.5 | 5.0 | 30.0
    gpt-5.4 | GPT-5.4 | 2.50 | 15.0
    openai/gpt-5.4-mini | GPT-5.4 mini | 0.75 | 4.50
    gpt-5.4-nano | GPT-5.4 nano | 0.20 | 1.25
    gpt-5.3-codex | GPT-5.2 / 5.3, and their Codex models | 1.75 | 14.0
    gpt-5.2-codex | GPT-5.2 / 5.3, and their Codex models | 1.75 | 14.0
    gpt-5.2 | GPT-5.2 / 5.3, and their Codex models | 1.75 | 14.0
    gpt-5.1-codex-max | GPT-5 / 5.1, and their Codex models | 1.25 | 10.0
    gpt-5-codex | GPT-5 / 5.1, and their Codex models | 1.25 | 10.0
    gpt-5-mini | GPT-5 mini | 0.25 | 2.0
    google/gemini-3-pro-preview | Gemini 3 Pro (preview) | 2.0 | 12.0
    gemini-2.5-pro | Gemini 2.5 Pro | 1.25 | 10.0
    gemini-2.5-flash | Gemini 2.5 Flash | 0.30 | 2.50
    ",
    );
}

#[test]
fn every_model_of_smiths_own_list_has_a_row() {
    for model in [
        "claude-fable-5",
        "claude-opus-5",
        "claude-opus-4-8",
        "claude-opus-4-7",
        "claude-opus-4-6",
        "claude-sonnet-5",
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
    ] {
        assert_eq!(lookup(model).how, How::Named, "{model}");
    }
}

#[test]
fn where_smith_and_the_provider_disagree_the_provider_prices_and_smith_is_told() {
    let sonnet = model_price("claude-sonnet-5-5").unwrap();
    assert_eq!((sonnet.input, sonnet.output), (2.0, 10.0));
    let note = smith_disagrees("claude-sonnet-5", model_price("claude-sonnet-5").unwrap());
    assert_eq!(
        note.as_deref(),
        Some("note: \"claude-sonnet-5\" is priced at the provider's 2/M input, 10/M output (Claude Sonnet 5 / 5.5); smith's own list (src/smith/pricing.cr) says 3/M and 15/M")
    );
    let agreeing: Vec<&str> = MODEL_PRICES
        .iter()
        .filter(|p| p.smith_differs.is_none() && p.source == SMITH_PRICING)
        .map(|p| p.family)
        .collect();
    assert!(agreeing.contains(&"Claude Opus 5"), "{agreeing:?}");
    assert_eq!(
        smith_disagrees("claude-opus-5", model_price("claude-opus-5").unwrap()),
        None
    );
}

#[test]
fn the_minimum_cacheable_prefix_follows_the_family() {
    let min = |m: &str| model_price(m).unwrap().min_cacheable;
    assert_eq!(min("claude-opus-5"), 512);
    assert_eq!(min("claude-opus-4-8"), 1024);
    assert_eq!(min("claude-opus-4-7"), 2048);
    assert_eq!(min("claude-opus-4-6"), 4096);
    assert_eq!(min("claude-haiku-4-5"), 4096);
    assert_eq!(min("claude-3-haiku"), 2048);
    assert_eq!(min("claude-sonnet-4-5"), 1024);
    assert_eq!(min("gpt-5.4"), 1024);
    assert_eq!(model_price("gpt-5.4").unwrap().cache_block, 128);
}

#[test]
fn long_prompts_are_billed_at_the_long_context_rates() {
    let sonnet = model_price("claude-sonnet-4-5").unwrap();
    assert_eq!(sonnet.at(200_000).input, 3.0);
    let long = sonnet.at(200_001);
    assert_eq!(
        (
            long.input,
            long.output,
            long.cache_read,
            long.cache_write_1h
        ),
        (6.0, 22.50, 0.60, 12.0)
    );
    assert!(sonnet.is_long(250_000));
    // Sonnet 4.6 and Opus 4.6 bill the 1M window at the standard rates.
    for m in ["claude-sonnet-4-6", "claude-opus-4-6"] {
        assert_eq!(
            model_price(m).unwrap().at(900_000).input,
            model_price(m).unwrap().input
        );
    }
    let gpt = model_price("gpt-5.4").unwrap();
    assert_eq!(
        (gpt.at(272_001).input, gpt.at(272_001).output),
        (5.0, 22.50)
    );
    assert_eq!(model_price("gemini-3-pro").unwrap().at(300_000).input, 4.0);
}

#[test]
fn a_model_in_no_table_is_priced_as_nothing() {
    for m in [
        "qwen3.6-plus",
        "claude-opus-4-9",
        "claude-sonnet-7",
        "claude-instant-1",
        "gpt-6-codex",
        "gpt-4o",
        "gemini-9-ultra",
        "llama3:8b",
        "",
    ] {
        let l = lookup(m);
        assert_eq!(l.how, How::Unpriced, "{m:?}");
        assert!(!l.row.is_priced(), "{m:?}");
        assert!(l.row.input.is_nan() && l.row.output.is_nan(), "{m:?}");
        assert_eq!(model_price(m), None, "{m:?}");
    }
    // Nothing is priced as Sonnet by default: the row of a model in no
    // table is its own, with its id as its family.
    assert_eq!(lookup("qwen3.6-plus").row.family, "qwen3.6-plus");
    assert_ne!(lookup("mystery").row.family, default_model().family);
    assert_eq!(context_window("qwen3.6-plus", 10), None);
    // Tokens at no price are unknown dollars, never 0.
    let t = crate::cost::bill::Tokens {
        input: 1_000,
        ..Default::default()
    };
    assert!(t.dollars(lookup("qwen3.6-plus").row).is_nan());
}

#[test]
fn the_providers_behind_compatible_apis_price_their_models() {
    assert_rows(
        "
    deepseek-v4-pro | DeepSeek V4 Pro | 0.435 | 0.87
    deepseek/deepseek-v4-pro | DeepSeek V4 Pro | 0.435 | 0.87
    deepseek-v4-flash | DeepSeek V4 Flash (deepseek-chat, deepseek-reasoner) | 0.14 | 0.28
    deepseek-reasoner | DeepSeek V4 Flash (deepseek-chat, deepseek-reasoner) | 0.14 | 0.28
    deepseek-chat | DeepSeek V4 Flash (deepseek-chat, deepseek-reasoner) | 0.14 | 0.28
    glm-5.1 | GLM-5.1 | 1.40 | 4.40
    glm-5-turbo | GLM-5 Turbo | 1.20 | 4.00
    glm-5 | GLM-5 | 1.00 | 3.20
    glm-4.7 | GLM-4.6 / 4.7 | 0.60 | 2.20
    z-ai/glm-4.6 | GLM-4.6 / 4.7 | 0.60 | 2.20
    glm-4.5-air | GLM-4.5 Air | 0.20 | 1.10
    glm-4.5 | GLM-4.5 | 0.60 | 2.20
    kimi-k2.6 | Kimi K2.6 | 0.95 | 4.00
    kimi-k2.5 | Kimi K2.5 | 0.60 | 3.00
    kimi-k2-turbo-preview | Kimi K2 Turbo / K2 Thinking Turbo | 1.15 | 8.00
    kimi-k2-thinking-turbo | Kimi K2 Turbo / K2 Thinking Turbo | 1.15 | 8.00
    kimi-k2-0905-preview | Kimi K2 (0905, 0711) / K2 Thinking | 0.60 | 2.50
    moonshotai/kimi-k2-thinking | Kimi K2 (0905, 0711) / K2 Thinking | 0.60 | 2.50
    ",
    );
    for p in MODEL_PRICES
        .iter()
        .filter(|p| ["deepseek", "zai", "moonshot"].contains(&p.provider))
    {
        // Automatic caching: no write premium, hits discounted, a source
        // and a window on every row.
        assert_eq!(p.cache, CacheKind::Automatic, "{}", p.family);
        assert!(p.cache_read < p.input / 3.0, "{}", p.family);
        assert!(p.source.starts_with("prices: ") || p.source.starts_with("not read"));
        assert!(p.source.contains("https://"), "{}", p.family);
        assert!(p.context_window >= 131_072, "{}", p.family);
    }
    let dollars = |m: &str| {
        // 1M input, 10M cache reads, 1M output: ccusage 20.0.24 (`claude
        // session --json --offline` on a one-request log of each) gives
        // $1.34125, $0.448, $3.90, $1.60, $6.20 and $4.60 for these.
        let t = crate::cost::bill::Tokens {
            input: 1_000_000,
            cache_read: 10_000_000,
            output: 1_000_000,
            ..Default::default()
        };
        (t.dollars(model_price(m).unwrap()) * 1e6).round() / 1e6
    };
    assert_eq!(dollars("deepseek-v4-pro"), 1.34125);
    assert_eq!(dollars("deepseek-v4-flash"), 0.448);
    assert_eq!(dollars("glm-4.7"), 3.9);
    assert_eq!(dollars("glm-4.5-air"), 1.6);
    assert_eq!(dollars("glm-5"), 6.2);
    assert_eq!(dollars("kimi-k2.5"), 4.6);
}

#[test]
fn a_proxys_alias_is_priced_as_its_model_and_said_to_be() {
    for (m, family) in [
        ("claude-opus-4.6-1m", "Claude Opus 4.5 / 4.6"),
        ("claude-opus-4.6-fast", "Claude Opus 4.5 / 4.6"),
        ("claude-opus-4-6-fast-1m", "Claude Opus 4.5 / 4.6"),
        (
            "openrouter/anthropic/claude-sonnet-4.5-1m",
            "Claude Sonnet 4 / 4.5",
        ),
    ] {
        let l = lookup(m);
        assert_eq!((l.row.family, l.how), (family, How::Alias), "{m}");
    }
    // A router's prefix, dots or dashes: the model's own id.
    for m in [
        "anthropic/claude-opus-4.6",
        "claude-opus-4-6",
        "claude-opus-4.6",
    ] {
        assert_eq!(lookup(m).how, How::Named, "{m}");
    }
    assert_eq!(
        alias_note("claude-opus-4.6-fast", lookup("claude-opus-4.6-fast").row),
        "claude-opus-4.6-fast: priced as Claude Opus 4.5 / 4.6 (alias)"
    );
    assert_eq!(context_window("claude-opus-4.6-1m", 10), Some(LONG_WINDOW));
    assert_eq!(
        context_window("claude-opus-4.6-fast", 10),
        Some(CLAUDE_WINDOW)
    );
}

#[test]
fn prices_given_for_a_model_price_it_at_its_own_rows_caching() {
    let qwen = given_row(&GivenPrice {
        model: "qwen3-coder-plus".into(),
        prices: Prices {
            input: 1.0,
            cache_write: 1.0,
            cache_read: 0.2,
        },
        output: Some(5.0),
    });
    assert!(qwen.is_priced());
    assert_eq!((qwen.input, qwen.cache_read, qwen.output), (1.0, 0.2, 5.0));
    let rows = [("qwen3-coder-plus".to_string(), &*Box::leak(Box::new(qwen)))];
    let l = lookup_in(&rows, "alibaba/qwen3-coder-plus");
    assert_eq!(
        (l.how, l.row.family),
        (How::Given, "qwen3-coder-plus (--price)")
    );
    // Without an output price a model in no table stays unpriced.
    let half = given_row(&GivenPrice {
        model: "mystery".into(),
        prices: Prices {
            input: 1.0,
            cache_write: 1.0,
            cache_read: 0.1,
        },
        output: None,
    });
    assert!(!half.is_priced());
    // A known model keeps its row's caching, output and window.
    let glm = given_row(&GivenPrice {
        model: "glm-4.7".into(),
        prices: Prices {
            input: 0.5,
            cache_write: 0.5,
            cache_read: 0.1,
        },
        output: None,
    });
    assert_eq!((glm.output, glm.context_window), (2.2, 200_000));
}

#[test]
fn the_models_in_no_table_are_named_once_with_their_sessions_and_requests() {
    let mut u = Unpriced::default();
    u.add_session(["qwen3.6-plus", "qwen3.6-plus", "claude-opus-4-6"]);
    u.add_session(["qwen3.6-plus", "mystery"]);
    u.add_session(["deepseek-v4-pro"]);
    assert_eq!(
        u.line().unwrap(),
        "warning: 2 models in no price table, so not priced: mystery (1 session, 1 request), qwen3.6-plus (2 sessions, 3 requests); their tokens are counted, their dollars are unknown (give --price MODEL=input,cache_write,cache_read,output)"
    );
    assert_eq!(Unpriced::default().line(), None);
}

#[test]
fn ollama_is_free_and_every_other_provider_bills_the_model() {
    assert_eq!(price_for(Some("ollama"), "llama3:8b").input, 0.0);
    assert_eq!(price_for(Some("Ollama"), "claude-opus-4-6").output, 0.0);
    assert_eq!(
        price_for(Some("openrouter"), "anthropic/claude-opus-4.6").family,
        "Claude Opus 4.5 / 4.6"
    );
    assert_eq!(price_for(Some("openai"), "gpt-5.4").input, 2.50);
    assert_eq!(price_for(None, "claude-sonnet-4-6").input, 3.0);
}

#[test]
fn the_sweeps_default_price_is_sonnets_row_unchanged() {
    let p = Prices::default();
    assert_eq!((p.input, p.cache_write, p.cache_read), (3.0, 3.75, 0.30));
    assert_eq!(default_model().family, "Claude Sonnet 4 / 4.5");
}

#[test]
fn deepseeks_rates_follow_the_hour_a_request_was_sent() {
    let pro = model_price("deepseek-v4-pro").unwrap();
    let at = |t: &str| {
        let row = pro.at_time(crate::time::parse_rfc3339(t));
        (row.input, row.cache_read, row.output)
    };
    // Each as ccusage 20.0.24 bills a request of that time.
    assert_eq!(at("2026-08-14T08:00:00Z"), (0.435, 0.003625, 0.87));
    assert_eq!(at("2026-08-17T08:00:00Z"), (1.32, 0.044, 3.96));
    assert_eq!(at("2026-11-18T00:59:59Z"), (0.66, 0.022, 1.98));
    assert_eq!(at("2026-11-18T01:00:00Z"), (1.32, 0.044, 3.96));
    assert_eq!(at("2026-11-18T04:00:00Z"), (0.66, 0.022, 1.98));
    assert_eq!(at("2026-11-18T09:59:59Z"), (1.32, 0.044, 3.96));
    assert_eq!(at("2026-11-18T10:00:00Z"), (0.66, 0.022, 1.98));
    // A Saturday morning is off-peak.
    assert_eq!(at("2026-11-21T08:00:00Z"), (0.66, 0.022, 1.98));
    assert_eq!(pro.at_time(None).input, 0.435);
    let flash = model_price("deepseek-chat").unwrap();
    let peak = flash.at_time(crate::time::parse_rfc3339("2026-11-20T08:00:00Z"));
    assert_eq!(
        (peak.input, peak.cache_read, peak.output),
        (0.44, 0.014, 1.32)
    );
    // Each hour's row is found by its family, as the bill check's price
    // list looks it up.
    assert_eq!(by_family(peak.family), Some(peak));
}

#[test]
fn every_rows_tiers_rise_and_model_studio_rows_follow_the_explicit_cache() {
    for p in &MODEL_PRICES {
        let thresholds: Vec<u64> = p.tiers.iter().map(|t| t.above).collect();
        assert!(thresholds.windows(2).all(|w| w[0] < w[1]), "{}", p.family);
    }
    let studio: Vec<&ModelPrice> = MODEL_PRICES
        .iter()
        .filter(|p| p.provider == "alibaba")
        .collect();
    assert_eq!(studio.len(), 5);
    for p in studio {
        // Model Studio's explicit cache, which Claude Code's marks use: a
        // write at 125% of the tier's input, a hit at 10%, one lifetime.
        let own = tier(
            0,
            [
                p.input,
                p.output,
                p.cache_write_5m,
                p.cache_write_1h,
                p.cache_read,
            ],
        );
        for t in std::iter::once(&own).chain(p.tiers) {
            assert!(near(t.cache_write_5m, t.input * 1.25), "{} {t:?}", p.family);
            assert_eq!(t.cache_write_1h, t.cache_write_5m, "{}", p.family);
            assert!(
                near(t.cache_read, t.input * READ_MULTIPLIER),
                "{} {t:?}",
                p.family
            );
        }
        assert_eq!((p.cache, p.min_cacheable), (CacheKind::Explicit, 1024));
        assert!(p
            .source
            .contains("https://www.alibabacloud.com/help/en/model-studio/"));
    }
}

#[test]
fn a_qwen_request_is_billed_at_the_tier_its_input_falls_in() {
    let plus = model_price("qwen3-coder-plus").unwrap();
    let at = |p: &ModelPrice, prompt: u64| {
        let r = p.at(prompt);
        (p.tier(prompt), r.input, r.output)
    };
    // Each boundary belongs to the tier below it (0 < input ≤ 32K, …).
    assert_eq!(at(plus, 1), (0, 1.0, 5.0));
    assert_eq!(at(plus, 32_000), (0, 1.0, 5.0));
    assert_eq!(at(plus, 32_001), (1, 1.8, 9.0));
    assert_eq!(at(plus, 128_000), (1, 1.8, 9.0));
    assert_eq!(at(plus, 128_001), (2, 3.0, 15.0));
    assert_eq!(at(plus, 256_000), (2, 3.0, 15.0));
    assert_eq!(at(plus, 256_001), (3, 6.0, 60.0));
    assert_eq!(at(plus, 1_000_000), (3, 6.0, 60.0));
    let flash = model_price("qwen3-coder-flash").unwrap();
    assert_eq!(at(flash, 32_001), (1, 0.5, 2.5));
    assert_eq!(at(flash, 256_001), (3, 1.6, 9.6));
    let max = model_price("qwen3-max").unwrap();
    assert_eq!(at(max, 32_000), (0, 1.2, 6.0));
    assert_eq!(at(max, 128_001), (2, 3.0, 15.0));
    for (m, base, above) in [
        ("qwen-plus", (0.4, 1.2), (1.2, 3.6)),
        ("qwen-flash", (0.05, 0.4), (0.25, 2.0)),
    ] {
        let p = model_price(m).unwrap();
        assert_eq!(at(p, 256_000), (0, base.0, base.1), "{m}");
        assert_eq!(at(p, 256_001), (1, above.0, above.1), "{m}");
        assert!(!p.is_long(256_000) && p.is_long(256_001), "{m}");
    }
    // The tier's cache rates come with it.
    let third = plus.at(150_000);
    assert_eq!((third.cache_write_5m, third.cache_read), (3.75, 0.30));
    // Anthropic's one threshold is the one-tier case.
    let sonnet = model_price("claude-sonnet-4-5").unwrap();
    assert_eq!((sonnet.tier(200_000), sonnet.tier(200_001)), (0, 1));
    assert_eq!(sonnet.at_tier(1), sonnet.at(u64::MAX));
}

#[test]
fn a_qwen_request_per_tier_costs_its_tiers_rates_by_hand() {
    // One qwen3-coder-plus request per tier (input, cache write, cache
    // read, output), its prompt the three first together. ccusage 20.0.24
    // (`claude session --json --offline`, a one-request log of each) gives
    // $0.0105 for the first and $0.01525, $0.037 and $0.0845 for the
    // others: it bills every request at the 0–32K rates, Model Studio's
    // tiers not applied.
    let cases = [
        ((10_000, 0, 0, 100), 0.0105),
        // 5,000 × $1.80 + 5,000 × $2.25 + 30,000 × $0.18 + 200 × $9.
        ((5_000, 5_000, 30_000, 200), 0.02745),
        // 10,000 × $3 + 10,000 × $3.75 + 130,000 × $0.30 + 300 × $15.
        ((10_000, 10_000, 130_000, 300), 0.111),
        // 20,000 × $6 + 30,000 × $7.50 + 250,000 × $0.60 + 400 × $60.
        ((20_000, 30_000, 250_000, 400), 0.519),
    ];
    let plus = model_price("qwen3-coder-plus").unwrap();
    for (i, ((input, write, read, output), usd)) in cases.into_iter().enumerate() {
        let t = crate::cost::bill::Tokens {
            input,
            cache_write_5m: write,
            cache_read: read,
            output,
            ..Default::default()
        };
        let prompt = input + write + read;
        assert_eq!(plus.tier(prompt), i);
        let got = t.dollars(&plus.at(prompt));
        assert!((got - usd).abs() < 1e-12, "tier {i}: {got} vs {usd}");
    }
}

#[test]
fn qwen_ids_with_a_router_prefix_or_a_date_name_their_row() {
    for (m, family) in [
        ("qwen3-coder-plus", "Qwen3 Coder Plus"),
        ("qwen/qwen3-coder-plus", "Qwen3 Coder Plus"),
        ("dashscope/qwen3-coder-plus", "Qwen3 Coder Plus"),
        ("qwen3-coder-plus-2025-07-22", "Qwen3 Coder Plus"),
        ("qwen3-coder-plus-2025-09-23", "Qwen3 Coder Plus"),
        ("qwen3-coder-flash-2025-07-28", "Qwen3 Coder Flash"),
        ("qwen3-max-2026-01-23", "Qwen3 Max"),
        ("qwen3-max-preview", "Qwen3 Max"),
        ("qwen-plus-latest", "Qwen Plus"),
        ("qwen-plus-2025-09-11", "Qwen Plus"),
        ("qwen-flash-2025-07-28", "Qwen Flash"),
        // OpenAI dates its snapshots the same way.
        ("gpt-5-2025-08-07", "GPT-5 / 5.1, and their Codex models"),
    ] {
        let l = lookup(m);
        assert_eq!((l.row.family, l.how), (family, How::Named), "{m}");
    }
    // A later version is not a date: `qwen3-coder-plus-2` is not the model.
    for m in [
        "qwen3-coder-plus-2",
        "qwen3.6-plus",
        "qwen3-coder-plus-2025-7",
    ] {
        assert_eq!(lookup(m).how, How::Unpriced, "{m}");
    }
    assert_eq!(context_window("qwen3-max", 10), Some(262_144));
    assert_eq!(context_window("qwen3-coder-plus", 10), Some(1_000_000));
}
