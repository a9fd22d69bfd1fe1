//! Sweeps over compact tapes (`tape_format::compact`) against sweeps over
//! the block tapes they were written from: the same derivatives bit for
//! bit, the same operand errors, and no panic on corrupted streams.

mod common;

use std::fs;

use common::{options, Rng};
use evaluator::{evaluate, forward_sweep, reverse_sweep, EvalError, Mode, Seeds};
use tape_format::compact::{self, PIECE_HEADER_BYTES};
use tape_format::{write_compact, Block, FormatError, Layout, Tape, ValueTable};

impl Rng {
    /// A partial as recordings have them: often ±1, sometimes signed zero,
    /// rarely infinite or NaN.
    fn partial(&mut self) -> f64 {
        match self.below(4000) {
            0 => f64::INFINITY,
            1 => f64::from_bits(0x7ff8_0000_dead_beef),
            2..=99 => -0.0,
            100..=199 => 0.0,
            200..=1399 => 1.0,
            1400..=1999 => -1.0,
            _ => self.unit(),
        }
    }
}

/// A block tape of `blocks` blocks (at least `inputs + 2`; `inputs >= 1`):
/// inputs 1 to `inputs`, then random operations, some unary, some x*x, some with
/// passive operands carrying partials (NaN and infinite too, which a sweep
/// must not let through), and runs of zero blocks (fresh indices) shorter
/// and longer than the 32 a compact writer leaves out.
fn random_blocks(rng: &mut Rng, inputs: u64, blocks: u64) -> Vec<Block> {
    let mut tape = vec![Block::ZERO; inputs as usize + 1];
    while (tape.len() as u64) < blocks {
        let i = tape.len() as u64;
        // Fresh indices (zero blocks) are rarely operands: a recording
        // leaves them unused.
        let operand = |rng: &mut Rng| {
            for _ in 0..8 {
                let j = match rng.below(12) {
                    0 => 0,
                    1 => 1 + rng.below(inputs),
                    2..=6 => i - 1 - rng.below(200.min(i - 1)),
                    _ => 1 + rng.below(i - 1),
                };
                if j <= inputs || !tape[j as usize].is_zero() {
                    return j;
                }
            }
            1 + rng.below(inputs)
        };
        let (a, b) = (operand(rng), operand(rng));
        let passive = [1.0, 3.5, f64::NAN, f64::INFINITY, -0.0][rng.below(5) as usize];
        match rng.below(150) {
            0..=29 => tape.push(Block::unary(a, rng.partial())),
            30..=44 => tape.push(Block::binary(a, rng.partial(), a, rng.partial())),
            45..=54 => tape.push(Block::binary(0, passive, b, rng.partial())),
            55..=64 => tape.push(Block::binary(a, rng.partial(), 0, passive)),
            65..=66 => tape.push(Block::binary(0, passive, 0, passive)),
            67 => {
                let run = [1, 5, 31, 32, 33, 70, 300][rng.below(7) as usize];
                tape.resize(tape.len() + run, Block::ZERO);
            }
            _ => tape.push(Block::binary(a, rng.partial(), b, rng.partial())),
        }
    }
    tape.truncate(blocks as usize);
    tape
}

/// `blocks` written as a compact stream, read back from memory.
fn compact_bytes(blocks: &[Block]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dg-tape");
    write_compact(
        &path,
        &Tape::from_blocks(blocks.to_vec(), "dg-tape").unwrap(),
    )
    .unwrap();
    fs::read(&path).unwrap()
}

/// The block tape of `blocks` and its compact twin (read back through a
/// mapped file when `mapped`, else from memory).
fn both(blocks: &[Block], mapped: bool) -> (Tape, Tape) {
    let tape = Tape::from_blocks(blocks.to_vec(), "dg-tape").unwrap();
    let compact = if mapped {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dg-tape");
        write_compact(&path, &tape).unwrap();
        // The mapping outlives the file's name.
        Tape::open(&path).unwrap()
    } else {
        Tape::from_compact_bytes(compact_bytes(blocks), "dg-tape").unwrap()
    };
    assert!(compact.is_compact());
    assert_eq!(compact.block_count(), tape.block_count());
    (tape, compact)
}

fn bits(table: &ValueTable, rows: usize) -> Vec<u64> {
    (0..rows)
        .flat_map(|r| table.row(r).iter().map(|v| v.to_bits()))
        .collect()
}

