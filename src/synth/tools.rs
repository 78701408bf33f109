//! Tool calls and what they return: smith's `read_file`, `grep`, `glob`,
//! `bash`, `edit_file`, `write_file` and `todo_write`, with arguments as
//! smith's tools take them and results as they print them.
//!
//! The toolbox remembers the read-only calls it made so the model can make
//! one again with identical arguments (what stage 1 of compaction
//! supersedes), and the last test command so it can be run again after an
//! edit (what stage 1 must leave alone).

use std::sync::Arc;

use super::code::{self, grep_output, read_output};
use super::logs;
use super::project::{FileKind, Project};
use super::rng::{mix64, Rng};
use super::vocab::{NOUNS, VERBS};
use crate::transcript::json::write_str;
use crate::transcript::{Block, BlockType, Str};

/// smith's `bash` keeps at most 256 KiB of output; greps are held to the
/// same so no result outgrows what smith's tools return.
const OUTPUT_CAP_BYTES: usize = 256 * 1024;

/// What a round of work is about, which decides the tools it uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Finding and reading code: glob, grep, read_file, small shell commands.
    Explore,
    /// Changing code: edit_file, write_file, re-reads.
    Edit,
    /// Checking the change: tests, builds, diffs, logs.
    Verify,
}

/// How large results may be.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizing {
    /// No result is made larger than this many bytes (reads become ranged).
    pub(crate) cap: u64,
    /// Prefer the biggest things: whole large files, repo-wide greps, long
    /// logs. The giant turns that push a history over the window.
    pub(crate) heavy: bool,
}

/// One call: the `tool_use` block, its `tool_result`, and an attachment
/// that came back with it.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) tool_use: Block,
    pub(crate) result: Block,
    pub(crate) media: Option<Block>,
}

/// A call as made: the tool's name, its arguments (compact JSON), its
/// result and the attachment that came back with it.
type Made = (&'static str, String, Block, Option<Block>);

/// A read-only call that can be made again with the same arguments.
#[derive(Clone, Debug)]
struct Recent {
    args: String,
    what: Lookup,
}

/// What a read-only call looked at, enough to answer it again.
#[derive(Clone, Debug)]
enum Lookup {
    /// `read_file` of a file, whole or a line range.
    Read(usize, Option<(u64, u64)>),
    Grep {
        query: String,
        wide: bool,
    },
    Glob(String),
}

/// The session's tools and their memory.
#[derive(Debug)]
pub(crate) struct Toolbox {
    pub(crate) project: Project,
    recent: Vec<Recent>,
    last_test: Option<String>,
    id_salt: u64,
    ids: u64,
}

/// Compact JSON for a tool's arguments, written the way smith writes them.
struct Args(Vec<u8>);

impl Args {
    fn new() -> Args {
        Args(vec![b'{'])
    }
    fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(b',');
        }
        write_str(key, &mut self.0);
        self.0.push(b':');
    }
    fn str(mut self, key: &str, value: &str) -> Args {
        self.key(key);
        write_str(value, &mut self.0);
        self
    }
    fn int(mut self, key: &str, value: u64) -> Args {
        self.key(key);
        self.0.extend_from_slice(value.to_string().as_bytes());
        self
    }
    fn raw(mut self, key: &str, json: &str) -> Args {
        self.key(key);
        self.0.extend_from_slice(json.as_bytes());
        self
    }
    fn done(mut self) -> String {
        self.0.push(b'}');
        // Built from `str`s and ASCII only.
        String::from_utf8(self.0).unwrap_or_default()
    }
}

fn result(text: String, is_error: bool) -> Block {
    Block::tool_result(None, text.into_bytes(), is_error)
}

impl Toolbox {
    /// A toolbox over `project`; `id_salt` makes this session's call ids
    /// its own.
    pub(crate) fn new(project: Project, id_salt: u64) -> Toolbox {
        Toolbox {
            project,
            recent: Vec::new(),
            last_test: None,
            id_salt,
            ids: 0,
        }
    }

    /// A fresh `toolu_` id: the counter through a bijection, so no two calls
    /// of a session ever share one, plus random digits for looks.
    fn next_id(&mut self, rng: &mut Rng) -> String {
        self.ids += 1;
        format!(
            "toolu_{:016x}{}",
            mix64(self.id_salt.wrapping_add(self.ids)),
            rng.hex(8)
        )
    }

