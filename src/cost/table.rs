//! The price table: one row per model family that appears in the logs the
//! project calibrates on or in smith's own price list, each number with
//! where it came from and when.
//!
//! Every price in the program comes from here: the sweep's default `--price`
//! (the [`DEFAULT_MODEL`] row), the bill check, and the per-model pricing of
//! imported sessions. Prices are dollars per million tokens, as the providers
//! quote them; the cache columns are written out rather than derived from
//! multipliers so that each figure is the provider's own (and `0.30` stays
//! `0.30`, not `3 × 0.1`). A test holds the Anthropic rows to the documented
//! multipliers (1.25 × input for a five-minute write,
//! [`WRITE_1H_MULTIPLIER`] for an hour's, 0.1 × input for a read), Claude
//! Haiku 3 excepted, whose published cache prices are rounded.
//!
//! A model id picks its row by substring ([`ModelPrice::ids`], first match
//! wins). An id no row names is priced as the nearest family
//! ([`NEAREST`]: an unknown Opus as the newest Opus, any Claude as Sonnet)
//! and [`price_of`] says so once per model on stderr: a price is never
//! guessed silently.

use std::collections::HashSet;
use std::sync::Mutex;

use serde::Serialize;

use super::Prices;

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

/// The rates of a request whose prompt is above a provider's long-context
/// threshold: the whole request is billed at them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct LongContext {
    /// Prompt tokens (input, cache reads and writes together) above which
    /// these rates apply.
    pub(crate) above: u64,
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cache_write_5m: f64,
    pub(crate) cache_write_1h: f64,
    pub(crate) cache_read: f64,
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
    /// The rates above the long-context threshold, where the provider has
    /// them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) long_context: Option<LongContext>,
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
}

const ANTHROPIC_PRICING: &str = "prices: https://platform.claude.com/docs/en/about-claude/pricing; minimum cacheable prompt: https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const ANTHROPIC_LONG_CONTEXT: &str = "prices (long context above 200k input tokens): https://platform.claude.com/docs/en/about-claude/pricing#long-context-pricing; minimum cacheable prompt: https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const SMITH_PRICING: &str = "smith's own list (src/smith/pricing.cr, webmatze/smith e533ff4) and https://platform.claude.com/docs/en/about-claude/pricing; minimum cacheable prompt: https://platform.claude.com/docs/en/build-with-claude/prompt-caching";
const OPENAI_PRICING: &str = "prices: https://developers.openai.com/api/docs/pricing (standard tier); caching from 1024 tokens in 128-token steps: https://platform.openai.com/docs/guides/prompt-caching";
const GEMINI_PRICING: &str = "https://ai.google.dev/gemini-api/docs/pricing (and the per-response `cost` OpenRouter recorded in the trajectories)";
const GEMINI_CACHING: &str = "https://ai.google.dev/gemini-api/docs/pricing; minimum for implicit caching: https://ai.google.dev/gemini-api/docs/caching";

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
    long_context: None,
    min_cacheable: 0,
    cache_block: 1,
    cache: CacheKind::Free,
    context_window: 0,
    source: "smith's own list (src/smith/pricing.cr): a local model costs electricity, not tokens",
    as_of: "2026-12",
    smith_differs: None,
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
        long_context: None,
        min_cacheable,
        cache_block: 1,
        cache: CacheKind::Explicit,
        context_window: CLAUDE_WINDOW,
        source,
        as_of,
        smith_differs: None,
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
        long_context: None,
        min_cacheable: 1024,
        cache_block: 128,
        cache: CacheKind::Automatic,
        context_window: GPT5_WINDOW,
        source: OPENAI_PRICING,
        as_of,
        smith_differs: None,
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

