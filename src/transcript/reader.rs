//! Reading a `transcript.jsonl` line by line, keeping every good line and
//! accounting for every bad one.
//!
//! A transcript is appended to by a program that can crash mid-line, edited by
//! hand, and written by older and newer versions of smith. One bad line must
//! never make the rest unreachable: it is skipped, counted, and reported as
//! `path:line: reason`.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::model::Message;
use super::parse::parse_line_pooled;
use super::pool::TextPool;

/// How many skipped lines of one file are described in full; the rest are
/// only counted, so a corrupt file cannot bury the terminal.
pub(crate) const SKIPS_DESCRIBED_PER_FILE: usize = 5;

/// A line that was not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// 1-based line number.
    pub line: usize,
    pub reason: String,
}

impl Skip {
    pub(crate) fn new(line: usize, reason: impl Into<String>) -> Skip {
        Skip {
            line,
            reason: reason.into(),
        }
    }
}

/// What reading one file found besides its messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadLog {
    pub(crate) path: PathBuf,
    /// Lines in the file, blank ones included.
    pub lines: usize,
    /// Bytes read.
    pub(crate) bytes: u64,
    /// Every skipped line, in order.
    pub skipped: Vec<Skip>,
}

impl ReadLog {
    /// Number of skipped lines.
    pub(crate) fn skipped_count(&self) -> usize {
        self.skipped.len()
    }

    /// Writes `path:line: reason` for the first few skipped lines and a count
    /// of the rest.
    pub(crate) fn report(&self, out: &mut dyn io::Write) -> io::Result<()> {
        for skip in self.skipped.iter().take(SKIPS_DESCRIBED_PER_FILE) {
            writeln!(
                out,
                "{}:{}: skipped: {}",
                self.path.display(),
                skip.line,
                skip.reason
            )?;
        }
        if self.skipped.len() > SKIPS_DESCRIBED_PER_FILE {
            writeln!(
                out,
                "{}: skipped {} more bad lines ({} in all); run `transcript show` on it to see what could be read",
                self.path.display(),
                self.skipped.len() - SKIPS_DESCRIBED_PER_FILE,
                self.skipped.len()
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for ReadLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = Vec::new();
        self.report(&mut buf).map_err(|_| fmt::Error)?;
        f.write_str(&String::from_utf8_lossy(&buf))
    }
}

/// The messages of one transcript and what reading it found.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    pub messages: Vec<Arc<Message>>,
    pub log: ReadLog,
}

/// Reads a transcript file. Only an I/O failure opening or reading the file is
/// an error; bad lines are recorded in the log.
pub fn read_transcript(path: &Path) -> io::Result<Transcript> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    if size < PARALLEL_READ_BYTES {
        return read_from(file, path);
    }
    let chunks = 2 * rayon::current_num_threads() as u64;
    read_in_chunks(path, size, (size / chunks.max(1)).max(MIN_CHUNK_BYTES))
}

/// From this size on a transcript's lines are parsed in chunks of the file
/// on rayon's threads (those of the sweep's pool inside a sweep): parsing
/// is most of reading, and one big session would otherwise keep every
/// other core idle. Below it the file is streamed on one thread, as the
/// many small sessions of a sweep already keep the cores busy.
const PARALLEL_READ_BYTES: u64 = 4 << 20;

/// The smallest chunk worth a task of its own.
const MIN_CHUNK_BYTES: u64 = 1 << 20;

/// What one chunk of a transcript held: its messages, its skipped lines
/// numbered from the chunk's first line, how many lines and bytes it had.
#[derive(Default)]
struct Chunk {
    messages: Vec<Arc<Message>>,
    skipped: Vec<Skip>,
    lines: usize,
    bytes: u64,
}

/// Reads the first `size` bytes of a transcript (and whatever follows, as
/// the last chunk reads to the end) in chunks of `chunk_bytes`, parsed in
/// parallel and put back in order. A chunk holds the lines that start in
/// its byte range, so the messages, line numbers, skip reasons and counts
/// are those that [`read_from`] gives: a line is parsed by the same
/// [`parse_lines`] and numbered after the lines of the chunks before it. Each chunk streams its range through its own buffer,
/// so the file is never held whole.
fn read_in_chunks(path: &Path, size: u64, chunk_bytes: u64) -> io::Result<Transcript> {
    let chunk_bytes = chunk_bytes.max(1);
    let starts: Vec<u64> = (0..size.div_ceil(chunk_bytes))
        .map(|k| k * chunk_bytes)
        .collect();
    let pool = TextPool::default();
    let parts = starts
        .par_iter()
        .map(|&start| {
            let end = start + chunk_bytes;
            read_chunk(path, start, (end < size).then_some(end), &pool)
        })
        .collect::<io::Result<Vec<Chunk>>>()?;
    Ok(joined(path, parts))
}

