//! Reading: smith's transcript format (docs/engine.md §1), from a line of JSON to
//! the sessions a path, an id or a name refers to.

pub(crate) mod estimate;
pub(crate) mod json;
pub mod locate;
pub(crate) mod measured;
pub(crate) mod model;
pub(crate) mod outline;
#[cfg(all(test, feature = "full"))]
mod parity_tests;
pub mod parse;
pub(crate) mod pool;
pub mod reader;
pub(crate) mod select;
pub mod session;
pub mod session_file;

pub use locate::{resolve, resolve_all, SessionRef};
pub(crate) use model::{estimate_tokens, MessageTokens};
pub use model::{Block, BlockType, Message, Role, Str, Text};
pub(crate) use reader::ReadLog;
pub use reader::{read_transcript, Skip};
pub use session::{load, Session};
