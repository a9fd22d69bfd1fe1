//! An index file (`dg-input-indices`, `dg-output-indices`), written a line
//! at a time as the program declares its variables: a process killed at any
//! moment (`SIGKILL`, a full disk) leaves every declaration made before in
//! the file, as whole lines. Declarations are few next to tape blocks; one
//! `pwrite` each costs about a microsecond (10^5 inputs: 0.1 s). Normal
//! context only: nothing writes these files from a signal handler.

use crate::lock::Lock;
use crate::sys;
use core::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// One index file.
pub struct IndexFile {
    /// The descriptor, -1 until the recording's files are created.
    pub fd: AtomicI32,
    /// Bytes in the file (under the lock, which keeps lines in order).
    bytes: Lock<u64>,
    /// Lines in the file.
    lines: AtomicU64,
}

impl Default for IndexFile {
    fn default() -> Self {
        Self::new()
    }
}

impl IndexFile {
    /// A file not yet created.
    pub const fn new() -> Self {
        IndexFile {
            fd: AtomicI32::new(-1),
            bytes: Lock::new(0),
            lines: AtomicU64::new(0),
        }
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines.load(Ordering::Acquire)
    }

    /// Appends `line` (one `\n`-terminated index). On failure the file is
    /// cut back to its whole lines and the errno returned.
    pub fn append(&self, line: &[u8]) -> Result<(), i64> {
        let mut bytes = self.bytes.lock();
        let fd = self.fd.load(Ordering::Acquire);
        if let Err((errno, _)) = sys::pwrite_all(fd, line, *bytes) {
            // SAFETY: truncating our own file to the lines it held.
            unsafe { sys::syscall3(libc::SYS_ftruncate, fd as u64, *bytes, 0) };
            return Err(errno);
        }
        *bytes += line.len() as u64;
        self.lines.fetch_add(1, Ordering::Release);
        Ok(())
    }
}
