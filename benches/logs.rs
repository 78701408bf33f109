//! Memory and time of a sweep of real logs read in place, on a folder ten
//! times larger than any shared one: the goal is a peak under 150 MB
//! whatever the folder's size, since a heavy Claude Code user keeps
//! gigabytes of logs.
//!
//! Run with `cargo bench --bench logs` (release). It builds a folder of
//! `LOGS_BENCH_COPIES` copies (default 10) of every log under
//! `LOGS_BENCH_SOURCE` (default the shared Claude Code logs,
//! `../shared/data/claude-code`), each copy under a project name of its
//! own (hard links where the file system allows, else copies), then runs
//! the installed command, `smith-calibrate sweep FOLDER --compact-at 0.8`,
//! on one copy and on all of them, on 1 thread and on 2, and prints each
//! run's time, throughput and peak resident memory (the child's
//! `ru_maxrss`). The copies repeat the same requests under other names,
//! so the bill bills each once (see `src/import/copies.rs`); every log is
//! still read, converted and replayed.
//!
//! A folder whose logs total at most `HELD_LOGS_BYTES` (192 MiB) keeps its
//! converted transcripts while it is swept, as before; a larger one makes
//! each again from its log when it comes to it, so that its peak does not
//! follow its size. The one-copy runs show the first case, the ten-copy
//! runs the second.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn copies() -> usize {
    match std::env::var("LOGS_BENCH_COPIES") {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("LOGS_BENCH_COPIES={v:?} is not a number")),
        Err(_) => 10,
    }
}

fn source() -> PathBuf {
    std::env::var_os("LOGS_BENCH_SOURCE").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/claude-code"),
        PathBuf::from,
    )
}

/// Links (or copies) every file under `from` to the same place under
/// `to`; returns the bytes of the `.jsonl` logs among them.
fn mirror(from: &Path, to: &Path) -> std::io::Result<u64> {
    fs::create_dir_all(to)?;
    let mut logs = 0;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            logs += mirror(&src, &dst)?;
            continue;
        }
        if fs::hard_link(&src, &dst).is_err() {
            fs::copy(&src, &dst)?;
        }
        if src.extension().is_some_and(|e| e == "jsonl") {
            logs += entry.metadata()?.len();
        }
    }
    Ok(logs)
}

/// Wall time and the child's peak resident memory (KB) of one `sweep`.
fn sweep(folder: &Path, threads: usize, out: &Path) -> (f64, u64) {
    let _ = fs::remove_dir_all(out);
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_smith-calibrate"))
        .arg("sweep")
        .arg(folder)
        .args(["--compact-at", "0.8", "-j", &threads.to_string(), "--out"])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start smith-calibrate");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct,
    // which wait4 fills in for the child this process started and has not
    // reaped.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `status` and `usage` are valid for writes for the call.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    // Reaped by wait4: the handle is dropped without waiting again.
    drop(child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the sweep of {} failed (status {status})",
        folder.display()
    );
    (secs, usage.ru_maxrss as u64)
}

fn main() {
    let source = source();
    if !source.is_dir() {
        eprintln!(
            "no logs at {} (set LOGS_BENCH_SOURCE to a folder of Claude Code or Codex logs)",
            source.display()
        );
        std::process::exit(2);
    }
    let n = copies();
    let tmp = tempfile::Builder::new()
        .prefix("logs-bench")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("temporary directory");
    let (one, all) = (tmp.path().join("one"), tmp.path().join("all"));
    let mut logs_one = 0;
    let mut logs_all = 0;
    for i in 1..=n {
        let bytes = mirror(&source, &all.join(format!("copy{i}"))).expect("mirror the logs");
        logs_all += bytes;
        if i == 1 {
            logs_one = mirror(&source, &one.join("copy1")).expect("mirror the logs");
        }
    }
    println!(
        "logs from {}: {:.0} MB; {n} copies: {:.0} MB",
        source.display(),
        logs_one as f64 / 1e6,
        logs_all as f64 / 1e6
    );
    println!(
        "{:<10} {:>7} {:>9} {:>8} {:>14}",
        "folder", "threads", "time", "MB/s", "peak RSS"
    );
    let out = tmp.path().join("out");
    for (name, folder, bytes) in [("1 copy", &one, logs_one), ("all", &all, logs_all)] {
        for threads in [1, 2] {
            let (secs, peak_kb) = sweep(folder, threads, &out);
            println!(
                "{name:<10} {threads:>7} {secs:>8.2}s {:>8.1} {:>11.0} MB",
                bytes as f64 / 1e6 / secs,
                peak_kb as f64 / 1024.0
            );
        }
    }
}
