//! The tape kept in the process's memory, and the reverse sweep run in the
//! process at exit (`DGAD_GRAD`): a gradient without a tape file.
//!
//! When the outputs' seeds are known before the run ends, writing the tape
//! through the page cache only to read it back is what recording costs
//! (`docs/performance.md`). With `DGAD_GRAD` the runtime reserves one
//! region of `capacity` blocks that stands in for the tape file: an
//! anonymous shared-memory file (`memfd`), mapped. The threads record into
//! their chunk buffers as in file mode, and the writer thread writes each
//! full chunk to the memory file instead of the tape file — block `i` at
//! `base + 32 i`, where the file would have it. Recording threads thus keep
//! writing into the same few buffers, hot in the cache; the writer's
//! whole-page writes need no zeroing, which fresh anonymous memory does
//! (what memory costs on this machine, decision 37), on its own core.
//! At exit the reverse sweep runs over the region (`evaluator::evaluate`,
//! on the calling thread), and only the results are written:
//! `dg-input-bars`, or `dg-jacobian`.
//!
//! The region holds the memory budget (`DGAD_TAPE_MEMORY`, or half the
//! memory available at start). Bytes beyond it *spill*: the temporary tape
//! file is created and they go to it at their offsets; at the end the
//! region is written below them, the file is renamed to `dg-tape`, and the
//! sweep runs over the file (one line on stderr says so). A program that dies of a signal, reaches the tape limit or fails a
//! write leaves the whole tape in `dg-tape` as in file mode: the region is
//! written out even in signal context (the file's names are prepared at
//! start, so that needs system calls alone). Decision 37.

use super::{recorder, Recorder};
use crate::directory::PreparedFile;
use crate::sys;
use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;
use tape_format::{file_name, Block};

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

/// The in-memory tape of a `DGAD_GRAD` recording.
pub struct MemoryTape {
    /// What to compute at exit.
    pub grad: Grad,
    /// The tape's memory: an anonymous shared-memory file (`memfd`), written
    /// with `pwrite` (whole pages need no zeroing, unlike fresh anonymous
    /// memory: decision 37) and read through `base`.
    memfd: i32,
    /// Address of block 0: the file mapped shared.
    base: u64,
    /// Blocks the region holds.
    capacity: u64,
    /// Where the budget came from, for messages.
    budget: String,
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
}

