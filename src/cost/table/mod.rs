//! The price table: one row per model family that appears in the logs the
//! project calibrates on, in smith's own price list, or behind Claude Code
//! and Codex through a provider's compatible API (DeepSeek, Zhipu's GLM,
//! Moonshot's Kimi, Alibaba's Qwen), each number with where it came from
//! and when.
//!
//! Every price in the program comes from here: the sweep's default `--price`
//! (the [`DEFAULT_MODEL`] row), the bill check, and the per-model pricing of
//! imported sessions. Prices are dollars per million tokens, as the providers
//! quote them; the cache columns are written out rather than derived from
//! multipliers so that each figure is the provider's own (and `0.30` stays
//! `0.30`, not `3 × 0.1`). A test holds the Anthropic rows to the documented
//! multipliers (1.25 × input for a five-minute write,
//! [`WRITE_1H_MULTIPLIER`] for an hour's, 0.1 × input for a read), Claude
//! Haiku 3 excepted, whose published cache prices are rounded, and the
//! Model Studio rows to the explicit cache's (1.25 × input for a write,
//! 0.1 × for a hit), tier by tier.
//!
//! A model id picks its row by substring ([`ModelPrice::ids`], first match
//! wins), so a router's prefix (`anthropic/`, `openrouter/z-ai/`,
//! `qwen/`) and a dated snapshot (`-20250514`, `-2025-07-22`) name the
//! same row. A proxy's alias of a model (`claude-opus-4.6-1m`,
//! `claude-opus-4.6-fast`) is priced at the model's row and said once on
//! stderr. A model no row names is priced as nothing: its row
//! ([`unpriced`]) has no prices (`NaN`), so every sum it enters is unknown
//! and every surface writes it as unknown (`–`, `null`); its tokens are
//! still counted, and `--price MODEL=…` ([`set_given`]) supplies its rates.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde::Serialize;

use super::Prices;

mod rates;

use rates::tier;
pub(crate) use rates::{Schedule, Tier};

/// Anthropic's one-hour cache write, as a multiple of the input price: what
/// an hour's write costs under `--price`, which names only the five-minute
/// one.
pub(crate) const WRITE_1H_MULTIPLIER: f64 = 2.0;

/// How a provider caches prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CacheKind {
    /// The client marks what to cache; writing costs a premium by lifetime
    /// and reads are discounted (Anthropic).
    Explicit,
    /// The provider caches on its own: writing costs plain input and hits are
    /// discounted but not promised (Gemini's implicit caching).
    Implicit,
    /// The provider caches every prompt's prefix on its own, from a minimum
    /// length in fixed increments, with no write premium (OpenAI).
    Automatic,
    /// Nothing is billed (a local model).
    Free,
}

/// The prices of one model family.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ModelPrice {
    /// What the row covers, for people.
    pub family: &'static str,
    /// Who bills it: `anthropic`, `openai`, `google`, `ollama`.
    pub provider: &'static str,
    /// Substrings of a model id that pick this row (the first row with a
    /// match wins, so more specific rows come first).
    pub(crate) ids: &'static [&'static str],
    pub input: f64,
    pub(crate) output: f64,
    pub(crate) cache_write_5m: f64,
    pub(crate) cache_write_1h: f64,
    pub cache_read: f64,
    /// The rates of longer prompts, where the provider has them
    /// ([`Tier`]: long context, input-length steps), rising.
    #[serde(skip_serializing_if = "<[Tier]>::is_empty")]
    pub(crate) tiers: &'static [Tier],
    /// The shortest prefix the provider caches: below it a request pays full
    /// input and nothing is cached.
    pub min_cacheable: u64,
    /// Cache reads come in whole blocks of this many tokens (1: any
    /// length).
    pub(crate) cache_block: u64,
    pub(crate) cache: CacheKind,
    /// The model's context window in tokens (0: not known), the window a
    /// session of it ran under unless its log records another.
    pub(crate) context_window: u64,
    /// Where the numbers come from.
    pub(crate) source: &'static str,
    /// When they were read there.
    pub(crate) as_of: &'static str,
    /// smith's own input and output price (`src/smith/pricing.cr`) where it
    /// differs from the provider's page: the row prices by the provider,
    /// and [`price_of`] tells smith's maintainers once per model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) smith_differs: Option<[f64; 2]>,
    /// The rates from a later date, by the hour a request was sent, where
    /// the provider changed them ([`ModelPrice::at_time`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) schedule: Option<&'static Schedule>,
}

const ANTHROPIC_PRICING: &str = "prices: https://platform.claude.com/docs/en/about-claude/pricing; minimum cacheable prompt: https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const ANTHROPIC_LONG_CONTEXT: &str = "prices (long context above 200k input tokens): https://platform.claude.com/docs/en/about-claude/pricing#long-context-pricing; minimum cacheable prompt: https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const SMITH_PRICING: &str = "smith's own list (src/smith/pricing.cr, webmatze/smith e533ff4) and https://platform.claude.com/docs/en/about-claude/pricing; minimum cacheable prompt: https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const OPENAI_PRICING: &str = "prices: https://developers.openai.com/api/docs/pricing (standard tier); caching from 1024 tokens in 128-token steps: https://platform.openai.com/docs/guides/prompt-caching";
const GEMINI_PRICING: &str = "https://ai.google.dev/gemini-api/docs/pricing (and the per-response `cost` OpenRouter recorded in the trajectories)";
const GEMINI_CACHING: &str = "https://ai.google.dev/gemini-api/docs/pricing; minimum for implicit caching: https://ai.google.dev/gemini-api/docs/caching";

