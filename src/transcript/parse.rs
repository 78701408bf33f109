//! One line of `transcript.jsonl` into a [`Message`], accepting and rejecting
//! exactly what smith's reader does.
//!
//! smith reads a line with Crystal's `JSON::Serializable` on top of its
//! `JSON::PullParser`, and a generic JSON library differs from that in ways
//! that move every later request by a message. What Crystal does, settled by
//! probing its reader (the tests name each case):
//!
//! - A string is bytes. Broken UTF-8 inside a string is kept as it is (smith
//!   writes a 512-byte head cut inside a character, and reads it back); only
//!   a raw control character (below 0x20) is refused. Escapes are the JSON
//!   ones; `\u` surrogates must come in a high-low pair, anything else (a
//!   lone `\ud800`, a low one first) fails the line.
//! - A number in a value smith keeps (`tool_args`) is an `Int64` when it has
//!   no fraction or exponent, and a line whose integer does not fit one fails
//!   ("Invalid Int64"), both signs; anything else is a `Float64`, and one too
//!   large for it (`1e400`) fails the line. A number in a field smith ignores
//!   is only checked for its syntax.
//! - Nesting deeper than 512 arrays and objects, the message included,
//!   fails the line, whether the value is kept or ignored.
//! - Unknown fields are ignored, `null` in an optional field is absent, a
//!   repeated field's last value wins; inside `tool_args` a repeated key
//!   keeps its first position and takes its last value.
//! - Only space, tab, CR and LF are whitespace; anything but whitespace after
//!   the message fails the line.
//!
//! One difference is deliberate: a byte-order mark opening the file is
//! dropped by the line reader (smith would skip that line).
//!
//! The fields other than `text` are Rust strings; a line with broken UTF-8
//! in one of them is skipped with that reason (smith would keep the bytes).

use std::borrow::Cow;
use std::collections::HashMap;

use super::json::{crystal_float, write_bytes_str};
use super::model::{Block, BlockType, Message, Role, Str, Text};
use super::pool::TextPool;

/// How deep arrays and objects may nest, the message itself counting as one:
/// Crystal's parser refuses the 513th level.
pub(crate) const MAX_NESTING: usize = 512;

/// Why a line is no message, and where: the reader skips the line with
/// this as its reason, and a caller that wants to point at the byte has the
/// column apart from the text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} (column {column})")]
pub struct LineError {
    /// 1-based column (byte offset + 1) where the line stopped making sense.
    pub(crate) column: usize,
    /// What was wrong there, naming the field it was in.
    pub(crate) what: String,
}

/// Parses one line (without its newline) into a message, or says why not.
/// The line may be any bytes: broken UTF-8 inside a string is smith's too.
pub fn parse_line<L: AsRef<[u8]> + ?Sized>(line: &L) -> Result<Message, LineError> {
    parse(line.as_ref(), None)
}

/// [`parse_line`], with each long text taken from `pool`: the same text
/// read on another line shares its bytes.
pub(crate) fn parse_line_pooled(line: &[u8], pool: &TextPool) -> Result<Message, LineError> {
    parse(line, Some(pool))
}

fn parse(line: &[u8], pool: Option<&TextPool>) -> Result<Message, LineError> {
    let mut p = Parser {
        s: line,
        at: 0,
        pool,
    };
    let message = p.message().map_err(|f| f.describe())?;
    p.ws();
    if p.at < p.s.len() {
        return Err(p.unexpected("after the message").describe());
    }
    Ok(message)
}

/// Why a line failed, and where (a byte offset into the line).
struct Fail {
    at: usize,
    msg: String,
}

impl Fail {
    fn describe(self) -> LineError {
        LineError {
            column: self.at + 1,
            what: self.msg,
        }
    }

    /// Names the field the failure was in.
    fn within(mut self, field: &str) -> Fail {
        self.msg = format!("{field}: {}", self.msg);
        self
    }
}

type Res<T> = Result<T, Fail>;

