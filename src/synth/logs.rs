//! Log-like text: what `bash` prints for tests, builds, git, servers and
//! small shell commands. Every generator appends lines until it has about
//! the number of bytes asked for, so sizes are chosen by the caller.

use super::code::{code_line, fn_name, phrase, phrase_of, type_name, var_name};
use super::project::{Project, Runner};
use super::rng::Rng;
use super::vocab::{DIRS, LOG_COMPONENTS, NON_ASCII, NOUNS};

/// Output of the project's test command: passing and failing tests, panics
/// with their assertion, and the runner's summary line.
pub(crate) fn test_run(project: &Project, rng: &mut Rng, target: usize, failing: bool) -> String {
    let mut out = String::with_capacity(target + 256);
    let runner = project.lang.runner;
    let mut passed = 0u32;
    let mut failed = Vec::new();
    match runner {
        Runner::Cargo => out.push_str(&format!("   Compiling {} v0.1.0 ({})\n    Finished `test` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n     Running unittests src/lib.rs\n\nrunning {} tests\n", project.name, project.cwd, rng.range(1, 40), rng.range(0, 99), rng.range(10, 900))),
        Runner::CrystalSpec => {}
        Runner::Vitest => out.push_str(&format!("\n RUN  v2.1.{} {}\n\n", rng.range(0, 9), project.cwd)),
        Runner::Pytest => out.push_str(&format!("============================= test session starts ==============================\nplatform linux -- Python 3.12.{}, pytest-8.3.{}\nrootdir: {}\ncollected {} items\n\n", rng.range(0, 8), rng.range(0, 5), project.cwd, rng.range(10, 900))),
        Runner::GoTest => {}
    }
    while out.len() < target {
        let name = format!("{}::{}", rng.pick(DIRS), fn_name(rng));
        let fail = failing && rng.chance(0.04);
        if fail {
            failed.push(name.clone());
        } else {
            passed += 1;
        }
        match runner {
            Runner::Cargo => out.push_str(&format!(
                "test {name} ... {}\n",
                if fail { "FAILED" } else { "ok" }
            )),
            Runner::CrystalSpec => out.push(if fail { 'F' } else { '.' }),
            Runner::Vitest => out.push_str(&format!(
                " {} src/{}.test.ts > {} ({} ms)\n",
                if fail { "✗" } else { "✓" },
                rng.pick(NOUNS),
                phrase_of(rng, 3, 8),
                rng.range(0, 400)
            )),
            Runner::Pytest => out.push_str(&format!(
                "tests/test_{}.py::test_{} {}\n",
                rng.pick(NOUNS),
                fn_name(rng),
                if fail { "FAILED" } else { "PASSED" }
            )),
            Runner::GoTest => out.push_str(&format!(
                "=== RUN   Test{}\n--- {}: Test{} (0.{:02}s)\n",
                type_name(rng),
                if fail { "FAIL" } else { "PASS" },
                type_name(rng),
                rng.range(0, 99)
            )),
        }
        if runner == Runner::CrystalSpec && (passed as usize + failed.len()) % 80 == 0 {
            out.push('\n');
        }
    }
    if runner == Runner::CrystalSpec {
        out.push('\n');
    }
    for (i, name) in failed.iter().enumerate() {
        let expected = rng.range(0, 5000);
        let got = expected + rng.range(1, 300);
        let file = source_path(project, rng);
        let line = rng.range(10, 900);
        match runner {
            Runner::Cargo => out.push_str(&format!("\n---- {name} stdout ----\nthread '{name}' panicked at {file}:{line}:9:\nassertion `left == right` failed\n  left: {got}\n right: {expected}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")),
            Runner::CrystalSpec => out.push_str(&format!("\n  {}) {} {}\n     Failure/Error: {}.should eq({expected})\n\n       Expected: {expected}\n            got: {got}\n\n     # {file}:{line}\n", i + 1, type_name(rng), phrase(rng, 6), var_name(rng))),
            Runner::Vitest => out.push_str(&format!("\n FAIL  src/{}.test.ts > {name}\nAssertionError: expected {got} to be {expected} // Object.is equality\n ❯ {file}:{line}:21\n", rng.pick(NOUNS))),
            Runner::Pytest => out.push_str(&format!("\n___________________________ {name} ___________________________\n\n    def test_{}():\n>       assert {} == {expected}\nE       assert {got} == {expected}\n\n{file}:{line}: AssertionError\n", fn_name(rng), var_name(rng))),
            Runner::GoTest => out.push_str(&format!("    {file}:{line}: got {got}, want {expected}\n")),
        }
    }
    let total = passed as usize + failed.len();
    let secs = format!("{}.{:02}", rng.range(0, 60), rng.range(0, 99));
    let f = failed.len();
    match runner {
        Runner::Cargo => out.push_str(&format!("\ntest result: {}. {passed} passed; {f} failed; 0 ignored; 0 measured; 0 filtered out; finished in {secs}s\n", if f > 0 { "FAILED" } else { "ok" })),
        Runner::CrystalSpec => out.push_str(&format!("\nFinished in {secs} seconds\n{total} examples, {f} failures, 0 errors, 0 pending\n")),
        Runner::Vitest => out.push_str(&format!("\n Test Files  {} passed ({})\n      Tests  {}{passed} passed ({total})\n   Duration  {secs}s\n", rng.range(1, 40), rng.range(1, 40), if f > 0 { format!("{f} failed | ") } else { String::new() })),
        Runner::Pytest => out.push_str(&format!("\n========================= {}{passed} passed in {secs}s =========================\n", if f > 0 { format!("{f} failed, ") } else { String::new() })),
        Runner::GoTest => out.push_str(&format!("{}\t{}/{}\t{secs}s\n", if f > 0 { "FAIL" } else { "ok  " }, project.name, rng.pick(DIRS))),
    }
    out
}

