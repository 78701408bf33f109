//! The report's "Compactions that went wrong": for the chosen config, each
//! kind of misfire (see `crate::replay::misfire`) with the sessions and
//! requests it happened at, each request linking into a session page the
//! report writes beside `index.html` (`sessions/<name>.html#r<request>`).
//!
//! The counts come from the sweep's data files; the requests are found by
//! replaying the named sessions under the chosen config again, since the data
//! files keep one row per session, not per request.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::calibrate::session::{for_session, Given};
use crate::replay::{self, Misfire, MisfireKind};

use super::data::SweepOutput;
use crate::format::escape_html;
use crate::sweep::figures;

/// Sessions named per kind, most misfires first; the rest are counted.
pub(crate) const SESSIONS_NAMED: usize = 20;

/// Requests named per session and kind; the rest are counted.
pub(crate) const REQUESTS_NAMED: usize = 10;

/// The folder beside `index.html` that holds the session pages.
pub(crate) const VIEWS_DIR: &str = "sessions";

/// One session's misfires under the chosen config.
#[derive(Clone, Debug)]
pub(crate) struct SessionMisfires {
    pub(crate) session: usize,
    pub(crate) misfires: Vec<Misfire>,
    /// The session page, relative to `index.html`, if it was written.
    pub(crate) view: Option<String>,
}

/// What the section shows, and the session pages to write.
#[derive(Clone, Debug, Default)]
pub(crate) struct Misfires {
    /// The sweep's totals per kind under the chosen config, and how many
    /// sessions had any; `None` for a sweep written before the columns.
    pub(crate) totals: Option<Vec<(MisfireKind, f64, usize)>>,
    pub(crate) sessions: Vec<SessionMisfires>,
    pub(crate) thrash_window: usize,
    /// Session pages: path relative to the report folder, and the page.
    pub(crate) views: Vec<(PathBuf, String)>,
    /// Sessions that could not be read again.
    pub(crate) warnings: Vec<String>,
}

impl Misfires {
    /// Finds the misfires of the `chosen` config in the sessions that had
    /// the most, and with `pages` renders those sessions' pages.
    pub(crate) fn find(data: &SweepOutput, chosen: usize, pages: bool) -> Misfires {
        let thrash_window = data.summary.thrash_window;
        let mut out = Misfires {
            thrash_window,
            ..Misfires::default()
        };
        let mut per_session = vec![0.0; data.sessions.len()];
        let mut totals = Vec::new();
        for kind in MisfireKind::ALL {
            let Ok(values) = data.per_session(figures::Metric::misfires(kind)) else {
                return out;
            };
            let mut total = 0.0;
            let mut sessions = 0;
            for (s, row) in values.iter().enumerate() {
                let v = row[chosen];
                if v > 0.0 {
                    total += v;
                    sessions += 1;
                    per_session[s] += v;
                }
            }
            totals.push((kind, total, sessions));
        }
        out.totals = Some(totals);
        let mut worst: Vec<usize> = (0..data.sessions.len())
            .filter(|&s| per_session[s] > 0.0)
            .collect();
        worst.sort_by(|&a, &b| per_session[b].total_cmp(&per_session[a]).then(a.cmp(&b)));
        worst.truncate(SESSIONS_NAMED);
        let mut used = Vec::new();
        for s in worst {
            let row = &data.sessions[s];
            let session = match super::load_row(&row.path) {
                Ok(session) => session,
                Err(e) => {
                    out.warnings.push(format!(
                        "{}: cannot read it again ({e:#}); its misfires are counted but not located",
                        row.path.display()
                    ));
                    continue;
                }
            };
            // The row as the sweep counted it: the ratio and overhead the
            // session chose, if it chose them.
            let setup = for_session(&data.setup_of(s, chosen), Given::ALL, &session);
            let engine = setup.compactor(&session);
            let mut facts = replay::replay_sized(
                &session.messages,
                engine.as_ref(),
                replay::Sizes::of_session(&session),
                |_, _, _| true,
            );
            facts.set_thrash_window(thrash_window);
            let mut name = super::slug(&row.label);
            let mut n = 2;
            while used.contains(&name) {
                name = format!("{}-{n}", super::slug(&row.label));
                n += 1;
            }
            used.push(name.clone());
            let view = pages.then(|| {
                let rel = PathBuf::from(VIEWS_DIR).join(format!("{name}.html"));
                let page = crate::view::web::page(
                    &session.messages,
                    engine.as_ref(),
                    &row.label,
                    &crate::view::web::Shown {
                        config: &setup.label(),
                        units: data.summary.tokens.axis(),
                    },
                    session.log.skipped_count(),
                    thrash_window,
                    &crate::view::web::Recorded::default(),
                );
                out.views.push((rel, page));
                format!("{VIEWS_DIR}/{name}.html")
            });
            out.sessions.push(SessionMisfires {
                session: s,
                misfires: facts.counted_misfires().copied().collect(),
                view,
            });
        }
        out
    }