    /// One call for a round of `phase`, its result, and its attachment.
    pub(crate) fn call(&mut self, rng: &mut Rng, phase: Phase, sizing: Sizing) -> Call {
        let weights: [u32; 8] = match (phase, sizing.heavy) {
            // read, read_range, repeat, grep, glob, bash, edit, write
            (Phase::Explore, false) => [34, 10, 18, 18, 8, 10, 0, 2],
            (Phase::Explore, true) => [50, 0, 15, 25, 2, 8, 0, 0],
            (Phase::Edit, _) => [12, 8, 12, 4, 0, 4, 48, 12],
            (Phase::Verify, false) => [6, 2, 8, 2, 0, 80, 2, 0],
            (Phase::Verify, true) => [15, 0, 10, 5, 0, 70, 0, 0],
        };
        let id = self.next_id(rng);
        let (tool, args, mut res, media) = match rng.weighted(&weights) {
            0 => self.read(rng, sizing, false),
            1 => self.read(rng, sizing, true),
            2 => match self.repeat(rng) {
                Some(call) => call,
                None => self.read(rng, sizing, false),
            },
            3 => self.grep(rng, sizing),
            4 => self.glob(rng),
            5 => self.bash(rng, phase, sizing),
            6 => self.edit(rng),
            _ => self.write(rng, sizing),
        };
        let id: Str = Arc::from(id.as_str());
        res.tool_call_id = Some(id.clone());
        let media = media.map(|mut m| {
            m.tool_call_id = Some(id.clone());
            m
        });
        Call {
            tool_use: Block::tool_use(&id, tool, &args),
            result: res,
            media,
        }
    }

    /// A `todo_write` call: the plan the model keeps for a long turn.
    pub(crate) fn todo(&mut self, rng: &mut Rng) -> Call {
        let id = self.next_id(rng);
        let n = rng.range_usize(2, 7);
        let done = rng.range_usize(0, n - 1);
        let mut list = Vec::from([b'[']);
        for i in 0..n {
            if i > 0 {
                list.push(b',');
            }
            list.extend_from_slice(b"{\"content\":");
            write_str(
                &format!(
                    "{} the {} {}",
                    rng.pick(VERBS),
                    rng.pick(NOUNS),
                    code::phrase(rng, 3)
                ),
                &mut list,
            );
            let status = if i < done {
                "completed"
            } else if i == done {
                "in_progress"
            } else {
                "pending"
            };
            list.extend_from_slice(format!(",\"status\":\"{status}\"}}").as_bytes());
        }
        list.push(b']');
        let list = String::from_utf8(list).unwrap_or_default();
        let args = Args::new().raw("todos", &list).done();
        let text = format!(
            "Todo list updated: 1 in progress, {} pending, {done} completed.",
            n - done - 1
        );
        let mut res = result(text, false);
        res.tool_call_id = Some(id.as_str().into());
        Call {
            tool_use: Block::tool_use(&id, "todo_write", &args),
            result: res,
            media: None,
        }
    }

    /// `read_file`, of a whole file or a line range; of an image or a PDF it
    /// attaches the file.
    fn read(&mut self, rng: &mut Rng, sizing: Sizing, ranged: bool) -> Made {
        let p = &self.project;
        let index = if rng.chance(0.04) {
            p.of_kind(&[FileKind::Image, FileKind::Pdf])
                .first()
                .copied()
        } else if sizing.heavy {
            // The biggest of a few candidates: giant turns read giant files.
            (0..4)
                .map(|_| rng.below(p.files.len() as u64) as usize)
                .max_by_key(|&i| p.files[i].bytes)
        } else {
            Some(rng.below(p.files.len() as u64) as usize)
        };
        let index = index.unwrap_or(0);
        let file = &p.files[index];
        if rng.chance(0.02) {
            let missing = format!("{}/{}.{}", p.lang.src_dir, rng.pick(NOUNS), p.lang.ext);
            let args = Args::new().str("path", &missing).done();
            return (
                "read_file",
                args,
                result(format!("Error: File '{missing}' does not exist."), true),
                None,
            );
        }
        if matches!(file.kind, FileKind::Image | FileKind::Pdf) {
            let (kind, media_type) = if file.kind == FileKind::Image {
                (BlockType::Image, "image/png")
            } else {
                (BlockType::Document, "application/pdf")
            };
            let args = Args::new().str("path", &file.path).done();
            let text = format!(
                "Attached {} '{}' ({media_type}, {} KiB).",
                if kind == BlockType::Image {
                    "image"
                } else {
                    "document"
                },
                file.path,
                file.bytes / 1024
            );
            let media = Block {
                kind,
                media_type: Some(media_type.into()),
                source: Some(file.path.as_str().into()),
                media_ref: Some(media_ref(file.seed, file.version).into()),
                ..Block::default()
            };
            self.remember(&args, Lookup::Read(index, None));
            return ("read_file", args, result(text, false), Some(media));
        }
        let range = if ranged || file.bytes > sizing.cap {
            let lines = file.lines();
            let want = (sizing.cap / 44).clamp(10, 400);
            let start = rng.range(1, lines.saturating_sub(want.min(lines) - 1).max(1));
            let end = start + rng.range(want / 4, want).max(1);
            Some((start, end))
        } else {
            None
        };
        let mut args = Args::new().str("path", &file.path);
        if let Some((s, e)) = range {
            args = args.int("start_line", s).int("end_line", e);
        }
        let args = args.done();
        let mut text = read_output(p, file, range);
        straddle_512(&mut file_rng(file), &mut text);
        self.remember(&args, Lookup::Read(index, range));
        ("read_file", args, result(text, false), None)
    }

