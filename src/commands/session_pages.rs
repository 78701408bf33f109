//! `transcript show --html`: one session as a page, or for a folder of
//! sessions a page each and an index over them, the pages of a subagent and
//! of the session that started it linked both ways.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::calibrate::session::{for_session, ForSession, Given};
use crate::import::{claude_code, plain_id};
use crate::policy::Setup;
use crate::transcript::session_file::{SessionFile, FORMAT_CLAUDE_CODE};
use crate::transcript::{BlockType, Role, Session, SessionRef};
use crate::view::web::{self, AgentCompaction, Link, Recorded, RecordedRequest};

use super::{check_read, usage};

/// The name of the index page of a set.
const INDEX_PAGE: &str = "index.html";

/// What the session's `session.json` recorded, for its page.
fn recorded_of(session: &Session) -> Recorded {
    let Some(file) = import_file(session) else {
        return Recorded::default();
    };
    let request_of: HashMap<usize, usize> = session
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::Assistant)
        .enumerate()
        .map(|(request, (index, _))| (index, request))
        .collect();
    let mut requests = vec![RecordedRequest::default(); request_of.len()];
    for (i, r) in file.requests.iter().enumerate() {
        let Some(&k) = request_of.get(&r.message_index) else {
            continue;
        };
        let record = file
            .request_records
            .get(i)
            .filter(|x| x.message_index == r.message_index);
        requests[k] = RecordedRequest {
            time: record.and_then(|x| x.timestamp.clone()),
            model: r.model.clone().or_else(|| file.model.clone()),
            prompt: Some(r.prompt_tokens()),
            output: Some(r.output_tokens),
        };
    }
    let compactions = file
        .compact_boundaries
        .iter()
        .map(|b| AgentCompaction {
            message: b.message_index,
            request: b.requests_before,
            kind: b.kind.clone(),
            trigger: b.trigger.clone(),
            pre_tokens: b.pre_tokens,
            summary_bytes: b.summary_bytes,
            summary: b.summary.clone(),
        })
        .collect();
    let tool_names = if file.source.format == FORMAT_CLAUDE_CODE {
        session
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter(|b| b.kind == BlockType::ToolUse)
            .filter_map(|b| {
                let name =
                    claude_code::agent_tool_name(b.tool_name.as_deref()?, b.tool_args.as_deref())?;
                Some((b.tool_call_id.as_deref()?.to_string(), name.to_string()))
            })
            .collect()
    } else {
        Vec::new()
    };
    Recorded {
        requests,
        compactions,
        subagents: Vec::new(),
        parent: None,
        tool_names,
    }
}

fn import_file(session: &Session) -> Option<SessionFile> {
    session
        .meta
        .as_ref()
        .and_then(|m| m.raw.as_ref())
        .and_then(SessionFile::from_meta)
}

/// What `chosen`'s token counts are: its estimator, at the ratio and
/// overhead the session chose where it chose them.
fn units_of(chosen: &ForSession) -> crate::sweep::units::TokenUnits {
    use crate::engine::learn::{OverheadMode, RatioMode};
    let c = chosen.calibration.as_ref();
    crate::sweep::units::TokenUnits::of(
        [chosen.setup.estimator],
        c.is_some_and(|c| c.ratio_mode != RatioMode::Fixed),
        c.is_some_and(|c| c.overhead_mode == OverheadMode::Fitted),
        crate::sweep::plan::BaselineKind::Smith,
    )
}

/// Refuses to write `path` into the directory of a session it shows.
fn outside(path: &Path, session: &SessionRef) -> Result<()> {
    let source = crate::import::absolute(session.dir());
    if crate::import::absolute(path).starts_with(&source) {
        return Err(usage(format!(
            "--html {} lies inside the session directory {}; write the pages somewhere else",
            path.display(),
            source.display()
        )));
    }
    Ok(())
}

