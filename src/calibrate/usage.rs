//! smith's own bill: the lifetime `usage` a smith `session.json` records,
//! held against the replay of the session under its own config
//! (docs/cost-model.md, "smith's recorded usage").
//!
//! smith's transcripts record no usage per request, only the session's
//! totals, so the check works on totals. Every request smith sends is
//! billed `ratio × (history estimate + overhead)` prompt tokens (the
//! provider's `input + cache read + cache write`, smith's
//! `billed_prompt_tokens`), so a session's total is `ratio × H + ratio ×
//! overhead × n` for the sum `H` of its requests' history estimates and its
//! `n` requests: linear in two unknowns, fitted by least squares over the
//! sessions of one provider. The replay that gives `H` compacts at the
//! ratio and overhead it is run under, so the fit is repeated on the
//! replay at its own result until it settles.

use rayon::prelude::*;
use serde::Serialize;

use super::formats::Loaded;
use crate::engine::constants::{BYTES_PER_TOKEN, RATIO_MAX};
use crate::engine::{Config, Engine};
use crate::transcript::Session;

/// What a smith `session.json` says the session was billed, in total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Recorded {
    /// The uncached remainder (Anthropic's `input_tokens`); the whole
    /// prompt, cached tokens included, for OpenAI-style providers.
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) cache_creation_tokens: u64,
    pub(crate) cache_read_tokens: u64,
}

impl Recorded {
    /// What smith's ratio is learned from: every prompt token billed,
    /// whatever the provider calls it (`billed_prompt_tokens`).
    pub(crate) fn billed(&self) -> u64 {
        self.prompt_tokens + self.cache_creation_tokens + self.cache_read_tokens
    }

    /// Whether the provider reports its cache apart (Anthropic, and
    /// OpenRouter to Anthropic's models): only then can reads be checked.
    fn splits_cache(&self) -> bool {
        self.cache_creation_tokens + self.cache_read_tokens > 0
    }
}

/// The usage of a smith session (not an import: an import's usage is
/// checked request by request by the bill check), if its `session.json`
/// records any.
pub(crate) fn recorded(l: &Loaded) -> Option<Recorded> {
    if l.file.is_some() {
        return None;
    }
    let usage = l.session.meta.as_ref()?.raw.as_ref()?.get("usage")?;
    let n = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64);
    let r = Recorded {
        prompt_tokens: n("prompt_tokens")?,
        completion_tokens: n("completion_tokens").unwrap_or(0),
        cache_creation_tokens: n("cache_creation_tokens").unwrap_or(0),
        cache_read_tokens: n("cache_read_tokens").unwrap_or(0),
    };
    (r.billed() > 0).then_some(r)
}

/// One replay's sums: what the fit and the check need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Replayed {
    pub(crate) requests: u64,
    /// The sum of the requests' history estimates (bytes / 4, before the
    /// ratio and the overhead).
    pub(crate) history_tokens: u64,
    /// What the replay charged in all, and of it what a prompt cache could
    /// serve and what was written to it.
    pub(crate) billed: u64,
    pub(crate) cache_read: u64,
    pub(crate) cache_write: u64,
    /// Requests whose history compaction changed.
    pub(crate) compactions: u64,
}

/// `session` replayed under `config`.
fn replay(session: &Session, config: Config) -> Replayed {
    let engine = Engine::new(config);
    let mut out = Replayed::default();
    let facts = crate::replay::replay_with(&session.messages, &engine, |_, _, c| {
        out.history_tokens += c.history_bytes / BYTES_PER_TOKEN;
        true
    });
    out.requests = facts.requests as u64;
    out.billed = facts.tokens_sent.max(0) as u64;
    out.cache_read = facts.cache_read.max(0) as u64;
    out.cache_write = facts.cache_write.max(0) as u64;
    out.compactions = facts.compactions as u64;
    out
}

/// A provider's ratio and overhead, fitted on its sessions' totals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ProviderFit {
    pub(crate) provider: String,
    /// Sessions fitted on: whole ones that no ratio smith allows would
    /// compact.
    pub(crate) sessions: usize,
    /// Whole sessions left out of the fit because they compact (checked
    /// at it all the same).
    pub(crate) compacting: usize,
    pub(crate) ratio: f64,
    pub(crate) overhead_tokens: u64,
    /// Whether the overhead is the other groups' (too few sessions here to
    /// tell it from the ratio), the ratio fitted alone.
    pub(crate) overhead_shared: bool,
    /// Median |error| of the billed total per session before the fit
    /// (each session at its saved ratio, no overhead) and after it.
    pub(crate) median_error_before: Option<f64>,
    pub(crate) median_error_after: Option<f64>,
}

