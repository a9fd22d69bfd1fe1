//! Record mode: the tape and the index files of `DGAD_RECORD=DIR`.
//!
//! Indices come from one process-wide counter, handed to threads in chunks
//! of [`CHUNK`] so that recording never contends: a thread fills its chunk's
//! blocks in a buffer and queues it for the tape writer thread ([`writer`]),
//! which puts the blocks at byte offset `32 * index` of `dg-tape`; what is
//! pending when the thread or process ends is written directly. A block's
//! operands must have smaller indices than the block itself; when an operand
//! comes from a later chunk (another thread's), the thread abandons the rest
//! of its chunk (left as zero blocks, never referenced) and takes a new one,
//! which is above every index handed out so far.
//!
//! Files are created at the first input declaration or block, so a process
//! that declares no input writes nothing (a shell or a `python3` parent does
//! not clobber its child's tape).

pub mod apply;
pub mod avx512;
pub mod client;
pub mod guest;
pub mod kernel_writes;
pub mod lines;
pub mod math;
pub mod replay;
pub mod statesave;
pub mod writer;

use crate::context::ThreadCtx;
use crate::lock::Lock;
use crate::sys;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};
use std::sync::OnceLock;
use tape_format::{file_name, Block};

/// Blocks per chunk of indices (and per thread buffer).
pub const CHUNK: u64 = 8192;
/// Largest index the 4-byte shadow can hold.
pub const MAX_INDEX: u64 = u32::MAX as u64;

/// Process-wide recording state.
pub struct Recorder {
    /// `DIR/` as bytes, with the trailing slash.
    dir: Vec<u8>,
    tape_fd: AtomicI32,
    input_fd: AtomicI32,
    output_fd: AtomicI32,
    /// First index of the next chunk to hand out (index 0 is reserved).
    next_chunk: AtomicU64,
    /// `DG_DISABLE` counter: while positive, operations record nothing.
    pub disabled: AtomicI64,
    /// Set in the child of a `fork`, which records nothing: the record
    /// files are the parent's.
    forked: AtomicBool,
    /// Serialises file creation.
    files: Lock<()>,
    /// Lines of the index files not yet written.
    input_lines: lines::LineBuffer,
    output_lines: lines::LineBuffer,
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// The recorder, when recording.
pub fn recorder() -> Option<&'static Recorder> {
    RECORDER.get()
}

/// Checks that `dir` can hold the recording (creating it if needed) and
/// arms the recorder. Errors are for the user: they name the directory.
pub fn init(dir: &[u8]) -> Result<(), String> {
    let shown = String::from_utf8_lossy(dir).into_owned();
    // Relative to the directory the process starts in, as the user meant
    // it: the program may change directory before its first declaration.
    let absolute;
    let dir = if dir.starts_with(b"/") {
        dir
    } else {
        let mut cwd = vec![0u8; 4096];
        // SAFETY: getcwd writes at most cwd.len() bytes into our buffer.
        let n = unsafe {
            sys::syscall3(
                libc::SYS_getcwd,
                cwd.as_mut_ptr() as u64,
                cwd.len() as u64,
                0,
            )
        };
        if n <= 0 {
            return Err(format!(
                "cannot resolve the record directory DGAD_RECORD={shown}: the current directory is unknown"
            ));
        }
        cwd.truncate(n as usize - 1);
        cwd.push(b'/');
        cwd.extend_from_slice(dir);
        absolute = cwd;
        &absolute[..]
    };
    let mut path = dir.to_vec();
    path.push(0);
    // SAFETY: path is NUL-terminated.
    let r = unsafe { sys::syscall3(libc::SYS_mkdir, path.as_ptr() as u64, 0o755, 0) };
    if r < 0 && r != -(libc::EEXIST as i64) {
        return Err(format!(
            "cannot create the record directory DGAD_RECORD={shown}: {}",
            errno_text(-r)
        ));
    }
    let mut probe = dir.to_vec();
    probe.extend_from_slice(b"/.dgad-write-test\0");
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC;
    // SAFETY: probe is NUL-terminated.
    let fd = unsafe { sys::syscall3(libc::SYS_open, probe.as_ptr() as u64, flags as u64, 0o644) };
    if fd < 0 {
        return Err(format!(
            "the record directory DGAD_RECORD={shown} is not writable: {}",
            errno_text(-fd)
        ));
    }
    // SAFETY: closing and removing the probe we just made.
    unsafe {
        sys::syscall3(libc::SYS_close, fd as u64, 0, 0);
        sys::syscall3(libc::SYS_unlink, probe.as_ptr() as u64, 0, 0);
    }
    let mut d = dir.to_vec();
    d.push(b'/');
    let _ = RECORDER.set(Recorder {
        dir: d,
        tape_fd: AtomicI32::new(-1),
        input_fd: AtomicI32::new(-1),
        output_fd: AtomicI32::new(-1),
        next_chunk: AtomicU64::new(1),
        disabled: AtomicI64::new(0),
        forked: AtomicBool::new(false),
        files: Lock::new(()),
        input_lines: lines::LineBuffer::new(),
        output_lines: lines::LineBuffer::new(),
    });
    Ok(())
}

