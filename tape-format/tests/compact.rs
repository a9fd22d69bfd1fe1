//! The compact tape format (`tape_format::compact`): round trips through
//! files of pseudo-random tapes, the documented encoding of single entries,
//! distances up to 2^64 through `encode_piece` and `decode_at`, each error
//! of a malformed stream with its message, and a deterministic fuzz of the
//! parser.

use std::fs;
use std::path::Path;

use tape_format::compact::{
    self, decode_at, encode_piece, max_piece_bytes, HEADER_BYTES, LAYOUTS, PIECE_ENTRIES,
    PIECE_HEADER_BYTES, PIECE_PAD, TAGS,
};
use tape_format::{
    export_blocks, tape_blocks, write_compact, Block, FormatError, Layout, Tape, TapeSummary,
};

/// Deterministic pseudo-random numbers (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Partials whose bits are easy to lose: signed zeros, NaNs with payloads
/// (quiet and signalling, both signs), infinities, the neighbours of ±1,
/// subnormals.
const SPECIAL_PARTIALS: [u64; 18] = [
    0x3ff0_0000_0000_0000, // 1.0
    0xbff0_0000_0000_0000, // -1.0
    0x8000_0000_0000_0000, // -0.0
    0x0000_0000_0000_0000, // 0.0
    0x7ff8_0000_0000_0000, // NaN
    0x7ff8_0000_dead_beef, // NaN with a payload
    0xfff8_0000_0000_0001, // negative NaN with a payload
    0x7ff0_0000_0000_0001, // signalling NaN
    0xfff4_0000_0000_0000, // negative signalling NaN
    0x7ff0_0000_0000_0000, // +inf
    0xfff0_0000_0000_0000, // -inf
    0x3ff0_0000_0000_0001, // 1 + eps
    0x3fef_ffff_ffff_ffff, // 1 - eps/2
    0xbff0_0000_0000_0001, // -(1 + eps)
    0x3ff0_0000_0000_0100, // differs from 1.0 in the second byte
    0xbfe0_0000_0000_0000, // -0.5
    0x0000_0000_0000_0001, // smallest subnormal
    0x8000_0000_0000_0001, // its negative
];

fn partial(rng: &mut Rng) -> f64 {
    match rng.below(20) {
        0..=7 => 1.0,
        8..=10 => -1.0,
        11..=15 => f64::from_bits(rng.pick(&SPECIAL_PARTIALS)),
        _ => f64::from_bits(rng.next()),
    }
}

/// A partial that is not `+0.0` (for passive operands whose partial must
/// be dropped).
fn nonzero_partial(rng: &mut Rng) -> f64 {
    loop {
        let p = partial(rng);
        if p.to_bits() != 0 {
            return p;
        }
    }
}

/// An active operand of entry `own` (`own >= 2`): mostly near, sometimes
/// 256 to 65535 back, sometimes anywhere.
fn operand(rng: &mut Rng, own: u64) -> u64 {
    let d = match rng.below(10) {
        0..=4 => rng.range(1, 255.min(own - 1)),
        5..=6 if own > 257 => rng.range(256, 65535.min(own - 1)),
        _ => rng.range(1, own - 1),
    };
    own - d
}

/// A valid tape (every operand below its entry) of about `len` blocks with
/// every kind of entry the compact format treats specially: unary and
/// binary blocks, x*x, passive operands with nonzero partials (index 0 with
/// partials `-0.0` too, which is not an all-zero block), inputs, and runs
/// of all-zero blocks of 1 to 31, exactly 32 and 33, and longer ones.
fn random_blocks(rng: &mut Rng, len: usize) -> Vec<Block> {
    let mut blocks = vec![Block::ZERO; 4];
    while blocks.len() < len {
        let own = blocks.len() as u64;
        let block = match rng.below(100) {
            0..=39 => Block::binary(
                operand(rng, own),
                partial(rng),
                operand(rng, own),
                partial(rng),
            ),
            40..=56 => Block::unary(operand(rng, own), partial(rng)),
            57..=66 => {
                let a = operand(rng, own);
                Block::binary(a, partial(rng), a, partial(rng))
            }
            67..=74 => Block::binary(0, nonzero_partial(rng), operand(rng, own), partial(rng)),
            75..=82 => Block::binary(operand(rng, own), partial(rng), 0, nonzero_partial(rng)),
            83..=85 => Block::binary(0, nonzero_partial(rng), 0, nonzero_partial(rng)),
            86 => Block::binary(0, -0.0, 0, 0.0),
            87 => Block::unary(0, f64::NAN),
            88..=94 => Block::ZERO,
            95 => {
                let run = rng.pick(&[1, 2, 5, 17, 31, 32, 33, 34, 63, 64, 65, 100, 300]);
                blocks.resize(blocks.len() + run - 1, Block::ZERO);
                Block::ZERO
            }
            96 => {
                // Two zero runs around a passive-only entry: the writer must
                // not mistake the `-0.0` partial for a zero block.
                let run = rng.pick(&[20usize, 31, 32, 40]);
                blocks.resize(blocks.len() + run, Block::ZERO);
                blocks.push(Block::binary(0, -0.0, 0, -0.0));
                blocks.resize(blocks.len() + run - 1, Block::ZERO);
                Block::ZERO
            }
            _ => Block::binary(operand(rng, own), -1.0, operand(rng, own), 1.0),
        };
        blocks.push(block);
    }
    blocks
}

