//! Memory the kernel writes behind the program's back in record mode
//! (issue 16, point 4): structures system calls fill are passive
//! afterwards, and writers dgad cannot follow are reported once.

use std::path::{Path, PathBuf};
use testsuite::derivatives::eval_values;
use testsuite::{
    build_record_program, run_native, run_under_dgad, Invocation, OptLevel, Outcome, ScratchDir,
};

fn build(name: &str) -> PathBuf {
    build_record_program(name, &[], OptLevel::O3)
}

/// Records `inv` into `dir`; it must succeed and print what it printed
/// natively.
fn record_as_natively(inv: &Invocation, dir: &Path) -> Outcome {
    let native = run_native(inv, None);
    assert!(native.status.success(), "native run: {native:?}");
    let env = [
        ("DGAD_MODE", "record"),
        ("DGAD_RECORD", dir.to_str().unwrap()),
    ];
    let out = run_under_dgad(inv, None, &env);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        out.stdout, native.stdout,
        "stdout differs from the native run"
    );
    out
}

/// wait4 (status, rusage), pipe2, gettimeofday, poll, getsockname, ioctl
/// FIONREAD and RNDGETENTCNT, uname, sysinfo, clock_getres, times and
/// a nanosleep interrupted by a signal (EINTR) overwrite bytes that held
/// active values: the doubles read back from them are constants (each was
/// x*2 before: derivative 2 with the stale index), and the active double
/// right after the pipe2 result keeps its derivative.
#[test]
fn issue_16_structures_the_kernel_fills_are_passive() {
    let prog = build("kernel_struct_writes.c");
    let scratch = ScratchDir::new("record-kernel-struct-writes");
    let dir = scratch.path().join("run");
    record_as_natively(&Invocation::new(&prog).arg("1.5"), &dir);
    let dots = eval_values(&dir, "dg-input-dots", "1\n", "dg-output-dots", true);
    let mut expected = vec![0.0; 14];
    expected[12] = 5.0;
    let cases = [
        "wait4 status",
        "wait4 rusage",
        "pipe2",
        "gettimeofday",
        "poll",
        "getsockname",
        "ioctl FIONREAD",
        "ioctl RNDGETENTCNT",
        "uname",
        "sysinfo",
        "clock_getres",
        "times",
        "after pipe2",
        "nanosleep interrupted",
    ];
    for ((got, want), case) in dots.iter().zip(&expected).zip(cases) {
        assert_eq!(got, want, "derivative of the double read back ({case})");
    }
    assert_eq!(dots.len(), expected.len());
}

/// Lines of `stderr` that start with `prefix`.
fn lines_with<'a>(stderr: &'a str, prefix: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Writable shared memory (two anonymous mappings, a file, System V
/// shared memory), io_uring and AIO contexts (each set up twice): one line
/// each on stderr, the shared memory one naming the first such mapping;
/// a read-only shared mapping before them is not reported. io_uring or
/// AIO unavailable (ENOSYS, EPERM): that check is skipped, saying so.
#[test]
fn issue_16_writers_dgad_cannot_follow_are_reported_once() {
    let prog = build("shared_writers.c");
    let scratch = ScratchDir::new("record-shared-writers");
    let dir = scratch.path().join("run");
    let inv = Invocation::new(&prog).arg(scratch.path());
    let out = record_as_natively(&inv, &dir);
    let stdout = out.stdout_text();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr
        .lines()
        .find_map(|l| l.strip_prefix("first writable shared mapping: "))
        .expect("the program names its first writable shared mapping");
    let shared = lines_with(&stderr, "dgad: record: writable shared memory at ");
    assert_eq!(shared.len(), 1, "one report of shared memory: {stderr}");
    assert!(
        shared[0].starts_with(&format!("dgad: record: writable shared memory at {first}-")),
        "the report names the first writable shared mapping ({first}): {stderr}"
    );
    let mut expected_lines = 1;
    for (name, report) in [
        ("io_uring", "dgad: record: io_uring_setup: "),
        ("aio", "dgad: record: io_setup: "),
    ] {
        let reports = lines_with(&stderr, report).len();
        if stdout.contains(&format!("{name}: ok\n")) {
            assert_eq!(reports, 1, "one report of {name}: {stderr}");
            expected_lines += 1;
        } else {
            eprintln!("SKIPPED the {name} check: {name} is unavailable here ({stdout})");
            assert_eq!(reports, 0, "{name} reported although it failed: {stderr}");
        }
    }
    let all = lines_with(&stderr, "dgad: ");
    assert_eq!(all.len(), expected_lines, "no other dgad lines: {stderr}");
}
