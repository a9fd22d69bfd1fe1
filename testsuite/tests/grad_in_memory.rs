//! `DGAD_GRAD`: the tape kept in the process's memory and the reverse sweep
//! run in the process at exit (issue 18). Every gradient is compared with
//! the analytic one and, bit for bit, with `dg-eval` on a file recording of
//! the same run; a tape larger than `DGAD_TAPE_MEMORY` goes on in a file
//! and gives the same results; a program that does not finish leaves the
//! whole tape for `dg-eval`; bad settings stop at start.

use std::fs;
use std::path::Path;
use testsuite::derivatives::eval_values;
use testsuite::recording::{
    build, record, recurrence, recurrence_gradient, stderr, without_passive_partials,
};
use testsuite::{run_under_dgad, Invocation, ScratchDir};

/// The whitespace-separated numbers of the file at `path`.
fn numbers(path: &Path) -> Vec<f64> {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect()
}

/// `DGAD_GRAD=ones` in memory, and spilled to a file at several budgets
/// with and without the writer thread: the same bits as `dg-eval` on a file
/// recording, and the analytic derivative.
#[test]
fn the_gradient_in_memory_and_spilled_equals_dg_eval_on_the_file() {
    let scratch = ScratchDir::new("grad-memory");
    let (x, n) = (0.9999, 200_000);
    let inv = recurrence("0.9999", n, false);
    let file_dir = scratch.path().join("file");
    let out = record(&inv, &file_dir, &[]);
    assert!(out.status.success(), "{out:?}");
    let reference = eval_values(&file_dir, "dg-output-bars", "1\n", "dg-input-bars", false);
    let analytic = recurrence_gradient(x, n);
    assert_eq!(reference.len(), 1);
    assert!(
        (reference[0] - analytic).abs() <= 1e-9 * analytic.abs(),
        "{reference:?} vs {analytic}"
    );
    let tape = fs::read(file_dir.join("dg-tape")).unwrap();
    let native = testsuite::run_native(&inv, None);
    // 200,000 steps of two blocks each: 12.8 MB of tape.
    for (memory, writer, spills) in [
        (None, "1", false),
        (Some("64M"), "0", false),
        (Some("1M"), "1", true),
        (Some("1M"), "0", true),
        (Some("300000"), "1", true),
    ] {
        let dir = scratch.path().join(format!("mem-{memory:?}-{writer}"));
        let mut env = vec![("DGAD_GRAD", "ones"), ("DGAD_TAPE_WRITER", writer)];
        if let Some(m) = memory {
            env.push(("DGAD_TAPE_MEMORY", m));
        }
        let out = record(&inv, &dir, &env);
        assert!(out.status.success(), "{memory:?}: {out:?}");
        assert_eq!(out.stdout, native.stdout);
        let bars = numbers(&dir.join("dg-input-bars"));
        assert_eq!(
            bars.iter().map(|b| b.to_bits()).collect::<Vec<_>>(),
            reference.iter().map(|b| b.to_bits()).collect::<Vec<_>>(),
            "{memory:?}"
        );
        let err = stderr(&out);
        assert_eq!(dir.join("dg-tape").exists(), spills, "{memory:?}: {err}");
        assert_eq!(err.contains("the tape outgrew the memory"), spills, "{err}");
        if spills {
            // The file holds the whole tape, the region's part included;
            // the compact stream in memory keeps no partial of a passive
            // operand (it influences nothing), so the region's blocks have 0
            // there.
            let spilled = fs::read(dir.join("dg-tape")).unwrap();
            assert!(
                without_passive_partials(&spilled) == without_passive_partials(&tape),
                "{memory:?}: the spilled tape differs from the file recording's"
            );
        }
        // Nothing but the index files, the mark and the results.
        let stray: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(stray.is_empty(), "{stray:?}");
    }
}