/// The entry as a compact tape keeps it: a passive operand's partial is 0.
fn normalized(b: &Block) -> Block {
    Block {
        index1: b.index1,
        index2: b.index2,
        partial1: if b.index1 == 0 { 0.0 } else { b.partial1 },
        partial2: if b.index2 == 0 { 0.0 } else { b.partial2 },
    }
}

fn block_bytes<'a>(blocks: impl IntoIterator<Item = &'a Block>) -> Vec<u8> {
    blocks.into_iter().flat_map(|b| b.to_le_bytes()).collect()
}

/// Counts of active operands computed from the blocks directly.
fn summary_of(blocks: &[Block]) -> TapeSummary {
    let mut s = TapeSummary {
        blocks: blocks.len() as u64,
        ..TapeSummary::default()
    };
    for b in blocks {
        match (b.index1 != 0) as u8 + (b.index2 != 0) as u8 {
            0 => s.no_active_operand += 1,
            1 => s.one_active_operand += 1,
            _ => s.two_active_operands += 1,
        }
    }
    s
}

/// Every entry of `tape` in index order, checked to come in that order.
fn entries(tape: &Tape) -> Vec<Block> {
    let mut all = Vec::new();
    tape.try_for_each_entry(|i, b| -> Result<(), ()> {
        assert_eq!(i, all.len() as u64, "entries out of order");
        all.push(*b);
        Ok(())
    })
    .unwrap();
    all
}

/// Writes `blocks` as a compact file, reads it back every way there is, and
/// checks each entry bit for bit against the normalized original. Returns
/// the compact file's size.
fn check_round_trip(blocks: &[Block]) -> u64 {
    let n = blocks.len() as u64;
    let original = Tape::from_blocks(blocks.to_vec(), "dg-tape").unwrap();
    assert!(!original.is_compact());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dg-tape");
    let written = write_compact(&path, &original).unwrap();
    let bytes = fs::read(&path).unwrap();
    assert_eq!(written, bytes.len() as u64);
    assert_eq!(&bytes[..8], b"dgadtape");
    assert_eq!(bytes[..HEADER_BYTES], compact::header(n));

    let tape = Tape::open(&path).unwrap();
    assert!(tape.is_compact());
    assert!(tape.blocks().is_none());
    assert_eq!(tape.block_count(), n);
    assert_eq!(tape.byte_len(), bytes.len() as u64);
    assert_eq!(tape.file(), "dg-tape");
    assert_eq!(tape_blocks(&path).unwrap(), n);

    let expected: Vec<Block> = blocks.iter().map(normalized).collect();
    let got = entries(&tape);
    assert_eq!(got.len(), blocks.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(
            g.to_le_bytes(),
            e.to_le_bytes(),
            "entry {i}: {g:?}, written {:?}",
            blocks[i]
        );
    }
    for (i, e) in expected.iter().enumerate() {
        let g = tape.entry(i as u64).unwrap();
        assert_eq!(g.to_le_bytes(), e.to_le_bytes(), "entry({i})");
    }
    assert!(tape.entry(n).is_none());
    assert!(tape.entry(u64::MAX).is_none());

    let summary = tape.validate().unwrap();
    assert_eq!(summary, original.validate().unwrap());
    assert_eq!(summary, summary_of(blocks));

    let exported = dir.path().join("exported");
    assert_eq!(export_blocks(&exported, &tape).unwrap(), n);
    assert_eq!(fs::read(&exported).unwrap(), block_bytes(&expected));
    // A block tape exports as it is, passive partials included.
    let exported_original = dir.path().join("exported-original");
    assert_eq!(export_blocks(&exported_original, &original).unwrap(), n);
    assert_eq!(fs::read(&exported_original).unwrap(), block_bytes(blocks));

    // The same stream from memory; re-encoding the compact tape gives what
    // encoding the normalized blocks gives.
    let in_memory = Tape::from_compact_bytes(bytes.clone(), "in memory").unwrap();
    assert_eq!(block_bytes(&entries(&in_memory)), block_bytes(&expected));
    let again = dir.path().join("again");
    write_compact(&again, &tape).unwrap();
    let from_normalized = dir.path().join("from-normalized");
    write_compact(
        &from_normalized,
        &Tape::from_blocks(expected.clone(), "dg-tape").unwrap(),
    )
    .unwrap();
    assert_eq!(
        fs::read(&again).unwrap(),
        fs::read(&from_normalized).unwrap()
    );

    let Layout::Compact(view) = tape.layout() else {
        panic!("a compact tape's layout is not compact");
    };
    assert_eq!(view.bytes, &bytes[..]);
    for w in view.pieces.windows(2) {
        assert!(w[0].end() <= w[1].first, "{:?}", view.pieces);
    }
    for p in view.pieces {
        assert!(p.count >= 1 && p.count as usize <= PIECE_ENTRIES, "{p:?}");
        assert!(p.end() <= n);
    }
    bytes.len() as u64
}

#[test]
fn random_tapes_round_trip_bit_for_bit_through_compact_files() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for len in [1, 2, 5, 33, 40, 300, 4095, 4096, 4097, 4098, 9000, 14_000] {
        let blocks = if len <= 5 {
            vec![Block::ZERO; len]
        } else {
            let mut b = random_blocks(&mut rng, len);
            b.truncate(len);
            b
        };
        check_round_trip(&blocks);
    }
}

