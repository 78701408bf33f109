//! Every session of a check on the account's one timeline: the check by the
//! log alone, then priced by the shares the other sessions show.

use std::collections::HashMap;

use super::parts::Part;
use super::timeline::{Shared, Timeline};
use super::types::{Input, Kind, SessionCheck, Settings};
use super::unlogged::{self, AccountView, Expect, Unlogged};
use super::walk::{check_session, fit_fixed_prefix};
use crate::transcript::session_file::SessionFile;

/// Every session of `inputs` that carries usage per request read from its
/// log on the account's one timeline (or each alone, without
/// [`Part::SharedCache`]), aligned with `inputs` (`None`: no usage): its
/// check, its prediction still to come from the meter
/// ([`SessionCheck::priced`]), and its view of the account, which the meter
/// prices it by. A compaction agent finds its parent among `inputs` by
/// `parent_id`, and a request whose own cache is cold finds the agent's
/// fixed prompt cached when another session of the same kind and model
/// used it within the lifetime. The fixed prompt is fitted per format and
/// kind ([`fit_fixed_prefix`]); the shares of the account's cache beyond
/// the log each session is priced by are fitted on the others
/// ([`unlogged`]).
pub(crate) fn read(
    inputs: &[Input],
    settings: &Settings,
) -> Vec<Option<(SessionCheck, AccountView)>> {
    let account = Account::new(inputs, settings, None);
    let (at, checks): (Vec<usize>, Vec<SessionCheck>) = account.check().into_iter().unzip();
    let expect = if uses_shares(settings) {
        expect_at(inputs.len(), &at, &checks, settings)
    } else {
        vec![None; inputs.len()]
    };
    aligned(inputs.len(), at, checks, |k| expect[k].unwrap_or_default())
}

/// Each input's view of the account ([`read`]'s).
pub(crate) fn accounts(inputs: &[Input], settings: &Settings) -> Vec<Option<AccountView>> {
    read(inputs, settings)
        .into_iter()
        .map(|x| x.map(|(_, v)| v))
        .collect()
}

/// The checks at positions `at` among `n` inputs, each with its view
/// priced by `expect` of its position.
fn aligned(
    n: usize,
    at: Vec<usize>,
    checks: Vec<SessionCheck>,
    expect: impl Fn(usize) -> Expect,
) -> Vec<Option<(SessionCheck, AccountView)>> {
    let mut out: Vec<Option<(SessionCheck, AccountView)>> = vec![None; n];
    for (k, c) in at.into_iter().zip(checks) {
        let view = AccountView::of(&c, expect(k));
        out[k] = Some((c, view));
    }
    out
}

/// What a check fits on its sessions, fitted on some sessions to price
/// others by: the fixed prompt per format and kind, and the account's
/// cache beyond the log per format and kind.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fit {
    fixed: HashMap<FixedKey, Option<u64>>,
    shares: HashMap<(String, Kind), Unlogged>,
}

/// What `inputs` show, under `settings`.
pub(crate) fn fit(inputs: &[Input], settings: &Settings) -> Fit {
    let account = Account::new(inputs, settings, None);
    let checks: Vec<SessionCheck> = account.check().into_iter().map(|(_, c)| c).collect();
    Fit {
        fixed: account.fixed,
        shares: unlogged::totals(&checks).into_iter().collect(),
    }
}

/// [`read`], with every fitted part taken from `fit` (made on other
/// sessions) instead of the sessions read: a fixed prompt `fit` has no
/// fit for is the input's own, shares it has none for are none.
pub(crate) fn read_fitted(
    inputs: &[Input],
    settings: &Settings,
    fit: &Fit,
) -> Vec<Option<(SessionCheck, AccountView)>> {
    let account = Account::new(inputs, settings, Some(fit));
    let (at, checks): (Vec<usize>, Vec<SessionCheck>) = account.check().into_iter().unzip();
    aligned(inputs.len(), at, checks, |k| {
        let file = inputs[k].file;
        let group = (file.source.format.clone(), Kind::of(file).prompt());
        let e = fit.shares.get(&group).map(Unlogged::expect);
        masked(e.unwrap_or_default(), settings)
    })
}

fn uses_shares(settings: &Settings) -> bool {
    settings.has(Part::ColdReadShare) || settings.has(Part::EvictionShare)
}

