//! The reverse sweep in a window of bars (`evaluator::reverse_sweep_window`)
//! against the sweep over a full array (`evaluator::reverse_sweep`): the
//! same bits for every window size, from one slot (every operand is far)
//! to more than the tape, on block and compact tapes, with seeds and reads
//! anywhere, through the move to a full array when far additions pile up;
//! the same operand error; and `evaluate` taking the window when the
//! budget is tight.

mod common;

use common::Rng;
use evaluator::{
    evaluate, reverse_sweep, reverse_sweep_window, EvalError, Mode, Seeds, SweepOptions,
};
use tape_format::{Block, FormatError, Tape, ValueTable};

/// A partial as recordings have them, with the special values a sweep must
/// keep (signed zeros, an infinity, a NaN).
fn partial(rng: &mut Rng) -> f64 {
    match rng.below(200) {
        0 => f64::INFINITY,
        1 => f64::NAN,
        2..=9 => -0.0,
        10..=19 => 0.0,
        20..=79 => 1.0,
        80..=109 => -1.0,
        _ => rng.unit() * 4.0,
    }
}

/// `n` blocks: inputs 1..=inputs, then operations whose operands are near
/// (a few blocks back), far (anywhere below) or passive, some unary, some
/// `x * x`, and runs of zero blocks (some of them operands too).
fn random_tape(rng: &mut Rng, inputs: u64, n: u64) -> Vec<Block> {
    let mut tape = vec![Block::ZERO; inputs as usize + 1];
    while (tape.len() as u64) < n {
        let i = tape.len() as u64;
        let mut operand = || match rng.below(10) {
            0 => 0,
            1..=5 => i - 1 - rng.below(8.min(i - 1)),
            _ => 1 + rng.below(i - 1),
        };
        let (a, b) = (operand(), operand());
        let (p, q) = (partial(rng), partial(rng));
        match rng.below(40) {
            // Indices handed out and not used: passive entries, which a
            // compact tape leaves to the gaps between its pieces.
            0 => {
                let run = [1, 31, 33, 70, 300][rng.below(5) as usize];
                tape.resize(tape.len() + run, Block::ZERO);
            }
            1..=4 => tape.push(Block::unary(a, p)),
            5..=8 => tape.push(Block::binary(a, p, a, q)),
            _ => tape.push(Block::binary(a, p, b, q)),
        }
    }
    tape.truncate(n as usize);
    tape
}

/// The dense sweep's bars at `read`, from `seeds`.
fn dense(tape: &Tape, seeds: &[(u64, [f64; 2])], read: &[u64]) -> Vec<[f64; 2]> {
    let mut bars = vec![[0.0; 2]; tape.block_count() as usize];
    for &(i, s) in seeds {
        if i != 0 {
            for k in 0..2 {
                bars[i as usize][k] += s[k];
            }
        }
    }
    reverse_sweep::<2>(tape, &mut bars).unwrap();
    read.iter().map(|&i| bars[i as usize]).collect()
}

/// The bits of each value, every NaN as one: which NaN an addition of two
/// NaNs gives depends on the order of its operands, which the compiler may
/// swap (addition commutes), in either sweep.
fn bits(v: &[[f64; 2]]) -> Vec<[u64; 2]> {
    let b = |x: f64| if x.is_nan() { u64::MAX } else { x.to_bits() };
    v.iter().map(|x| [b(x[0]), b(x[1])]).collect()
}