impl ModelPrice {
    /// The row with long-context rates: `prices` (input, output, 5-minute
    /// and 1-hour writes, read) for a prompt above `above` tokens.
    const fn above(self, above: u64, prices: [f64; 5]) -> ModelPrice {
        let [input, output, cache_write_5m, cache_write_1h, cache_read] = prices;
        ModelPrice {
            long_context: Some(LongContext {
                above,
                input,
                output,
                cache_write_5m,
                cache_write_1h,
                cache_read,
            }),
            ..self
        }
    }

    /// The row where smith's own list prices the model at `input` and
    /// `output` instead.
    const fn smith_says(self, input: f64, output: f64) -> ModelPrice {
        ModelPrice {
            smith_differs: Some([input, output]),
            ..self
        }
    }
}

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
/// comment above each provider's rows); `.above(n, [..])` adds the
/// long-context rates, in the order of the row's own, of a prompt above n
/// tokens.
#[rustfmt::skip]
pub(crate) const MODEL_PRICES: [ModelPrice; 27] = [
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
    claude("Claude Sonnet 4 / 4.5",   [ 3.0,  15.0,  3.75,  6.0, 0.30], 1024, ANTHROPIC_LONG_CONTEXT, "2026-12", &["sonnet-4-5", "sonnet-4.5", "sonnet-4"]).above(200_000, [ 6.0, 22.50,  7.50, 12.0, 0.60]),
    claude("Claude Sonnet 3.5 / 3.7", [ 3.0,  15.0,  3.75,  6.0, 0.30], 1024, ANTHROPIC_PRICING,      "2026-12", &["3-5-sonnet", "3-7-sonnet", "3.5-sonnet", "3.7-sonnet", "sonnet-3-5", "sonnet-3-7", "sonnet-3.5", "sonnet-3.7"]),
    claude("Claude Haiku 4.5",        [ 1.0,   5.0,  1.25,  2.0, 0.10], 4096, ANTHROPIC_PRICING,      "2026-02", &["haiku-4-5", "haiku-4.5"]),
    claude("Claude Haiku 3.5",        [0.80,   4.0,   1.0,  1.6, 0.08], 2048, ANTHROPIC_PRICING,      "2026-12", &["haiku-3-5", "haiku-3.5", "3-5-haiku", "3.5-haiku"]),
    // The pricing page rounds this row's cache prices (0.30, not 0.3125).
    claude("Claude Haiku 3",          [0.25,  1.25,  0.30, 0.50, 0.03], 2048, ANTHROPIC_PRICING,      "2026-12", &["3-haiku", "haiku-3"]),

    // OpenAI: family, input, cached input, output, as of, ids.
    openai("GPT-5.5",                                5.0,  0.50, 30.0, "2026-12", &["gpt-5.5"]),
    openai("GPT-5.4 mini",                          0.75, 0.075, 4.50, "2026-12", &["gpt-5.4-mini"]),
    openai("GPT-5.4 nano",                          0.20,  0.02, 1.25, "2026-12", &["gpt-5.4-nano"]),
    openai("GPT-5.4",                               2.50,  0.25, 15.0, "2026-12", &["gpt-5.4"]).above(272_000, [5.0, 22.50, 5.0, 5.0, 0.50]),
    openai("GPT-5.2 / 5.3, and their Codex models", 1.75, 0.175, 14.0, "2026-12", &["gpt-5.2", "gpt-5.3"]),
    openai("GPT-5 mini",                            0.25, 0.025,  2.0, "2026-12", &["gpt-5-mini"]),
    openai("GPT-5 nano",                            0.05, 0.005, 0.40, "2026-12", &["gpt-5-nano"]),
    openai("GPT-5 / 5.1, and their Codex models",   1.25, 0.125, 10.0, "2026-12", &["gpt-5.1", "gpt-5-codex", "gpt-5"]),

    // Google: family, [input, output, 5-minute write, 1-hour write, cache
    // read], minimum cacheable prompt, cache block, source, as of, ids.
    // Implicit caching: what is not read from the cache is plain input.
    // The cache block is not documented: the recorded hits of the
    // mini-swe-agent run are whole multiples of 2048 tokens, less a few dozen.
    gemini("Gemini 3 Pro (preview)", [ 2.0, 12.0,  2.0,  2.0,  0.20], 4096, 2048, GEMINI_PRICING, "2025-11", &["gemini-3-pro", "gemini-3.1-pro"]).above(200_000, [ 4.0, 18.0,  4.0,  4.0,  0.40]),
    gemini("Gemini 2.5 Pro",         [1.25, 10.0, 1.25, 1.25, 0.125], 2048, 1,    GEMINI_CACHING, "2026-12", &["gemini-2.5-pro"]).above(200_000, [2.50, 15.0, 2.50, 2.50,  0.25]),
    gemini("Gemini 2.5 Flash",       [0.30, 2.50, 0.30, 0.30,  0.03], 1024, 1,    GEMINI_CACHING, "2026-12", &["gemini-2.5-flash"]),
];