#[test]
fn more_than_4096_entries_are_written_as_several_pieces() {
    let mut rng = Rng(7);
    let blocks: Vec<Block> = (0..10_000u64)
        .map(|i| {
            if i < 3 {
                Block::ZERO
            } else {
                Block::binary(operand(&mut rng, i), 1.0, operand(&mut rng, i), -1.0)
            }
        })
        .collect();
    let size = check_round_trip(&blocks);
    let tape = Tape::from_blocks(blocks, "dg-tape").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dg-tape");
    write_compact(&path, &tape).unwrap();
    let compact = Tape::open(&path).unwrap();
    let Layout::Compact(view) = compact.layout() else {
        panic!("not compact");
    };
    // No gaps: three pieces, 4096 + 4096 + 1808 entries.
    let spans: Vec<(u64, u32)> = view.pieces.iter().map(|p| (p.first, p.count)).collect();
    assert_eq!(spans, [(0, 4096), (4096, 4096), (8192, 1808)]);
    // Partials ±1 take no payload: a tag and two distances of 1 or 2 bytes.
    assert!(size < 10_000 * 6, "{size} bytes");
}

#[test]
fn runs_of_32_or_more_zero_blocks_cost_nothing_and_shorter_runs_a_byte_each() {
    let active = |i: u64| Block::binary(i - 1, 1.0, i - 2, 2.0);
    let tape_with_run = |run: u64| -> Vec<Block> {
        let mut blocks = vec![Block::ZERO; 3];
        blocks.extend((3..10).map(active));
        blocks.resize(blocks.len() + run as usize, Block::ZERO);
        let next = blocks.len() as u64;
        blocks.extend((next..next + 7).map(active));
        blocks
    };
    let sizes: Vec<u64> = [0, 1, 31, 32, 33, 100_000]
        .iter()
        .map(|&run| check_round_trip(&tape_with_run(run)))
        .collect();
    // A short run is one tag byte per entry in the same piece.
    assert_eq!(sizes[1], sizes[0] + 1);
    assert_eq!(sizes[2], sizes[0] + 31);
    // From 32 on, the run is left out and a second piece starts after it:
    // a piece header and padding, whatever the length of the run.
    let second_piece = (PIECE_HEADER_BYTES + PIECE_PAD) as u64;
    assert_eq!(sizes[3], sizes[0] + second_piece);
    assert_eq!(sizes[4], sizes[3]);
    assert_eq!(sizes[5], sizes[3]);

    // Trailing zero blocks are entries the header counts, no piece holds.
    let mut blocks = tape_with_run(0);
    let before = check_round_trip(&blocks);
    blocks.resize(blocks.len() + 1000, Block::ZERO);
    assert_eq!(check_round_trip(&blocks), before);
}

#[test]
fn a_typical_tape_takes_far_less_than_32_bytes_an_entry() {
    // Mostly additions and multiplications of recent values.
    let mut rng = Rng(0xdead_beef);
    let mut blocks = vec![Block::ZERO; 11];
    for i in 11..20_000u64 {
        let near = |rng: &mut Rng| i - rng.range(1, 300.min(i - 1));
        blocks.push(match rng.below(10) {
            0..=3 => Block::binary(near(&mut rng), 1.0, near(&mut rng), 1.0),
            4 => Block::binary(near(&mut rng), 1.0, near(&mut rng), -1.0),
            5..=7 => {
                let (a, b) = (near(&mut rng), near(&mut rng));
                Block::binary(a, (b as f64).sqrt(), b, (a as f64).ln())
            }
            8 => Block::unary(near(&mut rng), (i as f64).cos()),
            _ => Block::binary(0, 3.5, near(&mut rng), 2.0),
        });
    }
    let size = check_round_trip(&blocks);
    let blocks_size = 32 * blocks.len() as u64;
    assert!(size < blocks_size / 3, "{size} bytes vs {blocks_size}");
}

/// Encodes `blocks` as one piece starting at `first`.
fn piece(first: u64, blocks: &[Block]) -> Vec<u8> {
    let mut out = vec![0xa5u8; max_piece_bytes(blocks.len())];
    let len = encode_piece(first, blocks, &mut out);
    out.truncate(len);
    out
}

/// Decodes a piece made by [`piece`] with the public tag layouts.
fn decode_piece(bytes: &[u8]) -> (u64, Vec<Block>) {
    let first = u64::from_le_bytes(bytes[0..8].try_into().unwrap());
    let n = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let payload = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), PIECE_HEADER_BYTES + n + payload + PIECE_PAD);
    assert!(bytes[bytes.len() - PIECE_PAD..].iter().all(|&b| b == 0));
    let mut at = PIECE_HEADER_BYTES + n;
    let mut got = Vec::with_capacity(n);
    for k in 0..n {
        let tag = bytes[PIECE_HEADER_BYTES + k];
        assert!((tag as usize) < TAGS, "tag {tag}");
        let l = &LAYOUTS[tag as usize];
        assert!(at + l.len as usize + 8 <= bytes.len());
        // SAFETY: the payload and the 8 bytes after it are in `bytes`
        // (checked just above).
        got.push(unsafe { decode_at(first + k as u64, l, bytes.as_ptr().add(at)) });
        at += l.len as usize;
    }
    assert_eq!(at, PIECE_HEADER_BYTES + n + payload);
    (first, got)
}

