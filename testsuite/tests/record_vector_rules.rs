//! Derivative rules of vector instructions, each checked by a program in
//! `testsuite/programs/record/` that prints its outputs and the Jacobian
//! its scalar re-computation of the instructions' definitions expects (`y…`
//! and `expect OUTPUT INPUT d` lines); each recording must print what the
//! native run printed, and its tape must give that Jacobian in both
//! directions.
//!
//! - `gather_scatter.c`: every AVX2 and AVX-512 gather and scatter form
//!   compilers emit for indexed loops, with masked lanes, colliding scatter
//!   indices and a half-filled qword-indexed gather;
//! - `avx512_rules.c`: `vgetmant` (every interval), `vgetexp`, `vreduce`,
//!   `vscalef`, the rounding trick inside an FMA with a table-indexing
//!   shifter, merge masking of instructions whose result is a constant,
//!   and integer exponent arithmetic (`vpaddq`/`psubq`/`vpaddd` of k·2^52
//!   or k·2^23: a scaling by 2^±k), narrowing conversions from memory,
//!   masked stores of constants over active memory, `vrange` (every
//!   selection and sign control), sign tricks on float lanes whose mask is
//!   a `{1to8}` dword broadcast (gcc's vectorised `copysignf`), `vprolq`
//!   by 32 and `vpmovqd` on float pairs;
//! - `shuffle_controls.c`: shuffle controls in memory (`vpermilps`,
//!   `vpermilpd`, `pshufb`, `vpshufb`) and a blend whose mask register is
//!   also a data operand, which the replay on shadows must read as the
//!   guest's values;
//! - `bit_moves.c`: `btr`/`btc`/`bts` of the sign bit of doubles and
//!   floats in general registers and memory, `psrlq` by 32 on float pairs;
//! - `half_conversions.c`: F16C conversions of an active float, which
//!   must be reported;
//! - `byte_blend.c`: `pblendvb` taking a float apart: a reported constant.
//! - `significand_masks.c`: bit masks that take a float apart (`x &
//!   0x007fffff`, `| 0x3f800000`, `andnot` of the exponent), scalings
//!   within the binade; on doubles the scale is out of the sweeps' range
//!   and dgad must say so rather than record a wrong derivative.
//! - `magnitude_idioms.c` (issue 16): fabs by integer instructions,
//!   `shl r, 1; shr r, 1`, `add r, r; shr r, 1` (doubles and floats in
//!   general registers), `andn` with the sign mask, and the vector pairs
//!   `psllq`/`psrlq` and `pslld`/`psrld` by 1 (legacy and VEX);
//! - `x87_transcendentals.c`: `fprem`/`fprem1` loops, `fscale`, `fyl2x`,
//!   `fyl2xp1`, `fpatan`, `fsin`, `fcos`, `f2xm1` on active values;
//! - `word_reassembly.c` (issue 16): a long double and a pair of floats
//!   put together from 32-bit words with `shl`/`or` in general registers
//!   keep their indices; `set_high_word.c`: a double's low word under
//!   another high word is reported, not taken for the double;
//! - `masked_moves.c`: EVEX moves under a mask register — stores of
//!   doubles, words and bytes over active memory, merging and zeroing
//!   loads, a merging register move, zmm and ymm — which move the shadows
//!   inline under the same mask; checked in dot mode as well;
//! - `rounding_pairs.c` (issue 16): sums with constants of the shifters'
//!   size keep derivative 1 (`t*1e15 + 5e15`, a Horner polynomial ending
//!   in 9.7e15); only the pair `(x + c) - c` is a rounding, derivative 0,
//!   in doubles and floats, scalar, vectorised and inside an FMA.

use std::ffi::OsString;
use testsuite::derivatives::eval_values;
use testsuite::{
    build_program_at, programs_dir, run_native, run_under_dgad, workspace_root, Compiler,
    Invocation, OptLevel, ScratchDir,
};

/// A recording of `record/NAME.c` with `args` that printed what the
/// native run printed: the native stdout, the recording's stderr and its
/// directory (kept while the scratch directory lives).
struct Recorded {
    native_stdout: String,
    stderr: String,
    dir: std::path::PathBuf,
    _scratch: ScratchDir,
}

