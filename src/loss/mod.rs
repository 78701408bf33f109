//! The loss that mattered: of the tool results a policy shortened or
//! removed, how many did the rest of the session need again?
//!
//! For every result a compaction shortened (cut to a head, capped, stubbed,
//! masked, cleared) or removed (summarised away) at request k, counted once
//! however often it changed:
//!
//! - **needed again** when a later assistant message (its text or a tool
//!   call's arguments), from the one answering k on, uses a distinctive
//!   token (see [`tokens`]: an identifier, path or number of six characters
//!   or more; plain words such as `boolean` are left out) that the result
//!   lost by then and that the model could see nowhere else in the history
//!   it was answering;
//! - **re-fetched** when the same call (tool name and arguments) is made
//!   again from the answer to k on.
//!
//! "Could see elsewhere" is approximated from the record and the replay:
//! a token is visible at request q if some other block of the record
//! before the answer holds it, that message is still in the history at q
//! (not summarised away; a summary is assumed to keep no token, since
//! offline it is a stand-in with no content), and, if that block is a
//! result, it had not lost the token by q. Thinking blocks and attachments
//! are not looked at.
//!
//! The session after k was recorded under the policy smith actually ran,
//! so this is a proxy, not a counterfactual: a model under another policy
//! would have acted differently from k on. And a repeated call is counted
//! as a re-fetch even when it is a re-run (`make test` before and after a
//! fix).
//!
//! Cost: the record is tokenized once per session ([`RecordIndex`], shared
//! by every policy and config of a sweep and built only if some replay
//! lost something; `replay --json` starts it beside its one replay and
//! stops it if nothing was lost), and only the tokens some assistant message uses are
//! indexed, since a loss matters only through a use; a text the record
//! holds more than once (a file read again) is tokenized once; each replay only
//! follows positions, remembers the text each result kept, and afterwards
//! tokenizes those kept texts once.

pub(crate) mod index;
#[cfg(all(test, feature = "full"))]
mod measure_tests;
pub(crate) mod real;
#[cfg(all(test, feature = "full"))]
mod real_tests;
pub mod refetch;
pub(crate) mod tokens;
mod track;
mod vocab;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Serialize;

pub(crate) use index::RecordIndex;

use crate::engine::Compactor;
use crate::replay::{self, SessionFacts};
use crate::transcript::Message;

/// What a replay lost that mattered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Loss {
    /// Distinct results shortened or removed.
    pub(crate) results_lost: u64,
    /// Of those, results a later message needed a lost token of.
    pub(crate) needed_again: u64,
    /// Of those, results whose call was made again.
    pub(crate) refetched: u64,
    /// Of those, results still current where they were lost (a file read
    /// whose file was not edited or written since) that a later message
    /// used a lost token of, visible elsewhere or not, or (a file read)
    /// whose file a later call edits or writes, which Claude Code allows
    /// only once the file is read again: what predicts that the agent
    /// fetches a result again (see [`real`]).
    pub(crate) still_needed: u64,
    /// The re-fetches [`refetch::MODEL`] expects of the lost results.
    pub(crate) refetch: refetch::Refetch,
}

/// Replays `record` under `compactor` and measures the loss; the record
/// index is built here if needed.
pub fn replay<C: Compactor + ?Sized>(record: &[Arc<Message>], compactor: &C) -> SessionFacts {
    replay_shared(record, compactor, &OnceLock::new())
}

/// Like [`replay`], with the record index in `index`, built there the first
/// time any replay sharing it needs it.
pub(crate) fn replay_shared<C: Compactor + ?Sized>(
    record: &[Arc<Message>],
    compactor: &C,
    index: &OnceLock<RecordIndex>,
) -> SessionFacts {
    replay_observed(record, compactor, index, None, |_| {})
}

/// [`replay_shared`], showing every request's facts to `observe` too (the
/// sweep prices them there, in the same pass), and counting what is sent
/// as the provider would where the session was measured (`sizes`).
pub(crate) fn replay_observed<C: Compactor + ?Sized>(
    record: &[Arc<Message>],
    compactor: &C,
    index: &OnceLock<RecordIndex>,
    sizes: Option<replay::Sizes>,
    observe: impl FnMut(&replay::RequestFacts),
) -> SessionFacts {
    let (mut facts, tracker) = replay_tracked(record, compactor, sizes, observe);
    if !tracker.is_empty() {
        let index = index.get_or_init(|| RecordIndex::build(record));
        set_loss(&mut facts, tracker.evaluate(index, &refetch::MODEL));
    }
    facts
}

/// [`replay_observed`] for one replay of one session (`replay --json`),
/// with the record index built on a second thread while the replay runs:
/// the index depends only on the record, so the two overlap and the
/// evaluation then waits for the index. Should nothing be lost, the
/// build is told to stop and its work is thrown away, so a session
/// without losses pays a thread's start and a little CPU, not the index.
/// The sweep, which already runs a session per core and shares one index
/// over many replays, keeps [`replay_observed`].
pub fn replay_observed_concurrently<C: Compactor + ?Sized>(
    record: &[Arc<Message>],
    compactor: &C,
    sizes: Option<replay::Sizes>,
    observe: impl FnMut(&replay::RequestFacts),
) -> SessionFacts {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let build = s.spawn(|| RecordIndex::build_unless(record, &stop));
        let (mut facts, tracker) = replay_tracked(record, compactor, sizes, observe);
        if tracker.is_empty() {
            stop.store(true, Ordering::Relaxed);
            return facts;
        }
        let index = match build.join() {
            Ok(Some(index)) => index,
            // Stopped only above, so not here; built in place rather
            // than trusted to be unreachable.
            Ok(None) => RecordIndex::build(record),
            Err(panic) => std::panic::resume_unwind(panic),
        };
        set_loss(&mut facts, tracker.evaluate(&index, &refetch::MODEL));
        facts
    })
}

/// The replay with its tracker, before any evaluation.
fn replay_tracked<'r, C: Compactor + ?Sized>(
    record: &'r [Arc<Message>],
    compactor: &C,
    sizes: Option<replay::Sizes>,
    mut observe: impl FnMut(&replay::RequestFacts),
) -> (SessionFacts, track::Tracker<'r>) {
    let mut tracker = track::Tracker::new(record);
    let facts = replay::replay_sized(record, compactor, sizes, |r, history, c| {
        tracker.observe(r, history, c);
        observe(r);
        true
    });
    (facts, tracker)
}

fn set_loss(facts: &mut SessionFacts, loss: Loss) {
    facts.results_lost = loss.results_lost;
    facts.needed_again = loss.needed_again;
    facts.refetched = loss.refetched;
    facts.refetch = loss.refetch;
    facts.still_needed = loss.still_needed;
}
