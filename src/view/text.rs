//! Turning recorded bytes into lines a terminal can show safely.
//!
//! Tool output is whatever a program printed: colour codes, carriage returns
//! from progress bars, cursor movements, broken UTF-8 (smith cuts results at
//! a byte count). Written raw, that would repaint the reader's terminal and
//! defeat `--color never`; so escape sequences are removed and every other
//! control character is shown as its Unicode control picture.

use memchr::memchr_iter;

/// A byte count for people: `812 B`, `3.4 KiB`, `1.2 MiB`.
pub(crate) fn human_bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    if n < 1024 {
        format!("{n} B")
    } else if f < KIB * KIB {
        format!("{:.1} KiB", f / KIB)
    } else if f < KIB * KIB * KIB {
        format!("{:.1} MiB", f / (KIB * KIB))
    } else {
        format!("{:.1} GiB", f / (KIB * KIB * KIB))
    }
}

/// The lines of a text: split at `\n`, a `\r` before it removed, no empty
/// last line for a text ending in a newline.
pub(crate) fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let mut rest = Some(body);
    std::iter::from_fn(move || {
        let current = rest?;
        let (line, next) = match memchr::memchr(b'\n', current) {
            Some(i) => (&current[..i], Some(&current[i + 1..])),
            None => (current, None),
        };
        rest = next;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
    .take_while(move |_| !text.is_empty())
}

/// How many lines [`lines`] yields, without building them.
pub(crate) fn count_lines(text: &[u8]) -> usize {
    if text.is_empty() {
        return 0;
    }
    let newlines = memchr_iter(b'\n', text).count();
    if text.ends_with(b"\n") {
        newlines
    } else {
        newlines + 1
    }
}

/// Appends `line` to `out` as safe text: broken UTF-8 becomes U+FFFD, ANSI
/// escape sequences (CSI and OSC) are removed, tabs are kept, and every
/// other control character becomes its control picture (`␛`, `␍`, ...).
/// With `max_chars`, stops after that many characters and returns how many
/// bytes of `line` were left out.
pub(crate) fn clean_into(line: &[u8], out: &mut String, max_chars: Option<usize>) -> usize {
    let text = String::from_utf8_lossy(line);
    let mut chars = text.char_indices().peekable();
    let mut written = 0usize;
    while let Some((at, c)) = chars.next() {
        if max_chars.is_some_and(|max| written >= max) {
            // Count what is left in bytes of the original: the lossy text
            // has the same length except where U+FFFD replaced bytes.
            return text.len().saturating_sub(at);
        }
        match c {
            '\x1b' => match chars.peek().map(|&(_, c)| c) {
                // CSI: parameters and intermediates up to a final byte.
                Some('[') => {
                    chars.next();
                    for (_, c) in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \.
                Some(']') => {
                    chars.next();
                    while let Some((_, c)) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            if chars.peek().map(|&(_, c)| c) == Some('\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {
                    out.push('\u{241b}');
                    written += 1;
                }
            },
            '\t' => {
                out.push('\t');
                written += 1;
            }
            c if (c as u32) < 0x20 => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'));
                written += 1;
            }
            '\x7f' => {
                out.push('\u{2421}');
                written += 1;
            }
            // C1 controls would be read as escapes by some terminals.
            c if ('\u{80}'..='\u{9f}').contains(&c) => {
                out.push('\u{fffd}');
                written += 1;
            }
            c => {
                out.push(c);
                written += 1;
            }
        }
    }
    0
}

/// A text squeezed onto one line: whitespace runs become one space, escapes
/// are removed, and it is cut to `max_chars` with an ellipsis.
pub(crate) fn one_line(text: &str, max_chars: usize) -> String {
    let mut clean = String::with_capacity(text.len().min(max_chars * 4 + 8));
    let mut space = false;
    for word in text.split_whitespace() {
        if space {
            clean.push(' ');
        }
        clean_into(word.as_bytes(), &mut clean, None);
        space = true;
        if clean.len() > max_chars * 4 {
            break;
        }
    }
    cut_chars(&clean, max_chars)
}

/// `text` cut to `max_chars` characters, with `…` when it was longer.
pub(crate) fn cut_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((at, _)) => {
            let keep = text[..at]
                .char_indices()
                .nth(max_chars.saturating_sub(1))
                .map_or(at, |(i, _)| i);
            format!("{}…", &text[..keep])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_drop_crlf_and_the_final_newline() {
        let got: Vec<&[u8]> = lines(b"a\r\nb\n\nc\n").collect();
        assert_eq!(got, vec![&b"a"[..], b"b", b"", b"c"]);
        assert_eq!(count_lines(b"a\r\nb\n\nc\n"), 4);
        assert_eq!(lines(b"").count(), 0);
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"x"), 1);
        assert_eq!(lines(b"\n").count(), 1);
        assert_eq!(count_lines(b"\n"), 1);
    }

    #[test]
    fn escapes_are_removed_and_controls_made_visible() {
        let mut out = String::new();
        clean_into(
            b"\x1b[31mred\x1b[0m\rok\x07\x1b]0;title\x07!",
            &mut out,
            None,
        );
        assert_eq!(out, "red\u{240d}ok\u{2407}!");
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn broken_utf8_becomes_replacement_characters() {
        let mut out = String::new();
        clean_into(&[b'a', 0xe2, 0x82], &mut out, None);
        assert!(out.starts_with('a') && out.contains('\u{fffd}'));
    }

    #[test]
    fn a_long_line_is_cut_and_the_rest_counted() {
        let mut out = String::new();
        let left = clean_into(b"abcdefghij", &mut out, Some(4));
        assert_eq!(out, "abcd");
        assert_eq!(left, 6);
    }

    #[test]
    fn one_line_collapses_whitespace_and_cuts() {
        assert_eq!(one_line("  fix\n the   tests  ", 50), "fix the tests");
        assert_eq!(one_line("abcdefgh", 5), "abcd…");
        assert_eq!(cut_chars("abc", 3), "abc");
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_bytes(812), "812 B");
        assert_eq!(human_bytes(3482), "3.4 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.0 MiB");
    }
}