/// `record/NAME.c` built with `compiler` at `opt`.
fn build(name: &str, compiler: Compiler, opt: OptLevel) -> std::path::PathBuf {
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    build_program_at(
        &programs_dir().join(format!("record/{name}.c")),
        compiler,
        opt,
        &[include],
        &["-lm".into()],
    )
}

fn record(name: &str, args: &[&str], compiler: Compiler, opt: OptLevel) -> Recorded {
    let exe = build(name, compiler, opt);
    let inv = Invocation::new(&exe).args(args);
    let native = run_native(&inv, None);
    native.assert_completed(&inv, name, 0);
    let scratch = ScratchDir::new(&format!("{name}-{}", args.join("-")));
    let dir = scratch.path().join("run");
    let recorded = run_under_dgad(
        &inv,
        None,
        &[
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", dir.to_str().unwrap()),
        ],
    );
    recorded.assert_completed(&inv, name, 0);
    assert_eq!(
        recorded.stdout_text(),
        native.stdout_text(),
        "recorded run printed otherwise"
    );
    Recorded {
        native_stdout: native.stdout_text(),
        stderr: String::from_utf8_lossy(&recorded.stderr).into_owned(),
        dir,
        _scratch: scratch,
    }
}

/// Records `record/NAME.c` with `args` and checks both sweeps of the tape
/// against the Jacobian it printed.
fn check(name: &str, args: &[&str], compiler: Compiler, opt: OptLevel) {
    let run = record(name, args, compiler, opt);
    let dir = &run.dir;
    assert!(!run.stderr.contains("record:"), "{}", run.stderr);

    let text = &run.native_stdout;
    let outputs = text.lines().filter(|l| l.starts_with('y')).count();
    let expect: Vec<(usize, usize, f64)> = text
        .lines()
        .filter(|l| l.starts_with("expect "))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |k: usize| f[k].parse::<usize>().expect("an index");
            (n(1), n(2), f[3].parse().expect("a derivative"))
        })
        .collect();
    let inputs = expect
        .iter()
        .map(|e| e.1 + 1)
        .max()
        .expect("expected derivatives");
    let mut jacobian = vec![vec![0.0f64; inputs]; outputs];
    for (o, i, d) in expect {
        jacobian[o][i] = d;
    }
    assert!(
        jacobian.iter().all(|row| row.iter().any(|&d| d != 0.0)),
        "an output without derivatives"
    );

    for (o, row) in jacobian.iter().enumerate() {
        let bars: String = (0..outputs)
            .map(|k| if k == o { "1.0\n" } else { "0.0\n" })
            .collect();
        let got = eval_values(dir, "dg-output-bars", &bars, "dg-input-bars", false);
        compare(&got, row, &format!("reverse sweep, output {o}"));
    }
    let dots: Vec<f64> = (0..inputs).map(|i| (i as f64 + 1.0) / 8.0).collect();
    let text_dots: String = dots.iter().map(|d| format!("{d}\n")).collect();
    let got = eval_values(dir, "dg-input-dots", &text_dots, "dg-output-dots", true);
    let want: Vec<f64> = jacobian
        .iter()
        .map(|row| row.iter().zip(&dots).map(|(j, d)| j * d).sum())
        .collect();
    compare(&got, &want, "forward sweep");
}

/// A byte mask that copies two bytes of a double takes the value apart:
/// the masked move leaves it to the runtime, which reports it, instead of
/// copying part of an index. (Dot mode moves tangent bytes as the data's
/// bytes move, by design: see `ad::apply`'s replay.)
#[test]
#[cfg_attr(
    not(host_avx512),
    ignore = "this CPU has no AVX-512: k masks cannot run here"
)]
fn a_byte_mask_that_takes_a_double_apart_is_reported() {
    for opt in [OptLevel::O0, OptLevel::O3] {
        let run = record("masked_moves", &["torn"], Compiler::Gcc, opt);
        assert!(
            run.stderr
                .contains("a byte-granular move took an active value apart"),
            "{}",
            run.stderr
        );
    }
}

