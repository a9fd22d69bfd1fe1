//! Signals arrive between instructions, never between an instruction's AD
//! code and the instruction itself (`timer_loop.c`: a recurrence under a
//! 50 µs timer whose handler computes on its own). Delivered in between,
//! the instruction ran again from its start after the handler, its AD code
//! included: in record mode a block recorded over the result's own index,
//! in dot mode a tangent added twice — silently wrong derivatives in about
//! half the runs at -O0 before the fix (the place where the runtime's rule
//! comes back into a block was mapped as a boundary, and the inline fast
//! path passes through it).
//!
//! A signal that arrives in inserted code that can be run again from the
//! instruction's start is delivered there at once (`rewriter::restart`),
//! without stepping to the next boundary: the same test covers that path,
//! and checks that it was taken (`DGAD_STATS` counts it).

use std::path::Path;
use testsuite::{
    build_record_program, parse_hex_float, run_native, run_under_dgad, Invocation, OptLevel,
    ScratchDir,
};

const X: f64 = 1.25;
const STEPS: u32 = 200_000;

/// dy/dx of the recurrence, forward.
fn analytic() -> f64 {
    let (mut y, mut dy) = (1.0f64, 0.0f64);
    for _ in 0..STEPS {
        let (num, den) = (y * X + 0.5, 1.0 + y * 1e-6);
        let (dnum, dden) = (dy * X + y, dy * 1e-6);
        dy = (dnum * den - num * dden) / (den * den);
        y = num / den;
    }
    dy
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

/// The signals `DGAD_STATS` says were delivered at the start of the
/// instruction whose code they interrupted.
fn restarts(stderr: &str) -> u64 {
    let at = stderr
        .find(" of them from inside an instruction's code")
        .unwrap_or_else(|| panic!("no signal statistics: {stderr}"));
    let digits: String = stderr[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .chars()
        .rev()
        .collect::<String>()
        .parse()
        .expect("a count")
}

fn bars(dir: &Path) -> f64 {
    let text = std::fs::read_to_string(dir.join("dg-input-bars")).expect("dg-input-bars");
    text.trim().parse().expect("one number")
}

#[test]
fn a_timer_does_not_change_the_derivatives() {
    let want = analytic();
    for opt in [OptLevel::O0, OptLevel::O3] {
        let prog = build_record_program("timer_loop.c", &[], opt);
        let inv = Invocation::new(&prog)
            .arg(X.to_string())
            .arg(STEPS.to_string());
        let native = run_native(&inv, None);
        assert!(native.status.success(), "{native:?}");
        assert!(
            String::from_utf8_lossy(&native.stdout).contains(" interrupted"),
            "the timer never fired natively: {native:?}"
        );
        let scratch = ScratchDir::new(&format!("timer-loop-{opt:?}"));
        let mut tangents: Option<String> = None;
        let mut restarted = 0;
        // Each run is a new draw of where the signals land.
        for run in 0..3 {
            let dir = scratch.path().join(format!("grad-{run}"));
            let out = run_under_dgad(
                &inv,
                None,
                &[
                    ("DGAD_MODE", "record"),
                    ("DGAD_RECORD", dir.to_str().unwrap()),
                    ("DGAD_GRAD", "ones"),
                    ("DGAD_STATS", "1"),
                ],
            );
            assert!(out.status.success(), "{out:?}");
            assert_eq!(out.stdout, native.stdout, "{opt:?}: stdout as natively");
            restarted += restarts(&String::from_utf8_lossy(&out.stderr));
            let got = bars(&dir);
            assert!(
                close(got, want),
                "{opt:?}, run {run}: gradient {got:e}, analytic {want:e}"
            );
            // Dot mode, with and without the tangent cache (decision 46):
            // the same bits in every run, where the signals fall.
            for cache in ["1", "0"] {
                let out = run_under_dgad(
                    &inv,
                    None,
                    &[
                        ("DGAD_MODE", "dot"),
                        ("DGAD_TANGENT_CACHE", cache),
                        ("DGAD_STATS", "1"),
                    ],
                );
                assert!(out.status.success(), "{out:?}");
                assert_eq!(out.stdout, native.stdout, "{opt:?}: stdout as natively");
                let stderr = String::from_utf8_lossy(&out.stderr);
                restarted += restarts(&stderr);
                let hex = stderr
                    .lines()
                    .find_map(|l| l.strip_prefix("dot "))
                    .unwrap_or_else(|| panic!("no tangent printed: {stderr}"))
                    .trim()
                    .to_string();
                let got = parse_hex_float(&hex);
                assert!(
                    close(got, want),
                    "{opt:?}, run {run}, cache {cache}: tangent {got:e}, analytic {want:e}"
                );
                let first = tangents.get_or_insert_with(|| hex.clone());
                assert_eq!(
                    *first, hex,
                    "{opt:?}: the tangent's bits moved between runs"
                );
            }
        }
        // About a hundred per dot-mode run on the machines this was
        // written on: the derivatives above were checked with signals
        // delivered that way, not only by stepping.
        assert!(
            restarted > 0,
            "{opt:?}: no signal was delivered at the start of the code it interrupted"
        );
    }
}
