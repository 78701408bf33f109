//! Writing files the tool produces, so that a reader never sees half of one.
//!
//! Every file goes to a temporary name in the destination directory and is
//! renamed into place once it is complete and flushed: a crash, a full disk or
//! Ctrl-C leaves the previous file (or none) rather than a truncated one, and a
//! script watching the directory only ever sees whole files. The temporary
//! file lives in the same directory because a rename is only atomic within one
//! file system.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporary names of concurrent writes from one process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: a temporary file beside it, flushed to
/// disk, then renamed over `path`. On failure the temporary file is removed
/// and `path` is left as it was. The error names the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Like [`write_atomic`], for output produced piece by piece: `write` gets a
/// buffered writer on the temporary file, so a large file is never held in
/// memory whole.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temp_name(path);
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        let what = if is_disk_full(&e) {
            "the disk is full; free some space or write somewhere else (any previous file of this name is untouched)".to_string()
        } else {
            format!("cannot write: {e}")
        };
        return Err(io::Error::new(
            e.kind(),
            format!("{}: {what}", path.display()),
        ));
    }
    Ok(())
}

/// ENOSPC or EDQUOT: out of space or out of quota.
fn is_disk_full(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    ) || matches!(e.raw_os_error(), Some(28) | Some(122))
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
        let err = write_atomic_with(&path, |out| {
            out.write_all(b"half")?;
            Err(io::Error::from_raw_os_error(28))
        })
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("sessions.csv: the disk is full; free some space"),
            "{msg}"
        );
        assert_eq!(fs::read(&path).unwrap(), b"previous");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
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
        assert!(err.to_string().contains("out.csv"), "{err}");
    }
}
