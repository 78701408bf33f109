//! JSON written the way smith (Crystal's `JSON::Builder`) writes it.
//!
//! Two places need that exact form. The estimate counts the bytes of a tool
//! call's arguments as `tool_args.to_json`, and the duplicate stage keys calls
//! by that same text, so arguments are re-serialised here rather than kept as
//! they stood in the line. And `--emit-history-at` / `transcript show --json`
//! write smith-format lines that smith itself could have written.
//!
//! Crystal's rules, which differ from serde_json's in small ways: strings
//! escape `\\`, `"`, `\b \f \n \r \t` by name and every other ASCII control
//! character (including DEL, 0x7F) as `\u00xx` in lower-case hex; everything
//! else, non-ASCII included, is written as is. Floats use the shortest
//! round-trip digits, in fixed notation while the decimal point falls within
//! -3..=15 places and as `d.ddde±x` outside, always with a fractional part.

use serde_json::Value;

use super::model::{Block, Message};

/// Writes `value` compactly, as `JSON::Any#to_json` would.
pub(crate) fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(key, out);
                out.push(b':');
                write_value(item, out);
            }
            out.push(b'}');
        }
    }
}

/// The compact Crystal serialisation of `value` as a string.
pub(crate) fn value_to_string(value: &Value) -> String {
    let mut out = Vec::new();
    write_value(value, &mut out);
    // Only valid UTF-8 is ever written: strings come from `str`s.
    String::from_utf8(out).unwrap_or_default()
}

fn write_number(n: &serde_json::Number, out: &mut Vec<u8>) {
    if let Some(i) = n.as_i64() {
        out.extend_from_slice(i.to_string().as_bytes());
    } else if let Some(u) = n.as_u64() {
        out.extend_from_slice(u.to_string().as_bytes());
    } else if let Some(f) = n.as_f64() {
        out.extend_from_slice(crystal_float(f).as_bytes());
    }
}

/// `Float64#to_s` in Crystal: shortest round-trip digits, fixed notation for a
/// decimal point position in -3..=15, scientific outside, never without a
/// fractional digit (`1.0`, `1.0e+20`, `1.5e-7`, `0.001`).
pub(crate) fn crystal_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    let mut s = String::new();
    if f.is_sign_negative() {
        s.push('-');
    }
    let v = f.abs();
    if v == 0.0 {
        s.push_str("0.0");
        return s;
    }
    if v.is_infinite() {
        s.push_str("Infinity");
        return s;
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e3".
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let length = digits.len() as i64;
    // value = digits × 10^decimal_exponent
    let decimal_exponent = exp - (length - 1);
    let point = decimal_exponent + length;
    let exp_mode = !(-3..=15).contains(&point);
    let shown_point = if exp_mode { 1 } else { point };
    if shown_point < 1 {
        s.push('0');
    }
    let mut i = 0i64;
    if decimal_exponent > 0 && !exp_mode {
        s.push_str(digits);
        for _ in 0..(shown_point - length) {
            s.push('0');
        }
        i = length;
    } else if i < shown_point {
        s.push_str(&digits[..shown_point as usize]);
        i = shown_point;
    }
    s.push('.');
    if shown_point < 0 {
        for _ in 0..(-shown_point) {
            s.push('0');
        }
    }
    if i < length {
        s.push_str(&digits[i as usize..]);
    }
    if (!exp_mode && decimal_exponent >= 0) || (exp_mode && length == 1) {
        s.push('0');
    }
    if exp_mode {
        s.push('e');
        if point > 0 {
            s.push('+');
        }
        s.push_str(&(point - 1).to_string());
    }
    s
}

/// Writes a JSON string with Crystal's escapes.
pub(crate) fn write_str(s: &str, out: &mut Vec<u8>) {
    write_bytes_str(s.as_bytes(), out);
}

/// Which bytes [`find_byte`] looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ByteClass {
    /// What ends a run of a JSON string's plain bytes when reading it: `"`,
    /// `\\` and the control bytes below 0x20 (which it must not hold).
    StringEnd,
    /// What Crystal writes escaped: the same, and DEL (0x7f).
    Escaped,
}

impl ByteClass {
    fn holds(self, b: u8) -> bool {
        b < 0x20 || b == b'"' || b == b'\\' || (self == ByteClass::Escaped && b == 0x7f)
    }
}

/// Where the first byte of `s[from..]` of class `class` is. Reading and
/// writing a transcript pass over nearly every byte of its strings here,
/// so it tests 16 bytes at a time with SSE2, which every x86-64 processor
/// has (elsewhere, a byte at a time).
#[inline]
pub(crate) fn find_byte(s: &[u8], from: usize, class: ByteClass) -> Option<usize> {
    let mut i = from;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // Not DEL: a byte that is looked for anyway.
        let last = if class == ByteClass::Escaped {
            0x7f
        } else {
            b'"'
        };
        while let Some(block) = s.get(i..i + 16) {
            // SAFETY: SSE2 is part of the x86-64 baseline, and `block` is
            // 16 readable bytes (`loadu` needs no alignment).
            let mask = unsafe {
                let v = _mm_loadu_si128(block.as_ptr().cast());
                let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
                // Below 0x20: unchanged by an unsigned minimum with 0x1f.
                let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
                let hits = _mm_or_si128(
                    _mm_or_si128(eq(b'"'), eq(b'\\')),
                    _mm_or_si128(control, eq(last)),
                );
                _mm_movemask_epi8(hits)
            };
            if mask != 0 {
                return Some(i + mask.trailing_zeros() as usize);
            }
            i += 16;
        }
    }
    s.get(i..)?
        .iter()
        .position(|&b| class.holds(b))
        .map(|n| i + n)
}

