//! Record mode under adverse conditions — the files must be complete and
//! consistent after every exit path, bad set-ups must fail clearly — and
//! the client requests and libm interception answered by the real runtime.

use std::path::{Path, PathBuf};
use testsuite::derivatives::{dg_eval, eval_values};
use testsuite::{
    build_record_program, run_native, run_under_dgad, Invocation, OptLevel, ScratchDir,
};

fn build(name: &str, link: &[&str]) -> PathBuf {
    build_at(name, link, OptLevel::O3)
}

fn build_at(name: &str, link: &[&str], opt: OptLevel) -> PathBuf {
    build_record_program(name, link, opt)
}

fn record(inv: &Invocation, dir: &Path) -> testsuite::Outcome {
    record_with(inv, dir, &[])
}

/// Records `inv`, checks that it succeeds and prints what it printed
/// natively (`native`), and returns the outcome.
fn record_as_natively(
    inv: &Invocation,
    dir: &Path,
    native: &testsuite::Outcome,
) -> testsuite::Outcome {
    let out = record(inv, dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, native.stdout);
    out
}

/// [`record`] with more environment variables.
fn record_with(inv: &Invocation, dir: &Path, extra: &[(&str, &str)]) -> testsuite::Outcome {
    let mut env = vec![
        ("DGAD_MODE", "record"),
        ("DGAD_RECORD", dir.to_str().unwrap()),
    ];
    env.extend_from_slice(extra);
    run_under_dgad(inv, None, &env)
}

/// Runs `dg-eval DIR` with one bar per output and returns the input bars.
fn gradient(dir: &Path, output_bars: &str) -> Vec<f64> {
    eval_values(dir, "dg-output-bars", output_bars, "dg-input-bars", false)
}

/// dy/dx of y_n with y_{k+1} = y_k x + 0.5, y_0 = 1, by the same recurrence
/// differentiated by hand: d_{k+1} = d_k x + y_k.
fn recurrence_derivative(x: f64, n: usize) -> f64 {
    let (mut y, mut d) = (1.0f64, 0.0f64);
    for _ in 0..n {
        d = d * x + y;
        y = y * x + 0.5;
    }
    d
}

/// Asserts that the recorded gradient of `y_n` (one output) in `dir` is the
/// recurrence's, at x = 0.999.
fn assert_recurrence_gradient(dir: &Path, n: usize) {
    let bars = gradient(dir, "1.0\n");
    let expected = recurrence_derivative(0.999, n);
    assert!(
        (bars[0] - expected).abs() <= 1e-9 * expected.abs(),
        "dy/dx {} vs {expected}",
        bars[0]
    );
}

#[test]
fn tape_complete_after_fatal_signal() {
    fatal_signal_case("crash");
}

/// Regression: resetting SIGSEGV to SIG_DFL must not take the runtime's own
/// handler away (the tape would then not be completed).
#[test]
fn tape_complete_after_fatal_signal_when_handler_reset_to_default() {
    fatal_signal_case("reset");
}

fn fatal_signal_case(how: &str) {
    let prog = build("fatal_signal_after_recording.c", &[]);
    let scratch = ScratchDir::new("record-fatal");
    let dir = scratch.path().join("run");
    let inv = Invocation::new(&prog).args(["0.999", "20000", how]);
    let native = run_native(&inv, None);
    let dgad = record(&inv, &dir);
    assert_eq!(
        dgad.status.code(),
        native.status.code(),
        "exit status differs"
    );
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&dgad.status),
        std::os::unix::process::ExitStatusExt::signal(&native.status),
        "terminating signal differs"
    );
    assert_eq!(dgad.stdout, native.stdout);
    let stderr = String::from_utf8_lossy(&dgad.stderr);
    assert!(
        stderr.contains("the tape is complete"),
        "no completion note on stderr: {stderr}"
    );
    assert_recurrence_gradient(&dir, 20000);
}

