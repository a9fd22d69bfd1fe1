//! Differentiating Python (issue #5): `python3` scripts under libdgad.so in
//! record mode, with the `dgad` / `derivgrind` packages of `python/`.
//!
//! The formulas are Python, in `testsuite/programs/python_ad/`: each suite
//! module lists cases (inputs, the computation, the analytic values and
//! Jacobian), and `driver.py` runs whole suites in one process (CPython
//! starts slowly under the recording, and numpy imports more slowly still).
//! Every test runs the driver natively with `--expect` and under the
//! preload in record mode, then checks, case by case:
//!
//! - the native values against the analytic ones;
//! - the recorded values against the native ones;
//! - the Jacobian from `dg-eval --jacobian` (reverse, one sweep per output)
//!   and from `dg-eval --jacobian --forward`: one block per case equal to
//!   the analytic Jacobian, zero outside the blocks (no value leaks into
//!   another case's derivatives).
//!
//! Cases in [`EXPECTED_FAILURES`] must fail (their reasons are in
//! `docs/limitations.md`); one that passes fails the test, so that the list
//! shrinks when the engine learns more. Also here: `dgad.grad`, the package
//! without its client library, and the 2-D Burgers benchmark in C++ and
//! Python, whose values and gradients must agree.
//!
//! Forward mode (`DGAD_MODE=dot`): dot values set and read from Python on
//! every kind of value (`dot_checks.py`), derivatives in the process against
//! analytic ones, `dgad.jvp` in both its modes (`jvp_checks.py`), and the
//! Burgers benchmark's dot value against the tape's forward sweep.
//!
//! `cargo test -p testsuite --test python_ad` (needs `target/release/libdgad.so`
//! and `dg-eval`, python3 with numpy, gcc, g++).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use testsuite::derivatives::{dg_eval, include_dir};
use testsuite::{
    build_program_at, build_root, dgad_lib, programs_dir, run_native, run_under_dgad,
    workspace_root, Compiler, Invocation, OptLevel, Outcome, ScratchDir,
};

// ---------------------------------------------------------------------------
// Expected failures
// ---------------------------------------------------------------------------

/// A case that is known to give wrong derivatives in one run.
struct ExpectedFailure {
    /// The run: `"default"` (DGAD_CPUID=avx2, dgad's default) or
    /// `"avx512"` (DGAD_CPUID=native on a machine with AVX-512).
    run: &'static str,
    /// Case names (exact).
    cases: &'static [&'static str],
    /// Why, as in docs/limitations.md.
    reason: &'static str,
}

const SVML: &str = "with AVX-512 reported (DGAD_CPUID=native) numpy computes these with \
    its bundled SVML AVX-512 kernels (__svml_atan28_ha, its float32 arctan): they take \
    values apart with bitwise logic that is not a sign-bit trick (vxorpd/vxorps of active \
    data), which dgad treats as a constant";

const SVML_TAN: &str = "with AVX-512 reported (DGAD_CPUID=native) numpy's SVML tan \
    (__svml_tan8_ha) scales an intermediate by DBL_MAX and cancels it later: the recorded \
    partials are exact and the reverse sweep is right, but the forward sweep's derivative \
    of that intermediate overflows (inf - inf = NaN at x = 1.5)";

/// The known failures. Keep docs/limitations.md in step.
const EXPECTED_FAILURES: &[ExpectedFailure] = &[
    ExpectedFailure {
        run: "avx512",
        cases: &["np64_arctan2", "np32_arctan"],
        reason: SVML,
    },
    ExpectedFailure {
        run: "avx512",
        cases: &["np64_tan"],
        reason: SVML_TAN,
    },
];

fn expected_failure(run: &str, case: &str) -> Option<&'static ExpectedFailure> {
    EXPECTED_FAILURES
        .iter()
        .find(|f| f.run == run && f.cases.contains(&case))
}

// ---------------------------------------------------------------------------
// Running Python
// ---------------------------------------------------------------------------

/// The Python interpreter itself (`sys.executable` of `python3`): under the
/// preload a launcher script (pyenv's shim) would run under dgad too.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let outcome = run_native(
            &Invocation::new("python3").args(["-c", "import sys; print(sys.executable)"]),
            None,
        );
        assert!(
            outcome.status.success(),
            "python3 does not run: {}",
            String::from_utf8_lossy(&outcome.stderr)
        );
        PathBuf::from(outcome.stdout_text().trim())
    })
}

