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
//! not clobber its child's tape). They are created all at once, relative to
//! the record directory opened and checked at start ([`crate::directory`]): the
//! tape with block 0, both index files empty, and the results of an
//! earlier evaluation (`dg-input-bars`, `dg-output-dots`, `dg-jacobian`)
//! removed. Index lines are written as they are declared ([`lines`]).

pub mod client;
pub mod lines;
pub mod math;
pub mod mode;
pub mod stream;
pub mod tape_limit;
pub mod tool;
pub mod writer;

use crate::context::ThreadCtx;
use crate::lock::Lock;
use crate::sys;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};
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
    /// The record directory, opened and checked at start.
    dir_fd: i32,
    /// The number of the `exec-N` subdirectory this program image records
    /// into (an earlier image of the process recorded into `DIR`), or 0.
    exec_dir: AtomicU32,
    /// `DGAD_TAPE_LIMIT` in blocks (`MAX_INDEX + 1` without one), and as
    /// given.
    limit_blocks: u64,
    limit_text: Vec<u8>,
    /// Set once the recording stops (a limit, a failed write): the writer
    /// thread writes no more.
    stopping: AtomicBool,
    tape_fd: AtomicI32,
    /// First index of the next chunk to hand out (index 0 is reserved).
    next_chunk: AtomicU64,
    /// `DG_DISABLE` counter: while positive, operations record nothing.
    pub disabled: AtomicI64,
    /// Set in the child of a `fork`, which records nothing: the record
    /// files are the parent's.
    forked: AtomicBool,
    /// Serialises file creation.
    files: Lock<()>,
    /// The index files.
    inputs: lines::IndexFile,
    outputs: lines::IndexFile,
    /// The directory this image's files go to (`DIR` or `DIR/exec-N`), or
    /// -1 before they are created.
    image_dir: AtomicI32,
    /// The tape as a compact stream: in memory and swept at exit
    /// (`DGAD_GRAD`), or in `dg-tape-compact` (`DGAD_TAPE_FORMAT=compact`).
    stream: Option<stream::StreamTape>,
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// The recorder, when recording.
pub fn recorder() -> Option<&'static Recorder> {
    RECORDER.get()
}

/// Checks that `dir` can hold the recording (creating it if needed, see
/// [`crate::directory::open`]) and arms the recorder, with the tape limit
/// `DGAD_TAPE_LIMIT` if given. Errors are for the user: they name the
/// directory or the setting.
///
/// With `grad` (`DGAD_GRAD`), the tape is kept in memory (at most
/// `tape_memory` bytes, `DGAD_TAPE_MEMORY`) and swept at exit; with
/// `tape_format` `compact` it is written to `dg-tape-compact` ([`stream`]).
pub fn init(dir: &[u8], settings: &crate::tools::RecordSettings<'_>) -> Result<(), String> {
    arm(dir, settings).map_err(|e| format!("record: {e}"))
}

fn arm(dir: &[u8], settings: &crate::tools::RecordSettings<'_>) -> Result<(), String> {
    let (tape_limit, grad, tape_memory) =
        (settings.tape_limit, settings.grad, settings.tape_memory);
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
    let limit_blocks = match tape_limit {
        None => MAX_INDEX + 1,
        Some(text) => (tape_limit::parse(text).ok_or_else(|| tape_limit::usage(text))? / 32)
            .min(MAX_INDEX + 1),
    };
    let compact = match settings.tape_format {
        None | Some(b"derivgrind") => false,
        Some(b"compact") => true,
        Some(v) => {
            return Err(format!(
                "DGAD_TAPE_FORMAT={} is not one of derivgrind, compact",
                String::from_utf8_lossy(v)
            ))
        }
    };
    let stream = match grad {
        None => {
            if tape_memory.is_some() {
                return Err(
                    "DGAD_TAPE_MEMORY is only read with DGAD_GRAD (the tape kept in memory)".into(),
                );
            }
            compact.then(stream::StreamTape::in_file).transpose()?
        }
        Some(g) => {
            if settings.tape_format.is_some() {
                return Err(
                    "DGAD_TAPE_FORMAT is not read with DGAD_GRAD (the tape in memory is compact, \
                     and a spilled one is dg-tape)"
                        .into(),
                );
            }
            Some(stream::StreamTape::in_memory(
                stream::Grad::parse(g)?,
                tape_memory,
                limit_blocks,
            )?)
        }
    };
    // Every file of the recording is created relative to this descriptor.
    let dir_fd = crate::fds::adopt(crate::directory::open(dir, &shown)?);
    let mut d = dir.to_vec();
    d.push(b'/');
    let _ = RECORDER.set(Recorder {
        dir: d,
        dir_fd,
        exec_dir: AtomicU32::new(0),
        limit_blocks,
        limit_text: tape_limit.unwrap_or_default().to_vec(),
        stopping: AtomicBool::new(false),
        tape_fd: AtomicI32::new(-1),
        next_chunk: AtomicU64::new(1),
        disabled: AtomicI64::new(0),
        forked: AtomicBool::new(false),
        files: Lock::new(()),
        inputs: lines::IndexFile::new(),
        outputs: lines::IndexFile::new(),
        image_dir: AtomicI32::new(-1),
        stream,
    });
    Ok(())
}

