//! The tape as a compact stream (`tape_format::compact`, decision 40):
//! kept in the process's memory and swept there at exit (`DGAD_GRAD`: a
//! gradient without a tape file), or written to `dg-tape-compact`
//! (`DGAD_TAPE_FORMAT=compact`: a quarter of the bytes of `dg-tape`).
//!
//! The threads record 32-byte blocks into their chunk buffers as always;
//! whoever writes a chunk (the writer thread, or the thread itself) encodes
//! it into pieces and appends them to the stream, under a lock, so the
//! stream is whole pieces up to `committed` at every moment. With
//! `DGAD_GRAD` the stream lives in an anonymous shared-memory file
//! (`memfd`, written with `pwrite`: whole pages need no zeroing, unlike
//! fresh anonymous memory, decision 37), mapped; at exit the reverse sweep
//! runs over it (`evaluator::evaluate`, on the calling thread) and only the
//! results are written: `dg-input-bars`, or `dg-jacobian`. With
//! `DGAD_TAPE_FORMAT=compact` it is `dg-tape-compact` in the record
//! directory, whose header gets the number of entries at exit.
//!
//! The memory stream holds the memory budget (`DGAD_TAPE_MEMORY`, or half
//! the memory available at start); a file stream grows until a write
//! fails. Blocks beyond either *spill*: the temporary `dg-tape` is created
//! and they go to it as 32-byte blocks at their offsets; at the end the
//! stream's pieces are decoded into it, it is renamed to `dg-tape`, and a
//! gradient is swept from there (one line on stderr says so). A program
//! that dies of a signal, reaches the tape limit or fails a write leaves
//! the whole tape in `dg-tape` as in Derivgrind's format: a dying thread
//! writes its blocks there directly (it may not take the lock), and the
//! stream is decoded below them even in signal context (the file's names
//! are prepared at start, and pieces are decoded a few blocks at a time on
//! the stack).

use super::{recorder, Recorder};
use crate::directory::PreparedFile;
use crate::lock::Lock;
use crate::sys;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::OnceLock;
use tape_format::{compact, file_name, Block};

/// What `DGAD_GRAD` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grad {
    /// Every output seeded with 1: `dg-input-bars`, one value per input.
    Ones,
    /// The seeds of `dg-output-bars` (a row per output, a column per
    /// direction), read at exit: `dg-input-bars`.
    Seeds,
    /// Each output seeded alone: `dg-jacobian`, a row per output.
    Jacobian,
}

impl Grad {
    /// The value of `DGAD_GRAD`.
    pub fn parse(v: &[u8]) -> Result<Grad, String> {
        match v {
            b"ones" => Ok(Grad::Ones),
            b"seeds" => Ok(Grad::Seeds),
            b"jacobian" => Ok(Grad::Jacobian),
            _ => Err(format!(
                "DGAD_GRAD={} is not one of ones, seeds, jacobian",
                String::from_utf8_lossy(v)
            )),
        }
    }
}

/// The tape of a recording as a compact stream.
pub struct StreamTape {
    /// What to compute at exit (`DGAD_GRAD`); `None` for a compact file.
    pub grad: Option<Grad>,
    /// The stream's file: the `memfd` with `DGAD_GRAD`, the temporary
    /// `dg-tape-compact` otherwise (-1 until the record files are created,
    /// and for a discarded tape).
    stream_fd: AtomicI32,
    /// Address of the memory stream (the `memfd` mapped shared); 0 for a
    /// file.
    base: u64,
    /// Bytes the stream may take.
    capacity: u64,
    /// Where the budget came from, for messages.
    budget: String,
    /// Serialises stores: the stream grows by whole pieces, in order, so
    /// that `committed` always ends a valid stream. Normal context only.
    appending: Lock<Appender>,
    /// Bytes of the stream written in full (header and whole pieces).
    committed: AtomicU64,
    /// Set when tape bytes did not fit: they went to the tape file.
    spilled: AtomicBool,
    /// The tape file a spill (or an early end) writes: `dg-tape` of the
    /// directory the image records into, prepared when the recording's
    /// files are created.
    file: OnceLock<PreparedFile>,
    /// Its descriptor once created (-1 before).
    file_fd: AtomicI32,
    /// Set once the region was written to the file (at most once).
    written: AtomicBool,
    /// A compact file: its names, prepared with the record files.
    stream_file: OnceLock<PreparedFile>,
    /// The tape is discarded (`dg-tape` is the user's link to /dev/null).
    discarding: AtomicBool,
}