const DEEPSEEK_PRICING: &str = "prices: https://api-docs.deepseek.com/quick_start/pricing (read in archived copies of 2026-04 and 2026-05: V4-Pro at a quarter of its launch price, made permanent; cache hits at a tenth of launch since 2026-04-26; `deepseek-chat` and `deepseek-reasoner` are V4-Flash's non-thinking and thinking modes); automatic caching in 64-token units: https://api-docs.deepseek.com/guides/kv_cache";
const ZAI_PRICING: &str = "prices: https://docs.z.ai/guides/overview/pricing (as ccusage's fallback table quotes it, ccusage commit 72e2372, and as ccusage 20.0.24 prices it; the page itself not read here); automatic caching, cached-input storage free, no write price (a write is plain input); minimum and unit of a cache hit not documented";
const MOONSHOT_PRICING: &str = "prices: https://platform.moonshot.ai/docs/pricing/chat (archived 2026-03-26); automatic context caching, no write price (a write is plain input); minimum and unit of a cache hit not documented";
const MOONSHOT_K26: &str = "not read on Moonshot's own page: its K2.6 rates as third parties quote them (https://tokenmix.ai/blog/kimi-k2-api-pricing, https://developer.puter.com/tutorials/kimi-api-pricing/, 2026-05/06) and as ccusage 20.0.24 prices them; automatic context caching, no write price";

const MODEL_STUDIO_PRICING: &str = "prices (international deployment, Singapore, in USD): https://www.alibabacloud.com/help/en/model-studio/model-pricing, not read here: as models.dev's alibaba rows quote it (accessed 2026-08-26) and LiteLLM's dashscope rows; tiered by the request's input tokens (cached ones included; 32K read as 32,000, as both read it), the whole request at its tier's rates; the tiers' shape as https://help.aliyun.com/zh/model-studio/user-guide/qwen-coder writes it for Beijing. Context cache: https://www.alibabacloud.com/help/en/model-studio/context-cache: a request with cache_control marks (Claude Code marks every one) uses the explicit cache, writes at 125% of input and hits at 10%, from 1024 tokens, for 5 minutes renewed by a hit; an unmarked one (an OpenAI-compatible client) the implicit cache, writes at plain input and hits at 20%, from 256 tokens, which this row does not price; no one-hour cache documented, so a one-hour write is priced as a five-minute one; dated snapshots at the same rates, not cached";
const MODEL_STUDIO_THINKING: &str = "as the other Model Studio rows (https://www.alibabacloud.com/help/en/model-studio/model-pricing as models.dev quotes it, accessed 2026-08-26; context cache: https://www.alibabacloud.com/help/en/model-studio/context-cache), but output in thinking mode costs more ($4, above 256k $12 per million) and a log does not say which mode answered: priced at the non-thinking output";

/// Claude's context window (https://platform.claude.com/docs/en/about-claude/models/overview).
pub(crate) const CLAUDE_WINDOW: u64 = 200_000;
/// The window of Claude's 1M variants (`[1m]` in Claude Code's model name,
/// the `context-1m` beta on the API): a session whose recorded prompt
/// outgrew the model's window ran under it.
pub(crate) const LONG_WINDOW: u64 = 1_000_000;
/// GPT-5's context window on the API (https://platform.openai.com/docs/models);
/// a Codex rollout records the window it ran under, which wins.
pub(crate) const GPT5_WINDOW: u64 = 400_000;
/// Gemini's input limit (https://ai.google.dev/gemini-api/docs/models).
pub(crate) const GEMINI_WINDOW: u64 = 1_048_576;

/// The model whose prices are the sweep's default `--price`.
pub(crate) const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// The row of a model that costs nothing (Ollama: a local model costs
/// electricity, not tokens), picked by provider, never by model id.
pub(crate) const FREE: ModelPrice = ModelPrice {
    family: "local model (Ollama): free",
    provider: "ollama",
    ids: &[],
    input: 0.0,
    output: 0.0,
    cache_write_5m: 0.0,
    cache_write_1h: 0.0,
    cache_read: 0.0,
    tiers: &[],
    min_cacheable: 0,
    cache_block: 1,
    cache: CacheKind::Free,
    context_window: 0,
    source: "smith's own list (src/smith/pricing.cr): a local model costs electricity, not tokens",
    as_of: "2026-12",
    smith_differs: None,
    schedule: None,
};

/// An Anthropic row: `prices` are input, output, the 5-minute and 1-hour
/// cache writes and the cache read, as the pricing page lists them.
const fn claude(
    family: &'static str,
    prices: [f64; 5],
    min_cacheable: u64,
    source: &'static str,
    as_of: &'static str,
    ids: &'static [&'static str],
) -> ModelPrice {
    let [input, output, cache_write_5m, cache_write_1h, cache_read] = prices;
    ModelPrice {
        family,
        provider: "anthropic",
        ids,
        input,
        output,
        cache_write_5m,
        cache_write_1h,
        cache_read,
        tiers: &[],
        min_cacheable,
        cache_block: 1,
        cache: CacheKind::Explicit,
        context_window: CLAUDE_WINDOW,
        source,
        as_of,
        smith_differs: None,
        schedule: None,
    }
}

/// An OpenAI row: cached input at `cached`, writes at plain input.
const fn openai(
    family: &'static str,
    input: f64,
    cached: f64,
    output: f64,
    as_of: &'static str,
    ids: &'static [&'static str],
) -> ModelPrice {
    ModelPrice {
        family,
        provider: "openai",
        ids,
        input,
        output,
        cache_write_5m: input,
        cache_write_1h: input,
        cache_read: cached,
        tiers: &[],
        min_cacheable: 1024,
        cache_block: 128,
        cache: CacheKind::Automatic,
        context_window: GPT5_WINDOW,
        source: OPENAI_PRICING,
        as_of,
        smith_differs: None,
        schedule: None,
    }
}