/// Maps the shadow regions and fences off the gaps of the address map
/// (`shadowmem`), after checking that nothing is mapped outside the
/// application ranges.
pub fn reserve_shadow() -> Result<(), String> {
    let mut stray = None;
    crate::diag::for_each_mapping(|m| {
        if m.start < shadowmem::USER_END
            && !shadowmem::is_app_range(m.start, m.end.min(shadowmem::USER_END))
        {
            stray = Some(format!(
                "{:#x}-{:#x} {}",
                m.start,
                m.end,
                String::from_utf8_lossy(m.path)
            ));
            return false;
        }
        true
    });
    if let Some(m) = stray {
        return Err(format!("the process has a mapping where dgad's shadow memory must go ({m}); record mode cannot run"));
    }
    for (start, end, accessible) in shadowmem::RESERVATIONS {
        let prot = if accessible {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_NONE
        };
        if sys::map_anon((end - start) as usize, prot, start, true).is_none() {
            let why = match sys::address_space_limit() {
                Ok(l) if l.rlim_cur != libc::RLIM_INFINITY => format!(
                    "; record mode reserves terabytes of address space (no memory) for it, \
                     and the virtual memory limit is {} KiB: lift it (`ulimit -v unlimited`)",
                    l.rlim_cur / 1024
                ),
                _ => String::new(),
            };
            return Err(format!(
                "cannot reserve shadow memory at {start:#x}-{end:#x}{why}"
            ));
        }
    }
    Ok(())
}

/// A short description of an errno value.
pub fn errno_text(e: i64) -> String {
    std::io::Error::from_raw_os_error(e as i32).to_string()
}

impl Recorder {
    /// Whether operations on active data write blocks now (not inside
    /// `DG_DISABLE`, not in a forked child).
    pub fn records(&self) -> bool {
        self.disabled.load(Ordering::Relaxed) <= 0 && !self.forked.load(Ordering::Relaxed)
    }

    fn open_file(&self, slot: &AtomicI32, name: &str) -> i32 {
        let fd = slot.load(Ordering::Acquire);
        if fd >= 0 {
            return fd;
        }
        let _g = self.files.lock();
        let fd = slot.load(Ordering::Acquire);
        if fd >= 0 {
            return fd;
        }
        let mut path = self.dir.clone();
        path.extend_from_slice(name.as_bytes());
        path.push(0);
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC;
        // SAFETY: path is NUL-terminated.
        let fd =
            unsafe { sys::syscall3(libc::SYS_open, path.as_ptr() as u64, flags as u64, 0o644) };
        if fd < 0 {
            self.fail(&format!(
                "cannot create {}: {}",
                String::from_utf8_lossy(&path[..path.len() - 1]),
                errno_text(-fd)
            ));
        }
        let fd = crate::fds::adopt(fd as i32);
        slot.store(fd, Ordering::Release);
        // The tape always starts with the all-zero block 0.
        if name == file_name::TAPE {
            self.pwrite_all(fd, &[0u8; 32], 0);
        }
        fd
    }

    /// Stops the client after a recording failure; the files hold every
    /// block flushed so far.
    fn fail(&self, what: &str) -> ! {
        self.write_index_lines(false);
        crate::dgad_eprintln!(
            "record: {}; stopping (files are complete up to the last flushed block)",
            what
        );
        sys::exit_group(125)
    }

    /// Writes `buf` at `offset` of the tape file `fd`, or stops the client.
    fn pwrite_all(&self, fd: i32, buf: &[u8], offset: u64) {
        if let Err((errno, reached)) = sys::pwrite_all(fd, buf, offset) {
            // Keep the file a whole number of blocks: cut a partly written
            // block off.
            // SAFETY: truncating our own file.
            unsafe { sys::syscall3(libc::SYS_ftruncate, fd as u64, reached - reached % 32, 0) };
            let mut path = String::from_utf8_lossy(&self.dir).into_owned();
            path.push_str(file_name::TAPE);
            self.fail(&format!("writing {path} failed: {}", errno_text(errno)));
        }
    }