/// A short description of an errno value.
pub use crate::sys::errno_text;

impl Recorder {
    /// Whether operations on active data write blocks now (not inside
    /// `DG_DISABLE`, not in a forked child).
    pub fn records(&self) -> bool {
        self.disabled.load(Ordering::Relaxed) <= 0 && !self.forked.load(Ordering::Relaxed)
    }

    /// Whether the record files exist (created at the first declaration
    /// or tape chunk).
    pub fn files_created(&self) -> bool {
        self.tape_fd.load(Ordering::Acquire) >= 0
    }

    /// The tape's descriptor, creating the recording's files first if this
    /// is the first block or declaration.
    fn tape_file(&self) -> i32 {
        let fd = self.tape_fd.load(Ordering::Acquire);
        if fd >= 0 {
            return fd;
        }
        let _g = self.files.lock();
        let fd = self.tape_fd.load(Ordering::Acquire);
        if fd >= 0 {
            return fd;
        }
        self.create_files()
    }

    /// Where the files go, as shown in messages: `DIR/` or `DIR/exec-N/`.
    fn shown_dir(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.dir).into_owned();
        let n = self.exec_dir.load(Ordering::Relaxed);
        if n > 0 {
            s.push_str(&format!("exec-{n}/"));
        }
        s
    }

    /// Creates the tape (block 0) and the empty index files, removing the
    /// results of an earlier evaluation and the `exec-N` subdirectories of
    /// an earlier process. A directory an earlier image of this process
    /// recorded into (it `execve`d us) is left alone: this image records
    /// into `DIR/exec-2` (then `exec-3`, …). Returns the tape's descriptor.
    /// Under the `files` lock.
    fn create_files(&self) -> i32 {
        let identity = crate::directory::process_identity();
        let mut dirfd = self.dir_fd;
        let mut n = 1;
        while crate::directory::recorded_by(dirfd, &identity) {
            n += 1;
            let shown = format!("{}exec-{n}", String::from_utf8_lossy(&self.dir));
            let sub = crate::directory::subdirectory(self.dir_fd, &format!("exec-{n}"), &shown)
                .unwrap_or_else(|e| self.fail_unrecorded(&e));
            if dirfd != self.dir_fd {
                crate::directory::close_dir(dirfd);
            }
            dirfd = sub;
        }
        if n == 1 {
            crate::directory::remove_exec_dirs(dirfd);
        } else {
            dirfd = crate::fds::adopt(dirfd);
            self.exec_dir.store(n, Ordering::Relaxed);
            crate::dgad_eprintln!(
                "record: an earlier program image of process {} recorded into {} before its \
                 execve; this one records into {}",
                crate::init::pid(),
                String::from_utf8_lossy(&self.dir),
                self.shown_dir()
            );
        }
        self.image_dir.store(dirfd, Ordering::Release);
        let dir = self.shown_dir();
        let discard = crate::directory::tape_discarded(dirfd);
        if let Err((e, name)) = crate::directory::remove_stale(dirfd, discard) {
            self.fail_unrecorded(&format!(
                "cannot remove the earlier {dir}{name}: {}",
                errno_text(e)
            ));
        }
        let create = |name: &str, contents: &[u8]| {
            crate::directory::create(dirfd, name, contents).map_or_else(
                |e| self.fail_unrecorded(&format!("cannot create {dir}{name}: {}", errno_text(e))),
                crate::fds::adopt,
            )
        };
        let mark = create(crate::directory::PROCESS_MARK, &identity);
        // SAFETY: closing the descriptor just created.
        unsafe { sys::syscall3(libc::SYS_close, mark as u64, 0, 0) };
        crate::fds::forget(mark);
        let input = create(file_name::INPUT_INDICES, b"");
        self.inputs.fd.store(input, Ordering::Release);
        let output = create(file_name::OUTPUT_INDICES, b"");
        self.outputs.fd.store(output, Ordering::Release);
        // The tape always starts with the all-zero block 0; it is created
        // last, so a tape in the directory means the index files are ours.
        // A compact stream (in memory, or `dg-tape-compact`, created by
        // `prepare`) holds block 0 and the blocks; `dg-tape` exists only
        // once they spill (the stale one is gone above).
        if let Some(m) = &self.stream {
            if let Err(e) = m.prepare(dirfd, discard) {
                self.fail_unrecorded(&format!("{dir}: {e}"));
            }
        }
        let tape = if discard || self.stream.is_some() {
            crate::directory::open_null().map_or_else(
                |e| self.fail_unrecorded(&format!("cannot open /dev/null: {}", errno_text(e))),
                crate::fds::adopt,
            )
        } else {
            create(file_name::TAPE, &[0u8; 32])
        };
        self.tape_fd.store(tape, Ordering::Release);
        tape
    }

    /// Replaces the tape's descriptor (a tape kept in memory spilled).
    fn use_tape_fd(&self, fd: i32) {
        self.tape_fd.store(fd, Ordering::Release);
    }

    /// The directory this image's files go to.
    fn image_dir(&self) -> i32 {
        self.image_dir.load(Ordering::Acquire)
    }

    /// Indices handed out so far in chunks (the tape's length once every
    /// chunk is written), within the tape limit.
    fn blocks_handed_out(&self) -> u64 {
        self.next_chunk
            .load(Ordering::Acquire)
            .min(self.limit_blocks)
    }

    /// Stops the client before anything was recorded.
    fn fail_unrecorded(&self, what: &str) -> ! {
        crate::dgad_eprintln!("record: {}; stopping (exit 125)", what);
        sys::exit_group(125)
    }

    /// What a stopped recording leaves: the index files' contents (the
    /// declarations held back are written first, as far as they can be:
    /// a file whose write fails keeps its whole lines, and says how many).
    fn declared(&self) -> String {
        let _ = self.inputs.flush();
        let _ = self.outputs.flush();
        format!(
            "{} lists the {} inputs and {} the {} outputs declared",
            file_name::INPUT_INDICES,
            self.inputs.lines(),
            file_name::OUTPUT_INDICES,
            self.outputs.lines()
        )
    }

    /// Stops the client after a recording failure other than a write.
    fn fail(&self, what: &str) -> ! {
        self.stopping.store(true, Ordering::Release);
        crate::dgad_eprintln!(
            "record: {}; stopping (exit 125): the recording is incomplete, {} holds only the \
             blocks written so far; {}",
            what,
            file_name::TAPE,
            self.declared()
        );
        sys::exit_group(125)
    }

    /// Writes `buf` at `offset` of the tape file `fd`, or stops the client.
    fn pwrite_all(&self, fd: i32, buf: &[u8], offset: u64) {
        if let Err((errno, reached)) = sys::pwrite_all(fd, buf, offset) {
            self.tape_write_failed(fd, errno, reached);
        }
    }

    /// A write of the tape failed at byte `reached` (a full disk, a file
    /// size limit): cut the tape to the blocks below the first one not in
    /// the file — the failed write's, or one still in a buffer — say
    /// exactly what is usable, and stop.
    fn tape_write_failed(&self, fd: i32, errno: i64, mut reached: u64) -> ! {
        if self.stopping.swap(true, Ordering::AcqRel) {
            // Another thread reports; the process is about to end.
            loop {
                sys::sched_yield();
            }
        }
        // A tape kept in memory: its region belongs below the chunks that
        // went to the file.
        if let Some(m) = &self.stream {
            if m.write_out().is_err() {
                reached = 0;
            }
        }
        let mut lowest = reached;
        crate::threads::for_each_context(|c| {
            if c.rec().tape.has_unflushed() {
                lowest = lowest.min(c.rec().tape.flushed * 32);
            }
            if let Some(off) = c.rec().tape_ring.lowest_queued(reached) {
                lowest = lowest.min(off);
            }
        });
        let blocks = lowest / 32;
        // SAFETY: truncating our own file.
        unsafe { sys::syscall3(libc::SYS_ftruncate, fd as u64, blocks * 32, 0) };
        crate::dgad_eprintln!(
            "record: writing {}{} failed: {}; stopping (exit 125). Usable: {}, cut to its first \
             {} blocks, all of them written (later ones are lost), and the index files: {} (every \
             declaration made); a variable at index {} or above cannot be evaluated (dg-eval \
             says it is beyond the tape)",
            self.shown_dir(),
            file_name::TAPE,
            errno_text(errno),
            file_name::TAPE,
            blocks,
            self.declared(),
            blocks
        );
        sys::exit_group(125)
    }

    /// The tape limit (`DGAD_TAPE_LIMIT`, or the 2^32 blocks of 4-byte
    /// indices) is reached: complete the files with every block recorded so
    /// far, say so, and stop with exit status 125. Normal context, on a guest
    /// thread whose own blocks are written or queued.
    fn stop_at_limit(&self) -> ! {
        static REACHED: AtomicBool = AtomicBool::new(false);
        if REACHED.swap(true, Ordering::AcqRel) {
            // Another thread completes the files and ends the process.
            loop {
                sys::sched_yield();
            }
        }
        writer::drain();
        crate::threads::for_each_context(|c| self.flush(c));
        if let Some(m) = &self.stream {
            if let Err(e) = m.write_out() {
                crate::dgad_eprintln!(
                    "record: writing the tape kept in memory to {}{} failed: {}",
                    self.shown_dir(),
                    file_name::TAPE,
                    errno_text(e)
                );
            }
        }
        self.stopping.store(true, Ordering::Release);
        let limit = if self.limit_text.is_empty() {
            "the tape reached 2^32 blocks (128 GiB), the limit of dgad's 4-byte shadow indices"
                .to_string()
        } else {
            format!(
                "the tape reached DGAD_TAPE_LIMIT={}",
                String::from_utf8_lossy(&self.limit_text)
            )
        };
        let blocks = self
            .next_chunk
            .load(Ordering::Acquire)
            .min(self.limit_blocks);
        crate::dgad_eprintln!(
            "record: {}; stopping the program before its end (exit 125). {}{} holds every block \
             recorded ({} or fewer), {}; outputs the program had not declared yet are missing",
            limit,
            self.shown_dir(),
            file_name::TAPE,
            blocks,
            self.declared()
        );
        crate::stats::report();
        sys::exit_group(125)
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
        self.tape_file();
        let (file, name) = if which == 0 {
            (&self.inputs, file_name::INPUT_INDICES)
        } else {
            (&self.outputs, file_name::OUTPUT_INDICES)
        };
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
        if let Err(e) = file.append(&line[at..]) {
            self.declarations_failed(name, file, e);
        }
    }

    /// Writing index file `name` failed with `errno`: say what it holds
    /// (whole lines) and stop.
    fn declarations_failed(&self, name: &str, file: &lines::IndexFile, errno: i64) -> ! {
        self.stopping.store(true, Ordering::Release);
        crate::dgad_eprintln!(
            "record: writing {}{} failed: {}; stopping (exit 125). The recording cannot be \
             evaluated: {} lists only the first {} declarations, and {} holds only the blocks \
             written so far",
            self.shown_dir(),
            name,
            errno_text(errno),
            name,
            file.lines(),
            file_name::TAPE
        );
        sys::exit_group(125)
    }

    /// Writes the declarations held back in the index files' buffers, or
    /// stops as a failed declaration does (normal context): at every new
    /// chunk of a thread's tape, so that a process killed with `SIGKILL`
    /// leaves the declarations of every block its file holds, and when
    /// the recording ends.
    pub fn write_declarations(&self) {
        for (file, name) in [
            (&self.inputs, file_name::INPUT_INDICES),
            (&self.outputs, file_name::OUTPUT_INDICES),
        ] {
            if let Err(e) = file.flush() {
                self.declarations_failed(name, file, e);
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
        let t = &mut ctx.rec().tape;
        if t.next >= t.end || index1.max(index2) >= t.next {
            if self.forked.load(Ordering::Relaxed) {
                return 0;
            }
            self.next_chunk_for(ctx);
        }
        let t = &mut ctx.rec().tape;
        let index = t.next;
        if index > MAX_INDEX {
            self.stop_at_limit();
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
        self.tape_file();
        self.write_declarations();
        // A vfork-style child (its own process sharing our memory) writes
        // for itself: a writer it started would die with its `execve`.
        let other_process = ctx.other_process != 0;
        let state = ctx.rec();
        if other_process || !writer::hand_off(&mut state.tape, &state.tape_ring) {
            // A compact piece is encoded in the thread's own buffer, so
            // that the writer thread may encode another meanwhile.
            let scratch = if self.encodes() {
                ctx.rec().tape_ring.scratch()
            } else {
                None
            };
            self.flush_with(ctx, scratch);
        }
        if ctx.rec().tape.buf == 0 {
            let Some(buf) = ctx.rec().tape_ring.map() else {
                self.fail("cannot map a tape buffer");
            };
            ctx.rec().tape.buf = buf;
        }
        let base = self.next_chunk.fetch_add(CHUNK, Ordering::AcqRel);
        if base >= self.limit_blocks {
            self.stop_at_limit();
        }
        ctx.rec().tape.base = base;
        ctx.rec().tape.next = base;
        // The last chunk ends at the limit, so the tape never exceeds it.
        ctx.rec().tape.end = (base + CHUNK).min(self.limit_blocks);
        ctx.rec().tape.flushed = base;
    }

    /// Writes `bytes` at `offset` of the tape (the writer thread's part).
    /// `scratch`: the writer's own buffer for encoding a compact piece
    /// (`compact::MAX_PIECE_BYTES`), 0 if it has none.
    fn write_tape(&self, bytes: &[u8], offset: u64, scratch: u64) {
        if self.stopping.load(Ordering::Acquire) {
            // The recording stopped and the tape was cut: write nothing more.
            return;
        }
        self.store_with(bytes, offset, (scratch != 0).then_some(scratch));
    }

    /// Puts `bytes` at `offset` of the tape: into the file, or into the
    /// compact stream as far as it reaches and the rest into the file
    /// (which the first such write creates: the spill). Compact pieces are
    /// encoded in `own_scratch` if given (a buffer only the caller uses),
    /// else in the stream's own buffer under its lock.
    fn store_with(&self, bytes: &[u8], offset: u64, own_scratch: Option<u64>) {
        let (rest, at) = match &self.stream {
            Some(m) => m.store(bytes, offset, own_scratch),
            None => (bytes, offset),
        };
        if rest.is_empty() {
            return;
        }
        let fd = match &self.stream {
            Some(m) => m.spill(self),
            None => self.tape_fd.load(Ordering::Acquire),
        };
        self.pwrite_all(fd, rest, at);
    }

    /// Whether the tape goes into a compact stream: each block there costs
    /// an encoding, which a recording thread had better share with the
    /// writer thread than wait for ([`writer::hand_off`]).
    pub(super) fn encodes(&self) -> bool {
        self.stream.is_some()
    }

    /// [`Recorder::store_with`] from a signal handler (the process is dying): no
    /// message, and a failed write ignored (nobody is left to tell).
    /// A tape kept in memory takes nothing here (its stream grows under a
    /// lock): the blocks go to the file, below which the stream is written
    /// out ([`stream::write_out_in_signal`]).
    fn store_in_signal(&self, bytes: &[u8], offset: u64) {
        let fd = match &self.stream {
            Some(m) => m.file_fd().unwrap_or(-1),
            None => self.tape_fd.load(Ordering::Acquire),
        };
        if fd >= 0 {
            let _ = sys::pwrite_all(fd, bytes, offset);
        }
    }

    /// Writes the thread's blocks not yet in the file.
    pub fn flush(&self, ctx: &mut ThreadCtx) {
        self.flush_with(ctx, None);
    }

    /// [`Recorder::flush`], encoding compact pieces in `own_scratch` (the
    /// thread's own buffer) if given.
    fn flush_with(&self, ctx: &mut ThreadCtx, own_scratch: Option<u64>) {
        if !ctx.rec().tape.has_unflushed() {
            return;
        }
        self.tape_file();
        let (bytes, offset) = ctx.rec().tape.take_unflushed();
        self.store_with(bytes, offset, own_scratch);
    }
}

/// Per-thread tape state, in the thread context. Translated code reads and
/// advances `buf`, `base`, `next` and `end` (in this order) for inline
/// recording; `end == next` forces every recording through the runtime.
/// It is the first field of [`ThreadState`]: translated code finds it at
/// the start of the context's tool area.
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

/// Record mode's per-thread state, in the context's tool area
/// (`context::ToolArea`; all zeros is a fresh thread's).
#[repr(C)]
pub struct ThreadState {
    /// This thread's chunk of the tape (first: inline code reaches it).
    pub tape: ThreadTape,
    /// This thread's tape buffers.
    pub tape_ring: writer::TapeRing,
    /// What derivative rules spanning two instructions remember between
    /// them (the rounding trick's sums, the sign-clearing shift pair).
    pub rule_memory: crate::ad::apply::RuleMemory,
}

const _: () = {
    assert!(core::mem::size_of::<ThreadState>() <= crate::context::TOOL_AREA_BYTES);
    assert!(core::mem::align_of::<ThreadState>() <= 64);
    assert!(core::mem::offset_of!(ThreadState, tape) == 0);
};

/// Record mode's view of a context: its [`ThreadState`].
pub trait RecordState {
    /// The state, to change.
    fn rec(&mut self) -> &mut ThreadState;
    /// The state, to read.
    fn rec_ref(&self) -> &ThreadState;
}

impl RecordState for ThreadCtx {
    fn rec(&mut self) -> &mut ThreadState {
        // SAFETY: the tool area is 64-byte aligned and large enough (checked
        // above); all-zero bytes are a valid ThreadState (a fresh context),
        // and only record mode gives the area a type.
        unsafe { &mut *(self.tool.0.as_mut_ptr() as *mut ThreadState) }
    }

    fn rec_ref(&self) -> &ThreadState {
        // SAFETY: as in `rec`.
        unsafe { &*(self.tool.0.as_ptr() as *const ThreadState) }
    }
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

/// The program image ends (record mode's `Tool::process_ending`): the
/// tape is completed, and with `DGAD_GRAD` swept.
pub fn process_ending(how: crate::tool::Ending) {
    match recorder() {
        Some(r) if has_files() => match &r.stream {
            Some(m) => stream::finish(r, m, how),
            None => flush_all_files(),
        },
        _ => {}
    }
}

/// Writes every thread's pending blocks (at process exit, `execve`, or a
/// fatal signal). Other threads may still be running; what they add after
/// this point is lost with the process anyway. Called on a guest thread.
pub fn flush_all_files() {
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
    r.write_declarations();
}

/// Whether this process has created record files (declared an input or
/// recorded a block); a process that has not writes nothing and has
/// nothing to report.
pub fn has_files() -> bool {
    recorder().is_some_and(|r| {
        !r.forked.load(Ordering::Relaxed) && r.tape_fd.load(Ordering::Acquire) >= 0
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
            c.rec()
                .tape_ring
                .write_queued_in_signal(|bytes, offset| r.store_in_signal(bytes, offset));
        }
        let t = &mut c.rec().tape;
        if fd >= 0 && t.has_unflushed() {
            let (bytes, offset) = t.take_unflushed();
            r.store_in_signal(bytes, offset);
        }
        blocks = blocks.max(t.next);
    });
    // A tape kept in memory goes below the chunks written above.
    stream::write_out_in_signal();
    // The held-back declarations; a failed write leaves whole lines, and
    // the process is ending with its signal anyway.
    let _ = r.inputs.flush_in_signal();
    let _ = r.outputs.flush_in_signal();
    blocks
}

/// While `DG_DISABLE` is in force, inline recording must not record: make
/// every thread's chunk look full, so arithmetic takes the runtime path
/// (which honours the counter). The first block after re-enabling takes a
/// fresh chunk.
pub fn stop_inline_recording() {
    crate::threads::for_each_context(|c| c.rec().tape.end = c.rec().tape.next);
}

/// In a child after `fork`: the child records nothing (its blocks would
/// land on the parent's indices), and what the parent had queued is the
/// parent's to write.
pub fn after_fork_child(ctx: &mut ThreadCtx) {
    writer::after_fork_child();
    ctx.rec().tape_ring.forget_queued();
    if let Some(r) = recorder() {
        r.forked.store(true, Ordering::Relaxed);
        r.inputs.forget_pending();
        r.outputs.forget_pending();
        // Nothing pending to write, and every block through `new_block`.
        ctx.rec().tape.flushed = ctx.rec().tape.next;
        ctx.rec().tape.end = ctx.rec().tape.next;
    }
}

/// Writes the calling thread's pending blocks (at thread exit).
pub fn flush_thread(ctx: &mut ThreadCtx) {
    if let Some(r) = recorder() {
        r.flush(ctx);
    }
}