/// The state of the stream's growth, under [`StreamTape::appending`].
struct Appender {
    /// Bytes of the stream so far.
    used: u64,
    /// Address of a buffer of `compact::MAX_PIECE_BYTES`
    /// bytes to encode a piece into.
    scratch: u64,
    /// Set once a piece did not fit: every later block goes to the file.
    full: bool,
    /// One past the last index of the pieces stored.
    end: u64,
}

/// `MemAvailable` of `/proc/meminfo` in bytes.
fn mem_available() -> Option<u64> {
    let text = crate::directory::read_file(libc::AT_FDCWD, "/proc/meminfo").ok()?;
    let text = String::from_utf8(text).ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A buffer for one piece (the largest), mapped for the life of the process.
pub fn scratch() -> Result<u64, String> {
    sys::map_anon(
        compact::MAX_PIECE_BYTES,
        libc::PROT_READ | libc::PROT_WRITE,
        0,
        false,
    )
    .ok_or_else(|| "cannot map a buffer for the tape's pieces".to_string())
}

impl StreamTape {
    /// A compact tape file (`DGAD_TAPE_FORMAT=compact`), created with the
    /// record files ([`StreamTape::prepare`]).
    pub fn in_file() -> Result<StreamTape, String> {
        StreamTape::new(None, -1, 0, u64::MAX, String::new())
    }

    /// The fields every stream starts with: the header written (or to be
    /// written by [`StreamTape::prepare`]), nothing appended.
    fn new(
        grad: Option<Grad>,
        stream_fd: i32,
        base: u64,
        capacity: u64,
        budget: String,
    ) -> Result<StreamTape, String> {
        let header = compact::HEADER_BYTES as u64;
        Ok(StreamTape {
            grad,
            stream_fd: AtomicI32::new(stream_fd),
            base,
            capacity,
            budget,
            appending: Lock::new(Appender {
                used: header,
                scratch: scratch()?,
                full: false,
                end: 0,
            }),
            committed: AtomicU64::new(header),
            spilled: AtomicBool::new(false),
            file: OnceLock::new(),
            file_fd: AtomicI32::new(-1),
            written: AtomicBool::new(false),
            stream_file: OnceLock::new(),
            discarding: AtomicBool::new(false),
        })
    }

    /// Reserves the memory stream: `budget` bytes (`DGAD_TAPE_MEMORY`) or
    /// half the available memory, at most what `limit_blocks` blocks take.
    pub fn in_memory(
        grad: Grad,
        budget: Option<&[u8]>,
        limit_blocks: u64,
    ) -> Result<StreamTape, String> {
        let (bytes, shown) = match budget {
            Some(text) => (
                super::tape_limit::parse(text).ok_or_else(|| {
                    format!(
                        "DGAD_TAPE_MEMORY={} is not a size (bytes with an optional K, M, G or T)",
                        String::from_utf8_lossy(text)
                    )
                })?,
                format!("DGAD_TAPE_MEMORY={}", String::from_utf8_lossy(text)),
            ),
            None => {
                let available = mem_available().unwrap_or(1 << 30);
                (
                    available / 2,
                    "half the memory available at start".to_string(),
                )
            }
        };
        // At least the header and one piece fit.
        let capacity = bytes
            .max(super::CHUNK * 32)
            .min(limit_blocks.saturating_mul(33).max(super::CHUNK * 32))
            .next_multiple_of(4096);
        let len = capacity;
        let memfd = sys::memfd_create(b"dgad-tape\0")
            .and_then(|fd| {
                sys::ftruncate(fd, len).inspect_err(|_| sys::close(fd))?;
                Ok(fd)
            })
            .map_err(|e| {
                format!(
                    "cannot make a memory file of {len} bytes for the tape ({shown}): {}",
                    sys::errno_text(e)
                )
            })?;
        let memfd = crate::fds::adopt(memfd);
        let base = sys::map_shared(memfd, len as usize)
            .ok_or_else(|| format!("cannot map {len} bytes of memory for the tape ({shown})"))?;
        sys::pwrite_all(memfd, &compact::header(0), 0).map_err(|(e, _)| {
            format!(
                "cannot write to the memory file for the tape: {}",
                sys::errno_text(e)
            )
        })?;
        StreamTape::new(Some(grad), memfd, base, capacity, shown)
    }

    /// Appends the blocks `bytes` (tape bytes at `offset`: whole blocks)
    /// to the stream as far as they fit; returns the rest and its offset
    /// (empty when all of it fit). Normal context: a signal handler sends
    /// its blocks to the file (`Recorder::store_in_signal`). A failed
    /// write (the memory file could not grow: memory is short) sends the
    /// rest to the tape file as well.
    ///
    /// With `own_scratch` (a buffer of `compact::MAX_PIECE_BYTES` that only
    /// the caller uses: the writer thread's, or a recording thread's own)
    /// the pieces are encoded outside the lock, while another thread
    /// appends; without, in the shared buffer under the lock.
    pub fn store<'a>(
        &self,
        bytes: &'a [u8],
        offset: u64,
        own_scratch: Option<u64>,
    ) -> (&'a [u8], u64) {
        let fd = self.stream_fd.load(Ordering::Acquire);
        if fd < 0 {
            return (bytes, offset);
        }
        let mut done = 0usize;
        while done < bytes.len() {
            let n = ((bytes.len() - done) / 32).min(compact::PIECE_ENTRIES);
            let first = (offset + done as u64) / 32;
            // SAFETY: chunk buffers hold whole, 8-byte aligned blocks
            // (`Block` is four 8-byte fields).
            let blocks =
                unsafe { core::slice::from_raw_parts(bytes[done..].as_ptr().cast::<Block>(), n) };
            let encode = |scratch: u64| {
                // SAFETY: a scratch buffer is mapped for the life of the
                // process and holds `compact::MAX_PIECE_BYTES`; the shared
                // one is used under the lock only, an own one by its owner.
                let out = unsafe {
                    core::slice::from_raw_parts_mut(scratch as *mut u8, compact::MAX_PIECE_BYTES)
                };
                let len = compact::encode_piece(first, blocks, out);
                &out[..len]
            };
            let early = own_scratch.map(encode);
            let mut a = self.appending.lock();
            if a.full {
                break;
            }
            let piece = match early {
                Some(piece) => piece,
                None => encode(a.scratch),
            };
            if a.used + piece.len() as u64 > self.capacity
                || sys::pwrite_all(fd, piece, a.used).is_err()
            {
                a.full = true;
                break;
            }
            a.used += piece.len() as u64;
            a.end = a.end.max(first + n as u64);
            self.committed.store(a.used, Ordering::Release);
            done += n * 32;
        }
        (&bytes[done..], offset + done as u64)
    }

    /// Whether tape bytes went to the file.
    pub fn spilled(&self) -> bool {
        self.spilled.load(Ordering::Acquire)
    }

    /// Notes the directory the recording's files go to (when they are
    /// created, in normal context); a compact file is created there, unless
    /// the tape is discarded (`discard`: its blocks then go to the tape's
    /// descriptor, /dev/null).
    pub fn prepare(&self, dirfd: i32, discard: bool) -> Result<(), String> {
        let _ = self.file.set(PreparedFile::new(dirfd, file_name::TAPE));
        if self.grad.is_some() {
            return Ok(());
        }
        if discard {
            self.discarding.store(true, Ordering::Release);
            return Ok(());
        }
        // Created under its name at once, like `dg-tape`: a process that
        // is killed leaves the pieces written so far readable.
        let _ = self
            .stream_file
            .set(PreparedFile::new(dirfd, file_name::COMPACT_TAPE));
        let fd = crate::directory::create(dirfd, file_name::COMPACT_TAPE, &compact::header(0))
            .map_err(|e| {
                format!(
                    "cannot create {}: {}",
                    file_name::COMPACT_TAPE,
                    sys::errno_text(e)
                )
            })?;
        self.stream_fd
            .store(crate::fds::adopt(fd), Ordering::Release);
        Ok(())
    }

    /// Whether the tape is discarded.
    pub fn discarding(&self) -> bool {
        self.discarding.load(Ordering::Acquire)
    }

    /// The temporary tape file, created on first use (one of the runtime's
    /// descriptors). Signal-safe. One caller creates it while the others
    /// wait: two creating it at once would each replace the other's file
    /// (`PreparedFile::create` removes a leftover of its name), and blocks
    /// written through the loser's descriptor would be lost. A wait that
    /// does not end (the creator is the thread a signal handler
    /// interrupted) gives up with `EAGAIN`.
    pub(super) fn file_fd(&self) -> Result<i32, i64> {
        const NONE: i32 = -1;
        const CREATING: i32 = -2;
        let mut spins = 0u32;
        loop {
            match self
                .file_fd
                .compare_exchange(NONE, CREATING, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(CREATING) if spins < 1_000_000 => {
                    spins += 1;
                    sys::sched_yield();
                }
                Err(CREATING) => return Err(libc::EAGAIN as i64),
                Err(fd) => return Ok(fd),
            }
        }
        let created = self
            .file
            .get()
            .ok_or(libc::ENOENT as i64)
            .and_then(|file| file.create());
        match created {
            Ok(fd) => {
                let fd = crate::fds::adopt(fd);
                self.file_fd.store(fd, Ordering::Release);
                Ok(fd)
            }
            Err(e) => {
                self.file_fd.store(NONE, Ordering::Release);
                Err(e)
            }
        }
    }

    /// Bytes beyond the stream: they go to the tape file, which becomes the
    /// recorder's tape; returns its descriptor. Every caller gets the file's
    /// descriptor, created by the first of them, also a thread that spills
    /// while another is still creating it (`file_fd` settles that race);
    /// the first says so on stderr. A discarded tape: the recorder's
    /// descriptor (/dev/null). Normal context, under no lock.
    pub fn spill(&self, r: &Recorder) -> i32 {
        if self.discarding() {
            return r.tape_fd.load(Ordering::Acquire);
        }
        let what = || {
            if self.grad.is_some() {
                format!(
                    "the memory DGAD_GRAD may keep it in ({}, {} bytes)",
                    self.budget, self.capacity
                )
            } else {
                format!("what {} could take", file_name::COMPACT_TAPE)
            }
        };
        match self.file_fd() {
            Ok(fd) => {
                if !self.spilled.swap(true, Ordering::AcqRel) {
                    r.use_tape_fd(fd);
                    crate::dgad_eprintln!(
                        "record: the tape outgrew {}; the rest goes to {}{} as 32-byte blocks{}",
                        what(),
                        r.shown_dir(),
                        file_name::TAPE,
                        if self.grad.is_some() {
                            ", and the gradient is swept from there at exit"
                        } else {
                            ", which holds the whole tape at exit"
                        }
                    );
                }
                fd
            }
            Err(e) => r.fail(&format!(
                "the tape outgrew {}, and {}{} cannot be created: {}",
                what(),
                r.shown_dir(),
                file_name::TAPE,
                sys::errno_text(e)
            )),
        }
    }

    /// Writes the blocks of the stream's pieces to the tape file at their
    /// offsets and renames it to `dg-tape`: the whole tape is then in the
    /// file (blocks the stream does not hold were written there by their
    /// threads or the writer). Once; signal-safe: pieces are decoded a few
    /// blocks at a time on the stack.
    pub fn write_out(&self) -> Result<(), i64> {
        if self.written.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        if self.discarding() {
            return Ok(());
        }
        let fd = self.file_fd()?;
        let end = self.committed.load(Ordering::Acquire) as usize;
        let base = if self.base != 0 {
            self.base
        } else {
            // A compact file: mapped to be read (a system call, no allocation).
            let stream_fd = self.stream_fd.load(Ordering::Acquire);
            match sys::map_shared(stream_fd, end.max(1)) {
                Some(b) if stream_fd >= 0 => b,
                _ => return Err(libc::ENOMEM as i64),
            }
        };
        // SAFETY: the stream is mapped (for the life of the process, or
        // just above) and its first `committed` bytes are whole pieces, no
        // longer written.
        let stream = unsafe { core::slice::from_raw_parts(base as *const u8, end) };
        let mut at = compact::HEADER_BYTES;
        const BATCH: usize = 32;
        let mut out = [0u8; BATCH * 32];
        while let Some(piece) = compact::Piece::read_header(stream, at) {
            let mut entries = piece.entries(stream);
            let mut index = piece.first;
            loop {
                let mut n = 0;
                for b in entries.by_ref().take(BATCH) {
                    out[n * 32..n * 32 + 32].copy_from_slice(&b.to_le_bytes());
                    n += 1;
                }
                if n == 0 {
                    break;
                }
                sys::pwrite_all(fd, &out[..n * 32], index * 32).map_err(|(e, _)| e)?;
                index += n as u64;
            }
            at = piece.next();
        }
        self.file.get().ok_or(libc::ENOENT as i64)?.publish()?;
        // The compact file is not the tape any more.
        if let Some(f) = self.stream_file.get() {
            f.remove_target();
        }
        Ok(())
    }

    /// Completes a compact file: the number of entries it spans into its
    /// header (as far as its blocks reach, as `dg-tape` would; 0, the
    /// pieces say, when `open` because the image may go on recording).
    /// Normal context.
    fn complete_stream(&self, open: bool) -> Result<(), i64> {
        let a = self.appending.lock();
        let fd = self.stream_fd.load(Ordering::Acquire);
        let entries = if open { 0 } else { a.end.max(1) };
        sys::pwrite_all(fd, &compact::header(entries), 0).map_err(|(e, _)| e)
    }

    /// The stream as a tape to sweep, spanning `blocks` indices, faulted in
    /// for reading at once (as `dg-eval` maps its tape).
    fn tape(&self, blocks: u64) -> Result<tape_format::Tape, tape_format::FormatError> {
        let len = self.committed.load(Ordering::Acquire) as usize;
        sys::populate_read(self.base, len);
        // SAFETY: the region is mapped for the life of the process; the
        // recording stopped before the sweep (`stop_recording`), so nothing
        // is appended to its first `committed` bytes any more.
        unsafe {
            tape_format::Tape::from_compact_memory(
                self.base as *const u8,
                len,
                blocks,
                "the tape in memory",
            )
        }
    }
}

