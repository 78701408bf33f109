//! Which of the sessions found a command keeps: those active in a window of
//! time and of a project, as `--since`, `--until` and `--project` ask.

use super::locate::{read_meta, SessionRef};
use crate::time::{from_system_time, parse_rfc3339, Unix};

/// A selection of sessions; the default keeps every one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    /// Keep sessions active at or after this instant.
    pub(crate) since: Option<Unix>,
    /// Keep sessions that began before this instant.
    pub(crate) until: Option<Unix>,
    /// Keep sessions whose working directory or path contains this text.
    pub(crate) project: Option<String>,
}

/// When a session was active and where, as far as its record says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: Option<Unix>,
    pub(crate) end: Option<Unix>,
    pub(crate) cwd: Option<String>,
}

impl Span {
    /// From `session.json`'s `created_at`, `updated_at` and `cwd`; a time it
    /// lacks is the transcript's (or source log's) modification time.
    pub(crate) fn of(session: &SessionRef) -> Span {
        let meta = read_meta(session).ok().flatten();
        let time = |s: Option<&String>| s.and_then(|s| parse_rfc3339(s));
        let mtime = || session.modified().ok().map(from_system_time);
        let (start, end, cwd) = match &meta {
            Some(m) => (
                time(m.created_at.as_ref()),
                time(m.updated_at.as_ref()),
                m.cwd.clone(),
            ),
            None => (None, None, None),
        };
        let end = end.or_else(mtime);
        Span {
            start: start.or(end),
            end,
            cwd,
        }
    }
}

impl Filter {
    /// Whether the filter keeps every session (and need read nothing).
    pub(crate) fn is_everything(&self) -> bool {
        *self == Filter::default()
    }

    /// Whether a session with this span, found at `path`, is kept. A session
    /// with no time at all is kept only when no time was asked for.
    pub(crate) fn keeps(&self, span: &Span, path: &str) -> bool {
        if let Some(since) = self.since {
            if span.end.is_none_or(|end| end < since) {
                return false;
            }
        }
        if let Some(until) = self.until {
            if span.start.is_none_or(|start| start >= until) {
                return false;
            }
        }
        if let Some(project) = &self.project {
            let named = span
                .cwd
                .as_deref()
                .is_some_and(|c| c.contains(project.as_str()));
            if !named && !path.contains(project.as_str()) {
                return false;
            }
        }
        true
    }

    /// The sessions of `found` this filter keeps, in order, and how many it
    /// left out.
    pub(crate) fn apply(&self, found: Vec<SessionRef>) -> (Vec<SessionRef>, usize) {
        if self.is_everything() {
            return (found, 0);
        }
        let before = found.len();
        let kept: Vec<SessionRef> = found
            .into_iter()
            .filter(|r| self.keeps(&Span::of(r), &r.transcript.to_string_lossy()))
            .collect();
        let left_out = before - kept.len();
        (kept, left_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: i64, end: i64, cwd: &str) -> Span {
        Span {
            start: Some(start),
            end: Some(end),
            cwd: Some(cwd.into()),
        }
    }

    #[test]
    fn a_session_is_kept_when_it_was_active_in_the_window() {
        let f = Filter {
            since: Some(100),
            until: Some(200),
            project: None,
        };
        assert!(f.keeps(&span(50, 100, "/a"), "p"), "ends at since");
        assert!(f.keeps(&span(150, 160, "/a"), "p"));
        assert!(f.keeps(&span(199, 300, "/a"), "p"), "begins before until");
        assert!(!f.keeps(&span(10, 99, "/a"), "p"), "over before since");
        assert!(!f.keeps(&span(200, 300, "/a"), "p"), "begins at until");
        assert!(!f.keeps(&Span::default(), "p"), "no time, time asked");
        assert!(Filter::default().keeps(&Span::default(), "p"));
    }

    #[test]
    fn a_project_matches_the_working_directory_or_the_path() {
        let f = Filter {
            project: Some("shop".into()),
            ..Filter::default()
        };
        assert!(f.keeps(&span(0, 1, "/home/me/shop-api"), "x"));
        assert!(f.keeps(&span(0, 1, "/elsewhere"), "/p/-home-me-shop/s.jsonl"));
        assert!(!f.keeps(&span(0, 1, "/home/me/blog"), "/p/blog/s.jsonl"));
    }
}
