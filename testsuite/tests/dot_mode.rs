//! Forward mode in the run (`DGAD_MODE=dot`, issue 17): the tangents of
//! kernels covering every instruction family the rules handle, against
//! their analytic derivatives and against `dg-eval --forward` on the same
//! program's tape; stdout byte-identical to the native run.

use std::collections::BTreeMap;
use testsuite::derivatives::eval_values;
use testsuite::parse_hex_float;
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

/// With a record directory, the program's input and output marks work in
/// dot mode as in record mode: `dg-input-dots` seeds the marked inputs,
/// and `dg-output-dots` gets the marked outputs' tangents — the file
/// `dg-eval --forward` writes from a tape, without one. Floats' tangents
/// are floats (single precision), as in Derivgrind's forward mode.
#[test]
fn marks_read_input_dots_and_write_output_dots() {
    let prog = build_record_program("dot_kernels.c", &["-lm"], OptLevel::O3);
    let inv = Invocation::new(&prog).arg(X.to_string());
    let scratch = ScratchDir::new("dot-marks");
    let dir = scratch.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("dg-input-dots"), "2\n").unwrap();
    let out = run_under_dgad(
        &inv,
        None,
        &[("DGAD_MODE", "dot"), ("DGAD_RECORD", dir.to_str().unwrap())],
    );
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(dir.join("dg-output-dots")).expect("dg-output-dots");
    let got: Vec<f64> = text.lines().map(|l| l.parse().unwrap()).collect();
    let want = expected(X);
    assert_eq!(got.len(), want.len(), "one line per output mark:\n{text}");
    // The seed is 2 here, and DG_SET_DOTVALUE in the program sets 1 after
    // the mark: the program's own request wins, as it comes later.
    for ((name, d, tol), g) in want.iter().zip(&got) {
        assert!(
            close(*g, *d, *tol),
            "{name}: dg-output-dots {g:e}, analytic {d:e}"
        );
    }
}

