//! The imaginary project a session works on: its language, its files and
//! their sizes, and the commands that build and test it.
//!
//! Files have a seed and a version, so reading the same file twice without
//! an edit in between returns the same text (as it would on disk), and an
//! `edit_file` or `write_file` makes the next read differ.

use super::rng::Rng;
use super::vocab::{DIRS, NOUNS, PROJECTS, USERS, VERBS};

/// A programming language's look: file names, line templates (each in the
/// language's comment syntax) and the commands that build and test it.
///
/// Templates use `$` placeholders filled by [`super::code`]: `$f` a
/// function name, `$F` the same in CamelCase, `$v` a variable, `$T` a type,
/// `$n` a number, `$s` a short phrase, `$c` a comment, `$d` a directory.
#[derive(Debug)]
pub(crate) struct Language {
    pub(crate) name: &'static str,
    pub(crate) ext: &'static str,
    pub(crate) src_dir: &'static str,
    pub(crate) test_dir: &'static str,
    /// How a test file's stem ends (`_spec`, `.test`, …).
    pub(crate) test_suffix: &'static str,
    pub(crate) manifest: &'static str,
    pub(crate) templates: &'static [&'static str],
    pub(crate) test_cmds: &'static [&'static str],
    pub(crate) build_cmds: &'static [&'static str],
    /// Which test-runner output [`super::logs`] imitates.
    pub(crate) runner: Runner,
}

/// The test runners whose output the logs imitate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runner {
    Cargo,
    CrystalSpec,
    Vitest,
    Pytest,
    GoTest,
}

/// The languages a project can be written in.
pub(crate) const LANGUAGES: &[Language] = &[
    Language {
        name: "rust",
        ext: "rs",
        src_dir: "src",
        test_dir: "tests",
        test_suffix: "_test",
        manifest: "Cargo.toml",
        templates: &[
            "pub fn $f(&self, $v: &$T) -> Result<$T> {",
            "let $v = self.$f($v)?;",
            "if $v.len() > $n {",
            "return Err(anyhow!(\"$s\"));",
            "}",
            "}",
            "$v.push($T::new($v));",
            "// $c",
            "/// $c",
            "match $v {",
            "$T::$T => $f($v),",
            "use crate::$d::$T;",
            "#[derive(Clone, Debug, PartialEq)]",
            "pub struct $T {",
            "pub $v: $T,",
            "assert_eq!($v, $n);",
            "for $v in $v.iter() {",
            "let mut $v = Vec::with_capacity($n);",
            "Ok($v)",
            "",
        ],
        test_cmds: &[
            "cargo test",
            "cargo test --lib",
            "cargo test --test engine_rules",
            "cargo test -- --nocapture",
        ],
        build_cmds: &[
            "cargo build",
            "cargo clippy --all-targets -- -D warnings",
            "cargo check",
        ],
        runner: Runner::Cargo,
    },
    Language {
        name: "crystal",
        ext: "cr",
        src_dir: "src",
        test_dir: "spec",
        test_suffix: "_spec",
        manifest: "shard.yml",
        templates: &[
            "def $f($v : $T) : $T",
            "$v = $f($v)",
            "if $v.size > $n",
            "raise ArgumentError.new(\"$s\")",
            "end",
            "end",
            "@$v << $T.new($v)",
            "# $c",
            "# $c",
            "case $v",
            "when $T then $f($v)",
            "require \"./$d/$v\"",
            "struct $T",
            "getter $v : $T",
            "$v.each do |$v|",
            "$v.should eq($n)",
            "return $v if $v.nil?",
            "property $v : Int32 = $n",
            "",
        ],
        test_cmds: &[
            "crystal spec",
            "crystal spec spec/context_spec.cr",
            "make test",
        ],
        build_cmds: &[
            "shards build",
            "crystal build src/main.cr --no-codegen",
            "make",
        ],
        runner: Runner::CrystalSpec,
    },
    Language {
        name: "typescript",
        ext: "ts",
        src_dir: "src",
        test_dir: "test",
        test_suffix: ".test",
        manifest: "package.json",
        templates: &[
            "export function $f($v: $T): $T {",
            "const $v = await $f($v);",
            "if ($v.length > $n) {",
            "throw new Error(\"$s\");",
            "}",
            "}",
            "$v.push(new $T($v));",
            "// $c",
            "/** $c */",
            "switch ($v) {",
            "case \"$v\": return $f($v);",
            "import { $T } from \"./$d/$v\";",
            "export interface $T {",
            "$v: $T;",
            "expect($v).toBe($n);",
            "for (const $v of $vs) {",
            "return { ...$v, $v: $n };",
            "",
        ],
        test_cmds: &["npm test", "npx vitest run", "npm test -- --run src/engine"],
        build_cmds: &["npm run build", "npx tsc --noEmit", "npm run lint"],
        runner: Runner::Vitest,
    },
    Language {
        name: "python",
        ext: "py",
        src_dir: "app",
        test_dir: "tests",
        test_suffix: "_test",
        manifest: "pyproject.toml",
        templates: &[
            "def $f(self, $v: $T) -> $T:",
            "$v = self.$f($v)",
            "if len($v) > $n:",
            "raise ValueError(\"$s\")",
            "return $v",
            "# $c",
            "self.$v.append($T($v))",
            "from .$d.$v import $T",
            "class $T:",
            "$v: $T | None = None",
            "for $v in $vs:",
            "assert $v == $n",
            "\"\"\"$c\"\"\"",
            "",
        ],
        test_cmds: &[
            "pytest -q",
            "pytest -x tests/",
            "python -m pytest -k budget",
        ],
        build_cmds: &["ruff check .", "mypy app", "python -m compileall app"],
        runner: Runner::Pytest,
    },
    Language {
        name: "go",
        ext: "go",
        src_dir: "internal",
        test_dir: "internal",
        test_suffix: "_test",
        manifest: "go.mod",
        templates: &[
            "func (s *$T) $F($v $T) ($T, error) {",
            "$v, err := s.$F($v)",
            "if err != nil {",
            "return nil, fmt.Errorf(\"$s: %w\", err)",
            "}",
            "}",
            "// $c",
            "// $c",
            "$v = append($v, $T{})",
            "switch $v {",
            "case $n:",
            "type $T struct {",
            "$F $T `json:\"$v\"`",
            "for _, $v := range $vs {",
            "if got := $v.$F(); got != $n {",
            "",
        ],
        test_cmds: &[
            "go test ./...",
            "go test -run TestBudget ./internal/engine",
            "go test -race ./...",
        ],
        build_cmds: &["go build ./...", "go vet ./...", "golangci-lint run"],
        runner: Runner::GoTest,
    },
];

