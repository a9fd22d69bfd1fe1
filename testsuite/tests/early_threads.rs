//! Threads and signal handlers that exist before the takeover (issue #16,
//! point 2): a library constructor that starts a worker thread and
//! installs a handler, and a handler installed from `.preinit_array`, all
//! run before `libdgad.so`'s constructor. What they compute on marked data
//! must carry its derivatives, and a thread that cannot be taken over must
//! be named, never left to run natively in silence.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use testsuite::derivatives::eval_values;
use testsuite::{
    build_program_at, build_shared_library, programs_dir, run_native, run_under_dgad,
    workspace_root, Compiler, Invocation, OptLevel, ScratchDir,
};

const X: [f64; 3] = [0.5, 1.5, 2.0];

fn build() -> PathBuf {
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let lib = build_shared_library("record/early_worker.c", Compiler::Gcc, OptLevel::O3);
    let dir = lib.parent().unwrap();
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    build_program_at(
        &programs_dir().join("record").join("early_threads.c"),
        Compiler::Gcc,
        OptLevel::O3,
        &[include],
        &[
            lib.clone().into(),
            format!("-Wl,-rpath,{}", dir.display()).into(),
        ],
    )
}

fn invocation(prog: &Path, block: bool) -> Invocation {
    let inv = Invocation::new(prog).args(X.map(|x| x.to_string()));
    if block {
        inv.env("EARLY_WORKER_BLOCK", "1")
    } else {
        inv
    }
}

/// y_i = x_i² sin x_i + 2 x_i (worker), u = 3 x_0² + e^{x_0} (library
/// constructor's handler), v = x_1 / (1 + x_1²) (`.preinit_array`'s).
fn values() -> [f64; 5] {
    let y = X.map(|x| x * x * x.sin() + 2.0 * x);
    [
        y[0],
        y[1],
        y[2],
        3.0 * X[0] * X[0] + X[0].exp(),
        X[1] / (1.0 + X[1] * X[1]),
    ]
}

/// The Jacobian, rows = outputs (y0 y1 y2 u v), columns = inputs.
fn jacobian() -> [[f64; 3]; 5] {
    let dy = |x: f64| 2.0 * x * x.sin() + x * x * x.cos() + 2.0;
    let x1 = X[1];
    [
        [dy(X[0]), 0.0, 0.0],
        [0.0, dy(X[1]), 0.0],
        [0.0, 0.0, dy(X[2])],
        [6.0 * X[0] + X[0].exp(), 0.0, 0.0],
        [
            0.0,
            (1.0 - x1 * x1) / ((1.0 + x1 * x1) * (1.0 + x1 * x1)),
            0.0,
        ],
    ]
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-12 * want.abs().max(1.0)
}

fn lines(v: &[f64]) -> String {
    v.iter().map(|x| format!("{x:e}\n")).collect()
}

fn check_recording(block: bool) {
    let prog = build();
    let scratch = ScratchDir::new(if block { "early-blocked" } else { "early" });
    let dir = scratch.path().join("run");
    let inv = invocation(&prog, block);
    let native = run_native(&inv, None);
    assert!(native.status.success(), "{native:?}");
    let out = run_under_dgad(
        &inv,
        None,
        &[
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", dir.to_str().unwrap()),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, native.stdout);
    let printed: Vec<f64> = out
        .stdout_text()
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    for (got, want) in printed.iter().zip(values()) {
        assert!(close(*got, want), "value {got} vs {want}");
    }
    let jac = jacobian();
    // Reverse: one output seeded at a time, each row of the Jacobian.
    for (row, expected) in jac.iter().enumerate() {
        let mut seeds = [0.0; 5];
        seeds[row] = 1.0;
        let bars = eval_values(
            &dir,
            "dg-output-bars",
            &lines(&seeds),
            "dg-input-bars",
            false,
        );
        for (col, (got, want)) in bars.iter().zip(expected).enumerate() {
            assert!(close(*got, *want), "d out{row}/d x{col}: {got} vs {want}");
        }
    }
    // Forward: one input seeded at a time, each column.
    for col in 0..3 {
        let mut seeds = [0.0; 3];
        seeds[col] = 1.0;
        let dots = eval_values(
            &dir,
            "dg-input-dots",
            &lines(&seeds),
            "dg-output-dots",
            true,
        );
        for (row, got) in dots.iter().enumerate() {
            let want = jac[row][col];
            assert!(
                close(*got, want),
                "dot out{row} from x{col}: {got} vs {want}"
            );
        }
    }
}

/// The worker waits for jobs in `pthread_cond_wait`: it is taken over
/// with a signal. Fails with a library that leaves it native (every
/// derivative 0).
#[test]
fn a_thread_and_handlers_from_before_the_takeover_carry_derivatives() {
    check_recording(false);
}

/// The worker blocks every signal (as OpenBLAS's do): it is taken over
/// with ptrace by a helper process.
#[test]
fn a_thread_that_blocks_every_signal_is_taken_over_too() {
    check_recording(true);
}

/// Under a tracer (gdb, which traces every thread) the worker that blocks
/// every signal can be reached neither by a signal nor with ptrace: record
/// mode names it and stops with status 125 before recording anything,
/// instead of letting it compute natively.
#[test]
fn a_thread_that_cannot_be_taken_over_stops_the_recording_with_its_name() {
    let prog = build();
    let scratch = ScratchDir::new("early-traced");
    let dir = scratch.path().join("run");
    let out = std::process::Command::new("gdb")
        .args([
            "-q",
            "-batch",
            "-ex",
            "set startup-with-shell off",
            "-ex",
            "run",
            "--args",
        ])
        .arg("env")
        .arg(format!("DGAD_RECORD={}", dir.display()))
        .arg(format!("LD_PRELOAD={}", testsuite::dgad_lib().display()))
        .arg(&prog)
        .args(X.map(|x| x.to_string()))
        .env("EARLY_WORKER_BLOCK", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("gdb is not installed: scripts/setup.sh installs it");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains(
            "(early-worker) was started before dgad took over and blocks every signal, \
             and ptrace is not permitted here"
        ),
        "{text}"
    );
    assert!(
        text.contains("exited with code 0175"),
        "not status 125: {text}"
    );
    assert!(!dir.join("dg-tape").exists(), "it recorded: {text}");
}

/// Null mode: the program behaves as natively, and a worker taken over
/// leaves no note.
#[test]
fn threads_from_before_the_takeover_run_transparently_in_null_mode() {
    let prog = build();
    for block in [false, true] {
        let inv = invocation(&prog, block);
        let native = run_native(&inv, None);
        let out = run_under_dgad(&inv, None, &[("DGAD_MODE", "null")]);
        assert_eq!(out.status.code(), native.status.code());
        assert_eq!(out.stdout, native.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("natively"), "{stderr}");
    }
}
