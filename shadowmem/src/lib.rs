//! Shadow storage: where the AD index of every byte of application memory
//! and of every register lane lives.
//!
//! # Memory: one 1:1 layer of 4-byte indices, direct-mapped
//! A value's index (its tape block number, 0 = passive) is a `u32` kept in
//! the shadow of the value's first four bytes; the shadow of byte `a` is the
//! byte at [`shadow_of`]`(a) = (a ^ `[`XOR_MASK`]`) + `[`SHADOW_OFFSET`]. Each 4-byte granule of data
//! therefore has exactly room for one index, so moves of any width, split or
//! reassembled byte-wise, carry indices unchanged. (Derivgrind keeps 8-byte
//! indices in two 1:1 layers; one layer of 4-byte indices halves the shadow
//! traffic at the price of at most 2³² tape blocks, 128 GiB of tape — see
//! `docs/decisions.md`.)
//!
//! The address map is the one MemorySanitizer uses on x86-64 Linux, moved
//! up by [`SHADOW_OFFSET`]: the application lives in three [`APP_RANGES`];
//! XOR with `0x5000_0000_0000` sends them to three [`SHADOW_RANGES`] that
//! overlap neither them nor each other. Everything else is reserved
//! inaccessible so that the kernel never places an application mapping
//! where its shadow would collide.
//!
//! The offset exists because of AMD's L1 data cache: its way predictor tags
//! lines by a hash of linear-address bits 12–27, and two lines that share
//! those bits and the set (bits 6–11) evict each other's prediction on
//! every alternate access. With the XOR alone a value and its shadow agreed
//! in bits 0–43, so every shadow access followed by the data access (a
//! `push`/`pop` pair with their shadows) missed the predictor: 21 ns
//! instead of 1.9 ns for that pair on Zen 3, record mode 10x slower on
//! call-heavy code. A page-granular offset below 2^28 keeps shadows
//! contiguous (`shadow_of(a + k) = shadow_of(a) + k` inside a range) and
//! byte-aligned with their data within the page.
//!
//! ```text
//! 0x0000_0000_0000 .. 0x0100_0000_0000  app (non-PIE executables, brk heap)
//! 0x0500_0765_4000 .. 0x0700_0765_4000  shadow of the PIE range
//! 0x2000_0765_4000 .. 0x3000_0765_4000  shadow of the high range
//! 0x5000_0765_4000 .. 0x5100_0765_4000  shadow of the low range
//! 0x5500_0000_0000 .. 0x5700_0000_0000  app (PIE executables: the kernel
//!                                       puts them at 0x5555_5555_4000 plus
//!                                       up to 1 TiB of randomisation)
//! 0x7000_0000_0000 .. 0x8000_0000_0000  app (libraries, mmap, stacks)
//! ```
//! Shadow pages appear on first touch (`MAP_NORESERVE`); the constant cost
//! is page tables only.
//!
//! # Registers
//! [`RegFile`] is the per-thread shadow register file: 4 index bytes per 4
//! bytes of every general, vector (zmm0–31), x87 and mask register, laid out
//! so that translated code can address lanes by a constant offset.
//!
//! This crate only computes layouts; the runtime does the mapping. It must
//! not know about instructions or tapes.

#![no_std]

/// XOR that sends an application range to its shadow range.
pub const XOR_MASK: u64 = 0x5000_0000_0000;

/// Added after the XOR: moves every shadow away from its data in address
/// bits 12–27 (see the crate documentation).
pub const SHADOW_OFFSET: u64 = 0x0765_4000;
const _: () = assert!(SHADOW_OFFSET & 0xfff == 0 && SHADOW_OFFSET < 1 << 28);

/// Half-open address ranges where application memory may live.
pub const APP_RANGES: [(u64, u64); 3] = [
    (0x0000_0000_0000, 0x0100_0000_0000),
    (0x5500_0000_0000, 0x5700_0000_0000),
    (0x7000_0000_0000, 0x8000_0000_0000),
];