/// A Google row: the columns of an Anthropic one ([`claude`]) and the
/// block its cache hits come in, billed by Google's implicit caching.
const fn gemini(
    family: &'static str,
    prices: [f64; 5],
    min_cacheable: u64,
    cache_block: u64,
    source: &'static str,
    as_of: &'static str,
    ids: &'static [&'static str],
) -> ModelPrice {
    ModelPrice {
        provider: "google",
        cache_block,
        cache: CacheKind::Implicit,
        context_window: GEMINI_WINDOW,
        ..claude(family, prices, min_cacheable, source, as_of, ids)
    }
}

/// A row of a provider reached through a compatible API that caches on its
/// own with no write premium (DeepSeek, Z.ai, Moonshot): cache hits at
/// `cached`, writes and misses at `input`; `min` and `block` the shortest
/// prefix it caches and the unit of a hit (0 and 1 where not documented).
#[allow(clippy::too_many_arguments)]
const fn compatible(
    family: &'static str,
    provider: &'static str,
    [input, cached, output]: [f64; 3],
    [min, block]: [u64; 2],
    context_window: u64,
    source: &'static str,
    as_of: &'static str,
    ids: &'static [&'static str],
) -> ModelPrice {
    ModelPrice {
        family,
        provider,
        ids,
        input,
        output,
        cache_write_5m: input,
        cache_write_1h: input,
        cache_read: cached,
        tiers: &[],
        min_cacheable: min,
        cache_block: block,
        cache: CacheKind::Automatic,
        context_window,
        source,
        as_of,
        smith_differs: None,
        schedule: None,
    }
}

/// An Alibaba Cloud Model Studio row (international, Singapore), as Claude
/// Code reaches it through the Anthropic-compatible API: `prices` are
/// input, output, cache write and cache hit of a prompt up to the first
/// tier's threshold, the explicit context cache's (a write at 125% of
/// input, a hit at 10%, from 1024 tokens), the same write for both
/// lifetimes.
const fn model_studio(
    family: &'static str,
    [input, output, write, read]: [f64; 4],
    context_window: u64,
    source: &'static str,
    ids: &'static [&'static str],
) -> ModelPrice {
    ModelPrice {
        family,
        provider: "alibaba",
        ids,
        input,
        output,
        cache_write_5m: write,
        cache_write_1h: write,
        cache_read: read,
        tiers: &[],
        min_cacheable: 1024,
        cache_block: 1,
        cache: CacheKind::Explicit,
        context_window,
        source,
        as_of: "2026-12",
        smith_differs: None,
        schedule: None,
    }
}

/// A Model Studio tier ([`model_studio`]'s columns) for a request whose
/// input is above `above` tokens.
const fn step(above: u64, [input, output, write, read]: [f64; 4]) -> Tier {
    tier(above, [input, output, write, write, read])
}

impl ModelPrice {
    /// The row where smith's own list prices the model at `input` and
    /// `output` instead.
    const fn smith_says(self, input: f64, output: f64) -> ModelPrice {
        ModelPrice {
            smith_differs: Some([input, output]),
            ..self
        }
    }
}

/// When DeepSeek's peak and off-peak rates began: 2026-08-17 00:00 UTC.
const DEEPSEEK_HOURS_FROM: i64 = 1_786_924_800;
const DEEPSEEK_HOURS: &str = "peak and off-peak rates from 2026-08-17, busy hours Monday to Friday 01:00-04:00 and 06:00-10:00 UTC (09:00-12:00 and 14:00-18:00 Beijing): not read on DeepSeek's page; the rates and hours as ccusage 20.0.24 bills them (probed request by request), the V4-Pro ones as https://github.com/benderandrew069/deepseek-api-pricing-2026 quotes DeepSeek's page of 2026-10-27, the hours as https://hackernews-dynamic.seasondane.workers.dev/news/48717869 (KuCoin) reports them";

#[rustfmt::skip]
const DEEPSEEK_PRO_HOURS: Schedule = Schedule {
    from: DEEPSEEK_HOURS_FROM,
    off_peak: &compatible("DeepSeek V4 Pro (off-peak, from 2026-08-17)", "deepseek", [0.66, 0.022, 1.98], [64, 64], 1_000_000, DEEPSEEK_HOURS, "2026-12", &[]),
    peak: &compatible("DeepSeek V4 Pro (peak hours, from 2026-08-17)", "deepseek", [1.32, 0.044, 3.96], [64, 64], 1_000_000, DEEPSEEK_HOURS, "2026-12", &[]),
};

#[rustfmt::skip]
const DEEPSEEK_FLASH_HOURS: Schedule = Schedule {
    from: DEEPSEEK_HOURS_FROM,
    off_peak: &compatible("DeepSeek V4 Flash (off-peak, from 2026-08-17)", "deepseek", [0.22, 0.007, 0.66], [64, 64], 1_000_000, DEEPSEEK_HOURS, "2026-12", &[]),
    peak: &compatible("DeepSeek V4 Flash (peak hours, from 2026-08-17)", "deepseek", [0.44, 0.014, 1.32], [64, 64], 1_000_000, DEEPSEEK_HOURS, "2026-12", &[]),
};

