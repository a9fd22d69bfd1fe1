//! Sweeps over hand-built tapes of known functions, checked against
//! derivatives computed analytically, and against each other.

mod common;

use common::{options, Rng};
use evaluator::{
    evaluate, forward_sweep, reverse_sweep, EvalError, Mode, Plan, Seeds, SweepOptions,
};
use tape_format::{Block, Tape, ValueTable};

fn tape(blocks: Vec<Block>) -> Tape {
    Tape::from_blocks(blocks, "dg-tape").unwrap()
}

/// Reverse sweep of one direction: bars at `inputs` for `bars` at `outputs`.
fn gradient(tape: &Tape, outputs: &[u64], bars: &[f64], inputs: &[u64]) -> Vec<f64> {
    evaluate(
        tape,
        Mode::Reverse,
        outputs,
        Seeds::Table(&ValueTable::column(bars.to_vec())),
        inputs,
        &SweepOptions::default(),
    )
    .unwrap()
    .values
    .values()
    .to_vec()
}

/// Forward sweep of one direction: dots at `outputs` for `dots` at `inputs`.
fn tangent(tape: &Tape, inputs: &[u64], dots: &[f64], outputs: &[u64]) -> Vec<f64> {
    evaluate(
        tape,
        Mode::Forward,
        inputs,
        Seeds::Table(&ValueTable::column(dots.to_vec())),
        outputs,
        &SweepOptions::default(),
    )
    .unwrap()
    .values
    .values()
    .to_vec()
}

fn assert_close(actual: &[f64], expected: &[f64]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (a, e) in actual.iter().zip(expected) {
        assert!(
            (a - e).abs() <= 1e-14 * e.abs().max(1.0),
            "{actual:?} vs {expected:?}"
        );
    }
}

/// y = sin(x0 * x1) + x0, recorded as Derivgrind would: t = x0*x1, s = sin t, y = s + x0.
fn sine_of_product(x0: f64, x1: f64) -> Tape {
    let t = x0 * x1;
    tape(vec![
        Block::ZERO,
        Block::ZERO,                   // 1: x0
        Block::ZERO,                   // 2: x1
        Block::binary(1, x1, 2, x0),   // 3: t = x0 * x1
        Block::unary(3, t.cos()),      // 4: s = sin t
        Block::binary(4, 1.0, 1, 1.0), // 5: y = s + x0
    ])
}

#[test]
fn reverse_and_forward_match_the_analytic_gradient_of_sin_x0_x1_plus_x0() {
    let (x0, x1) = (0.7, -1.3);
    let tape = sine_of_product(x0, x1);
    let c = (x0 * x1).cos();
    let expected = [c * x1 + 1.0, c * x0];
    assert_close(&gradient(&tape, &[5], &[1.0], &[1, 2]), &expected);
    assert_close(&tangent(&tape, &[1, 2], &[1.0, 0.0], &[5]), &expected[..1]);
    assert_close(&tangent(&tape, &[1, 2], &[0.0, 1.0], &[5]), &expected[1..]);
    // A seed scales linearly.
    assert_close(
        &gradient(&tape, &[5], &[-2.5], &[1, 2]),
        &[-2.5 * expected[0], -2.5 * expected[1]],
    );
}

#[test]
fn x_cubed_as_two_multiplications_gives_3x_squared() {
    // x*x has the same operand twice: both partials go to the same index.
    for x in [2.0, -0.5, 3.0] {
        let tape = tape(vec![
            Block::ZERO,
            Block::ZERO,                   // 1: x
            Block::binary(1, x, 1, x),     // 2: x*x
            Block::binary(2, x, 1, x * x), // 3: (x*x)*x
        ]);
        assert_eq!(gradient(&tape, &[3], &[1.0], &[1]), [3.0 * x * x]);
        assert_eq!(tangent(&tape, &[1], &[1.0], &[3]), [3.0 * x * x]);
    }
}

/// Three inputs, four outputs, the last two sharing index 6:
/// y0 = x0*x1 (index 4), y1 = x1 + 3*x2 (6 via 5 = 3*x2), y2 = y3 = y1.
fn three_by_four(x: [f64; 3]) -> (Tape, Vec<u64>, Vec<u64>, [[f64; 3]; 4]) {
    let tape = tape(vec![
        Block::ZERO,
        Block::ZERO,                     // 1: x0
        Block::ZERO,                     // 2: x1
        Block::ZERO,                     // 3: x2
        Block::binary(1, x[1], 2, x[0]), // 4: x0*x1
        Block::unary(3, 3.0),            // 5: 3*x2
        Block::binary(2, 1.0, 5, 1.0),   // 6: x1 + 5
    ]);
    let jacobian = [
        [x[1], x[0], 0.0],
        [0.0, 1.0, 3.0],
        [0.0, 1.0, 3.0],
        [0.0, 1.0, 3.0],
    ];
    (tape, vec![1, 2, 3], vec![4, 6, 6, 6], jacobian)
}

