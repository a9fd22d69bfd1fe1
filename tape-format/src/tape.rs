//! The tape file: a memory-mapped, zero-copy `&[Block]` view, its validation,
//! and a streaming writer.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use memmap2::{Mmap, MmapOptions};

use crate::block::{Block, BLOCK_SIZE};
use crate::error::FormatError;
use crate::text::display_name;

#[cfg(not(target_endian = "little"))]
compile_error!("Tape::blocks views the little-endian file as native blocks");

/// A tape, either mapped from a `dg-tape` file or built in memory, that has
/// passed the checks which are cheap at open time: a whole number of blocks,
/// at least one, and block 0 all-zero. Operand order (`index < block`) is
/// checked by [`Tape::validate`] or by a sweep as it goes.
pub struct Tape {
    storage: Storage,
    file: String,
}

enum Storage {
    Mapped(Mmap),
    Owned(Vec<Block>),
    /// Blocks the creator keeps alive and unchanged below the tape's length
    /// for as long as the `Tape` lives ([`Tape::from_memory`]).
    Borrowed(*const Block, usize),
}

// SAFETY: a `Tape` is only ever read. Mapped and owned storage are plain
// data; borrowed storage is, by the contract of `Tape::from_memory`, memory
// that outlives the tape.
unsafe impl Send for Tape {}
// SAFETY: as for `Send`: every method takes `&self` and only reads.
unsafe impl Sync for Tape {}

/// Counts of [`Tape::validate`], the numbers Derivgrind's
/// `tape-evaluation --stats` prints, plus the total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapeSummary {
    /// Number of blocks, block 0 included.
    pub blocks: u64,
    /// Blocks with both indices 0: block 0, inputs, and fresh indices.
    pub no_active_operand: u64,
    /// Blocks with exactly one nonzero index.
    pub one_active_operand: u64,
    /// Blocks with two nonzero indices.
    pub two_active_operands: u64,
}

impl Tape {
    /// Maps `path` read-only and pre-faults all its pages (`MAP_POPULATE`), so
    /// that a sweep does not take a page fault every few blocks.
    ///
    /// The file must not be truncated or rewritten while the `Tape` lives
    /// (a truncated mapping raises `SIGBUS`); a finished recording is not.
    pub fn open(path: &Path) -> Result<Tape, FormatError> {
        Tape::open_with(path, true)
    }

    /// Like [`Tape::open`]; `prefault = false` leaves the pages to be faulted
    /// in on first access (for measuring what pre-faulting buys).
    pub fn open_with(path: &Path, prefault: bool) -> Result<Tape, FormatError> {
        let file_name = display_name(path);
        let read_error = |error| FormatError::Read {
            path: path.to_owned(),
            error,
        };
        let file = crate::files::open_regular(path)?;
        let bytes = file.metadata().map_err(read_error)?.len();
        check_size(&file_name, bytes)?;
        let mut options = MmapOptions::new();
        if prefault {
            options.populate();
        }
        // SAFETY: the mapping is read-only and private to this process; the
        // remaining hazard, another process truncating or rewriting the file
        // while it is mapped, is excluded by the documented contract of
        // `Tape::open` (the recording has finished).
        let map = unsafe { options.map(&file) }.map_err(read_error)?;
        if map.len() as u64 != bytes {
            return Err(FormatError::TruncatedTape {
                file: file_name,
                bytes: map.len() as u64,
                whole_blocks: map.len() as u64 / BLOCK_SIZE as u64,
                stray_bytes: map.len() as u64 % BLOCK_SIZE as u64,
            });
        }
        Tape::checked(Storage::Mapped(map), file_name)
    }

    /// A tape held in memory (tests, generated tapes), with the same checks
    /// as [`Tape::open`]. `file` names it in error messages.
    pub fn from_blocks(blocks: Vec<Block>, file: &str) -> Result<Tape, FormatError> {
        if blocks.is_empty() {
            return Err(FormatError::EmptyTape {
                file: file.to_owned(),
            });
        }
        Tape::checked(Storage::Owned(blocks), file.to_owned())
    }

    /// A tape viewing `len` blocks at `blocks` without copying them: the
    /// recording runtime's tape kept in its own memory, swept in the process
    /// at exit (`DGAD_GRAD`). `file` names it in error messages.
    ///
    /// # Safety
    /// `blocks` must point to `len` initialised, 8-byte aligned blocks that
    /// stay mapped for as long as the returned `Tape` lives. Blocks may be
    /// written while it lives only as whole aligned 8-byte fields, each
    /// field holding an earlier or a later valid value (a thread still
    /// recording past the last block that matters).
    pub unsafe fn from_memory(
        blocks: *const Block,
        len: usize,
        file: &str,
    ) -> Result<Tape, FormatError> {
        if len == 0 {
            return Err(FormatError::EmptyTape {
                file: file.to_owned(),
            });
        }
        Tape::checked(Storage::Borrowed(blocks, len), file.to_owned())
    }

    fn checked(storage: Storage, file: String) -> Result<Tape, FormatError> {
        let tape = Tape { storage, file };
        let block0 = tape.blocks()[0];
        if !block0.is_zero() {
            return Err(FormatError::Block0NotZero {
                file: tape.file,
                block: block0,
            });
        }
        Ok(tape)
    }

