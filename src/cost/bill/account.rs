//! Every session of a check on the account's one timeline: the check by the
//! log alone, then priced by the shares the other sessions show.

use std::collections::HashMap;

use super::predict::{check_session, fit_fixed_prefix};
use super::timeline::{Shared, Timeline};
use super::types::{Input, Kind, SessionCheck, Settings};
use super::unlogged::{self, AccountView, Expect};
use crate::transcript::session_file::SessionFile;

/// Checks every session that carries usage per request, in parallel, on
/// the account's one timeline (or each alone, [`Settings::per_session`]):
/// a compaction agent finds its parent among `inputs` by `parent_id`, and a
/// request whose own cache is cold finds the agent's fixed prompt cached
/// when another session of the same kind and model used it within the
/// lifetime. The fixed prompt is fitted per format and kind
/// ([`fit_fixed_prefix`]). Then each session is checked again, priced by
/// the account's cache beyond the log as the other sessions show it
/// ([`unlogged`]).
pub fn check(inputs: &[Input], settings: &Settings) -> Vec<SessionCheck> {
    let account = Account::new(inputs, settings);
    let (at, log_alone): (Vec<usize>, Vec<SessionCheck>) = account.check(None).into_iter().unzip();
    if settings.log_alone {
        return log_alone;
    }
    let expect = expect_at(inputs.len(), &at, &log_alone);
    account
        .check(Some(&expect))
        .into_iter()
        .map(|(_, c)| c)
        .collect()
}

/// What a replay's price takes of the account, per input (`None`: an input
/// without usage): the check's first pass, by the log alone, gives where
/// another session kept the fixed prompt warm and the shares the other
/// sessions show, exactly those [`check`] prices its second pass by.
pub fn accounts(inputs: &[Input], settings: &Settings) -> Vec<Option<AccountView>> {
    let account = Account::new(inputs, settings);
    let (at, log_alone): (Vec<usize>, Vec<SessionCheck>) = account.check(None).into_iter().unzip();
    let expect = if settings.log_alone {
        vec![None; inputs.len()]
    } else {
        expect_at(inputs.len(), &at, &log_alone)
    };
    let mut out: Vec<Option<AccountView>> = vec![None; inputs.len()];
    for (k, c) in at.iter().zip(&log_alone) {
        out[*k] = Some(AccountView::of(c, expect[*k].unwrap_or_default()));
    }
    out
}

/// The shares each session is priced by, fitted on the others' checks
/// `log_alone`, of the inputs at positions `at`, among `n` inputs.
fn expect_at(n: usize, at: &[usize], log_alone: &[SessionCheck]) -> Vec<Option<Expect>> {
    let mut expect: Vec<Option<Expect>> = vec![None; n];
    for (k, e) in at.iter().zip(unlogged::leave_one_out(log_alone)) {
        expect[*k] = Some(e);
    }
    expect
}

/// What every session of a check can find of the others.
struct Account<'a> {
    inputs: &'a [Input<'a>],
    settings: &'a Settings,
    by_id: HashMap<&'a str, &'a Input<'a>>,
    fixed: HashMap<(&'a str, Kind), Option<u64>>,
    timeline: Option<Timeline>,
    cached_lengths: HashMap<u64, usize>,
}

impl<'a> Account<'a> {
    fn new(inputs: &'a [Input<'a>], settings: &'a Settings) -> Account<'a> {
        let by_id = inputs.iter().map(|i| (i.file.id.as_str(), i)).collect();
        let mut fixed: HashMap<(&str, Kind), Option<u64>> = HashMap::new();
        for i in inputs {
            let format = i.file.source.format.as_str();
            let kind = Kind::of(i.file).prompt();
            fixed.entry((format, kind)).or_insert_with(|| {
                let of = |want: Option<Kind>| {
                    let files: Vec<&SessionFile> = inputs
                        .iter()
                        .filter(|j| j.file.source.format == format)
                        .filter(|j| want.is_none_or(|k| Kind::of(j.file).prompt() == k))
                        .map(|j| j.file)
                        .collect();
                    fit_fixed_prefix(&files)
                };
                of(Some(kind)).or_else(|| of(None))
            });
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
            timeline: (!settings.per_session).then(|| Timeline::new(inputs)),
            cached_lengths,
        }
    }

    /// The sessions with usage, each with its position in the inputs,
    /// priced by `expect[position]` (none: the log alone).
    fn check(&self, expect: Option<&[Option<Expect>]>) -> Vec<(usize, SessionCheck)> {
        use rayon::prelude::*;
        self.inputs
            .par_iter()
            .enumerate()
            .filter(|(_, i)| i.file.requests.iter().any(|r| r.prompt_tokens() > 0))
            .map(|(me, i)| {
                let kind = Kind::of(i.file).prompt();
                let shared = Shared {
                    parent: i
                        .file
                        .parent_id
                        .as_deref()
                        .and_then(|p| self.by_id.get(p).copied()),
                    timeline: self.timeline.as_ref(),
                    me,
                    fixed_prefix: self
                        .fixed
                        .get(&(i.file.source.format.as_str(), kind))
                        .copied()
                        .flatten(),
                    cached_lengths: Some(&self.cached_lengths),
                    expect: expect.and_then(|e| e[me]),
                };
                (me, check_session(i, &shared, self.settings))
            })
            .collect()
    }
}
