//! The seeded session generator and the committed `datasets/`:
//! determinism, smith's transcript format and pairing rules, the features
//! each shape promises, the on-disk layout, and that the committed set makes
//! every stage of compaction fire as `datasets/README.md` says.

use smith_calibrate::engine::constants::SUPERSEDED_MARKER;
use smith_calibrate::engine::{Config, EditKind, Engine, Stage, Strategy};
use smith_calibrate::replay::{self, SessionFacts};
use smith_calibrate::synth::{self, CorpusSpec, SessionGen, SessionSpec, Shape, SizeSpec};
use smith_calibrate::transcript::locate::{read_index, read_meta, resolve_path, SessionRef};
use smith_calibrate::transcript::parse::parse_line;
use smith_calibrate::transcript::{self, BlockType, Message, Role};
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The committed dataset and the command that made it (datasets/README.md).
const DATASET_DIR: &str = "datasets/sessions";

const DATASET_COMMAND: &str =
    "smith-calibrate synth --seed 15 --sessions 12 --min-mb 0.05 --max-mb 1.3 --out datasets/sessions";

const DATASET_SPEC: CorpusSpec = CorpusSpec {
    seed: 15,
    sessions: 12,
    shape: None,
    size: SizeSpec::Range(50_000, 1_300_000),
};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, relative path → bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(
                    path.strip_prefix(root).unwrap().to_path_buf(),
                    fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn small_corpus(seed: u64, sessions: usize) -> CorpusSpec {
    CorpusSpec {
        seed,
        sessions,
        shape: None,
        size: SizeSpec::Range(20_000, 250_000),
    }
}

/// A spread of sessions: every shape, several seeds, sizes that cross the
/// default trigger and sizes that do not.
fn sample_sessions() -> Vec<(String, Vec<Message>)> {
    let mut out = Vec::new();
    for shape in [Shape::Long, Shape::Short, Shape::OneTurn] {
        for seed in 0..4u64 {
            let mb = [0.05, 0.3, 0.6, 1.0][seed as usize];
            let spec = SessionSpec::of_mb(shape, mb);
            out.push((
                format!("{} seed {seed} {mb} MB", shape.as_str()),
                synth::generate_session(seed, spec),
            ));
        }
    }
    out
}

fn arcs(messages: Vec<Message>) -> Vec<Arc<Message>> {
    messages.into_iter().map(Arc::new).collect()
}

fn engine(config: Config) -> Engine {
    Engine::new(config)
}

fn max_tokens(n: u64) -> Config {
    Config {
        max_tokens: n,
        ..Config::default()
    }
}

/// Checks smith's invariant on a history: each tool_use id has exactly one
/// tool_result with that id, after it, and no result lacks its call.
fn check_pairing(label: &str, messages: &[Arc<Message>]) {
    let mut calls: HashMap<&str, usize> = HashMap::new();
    let mut results: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        for b in &m.content {
            let id = b.tool_call_id.as_deref();
            match b.kind {
                BlockType::ToolUse => {
                    let id =
                        id.unwrap_or_else(|| panic!("{label}: message {i}: tool_use without id"));
                    assert!(
                        calls.insert(id, i).is_none(),
                        "{label}: tool_use id {id} used twice"
                    );
                }
                BlockType::ToolResult => {
                    let id = id
                        .unwrap_or_else(|| panic!("{label}: message {i}: tool_result without id"));
                    results.entry(id).or_default().push(i);
                }
                _ => {}
            }
        }
    }
    for (id, at) in &calls {
        let found = results.get(id).cloned().unwrap_or_default();
        assert_eq!(
            found.len(),
            1,
            "{label}: tool_use {id} (message {at}) has {} results",
            found.len()
        );
        assert!(
            found[0] > *at,
            "{label}: the result of {id} comes before its call"
        );
    }
    for id in results.keys() {
        assert!(
            calls.contains_key(id),
            "{label}: tool_result {id} answers no call"
        );
    }
}