/// A value of `tool_args` as Crystal's `JSON::Any` holds it, numbers and
/// strings already in the form its `to_json` writes.
enum Node {
    Scalar(Vec<u8>),
    Array(Vec<Node>),
    Object(Vec<(Vec<u8>, Node)>),
}

impl Node {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Node::Scalar(s) => out.extend_from_slice(s),
            Node::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write(out);
                }
                out.push(b']');
            }
            Node::Object(entries) => {
                out.push(b'{');
                for (i, (key, item)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_bytes_str(key, out);
                    out.push(b':');
                    item.write(out);
                }
                out.push(b'}');
            }
        }
    }
}

/// Objects with more keys than this find repeated keys through a hash map
/// rather than a scan, so a hostile line cannot make reading quadratic.
const SCAN_KEYS: usize = 16;

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    pool: Option<&'a TextPool>,
}

impl<'a> Parser<'a> {
    fn fail(&self, msg: impl Into<String>) -> Fail {
        Fail {
            at: self.at,
            msg: msg.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    /// The JSON literal (`true`, `false`, `null`) that stands alone here,
    /// if one does.
    fn standalone_literal(&self) -> Option<&'static str> {
        let rest = &self.s[self.at..];
        ["true", "false", "null"].into_iter().find(|w| {
            rest.starts_with(w.as_bytes())
                && rest[w.len()..]
                    .iter()
                    .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        })
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// The error for the byte at the cursor, which is not what `wanted`.
    fn unexpected(&self, wanted: &str) -> Fail {
        match self.peek() {
            None => self.fail(format!("EOF while parsing {wanted}")),
            Some(b) if b >= 0x80 => match std::str::from_utf8(&self.s[self.at..]) {
                Err(e) if e.valid_up_to() == 0 => {
                    self.fail(format!("invalid UTF-8 at byte {}", self.at))
                }
                _ => {
                    let c = String::from_utf8_lossy(&self.s[self.at..])
                        .chars()
                        .next()
                        .unwrap_or('\u{fffd}');
                    self.fail(format!("unexpected character {c:?} {wanted}"))
                }
            },
            Some(b) => self.fail(format!("unexpected character {:?} {wanted}", b as char)),
        }
    }

    fn expect(&mut self, byte: u8, wanted: &str) -> Res<()> {
        self.ws();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.unexpected(wanted))
        }
    }