/// A path a log points at: shaped like the project's sources, though not
/// one of its files.
fn source_path(project: &Project, rng: &mut Rng) -> String {
    let (dir, noun) = (rng.pick(DIRS), rng.pick(NOUNS));
    format!("{}/{dir}/{noun}.{}", project.lang.src_dir, project.lang.ext)
}

/// Output of a build or lint command: compiler progress, warnings with
/// their source excerpt, and errors when `failing`.
pub(crate) fn build_run(project: &Project, rng: &mut Rng, target: usize, failing: bool) -> String {
    let mut out = String::with_capacity(target + 256);
    let mut line = String::new();
    while out.len() < target {
        let file = source_path(project, rng);
        let row = rng.range(1, 1200);
        let col = rng.range(1, 60);
        let error = failing && rng.chance(0.3);
        line.clear();
        code_line(project.lang, rng, &mut line);
        let label = if error { "error" } else { "warning" };
        let what = if error {
            format!(
                "mismatched types: expected `{}`, found `{}`",
                type_name(rng),
                type_name(rng)
            )
        } else {
            format!("unused variable: `{}`", var_name(rng))
        };
        out.push_str(&format!(
            "{label}: {what}\n  --> {file}:{row}:{col}\n   |\n{row:>4} | {}\n   |     ^^^^ {}\n\n",
            line.trim_start(),
            phrase(rng, 5)
        ));
    }
    if failing {
        out.push_str(&format!(
            "error: could not compile `{}` due to {} previous errors\n",
            project.name,
            rng.range(1, 9)
        ));
    } else {
        out.push_str(&format!(
            "    Finished `dev` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n",
            rng.range(0, 90),
            rng.range(0, 99)
        ));
    }
    out
}