/// The table, most specific rows first. Anthropic rows: the pricing page's
/// base input, output, 5-minute and 1-hour cache writes and cache hits, the
/// prompt-caching page's minimum cacheable length, and the long-context
/// rates of the models that have them (Sonnet 4 and 4.5; Opus 4.6 and
/// Sonnet 4.6 bill their 1M window at the standard rates). OpenAI rows: the
/// standard tier, GPT-5.4's long-context rates above 272k. Gemini: the
/// Gemini API pricing page, as OpenRouter passes it on for the
/// mini-swe-agent run.
///
/// One row a line, in the columns of its provider's helper (named in a
/// comment above each provider's rows); `.tiered(&[tier(n, [..]), ..])`
/// adds the rates, in the order of the row's own, of a prompt above n
/// tokens ([`Tier`]): one tier for a long context, several for Model
/// Studio's input-length steps.
#[rustfmt::skip]
pub(crate) const MODEL_PRICES: [ModelPrice; 44] = [
    // Anthropic: family, [input, output, 5-minute write, 1-hour write,
    // cache read], minimum cacheable prompt, source, as of, ids.
    claude("Claude Fable 5.2",        [ 8.0,  40.0,  10.0, 16.0, 0.80], 512,  ANTHROPIC_PRICING,      "2026-12", &["fable-5-2", "fable-5.2"]),
    claude("Claude Fable 5",          [10.0,  50.0,  12.5, 20.0,  1.0], 512,  SMITH_PRICING,          "2026-12", &["fable-5"]),
    claude("Claude Opus 5.5",         [ 4.0,  20.0,   5.0,  8.0, 0.40], 512,  ANTHROPIC_PRICING,      "2026-12", &["opus-5-5", "opus-5.5"]),
    claude("Claude Opus 5",           [ 5.0,  25.0,  6.25, 10.0, 0.50], 512,  SMITH_PRICING,          "2026-12", &["opus-5"]),
    claude("Claude Opus 4.8",         [ 5.0,  25.0,  6.25, 10.0, 0.50], 1024, SMITH_PRICING,          "2026-12", &["opus-4-8", "opus-4.8"]),
    claude("Claude Opus 4.7",         [ 5.0,  25.0,  6.25, 10.0, 0.50], 2048, SMITH_PRICING,          "2026-12", &["opus-4-7", "opus-4.7"]),
    claude("Claude Opus 4.5 / 4.6",   [ 5.0,  25.0,  6.25, 10.0, 0.50], 4096, ANTHROPIC_PRICING,      "2026-02", &["opus-4-5", "opus-4-6", "opus-4.5", "opus-4.6"]),
    claude("Claude Opus 4 / 4.1",     [15.0,  75.0, 18.75, 30.0, 1.50], 1024, ANTHROPIC_PRICING,      "2026-02", &["opus-4-1", "opus-4.1", "opus-4"]),
    claude("Claude 3 Opus",           [15.0,  75.0, 18.75, 30.0, 1.50], 1024, ANTHROPIC_PRICING,      "2026-12", &["3-opus", "opus-3"]),
    // Anthropic's page: Sonnet 5 and 5.5 at $2 / $10 (the announced rise to
    // $3 / $15 was withdrawn); smith's list still has the higher pair.
    claude("Claude Sonnet 5 / 5.5",   [ 2.0,  10.0,  2.50,  4.0, 0.20], 1024, ANTHROPIC_PRICING,      "2026-12", &["sonnet-5-5", "sonnet-5.5", "sonnet-5"]).smith_says(3.0, 15.0),
    claude("Claude Sonnet 4.6",       [ 3.0,  15.0,  3.75,  6.0, 0.30], 1024, SMITH_PRICING,          "2026-12", &["sonnet-4-6", "sonnet-4.6"]),
    claude("Claude Sonnet 4 / 4.5",   [ 3.0,  15.0,  3.75,  6.0, 0.30], 1024, ANTHROPIC_LONG_CONTEXT, "2026-12", &["sonnet-4-5", "sonnet-4.5", "sonnet-4"]).tiered(&[tier(200_000, [ 6.0, 22.50,  7.50, 12.0, 0.60])]),
    claude("Claude Sonnet 3.5 / 3.7", [ 3.0,  15.0,  3.75,  6.0, 0.30], 1024, ANTHROPIC_PRICING,      "2026-12", &["3-5-sonnet", "3-7-sonnet", "3.5-sonnet", "3.7-sonnet", "sonnet-3-5", "sonnet-3-7", "sonnet-3.5", "sonnet-3.7"]),
    claude("Claude Haiku 4.5",        [ 1.0,   5.0,  1.25,  2.0, 0.10], 4096, ANTHROPIC_PRICING,      "2026-02", &["haiku-4-5", "haiku-4.5"]),
    claude("Claude Haiku 3.5",        [0.80,   4.0,   1.0,  1.6, 0.08], 2048, ANTHROPIC_PRICING,      "2026-12", &["haiku-3-5", "haiku-3.5", "3-5-haiku", "3.5-haiku"]),
    // The pricing page rounds this row's cache prices (0.30, not 0.3125).
    claude("Claude Haiku 3",          [0.25,  1.25,  0.30, 0.50, 0.03], 2048, ANTHROPIC_PRICING,      "2026-12", &["3-haiku", "haiku-3"]),

    // OpenAI: family, input, cached input, output, as of, ids.
    openai("GPT-5.5",                                5.0,  0.50, 30.0, "2026-12", &["gpt-5.5"]),
    openai("GPT-5.4 mini",                          0.75, 0.075, 4.50, "2026-12", &["gpt-5.4-mini"]),
    openai("GPT-5.4 nano",                          0.20,  0.02, 1.25, "2026-12", &["gpt-5.4-nano"]),
    openai("GPT-5.4",                               2.50,  0.25, 15.0, "2026-12", &["gpt-5.4"]).tiered(&[tier(272_000, [5.0, 22.50, 5.0, 5.0, 0.50])]),
    openai("GPT-5.2 / 5.3, and their Codex models", 1.75, 0.175, 14.0, "2026-12", &["gpt-5.2", "gpt-5.3"]),
    openai("GPT-5 mini",                            0.25, 0.025,  2.0, "2026-12", &["gpt-5-mini"]),
    openai("GPT-5 nano",                            0.05, 0.005, 0.40, "2026-12", &["gpt-5-nano"]),
    openai("GPT-5 / 5.1, and their Codex models",   1.25, 0.125, 10.0, "2026-12", &["gpt-5.1", "gpt-5-codex", "gpt-5"]),

    // Google: family, [input, output, 5-minute write, 1-hour write, cache
    // read], minimum cacheable prompt, cache block, source, as of, ids.
    // Implicit caching: what is not read from the cache is plain input.
    // The cache block is not documented: the recorded hits of the
    // mini-swe-agent run are whole multiples of 2048 tokens, less a few dozen.
    gemini("Gemini 3 Pro (preview)", [ 2.0, 12.0,  2.0,  2.0,  0.20], 4096, 2048, GEMINI_PRICING, "2025-11", &["gemini-3-pro", "gemini-3.1-pro"]).tiered(&[tier(200_000, [ 4.0, 18.0,  4.0,  4.0,  0.40])]),
    gemini("Gemini 2.5 Pro",         [1.25, 10.0, 1.25, 1.25, 0.125], 2048, 1,    GEMINI_CACHING, "2026-12", &["gemini-2.5-pro"]).tiered(&[tier(200_000, [2.50, 15.0, 2.50, 2.50,  0.25])]),
    gemini("Gemini 2.5 Flash",       [0.30, 2.50, 0.30, 0.30,  0.03], 1024, 1,    GEMINI_CACHING, "2026-12", &["gemini-2.5-flash"]),

    // Through compatible APIs: family, provider, [input (cache miss), cache
    // hit, output], [minimum cached prefix, unit of a hit], context window,
    // source, as of, ids. More specific ids first (`glm-5-turbo` before
    // `glm-5`: a suffix of letters still names the shorter id).
    compatible("DeepSeek V4 Pro",                 "deepseek", [0.435, 0.003625, 0.87], [64, 64], 1_000_000, DEEPSEEK_PRICING, "2026-12", &["deepseek-v4-pro"]).timed(&DEEPSEEK_PRO_HOURS),
    compatible("DeepSeek V4 Flash (deepseek-chat, deepseek-reasoner)", "deepseek", [0.14, 0.0028, 0.28], [64, 64], 1_000_000, DEEPSEEK_PRICING, "2026-12", &["deepseek-v4-flash", "deepseek-chat", "deepseek-reasoner"]).timed(&DEEPSEEK_FLASH_HOURS),
    compatible("GLM-5.1",                         "zai",      [ 1.40,  0.26, 4.40], [0, 1],   200_000, ZAI_PRICING,      "2026-12", &["glm-5.1", "glm-5-1"]),
    compatible("GLM-5 Turbo",                     "zai",      [ 1.20,  0.24, 4.00], [0, 1],   200_000, ZAI_PRICING,      "2026-12", &["glm-5-turbo"]),
    compatible("GLM-5",                           "zai",      [ 1.00,  0.20, 3.20], [0, 1],   200_000, ZAI_PRICING,      "2026-12", &["glm-5"]),
    compatible("GLM-4.6 / 4.7",                   "zai",      [ 0.60,  0.11, 2.20], [0, 1],   200_000, ZAI_PRICING,      "2026-12", &["glm-4.7", "glm-4.6", "glm-4-7", "glm-4-6"]),
    compatible("GLM-4.5 Air",                     "zai",      [ 0.20,  0.03, 1.10], [0, 1],   131_072, ZAI_PRICING,      "2026-12", &["glm-4.5-air", "glm-4-5-air"]),
    compatible("GLM-4.5",                         "zai",      [ 0.60,  0.11, 2.20], [0, 1],   131_072, ZAI_PRICING,      "2026-12", &["glm-4.5", "glm-4-5"]),
    compatible("Kimi K2.6",                       "moonshot", [ 0.95,  0.16, 4.00], [0, 1],   262_144, MOONSHOT_K26,     "2026-12", &["kimi-k2.6", "kimi-k2-6"]),
    compatible("Kimi K2.5",                       "moonshot", [ 0.60,  0.10, 3.00], [0, 1],   262_144, MOONSHOT_PRICING, "2026-12", &["kimi-k2.5", "kimi-k2-5"]),
    compatible("Kimi K2 Turbo / K2 Thinking Turbo", "moonshot", [1.15, 0.15, 8.00], [0, 1],   262_144, MOONSHOT_PRICING, "2026-12", &["kimi-k2-turbo", "kimi-k2-thinking-turbo"]),
    compatible("Kimi K2 (0905, 0711) / K2 Thinking", "moonshot", [0.60, 0.15, 2.50], [0, 1],  262_144, MOONSHOT_PRICING, "2026-12", &["kimi-k2-0905", "kimi-k2-0711", "kimi-k2-thinking", "kimi-k2-instruct", "kimi-k2"]),

    // Alibaba Cloud Model Studio: family, [input, output, cache write, cache
    // hit] up to the first step, window, source, ids; `step(n, [..])` the
    // rates of a request whose input is above n tokens.
    model_studio("Qwen3 Coder Plus",  [1.00, 5.00, 1.25,  0.10], 1_000_000, MODEL_STUDIO_PRICING, &["qwen3-coder-plus"]).tiered(&[step(32_000, [1.80,  9.00, 2.25,  0.18]), step(128_000, [3.00, 15.00, 3.75, 0.30]), step(256_000, [6.00, 60.00, 7.50, 0.60])]),
    model_studio("Qwen3 Coder Flash", [0.30, 1.50, 0.375, 0.03], 1_000_000, MODEL_STUDIO_PRICING, &["qwen3-coder-flash"]).tiered(&[step(32_000, [0.50, 2.50, 0.625, 0.05]), step(128_000, [0.80, 4.00, 1.00, 0.08]), step(256_000, [1.60, 9.60, 2.00, 0.16])]),
    model_studio("Qwen3 Max",         [1.20, 6.00, 1.50,  0.12], 262_144,   MODEL_STUDIO_PRICING, &["qwen3-max"]).tiered(&[step(32_000, [2.40, 12.00, 3.00, 0.24]), step(128_000, [3.00, 15.00, 3.75, 0.30])]),
    model_studio("Qwen Plus",         [0.40, 1.20, 0.50,  0.04], 1_000_000, MODEL_STUDIO_THINKING, &["qwen-plus"]).tiered(&[step(256_000, [1.20, 3.60, 1.50, 0.12])]),
    model_studio("Qwen Flash",        [0.05, 0.40, 0.0625, 0.005], 1_000_000, MODEL_STUDIO_PRICING, &["qwen-flash"]).tiered(&[step(256_000, [0.25, 2.00, 0.3125, 0.025])]),
];