#[test]
fn outputs_sharing_an_index_add_their_bars() {
    let (tape, inputs, outputs, _) = three_by_four([2.0, 5.0, 7.0]);
    // Bars 1 and 2 both land on index 6: x1 gets 1+2, x2 gets 3*(1+2).
    assert_eq!(
        gradient(&tape, &outputs, &[0.0, 1.0, 2.0, 0.0], &inputs),
        [0.0, 3.0, 9.0]
    );
    // Forward, every output at index 6 reads the same dot.
    assert_eq!(
        tangent(&tape, &inputs, &[1.0, 1.0, 1.0], &outputs),
        [7.0, 4.0, 4.0, 4.0]
    );
}

#[test]
fn jacobians_by_reverse_and_forward_mode_equal_the_analytic_one() {
    let x = [2.0, 5.0, 7.0];
    let (tape, inputs, outputs, expected) = three_by_four(x);
    for mode in [Mode::Reverse, Mode::Forward] {
        for lanes in 1..=8 {
            let (seeded, read) = match mode {
                Mode::Reverse => (&outputs, &inputs),
                Mode::Forward => (&inputs, &outputs),
            };
            let result = evaluate(
                &tape,
                mode,
                seeded,
                Seeds::Identity,
                read,
                &options(lanes, 2),
            )
            .unwrap();
            let table = &result.values;
            for (o, row) in expected.iter().enumerate() {
                for (i, &entry) in row.iter().enumerate() {
                    let got = match mode {
                        Mode::Reverse => table.row(i)[o],
                        Mode::Forward => table.row(o)[i],
                    };
                    assert_eq!(got, entry, "{mode:?}, {lanes} lanes, d y{o} / d x{i}");
                }
            }
        }
    }
}

/// A tape with `inputs` inputs (indices 1..=inputs) and random operations,
/// some with passive operands, some unary, some with both operands equal.
fn random_tape(rng: &mut Rng, inputs: u64, blocks: u64) -> Tape {
    let mut tape = vec![Block::ZERO; inputs as usize + 1];
    for i in inputs + 1..blocks {
        let mut operand = || match rng.below(10) {
            0 => 0,
            _ => 1 + rng.below(i - 1),
        };
        let (a, b) = (operand(), operand());
        tape.push(match rng.below(4) {
            0 => Block::unary(a, rng.unit()),
            1 => Block::binary(a, rng.unit(), a, rng.unit()),
            _ => Block::binary(a, rng.unit(), b, rng.unit()),
        });
    }
    Tape::from_blocks(tape, "dg-tape").unwrap()
}

#[test]
fn reverse_and_forward_agree_on_random_tapes() {
    // For any tape, <ybar, J xdot> = <J^T ybar, xdot>: the two sweeps are
    // written independently, so agreement checks both.
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..20 {
        let tape = random_tape(&mut rng, 5, 400);
        let inputs: Vec<u64> = (1..=5).collect();
        let outputs: Vec<u64> = (0..4).map(|_| 300 + rng.below(100)).collect();
        let ybar: Vec<f64> = (0..4).map(|_| rng.unit()).collect();
        let xdot: Vec<f64> = (0..5).map(|_| rng.unit()).collect();
        let xbar = gradient(&tape, &outputs, &ybar, &inputs);
        let ydot = tangent(&tape, &inputs, &xdot, &outputs);
        let left: f64 = ybar.iter().zip(&ydot).map(|(a, b)| a * b).sum();
        let right: f64 = xbar.iter().zip(&xdot).map(|(a, b)| a * b).sum();
        assert!(
            (left - right).abs() <= 1e-12 * left.abs().max(1.0),
            "{left} vs {right}"
        );
    }
}