// ------------------------------------------------ shapes against the engine

fn replay_default(messages: Vec<Message>) -> SessionFacts {
    replay::replay(&arcs(messages), &engine(Config::default()))
}

/// Whether a compaction rewrote something in the current turn: only the
/// desperate pass (cut == 0, no recency window) may.
fn cut_into_current_turn(
    working: &[Arc<Message>],
    c: &smith_calibrate::engine::Compaction,
) -> bool {
    let current = working
        .iter()
        .rposition(|m| m.starts_real_turn())
        .unwrap_or(0);
    c.strategy == Strategy::Truncated
        && c.edits.iter().any(|e| {
            e.message >= current
                && matches!(
                    e.kind,
                    EditKind::HeadKept | EditKind::Stubbed | EditKind::AttachmentsRemoved { .. }
                )
        })
}

// ------------------------------------------------------- the committed dataset

fn dataset() -> PathBuf {
    repo().join(DATASET_DIR)
}

/// Stage fires and desperate passes over the whole dataset under `config`.
fn dataset_fires(config: Config) -> ([u64; 6], usize) {
    let e = engine(config);
    let mut fires = [0u64; 6];
    let mut desperate = 0;
    let sessions = resolve_path(&dataset()).unwrap();
    assert_eq!(sessions.len(), DATASET_SPEC.sessions);
    for r in &sessions {
        let session = transcript::load(r).unwrap();
        assert_eq!(session.log.skipped_count(), 0, "{}", r.transcript.display());
        let facts = replay::replay_with(&session.messages, &e, |_, working, c| {
            desperate += cut_into_current_turn(working, c) as usize;
            true
        });
        for (sum, n) in fires.iter_mut().zip(facts.stage_fires) {
            *sum += n;
        }
    }
    (fires, desperate)
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_seed_writes_byte_identical_files() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let spec = small_corpus(7, 5);
    synth::write_corpus(a.path(), &spec, false, |_| {}).unwrap();
    synth::write_corpus(b.path(), &spec, false, |_| {}).unwrap();
    let (ta, tb) = (tree(a.path()), tree(b.path()));
    assert_eq!(
        ta.len(),
        5 * 2 + 2,
        "five sessions of two files, the index and the marker"
    );
    assert_eq!(ta.keys().collect::<Vec<_>>(), tb.keys().collect::<Vec<_>>());
    for (path, bytes) in &ta {
        assert!(
            bytes == &tb[path],
            "{} differs between two runs of one seed",
            path.display()
        );
    }
}

#[test]
fn same_seed_generates_the_same_session_in_memory_and_on_disk() {
    let spec = SessionSpec::of_mb(Shape::Long, 0.2);
    let in_memory: Vec<u8> = synth::generate_session(3, spec)
        .iter()
        .flat_map(|m| {
            let mut line = m.to_json().into_bytes();
            line.push(b'\n');
            line
        })
        .collect();
    assert_eq!(in_memory, synth::transcript_bytes(3, spec));
}

#[test]
fn different_seeds_write_different_sessions() {
    let spec = SessionSpec::of_mb(Shape::Long, 0.1);
    let one = synth::transcript_bytes(1, spec);
    let two = synth::transcript_bytes(2, spec);
    assert_ne!(one, two);
    let (c1, c2) = (small_corpus(1, 3), small_corpus(2, 3));
    for i in 0..3 {
        assert_ne!(
            c1.session(i).id,
            c2.session(i).id,
            "session {i} has the same id under two seeds"
        );
    }
}

#[test]
fn session_ids_look_like_smiths_and_are_unique() {
    let spec = small_corpus(11, 40);
    let mut seen = std::collections::HashSet::new();
    for i in 0..40 {
        let id = spec.session(i).id;
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(parts[0], "session");
        assert!(
            parts[1].len() == 10 && parts[1].bytes().all(|b| b.is_ascii_digit()),
            "{id}: unix seconds"
        );
        assert!(
            parts[2].len() == 6 && parts[2].bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}: six hex digits"
        );
        assert!(seen.insert(id.clone()), "{id} twice");
    }
}