/// The row of a model id (`claude-opus-4-6`, `google/gemini-3-pro-preview`,
/// a proxy's alias such as `claude-opus-4.6-fast`), if the table names it.
pub fn model_price(model: &str) -> Option<&'static ModelPrice> {
    model_row(model).and_then(|i| MODEL_PRICES.get(i))
}

/// The position in [`MODEL_PRICES`] of a model id's row, if the table
/// names it or the model it is an alias of.
pub(crate) fn model_row(model: &str) -> Option<usize> {
    unaliased(model)
        .and_then(|a| row_named(&a))
        .or_else(|| row_named(&model.trim().to_ascii_lowercase()))
}

fn row_named(m: &str) -> Option<usize> {
    MODEL_PRICES
        .iter()
        .position(|p| p.ids.iter().any(|id| names(m, id)))
}

/// What proxies append to a model's id to name a variant of it that the
/// provider bills at the model's rates: the 1M window (`-1m`, as Claude
/// Code's own `[1m]`) and the fast output mode (`-fast`).
const ALIAS_SUFFIXES: [&str; 2] = ["-1m", "-fast"];

/// `model` without the proxy's suffixes ([`ALIAS_SUFFIXES`]), lowercased;
/// `None` where it has none.
fn unaliased(model: &str) -> Option<String> {
    let mut m = model.trim().to_ascii_lowercase();
    let before = m.len();
    while let Some(s) = ALIAS_SUFFIXES.iter().find(|s| m.ends_with(*s)) {
        m.truncate(m.len() - s.len());
    }
    (m.len() < before && !m.is_empty()).then_some(m)
}