/// The transcript that `parts` (the whole file's lines, in order) make:
/// each part's skips numbered after the lines of the parts before it.
fn joined(path: &Path, parts: Vec<Chunk>) -> Transcript {
    let mut out = Transcript {
        messages: Vec::with_capacity(parts.iter().map(|p| p.messages.len()).sum()),
        log: ReadLog {
            path: path.to_path_buf(),
            ..ReadLog::default()
        },
    };
    for part in parts {
        let before = out.log.lines;
        out.messages.extend(part.messages);
        out.log
            .skipped
            .extend(part.skipped.into_iter().map(|s| Skip {
                line: before + s.line,
                reason: s.reason,
            }));
        out.log.lines += part.lines;
        out.log.bytes += part.bytes;
    }
    out
}

/// Parses the lines that start at or after byte `start` and before `end`
/// (to the end of the file if `None`), numbered from 1. The line under way
/// at `start` belongs to the chunk before, which reads it past its end.
fn read_chunk(path: &Path, start: u64, end: Option<u64>, pool: &TextPool) -> io::Result<Chunk> {
    let mut file = File::open(path)?;
    let mut at = start;
    if start > 0 {
        // From the byte before: a newline there means a line starts here.
        file.seek(SeekFrom::Start(start - 1))?;
    }
    let mut reader = BufReader::with_capacity(LINE_BUFFER, file);
    if start > 0 {
        at = start - 1 + reader.skip_until(b'\n')? as u64;
    }
    let limit = end.map_or(u64::MAX, |end| end.saturating_sub(at));
    parse_lines(&mut reader, limit, start == 0, pool)
}

/// Parses the lines of `reader` (up to `limit` bytes, see [`scan_lines`])
/// into messages and skips, numbered from 1; `first` says whether its first
/// line is the file's, which may open with a byte-order mark. The serial
/// and the chunked read both parse here, so they cannot disagree on a line.
/// Long texts are taken from `pool`, shared by every chunk of the file.
fn parse_lines<R: Read>(
    reader: &mut BufReader<R>,
    limit: u64,
    first: bool,
    pool: &TextPool,
) -> io::Result<Chunk> {
    let mut out = Chunk::default();
    scan_lines(reader, limit, |raw| {
        out.lines += 1;
        out.bytes += raw.len() as u64;
        let Some(line) = trim_line(raw, first && out.lines == 1) else {
            return;
        };
        match parse_line_pooled(line, pool) {
            Ok(m) => out.messages.push(Arc::new(m)),
            Err(e) => out.skipped.push(Skip {
                line: out.lines,
                reason: e.to_string(),
            }),
        }
    })?;
    Ok(out)
}

/// Reads transcript lines from any reader; `path` names it in messages.
pub fn read_from<R: Read>(reader: R, path: &Path) -> io::Result<Transcript> {
    let mut reader = BufReader::with_capacity(LINE_BUFFER, reader);
    let whole = parse_lines(&mut reader, u64::MAX, true, &TextPool::default())?;
    Ok(joined(path, vec![whole]))
}

/// Calls `f` with each non-blank line as UTF-8 text, with CRLF endings and a
/// leading byte-order mark removed. Lines that are not UTF-8 are recorded as
/// skipped; a final line without a newline is still read (and usually fails
/// to parse, being a crash mid-write). For formats other than smith's
/// (imported logs), whose readers want text.
pub(crate) fn for_each_line<R: Read>(
    reader: R,
    log: &mut ReadLog,
    mut f: impl FnMut(usize, &str, &mut ReadLog),
) -> io::Result<()> {
    for_each_line_bytes(
        reader,
        log,
        |line_no, line, log| match std::str::from_utf8(line) {
            Ok(text) => f(line_no, text, log),
            Err(e) => log.skipped.push(Skip {
                line: line_no,
                reason: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
            }),
        },
    )
}

/// Calls `f` with each non-blank line as bytes, with CRLF endings and a
/// leading byte-order mark removed. smith's own lines go this way: a line
/// whose string holds broken UTF-8 is one smith reads (and writes, when it
/// cuts a result inside a character), so the parser, not the line reader,
/// decides.
pub(crate) fn for_each_line_bytes<R: Read>(
    reader: R,
    log: &mut ReadLog,
    mut f: impl FnMut(usize, &[u8], &mut ReadLog),
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(LINE_BUFFER, reader);
    let mut line_no = 0usize;
    scan_lines(&mut reader, u64::MAX, |raw| {
        line_no += 1;
        log.lines = line_no;
        log.bytes += raw.len() as u64;
        if let Some(line) = trim_line(raw, line_no == 1) {
            f(line_no, line, log);
        }
    })
}

