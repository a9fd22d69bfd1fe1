//! The tape file: a memory-mapped, zero-copy `&[Block]` view, its validation,
//! and a streaming writer.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use memmap2::{Mmap, MmapOptions};

use crate::block::{Block, BLOCK_SIZE};
use crate::compact::{self, Piece};
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
    /// A compact stream ([`crate::compact`]), parsed.
    Compact {
        bytes: Bytes,
        pieces: Vec<Piece>,
        entries: u64,
    },
}

/// The bytes of a compact stream.
enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
    /// Memory the creator keeps alive and unchanged for as long as the
    /// `Tape` lives ([`Tape::from_compact_memory`]).
    Borrowed(*const u8, usize),
}

impl Bytes {
    fn get(&self) -> &[u8] {
        match self {
            Bytes::Mapped(map) => map,
            Bytes::Owned(v) => v,
            // SAFETY: the contract of `from_compact_memory`.
            Bytes::Borrowed(p, len) => unsafe { std::slice::from_raw_parts(*p, *len) },
        }
    }
}

/// How a tape's entries are stored, for the sweeps.
pub enum Layout<'a> {
    /// 32-byte blocks, block `i` with index `i`.
    Blocks(&'a [Block]),
    /// A parsed compact stream.
    Compact(CompactView<'a>),
}

/// A parsed compact stream: its bytes and its pieces in index order
/// (disjoint; indices between them are passive entries).
#[derive(Clone, Copy)]
pub struct CompactView<'a> {
    /// The whole stream.
    pub bytes: &'a [u8],
    /// Its pieces, sorted, copies dropped.
    pub pieces: &'a [Piece],
}