/// Lines of an application log, as `tail -n` or `cat` of a log file shows.
pub(crate) fn server_log(rng: &mut Rng, target: usize) -> String {
    let mut out = String::with_capacity(target + 256);
    let (mut h, mut m, mut s) = (rng.range(0, 23), rng.range(0, 59), rng.range(0, 59));
    let day = rng.range(1, 28);
    while out.len() < target {
        s += rng.range(0, 3);
        if s >= 60 {
            s -= 60;
            m += 1;
        }
        if m >= 60 {
            m = 0;
            h = (h + 1) % 24;
        }
        let level = rng.pick(&["INFO ", "INFO ", "INFO ", "DEBUG", "WARN ", "ERROR"]);
        out.push_str(&format!(
            "2025-03-{day:02}T{h:02}:{m:02}:{s:02}.{:03}Z {level} {}: ",
            rng.range(0, 999),
            rng.pick(LOG_COMPONENTS)
        ));
        match rng.below(4) {
            0 => out.push_str(&format!(
                "{} /api/v1/{}/{} {} {}ms",
                rng.pick(&["GET", "POST", "PUT", "DELETE"]),
                rng.pick(NOUNS),
                rng.range(1, 99_999),
                rng.pick(&["200", "200", "201", "204", "404", "500"]),
                rng.range(0, 2500)
            )),
            1 => out.push_str(&format!(
                "{} {}={} {}={}",
                phrase(rng, 4),
                var_name(rng),
                rng.range(0, 1_000_000),
                var_name(rng),
                rng.pick(NON_ASCII)
            )),
            2 => out.push_str(&format!(
                "job {} finished in {}ms ({} items)",
                fn_name(rng),
                rng.range(1, 90_000),
                rng.range(0, 5000)
            )),
            _ => out.push_str(&phrase_of(rng, 5, 16)),
        }
        out.push('\n');
    }
    out
}

/// `git diff` output over a few of the project's files.
pub(crate) fn git_diff(project: &Project, rng: &mut Rng, target: usize) -> String {
    let mut out = String::with_capacity(target + 256);
    let mut line = String::new();
    while out.len() < target {
        let file = &project.files[rng.below(project.files.len() as u64) as usize].path;
        out.push_str(&format!(
            "diff --git a/{file} b/{file}\nindex {}..{} 100644\n--- a/{file}\n+++ b/{file}\n",
            rng.hex(7),
            rng.hex(7)
        ));
        for _ in 0..rng.range(1, 6) {
            let at = rng.range(1, 900);
            out.push_str(&format!(
                "@@ -{at},{} +{at},{} @@ {}\n",
                rng.range(3, 20),
                rng.range(3, 20),
                fn_name(rng)
            ));
            for _ in 0..rng.range(4, 30) {
                line.clear();
                code_line(project.lang, rng, &mut line);
                let sign = rng.pick(&[' ', ' ', ' ', '+', '-']);
                out.push(sign);
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

/// `git status`, `git log --oneline`, `ls -la` and the like: small outputs.
pub(crate) fn small_command(project: &Project, rng: &mut Rng, command: &str) -> String {
    let mut out = String::new();
    if command.starts_with("git status") {
        out.push_str("On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n");
        for _ in 0..rng.range(1, 8) {
            let f = &project.files[rng.below(project.files.len() as u64) as usize].path;
            out.push_str(&format!("\tmodified:   {f}\n"));
        }
    } else if command.starts_with("git log") {
        for _ in 0..rng.range(5, 20) {
            out.push_str(&format!(
                "{} {}: {}\n",
                rng.hex(7),
                rng.pick(&["fix", "feat", "refactor", "test", "docs"]),
                phrase_of(rng, 3, 9)
            ));
        }
    } else if command.starts_with("ls") {
        for _ in 0..rng.range(3, 25) {
            let dir = rng.chance(0.3);
            out.push_str(&format!(
                "{} {:>2} {} staff {:>7} Mar {:>2} {:02}:{:02} {}\n",
                if dir { "drwxr-xr-x" } else { "-rw-r--r--" },
                rng.range(1, 9),
                project.cwd.split('/').nth(2).unwrap_or("dev"),
                rng.log_uniform(64, 200_000),
                rng.range(1, 28),
                rng.range(0, 23),
                rng.range(0, 59),
                if dir {
                    rng.pick(DIRS).to_string()
                } else {
                    format!("{}.{}", rng.pick(NOUNS), project.lang.ext)
                }
            ));
        }
    } else if command.starts_with("wc") {
        let mut total = 0;
        for _ in 0..rng.range(3, 30) {
            let n = rng.log_uniform(10, 5000);
            total += n;
            let f = &project.files[rng.below(project.files.len() as u64) as usize].path;
            out.push_str(&format!("{n:>6} {f}\n"));
        }
        out.push_str(&format!("{total:>6} total\n"));
    } else if rng.chance(0.5) {
        out.push_str("(Command completed with no output)");
    } else {
        out.push_str(&format!("{}\n", phrase_of(rng, 1, 6)));
    }
    out
}
