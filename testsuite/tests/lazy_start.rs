//! Instrumentation that begins at the first request that may make data
//! active (decision 53, `DGAD_LAZY`): the derivatives of a program that
//! computes before it marks anything, marks x and computes with it in the
//! same block (`lazy_start.c`), are the analytic ones in record and dot
//! mode, with the instrumentation begun lazily and from the start alike;
//! a second thread begins it before the thread exists.

use testsuite::derivatives::eval_values;
use testsuite::{
    build_record_program, run_native, run_under_dgad, Invocation, OptLevel, ScratchDir,
};

/// The value of `name` on the program's output (`name value` lines).
fn printed(stdout: &[u8], name: &str) -> f64 {
    let text = String::from_utf8_lossy(stdout);
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no `{name}` in {text:?}"))
        .parse()
        .unwrap_or_else(|e| panic!("`{name}` in {text:?}: {e}"))
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-14 * want.abs().max(1.0)
}

#[test]
fn derivatives_are_right_when_instrumentation_begins_at_the_first_mark_or_thread() {
    let x = 1.25f64;
    for opt in [OptLevel::O0, OptLevel::O3, OptLevel::O3Native] {
        let prog = build_record_program("lazy_start.c", &["-pthread", "-lm"], opt);
        for how in ["plain", "mode", "thread"] {
            let inv = Invocation::new(&prog).arg(how);
            let native = run_native(&inv, None);
            assert!(native.status.success(), "{opt:?} {how} native: {native:?}");
            let c = printed(&native.stdout, "c");
            let dy = 2.0 * c * x + 1.0 / (1.0 + c);
            let dw = if how == "thread" { 3.0 * x * x } else { 0.0 };
            for lazy in ["1", "0"] {
                let what = format!("{opt:?} {how} DGAD_LAZY={lazy}");
                // Dot mode: x seeded with 1 from the record directory.
                let dir = ScratchDir::new("lazy-start-dot");
                std::fs::write(dir.path().join("dg-input-dots"), "1\n").unwrap();
                let dot = run_under_dgad(
                    &inv,
                    None,
                    &[
                        ("DGAD_MODE", "dot"),
                        ("DGAD_RECORD", dir.path().to_str().unwrap()),
                        ("DGAD_LAZY", lazy),
                        ("DGAD_STATS", "1"),
                    ],
                );
                assert!(dot.status.success(), "{what} dot: {dot:?}");
                assert_eq!(dot.stdout, native.stdout, "{what} dot: the values");
                let stderr = String::from_utf8_lossy(&dot.stderr);
                let began = match (lazy, how) {
                    ("0", _) => None,
                    (_, "thread") => Some("instrumentation began at the program's second thread"),
                    _ => Some(
                        "instrumentation began at the first client request that may make data active",
                    ),
                };
                match began {
                    Some(text) => assert!(stderr.contains(text), "{what}: {stderr}"),
                    None => assert!(
                        !stderr.contains("instrumentation began"),
                        "{what}: {stderr}"
                    ),
                }
                let dots = std::fs::read_to_string(dir.path().join("dg-output-dots")).unwrap();
                let dots: Vec<f64> = dots.lines().map(|l| l.trim().parse().unwrap()).collect();
                assert!(
                    dots.len() == 2 && close(dots[0], dy) && close(dots[1], dw),
                    "{what} dot: {dots:?}, want [{dy}, {dw}]"
                );

                // Record mode: the gradient of y, then of w.
                let dir = ScratchDir::new("lazy-start-record");
                let rec = run_under_dgad(
                    &inv,
                    None,
                    &[
                        ("DGAD_MODE", "record"),
                        ("DGAD_RECORD", dir.path().to_str().unwrap()),
                        ("DGAD_LAZY", lazy),
                    ],
                );
                assert!(rec.status.success(), "{what} record: {rec:?}");
                assert_eq!(rec.stdout, native.stdout, "{what} record: the values");
                for (seeds, want) in [("1\n0\n", dy), ("0\n1\n", dw)] {
                    let bars =
                        eval_values(dir.path(), "dg-output-bars", seeds, "dg-input-bars", false);
                    assert!(
                        bars.len() == 1 && close(bars[0], want),
                        "{what} record, output seeds {seeds:?}: {bars:?}, want [{want}]"
                    );
                }
            }
        }
    }
}