    /// Appends `index` to the input (`which == 0`) or output index file.
    pub fn declare(&self, which: u64, index: u64) {
        if self.forked.load(Ordering::Relaxed) {
            static TOLD: AtomicBool = AtomicBool::new(false);
            if !TOLD.swap(true, Ordering::Relaxed) {
                crate::dgad_eprintln!(
                    "record: process {} is a forked child, which does not record (the record files \
                     are its parent's); its AD input/output declarations are ignored",
                    crate::init::pid()
                );
            }
            return;
        }
        let (slot, name, lines) = if which == 0 {
            (&self.input_fd, file_name::INPUT_INDICES, &self.input_lines)
        } else {
            (
                &self.output_fd,
                file_name::OUTPUT_INDICES,
                &self.output_lines,
            )
        };
        let fd = self.open_file(slot, name);
        // The decimal digits and a newline, formatted by hand: declaring
        // 10^5 inputs should not cost 10^5 runs of the formatting machinery.
        let mut line = [0u8; 21];
        let mut at = line.len() - 1;
        line[at] = b'\n';
        let mut v = index;
        loop {
            at -= 1;
            line[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        lines.push(fd, &line[at..]);
    }

    /// Writes the pending lines of the open index files: under their locks
    /// (`locked`), or without them where one may be held (signal context, a
    /// recording failure).
    fn write_index_lines(&self, locked: bool) {
        for (slot, lines) in [
            (&self.input_fd, &self.input_lines),
            (&self.output_fd, &self.output_lines),
        ] {
            let fd = slot.load(Ordering::Acquire);
            if fd < 0 {
                continue;
            }
            if locked {
                lines.write_out(fd);
            } else {
                lines.write_out_unlocked(fd);
            }
        }
    }

    /// A new block `{index1, index2, partial1, partial2}`; returns its index.
    pub fn new_block(
        &self,
        ctx: &mut ThreadCtx,
        index1: u64,
        partial1: f64,
        index2: u64,
        partial2: f64,
    ) -> u64 {
        let t = &mut ctx.tape;
        if t.next >= t.end || index1.max(index2) >= t.next {
            if self.forked.load(Ordering::Relaxed) {
                return 0;
            }
            self.next_chunk_for(ctx);
        }
        let t = &mut ctx.tape;
        let index = t.next;
        if index > MAX_INDEX {
            self.fail(
                "the tape exceeds 2^32 blocks (128 GiB), the limit of dgad's 4-byte shadow indices",
            );
        }
        // SAFETY: the buffer holds CHUNK blocks and index - base < CHUNK.
        unsafe {
            *(t.buf as *mut Block).add((index - t.base) as usize) =
                Block::binary(index1, partial1, index2, partial2)
        };
        t.next += 1;
        index
    }

    fn next_chunk_for(&self, ctx: &mut ThreadCtx) {
        // Open the tape here, in normal context, so that a flush from a
        // signal handler only has to write (no lock, no allocation).
        self.open_file(&self.tape_fd, file_name::TAPE);
        // A vfork-style child (its own process sharing our memory) writes
        // for itself: a writer it started would die with its `execve`.
        if ctx.other_process != 0 || !writer::hand_off(&mut ctx.tape, &ctx.tape_ring) {
            self.flush(ctx);
        }
        if ctx.tape.buf == 0 {
            let Some(buf) = ctx.tape_ring.map() else {
                self.fail("cannot map a tape buffer");
            };
            ctx.tape.buf = buf;
        }
        let base = self.next_chunk.fetch_add(CHUNK, Ordering::AcqRel);
        if base + CHUNK > MAX_INDEX + 1 {
            self.fail(
                "the tape exceeds 2^32 blocks (128 GiB), the limit of dgad's 4-byte shadow indices",
            );
        }
        ctx.tape.base = base;
        ctx.tape.next = base;
        ctx.tape.end = base + CHUNK;
        ctx.tape.flushed = base;
    }

    /// Writes `bytes` at `offset` of the tape (the writer thread's part).
    fn write_tape(&self, bytes: &[u8], offset: u64) {
        self.pwrite_all(self.tape_fd.load(Ordering::Acquire), bytes, offset);
    }

    /// Writes the thread's blocks not yet in the file.
    pub fn flush(&self, ctx: &mut ThreadCtx) {
        if !ctx.tape.has_unflushed() {
            return;
        }
        let fd = self.open_file(&self.tape_fd, file_name::TAPE);
        let (bytes, offset) = ctx.tape.take_unflushed();
        self.pwrite_all(fd, bytes, offset);
    }
}

/// Per-thread tape state, in the thread context. Translated code reads and
/// advances `buf`, `base`, `next` and `end` (in this order) for inline
/// recording; `end == next` forces every recording through the runtime.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadTape {
    /// Buffer of CHUNK blocks (0 until the first block).
    pub buf: u64,
    /// First index of the current chunk.
    pub base: u64,
    /// Next index to hand out.
    pub next: u64,
    /// End of the current chunk.
    pub end: u64,
    /// Indices below this are in the file.
    pub flushed: u64,
}

impl ThreadTape {
    /// Whether blocks were handed out that are not yet in the file.
    fn has_unflushed(&self) -> bool {
        self.buf != 0 && self.next > self.flushed
    }