/// The end of a `DGAD_GRAD` recording (normal context).
pub fn finish(r: &Recorder, m: &StreamTape, how: crate::tool::Ending) {
    // SAFETY: guest threads in the runtime have their context installed.
    let me = unsafe { crate::context::current() };
    if me.other_process != 0 {
        // A vfork-style child shares our memory, and the region with it:
        // the parent sweeps it when it ends.
        r.flush(me);
        return;
    }
    stop_recording(r);
    // Every block into the region (or the file): the writer's queue, then
    // each thread's current chunk.
    super::flush_all_files();
    let blocks = r.blocks_handed_out();
    if m.grad.is_none() {
        finish_file(r, m, how);
        if how == crate::tool::Ending::Exec {
            r.disabled.fetch_sub(1 << 40, Ordering::AcqRel);
        }
        return;
    }
    if how == crate::tool::Ending::Signal {
        match m.write_out() {
            Ok(()) => crate::dgad_eprintln!(
                "record: the program did not finish, so DGAD_GRAD computes no gradient; the whole \
                 tape ({} blocks) is in {}{} for dg-eval",
                blocks,
                r.shown_dir(),
                file_name::TAPE
            ),
            Err(e) => crate::dgad_eprintln!(
                "record: the program did not finish, and writing its tape to {}{} failed: {}",
                r.shown_dir(),
                file_name::TAPE,
                sys::errno_text(e)
            ),
        }
        return;
    }
    let result = if m.spilled() {
        m.write_out()
            .map_err(|e| {
                format!(
                    "writing the tape to {}{} failed: {}",
                    r.shown_dir(),
                    file_name::TAPE,
                    sys::errno_text(e)
                )
            })
            .and_then(|()| {
                let path = format!("{}{}", r.shown_dir(), file_name::TAPE);
                tape_format::Tape::open(std::path::Path::new(&path)).map_err(|e| e.to_string())
            })
            .and_then(|tape| sweep(r, m, &tape).map(|_| ()))
    } else {
        sweep_region(r, m, blocks)
    };
    if how == crate::tool::Ending::Exec {
        // An `execve` that fails lets this image go on recording.
        r.disabled.fetch_sub(1 << 40, Ordering::AcqRel);
    }
    if let Err(e) = result {
        let kept = m.write_out();
        let tape = match kept {
            Ok(()) => format!(
                "the whole tape is in {}{}: evaluate it with dg-eval",
                r.shown_dir(),
                file_name::TAPE
            ),
            Err(w) => format!("writing the tape failed too: {}", sys::errno_text(w)),
        };
        crate::dgad_eprintln!("record: DGAD_GRAD: {}; {}; stopping (exit 125)", e, tape);
        crate::stats::report();
        sys::exit_group(125);
    }
}

