//! Dot mode with a record directory (`DGAD_RECORD=DIR`): the inputs the
//! program marks (`DG_INPUTF`, `dgad_input`, Python's `dgad.input`) take
//! their tangents from `DIR/dg-input-dots`, one line per input in the
//! order they are marked, as `dg-eval --forward` reads them; the tangents
//! of the outputs it marks are written to `DIR/dg-output-dots` (replaced
//! atomically) when the process ends — by a process that marked something,
//! so that a parent (a shell, `timeout`) leaves its child's results alone. One run gives what a recording and
//! `dg-eval --forward` give, without a tape.

use crate::lock::Lock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use tape_format::file_name;

struct Files {
    dirfd: i32,
    seeds: Vec<f64>,
    /// Inputs marked so far (the next one's line).
    inputs: AtomicUsize,
    /// The marked outputs' tangents, in marking order.
    outputs: Lock<Vec<f64>>,
    told_short: AtomicBool,
}

static FILES: OnceLock<Files> = OnceLock::new();

/// Opens and checks `dir` (as record mode does) and reads its
/// `dg-input-dots`. An error is for the user.
pub fn init(dir: &[u8]) -> Result<(), String> {
    let shown = String::from_utf8_lossy(dir).into_owned();
    let dirfd = crate::fds::adopt(crate::directory::open(dir, &shown)?);
    let name = file_name::INPUT_DOTS;
    let text = crate::directory::read_file(dirfd, name).map_err(|e| {
        format!(
            "dot mode with DGAD_RECORD={shown}: cannot read {name} (the inputs' tangents, one line per marked input): {}",
            crate::sys::errno_text(e)
        )
    })?;
    let text = String::from_utf8_lossy(&text);
    let mut seeds = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let mut tokens = line.split_whitespace();
        let (Some(token), None) = (tokens.next(), tokens.next()) else {
            return Err(format!(
                "dot mode with DGAD_RECORD={shown}: {name} line {}: expected one value (dot mode propagates one direction), found {line:?}",
                k + 1
            ));
        };
        let v = tape_format::value::parse_value(token).ok_or_else(|| {
            format!(
                "dot mode with DGAD_RECORD={shown}: {name} line {}: {token:?} is not a floating-point value",
                k + 1
            )
        })?;
        seeds.push(v);
    }
    let _ = FILES.set(Files {
        dirfd,
        seeds,
        inputs: AtomicUsize::new(0),
        outputs: Lock::new(Vec::new()),
        told_short: AtomicBool::new(false),
    });
    Ok(())
}

/// The tangent of the next marked input: `None` without a record
/// directory (marks seed nothing), 0 beyond the file's lines (said once).
pub fn next_input_seed() -> Option<f64> {
    let f = FILES.get()?;
    let n = f.inputs.fetch_add(1, Ordering::Relaxed);
    Some(match f.seeds.get(n) {
        Some(&s) => s,
        None => {
            if !f.told_short.swap(true, Ordering::Relaxed) {
                crate::dgad_eprintln!(
                    "dot: the program marks more inputs than {} has lines ({}); the others get tangent 0",
                    file_name::INPUT_DOTS,
                    f.seeds.len()
                );
            }
            0.0
        }
    })
}

/// Whether there is a record directory (marks seed inputs and keep
/// outputs' tangents).
pub fn active() -> bool {
    FILES.get().is_some()
}

/// Appends a marked output's tangent.
pub fn output(tangent: f64) {
    if let Some(f) = FILES.get() {
        f.outputs.lock().push(tangent);
    }
}

/// Writes `dg-output-dots` (at the end of the process).
pub fn finish() {
    let Some(f) = FILES.get() else {
        return;
    };
    let marked = f.inputs.load(Ordering::Relaxed);
    let outputs = f.outputs.lock().len();
    if marked == 0 && outputs == 0 {
        // A process that marks nothing (a shell, `timeout`, a `python3`
        // parent) writes nothing: its child's results stay.
        return;
    }
    if marked < f.seeds.len() && !f.told_short.swap(true, Ordering::Relaxed) {
        crate::dgad_eprintln!(
            "dot: {} has {} lines but the program marked {} inputs; the rest were not used",
            file_name::INPUT_DOTS,
            f.seeds.len(),
            marked
        );
    }
    let mut text = String::new();
    for &t in f.outputs.lock().iter() {
        text.push_str(&tape_format::value::format_value(t));
        text.push('\n');
    }
    match crate::directory::create(f.dirfd, file_name::OUTPUT_DOTS, text.as_bytes()) {
        Ok(fd) => crate::sys::close(fd),
        Err(e) => crate::dgad_eprintln!(
            "dot: cannot write {}: {}",
            file_name::OUTPUT_DOTS,
            crate::sys::errno_text(e)
        ),
    }
}