#[test]
fn unwritable_record_directory_fails_at_start() {
    let prog = build("fatal_signal_after_recording.c", &[]);
    let inv = Invocation::new(&prog).args(["2", "3"]);
    let out = run_under_dgad(
        &inv,
        None,
        &[
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", "/proc/self/no-such-dir/run"),
        ],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(
        out.stdout.is_empty(),
        "the program ran: {}",
        out.stdout_text()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("DGAD_RECORD=/proc/self/no-such-dir/run"),
        "message does not name the directory: {stderr}"
    );
}

#[test]
fn full_disk_leaves_whole_blocks_and_says_so() {
    let prog = build("fatal_signal_after_recording.c", &[]);
    let scratch = ScratchDir::new("record-full");
    let dir = scratch.path().join("run");
    // A 100 KiB file-size limit stands in for a full disk.
    let script = format!(
        "ulimit -f 100; trap '' XFSZ; exec {} 0.999 200000",
        prog.display()
    );
    let inv = Invocation::new("bash").args(["-c", &script]);
    let out = record(&inv, &dir);
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("dg-tape failed") && stderr.contains("cut to its first"),
        "{stderr}"
    );
    let size = std::fs::metadata(dir.join("dg-tape")).unwrap().len();
    assert!(
        size > 0 && size.is_multiple_of(32),
        "tape of {size} bytes is not whole blocks"
    );
}

