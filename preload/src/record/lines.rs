//! An index file (`dg-input-indices`, `dg-output-indices`), written as the
//! program declares its variables. Lines gather in a buffer of
//! [`BUFFER`] bytes that goes to the file when it is full and on every way
//! the recording ends (exit, `execve`, a fatal signal, a stop after a
//! failure): one `pwrite` per declaration cost about a microsecond, most
//! of a recording's time where every value of a large array is an input
//! (decision 55). A process killed by `SIGKILL` loses the lines still in
//! the buffer, as it loses the tape blocks still in its chunk buffers; the
//! file holds whole lines in any case.

use crate::lock::Lock;
use crate::sys;
use core::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// Bytes of lines held back before they go to the file (a line has at most
/// 21 bytes: about 200 declarations).
pub const BUFFER: usize = 4096;

/// What the lock guards: the file's length and the lines not in it yet.
struct Pending {
    /// Bytes in the file.
    bytes: u64,
    /// Lines in the file.
    lines: u64,
    /// Lines not yet written, `len` bytes of `buf`.
    buf: [u8; BUFFER],
    len: usize,
}

/// One index file.
pub struct IndexFile {
    /// The descriptor, -1 until the recording's files are created.
    pub fd: AtomicI32,
    /// The file's length and the held-back lines (the lock keeps lines in
    /// order).
    pending: Lock<Pending>,
    /// Lines declared: in the file, or held back to go there.
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
            pending: Lock::new(Pending {
                bytes: 0,
                lines: 0,
                buf: [0; BUFFER],
                len: 0,
            }),
            lines: AtomicU64::new(0),
        }
    }

    /// Lines declared so far (after a failed write: the lines in the file).
    pub fn lines(&self) -> u64 {
        self.lines.load(Ordering::Acquire)
    }

    /// Appends `line` (one `\n`-terminated index, at most 21 bytes). On a
    /// failed write the file is cut back to its whole lines and the errno
    /// returned.
    pub fn append(&self, line: &[u8]) -> Result<(), i64> {
        let mut p = self.pending.lock();
        if p.len + line.len() > BUFFER {
            self.write_out(&mut p)?;
        }
        let at = p.len;
        p.buf[at..at + line.len()].copy_from_slice(line);
        p.len += line.len();
        self.lines.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Writes the held-back lines to the file (normal context).
    pub fn flush(&self) -> Result<(), i64> {
        self.write_out(&mut self.pending.lock())
    }

    /// [`Self::flush`] in signal context: nothing if the interrupted code
    /// holds the lock (it was appending; the lines stay held back).
    pub fn flush_in_signal(&self) -> Result<(), i64> {
        match self.pending.try_lock() {
            Some(mut p) => self.write_out(&mut p),
            None => Ok(()),
        }
    }

    /// Drops the held-back lines (in a child after `fork`: they are the
    /// parent's to write). Without waiting: a lock another thread of the
    /// parent held at the `fork` stays held in the child, whose copy of
    /// the lines is then never written (a forked child writes no record
    /// files).
    pub fn forget_pending(&self) {
        if let Some(mut p) = self.pending.try_lock() {
            p.len = 0;
        }
    }

    fn write_out(&self, p: &mut Pending) -> Result<(), i64> {
        if p.len == 0 {
            return Ok(());
        }
        let fd = self.fd.load(Ordering::Acquire);
        let held = p.buf[..p.len].iter().filter(|&&b| b == b'\n').count() as u64;
        if let Err((errno, _)) = sys::pwrite_all(fd, &p.buf[..p.len], p.bytes) {
            // SAFETY: truncating our own file to the lines it held.
            unsafe { sys::syscall3(libc::SYS_ftruncate, fd as u64, p.bytes, 0) };
            p.len = 0;
            self.lines.store(p.lines, Ordering::Release);
            return Err(errno);
        }
        p.bytes += p.len as u64;
        p.lines += held;
        p.len = 0;
        Ok(())
    }
}