impl CompactView<'_> {
    /// The piece holding entry `index` and the entry's place in it; `None`
    /// for an index no piece covers (a passive entry).
    fn piece_of(&self, index: u64) -> Option<(&Piece, usize)> {
        let p = self
            .pieces
            .get(self.pieces.partition_point(|p| p.end() <= index))?;
        (p.first <= index).then(|| (p, (index - p.first) as usize))
    }
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
        let map = || {
            let mut options = MmapOptions::new();
            if prefault {
                options.populate();
            }
            // SAFETY: the mapping is read-only and private to this process;
            // the remaining hazard, another process truncating or rewriting
            // the file while it is mapped, is excluded by the documented
            // contract of `Tape::open` (the recording has finished).
            unsafe { options.map(&file) }.map_err(read_error)
        };
        if is_compact(&file) {
            return Tape::compact(Bytes::Mapped(map()?), file_name);
        }
        check_size(&file_name, bytes)?;
        let map = map()?;
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

    /// A compact stream held in memory ([`crate::compact`]).
    pub fn from_compact_bytes(bytes: Vec<u8>, file: &str) -> Result<Tape, FormatError> {
        Tape::compact(Bytes::Owned(bytes), file.to_owned())
    }

    /// A compact stream of `len` bytes at `bytes`, viewed without copying
    /// (the recording runtime's tape in memory, `DGAD_GRAD`), spanning
    /// `entries` indices (more than its pieces reach when the recording
    /// handed out indices it did not use).
    ///
    /// # Safety
    /// `bytes..bytes + len` must stay mapped and unchanged for as long as
    /// the returned `Tape` lives.
    pub unsafe fn from_compact_memory(
        bytes: *const u8,
        len: usize,
        entries: u64,
        file: &str,
    ) -> Result<Tape, FormatError> {
        let mut tape = Tape::compact(Bytes::Borrowed(bytes, len), file.to_owned())?;
        if let Storage::Compact { entries: e, .. } = &mut tape.storage {
            *e = (*e).max(entries);
        }
        Ok(tape)
    }

    fn compact(bytes: Bytes, file: String) -> Result<Tape, FormatError> {
        let (pieces, entries) =
            compact::parse(bytes.get()).map_err(|(offset, what)| FormatError::BadCompactTape {
                file: file.clone(),
                offset,
                what,
            })?;
        Ok(Tape {
            storage: Storage::Compact {
                bytes,
                pieces,
                entries,
            },
            file,
        })
    }

    fn checked(storage: Storage, file: String) -> Result<Tape, FormatError> {
        let tape = Tape { storage, file };
        let block0 = tape.entry(0).unwrap_or_default();
        if !block0.is_zero() {
            return Err(FormatError::Block0NotZero {
                file: tape.file,
                block: block0,
            });
        }
        Ok(tape)
    }

    /// The blocks of a tape of blocks (block `i` has index `i`; never
    /// empty), `None` for a compact tape.
    #[inline]
    pub fn blocks(&self) -> Option<&[Block]> {
        match self.layout() {
            Layout::Blocks(blocks) => Some(blocks),
            Layout::Compact(_) => None,
        }
    }

    /// How the entries are stored.
    #[inline]
    pub fn layout(&self) -> Layout<'_> {
        Layout::Blocks(match &self.storage {
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
            Storage::Compact { bytes, pieces, .. } => {
                return Layout::Compact(CompactView {
                    bytes: bytes.get(),
                    pieces,
                })
            }
        })
    }

    /// Whether the tape is a compact stream.
    pub fn is_compact(&self) -> bool {
        matches!(self.storage, Storage::Compact { .. })
    }

    /// The entry of index `index` (for checks and printing; sweeps use
    /// [`Tape::layout`]).
    pub fn entry(&self, index: u64) -> Option<Block> {
        if index >= self.block_count() {
            return None;
        }
        Some(match self.layout() {
            Layout::Blocks(blocks) => blocks[index as usize],
            Layout::Compact(c) => c
                .piece_of(index)
                .and_then(|(p, k)| p.entries(c.bytes).nth(k))
                .unwrap_or(Block::ZERO),
        })
    }

    /// Whether the entry of index `index` is all-zero (an input, a fresh
    /// index, or an index a compact tape's pieces do not cover); `None`
    /// beyond the tape. Cheap on a compact tape: its tag alone.
    pub fn entry_is_zero(&self, index: u64) -> Option<bool> {
        if index >= self.block_count() {
            return None;
        }
        Some(match self.layout() {
            Layout::Blocks(blocks) => blocks[index as usize].is_zero(),
            Layout::Compact(c) => c
                .piece_of(index)
                .map_or(true, |(p, k)| c.bytes[p.tags + k] == 0),
        })
    }

    /// Calls `f` with every entry in index order, passive gaps of a
    /// compact tape included; stops at the first error.
    pub fn try_for_each_entry<E>(
        &self,
        mut f: impl FnMut(u64, &Block) -> Result<(), E>,
    ) -> Result<(), E> {
        match self.layout() {
            Layout::Blocks(blocks) => {
                for (i, b) in blocks.iter().enumerate() {
                    f(i as u64, b)?;
                }
            }
            Layout::Compact(c) => {
                let mut next = 0u64;
                for p in c.pieces {
                    for i in next..p.first {
                        f(i, &Block::ZERO)?;
                    }
                    for (i, b) in (p.first..).zip(p.entries(c.bytes)) {
                        f(i, &b)?;
                    }
                    next = p.end();
                }
                for i in next..self.block_count() {
                    f(i, &Block::ZERO)?;
                }
            }
        }
        Ok(())
    }

    /// Number of entries, entry 0 included (so also the number of indices).
    #[inline]
    pub fn block_count(&self) -> u64 {
        match &self.storage {
            Storage::Compact { entries, .. } => *entries,
            Storage::Owned(blocks) => blocks.len() as u64,
            Storage::Borrowed(_, len) => *len as u64,
            Storage::Mapped(map) => (map.len() / BLOCK_SIZE) as u64,
        }
    }

    /// Size of the tape in bytes.
    pub fn byte_len(&self) -> u64 {
        match &self.storage {
            Storage::Compact { bytes, .. } => bytes.get().len() as u64,
            _ => self.block_count() * BLOCK_SIZE as u64,
        }
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
        self.try_for_each_entry(|i, block| {
            if i == 0 {
                return Ok(());
            }
            if block.max_operand() >= i {
                return Err(self.operand_error(i, block.max_operand()));
            }
            by_active[(block.index1 != 0) as usize + (block.index2 != 0) as usize] += 1;
            Ok(())
        })?;
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
    if is_compact(&file) {
        let mut header = [0u8; compact::HEADER_BYTES];
        let declared = std::os::unix::fs::FileExt::read_exact_at(&file, &mut header, 0)
            .ok()
            .map(|()| u64::from_le_bytes(header[16..24].try_into().unwrap()))
            .filter(|&e| e != 0);
        return match declared {
            Some(entries) => Ok(entries),
            None => Ok(Tape::open_with(path, false)?.block_count()),
        };
    }
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

/// Whether `file` starts with the compact stream's magic.
fn is_compact(file: &File) -> bool {
    let mut magic = [0u8; 8];
    std::os::unix::fs::FileExt::read_exact_at(file, &mut magic, 0).is_ok()
        && magic == compact::MAGIC
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

/// Writes `tape` as a compact stream ([`crate::compact`]) to `path`,
/// replacing it atomically ([`crate::replace_file`]); returns the bytes
/// written.
pub fn write_compact(path: &Path, tape: &Tape) -> Result<u64, FormatError> {
    let mut written = 0u64;
    crate::files::replace_file(path, |out| {
        out.write_all(&compact::header(tape.block_count()))?;
        written = compact::HEADER_BYTES as u64;
        let mut piece = vec![0u8; compact::MAX_PIECE_BYTES];
        let mut batch = Vec::with_capacity(compact::PIECE_ENTRIES);
        let mut first = 0;
        let mut flush = |first: u64, batch: &mut Vec<Block>| -> std::io::Result<()> {
            if !batch.is_empty() {
                let len = compact::encode_piece(first, batch, &mut piece);
                out.write_all(&piece[..len])?;
                written += len as u64;
                batch.clear();
            }
            Ok(())
        };
        // Runs of passive entries of at least this length are left out
        // (gaps between pieces read as passive); shorter ones cost a byte
        // each, less than a piece header.
        const GAP: u64 = 32;
        let mut zeros = 0u64;
        tape.try_for_each_entry(|i, block| -> std::io::Result<()> {
            if block.is_zero() && i > 0 {
                zeros += 1;
                return Ok(());
            }
            if zeros >= GAP && !batch.is_empty() {
                flush(first, &mut batch)?;
            }
            if zeros < GAP {
                for index in i - zeros..i {
                    if batch.len() == compact::PIECE_ENTRIES {
                        flush(first, &mut batch)?;
                    }
                    if batch.is_empty() {
                        first = index;
                    }
                    batch.push(Block::ZERO);
                }
            }
            zeros = 0;
            if batch.len() == compact::PIECE_ENTRIES {
                flush(first, &mut batch)?;
            }
            if batch.is_empty() {
                first = i;
            }
            batch.push(*block);
            Ok(())
        })?;
        flush(first, &mut batch)
    })?;
    Ok(written)
}

/// Writes `tape` as 32-byte blocks (`dg-tape`, Derivgrind's format) to
/// `path`, replacing it atomically; returns the number of blocks.
pub fn export_blocks(path: &Path, tape: &Tape) -> Result<u64, FormatError> {
    crate::files::replace_file(path, |out| {
        tape.try_for_each_entry(|_, block| out.write_all(&block.to_le_bytes()))
    })?;
    Ok(tape.block_count())
}
