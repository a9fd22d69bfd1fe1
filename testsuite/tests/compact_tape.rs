//! `DGAD_TAPE_FORMAT=compact`: the tape written as `dg-tape-compact`
//! (issue 18, decision 40). Every recording is compared with a recording
//! of the same run in Derivgrind's format: `dg-eval` gives the same bits
//! forward and backward, `dg-eval --export` gives the same blocks (but for
//! the partials of passive operands, which the compact format does not
//! keep), the gradients are the analytic ones; a program that dies or
//! reaches the tape limit leaves its whole tape in `dg-tape`; stale tapes
//! of the other format are removed; bad settings stop at start.

use std::fs;
use std::path::Path;
use testsuite::derivatives::eval_values;
use testsuite::recording::listing;
use testsuite::recording::{
    build, record, recurrence, recurrence_gradient, stderr, without_passive_partials,
};
use testsuite::{Invocation, ScratchDir};

/// The bits of `values`, to compare them exactly (NaNs included).
fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The same run recorded in both formats, with and without the writer
/// thread: the same derivatives bit for bit, the same blocks, the analytic
/// gradient, and nothing but the compact tape beside the index files.
#[test]
fn the_compact_tape_gives_dg_eval_the_same_bits() {
    let scratch = ScratchDir::new("compact-bits");
    let (x, n) = (0.9999, 200_000);
    let inv = recurrence("0.9999", n, false);
    let blocks_dir = scratch.path().join("blocks");
    let out = record(&inv, &blocks_dir, &[]);
    assert!(out.status.success(), "{out:?}");
    let reverse = eval_values(&blocks_dir, "dg-output-bars", "1\n", "dg-input-bars", false);
    let forward = eval_values(&blocks_dir, "dg-input-dots", "1\n", "dg-output-dots", true);
    let analytic = recurrence_gradient(x, n);
    assert!(
        (reverse[0] - analytic).abs() <= 1e-9 * analytic.abs(),
        "{reverse:?} vs {analytic}"
    );
    let tape = fs::read(blocks_dir.join("dg-tape")).unwrap();
    for writer in ["1", "0"] {
        let dir = scratch.path().join(format!("compact-{writer}"));
        let out = record(
            &inv,
            &dir,
            &[
                ("DGAD_TAPE_FORMAT", "compact"),
                ("DGAD_TAPE_WRITER", writer),
            ],
        );
        assert!(out.status.success(), "{out:?}");
        assert_eq!(out.stdout, testsuite::run_native(&inv, None).stdout);
        assert_eq!(
            listing(&dir),
            [
                ".dgad-recorded-by",
                "dg-input-indices",
                "dg-output-indices",
                "dg-tape-compact"
            ]
        );
        let compact = fs::metadata(dir.join("dg-tape-compact")).unwrap().len();
        assert!(
            compact * 2 < tape.len() as u64,
            "{compact} bytes against {} of blocks",
            tape.len()
        );
        for (file, name) in ["dg-input-indices", "dg-output-indices"]
            .iter()
            .map(|f| (fs::read(dir.join(f)).unwrap(), f))
        {
            assert_eq!(file, fs::read(blocks_dir.join(name)).unwrap(), "{name}");
        }
        let r = eval_values(&dir, "dg-output-bars", "1\n", "dg-input-bars", false);
        let f = eval_values(&dir, "dg-input-dots", "1\n", "dg-output-dots", true);
        assert_eq!(bits(&r), bits(&reverse), "writer {writer}");
        assert_eq!(bits(&f), bits(&forward), "writer {writer}");
        let exported = scratch.path().join(format!("exported-{writer}"));
        let out = testsuite::run_native(
            &Invocation::new(testsuite::derivatives::dg_eval())
                .arg("--export")
                .arg(&exported)
                .arg(&dir),
            None,
        );
        assert!(out.status.success(), "{out:?}");
        assert!(
            fs::read(&exported).unwrap() == without_passive_partials(&tape),
            "writer {writer}: the exported blocks differ from the recording's"
        );
    }
}

/// Four threads record at once; the sum of their results has the
/// derivative 3 x² + 2 with respect to each thread's input.
#[test]
fn threads_record_into_one_compact_tape() {
    let scratch = ScratchDir::new("compact-threads");
    let inv = Invocation::new(build("threads_record.c", &["-pthread"]));
    let dir = scratch.path().join("run");
    let out = record(&inv, &dir, &[("DGAD_TAPE_FORMAT", "compact")]);
    assert!(out.status.success(), "{out:?}");
    assert!(dir.join("dg-tape-compact").exists());
    let bars = eval_values(&dir, "dg-output-bars", "1\n", "dg-input-bars", false);
    let expected: Vec<f64> = (0..4)
        .map(|t| {
            let x = 0.5 + t as f64;
            3.0 * x * x + 2.0
        })
        .collect();
    assert_eq!(bars.len(), 4);
    for (g, w) in bars.iter().zip(&expected) {
        assert!((g - w).abs() <= 1e-12 * w.abs(), "{bars:?} vs {expected:?}");
    }
}

