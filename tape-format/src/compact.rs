//! The compact tape: the same entries as 32-byte [`Block`]s, in about a
//! quarter of the bytes (decision 40 in `docs/decisions.md`).
//!
//! A block spends 16 bytes on two operand indices and 16 on two partials,
//! yet on real tapes most operands are a few hundred blocks back, most
//! partials of additions and subtractions are exactly `1.0` or `-1.0`, and
//! a fifth of the operands are passive. The compact encoding keeps what a
//! sweep needs, bit for bit, and drops the rest:
//!
//! - each entry is a *tag* byte: per operand one of 13 *states* —
//!   passive (index 0; its partial influences nothing and is not kept), or
//!   a distance `own index − operand index` of 1, 2, 4 or 8 bytes times a
//!   partial of `1.0`, `-1.0` or 8 bytes of its own; `tag = state1 +
//!   13·state2`;
//! - the entry's *payload* holds, in this order, the present distances and
//!   the partials that are not `±1`, little-endian;
//! - entries come in *pieces* of consecutive indices: a 16-byte header
//!   (first index, entry count, payload bytes), the tags, the payloads, and
//!   [`PIECE_PAD`] zero bytes, so that a reader may load 8 bytes at any
//!   payload offset. A piece's entries are read front to back (forward
//!   sweep) or back to front (reverse sweep) with the tags alone;
//! - a *stream* is the [`MAGIC`] header followed by pieces in any order
//!   (recording threads finish their chunks in any order). Indices no piece
//!   covers are passive entries, like the all-zero blocks a recording that
//!   handed out an index range without using it leaves in `dg-tape`. A
//!   piece may appear twice only as an exact copy (a dying process writes
//!   what the writer thread may have written already).
//!
//! The encoder writes into caller-provided memory and neither allocates nor
//! fails, so the recording runtime may use it in a signal handler.

use crate::block::Block;

/// The stream header: `dgadtape`, then the format version and the number of
/// entries (indices) the tape spans, `0` when the pieces say it.
pub const MAGIC: [u8; 8] = *b"dgadtape";
/// The version of the compact layout this crate reads and writes.
pub const VERSION: u32 = 1;
/// Bytes of the stream header: magic, version (u32), reserved (u32), entry
/// count (u64).
pub const HEADER_BYTES: usize = 24;
/// Bytes of a piece header: first index (u64), entry count (u32), payload
/// bytes (u32).
pub const PIECE_HEADER_BYTES: usize = 16;
/// Zero bytes after each piece's payload.
pub const PIECE_PAD: usize = 8;
/// At most this many entries per piece (the payload stays far below 4 GiB).
pub const PIECE_ENTRIES: usize = 4096;
/// The most payload bytes one entry takes.
pub const MAX_ENTRY_PAYLOAD: usize = 32;
/// The most bytes a piece of `entries` entries takes.
pub const fn max_piece_bytes(entries: usize) -> usize {
    PIECE_HEADER_BYTES + entries * (1 + MAX_ENTRY_PAYLOAD) + PIECE_PAD
}
/// The most bytes any piece takes (one of [`PIECE_ENTRIES`] entries): the
/// size of a buffer an encoder can reuse for every piece.
pub const MAX_PIECE_BYTES: usize = max_piece_bytes(PIECE_ENTRIES);

/// Operand states per operand; tags are below `STATES²`.
const STATES: usize = 13;
/// Number of distinct tags.
pub const TAGS: usize = STATES * STATES;

const ONE: u64 = 0x3ff0_0000_0000_0000;
const MINUS_ONE: u64 = 0xbff0_0000_0000_0000;

/// Distance widths in bytes, by width code.
const WIDTHS: [usize; 4] = [1, 2, 4, 8];

/// How one operand state decodes.
#[derive(Clone, Copy)]
struct State {
    /// Bytes of the distance (0: passive).
    width: u8,
    /// 0: partial +1, 1: −1, 2: stored.
    partial: u8,
}

const fn state(s: usize) -> State {
    if s == 0 {
        State {
            width: 0,
            partial: 0,
        }
    } else {
        State {
            width: WIDTHS[(s - 1) / 3] as u8,
            partial: ((s - 1) % 3) as u8,
        }
    }
}