/// The package's directory and where its client library is compiled.
fn python_invocation() -> Invocation {
    Invocation::new(python())
        .env("PYTHONPATH", workspace_root().join("python"))
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("DGAD_PY_CACHE", build_root().join("python-client"))
}

fn ad_dir() -> PathBuf {
    programs_dir().join("python_ad")
}

fn numpy_available() {
    let probe = run_native(&python_invocation().args(["-c", "import numpy"]), None);
    assert!(
        probe.status.success(),
        "numpy is not importable by python3, so the numpy tests cannot run: run \
         scripts/setup.sh (see testsuite/README.md)\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
}

fn text(outcome: &Outcome) -> String {
    format!(
        "exit status {}\n--- stdout (last 30 lines) ---\n{}\n--- stderr (last 30 lines) ---\n{}",
        outcome.status,
        last_lines(&outcome.stdout_text(), 30),
        last_lines(&String::from_utf8_lossy(&outcome.stderr), 30)
    )
}

fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

fn record_env(dir: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("DGAD_MODE", "record".to_owned()),
        ("DGAD_RECORD", dir.to_str().expect("UTF-8 paths").to_owned()),
    ]
}

fn run_recording(invocation: &Invocation, dir: &Path, extra: &[(&str, &str)]) -> Outcome {
    let env = record_env(dir);
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(extra);
    run_under_dgad(invocation, None, &all)
}

/// Runs `dg-eval` on `dir` with `args`; returns the result file's rows.
fn evaluate(dir: &Path, args: &[&str], result: &str) -> Result<Vec<Vec<f64>>, String> {
    let invocation = Invocation::new(dg_eval()).arg(dir).args(args);
    let outcome = run_native(&invocation, None);
    if !outcome.status.success() {
        return Err(format!(
            "`{}` failed: {}",
            invocation.display(),
            text(&outcome)
        ));
    }
    let path = dir.join(result);
    let contents =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    contents
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split_whitespace()
                .map(|v| {
                    v.parse::<f64>()
                        .map_err(|e| format!("{result}: {v:?}: {e}"))
                })
                .collect()
        })
        .collect()
}

fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs().max(1.0)
        || (actual.is_nan() && expected.is_nan())
}

// ---------------------------------------------------------------------------
// The formula suites
// ---------------------------------------------------------------------------

/// One case as the driver printed it.
#[derive(Default, Debug)]
struct Case {
    name: String,
    inputs: usize,
    outputs: usize,
    tolerance: f64,
    values: Vec<f64>,
    expect: Vec<f64>,
    jacobian: Vec<Vec<f64>>,
}

fn parse_driver(stdout: &str) -> Result<(String, Vec<Case>), String> {
    let mut mode = String::new();
    let mut cases: Vec<Case> = Vec::new();
    let number = |w: &str| w.parse::<f64>().map_err(|e| format!("{w:?}: {e}"));
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let current = cases.last_mut();
        match (words.first().copied(), current) {
            (Some("mode"), _) => mode = words.get(1).unwrap_or(&"").to_string(),
            (Some("case"), _) if words.len() == 5 => cases.push(Case {
                name: words[1].to_owned(),
                inputs: words[2].parse().map_err(|e| format!("{line}: {e}"))?,
                outputs: words[3].parse().map_err(|e| format!("{line}: {e}"))?,
                tolerance: number(words[4])?,
                ..Case::default()
            }),
            (Some("value"), Some(case)) => case.values.push(number(words[1])?),
            (Some("expect"), Some(case)) => case.expect.push(number(words[1])?),
            (Some("jac"), Some(case)) => case.jacobian.push(
                words[1..]
                    .iter()
                    .map(|w| number(w))
                    .collect::<Result<_, _>>()?,
            ),
            (Some("WRONG"), _) => return Err(format!("a self-check failed: {line}")),
            _ => {}
        }
    }
    if stdout.lines().last() != Some("END driver") {
        return Err("the driver did not complete (no `END driver` line)".to_owned());
    }
    Ok((mode, cases))
}