/// The shadow of each application range, in the same order.
pub const SHADOW_RANGES: [(u64, u64); 3] = [
    shadow_range(APP_RANGES[0]),
    shadow_range(APP_RANGES[1]),
    shadow_range(APP_RANGES[2]),
];

const fn shadow_range((lo, hi): (u64, u64)) -> (u64, u64) {
    (shadow_of(lo), shadow_of(hi - 1) + 1)
}

/// End of the user address space on x86-64 with 4-level paging.
pub const USER_END: u64 = 0x8000_0000_0000;

/// Bytes of application data described by one index.
pub const GRANULE: u64 = 4;

/// The address of the shadow byte of application byte `addr`.
#[inline(always)]
pub const fn shadow_of(addr: u64) -> u64 {
    (addr ^ XOR_MASK) + SHADOW_OFFSET
}

/// The application byte whose shadow is at `shadow` (the inverse of
/// [`shadow_of`]).
#[inline(always)]
pub const fn app_of(shadow: u64) -> u64 {
    (shadow - SHADOW_OFFSET) ^ XOR_MASK
}

/// Whether `addr` lies in an application range.
#[inline]
pub fn is_app(addr: u64) -> bool {
    APP_RANGES.iter().any(|&(lo, hi)| addr >= lo && addr < hi)
}

/// Whether `[start, end)` lies inside one application range.
#[inline]
pub fn is_app_range(start: u64, end: u64) -> bool {
    APP_RANGES
        .iter()
        .any(|&(lo, hi)| start >= lo && end <= hi && start <= end)
}

/// What the runtime must map at start-up, sorted by address: the shadow
/// ranges (accessible: read-write, no reserve) and the gaps between them and
/// the application ranges (inaccessible, so that nothing else lands there).
/// Together with [`APP_RANGES`] they tile the user address space.
pub const RESERVATIONS: [(u64, u64, bool); 8] = [
    (APP_RANGES[0].1, SHADOW_RANGES[1].0, false),
    (SHADOW_RANGES[1].0, SHADOW_RANGES[1].1, true),
    (SHADOW_RANGES[1].1, SHADOW_RANGES[2].0, false),
    (SHADOW_RANGES[2].0, SHADOW_RANGES[2].1, true),
    (SHADOW_RANGES[2].1, SHADOW_RANGES[0].0, false),
    (SHADOW_RANGES[0].0, SHADOW_RANGES[0].1, true),
    (SHADOW_RANGES[0].1, APP_RANGES[1].0, false),
    (APP_RANGES[1].1, APP_RANGES[2].0, false),
];

/// Bytes of shadow per vector register (zmm: 64 bytes of data).
pub const VEC_BYTES: usize = 64;
/// Bytes of shadow per x87 register (80-bit data, padded).
pub const X87_BYTES: usize = 16;

/// The per-thread shadow register file. `#[repr(C)]`: translated code
/// addresses it by offset from the thread context.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct RegFile {
    /// zmm0–zmm31: 16 indices each (one per 4-byte lane).
    pub vec: [[u32; VEC_BYTES / 4]; 32],
    /// rax … r15 (hardware order): two indices each.
    pub gpr: [[u32; 2]; 16],
    /// x87 physical registers R0–R7 (not stack-relative): the index of the
    /// value, then padding.
    pub x87: [[u32; X87_BYTES / 4]; 8],
    /// k0–k7 mask registers: always passive, kept for completeness of moves.
    pub k: [[u32; 2]; 8],
}

impl RegFile {
    /// All registers passive.
    pub const fn new() -> RegFile {
        RegFile {
            vec: [[0; VEC_BYTES / 4]; 32],
            gpr: [[0; 2]; 16],
            x87: [[0; X87_BYTES / 4]; 8],
            k: [[0; 2]; 8],
        }
    }