/// A program that dies of a signal or reaches the tape limit leaves its
/// whole tape in `dg-tape` (32-byte blocks), and no compact file.
#[test]
fn a_program_that_does_not_finish_leaves_its_whole_tape_in_dg_tape() {
    let scratch = ScratchDir::new("compact-dies");
    let n = 50_000;
    let dir = scratch.path().join("dies");
    let out = record(
        &recurrence("0.999", n, true),
        &dir,
        &[("DGAD_TAPE_FORMAT", "compact")],
    );
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(
        listing(&dir),
        [
            ".dgad-recorded-by",
            "dg-input-indices",
            "dg-output-indices",
            "dg-tape"
        ]
    );
    let bars = eval_values(&dir, "dg-output-bars", "1\n", "dg-input-bars", false);
    let analytic = recurrence_gradient(0.999, n);
    assert!(
        (bars[0] - analytic).abs() <= 1e-9 * analytic.abs(),
        "{bars:?} vs {analytic}"
    );

    let dir = scratch.path().join("limit");
    let out = record(
        &recurrence("0.999", 200_000, false),
        &dir,
        &[("DGAD_TAPE_FORMAT", "compact"), ("DGAD_TAPE_LIMIT", "1M")],
    );
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(
        stderr(&out).contains("the tape reached DGAD_TAPE_LIMIT=1M"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("dg-tape-compact").exists());
    let tape = fs::read(dir.join("dg-tape")).unwrap();
    assert_eq!(tape.len(), 1 << 20);
    // Every block is there: block k (k ≥ 2) of the recurrence uses block k-1.
    let last = tape.len() / 32 - 1;
    assert_eq!(
        u64::from_le_bytes(tape[32 * last..32 * last + 8].try_into().unwrap()),
        last as u64 - 1
    );
}

/// Each program image of a process that `execve`s writes its own compact
/// tape, and each gives its own gradient.
#[test]
fn each_program_image_writes_its_compact_tape() {
    let scratch = ScratchDir::new("compact-exec");
    let dir = scratch.path().join("run");
    let prog = build("exec_after_recording.c", &[]);
    let out = record(
        &Invocation::new(&prog).args(["2", "again"]),
        &dir,
        &[("DGAD_TAPE_FORMAT", "compact")],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout_text(), "8\n27\n");
    assert!(!dir.join("dg-tape").exists());
    let first = eval_values(&dir, "dg-output-bars", "1\n", "dg-input-bars", false);
    let second = eval_values(
        &dir.join("exec-2"),
        "dg-output-bars",
        "1\n",
        "dg-input-bars",
        false,
    );
    assert_eq!((first, second), (vec![12.0], vec![27.0]));
}

/// A recording removes the other format's stale tape; `dg-eval` refuses a
/// directory that holds both.
#[test]
fn stale_tapes_of_the_other_format_are_removed() {
    let scratch = ScratchDir::new("compact-stale");
    let inv = recurrence("0.5", 10, false);
    let dir = scratch.path().join("run");
    let out = record(&inv, &dir, &[("DGAD_TAPE_FORMAT", "compact")]);
    assert!(out.status.success(), "{out:?}");
    let compact = fs::read(dir.join("dg-tape-compact")).unwrap();
    let out = record(&inv, &dir, &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(!dir.join("dg-tape-compact").exists());
    let blocks = fs::read(dir.join("dg-tape")).unwrap();
    let out = record(&inv, &dir, &[("DGAD_TAPE_FORMAT", "compact")]);
    assert!(out.status.success(), "{out:?}");
    assert!(!dir.join("dg-tape").exists());
    assert_eq!(fs::read(dir.join("dg-tape-compact")).unwrap(), compact);

    fs::write(dir.join("dg-tape"), &blocks).unwrap();
    fs::write(dir.join("dg-output-bars"), "1\n").unwrap();
    let out = testsuite::run_native(
        &Invocation::new(testsuite::derivatives::dg_eval()).arg(&dir),
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr(&out).contains("holds both dg-tape and dg-tape-compact"),
        "{}",
        stderr(&out)
    );
}

/// A discarded tape (`dg-tape` a link to /dev/null) stays discarded; bad
/// settings stop before the program runs.
#[test]
fn discarded_tapes_and_bad_settings() {
    let scratch = ScratchDir::new("compact-settings");
    let inv = recurrence("0.5", 1000, false);
    let dir = scratch.path().join("discard");
    fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/null", dir.join("dg-tape")).unwrap();
    let out = record(&inv, &dir, &[("DGAD_TAPE_FORMAT", "compact")]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        fs::read_link(dir.join("dg-tape")).unwrap(),
        Path::new("/dev/null")
    );
    assert!(!dir.join("dg-tape-compact").exists());
    assert!(listing(&dir).iter().all(|f| !f.ends_with(".tmp")));

    let dir = scratch.path().join("bad");
    for (env, says) in [
        (
            vec![("DGAD_TAPE_FORMAT", "zip")],
            "DGAD_TAPE_FORMAT=zip is not one of derivgrind, compact",
        ),
        (
            vec![("DGAD_TAPE_FORMAT", "compact"), ("DGAD_GRAD", "ones")],
            "DGAD_TAPE_FORMAT is not read with DGAD_GRAD",
        ),
    ] {
        let out = record(&inv, &dir, &env);
        assert_eq!(out.status.code(), Some(125), "{env:?}: {out:?}");
        assert!(out.stdout.is_empty(), "the program ran: {out:?}");
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
}