/// The end of a compact file's recording: its header completed, or, after
/// a spill or a fatal signal, the whole tape in `dg-tape` instead.
fn finish_file(r: &Recorder, m: &StreamTape, how: crate::tool::Ending) {
    if m.discarding() {
        return;
    }
    let result = if how == crate::tool::Ending::Signal || m.spilled() {
        m.write_out().map(|()| file_name::TAPE)
    } else {
        m.complete_stream(how == crate::tool::Ending::Exec)
            .map(|()| file_name::COMPACT_TAPE)
            .or_else(|_| m.write_out().map(|()| file_name::TAPE))
    };
    if let Err(e) = result {
        crate::dgad_eprintln!(
            "record: completing the tape in {} failed: {}",
            r.shown_dir(),
            sys::errno_text(e)
        );
    }
}

/// Keeps every thread from appending blocks while the region is swept:
/// inline recording sees full chunks, and the runtime's path sees the
/// `DG_DISABLE` counter raised.
fn stop_recording(r: &Recorder) {
    r.disabled.fetch_add(1 << 40, Ordering::AcqRel);
    super::stop_inline_recording();
}

/// The sweep over the region, through the evaluator.
fn sweep_region(r: &Recorder, m: &StreamTape, blocks: u64) -> Result<(), String> {
    let start = std::time::Instant::now();
    let tape = m.tape(blocks).map_err(|e| e.to_string())?;
    let faulted = start.elapsed();
    let swept = sweep(r, m, &tape)?;
    if crate::init::config().stats {
        crate::dgad_eprintln!(
            "record: DGAD_GRAD: the gradient of the {} blocks in memory in {:.1} ms: {:.1} ms \
             mapping them, {:.1} ms sweeping, the rest allocating derivatives and writing \
             results",
            tape.block_count(),
            start.elapsed().as_secs_f64() * 1e3,
            faulted.as_secs_f64() * 1e3,
            swept.as_secs_f64() * 1e3
        );
    }
    Ok(())
}

