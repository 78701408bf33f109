//! What a session's records say of its requests, and the prices they are
//! billed at: the facts a [`super::Meter`] prices a replay by, read once
//! per session.

use std::collections::HashMap;
use std::sync::Arc;

use super::Settings;
use crate::cost::bill::unlogged::AccountView;
use crate::cost::table::{default_model, price_for, CacheKind, ModelPrice};
use crate::cost::CacheTtl;
use crate::time::parse_rfc3339;
use crate::transcript::session_file::SessionFile;
use crate::transcript::Message;

/// What the record of one request says: when it was answered, its model,
/// its output tokens, and the share of its cache writes that went to the
/// one-hour tier.
type Answer = (Option<i64>, Option<String>, u64, Option<f64>);

/// What a session's records say about its requests.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// Per answering message: time, model, output tokens, and of the cache
    /// writes the share its record shows going to the one-hour tier.
    pub(super) by_message: HashMap<usize, Answer>,
    pub(super) model: Option<String>,
    /// Who billed the requests (`anthropic`, `openai`, `openrouter`,
    /// `ollama`), as `session.json` names it.
    pub(super) provider: Option<String>,
    /// The lifetime most cache-write tokens went to.
    pub(super) tier: Option<CacheTtl>,
    /// Whether the session was imported with its requests' records; false
    /// for smith's own session, of which `session.json` names only the
    /// provider and model.
    pub(super) imported: bool,
    /// The messages at which the harness rewrote the prompt (Claude Code:
    /// see [`crate::cost::bill::rewrites_prompt`]), in order: found once per
    /// session, not per request of every config.
    pub(super) rewrites: Vec<usize>,
    /// The account's cache beyond the session, when the sweep priced it
    /// among others ([`Recorded::with_account`]); `None`: the session alone.
    pub(super) account: Option<Arc<AccountView>>,
}

impl Recorded {
    /// From an imported session's `session.json` and its transcript.
    pub fn from_file(file: &SessionFile, messages: &[Arc<Message>]) -> Recorded {
        let mut by_message = HashMap::new();
        let (mut w5, mut w1) = (0u64, 0u64);
        for r in &file.requests {
            let rec = file
                .request_records
                .iter()
                .find(|x| x.message_index == r.message_index);
            let t = rec
                .and_then(|x| x.timestamp.as_deref())
                .and_then(parse_rfc3339);
            let (r5, r1) = (
                rec.and_then(|x| x.cache_write_5m).unwrap_or(0),
                rec.and_then(|x| x.cache_write_1h).unwrap_or(0),
            );
            w5 += r5;
            w1 += r1;
            let share = (r5 + r1 > 0).then(|| r1 as f64 / (r5 + r1) as f64);
            by_message.insert(
                r.message_index,
                (t, r.model.clone(), r.output_tokens, share),
            );
        }
        Recorded {
            by_message,
            model: file.model.clone(),
            provider: file.provider.clone(),
            imported: true,
            rewrites: if file.source.format == crate::transcript::session_file::FORMAT_CLAUDE_CODE {
                (0..messages.len())
                    .filter(|&i| crate::cost::bill::rewrites_prompt_at(&messages[i]))
                    .collect()
            } else {
                Vec::new()
            },
            account: None,
            tier: if w1 > w5 {
                Some(CacheTtl::OneHour)
            } else if w5 > 0 {
                Some(CacheTtl::FiveMinutes)
            } else {
                None
            },
        }
    }
}

impl Recorded {
    /// The same, priced with the account's cache beyond the session.
    pub(crate) fn with_account(self, account: Option<Arc<AccountView>>) -> Recorded {
        Recorded { account, ..self }
    }

    /// What an imported session's `session.json` records; `None` for a
    /// session without one (smith's own).
    pub(crate) fn of_session(session: &crate::transcript::Session) -> Option<Recorded> {
        let raw = session.meta.as_ref()?.raw.as_ref()?;
        SessionFile::from_meta(raw).map(|f| Recorded::from_file(&f, &session.messages))
    }

    /// What prices the session: an imported session's records, else (smith's
    /// own) the provider and model its `session.json` names; at most one is
    /// `Some`. `session.json` is parsed once either way.
    pub(crate) fn of_session_or_smith(
        session: &crate::transcript::Session,
    ) -> (Option<Recorded>, Option<Recorded>) {
        match Recorded::of_session(session) {
            Some(recorded) => (Some(recorded), None),
            None => (None, Recorded::of_smith(session)),
        }
    }

    /// The provider and model smith's own `session.json` names, which
    /// price its requests; `None` for an imported session (see
    /// [`Recorded::of_session`]) and for one that names neither, which is
    /// priced at the default row.
    pub(crate) fn of_smith(session: &crate::transcript::Session) -> Option<Recorded> {
        let meta = session.meta.as_ref()?;
        if meta.raw.as_ref().and_then(SessionFile::from_meta).is_some() {
            return None;
        }
        Recorded::named(meta.provider.as_deref(), meta.model.as_deref())
    }

    /// A smith session billed by `provider` for `model`, without records of
    /// its requests; `None` when both are missing or empty.
    pub(crate) fn named(provider: Option<&str>, model: Option<&str>) -> Option<Recorded> {
        let given = |x: Option<&str>| x.map(str::trim).filter(|x| !x.is_empty()).map(String::from);
        let (provider, model) = (given(provider), given(model));
        if provider.is_none() && model.is_none() {
            return None;
        }
        Some(Recorded {
            model,
            provider,
            ..Recorded::default()
        })
    }