    /// What kind of value starts at the cursor (after whitespace), for
    /// errors: "a string", "a number", ...
    fn kind(&mut self) -> &'static str {
        self.ws();
        match self.peek() {
            Some(b'{') => "an object",
            Some(b'[') => "an array",
            Some(b'"') => "a string",
            Some(b't' | b'f') => "a boolean",
            Some(b'n') => "null",
            Some(b'-' | b'0'..=b'9') => "a number",
            _ => "no value",
        }
    }

    fn message(&mut self) -> Res<Message> {
        self.ws();
        match self.peek() {
            Some(b'{') => {}
            Some(b'[') => return Err(self.fail("not a message: a JSON array")),
            Some(b'"') => return Err(self.fail("not a message: a JSON string")),
            Some(b't' | b'f' | b'n') => {
                return Err(match self.standalone_literal() {
                    Some("null") => self.fail("not a message: null"),
                    Some(_) => self.fail("not a message: a JSON boolean"),
                    // Text that merely starts like one ("this is not json").
                    None => self.unexpected("where a message should start: not JSON"),
                });
            }
            Some(b'-' | b'0'..=b'9') => return Err(self.fail("not a message: a JSON number")),
            _ => return Err(self.unexpected("where a message should start: not JSON")),
        }
        let mut role: Option<Role> = None;
        let mut content: Option<Vec<Block>> = None;
        let mut synthetic = false;
        let mut id: Option<Str> = None;
        self.object(1, |p, key| {
            match key {
                b"role" => {
                    let name = p.string_field(|| "role".to_string())?;
                    role = Some(
                        Role::parse(&name)
                            .ok_or_else(|| p.fail(format!("unknown role {name:?}")))?,
                    );
                }
                b"content" => content = Some(p.content()?),
                b"synthetic" => {
                    synthetic = p
                        .optional_bool()
                        .map_err(|f| f.within("synthetic"))?
                        .unwrap_or(false)
                }
                b"id" => id = p.optional_str().map_err(|f| f.within("id"))?,
                _ => p.skip(2)?,
            }
            Ok(())
        })?;
        let role = role.ok_or_else(|| self.fail("not a message: no \"role\""))?;
        let content = content.ok_or_else(|| self.fail("not a message: no \"content\" array"))?;
        Ok(Message::new(role, content, synthetic, id))
    }

    /// Walks an object whose `{` is at the cursor, calling `field` with the
    /// cursor on each value. `depth` is the object's own nesting level.
    fn object(
        &mut self,
        depth: usize,
        mut field: impl FnMut(&mut Self, &[u8]) -> Res<()>,
    ) -> Res<()> {
        self.open(depth)?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected("where a key was expected"));
            }
            let key = self.string()?;
            self.expect(b':', "after a key")?;
            self.ws();
            field(self, &key[..])?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.unexpected("in an object")),
            }
        }
    }

    /// Steps over the `{` or `[` at the cursor, refusing a level too deep.
    fn open(&mut self, depth: usize) -> Res<()> {
        if depth > MAX_NESTING {
            return Err(self.fail(format!(
                "nesting deeper than {MAX_NESTING} levels (recursion limit exceeded)"
            )));
        }
        self.at += 1;
        Ok(())
    }

    /// Walks an array whose `[` is at the cursor.
    fn array(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self, usize) -> Res<()>,
    ) -> Res<()> {
        self.open(depth)?;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            self.ws();
            item(self, index)?;
            index += 1;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.unexpected("in an array")),
            }
        }
    }

    fn content(&mut self) -> Res<Vec<Block>> {
        if self.peek() != Some(b'[') {
            let kind = self.kind();
            return Err(self.fail(format!(
                "content: expected an array of blocks, found {kind}"
            )));
        }
        let mut blocks = Vec::with_capacity(2);
        self.array(2, |p, index| {
            blocks.push(p.block(index)?);
            Ok(())
        })?;
        Ok(blocks)
    }

    fn block(&mut self, index: usize) -> Res<Block> {
        if self.peek() != Some(b'{') {
            let kind = self.kind();
            return Err(self.fail(format!(
                "content[{index}]: expected a block object, found {kind}"
            )));
        }
        let mut kind: Option<BlockType> = None;
        let mut block = Block::default();
        self.object(3, |p, key| {
            let name = |field: &str| format!("content[{index}].{field}");
            match key {
                b"type" => {
                    let t = p.string_field(|| name("type"))?;
                    kind = Some(BlockType::parse(&t).ok_or_else(|| {
                        p.fail(format!("content[{index}]: unknown block type {t:?}"))
                    })?);
                }
                b"text" => {
                    block.text = p
                        .optional_bytes()
                        .map_err(|f| f.within(&name("text")))?
                        .map(|b| match p.pool {
                            Some(pool) => pool.text(&b),
                            None => Text::from(&*b),
                        })
                }
                b"tool_args" => {
                    let at = p.at;
                    block.tool_args = match p.any(4).map_err(|f| f.within(&name("tool_args")))? {
                        None => None,
                        Some(node) => {
                            let mut out = Vec::new();
                            node.write(&mut out);
                            Some(utf8(out, at).map_err(|f| f.within(&name("tool_args")))?)
                        }
                    }
                }
                b"is_error" => {
                    block.is_error = p.optional_bool().map_err(|f| f.within(&name("is_error")))?
                }
                b"tool_call_id" | b"tool_name" | b"signature" | b"media_type" | b"source"
                | b"media_ref" => {
                    let field = std::str::from_utf8(key).unwrap_or_default();
                    let value = p.optional_str().map_err(|f| f.within(&name(field)))?;
                    match key {
                        b"tool_call_id" => block.tool_call_id = value,
                        b"tool_name" => block.tool_name = value,
                        b"signature" => block.signature = value,
                        b"media_type" => block.media_type = value,
                        b"source" => block.source = value,
                        _ => block.media_ref = value,
                    }
                }
                _ => p.skip(4)?,
            }
            Ok(())
        })?;
        block.kind = kind.ok_or_else(|| self.fail(format!("content[{index}]: no \"type\"")))?;
        Ok(block)
    }

    /// A string field that must be present (an enum name), as UTF-8;
    /// `field` names it, only in an error.
    fn string_field(&mut self, field: impl Fn() -> String) -> Res<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            let kind = self.kind();
            return Err(self.fail(format!("{}: expected a string, found {kind}", field())));
        }
        let at = self.at;
        let invalid = |e: std::str::Utf8Error| Fail {
            at,
            msg: format!("{}: invalid UTF-8 at byte {}", field(), e.valid_up_to()),
        };
        match self.string()? {
            Cow::Borrowed(b) => std::str::from_utf8(b).map(Cow::Borrowed).map_err(invalid),
            Cow::Owned(v) => String::from_utf8(v)
                .map(Cow::Owned)
                .map_err(|e| invalid(e.utf8_error())),
        }
    }

    /// `null` (absent) or a string, as bytes.
    fn optional_bytes(&mut self) -> Res<Option<Cow<'a, [u8]>>> {
        match self.peek() {
            Some(b'"') => Ok(Some(self.string()?)),
            Some(b'n') => self.null().map(|_| None),
            _ => {
                let kind = self.kind();
                Err(self.fail(format!("expected a string, found {kind}")))
            }
        }
    }

    /// `null` (absent) or a string, which must be UTF-8 here.
    fn optional_str(&mut self) -> Res<Option<Str>> {
        let at = self.at;
        match self.optional_bytes()? {
            None => Ok(None),
            Some(b) => utf8(b.into_owned(), at).map(Some),
        }
    }

    /// `null` (absent) or a boolean.
    fn optional_bool(&mut self) -> Res<Option<bool>> {
        for (word, value) in [
            (&b"true"[..], Some(true)),
            (b"false", Some(false)),
            (b"null", None),
        ] {
            if self.s[self.at..].starts_with(word) {
                self.at += word.len();
                return Ok(value);
            }
        }
        let kind = self.kind();
        Err(self.fail(format!("expected a boolean, found {kind}")))
    }

    fn null(&mut self) -> Res<()> {
        self.literal(b"null")
    }

    fn literal(&mut self, word: &[u8]) -> Res<()> {
        if self.s[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.unexpected("in a literal"))
        }
    }

    /// A string whose `"` is at the cursor, unescaped, as bytes: borrowed
    /// from the line when it has no escape.
    fn string(&mut self) -> Res<Cow<'a, [u8]>> {
        self.at += 1;
        let start = self.at;
        let s: &'a [u8] = self.s;
        let n = self.next_special(start)?;
        if s[n] == b'"' {
            self.at = n + 1;
            return Ok(Cow::Borrowed(&s[start..n]));
        }
        // Unescaped, the string is no longer than the rest of the line:
        // room for that once, rather than growing by doubling (a result's
        // text, most of its line, has an escape every line or so).
        let mut out = Vec::with_capacity(s.len() - start);
        out.extend_from_slice(&s[start..n]);
        self.at = n;
        loop {
            // At a backslash.
            self.at += 1;
            let Some(e) = self.peek() else {
                return Err(self.fail("EOF while parsing a string"));
            };
            self.at += 1;
            match e {
                b'"' => out.push(b'"'),
                b'\\' => out.push(b'\\'),
                b'/' => out.push(b'/'),
                b'b' => out.push(0x08),
                b'f' => out.push(0x0c),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'u' => {
                    let c = self.unicode_escape()?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                other => {
                    self.at -= 1;
                    return Err(self.fail(format!("unknown escape \\{}", other as char)));
                }
            }
            let from = self.at;
            let n = self.next_special(from)?;
            out.extend_from_slice(&s[from..n]);
            self.at = n;
            if s[n] == b'"' {
                self.at += 1;
                return Ok(Cow::Owned(out));
            }
        }
    }

    /// Inside a string, from `from`: where the next `"` or `\\` is. Fails at
    /// the first raw control character before it, and at the end of the
    /// line when there is neither.
    #[inline(always)]
    fn next_special(&mut self, from: usize) -> Res<usize> {
        match special(self.s, from) {
            Some(n) if matches!(self.s[n], b'"' | b'\\') => Ok(n),
            found => Err(self.not_a_string_end(found)),
        }
    }

    /// Why a string stopped at `found` (a control character) or found no
    /// end (`None`), rather than at a `"` or `\\`.
    #[cold]
    #[inline(never)]
    fn not_a_string_end(&mut self, found: Option<usize>) -> Fail {
        let eof = |p: &mut Self| {
            p.at = p.s.len();
            p.fail("EOF while parsing a string")
        };
        let Some(n) = found else {
            return eof(self);
        };
        let b = self.s[n];
        // A control character: the line's end comes first if the string
        // never ends.
        if memchr::memchr2(b'"', b'\\', &self.s[n..]).is_none() {
            return eof(self);
        }
        self.at = n;
        self.fail(format!(
            "control character {b:#04x} inside a string (it must be escaped)"
        ))
    }

    fn hex4(&mut self) -> Res<u32> {
        let digits = self.s.get(self.at..self.at + 4).unwrap_or(&[]);
        let value = std::str::from_utf8(digits)
            .ok()
            .filter(|d| d.len() == 4 && d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok());
        match value {
            Some(v) => {
                self.at += 4;
                Ok(v)
            }
            None => Err(self.fail("\\u needs four hex digits")),
        }
    }

    /// The character of a `\u` escape (cursor after the `u`): a surrogate
    /// must be a high one followed at once by an escaped low one.
    fn unicode_escape(&mut self) -> Res<char> {
        let at = self.at;
        let first = self.hex4()?;
        let lone = |msg: &str| Fail {
            at,
            msg: msg.to_string(),
        };
        let code = match first {
            0xDC00..=0xDFFF => return Err(lone("a low surrogate \\u escape without a high one")),
            0xD800..=0xDBFF => {
                if !self.s[self.at..].starts_with(b"\\u") {
                    return Err(lone("a high surrogate \\u escape without a low one"));
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(lone("a high surrogate \\u escape without a low one"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            c => c,
        };
        char::from_u32(code).ok_or_else(|| lone("not a character"))
    }

    /// The extent of a number at the cursor, checked against JSON's syntax,
    /// and whether it is an integer (no fraction, no exponent).
    fn number(&mut self) -> Res<(&'a [u8], bool)> {
        let start = self.at;
        let s = self.s;
        let digits = |mut i: usize| {
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let mut i = start;
        if s.get(i) == Some(&b'-') {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i),
            _ => {
                self.at = i;
                return Err(self.unexpected("in a number"));
            }
        }
        let mut integer = true;
        if s.get(i) == Some(&b'.') {
            integer = false;
            if !s.get(i + 1).is_some_and(u8::is_ascii_digit) {
                self.at = i + 1;
                return Err(self.unexpected("in a number"));
            }
            i = digits(i + 1);
        }
        if let Some(b'e' | b'E') = s.get(i) {
            integer = false;
            i += 1;
            if let Some(b'+' | b'-') = s.get(i) {
                i += 1;
            }
            if !s.get(i).is_some_and(u8::is_ascii_digit) {
                self.at = i;
                return Err(self.unexpected("in a number"));
            }
            i = digits(i);
        }
        // A digit straight after `0` (`01`) is not JSON.
        if s.get(i).is_some_and(u8::is_ascii_digit) {
            self.at = i;
            return Err(self.unexpected("in a number"));
        }
        self.at = i;
        Ok((&s[start..i], integer))
    }

    /// A value smith keeps as `JSON::Any?`: `null` is absent.
    fn any(&mut self, depth: usize) -> Res<Option<Node>> {
        if self.peek() == Some(b'n') {
            self.null()?;
            return Ok(None);
        }
        self.node(depth).map(Some)
    }

    fn node(&mut self, depth: usize) -> Res<Node> {
        match self.peek() {
            Some(b'{') => {
                let mut entries: Vec<(Vec<u8>, Node)> = Vec::new();
                let mut index: Option<HashMap<Vec<u8>, usize>> = None;
                self.object(depth, |p, key| {
                    let value = p.node(depth + 1)?;
                    let seen = match &index {
                        Some(map) => map.get(key).copied(),
                        None => entries.iter().position(|(k, _)| k == key),
                    };
                    match seen {
                        Some(i) => entries[i].1 = value,
                        None => {
                            if let Some(map) = &mut index {
                                map.insert(key.to_vec(), entries.len());
                            }
                            entries.push((key.to_vec(), value));
                            if index.is_none() && entries.len() > SCAN_KEYS {
                                index = Some(
                                    entries
                                        .iter()
                                        .enumerate()
                                        .map(|(i, (k, _))| (k.clone(), i))
                                        .collect(),
                                );
                            }
                        }
                    }
                    Ok(())
                })?;
                Ok(Node::Object(entries))
            }
            Some(b'[') => {
                let mut items = Vec::new();
                self.array(depth, |p, _| {
                    items.push(p.node(depth + 1)?);
                    Ok(())
                })?;
                Ok(Node::Array(items))
            }
            Some(b'"') => {
                let s = self.string()?;
                let mut out = Vec::with_capacity(s.len() + 2);
                write_bytes_str(&s, &mut out);
                Ok(Node::Scalar(out))
            }
            Some(b't') => self
                .literal(b"true")
                .map(|_| Node::Scalar(b"true".to_vec())),
            Some(b'f') => self
                .literal(b"false")
                .map(|_| Node::Scalar(b"false".to_vec())),
            Some(b'n') => self.null().map(|_| Node::Scalar(b"null".to_vec())),
            _ => {
                let at = self.at;
                let (text, integer) = self.number()?;
                // ASCII by construction.
                let text = std::str::from_utf8(text).unwrap_or_default();
                let fail = |msg: String| Fail { at, msg };
                if integer {
                    let n: i64 = text.parse().map_err(|_| {
                        fail(format!(
                            "{text} does not fit a signed 64-bit integer (smith: Invalid Int64)"
                        ))
                    })?;
                    Ok(Node::Scalar(n.to_string().into_bytes()))
                } else {
                    let f: f64 = text.parse().unwrap_or(f64::INFINITY);
                    if f.is_infinite() {
                        return Err(fail(format!(
                            "{text} is too large for a 64-bit float (smith: Invalid Float64)"
                        )));
                    }
                    Ok(Node::Scalar(crystal_float(f).into_bytes()))
                }
            }
        }
    }

    /// Steps over a value smith ignores, checking only its syntax and depth.
    fn skip(&mut self, depth: usize) -> Res<()> {
        match self.peek() {
            Some(b'{') => self.object(depth, |p, _| p.skip(depth + 1)),
            Some(b'[') => self.array(depth, |p, _| p.skip(depth + 1)),
            Some(b'"') => self.string().map(|_| ()),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.null(),
            _ => self.number().map(|_| ()),
        }
    }
}

/// Where the first `"`, `\\` or byte below 0x20 of `s[from..]` is: a
/// string's end, its next escape, or a control character it must not hold.
/// Strings are most of a transcript, so this one pass over nearly every
/// byte read is [`super::json::find_byte`]'s 16 bytes at a time.
fn special(s: &[u8], from: usize) -> Option<usize> {
    super::json::find_byte(s, from, super::json::ByteClass::StringEnd)
}

/// Bytes that must be UTF-8 to be kept in a `str` field.
fn utf8(bytes: Vec<u8>, at: usize) -> Res<Str> {
    String::from_utf8(bytes).map(Str::from).map_err(|e| Fail {
        at,
        msg: format!(
            "invalid UTF-8 at byte {} of the string (smith keeps such bytes; this tool only in a text)",
            e.utf8_error().valid_up_to()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_message() {
        let m = parse_line(r#"{"role":"Assistant","content":[{"type":"TOOL_USE","tool_call_id":"a","tool_name":"grep","tool_args":{"b": 1, "a": 2.50}},{"type":"thinking","text":"hm","signature":"sig"}],"synthetic":false,"id":"0123456789abcdef","extra":[1]}"#).unwrap();
        assert_eq!(m.role, Role::Assistant);
        assert_eq!(m.content[0].kind, BlockType::ToolUse);
        assert_eq!(
            m.content[0].tool_args.as_deref(),
            Some(r#"{"b":1,"a":2.5}"#)
        );
        assert_eq!(m.id.as_deref(), Some("0123456789abcdef"));
        // text 2 + args 15 + name 4 + signature 3
        assert_eq!(m.bytes(), 2 + 15 + 4 + 3);
    }

    #[test]
    fn rejects_what_smith_rejects() {
        for (line, why) in [
            ("[1,2]", "array"),
            ("42", "number"),
            ("null", "null"),
            (r#"{"content":[]}"#, "role"),
            (r#"{"role":"user"}"#, "content"),
            (r#"{"role":"wizard","content":[]}"#, "unknown role"),
            (
                r#"{"role":"user","content":[{"type":"video"}]}"#,
                "unknown block type",
            ),
            (
                r#"{"role":"user","content":[{"type":"text","text":5}]}"#,
                "content[0].text",
            ),
            (r#"{"role":"user","content":[{"text":"x"}]}"#, "no \"type\""),
            (r#"{"role":"user","content":[]"#, "EOF"),
        ] {
            let err = parse_line(line).unwrap_err();
            assert!(err.what.contains(why), "{line}: {err}");
            assert!(
                err.column >= 1 && err.column <= line.len() + 1,
                "{line}: {err}"
            );
        }
    }

    #[test]
    fn the_block_scan_agrees_with_a_byte_scan() {
        // Every byte value at every position of spans of 19 and 37 bytes
        // (one and two 16-byte blocks and a remainder), among bytes on both
        // sides of 0x20, 0x80, `"` and `\\`, with a second special byte
        // after it.
        for len in [19, 37] {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut span =
                        [0x20u8, 0x7f, 0x80, 0xff, 0x21, 0x9f, 0xa0, 0x5b, 0x5d, 0x23].repeat(4);
                    span.truncate(len);
                    span[at] = b;
                    let hit = b < 0x20 || b == b'"' || b == b'\\';
                    assert_eq!(special(&span, 0), hit.then_some(at), "{b:#x} at {at}");
                    span[len - 1] = b'"';
                    let want = if hit { at } else { len - 1 };
                    assert_eq!(special(&span, 0), Some(want), "{b:#x} at {at}");
                    assert_eq!(special(&span, at), Some(want));
                }
            }
        }
    }

    #[test]
    fn null_is_absent_and_last_key_wins() {
        let m = parse_line(r#"{"role":"user","role":"tool","content":[{"type":"tool_result","text":null,"is_error":null,"tool_call_id":"x"}]}"#).unwrap();
        assert_eq!(m.role, Role::Tool);
        assert_eq!(m.content[0].text, None);
        assert_eq!(m.content[0].is_error, None);
    }
}
