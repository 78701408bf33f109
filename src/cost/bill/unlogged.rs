//! The account's cache as its log cannot show it: a provider's prompt cache
//! serves every request of an account, and the logs checked hold only some
//! of them, so two things happen that no logged request explains.
//!
//! - **Warm elsewhere.** A request whose own cache is cold (a session's
//!   first, one after the lifetime ran out, a new model) finds the agent's
//!   fixed prompt cached with no logged session of its kind keeping it warm:
//!   the account's other work (another machine, a project not imported)
//!   did. How often depends on the account, from never to every time.
//! - **Early eviction.** A request the log shows warm reads only a shorter
//!   prefix ([`Cause::EarlyEviction`], [`Cause::Unexplained`]); its share
//!   grows with the idle gap before it, well inside the lifetime.
//!
//! Neither can be told for one request, so the check prices each by its
//! expected share, fitted per format and kind of session ([`Kind::prompt`])
//! on the *other* sessions of the check: a session is never priced by what
//! its own recorded usage says.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::types::{Cause, Chance, Kind, SessionCheck};

/// The idle gaps (seconds since the previous request of the model) at which
/// the share of early evictions is fitted apart: under a minute, up to the
/// five-minute lifetime, beyond it (the one-hour tier).
pub(crate) const GAP_BUCKETS: [i64; 2] = [60, 300];

/// Requests a share is fitted on before it is used; fewer, and the check
/// assumes none of it (the log alone).
pub(crate) const MIN_SEEN: usize = 20;

/// The bucket of an idle gap.
pub(crate) fn gap_bucket(gap: i64) -> usize {
    GAP_BUCKETS.iter().filter(|b| gap >= **b).count()
}

/// Requests seen and those of them the event happened at; and tokens: at
/// stake in them, and of those, affected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Tally {
    pub(crate) seen: usize,
    pub(crate) events: usize,
    pub(crate) tokens: u64,
    pub(crate) affected: u64,
}

impl Tally {
    fn add(&mut self, tokens: u64, affected: Option<u64>) {
        self.seen += 1;
        self.events += usize::from(affected.is_some());
        self.tokens += tokens;
        self.affected += affected.unwrap_or(0).min(tokens);
    }

    fn plus(self, o: Tally) -> Tally {
        Tally {
            seen: self.seen + o.seen,
            events: self.events + o.events,
            tokens: self.tokens + o.tokens,
            affected: self.affected + o.affected,
        }
    }

    fn minus(self, o: Tally) -> Tally {
        Tally {
            seen: self.seen.saturating_sub(o.seen),
            events: self.events.saturating_sub(o.events),
            tokens: self.tokens.saturating_sub(o.tokens),
            affected: self.affected.saturating_sub(o.affected),
        }
    }

    /// The share of the tokens affected, however few requests were seen
    /// (0 of none).
    pub(crate) fn fraction(self) -> f64 {
        self.affected as f64 / self.tokens.max(1) as f64
    }

    /// [`Tally::fraction`], once [`MIN_SEEN`] requests were seen.
    pub(crate) fn share(self) -> Option<f64> {
        (self.seen >= MIN_SEEN && self.tokens > 0).then(|| self.fraction())
    }
}

/// What the requests of some sessions show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Unlogged {
    /// [`Chance::ColdUnshared`] requests and their fixed prompts, and those
    /// that read at least half of it all the same, with what they read of
    /// it.
    pub(crate) warm_elsewhere: Tally,
    /// [`Chance::Warm`] requests per [`gap_bucket`] and their warm prefixes
    /// past the fixed prompt, and those whose recorded miss no cold cache
    /// explains, with what they lost of it.
    pub(crate) evicted: [Tally; 3],
}

impl Unlogged {
    /// What one session's requests show.
    pub(crate) fn of(c: &SessionCheck) -> Unlogged {
        let mut u = Unlogged::default();
        for d in &c.detail {
            let read = d.recorded.cache_read;
            match d.chance {
                Some(Chance::ColdUnshared) => u.warm_elsewhere.add(
                    c.fixed_prefix,
                    (read > 0 && read * 2 >= c.fixed_prefix).then_some(read),
                ),
                Some(Chance::Warm { bucket, at_risk }) => {
                    let evicted = matches!(d.miss, Some(Cause::EarlyEviction | Cause::Unexplained));
                    // What it lost of the warm prefix: all it did not read
                    // of the fixed prompt and the rest.
                    let kept = read.saturating_sub(c.fixed_prefix);
                    u.evicted[bucket].add(at_risk, evicted.then(|| at_risk.saturating_sub(kept)))
                }
                None => {}
            }
        }
        u
    }

    fn plus(self, o: Unlogged) -> Unlogged {
        Unlogged {
            warm_elsewhere: self.warm_elsewhere.plus(o.warm_elsewhere),
            evicted: std::array::from_fn(|b| self.evicted[b].plus(o.evicted[b])),
        }
    }

    fn minus(self, o: Unlogged) -> Unlogged {
        Unlogged {
            warm_elsewhere: self.warm_elsewhere.minus(o.warm_elsewhere),
            evicted: std::array::from_fn(|b| self.evicted[b].minus(o.evicted[b])),
        }
    }

    /// The shares to price by ([`MIN_SEEN`] or nothing).
    pub(crate) fn expect(&self) -> Expect {
        Expect {
            warm_elsewhere: self.warm_elsewhere.share().unwrap_or(0.0),
            evicted: self.evicted.map(|t| t.share().unwrap_or(0.0)),
        }
    }
}

