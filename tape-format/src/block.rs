//! The 32-byte tape block and its byte encoding (core only: no I/O, no allocation).

/// Size in bytes of one tape block on disk; block `i` starts at byte `BLOCK_SIZE * i`.
pub const BLOCK_SIZE: usize = 32;

/// One tape entry: the result with index `i` (the block's position on the
/// tape) was computed from the operands with indices `index1` and `index2`,
/// whose partial derivatives are `partial1` and `partial2`.
///
/// Index 0 means "passive operand" (its partial derivative is ignored). A
/// unary operation uses `index2 = 0, partial2 = 0.0`. Inputs and block 0 are
/// [`Block::ZERO`].
///
/// The in-memory layout (`repr(C)`, four 8-byte fields, no padding) equals the
/// on-disk layout on little-endian hosts, which lets a mapped tape be read as
/// `&[Block]` without copying; on other hosts use the byte functions.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Block {
    /// Index of the first operand (0: passive).
    pub index1: u64,
    /// Index of the second operand (0: passive or absent).
    pub index2: u64,
    /// Partial derivative of the result with respect to the first operand.
    pub partial1: f64,
    /// Partial derivative of the result with respect to the second operand.
    pub partial2: f64,
}

// The zero-copy view of a mapped tape relies on this.
const _: () = assert!(core::mem::size_of::<Block>() == BLOCK_SIZE);
const _: () = assert!(core::mem::align_of::<Block>() == 8);

impl Block {
    /// The block of index 0 and of every input: all 32 bytes zero.
    pub const ZERO: Block = Block {
        index1: 0,
        index2: 0,
        partial1: 0.0,
        partial2: 0.0,
    };

    /// A block for `result = φ(a, b)` with `∂φ/∂a = partial1`, `∂φ/∂b = partial2`.
    #[inline]
    pub const fn binary(index1: u64, partial1: f64, index2: u64, partial2: f64) -> Block {
        Block {
            index1,
            index2,
            partial1,
            partial2,
        }
    }

    /// A block for `result = φ(a)` with `∂φ/∂a = partial`.
    #[inline]
    pub const fn unary(index: u64, partial: f64) -> Block {
        Block::binary(index, partial, 0, 0.0)
    }

    /// Encodes the block as it is stored in `dg-tape`: `index1`, `index2`,
    /// `partial1`, `partial2`, each 8 bytes little-endian.
    #[inline]
    pub fn to_le_bytes(&self) -> [u8; BLOCK_SIZE] {
        let mut bytes = [0u8; BLOCK_SIZE];
        bytes[0..8].copy_from_slice(&self.index1.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.index2.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.partial1.to_bits().to_le_bytes());
        bytes[24..32].copy_from_slice(&self.partial2.to_bits().to_le_bytes());
        bytes
    }

    /// Decodes a block from its on-disk bytes (inverse of [`Block::to_le_bytes`],
    /// bit-exact including NaN payloads and signed zeros).
    #[inline]
    pub fn from_le_bytes(bytes: &[u8; BLOCK_SIZE]) -> Block {
        let word = |k: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[8 * k..8 * k + 8]);
            u64::from_le_bytes(w)
        };
        Block {
            index1: word(0),
            index2: word(1),
            partial1: f64::from_bits(word(2)),
            partial2: f64::from_bits(word(3)),
        }
    }

    /// Whether all 32 bytes are zero, as the blocks of index 0 and of inputs
    /// must be (a partial of `-0.0` is not zero here: its sign bit is set).
    #[inline]
    pub fn is_zero(&self) -> bool {
        (self.index1 | self.index2 | self.partial1.to_bits() | self.partial2.to_bits()) == 0
    }

    /// The larger operand index; a well-formed block `i` has `max_operand() < i`
    /// unless it is block 0.
    #[inline]
    pub fn max_operand(&self) -> u64 {
        if self.index1 > self.index2 {
            self.index1
        } else {
            self.index2
        }
    }
}