/// What is wrong with one case: values and Jacobian blocks.
fn case_problems(
    native: &Case,
    recorded: &Case,
    reverse: &[Vec<f64>],
    forward: &[Vec<f64>],
    (first_output, first_input): (usize, usize),
) -> Vec<String> {
    let mut problems = Vec::new();
    let t = native.tolerance;
    if native.expect.len() != native.outputs
        || native.jacobian.len() != native.outputs
        || native.jacobian.iter().any(|r| r.len() != native.inputs)
    {
        return vec![format!(
            "the case's analytic values/Jacobian do not have {} rows of {} columns",
            native.outputs, native.inputs
        )];
    }
    if recorded.name != native.name || recorded.outputs != native.outputs {
        return vec![format!(
            "the recording ran case {} with {} outputs, natively {} with {}",
            recorded.name, recorded.outputs, native.name, native.outputs
        )];
    }
    for k in 0..native.outputs {
        if !close(native.values[k], native.expect[k], t) {
            problems.push(format!(
                "output {k}: native value {:?}, analytic {:?}",
                native.values[k], native.expect[k]
            ));
        }
        if !close(recorded.values[k], native.values[k], t) {
            problems.push(format!(
                "output {k}: recorded value {:?}, native {:?}",
                recorded.values[k], native.values[k]
            ));
        }
        for (sweep, jacobian) in [("reverse", reverse), ("forward", forward)] {
            let Some(row) = jacobian.get(first_output + k) else {
                problems.push(format!(
                    "{sweep}: dg-jacobian has no row {}",
                    first_output + k
                ));
                continue;
            };
            for (i, &d) in row.iter().enumerate() {
                let inside = (first_input..first_input + native.inputs).contains(&i);
                let expected = if inside {
                    native.jacobian[k][i - first_input]
                } else {
                    0.0
                };
                if !close(d, expected, t) {
                    problems.push(if inside {
                        format!(
                            "{sweep}: d out{k} / d in{} = {d:?}, analytic {expected:?}",
                            i - first_input
                        )
                    } else {
                        format!(
                            "{sweep}: d out{k} / d (input {i} of the run, another case's) = {d:?}, \
                             expected 0"
                        )
                    });
                }
            }
        }
    }
    problems
}