// ------------------------------------------------------------- smith's format

#[test]
fn every_line_parses_back_to_the_message_written() {
    for (label, messages) in sample_sessions() {
        for (i, m) in messages.iter().enumerate() {
            let line = m.to_json();
            let parsed =
                parse_line(&line).unwrap_or_else(|e| panic!("{label}: line {}: {e}", i + 1));
            assert_eq!(&parsed, m, "{label}: line {} reads back differently", i + 1);
            assert_eq!(
                parsed.to_json(),
                line,
                "{label}: line {} is not in smith's form",
                i + 1
            );
        }
    }
}

#[test]
fn every_tool_use_has_exactly_one_tool_result_after_it() {
    for (label, messages) in sample_sessions() {
        check_pairing(&label, &arcs(messages));
    }
}

#[test]
fn each_assistant_call_is_answered_by_one_tool_message_in_call_order() {
    for (label, messages) in sample_sessions() {
        for (i, m) in messages.iter().enumerate() {
            let calls: Vec<&str> = m
                .content
                .iter()
                .filter(|b| b.kind == BlockType::ToolUse)
                .filter_map(|b| b.tool_call_id.as_deref())
                .collect();
            if m.role == Role::Tool {
                assert_eq!(
                    messages[i - 1].role,
                    Role::Assistant,
                    "{label}: tool message {i} follows no assistant"
                );
                // Media in a tool message carry the id of a result beside them.
                let ids: Vec<&str> = m
                    .content
                    .iter()
                    .filter(|b| b.kind == BlockType::ToolResult)
                    .filter_map(|b| b.tool_call_id.as_deref())
                    .collect();
                for b in m.content.iter().filter(|b| b.kind.is_media()) {
                    let id = b.tool_call_id.as_deref().unwrap_or("");
                    assert!(
                        ids.contains(&id),
                        "{label}: message {i}: attachment for {id:?} without its result"
                    );
                }
            }
            if calls.is_empty() {
                continue;
            }
            assert_eq!(m.role, Role::Assistant);
            let next = &messages[i + 1];
            assert_eq!(
                next.role,
                Role::Tool,
                "{label}: calls of message {i} are not answered next"
            );
            let answered: Vec<&str> = next
                .content
                .iter()
                .filter(|b| b.kind == BlockType::ToolResult)
                .filter_map(|b| b.tool_call_id.as_deref())
                .collect();
            assert_eq!(
                answered,
                calls,
                "{label}: message {} answers other calls",
                i + 1
            );
        }
    }
}

#[test]
fn every_compaction_of_a_generated_session_keeps_tool_pairs_whole() {
    for (label, messages) in sample_sessions() {
        let history = arcs(messages);
        for config in [Config::default(), max_tokens(32_000), max_tokens(20_000)] {
            let e = engine(config);
            replay::replay_with(&history, &e, |r, working, _| {
                check_pairing(&format!("{label}, request {}", r.request), working);
                true
            });
        }
    }
}

// --------------------------------------------------------- what sessions hold

#[test]
fn sessions_mix_real_and_synthetic_user_turns() {
    let (mut real, mut synthetic) = (0, 0);
    let mut texts = Vec::new();
    for (_, messages) in sample_sessions() {
        for m in messages.iter().filter(|m| m.role == Role::User) {
            if m.synthetic {
                synthetic += 1;
                texts.push(String::from_utf8_lossy(m.content[0].text_bytes()).into_owned());
            } else {
                real += 1;
            }
        }
    }
    assert!(real > 30, "{real} real user turns");
    assert!(synthetic > 5, "{synthetic} synthetic user messages");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("cut off at the output token limit")),
        "no continuation prompt"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("Stop hook")),
        "no stop-hook message"
    );
}