#[test]
fn evaluations_of_compact_tapes_equal_those_of_block_tapes_bit_for_bit() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for round in 0..6 {
        let n = [600, 5000, 9000][round % 3];
        let inputs = 6;
        let blocks = random_blocks(&mut rng, inputs, n);
        let (tape, compact) = both(&blocks, round % 2 == 0);
        let Layout::Compact(view) = compact.layout() else {
            panic!("not compact");
        };
        if n > 4096 {
            assert!(view.pieces.len() >= 2, "{} pieces", view.pieces.len());
        }
        // Indices anywhere: inputs, fresh (zero) blocks, passive index 0,
        // outputs shared, the last block.
        let ins: Vec<u64> = (1..=inputs).chain([0, n / 2, n - 1]).collect();
        let active: Vec<u64> = (n / 2..n)
            .filter(|&i| blocks[i as usize].max_operand() != 0)
            .collect();
        let outs: Vec<u64> = (0..7)
            .map(|_| active[rng.below(active.len() as u64) as usize])
            .chain([0, n - 1, n - 1, 3])
            .collect();
        let directions = 11;
        for mode in [Mode::Reverse, Mode::Forward] {
            let (seeded, read) = match mode {
                Mode::Reverse => (&outs, &ins),
                Mode::Forward => (&ins, &outs),
            };
            let seeds = ValueTable::new(
                directions,
                (0..seeded.len() * directions)
                    .map(|_| match rng.below(10) {
                        0 => 0.0,
                        1 => -0.0,
                        _ => rng.unit(),
                    })
                    .collect(),
            );
            let reference = evaluate(
                &tape,
                mode,
                seeded,
                Seeds::Table(&seeds),
                read,
                &options(1, 1),
            )
            .unwrap()
            .values;
            let expected = bits(&reference, read.len());
            // The comparison means something: most derivatives are neither
            // zero nor NaN.
            let ordinary = reference
                .values()
                .iter()
                .filter(|v| **v != 0.0 && v.is_finite())
                .count();
            assert!(
                ordinary * 3 > reference.values().len(),
                "round {round}, {mode:?}: {:?}",
                reference.values()
            );
            for lanes in [1, 3, 8] {
                for threads in [1, 2] {
                    for (name, t) in [("blocks", &tape), ("compact", &compact)] {
                        let got = evaluate(
                            t,
                            mode,
                            seeded,
                            Seeds::Table(&seeds),
                            read,
                            &options(lanes, threads),
                        )
                        .unwrap();
                        assert_eq!(got.plan.lanes, lanes);
                        assert_eq!(
                            bits(&got.values, read.len()),
                            expected,
                            "round {round}, {mode:?}, {name}, {lanes} lanes, {threads} threads"
                        );
                    }
                }
            }
            // A Jacobian of the identity seeds as well.
            let jacobian = |t: &Tape| {
                let e = evaluate(t, mode, seeded, Seeds::Identity, read, &options(8, 2)).unwrap();
                bits(&e.values, read.len())
            };
            assert_eq!(
                jacobian(&compact),
                jacobian(&tape),
                "round {round}, {mode:?}"
            );
        }
    }
}

#[test]
fn whole_derivative_vectors_of_compact_sweeps_equal_those_of_block_sweeps() {
    let mut rng = Rng(99);
    for round in 0..4 {
        let blocks = random_blocks(&mut rng, 4, 7000);
        let (tape, compact) = both(&blocks, round % 2 == 1);
        let n = blocks.len();

        // Reverse: bars seeded anywhere (index 0 included: the sweep clears
        // it), three lanes.
        let mut bars = vec![[0.0f64; 3]; n];
        for _ in 0..20 {
            let i = rng.below(n as u64) as usize;
            bars[i] = [rng.unit(), -0.0, rng.unit()];
        }
        let mut compact_bars = bars.clone();
        reverse_sweep::<3>(&tape, &mut bars).unwrap();
        reverse_sweep::<3>(&compact, &mut compact_bars).unwrap();
        assert_eq!(bars[0], [0.0; 3]);
        for (i, (a, b)) in bars.iter().zip(&compact_bars).enumerate() {
            assert_eq!(
                a.map(f64::to_bits),
                b.map(f64::to_bits),
                "round {round}, bar {i}"
            );
        }
        assert!(bars.iter().filter(|b| b[0] != 0.0).count() > 50);

        // Forward: dots of inputs and of some fresh indices (zero blocks).
        let mut dots = vec![[0.0f64; 2]; n];
        for d in dots.iter_mut().take(5).skip(1) {
            *d = [rng.unit(), rng.unit()];
        }
        for (i, b) in blocks.iter().enumerate().skip(5) {
            if b.is_zero() && rng.below(4) == 0 {
                dots[i] = [rng.unit(), -0.0];
            }
        }
        let mut compact_dots = dots.clone();
        forward_sweep::<2>(&tape, &mut dots).unwrap();
        forward_sweep::<2>(&compact, &mut compact_dots).unwrap();
        for (i, (a, b)) in dots.iter().zip(&compact_dots).enumerate() {
            assert_eq!(
                a.map(f64::to_bits),
                b.map(f64::to_bits),
                "round {round}, dot {i}"
            );
        }
        assert!(dots.iter().filter(|d| d[0] != 0.0).count() > 100);
    }
}

