//! Writing files the tool produces, so that a reader never sees half of one
//! and a file reported written is on disk.
//!
//! Every file goes to a temporary name in the destination directory, is
//! flushed to disk, and is renamed into place; the directory is then synced
//! too, since the rename lives in the directory and would otherwise be the
//! one thing a power cut can still take back. A crash, a full disk or
//! Ctrl-C leaves the previous file (or none) rather than a truncated one,
//! and a script watching the directory only ever sees whole files. The
//! temporary file lives in the same directory because a rename is only
//! atomic within one file system.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};

/// Distinguishes temporary names of concurrent writes from one process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// What a write onto a full disk says, after the file's name.
const DISK_FULL: &str = "the disk is full; free some space or write somewhere else (any previous file of this name is untouched)";

/// Writes `bytes` to `path` atomically: a temporary file beside it, flushed to
/// disk, then renamed over `path`, and the directory synced. On failure the
/// temporary file is removed and `path` is left as it was. The error names
/// the file and keeps its cause in its chain.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Like [`write_atomic`], for output produced piece by piece: `write` gets a
/// buffered writer on the temporary file, so a large file is never held in
/// memory whole. Its error may be any error (a table writer's own, say):
/// it is kept whole in the chain, so a full disk is still recognised
/// through it.
pub(crate) fn write_atomic_with<E>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> Result<()>
where
    E: Into<anyhow::Error>,
{
    write_atomic_via(path, |tmp| File::create(tmp), write)
}

/// [`write_atomic_with`], the temporary file opened by `create`: where the
/// tests put a full disk under a writer.
fn write_atomic_via<E>(
    path: &Path,
    create: impl FnOnce(&Path) -> io::Result<File>,
    write: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> Result<()>
where
    E: Into<anyhow::Error>,
{
    let tmp = temp_name(path);
    let result = (|| -> Result<()> {
        let mut out = BufWriter::new(Watched {
            inner: create(&tmp)?,
            first_error: None,
        });
        if let Err(e) = write(&mut out) {
            return Err(out.get_mut().keep_cause(e.into()));
        }
        let file = out.into_inner().map_err(|e| e.into_error())?.inner;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        sync_dir(parent(path))?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        let what = if is_disk_full(&e) {
            DISK_FULL
        } else {
            "cannot write"
        };
        return Err(e.context(format!("{}: {what}", path.display())));
    }
    Ok(())
}

/// [`write_atomic_with`] onto `/dev/full`, where every write fails with
/// `ENOSPC` as on a full disk: the error, checked to be recognised as a
/// full disk. `None`, with a note that the test is skipped, where there is
/// no such device.
#[cfg(test)]
pub(crate) fn write_onto_a_full_disk<E>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> Option<anyhow::Error>
where
    E: Into<anyhow::Error>,
{
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("note: no /dev/full here; skipping the full disk test: SKIPPED");
        return None;
    };
    let err =
        write_atomic_via(path, |_| Ok(full), write).expect_err("a write onto a full disk fails");
    assert!(
        is_disk_full(&err),
        "{}: not recognised as a full disk: {err:#}",
        path.display()
    );
    Some(err)
}

/// A writer that keeps the first I/O error of the file under it: a table
/// writer that reports a failed write only as text (polars' Parquet writer
/// does) cannot lose the error's kind, so a full disk is still recognised.
struct Watched<W> {
    inner: W,
    first_error: Option<io::Error>,
}

impl<W> Watched<W> {
    /// Hands the caller an equal copy of `e` and keeps `e` itself.
    fn watch(&mut self, e: io::Error) -> io::Error {
        if e.kind() == io::ErrorKind::Interrupted {
            return e;
        }
        let copy = match e.raw_os_error() {
            Some(code) => io::Error::from_raw_os_error(code),
            None => io::Error::new(e.kind(), e.to_string()),
        };
        self.first_error.get_or_insert(e);
        copy
    }

    /// `e`, the error of what wrote through this writer, with the I/O error
    /// the file gave as its cause when `e`'s chain has lost it.
    fn keep_cause(&mut self, e: anyhow::Error) -> anyhow::Error {
        match self.first_error.take() {
            Some(io) if !crate::messages::io_kinds(&e).any(|k| k == io.kind()) => {
                anyhow::Error::new(WriterError { writer: e, io })
            }
            _ => e,
        }
    }
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.watch(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.watch(e))
    }
}

/// A writer's error whose own chain lost the I/O error under it: its
/// message, and that I/O error as its source.
#[derive(Debug, thiserror::Error)]
#[error("{}", without_io(.writer, .io))]
struct WriterError {
    writer: anyhow::Error,
    #[source]
    io: io::Error,
}

/// The writer's message with its causes, less the I/O error's text it
/// often ends with, which the chain then names as the cause.
fn without_io(writer: &anyhow::Error, io: &io::Error) -> String {
    let text = format!("{writer:#}");
    let io = io.to_string();
    match text.strip_suffix(io.as_str()) {
        Some(t) => t.trim_end_matches([':', ' ']).to_string(),
        None => text,
    }
}