/// One session's check.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SessionUsage {
    pub(crate) session: String,
    pub(crate) provider: String,
    pub(crate) model: String,
    pub(crate) recorded: Recorded,
    /// The `context_ratio` its `session.json` saved (smith writes 1.0
    /// until it has learned one).
    pub(crate) saved_ratio: Option<f64>,
    /// The replay at its provider's fit (or, where none could be fitted,
    /// at its saved ratio).
    pub(crate) replayed: Replayed,
    /// (replayed − recorded) / recorded of the billed total, the cache
    /// reads and the rest (writes and the uncached remainder); reads and
    /// the rest only where the provider reports its cache apart.
    pub(crate) billed_error: Option<f64>,
    pub(crate) read_error: Option<f64>,
    pub(crate) write_error: Option<f64>,
    /// The ratio this session's total implies at its provider's overhead,
    /// and the saved ratio's distance from the provider's fit (saved −
    /// fitted) / fitted.
    pub(crate) implied_ratio: Option<f64>,
    pub(crate) saved_vs_fit: Option<f64>,
    /// Why its usage cannot be the whole session's, when it cannot.
    pub(crate) not_whole: Option<String>,
}

/// The check over every smith session that records usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct UsageCheck {
    pub(crate) sessions: Vec<SessionUsage>,
    pub(crate) fits: Vec<ProviderFit>,
}

/// The most times the fit is made again after sessions left it.
const MAX_ROUNDS: usize = 6;

/// Least squares of `billed = a × history + b × requests` over `rows`, no
/// intercept: `(ratio, overhead)` with `ratio = a`, `overhead = b / a`
/// (at least 0: where the free fit wants less, the ratio alone is fitted).
fn fit(rows: &[(Replayed, Recorded)]) -> Option<(f64, f64)> {
    fit_with(rows, None)
}

/// [`fit`], or with the overhead fixed at `overhead` the ratio alone.
fn fit_with(rows: &[(Replayed, Recorded)], overhead: Option<f64>) -> Option<(f64, f64)> {
    if let Some(o) = overhead {
        let (mut num, mut den) = (0.0, 0.0);
        for (r, rec) in rows {
            let x = r.history_tokens as f64 + o * r.requests as f64;
            num += rec.billed() as f64 * x;
            den += x * x;
        }
        return (den > 0.0).then(|| (num / den, o));
    }
    let (mut hh, mut hn, mut nn, mut ph, mut pn) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (r, rec) in rows {
        let (h, n, p) = (
            r.history_tokens as f64,
            r.requests as f64,
            rec.billed() as f64,
        );
        hh += h * h;
        hn += h * n;
        nn += n * n;
        ph += p * h;
        pn += p * n;
    }
    if hh <= 0.0 {
        return None;
    }
    let det = hh * nn - hn * hn;
    // One session, or sessions whose sizes are proportional to their
    // requests: the two cannot be told apart; the ratio alone is fitted.
    if rows.len() >= 2 && det > 1e-9 * hh * nn {
        let a = (ph * nn - pn * hn) / det;
        let b = (hh * pn - hn * ph) / det;
        if a > 0.0 && b >= 0.0 {
            return Some((a, b / a));
        }
    }
    Some((ph / hh, 0.0))
}

/// `(replayed − recorded) / recorded`, `None` for nothing recorded.
fn error(replayed: u64, recorded: u64) -> Option<f64> {
    (recorded > 0).then(|| (replayed as f64 - recorded as f64) / recorded as f64)
}

/// The middle of the sizes of `errors` (those there are).
fn typical(errors: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let mut sizes: Vec<f64> = errors.flatten().map(f64::abs).collect();
    crate::stats::median_of(&mut sizes)
}

/// A smith session to check: its usage, the config it replays under and
/// what its `session.json` names.
struct Candidate<'a> {
    session: &'a Session,
    recorded: Recorded,
    provider: String,
    model: String,
    saved_ratio: Option<f64>,
}