/// Reverse (two lanes) and forward (one lane) sweeps over `tape` and
/// `compact` from the same seeds; every derivative compared bit for bit.
fn assert_same_sweeps(rng: &mut Rng, tape: &Tape, compact: &Tape, what: &str) {
    let n = tape.block_count() as usize;
    let mut bars = vec![[0.0f64; 2]; n];
    for b in bars.iter_mut().skip(1) {
        if rng.below(3) == 0 {
            *b = [rng.unit(), rng.unit()];
        }
    }
    let mut compact_bars = bars.clone();
    reverse_sweep::<2>(tape, &mut bars).unwrap();
    reverse_sweep::<2>(compact, &mut compact_bars).unwrap();
    let mut dots = vec![[0.0f64; 1]; n];
    for d in dots.iter_mut().skip(1) {
        if rng.below(3) == 0 {
            *d = [rng.unit()];
        }
    }
    let mut compact_dots = dots.clone();
    forward_sweep::<1>(tape, &mut dots).unwrap();
    forward_sweep::<1>(compact, &mut compact_dots).unwrap();
    for i in 0..n {
        assert_eq!(
            bars[i].map(f64::to_bits),
            compact_bars[i].map(f64::to_bits),
            "{what}: bar {i}"
        );
        assert_eq!(
            dots[i][0].to_bits(),
            compact_dots[i][0].to_bits(),
            "{what}: dot {i}"
        );
    }
}

#[test]
fn short_tapes_and_short_pieces_between_gaps_sweep_to_the_same_bits() {
    // Fewer entries than a sweep decodes ahead, and pieces of 1 to 40
    // entries between runs of 32 to 50 fresh indices.
    let mut rng = Rng(0xabcd);
    for round in 0..40 {
        let mut blocks = vec![Block::ZERO; 3];
        for _ in 0..1 + rng.below(6) {
            for _ in 0..1 + rng.below(40) {
                let i = blocks.len() as u64;
                let active: Vec<u64> = (1..i)
                    .filter(|&j| j <= 2 || !blocks[j as usize].is_zero())
                    .collect();
                let mut pick = || active[rng.below(active.len() as u64) as usize];
                let (a, b) = (pick(), pick());
                blocks.push(match rng.below(5) {
                    0 => Block::unary(a, rng.partial()),
                    1 => Block::binary(a, rng.partial(), a, rng.partial()),
                    2 => Block::binary(0, 4.0, b, rng.partial()),
                    _ => Block::binary(a, rng.partial(), b, rng.partial()),
                });
            }
            if rng.below(4) != 0 {
                let run = 32 + rng.below(19) as usize;
                blocks.resize(blocks.len() + run, Block::ZERO);
            }
        }
        let (tape, compact) = both(&blocks, false);
        let Layout::Compact(view) = compact.layout() else {
            panic!("not compact");
        };
        assert!(!view.pieces.is_empty());
        let what = format!("round {round}, {} blocks", blocks.len());
        assert_same_sweeps(&mut rng, &tape, &compact, &what);
    }
    // The smallest tapes: entry 0 alone, and one input.
    for blocks in [vec![Block::ZERO], vec![Block::ZERO; 2]] {
        let (tape, compact) = both(&blocks, false);
        assert_same_sweeps(&mut rng, &tape, &compact, "tiny");
    }
}

/// A stream of `blocks` cut into pieces at `cuts` (indices where a piece
/// starts), leaving out all-zero entries before the first cut, as another
/// writer (the recording runtime) may.
fn hand_built(blocks: &[Block], cuts: &[usize]) -> Vec<u8> {
    let mut s = compact::header(blocks.len() as u64).to_vec();
    let mut bounds = cuts.to_vec();
    bounds.push(blocks.len());
    for w in bounds.windows(2).rev() {
        let piece = &blocks[w[0]..w[1]];
        let mut out = vec![0u8; compact::max_piece_bytes(piece.len())];
        let len = compact::encode_piece(w[0] as u64, piece, &mut out);
        s.extend_from_slice(&out[..len]);
    }
    s
}