    /// The blocks; block `i` has index `i`. Never empty.
    #[inline]
    pub fn blocks(&self) -> &[Block] {
        match &self.storage {
            Storage::Owned(blocks) => blocks,
            // SAFETY: the contract of `from_memory`.
            Storage::Borrowed(blocks, len) => unsafe { std::slice::from_raw_parts(*blocks, *len) },
            Storage::Mapped(map) => {
                // SAFETY: the map starts on a page boundary, so it is aligned
                // for `Block` (8 bytes); its length is a multiple of 32 =
                // size_of::<Block>() (checked on open); `Block` is `repr(C)`
                // with four 8-byte fields, no padding, and every bit pattern
                // is a valid `u64`/`f64`; on a little-endian host (enforced at
                // compile time above) its layout is the file's layout. The
                // slice borrows `self`, which owns the mapping.
                unsafe {
                    std::slice::from_raw_parts(map.as_ptr().cast::<Block>(), map.len() / BLOCK_SIZE)
                }
            }
        }
    }

    /// Number of blocks, block 0 included (so also the number of indices).
    #[inline]
    pub fn block_count(&self) -> u64 {
        self.blocks().len() as u64
    }

    /// Size of the tape in bytes.
    pub fn byte_len(&self) -> u64 {
        self.block_count() * BLOCK_SIZE as u64
    }

    /// The file name shown in error messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The error a sweep reports when block `block` has operand `operand >= block`.
    pub fn operand_error(&self, block: u64, operand: u64) -> FormatError {
        FormatError::OperandNotSmaller {
            file: self.file.clone(),
            block,
            operand,
        }
    }

    /// Checks every block's operand indices against its own index (one pass
    /// over the tape) and counts blocks by number of active operands.
    pub fn validate(&self) -> Result<TapeSummary, FormatError> {
        // Counted by number of active operands without a branch on it: a
        // tape mixes unary and binary blocks unpredictably.
        let mut by_active = [0u64; 3];
        for (i, block) in self.blocks().iter().enumerate().skip(1) {
            let i = i as u64;
            if block.max_operand() >= i {
                return Err(self.operand_error(i, block.max_operand()));
            }
            by_active[(block.index1 != 0) as usize + (block.index2 != 0) as usize] += 1;
        }
        Ok(TapeSummary {
            blocks: self.block_count(),
            // Block 0, checked on open, has no operands either.
            no_active_operand: by_active[0] + 1,
            one_active_operand: by_active[1],
            two_active_operands: by_active[2],
        })
    }
}

/// The number of blocks of the tape file at `path`, from its size alone
/// (a regular file, a whole number of blocks, at least one): what the
/// derivative vectors will need can be checked before the tape is mapped.
pub fn tape_blocks(path: &Path) -> Result<u64, FormatError> {
    let file = crate::files::open_regular(path)?;
    let bytes = file
        .metadata()
        .map_err(|error| FormatError::Read {
            path: path.to_owned(),
            error,
        })?
        .len();
    check_size(&crate::text::display_name(path), bytes)?;
    Ok(bytes / BLOCK_SIZE as u64)
}

fn check_size(file: &str, bytes: u64) -> Result<(), FormatError> {
    if bytes == 0 {
        return Err(FormatError::EmptyTape {
            file: file.to_owned(),
        });
    }
    if bytes % BLOCK_SIZE as u64 != 0 {
        return Err(FormatError::TruncatedTape {
            file: file.to_owned(),
            bytes,
            whole_blocks: bytes / BLOCK_SIZE as u64,
            stray_bytes: bytes % BLOCK_SIZE as u64,
        });
    }
    Ok(())
}

/// Writes a tape file block by block through a buffer. Block 0 is not added
/// automatically: the first block pushed is block 0 and must be
/// [`Block::ZERO`] for the tape to be readable.
pub struct TapeWriter {
    out: BufWriter<File>,
    path: std::path::PathBuf,
    blocks: u64,
}

impl TapeWriter {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> Result<TapeWriter, FormatError> {
        let file = crate::files::create_no_follow(path).map_err(|error| FormatError::Write {
            path: path.to_owned(),
            error,
        })?;
        Ok(TapeWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            path: path.to_owned(),
            blocks: 0,
        })
    }

    /// Appends a block and returns its index.
    pub fn push(&mut self, block: &Block) -> Result<u64, FormatError> {
        self.out
            .write_all(&block.to_le_bytes())
            .map_err(|error| FormatError::Write {
                path: self.path.clone(),
                error,
            })?;
        self.blocks += 1;
        Ok(self.blocks - 1)
    }

    /// Flushes the buffer and returns the number of blocks written.
    pub fn finish(self) -> Result<u64, FormatError> {
        let path = self.path;
        let blocks = self.blocks;
        self.out
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_data())
            .map_err(|error| FormatError::Write { path, error })?;
        Ok(blocks)
    }
}

/// Writes `blocks` (block 0 first) as a tape file; returns the number written.
pub fn write_tape<'b>(
    path: &Path,
    blocks: impl IntoIterator<Item = &'b Block>,
) -> Result<u64, FormatError> {
    let mut writer = TapeWriter::create(path)?;
    for block in blocks {
        writer.push(block)?;
    }
    writer.finish()
}
