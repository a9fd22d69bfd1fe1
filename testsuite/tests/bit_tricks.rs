//! Derivgrind's trick tests (`derivgrind/trick_tests`), redone for dgad:
//! bit tricks on a marked value (`programs/cxx/bit_tricks.cpp`), each run
//! in dot mode and in record mode (through `dgad grad`), the value and the
//! derivative checked against the analytic ones.
//!
//! Some tricks are beyond dgad, as several are beyond Derivgrind: they are
//! listed in [`KNOWN`] with the reason and whether dgad says so on stderr.
//! A listed case must still fail as listed (so the list stays true), and
//! every other case must give the analytic derivative.

use std::ffi::OsString;
use std::process::Command;
use testsuite::{
    build_program_at, dgad_launcher, dgad_lib, programs_dir, workspace_root, Compiler, OptLevel,
};

/// Cases and their analytic derivatives.
const CASES: &[(&str, f64)] = &[
    ("exponent_add_double", 32.0),
    ("exponent_add_float", 8.0),
    ("exponent_add_double_register", 32.0),
    ("exponent_add_float_register", 8.0),
    ("frexp_mask_double", 1.0 / 64.0),
    ("frexp_mask_float", 1.0 / 64.0),
    ("rounding_double", 0.0),
    ("rounding_float", 0.0),
    ("zlib_round_trip", 1.0),
    ("two_mappings", 1.0),
    ("float128_double", 6.0),
    ("float128_float", 6.0),
    ("float16_double", 3.0),
    ("gmp_float", 3.0),
];

/// (case, mode, reported on stderr, reason): the known wrong derivatives
/// (all 0), `docs/limitations.md`.
const KNOWN: &[(&str, &str, bool, &str)] = &[
    (
        "exponent_add_double",
        "both",
        false,
        "the integer add reads the double's bits straight from memory (`add rax, [rsp+n]`): \
         only register operands of integer adds are checked (checking memory ones cost a \
         fifth of CPython's speed in record mode, decision 36)",
    ),
    (
        "exponent_add_float",
        "both",
        false,
        "the same for a float's bits",
    ),
    (
        "frexp_mask_double",
        "both",
        true,
        "masking a double's exponent bits off in a general register gives a constant: its \
         significand alone is no value (the `or` of a new exponent cannot be followed), \
         reported when the mask keeps the sign (printf masks the significand alone, silently)",
    ),
    (
        "zlib_round_trip",
        "both",
        true,
        "compression works on bytes and hashes them: the bytes of an active value in \
         integer work become a constant, reported (integer arithmetic, bitwise logic)",
    ),
    (
        "two_mappings",
        "both",
        true,
        "shadows belong to virtual addresses: a value read through a second mapping of its \
         page has none (writable shared memory is reported)",
    ),
    (
        "float128_double",
        "both",
        true,
        "__float128 arithmetic runs in software, on the value's bits in general registers: \
         dgad does not differentiate it, and says so where an active double enters it \
         (libgcc's __extenddftf2, found in the program's symbol table)",
    ),
    (
        "float128_float",
        "both",
        true,
        "the same for a float (__extendsftf2)",
    ),
    (
        "float16_double",
        "both",
        true,
        "a double becomes a _Float16 in software (libgcc's __truncdfhf2, on the bits in \
         general registers; F16C converts floats only): not differentiated, reported there",
    ),
    (
        "gmp_float",
        "both",
        true,
        "GMP turns the value into limbs with integer instructions: not differentiated, \
         reported at __gmpf_set_d's entry (a probe: the function still runs translated)",
    ),
];

fn known(case: &str, mode: &str) -> Option<(bool, &'static str)> {
    KNOWN
        .iter()
        .find(|k| k.0 == case && (k.1 == mode || k.1 == "both"))
        .map(|k| (k.2, k.3))
}

fn close(a: f64, b: f64) -> bool {
    if b == 0.0 {
        a == 0.0
    } else {
        ((a - b) / b).abs() <= 1e-6
    }
}

/// "CASE value V derivative D expected E" → (V, D).
fn parse(line: &str) -> (f64, f64) {
    let w: Vec<&str> = line.split_whitespace().collect();
    assert!(w.len() == 7 && w[1] == "value", "unexpected line {line:?}");
    (w[2].parse().unwrap(), w[4].parse().unwrap())
}

#[test]
fn bit_tricks_in_dot_and_record_mode() {
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    let prog = build_program_at(
        &programs_dir().join("cxx/bit_tricks.cpp"),
        Compiler::Gcc,
        OptLevel::O3,
        &[include],
        &["-lz".into(), "-lgmp".into()],
    );
    let mut problems = Vec::new();
    for &(case, derivative) in CASES {
        let native = Command::new(&prog).arg(case).output().unwrap();
        assert!(native.status.success(), "{case} natively: {native:?}");
        let (value, _) = parse(String::from_utf8_lossy(&native.stdout).trim());
        // Dot mode: the program reads its own tangent.
        let dot = Command::new(&prog)
            .arg(case)
            .env("LD_PRELOAD", dgad_lib())
            .env("DGAD_MODE", "dot")
            .output()
            .unwrap();
        assert!(dot.status.success(), "{case} in dot mode: {dot:?}");
        let (v, d) = parse(String::from_utf8_lossy(&dot.stdout).trim());
        // Record mode: dgad grad sweeps the tape (the program's stdout goes
        // to stderr with --csv).
        let rec = Command::new(dgad_launcher())
            .args(["grad", "--csv", "--"])
            .arg(&prog)
            .arg(case)
            .output()
            .unwrap();
        assert!(rec.status.success(), "{case} in record mode: {rec:?}");
        let csv = String::from_utf8_lossy(&rec.stdout).to_string();
        let r: f64 = csv
            .lines()
            .nth(1)
            .and_then(|l| l.split(',').nth(1))
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("{case}: no gradient in {csv:?}"));
        assert!(
            close(v, value),
            "{case}: dot mode changed the value: {v} vs {value}"
        );
        for (mode, got, stderr) in [("dot", d, &dot.stderr), ("record", r, &rec.stderr)] {
            let reported = String::from_utf8_lossy(stderr).contains("dgad: ");
            match known(case, mode) {
                None if !close(got, derivative) => problems.push(format!(
                    "{case} ({mode}): derivative {got}, analytic {derivative}"
                )),
                None => {}
                Some((_, reason)) if close(got, derivative) => problems.push(format!(
                    "{case} ({mode}) gives the analytic derivative now: take it off the list \
                     ({reason})"
                )),
                Some((report, _)) if report != reported => problems.push(format!(
                    "{case} ({mode}): reported on stderr: {reported}, listed as {report}"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
