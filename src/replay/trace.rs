//! `replay --trace`: one JSON object per request, the keys docs/engine.md §6
//! requires first and in its order, then the per-request extras.

use std::io::{self, Write};

use serde_json::{json, Map, Value};

use crate::engine::Stage;

use super::RequestFacts;

/// The trace line of one request.
pub(crate) fn trace_line(r: &RequestFacts) -> Value {
    let mut obj = Map::new();
    obj.insert("request".into(), json!(r.request));
    obj.insert("message_index".into(), json!(r.message_index));
    obj.insert("before".into(), json!(r.before));
    obj.insert("after".into(), json!(r.after));
    obj.insert("strategy".into(), json!(r.strategy.as_str()));
    obj.insert(
        "stages".into(),
        json!(r.stages.iter().map(|s| s.as_str()).collect::<Vec<_>>()),
    );
    obj.insert("history_len".into(), json!(r.history_len));
    // Every stage that changed something is listed, 0 included (a summary
    // of a summary can reclaim nothing), and so is any other that reclaimed
    // tokens: the values add up to `before - after`.
    let mut reclaimed = Map::new();
    for stage in Stage::ALL {
        let t = r.effects.reclaimed[stage.index()];
        if t != 0 || r.stages.contains(&stage) {
            reclaimed.insert(stage.as_str().into(), json!(t));
        }
    }
    obj.insert("reclaimed".into(), Value::Object(reclaimed));
    obj.insert("results_mangled".into(), json!(r.effects.results_mangled()));
    obj.insert(
        "results_truncated".into(),
        json!(r.effects.results_truncated),
    );
    obj.insert("results_stubbed".into(), json!(r.effects.results_stubbed));
    obj.insert("reads_superseded".into(), json!(r.effects.reads_superseded));
    obj.insert("thinking_dropped".into(), json!(r.effects.thinking_dropped));
    obj.insert(
        "attachments_removed".into(),
        json!(r.effects.attachments_removed),
    );
    obj.insert(
        "messages_summarized".into(),
        json!(r.effects.messages_summarized),
    );
    obj.insert("target_missed".into(), json!(r.target_missed));
    obj.insert("exhausted".into(), json!(r.exhausted));
    obj.insert("cache_read".into(), json!(r.cache_read));
    obj.insert("cache_write".into(), json!(r.cache_write));
    // Only under a learned ratio, so a trace at a fixed one stays as it was.
    if let Some(ratio) = r.ratio {
        obj.insert("ratio".into(), json!(ratio));
    }
    // Only for a session its log measured, so smith's own traces stay as
    // they were: the provider's count of what was sent.
    if r.measured {
        obj.insert("real_after".into(), json!(r.real_after));
        obj.insert("real_read".into(), json!(r.real_read));
        obj.insert("real_write".into(), json!(r.real_write));
        obj.insert("overflow".into(), json!(r.overflow));
    }
    // Only where smith after #118 kept no summary, so every other trace
    // stays as it was.
    match r.withheld {
        Some(crate::engine::Withheld::Refused) => {
            obj.insert("summary".into(), json!("refused"));
        }
        Some(crate::engine::Withheld::Discarded { .. }) => {
            obj.insert("summary".into(), json!("discarded"));
        }
        None => {}
    }
    Value::Object(obj)
}

/// Writes the trace line of one request, newline-terminated.
pub(crate) fn write_trace_line(out: &mut dyn Write, r: &RequestFacts) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &trace_line(r))?;
    out.write_all(b"\n")
}
