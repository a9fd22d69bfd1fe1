//! Measures the sweeps in ns per 32-byte block against a plain sequential
//! read of the same mapped tape (the bandwidth reference).
//!
//! `cargo run --release -p evaluator --example sweep_speed -- [BLOCKS [LOCALITY [DIR]]]`
//! (default: 100 000 000 blocks, 3.2 GB, in
//! `/dev/shm/dgad-sweep-speed-recorded-100000000`; an existing file of the
//! right size is reused). With LOCALITY `recorded` (the default) the tape
//! imitates a recorded one: most operands were computed a few blocks
//! earlier, some tens of thousands of blocks earlier (the previous sweep
//! over an array), a few anywhere; `near` puts all within 16 blocks,
//! `anywhere` scatters them over the whole tape. A fifth of the blocks are
//! unary.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use evaluator::{forward_sweep, reverse_sweep, DerivativeMemory};
use tape_format::{Block, Tape, TapeWriter, BLOCK_SIZE};

/// xorshift64*: deterministic, fast, good enough to scatter operands.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
    fn partial(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

const INPUTS: u64 = 1000;

/// How far back operands lie.
#[derive(Clone, Copy, PartialEq)]
enum Locality {
    /// 70 % within 16 blocks, 29 % within 65536, 1 % anywhere.
    Recorded,
    /// All within 16 blocks.
    Near,
    /// All anywhere before (a worst case: every access misses the caches).
    Anywhere,
}

fn operand(rng: &mut Rng, i: u64, locality: Locality) -> u64 {
    let back = match (locality, rng.below(100)) {
        (Locality::Near, _) | (Locality::Recorded, 0..=69) => 1 + rng.below(16),
        (Locality::Recorded, 70..=98) => 1 + rng.below(65536),
        _ => 1 + rng.below(i - 1),
    };
    i.saturating_sub(back).max(1)
}

fn generate(path: &Path, blocks: u64, locality: Locality) -> Result<(), tape_format::FormatError> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut writer = TapeWriter::create(path)?;
    for i in 0..blocks {
        let block = if i <= INPUTS {
            Block::ZERO
        } else if rng.below(5) == 0 {
            Block::unary(operand(&mut rng, i, locality), rng.partial())
        } else {
            Block::binary(
                operand(&mut rng, i, locality),
                rng.partial(),
                operand(&mut rng, i, locality),
                rng.partial(),
            )
        };
        writer.push(&block)?;
    }
    writer.finish()?;
    Ok(())
}

/// Reads every byte of the tape once, front to back, as cheaply as possible.
fn plain_read(tape: &Tape) -> u64 {
    let mut acc = [0u64; 4];
    for block in tape.blocks().expect("a tape of blocks") {
        acc[0] = acc[0].wrapping_add(block.index1);
        acc[1] = acc[1].wrapping_add(block.index2);
        acc[2] = acc[2].wrapping_add(block.partial1.to_bits());
        acc[3] = acc[3].wrapping_add(block.partial2.to_bits());
    }
    acc.iter().fold(0, |a, b| a ^ b)
}

fn report(what: &str, seconds: f64, blocks: u64, lanes: usize) {
    let ns = seconds * 1e9 / blocks as f64;
    println!(
        "{what:<34} {seconds:>8.3} s {ns:>7.3} ns/block {:>7.3} ns/block/lane {:>6.1} GB/s",
        ns / lanes as f64,
        (blocks * BLOCK_SIZE as u64) as f64 / seconds / 1e9
    );
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The fastest of three runs of `sweep`, timing only the sweep (not the
/// clearing and seeding of the derivative vector).
fn fastest_sweep<const L: usize>(
    tape: &Tape,
    memory: &mut DerivativeMemory,
    seed: impl Fn(&mut [[f64; L]]),
    sweep: impl Fn(&Tape, &mut [[f64; L]]) -> Result<(), tape_format::FormatError>,
) -> f64 {
    (0..3)
        .map(|_| {
            let derivatives = memory.zeroed::<L>(tape.block_count() as usize);
            seed(derivatives);
            let start = Instant::now();
            sweep(tape, derivatives).expect("the generated tape is valid");
            let seconds = start.elapsed().as_secs_f64();
            black_box(&derivatives[1]);
            seconds
        })
        .fold(f64::INFINITY, f64::min)
}

fn sweeps<const L: usize>(tape: &Tape, memory: &mut DerivativeMemory, blocks: u64) {
    let last = tape.block_count() as usize - 1;
    let reverse = fastest_sweep::<L>(tape, memory, |bars| bars[last] = [1.0; L], reverse_sweep);
    report(&format!("reverse sweep, {L} lane(s)"), reverse, blocks, L);
    let seed_inputs = |dots: &mut [[f64; L]]| dots[1..=INPUTS as usize].fill([1.0; L]);
    let forward = fastest_sweep::<L>(tape, memory, seed_inputs, forward_sweep);
    report(&format!("forward sweep, {L} lane(s)"), forward, blocks, L);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let blocks: u64 = args.next().map_or(Ok(100_000_000), |a| a.parse())?;
    let (locality, name) = match args.next().as_deref() {
        None | Some("recorded") => (Locality::Recorded, "recorded"),
        Some("near") => (Locality::Near, "near"),
        Some("anywhere") => (Locality::Anywhere, "anywhere"),
        Some(other) => return Err(format!("unknown locality {other:?}").into()),
    };
    let dir = args
        .next()
        .map_or_else(|| PathBuf::from("/dev/shm"), PathBuf::from);
    let path = dir.join(format!("dgad-sweep-speed-{name}-{blocks}"));
    let expected_len = blocks * BLOCK_SIZE as u64;
    if std::fs::metadata(&path).map(|m| m.len()).ok() != Some(expected_len) {
        let start = Instant::now();
        generate(&path, blocks, locality)?;
        println!(
            "generated {} in {:.1} s",
            path.display(),
            start.elapsed().as_secs_f64()
        );
    }

    let lazy = Tape::open_with(&path, false)?;
    let first_read = {
        let start = Instant::now();
        black_box(plain_read(&lazy));
        start.elapsed().as_secs_f64()
    };
    drop(lazy);
    report("plain read, faulting pages in", first_read, blocks, 1);

    let start = Instant::now();
    let tape = Tape::open(&path)?;
    report(
        "map + pre-fault (MAP_POPULATE)",
        start.elapsed().as_secs_f64(),
        blocks,
        1,
    );
    report(
        "plain read, pre-faulted",
        best_of(5, || plain_read(&tape)),
        blocks,
        1,
    );

    let start = Instant::now();
    let mut memory = DerivativeMemory::new(DerivativeMemory::bytes_for(blocks, 8))?;
    println!(
        "derivative memory: {} bytes, mapped and faulted in {:.3} s",
        DerivativeMemory::bytes_for(blocks, 8),
        start.elapsed().as_secs_f64()
    );
    sweeps::<1>(&tape, &mut memory, blocks);
    sweeps::<4>(&tape, &mut memory, blocks);
    sweeps::<8>(&tape, &mut memory, blocks);
    Ok(())
}
