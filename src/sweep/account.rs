//! The account's cache in a sweep's price. A provider keeps one prompt
//! cache for every request of an account, so the imported sessions of a
//! sweep are priced as `calibrate`'s bill check prices them: a request whose
//! own cache is cold reads the agent's fixed prompt when another session
//! used it within the lifetime, else the share the account's other work
//! shows, and a warm one loses the share of its prefix that early evictions
//! take (`crate::cost::bill::unlogged`). The view is made once, before the sweep,
//! from every session of the plan (not only a shard's), so that the shards
//! of a sweep and a resumed sweep price each session alike.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use crate::calibrate::formats::{bill_inputs, fit_formats, FormatFit, Loaded};
use crate::cost::bill;
use crate::cost::bill::unlogged::AccountView;
use crate::cost::session::Settings;
use crate::transcript::locate::read_meta;
use crate::transcript::session_file::SessionFile;
use crate::transcript::SessionRef;

/// Each imported session's view of the account, by its transcript.
pub(crate) type Accounts = HashMap<PathBuf, Arc<AccountView>>;

/// The views of the sessions of `refs` that recorded their usage, priced
/// under `cost`. A session that cannot be read is left out here; the sweep
/// reports it when it comes to it.
pub(crate) fn of(refs: &[SessionRef], cost: &Settings) -> Accounts {
    let loaded: Vec<(PathBuf, Loaded)> = refs
        .par_iter()
        .filter_map(|r| {
            // Only an import's records say anything of the account, and
            // `session.json` alone tells one: smith's own transcripts are
            // not read here.
            let meta = read_meta(r).ok()??;
            SessionFile::from_meta(meta.raw.as_ref()?)?;
            // Every session is held until the account is read: in outline
            // (see `crate::transcript::outline`), not its messages.
            let l = Loaded::outlined(r).ok()?;
            l.file.is_some().then(|| (r.transcript.clone(), l))
        })
        .collect();
    let (paths, sessions): (Vec<PathBuf>, Vec<Loaded>) = loaded.into_iter().unzip();
    paths
        .into_iter()
        .zip(views(&sessions, &fit_formats(&sessions).0, cost))
        .filter_map(|(p, a)| Some((p, Arc::new(a?))))
        .collect()
}

/// The view of the account of each imported session of `sessions` (those
/// with an import's `session.json`, in order), priced under `cost` with the
/// formats' `fits`. A session alone, or priced by its log alone, has one
/// too: the agent's fixed prompt, and what a compaction agent finds of its
/// parent's context, are the log's, whatever the account shares.
pub(crate) fn views(
    sessions: &[Loaded],
    fits: &[FormatFit],
    cost: &Settings,
) -> Vec<Option<AccountView>> {
    bill::accounts(&bill_inputs(sessions, fits), &cost.bill())
}