/// How one tag decodes: where its fields are in the payload, and masks
/// that let [`decode_at`] assemble an entry without a branch.
#[derive(Clone, Copy, Debug)]
pub struct TagLayout {
    /// Mask of operand 1's distance (0 when passive), read at offset 0.
    pub mask1: u64,
    /// Mask of operand 2's distance (0 when passive), read at `off2`.
    pub mask2: u64,
    /// All ones when partial 1 is stored (at `poff1`), else 0.
    pub stored1: u64,
    /// All ones when partial 2 is stored (at `poff2`), else 0.
    pub stored2: u64,
    /// Partial 1's bits when implied (`±1`; 0 when passive or stored).
    pub implied1: u64,
    /// Partial 2's bits when implied.
    pub implied2: u64,
    /// All ones when operand 1 is present (not passive), else 0.
    pub present1: u64,
    /// All ones when operand 2 is present, else 0.
    pub present2: u64,
    /// Payload bytes of the entry.
    pub len: u8,
    /// Offset of operand 2's distance.
    pub off2: u8,
    /// Offset of partial 1 (when stored; within the payload either way).
    pub poff1: u8,
    /// Offset of partial 2 (when stored; within the payload either way).
    pub poff2: u8,
}

const fn mask(width: u8) -> u64 {
    if width == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width as u32)) - 1
    }
}

const fn implied(partial: u8) -> u64 {
    match partial {
        0 => ONE,
        1 => MINUS_ONE,
        _ => 0,
    }
}

const fn layout(tag: usize) -> TagLayout {
    let (a, b) = (state(tag % STATES), state(tag / STATES));
    let off2 = a.width;
    let poff1 = a.width + b.width;
    let stored1 = a.width != 0 && a.partial == 2;
    let stored2 = b.width != 0 && b.partial == 2;
    let poff2 = poff1 + if stored1 { 8 } else { 0 };
    let len = poff2 + if stored2 { 8 } else { 0 };
    TagLayout {
        mask1: mask(a.width),
        mask2: mask(b.width),
        stored1: if stored1 { u64::MAX } else { 0 },
        stored2: if stored2 { u64::MAX } else { 0 },
        implied1: if a.width == 0 { 0 } else { implied(a.partial) },
        implied2: if b.width == 0 { 0 } else { implied(b.partial) },
        present1: if a.width == 0 { 0 } else { u64::MAX },
        present2: if b.width == 0 { 0 } else { u64::MAX },
        len,
        off2,
        poff1,
        poff2,
    }
}

/// The layout of every tag (256 of them, so that a byte indexes it without
/// a bounds check; [`parse`] refuses tags from [`TAGS`] up).
pub static LAYOUTS: [TagLayout; 256] = {
    let mut t = [layout(0); 256];
    let mut i = 0;
    while i < TAGS {
        t[i] = layout(i);
        i += 1;
    }
    t
};

/// What an active operand contributes, by its distance's bit length `b`
/// (0–64) and its partial's kind `k` (0: +1, 1: −1, 2: stored): entry
/// `4·b + k` packs its state (bits 0–7), its distance's bytes (8–15) and
/// its partial's bytes (16–23). One load instead of the comparisons,
/// shifts and selects that compute them.
static OPERAND: [u32; 65 * 4] = {
    let mut t = [0u32; 65 * 4];
    let mut b = 0;
    while b <= 64 {
        // The width class: 0 for 1 byte, 1 for 2, 2 for 4, 3 for 8.
        let w = if b <= 8 {
            0
        } else if b <= 16 {
            1
        } else if b <= 32 {
            2
        } else {
            3
        };
        let mut k = 0;
        while k < 3 {
            let state = 1 + 3 * w + k;
            let partial = if k == 2 { 8 } else { 0 };
            t[4 * b + k] = (state | (1 << w) << 8 | partial << 16) as u32;
            k += 1;
        }
        b += 1;
    }
    t
};

/// One operand, without a branch on its data (a tape mixes widths and
/// partial kinds unpredictably): (state, distance, distance bytes, partial
/// bytes), every part 0 for a passive operand.
#[inline(always)]
fn operand(own: u64, index: u64, partial: f64) -> (usize, u64, usize, usize) {
    // All ones for an active operand.
    let active = 0u32.wrapping_sub((index != 0) as u32);
    let distance = own.wrapping_sub(index);
    let b = 64 - distance.leading_zeros() as usize;
    let bits = partial.to_bits();
    // ±1.0: the bits of 1.0 but for the sign.
    let unit = bits << 1 == ONE << 1;
    let k = if unit { (bits >> 63) as usize } else { 2 };
    let packed = OPERAND[4 * b + k] & active;
    (
        (packed & 0xff) as usize,
        distance,
        ((packed >> 8) & 0xff) as usize,
        (packed >> 16) as usize,
    )
}