#[test]
fn single_entries_encode_as_the_format_describes() {
    // tag = state1 + 13 * state2; state = 1 + 3 * width code + partial code
    // (width 1, 2, 4, 8 bytes; partial +1, -1, stored), 0 when passive.
    let bytes = piece(
        1000,
        &[
            Block::unary(999, 1.0),             // 1000: distance 1, +1
            Block::binary(999, -1.0, 700, 2.5), // 1001: 2 and -1; 301 (2 bytes), stored
            Block::binary(0, 7.0, 0, 0.0),      // 1002: passive, partial dropped
            Block::binary(0, 3.0, 1, 1.0),      // 1003: passive; 1002 (2 bytes), +1
        ],
    );
    let mut expected = Vec::new();
    expected.extend_from_slice(&1000u64.to_le_bytes());
    expected.extend_from_slice(&4u32.to_le_bytes());
    expected.extend_from_slice(&(1 + 1 + 2 + 8 + 2u32).to_le_bytes());
    expected.extend_from_slice(&[1, 2 + 13 * 6, 0, 13 * 4]);
    expected.extend_from_slice(&[1]);
    expected.extend_from_slice(&[2, 0x2d, 0x01]);
    expected.extend_from_slice(&2.5f64.to_le_bytes());
    expected.extend_from_slice(&[0xea, 0x03]);
    expected.extend_from_slice(&[0; PIECE_PAD]);
    assert_eq!(bytes, expected);

    // 4- and 8-byte distances, and a stored -0.0 and NaN, at index 2^40.
    let own = 1u64 << 40;
    let bytes = piece(
        own,
        &[Block::binary(
            own - 70_000,
            -0.0,
            own - (1 << 33),
            f64::from_bits(0x7ff8_0000_dead_beef),
        )],
    );
    // States: 4 bytes stored = 1 + 3*2 + 2 = 9, 8 bytes stored = 12.
    assert_eq!(bytes[PIECE_HEADER_BYTES], 9 + 13 * 12);
    let mut payload = Vec::new();
    payload.extend_from_slice(&70_000u32.to_le_bytes());
    payload.extend_from_slice(&(1u64 << 33).to_le_bytes());
    payload.extend_from_slice(&(-0.0f64).to_le_bytes());
    payload.extend_from_slice(&0x7ff8_0000_dead_beefu64.to_le_bytes());
    assert_eq!(
        bytes[PIECE_HEADER_BYTES + 1..bytes.len() - PIECE_PAD],
        payload[..]
    );
    assert_eq!(bytes[12..16], (payload.len() as u32).to_le_bytes());
}

#[test]
fn distances_of_every_width_round_trip_through_encode_piece_and_decode_at() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let first = (1u64 << 34) + 12_345;
    let distances = |rng: &mut Rng, own: u64| -> u64 {
        match rng.below(12) {
            0 => 1,
            1 => rng.range(2, 255),
            2 => 255,
            3 => 256,
            4 => rng.range(257, 65_535),
            5 => rng.pick(&[65_535, 65_536]),
            6 => rng.range(65_537, (1 << 32) - 1),
            7 => rng.pick(&[(1 << 32) - 1, 1 << 32, (1 << 32) + 1]),
            8 => rng.range((1 << 32) + 2, own - 1),
            9 => own - 1,
            _ => rng.range(1, own - 1),
        }
    };
    let mut blocks = Vec::with_capacity(PIECE_ENTRIES);
    for k in 0..PIECE_ENTRIES as u64 {
        let own = first + k;
        let a = own - distances(&mut rng, own);
        let b = own - distances(&mut rng, own);
        blocks.push(match rng.below(8) {
            0 => Block::unary(a, partial(&mut rng)),
            1 => Block::binary(a, partial(&mut rng), a, partial(&mut rng)),
            2 => Block::binary(0, nonzero_partial(&mut rng), b, partial(&mut rng)),
            3 => Block::binary(a, partial(&mut rng), 0, nonzero_partial(&mut rng)),
            4 => Block::binary(0, nonzero_partial(&mut rng), 0, partial(&mut rng)),
            _ => Block::binary(a, partial(&mut rng), b, partial(&mut rng)),
        });
    }
    let bytes = piece(first, &blocks);
    let (got_first, got) = decode_piece(&bytes);
    assert_eq!(got_first, first);
    assert_eq!(got.len(), blocks.len());
    for (k, (g, b)) in got.iter().zip(&blocks).enumerate() {
        assert_eq!(
            g.to_le_bytes(),
            normalized(b).to_le_bytes(),
            "entry {k}: {b:?}"
        );
    }

    // The same piece as a stream: the header may leave the entry count to
    // the pieces; indices before the piece are passive.
    let mut stream = compact::header(0).to_vec();
    stream.extend_from_slice(&bytes);
    let tape = Tape::from_compact_bytes(stream, "big").unwrap();
    assert_eq!(tape.block_count(), first + PIECE_ENTRIES as u64);
    for (k, b) in blocks.iter().enumerate().step_by(7) {
        let g = tape.entry(first + k as u64).unwrap();
        assert_eq!(g.to_le_bytes(), normalized(b).to_le_bytes(), "entry {k}");
    }
    for i in [0, 1, first / 2, first - 1] {
        assert_eq!(tape.entry(i).unwrap().to_le_bytes(), [0; 32], "entry {i}");
    }
    assert!(tape.entry(first + PIECE_ENTRIES as u64).is_none());
}

#[test]
fn the_largest_entries_fill_max_piece_bytes_exactly() {
    let first = 1u64 << 40;
    let blocks: Vec<Block> = (0..PIECE_ENTRIES as u64)
        .map(|k| {
            let own = first + k;
            Block::binary(own - (1 << 33) - k, 0.5, own - (1 << 39), -3.0 - k as f64)
        })
        .collect();
    let mut out = vec![0u8; max_piece_bytes(PIECE_ENTRIES)];
    assert_eq!(
        encode_piece(first, &blocks, &mut out),
        max_piece_bytes(PIECE_ENTRIES)
    );
    let (_, got) = decode_piece(&out);
    for (g, b) in got.iter().zip(&blocks) {
        assert_eq!(g.to_le_bytes(), b.to_le_bytes());
    }
}

