//! Helpers shared by the evaluator's integration tests: running `dg-eval`
//! on a record directory and reading what it wrote (`cli.rs`,
//! `cli_compact.rs`), the product tape both of those evaluate, sweep
//! options (`sweeps.rs`, `compact_sweeps.rs`) and the pseudo-random numbers
//! of the generated tapes (all but `cli.rs`).
//!
//! Each test file is its own crate and uses only some of these, so each
//! item allows `dead_code`.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use evaluator::SweepOptions;
use tape_format::Block;

/// Runs `dg-eval DIR ARGS` and returns what it did.
#[allow(dead_code)]
pub fn dg_eval(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dg-eval"))
        .arg(dir)
        .args(args)
        .output()
        .expect("dg-eval runs")
}

/// The stderr of a run as text.
#[allow(dead_code)]
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The stdout of a run as text.
#[allow(dead_code)]
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Exits with `code` and prints exactly `message` (plus a newline) to
/// stderr, without a panic.
#[allow(dead_code)]
pub fn assert_fails(output: &Output, code: i32, message: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(code), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err, format!("{message}\n"));
}

/// Writes `text` to the file `name` in `dir`.
#[allow(dead_code)]
pub fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

/// The text of the file `name` in `dir`.
#[allow(dead_code)]
pub fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap()
}

/// Asserts that `dir` holds no temporary file (`*.tmp`) of a result that
/// `dg-eval` did not finish writing.
#[allow(dead_code)]
pub fn assert_no_leftovers(dir: &Path) {
    let leftovers: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// y0 = x0 * x1, y1 = 2 * x1 at x0 = 3, x1 = -4 (reverse-mode paper,
/// Figure 1, plus a second output): inputs 1 and 2, outputs 4 and 5.
#[allow(dead_code)]
pub const PRODUCT: [Block; 6] = [
    Block::ZERO,
    Block::ZERO,                    // 1: x0 = 3
    Block::ZERO,                    // 2: x1 = -4
    Block::binary(1, -4.0, 2, 3.0), // 3: x0 * x1
    Block::unary(3, 1.0),           // 4: output copy of y0
    Block::unary(2, 2.0),           // 5: y1 = 2 * x1
];

/// Sweep options of at most `max_lanes` lanes on `threads` threads, with no
/// limit on memory.
#[allow(dead_code)]
pub fn options(max_lanes: usize, threads: usize) -> SweepOptions {
    SweepOptions {
        max_lanes,
        threads,
        memory_budget: u64::MAX,
        window: evaluator::WINDOW,
    }
}

/// Deterministic pseudo-random numbers (xorshift64) for the generated
/// tapes and seeds.
#[allow(dead_code)]
pub struct Rng(pub u64);

#[allow(dead_code)]
impl Rng {
    /// The next number of the sequence.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A number in `[-1, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}
