//! The on-disk contract between the recording runtime and the evaluator.
//!
//! A *record directory* holds a binary tape `dg-tape` of 32-byte [`Block`]s
//! and text files listing the indices of the inputs and outputs and their
//! derivative values (layout under [`FORMAT_VERSION`]). The runtime encodes
//! blocks with [`Block::to_le_bytes`]; the evaluator opens a directory as a
//! [`Recording`] — a memory-mapped [`Tape`] viewed as `&[Block]` plus the
//! index lists, checked against each other — and reads and writes the
//! [`ValueTable`]s of bars and dots. Every inconsistency is a [`FormatError`]
//! naming the file, the line or block, and what was expected.
//!
//! This crate is the bottom of the workspace and depends on nothing else in
//! it. Without its default `std` feature only [`Block`] and its byte encoding
//! remain, free of I/O and allocation, for code that cannot use `std`.

#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

mod block;
pub mod compact;
pub mod value;

/// File names inside a record directory, as Derivgrind's recorder and
/// `tape-evaluation` name them (`dg_bar_tape.c`, `tape-evaluation.cpp`).
/// Available without the `std` feature.
pub mod file_name {
    /// The binary tape.
    pub const TAPE: &str = "dg-tape";
    /// dgad extension: the tape as a compact stream (`crate::compact`),
    /// in place of `dg-tape` (never both).
    pub const COMPACT_TAPE: &str = "dg-tape-compact";
    /// Indices of the inputs, one decimal per line, in declaration order.
    pub const INPUT_INDICES: &str = "dg-input-indices";
    /// Indices of the outputs, one decimal per line, in declaration order.
    pub const OUTPUT_INDICES: &str = "dg-output-indices";
    /// Reverse-mode seeds, one line per output (written by the user).
    pub const OUTPUT_BARS: &str = "dg-output-bars";
    /// Reverse-mode results, one line per input (written by the evaluator).
    pub const INPUT_BARS: &str = "dg-input-bars";
    /// Forward-mode seeds, one line per input (written by the user).
    pub const INPUT_DOTS: &str = "dg-input-dots";
    /// Forward-mode results, one line per output (written by the evaluator).
    pub const OUTPUT_DOTS: &str = "dg-output-dots";
    /// dgad extension: the Jacobian, one line per output, one column per input.
    pub const JACOBIAN: &str = "dg-jacobian";
}

#[cfg(feature = "std")]
mod error;
#[cfg(feature = "std")]
mod files;
#[cfg(feature = "std")]
mod record;
#[cfg(feature = "std")]
mod tape;
#[cfg(feature = "std")]
mod text;

pub use block::{Block, BLOCK_SIZE};
#[cfg(feature = "std")]
pub use error::FormatError;
#[cfg(feature = "std")]
pub use files::{open_regular, replace_file};
#[cfg(feature = "std")]
pub use record::{check_indices, check_row_count, tape_path, Recording};
#[cfg(feature = "std")]
pub use tape::{
    export_blocks, tape_blocks, write_compact, write_tape, CompactView, Layout, Tape, TapeSummary,
    TapeWriter,
};
#[cfg(feature = "std")]
pub use text::{
    format_value, parse_indices, parse_values, read_indices, read_values, values_text,
    write_indices, write_values, DisplayValue, ValueTable, VALUE_PRECISION,
};

/// Version of the layout below. The files carry no header (they are
/// Derivgrind's, byte for byte), so the version lives in code: bump it, and
/// say what changed here, whenever any rule below changes.
///
/// # Layout, version 1
///
/// **`dg-tape`** — block `i` (the record of the value with index `i`) is the
/// 32 bytes at offset `32 * i`:
///
/// | bytes  | field      | type           |
/// |--------|------------|----------------|
/// | 0..8   | `index1`   | u64, LE        |
/// | 8..16  | `index2`   | u64, LE        |
/// | 16..24 | `partial1` | f64 (binary64), LE |
/// | 24..32 | `partial2` | f64 (binary64), LE |
///
/// - The file size is a nonzero multiple of 32; the number of blocks is the
///   number of indices handed out, block 0 included.
/// - Index 0 means "passive"; block 0 and the block of every input are
///   all-zero (all 32 bytes, so no `-0.0`).
/// - Every nonzero operand index of block `i` is smaller than `i` (indices
///   come from one increasing counter). Derivgrind's evaluator also skips
///   indices `>= 2^63`, which only its `--typegrind` mode writes; in dgad
///   they are an error like any other index `>= i`.
/// - An operation with three operands (fma) is two consecutive blocks, the
///   second using the first with partial 1.0.
///
/// **`dg-input-indices`, `dg-output-indices`** — one decimal `u64` per line,
/// `\n`-terminated, in declaration order (Derivgrind's recorder writes them
/// with `"%llu\n"`). An index may repeat (outputs sharing a value) and may
/// be 0 (a variable declared while recording was disabled).
///
/// **`dg-output-bars`, `dg-input-dots`** (seeds, written by the user) and
/// **`dg-input-bars`, `dg-output-dots`** (results, written by the
/// evaluator) — line `k` belongs to the `k`-th index of the matching index
/// file. Derivgrind's `tape-evaluation` has one value per line and writes
/// them as C++ `std::setprecision(16)` does (`printf("%.16g")`, see
/// [`format_value`]). dgad extends this to vector mode: a line may hold
/// several whitespace-separated values, one per direction, the same number
/// on every line; results then have as many values per line as the seeds.
/// Seeds at the same index add up.
///
/// **`dg-jacobian`** (dgad only) — one line per output, one value per input
/// (in the order of the index files), formatted as above.
pub const FORMAT_VERSION: u32 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_bytes_round_trip_bit_exactly() {
        let blocks = [
            Block::ZERO,
            Block::unary(7, -0.0),
            Block::binary(u64::MAX, f64::MIN_POSITIVE, 1, f64::NEG_INFINITY),
            Block::binary(3, f64::from_bits(0x7ff8_dead_beef_0001), 5, 1e300),
        ];
        for block in blocks {
            let back = Block::from_le_bytes(&block.to_le_bytes());
            assert_eq!(back.index1, block.index1);
            assert_eq!(back.index2, block.index2);
            assert_eq!(back.partial1.to_bits(), block.partial1.to_bits());
            assert_eq!(back.partial2.to_bits(), block.partial2.to_bits());
        }
    }

    #[test]
    fn block_bytes_are_little_endian_in_field_order() {
        let bytes = Block::binary(0x0102, 1.0, 0x0304, -2.0).to_le_bytes();
        assert_eq!(&bytes[0..8], &[2, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[8..16], &[4, 3, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[16..24], &1.0f64.to_bits().to_le_bytes());
        assert_eq!(&bytes[24..32], &(-2.0f64).to_bits().to_le_bytes());
    }

    #[test]
    fn only_all_zero_bytes_are_a_zero_block() {
        assert!(Block::ZERO.is_zero());
        assert!(Block::from_le_bytes(&[0; BLOCK_SIZE]).is_zero());
        assert!(!Block::unary(0, -0.0).is_zero());
        assert!(!Block::unary(0, 1.0).is_zero());
        assert!(!Block::binary(0, 0.0, 1, 0.0).is_zero());
    }
}