#[test]
fn pieces_in_any_order_and_not_from_entry_0_sweep_to_the_same_bits() {
    let mut rng = Rng(0x600d);
    for round in 0..30 {
        // Entries 1 to 3 are inputs; the first piece starts at one of them
        // or after them.
        let n = 4 + rng.below(60) as usize;
        let mut blocks = vec![Block::ZERO; 4];
        for i in 4..n as u64 {
            let a = 1 + rng.below(i - 1);
            let b = 1 + rng.below(i - 1);
            blocks.push(Block::binary(a, rng.partial(), b, rng.partial()));
        }
        let mut cuts = vec![1 + rng.below(4) as usize];
        while let Some(&last) = cuts.last() {
            let next = last + 1 + rng.below(20) as usize;
            if next >= n {
                break;
            }
            cuts.push(next);
        }
        let tape = Tape::from_blocks(blocks.clone(), "dg-tape").unwrap();
        let compact = Tape::from_compact_bytes(hand_built(&blocks, &cuts), "dg-tape").unwrap();
        assert_eq!(compact.block_count(), n as u64);
        let what = format!("round {round}, {n} blocks, pieces from {cuts:?}");
        assert_same_sweeps(&mut rng, &tape, &compact, &what);
    }
}

#[test]
fn passive_partials_never_reach_a_derivative_on_either_tape() {
    // y = x1 * x2 + passive, with NaN and infinite passive partials; the
    // compact tape drops them, the block sweep must ignore them.
    let blocks = vec![
        Block::ZERO,
        Block::ZERO,                              // 1: x1 = 3
        Block::ZERO,                              // 2: x2 = -4
        Block::binary(1, -4.0, 2, 3.0),           // 3: x1 * x2
        Block::binary(3, 1.0, 0, f64::NAN),       // 4: + passive
        Block::binary(0, f64::INFINITY, 4, -1.0), // 5: passive - 4
    ];
    let (tape, compact) = both(&blocks, false);
    for t in [&tape, &compact] {
        let mut bars = [[0.0]; 6];
        bars[5] = [1.0];
        reverse_sweep::<1>(t, &mut bars).unwrap();
        assert_eq!(bars, [[0.0], [4.0], [-3.0], [-1.0], [-1.0], [1.0]]);
        let mut dots = [[0.0]; 6];
        dots[1] = [1.0];
        dots[2] = [2.0];
        forward_sweep::<1>(t, &mut dots).unwrap();
        assert_eq!(dots, [[0.0], [1.0], [2.0], [2.0], [2.0], [-2.0]]);
    }
}

#[test]
fn a_sweep_of_a_compact_tape_reports_an_operand_that_is_not_before_its_entry() {
    let mut blocks = vec![Block::ZERO; 20];
    blocks[17] = Block::binary(3, 1.0, 20, 1.0);
    let compact = Tape::from_compact_bytes(compact_bytes(&blocks), "dg-tape").unwrap();
    let expected = "dg-tape block 17: operand index 20 is not smaller than 17";
    let error = reverse_sweep::<2>(&compact, &mut [[0.0; 2]; 20]).unwrap_err();
    assert_eq!(error.to_string(), expected);
    let error = forward_sweep::<1>(&compact, &mut [[0.0]; 20]).unwrap_err();
    assert_eq!(error.to_string(), expected);
    for mode in [Mode::Reverse, Mode::Forward] {
        let error = evaluate(
            &compact,
            mode,
            &[19, 1],
            Seeds::Identity,
            &[1],
            &options(8, 2),
        )
        .unwrap_err();
        assert!(matches!(error, EvalError::Format(_)), "{error:?}");
        assert_eq!(error.to_string(), expected);
    }
    assert_eq!(compact.validate().unwrap_err().to_string(), expected);
}

#[test]
fn bad_operands_in_later_pieces_are_reported_by_their_own_index() {
    // Two bad entries after gaps and past the first piece: the reverse
    // sweep meets the later one first, the forward sweep the earlier one.
    let mut rng = Rng(5);
    let mut blocks = random_blocks(&mut rng, 3, 9000);
    for b in &mut blocks[5000..5100] {
        *b = Block::ZERO;
    }
    blocks[5050] = Block::binary(1 << 40, 1.0, 2, 0.5);
    blocks[7000] = Block::binary(6999, 1.0, 7000, -1.0);
    let (tape, compact) = both(&blocks, true);
    let later = "dg-tape block 7000: operand index 7000 is not smaller than 7000";
    let earlier = "dg-tape block 5050: operand index 1099511627776 is not smaller than 5050";
    for t in [&tape, &compact] {
        let n = t.block_count() as usize;
        let error = reverse_sweep::<1>(t, &mut vec![[0.0]; n]).unwrap_err();
        assert_eq!(error.to_string(), later);
        let error = forward_sweep::<4>(t, &mut vec![[0.0; 4]; n]).unwrap_err();
        assert_eq!(error.to_string(), earlier);
        assert_eq!(t.validate().unwrap_err().to_string(), earlier);
    }
}