#[test]
fn threads_record_one_consistent_tape() {
    let prog = build("threads_record.c", &["-pthread"]);
    let scratch = ScratchDir::new("record-threads");
    let dir = scratch.path().join("run");
    let inv = Invocation::new(&prog);
    let native = run_native(&inv, None);
    let dgad = record(&inv, &dir);
    assert!(dgad.status.success());
    assert_eq!(dgad.stdout, native.stdout);
    // --stats validates the whole tape (operand order, block 0) as well.
    std::fs::write(dir.join("dg-output-bars"), "1.0\n").unwrap();
    let stats = std::process::Command::new(dg_eval())
        .arg(&dir)
        .arg("--stats")
        .output()
        .unwrap();
    assert!(
        stats.status.success(),
        "tape does not validate: {}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let bars = gradient(&dir, "1.0\n");
    for (t, bar) in bars.iter().enumerate() {
        let x = 0.5 + t as f64;
        let expected = 3.0 * x * x + 2.0;
        assert!(
            (bar - expected).abs() <= 1e-12 * expected,
            "thread {t}: {bar} vs {expected}"
        );
    }
}

#[test]
fn client_requests_under_the_runtime() {
    let prog = build_at("client_requests.c", &[], OptLevel::O0);
    let scratch = ScratchDir::new("record-requests");
    let dir = scratch.path().join("run");
    let inv = Invocation::new(&prog).arg("1.5");
    let out = record(&inv, &dir);
    let stdout = out.stdout_text();
    assert!(
        out.status.success() && stdout.contains("requests ok"),
        "{stdout}"
    );
    // y = (x^2 + x) + [x^2 + x, disabled] + x^2 + u with du = 3 dx.
    let bars = gradient(&dir, "1.0\n");
    let x = 1.5;
    let expected = 4.0 * x + 1.0 + 3.0;
    assert!(
        (bars[0] - expected).abs() <= 1e-12 * expected,
        "dy/dx {} vs {expected}",
        bars[0]
    );
}

/// libm functions reached through `dlopen`/`dlsym` and a function pointer
/// (a `long double` one too) are answered by the wrappers: analytic
/// derivatives, where glibc's machine code gives wrong ones
/// (`DGAD_MATHWRAP=0`) at this point.
#[test]
fn libm_reached_through_dlsym_and_pointers_is_wrapped() {
    let prog = build("libm_reach.c", &["-ldl", "-lm"]);
    let x = 2.5f64;
    let inv = Invocation::new(&prog).arg(x.to_string());
    let native = run_native(&inv, None);
    // The derivatives and the tape's length in blocks.
    let record = |wrap: &str| {
        let scratch = ScratchDir::new("record-libm-reach");
        let dir = scratch.path().join("run");
        let out = record_with(&inv, &dir, &[("DGAD_MATHWRAP", wrap)]);
        assert_eq!(
            out.stdout, native.stdout,
            "values differ (DGAD_MATHWRAP={wrap})"
        );
        let bars = ["1\n0\n0\n", "0\n1\n0\n", "0\n0\n1\n"].map(|seed| gradient(&dir, seed)[0]);
        let blocks = std::fs::metadata(dir.join("dg-tape")).unwrap().len() / 32;
        (bars, blocks)
    };
    let expected = [x.cos(), -x.sin(), x.exp()];
    let (wrapped, wrapped_blocks) = record("1");
    for (k, (got, want)) in wrapped.iter().zip(expected).enumerate() {
        assert!(
            (got - want).abs() <= 1e-13 * want.abs(),
            "output {k}: derivative {got}, analytic {want}"
        );
    }
    // Without the wrappers glibc's machine code is recorded instruction by
    // instruction (its derivatives have been right since the x87 rules of
    // 2026-11-27): many more blocks than one per call.
    let (_, unwrapped_blocks) = record("0");
    assert!(
        unwrapped_blocks > 4 * wrapped_blocks,
        "{wrapped_blocks} blocks wrapped, {unwrapped_blocks} without the wrappers: the calls \
         were not answered by the wrappers"
    );
}

/// Partials the tape cannot hold (beyond the range of doubles, which the
/// tape and the tangents keep: an x87 product by 2^2000, libm's ldexp by
/// 2^1050) make the derivative through them wrong, and dgad says so in
/// both modes instead of giving it silently; in range, the same programs
/// give the exact derivative and say nothing. (Boost.Math's Bessel
/// functions under its long-double promotion start recurrences at
/// √(smallest long double): `scripts/difftest/FINDINGS.md`, 11.)
#[test]
fn partials_beyond_double_range_are_reported() {
    let prog = build("beyond_double_range.c", &["-lm"]);
    let scratch = ScratchDir::new("record-beyond-double");
    for (kind, k, beyond) in [
        ("x87", 1000, false),
        ("x87", 2000, true),
        ("ldexp", 1000, false),
        ("ldexp", 1050, true),
    ] {
        let inv = Invocation::new(&prog).arg(kind).arg(k.to_string());
        let native = run_native(&inv, None);
        let dir = scratch.path().join(format!("{kind}{k}"));
        let out = record_as_natively(&inv, &dir, &native);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let said = err.contains("lies beyond the range of doubles");
        assert_eq!(said, beyond, "{kind} {k}: {err}");
        std::fs::write(dir.join("dg-input-dots"), "1\n").unwrap();
        let dot = run_under_dgad(
            &inv,
            None,
            &[("DGAD_MODE", "dot"), ("DGAD_RECORD", dir.to_str().unwrap())],
        );
        let dot_err = String::from_utf8_lossy(&dot.stderr).into_owned();
        assert_eq!(
            dot_err.contains("lies beyond the range of doubles"),
            beyond,
            "dot: {dot_err}"
        );
        if !beyond {
            assert_eq!(gradient(&dir, "1\n"), [1.0], "{kind} {k}");
            let tangent = std::fs::read_to_string(dir.join("dg-output-dots")).unwrap();
            assert_eq!(
                tangent.trim().parse::<f64>().unwrap(),
                1.0,
                "{kind} {k}: dot"
            );
        }
    }
}

/// A quotient's partial with respect to its denominator, -x/y², is an
/// ordinary number even where y² over- or underflows (|y| beyond 1e±154):
/// dividing twice gives it (the square gave 0 or ∞ there, silently), in
/// both modes.
#[test]
fn quotients_with_huge_or_tiny_denominators_keep_their_partials() {
    let prog = build("beyond_double_range.c", &["-lm"]);
    let scratch = ScratchDir::new("record-quotients");
    for e in [-200i32, -160, 0, 160, 200] {
        let inv = Invocation::new(&prog).arg("div").arg(e.to_string());
        let native = run_native(&inv, None);
        let dir = scratch.path().join(format!("div{e}"));
        record_as_natively(&inv, &dir, &native);
        let (x, y) = (10f64.powi(e + 40), 10f64.powi(e));
        let want = [1.0 / y, -(x / y / y)];
        let got = gradient(&dir, "1\n");
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() <= 1e-15 * w.abs(),
                "10^{e}: {got:?} against {want:?}"
            );
        }
        std::fs::write(dir.join("dg-input-dots"), "0\n1\n").unwrap();
        let dot = run_under_dgad(
            &inv,
            None,
            &[("DGAD_MODE", "dot"), ("DGAD_RECORD", dir.to_str().unwrap())],
        );
        assert!(dot.status.success(), "{dot:?}");
        let tangent: f64 = std::fs::read_to_string(dir.join("dg-output-dots"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            (tangent - want[1]).abs() <= 1e-15 * want[1].abs(),
            "dot, 10^{e}: {tangent}"
        );
    }
}