/// The shares a session is priced by.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Expect {
    /// Of a cold request's fixed prompt, found cached all the same.
    pub(crate) warm_elsewhere: f64,
    /// Of a warm request's prefix past the fixed prompt, lost, per
    /// [`gap_bucket`].
    pub(crate) evicted: [f64; 3],
}

/// What a replay's price takes of the account for one session, from its
/// check by the log alone: the replay sends other prompts than the log, at
/// the same times, so the account's cache beyond the session is what it was.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AccountView {
    /// The answering messages of the requests at which another session of
    /// the check had used the agent's fixed prompt within the lifetime.
    warm_at: HashSet<usize>,
    /// The shares of the account's cache beyond the log, as the other
    /// sessions show them.
    expect: Expect,
    /// Whether a cold request takes the share found cached elsewhere: not a
    /// compaction agent's, whose prompt no other work of the account sends.
    warm_elsewhere_applies: bool,
    /// The fixed prompt the check found shared by the account's sessions,
    /// in tokens: what a cold request can find cached.
    fixed_prefix: u64,
    /// A compaction agent's first request: what the check found it read
    /// of its parent's context.
    first_read: Option<u64>,
}

impl AccountView {
    /// The view of the session `check` (by the log alone), priced by
    /// `expect`.
    pub(crate) fn of(check: &SessionCheck, expect: Expect) -> AccountView {
        AccountView {
            warm_at: check
                .detail
                .iter()
                .filter(|d| d.account_warm)
                .map(|d| d.message_index)
                .collect(),
            expect,
            warm_elsewhere_applies: check.kind != Kind::Compaction,
            fixed_prefix: check.fixed_prefix,
            first_read: check.first_read,
        }
    }

    /// A compaction agent's first read of its parent's context.
    pub(crate) fn first_read(&self) -> Option<u64> {
        self.first_read
    }

    /// The fixed prompt the account's sessions share, in tokens.
    pub(crate) fn fixed_prefix(&self) -> u64 {
        self.fixed_prefix
    }

    /// Whether another logged session had used the fixed prompt within the
    /// lifetime when the request answered by `message` was sent: a read of
    /// the account's cache the logs show, not one the shares expect.
    pub(crate) fn warm_from_log(&self, message: usize) -> bool {
        self.warm_at.contains(&message)
    }

    /// Of the fixed prompt, the share a request answered by `message` reads
    /// from the cache although its own cache is cold.
    pub(crate) fn cold_read(&self, message: usize) -> f64 {
        if self.warm_at.contains(&message) {
            1.0
        } else if self.warm_elsewhere_applies {
            self.expect.warm_elsewhere
        } else {
            0.0
        }
    }

    /// Of a warm request's prefix past the fixed prompt, the share lost
    /// after `gap` idle seconds.
    pub(crate) fn evicted(&self, gap: i64) -> f64 {
        self.expect.evicted[gap_bucket(gap)]
    }

    /// A main session's view sharing a fixed prompt of `fixed_prefix`
    /// tokens, for tests of what prices by it.
    #[cfg(test)]
    pub(crate) fn of_main(warm_at: &[usize], expect: Expect, fixed_prefix: u64) -> AccountView {
        AccountView {
            warm_at: warm_at.iter().copied().collect(),
            expect,
            warm_elsewhere_applies: true,
            fixed_prefix,
            first_read: None,
        }
    }
}

/// Which sessions' requests are fitted together.
type Group = (String, Kind);

fn group(c: &SessionCheck) -> Group {
    (c.format.clone(), c.kind.prompt())
}

fn by_group<'a>(checks: impl IntoIterator<Item = &'a SessionCheck>) -> HashMap<Group, Unlogged> {
    let mut by: HashMap<Group, Unlogged> = HashMap::new();
    for c in checks {
        let e = by.entry(group(c)).or_default();
        *e = e.plus(Unlogged::of(c));
    }
    by
}

/// The totals per format and kind of the sessions `checks`, in that order.
pub(crate) fn totals<'a>(
    checks: impl IntoIterator<Item = &'a SessionCheck>,
) -> Vec<(Group, Unlogged)> {
    let mut v: Vec<(Group, Unlogged)> = by_group(checks).into_iter().collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Each session's shares, fitted on the other sessions of its group.
pub(crate) fn leave_one_out(checks: &[SessionCheck]) -> Vec<Expect> {
    let totals = by_group(checks);
    checks
        .iter()
        .map(|c| {
            totals
                .get(&group(c))
                .map(|t| t.minus(Unlogged::of(c)).expect())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_fall_in_their_buckets() {
        assert_eq!(gap_bucket(0), 0);
        assert_eq!(gap_bucket(59), 0);
        assert_eq!(gap_bucket(60), 1);
        assert_eq!(gap_bucket(299), 1);
        assert_eq!(gap_bucket(300), 2);
        assert_eq!(gap_bucket(3_000), 2);
    }

    #[test]
    fn a_share_needs_enough_requests_and_leaving_one_out_subtracts_it() {
        let mut t = Tally::default();
        for i in 0..MIN_SEEN - 1 {
            t.add(100, (i % 2 == 0).then_some(100));
        }
        assert_eq!(t.share(), None);
        t.add(100, None);
        assert_eq!(t.share(), Some(0.5));
        // Tokens weigh: a request that lost a quarter counts a quarter.
        let mut q = t;
        q.add(400, Some(100));
        assert_eq!(q.share(), Some(1_100.0 / 2_400.0));
        let own = Tally {
            seen: 4,
            events: 4,
            tokens: 400,
            affected: 400,
        };
        assert_eq!(t.plus(own).minus(own), t);
    }
}
