//! The policies' loss session, for the loss measure's tests inside the
//! crate and the commands' tests that replay and sweep it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use smith_calibrate::transcript::Message;

use super::{assistant, call, result, user};

/// A session whose first result names `alpha_function_xyz` and is masked
/// (window 1) by the request answered by message 5; `mention` goes into
/// message 5 and `earlier` into the user prompt.
pub(crate) fn loss_session(earlier: &str, mention: &str, again: bool) -> Vec<Arc<Message>> {
    let mut h = vec![
        user(&format!("fix it {earlier}")),
        call("c1", "read_file", r#"{"path":"a.rs"}"#),
        result("c1", b"fn alpha_function_xyz() {}\n"),
        call("c2", "bash", r#"{"command":"ls"}"#),
        result("c2", b"README.md\n"),
        assistant(&format!("I will now edit {mention}")),
    ];
    if again {
        h.push(call("c3", "read_file", r#"{"path":"a.rs"}"#));
        h.push(result("c3", b"fn alpha_function_xyz() {}\n"));
    }
    h
}

/// [`loss_session`] with the call made again, as a session on disk.
pub(crate) fn write_loss_session(dir: &Path) -> PathBuf {
    let sdir = dir.join("loss");
    std::fs::create_dir_all(&sdir).unwrap();
    let mut text = String::new();
    for m in loss_session("", "alpha_function_xyz", true) {
        text.push_str(&m.to_json());
        text.push('\n');
    }
    let p = sdir.join("transcript.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}