/// Encodes `blocks`, the entries of indices `first..`, as one piece into
/// `out`, which must hold [`max_piece_bytes`]`(blocks.len())` bytes;
/// `blocks.len()` must be at most [`PIECE_ENTRIES`]. Returns the piece's
/// length. Passive operands' partials are dropped; all else is kept bit
/// for bit (a block whose operand is not below its own index too: readers
/// report it where a sweep meets it).
pub fn encode_piece(first: u64, blocks: &[Block], out: &mut [u8]) -> usize {
    assert!(
        blocks.len() <= PIECE_ENTRIES,
        "too many entries for a piece"
    );
    assert!(
        out.len() >= max_piece_bytes(blocks.len()),
        "piece buffer too small"
    );
    let n = blocks.len();
    let tags_at = PIECE_HEADER_BYTES;
    let mut at = tags_at + n;
    let base = out.as_mut_ptr();
    // Every field is stored as 8 bytes at its offset; the bytes beyond its
    // length are overwritten by the next field, or are the padding (fields
    // are written in order).
    let put = |at: usize, value: u64| {
        // SAFETY: entry k (0-based) starts at most at tags_at + n + 32 k
        // and takes at most 32 bytes, so a field's 8 bytes end at most at
        // tags_at + n + 32 (k + 1) ≤ max_piece_bytes(n) ≤ out.len()
        // (asserted above).
        unsafe { base.add(at).cast::<u64>().write_unaligned(value.to_le()) };
    };
    for (k, b) in blocks.iter().enumerate() {
        // The loop body is long enough that the out-of-order window sees
        // only a few blocks ahead: ask for the next lines early.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `prefetcht0` has no architectural effect, for any address.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                (b as *const Block).wrapping_add(32).cast(),
            );
        }
        let own = first.wrapping_add(k as u64);
        let (s1, d1, w1, p1) = operand(own, b.index1, b.partial1);
        let (s2, d2, w2, p2) = operand(own, b.index2, b.partial2);
        // SAFETY: k < n, and the tags take out[tags_at..tags_at + n].
        unsafe { base.add(tags_at + k).write((s1 + STATES * s2) as u8) };
        // The fields' offsets off the entry's start, so that the cursor's
        // chain from entry to entry is one addition (the entry's length).
        let (o2, o3) = (w1, w1 + w2);
        let o4 = o3 + p1;
        put(at, d1);
        put(at + o2, d2);
        put(at + o3, b.partial1.to_bits());
        put(at + o4, b.partial2.to_bits());
        at += (w1 + w2) + (p1 + p2);
    }
    let payload = at - tags_at - n;
    out[at..at + PIECE_PAD].fill(0);
    out[0..8].copy_from_slice(&first.to_le_bytes());
    out[8..12].copy_from_slice(&(n as u32).to_le_bytes());
    out[12..16].copy_from_slice(&(payload as u32).to_le_bytes());
    at + PIECE_PAD
}

/// The stream header for a tape of `entries` indices (0: as the pieces say).
pub fn header(entries: u64) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&entries.to_le_bytes());
    h
}

/// Reads 8 little-endian bytes at `p`.
///
/// # Safety
/// `p..p + 8` must be readable.
#[inline(always)]
pub unsafe fn read_u64(p: *const u8) -> u64 {
    // SAFETY: the caller's contract.
    u64::from_le(unsafe { p.cast::<u64>().read_unaligned() })
}