#[test]
fn every_lane_count_and_thread_count_gives_the_same_bits() {
    let mut rng = Rng(42);
    let tape = random_tape(&mut rng, 4, 2000);
    let outputs: Vec<u64> = (0..6).map(|_| 1000 + rng.below(1000)).collect();
    let inputs: Vec<u64> = (1..=4).collect();
    let directions = 11;
    let seeds = ValueTable::new(
        directions,
        (0..outputs.len() * directions)
            .map(|_| rng.unit())
            .collect(),
    );
    let one_by_one: Vec<ValueTable> = (0..directions)
        .map(|d| {
            let column = ValueTable::column((0..outputs.len()).map(|r| seeds.row(r)[d]).collect());
            evaluate(
                &tape,
                Mode::Reverse,
                &outputs,
                Seeds::Table(&column),
                &inputs,
                &options(1, 1),
            )
            .unwrap()
            .values
        })
        .collect();
    for lanes in 1..=8 {
        for threads in [1, 2, 3] {
            let result = evaluate(
                &tape,
                Mode::Reverse,
                &outputs,
                Seeds::Table(&seeds),
                &inputs,
                &options(lanes, threads),
            )
            .unwrap();
            assert_eq!(result.plan.lanes, lanes);
            assert_eq!(result.plan.passes, directions.div_ceil(lanes));
            for (d, single) in one_by_one.iter().enumerate() {
                for r in 0..inputs.len() {
                    assert_eq!(
                        result.values.row(r)[d].to_bits(),
                        single.row(r)[0].to_bits(),
                        "{lanes} lanes, {threads} threads, direction {d}, input {r}"
                    );
                }
            }
        }
    }
}

#[test]
fn zero_derivatives_do_not_meet_infinite_partials_as_in_derivgrind() {
    // 3 = f(1, 2) with an infinite partial for x1 (e.g. sqrt at 0) and a NaN
    // partial for a passive operand; only x0 is seeded / the output depends
    // on x1 through a zero bar. Derivgrind skips zero bars and zero dots, so
    // the results stay finite.
    let tape = tape(vec![
        Block::ZERO,
        Block::ZERO,                             // 1: x0
        Block::ZERO,                             // 2: x1
        Block::binary(1, 2.0, 2, f64::INFINITY), // 3
        Block::binary(3, 1.0, 0, f64::NAN),      // 4: y = 3 + passive
        Block::binary(2, f64::INFINITY, 0, 1.0), // 5: unused
    ]);
    let mut dots = [[0.0]; 6];
    dots[1] = [1.0];
    forward_sweep::<1>(&tape, &mut dots).unwrap();
    assert_eq!(dots[4], [2.0]);
    assert_eq!(dots[5], [0.0]);

    let mut bars = [[0.0]; 6];
    bars[4] = [1.0];
    reverse_sweep::<1>(&tape, &mut bars).unwrap();
    assert_eq!(bars[1], [2.0]);
    assert_eq!(bars[2], [f64::INFINITY]);
    assert_eq!(bars[0], [0.0], "the passive index has no derivative");
    assert_eq!(bars[5], [0.0]);
}

#[test]
fn a_sweep_reports_an_operand_that_is_not_before_its_block() {
    let mut blocks = vec![Block::ZERO; 20];
    blocks[17] = Block::binary(3, 1.0, 20, 1.0);
    let tape = tape(blocks);
    let expected = "dg-tape block 17: operand index 20 is not smaller than 17";
    let error = reverse_sweep::<2>(&tape, &mut [[0.0; 2]; 20]).unwrap_err();
    assert_eq!(error.to_string(), expected);
    let error = forward_sweep::<1>(&tape, &mut [[0.0]; 20]).unwrap_err();
    assert_eq!(error.to_string(), expected);
    let error = evaluate(
        &tape,
        Mode::Reverse,
        &[19],
        Seeds::Identity,
        &[1],
        &options(8, 2),
    )
    .unwrap_err();
    assert_eq!(error.to_string(), expected);
}

#[test]
fn the_plan_fits_the_memory_budget() {
    let blocks = 1000;
    let per_lane = blocks * 8;
    let budget = |memory_budget| SweepOptions {
        max_lanes: 8,
        threads: 2,
        memory_budget,
        window: evaluator::WINDOW,
    };
    let plan = |directions, b| Plan::new(blocks, directions, &budget(b));
    assert_eq!(
        plan(20, u64::MAX).unwrap(),
        Plan {
            directions: 20,
            lanes: 8,
            passes: 3,
            threads: 2
        }
    );
    assert_eq!(
        plan(20, 8 * per_lane).unwrap(),
        Plan {
            directions: 20,
            lanes: 8,
            passes: 3,
            threads: 1
        }
    );
    assert_eq!(
        plan(20, 3 * per_lane).unwrap(),
        Plan {
            directions: 20,
            lanes: 3,
            passes: 7,
            threads: 1
        }
    );
    assert_eq!(
        plan(1, u64::MAX).unwrap(),
        Plan {
            directions: 1,
            lanes: 1,
            passes: 1,
            threads: 1
        }
    );
    match plan(1, per_lane - 1) {
        Err(error @ EvalError::MemoryBudget { .. }) => assert_eq!(
            error.to_string(),
            "the tape's 1000 blocks need 8000 bytes of derivatives per direction, but only \
             7999 bytes of memory are available"
        ),
        other => panic!("{other:?}"),
    }
}