/// Mutates `base`: flipped bits, a random byte, a truncation, a byte range
/// duplicated or removed, a piece header field rewritten, a piece appended
/// again (exactly or with a byte changed).
fn mutate(rng: &mut Rng, base: &[u8], piece_starts: &[usize]) -> Vec<u8> {
    let mut s = base.to_vec();
    let len = s.len() as u64;
    match rng.below(8) {
        0 | 1 => {
            for _ in 0..1 + rng.below(4) {
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
            let from = rng.below(len) as usize;
            let to = (from + 1 + rng.below(300) as usize).min(s.len());
            let copy = s[from..to].to_vec();
            let at = rng.below(len + 1) as usize;
            s.splice(at..at, copy);
        }
        5 => {
            let from = rng.below(len) as usize;
            let to = (from + 1 + rng.below(300) as usize).min(s.len());
            s.drain(from..to);
        }
        6 => {
            let start = piece_starts[rng.below(piece_starts.len() as u64) as usize];
            let (off, width) = [(0usize, 8usize), (8, 4), (12, 4)][rng.below(3) as usize];
            let old = u64::from_le_bytes(s[start..start + 8].try_into().unwrap());
            let value = match rng.below(3) {
                0 => old.wrapping_add(rng.below(5)).wrapping_sub(2),
                1 => rng.below(9000),
                _ => rng.next(),
            };
            s[start + off..start + off + width].copy_from_slice(&value.to_le_bytes()[..width]);
        }
        _ => {
            let k = rng.below(piece_starts.len() as u64) as usize;
            let start = piece_starts[k];
            let end = piece_starts.get(k + 1).copied().unwrap_or(base.len());
            let mut copy = base[start..end].to_vec();
            if rng.below(2) == 0 {
                let at = rng.below(copy.len() as u64) as usize;
                copy[at] ^= 0x04;
            }
            s.extend_from_slice(&copy);
        }
    }
    s
}

#[test]
fn mutated_compact_streams_that_parse_sweep_to_a_result_or_an_error() {
    let mut rng = Rng(0xfeed_5eed);
    let blocks = random_blocks(&mut rng, 3, 3000);
    let base = compact_bytes(&blocks);
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
    assert!(piece_starts.len() >= 2, "{piece_starts:?}");

    let (mut refused, mut swept, mut failed) = (0, 0, 0);
    for round in 0..2000 {
        let s = mutate(&mut rng, &base, &piece_starts);
        let tape = match Tape::from_compact_bytes(s, "fuzz") {
            Ok(tape) => tape,
            Err(FormatError::BadCompactTape { .. }) => {
                refused += 1;
                continue;
            }
            Err(other) => panic!("round {round}: {other}"),
        };
        let n = tape.block_count();
        // A corrupted count may span more indices than memory holds.
        if n > 1 << 20 {
            continue;
        }
        let inputs = [1, 2, 3];
        let outputs = [n - 1, n / 2, n / 3];
        let mut outcomes = Vec::new();
        for mode in [Mode::Reverse, Mode::Forward] {
            let (seeded, read) = match mode {
                Mode::Reverse => (&outputs, &inputs),
                Mode::Forward => (&inputs, &outputs),
            };
            let read: Vec<u64> = read.iter().map(|&i| i.min(n - 1)).collect();
            let seeded: Vec<u64> = seeded.iter().map(|&i| i.min(n - 1)).collect();
            let result = evaluate(
                &tape,
                mode,
                &seeded,
                Seeds::Identity,
                &read,
                &options(3, 1 + round % 2),
            );
            match &result {
                Ok(e) => assert_eq!(e.values.rows(), read.len()),
                Err(EvalError::Format(FormatError::OperandNotSmaller {
                    block, operand, ..
                })) => {
                    assert!(operand >= block && *block < n, "round {round}")
                }
                Err(other) => panic!("round {round}: {other}"),
            }
            outcomes.push(result.is_ok());
        }
        // An operand out of order is found by both sweeps or by neither.
        assert_eq!(outcomes[0], outcomes[1], "round {round}");
        assert_eq!(outcomes[0], tape.validate().is_ok(), "round {round}");
        if outcomes[0] {
            swept += 1;
        } else {
            failed += 1;
        }
    }
    assert!(
        refused > 200 && swept > 200 && failed > 20,
        "{refused} refused, {swept} swept, {failed} failed"
    );
}