    /// Offset of the shadow of byte `byte` of vector register `reg` from the
    /// start of the register file.
    pub const fn vec_offset(reg: usize, byte: usize) -> usize {
        core::mem::offset_of!(RegFile, vec) + reg * VEC_BYTES + byte
    }

    /// Offset of the shadow of byte `byte` (0–7) of general register `reg`.
    pub const fn gpr_offset(reg: usize, byte: usize) -> usize {
        core::mem::offset_of!(RegFile, gpr) + reg * 8 + byte
    }

    /// Offset of the shadow of x87 physical register `phys`.
    pub const fn x87_offset(phys: usize) -> usize {
        core::mem::offset_of!(RegFile, x87) + phys * X87_BYTES
    }
}

impl Default for RegFile {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_ranges_are_disjoint_from_app_and_each_other() {
        let mut all: [(u64, u64); 6] = [(0, 0); 6];
        all[..3].copy_from_slice(&APP_RANGES);
        all[3..].copy_from_slice(&SHADOW_RANGES);
        for (i, a) in all.iter().enumerate() {
            assert!(a.0 < a.1 && a.1 <= USER_END);
            for b in &all[i + 1..] {
                assert!(a.1 <= b.0 || b.1 <= a.0, "{a:x?} overlaps {b:x?}");
            }
        }
    }

    #[test]
    fn reservations_and_app_ranges_tile_user_space() {
        let mut pieces: [(u64, u64); 11] = [(0, 0); 11];
        for (i, r) in RESERVATIONS.iter().enumerate() {
            pieces[i] = (r.0, r.1);
        }
        pieces[8..].copy_from_slice(&APP_RANGES);
        pieces.sort_unstable();
        let mut at = 0;
        for p in pieces {
            assert_eq!(p.0, at, "hole or overlap at {at:#x}");
            at = p.1;
        }
        assert_eq!(at, USER_END);
        let shadows: [(u64, u64); 3] = [0, 1, 2].map(|i| SHADOW_RANGES[i]);
        for r in RESERVATIONS {
            assert_eq!(r.2, shadows.contains(&(r.0, r.1)));
        }
    }

    #[test]
    fn shadow_of_maps_each_app_range_into_its_shadow_range() {
        for (app, sh) in APP_RANGES.iter().zip(SHADOW_RANGES.iter()) {
            for a in [app.0, app.0 + 12345, app.1 - 1] {
                let s = shadow_of(a);
                assert!(s >= sh.0 && s < sh.1);
                assert!(!is_app(s));
            }
        }
        assert_eq!(
            shadow_of(0x7fff_1234_5678),
            0x2fff_1234_5678 + SHADOW_OFFSET
        );
        assert_eq!(app_of(shadow_of(0x7fff_1234_5678)), 0x7fff_1234_5678);
    }

    #[test]
    fn shadows_are_contiguous_and_differ_from_their_data_in_bits_12_to_27() {
        for (lo, hi) in APP_RANGES {
            for a in [lo, lo + 0xfff, lo + (1 << 27) - 4, hi - 8] {
                assert_eq!(shadow_of(a + 4), shadow_of(a) + 4);
                assert_eq!(shadow_of(a) & 0xfff, a & 0xfff);
                assert_ne!(shadow_of(a) & 0x0fff_f000, a & 0x0fff_f000);
            }
        }
    }

    #[test]
    fn register_file_offsets() {
        assert_eq!(RegFile::vec_offset(0, 0), 0);
        assert_eq!(RegFile::vec_offset(1, 8), 72);
        assert_eq!(RegFile::gpr_offset(0, 0), 32 * 64);
        assert_eq!(RegFile::gpr_offset(15, 4), 32 * 64 + 15 * 8 + 4);
        assert_eq!(RegFile::x87_offset(0), 32 * 64 + 16 * 8);
        assert_eq!(core::mem::size_of::<RegFile>() % 64, 0);
    }
}
