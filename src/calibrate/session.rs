//! The ratio and overhead a session replays under when the flags leave them
//! to it: what the session itself says about smith's two estimator knobs.
//!
//! - A smith session saved the ratio it had learned (`context_ratio` in its
//!   `session.json`, "so the first turn after a resume is not blind"): it
//!   replays at that ratio unless `--ratio` is given.
//! - An imported session whose requests carry the provider's prompt size
//!   replays with the ratio learned as smith would have learned it from those
//!   requests ([`crate::engine::learn`]), and with the agent's fixed prompt
//!   as overhead: what [`super::fit`] finds on the session's own requests.
//!   Each unless `--ratio` or `--overhead` is given.
//! - `--ratio learn` learns on any session: from its recorded usage if it has
//!   some, else it holds the ratio it starts from (the saved one, or 1.0).
//!
//! Every output of a replay whose knobs were chosen here says so
//! ([`Calibration`]); one that ran at the config's own knobs stays as it was.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::learn::{self, Observation};
pub(crate) use crate::engine::learn::{Calibration, OverheadMode, RatioMode};
use crate::engine::Config;
use crate::transcript::session_file::SessionFile;
use crate::transcript::{Message, Role, Session};

/// Which of the two knobs the command line (or a grid) set, so that the
/// session's own values give way to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Given {
    pub(crate) ratio: bool,
    pub(crate) overhead: bool,
}

/// Both given, unless a command says which it was not.
impl Default for Given {
    fn default() -> Given {
        Given::ALL
    }
}

impl Given {
    /// Both given: the config's knobs hold whatever the session says, as
    /// every replay did before sessions could choose.
    pub(crate) const ALL: Given = Given {
        ratio: true,
        overhead: true,
    };
}

/// What a session says about the ratio and overhead.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SessionCalibration {
    /// The `context_ratio` its `session.json` saved, when it is a ratio
    /// smith could hold (finite and positive).
    pub(crate) saved_ratio: Option<f64>,
    /// The requests whose billed prompt and history are known, in request
    /// order.
    pub(crate) observations: Vec<Observation>,
    /// The fitted overhead of those requests ([`super::fit`]).
    pub(crate) fitted_overhead: Option<u64>,
    /// The window the agent that recorded it ran under: what its log
    /// records, else its model's ([`crate::cost::table::context_window`]);
    /// `None` for smith's own sessions, which run under the user's.
    pub(crate) window: Option<u64>,
}

impl SessionCalibration {
    /// Reads it from a loaded session.
    pub(crate) fn of(session: &Session) -> SessionCalibration {
        let raw = session.meta.as_ref().and_then(|m| m.raw.as_ref());
        let saved_ratio = raw
            .and_then(|r| r.get("context_ratio"))
            .and_then(serde_json::Value::as_f64)
            .filter(|r| r.is_finite() && *r > 0.0);
        let file = raw.and_then(SessionFile::from_meta);
        let mut out = SessionCalibration {
            saved_ratio,
            ..SessionCalibration::default()
        };
        if let Some(file) = file {
            out.window = own_window(&file);
            out.observe(&session.messages, &file);
        }
        out
    }

    /// The observations and the fit of an imported session's record.
    pub(crate) fn observe(&mut self, messages: &[Arc<Message>], file: &SessionFile) {
        let Ok(points) = super::points(messages, file) else {
            return;
        };
        self.fitted_overhead = super::fit(&points).map(|f| f.overhead_tokens);
        self.observations = observations(messages, &points);
    }
}

/// The window an imported session's agent ran under: the one its log
/// records, else its model's, judged by its largest recorded prompt.
pub(crate) fn own_window(file: &SessionFile) -> Option<u64> {
    use crate::transcript::session_file::{FORMAT_CLAUDE_CODE, FORMAT_CODEX};
    if let Some(w) = file.context_window.filter(|&w| w > 0) {
        return Some(w);
    }
    let peak = file
        .requests
        .iter()
        .map(|r| r.input_tokens + r.cache_read_input_tokens + r.cache_creation_input_tokens)
        .max()
        .unwrap_or(0);
    let model = file
        .requests
        .iter()
        .find_map(|r| r.model.as_deref())
        .or(file.model.as_deref());
    match (model, file.source.format.as_str()) {
        (Some(m), _) => crate::cost::table::context_window(m, peak),
        // A log that names no model (no request was answered): its
        // agent's usual window.
        (None, FORMAT_CLAUDE_CODE) => Some(crate::cost::table::CLAUDE_WINDOW),
        (None, FORMAT_CODEX) => Some(crate::cost::table::GPT5_WINDOW),
        (None, _) => None,
    }
}

/// The points of a record as observations: each message index turned into
/// the number of the request it answered.
pub(crate) fn observations(messages: &[Arc<Message>], points: &[super::Point]) -> Vec<Observation> {
    let mut request_of = vec![usize::MAX; messages.len()];
    let mut k = 0;
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Assistant {
            request_of[i] = k;
            k += 1;
        }
    }
    let mut out: Vec<Observation> = points
        .iter()
        .filter_map(|p| {
            let request = *request_of.get(p.message_index)?;
            (request != usize::MAX).then_some(Observation {
                request,
                history_tokens: p.estimate,
                reported: p.reported,
            })
        })
        .collect();
    out.sort_by_key(|o| o.request);
    out
}

