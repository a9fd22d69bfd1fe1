//! Every way a record directory can be unreadable or inconsistent, each message
//! naming the file, the line or block, and what was expected.

use std::io;
use std::path::PathBuf;

use crate::block::Block;

/// An unreadable, truncated or inconsistent file of a record directory.
///
/// Messages name the file (its file name, or the full path for I/O errors),
/// the 1-based line or the block index, and what was expected, e.g.
/// `dg-input-indices line 3: index 5000 is beyond the tape's 200 blocks`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file could not be opened, mapped or read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said (part of the message, not a
        /// separate `source`, so that the message stands alone).
        error: io::Error,
    },
    /// The file is a FIFO, a device, a directory…: reading it could block
    /// or never end.
    #[error("cannot read {}: it is {what}, not a regular file", path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead, e.g. "a FIFO".
        what: &'static str,
    },
    /// The file could not be created or written.
    #[error("cannot write {}: {error}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said (part of the message, not a
        /// separate `source`, so that the message stands alone).
        error: io::Error,
    },
    /// The tape's size is not a whole number of blocks.
    #[error(
        "{file}: {bytes} bytes is not a multiple of 32 ({whole_blocks} whole blocks and \
         {stray_bytes} more bytes: truncated while writing block {whole_blocks}?)"
    )]
    TruncatedTape {
        /// Name of the tape file.
        file: String,
        /// Size of the file.
        bytes: u64,
        /// `bytes / 32`.
        whole_blocks: u64,
        /// `bytes % 32`.
        stray_bytes: u64,
    },
    /// The tape has no block at all, not even block 0.
    #[error("{file}: the file is empty, but a tape holds at least block 0 (32 zero bytes)")]
    EmptyTape {
        /// Name of the tape file.
        file: String,
    },
    /// A record directory holds both tape files.
    #[error(
        "{} holds both dg-tape and dg-tape-compact, the tapes of two recordings; remove the stale one",
        dir.display()
    )]
    TwoTapes {
        /// The record directory.
        dir: std::path::PathBuf,
    },
    /// A compact tape's structure is broken.
    #[error("{file}: not a valid compact tape at byte {offset}: {what}")]
    BadCompactTape {
        /// Name of the tape file.
        file: String,
        /// Where the problem is.
        offset: usize,
        /// What it is.
        what: String,
    },
    /// Block 0, the passive index's block, holds something.
    #[error("{file}: block 0 is not all-zero (found {block:?})")]
    Block0NotZero {
        /// Name of the tape file.
        file: String,
        /// What block 0 holds.
        block: Block,
    },
    /// A block refers to an operand recorded at or after itself.
    #[error("{file} block {block}: operand index {operand} is not smaller than {block}")]
    OperandNotSmaller {
        /// Name of the tape file.
        file: String,
        /// Index of the offending block.
        block: u64,
        /// The operand index that is `>= block`.
        operand: u64,
    },
    /// An index file names a block the tape does not have.
    #[error("{file} line {line}: index {index} is beyond the tape's {blocks} blocks")]
    IndexBeyondTape {
        /// Name of the index file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The index on that line.
        index: u64,
        /// Number of blocks on the tape (valid indices are `0..blocks`).
        blocks: u64,
    },
    /// An input index whose block records an operation, so it is no input.
    #[error(
        "{file} line {line}: input index {index} has a block that is not all-zero \
         (found {block:?}); an input's block must be all-zero"
    )]
    InputBlockNotZero {
        /// Name of the index file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The input index.
        index: u64,
        /// What its block holds.
        block: Block,
    },
    /// A line that does not hold what the file holds.
    #[error("{file} line {line}: expected {expected}, found {found:?}")]
    Parse {
        /// Name of the text file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What the line should hold, e.g. "one decimal index".
        expected: &'static str,
        /// The offending text.
        found: String,
    },
    /// A line of a value table with another number of values than the first line.
    #[error(
        "{file} line {line}: expected {expected} values as on line 1 (one per direction), \
         found {found}"
    )]
    RowWidth {
        /// Name of the text file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// Number of values on line 1.
        expected: usize,
        /// Number of values on this line.
        found: usize,
    },
    /// Two files that must have one line per variable disagree in length.
    #[error("{file} has {found} lines, but {other_file} lists {expected} {what}")]
    CountMismatch {
        /// The file of values, e.g. `dg-output-bars`.
        file: String,
        /// Its number of lines.
        found: usize,
        /// The index file it must match, e.g. `dg-output-indices`.
        other_file: String,
        /// Number of indices there.
        expected: usize,
        /// What the indices are, e.g. "outputs".
        what: &'static str,
    },
}