/// libm's `pow` near the top of double's range: dr/dx = y·r/x is an
/// ordinary number where y·r overflows (it was computed in that order and
/// came out infinite, silently).
#[test]
fn pow_near_the_top_of_the_range_keeps_its_partial() {
    let prog = build("beyond_double_range.c", &["-lm"]);
    let scratch = ScratchDir::new("record-pow-top");
    let inv = Invocation::new(&prog).arg("pow").arg("0");
    let native = run_native(&inv, None);
    let dir = scratch.path().join("run");
    let out = record_as_natively(&inv, &dir, &native);
    let x = 1.58e123f64;
    let want = 2.5 * x.powf(1.5);
    let got = gradient(&dir, "1\n")[0];
    assert!(
        (got - want).abs() <= 1e-14 * want,
        "{got} against {want}: {out:?}"
    );
}

/// A masked store of passive values that skips a lane holding an active
/// value, and a cmov whose condition is false, keep the index they do not
/// overwrite (both once lost by the inline all-passive rule).
#[test]
fn partial_writes_keep_the_indices_they_do_not_overwrite() {
    let prog = build("partial_writes.c", &[]);
    let x = 1.25f64;
    let inv = Invocation::new(&prog).arg(x.to_string());
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-partial-writes");
    let dir = scratch.path().join("run");
    let out = record(&inv, &dir);
    assert_eq!(out.stdout, native.stdout, "values differ");
    let masked = gradient(&dir, "1\n0\n")[0];
    let cmov = gradient(&dir, "0\n1\n")[0];
    assert_eq!(masked, 3.0, "masked store: d(3x)/dx");
    assert_eq!(cmov, 2.0 * x, "cmov with a false condition: d(x*x)/dx");
}

/// RIP-relative operands out of the code cache's reach (code in the middle
/// of a JIT-style 3 GiB reservation, whose translations live far away, and
/// an operand 1.98 GiB from its code) and 64-bit absolute operands (moffs)
/// have their shadows read and written at their real addresses (an older
/// dgad stopped with exit 125).
#[test]
fn rip_relative_operands_out_of_the_caches_reach_keep_their_derivatives() {
    let prog = build("far_operands.c", &[]);
    let x = 1.25f64;
    let inv = Invocation::new(&prog).arg(x.to_string());
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-far-operands");
    let dir = scratch.path().join("run");
    record_as_natively(&inv, &dir, &native);
    let expected = [2.0 * x, -1.0 / (x * x), 6.0, 2.0 * x, 2.0 * x];
    for (k, want) in expected.iter().enumerate() {
        let bars: String = (0..expected.len())
            .map(|j| if j == k { "1\n" } else { "0\n" })
            .collect();
        let got = gradient(&dir, &bars)[0];
        assert!(
            (got - want).abs() <= 1e-15 * want.abs(),
            "dy{}/dx: {got} vs {want}",
            k + 1
        );
    }
}

/// Memory calls of the program over record mode's shadow memory (a
/// MAP_FIXED mapping, munmap, mprotect) fail with ENOMEM and a note, and
/// the derivatives of data whose shadow lies there survive (an older dgad
/// let them unmap or replace the shadow pages: a crash or zeros).
#[test]
fn memory_calls_over_the_shadow_memory_are_refused_with_a_note() {
    let prog = build("shadow_range_maps.c", &[]);
    let x = 1.5f64;
    let inv = Invocation::new(&prog).arg(x.to_string());
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-shadow-range-maps");
    let dir = scratch.path().join("run");
    let out = record(&inv, &dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, native.stdout, "values differ");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [
        "MAP_FIXED: Cannot allocate memory",
        "munmap: Cannot allocate memory",
        "mprotect: Cannot allocate memory",
        "hint: elsewhere",
        "where record mode keeps its shadow memory",
    ] {
        assert!(stderr.contains(line), "no `{line}` on stderr:\n{stderr}");
    }
    assert_eq!(gradient(&dir, "1\n"), vec![2.0 * x], "d(x*x)/dx");
}