/// Whether the model id `m` names `id`: `id` occurs in it and is not the
/// start of a longer version (`opus-4` names `claude-opus-4-20250514` and
/// `claude-opus-4`, not `claude-opus-4-9`; `gpt-5` names `gpt-5-codex`, not
/// `gpt-5.4`). A dated snapshot (`-20250514`, and as Alibaba and OpenAI
/// date theirs, `-2025-07-22`), a variant (`-codex`, `-preview`,
/// `:thinking`, `[1m]`, `@2026…`) still names it.
fn names(m: &str, id: &str) -> bool {
    m.match_indices(id).any(|(at, _)| {
        let rest = m.as_bytes().get(at + id.len()..).unwrap_or(&[]);
        match rest.first() {
            None => true,
            Some(c) if c.is_ascii_alphanumeric() || *c == b'.' => false,
            Some(b'-') => {
                let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
                digits == 0 || digits >= 6 || is_dashed_date(&rest[1..])
            }
            Some(_) => true,
        }
    })
}

/// Whether `s` begins with a date written `YYYY-MM-DD`.
fn is_dashed_date(s: &[u8]) -> bool {
    let shape = b"dddd-dd-dd";
    s.len() >= shape.len()
        && shape.iter().zip(s).all(|(want, c)| match want {
            b'd' => c.is_ascii_digit(),
            _ => c == want,
        })
}

/// How a model id found its row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// A row of the table names it.
    Named,
    /// A proxy's alias of a model a row names ([`ALIAS_SUFFIXES`]).
    Alias,
    /// `--price MODEL=…` gave its rates ([`set_given`]).
    Given,
    /// No row names it: its row has no prices ([`unpriced`]).
    Unpriced,
}

/// How a model id was priced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Lookup {
    pub(crate) row: &'static ModelPrice,
    pub(crate) how: How,
}

impl Lookup {
    /// Whether the model has prices: the table's, or given.
    pub(crate) fn priced(&self) -> bool {
        self.how != How::Unpriced
    }
}

/// The rows `--price MODEL=…` gave, by model id (lowercase), set once
/// before anything is priced.
static GIVEN: std::sync::OnceLock<Vec<(String, &'static ModelPrice)>> = std::sync::OnceLock::new();

/// Rates given on the command line for one model: input, five-minute cache
/// write and cache read, and the output where given.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GivenPrice {
    pub(crate) model: String,
    pub(crate) prices: Prices,
    pub(crate) output: Option<f64>,
}