/// What a file holds, which decides how reading it looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    Code,
    Test,
    Markdown,
    Manifest,
    /// An image: reading it attaches an `image` block.
    Image,
    /// A PDF: reading it attaches a `document` block.
    Pdf,
}

/// One file of the project.
#[derive(Clone, Debug)]
pub(crate) struct File {
    pub(crate) path: String,
    pub(crate) kind: FileKind,
    /// Bytes of a full `read_file` of it (numbered lines), or of the file
    /// itself for images and PDFs.
    pub(crate) bytes: u64,
    pub(crate) seed: u64,
    /// Bumped by every edit, so a read after an edit shows other text.
    pub(crate) version: u32,
}

impl File {
    /// About how many lines a full read shows (lines average ~44 bytes).
    pub(crate) fn lines(&self) -> u64 {
        (self.bytes / 44).max(1)
    }
}

/// Adds between `count.0` and `count.1` files of `kind` to `specs`, each
/// with a size spread log-uniformly over `size`, drawn before its `name`.
fn add_files(
    specs: &mut Vec<(String, FileKind, u64)>,
    rng: &mut Rng,
    count: (u64, u64),
    size: (u64, u64),
    kind: FileKind,
    name: fn(&mut Rng) -> String,
) {
    for _ in 0..rng.range(count.0, count.1) {
        let bytes = rng.log_uniform(size.0, size.1);
        specs.push((name(rng), kind, bytes));
    }
}

/// The project: where it lives, its language and its files.
#[derive(Debug)]
pub(crate) struct Project {
    pub(crate) name: String,
    pub(crate) cwd: String,
    pub(crate) lang: &'static Language,
    pub(crate) files: Vec<File>,
}