    /// The same read-only call as an earlier one, arguments byte for byte.
    fn repeat(&mut self, rng: &mut Rng) -> Option<Made> {
        if self.recent.is_empty() {
            return None;
        }
        // Mostly something from the last few calls, sometimes from long ago.
        let n = self.recent.len();
        let back = if rng.chance(0.7) {
            rng.below(n.min(8) as u64)
        } else {
            rng.below(n as u64)
        } as usize;
        let Recent { args, what } = self.recent[n - 1 - back].clone();
        let (tool, text) = match what {
            Lookup::Read(index, range) => {
                let file = &self.project.files[index];
                if matches!(file.kind, FileKind::Image | FileKind::Pdf) {
                    return None;
                }
                let mut text = read_output(&self.project, file, range);
                straddle_512(&mut file_rng(file), &mut text);
                ("read_file", text)
            }
            Lookup::Grep { query, wide } => {
                ("grep", self.grep_text(&query, wide, OUTPUT_CAP_BYTES))
            }
            Lookup::Glob(pattern) => ("glob", self.glob_text(&pattern)),
        };
        Some((tool, args, result(text, false), None))
    }

    fn remember(&mut self, args: &str, what: Lookup) {
        self.recent.push(Recent {
            args: args.to_string(),
            what,
        });
    }

    /// `grep`: matches across the project; a repo-wide one in heavy turns.
    fn grep(&mut self, rng: &mut Rng, sizing: Sizing) -> Made {
        let query = if rng.chance(0.5) {
            code::fn_name(rng)
        } else {
            format!("{}\\(", rng.pick(VERBS))
        };
        let wide = sizing.heavy || rng.chance(0.1);
        let path = if wide {
            ".".to_string()
        } else {
            self.project.lang.src_dir.to_string()
        };
        let args = Args::new().str("query", &query).str("path", &path).done();
        let limit = (sizing.cap.max(2_000) as usize).min(OUTPUT_CAP_BYTES);
        let text = self.grep_text(&query, wide, limit);
        self.remember(&args, Lookup::Grep { query, wide });
        ("grep", args, result(text, false), None)
    }

    /// The output of a grep, fixed by what it searched: the same search gives
    /// the same matches. Cut to `limit` bytes.
    fn grep_text(&self, query: &str, wide: bool, limit: usize) -> String {
        let mut rng = Rng::new(hash(query) ^ wide as u64 ^ self.id_salt);
        let count = match rng.below(10) {
            0 => 0,
            1..=6 => rng.log_uniform(1, 40) as usize,
            _ => rng.log_uniform(40, 200) as usize,
        };
        if count == 0 {
            return format!("No matches found for query: '{query}'");
        }
        let mut text = grep_output(&self.project, &mut rng, count, wide);
        if text.len() > limit {
            let cut = code::floor_char_boundary(&text, limit);
            text.truncate(cut);
            text.push_str(&format!(
                "\n\n... [{} more matches omitted]",
                rng.range(1, 400)
            ));
        } else if count == 200 {
            text.push_str(&format!(
                "\n\n... [{} more matches omitted]",
                rng.range(1, 3000)
            ));
        }
        straddle_512(&mut rng, &mut text);
        text
    }