/// Writes bytes as a JSON string with Crystal's escapes, byte for byte.
///
/// Crystal's strings are bytes: a string cut in the middle of a character
/// (smith's 512-byte head) or read from a line with broken UTF-8 is written
/// back exactly as it is, its broken bytes untouched. Only the ASCII escapes
/// below change anything, so the output is valid UTF-8 exactly when the input
/// is.
pub(crate) fn write_bytes_str(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let mut start = 0;
    // Only the bytes to escape are looked at one by one; the runs between
    // them are copied whole.
    let mut from = 0;
    while let Some(i) = find_byte(bytes, from, ByteClass::Escaped) {
        from = i + 1;
        let b = bytes[i];
        let escape: &[u8] = match b {
            b'\\' => b"\\\\",
            b'"' => b"\\\"",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f | 0x7f => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(format!("\\u{:04x}", b).as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn field_str(name: &str, value: &Option<super::model::Str>, out: &mut Vec<u8>) {
    if let Some(v) = value {
        out.push(b',');
        write_str(name, out);
        out.push(b':');
        write_str(v, out);
    }
}

/// Writes a block with smith's field order, absent fields omitted.
pub(crate) fn write_block(block: &Block, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":");
    write_str(block.kind.as_str(), out);
    if let Some(text) = &block.text {
        out.extend_from_slice(b",\"text\":");
        write_bytes_str(text, out);
    }
    field_str("tool_call_id", &block.tool_call_id, out);
    field_str("tool_name", &block.tool_name, out);
    if let Some(args) = &block.tool_args {
        out.extend_from_slice(b",\"tool_args\":");
        out.extend_from_slice(args.as_bytes());
    }
    if let Some(e) = block.is_error {
        out.extend_from_slice(if e {
            b",\"is_error\":true"
        } else {
            b",\"is_error\":false"
        });
    }
    field_str("signature", &block.signature, out);
    field_str("media_type", &block.media_type, out);
    field_str("source", &block.source, out);
    field_str("media_ref", &block.media_ref, out);
    out.push(b'}');
}

/// What smith writes for a message that is not synthetic: the field is a
/// plain boolean, and Crystal's writer writes every field that is not nil.
pub(crate) const SYNTHETIC_FALSE: &[u8] = b",\"synthetic\":false";

/// A message written the way smith writes it.
impl Message {
    /// Writes the message as one line of smith-format JSON (no newline).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        write_message(self, out);
    }

    /// The message as one line of smith-format JSON (no newline), byte for
    /// byte what smith writes, broken UTF-8 in a text included.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes() as usize + 64);
        self.write_json(&mut out);
        out
    }

    /// [`Message::to_json_bytes`] as a `String`, for display and comparisons
    /// in tests: a text that smith cut inside a character is shown with
    /// U+FFFD here. Nothing that writes a file goes through this.
    pub fn to_json(&self) -> String {
        String::from_utf8_lossy(&self.to_json_bytes()).into_owned()
    }
}

/// Writes a message as one line (without the newline) exactly as smith's
/// `to_json` does: `synthetic` on every message, `false` included; `id` only
/// when there is one.
pub(crate) fn write_message(message: &Message, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"role\":");
    write_str(message.role.as_str(), out);
    out.extend_from_slice(b",\"content\":[");
    for (i, block) in message.content.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_block(block, out);
    }
    out.push(b']');
    out.extend_from_slice(if message.synthetic {
        b",\"synthetic\":true"
    } else {
        SYNTHETIC_FALSE
    });
    field_str("id", &message.id, out);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_crystal_prints_them() {
        let cases = [
            (1.0, "1.0"),
            (1500.0, "1500.0"),
            (0.001, "0.001"),
            (0.0001, "0.0001"),
            (0.00001, "1.0e-5"),
            (1.5e-7, "1.5e-7"),
            (1e20, "1.0e+20"),
            (1.5e20, "1.5e+20"),
            (1e14, "100000000000000.0"),
            (1e15, "1.0e+15"),
            (123.456, "123.456"),
            (-2.5, "-2.5"),
            (0.0, "0.0"),
            (0.1, "0.1"),
        ];
        for (f, want) in cases {
            assert_eq!(crystal_float(f), want, "{f}");
        }
    }

    #[test]
    fn strings_escape_as_crystal_escapes_them() {
        let mut out = Vec::new();
        write_str("a\"b\\c\n\t\u{1}\u{7f}é/", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"b\\\\c\\n\\t\\u0001\\u007fé/\""
        );
    }

    #[test]
    fn every_byte_escapes_alike_wherever_it_is() {
        // Crystal's escapes, a byte at a time: what the block scan must
        // agree with, for every byte value at every place of spans of one
        // and two 16-byte blocks and a remainder, another escaped byte after.
        let reference = |bytes: &[u8]| {
            let mut out = vec![b'"'];
            for &b in bytes {
                match b {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'"' => out.extend_from_slice(b"\\\""),
                    0x08 => out.extend_from_slice(b"\\b"),
                    0x0c => out.extend_from_slice(b"\\f"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    0x00..=0x1f | 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
                    _ => out.push(b),
                }
            }
            out.push(b'"');
            out
        };
        for len in [19, 37] {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut span = [b'a', 0x80, 0xff, 0x20, 0x7e, 0x21, b'/'].repeat(6);
                    span.truncate(len);
                    span[at] = b;
                    span[len - 1] = 0x7f;
                    let mut out = Vec::new();
                    write_bytes_str(&span, &mut out);
                    assert_eq!(out, reference(&span), "{b:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn objects_keep_key_order() {
        let v: Value = serde_json::from_str(r#"{ "z": 1, "a": [1.0, 2e3, "x"] }"#).unwrap();
        assert_eq!(value_to_string(&v), r#"{"z":1,"a":[1.0,2000.0,"x"]}"#);
    }
}