fn read_indices(r: &Recorder, name: &str) -> Result<Vec<u64>, String> {
    let bytes = crate::directory::read_file(r.image_dir(), name).map_err(|e| {
        format!(
            "cannot read {}{}: {}",
            r.shown_dir(),
            name,
            sys::errno_text(e)
        )
    })?;
    tape_format::parse_indices(&String::from_utf8_lossy(&bytes), name).map_err(|e| e.to_string())
}

/// The seeds of `outputs` outputs: all ones, or `dg-output-bars`.
fn seeds(r: &Recorder, m: &StreamTape, outputs: usize) -> Result<tape_format::ValueTable, String> {
    if m.grad == Some(Grad::Ones) {
        return Ok(tape_format::ValueTable::column(vec![1.0; outputs]));
    }
    let bytes =
        crate::directory::read_file(r.image_dir(), file_name::OUTPUT_BARS).map_err(|e| {
            format!(
                "DGAD_GRAD=seeds needs the seeds in {}{}: {}",
                r.shown_dir(),
                file_name::OUTPUT_BARS,
                sys::errno_text(e)
            )
        })?;
    let seeds = tape_format::parse_values(&String::from_utf8_lossy(&bytes), file_name::OUTPUT_BARS)
        .map_err(|e| e.to_string())?;
    tape_format::check_row_count(
        &seeds,
        std::path::Path::new(file_name::OUTPUT_BARS),
        file_name::OUTPUT_INDICES,
        outputs,
        "outputs",
    )
    .map_err(|e| e.to_string())?;
    Ok(seeds)
}