/// Runs `record/NAME.c` in dot mode with the inputs' tangents seeded from
/// `dg-input-dots` (as `check`'s forward sweep) and compares the outputs'
/// tangents with the Jacobian the program printed, times the seeds.
fn check_dot(name: &str, compiler: Compiler, opt: OptLevel) {
    let exe = build(name, compiler, opt);
    let inv = Invocation::new(&exe);
    let native = run_native(&inv, None);
    let text = native.stdout_text();
    let expect: Vec<(usize, usize, f64)> = text
        .lines()
        .filter(|l| l.starts_with("expect "))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect();
    let outputs = text.lines().filter(|l| l.starts_with('y')).count();
    let inputs = expect.iter().map(|e| e.1 + 1).max().unwrap();
    let dots: Vec<f64> = (0..inputs).map(|i| (i as f64 + 1.0) / 8.0).collect();
    let mut want = vec![0.0; outputs];
    for (o, i, d) in expect {
        want[o] += d * dots[i];
    }
    let scratch = ScratchDir::new(&format!("{name}-dot"));
    let dir = scratch.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    let seeds: String = dots.iter().map(|d| format!("{d}\n")).collect();
    std::fs::write(dir.join("dg-input-dots"), seeds).unwrap();
    let out = run_under_dgad(
        &inv,
        None,
        &[("DGAD_MODE", "dot"), ("DGAD_RECORD", dir.to_str().unwrap())],
    );
    out.assert_completed(&inv, name, 0);
    assert_eq!(out.stdout_text(), text, "dot mode printed otherwise");
    let got: Vec<f64> = std::fs::read_to_string(dir.join("dg-output-dots"))
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    compare(&got, &want, "dot mode");
}