/// Calls `f` with each line of `reader` as read, its newline included if
/// it has one, until the end or until the lines seen reach `limit` bytes.
fn scan_lines<R: Read>(
    reader: &mut BufReader<R>,
    limit: u64,
    mut f: impl FnMut(&[u8]),
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 12);
    let mut seen = 0u64;
    while seen < limit {
        // A line that lies whole in the reader's buffer is read from there;
        // only one that crosses its end is copied out.
        let available = reader.fill_buf()?;
        if available.is_empty() {
            break;
        }
        match memchr::memchr(b'\n', available) {
            Some(i) => {
                f(&available[..=i]);
                reader.consume(i + 1);
                seen += i as u64 + 1;
            }
            None => {
                // The line goes on past the buffer: what the buffer holds
                // has no newline (just searched), the rest is read on until
                // one.
                buf.clear();
                buf.extend_from_slice(available);
                let n = available.len();
                reader.consume(n);
                seen += n as u64;
                loop {
                    let more = reader.fill_buf()?;
                    if more.is_empty() {
                        break;
                    }
                    let (part, ends) = match memchr::memchr(b'\n', more) {
                        Some(i) => (&more[..=i], true),
                        None => (more, false),
                    };
                    let n = part.len();
                    buf.extend_from_slice(part);
                    reader.consume(n);
                    seen += n as u64;
                    if ends {
                        break;
                    }
                }
                f(&buf);
            }
        }
    }
    Ok(())
}

/// A line as read (its newline included, if any) without its CRLF or LF
/// ending and, on the file's first line, a byte-order mark; `None` for a
/// blank line.
fn trim_line(mut line: &[u8], first_line: bool) -> Option<&[u8]> {
    if let Some(rest) = line.strip_suffix(b"\n") {
        line = rest;
    }
    if let Some(rest) = line.strip_suffix(b"\r") {
        line = rest;
    }
    if first_line {
        if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
            line = rest;
        }
    }
    (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
}

/// The line reader's buffer: large enough that nearly every line of a
/// transcript (most are a few KiB, results are capped at 256 KiB) is parsed
/// where it was read, and small enough that the four a big transcript's
/// chunked read fills cost little to touch (larger ones show as page
/// faults, benches/README.md).
const LINE_BUFFER: usize = 1 << 18;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_good_lines_around_bad_ones() {
        let data = b"\xEF\xBB\xBF{\"role\":\"user\",\"content\":[]}\r\n\nnot json\n{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}\n{\"role\":\"assistant\",\"content\":[]}\n{\"role\":";
        let t = read_from(&data[..], Path::new("t.jsonl")).unwrap();
        // Line 4's text holds a byte that is not UTF-8: smith reads it, and
        // so does this reader, keeping the byte.
        assert_eq!(t.messages.len(), 3);
        assert_eq!(t.messages[1].content[0].text_bytes(), b"\xff");
        let lines: Vec<usize> = t.log.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![3, 6]);
        assert_eq!(t.log.lines, 6);
    }

    /// A file of `n` lines with bad ones spread through it: broken JSON,
    /// a line that is not UTF-8, CRLF endings, blank lines, a byte-order
    /// mark at the start and a half-written last line.
    fn mixed_lines(n: usize) -> Vec<u8> {
        let mut data = b"\xEF\xBB\xBF".to_vec();
        for i in 0..n {
            let line: &[u8] = match i % 97 {
                13 => b"{\"role\":\"user\",\"content\":[",
                29 => b"not json at all",
                41 => b"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}",
                53 => b"\xff\xfe{}",
                61 | 62 => b"   ",
                71 => b"{\"role\":\"wizard\",\"content\":[]}",
                _ => b"",
            };
            if line.is_empty() {
                data.extend_from_slice(
                    format!("{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"line {i}\"}}]}}")
                        .as_bytes(),
                );
            } else {
                data.extend_from_slice(line);
            }
            data.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
        }
        data.extend_from_slice(b"{\"role\":");
        data
    }

    #[test]
    fn chunks_read_what_the_line_reader_reads() {
        let data = mixed_lines(2000);
        let serial = read_from(&data[..], Path::new("t.jsonl")).unwrap();
        assert!(serial.log.skipped_count() > 60, "bad lines in many chunks");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, &data).unwrap();
        let serial = read_from(&data[..], &path).unwrap();
        let size = data.len() as u64;
        // Chunks from a byte or a few lines each to more than the file, cut
        // inside every kind of line and at its newline.
        for chunk in [1, 7, 64, 1000, 4096, 20_000, size - 1, size, size + 1] {
            let parallel = read_in_chunks(&path, size, chunk).unwrap();
            assert_eq!(parallel.log, serial.log, "chunks of {chunk} bytes");
            assert_eq!(
                parallel.messages, serial.messages,
                "chunks of {chunk} bytes"
            );
        }
        std::fs::write(&path, b"").unwrap();
        let empty = read_in_chunks(&path, 0, 64).unwrap();
        assert_eq!(empty.log, read_from(&b""[..], &path).unwrap().log);
    }

    #[test]
    fn a_big_file_is_read_in_chunks_with_the_same_skips() {
        let data = mixed_lines(80_000);
        assert!(data.len() as u64 >= PARALLEL_READ_BYTES);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("transcript.jsonl");
        std::fs::write(&path, &data).unwrap();
        let read = read_transcript(&path).unwrap();
        let serial = read_from(&data[..], &path).unwrap();
        assert!(serial.log.skipped_count() > 2000);
        assert_eq!(read.log, serial.log);
        assert_eq!(read.messages, serial.messages);
        assert_eq!(read.log.to_string(), serial.log.to_string());
    }
}