/// Traps the program enabled fire in libm functions run natively for it
/// (SIGFPE to its handler with the kernel's si_code, as natively; an older
/// dgad stopped with an internal error), and a call without an exception
/// records its derivative.
#[test]
fn libm_exceptions_the_program_unmasked_reach_its_handler() {
    let prog = build("libm_traps.c", &["-lm"]);
    let x = 2.25f64;
    let inv = Invocation::new(&prog).arg(x.to_string());
    let native = run_native(&inv, None);
    for line in [
        "sqrt(-1): SIGFPE, si_code 7",
        "log(0): SIGFPE, si_code 3",
        "sqrtl(-1): SIGFPE, si_code 7",
        "logl(0): SIGFPE, si_code 3",
    ] {
        assert!(
            native.stdout_text().contains(line),
            "natively no `{line}`: {}",
            native.stdout_text()
        );
    }
    let scratch = ScratchDir::new("record-libm-traps");
    let dir = scratch.path().join("run");
    record_as_natively(&inv, &dir, &native);
    assert_eq!(gradient(&dir, "1\n"), vec![0.5 / x.sqrt()], "d sqrt(x)/dx");
}

/// A program started with a cleaned environment (`env -i`) by a process
/// under record mode runs under record mode too: dgad puts its
/// `LD_PRELOAD` back, and with it the `DGAD_` settings (an older dgad
/// dropped them, and the child ran in null mode, recording nothing).
#[test]
fn a_child_with_a_cleaned_environment_still_records() {
    let prog = build("partial_writes.c", &[]);
    let x = 1.25f64;
    let inv = Invocation::new("env")
        .arg("-i")
        .arg(&prog)
        .arg(x.to_string());
    let scratch = ScratchDir::new("record-env-i");
    let dir = scratch.path().join("run");
    let out = record(&inv, &dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(gradient(&dir, "1\n0\n"), vec![3.0], "d(3x)/dx");
    assert_eq!(gradient(&dir, "0\n1\n"), vec![2.0 * x], "d(x*x)/dx");
}

/// The tape writer thread (400,000 blocks hand it about 50 chunks) leaves
/// byte for byte the files the recording thread writes itself with
/// `DGAD_TAPE_WRITER=0`, and the gradient is right.
#[test]
fn tape_writer_thread_writes_the_files_the_recording_thread_would() {
    let prog = build("fatal_signal_after_recording.c", &[]);
    let inv = Invocation::new(&prog).args(["0.999", "200000"]);
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-writer");
    let run = |writer: &str| {
        let dir = scratch.path().join(format!("run-writer-{writer}"));
        let out = run_under_dgad(
            &inv,
            None,
            &[
                ("DGAD_MODE", "record"),
                ("DGAD_RECORD", dir.to_str().unwrap()),
                ("DGAD_TAPE_WRITER", writer),
                ("DGAD_STATS", "1"),
            ],
        );
        assert!(out.status.success(), "DGAD_TAPE_WRITER={writer}: {out:?}");
        assert_eq!(out.stdout, native.stdout, "DGAD_TAPE_WRITER={writer}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let chunks =
            testsuite::recording::stats_count(&stderr, " tape chunks written by the writer thread")
                .unwrap_or_else(|| panic!("no writer count in the statistics: {stderr}"));
        (dir, chunks)
    };
    let (with, chunks_with) = run("1");
    let (without, chunks_without) = run("0");
    assert!(chunks_with >= 40, "the writer wrote {chunks_with} chunks");
    assert_eq!(chunks_without, 0);
    for file in ["dg-tape", "dg-input-indices", "dg-output-indices"] {
        let a = std::fs::read(with.join(file)).unwrap();
        let b = std::fs::read(without.join(file)).unwrap();
        assert!(a == b, "{file} differs ({} vs {} bytes)", a.len(), b.len());
    }
    assert_recurrence_gradient(&with, 200000);
}

/// The main thread leaves with the `exit` system call while another thread
/// records on: under the engine alone the program behaves as natively (code
/// is still read once the process id has no address space), and when
/// recording the process ends as the last guest thread leaves — the writer
/// thread does not keep it alive — with its status and a whole tape.
#[test]
fn main_thread_leaving_first_ends_neither_the_recording_nor_the_process_early() {
    let prog = build_at("thread_outlives_main.c", &["-pthread"], OptLevel::O3);
    let inv = Invocation::new(&prog).args(["0.999", "200000"]);
    let native = testsuite::assert_transparent(&inv, None);
    assert_eq!(native.status.code(), Some(3));
    let scratch = ScratchDir::new("record-outlives-main");
    let dir = scratch.path().join("run");
    let out = record(&inv, &dir);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(out.stdout, native.stdout);
    assert_recurrence_gradient(&dir, 200000);
}

/// A child of `fork` that computes with active values and declares an
/// output does not record: its blocks would land on the parent's indices
/// (the parent's writer thread is running at the fork). The files are the
/// parent's alone — one output, the parent's gradient — and the child says
/// why its declaration went nowhere.
#[test]
fn forked_child_does_not_record_into_the_parents_files() {
    let prog = build("fork_child.c", &[]);
    let n = 50000;
    let inv = Invocation::new(&prog).args(["0.999", &n.to_string()]);
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-fork-child");
    let dir = scratch.path().join("run");
    let out = record_as_natively(&inv, &dir, &native);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("forked child, which does not record"),
        "no note from the child: {stderr}"
    );
    let outputs = std::fs::read_to_string(dir.join("dg-output-indices")).unwrap();
    assert_eq!(outputs.lines().count(), 1, "outputs: {outputs}");
    assert_recurrence_gradient(&dir, n);
}

/// The main thread exits while a worker thread records without end (and
/// the writer thread cannot keep up with it): the exit completes what was
/// queued before it and the process ends, with the main thread's gradient.
#[test]
fn exit_while_a_thread_records_does_not_wait_for_it() {
    let prog = build("exit_while_thread_records.c", &["-pthread"]);
    let x = 1.5f64;
    let inv = Invocation::new(&prog).arg(x.to_string());
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-exit-while-recording");
    let dir = scratch.path().join("run");
    record_as_natively(&inv, &dir, &native);
    let bars = gradient(&dir, "1.0\n");
    assert!(
        (bars[0] - 3.0 * x * x).abs() <= 1e-12 * 3.0 * x * x,
        "dy/dx {} vs {}",
        bars[0],
        3.0 * x * x
    );
}

/// `posix_spawn` (a vfork-style child that shares the process's memory
/// until it execs) while another thread records: the child writes only its
/// own blocks, never the recording thread's half-filled buffer.
#[test]
fn spawning_while_a_thread_records_keeps_its_tape() {
    let prog = build("spawn_while_recording.c", &["-pthread"]);
    let n = 400000;
    let inv = Invocation::new(&prog).args(["0.999", &n.to_string()]);
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-spawn");
    let dir = scratch.path().join("run");
    record_as_natively(&inv, &dir, &native);
    assert_recurrence_gradient(&dir, n);
}

/// A program that closes every descriptor above stderr (`close` and
/// `close_range`) in the middle of the recording, then opens a file of its
/// own: the record files stay open and whole, and the program's file holds
/// only what it wrote (the runtime's descriptors are not the program's).
#[test]
fn closing_every_descriptor_keeps_the_record_files() {
    let prog = build("close_all_fds.c", &[]);
    let scratch = ScratchDir::new("record-close-fds");
    let file = scratch.path().join("own-file");
    let n = 200000;
    let inv = Invocation::new(&prog).args(["0.999", &n.to_string(), file.to_str().unwrap()]);
    let native = run_native(&inv, None);
    let dir = scratch.path().join("run");
    record_as_natively(&inv, &dir, &native);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "the program's own file\n"
    );
    assert_recurrence_gradient(&dir, 2 * n);
}

