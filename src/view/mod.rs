//! Showing transcripts to people: the readable rendering of a session or of
//! the working history at one request, its filters, its statistics, the
//! session listing, and the terminal plumbing (colour, pager) they share.
//!
//! Everything here writes to a `Write` given by the caller and never reads
//! the environment except where a file says so (`color`, `pager`), so the
//! commands decide where output goes and the tests read it back.

pub mod args;
pub mod calls;
pub mod color;
pub mod csp;
pub mod list;
pub mod marks;
pub mod pager;
pub mod render;
pub mod select;
pub mod stats;
pub mod text;
pub mod web;