    /// `glob`: the project's paths that a pattern matches.
    fn glob(&mut self, rng: &mut Rng) -> Made {
        let lang = self.project.lang;
        let pattern = match rng.below(4) {
            0 => format!("**/*.{}", lang.ext),
            1 => format!("{}/**/*.{}", lang.src_dir, lang.ext),
            2 => format!("{}/**/*{}.{}", lang.test_dir, lang.test_suffix, lang.ext),
            _ => "**/*.md".to_string(),
        };
        let args = Args::new().str("pattern", &pattern).done();
        let text = self.glob_text(&pattern);
        self.remember(&args, Lookup::Glob(pattern));
        ("glob", args, result(text, false), None)
    }

    /// The project's paths a pattern matches (by its fixed prefix and its
    /// suffix: enough for the patterns the model uses here).
    fn glob_text(&self, pattern: &str) -> String {
        let suffix = pattern.rsplit('*').next().unwrap_or("");
        let prefix = pattern
            .split("/**")
            .next()
            .filter(|p| !p.contains('*'))
            .unwrap_or("");
        let matches: Vec<&str> = self
            .project
            .files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| p.ends_with(suffix) && p.starts_with(prefix))
            .collect();
        if matches.is_empty() {
            return format!("No files matched pattern: '{pattern}'");
        }
        let shown = matches.len().min(200);
        let mut text = matches[..shown].join("\n");
        if matches.len() > shown {
            text.push_str(&format!(
                "\n\n... [{} more files omitted]",
                matches.len() - shown
            ));
        }
        text
    }

    /// `bash`: tests, builds, diffs, logs and small commands. A test run is
    /// often the same command as the last one: a before and an after.
    fn bash(&mut self, rng: &mut Rng, phase: Phase, sizing: Sizing) -> Made {
        let p = &self.project;
        let cap = sizing.cap.max(200) as usize;
        let kind = match phase {
            Phase::Verify => rng.weighted(&[55, 20, 10, 8, 7]),
            _ => rng.weighted(&[8, 4, 8, 10, 70]),
        };
        let (command, text) = match kind {
            0 => {
                let command = match &self.last_test {
                    Some(c) if rng.chance(0.6) => c.clone(),
                    _ => rng.pick(p.lang.test_cmds).to_string(),
                };
                self.last_test = Some(command.clone());
                let size = if sizing.heavy {
                    rng.log_uniform(20_000, 240_000)
                } else {
                    rng.log_uniform(200, 40_000)
                };
                let failing = rng.chance(0.4);
                let mut out = logs::test_run(p, rng, (size as usize).min(cap), failing);
                if failing {
                    out.push_str(&format!(
                        "\nCommand failed with exit code {}",
                        if p.lang.name == "rust" { 101 } else { 1 }
                    ));
                }
                (command, out)
            }
            1 => {
                let command = rng.pick(p.lang.build_cmds).to_string();
                let failing = rng.chance(0.3);
                let size =
                    rng.log_uniform(100, if sizing.heavy { 120_000 } else { 20_000 }) as usize;
                let mut out = logs::build_run(p, rng, size.min(cap), failing);
                if failing {
                    out.push_str("\nCommand failed with exit code 1");
                }
                (command, out)
            }
            2 => {
                let size = rng.log_uniform(300, 50_000) as usize;
                (
                    "git diff".to_string(),
                    logs::git_diff(p, rng, size.min(cap)),
                )
            }
            3 => {
                let size = if sizing.heavy {
                    rng.log_uniform(60_000, 300_000)
                } else {
                    rng.log_uniform(500, 80_000)
                } as usize;
                let command = format!(
                    "tail -n {} log/{}.log",
                    size / 90,
                    rng.pick(&["development", "server", "worker", "test"])
                );
                (command, logs::server_log(rng, size.min(cap)))
            }
            _ => {
                let command = rng
                    .pick(&[
                        "git status",
                        "git log --oneline -20",
                        "ls -la",
                        "wc -l src/*",
                        "mkdir -p tmp",
                        "echo ok",
                    ])
                    .to_string();
                let text = logs::small_command(p, rng, &command);
                (command, text)
            }
        };
        let mut text = text;
        if text.len() > OUTPUT_CAP_BYTES {
            let cut = code::floor_char_boundary(&text, OUTPUT_CAP_BYTES);
            text.truncate(cut);
            text.push_str("\n\n... [Output truncated to 256 KiB cap]");
        }
        straddle_512(rng, &mut text);
        let args = Args::new().str("command", &command).done();
        ("bash", args, result(text, false), None)
    }

    /// `edit_file`: a unique target replaced; sometimes the target is not
    /// found, an error result.
    fn edit(&mut self, rng: &mut Rng) -> Made {
        let sources = self
            .project
            .of_kind(&[FileKind::Code, FileKind::Test, FileKind::Markdown]);
        let index = rng.pick(&sources);
        let lang = self.project.lang;
        let snippet = |rng: &mut Rng| {
            let mut s = String::new();
            let most = if rng.chance(0.1) { 60 } else { 12 };
            for i in 0..rng.range(1, most) {
                if i > 0 {
                    s.push('\n');
                }
                code::code_line(lang, rng, &mut s);
            }
            s
        };
        let target = snippet(rng);
        let replacement = snippet(rng);
        let file = &mut self.project.files[index];
        let args = Args::new()
            .str("path", &file.path)
            .str("target", &target)
            .str("replacement", &replacement)
            .done();
        let res = if rng.chance(0.08) {
            result(
                format!("Error: Target string not found in '{}'.", file.path),
                true,
            )
        } else {
            file.version += 1;
            file.bytes = (file.bytes + replacement.len() as u64)
                .saturating_sub(target.len() as u64)
                .max(100);
            result(format!("Successfully updated '{}'.", file.path), false)
        };
        ("edit_file", args, res, None)
    }

    /// `write_file`: a whole new file, its content carried in the arguments.
    fn write(&mut self, rng: &mut Rng, sizing: Sizing) -> Made {
        let path = self.project.new_path(rng);
        let size = rng.log_uniform(300, 30_000).min(sizing.cap.max(300)) as usize;
        let mut content = String::with_capacity(size + 80);
        while content.len() < size {
            code::code_line(self.project.lang, rng, &mut content);
            content.push('\n');
        }
        let args = Args::new()
            .str("path", &path)
            .str("content", &content)
            .done();
        let text = format!("Successfully wrote {} bytes to '{path}'.", content.len());
        self.project.files.push(super::project::File {
            path,
            kind: FileKind::Code,
            bytes: content.len() as u64 + content.lines().count() as u64 * 6,
            seed: rng.next_u64(),
            version: 0,
        });
        ("write_file", args, result(text, false), None)
    }
}

