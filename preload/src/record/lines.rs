//! Buffered lines of an index file (`dg-input-indices`,
//! `dg-output-indices`): a program that declares 10^5 inputs should not
//! pay 10^5 system calls. The buffer is written when full and on every path
//! that completes the record files (`record::flush_all`, and from a signal
//! handler `record::flush_all_in_signal`).

use crate::lock::Lock;
use crate::sys;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Bytes buffered per file.
const CAPACITY: usize = 16 * 1024;

/// One file's pending lines.
pub struct LineBuffer {
    /// Serialises appending and writing in normal context.
    lock: Lock<()>,
    /// Bytes of `bytes` holding complete lines (published after the copy,
    /// so a signal handler sees only whole lines).
    len: AtomicUsize,
    bytes: UnsafeCell<[u8; CAPACITY]>,
}

// SAFETY: `bytes` is written only under `lock`; readers without the lock
// (signal context) read only the prefix `len` published with Release.
unsafe impl Sync for LineBuffer {}

impl Default for LineBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl LineBuffer {
    /// An empty buffer.
    pub const fn new() -> Self {
        LineBuffer {
            lock: Lock::new(()),
            len: AtomicUsize::new(0),
            bytes: UnsafeCell::new([0; CAPACITY]),
        }
    }

    /// Appends `line` (writing out to `fd` first when it would not fit).
    pub fn push(&self, fd: i32, line: &[u8]) {
        let _g = self.lock.lock();
        let len = self.len.load(Ordering::Relaxed);
        if len + line.len() > CAPACITY {
            self.write_locked(fd);
        }
        let len = self.len.load(Ordering::Relaxed);
        debug_assert!(line.len() <= CAPACITY);
        // SAFETY: we hold the lock, the only writer of `bytes`; the range
        // is inside the array.
        unsafe {
            core::ptr::copy_nonoverlapping(
                line.as_ptr(),
                self.bytes.get().cast::<u8>().add(len),
                line.len(),
            )
        };
        self.len.store(len + line.len(), Ordering::Release);
    }

    /// Writes the pending lines to `fd` (normal context).
    pub fn write_out(&self, fd: i32) {
        let _g = self.lock.lock();
        self.write_locked(fd);
    }

    fn write_locked(&self, fd: i32) {
        let len = self.len.load(Ordering::Relaxed);
        if len > 0 {
            // SAFETY: under the lock; [0, len) holds complete lines.
            sys::write_all(fd, unsafe { self.published(len) });
            self.len.store(0, Ordering::Release);
        }
    }

    /// Writes the pending lines without the lock, only what was published:
    /// from a signal handler about to let the process die, or when a
    /// recording failure stops it (which may happen under the lock).
    pub fn write_out_unlocked(&self, fd: i32) {
        let len = self.len.swap(0, Ordering::AcqRel);
        // SAFETY: [0, len) was published complete; a concurrent appender
        // only writes beyond it.
        sys::write_all(fd, unsafe { self.published(len) });
    }

    /// The first `len` bytes.
    ///
    /// # Safety
    /// `len` must have been published; nobody may write below it meanwhile.
    unsafe fn published(&self, len: usize) -> &[u8] {
        // SAFETY: len ≤ CAPACITY and those bytes are not being written.
        unsafe { core::slice::from_raw_parts(self.bytes.get().cast::<u8>(), len) }
    }

    /// Forgets the pending lines (in a child after `fork`: the parent
    /// writes them).
    pub fn forget(&self) {
        self.len.store(0, Ordering::Release);
    }
}