/// Writes `bytes` to a new file at `path` and flushes it to disk, for files
/// assembled in a temporary directory that is then renamed into place
/// whole (whose parent the caller syncs with [`sync_dir`]).
pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let result = File::create(path).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    result.map_err(|e| {
        let what = if e.kind() == io::ErrorKind::NotFound {
            "cannot create"
        } else if is_disk_full_kind(e.kind()) {
            DISK_FULL
        } else {
            "cannot write"
        };
        anyhow::Error::new(e).context(format!("{}: {what}", path.display()))
    })
}

/// Makes what was created or renamed in `dir` durable: syncs the directory
/// itself. File systems that cannot sync a directory say so with
/// `InvalidInput` or `Unsupported`, which is taken as done; elsewhere than
/// Unix a directory cannot be opened to be synced, and the rename is left
/// to the system.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let synced = File::open(dir).and_then(|d| d.sync_all());
        match synced {
            Err(e)
                if !matches!(
                    e.kind(),
                    io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported
                ) =>
            {
                return Err(e).with_context(|| format!("{}: cannot sync", dir.display()));
            }
            _ => {}
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The directory `path` is in (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Whether `e`, or any error in its chain, is a write onto a full disk or
/// past a quota (`ENOSPC`, `EDQUOT`), as its [`io::ErrorKind`] says;
/// through the errors of the table writers and of serde_json, which hold
/// the I/O error inside their own (see [`crate::messages::io_kinds`]).
pub(crate) fn is_disk_full(e: &anyhow::Error) -> bool {
    crate::messages::io_kinds(e).any(is_disk_full_kind)
}

fn is_disk_full_kind(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// `.<name>.tmp-<pid>-<n>` in the directory of `path`: hidden, and unique per
/// process and call so parallel writers never share one.
fn temp_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = format!(".{name}.tmp-{}-{n}", std::process::id());
    match path.parent() {
        Some(dir) => dir.join(tmp),
        None => PathBuf::from(tmp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_named_and_leaves_the_previous_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.csv");
        write_atomic(&path, b"previous").unwrap();
        let Some(err) = write_onto_a_full_disk(&path, |out| out.write_all(&[b'x'; 1 << 16])) else {
            return;
        };
        assert_eq!(
            format!("{err:#}"),
            format!(
                "{}: {DISK_FULL}: No space left on device (os error 28)",
                path.display()
            )
        );
        assert_eq!(fs::read(&path).unwrap(), b"previous");
        let err = write_synced(Path::new("/dev/full"), &[0; 1 << 16]).unwrap_err();
        assert!(is_disk_full(&err), "{err:#}");
        assert!(format!("{err:#}").contains("/dev/full: the disk is full"));
    }

    /// A writer that keeps only the text of the file's error, as polars'
    /// Parquet writer does: the file's error is still the cause, and said
    /// once.
    #[test]
    fn a_full_disk_is_found_when_the_writer_keeps_only_the_text() {
        let path = Path::new("/nonexistent/sessions.parquet");
        let Some(err) = write_onto_a_full_disk(path, |out| {
            out.write_all(&[b'x'; 1 << 16])
                .and_then(|()| out.flush())
                .map_err(|e| anyhow::anyhow!("parquet: underlying IO error: {e}"))
        }) else {
            return;
        };
        assert_eq!(
            format!("{err:#}"),
            format!("{}: {DISK_FULL}: parquet: underlying IO error: No space left on device (os error 28)", path.display())
        );
    }

    #[test]
    fn a_full_disk_is_found_through_another_error_in_the_chain() {
        let full = io::Error::from(io::ErrorKind::StorageFull);
        let wrapped = anyhow::Error::new(io::Error::other(io::Error::other(full)))
            .context("writing the table");
        assert!(is_disk_full(&wrapped));
        let quota = anyhow::Error::new(io::Error::from(io::ErrorKind::QuotaExceeded));
        assert!(is_disk_full(&quota));
        let other = anyhow::Error::new(io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(!is_disk_full(&other));
        assert!(!is_disk_full(&anyhow::anyhow!(
            "No space left on device (os error 28)"
        )));
    }

    #[test]
    fn write_atomic_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.csv")]);
    }

    #[test]
    fn write_atomic_into_a_missing_directory_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("out.csv");
        let err = write_atomic(&path, b"x").unwrap_err();
        assert!(
            format!("{err:#}").contains("out.csv: cannot write"),
            "{err:#}"
        );
    }

    #[test]
    fn a_bare_file_name_is_synced_in_the_current_directory() {
        assert_eq!(parent(Path::new("out.csv")), Path::new("."));
        assert_eq!(parent(Path::new("a/out.csv")), Path::new("a"));
        sync_dir(Path::new(".")).unwrap();
    }
}
