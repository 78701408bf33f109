//! One line of `transcript.jsonl` into a [`Message`], with smith's tolerance.
//!
//! smith's reader (Crystal's `JSON::Serializable`) ignores unknown fields,
//! treats `null` in an optional field as absent, lets a repeated key's last
//! value win, and rejects a line whose fields have the wrong type or whose
//! role or block type it does not know. The visitor below does exactly that,
//! and says which field was wrong so the user can find it.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer;
use serde_json::Value;

use super::json::value_to_string;
use super::model::{Block, BlockType, Message, Role, Str, Text};

/// Parses one line (without its newline) into a message, or says why not.
pub fn parse_line(line: &str) -> Result<Message, String> {
    let mut de = serde_json::Deserializer::from_str(line);
    // serde_json's default recursion limit (128) turns a pathologically deep
    // `tool_args` into an error for this line instead of a stack overflow.
    let message = de.deserialize_any(MessageVisitor).map_err(describe)?;
    de.end().map_err(describe)?;
    Ok(message)
}

fn describe(e: serde_json::Error) -> String {
    let msg = e.to_string();
    // serde_json appends " at line 1 column N"; the line is ours to name.
    match msg.rfind(" at line ") {
        Some(i) if e.line() == 1 => format!("{} (column {})", &msg[..i], e.column()),
        _ => msg,
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message object with \"role\" and \"content\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let mut role: Option<Role> = None;
        let mut content: Option<Vec<Block>> = None;
        let mut synthetic = false;
        let mut id: Option<Str> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "role" => {
                    let name: String = map
                        .next_value()
                        .map_err(|e| de::Error::custom(format!("role: {e}")))?;
                    role = Some(
                        Role::parse(&name)
                            .ok_or_else(|| de::Error::custom(format!("unknown role {name:?}")))?,
                    );
                }
                "content" => content = Some(map.next_value_seed(ContentSeed)?),
                "synthetic" => {
                    synthetic = map
                        .next_value::<Option<bool>>()
                        .map_err(|e| de::Error::custom(format!("synthetic: {e}")))?
                        .unwrap_or(false)
                }
                "id" => {
                    id = map
                        .next_value::<Option<String>>()
                        .map_err(|e| de::Error::custom(format!("id: {e}")))?
                        .map(Str::from)
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let role = role.ok_or_else(|| de::Error::custom("not a message: no \"role\""))?;
        let content =
            content.ok_or_else(|| de::Error::custom("not a message: no \"content\" array"))?;
        Ok(Message::new(role, content, synthetic, id))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Message, A::Error> {
        Err(de::Error::custom("not a message: a JSON array"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Message, E> {
        Err(E::custom("not a message: a JSON string"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Message, E> {
        Err(E::custom("not a message: a JSON boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Message, E> {
        Err(E::custom("not a message: a JSON number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Message, E> {
        Err(E::custom("not a message: a JSON number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Message, E> {
        Err(E::custom("not a message: a JSON number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Message, E> {
        Err(E::custom("not a message: null"))
    }
}

struct ContentSeed;

impl<'de> DeserializeSeed<'de> for ContentSeed {
    type Value = Vec<Block>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Block>, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Vec<Block>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"content\" as an array of blocks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Block>, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(2));
        let mut index = 0usize;
        while let Some(block) = seq.next_element_seed(BlockSeed(index))? {
            blocks.push(block);
            index += 1;
        }
        Ok(blocks)
    }
}

struct BlockSeed(usize);

impl<'de> DeserializeSeed<'de> for BlockSeed {
    type Value = Block;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Block, D::Error> {
        d.deserialize_map(BlockVisitor(self.0))
    }
}

struct BlockVisitor(usize);

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Block;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "content[{}] as a block object", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
        let at = self.0;
        let wrong = |field: &str, e: A::Error| -> A::Error {
            de::Error::custom(format!("content[{at}].{field}: {e}"))
        };
        let mut kind: Option<BlockType> = None;
        let mut block = Block::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let field = key.as_ref();
            match field {
                "type" => {
                    let name: String = map.next_value().map_err(|e| wrong(field, e))?;
                    kind = Some(BlockType::parse(&name).ok_or_else(|| {
                        de::Error::custom(format!("content[{at}]: unknown block type {name:?}"))
                    })?);
                }
                "text" => {
                    block.text = map
                        .next_value_seed(OptionalText)
                        .map_err(|e| wrong(field, e))?
                }
                "tool_args" => {
                    block.tool_args = map
                        .next_value::<Option<Value>>()
                        .map_err(|e| wrong(field, e))?
                        .map(|v| Str::from(value_to_string(&v)))
                }
                "is_error" => {
                    block.is_error = map
                        .next_value::<Option<bool>>()
                        .map_err(|e| wrong(field, e))?
                }
                "tool_call_id" | "tool_name" | "signature" | "media_type" | "source"
                | "media_ref" => {
                    let value = map
                        .next_value::<Option<String>>()
                        .map_err(|e| wrong(field, e))?
                        .map(Str::from);
                    match field {
                        "tool_call_id" => block.tool_call_id = value,
                        "tool_name" => block.tool_name = value,
                        "signature" => block.signature = value,
                        "media_type" => block.media_type = value,
                        "source" => block.source = value,
                        _ => block.media_ref = value,
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        block.kind =
            kind.ok_or_else(|| de::Error::custom(format!("content[{at}]: no \"type\"")))?;
        Ok(block)
    }
}

/// A block's text straight into its shared buffer: one copy from the line
/// (or from serde_json's unescaping scratch), no intermediate `String`. Text
/// is most of a transcript's bytes, so this is most of the reader's work.
struct OptionalText;

impl<'de> DeserializeSeed<'de> for OptionalText {
    type Value = Option<Text>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Text>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptionalText {
    type Value = Option<Text>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<Text>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Text>, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<Text>, D::Error> {
        d.deserialize_str(self)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<Text>, E> {
        Ok(Some(Text::from(v.as_bytes())))
    }
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
            assert!(err.contains(why), "{line}: {err}");
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