/// Decodes the entry with index `own` and layout `l` whose payload starts
/// at `p`: (index1, partial1, index2, partial2). A passive operand decodes
/// as index 0 with partial 0.
///
/// # Safety
/// `p..p + l.len + 8` must be readable (the piece's padding ensures it).
#[inline(always)]
pub unsafe fn decode_at(own: u64, l: &TagLayout, p: *const u8) -> Block {
    // SAFETY: every offset read is at most `l.len` into the payload and
    // reads 8 bytes, covered by the caller's contract. What is read for an
    // absent field is masked off.
    let (d1, d2, p1, p2) = unsafe {
        (
            read_u64(p) & l.mask1,
            read_u64(p.add(l.off2 as usize)) & l.mask2,
            read_u64(p.add(l.poff1 as usize)) & l.stored1,
            read_u64(p.add(l.poff2 as usize)) & l.stored2,
        )
    };
    Block {
        index1: own.wrapping_sub(d1) & l.present1,
        index2: own.wrapping_sub(d2) & l.present2,
        partial1: f64::from_bits(p1 | l.implied1),
        partial2: f64::from_bits(p2 | l.implied2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(first: u64, blocks: &[Block]) -> Vec<Block> {
        let mut out = vec![0u8; max_piece_bytes(blocks.len())];
        let len = encode_piece(first, blocks, &mut out);
        let n = u32::from_le_bytes(out[8..12].try_into().unwrap()) as usize;
        let payload = u32::from_le_bytes(out[12..16].try_into().unwrap()) as usize;
        assert_eq!(len, PIECE_HEADER_BYTES + n + payload + PIECE_PAD);
        let mut at = PIECE_HEADER_BYTES + n;
        let mut got = Vec::new();
        for k in 0..n {
            let l = &LAYOUTS[out[PIECE_HEADER_BYTES + k] as usize];
            // SAFETY: within the piece, padding included.
            got.push(unsafe { decode_at(first + k as u64, l, out.as_ptr().add(at)) });
            at += l.len as usize;
        }
        assert_eq!(at, PIECE_HEADER_BYTES + n + payload);
        got
    }

    #[test]
    fn every_state_round_trips_bit_for_bit() {
        let first = 1u64 << 40;
        let partials = [
            1.0,
            -1.0,
            0.5,
            -0.0,
            0.0,
            f64::NAN,
            f64::INFINITY,
            1.0 + f64::EPSILON,
        ];
        let distances = [
            1u64,
            255,
            256,
            65535,
            65536,
            (1 << 32) - 1,
            1 << 32,
            first - 1,
        ];
        let mut blocks = Vec::new();
        for (k, &d1) in distances.iter().enumerate() {
            for (m, &p1) in partials.iter().enumerate() {
                let own = first + blocks.len() as u64;
                let d2 = distances[(k + m) % distances.len()];
                let p2 = partials[(k * 3 + m) % partials.len()];
                blocks.push(Block::binary(own - d1, p1, own - d2, p2));
                let own = own + 1;
                blocks.push(Block::unary(own - d1, p1));
                blocks.push(Block::binary(0, 0.0, own + 1 - d2, p2));
            }
        }
        blocks.push(Block::ZERO);
        let got = roundtrip(first, &blocks);
        for (g, b) in got.iter().zip(&blocks) {
            assert_eq!(g.to_le_bytes(), b.to_le_bytes());
        }
    }

    #[test]
    fn passive_partials_are_dropped_and_bad_operands_kept() {
        // Operand not below its own index: kept as is, for the reader to report.
        let got = roundtrip(10, &[Block::binary(0, 3.0, 12, 2.0), Block::unary(11, 1.0)]);
        assert_eq!(
            got[0].to_le_bytes(),
            Block::binary(0, 0.0, 12, 2.0).to_le_bytes()
        );
        assert_eq!(got[1].to_le_bytes(), Block::unary(11, 1.0).to_le_bytes());
    }
}

/// A piece of a parsed stream: where its tags and payloads are.
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Index of its first entry.
    pub first: u64,
    /// Number of entries.
    pub count: u32,
    /// Byte offset of its tags in the stream.
    pub tags: usize,
    /// Byte offset of its first payload.
    pub payload: usize,
    /// Payload bytes.
    pub payload_len: usize,
}

#[cfg(feature = "std")]
impl Piece {
    /// The piece whose header is at `at` of `bytes`, its fields as the
    /// header gives them, unchecked (see [`parse`] for the checks); `None`
    /// when fewer than a header's bytes are left.
    pub fn read_header(bytes: &[u8], at: usize) -> Option<Piece> {
        let h = bytes.get(at..at.checked_add(PIECE_HEADER_BYTES)?)?;
        let count = u32::from_le_bytes(h[8..12].try_into().unwrap());
        let tags = at + PIECE_HEADER_BYTES;
        Some(Piece {
            first: u64::from_le_bytes(h[..8].try_into().unwrap()),
            count,
            tags,
            payload: tags.saturating_add(count as usize),
            payload_len: u32::from_le_bytes(h[12..16].try_into().unwrap()) as usize,
        })
    }

    /// One past the index of its last entry.
    pub fn end(&self) -> u64 {
        self.first + self.count as u64
    }

    /// The offset just past the piece, its padding included.
    pub fn next(&self) -> usize {
        self.payload
            .saturating_add(self.payload_len)
            .saturating_add(PIECE_PAD)
    }

    /// The piece's entries in `bytes` (its stream), front to back. Each is
    /// decoded only where its payload and the 8 bytes a decoder loads
    /// beyond lie in `bytes`, which holds for every piece [`parse`]
    /// returns; a piece that does not fit ends there.
    pub fn entries<'a>(&self, bytes: &'a [u8]) -> Entries<'a> {
        Entries {
            bytes,
            own: self.first,
            tag: self.tags,
            tags_end: self.payload.min(bytes.len()),
            at: self.payload,
        }
    }
}

