//! Ctrl-C: finish cleanly instead of dying mid-write.
//!
//! Every output is written to a temporary name and renamed into place, so an
//! interrupted run can only leave the previous outputs or none. What this
//! adds is the order of things: the first Ctrl-C asks long work to stop at
//! the next session, the command then says what it did not write and exits
//! with 130; a second Ctrl-C ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, Once};

/// The exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells use.
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Installs the handler (once per process). If it cannot be installed the
/// default behaviour stays: Ctrl-C ends the process, and the atomic writes
/// still keep every output whole.
pub(crate) fn install() {
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                crate::note!("\ninterrupted again: stopping now");
                std::process::exit(EXIT_INTERRUPTED as i32);
            }
            crate::note!("\ninterrupted: finishing the sessions in hand, writing nothing (Ctrl-C again to stop at once)");
            wake();
        });
    });
}

/// Whether Ctrl-C was pressed.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Set, under its lock, when a [`pause_for_tests`] is to end.
static WOKEN: Mutex<bool> = Mutex::new(false);
static WAKE: Condvar = Condvar::new();

fn wake() {
    *WOKEN.lock().unwrap_or_else(|p| p.into_inner()) = true;
    WAKE.notify_all();
}

/// For the tests only (`sweep --test-pause-after`): says `line` on stderr
/// and waits, doing nothing, until Ctrl-C or the end of standard input.
/// The line tells a test that the run has reached a known point, where it
/// then interrupts, kills or lets go of the process: no test has to guess
/// with a sleep how far a run has got.
pub(crate) fn pause_for_tests(line: &str) {
    crate::note!("{line}");
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        wake();
    });
    let mut woken = WOKEN.lock().unwrap_or_else(|p| p.into_inner());
    while !*woken && !interrupted() {
        woken = WAKE.wait(woken).unwrap_or_else(|p| p.into_inner());
    }
}