/// One session's page, written atomically to `path`.
pub(crate) fn write_one(
    path: &Path,
    session: &Session,
    chosen: &ForSession,
    thrash_window: usize,
) -> Result<()> {
    outside(path, &session.source)?;
    let engine = chosen.compactor(session);
    let page = web::page(
        &session.messages,
        engine.as_ref(),
        &session.label(),
        &web::Shown {
            config: &chosen.label(),
            units: units_of(chosen).axis(),
        },
        session.log.skipped_count(),
        thrash_window,
        &recorded_of(session),
    );
    crate::output::write_atomic(path, page.as_bytes())?;
    crate::note!(
        "wrote {} ({:.1} MB): {} messages of {}",
        path.display(),
        page.len() as f64 / 1e6,
        session.messages.len(),
        session.label()
    );
    Ok(())
}

/// One session of a set, read, with what its index row says.
struct Member {
    session: Session,
    file: Option<SessionFile>,
    id: String,
    page: String,
}

/// The first prompt a session was given, whole: what the call that started
/// a subagent passed it.
fn opening_prompt(session: &Session) -> Option<String> {
    let m = session.messages.iter().find(|m| m.role == Role::User)?;
    let b = m.content.iter().find(|b| b.kind == BlockType::Text)?;
    Some(b.text_lossy().trim().to_string())
}

/// The call of `parent` whose arguments carry `prompt` (Claude Code's
/// `Task` passes its subagent's prompt as `prompt`).
fn starting_call(parent: &Session, prompt: &str) -> Option<String> {
    parent
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| b.kind == BlockType::ToolUse)
        .find(|b| {
            b.tool_args
                .as_deref()
                .and_then(|a| serde_json::from_str::<serde_json::Value>(a).ok())
                .and_then(|v| {
                    v.get("prompt")
                        .and_then(|p| p.as_str())
                        .map(|p| p.trim() == prompt)
                })
                .unwrap_or(false)
        })
        .and_then(|b| b.tool_call_id.as_deref().map(str::to_string))
}

/// A page per session of `refs` (found in `source`, as the command line
/// named it) in `dir`, each linked to the pages of the
/// subagents it started and of its parent, and `dir/index.html` listing
/// them all with their size, requests, compactions, recorded cost and
/// misfires.
pub(crate) fn write_set(
    dir: &Path,
    source: &str,
    refs: &[SessionRef],
    setup: &Setup,
    given: Given,
    thrash_window: usize,
    strict: bool,
) -> Result<()> {
    for r in refs {
        outside(dir, r)?;
    }
    let members = read_members(refs, strict)?;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
    if members.is_empty() {
        return Err(super::nothing_read(format!(
            "none of the {} sessions could be read",
            refs.len()
        )));
    }
    let (parent_of, recorded) = link_family(&members);
    let rows: Vec<Result<IndexRow>> = members
        .par_iter()
        .zip(recorded.par_iter())
        .zip(parent_of.par_iter())
        .map(|((m, rec), parent)| {
            let page = PageOf {
                dir,
                setup,
                given,
                thrash_window,
            };
            let parent = parent.map(|p| members[p].session.label());
            page.write(m, rec, parent)
        })
        .collect();
    let rows: Vec<IndexRow> = rows.into_iter().collect::<Result<_>>()?;
    let index = web::index_page(source, &setup.label(), &rows);
    let path = dir.join(INDEX_PAGE);
    crate::output::write_atomic(&path, index.as_bytes())?;
    crate::note!(
        "wrote {} and {} session pages into {}",
        INDEX_PAGE,
        rows.len(),
        dir.display()
    );
    Ok(())
}

/// The sessions of `refs` that read, each with its page's name: its label
/// as a file name, numbered from the second session of the same label. One
/// that cannot be read is noted and left out; under `strict`, one with a
/// bad line, or one that cannot be read, fails the whole set.
fn read_members(refs: &[SessionRef], strict: bool) -> Result<Vec<Member>> {
    let loaded: Vec<Result<Session>> = refs.par_iter().map(crate::transcript::load).collect();
    let mut members = Vec::new();
    let mut used: HashMap<String, usize> = HashMap::new();
    let mut refused = 0;
    for l in loaded {
        let session = match l {
            Ok(s) => s,
            Err(e) => {
                refused += 1;
                crate::note!("{e:#}");
                continue;
            }
        };
        if let Err(e) = check_read(&session, false) {
            refused += 1;
            crate::note!("{e:#}");
            continue;
        }
        if strict && session.log.skipped_count() > 0 {
            refused += 1;
            continue;
        }
        let file = import_file(&session);
        let id = session
            .meta
            .as_ref()
            .and_then(|m| m.id.clone())
            .unwrap_or_else(|| session.label());
        let base = plain_id(&session.label());
        let n = used.entry(base.clone()).or_default();
        *n += 1;
        let page = if *n == 1 {
            format!("{base}.html")
        } else {
            format!("{base}-{n}.html")
        };
        members.push(Member {
            session,
            file,
            id,
            page,
        });
    }
    if strict && refused > 0 {
        return Err(super::nothing_read(format!(
            "{refused} of {} sessions had bad lines or could not be read (see above) and --strict was given: no page was written",
            refs.len()
        )));
    }
    Ok(members)
}