/// The stream that decides what reading `file` shows beyond its lines, so
/// an unchanged file reads the same every time, as on disk.
fn file_rng(file: &super::project::File) -> Rng {
    Rng::new(file.seed ^ mix64(0x5ead ^ file.version as u64))
}

/// A SHA-256-looking content address for an attachment (smith names media
/// files by digest); fixed by the file and its version.
pub(crate) fn media_ref(seed: u64, version: u32) -> String {
    (0..4u64)
        .map(|i| format!("{:016x}", mix64(seed ^ mix64(version as u64 + i))))
        .collect()
}

/// FNV-1a: a stable hash of a search (std's hasher is not promised
/// to stay the same between Rust versions).
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Now and then places a multi-byte character so that it spans byte 512:
/// smith keeps exactly 512 bytes of a truncated result, splitting it, and
/// the replay must count and write that split as smith does.
pub(crate) fn straddle_512(rng: &mut Rng, text: &mut String) {
    const HEAD: usize = crate::engine::constants::OLD_RESULT_BYTES;
    if text.len() <= HEAD + 64 || !rng.chance(0.2) {
        return;
    }
    let c = rng.pick(super::vocab::STRADDLERS);
    // Bytes of `c` before byte 512: at least one, and at least one after.
    let before = rng.range_usize(1, c.len() - 1);
    let start = HEAD - before;
    let boundary = code::floor_char_boundary(text, start);
    let mut spliced = String::with_capacity(text.len() + 8);
    spliced.push_str(&text[..boundary]);
    for _ in boundary..start {
        spliced.push(' ');
    }
    spliced.push_str(c);
    spliced.push_str(&text[boundary..]);
    *text = spliced;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straddle_512_splits_a_character_at_byte_512() {
        let mut hits = 0;
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let mut text = "x".repeat(700);
            straddle_512(&mut rng, &mut text);
            if text.len() > 700 {
                hits += 1;
                assert!(
                    !text.is_char_boundary(512),
                    "seed {seed}: byte 512 starts a character"
                );
            }
        }
        assert!(
            hits > 10,
            "only {hits} of 200 texts got a straddling character"
        );
    }

    #[test]
    fn media_refs_look_like_sha256_digests() {
        let r = media_ref(42, 3);
        assert_eq!(r.len(), 64);
        assert!(r.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(r, media_ref(42, 3));
        assert_ne!(r, media_ref(42, 4));
    }
}