#[test]
fn an_operand_not_below_its_entry_is_kept_for_validate_to_report() {
    let mut blocks = vec![Block::ZERO; 40];
    blocks[17] = Block::binary(3, 1.0, 17, 1.0);
    blocks[30] = Block::binary(1 << 40, 2.0, 0, 5.0);
    let tape = Tape::from_blocks(blocks.clone(), "dg-tape").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dg-tape");
    write_compact(&path, &tape).unwrap();
    let compact = Tape::open(&path).unwrap();
    let got = entries(&compact);
    assert_eq!(got[17].to_le_bytes(), blocks[17].to_le_bytes());
    assert_eq!(
        got[30].to_le_bytes(),
        Block::binary(1 << 40, 2.0, 0, 0.0).to_le_bytes()
    );
    let expected = "dg-tape block 17: operand index 17 is not smaller than 17";
    assert_eq!(tape.validate().unwrap_err().to_string(), expected);
    assert_eq!(compact.validate().unwrap_err().to_string(), expected);
}

#[test]
fn try_for_each_entry_stops_at_the_first_error_in_a_piece_or_a_gap() {
    let mut blocks = vec![Block::ZERO; 200];
    blocks[5] = Block::unary(1, 2.0);
    blocks[150] = Block::unary(5, 3.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dg-tape");
    write_compact(&path, &Tape::from_blocks(blocks, "dg-tape").unwrap()).unwrap();
    let tape = Tape::open(&path).unwrap();
    for stop in [0u64, 5, 6, 100, 150, 151, 199] {
        let mut calls = 0;
        let result = tape.try_for_each_entry(|i, _| {
            calls += 1;
            if i == stop {
                Err(i)
            } else {
                Ok(())
            }
        });
        assert_eq!(result, Err(stop));
        assert_eq!(calls, stop + 1);
    }
}

/// A stream: the header for `entries`, then `pieces` in this order.
fn stream(entries: u64, pieces: &[&[u8]]) -> Vec<u8> {
    let mut s = compact::header(entries).to_vec();
    for p in pieces {
        s.extend_from_slice(p);
    }
    s
}

/// The message of the error that parsing `bytes` gives.
fn parse_error(bytes: Vec<u8>) -> String {
    match Tape::from_compact_bytes(bytes, "dg-tape") {
        Ok(tape) => panic!("a bad stream parsed ({} entries)", tape.block_count()),
        Err(e) => e.to_string(),
    }
}

/// Indices 1..5: two inputs, x1 * x2 (18 payload bytes), a negation (1).
fn piece_1_to_5() -> Vec<u8> {
    piece(
        1,
        &[
            Block::ZERO,
            Block::ZERO,
            Block::binary(1, 2.0, 2, 3.0),
            Block::unary(3, -1.0),
        ],
    )
}

const PIECE_1_TO_5_LEN: usize = PIECE_HEADER_BYTES + 4 + 19 + PIECE_PAD;

#[test]
fn a_hand_built_stream_parses_to_its_entries() {
    let p = piece_1_to_5();
    assert_eq!(p.len(), PIECE_1_TO_5_LEN);
    let tape = Tape::from_compact_bytes(stream(0, &[&p]), "dg-tape").unwrap();
    assert_eq!(tape.block_count(), 5);
    let got = block_bytes(&entries(&tape));
    let expected = block_bytes(&[
        Block::ZERO,
        Block::ZERO,
        Block::ZERO,
        Block::binary(1, 2.0, 2, 3.0),
        Block::unary(3, -1.0),
    ]);
    assert_eq!(got, expected);
    // A header may declare more entries than the pieces reach.
    let tape = Tape::from_compact_bytes(stream(9, &[&p]), "dg-tape").unwrap();
    assert_eq!(tape.block_count(), 9);
    assert_eq!(
        tape.validate().unwrap(),
        TapeSummary {
            blocks: 9,
            no_active_operand: 7,
            one_active_operand: 1,
            two_active_operands: 1
        }
    );
    // A header alone is a tape of entry 0, or of as many passive entries as
    // it declares.
    let tape = Tape::from_compact_bytes(stream(0, &[]), "dg-tape").unwrap();
    assert_eq!(tape.block_count(), 1);
    assert_eq!(entries(&tape).len(), 1);
    let tape = Tape::from_compact_bytes(stream(50, &[]), "dg-tape").unwrap();
    assert_eq!(tape.block_count(), 50);
    assert_eq!(tape.validate().unwrap().no_active_operand, 50);
    // Entry 0 may be in a piece with passive operands (partials dropped).
    let p0 = piece(0, &[Block::binary(0, 2.0, 0, -1.0)]);
    let tape = Tape::from_compact_bytes(stream(0, &[&p0, &p]), "dg-tape").unwrap();
    assert_eq!(tape.entry(0).unwrap().to_le_bytes(), [0; 32]);
    assert_eq!(block_bytes(&entries(&tape)), expected);
    // Adjacent pieces, in any order.
    let p5 = piece(5, &[Block::unary(4, 1.0)]);
    let tape = Tape::from_compact_bytes(stream(0, &[&p5, &p]), "dg-tape").unwrap();
    assert_eq!(tape.block_count(), 6);
    assert_eq!(
        tape.entry(5).unwrap().to_le_bytes(),
        Block::unary(4, 1.0).to_le_bytes()
    );
}

#[test]
fn an_exact_copy_of_a_piece_is_accepted_once() {
    let p = piece_1_to_5();
    let q = piece(
        40,
        &[Block::unary(4, 0.25), Block::binary(40, -1.0, 2, 1.0)],
    );
    let single = Tape::from_compact_bytes(stream(0, &[&p, &q]), "dg-tape").unwrap();
    for order in [[&p, &q, &p], [&p, &p, &q], [&q, &p, &p]] {
        let tape = Tape::from_compact_bytes(stream(0, &order.map(|v| &v[..])), "dg-tape").unwrap();
        assert_eq!(tape.block_count(), 42);
        assert_eq!(block_bytes(&entries(&tape)), block_bytes(&entries(&single)));
        let Layout::Compact(view) = tape.layout() else {
            panic!("not compact");
        };
        let spans: Vec<(u64, u32)> = view.pieces.iter().map(|p| (p.first, p.count)).collect();
        assert_eq!(spans, [(1, 4), (40, 2)]);
        assert_eq!(tape.validate().unwrap(), single.validate().unwrap());
    }
}

#[test]
fn a_wrong_header_or_version_is_reported() {
    let p = piece_1_to_5();
    let mut s = stream(0, &[&p]);
    s[8] = 2;
    assert_eq!(
        parse_error(s),
        "dg-tape: not a valid compact tape at byte 8: compact tape version 2; \
         this dgad reads version 1"
    );
    let mut s = stream(0, &[&p]);
    s[0] = b'D';
    assert_eq!(
        parse_error(s),
        "dg-tape: not a valid compact tape at byte 0: no compact tape header (`dgadtape`)"
    );
    for len in [0, 8, HEADER_BYTES - 1] {
        let s = stream(0, &[])[..len].to_vec();
        assert_eq!(
            parse_error(s),
            "dg-tape: not a valid compact tape at byte 0: no compact tape header (`dgadtape`)",
            "{len} bytes"
        );
    }
}

#[test]
fn an_unknown_tag_is_reported_at_its_byte() {
    let tag3 = HEADER_BYTES + PIECE_HEADER_BYTES + 2;
    for bad in [TAGS as u8, 200, 255] {
        let mut s = stream(0, &[&piece_1_to_5()]);
        assert_eq!(s[tag3], 3 + 13 * 3, "the tag of x1 * x2");
        s[tag3] = bad;
        assert_eq!(
            parse_error(s),
            format!("dg-tape: not a valid compact tape at byte {tag3}: unknown entry tag {bad}")
        );
    }
    // The last known tag is fine where the payload agrees: 8-byte distance
    // and stored partial for both operands, 32 bytes.
    assert_eq!(LAYOUTS[TAGS - 1].len, 32);
}

#[test]
fn cut_off_pieces_are_reported() {
    let p = piece_1_to_5();
    let end = HEADER_BYTES + PIECE_1_TO_5_LEN;
    for extra in 1..PIECE_HEADER_BYTES {
        let mut s = stream(0, &[&p]);
        s.resize(s.len() + extra, 0);
        assert_eq!(
            parse_error(s),
            format!("dg-tape: not a valid compact tape at byte {end}: a piece header is cut off")
        );
    }
    for len in [end - 1, end - PIECE_PAD, HEADER_BYTES + PIECE_HEADER_BYTES] {
        let s = stream(0, &[&p])[..len].to_vec();
        assert_eq!(
            parse_error(s),
            "dg-tape: not a valid compact tape at byte 24: the piece at index 1 is cut off",
            "{len} bytes"
        );
    }
    // A payload length beyond the end of the stream, up to u32::MAX.
    for declared in [1000u32, u32::MAX] {
        let mut s = stream(0, &[&p]);
        s[HEADER_BYTES + 12..HEADER_BYTES + 16].copy_from_slice(&declared.to_le_bytes());
        assert_eq!(
            parse_error(s),
            "dg-tape: not a valid compact tape at byte 24: the piece at index 1 is cut off"
        );
    }
}

#[test]
fn a_payload_length_other_than_the_tags_sum_is_reported() {
    let p = piece_1_to_5();
    let mut s = stream(0, &[&p]);
    s[HEADER_BYTES + 12..HEADER_BYTES + 16].copy_from_slice(&18u32.to_le_bytes());
    assert_eq!(
        parse_error(s),
        "dg-tape: not a valid compact tape at byte 24: the piece at index 1 declares 18 \
         payload bytes, its tags 19"
    );
    // x1 * x2 with its second partial +1 instead of stored: 10 bytes less.
    let mut s = stream(0, &[&p]);
    s[HEADER_BYTES + PIECE_HEADER_BYTES + 2] = 3 + 13;
    assert_eq!(
        parse_error(s),
        "dg-tape: not a valid compact tape at byte 24: the piece at index 1 declares 19 \
         payload bytes, its tags 11"
    );
}

#[test]
fn a_piece_of_no_or_too_many_entries_or_past_the_last_index_is_reported() {
    let p = piece_1_to_5();
    for count in [0u32, PIECE_ENTRIES as u32 + 1, u32::MAX] {
        let mut s = stream(0, &[&p]);
        s[HEADER_BYTES + 8..HEADER_BYTES + 12].copy_from_slice(&count.to_le_bytes());
        assert_eq!(
            parse_error(s),
            format!(
                "dg-tape: not a valid compact tape at byte 24: a piece of {count} entries \
                 (1 to 4096)"
            )
        );
    }
    let mut s = stream(0, &[&p]);
    let first = u64::MAX - 2;
    s[HEADER_BYTES..HEADER_BYTES + 8].copy_from_slice(&first.to_le_bytes());
    assert_eq!(
        parse_error(s),
        format!(
            "dg-tape: not a valid compact tape at byte 24: a piece at index {first} runs past \
             the last index"
        )
    );
}

#[test]
fn overlapping_pieces_are_reported() {
    let p = piece_1_to_5();
    let q = piece(3, &[Block::unary(1, 1.0), Block::unary(2, 1.0)]);
    let second = HEADER_BYTES + PIECE_1_TO_5_LEN;
    assert_eq!(
        parse_error(stream(0, &[&p, &q])),
        format!(
            "dg-tape: not a valid compact tape at byte {second}: pieces overlap: indices 1..5 \
             and 3..5"
        )
    );
    assert_eq!(
        parse_error(stream(0, &[&q, &p])),
        "dg-tape: not a valid compact tape at byte 24: pieces overlap: indices 1..5 and 3..5"
    );
    // One entry in common.
    let r = piece(4, &[Block::unary(1, 1.0), Block::unary(2, 1.0)]);
    assert_eq!(
        parse_error(stream(0, &[&r, &p])),
        "dg-tape: not a valid compact tape at byte 24: pieces overlap: indices 1..5 and 4..6"
    );
    // The same indices with another partial: not a copy.
    let other = piece(
        1,
        &[
            Block::ZERO,
            Block::ZERO,
            Block::binary(1, 2.0, 2, 3.5),
            Block::unary(3, -1.0),
        ],
    );
    let message = parse_error(stream(0, &[&p, &other]));
    let rest = ": pieces overlap: indices 1..5 and 1..5";
    assert!(
        message == format!("dg-tape: not a valid compact tape at byte 24{rest}")
            || message == format!("dg-tape: not a valid compact tape at byte {second}{rest}"),
        "{message}"
    );
    // A piece inside another, from the same first index on.
    let inner = piece(1, &[Block::ZERO]);
    assert_eq!(
        parse_error(stream(0, &[&p, &inner])),
        "dg-tape: not a valid compact tape at byte 24: pieces overlap: indices 1..2 and 1..5"
    );
}

#[test]
fn entry_0_with_an_operand_is_reported() {
    for block in [
        Block::unary(5, 1.0),
        Block::binary(0, 0.0, 1, -1.0),
        Block::unary(0xffff_ffff, 2.0),
    ] {
        let p0 = piece(0, &[block, Block::ZERO]);
        assert_ne!(p0[PIECE_HEADER_BYTES], 0);
        assert_eq!(
            parse_error(stream(0, &[&p0])),
            "dg-tape: not a valid compact tape at byte 40: entry 0 has operands; it is the \
             passive index"
        );
    }
}

#[test]
fn a_header_declaring_fewer_entries_than_the_pieces_reach_is_reported() {
    let p = piece_1_to_5();
    for declared in [1u64, 3, 4] {
        assert_eq!(
            parse_error(stream(declared, &[&p])),
            format!(
                "dg-tape: not a valid compact tape at byte 16: the header declares {declared} \
                 entries, the pieces reach index 5"
            )
        );
    }
    let tape = Tape::from_compact_bytes(stream(5, &[&p]), "dg-tape").unwrap();
    assert_eq!(tape.block_count(), 5);
}

#[test]
fn opening_a_bad_compact_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dg-tape");
    let open_error = |path: &Path| match Tape::open(path) {
        Ok(_) => panic!("opened"),
        Err(e) => e.to_string(),
    };
    // The magic alone: too short for a header.
    fs::write(&path, b"dgadtape").unwrap();
    assert_eq!(
        open_error(&path),
        "dg-tape: not a valid compact tape at byte 0: no compact tape header (`dgadtape`)"
    );
    let mut s = stream(0, &[&piece_1_to_5()]);
    s[8] = 7;
    fs::write(&path, &s).unwrap();
    assert_eq!(
        open_error(&path),
        "dg-tape: not a valid compact tape at byte 8: compact tape version 7; this dgad reads \
         version 1"
    );
    match tape_blocks(&path) {
        // The header declares no count: the pieces are parsed for it.
        Err(FormatError::BadCompactTape { offset: 8, .. }) => {}
        other => panic!("{:?}", other.map_err(|e| e.to_string())),
    }
    // A declared count is taken from the header alone.
    fs::write(&path, stream(77, &[&piece_1_to_5()])).unwrap();
    assert_eq!(tape_blocks(&path).unwrap(), 77);
    assert_eq!(Tape::open(&path).unwrap().block_count(), 77);
}