/// Each member's parent among the members, and what each page records,
/// with the links between a parent and the subagents it started.
fn link_family(members: &[Member]) -> (Vec<Option<usize>>, Vec<Recorded>) {
    let by_id: HashMap<&str, usize> = members
        .iter()
        .enumerate()
        .map(|(k, m)| (m.id.as_str(), k))
        .collect();
    let parent_of: Vec<Option<usize>> = members
        .iter()
        .map(|m| {
            let parent = m.session.meta.as_ref()?.parent_id.as_deref()?;
            by_id.get(parent).copied()
        })
        .collect();
    let mut recorded: Vec<Recorded> = members.iter().map(|m| recorded_of(&m.session)).collect();
    for (child, parent) in parent_of.iter().enumerate() {
        let Some(parent) = *parent else { continue };
        let call = opening_prompt(&members[child].session)
            .and_then(|p| starting_call(&members[parent].session, &p));
        recorded[parent].subagents.push(Link {
            call,
            href: members[child].page.clone(),
            label: members[child].session.label(),
        });
        recorded[child].parent = Some(Link {
            call: None,
            href: members[parent].page.clone(),
            label: members[parent].session.label(),
        });
    }
    (parent_of, recorded)
}

/// How every page of a set is made.
struct PageOf<'a> {
    dir: &'a Path,
    setup: &'a Setup,
    given: Given,
    thrash_window: usize,
}

impl PageOf<'_> {
    /// Writes `m`'s page and gives its row of the index.
    fn write(&self, m: &Member, rec: &Recorded, parent: Option<String>) -> Result<IndexRow> {
        // Each session at its own ratio and overhead where the flags
        // leave them, as its page alone would be.
        let chosen = for_session(self.setup, self.given, &m.session);
        let engine = chosen.compactor(&m.session);
        let page = web::page(
            &m.session.messages,
            engine.as_ref(),
            &m.session.label(),
            &web::Shown {
                config: &chosen.label(),
                units: units_of(&chosen).axis(),
            },
            m.session.log.skipped_count(),
            self.thrash_window,
            rec,
        );
        crate::output::write_atomic(&self.dir.join(&m.page), page.as_bytes())?;
        let mut facts = crate::replay::replay_sized(
            &m.session.messages,
            engine.as_ref(),
            crate::replay::Sizes::of_session(&m.session),
            |_, _, _| true,
        );
        facts.set_thrash_window(self.thrash_window);
        Ok(IndexRow {
            label: m.session.label(),
            href: m.page.clone(),
            parent,
            started: m.session.meta.as_ref().and_then(|x| x.created_at.clone()),
            project: m.session.meta.as_ref().and_then(|x| x.cwd.clone()),
            prompt: first_prompt(&m.session),
            bytes: m.session.bytes(),
            messages: m.session.messages.len(),
            requests: facts.requests,
            agent_compactions: rec.compactions.len(),
            compactions: facts.compactions,
            misfires: facts.counted_misfires().count(),
            recorded_usd: m.file.as_ref().map(crate::cost::bill::recorded_dollars),
        })
    }
}

/// The first prompt a person typed: the first text of a user message the
/// agent did not make up itself.
fn first_prompt(session: &Session) -> Option<String> {
    session
        .messages
        .iter()
        .filter(|m| m.role == Role::User && !m.synthetic)
        .flat_map(|m| &m.content)
        .find(|b| b.kind == BlockType::Text && !b.text_lossy().trim().is_empty())
        .map(|b| b.text_lossy().trim().to_string())
}

pub(crate) use crate::view::web::IndexRow;
