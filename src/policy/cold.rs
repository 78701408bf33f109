//! A policy no agent has yet: compact while the cache is cold.
//!
//! When the gap before a request exceeds the cache lifetime the whole prompt
//! is written to the cache again anyway, so a compaction made then costs no
//! extra cache write. [`ColdCompact`] wraps smith's engine: at a cold request
//! it compacts as soon as the context is above `cold_at` of the window (a
//! second engine whose trigger is `cold_at`), at every other request it is
//! smith's engine unchanged. Without times, or with the knob off, nothing is
//! cold and the replay is smith's to the byte.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{Policy, Setup};
use crate::cost::session::{Recorded, Settings};
use crate::cost::CacheTtl;
use crate::engine::{Admitted, Budget, Compaction, Compactor, Config, Engine};
use crate::estimate::Measure;
use crate::transcript::{Message, Role};

/// Which requests (in order) find the cache cold: the gap since the
/// previous request with a known time exceeds `ttl`.
pub fn cold_requests(messages: &[Arc<Message>], recorded: &Recorded, ttl: CacheTtl) -> Vec<bool> {
    let mut last: Option<i64> = None;
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::Assistant)
        .map(|(i, _)| {
            let t = recorded.time_of(i);
            let cold = matches!((ttl.seconds(), last, t), (Some(s), Some(a), Some(b)) if b - a > s);
            if t.is_some() {
                last = t;
            }
            cold
        })
        .collect()
}

/// The engine of `setup` for one session when it compacts while the cache
/// is cold: smith with `cold_compact_at` on and a session whose records
/// give times. `None` otherwise: the setup's own compactor (`own`, already
/// bound to this session's counts) is the replay. Both engines of the
/// wrapper measure as `own` does, sharing its counts, so that the knob
/// works under any estimator. The lifetime is the one the session is
/// priced with.
pub(crate) fn for_session(
    setup: &Setup,
    own: &dyn Compactor,
    messages: &[Arc<Message>],
    recorded: Option<&Recorded>,
    settings: &Settings,
) -> Option<ColdCompact> {
    let f = setup.knobs.cold_compact_at;
    if setup.policy != Policy::Smith || f == 0.0 {
        return None;
    }
    let recorded = recorded?;
    let ttl = settings
        .ttl
        .or(recorded.tier())
        .unwrap_or(CacheTtl::FiveMinutes);
    Some(ColdCompact::measured(
        setup.config,
        Some(f),
        cold_requests(messages, recorded, ttl),
        own.measure().clone(),
    ))
}

/// smith's engine, compacting from `cold_at` of the window at cold requests.
pub struct ColdCompact {
    normal: Engine,
    cold: Option<Engine>,
    cold_at: Arc<[bool]>,
    next: AtomicUsize,
}

impl ColdCompact {
    /// `cold_at`: the knob (`None`: off); `cold`: [`cold_requests`]. A knob
    /// at or below `compact_to` would aim above where it starts, so it is
    /// off too.
    pub fn new(config: Config, cold_at: Option<f64>, cold: Vec<bool>) -> ColdCompact {
        ColdCompact::measured(config, cold_at, cold, Measure::bytes())
    }

    /// [`ColdCompact::new`] estimating with `measure` (an estimator other
    /// than smith's bytes / 4) in both engines.
    pub(crate) fn measured(
        config: Config,
        cold_at: Option<f64>,
        cold: Vec<bool>,
        measure: Measure,
    ) -> ColdCompact {
        let cold_engine = cold_at
            .filter(|f| *f > config.compact_to && *f < config.compact_at)
            .map(|f| {
                Engine::with_measure(
                    Config {
                        compact_at: f,
                        ..config
                    },
                    measure.clone(),
                )
            });
        ColdCompact {
            normal: Engine::with_measure(config, measure),
            cold: cold_engine,
            cold_at: cold.into(),
            next: AtomicUsize::new(0),
        }
    }
}

impl Compactor for ColdCompact {
    fn name(&self) -> &str {
        "smith+cold"
    }

    fn budget(&self) -> &Budget {
        self.normal.budget()
    }

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        // Asked once per request, in order.
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        self.compact_request(k, messages, bytes)
    }

    fn compact_request(&self, request: usize, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        match &self.cold {
            Some(e) if self.cold_at.get(request).copied().unwrap_or(false) => {
                e.compact_measured(messages, bytes)
            }
            _ => self.normal.compact_measured(messages, bytes),
        }
    }

    fn at_ratio(&self, ratio: f64) -> Box<dyn Compactor + '_> {
        Box::new(ColdCompact {
            normal: self.normal.with_ratio(ratio),
            cold: self.cold.as_ref().map(|e| e.with_ratio(ratio)),
            cold_at: self.cold_at.clone(),
            next: AtomicUsize::new(0),
        })
    }

    fn admit(&self, message: &Arc<Message>) -> Admitted {
        self.normal.admit(message)
    }

    /// The replay keeps its running total in this measure's tokens and
    /// hands it to whichever engine answers, so it must be theirs.
    fn measure(&self) -> &Measure {
        self.normal.measure()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::Estimator;
    use crate::transcript::{Block, Role};

    /// A session whose user messages are two bytes per character, so that
    /// bytes / 4 counts twice what chars / 4 does.
    fn accented(turns: usize) -> Vec<Arc<Message>> {
        (0..turns)
            .flat_map(|_| {
                [
                    Message::user("é".repeat(400).as_bytes()),
                    Message::new(Role::Assistant, vec![Block::text(&b"ok"[..])], false, None),
                ]
            })
            .map(Arc::new)
            .collect()
    }

    #[test]
    fn the_wrapper_measures_as_the_engine_it_wraps() {
        let messages = accented(10);
        let config = Config {
            max_tokens: 2000,
            ..Config::default()
        };
        let chars4 = || Measure::new(Estimator::Chars4);
        let plain = crate::replay::replay(&messages, &Engine::with_measure(config, chars4()));
        let bytes = crate::replay::replay(&messages, &Engine::new(config));
        // The session is built so that the estimators disagree on it.
        assert_eq!((plain.compactions, bytes.compactions > 0), (0, true));
        // No request is cold: the wrapper must be the engine to the figure,
        // under chars4 as under bytes4 (before, it kept its running total in
        // bytes / 4 whatever its engines measured in).
        let never = vec![false; messages.len()];
        let wrapped = ColdCompact::measured(config, Some(0.6), never.clone(), chars4());
        assert_eq!(wrapped.measure().estimator(), Estimator::Chars4);
        assert_eq!(crate::replay::replay(&messages, &wrapped), plain);
        let wrapped = ColdCompact::new(config, Some(0.6), never);
        assert_eq!(crate::replay::replay(&messages, &wrapped), bytes);
    }
}
