//! What smith keeps beside a transcript: `session.json` and the entry in
//! `sessions/index.json`, with smith's naming and its time format.

use serde_json::{json, Value};

use super::session::{Profile, Usage};

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time, as smith writes `created_at`.
pub(crate) fn rfc3339(unix: u64) -> String {
    crate::time::format_rfc3339(unix as i64)
}

/// What the index and `session.json` say about one generated session.
#[derive(Clone, Debug)]
pub(crate) struct Meta {
    pub(crate) id: String,
    pub(crate) created_unix: u64,
    pub(crate) updated_unix: u64,
    pub(crate) name: Option<String>,
    pub(crate) first_prompt: String,
    pub(crate) message_count: u64,
}

/// `session.json`. smith keeps the session's history in it too; the
/// generator writes `messages: []` (the transcript beside it is the record,
/// and a second copy would double the corpus on disk).
pub(crate) fn session_json(meta: &Meta, profile: &Profile, usage: Usage) -> Value {
    json!({
        "id": meta.id,
        "created_at": rfc3339(meta.created_unix),
        "updated_at": rfc3339(meta.updated_unix),
        "cwd": profile.cwd,
        "model": profile.model,
        "provider": profile.provider,
        "messages": [],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            "cache_creation_tokens": usage.cache_creation_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
        },
        "todos": [],
        "name": meta.name,
    })
}

/// The session's entry in `index.json`. `message_count` counts the
/// transcript's messages.
pub(crate) fn index_entry(meta: &Meta) -> Value {
    json!({
        "id": meta.id,
        "created_at": rfc3339(meta.created_unix),
        "updated_at": rfc3339(meta.updated_unix),
        "first_prompt": meta.first_prompt,
        "message_count": meta.message_count,
        "name": meta.name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_writes_utc_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(rfc3339(1_735_689_600), "2025-01-01T00:00:00Z");
    }
}
