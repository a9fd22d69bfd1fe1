//! Forward mode in the run (`DGAD_MODE=dot`, issue 17): the tangents of
//! kernels covering every instruction family the rules handle, against
//! their analytic derivatives and against `dg-eval --forward` on the same
//! program's tape; stdout byte-identical to the native run.

use std::collections::BTreeMap;
use testsuite::derivatives::eval_values;
use testsuite::{
    build_record_program, run_native, run_under_dgad, Invocation, OptLevel, Outcome, ScratchDir,
};

const X: f64 = 1.25;

/// The analytic derivative of each kernel of `dot_kernels.c` at `x`, and
/// the relative tolerance (float kernels: single precision).
fn expected(x: f64) -> Vec<(&'static str, f64, f64)> {
    let n = 64;
    let square: f64 = (0..n).map(|i| 2.0 * (x * x + i as f64) * 2.0 * x).sum();
    let recip: f64 = (0..n)
        .map(|i| -1.0 / ((x + i as f64) * (x + i as f64)))
        .sum();
    let float_sum: f64 = (0..n)
        .map(|i| {
            let d = 1.0 + x * i as f64;
            (2.0 * x * d - x * x * i as f64) / (d * d)
        })
        .sum();
    vec![
        ("poly", 3.0 * x * x - 2.0, 1e-13),
        ("dot_sum", 0.5 * (0..n).sum::<i32>() as f64, 1e-13),
        ("square_sum", square, 1e-13),
        ("reciprocal_sum", recip, 1e-13),
        ("sin_exp", (x.cos() + x.sin()) * x.exp(), 1e-13),
        ("pow", 2.5 * x.powf(1.5), 1e-13),
        ("abs_copysign", -2.0 * x, 1e-13),
        ("min_max", 2.0, 1e-13),
        ("fma", 2.0 * x + 1.0, 1e-13),
        ("int_part", (3.0 * x).trunc(), 1e-13),
        (
            "sqrt_div",
            (0.5 / x.sqrt() * (1.0 + x) - x.sqrt()) / ((1.0 + x) * (1.0 + x)),
            1e-13,
        ),
        ("float_sum", float_sum, 1e-5),
        (
            "float_libm",
            x.cos() * x.sqrt() + x.sin() * 0.5 / x.sqrt(),
            1e-5,
        ),
        ("x87", 1.5 * x.sqrt() - 1.0 / (x * x), 1e-13),
        ("x87_libm", x.exp() * x.ln() + x.exp() / x, 1e-13),
    ]
}

/// The "dot NAME VALUE" lines of a run's stderr.
fn dots(out: &Outcome) -> BTreeMap<String, f64> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("dot ")?.split_whitespace();
            Some((w.next()?.to_string(), w.next()?.parse().ok()?))
        })
        .collect()
}

fn close(actual: f64, expected: f64, tol: f64) -> bool {
    (actual - expected).abs() <= tol * expected.abs().max(1.0)
}

fn check(opt: OptLevel) {
    let prog = build_record_program("dot_kernels.c", &["-lm"], opt);
    let inv = Invocation::new(&prog).arg(X.to_string());
    let native = run_native(&inv, None);
    assert!(native.status.success(), "native: {native:?}");
    let dot = run_under_dgad(&inv, None, &[("DGAD_MODE", "dot")]);
    assert!(dot.status.success(), "dot mode: {dot:?}");
    assert_eq!(
        String::from_utf8_lossy(&dot.stdout),
        String::from_utf8_lossy(&native.stdout),
        "stdout differs from the native run"
    );
    let tool_lines: Vec<_> = String::from_utf8_lossy(&dot.stderr)
        .lines()
        .filter(|l| l.starts_with("dgad:"))
        .map(str::to_string)
        .collect();
    assert!(tool_lines.is_empty(), "dot mode reported: {tool_lines:#?}");
    let got = dots(&dot);
    // The same program's tape, swept forward with dot 1 on x.
    let scratch = ScratchDir::new(&format!("dot-kernels-{opt:?}"));
    let dir = scratch.path().join("run");
    let rec = run_under_dgad(
        &inv,
        None,
        &[
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", dir.to_str().unwrap()),
        ],
    );
    assert!(rec.status.success(), "record mode: {rec:?}");
    let swept = eval_values(&dir, "dg-input-dots", "1\n", "dg-output-dots", true);
    let want = expected(X);
    assert_eq!(swept.len(), want.len(), "one output mark per kernel");
    let mut wrong = Vec::new();
    for (k, (name, d, tol)) in want.iter().enumerate() {
        let Some(&g) = got.get(*name) else {
            wrong.push(format!("{name}: no tangent printed"));
            continue;
        };
        if !close(g, *d, *tol) {
            wrong.push(format!("{name}: dot mode {g:e}, analytic {d:e}"));
        }
        if !close(g, swept[k], *tol) {
            wrong.push(format!(
                "{name}: dot mode {g:e}, dg-eval --forward {:e}",
                swept[k]
            ));
        }
    }
    assert!(wrong.is_empty(), "{opt:?}:\n{}", wrong.join("\n"));
}

#[test]
fn kernels_o0() {
    check(OptLevel::O0);
}

#[test]
fn kernels_o3() {
    check(OptLevel::O3);
}

#[test]
fn kernels_o3_native() {
    check(OptLevel::O3Native);
}

/// Natively the dot requests leave the variable unchanged: every tangent
/// prints as 0.
#[test]
fn requests_are_no_ops_natively() {
    let prog = build_record_program("dot_kernels.c", &["-lm"], OptLevel::O3);
    let native = run_native(&Invocation::new(&prog).arg(X.to_string()), None);
    let d = dots(&native);
    assert_eq!(d.len(), expected(X).len());
    assert!(d.values().all(|&v| v == 0.0), "{d:?}");
}