/// Under a virtual-memory limit the shadow memory cannot be reserved: the
/// program does not run, and the message names the limit and the way out.
#[test]
fn address_space_limit_fails_at_start_with_the_reason() {
    let prog = build("fatal_signal_after_recording.c", &[]);
    let scratch = ScratchDir::new("record-ulimit");
    let dir = scratch.path().join("run");
    let script = format!("ulimit -v 4000000; exec {} 2 3", prog.display());
    let out = record(&Invocation::new("bash").args(["-c", &script]), &dir);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "the program ran: {}",
        out.stdout_text()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot reserve shadow memory") && stderr.contains("ulimit -v"),
        "{stderr}"
    );
}

/// A shell under dgad that lowers its address-space limit keeps working
/// (dgad's own reservations already exceed the limit: applied at once, it
/// would leave the runtime unable to map memory), reports the limit as
/// set, and its children get it — in record mode, where the child then
/// stops with the reason, and in null mode, where it runs under it. The
/// program is found through a relative path, so the shell does work of
/// its own between `ulimit` and `exec`.
#[test]
fn address_space_limit_set_by_a_shell_under_dgad_reaches_its_children() {
    let prog = build("fatal_signal_after_recording.c", &[]);
    let scratch = ScratchDir::new("record-ulimit-shell");
    let dir = scratch.path().join("run");
    let script = format!(
        "ulimit -v 4000000; ulimit -v; ulimit -Hv; cd {}; for i in 1 2; do echo $i; done; \
         exec ./{} 2 3",
        prog.parent().unwrap().display(),
        prog.file_name().unwrap().to_string_lossy()
    );
    let out = record(&Invocation::new("bash").args(["-c", &script]), &dir);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert_eq!(out.stdout_text(), "4000000\n4000000\n1\n2\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot reserve shadow memory") && stderr.contains("4000000 KiB"),
        "{stderr}"
    );

    let script = "ulimit -v 4000000; ulimit -v; ulimit -Hv; sh -c 'ulimit -v'; ulimit -v 5000000";
    let inv = Invocation::new("bash").args(["-c", script]);
    let native = run_native(&inv, None);
    let under = run_under_dgad(&inv, None, &[]);
    assert_eq!(under.status, native.status, "{under:?}");
    assert_eq!(under.stdout_text(), native.stdout_text());
    assert_eq!(under.stdout_text(), "4000000\n4000000\n4000000\n");
}

