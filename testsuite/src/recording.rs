//! Helpers of the record-mode tests that keep or write the tape in other
//! ways than the default (`grad_in_memory.rs` for `DGAD_GRAD`,
//! `compact_tape.rs` for `DGAD_TAPE_FORMAT=compact`): building the record
//! programs, recording a run into a directory, the recurrence program and
//! its analytic gradient, and the comparison of block tapes that may differ
//! in the partials of passive operands.

use std::path::{Path, PathBuf};

use crate::{build_record_program, run_under_dgad, Invocation, OptLevel, Outcome};

/// Builds the record program `programs/record/NAME` at `-O3` with `flags`
/// added to the link (e.g. `-pthread`).
pub fn build(name: &str, flags: &[&str]) -> PathBuf {
    build_record_program(name, flags, OptLevel::O3)
}

/// Runs `inv` under dgad in record mode (`DGAD_MODE=record`), recording
/// into `dir` (`DGAD_RECORD`), with the further settings `extra`.
pub fn record(inv: &Invocation, dir: &Path, extra: &[(&str, &str)]) -> Outcome {
    let mut env = vec![
        ("DGAD_MODE", "record"),
        ("DGAD_RECORD", dir.to_str().unwrap()),
    ];
    env.extend_from_slice(extra);
    run_under_dgad(inv, None, &env)
}

/// The count `DGAD_STATS` prints right before `label` (`" client
/// requests ("`, say) in `stderr`, if it is there.
pub fn stats_count(stderr: &str, label: &str) -> Option<u64> {
    stderr
        .split(label)
        .next()
        .filter(|before| before.len() < stderr.len())
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
}

/// The stderr of a run as text (lossily, for messages and `contains`).
pub fn stderr(out: &Outcome) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The recurrence program `fatal_signal_after_recording.c`: records
/// y_{k+1} = y_k x + 1/2 from y_0 = 1 for `n` steps with input `x` and
/// output y, and, when `crash`, then dies of `SIGSEGV`.
pub fn recurrence(x: &str, n: usize, crash: bool) -> Invocation {
    let inv =
        Invocation::new(build("fatal_signal_after_recording.c", &[])).args([x, &n.to_string()]);
    if crash {
        inv.arg("crash")
    } else {
        inv
    }
}

/// The analytic gradient of [`recurrence`]: dy/dx after `n` steps at `x`,
/// by the same recurrence's derivative: (dy)_{k+1} = (dy)_k x + y_k.
pub fn recurrence_gradient(x: f64, n: usize) -> f64 {
    let (mut y, mut dy) = (1.0f64, 0.0f64);
    for _ in 0..n {
        dy = dy * x + y;
        y = y * x + 0.5;
    }
    dy
}

/// `tape` (32-byte blocks) with the partial of every passive operand
/// (index 0) set to 0, as the compact stream keeps it: a passive operand
/// influences nothing, so tapes equal after this give the same derivatives.
pub fn without_passive_partials(tape: &[u8]) -> Vec<u8> {
    let mut out = tape.to_vec();
    for block in out.chunks_exact_mut(32) {
        for k in 0..2 {
            if block[8 * k..8 * k + 8] == [0; 8] {
                block[16 + 8 * k..24 + 8 * k].fill(0);
            }
        }
    }
    out
}

/// Whether the record directory `dir` holds a tape, in either format
/// (`dg-tape`, or `dg-tape-compact` with `DGAD_TAPE_FORMAT=compact`).
pub fn has_tape(dir: &Path) -> bool {
    dir.join("dg-tape").is_file() || dir.join("dg-tape-compact").is_file()
}

/// The names in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
