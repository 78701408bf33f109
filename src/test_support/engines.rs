//! The sessions the engines' tests share: smith's own reproduction of #118.

use std::sync::Arc;

use smith_calibrate::transcript::Message;

use super::{assistant, call, filler, result, user};

/// smith's changelog reproduction of #118: a short exchange and the next
/// turn's prompt, 248 text bytes in all, then one turn of thirty `bash
/// {"command":"ls"}` calls with 8,000-byte results, then a closing answer.
pub(crate) fn changelog_session() -> Vec<Arc<Message>> {
    let mut h = vec![
        user(&"q".repeat(100)),
        assistant(&"a".repeat(100)),
        user(&"p".repeat(48)),
    ];
    for i in 0..30 {
        h.push(call(&format!("c{i}"), "bash", r#"{"command":"ls"}"#));
        h.push(result(&format!("c{i}"), &filler(8_000)));
    }
    h.push(assistant("done"));
    h
}

/// The changelog's knobs as flags: a 70,000-token window, compacting at
/// 0.85 down to 0.5.
pub(crate) const CHANGELOG_FLAGS: [&str; 6] = [
    "--max-tokens",
    "70000",
    "--compact-at",
    "0.85",
    "--compact-to",
    "0.5",
];