/// Runs the driver on `suites` natively and recorded (`env` added to the
/// recording), evaluates both Jacobians and checks every case; `run` names
/// the run in [`EXPECTED_FAILURES`].
fn check_suites(run: &str, suites: &str, env: &[(&str, &str)]) {
    let invocation = python_invocation()
        .current_dir(ad_dir())
        .args(["driver.py", suites]);
    let native = run_native(&invocation.clone().arg("--expect"), None);
    let (native_mode, native_cases) = parse_driver(&native.stdout_text()).unwrap_or_else(|e| {
        panic!(
            "the NATIVE run of the {suites} suites failed: {e}\n{}",
            text(&native)
        )
    });
    assert!(
        native.status.success() && native_mode == "native",
        "the native run of the {suites} suites failed (mode {native_mode:?}):\n{}",
        text(&native)
    );

    let scratch = ScratchDir::new(&format!("python-ad-{run}"));
    let dir = scratch.path().join("record");
    let recorded = run_recording(&invocation, &dir, env);
    let (recorded_mode, recorded_cases) =
        parse_driver(&recorded.stdout_text()).unwrap_or_else(|e| {
            panic!(
                "the recording of the {suites} suites failed: {e}\n{}",
                text(&recorded)
            )
        });
    assert!(
        recorded.status.success() && recorded_mode == "record",
        "the recording of the {suites} suites failed (mode {recorded_mode:?}):\n{}",
        text(&recorded)
    );
    assert_eq!(
        recorded_cases.len(),
        native_cases.len(),
        "the recording ran {} cases, natively {}",
        recorded_cases.len(),
        native_cases.len()
    );

    let reverse = evaluate(&dir, &["--jacobian"], "dg-jacobian").unwrap_or_else(|e| panic!("{e}"));
    let forward = evaluate(&dir, &["--jacobian", "--forward"], "dg-jacobian")
        .unwrap_or_else(|e| panic!("{e}"));
    let total_outputs: usize = native_cases.iter().map(|c| c.outputs).sum();
    let total_inputs: usize = native_cases.iter().map(|c| c.inputs).sum();
    for (sweep, jacobian) in [("reverse", &reverse), ("forward", &forward)] {
        assert!(
            jacobian.len() == total_outputs && jacobian.iter().all(|r| r.len() == total_inputs),
            "{sweep} dg-jacobian is not {total_outputs} x {total_inputs} (the run declared \
             one input per case input and one output per case output)"
        );
    }

    let mut failures = String::new();
    let mut expected_seen = Vec::new();
    let mut now_passing = Vec::new();
    let (mut first_output, mut first_input) = (0, 0);
    for (native_case, recorded_case) in native_cases.iter().zip(&recorded_cases) {
        let problems = case_problems(
            native_case,
            recorded_case,
            &reverse,
            &forward,
            (first_output, first_input),
        );
        first_output += native_case.outputs;
        first_input += native_case.inputs;
        match (
            problems.is_empty(),
            expected_failure(run, &native_case.name),
        ) {
            (true, None) => {}
            (true, Some(_)) => now_passing.push(native_case.name.clone()),
            (false, Some(known)) => expected_seen.push((native_case.name.clone(), known.reason)),
            (false, None) => {
                let _ = writeln!(failures, "{}:", native_case.name);
                for p in problems.iter().take(6) {
                    let _ = writeln!(failures, "    {p}");
                }
                if problems.len() > 6 {
                    let _ = writeln!(failures, "    ... {} more", problems.len() - 6);
                }
            }
        }
    }
    for known in EXPECTED_FAILURES.iter().filter(|f| f.run == run) {
        let seen: Vec<&str> = expected_seen
            .iter()
            .filter(|(_, reason)| *reason == known.reason)
            .map(|(name, _)| name.as_str())
            .collect();
        if !seen.is_empty() {
            println!(
                "{run}: expected failures {} (docs/limitations.md): {}",
                seen.join(", "),
                known.reason
            );
        }
    }
    let command = format!(
        "cd {} && DGAD_MODE=record DGAD_RECORD={} LD_PRELOAD={} {}",
        ad_dir().display(),
        dir.display(),
        dgad_lib().display(),
        invocation.display()
    );
    if !failures.is_empty() || !now_passing.is_empty() {
        let keep = build_root().join(format!("python-ad-{run}-failed"));
        let _ = fs::remove_dir_all(&keep);
        let kept = fs::rename(&dir, &keep).is_ok();
        let mut message = String::new();
        if !failures.is_empty() {
            let _ = write!(
                message,
                "wrong values or derivatives ({run} run):\n{failures}"
            );
        }
        if !now_passing.is_empty() {
            let _ = writeln!(
                message,
                "listed in EXPECTED_FAILURES ({run}) but correct now: {} -- remove them there \
                 and from docs/limitations.md",
                now_passing.join(", ")
            );
        }
        let _ = writeln!(message, "recording: {command}");
        if kept {
            let _ = writeln!(message, "record directory kept: {}", keep.display());
        }
        let _ = writeln!(
            message,
            "--- recording's stderr ---\n{}",
            last_lines(&String::from_utf8_lossy(&recorded.stderr), 20)
        );
        panic!("{message}");
    }
}

/// What is wrong with one case computed in forward mode: its values
/// against the native run's, its Jacobian (from dot values, column by
/// column) against the analytic one.
fn forward_case_problems(native: &Case, dot: &Case) -> Vec<String> {
    if dot.name != native.name || dot.outputs != native.outputs {
        return vec![format!(
            "forward mode ran case {} with {} outputs, natively {} with {}",
            dot.name, dot.outputs, native.name, native.outputs
        )];
    }
    if native.jacobian.len() != native.outputs
        || dot.jacobian.len() != native.outputs
        || dot.values.len() != native.outputs
        || dot.jacobian.iter().any(|r| r.len() != native.inputs)
    {
        return vec![format!(
            "the Jacobians (analytic {} rows, forward mode {} rows) or values ({}) do not \
             have {} rows of {} columns",
            native.jacobian.len(),
            dot.jacobian.len(),
            dot.values.len(),
            native.outputs,
            native.inputs
        )];
    }
    let t = native.tolerance;
    let mut problems = Vec::new();
    for k in 0..native.outputs {
        if !close(dot.values[k], native.values[k], t) {
            problems.push(format!(
                "output {k}: value in forward mode {:?}, native {:?}",
                dot.values[k], native.values[k]
            ));
        }
        for (i, (&d, &expected)) in dot.jacobian[k].iter().zip(&native.jacobian[k]).enumerate() {
            if !close(d, expected, t) {
                problems.push(format!(
                    "d out{k} / d in{i} = {d:?} in forward mode, analytic {expected:?}"
                ));
            }
        }
    }
    problems
}

