//! The lock files a command holds, removed when a stop signal (Ctrl-C, SIGTERM from `scancel`
//! or a time limit, SIGHUP) ends it: the next command would replace them anyway, but a hidden
//! `.NAME.jouleplan-lock` left beside every output reads as something still running. Installed
//! only where the signal is at its default (a command with its own handler, `profile`, stops
//! in order and drops its locks itself); SIGKILL cannot be caught, and what it leaves the next
//! command replaces.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Once;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The most lock files removed on a stop at once: a command holds a handful.
const SLOTS: usize = 16;

/// The paths of the lock files this process made and holds (null: a free slot). A path is a
/// leaked C string, never freed: the handler may read it at any moment.
static HELD: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

static INSTALL: Once = Once::new();

/// Holds `path` for removal on a stop; the slot to [`release`], `None` where none is free.
pub(super) fn hold(path: &Path) -> Option<usize> {
    INSTALL.call_once(install);
    let c = CString::new(path.as_os_str().as_bytes()).ok()?.into_raw();
    for (i, slot) in HELD.iter().enumerate() {
        let free = std::ptr::null_mut();
        if slot
            .compare_exchange(free, c, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `c` came from `into_raw` above and was stored nowhere.
    drop(unsafe { CString::from_raw(c) });
    None
}

/// Frees `slot` (its lock is being removed in order). The path stays allocated: a handler
/// that read it a moment before may still use it.
pub(super) fn release(slot: usize) {
    if let Some(s) = HELD.get(slot) {
        s.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

/// Removes every held lock file, then ends the process by the same signal (its exit status
/// says which). Async-signal-safe: atomics, `unlink`, `signal` and `raise`.
extern "C" fn on_stop(sig: libc::c_int) {
    for slot in &HELD {
        let p = slot.load(Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: a NUL-terminated path leaked by `hold`, never freed.
            unsafe { libc::unlink(p) };
        }
    }
    // SAFETY: restores the default action and raises the signal again.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Installs [`on_stop`] for SIGINT, SIGTERM and SIGHUP where each is at its default action.
fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: reads the current action into a zeroed struct; sets ours only over the
        // default, so a handler the command installed before stays.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_DFL
            {
                libc::signal(sig, on_stop as *const () as libc::sighandler_t);
            }
        }
    }
}