/// Four threads record at once into the region and, with a small budget,
/// across the spill; `seeds` (two directions) and `jacobian` give the
/// analytic 3 x² + 2 per input.
#[test]
fn threads_seeds_and_jacobian() {
    let scratch = ScratchDir::new("grad-threads");
    let inv = Invocation::new(build("threads_record.c", &["-pthread"]));
    let expected: Vec<f64> = (0..4)
        .map(|t| {
            let x = 0.5 + t as f64;
            3.0 * x * x + 2.0
        })
        .collect();
    let close = |got: &[f64], want: &[f64]| {
        got.len() == want.len()
            && got
                .iter()
                .zip(want)
                .all(|(g, w)| (g - w).abs() <= 1e-12 * w.abs())
    };
    for memory in ["1G", "1M"] {
        let dir = scratch.path().join(format!("ones-{memory}"));
        let out = record(
            &inv,
            &dir,
            &[("DGAD_GRAD", "ones"), ("DGAD_TAPE_MEMORY", memory)],
        );
        assert!(out.status.success(), "{out:?}");
        let bars = numbers(&dir.join("dg-input-bars"));
        assert!(close(&bars, &expected), "{memory}: {bars:?}");

        let dir = scratch.path().join(format!("seeds-{memory}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("dg-output-bars"), "2 -0.5\n").unwrap();
        let out = record(
            &inv,
            &dir,
            &[("DGAD_GRAD", "seeds"), ("DGAD_TAPE_MEMORY", memory)],
        );
        assert!(out.status.success(), "{out:?}");
        let bars = numbers(&dir.join("dg-input-bars"));
        let want: Vec<f64> = expected.iter().flat_map(|e| [2.0 * e, -0.5 * e]).collect();
        assert!(close(&bars, &want), "{memory}: {bars:?}");
        let lines = fs::read_to_string(dir.join("dg-input-bars")).unwrap();
        assert_eq!(lines.lines().count(), 4, "{lines}");

        let dir = scratch.path().join(format!("jacobian-{memory}"));
        let out = record(
            &inv,
            &dir,
            &[("DGAD_GRAD", "jacobian"), ("DGAD_TAPE_MEMORY", memory)],
        );
        assert!(out.status.success(), "{out:?}");
        let text = fs::read_to_string(dir.join("dg-jacobian")).unwrap();
        assert_eq!(text.lines().count(), 1, "one row per output: {text}");
        assert!(
            close(&numbers(&dir.join("dg-jacobian")), &expected),
            "{text}"
        );
    }
}

/// A program that dies of a signal computes no gradient; its whole tape is
/// in `dg-tape` (also when it lives in memory), and `dg-eval` gives the
/// analytic gradient from it.
#[test]
fn a_program_that_dies_leaves_its_whole_tape() {
    let scratch = ScratchDir::new("grad-dies");
    let n = 50_000;
    for memory in ["1G", "1M"] {
        let dir = scratch.path().join(memory);
        let out = record(
            &recurrence("0.999", n, true),
            &dir,
            &[("DGAD_GRAD", "ones"), ("DGAD_TAPE_MEMORY", memory)],
        );
        assert!(!out.status.success(), "{out:?}");
        assert!(!dir.join("dg-input-bars").exists());
        let err = stderr(&out);
        assert!(err.contains("the tape is complete"), "{err}");
        let bars = eval_values(&dir, "dg-output-bars", "1\n", "dg-input-bars", false);
        let analytic = recurrence_gradient(0.999, n);
        assert!(
            (bars[0] - analytic).abs() <= 1e-9 * analytic.abs(),
            "{memory}: {bars:?} vs {analytic}"
        );
    }
}

/// Each program image of a process that `execve`s writes its own gradient.
#[test]
fn each_program_image_writes_its_gradient() {
    let scratch = ScratchDir::new("grad-exec");
    let dir = scratch.path().join("run");
    let prog = build("exec_after_recording.c", &[]);
    let out = record(
        &Invocation::new(&prog).args(["2", "again"]),
        &dir,
        &[("DGAD_GRAD", "ones")],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout_text(), "8\n27\n");
    assert_eq!(numbers(&dir.join("dg-input-bars")), vec![12.0]);
    assert_eq!(
        numbers(&dir.join("exec-2").join("dg-input-bars")),
        vec![27.0]
    );
    assert!(!dir.join("dg-tape").exists());
}

/// Bad settings stop before the program runs; seeds that do not fit stop
/// at exit with the tape kept for `dg-eval`.
#[test]
fn bad_settings_and_seeds_are_refused_clearly() {
    let scratch = ScratchDir::new("grad-errors");
    let inv = recurrence("0.5", 10, false);
    let dir = scratch.path().join("run");
    for (env, says) in [
        (
            vec![("DGAD_GRAD", "all")],
            "DGAD_GRAD=all is not one of ones, seeds, jacobian",
        ),
        (
            vec![("DGAD_GRAD", "ones"), ("DGAD_TAPE_MEMORY", "lots")],
            "DGAD_TAPE_MEMORY=lots is not a size",
        ),
        (
            vec![("DGAD_TAPE_MEMORY", "1G")],
            "DGAD_TAPE_MEMORY is only read with DGAD_GRAD",
        ),
    ] {
        let out = record(&inv, &dir, &env);
        assert_eq!(out.status.code(), Some(125), "{env:?}: {out:?}");
        assert!(out.stdout.is_empty(), "the program ran: {out:?}");
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
    let out = run_under_dgad(&inv, None, &[("DGAD_MODE", "dot"), ("DGAD_GRAD", "ones")]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(
        stderr(&out).contains("DGAD_GRAD needs record mode"),
        "{}",
        stderr(&out)
    );

    // Seeds missing, then seeds for two outputs where there is one.
    for (seeds, says) in [
        (None, "needs the seeds in"),
        (Some("1\n2\n"), "dg-output-bars"),
    ] {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        if let Some(s) = seeds {
            fs::write(dir.join("dg-output-bars"), s).unwrap();
        }
        let out = record(&inv, &dir, &[("DGAD_GRAD", "seeds")]);
        assert_eq!(out.status.code(), Some(125), "{out:?}");
        let err = stderr(&out);
        assert!(
            err.contains(says) && err.contains("evaluate it with dg-eval"),
            "{err}"
        );
        assert!(!dir.join("dg-input-bars").exists());
        let bars = eval_values(&dir, "dg-output-bars", "1\n", "dg-input-bars", false);
        assert_eq!(bars, vec![recurrence_gradient(0.5, 10)], "the kept tape");
    }
}

/// `DGAD_TAPE_LIMIT` with the tape in memory: stopped as in file mode, with
/// every block recorded in `dg-tape`.
#[test]
fn the_tape_limit_leaves_the_whole_tape_in_the_file() {
    let scratch = ScratchDir::new("grad-limit");
    let dir = scratch.path().join("run");
    let out = record(
        &recurrence("0.999", 200_000, false),
        &dir,
        &[("DGAD_GRAD", "ones"), ("DGAD_TAPE_LIMIT", "1M")],
    );
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(
        stderr(&out).contains("the tape reached DGAD_TAPE_LIMIT=1M"),
        "{}",
        stderr(&out)
    );
    let size = fs::metadata(dir.join("dg-tape")).unwrap().len();
    assert_eq!(size, 1 << 20);
    // Every block is there: block k (k ≥ 2) of the recurrence uses block k-1.
    let tape = fs::read(dir.join("dg-tape")).unwrap();
    let block = |k: usize| &tape[32 * k..32 * k + 32];
    assert!(block(size as usize / 32 - 1).iter().any(|&b| b != 0));
}