/// Writes a result file into the image's directory (atomically replaced).
fn write_result(r: &Recorder, values: &tape_format::ValueTable, name: &str) -> Result<(), String> {
    let text = tape_format::values_text(values);
    let fd = crate::directory::create(r.image_dir(), name, text.as_bytes()).map_err(|e| {
        format!(
            "cannot write {}{}: {}",
            r.shown_dir(),
            name,
            sys::errno_text(e)
        )
    })?;
    sys::close(fd);
    Ok(())
}

/// The reverse sweep of a tape through the evaluator and its results,
/// written into the image's directory. Returns the time the sweeps took.
fn sweep(
    r: &Recorder,
    m: &StreamTape,
    tape: &tape_format::Tape,
) -> Result<std::time::Duration, String> {
    let mut swept = std::time::Duration::ZERO;
    let inputs = read_indices(r, file_name::INPUT_INDICES)?;
    let outputs = read_indices(r, file_name::OUTPUT_INDICES)?;
    for &index in outputs.iter().chain(&inputs) {
        if index >= tape.block_count() {
            return Err(format!(
                "index {index} of the index files is beyond the tape's {} blocks",
                tape.block_count()
            ));
        }
    }
    let options = evaluator::SweepOptions {
        threads: 1,
        ..Default::default()
    };
    let (values, written) = match m.grad.unwrap_or(Grad::Ones) {
        Grad::Jacobian if outputs.is_empty() || inputs.is_empty() => (
            // As dg-eval: no rows (a row per output, each with a value per input).
            tape_format::ValueTable::new(inputs.len().max(1), Vec::new()),
            file_name::JACOBIAN,
        ),
        Grad::Jacobian => {
            let by_input = evaluator::evaluate(
                tape,
                evaluator::Mode::Reverse,
                &outputs,
                evaluator::Seeds::Identity,
                &inputs,
                &options,
            )
            .map_err(|e| e.to_string())?;
            swept = by_input.sweep_time;
            let by_input = by_input.values;
            // Rows are inputs and columns outputs; the Jacobian is the transpose.
            let mut by_output = tape_format::ValueTable::zeros(outputs.len(), inputs.len());
            for i in 0..inputs.len() {
                for (o, &v) in by_input.row(i).iter().enumerate() {
                    by_output.row_mut(o)[i] = v;
                }
            }
            (by_output, file_name::JACOBIAN)
        }
        Grad::Ones | Grad::Seeds => {
            let seeds = seeds(r, m, outputs.len())?;
            let values = evaluator::evaluate(
                tape,
                evaluator::Mode::Reverse,
                &outputs,
                evaluator::Seeds::Table(&seeds),
                &inputs,
                &options,
            )
            .map_err(|e| e.to_string())?;
            swept = values.sweep_time;
            (values.values, file_name::INPUT_BARS)
        }
    };
    write_result(r, &values, written)?;
    Ok(swept)
}

/// Writes the region to the tape file from a signal handler (the process
/// is dying): the whole tape is then in `dg-tape`. Returns whether the
/// recording keeps its tape in memory.
pub fn write_out_in_signal() -> bool {
    let Some(m) = recorder().and_then(|r| r.stream.as_ref()) else {
        return false;
    };
    // Nobody is left to tell about a failed write.
    let _ = m.write_out();
    true
}