/// A config made concrete for one session.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Resolved {
    /// The config with the ratio of the first request (never
    /// [`learn::LEARN`]) and the overhead used.
    pub(crate) config: Config,
    /// The ratio in force at each request, when it is learned.
    pub(crate) ratios: Option<Vec<f64>>,
    /// What was chosen, when the session chose anything (`None`: the
    /// config's own knobs, as given).
    pub(crate) calibration: Option<Calibration>,
}

/// `config` for a session of `requests` requests that says `session`, the
/// flags having set what `given` says.
pub(crate) fn resolve(
    config: &Config,
    given: Given,
    session: &SessionCalibration,
    requests: usize,
) -> Resolved {
    let recorded = !session.observations.is_empty();
    let mut c = *config;
    let own_window = config.own_window();
    if own_window {
        c.max_tokens = session
            .window
            .unwrap_or(crate::engine::constants::defaults::MAX_TOKENS);
    }
    let overhead_mode = match session.fitted_overhead {
        Some(o) if !given.overhead && recorded => {
            c.overhead_tokens = o;
            OverheadMode::Fitted
        }
        _ => OverheadMode::Config,
    };
    let start = session
        .saved_ratio
        .unwrap_or(crate::engine::constants::defaults::RATIO);
    let ratio_mode = if config.learns_ratio() || (!given.ratio && recorded) {
        RatioMode::Learned
    } else if !given.ratio && session.saved_ratio.is_some() {
        RatioMode::Saved
    } else {
        RatioMode::Fixed
    };
    let ratios = match ratio_mode {
        RatioMode::Learned => {
            c.ratio = start;
            Some(learn::schedule(
                start,
                requests,
                &session.observations,
                c.overhead_tokens,
            ))
        }
        RatioMode::Saved => {
            c.ratio = start;
            None
        }
        RatioMode::Fixed => None,
    };
    let plain =
        ratio_mode == RatioMode::Fixed && overhead_mode == OverheadMode::Config && !own_window;
    let calibration = (!plain).then(|| Calibration {
        ratio_mode,
        ratio_start: c.ratio,
        ratio_end: ratios
            .as_ref()
            .and_then(|r| r.last().copied())
            .unwrap_or(c.ratio),
        observations: match ratio_mode {
            RatioMode::Learned => session.observations.len(),
            _ => 0,
        },
        overhead_mode,
        overhead_tokens: c.overhead_tokens,
        window_tokens: c.max_tokens,
        own_window,
    });
    Resolved {
        config: c,
        ratios,
        calibration,
    }
}

/// The requests of a record: its assistant messages.
pub(crate) fn requests(messages: &[Arc<Message>]) -> usize {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count()
}

/// A setup made concrete for one session.
#[derive(Clone, Debug)]
pub(crate) struct ForSession {
    /// What to build the compactor from: the ratio of the first request and
    /// the overhead used.
    pub(crate) setup: crate::policy::Setup,
    /// What outputs name: [`ForSession::setup`], with the ratio `learn` when
    /// it is learned.
    pub(crate) shown: crate::policy::Setup,
    /// The ratio in force at each request, when it is learned.
    pub(crate) ratios: Option<Vec<f64>>,
    pub(crate) calibration: Option<Calibration>,
}

impl ForSession {
    /// The compactor that replays `session`: the setup's, under the
    /// learned ratio when there is one.
    pub(crate) fn compactor(&self, session: &Session) -> Box<dyn crate::engine::Compactor> {
        let own = self
            .setup
            .compactor_for(&session.messages, session.run.as_ref());
        match &self.ratios {
            Some(r) => Box::new(crate::replay::learn::Learned::owning(own, r.clone())),
            None => own,
        }
    }

    /// The setup's label as outputs name it, with what the session chose.
    pub(crate) fn label(&self) -> String {
        match &self.calibration {
            Some(c) => format!("{} ({})", self.shown.label(), c.describe()),
            None => self.shown.label(),
        }
    }
}

/// `setup` for a session that says `session` (of `requests` requests).
pub(crate) fn for_session_with(
    setup: &crate::policy::Setup,
    given: Given,
    session: &SessionCalibration,
    requests: usize,
) -> ForSession {
    let r = resolve(&setup.config, given, session, requests);
    let mut concrete = setup.clone();
    concrete.config = r.config;
    let mut shown = concrete.clone();
    if r.ratios.is_some() {
        shown.config.ratio = learn::LEARN;
    }
    if setup.config.own_window() {
        shown.config.max_tokens = crate::engine::budget::OWN_WINDOW;
    }
    ForSession {
        setup: concrete,
        shown,
        ratios: r.ratios,
        calibration: r.calibration,
    }
}

/// [`for_session_with`] reading what `session` says.
pub(crate) fn for_session(
    setup: &crate::policy::Setup,
    given: Given,
    session: &Session,
) -> ForSession {
    for_session_with(
        setup,
        given,
        &SessionCalibration::of(session),
        requests(&session.messages),
    )
}