/// `MemAvailable` of `/proc/meminfo` in bytes.
fn mem_available() -> Option<u64> {
    let text = crate::directory::read_file(libc::AT_FDCWD, "/proc/meminfo").ok()?;
    let text = String::from_utf8(text).ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl MemoryTape {
    /// Reserves the region: `budget` bytes (`DGAD_TAPE_MEMORY`) or half
    /// the available memory, at most `limit_blocks` blocks.
    pub fn new(grad: Grad, budget: Option<&[u8]>, limit_blocks: u64) -> Result<MemoryTape, String> {
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
        // At least one chunk fits.
        let capacity = (bytes / 32).clamp(super::CHUNK, limit_blocks.max(super::CHUNK));
        let len = capacity * 32;
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
        Ok(MemoryTape {
            grad,
            memfd,
            base,
            capacity,
            budget: shown,
            spilled: AtomicBool::new(false),
            file: OnceLock::new(),
            file_fd: AtomicI32::new(-1),
            written: AtomicBool::new(false),
        })
    }

    /// Writes the part of `bytes` (tape bytes at `offset`) that lies in
    /// the region there; returns the rest and its offset (empty when all
    /// of it fit). Signal-safe. A failed write (the memory file could not
    /// grow: memory is short) sends the rest to the tape file as well.
    pub fn store<'a>(&self, bytes: &'a [u8], offset: u64) -> (&'a [u8], u64) {
        let end = self.capacity * 32;
        let inside = end.saturating_sub(offset).min(bytes.len() as u64) as usize;
        let written = if inside == 0 {
            0
        } else {
            match sys::pwrite_all(self.memfd, &bytes[..inside], offset) {
                Ok(()) => inside,
                Err((_, reached)) => (reached - offset) as usize / 32 * 32,
            }
        };
        (&bytes[written..], offset + written as u64)
    }

    /// Whether tape bytes went to the file.
    pub fn spilled(&self) -> bool {
        self.spilled.load(Ordering::Acquire)
    }

    /// Notes the directory the recording's files go to (when they are
    /// created, in normal context).
    pub fn prepare(&self, dirfd: i32) {
        let _ = self.file.set(PreparedFile::new(dirfd, file_name::TAPE));
    }

    /// The temporary tape file, created on first use (one of the runtime's
    /// descriptors). Signal-safe.
    pub(super) fn file_fd(&self) -> Result<i32, i64> {
        let fd = self.file_fd.load(Ordering::Acquire);
        if fd >= 0 {
            return Ok(fd);
        }
        let file = self.file.get().ok_or(libc::ENOENT as i64)?;
        let fd = crate::fds::adopt(file.create()?);
        match self
            .file_fd
            .compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(fd),
            Err(theirs) => {
                sys::close(fd);
                Ok(theirs)
            }
        }
    }

    /// Bytes beyond the region: from now on they go to the tape file, which
    /// becomes the recorder's tape. Normal context, under no lock.
    pub fn spill(&self, r: &Recorder) {
        if self.spilled.swap(true, Ordering::AcqRel) {
            return;
        }
        match self.file_fd() {
            Ok(fd) => {
                r.use_tape_fd(fd);
                crate::dgad_eprintln!(
                    "record: the tape outgrew the memory DGAD_GRAD may keep it in ({}, {} blocks); \
                     the rest goes to {}{}, and the gradient is swept from there at exit",
                    self.budget,
                    self.capacity,
                    r.shown_dir(),
                    file_name::TAPE
                );
            }
            Err(e) => r.fail(&format!(
                "the tape outgrew the memory DGAD_GRAD may keep it in ({}), and {}{} cannot be \
                 created: {}",
                self.budget,
                r.shown_dir(),
                file_name::TAPE,
                sys::errno_text(e)
            )),
        }
    }

    /// Writes the region's part of the first `blocks` blocks to the tape
    /// file and renames it to `dg-tape`: the whole tape is then in the file
    /// (chunks beyond the region are written by their threads or the
    /// writer, at offsets the region does not cover). Once; signal-safe.
    pub fn write_out(&self, blocks: u64) -> Result<(), i64> {
        if self.written.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let fd = self.file_fd()?;
        let n = blocks.min(self.capacity) as usize;
        // SAFETY: the region is mapped for the life of the process and
        // holds `capacity ≥ n` blocks.
        let bytes = unsafe { core::slice::from_raw_parts(self.base as *const u8, n * 32) };
        sys::pwrite_all(fd, bytes, 0).map_err(|(e, _)| e)?;
        self.file.get().ok_or(libc::ENOENT as i64)?.publish()
    }

    /// The region's first `blocks` blocks as a tape to sweep, faulted in
    /// for reading at once (as `dg-eval` maps its tape).
    fn tape(&self, blocks: u64) -> Result<tape_format::Tape, tape_format::FormatError> {
        let n = blocks.min(self.capacity) as usize;
        sys::populate_read(self.base, n * 32);
        // SAFETY: the region is mapped for the life of the process, 8-byte
        // aligned (page aligned), and holds `capacity ≥ n` blocks; the
        // recording stopped before the sweep (`stop_recording`), so no
        // thread writes them any more, and an all-zero block is valid.
        unsafe {
            tape_format::Tape::from_memory(self.base as *const Block, n, "the tape in memory")
        }
    }
}

/// The end of a `DGAD_GRAD` recording (normal context).
pub fn finish(r: &Recorder, m: &MemoryTape, how: crate::tool::Ending) {
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
    if how == crate::tool::Ending::Signal {
        match m.write_out(blocks) {
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
        m.write_out(blocks)
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
        let kept = m.write_out(blocks);
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

/// Keeps every thread from appending blocks while the region is swept:
/// inline recording sees full chunks, and the runtime's path sees the
/// `DG_DISABLE` counter raised.
fn stop_recording(r: &Recorder) {
    r.disabled.fetch_add(1 << 40, Ordering::AcqRel);
    super::stop_inline_recording();
}

/// The sweep over the region, through the evaluator.
fn sweep_region(r: &Recorder, m: &MemoryTape, blocks: u64) -> Result<(), String> {
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
fn seeds(r: &Recorder, m: &MemoryTape, outputs: usize) -> Result<tape_format::ValueTable, String> {
    if m.grad == Grad::Ones {
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
    m: &MemoryTape,
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
    let (values, written) = match m.grad {
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
pub fn write_out_in_signal(blocks: u64) -> bool {
    let Some(m) = recorder().and_then(|r| r.memory.as_ref()) else {
        return false;
    };
    // Nobody is left to tell about a failed write.
    let _ = m.write_out(blocks);
    true
}