/// The entries of a piece, front to back ([`Piece::entries`]).
#[cfg(feature = "std")]
pub struct Entries<'a> {
    bytes: &'a [u8],
    own: u64,
    tag: usize,
    tags_end: usize,
    at: usize,
}

#[cfg(feature = "std")]
impl Iterator for Entries<'_> {
    type Item = Block;

    #[inline(always)]
    fn next(&mut self) -> Option<Block> {
        if self.tag >= self.tags_end {
            return None;
        }
        let l = &LAYOUTS[self.bytes[self.tag] as usize];
        let len = l.len as usize;
        if self.at + len + 8 > self.bytes.len() {
            return None;
        }
        // SAFETY: the payload and the 8 bytes beyond it lie in `bytes`
        // (checked just above).
        let b = unsafe { decode_at(self.own, l, self.bytes.as_ptr().add(self.at)) };
        self.tag += 1;
        self.own += 1;
        self.at += len;
        Some(b)
    }
}

/// What is wrong with a compact stream: (byte offset, what).
#[cfg(feature = "std")]
pub type ParseFailure = (usize, String);

/// Checks a compact stream's header and pieces (every tag known, every
/// piece's payload the sum of its tags' lengths, pieces disjoint or exact
/// copies, entry 0 passive) and returns its pieces sorted by first index,
/// copies dropped, and the number of entries the tape spans. Operand order
/// is left to the sweeps, as for blocks.
#[cfg(feature = "std")]
pub fn parse(bytes: &[u8]) -> Result<(Vec<Piece>, u64), ParseFailure> {
    let fail = |at: usize, what: String| Err((at, what));
    if bytes.len() < HEADER_BYTES || bytes[..8] != MAGIC {
        return fail(0, "no compact tape header (`dgadtape`)".into());
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    if version != VERSION {
        return fail(
            8,
            format!("compact tape version {version}; this dgad reads version {VERSION}"),
        );
    }
    let declared = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
    let mut pieces = Vec::new();
    let mut at = HEADER_BYTES;
    while at < bytes.len() {
        let Some(piece) = Piece::read_header(bytes, at) else {
            return fail(at, "a piece header is cut off".into());
        };
        let Piece {
            first,
            count,
            tags,
            payload,
            payload_len,
        } = piece;
        if count == 0 || count as usize > PIECE_ENTRIES {
            return fail(
                at,
                format!("a piece of {count} entries (1 to {PIECE_ENTRIES})"),
            );
        }
        if first.checked_add(count as u64).is_none() {
            return fail(
                at,
                format!("a piece at index {first} runs past the last index"),
            );
        }
        let end = piece.next();
        if end > bytes.len() {
            return fail(at, format!("the piece at index {first} is cut off"));
        }
        let mut sum = 0usize;
        for (k, &t) in bytes[tags..payload].iter().enumerate() {
            if t as usize >= TAGS {
                return fail(tags + k, format!("unknown entry tag {t}"));
            }
            let l = &LAYOUTS[t as usize];
            sum += l.len as usize;
        }
        if sum != payload_len {
            return fail(
                at,
                format!(
                    "the piece at index {first} declares {payload_len} payload bytes, its tags {sum}"
                ),
            );
        }
        if first == 0 && bytes[tags] != 0 {
            return fail(tags, "entry 0 has operands; it is the passive index".into());
        }
        pieces.push(piece);
        at = end;
    }
    pieces.sort_unstable_by_key(|p| (p.first, p.count));
    let mut kept: Vec<Piece> = Vec::with_capacity(pieces.len());
    for p in pieces {
        if let Some(last) = kept.last() {
            let span = |q: &Piece| &bytes[q.tags - PIECE_HEADER_BYTES..q.payload + q.payload_len];
            if last.first == p.first && span(last) == span(&p) {
                continue;
            }
            if p.first < last.end() {
                return fail(
                    p.tags - PIECE_HEADER_BYTES,
                    format!(
                        "pieces overlap: indices {}..{} and {}..{}",
                        last.first,
                        last.end(),
                        p.first,
                        p.end()
                    ),
                );
            }
        }
        kept.push(p);
    }
    let spanned = kept.last().map_or(1, |p| p.end()).max(1);
    let entries = if declared == 0 { spanned } else { declared };
    if entries < spanned {
        return fail(
            16,
            format!("the header declares {entries} entries, the pieces reach index {spanned}"),
        );
    }
    Ok((kept, entries))
}