/// Runs the driver on `suites` natively with `--expect` and under
/// `DGAD_MODE=dot` with `--dot`, where every case runs once per input with
/// that input's unit vector as dot values; checks each case's values and
/// Jacobian (the results' dot values) against the native values and the
/// analytic Jacobian.
fn check_suites_dot_mode(suites: &str) {
    let invocation = python_invocation()
        .current_dir(ad_dir())
        .args(["driver.py", suites]);
    let native = run_native(&invocation.clone().arg("--expect"), None);
    let (native_mode, native_cases) = parse_driver(&native.stdout_text()).unwrap_or_else(|e| {
        panic!(
            "the NATIVE run of the {suites} suites failed: {e}\n{}",
            text(&native)
        )
    });
    assert!(
        native.status.success() && native_mode == "native",
        "the native run of the {suites} suites failed (mode {native_mode:?}):\n{}",
        text(&native)
    );
    let dot_invocation = invocation.clone().arg("--dot");
    let dot = run_under_dgad(&dot_invocation, None, &[("DGAD_MODE", "dot")]);
    let (dot_mode, dot_cases) = parse_driver(&dot.stdout_text()).unwrap_or_else(|e| {
        panic!(
            "the {suites} suites under DGAD_MODE=dot failed: {e}\n{}",
            text(&dot)
        )
    });
    assert!(
        dot.status.success() && dot_mode == "dot",
        "the {suites} suites under DGAD_MODE=dot failed (mode {dot_mode:?}):\n{}",
        text(&dot)
    );
    assert_eq!(
        dot_cases.len(),
        native_cases.len(),
        "forward mode ran {} cases, natively {}",
        dot_cases.len(),
        native_cases.len()
    );
    let mut failures = String::new();
    for (native_case, dot_case) in native_cases.iter().zip(&dot_cases) {
        let problems = forward_case_problems(native_case, dot_case);
        if !problems.is_empty() {
            let _ = writeln!(failures, "{}:", native_case.name);
            for p in problems.iter().take(6) {
                let _ = writeln!(failures, "    {p}");
            }
            if problems.len() > 6 {
                let _ = writeln!(failures, "    ... {} more", problems.len() - 6);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "wrong values or derivatives in forward mode:\n{failures}run: cd {} && DGAD_MODE=dot \
         LD_PRELOAD={} {}\n--- stderr ---\n{}",
        ad_dir().display(),
        dgad_lib().display(),
        dot_invocation.display(),
        last_lines(&String::from_utf8_lossy(&dot.stderr), 20)
    );
}

/// The four operations, powers, abs, min/max, the math module, loops,
/// recursion, lists, sum, functools.reduce.
#[test]
fn python_ad_scalar() {
    check_suites("scalar", "scalar", &[]);
}

/// numpy float64 and float32 (elementwise, functions, reductions, BLAS,
/// linalg, numpy's SIMD kernels) and the package's API, with dgad's default
/// CPU model (AVX2: numpy and OpenBLAS take their AVX2 paths).
#[test]
fn python_ad_numpy() {
    numpy_available();
    check_suites("default", "numpy64,numpy32,api", &[]);
}

/// The scalar suite in forward mode: each case's Jacobian from dot values.
#[test]
fn python_ad_scalar_dot_mode() {
    check_suites_dot_mode("scalar");
}

/// The numpy float64 and float32 suites in forward mode, with dgad's
/// default CPU model. (The API suite's checks are record mode's; the API in
/// forward mode is `dot_checks.py`'s.)
#[test]
fn python_ad_numpy_dot_mode() {
    numpy_available();
    check_suites_dot_mode("numpy64,numpy32");
}

/// The numpy suites with the CPU reported as it is (DGAD_CPUID=native): on
/// a machine with AVX-512, numpy's and OpenBLAS's AVX-512 kernels.
#[test]
#[cfg_attr(
    not(host_avx512),
    ignore = "this CPU has no AVX-512: numpy's AVX-512 kernels cannot run here"
)]
fn python_ad_numpy_avx512() {
    numpy_available();
    check_suites("avx512", "numpy64,numpy32", &[("DGAD_CPUID", "native")]);
}

