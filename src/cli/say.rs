//! Where notes and warnings go: standard error, one prefixed line each. `--quiet` (`-q`) drops
//! the notes and the progress, never a warning (what the result rests on, such as a
//! recommendation that may miss the user's own deadline or budget). Standard output holds the
//! result alone.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// One line on standard error, whatever `--quiet` says; a closed or full standard error is
/// ignored (never a panic: what was measured and written stays). Control bytes quoted from an
/// input (NUL, ESC, ...) are written escaped ([`crate::error::shown`]), never raw.
pub fn line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", crate::error::shown(text));
}

static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets `--quiet` for the rest of the process.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A note (what was derived, assumed or left out) on standard error, unless quiet.
pub fn note(what: &str) {
    if !quiet() {
        line(&format!("note: {what}"));
    }
}

/// A warning (what the result rests on that the user should know) on standard error, with
/// `--quiet` as without: quiet drops what was derived, never what may make the result miss.
pub fn warning(what: &str) {
    line(&format!("warning: {what}"));
}

/// A line of progress (a file written, a run made) on standard error, unless quiet.
pub fn progress(what: &str) {
    if !quiet() {
        line(what);
    }
}