/// A program without dot requests of its own (`marks_inputs.c`: the
/// product y of x_i = 1 + i/3, i < 3, and 0.5, marked with `DG_INPUTF` and
/// `dgad_input`), seeded from the file alone: dot y = Σ s_i·y/x_i, the same
/// as `dg-eval --forward` on its tape.
#[test]
fn seeds_from_input_dots_alone() {
    let prog = build_record_program("marks_inputs.c", &["-lm"], OptLevel::O3);
    let inv = Invocation::new(&prog).arg("3");
    let x = [1.0, 4.0 / 3.0, 5.0 / 3.0, 0.5];
    let seeds = [3.0, -1.0, 0.5, 2.0];
    let y: f64 = x.iter().product();
    let want: f64 = x.iter().zip(seeds).map(|(xi, s)| s * y / xi).sum();
    let text: String = seeds.iter().map(|s| format!("{s}\n")).collect();
    let scratch = ScratchDir::new("dot-seeds");
    let dot_dir = scratch.path().join("dot");
    std::fs::create_dir_all(&dot_dir).unwrap();
    std::fs::write(dot_dir.join("dg-input-dots"), &text).unwrap();
    let native = run_native(&inv, None);
    let out = run_under_dgad(
        &inv,
        None,
        &[
            ("DGAD_MODE", "dot"),
            ("DGAD_RECORD", dot_dir.to_str().unwrap()),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, native.stdout);
    let got: f64 = std::fs::read_to_string(dot_dir.join("dg-output-dots"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(close(got, want, 1e-14), "dot y = {got}, analytic {want}");
    let rec_dir = scratch.path().join("record");
    let rec = testsuite::recording::record(&inv, &rec_dir, &[]);
    assert!(rec.status.success(), "{rec:?}");
    let swept = eval_values(&rec_dir, "dg-input-dots", &text, "dg-output-dots", true);
    assert!(
        close(got, swept[0], 1e-14),
        "dot y = {got}, dg-eval --forward {}",
        swept[0]
    );
}

/// Inputs marked without their value, as Derivgrind's Fortran interface
/// marks them (`untyped_marks.c`: a float beside another float, a double
/// whose low word is zero): dot mode cannot tell their format, so their
/// seeds from `dg-input-dots` are not set, and it says so; the tangents
/// are 0, every run (they were set in a format read off the stack bytes
/// after the float, or as a float in the double's low word). An output
/// marked so is written as 0, said too. Record mode needs no type: its
/// derivatives are the analytic ones.
#[test]
fn untyped_input_marks_are_reported_in_dot_mode() {
    let prog = build_record_program("untyped_marks.c", &["-lm"], OptLevel::O0);
    let inv = Invocation::new(&prog).arg("1.5");
    let scratch = ScratchDir::new("dot-untyped");
    // One dot-mode run of `inv` seeded with 1 and 1 in directory `name`:
    // stdout as natively, the report on stderr; dg-output-dots' text.
    let reported_run = |inv: &Invocation, name: &str| -> String {
        let dir = scratch.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("dg-input-dots"), "1\n1\n").unwrap();
        let out = run_under_dgad(
            inv,
            None,
            &[("DGAD_MODE", "dot"), ("DGAD_RECORD", dir.to_str().unwrap())],
        );
        assert!(out.status.success(), "{name}: {out:?}");
        assert_eq!(out.stdout, run_native(inv, None).stdout, "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("a variable marked without its value"),
            "{name}: not reported: {stderr}"
        );
        std::fs::read_to_string(dir.join("dg-output-dots")).unwrap()
    };
    for run in 0..3 {
        let text = reported_run(&inv, &format!("dot{run}"));
        let got: Vec<f64> = text.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(got, [0.0, 0.0], "run {run}: {text}");
    }
    // Typed inputs, an output without its value: written as 0, said.
    let out_inv = Invocation::new(&prog).arg("1.5").arg("out");
    let text = reported_run(&out_inv, "dot-out");
    assert_eq!(text.trim(), "0", "{text}");
    let rec_dir = scratch.path().join("record");
    let rec = testsuite::recording::record(&inv, &rec_dir, &[]);
    assert!(rec.status.success(), "{rec:?}");
    let swept = eval_values(&rec_dir, "dg-input-dots", "1\n1\n", "dg-output-dots", true);
    assert!(
        close(swept[0], 3.0, 1e-7) && close(swept[1], 3.0, 1e-15),
        "{swept:?}"
    );
}

/// Bad seed files are refused before the program runs, with the reason.
#[test]
fn bad_input_dots_are_refused() {
    let prog = build_record_program("dot_kernels.c", &["-lm"], OptLevel::O3);
    let inv = Invocation::new(&prog).arg(X.to_string());
    for (contents, why) in [
        (None, "cannot read dg-input-dots"),
        (Some("1 2\n"), "expected one value"),
        (Some("one\n"), "is not a floating-point value"),
    ] {
        let scratch = ScratchDir::new("dot-bad-seeds");
        let dir = scratch.path().join("run");
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(c) = contents {
            std::fs::write(dir.join("dg-input-dots"), c).unwrap();
        }
        let out = run_under_dgad(
            &inv,
            None,
            &[("DGAD_MODE", "dot"), ("DGAD_RECORD", dir.to_str().unwrap())],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{contents:?}: {out:?}");
        assert!(err.contains(why), "{contents:?}: stderr {err}");
        assert!(out.stdout.is_empty(), "the program must not have run");
        assert!(!dir.join("dg-output-dots").exists());
    }
}

/// A parent that marks nothing (`timeout`, a shell) leaves its child's
/// `dg-output-dots` alone, whichever ends last.
#[test]
fn a_parent_that_marks_nothing_keeps_its_childs_results() {
    let prog = build_record_program("marks_inputs.c", &["-lm"], OptLevel::O3);
    let scratch = ScratchDir::new("dot-parent");
    let dir = scratch.path().join("dot");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("dg-input-dots"), "1\n0\n0\n0\n").unwrap();
    let inv = Invocation::new("timeout").arg("60").arg(&prog).arg("3");
    let out = run_under_dgad(
        &inv,
        None,
        &[("DGAD_MODE", "dot"), ("DGAD_RECORD", dir.to_str().unwrap())],
    );
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(dir.join("dg-output-dots")).unwrap();
    // y = x0·x1·x2·x3 with x0 = 1: dy/dx0 = x1·x2·x3 = (4/3)(5/3)(1/2).
    let got: f64 = text.trim().parse().unwrap();
    assert!(close(got, 4.0 / 3.0 * 5.0 / 3.0 * 0.5, 1e-14), "{text:?}");
}

/// The rounding trick under every rounding mode: the sum with the shifter
/// is named by the value the instruction computes, rounded as the
/// instruction rounds (MXCSR here; EVEX `{rz-sae}` in numpy's AVX-512
/// `exp`), so its subtraction is recognised: dn = 0, dr = 1 at every point.
#[test]
fn rounding_trick_under_every_rounding_mode() {
    for opt in [OptLevel::O0, OptLevel::O3] {
        let prog = build_record_program("rounding_modes.c", &["-lm"], opt);
        let out = run_under_dgad(&Invocation::new(&prog), None, &[("DGAD_MODE", "dot")]);
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 64, "{text}");
        for l in lines {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(&w[1..], ["0", "1"], "{opt:?}: mode {}: {l}", w[0]);
        }
    }
}

/// The "… blocks with the tangent cache" count of a run's statistics line.
fn tangent_cache_blocks(out: &Outcome) -> u64 {
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .split(" blocks with the tangent cache")
        .next()
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no tangent-cache count in the statistics: {stderr}"))
}

/// Dot mode's tangent cache (decision 46) gives every tangent bit for bit
/// as the shadow register file alone does (`DGAD_TANGENT_CACHE=0`), on
/// kernels made for its edges (`tangent_cache.c`: operand kinds, floats,
/// ±0 tangents against infinities, one passive operand and rounding
/// shifters, registers beyond the cached ones, square roots, minima and
/// maxima, a fault inside a block, registers held as temporaries seen by
/// a fault's handler (decision 54: what `DGAD_TANGENT_CACHE=1` does on
/// CPUs without AVX-512); signals under a timer are
/// `signal_delivery`'s); the smooth ones also against
/// their analytic derivatives; stdout as natively. On a CPU with AVX-512
/// the cache must have been used, elsewhere it cannot be.
#[test]
fn tangent_cache_gives_the_shadow_files_tangents() {
    let x = 1.25f64;
    for opt in [OptLevel::O0, OptLevel::O3] {
        let prog = build_record_program("tangent_cache.c", &["-lm"], opt);
        let inv = Invocation::new(&prog).arg(x.to_string());
        let native = run_native(&inv, None);
        assert!(native.status.success(), "native: {native:?}");
        let run = |cache: &str| {
            let out = run_under_dgad(
                &inv,
                None,
                &[
                    ("DGAD_MODE", "dot"),
                    ("DGAD_TANGENT_CACHE", cache),
                    ("DGAD_STATS", "1"),
                ],
            );
            assert!(out.status.success(), "DGAD_TANGENT_CACHE={cache}: {out:?}");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&native.stdout),
                "{opt:?}, DGAD_TANGENT_CACHE={cache}: stdout differs from the native run"
            );
            let lines: Vec<String> = String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.starts_with("dot "))
                .map(str::to_string)
                .collect();
            (lines, tangent_cache_blocks(&out))
        };
        let (with, used) = run("1");
        let (without, unused) = run("0");
        assert_eq!(unused, 0, "DGAD_TANGENT_CACHE=0 translated with the cache");
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            assert!(used > 0, "{opt:?}: no block used the tangent cache");
        } else {
            assert_eq!(used, 0, "the cache was used without AVX-512");
        }
        assert_eq!(with.len(), 9, "{opt:?}: one tangent per kernel: {with:#?}");
        // Every bit the same.
        assert_eq!(
            with, without,
            "{opt:?}: tangents differ with and without the cache"
        );
        let tangent = |name: &str| -> f64 {
            let line = with
                .iter()
                .find(|l| l.split_whitespace().nth(1) == Some(name))
                .unwrap_or_else(|| panic!("no tangent for {name}"));
            parse_hex_float(line.split_whitespace().nth(2).unwrap())
        };
        // d/dx of ((x² − 3x)/(x + 1))·x + x/4, of x⁴'s … (the kernels' own
        // formulas, differentiated).
        let scalar = {
            let (n, d) = (x * x - 3.0 * x, x + 1.0);
            let c = n / d;
            let dc = ((2.0 * x - 3.0) * d - n) / (d * d);
            dc * x + c + 0.25
        };
        let high = 4.0 * x;
        // The shifter pair rounds: its tangent is 0.
        let lone = (7.0 - x) - (x + 3.0) + 1.0;
        // At x = 1.25: min(x, 2) = x, max(x², 3x) = 3x, min(x, x²) = x.
        let roots = x / (x * x + 1.0).sqrt() + 1.0 + 3.0 + 1.0 / x.sqrt() + 1.0;
        let checks = [
            ("roots_and_bounds", roots),
            ("scalar_chain", scalar),
            ("high_registers", high),
            ("lone_passive", lone),
            // (x² + x)·3x, its registers held across a fault (decision 54;
            // stdout says whether the handler saw them as loaded).
            ("held_registers", 9.0 * x * x + 6.0 * x),
        ];
        for (name, want) in checks {
            let got = tangent(name);
            assert!(
                close(got, want, 1e-13),
                "{opt:?}: {name}: dot {got:e}, analytic {want:e}"
            );
        }
        let c = 3.0 * x;
        let (a, b) = (x * x + 2.0 * x, (x * x + 2.0 * x) * x);
        let (da, db) = (2.0 * x + 2.0, 3.0 * x * x + 4.0 * x);
        let fault = (da + db) * c + (a + b) * 3.0 + (da * c - a * 3.0) / (c * c);
        let got = tangent("fault_in_block");
        assert!(
            close(got, fault, 1e-13),
            "{opt:?}: fault_in_block: dot {got:e}, analytic {fault:e}"
        );
    }
}