/// Issue 16: a float equal to -1.0 converted by C code with
/// `PyFloat_AsDouble` (`math.sin`, `math.exp`) passes its error check
/// `x == -1.0`, after which the compiled code goes on with the constant
/// -1.0 and the derivative is lost where no instruction sees it: dgad must
/// say so on stderr. At -1.5 the derivatives are right and nothing is
/// reported (the report is scoped to equal values).
#[test]
fn regression_issue16_python_float_equal_to_minus_one_is_reported() {
    let script = "import math, sys, dgad\n\
                  x = dgad.input(float(sys.argv[1]))\n\
                  dgad.output(math.sin(x))\n\
                  dgad.output(math.exp(x))\n";
    let report = "record: an active value equals the constant it is compared with";
    for (x, reported) in [(-1.0f64, true), (-1.5, false)] {
        let scratch = ScratchDir::new(&format!("python-equal-constant{x}"));
        let dir = scratch.path().join("run");
        let invocation = python_invocation().args(["-c", script, &x.to_string()]);
        let recorded = run_recording(&invocation, &dir, &[]);
        assert!(recorded.status.success(), "{}", text(&recorded));
        let stderr = String::from_utf8_lossy(&recorded.stderr);
        assert_eq!(stderr.contains(report), reported, "x = {x}:\n{stderr}");
        if !reported {
            for (bar, want) in [("1.0\n0.0\n", x.cos()), ("0.0\n1.0\n", x.exp())] {
                fs::write(dir.join("dg-output-bars"), bar).unwrap();
                let got = evaluate(&dir, &[], "dg-input-bars").unwrap();
                assert!(
                    close(got[0][0], want, 1e-12),
                    "x = {x}: {got:?}, want {want}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// dgad.grad and the package without its client library
// ---------------------------------------------------------------------------

/// Asserts that a checks script (`ok ...` / `WRONG ...` lines, then `END
/// <name>`) completed with every check right.
fn assert_checks_pass(name: &str, how: &str, invocation: &Invocation, outcome: &Outcome) {
    let stdout = outcome.stdout_text();
    let wrong: Vec<&str> = stdout.lines().filter(|l| l.starts_with("WRONG")).collect();
    assert!(
        outcome.status.success()
            && stdout.lines().last() == Some(&format!("END {name}"))
            && wrong.is_empty(),
        "`{}` ({how}) failed{}:\n{}",
        invocation.display(),
        if wrong.is_empty() {
            String::new()
        } else {
            format!(", {} wrong:\n{}", wrong.len(), wrong.join("\n"))
        },
        text(outcome)
    );
}

/// dgad.grad, value_and_grad and jacobian from a native script (each runs a
/// recording child), and their errors.
#[test]
fn python_ad_grad() {
    let invocation = python_invocation()
        .current_dir(ad_dir())
        .arg("grad_checks.py")
        .arg(dgad_lib())
        .arg(dg_eval());
    let outcome = run_native(&invocation, None);
    assert_checks_pass("grad_checks", "natively", &invocation, &outcome);
}

/// Forward mode inside the process (`DGAD_MODE=dot`): `dot_checks.py` sets
/// and reads dot values of floats, numpy scalars and arrays of float64,
/// float32 and longdouble (strided, Fortran-ordered), array.array and
/// lists, and checks the dot values of pure-Python, math, numpy elementwise
/// and linear-algebra results against the analytic derivatives along the
/// seeded directions. Natively the same script checks that every dot value
/// reads 0.0 and that values are left alone.
#[test]
fn python_ad_dot_mode() {
    numpy_available();
    let invocation = python_invocation()
        .current_dir(ad_dir())
        .arg("dot_checks.py");
    let native = run_native(&invocation, None);
    assert_checks_pass("dot_checks", "natively", &invocation, &native);
    assert!(
        native.stdout_text().starts_with("mode native\n"),
        "{}",
        text(&native)
    );
    let dot = run_under_dgad(&invocation, None, &[("DGAD_MODE", "dot")]);
    assert_checks_pass("dot_checks", "under DGAD_MODE=dot", &invocation, &dot);
    assert!(
        dot.stdout_text().starts_with("mode dot\n"),
        "under DGAD_MODE=dot, dgad.mode() must be \"dot\":\n{}",
        text(&dot)
    );
}

/// dgad.jvp in forward mode (a child under `DGAD_MODE=dot`) and through the
/// tape (a recording and `dg-eval --forward`): pure Python and math, numpy
/// float64 elementwise functions and linear algebra, float32 and longdouble
/// arrays, each product against the analytic J·v and the two modes against
/// each other; the default mode, a direction of the wrong length.
#[test]
fn python_ad_jvp() {
    numpy_available();
    let invocation = python_invocation()
        .current_dir(ad_dir())
        .arg("jvp_checks.py")
        .arg(dgad_lib())
        .arg(dg_eval());
    let outcome = run_native(&invocation, None);
    assert_checks_pass("jvp_checks", "natively", &invocation, &outcome);
}

/// Without the client library the package is a no-op natively, and refuses
/// to load under dgad (where the marks would silently be lost); derivgrind's
/// names behave the same natively and under dgad (null mode).
#[test]
fn python_ad_package() {
    let script = "import dgad, derivgrind as dg\n\
                  x = dgad.input(2.0)\n\
                  dgad.input_array([1.0])\n\
                  print(x * x, dgad.output(x), dgad.index(x), dgad.mode(), dgad.client_library())\n\
                  print(dg.inputf(3.0), dg.get_dotvalue(2.0), dg.set_dotvalue(2.0, 1.0), dg.outputf(x))\n";
    let without = python_invocation()
        .env("DGAD_PY_CLIENT", "/nonexistent/_client.so")
        .args(["-c", script]);
    let native = run_native(&without, None);
    assert_eq!(
        native.stdout_text(),
        "4.0 0 0 native None\n3.0 0.0 2.0 None\n",
        "natively without the client library:\n{}",
        text(&native)
    );
    let under = run_under_dgad(&without, None, &[]);
    let stderr = String::from_utf8_lossy(&under.stderr);
    assert!(
        !under.status.success()
            && stderr.contains("the client-request library could not be loaded"),
        "under dgad without the client library, importing dgad must fail:\n{}",
        text(&under)
    );

    let with = python_invocation().args(["-c", script]);
    let native = run_native(&with, None);
    let null = run_under_dgad(&with, None, &[]);
    assert!(
        native.status.success() && native.stdout_text().starts_with("4.0 0 0 native /"),
        "natively with the client library:\n{}",
        text(&native)
    );
    assert_eq!(
        native.stdout_text(),
        null.stdout_text(),
        "null mode must behave as natively:\n{}",
        text(&null)
    );
}

// ---------------------------------------------------------------------------
// The Burgers benchmark: C++ and Python agree
// ---------------------------------------------------------------------------

/// Records one Burgers run; returns (printed value, gradient, forward
/// derivative along all-ones).
fn record_burgers(label: &str, invocation: &Invocation, inputs: usize) -> (f64, Vec<f64>, f64) {
    let native = run_native(invocation, None);
    assert!(
        native.status.success(),
        "{label} natively:\n{}",
        text(&native)
    );
    let scratch = ScratchDir::new(&format!("python-ad-burgers-{label}"));
    let dir = scratch.path().join("record");
    let recorded = run_recording(invocation, &dir, &[]);
    assert!(
        recorded.status.success() && recorded.stdout == native.stdout,
        "{label}: the recording does not print what the native run prints:\n--- native ---\n{}\n\
         --- recorded ---\n{}",
        text(&native),
        text(&recorded)
    );
    let value: f64 = native
        .stdout_text()
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{label} printed {:?}: {e}", native.stdout_text()));
    fs::write(dir.join("dg-output-bars"), "1.0\n").expect("seed file");
    let gradient: Vec<f64> = evaluate(&dir, &[], "dg-input-bars")
        .unwrap_or_else(|e| panic!("{label}: {e}"))
        .into_iter()
        .map(|row| row[0])
        .collect();
    assert_eq!(
        gradient.len(),
        inputs,
        "{label}: one derivative per initial value"
    );
    fs::write(dir.join("dg-input-dots"), "1.0\n".repeat(inputs)).expect("seed file");
    let forward = evaluate(&dir, &["--forward"], "dg-output-dots")
        .unwrap_or_else(|e| panic!("{label}: {e}"))[0][0];
    (value, gradient, forward)
}

#[test]
fn python_ad_burgers() {
    const N: usize = 6;
    const STEPS: &str = "4";
    let n = N.to_string();
    let source = workspace_root().join("testsuite/benchmarks/burgers.cpp");
    let binary = build_program_at(
        &source,
        Compiler::Gcc,
        OptLevel::O3,
        &["-I".into(), include_dir().into()],
        &[],
    );
    let cxx = Invocation::new(&binary).args([n.as_str(), STEPS]);
    let py = python_invocation()
        .arg(workspace_root().join("testsuite/benchmarks/burgers.py"))
        .args([n.as_str(), STEPS]);
    let inputs = 2 * N * N;
    let (cxx_value, cxx_gradient, cxx_forward) = record_burgers("cxx", &cxx, inputs);
    let (py_value, py_gradient, py_forward) = record_burgers("python", &py, inputs);
    assert!(
        close(py_value, cxx_value, 1e-14),
        "values differ: C++ {cxx_value:?}, Python {py_value:?}"
    );
    let scale = cxx_gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
    assert!(scale > 0.0, "the C++ gradient is zero");
    let mut differences = String::new();
    for (i, (c, p)) in cxx_gradient.iter().zip(&py_gradient).enumerate() {
        if (c - p).abs() > 1e-12 * scale {
            let _ = writeln!(differences, "  d norm / d x{i}: C++ {c:?}, Python {p:?}");
        }
    }
    assert!(differences.is_empty(), "gradients differ:\n{differences}");
    let sum: f64 = cxx_gradient.iter().sum();
    for (label, forward) in [("C++", cxx_forward), ("Python", py_forward)] {
        assert!(
            close(forward, sum, 1e-12),
            "{label}: the forward sweep along all-ones gives {forward:?}, the gradient's sum is {sum:?}"
        );
    }
}

/// The value `<program>: dot <value>` on a run's stderr.
fn reported_dot(label: &str, outcome: &Outcome) -> f64 {
    let stderr = String::from_utf8_lossy(&outcome.stderr);
    let value = stderr
        .lines()
        .find_map(|line| line.strip_prefix("burgers: dot "))
        .unwrap_or_else(|| panic!("{label}: no `burgers: dot` line:\n{}", text(outcome)));
    value
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{label}: `burgers: dot {value}`: {e}"))
}

/// The Burgers benchmark in forward mode: C++ and Python, every initial
/// value seeded with dot value 1 (the programs do it under `DGAD_MODE=dot`),
/// print what they print natively, and the norm's dot value equals the C++
/// recording's forward sweep along all-ones.
#[test]
fn python_ad_burgers_dot_mode() {
    const N: usize = 6;
    const STEPS: &str = "4";
    let n = N.to_string();
    let binary = build_program_at(
        &workspace_root().join("testsuite/benchmarks/burgers.cpp"),
        Compiler::Gcc,
        OptLevel::O3,
        &["-I".into(), include_dir().into()],
        &[],
    );
    let cxx = Invocation::new(&binary).args([n.as_str(), STEPS]);
    let py = python_invocation()
        .arg(workspace_root().join("testsuite/benchmarks/burgers.py"))
        .args([n.as_str(), STEPS]);
    let (_, _, tape_forward) = record_burgers("cxx", &cxx, 2 * N * N);
    for (label, invocation) in [("C++", &cxx), ("Python", &py)] {
        let native = run_native(invocation, None);
        let dot = run_under_dgad(invocation, None, &[("DGAD_MODE", "dot")]);
        assert!(
            dot.status.success() && dot.stdout == native.stdout,
            "{label} under DGAD_MODE=dot does not print what the native run prints:\n\
             --- native ---\n{}\n--- dot mode ---\n{}",
            text(&native),
            text(&dot)
        );
        let value = reported_dot(label, &dot);
        assert!(
            close(value, tape_forward, 1e-12),
            "{label}: the norm's dot value along all-ones is {value:?}, the tape's forward \
             sweep gives {tape_forward:?}"
        );
    }
}