/// The row `given` makes: the model's own row (its caching rule, minimum
/// and window) at the given rates where the table names the model, else an
/// unpriced row ([`unpriced`]) with them, whose output stays unknown unless
/// given.
pub(crate) fn given_row(given: &GivenPrice) -> ModelPrice {
    let base = match model_row(&given.model) {
        Some(i) => MODEL_PRICES[i],
        None => *unpriced(&given.model),
    };
    let p = given.prices;
    ModelPrice {
        family: leak(format!("{} (--price)", given.model)),
        provider: "--price",
        input: p.input,
        cache_write_5m: p.cache_write,
        cache_write_1h: p.input * WRITE_1H_MULTIPLIER,
        cache_read: p.cache_read,
        output: given.output.unwrap_or(base.output),
        tiers: &[],
        source: "--price on the command line",
        as_of: "",
        smith_differs: None,
        schedule: None,
        ..base
    }
}

/// Installs the rows of `--price MODEL=…`, once per run: a model they name
/// is priced at them before the table is asked.
pub(crate) fn set_given(given: &[GivenPrice]) {
    let rows = given
        .iter()
        .map(|g| {
            let row: &'static ModelPrice = Box::leak(Box::new(given_row(g)));
            (g.model.trim().to_ascii_lowercase(), row)
        })
        .collect();
    // A second call (a test running two commands in one process) keeps the
    // first's rows: prices are settled before anything is priced.
    let _ = GIVEN.set(rows);
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The row of a model no row of the table names: its id as its family, no
/// prices (`NaN`, so that every sum it enters is unknown rather than
/// guessed), the minimum cacheable prefix of 1024 tokens `--cache-min-tokens`
/// documents for an unknown model, no window. One row per model id, made
/// once.
// The `*` copies the `'static` row out of the map before the lock's guard
// goes: without it the row would borrow from the guard.
#[allow(clippy::explicit_auto_deref)]
pub(crate) fn unpriced(model: &str) -> &'static ModelPrice {
    let make = || -> &'static ModelPrice {
        let family = if model.is_empty() {
            "(a request that names no model)".to_string()
        } else {
            model.to_string()
        };
        Box::leak(Box::new(ModelPrice {
            family: leak(family),
            provider: "unknown",
            ids: &[],
            input: f64::NAN,
            output: f64::NAN,
            cache_write_5m: f64::NAN,
            cache_write_1h: f64::NAN,
            cache_read: f64::NAN,
            tiers: &[],
            min_cacheable: 1024,
            cache_block: 1,
            cache: CacheKind::Automatic,
            context_window: 0,
            source: "in no price table: give its rates with --price MODEL=input,cache_write,cache_read,output",
            as_of: "",
            smith_differs: None,
            schedule: None,
        }))
    };
    match UNPRICED_ROWS.lock() {
        Ok(mut rows) => *rows
            .get_or_insert_with(HashMap::new)
            .entry(model.to_string())
            .or_insert_with(make),
        // A panic elsewhere poisoned the lock: a row made again is the same.
        Err(_) => make(),
    }
}

/// The rows of the models in no table, made once each by [`unpriced`].
static UNPRICED_ROWS: Mutex<Option<HashMap<String, &'static ModelPrice>>> = Mutex::new(None);

/// The row whose family is `family`, among every row a request can be
/// billed at: the table's, their rates by the hour, the free one, those
/// `--price` gave and those of models in no table.
pub(crate) fn by_family(family: &str) -> Option<&'static ModelPrice> {
    let timed = MODEL_PRICES
        .iter()
        .filter_map(|p| p.schedule)
        .flat_map(|s| [s.off_peak, s.peak]);
    let given = GIVEN.get().into_iter().flatten().map(|(_, row)| *row);
    let found = MODEL_PRICES
        .iter()
        .chain(timed)
        .chain(std::iter::once(&FREE))
        .chain(given)
        .find(|p| p.family == family);
    found.or_else(|| {
        let rows = UNPRICED_ROWS.lock().ok()?;
        rows.as_ref()?
            .values()
            .copied()
            .find(|p| p.family == family)
    })
}

/// The row a model id is priced at, and how it was found: a row `--price`
/// gave, the table's, the table's for the model it is an alias of, else
/// an unpriced one.
pub(crate) fn lookup(model: &str) -> Lookup {
    lookup_in(GIVEN.get().map_or(&[], Vec::as_slice), model)
}

