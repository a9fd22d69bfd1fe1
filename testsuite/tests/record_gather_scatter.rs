//! Gathers and scatters of active values (`testsuite/programs/record/
//! gather_scatter.c`): every AVX2 and AVX-512 form compilers emit for
//! indexed loops, with masked lanes, colliding scatter indices and a
//! half-filled qword-indexed gather. The program prints its outputs and the
//! Jacobian its scalar re-computation of the instructions' semantics
//! expects; each recording must print what the native run printed, and
//! its tape must give that Jacobian in both directions.

use std::ffi::OsString;
use std::path::Path;
use testsuite::derivatives::dg_eval;
use testsuite::{
    build_program_at, programs_dir, run_native, run_under_dgad, workspace_root, Compiler,
    Invocation, OptLevel, ScratchDir,
};

/// Inputs the program declares (x0 f0 x1 f1 … x15 f15).
const INPUTS: usize = 32;

fn check(compiler: Compiler, opt: OptLevel, avx512: bool) {
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    let exe = build_program_at(
        &programs_dir().join("record/gather_scatter.c"),
        compiler,
        opt,
        &[include],
        &[],
    );
    let mut inv = Invocation::new(&exe);
    if avx512 {
        inv = inv.arg("avx512f");
    }
    let native = run_native(&inv, None);
    native.assert_completed(&inv, "gather_scatter", 0);
    let scratch = ScratchDir::new("gather-scatter");
    let dir = scratch.path().join("run");
    let recorded = run_under_dgad(
        &inv,
        None,
        &[
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", dir.to_str().unwrap()),
        ],
    );
    recorded.assert_completed(&inv, "gather_scatter", 0);
    assert_eq!(
        recorded.stdout_text(),
        native.stdout_text(),
        "recorded run printed otherwise"
    );
    let stderr = String::from_utf8_lossy(&recorded.stderr);
    assert!(!stderr.contains("no derivative rule"), "{stderr}");

    let text = native.stdout_text();
    let outputs = text.lines().filter(|l| l.starts_with('y')).count();
    assert_eq!(outputs, if avx512 { 5 } else { 2 });
    let mut jacobian = vec![vec![0.0f64; INPUTS]; outputs];
    for l in text.lines().filter(|l| l.starts_with("expect ")) {
        let f: Vec<&str> = l.split_whitespace().collect();
        jacobian[f[1].parse::<usize>().unwrap()][f[2].parse::<usize>().unwrap()] =
            f[3].parse().unwrap();
    }
    assert!(
        jacobian.iter().all(|row| row.iter().any(|&d| d != 0.0)),
        "an output without derivatives"
    );

    for (o, row) in jacobian.iter().enumerate() {
        let bars: String = (0..outputs)
            .map(|k| if k == o { "1.0\n" } else { "0.0\n" })
            .collect();
        let got = sweep(&dir, "dg-output-bars", &bars, &[], "dg-input-bars");
        compare(&got, row, &format!("reverse sweep, output {o}"));
    }
    let dots: Vec<f64> = (0..INPUTS).map(|i| (i as f64 + 1.0) / 8.0).collect();
    let text_dots: String = dots.iter().map(|d| format!("{d}\n")).collect();
    let got = sweep(
        &dir,
        "dg-input-dots",
        &text_dots,
        &["--forward"],
        "dg-output-dots",
    );
    let want: Vec<f64> = jacobian
        .iter()
        .map(|row| row.iter().zip(&dots).map(|(j, d)| j * d).sum())
        .collect();
    compare(&got, &want, "forward sweep");
}

/// Writes `input` to `dir/from`, runs dg-eval and reads `dir/to`.
fn sweep(dir: &Path, from: &str, input: &str, args: &[&str], to: &str) -> Vec<f64> {
    std::fs::write(dir.join(from), input).unwrap();
    let out = std::process::Command::new(dg_eval())
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dg-eval: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(dir.join(to))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

fn compare(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{what}: element {i} is {g}, expected {w}\ngot  {got:?}\nwant {want:?}"
        );
    }
}

macro_rules! gather_scatter_tests {
    ($($name:ident => $compiler:ident $opt:ident;)+) => {
        #[allow(non_snake_case)]
        mod avx2 {
            use super::*;
            $(
                #[test]
                #[cfg_attr(not(host_avx2), ignore = "this CPU has no AVX2: the gathers cannot run here")]
                fn $name() {
                    check(Compiler::$compiler, OptLevel::$opt, false);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod avx512 {
            use super::*;
            $(
                #[test]
                #[cfg_attr(
                    not(host_avx512),
                    ignore = "this CPU has no AVX-512: its gathers and scatters cannot run here"
                )]
                fn $name() {
                    check(Compiler::$compiler, OptLevel::$opt, true);
                }
            )+
        }
    };
}

gather_scatter_tests! {
    gcc_O0 => Gcc O0;
    gcc_O3 => Gcc O3;
    clang_O0 => Clang O0;
    clang_O3 => Clang O3;
}