#[test]
fn thinking_blocks_carry_signatures_and_some_are_redacted() {
    let (mut signed, mut redacted) = (0, 0);
    for seed in 0..12 {
        for m in synth::generate_session(seed, SessionSpec::of_mb(Shape::Long, 0.3)) {
            for b in &m.content {
                match b.kind {
                    BlockType::Thinking => {
                        let sig = b
                            .signature
                            .as_deref()
                            .expect("thinking without a signature");
                        assert!(sig.len() >= 200, "signature of {} bytes", sig.len());
                        signed += 1;
                    }
                    BlockType::RedactedThinking => {
                        assert!(b.text_len() > 0);
                        redacted += 1;
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(signed > 20, "{signed} thinking blocks");
    assert!(redacted > 0, "no redacted thinking");
}

#[test]
fn attachments_come_in_user_and_tool_messages() {
    let mut seen: HashMap<(Role, BlockType), usize> = HashMap::new();
    for seed in 0..12 {
        for m in synth::generate_session(seed, SessionSpec::of_mb(Shape::Long, 0.5)) {
            for b in m.content.iter().filter(|b| b.kind.is_media()) {
                *seen.entry((m.role, b.kind)).or_default() += 1;
                assert!(
                    b.media_ref.as_deref().is_some_and(|r| r.len() == 64),
                    "media without a digest ref"
                );
                if m.role == Role::Tool {
                    assert!(
                        b.tool_call_id.is_some(),
                        "tool attachment without tool_call_id"
                    );
                    assert!(b.source.is_some(), "a tool attachment names its file");
                }
            }
        }
    }
    for key in [
        (Role::User, BlockType::Image),
        (Role::User, BlockType::Document),
        (Role::Tool, BlockType::Image),
    ] {
        assert!(
            seen.get(&key).copied().unwrap_or(0) > 0,
            "no {key:?} attachment in: {seen:?}"
        );
    }
}

#[test]
fn tools_are_smiths_with_their_argument_names() {
    let mut args_by_tool: HashMap<String, std::collections::BTreeSet<String>> = HashMap::new();
    let mut errors = 0;
    for (_, messages) in sample_sessions() {
        for m in &messages {
            for b in &m.content {
                if b.kind == BlockType::ToolUse {
                    let name = b.tool_name.as_deref().unwrap().to_string();
                    let id = b.tool_call_id.as_deref().unwrap();
                    assert!(
                        id.starts_with("toolu_") && id[6..].bytes().all(|c| c.is_ascii_hexdigit()),
                        "{id}"
                    );
                    let args: serde_json::Value =
                        serde_json::from_str(b.tool_args.as_deref().unwrap()).unwrap();
                    let keys = args
                        .as_object()
                        .expect("tool_args is an object")
                        .keys()
                        .cloned();
                    args_by_tool.entry(name).or_default().extend(keys);
                }
                if b.kind == BlockType::ToolResult && b.is_error == Some(true) {
                    errors += 1;
                }
            }
        }
    }
    let keys = |t: &str| {
        args_by_tool
            .get(t)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys("read_file"), ["end_line", "path", "start_line"]);
    assert_eq!(keys("grep"), ["path", "query"]);
    assert_eq!(keys("glob"), ["pattern"]);
    assert_eq!(keys("bash"), ["command"]);
    assert_eq!(keys("edit_file"), ["path", "replacement", "target"]);
    assert_eq!(keys("write_file"), ["content", "path"]);
    assert!(errors > 0, "no result is an error");
}

#[test]
fn identical_read_only_calls_repeat_and_so_do_bash_commands() {
    let mut repeats: HashMap<String, usize> = HashMap::new();
    for (_, messages) in sample_sessions() {
        let mut seen: HashMap<(String, String), usize> = HashMap::new();
        for m in &messages {
            for b in m.content.iter().filter(|b| b.kind == BlockType::ToolUse) {
                let key = (
                    b.tool_name.as_deref().unwrap().to_string(),
                    b.tool_args.as_deref().unwrap().to_string(),
                );
                let n = seen.entry(key.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    *repeats.entry(key.0).or_default() += 1;
                }
            }
        }
    }
    for tool in ["read_file", "grep", "glob", "bash"] {
        assert!(
            repeats.get(tool).copied().unwrap_or(0) > 0,
            "no repeated {tool} call: {repeats:?}"
        );
    }
}

#[test]
fn repeated_reads_are_superseded_and_repeated_bash_never_is() {
    let mut superseded = 0;
    for seed in 0..4 {
        let history = arcs(synth::generate_session(
            seed,
            SessionSpec::of_mb(Shape::Long, 1.0),
        ));
        let names: HashMap<String, String> = history
            .iter()
            .flat_map(|m| m.content.iter())
            .filter(|b| b.kind == BlockType::ToolUse)
            .map(|b| {
                (
                    b.tool_call_id.as_deref().unwrap().to_string(),
                    b.tool_name.as_deref().unwrap().to_string(),
                )
            })
            .collect();
        let e = engine(Config::default());
        let facts = replay::replay_with(&history, &e, |_, working, _| {
            for b in working.iter().flat_map(|m| m.content.iter()) {
                if b.kind == BlockType::ToolResult
                    && String::from_utf8_lossy(b.text_bytes()).contains(SUPERSEDED_MARKER)
                {
                    let tool = &names[b.tool_call_id.as_deref().unwrap()];
                    assert_ne!(tool, "bash", "a bash result was superseded");
                }
            }
            true
        });
        superseded += facts.effects.reads_superseded;
    }
    assert!(superseded > 0, "no read was superseded at the defaults");
}

#[test]
fn results_range_from_a_few_bytes_to_hundreds_of_kilobytes() {
    let mut sizes = Vec::new();
    for (_, messages) in sample_sessions() {
        for b in messages
            .iter()
            .flat_map(|m| m.content.iter())
            .filter(|b| b.kind == BlockType::ToolResult)
        {
            sizes.push(b.text_len());
        }
    }
    sizes.sort_unstable();
    assert!(sizes[0] < 100, "smallest result {} bytes", sizes[0]);
    assert!(
        *sizes.last().unwrap() > 200_000,
        "largest result {} bytes",
        sizes.last().unwrap()
    );
    // Nothing beyond smith's 256 KiB tool caps (plus their note).
    assert!(*sizes.last().unwrap() < 256 * 1024 + 100);
}

#[test]
fn some_results_split_a_multibyte_character_at_byte_512() {
    let mut split = 0;
    for (_, messages) in sample_sessions() {
        for b in messages
            .iter()
            .flat_map(|m| m.content.iter())
            .filter(|b| b.kind == BlockType::ToolResult)
        {
            let t = b.text_bytes();
            if t.len() > 512 && (t[512] & 0xC0) == 0x80 {
                assert!(
                    std::str::from_utf8(t).is_ok(),
                    "result text is valid UTF-8 as written"
                );
                split += 1;
            }
        }
    }
    assert!(
        split > 10,
        "only {split} results have a character across byte 512"
    );
}

#[test]
fn sizes_come_close_to_the_size_asked_for() {
    for shape in [Shape::Long, Shape::OneTurn] {
        for (seed, mb) in [(1u64, 0.5), (2, 1.0), (3, 2.0)] {
            let bytes =
                synth::transcript_bytes(seed, SessionSpec::of_mb(shape, mb)).len() as f64 / 1e6;
            assert!(
                bytes >= mb && bytes < mb * 1.35,
                "{} asked {mb} MB, got {bytes:.3} MB",
                shape.as_str()
            );
        }
    }
}

#[test]
fn short_sessions_never_reach_the_default_trigger() {
    for seed in 0..10 {
        // Asked for far more than a short session may hold.
        let facts = replay_default(synth::generate_session(
            seed,
            SessionSpec::of_mb(Shape::Short, 5.0),
        ));
        assert_eq!(
            facts.triggered, 0,
            "seed {seed}: peak {} tokens",
            facts.peak_before
        );
        assert!(facts.peak_before < 96_000);
    }
}

#[test]
fn long_sessions_cross_the_default_trigger_repeatedly() {
    let facts = replay_default(synth::generate_session(
        5,
        SessionSpec::of_mb(Shape::Long, 2.0),
    ));
    assert!(facts.compactions >= 4, "{} compactions", facts.compactions);
    for stage in [Stage::Duplicates, Stage::Truncate] {
        assert!(
            facts.stage_fires[stage.index()] > 0,
            "{} never fired",
            stage.as_str()
        );
    }
}

#[test]
fn one_turn_sessions_end_in_the_desperate_pass() {
    for seed in 0..3 {
        let history = arcs(synth::generate_session(
            seed,
            SessionSpec::of_mb(Shape::OneTurn, 1.0),
        ));
        let real_turns = history.iter().filter(|m| m.starts_real_turn()).count();
        assert_eq!(real_turns, 1, "seed {seed}");
        let mut desperate = 0;
        replay::replay_with(&history, &engine(Config::default()), |_, working, c| {
            desperate += cut_into_current_turn(working, c) as usize;
            true
        });
        assert!(desperate > 0, "seed {seed}: no desperate pass");
    }
}

#[test]
fn giant_last_turns_leave_the_summary_short_of_the_target() {
    // Long sessions with a giant finale: the last turn alone outgrows the
    // target, so the summary cut at its start still misses it.
    let mut misses = 0;
    for seed in 0..6 {
        let generator = SessionGen::new(seed, SessionSpec::of_mb(Shape::Long, 1.5));
        if !generator.profile().giant_finale {
            continue;
        }
        let facts = replay_default(generator.collect());
        misses += facts.target_misses;
    }
    assert!(misses > 0, "no giant finale missed the target");
}

// ------------------------------------------------------------------ on disk

#[test]
fn index_and_session_json_describe_every_session() {
    let dir = tempfile::tempdir().unwrap();
    let stats = synth::write_corpus(dir.path(), &small_corpus(3, 4), false, |_| {}).unwrap();
    let index = read_index(dir.path()).unwrap();
    assert_eq!(index.len(), 4);
    for (entry, s) in index.iter().zip(&stats.sessions) {
        assert_eq!(entry.id, s.meta.id);
        let transcript = dir.path().join(&entry.id).join("transcript.jsonl");
        let lines = fs::read_to_string(&transcript).unwrap().lines().count() as u64;
        assert_eq!(entry.message_count, Some(lines));
        assert!(entry.first_prompt.as_deref().is_some_and(|p| !p.is_empty()));
        assert!(entry.created_at.as_deref().unwrap() < entry.updated_at.as_deref().unwrap());
        let meta = read_meta(&SessionRef::file(transcript)).unwrap().unwrap();
        assert_eq!(meta.id.as_deref(), Some(entry.id.as_str()));
        assert_eq!(meta.name, entry.name);
        assert!(meta.model.is_some() && meta.provider.is_some() && meta.cwd.is_some());
        let raw = meta.raw.unwrap();
        let keys: Vec<&str> = raw
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "id",
                "created_at",
                "updated_at",
                "cwd",
                "model",
                "provider",
                "messages",
                "usage",
                "todos",
                "name"
            ]
        );
    }
    // The reader finds every generated session, and reads each without a skip.
    let found = resolve_path(dir.path()).unwrap();
    assert_eq!(found.len(), 4);
    for r in &found {
        let session = transcript::load(r).unwrap();
        assert_eq!(session.log.skipped_count(), 0);
        assert!(session.meta.is_some());
    }
}

#[test]
fn synth_refuses_a_non_empty_directory_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let err = synth::write_corpus(dir.path(), &small_corpus(1, 1), false, |_| {}).unwrap_err();
    crate::test_support::assert_text(&crate::test_support::scrub(&format!("{err:#}"), dir.path()), "<DIR>: not empty and not written by `smith-calibrate synth`; choose a new or empty directory, or pass --force to add the sessions to it");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "something was written"
    );
}

#[test]
fn force_adds_sessions_and_keeps_what_was_there() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let foreign = r#"[{"id":"session-1-abcdef","created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z","first_prompt":"x","message_count":1}]"#;
    fs::write(dir.path().join("index.json"), foreign).unwrap();
    synth::write_corpus(dir.path(), &small_corpus(1, 2), true, |_| {}).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "mine"
    );
    let ids: Vec<String> = read_index(dir.path())
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[0], "session-1-abcdef");
}