#[test]
fn compact_memory_spans_at_least_the_entries_given() {
    let s = stream(0, &[&piece_1_to_5()]);
    for (entries, expected) in [(0, 5), (5, 5), (1000, 1000)] {
        // SAFETY: `s` outlives `tape` and is not changed while it lives.
        let tape =
            unsafe { Tape::from_compact_memory(s.as_ptr(), s.len(), entries, "mem") }.unwrap();
        assert!(tape.is_compact());
        assert_eq!(tape.block_count(), expected);
        assert_eq!(entries_count(&tape), expected);
        assert_eq!(
            tape.entry(3).unwrap().to_le_bytes(),
            Block::binary(1, 2.0, 2, 3.0).to_le_bytes()
        );
    }
}

fn entries_count(tape: &Tape) -> u64 {
    let mut n = 0;
    tape.try_for_each_entry(|_, _| -> Result<(), ()> {
        n += 1;
        Ok(())
    })
    .unwrap();
    n
}

/// Mutates `base` in one of several ways.
fn mutate(rng: &mut Rng, base: &[u8], piece_starts: &[usize]) -> Vec<u8> {
    let mut s = base.to_vec();
    let len = s.len() as u64;
    match rng.below(8) {
        0 | 1 => {
            for _ in 0..rng.range(1, 4) {
                let at = rng.below(len) as usize;
                s[at] ^= 1 << rng.below(8);
            }
        }
        2 => {
            let at = rng.below(len) as usize;
            s[at] = rng.next() as u8;
        }
        3 => s.truncate(rng.below(len + 1) as usize),
        4 => {
            // A byte range duplicated in place.
            let from = rng.below(len) as usize;
            let to = (from + rng.range(1, 300) as usize).min(s.len());
            let copy = s[from..to].to_vec();
            let at = rng.below(len + 1) as usize;
            s.splice(at..at, copy);
        }
        5 => {
            // A byte range removed.
            let from = rng.below(len) as usize;
            let to = (from + rng.range(1, 300) as usize).min(s.len());
            s.drain(from..to);
        }
        6 => {
            // A field of a piece header (first, count, payload) or of the
            // stream header (declared entries) rewritten.
            if rng.below(4) == 0 {
                s[16..24].copy_from_slice(&rng.below(20_000).to_le_bytes());
                return s;
            }
            let (off, width) = rng.pick(&[(0usize, 8usize), (8, 4), (12, 4)]);
            let random = rng.next();
            let value = rng.pick(&[0, 1, 2, 4095, 4096, 4097, 1 << 31, u64::MAX, random]);
            let start = rng.pick(piece_starts);
            let bytes = value.wrapping_add(rng.below(3)).to_le_bytes();
            s[start + off..start + off + width].copy_from_slice(&bytes[..width]);
        }
        _ => {
            // A whole piece appended again, exact or with one byte changed.
            let k = rng.below(piece_starts.len() as u64) as usize;
            let start = piece_starts[k];
            let end = piece_starts.get(k + 1).copied().unwrap_or(base.len());
            let mut copy = base[start..end].to_vec();
            if rng.below(2) == 0 {
                let at = rng.below(copy.len() as u64) as usize;
                copy[at] ^= 0x10;
            }
            s.extend_from_slice(&copy);
        }
    }
    s
}