fn lookup_in(given: &[(String, &'static ModelPrice)], model: &str) -> Lookup {
    let m = model.trim().to_ascii_lowercase();
    if let Some((_, row)) = given.iter().find(|(id, _)| names(&m, id)) {
        return Lookup {
            row,
            how: How::Given,
        };
    }
    // An alias first: a suffix of letters (`-fast`) would still name the
    // model's row, silently.
    if let Some(i) = unaliased(&m).and_then(|a| row_named(&a)) {
        return Lookup {
            row: &MODEL_PRICES[i],
            how: How::Alias,
        };
    }
    if let Some(i) = row_named(&m) {
        return Lookup {
            row: &MODEL_PRICES[i],
            how: How::Named,
        };
    }
    Lookup {
        row: unpriced(model),
        how: How::Unpriced,
    }
}

/// [`lookup`], telling the user once per model (through the one stderr
/// path, [`crate::note!`]) when the model is a proxy's alias priced as the
/// model, or when smith's own list prices it otherwise. A model in no
/// table is named once per folder instead ([`Unpriced`]).
pub(crate) fn lookup_noted(model: &str) -> Lookup {
    let l = lookup(model);
    let note = match l.how {
        How::Alias => Some(alias_note(model, l.row)),
        How::Named => smith_disagrees(model, l.row),
        How::Given | How::Unpriced => None,
    };
    if let Some(note) = note {
        if first_time(model) {
            crate::note!("{note}");
        }
    }
    l
}

/// The note for a proxy's alias priced as the model it names.
pub(crate) fn alias_note(model: &str, row: &ModelPrice) -> String {
    format!("{model}: priced as {} (alias)", row.family)
}

/// The note for smith's maintainers where smith's `pricing.cr` and the
/// provider's page disagree on a model's price.
pub(crate) fn smith_disagrees(model: &str, row: &ModelPrice) -> Option<String> {
    let [input, output] = row.smith_differs?;
    Some(format!(
        "note: {model:?} is priced at the provider's {}/M input, {}/M output ({}); smith's own list (src/smith/pricing.cr) says {input}/M and {output}/M",
        row.input, row.output, row.family
    ))
}

/// The row a model id is priced at, with the notes of [`lookup_noted`]: an
/// unpriced row for a model no table names.
pub fn price_of(model: &str) -> &'static ModelPrice {
    lookup_noted(model).row
}

/// The row of a request billed by `provider` (smith's `session.json`
/// names it) for `model`: a local model is free whatever its name, any
/// other provider bills the model's row (OpenRouter passes the routed
/// model's list prices on).
pub(crate) fn price_for(provider: Option<&str>, model: &str) -> &'static ModelPrice {
    match provider.map(|p| p.trim().to_ascii_lowercase()) {
        Some(p) if p == "ollama" => &FREE,
        _ => price_of(model),
    }
}

/// Whether `model` is named for the first time in this run: each note is
/// said once per model, however many requests name it.
fn first_time(model: &str) -> bool {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    SEEN.lock()
        .map(|mut w| w.get_or_insert_with(HashSet::new).insert(model.to_string()))
        .unwrap_or(false)
}

/// The models of a folder that no table prices, with the sessions and
/// requests naming each: named once per folder, on one line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Unpriced {
    models: std::collections::BTreeMap<String, (usize, usize)>,
}

impl Unpriced {
    /// Counts one session's requests, by the model each names.
    pub(crate) fn add_session<'a>(&mut self, models: impl IntoIterator<Item = &'a str>) {
        let mut seen: Vec<&str> = Vec::new();
        for m in models {
            if lookup(m).priced() {
                continue;
            }
            let entry = self.models.entry(m.to_string()).or_default();
            entry.1 += 1;
            if !seen.contains(&m) {
                seen.push(m);
                entry.0 += 1;
            }
        }
    }

    /// The models counted, in order (`""`: requests that name none).
    pub(crate) fn models(&self) -> impl Iterator<Item = &str> {
        self.models.keys().map(String::as_str)
    }

    /// The one line naming them, `None` where every model is priced.
    pub(crate) fn line(&self) -> Option<String> {
        if self.models.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .models
            .iter()
            .map(|(m, (s, r))| {
                let name = if m.is_empty() { "(no model named)" } else { m };
                format!(
                    "{name} ({}, {})",
                    crate::format::plural(*s, "session"),
                    crate::format::plural(*r, "request")
                )
            })
            .collect();
        Some(format!(
            "warning: {} in no price table, so not priced: {}; their tokens are counted, their dollars are unknown (give --price MODEL=input,cache_write,cache_read,output)",
            crate::format::plural(self.models.len(), "model"),
            list.join(", ")
        ))
    }
}

/// The context window a session of `model` ran under, its largest recorded
/// prompt being `peak` tokens: the model's row's, or [`LONG_WINDOW`] where
/// the id names a 1M variant (`[1m]`, a proxy's `-1m`) or the prompt did
/// not fit the model's own. `None` where the model's window is not known
/// (a model in no table).
pub(crate) fn context_window(model: &str, peak: u64) -> Option<u64> {
    let own = lookup(model).row.context_window;
    if own == 0 {
        return None;
    }
    let m = model.trim().to_ascii_lowercase();
    let long = m.contains("[1m]") || m.ends_with("-1m") || peak > own;
    Some(if long { own.max(LONG_WINDOW) } else { own })
}

/// The position of [`DEFAULT_MODEL`]'s row in [`MODEL_PRICES`].
pub(crate) fn default_row() -> usize {
    model_row(DEFAULT_MODEL).unwrap_or(0)
}

/// The row of [`DEFAULT_MODEL`], looked up once: a session that records no
/// model is priced at it request by request.
pub(crate) fn default_model() -> &'static ModelPrice {
    static ROW: std::sync::LazyLock<usize> = std::sync::LazyLock::new(default_row);
    &MODEL_PRICES[*ROW]
}

impl ModelPrice {
    /// The flat prices the sweep ranks by: input, 5-minute write, read.
    pub(crate) fn prices(&self) -> Prices {
        Prices {
            input: self.input,
            cache_write: self.cache_write_5m,
            cache_read: self.cache_read,
        }
    }

    /// Whether the row has every price: false for a model in no table
    /// ([`unpriced`]), and for one `--price` gave no output for.
    pub(crate) fn is_priced(&self) -> bool {
        [
            self.input,
            self.output,
            self.cache_write_5m,
            self.cache_write_1h,
            self.cache_read,
        ]
        .iter()
        .all(|p| p.is_finite())
    }

    /// The row in a few words: family and its input, write and read prices.
    pub(crate) fn describe(&self) -> String {
        if !self.is_priced() {
            return format!("{}: in no price table, not priced", self.family);
        }
        format!(
            "{}: ${}/M input, ${}/M cache write, ${}/M cache read, ${}/M output",
            self.family, self.input, self.cache_write_5m, self.cache_read, self.output
        )
    }
}

#[cfg(test)]
mod tests;
