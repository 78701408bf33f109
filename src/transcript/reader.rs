//! Reading a `transcript.jsonl` line by line, keeping every good line and
//! accounting for every bad one.
//!
//! A transcript is appended to by a program that can crash mid-line, edited by
//! hand, and written by older and newer versions of smith. One bad line must
//! never make the rest unreachable: it is skipped, counted, and reported as
//! `path:line: reason`.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::model::Message;
use super::parse::parse_line;

/// How many skipped lines of one file are described in full; the rest are
/// only counted, so a corrupt file cannot bury the terminal.
pub const SKIPS_DESCRIBED_PER_FILE: usize = 5;

/// A line that was not used.
#[derive(Clone, Debug, PartialEq)]
pub struct Skip {
    /// 1-based line number.
    pub line: usize,
    pub reason: String,
}

/// What reading one file found besides its messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadLog {
    pub path: PathBuf,
    /// Lines in the file, blank ones included.
    pub lines: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Every skipped line, in order.
    pub skipped: Vec<Skip>,
}

impl ReadLog {
    /// Number of skipped lines.
    pub fn skipped_count(&self) -> usize {
        self.skipped.len()
    }

    /// Writes `path:line: reason` for the first few skipped lines and a count
    /// of the rest.
    pub fn report(&self, out: &mut dyn io::Write) -> io::Result<()> {
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
    read_from(file, path)
}

/// Reads transcript lines from any reader; `path` names it in messages.
pub fn read_from<R: Read>(reader: R, path: &Path) -> io::Result<Transcript> {
    let mut out = Transcript {
        messages: Vec::new(),
        log: ReadLog {
            path: path.to_path_buf(),
            ..ReadLog::default()
        },
    };
    for_each_line_bytes(
        reader,
        &mut out.log,
        |line_no, line, log| match parse_line(line) {
            Ok(m) => out.messages.push(Arc::new(m)),
            Err(e) => log.skipped.push(Skip {
                line: line_no,
                reason: e.to_string(),
            }),
        },
    )?;
    Ok(out)
}

/// Calls `f` with each non-blank line as UTF-8 text, with CRLF endings and a
/// leading byte-order mark removed. Lines that are not UTF-8 are recorded as
/// skipped; a final line without a newline is still read (and usually fails
/// to parse, being a crash mid-write). For formats other than smith's
/// (imported logs), whose readers want text.
pub fn for_each_line<R: Read>(
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
pub fn for_each_line_bytes<R: Read>(
    reader: R,
    log: &mut ReadLog,
    mut f: impl FnMut(usize, &[u8], &mut ReadLog),
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(LINE_BUFFER, reader);
    let mut buf = Vec::with_capacity(1 << 12);
    let mut line_no = 0usize;
    loop {
        // A line that lies whole in the reader's buffer is read from there;
        // only one that crosses its end is copied out.
        let available = reader.fill_buf()?;
        if available.is_empty() {
            break;
        }
        let (n, whole) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (0, false),
        };
        let (n, mut line): (usize, &[u8]) = if whole {
            (n, &available[..n])
        } else {
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf)?;
            (n, &buf[..])
        };
        line_no += 1;
        log.lines = line_no;
        log.bytes += n as u64;
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest;
        }
        if let Some(rest) = line.strip_suffix(b"\r") {
            line = rest;
        }
        if line_no == 1 {
            if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
                line = rest;
            }
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            f(line_no, line, log);
        }
        if whole {
            reader.consume(n);
        }
    }
    Ok(())
}

/// The line reader's buffer: large enough that most lines of a transcript
/// (results are capped at 256 KiB) are parsed where they were read.
const LINE_BUFFER: usize = 1 << 20;

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
}