impl Project {
    /// A project of `rng`'s choosing; `bigger` files when the session is
    /// meant to be heavy.
    pub(crate) fn new(rng: &mut Rng) -> Project {
        let lang = rng.pick_ref(LANGUAGES);
        let name = rng.pick(PROJECTS).to_string();
        let user = rng.pick(USERS);
        let parent = rng.pick(&["code", "src", "work", "projects"]);
        let cwd = format!("/home/{user}/{parent}/{name}");
        // (path, kind, bytes); seeds are drawn once all are known.
        let mut specs: Vec<(String, FileKind, u64)> = Vec::new();

        let dirs = rng.range_usize(4, 9);
        for _ in 0..dirs {
            let dir = rng.pick(DIRS);
            for _ in 0..rng.range(3, 12) {
                let stem = format!("{}_{}", rng.pick(VERBS), rng.pick(NOUNS));
                let stem = if rng.chance(0.5) {
                    rng.pick(NOUNS).to_string()
                } else {
                    stem
                };
                // Most source files are a few KB; a few are the 5,000-line
                // monsters every project has, whose read alone is 200 KB.
                let bytes = if rng.chance(0.04) {
                    rng.range(150_000, 420_000)
                } else {
                    rng.log_uniform(300, 40_000)
                };
                specs.push((
                    format!("{}/{dir}/{stem}.{}", lang.src_dir, lang.ext),
                    FileKind::Code,
                    bytes,
                ));
            }
        }
        for _ in 0..rng.range(4, 14) {
            let stem = format!("{}{}", rng.pick(NOUNS), lang.test_suffix);
            let bytes = rng.log_uniform(1_000, 40_000);
            specs.push((
                format!("{}/{stem}.{}", lang.test_dir, lang.ext),
                FileKind::Test,
                bytes,
            ));
        }
        specs.push((
            "README.md".into(),
            FileKind::Markdown,
            rng.log_uniform(1_500, 25_000),
        ));
        specs.push((
            "CHANGELOG.md".into(),
            FileKind::Markdown,
            rng.log_uniform(2_000, 60_000),
        ));
        add_files(
            &mut specs,
            rng,
            (1, 4),
            (1_000, 30_000),
            FileKind::Markdown,
            |rng| format!("docs/{}.md", rng.pick(NOUNS)),
        );
        specs.push((
            lang.manifest.into(),
            FileKind::Manifest,
            rng.range(300, 2_500),
        ));
        add_files(
            &mut specs,
            rng,
            (1, 4),
            (8_000, 900_000),
            FileKind::Image,
            |rng| format!("assets/{}-{}.png", rng.pick(NOUNS), rng.pick(ADJ_SUFFIX)),
        );
        add_files(
            &mut specs,
            rng,
            (0, 2),
            (40_000, 3_000_000),
            FileKind::Pdf,
            |rng| format!("docs/{}-spec.pdf", rng.pick(NOUNS)),
        );
        // Duplicate paths (two dirs drawing the same stem) would make two
        // files answer to one name; keep the first.
        let mut seen = std::collections::HashSet::new();
        specs.retain(|(path, _, _)| seen.insert(path.clone()));
        let files = specs
            .into_iter()
            .map(|(path, kind, bytes)| File {
                path,
                kind,
                bytes,
                seed: rng.next_u64(),
                version: 0,
            })
            .collect();
        Project {
            name,
            cwd,
            lang,
            files,
        }
    }

    /// Indices of files of the given kinds.
    pub(crate) fn of_kind(&self, kinds: &[FileKind]) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| kinds.contains(&self.files[i].kind))
            .collect()
    }

    /// A path no file has yet, for `write_file` to create.
    pub(crate) fn new_path(&self, rng: &mut Rng) -> String {
        for attempt in 0u32.. {
            let suffix = if attempt < 20 {
                String::new()
            } else {
                format!("_{attempt}")
            };
            let path = format!(
                "{}/{}/{}_{}{suffix}.{}",
                self.lang.src_dir,
                rng.pick(DIRS),
                rng.pick(VERBS),
                rng.pick(NOUNS),
                self.lang.ext
            );
            if !self.files.iter().any(|f| f.path == path) {
                return path;
            }
        }
        unreachable!("a suffixed path is eventually free")
    }
}

/// Suffixes for asset names.
const ADJ_SUFFIX: &[&str] = &[
    "dark", "light", "before", "after", "mobile", "v2", "draft", "final",
];