/// A relative `DGAD_RECORD` means the directory the process started in,
/// even when the program changes directory before its first declaration.
#[test]
fn relative_record_directory_survives_a_chdir() {
    let prog = build("chdir_before_recording.c", &[]);
    let scratch = ScratchDir::new("record-relative");
    let inv = Invocation::new(&prog)
        .arg("1.5")
        .current_dir(scratch.path());
    let out = run_under_dgad(
        &inv,
        None,
        &[("DGAD_MODE", "record"), ("DGAD_RECORD", "relative-run")],
    );
    assert!(out.status.success(), "{out:?}");
    let bars = gradient(&scratch.path().join("relative-run"), "1.0\n");
    assert_eq!(bars[0], 3.0 * 1.5 * 1.5);
}

/// A program that unmasks floating-point exceptions and rounds toward
/// zero: dgad computes partials in the default environment (a partial of
/// sqrt at 0 divides by zero, which trapped under the program's traps),
/// and leaves the program's flags and mode as they were.
#[test]
fn partials_neither_trap_nor_follow_the_programs_rounding_mode() {
    let prog = build("fenv_traps.c", &["-lm"]);
    let inv = Invocation::new(&prog).args(["0", "2"]);
    let native = run_native(&inv, None);
    assert!(native.status.success());
    for wrap in ["1", "0"] {
        let scratch = ScratchDir::new("record-fenv");
        let dir = scratch.path().join("run");
        let out = record_with(&inv, &dir, &[("DGAD_MATHWRAP", wrap)]);
        assert!(out.status.success(), "DGAD_MATHWRAP={wrap}: {out:?}");
        assert_eq!(out.stdout, native.stdout, "DGAD_MATHWRAP={wrap}");
        let d_sqrt = gradient(&dir, "1\n0\n");
        assert_eq!(d_sqrt, [f64::INFINITY, 0.0], "DGAD_MATHWRAP={wrap}");
        if wrap == "0" {
            // glibc's own log differentiated as machine code is wrong away
            // from 1 (docs/math-functions.md); its run shows the traps only.
            continue;
        }
        let d_y2 = gradient(&dir, "0\n1\n")[1];
        let b = 2.0f64;
        let expected =
            b.ln() + 1.0 + (0.5 / b.sqrt()) / (b + 1.0) - b.sqrt() / ((b + 1.0) * (b + 1.0));
        assert!(
            (d_y2 - expected).abs() <= 1e-14 * expected,
            "DGAD_MATHWRAP={wrap}: dy2/db {d_y2} vs {expected}"
        );
    }
}

