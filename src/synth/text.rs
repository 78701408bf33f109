//! What people and models write: user prompts, the assistant's remarks
//! and final answers, thinking, and the messages smith injects itself.

use super::code::{fn_name, phrase, phrase_of, type_name};
use super::logs;
use super::project::Project;
use super::rng::Rng;
use super::vocab::{ADJECTIVES, NOUNS, VERBS};

/// What smith asks when a response hit the output limit mid-text: a
/// synthetic user message, not a turn of the user's.
pub(crate) const CONTINUE_TEXT: &str = "Your previous response was cut off at the output token limit. Continue exactly where you left off. Do not repeat what you already wrote and do not start over.";

/// What smith asks when a tool call was cut off by the output limit and
/// dropped.
pub(crate) const RETRY_SMALLER_TEXT: &str = "Your tool call was cut off at the output token limit and was discarded. Retry with a smaller payload — for large files, write them in multiple smaller edits.";

/// A sentence: capitalised, ended with a full stop.
pub(crate) fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = phrase(rng, words);
    if let Some(first) = s.get(0..1) {
        let upper = first.to_uppercase();
        s.replace_range(0..1, &upper);
    }
    s.push('.');
    s
}

/// A sentence of `lo..=hi` words.
pub(crate) fn sentence_of(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let words = rng.range_usize(lo, hi);
    sentence(rng, words)
}

/// About `lo..=hi` bytes of sentences.
pub(crate) fn paragraph_of(rng: &mut Rng, lo: usize, hi: usize) -> String {
    let target = rng.range_usize(lo, hi);
    paragraph(rng, target)
}

/// Sentences until about `target` bytes.
pub(crate) fn paragraph(rng: &mut Rng, target: usize) -> String {
    let mut s = String::with_capacity(target + 64);
    while s.len() < target {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&sentence_of(rng, 5, 18));
    }
    s
}

fn some_path<'a>(project: &'a Project, rng: &mut Rng) -> &'a str {
    &project.files[rng.below(project.files.len() as u64) as usize].path
}

/// The prompt that opens a session or a new real turn. `first` prompts
/// state a task; later ones follow up. Sometimes a log is pasted in, which
/// is text no stage of compaction can shorten.
pub(crate) fn user_prompt(project: &Project, rng: &mut Rng, first: bool) -> String {
    let path = some_path(project, rng).to_string();
    let f = fn_name(rng);
    let mut s = if first || rng.chance(0.35) {
        match rng.below(7) {
            0 => format!(
                "The {} {} is broken when {}. Can you look at {path} and fix it?",
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                phrase(rng, 5)
            ),
            1 => format!(
                "Add a --{}-{} flag to the {} command. It should {}.",
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(VERBS),
                phrase(rng, 8)
            ),
            2 => format!(
                "Why does `{f}` return {} results? It started after the last change to @{path}.",
                rng.pick(ADJECTIVES)
            ),
            3 => format!(
                "Refactor {path} so that {}. Keep the public API as it is.",
                phrase(rng, 9)
            ),
            4 => format!(
                "Run `{}` and fix whatever fails.",
                rng.pick(project.lang.test_cmds)
            ),
            5 => format!(
                "`{f}` schlägt seit gestern fehl — bitte prüfe die Änderungen an {path}. Danke!"
            ),
            _ => format!(
                "Implement {} for {} in {path}: {}",
                type_name(rng),
                rng.pick(NOUNS),
                paragraph_of(rng, 80, 600)
            ),
        }
    } else {
        match rng.below(8) {
            0 => "yes, go ahead".to_string(),
            1 => "looks good. now also update the README".to_string(),
            2 => format!("that broke `{f}`, can you check?"),
            3 => format!(
                "can you explain what `{f}` does and why it needs the {}?",
                rng.pick(NOUNS)
            ),
            4 => "commit this with a good message".to_string(),
            5 => format!("perfect 🚀 next: {}", phrase(rng, 7)),
            6 => format!(
                "no, I meant the {} in {path}, not that one",
                rng.pick(NOUNS)
            ),
            _ => "run the tests again".to_string(),
        }
    };
    if rng.chance(0.12) {
        let target = rng.log_uniform(400, 24_000) as usize;
        let log = if rng.chance(0.5) {
            logs::test_run(project, rng, target, true)
        } else {
            logs::server_log(rng, target)
        };
        s.push_str("\n\nHere is the output:\n\n```\n");
        s.push_str(&log);
        s.push_str("```");
    }
    s
}

/// What the assistant says before calling tools.
pub(crate) fn remark(project: &Project, rng: &mut Rng) -> String {
    let path = some_path(project, rng);
    match rng.below(6) {
        0 => format!("Let me look at `{path}` first."),
        1 => format!("I'll search for where `{}` is defined.", fn_name(rng)),
        2 => "Running the tests to see the current state.".to_string(),
        3 => format!("Now I'll update `{}` to {}.", fn_name(rng), phrase(rng, 6)),
        4 => format!("The problem is in `{path}`: {}", sentence(rng, 12)),
        _ => paragraph_of(rng, 60, 500),
    }
}

/// The assistant's closing answer to a turn: a short report in markdown.
pub(crate) fn final_answer(project: &Project, rng: &mut Rng) -> String {
    let mut s = String::new();
    s.push_str(&sentence_of(rng, 4, 12));
    s.push_str(" Here is what changed:\n\n");
    for _ in 0..rng.range(1, 6) {
        let path = some_path(project, rng);
        s.push_str(&format!("- **`{path}`**: {}\n", phrase_of(rng, 5, 16)));
    }
    if rng.chance(0.3) {
        s.push_str("\n```\n");
        let mut line = String::new();
        for _ in 0..rng.range(2, 14) {
            line.clear();
            super::code::code_line(project.lang, rng, &mut line);
            s.push_str(&line);
            s.push('\n');
        }
        s.push_str("```\n");
    }
    s.push('\n');
    s.push_str(&paragraph_of(rng, 40, 900));
    s
}

/// A thinking block's text: the model reasoning about the task.
pub(crate) fn thinking(project: &Project, rng: &mut Rng) -> String {
    let mut s = format!("The user wants {}. ", phrase(rng, 6));
    s.push_str(&format!(
        "I should check `{}` in {} before changing anything. ",
        fn_name(rng),
        some_path(project, rng)
    ));
    let target = rng.log_uniform(80, 5_000) as usize;
    s.push_str(&paragraph(rng, target));
    s
}

/// A stop hook's complaint: smith injects it as a synthetic user message
/// when a hook blocks the end of a turn.
pub(crate) fn stop_hook(project: &Project, rng: &mut Rng) -> String {
    let cmd = rng.pick(project.lang.test_cmds);
    let length = rng.range_usize(200, 1500);
    let out = logs::test_run(project, rng, length, true);
    format!("Stop hook `{cmd}` failed (exit 1). Fix the failures before finishing.\n\n{out}")
}