    /// The row of the price table a request of `model` (the session's own
    /// where the request names none) is billed at, through the session's
    /// provider; the default row where neither names anything.
    pub(crate) fn row_for(&self, model: Option<&str>) -> &'static ModelPrice {
        match (model.or(self.model.as_deref()), self.provider.as_deref()) {
            (Some(m), p) => price_for(p, m),
            (None, Some(p)) => price_for(Some(p), ""),
            (None, None) => default_model(),
        }
    }

    /// Whether the session's requests could be served from the prompt
    /// cache at `row`. smith's OpenRouter client sends no `cache_control`
    /// marks, so a model whose provider caches only what the client marks
    /// (Anthropic's, routed) caches nothing there: every prompt token is
    /// plain input. OpenAI's and Gemini's models cache on their own.
    pub(crate) fn caches_at(&self, row: &ModelPrice) -> bool {
        let openrouter = self
            .provider
            .as_deref()
            .is_some_and(|p| p.eq_ignore_ascii_case("openrouter"));
        self.imported || !openrouter || row.cache != CacheKind::Explicit
    }

    /// When the request answered by message `index` was answered.
    pub(crate) fn time_of(&self, index: usize) -> Option<i64> {
        self.by_message.get(&index).and_then(|x| x.0)
    }

    /// The cache lifetime most of the session's writes went to, if the
    /// records say.
    pub fn tier(&self) -> Option<CacheTtl> {
        self.tier
    }

    /// The provider and model smith's `session.json` (parsed) names, for
    /// outputs that list the prices of sessions they have not loaded.
    pub(crate) fn of_smith_json(raw: &serde_json::Value) -> Option<Recorded> {
        if SessionFile::from_meta(raw).is_some() {
            return None;
        }
        let s = |k: &str| raw.get(k).and_then(|v| v.as_str());
        Recorded::named(s("provider"), s("model"))
    }

    /// The rows of the price table the session's requests are billed at,
    /// each once, in the order first used.
    pub(crate) fn rows(&self) -> Vec<&'static ModelPrice> {
        let mut rows: Vec<&'static ModelPrice> = Vec::new();
        let mut indices: Vec<&usize> = self.by_message.keys().collect();
        indices.sort();
        let models = indices
            .into_iter()
            .map(|i| self.by_message[i].1.as_deref())
            .chain(self.by_message.is_empty().then_some(None));
        for m in models {
            let row = self.row_for(m);
            if !rows.iter().any(|r| r.family == row.family) {
                rows.push(row);
            }
        }
        rows
    }

    /// The prices the session is billed at, in words: each row with how
    /// it caches through the session's provider.
    pub(crate) fn describe_prices(&self) -> String {
        let by = self
            .provider
            .as_deref()
            .map_or(String::new(), |p| format!(" (billed by {p})"));
        let rows: Vec<String> = self
            .rows()
            .into_iter()
            .map(|row| format!("{}; {}", row.describe(), self.caching_of(row)))
            .collect();
        format!("{}{by}", rows.join(" | "))
    }

    /// How the session's requests at `row` use the prompt cache, in words.
    pub(crate) fn caching_of(&self, row: &ModelPrice) -> String {
        if !self.caches_at(row) {
            return "no caching: smith marks nothing for caching through OpenRouter, so every prompt token is plain input".into();
        }
        match row.cache {
            CacheKind::Explicit => format!("explicit caching from {} tokens", row.min_cacheable),
            CacheKind::Implicit => format!("implicit caching from {} tokens", row.min_cacheable),
            CacheKind::Automatic => format!(
                "automatic caching from {} tokens in {}-token steps, no write premium",
                row.min_cacheable, row.cache_block
            ),
            CacheKind::Free => "free: nothing billed".into(),
        }
    }
}

/// The rows smith's own sessions are billed at, by the provider and model
/// each `session.json` names, with how many sessions each: the part of a
/// sweep's header about them.
#[derive(Debug, Default)]
pub(crate) struct SmithPrices {
    /// Row, how it caches through the provider, sessions.
    rows: Vec<(&'static ModelPrice, String, usize)>,
}

impl SmithPrices {
    /// Counts the session whose `session.json` is `raw`; false when it is
    /// not smith's own or names neither provider nor model.
    pub(crate) fn add(&mut self, raw: Option<&serde_json::Value>) -> bool {
        let Some(r) = raw.and_then(Recorded::of_smith_json) else {
            return false;
        };
        let row = r.row_for(None);
        let caching = r.caching_of(row);
        match self
            .rows
            .iter_mut()
            .find(|(x, c, _)| x.family == row.family && *c == caching)
        {
            Some(x) => x.2 += 1,
            None => self.rows.push((row, caching, 1)),
        }
        true
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// One part per row, most sessions first.
    pub(crate) fn describe(&self) -> Vec<String> {
        let mut rows: Vec<&(&'static ModelPrice, String, usize)> = self.rows.iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.2));
        rows.iter()
            .map(|(row, caching, n)| {
                let prices = if row.is_priced() {
                    row.prices().to_string()
                } else {
                    "in no price table, not priced".to_string()
                };
                format!(
                    "{} {prices} ({caching}; {})",
                    row.family,
                    crate::format::plural(*n, "smith session")
                )
            })
            .collect()
    }
}

/// The prices a session is billed at under `settings`, in words, for the
/// outputs that name them: `--price`, else what [`Recorded::describe_prices`]
/// says, else (a session that names no model) the default row.
pub(crate) fn prices_named(recorded: Option<&Recorded>, settings: &Settings) -> String {
    match (settings.prices, recorded) {
        (Some(p), _) => format!("{p} (--price)"),
        (None, Some(r)) => r.describe_prices(),
        (None, None) => format!(
            "{} (the session names no model)",
            default_model().describe()
        ),
    }
}