/// Bytes the kernel writes (read(), recvmmsg, msgrcv, mq_receive,
/// process_vm_readv, fresh pages after munmap + mmap at the same address
/// or madvise(MADV_DONTNEED)) are passive although active values lay there
/// before, and mremap moves the shadow with the data.
#[test]
fn kernel_writes_leave_passive_bytes_and_mremap_moves_indices() {
    let prog = build("kernel_writes.c", &[]);
    let scratch = ScratchDir::new("record-kernel-writes");
    let file = scratch.path().join("doubles.bin");
    let inv = Invocation::new(&prog).args(["1.5", file.to_str().unwrap()]);
    let native = run_native(&inv, None);
    let dir = scratch.path().join("run");
    record_as_natively(&inv, &dir, &native);
    let expected = [3.0, 2.0, 6.0, 4.0, 3.0, 3.0, 3.0, 3.0];
    for (k, want) in expected.into_iter().enumerate() {
        let seed: String = (0..expected.len())
            .map(|j| if j == k { "1\n" } else { "0\n" })
            .collect();
        assert_eq!(gradient(&dir, &seed)[0], want, "output y{}", k + 1);
    }
}

/// A signal handler that computes with active values while the code it
/// interrupted records: the interrupted registers keep their own indices.
#[test]
fn signal_handler_arithmetic_keeps_the_interrupted_derivatives() {
    let prog = build("signal_arithmetic.c", &[]);
    let n = 3_000_000;
    let inv = Invocation::new(&prog).args(["0.999", &n.to_string()]);
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("record-signal-arithmetic");
    let dir = scratch.path().join("run");
    let out = record_as_natively(&inv, &dir, &native);
    assert!(out.stdout_text().ends_with("handler ran: 1\n"));
    let bars = gradient(&dir, "1.0\n");
    assert_eq!(bars[0], 0.0, "dy/dz");
    let expected = recurrence_derivative(0.999, n);
    assert!(
        (bars[1] - expected).abs() <= 1e-9 * expected,
        "dy/dx {} vs {expected}",
        bars[1]
    );
}

/// Alarms arriving while the runtime applies an instruction's semantics
/// are delivered even when the loop never leaves its linked blocks
/// otherwise (it hung under record mode before).
#[test]
fn signals_reach_a_loop_that_only_enters_the_runtime_for_arithmetic() {
    let prog = build("signal_in_runtime_loop.c", &[]);
    let x = 1.25;
    let inv = Invocation::new(&prog).args([x.to_string()]);
    let scratch = ScratchDir::new("record-signal-runtime-loop");
    let dir = scratch.path().join("run");
    let out = record(&inv, &dir);
    assert!(out.status.success(), "{out:?}");
    let text = out.stdout_text();
    assert!(text.starts_with("ticks: 20\n"), "{text}");
    let steps: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("steps: "))
        .and_then(|s| s.parse().ok())
        .expect("steps printed");
    // y_{k+1} = y_k / x + 0.5: dy_{k+1}/dx = (dy_k/dx) / x - y_k / x².
    let (mut y, mut dy) = (1.0f64, 0.0f64);
    for _ in 0..steps {
        dy = dy / x - y / (x * x);
        y = y / x + 0.5;
    }
    let bars = gradient(&dir, "1.0\n");
    assert!(
        (bars[0] - dy).abs() <= 1e-12 * dy.abs(),
        "dy/dx {} vs {dy}",
        bars[0]
    );
}

/// Long `rep movs`/`rep stos` under a 100 µs timer: they finish (the
/// previous library livelocked: every alarm came while it copied the
/// whole range's shadow) and carry their derivatives, chunked or not
/// (`programs/record/rep_strings.c`: d out/dx = N + 4 + 6x + 1).
#[test]
fn long_string_instructions_interrupted_by_a_timer_finish_with_their_derivatives() {
    let prog = build("rep_strings.c", &[]);
    let x = 1.5f64;
    let inv = Invocation::new(&prog).args([x.to_string()]);
    let native = run_native(&inv, None);
    assert!(native.status.success(), "{native:?}");
    assert!(native.stdout_text().ends_with("alarms yes\n"), "{native:?}");
    let scratch = ScratchDir::new("record-rep-strings");
    let dir = scratch.path().join("run");
    record_as_natively(&inv, &dir, &native);
    let bars = gradient(&dir, "1.0\n");
    let want = 16384.0 + 4.0 + 6.0 * x + 1.0;
    assert!(
        (bars[0] - want).abs() <= 1e-9 * want,
        "d out/dx {} vs {want}",
        bars[0]
    );
}