impl Candidate<'_> {
    /// Sessions whose tokenizer is one: the provider, and behind a router
    /// the model's maker (`openrouter anthropic`).
    fn group(&self) -> String {
        match self.model.split_once('/') {
            Some((maker, _)) if self.provider == "openrouter" => format!("openrouter {maker}"),
            _ => self.provider.clone(),
        }
    }
}

/// What the check works from: the candidates, the config they replay
/// under, and which of them can be whole.
struct Checker<'a> {
    candidates: Vec<Candidate<'a>>,
    base: Config,
    /// Each candidate at the largest ratio smith allows and no overhead.
    bounds: Vec<Replayed>,
    not_whole: Vec<Option<String>>,
}

/// A session's replay at its tokenizer's fit (ratio, overhead), if any.
type Checked = Option<(Replayed, Option<(f64, f64)>)>;

/// A tokenizer's sessions: those fitted on, and the fit.
struct Group {
    name: String,
    linear: Vec<usize>,
    fit: Option<(f64, f64)>,
}

impl<'a> Checker<'a> {
    fn new(sessions: &'a [Loaded], base: Config) -> Checker<'a> {
        let candidates: Vec<Candidate> = sessions
            .iter()
            .filter_map(|l| {
                let recorded = recorded(l)?;
                let meta = l.session.meta.as_ref();
                let text = |f: fn(&crate::transcript::locate::SessionMeta) -> &Option<String>| {
                    meta.and_then(|m| f(m).clone()).unwrap_or_default()
                };
                Some(Candidate {
                    session: &l.session,
                    recorded,
                    provider: text(|m| &m.provider),
                    model: text(|m| &m.model),
                    saved_ratio: super::session::SessionCalibration::of(&l.session).saved_ratio,
                })
            })
            .collect();
        let mut checker = Checker {
            candidates,
            base,
            bounds: Vec::new(),
            not_whole: Vec::new(),
        };
        // The fewest prompt tokens a session's requests can have been
        // billed: at the largest ratio smith allows (which compacts
        // soonest), counted at a ratio of 1 and no overhead. A total below
        // it cannot be the whole session's.
        checker.bounds = checker
            .candidates
            .par_iter()
            .map(|c| replay(c.session, checker.at(RATIO_MAX, 0.0)))
            .collect();
        checker.not_whole = checker
            .candidates
            .iter()
            .zip(&checker.bounds)
            .map(|(c, b)| {
                (c.recorded.billed() < b.history_tokens).then(|| {
                    format!(
                        "{} prompt tokens recorded, fewer than the {} its {} requests sent at any ratio smith \
                         allows: the usage is a later run's only (before smith's #102 a resumed session kept its \
                         last run's)",
                        c.recorded.billed(),
                        b.history_tokens,
                        b.requests
                    )
                })
            })
            .collect();
        checker
    }

    fn at(&self, ratio: f64, overhead: f64) -> Config {
        Config {
            ratio,
            overhead_tokens: overhead.round() as u64,
            ..self.base
        }
    }

    fn whole(&self, i: usize) -> bool {
        self.not_whole[i].is_none()
    }

    fn members(&self, group: &str) -> Vec<usize> {
        (0..self.candidates.len())
            .filter(|&i| self.candidates[i].group() == group)
            .collect()
    }

    /// The whole sessions of `group` that no ratio smith allows would
    /// compact under `overhead`: there every request's history is the
    /// record's, the same at any ratio, and the total is linear in ratio
    /// and overhead. Where a session compacts, its total is held near the
    /// trigger whatever the ratio, and says little about it.
    fn linear(&self, group: &str, overhead: f64) -> Vec<usize> {
        let whole: Vec<usize> = self
            .members(group)
            .into_iter()
            .filter(|&i| self.whole(i))
            .collect();
        whole
            .into_par_iter()
            .filter(|&i| {
                // At no overhead that is the bound's replay, already made.
                let r = if overhead == 0.0 {
                    self.bounds[i]
                } else {
                    replay(self.candidates[i].session, self.at(RATIO_MAX, overhead))
                };
                r.compactions == 0
            })
            .collect()
    }

    fn rows(&self, members: &[usize]) -> Vec<(Replayed, Recorded)> {
        members
            .iter()
            .map(|&i| (self.bounds[i], self.candidates[i].recorded))
            .collect()
    }

    /// `group`'s ratio and overhead where its sessions tell them apart; a
    /// session the fit's own overhead makes compact leaves, and the fit is
    /// made again.
    fn solve(&self, name: String) -> Group {
        let mut linear = self.linear(&name, 0.0);
        let mut fitted = None;
        for _ in 0..MAX_ROUNDS {
            if linear.len() < 2 {
                fitted = None;
                break;
            }
            let Some((ratio, overhead)) = fit(&self.rows(&linear)) else {
                break;
            };
            fitted = Some((ratio, overhead));
            let still = self.linear(&name, overhead);
            if still.len() == linear.len() {
                break;
            }
            linear = still;
        }
        Group {
            name,
            linear,
            fit: fitted,
        }
    }

    /// The group's fit and every member checked at it (or, without one, at
    /// its saved ratio).
    fn finish(&self, g: Group, out: &mut [Checked]) -> Option<ProviderFit> {
        let members = self.members(&g.name);
        let saved = |i: usize| self.candidates[i].saved_ratio.unwrap_or(1.0);
        let config_of = |i: usize| match g.fit {
            Some((ratio, overhead)) => self.at(ratio, overhead),
            None => self.at(saved(i), 0.0),
        };
        let (first, current): (Vec<Replayed>, Vec<Replayed>) = members
            .par_iter()
            .map(|&i| {
                let s = self.candidates[i].session;
                (replay(s, self.at(saved(i), 0.0)), replay(s, config_of(i)))
            })
            .unzip();
        let typical_error = |of: &[Replayed]| {
            typical(
                members
                    .iter()
                    .zip(of)
                    .filter(|(i, _)| self.whole(**i))
                    .map(|(&i, r)| error(r.billed, self.candidates[i].recorded.billed())),
            )
        };
        for (&i, r) in members.iter().zip(&current) {
            out[i] = Some((*r, g.fit));
        }
        let (ratio, overhead) = g.fit?;
        Some(ProviderFit {
            provider: g.name,
            sessions: g.linear.len(),
            compacting: members.iter().filter(|&&i| self.whole(i)).count() - g.linear.len(),
            ratio,
            overhead_tokens: overhead.round() as u64,
            overhead_shared: false,
            median_error_before: typical_error(&first),
            median_error_after: typical_error(&current),
        })
    }

    /// Candidate `i`'s row, replayed as `at` says.
    fn row(&self, i: usize, at: Checked) -> SessionUsage {
        let c = &self.candidates[i];
        let (r, fitted) = at.unwrap_or_default();
        let rec = c.recorded;
        let split = rec.splits_cache();
        SessionUsage {
            session: c.session.label(),
            provider: c.provider.clone(),
            model: c.model.clone(),
            recorded: rec,
            saved_ratio: c.saved_ratio,
            replayed: r,
            billed_error: error(r.billed, rec.billed()),
            read_error: split
                .then(|| error(r.cache_read, rec.cache_read_tokens))
                .flatten(),
            write_error: split
                .then(|| error(r.cache_write, rec.prompt_tokens + rec.cache_creation_tokens))
                .flatten(),
            implied_ratio: fitted.and_then(|(_, o)| {
                let denominator = r.history_tokens as f64 + o * r.requests as f64;
                (denominator > 0.0).then(|| rec.billed() as f64 / denominator)
            }),
            saved_vs_fit: match (c.saved_ratio, fitted) {
                (Some(s), Some((f, _))) => Some((s - f) / f),
                _ => None,
            },
            not_whole: self.not_whole[i].clone(),
        }
    }
}

/// Checks every smith session of `sessions` that records usage, each
/// replayed under `base` (the user's window and thresholds, and the
/// engine) at the ratio and overhead its tokenizer's totals fit.
pub(crate) fn check(sessions: &[Loaded], base: Config) -> UsageCheck {
    let checker = Checker::new(sessions, base);
    let mut names: Vec<String> = checker.candidates.iter().map(Candidate::group).collect();
    names.sort();
    names.dedup();
    let mut groups: Vec<Group> = names.into_iter().map(|n| checker.solve(n)).collect();
    // The overhead is smith's own prompt in bytes / 4, the same text
    // whatever the provider: where a group cannot tell it from the ratio,
    // it takes the others' (weighted by their sessions) and fits its ratio
    // alone.
    let (weight, sum) = groups
        .iter()
        .filter_map(|g| {
            g.fit
                .map(|(_, o)| (g.linear.len() as f64, o * g.linear.len() as f64))
        })
        .fold((0.0, 0.0), |(w, s), (a, b)| (w + a, s + b));
    let pooled = if weight > 0.0 { sum / weight } else { 0.0 };
    let mut shared = Vec::new();
    for g in &mut groups {
        if g.fit.is_none() {
            g.linear = checker.linear(&g.name, pooled);
            g.fit = fit_with(&checker.rows(&g.linear), Some(pooled));
            shared.push(g.name.clone());
        }
    }
    let mut at = vec![None; checker.candidates.len()];
    let fits = groups
        .into_iter()
        .filter_map(|g| checker.finish(g, &mut at))
        .map(|f| ProviderFit {
            overhead_shared: shared.contains(&f.provider),
            ..f
        })
        .collect();
    let sessions = (0..checker.candidates.len())
        .map(|i| checker.row(i, at[i]))
        .collect();
    UsageCheck { sessions, fits }
}

/// The check as `calibrate` prints it.
pub(crate) fn write_text(out: &mut dyn std::io::Write, c: &UsageCheck) -> std::io::Result<()> {
    use crate::format::signed_percent;
    let count = |v: u64| crate::format::count(v as f64);
    if c.sessions.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "smith's recorded usage: each session's session.json totals against its replay under its own config \
         (billed prompt = input + cache reads + cache writes, as smith learns its ratio from; the summarizer's \
         calls are not in smith's totals, nor in the replay's)"
    )?;
    let mut t = crate::format::table(vec![
        "session",
        "provider",
        "requests",
        "recorded prompt",
        "replayed",
        "error",
        "cache read error",
        "rest error",
        "implied ratio",
        "saved ratio",
        "whole",
    ]);
    let pct = |e: Option<f64>| e.map_or("-".to_string(), signed_percent);
    for s in &c.sessions {
        t.add_row(vec![
            s.session.clone(),
            s.provider.clone(),
            count(s.replayed.requests),
            count(s.recorded.billed()),
            count(s.replayed.billed),
            pct(s.billed_error),
            pct(s.read_error),
            pct(s.write_error),
            s.implied_ratio
                .map_or("-".to_string(), |r| format!("{r:.3}")),
            s.saved_ratio
                .map_or("none".to_string(), |r| format!("{r:.3}")),
            if s.not_whole.is_some() { "no" } else { "yes" }.to_string(),
        ]);
    }
    writeln!(out, "{t}")?;
    for s in c.sessions.iter().filter(|s| s.not_whole.is_some()) {
        writeln!(
            out,
            "  {}: not whole: {}",
            s.session,
            s.not_whole.as_deref().unwrap_or_default()
        )?;
    }
    for f in &c.fits {
        let m = |e: Option<f64>| e.map_or("-".to_string(), |e| format!("{:.2}%", e * 100.0));
        writeln!(
            out,
            "{}: ratio {:.4}, overhead {}{} fitted on the totals of {} sessions that never compact ({} that do \
             are checked at the fit); median |error| of the billed total {} at each session's saved ratio \
             and no overhead, {} at the fit{}",
            f.provider,
            f.ratio,
            count(f.overhead_tokens),
            if f.overhead_shared { " (the other providers')" } else { "" },
            f.sessions,
            f.compacting,
            m(f.median_error_before),
            m(f.median_error_after),
            if f.ratio > RATIO_MAX || f.ratio < crate::engine::constants::RATIO_MIN {
                " (outside the range smith clamps its ratio to)"
            } else {
                ""
            }
        )?;
    }
    for s in c.sessions.iter().filter(|s| s.saved_vs_fit.is_some()) {
        writeln!(
            out,
            "  {}: saved context_ratio {:.3} is {} from its provider's fit",
            s.session,
            s.saved_ratio.unwrap_or_default(),
            signed_percent(s.saved_vs_fit.unwrap_or_default())
        )?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled sessions, each read as `calibrate` reads it.
    fn bundled() -> Vec<Loaded> {
        crate::import::direct::resolve_all_listing(&["datasets/sessions"])
            .unwrap()
            .iter()
            .map(|r| Loaded::read(r).unwrap())
            .collect()
    }

    #[test]
    fn the_check_recovers_the_ratio_and_overhead_the_bundled_sessions_were_billed_at() {
        let c = check(&bundled(), Config::default());
        assert_eq!(c.sessions.len(), 12);
        assert!(c.sessions.iter().all(|s| s.not_whole.is_none()));
        for f in &c.fits {
            let s = c
                .sessions
                .iter()
                .find(|s| f.provider.starts_with(s.provider.as_str()))
                .unwrap();
            let known = crate::synth::usage::known_ratio_of(&s.provider, &s.model);
            println!(
                "{}: ratio {:.4} (billed at {known}), overhead {} (billed at {}), median |error| {:?} -> {:?}",
                f.provider,
                f.ratio,
                f.overhead_tokens,
                crate::synth::usage::KNOWN_OVERHEAD,
                f.median_error_before,
                f.median_error_after
            );
            assert!((f.ratio - known).abs() / known < 0.01, "{f:?}");
            let o = crate::synth::usage::KNOWN_OVERHEAD as f64;
            assert!((f.overhead_tokens as f64 - o).abs() / o < 0.01, "{f:?}");
            assert!(f.median_error_after.unwrap() < 0.01, "{f:?}");
        }
        assert!(c.fits.iter().filter(|f| !f.overhead_shared).count() >= 2);
    }

    #[test]
    fn a_total_below_what_the_requests_must_have_sent_is_named_not_whole_and_left_out() {
        let mut sessions = bundled();
        let before = check(&sessions, Config::default());
        let l = &mut sessions[0];
        let meta = l.session.meta.as_mut().unwrap();
        let raw = meta.raw.as_mut().unwrap();
        raw["usage"]["cache_read_tokens"] = serde_json::json!(0);
        raw["usage"]["cache_creation_tokens"] = serde_json::json!(0);
        raw["usage"]["prompt_tokens"] = serde_json::json!(1_000);
        let label = l.session.label();
        let after = check(&sessions, Config::default());
        let s = after.sessions.iter().find(|s| s.session == label).unwrap();
        let why = s.not_whole.as_deref().expect("named");
        assert!(why.contains("#102"), "{why}");
        // Left out of its provider's fit, which is unchanged or refitted
        // without it; never dragged by it.
        let group = |c: &UsageCheck| {
            c.fits
                .iter()
                .find(|f| f.provider == s.provider)
                .map(|f| f.ratio)
        };
        let (b, a) = (group(&before).unwrap(), group(&after).unwrap());
        assert!((a - b).abs() / b < 0.01, "{b} -> {a}");
    }

    fn row(history: u64, requests: u64, billed: u64) -> (Replayed, Recorded) {
        (
            Replayed {
                requests,
                history_tokens: history,
                ..Replayed::default()
            },
            Recorded {
                prompt_tokens: billed,
                ..Recorded::default()
            },
        )
    }

    #[test]
    fn the_fit_recovers_a_ratio_and_an_overhead_from_totals() {
        // billed = 1.3 × (history + 2,000 × requests)
        let rows: Vec<_> = [(500_000, 40), (1_200_000, 75), (90_000, 12)]
            .into_iter()
            .map(|(h, n)| row(h, n, (1.3 * (h as f64 + 2_000.0 * n as f64)).round() as u64))
            .collect();
        let (ratio, overhead) = fit(&rows).unwrap();
        assert!((ratio - 1.3).abs() < 1e-6, "{ratio}");
        assert!((overhead - 2_000.0).abs() < 0.01, "{overhead}");
    }

    #[test]
    fn one_session_fits_the_ratio_alone_and_a_negative_overhead_is_refused() {
        let (ratio, overhead) = fit(&[row(100_000, 10, 150_000)]).unwrap();
        assert_eq!((ratio, overhead), (1.5, 0.0));
        // Totals that want a negative overhead: the ratio alone.
        let rows = [row(100_000, 50, 100_000), row(200_000, 10, 260_000)];
        let (_, overhead) = fit(&rows).unwrap();
        assert_eq!(overhead, 0.0);
        assert_eq!(fit(&[row(0, 0, 10)]), None);
    }
}