/// Where a model id the table does not name is priced: the first word of
/// the id found here picks the row of the model beside it (the newest of
/// the family, or Sonnet for any other Claude), with a warning.
pub(crate) const NEAREST: [(&str, &str); 9] = [
    ("fable", "claude-fable-5"),
    ("opus", "claude-opus-4-8"),
    ("sonnet", "claude-sonnet-4-6"),
    ("haiku", "claude-haiku-4-5"),
    ("claude", "claude-sonnet-4-6"),
    ("codex", "gpt-5.3-codex"),
    ("gpt", "gpt-5.4"),
    ("gemini", "gemini-3-pro"),
    ("", DEFAULT_MODEL),
];

/// The row of a model id (`claude-opus-4-6`, `google/gemini-3-pro-preview`),
/// if the table names it.
pub fn model_price(model: &str) -> Option<&'static ModelPrice> {
    model_row(model).and_then(|i| MODEL_PRICES.get(i))
}

/// The position in [`MODEL_PRICES`] of a model id's row, if the table
/// names it.
pub(crate) fn model_row(model: &str) -> Option<usize> {
    let m = model.to_ascii_lowercase();
    MODEL_PRICES
        .iter()
        .position(|p| p.ids.iter().any(|id| names(&m, id)))
}

/// Whether the model id `m` names `id`: `id` occurs in it and is not the
/// start of a longer version (`opus-4` names `claude-opus-4-20250514` and
/// `claude-opus-4`, not `claude-opus-4-9`; `gpt-5` names `gpt-5-codex`, not
/// `gpt-5.4`). A dated snapshot (`-20250514`), a variant (`-codex`,
/// `-preview`, `:thinking`, `[1m]`, `@2026…`) still names it.
fn names(m: &str, id: &str) -> bool {
    m.match_indices(id).any(|(at, _)| {
        let rest = m.as_bytes().get(at + id.len()..).unwrap_or(&[]);
        match rest.first() {
            None => true,
            Some(c) if c.is_ascii_alphanumeric() || *c == b'.' => false,
            Some(b'-') => {
                let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
                digits == 0 || digits >= 6
            }
            Some(_) => true,
        }
    })
}

/// How a model id was priced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lookup {
    /// Its position in [`MODEL_PRICES`].
    pub(crate) row: usize,
    /// False: the table does not name the model, and `row` is the
    /// nearest family's ([`NEAREST`]).
    pub(crate) known: bool,
}

/// The row a model id is priced at: its own, else the nearest family's.
pub(crate) fn lookup(model: &str) -> Lookup {
    if let Some(row) = model_row(model) {
        return Lookup { row, known: true };
    }
    let m = model.to_ascii_lowercase();
    let row = NEAREST
        .iter()
        .find(|(word, _)| m.contains(word))
        .and_then(|(_, to)| model_row(to))
        .unwrap_or_else(default_row);
    Lookup { row, known: false }
}