#[test]
fn every_window_gives_the_bits_of_the_full_array() {
    let mut rng = Rng(0x5eed_0123_4567_89ab);
    for round in 0..24 {
        let n = [40, 700, 5000][round % 3];
        let inputs = 1 + rng.below(6);
        let blocks = random_tape(&mut rng, inputs, n);
        let tape = Tape::from_blocks(blocks.clone(), "dg-tape").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dg-tape-compact");
        tape_format::write_compact(&path, &tape).unwrap();
        let compact = Tape::open(&path).unwrap();
        // Seeds anywhere, twice at one index, at index 0 and the last.
        let mut seeds: Vec<(u64, [f64; 2])> = (0..5)
            .map(|_| (rng.below(n), [rng.unit(), rng.unit()]))
            .collect();
        seeds.push((n - 1, [1.0, -0.0]));
        seeds.push((n - 1, [0.5, 2.0]));
        seeds.push((0, [7.0, 7.0]));
        // Reads in no order, repeated, at index 0, at zero blocks.
        let mut read: Vec<u64> = (1..=inputs).rev().collect();
        read.extend([0, n / 2, 1, n - 1, rng.below(n)]);
        read.extend(
            (1..n)
                .filter(|&i| blocks[i as usize] == Block::ZERO)
                .take(3),
        );
        let want = bits(&dense(&tape, &seeds, &read));
        for w in [1usize, 2, 4, 16, 256, 1 << 13] {
            for t in [&tape, &compact] {
                let mut ring = vec![[0.0; 2]; w];
                let got = reverse_sweep_window::<2>(t, &mut ring, &seeds, &read).unwrap();
                assert_eq!(
                    bits(&got),
                    want,
                    "round {round}, {n} blocks, window {w}, compact {}",
                    t.is_compact()
                );
            }
        }
    }
}

#[test]
fn an_operand_not_older_than_its_block_is_the_same_error() {
    let mut blocks = vec![Block::ZERO; 3];
    blocks.push(Block::binary(1, 1.0, 2, 1.0));
    blocks.push(Block::binary(3, 1.0, 4, 1.0)); // 4 reads itself
    let tape = Tape::from_blocks(blocks, "dg-tape").unwrap();
    let mut bars = vec![[0.0; 2]; 5];
    let want = reverse_sweep::<2>(&tape, &mut bars).unwrap_err();
    for w in [1usize, 8] {
        let mut ring = vec![[0.0; 2]; w];
        let got = reverse_sweep_window::<2>(&tape, &mut ring, &[(4, [1.0, 1.0])], &[1]);
        match got {
            Err(EvalError::Format(e @ FormatError::OperandNotSmaller { .. })) => {
                assert_eq!(e.to_string(), want.to_string())
            }
            other => panic!("{other:?}"),
        }
    }
}

/// `evaluate` keeps a reverse sweep's bars in a window when one per block
/// would not fit the budget, with the same results as without a budget;
/// a forward sweep has no window and fails as before.
#[test]
fn evaluate_takes_the_window_when_the_full_array_does_not_fit() {
    let mut rng = Rng(0x0dd_ba11);
    let n = 20_000;
    let inputs = 5;
    let blocks = random_tape(&mut rng, inputs, n);
    let tape = Tape::from_blocks(blocks, "dg-tape").unwrap();
    let outs: Vec<u64> = vec![n - 1, n - 2, n / 2, n - 1];
    let ins: Vec<u64> = (1..=inputs).chain([0, n / 3]).collect();
    // Three directions, a row per output (reverse) or input (forward).
    let mut table = |rows: usize| ValueTable::new(3, (0..rows * 3).map(|_| rng.unit()).collect());
    let (bars, dots) = (table(outs.len()), table(ins.len()));
    let run = |budget: u64, window: usize, mode: Mode| {
        let (seeded, read, seeds) = match mode {
            Mode::Reverse => (&outs, &ins, &bars),
            Mode::Forward => (&ins, &outs, &dots),
        };
        let options = SweepOptions {
            max_lanes: 8,
            threads: 1,
            memory_budget: budget,
            window,
        };
        evaluate(&tape, mode, seeded, Seeds::Table(seeds), read, &options)
    };
    let want = run(u64::MAX, 1024, Mode::Reverse).unwrap();
    assert_eq!(want.plan.lanes, 3);
    // 3 lanes of 1024 slots fit, 3 lanes of 20,000 blocks do not.
    let budget = 3 * 8 * 2048;
    let got = run(budget, 1024, Mode::Reverse).unwrap();
    assert_eq!(got.plan.lanes, 3);
    let flat =
        |t: &ValueTable| -> Vec<[f64; 2]> { t.values().chunks(1).map(|v| [v[0], 0.0]).collect() };
    assert_eq!(bits(&flat(&got.values)), bits(&flat(&want.values)));
    match run(budget, 1024, Mode::Forward) {
        Err(EvalError::MemoryBudget { .. }) => {}
        other => panic!("{other:?}"),
    }
}