    /// Writes the session pages into `dir` (the report folder), atomically.
    pub(crate) fn write_views(&self, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        if self.views.is_empty() {
            return Ok(written);
        }
        let views = dir.join(VIEWS_DIR);
        std::fs::create_dir_all(&views)
            .map_err(|e| anyhow::anyhow!("{}: cannot create: {e}", views.display()))?;
        for (rel, page) in &self.views {
            let path = dir.join(rel);
            crate::output::write_atomic(&path, page.as_bytes())?;
            written.push(path);
        }
        Ok(written)
    }

    /// The section of `index.html`.
    pub(crate) fn html(&self, data: &SweepOutput, chosen: usize) -> String {
        let mut h =
            String::from("<section id=\"misfires\">\n<h2>Compactions that went wrong</h2>\n");
        let Some(totals) = &self.totals else {
            h.push_str("<p>This sweep was written before misfires were counted; sweep again to see them.</p>\n</section>\n");
            return h;
        };
        let _ = writeln!(
            h,
            "<p>Under <strong>{}</strong>: compactions that made the history larger, that came within {} requests of \
             the previous one, that ended above their target, and requests sent over the window.{}</p>",
            escape_html(&data.name(chosen)),
            self.thrash_window,
            if self.views.is_empty() {
                " <code>report --session-pages</code> writes a page per session named here and links each request to it."
            } else {
                " Each request links to the session's page, where clicking the compaction shows what it did."
            }
        );
        h.push_str("<ul class=\"misfires\">\n");
        for &(kind, total, sessions) in totals {
            let _ = write!(
                h,
                "<li><strong>{}</strong> ({}, column <code>{}</code>): {} in {}",
                escape_html(kind.as_str()),
                escape_html(kind.describe()),
                escape_html(figures::Metric::misfires(kind).name()),
                total as u64,
                if sessions == 1 {
                    "1 session".to_string()
                } else {
                    format!("{sessions} sessions")
                }
            );
            let named: Vec<String> = self
                .sessions
                .iter()
                .filter_map(|s| self.session_line(data, s, kind))
                .collect();
            if !named.is_empty() {
                let _ = write!(h, ": {}", named.join("; "));
            }
            h.push_str("</li>\n");
        }
        h.push_str("</ul>\n");
        for w in &self.warnings {
            let _ = writeln!(h, "<p class=\"warning\">{}</p>", escape_html(w));
        }
        h.push_str("</section>\n");
        h
    }

    fn session_line(
        &self,
        data: &SweepOutput,
        s: &SessionMisfires,
        kind: MisfireKind,
    ) -> Option<String> {
        let at: Vec<&Misfire> = s.misfires.iter().filter(|m| m.kind == kind).collect();
        if at.is_empty() {
            return None;
        }
        let label = escape_html(&data.sessions[s.session].label);
        let link = |text: String, request: Option<usize>| match &s.view {
            Some(v) => format!(
                "<a href=\"{}{}\">{text}</a>",
                escape_html(v),
                request.map(|r| format!("#r{r}")).unwrap_or_default()
            ),
            None => text,
        };
        let requests: Vec<String> = at
            .iter()
            .take(REQUESTS_NAMED)
            .map(|m| link(m.request.to_string(), Some(m.request)))
            .collect();
        let more = match at.len().saturating_sub(REQUESTS_NAMED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        Some(format!(
            "{} at request{} {}{more}",
            link(label, None),
            if at.len() == 1 { "" } else { "s" },
            requests.join(", ")
        ))
    }
}