/// fdlibm's `SET_HIGH_WORD` in a general register (glibc's `__log1p`
/// through `clog`): the double's low word under another exponent is
/// x·2^k, which the rules cannot follow: a constant, and said on stderr.
/// The previous library gave derivative 1 (expected 0.5), silently.
#[test]
fn regression_issue16_set_high_word_is_reported() {
    for opt in [OptLevel::O0, OptLevel::O3] {
        let run = record("set_high_word", &[], Compiler::Gcc, opt);
        assert!(
            run.stderr
                .contains("bitwise logic on active data that is not a sign-bit trick"),
            "no report: {}",
            run.stderr
        );
    }
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

macro_rules! vector_rule_tests {
    ($($name:ident => $compiler:ident $opt:ident;)+) => {
        #[allow(non_snake_case)]
        mod gathers_avx2 {
            use super::*;
            $(
                #[test]
                #[cfg_attr(not(host_avx2), ignore = "this CPU has no AVX2: the gathers cannot run here")]
                fn $name() {
                    check("gather_scatter", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod gathers_scatters_avx512 {
            use super::*;
            $(
                #[test]
                #[cfg_attr(
                    not(host_avx512),
                    ignore = "this CPU has no AVX-512: its gathers and scatters cannot run here"
                )]
                fn $name() {
                    check("gather_scatter", &["avx512f"], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod shuffle_controls {
            use super::*;
            $(
                #[test]
                #[cfg_attr(
                    not(host_avx2),
                    ignore = "this CPU has no AVX2: the program's shuffles cannot run here"
                )]
                fn $name() {
                    check("shuffle_controls", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod bit_moves {
            use super::*;
            $(
                #[test]
                fn $name() {
                    check("bit_moves", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod x87_transcendentals {
            use super::*;
            $(
                #[test]
                fn $name() {
                    check("x87_transcendentals", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod regression_issue16_word_reassembly {
            use super::*;
            $(
                #[test]
                fn $name() {
                    check("word_reassembly", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod regression_issue16_magnitude_idioms {
            use super::*;
            $(
                #[test]
                fn $name() {
                    check("magnitude_idioms", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod significand_masks_float {
            use super::*;
            $(
                #[test]
                fn $name() {
                    check("significand_masks", &["float"], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod masked_moves {
            use super::*;
            $(
                #[test]
                #[cfg_attr(
                    not(host_avx512),
                    ignore = "this CPU has no AVX-512: k masks cannot run here"
                )]
                fn $name() {
                    check("masked_moves", &[], Compiler::$compiler, OptLevel::$opt);
                    check_dot("masked_moves", Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
        #[allow(non_snake_case)]
        mod avx512_math_and_masks {
            use super::*;
            $(
                #[test]
                #[cfg_attr(
                    not(host_avx512),
                    ignore = "this CPU has no AVX-512: vgetmant, vscalef and k masks cannot run here"
                )]
                fn $name() {
                    check("avx512_rules", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
    };
}

vector_rule_tests! {
    gcc_O0 => Gcc O0;
    gcc_O3 => Gcc O3;
    clang_O0 => Clang O0;
    clang_O3 => Clang O3;
}

/// Issue 16, point 1: a sum with a large constant is a sum; only the
/// rounding pair `(x + c) - c` is a staircase. Every compiler and level,
/// `-march=native` for the vectorised loops in AVX-512 or AVX2.
#[allow(non_snake_case)]
mod regression_issue16_rounding_pairs {
    use super::*;
    macro_rules! rounding_pair_tests {
        ($($name:ident => $compiler:ident $opt:ident;)+) => {
            $(
                #[test]
                fn $name() {
                    check("rounding_pairs", &[], Compiler::$compiler, OptLevel::$opt);
                }
            )+
        };
    }
    rounding_pair_tests! {
        gcc_O0 => Gcc O0;
        gcc_O3 => Gcc O3;
        gcc_O3_native => Gcc O3Native;
        clang_O0 => Clang O0;
        clang_O3 => Clang O3;
        clang_O3_native => Clang O3Native;
    }
}

/// The double form of the significand masks: the extraction scales by
/// 2^−1022−e, which the sweeps cannot carry: a reported constant, not the
/// derivative 1 the low four bytes, read as a float, would give.
#[test]
fn significand_masks_on_doubles_are_reported_constants() {
    let run = record(
        "significand_masks",
        &["double"],
        Compiler::Gcc,
        OptLevel::O3,
    );
    let stderr = &run.stderr;
    assert!(
        stderr.contains("record: bitwise logic on active data") && stderr.contains("andpd"),
        "the extraction must be reported: {stderr}"
    );
    let got = eval_values(&run.dir, "dg-output-bars", "1.0\n", "dg-input-bars", false);
    assert_eq!(got, vec![0.0, 0.0], "a reported constant has derivative 0");
}

/// Half-precision conversions of an active float are reported constants.
#[test]
#[cfg_attr(not(host_avx2), ignore = "this CPU has no AVX2 (and so no F16C)")]
fn half_precision_conversions_are_reported() {
    let run = record("half_conversions", &[], Compiler::Gcc, OptLevel::O3);
    assert!(
        run.stderr.contains("record: no derivative rule") && run.stderr.contains("vcvtps2ph"),
        "the conversion must be reported: {}",
        run.stderr
    );
    let got = eval_values(&run.dir, "dg-output-bars", "1.0\n", "dg-input-bars", false);
    assert_eq!(got, vec![0.0], "a reported constant has derivative 0");
}

/// A byte blend that assembles a float from the bytes of two is a
/// reported constant, not a derivative on a third input whose index the
/// blended index bytes happen to spell.
#[test]
fn byte_blends_that_split_a_value_are_reported_constants() {
    let run = record("byte_blend", &[], Compiler::Gcc, OptLevel::O3);
    assert!(
        run.stderr
            .contains("record: a byte-granular move took an active value apart")
            && run.stderr.contains("pblendvb"),
        "the blend must be reported: {}",
        run.stderr
    );
    let got = eval_values(&run.dir, "dg-output-bars", "1.0\n", "dg-input-bars", false);
    assert_eq!(got.len(), 600);
    let nonzero: Vec<usize> = (0..got.len()).filter(|&i| got[i] != 0.0).collect();
    assert!(nonzero.is_empty(), "derivatives on inputs {nonzero:?}");
}