/// `e` without the shares whose parts are off.
fn masked(mut e: Expect, settings: &Settings) -> Expect {
    if !settings.has(Part::ColdReadShare) {
        e.warm_elsewhere = 0.0;
    }
    if !settings.has(Part::EvictionShare) {
        e.evicted = [0.0; 3];
    }
    e
}

/// The shares each session is priced by, fitted on the others' checks
/// `log_alone`, of the inputs at positions `at`, among `n` inputs.
fn expect_at(
    n: usize,
    at: &[usize],
    log_alone: &[SessionCheck],
    settings: &Settings,
) -> Vec<Option<Expect>> {
    let mut expect: Vec<Option<Expect>> = vec![None; n];
    for (k, e) in at.iter().zip(unlogged::leave_one_out(log_alone)) {
        expect[*k] = Some(masked(e, settings));
    }
    expect
}

/// Which sessions share a fitted fixed prompt: a format and kind, and the
/// model under [`Part::FixedPromptPerModel`] (else empty).
type FixedKey = (String, Kind, String);

fn fixed_key(file: &SessionFile, settings: &Settings) -> FixedKey {
    let model = if settings.has(Part::FixedPromptPerModel) {
        file.requests
            .iter()
            .find_map(|r| r.model.clone())
            .or_else(|| file.model.clone())
            .unwrap_or_default()
    } else {
        String::new()
    };
    (file.source.format.clone(), Kind::of(file).prompt(), model)
}

/// What every session of a check can find of the others.
struct Account<'a> {
    inputs: &'a [Input<'a>],
    settings: &'a Settings,
    by_id: HashMap<&'a str, &'a Input<'a>>,
    fixed: HashMap<FixedKey, Option<u64>>,
    /// Each input's key in `fixed`.
    keys: Vec<FixedKey>,
    timeline: Option<Timeline>,
    cached_lengths: HashMap<u64, usize>,
}

impl<'a> Account<'a> {
    /// The account of `inputs`, its fixed prompts fitted on them, or taken
    /// from `fitted`.
    fn new(inputs: &'a [Input<'a>], settings: &'a Settings, fitted: Option<&Fit>) -> Account<'a> {
        let by_id = inputs.iter().map(|i| (i.file.id.as_str(), i)).collect();
        let keys: Vec<FixedKey> = inputs.iter().map(|i| fixed_key(i.file, settings)).collect();
        let mut fixed: HashMap<FixedKey, Option<u64>> = HashMap::new();
        for key in &keys {
            if fixed.contains_key(key) {
                continue;
            }
            let value = match fitted {
                Some(f) => f.fixed.get(key).copied().flatten(),
                None => {
                    let of = |same_kind: bool| {
                        let files: Vec<&SessionFile> = inputs
                            .iter()
                            .zip(&keys)
                            .filter(|(_, k)| {
                                k.0 == key.0 && k.2 == key.2 && (!same_kind || k.1 == key.1)
                            })
                            .map(|(j, _)| j.file)
                            .collect();
                        fit_fixed_prefix(&files)
                    };
                    of(true).or_else(|| of(false))
                }
            };
            fixed.insert(key.clone(), value);
        }
        let mut cached_lengths: HashMap<u64, usize> = HashMap::new();
        for r in inputs.iter().flat_map(|i| &i.file.requests) {
            if r.cache_read_input_tokens > 0 {
                *cached_lengths.entry(r.cache_read_input_tokens).or_default() += 1;
            }
        }
        Account {
            inputs,
            settings,
            by_id,
            fixed,
            keys,
            timeline: settings
                .has(Part::SharedCache)
                .then(|| Timeline::new(inputs)),
            cached_lengths,
        }
    }

    /// The sessions with usage, each with its position in the inputs.
    fn check(&self) -> Vec<(usize, SessionCheck)> {
        use rayon::prelude::*;
        self.inputs
            .par_iter()
            .enumerate()
            .filter(|(_, i)| i.file.requests.iter().any(|r| r.prompt_tokens() > 0))
            .map(|(me, i)| {
                let shared = Shared {
                    parent: i
                        .file
                        .parent_id
                        .as_deref()
                        .and_then(|p| self.by_id.get(p).copied()),
                    timeline: self.timeline.as_ref(),
                    me,
                    fixed_prefix: if self.settings.has(Part::FixedPromptFit) {
                        self.fixed.get(&self.keys[me]).copied().flatten()
                    } else {
                        None
                    },
                    cached_lengths: Some(&self.cached_lengths),
                };
                (me, check_session(i, &shared, self.settings))
            })
            .collect()
    }
}