#[test]
fn rerunning_synth_replaces_its_own_earlier_output() {
    let dir = tempfile::tempdir().unwrap();
    synth::write_corpus(dir.path(), &small_corpus(1, 4), false, |_| {}).unwrap();
    let fresh = tempfile::tempdir().unwrap();
    synth::write_corpus(fresh.path(), &small_corpus(2, 2), false, |_| {}).unwrap();
    // No --force needed over the generator's own output; the old sessions go.
    synth::write_corpus(dir.path(), &small_corpus(2, 2), false, |_| {}).unwrap();
    assert_eq!(tree(dir.path()), tree(fresh.path()));
}

#[test]
fn committed_dataset_is_what_the_readme_command_regenerates() {
    let readme = fs::read_to_string(repo().join("datasets/README.md")).unwrap();
    assert!(
        readme.contains(DATASET_COMMAND),
        "datasets/README.md no longer names the command"
    );
    let fresh = tempfile::tempdir().unwrap();
    synth::write_corpus(fresh.path(), &DATASET_SPEC, false, |_| {}).unwrap();
    let (committed, regenerated) = (tree(&dataset()), tree(fresh.path()));
    assert_eq!(
        committed.keys().collect::<Vec<_>>(),
        regenerated.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &committed {
        assert!(
            bytes == &regenerated[path],
            "{} is not what the command writes",
            path.display()
        );
    }
    let total: usize = committed.values().map(Vec::len).sum();
    assert!(total < 4_000_000, "the dataset grew to {total} bytes");
}

#[test]
fn committed_dataset_fires_every_stage_as_the_readme_says() {
    // The table of datasets/README.md: fires of thinking, attachments,
    // duplicates, truncate, summarize, drop; then desperate passes.
    let defaults = dataset_fires(Config::default());
    assert_eq!(defaults, ([2, 4, 4, 7, 3, 0], 2), "defaults");
    let small = dataset_fires(max_tokens(32_000));
    assert_eq!(small, ([7, 5, 4, 14, 40, 0], 10), "--max-tokens 32000");
    let failing_summarizer = dataset_fires(Config {
        summary_tokens: 0,
        ..Config::default()
    });
    assert_eq!(
        failing_summarizer,
        ([2, 4, 4, 7, 0, 3], 2),
        "--summary-tokens 0"
    );

    // What the table shows, said plainly: at the defaults every stage but
    // drop fires and a desperate pass happens; a failing summarizer turns
    // every summary into a drop.
    for s in [
        Stage::Thinking,
        Stage::Attachments,
        Stage::Duplicates,
        Stage::Truncate,
        Stage::Summarize,
    ] {
        assert!(
            defaults.0[s.index()] > 0,
            "defaults: {} never fired",
            s.as_str()
        );
    }
    assert!(defaults.1 > 0);
    assert_eq!(
        failing_summarizer.0[Stage::Drop.index()],
        defaults.0[Stage::Summarize.index()]
    );
}