#[test]
fn mutated_streams_parse_or_fail_without_panicking() {
    let mut rng = Rng(0x5eed_f00d_cafe_babe);
    let mut blocks = random_blocks(&mut rng, 5000);
    blocks.truncate(5000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dg-tape");
    write_compact(&path, &Tape::from_blocks(blocks, "dg-tape").unwrap()).unwrap();
    let base = fs::read(&path).unwrap();
    let piece_starts: Vec<usize> = {
        let tape = Tape::from_compact_bytes(base.clone(), "base").unwrap();
        let Layout::Compact(view) = tape.layout() else {
            panic!("not compact");
        };
        let mut starts: Vec<usize> = view
            .pieces
            .iter()
            .map(|p| p.tags - PIECE_HEADER_BYTES)
            .collect();
        starts.sort_unstable();
        starts
    };
    assert!(piece_starts.len() >= 3, "{piece_starts:?}");

    let (mut parsed, mut refused) = (0, 0);
    for round in 0..3000 {
        let s = mutate(&mut rng, &base, &piece_starts);
        let len = s.len();
        match Tape::from_compact_bytes(s, "fuzz") {
            Err(FormatError::BadCompactTape { file, offset, what }) => {
                refused += 1;
                assert_eq!(file, "fuzz");
                assert!(
                    offset <= len,
                    "round {round}: byte {offset} of {len}: {what}"
                );
                assert!(!what.is_empty());
            }
            Err(other) => panic!("round {round}: {other}"),
            Ok(tape) => {
                parsed += 1;
                let n = tape.block_count();
                assert!(n >= 1);
                assert_eq!(tape.entry(0).unwrap().to_le_bytes(), [0; 32]);
                assert!(tape.entry(n).is_none());
                let samples: Vec<u64> = (0..8).map(|_| rng.below(n)).collect();
                for &i in &samples {
                    assert!(tape.entry(i).is_some(), "round {round}, entry {i}");
                }
                // A mutated count may span 2^64 passive entries: walk only
                // tapes of a sensible size.
                if n <= 1 << 20 {
                    let all = entries(&tape);
                    assert_eq!(all.len() as u64, n);
                    for &i in &samples {
                        assert_eq!(
                            all[i as usize].to_le_bytes(),
                            tape.entry(i).unwrap().to_le_bytes(),
                            "round {round}, entry {i}"
                        );
                    }
                    match tape.validate() {
                        Ok(s) => {
                            assert_eq!(s.blocks, n);
                            assert_eq!(
                                s.no_active_operand + s.one_active_operand + s.two_active_operands,
                                n
                            );
                        }
                        Err(FormatError::OperandNotSmaller { block, operand, .. }) => {
                            assert!(operand >= block && block < n, "round {round}");
                        }
                        Err(other) => panic!("round {round}: {other}"),
                    }
                }
            }
        }
    }
    assert!(
        parsed > 300 && refused > 300,
        "{parsed} parsed, {refused} refused"
    );
}