/// [`lookup`], telling the user once per model (through the one stderr
/// path, [`crate::note!`]) when the model is priced as another family, or
/// when smith's own list prices it otherwise.
pub(crate) fn lookup_noted(model: &str) -> Lookup {
    let l = lookup(model);
    let row = &MODEL_PRICES[l.row];
    if !l.known {
        if first_time(model) {
            crate::note!("{}", nearest_warning(model, row));
        }
    } else if let Some(note) = smith_disagrees(model, row) {
        if first_time(model) {
            crate::note!("{note}");
        }
    }
    l
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

fn nearest_warning(model: &str, row: &ModelPrice) -> String {
    let name = if model.is_empty() {
        "(a request that names no model)".to_string()
    } else {
        format!("{model:?}")
    };
    format!(
        "warning: the price table does not know the model {name}: priced as {} ({}/M input, {}/M output)",
        row.family, row.input, row.output
    )
}

/// The row a model id is priced at, with the warning of [`lookup_noted`].
pub fn price_of(model: &str) -> &'static ModelPrice {
    &MODEL_PRICES[lookup_noted(model).row]
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

/// The context window a session of `model` ran under, its largest recorded
/// prompt being `peak` tokens: the model's row's (the nearest family's for
/// a model the table does not name), or [`LONG_WINDOW`] where the id names
/// a 1M variant or the prompt did not fit the model's own. `None` where the
/// model's window is not known.
pub(crate) fn context_window(model: &str, peak: u64) -> Option<u64> {
    let own = MODEL_PRICES[lookup(model).row].context_window;
    if own == 0 {
        return None;
    }
    let long = model.to_ascii_lowercase().contains("[1m]") || peak > own;
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

    /// The rates a request of `prompt` tokens is billed at: the
    /// long-context ones above the threshold, else the row's own.
    pub(crate) fn at(&self, prompt: u64) -> ModelPrice {
        match self.long_context {
            Some(l) if prompt > l.above => ModelPrice {
                input: l.input,
                output: l.output,
                cache_write_5m: l.cache_write_5m,
                cache_write_1h: l.cache_write_1h,
                cache_read: l.cache_read,
                ..*self
            },
            _ => *self,
        }
    }

    /// Whether a request of `prompt` tokens is above the long-context
    /// threshold.
    pub(crate) fn is_long(&self, prompt: u64) -> bool {
        self.long_context.is_some_and(|l| prompt > l.above)
    }

    /// The row in a few words: family and its input, write and read prices.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{}: ${}/M input, ${}/M cache write, ${}/M cache read, ${}/M output",
            self.family, self.input, self.cache_write_5m, self.cache_read, self.output
        )
    }
}

#[cfg(test)]
mod tests {
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
            .filter(|p| p.cache == CacheKind::Explicit && p.family != "Claude Haiku 3")
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
            if let Some(l) = p.long_context {
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
            assert!(lookup(model).known, "{model}");
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
    fn an_unknown_model_is_priced_as_the_nearest_family_and_said_to_be() {
        let family = |m: &str| {
            let l = lookup(m);
            (MODEL_PRICES[l.row].family, l.known)
        };
        assert_eq!(family("claude-opus-4-9"), ("Claude Opus 4.8", false));
        assert_eq!(family("claude-sonnet-7"), ("Claude Sonnet 4.6", false));
        assert_eq!(family("claude-haiku-9"), ("Claude Haiku 4.5", false));
        assert_eq!(family("claude-instant-1"), ("Claude Sonnet 4.6", false));
        assert_eq!(
            family("gpt-6-codex"),
            ("GPT-5.2 / 5.3, and their Codex models", false)
        );
        assert_eq!(family("gpt-4o"), ("GPT-5.4", false));
        assert_eq!(family("gemini-9-ultra"), ("Gemini 3 Pro (preview)", false));
        assert_eq!(family("llama3:8b"), ("Claude Sonnet 4 / 4.5", false));
        assert_eq!(family(""), ("Claude Sonnet 4 / 4.5", false));
        assert_eq!(model_price("gpt-4o"), None);
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
}