    /// The blocks not yet in the file and their offset in it, counted as
    /// written from now on.
    fn take_unflushed(&mut self) -> (&[u8], u64) {
        let from = (self.flushed - self.base) as usize * 32;
        let to = (self.next - self.base) as usize * 32;
        let offset = self.flushed * 32;
        self.flushed = self.next;
        // SAFETY: [from, to) lies inside the thread's CHUNK-block buffer,
        // mapped for as long as the thread context lives.
        let bytes =
            unsafe { core::slice::from_raw_parts((self.buf as *const u8).add(from), to - from) };
        (bytes, offset)
    }
}

/// Writes every thread's pending blocks (at process exit, `execve`, or a
/// fatal signal). Other threads may still be running; what they add after
/// this point is lost with the process anyway. Called on a guest thread.
pub fn flush_all() {
    let Some(r) = recorder() else { return };
    // SAFETY: guest threads in the runtime have their context installed.
    let me = unsafe { crate::context::current() };
    if me.other_process != 0 {
        // A vfork-style child shares our memory but not our threads, which
        // go on recording into their buffers: it writes only its own.
        r.flush(me);
    } else {
        writer::drain();
        crate::threads::for_each_context(|c| r.flush(c));
    }
    r.write_index_lines(true);
}

/// Whether this process has created record files (declared an input or
/// recorded a block); a process that has not writes nothing and has
/// nothing to report.
pub fn has_files() -> bool {
    recorder().is_some_and(|r| {
        !r.forked.load(Ordering::Relaxed)
            && (r.tape_fd.load(Ordering::Acquire) >= 0 || r.input_fd.load(Ordering::Acquire) >= 0)
    })
}

/// Flushes every thread's blocks from a signal handler about to let the
/// process die: the tape file is already open (see `next_chunk_for`), so
/// this only writes. Returns the number of blocks handed out.
pub fn flush_all_in_signal() -> u64 {
    let Some(r) = recorder() else { return 0 };
    let fd = r.tape_fd.load(Ordering::Acquire);
    let mut blocks = 0;
    // SAFETY: the signal interrupted a guest thread, whose context is
    // installed.
    let me = unsafe { crate::context::current() };
    // A vfork-style child writes only its own blocks (see `flush_all`).
    let only = (me.other_process != 0).then_some(me.self_addr);
    crate::threads::for_each_context(|c| {
        if only.is_some_and(|a| a != c.self_addr) {
            return;
        }
        if fd >= 0 {
            c.tape_ring.write_queued_in_signal(fd);
        }
        let t = &mut c.tape;
        if fd >= 0 && t.has_unflushed() {
            let (bytes, offset) = t.take_unflushed();
            // Nobody is left to tell about a failed write.
            let _ = sys::pwrite_all(fd, bytes, offset);
        }
        blocks = blocks.max(t.next);
    });
    r.write_index_lines(false);
    blocks
}

/// While `DG_DISABLE` is in force, inline recording must not record: make
/// every thread's chunk look full, so arithmetic takes the runtime path
/// (which honours the counter). The first block after re-enabling takes a
/// fresh chunk.
pub fn stop_inline_recording() {
    crate::threads::for_each_context(|c| c.tape.end = c.tape.next);
}

/// In a child after `fork`: the child records nothing (its blocks would
/// land on the parent's indices), and what the parent had queued or
/// buffered is the parent's to write.
pub fn after_fork_child(ctx: &mut ThreadCtx) {
    writer::after_fork_child();
    ctx.tape_ring.forget_queued();
    if let Some(r) = recorder() {
        r.forked.store(true, Ordering::Relaxed);
        r.input_lines.forget();
        r.output_lines.forget();
        // Nothing pending to write, and every block through `new_block`.
        ctx.tape.flushed = ctx.tape.next;
        ctx.tape.end = ctx.tape.next;
    }
}

/// Writes the calling thread's pending blocks (at thread exit).
pub fn flush_thread(ctx: &mut ThreadCtx) {
    if let Some(r) = recorder() {
        r.flush(ctx);
    }
}
