//! File descriptors of the runtime's own (the record files, `DGAD_LOG`),
//! kept away from the program: they are moved to high numbers when opened,
//! and the program's `close` and `close_range` leave them open. Programs
//! that close every descriptor they did not open themselves (daemons, the
//! child side of `subprocess`) would otherwise end the recording or, worse,
//! get a number whose writes are the tape's.
//!
//! A `close` of one of them answers 0 as if it had closed it; the number
//! stays taken, so the kernel never hands it to the program. `dup2`/`dup3`
//! onto one of them is refused with `EBUSY` and a note on stderr.

use crate::sys;
use core::sync::atomic::{AtomicI32, Ordering};

/// Lowest number the runtime's descriptors move to.
const HIGH: u64 = 1000;
/// How many the runtime keeps at most.
const SLOTS: usize = 8;

static OWN: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];

/// Makes `fd` (just opened by the runtime, close-on-exec) one of the
/// runtime's: moved to a number ≥ 1000 when the limit allows, and
/// registered. Returns the descriptor to use.
pub fn adopt(fd: i32) -> i32 {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own.
    let high = unsafe {
        sys::syscall3(
            libc::SYS_fcntl,
            fd as u64,
            libc::F_DUPFD_CLOEXEC as u64,
            HIGH,
        )
    };
    let fd = if high >= 0 {
        // SAFETY: closing the low copy we just duplicated.
        unsafe { sys::syscall3(libc::SYS_close, fd as u64, 0, 0) };
        high as i32
    } else {
        fd
    };
    for slot in &OWN {
        if slot
            .compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            break;
        }
    }
    fd
}

/// Forgets `fd`, which the runtime has closed.
pub fn forget(fd: i32) {
    for slot in &OWN {
        if slot
            .compare_exchange(fd, -1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            break;
        }
    }
}

/// Whether `fd` is one of the runtime's.
pub fn is_own(fd: i64) -> bool {
    fd >= 0
        && OWN
            .iter()
            .any(|s| i64::from(s.load(Ordering::Acquire)) == fd)
}

/// The program's `close_range(first, last, flags)`: the same on every
/// stretch of the range that holds none of the runtime's descriptors.
/// Returns the first error, or 0.
pub fn close_range(first: u64, last: u64, flags: u64) -> i64 {
    let mut own: [u64; SLOTS] = [u64::MAX; SLOTS];
    let mut n = 0;
    for slot in &OWN {
        let fd = slot.load(Ordering::Acquire);
        if fd >= 0 && (first..=last).contains(&(fd as u64)) {
            own[n] = fd as u64;
            n += 1;
        }
    }
    own[..n].sort_unstable();
    let mut from = first;
    let mut result = 0;
    for &fd in own[..n].iter().chain(core::iter::once(&u64::MAX)) {
        let to = if fd == u64::MAX {
            last
        } else {
            fd.saturating_sub(1)
        };
        if fd != from && from <= to {
            // SAFETY: the program asked for this on descriptors that are
            // not the runtime's.
            let r = unsafe { sys::syscall3(libc::SYS_close_range, from, to, flags) };
            if r < 0 && result == 0 {
                result = r;
            }
        }
        if fd == u64::MAX {
            break;
        }
        from = fd + 1;
    }
    result
}
