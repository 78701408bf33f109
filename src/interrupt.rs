//! Ctrl-C: finish cleanly instead of dying mid-write.
//!
//! Every output is written to a temporary name and renamed into place, so an
//! interrupted run can only leave the previous outputs or none. What this
//! adds is the order of things: the first Ctrl-C asks long work to stop at
//! the next session, the command then says what it did not write and exits
//! with 130; a second Ctrl-C ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// The exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells use.
pub const EXIT_INTERRUPTED: u8 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Installs the handler (once per process). If it cannot be installed the
/// default behaviour stays: Ctrl-C ends the process, and the atomic writes
/// still keep every output whole.
pub fn install() {
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                crate::note!("\ninterrupted again: stopping now");
                std::process::exit(EXIT_INTERRUPTED as i32);
            }
            crate::note!("\ninterrupted: finishing the sessions in hand, writing nothing (Ctrl-C again to stop at once)");
        });
    });
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
