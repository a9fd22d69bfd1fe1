//! The libm derivative matrix (issue #4): every math function dgad
//! differentiates analytically, in C (`f`, `f##f`, `f##l`), C++ (the
//! `std::` overloads) and Fortran (the intrinsics that call libm), at 20 or
//! more points each, compared with quad-precision values and derivatives.
//! `testsuite/mathfns/README.md` explains the layout, the tolerances and the
//! derivative conventions.
//!
//! The table ([`functions`]) holds, per function, the call in each language,
//! the value and partial derivatives as C expressions, and the points. From
//! it the generator writes
//!
//! - one program per (language, float type) that reads every point from
//!   stdin, marks every argument with `DG_INPUTF`, calls each function at
//!   each of its points, marks every result with `DG_OUTPUTF` and prints one
//!   row per call (`<function> <point> <result>...`);
//! - one reference program (C with `__float128` and libquadmath, built once)
//!   that evaluates the same expressions at the same points, plus central
//!   differences that check the table's derivative formulas.
//!
//! Each test program is built and run once per axis (language × compiler ×
//! optimisation × type), however many tests look at it: natively, recorded
//! (`DGAD_RECORD`) with one reverse and one forward `dg-eval` sweep in vector
//! mode (a column per output slot, a column per argument slot), and recorded
//! with `DGAD_MATHWRAP=0`, and in forward mode (`DGAD_MODE=dot`) once per
//! argument slot with the tangent hooks of the derivative matrix. The tests,
//! one per function and axis and mode, compare their own rows.
//! Known failures are listed in `testsuite/mathfns/expected_failures.rs`
//! with a reason that `docs/limitations.md` must repeat.

use std::collections::HashMap;
use std::f32::consts::{E, FRAC_PI_2, LN_2, PI, TAU};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::derivatives::{
    all_axes, c_dot_hooks, dependency_note, fortran_client_build, fortran_dot_hooks, include_dir,
    indent, run_dg_eval, with_dot_hooks, write_if_changed, Axis, FloatType, Language, DOT_OUT_VAR,
    DOT_SEEDS_VAR,
};
use crate::{
    build_program_at, build_root, dgad_lib, once, run_native, run_under_dgad, Compiler, Invocation,
    OptLevel, Outcome, Slots,
};

#[path = "../mathfns/expected_failures.rs"]
mod expected_failures;

pub use expected_failures::EXPECTED_FAILURES;

// ---------------------------------------------------------------------------
// The table's types
// ---------------------------------------------------------------------------

/// Which float types a point is used with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// Every type: the arguments are exact in `float` and the values in its
    /// range.
    All,
    /// `double` and `long double` only: arguments or results beyond `float`.
    Wide,
}

/// One point: the real arguments, the integer argument (`ldexp`, `scalbn`;
/// 0 for the others) and the types it is used with.
#[derive(Clone, Debug)]
pub struct Point {
    /// The real arguments `a`, `b`, `c`, exact in the types of the range.
    pub args: Vec<f64>,
    /// The integer argument `n`.
    pub n: i32,
    /// The types the point is used with.
    pub range: Range,
}

impl Point {
    /// The call as text, e.g. `atan2(1, -0)`, `ldexp(1.5, 3)`.
    pub fn describe(&self, function: &MathFn) -> String {
        // The shortest form that reads back as the same number of the
        // point's narrowest type, with an exponent if far from 1.
        let short = |v: f64| -> String {
            let plain = v == 0.0 || (1e-4..1e7).contains(&v.abs());
            match (self.range, plain) {
                (Range::All, true) => format!("{}", v as f32),
                (Range::All, false) => format!("{:e}", v as f32),
                (Range::Wide, true) => format!("{v}"),
                (Range::Wide, false) => format!("{v:e}"),
            }
        };
        let mut args: Vec<String> = self.args.iter().map(|&v| short(v)).collect();
        if function.int_arg {
            args.push(self.n.to_string());
        }
        format!("{}({})", function.name, args.join(", "))
    }

    /// Whether the first two arguments are equal (a tie of `fmin`, `fmax`,
    /// `fdim`).
    pub fn is_tie(&self) -> bool {
        self.args.len() >= 2 && self.args[0] == self.args[1]
    }
}

/// The code calling a function in one language: statements that read the
/// arguments `a`, `b`, `c` (the float type; `real` in C and C++, `real(wp)`
/// in Fortran) and `n` (int), and assign the results `r0` and `r1`. In C,
/// `{t}` stands for the type's suffix (`f`, none, `l`).
#[derive(Clone, Debug)]
pub enum Code {
    /// The statements.
    Stmts(String),
    /// The statements, whose result passes through an integer, so that a
    /// zero result is `+0` whatever the sign the C function gives it
    /// (Fortran's `floor` and `ceiling`).
    IntResult(String),
    /// The function does not exist in this language, for the reason given.
    Absent(&'static str),
}

impl Code {
    fn statements(&self) -> Option<&str> {
        match self {
            Code::Stmts(s) | Code::IntResult(s) => Some(s),
            Code::Absent(_) => None,
        }
    }
}

/// One function of the matrix.
pub struct MathFn {
    /// The libm name without suffix: the test name's middle part.
    pub name: &'static str,
    /// What the points exercise, for failure messages.
    pub about: &'static str,
    /// Real arguments (1 to 3), named `a`, `b`, `c`.
    pub args: usize,
    /// Whether an integer argument `n` follows (`ldexp`, `scalbn`).
    pub int_arg: bool,
    /// Results (1 or 2), named `r0`, `r1`.
    pub outputs: usize,
    /// The C call.
    pub c: Code,
    /// The C++ call.
    pub cxx: Code,
    /// The Fortran call.
    pub fortran: Code,
    /// The value of each result: a C expression over `a`, `b`, `c`, `n`,
    /// evaluated in `__float128` with the libm names mapped to libquadmath
    /// (`digamma`, `frexp_mant`, `frexp_exp`, `modf_frac`, `modf_int`,
    /// `PI`, `LN2`, `LN10` are defined too).
    pub value: Vec<String>,
    /// `partials[k][j]`: d result k / d argument j, same language.
    pub partials: Vec<Vec<String>>,
    /// A C condition (same language) true at the points the table's
    /// finite-difference self-check must skip: where the function is not
    /// differentiable (the derivative is the convention's), and for `fmod`
    /// and `remainder` where the quotient exceeds 1e9, so that any step
    /// crosses the jumps.
    pub kink: &'static str,
    /// Why the Fortran test leaves out the points where `a == b`, if it does.
    pub fortran_skips_ties: Option<&'static str>,
    /// The points.
    pub points: Vec<Point>,
}

impl MathFn {
    /// The code for a language, or why there is none.
    pub fn code(&self, language: Language) -> Result<&Code, &'static str> {
        let code = match language {
            Language::C => &self.c,
            Language::Cxx => &self.cxx,
            Language::Fortran => &self.fortran,
        };
        match code {
            Code::Absent(reason) => Err(reason),
            code => Ok(code),
        }
    }

    /// The indices of the points used for a language and type.
    pub fn points_for(&self, language: Language, float: FloatType) -> Vec<usize> {
        self.points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.range == Range::All || float != FloatType::Float)
            .filter(|(_, p)| {
                !(language == Language::Fortran && self.fortran_skips_ties.is_some() && p.is_tie())
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The argument names, `a`, `b`, `c`, as many as the function takes.
    fn arg_names(&self) -> &'static [&'static str] {
        &["a", "b", "c"][..self.args]
    }

    fn call_list(&self) -> String {
        let mut list = self.arg_names().join(", ");
        if self.int_arg {
            list.push_str(", n");
        }
        list
    }

    // The builder the table uses.

    fn arity(mut self, args: usize) -> MathFn {
        self.args = args;
        self.default_calls()
    }

    fn with_int(mut self) -> MathFn {
        self.int_arg = true;
        self.default_calls()
    }

    /// `r0 = name{t}(a, ...)` in C, `r0 = std::name(a, ...)` in C++, and the
    /// value `name(a, ...)`.
    fn default_calls(mut self) -> MathFn {
        let (name, list) = (self.name, self.call_list());
        self.c = Code::Stmts(format!("r0 = {name}{{t}}({list});"));
        self.cxx = Code::Stmts(format!("r0 = std::{name}({list});"));
        self.value = vec![format!("{name}({list})")];
        self
    }

    fn outputs(mut self, outputs: usize) -> MathFn {
        self.outputs = outputs;
        self
    }

    fn c(mut self, code: &str) -> MathFn {
        self.c = Code::Stmts(code.to_owned());
        self
    }

    fn cxx(mut self, code: &str) -> MathFn {
        self.cxx = Code::Stmts(code.to_owned());
        self
    }

    fn no_c(mut self, reason: &'static str) -> MathFn {
        self.c = Code::Absent(reason);
        self.cxx = Code::Absent(reason);
        self
    }

    fn fortran(mut self, code: &str) -> MathFn {
        self.fortran = Code::Stmts(code.to_owned());
        self
    }

    fn fortran_int(mut self, code: &str) -> MathFn {
        self.fortran = Code::IntResult(code.to_owned());
        self
    }

    fn no_fortran(mut self, reason: &'static str) -> MathFn {
        self.fortran = Code::Absent(reason);
        self
    }

    fn fortran_no_ties(mut self, reason: &'static str) -> MathFn {
        self.fortran_skips_ties = Some(reason);
        self
    }

    fn value(mut self, value: &[&str]) -> MathFn {
        self.value = value.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    fn d(mut self, partials: &[&[&str]]) -> MathFn {
        self.partials = partials
            .iter()
            .map(|row| row.iter().map(|s| (*s).to_owned()).collect())
            .collect();
        self
    }

    fn kink(mut self, kink: &'static str) -> MathFn {
        self.kink = kink;
        self
    }

    fn at(mut self, points: Vec<Point>) -> MathFn {
        self.points.extend(points);
        self
    }
}

/// A unary function with default calls; the Fortran call must be set.
fn def(name: &'static str, about: &'static str) -> MathFn {
    MathFn {
        name,
        about,
        args: 1,
        int_arg: false,
        outputs: 1,
        c: Code::Absent(""),
        cxx: Code::Absent(""),
        fortran: Code::Absent(""),
        value: Vec::new(),
        partials: Vec::new(),
        kink: "0",
        fortran_skips_ties: None,
        points: Vec::new(),
    }
    .default_calls()
}

fn all1(points: &[f32]) -> Vec<Point> {
    points
        .iter()
        .map(|&a| Point {
            args: vec![f64::from(a)],
            n: 0,
            range: Range::All,
        })
        .collect()
}

fn wide1(points: &[f64]) -> Vec<Point> {
    points
        .iter()
        .map(|&a| Point {
            args: vec![a],
            n: 0,
            range: Range::Wide,
        })
        .collect()
}

fn all2(points: &[(f32, f32)]) -> Vec<Point> {
    points
        .iter()
        .map(|&(a, b)| Point {
            args: vec![f64::from(a), f64::from(b)],
            n: 0,
            range: Range::All,
        })
        .collect()
}

fn wide2(points: &[(f64, f64)]) -> Vec<Point> {
    points
        .iter()
        .map(|&(a, b)| Point {
            args: vec![a, b],
            n: 0,
            range: Range::Wide,
        })
        .collect()
}

fn all3(points: &[(f32, f32, f32)]) -> Vec<Point> {
    points
        .iter()
        .map(|&(a, b, c)| Point {
            args: vec![f64::from(a), f64::from(b), f64::from(c)],
            n: 0,
            range: Range::All,
        })
        .collect()
}

/// The points of `ldexp` and `scalbn` (the same function).
const SCALE_POINTS: &[(f32, i32)] = &[
    (1.5, 3),
    (1.5, -3),
    (-2.25, 10),
    (0.1, 0),
    (1.0, 100),
    (1.0, -100),
    (3.0, 50),
    (1e-10, 20),
    (7.0, -20),
    (0.5, 127),
    (-1.75, 60),
    (1e30, -90),
    (1e-30, 90),
    (0.0, 5),
    (0.3, -1),
    (100.0, 1),
    (-1.0, -1),
    (1e20, -60),
    (2.5, 24),
    (123.456, -7),
    (-0.0, 3),
];
/// Their points beyond float's range.
const SCALE_WIDE_POINTS: &[(f64, i32)] = &[(1.5, 1000), (1.5, -1000), (1e-300, 1000)];

fn all_n(points: &[(f32, i32)]) -> Vec<Point> {
    points
        .iter()
        .map(|&(a, n)| Point {
            args: vec![f64::from(a)],
            n,
            range: Range::All,
        })
        .collect()
}

fn wide_n(points: &[(f64, i32)]) -> Vec<Point> {
    points
        .iter()
        .map(|&(a, n)| Point {
            args: vec![a],
            n,
            range: Range::Wide,
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------

/// sin, cos, tan, sincos: glibc's double sin/cos take different paths below
/// 0.126, to 0.855, to 2.426, with Cody-Waite reduction to 105414350 and
/// Payne-Hanek above; sinf/cosf and tan have their own thresholds (2^-12,
/// pi/4, 0.0608, 0.787, 25, 120).
const TRIG: &[f32] = &[
    1e-30, 1e-8, 3e-5, 0.01, 0.06, 0.1, 0.125, 0.126, 0.13, 0.5, 0.78, 0.79, 0.855, 0.86, 1.0, 1.5,
    FRAC_PI_2, 2.0, 2.4, 2.43, 3.0, PI, 4.0, TAU, 10.0, 25.0, 100.0, 1000.0, 1e5, 1e6, 1.05e8,
    1.06e8, 1e10, 1e22, 3e38, -0.3, -1.25, -2.5, -7.0, -1e4,
];
const TRIG_WIDE: &[f64] = &[1e100, 1e300, -1e200];

/// floor, ceil, trunc, round, lround, nearbyint, rint: halves (ties),
/// integers (the jumps), signed zeros, 2^23 - 0.5, large values in the
/// range of a 64-bit integer (Fortran's floor(x, int64), lround).
const ROUNDING: &[f32] = &[
    -1e18,
    -1e10,
    -1000.5,
    -2.5,
    -2.0,
    -1.5,
    -0.75,
    -0.5,
    -0.25,
    -0.0,
    0.0,
    0.25,
    0.5,
    0.75,
    1.0,
    1.5,
    2.5,
    3.7,
    1000.5,
    8_388_607.5,
    1e10,
    1e15,
    1e18,
];
const ROUNDING_WIDE: &[f64] = &[4_503_599_627_370_495.5, -4_503_599_627_370_495.5, 1e-300];

const EXP_ALL: &[f32] = &[
    0.0, 1e-30, 1e-10, 1e-5, 0.01, 0.25, 0.5, LN_2, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 88.0, -1e-30,
    -1e-5, -0.5, -1.0, -10.0, -20.0, -50.0, -87.0,
];

const LOG_ALL: &[f32] = &[
    1e-30, 1e-10, 1e-5, 0.01, 0.1, 0.5, 0.75, 0.9, 0.957, 0.96, 0.99, 0.999, 1.0, 1.001, 1.01,
    1.04, 1.045, 1.1, 1.5, 2.0, E, 10.0, 100.0, 1e5, 1e10, 1e20, 1e30,
];

const MIN_MAX: &[(f32, f32)] = &[
    (1.0, 2.0),
    (2.0, 1.0),
    (-1.0, 1.0),
    (1.0, -1.0),
    (2.5, 2.5),
    (-3.0, -3.0),
    (0.0, 1.0),
    (1.0, 0.0),
    (1e30, 1e-30),
    (-1e30, 1e30),
    (0.5, 0.25),
    (0.25, 0.5),
    (1e-30, -1e-30),
    (7.0, 7.0),
    (100.0, -100.0),
    (-0.5, -0.25),
    (3e38, -3e38),
    (1e-20, 2e-20),
    (1.5, 1.500_000_1),
    (1.0, 1.0),
    (-2.0, -1.0),
    (123.0, 456.0),
    (5.0, -6.0),
    (-8.0, 9.0),
    (0.1, 0.2),
];

const FORTRAN_TIES: &str = "Fortran's MIN, MAX and DIM are inline code, not libm calls, and \
     which argument a tie returns is the compiler's choice (gfortran -O0 and -O3 differ)";

/// Every function of the matrix, in test order.
pub fn functions() -> &'static [MathFn] {
    static TABLE: OnceLock<Vec<MathFn>> = OnceLock::new();
    TABLE.get_or_init(table)
}

#[allow(clippy::too_many_lines)]
fn table() -> Vec<MathFn> {
    vec![
        // ---- trigonometric ------------------------------------------------
        def(
            "sin",
            "sine over glibc's algorithm ranges and argument reductions",
        )
        .fortran("r0 = sin(a)")
        .d(&[&["cos(a)"]])
        .at(all1(TRIG))
        .at(wide1(TRIG_WIDE)),
        def(
            "cos",
            "cosine over glibc's algorithm ranges and argument reductions",
        )
        .fortran("r0 = cos(a)")
        .d(&[&["-sin(a)"]])
        .at(all1(TRIG))
        .at(wide1(TRIG_WIDE)),
        def("tan", "tangent, near pi/2 and over the reductions")
            .fortran("r0 = tan(a)")
            .d(&[&["1 / (cos(a) * cos(a))"]])
            .at(all1(TRIG))
            .at(wide1(TRIG_WIDE)),
        def(
            "sincos",
            "C: sincos (results through pointers); C++ and Fortran: sin and cos of one \
             argument, which gcc -O3 and gfortran -O3 merge into one sincos call",
        )
        .outputs(2)
        .c("sincos{t}(a, &r0, &r1);")
        .cxx("r0 = std::sin(a);\nr1 = std::cos(a);")
        .fortran("r0 = sin(a)\nr1 = cos(a)")
        .value(&["sin(a)", "cos(a)"])
        .d(&[&["cos(a)"], &["-sin(a)"]])
        .at(all1(TRIG))
        .at(wide1(TRIG_WIDE)),
        def(
            "asin",
            "arcsine: glibc's ranges split at 0.125, 0.5, 0.75, 0.921875, 0.953125, \
             0.96875, 0.984375",
        )
        .fortran("r0 = asin(a)")
        .d(&[&["1 / sqrt(1 - a * a)"]])
        .at(all1(&[
            0.0, 1e-30, 1e-8, 1e-3, 0.01, 0.1, 0.124, 0.126, 0.25, 0.4, 0.5, 0.55, 0.6, 0.75, 0.8,
            0.9, 0.92, 0.93, 0.95, 0.97, 0.98, 0.99, -1e-5, -0.3, -0.5, -0.7, -0.95, -0.99,
        ])),
        def("acos", "arccosine, same ranges as asin")
            .fortran("r0 = acos(a)")
            .d(&[&["-1 / sqrt(1 - a * a)"]])
            .at(all1(&[
                0.0, 1e-30, 1e-8, 1e-3, 0.01, 0.1, 0.124, 0.126, 0.25, 0.4, 0.5, 0.55, 0.6, 0.75,
                0.8, 0.9, 0.92, 0.93, 0.95, 0.97, 0.98, 0.99, -1e-5, -0.3, -0.5, -0.7, -0.95,
                -0.99,
            ])),
        def(
            "atan",
            "arctangent: glibc's ranges split at 7/16, 11/16, 19/16, 39/16, huge arguments",
        )
        .fortran("r0 = atan(a)")
        .d(&[&["1 / (1 + a * a)"]])
        .at(all1(&[
            0.0, 1e-30, 1e-8, 0.01, 0.0625, 0.1, 0.4375, 0.5, 0.6875, 0.7, 1.0, 1.1875, 1.2,
            2.4375, 2.5, 10.0, 100.0, 1e3, 1e8, 1e18, 1e30, -0.3, -1.0, -3.0, -100.0,
        ]))
        .at(wide1(&[1e100, -1e200])),
        def(
            "atan2",
            "atan2(y = a, x = b): all quadrants, both axes, the branch cut, the origin \
             (partials 0)",
        )
        .arity(2)
        .fortran("r0 = atan2(a, b)")
        .d(&[&[
            "a * a + b * b == 0 ? 0 : b / (a * a + b * b)",
            "a * a + b * b == 0 ? 0 : -a / (a * a + b * b)",
        ]])
        .kink("a == 0 && b <= 0")
        .at(all2(&[
            (0.0, 0.0),
            (0.0, 1.0),
            (0.0, -1.0),
            (-0.0, -1.0),
            (1.0, 0.0),
            (-1.0, 0.0),
            (1.0, 1.0),
            (1.0, -1.0),
            (-1.0, -1.0),
            (-1.0, 1.0),
            (0.5, 2.0),
            (3.0, 0.25),
            (1e-20, 1.0),
            (1.0, 1e-20),
            (1e20, 3e20),
            (-2.5, 7.0),
            (7.0, -2.5),
            (1e-30, 1e-30),
            (0.3, -0.4),
            (-100.0, 1e-3),
            (2.0, 1e5),
            (1e-10, -1.0),
        ]))
        .at(wide2(&[(1e100, 2e100), (3e-100, 1e-100)])),
        // ---- hyperbolic ---------------------------------------------------
        def("sinh", "hyperbolic sine, tiny to overflow-near arguments")
            .fortran("r0 = sinh(a)")
            .d(&[&["cosh(a)"]])
            .at(all1(&[
                0.0, 1e-30, 1e-8, 1e-3, 0.1, 0.25, 0.5, LN_2, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 22.0,
                30.0, 50.0, 88.0, -1e-5, -0.5, -2.0, -20.0, -88.0,
            ]))
            .at(wide1(&[100.0, 700.0, -700.0, 710.0])),
        def("cosh", "hyperbolic cosine, tiny to overflow-near arguments")
            .fortran("r0 = cosh(a)")
            .d(&[&["sinh(a)"]])
            .at(all1(&[
                0.0, 1e-30, 1e-8, 1e-3, 0.1, 0.25, 0.5, LN_2, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 22.0,
                30.0, 50.0, 88.0, -1e-5, -0.5, -2.0, -20.0, -88.0,
            ]))
            .at(wide1(&[100.0, 700.0, -700.0, 710.0])),
        def(
            "tanh",
            "hyperbolic tangent, up to where it is 1 in every type",
        )
        .fortran("r0 = tanh(a)")
        .d(&[&["1 / (cosh(a) * cosh(a))"]])
        .at(all1(&[
            0.0, 1e-30, 1e-8, 1e-3, 0.1, 0.25, 0.5, 0.55, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 22.0,
            40.0, -1e-5, -0.5, -2.0, -20.0, -40.0,
        ]))
        .at(wide1(&[300.0, -350.0])),
        def("asinh", "inverse hyperbolic sine, tiny to huge arguments")
            .fortran("r0 = asinh(a)")
            .d(&[&["1 / sqrt(1 + a * a)"]])
            .at(all1(&[
                0.0, 1e-30, 1e-8, 1e-3, 0.125, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0, 100.0, 1e5,
                1e10, 1e18, 1e30, -1e-5, -0.5, -1.0, -10.0, -1e30,
            ]))
            .at(wide1(&[1e150, -1e300])),
        def(
            "acosh",
            "inverse hyperbolic cosine, from 1.01 to huge arguments",
        )
        .fortran("r0 = acosh(a)")
        .d(&[&["1 / sqrt(a * a - 1)"]])
        .at(all1(&[
            1.01, 1.05, 1.0625, 1.1, 1.2, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 5.0, 7.0, 10.0, 20.0,
            50.0, 100.0, 1e3, 1e4, 1e5, 1e8, 1e10, 1e20, 1e30,
        ]))
        .at(wide1(&[1e100, 1e300])),
        def("atanh", "inverse hyperbolic tangent on (-1, 1)")
            .fortran("r0 = atanh(a)")
            .d(&[&["1 / (1 - a * a)"]])
            .at(all1(&[
                0.0, 1e-30, 1e-8, 1e-3, 0.1, 0.25, 0.3, 0.5, 0.6, 0.75, 0.9, 0.95, 0.98, 0.99,
                -1e-5, -0.1, -0.25, -0.5, -0.75, -0.9, -0.99,
            ])),
        // ---- exponentials and logarithms ----------------------------------
        def("exp", "exponential, from underflow-near to overflow-near")
            .fortran("r0 = exp(a)")
            .d(&[&["exp(a)"]])
            .at(all1(EXP_ALL))
            .at(wide1(&[-700.0, -708.0, 100.0, 500.0, 709.0])),
        def("exp2", "base-2 exponential, integers and fractions")
            .no_fortran("no Fortran intrinsic: 2.0_wp**x calls pow")
            .d(&[&["LN2 * exp2(a)"]])
            .at(all1(&[
                0.0, 1e-30, 1e-8, 0.25, 0.5, 1.0, 1.5, 3.0, 10.0, 10.25, 50.0, 100.0, 127.0, 127.5,
                -1e-5, -0.5, -1.0, -10.5, -100.0, -120.0, -125.5,
            ]))
            .at(wide1(&[-1000.0, -1020.0, 1000.0, 1023.5])),
        def(
            "expm1",
            "exp(x) - 1, small arguments where it differs from exp",
        )
        .no_fortran("no Fortran intrinsic")
        .d(&[&["exp(a)"]])
        .at(all1(&[
            0.0,
            1e-30,
            1e-10,
            1e-5,
            0.01,
            0.1,
            0.25,
            0.346_573_6,
            0.5,
            1.0,
            5.0,
            10.0,
            50.0,
            88.0,
            -1e-30,
            -1e-10,
            -1e-5,
            -0.1,
            -0.3,
            -0.5,
            -1.0,
            -20.0,
            -87.0,
        ]))
        .at(wide1(&[700.0, -700.0])),
        def(
            "log",
            "natural logarithm: glibc's path near 1 and away from it",
        )
        .fortran("r0 = log(a)")
        .d(&[&["1 / a"]])
        .at(all1(LOG_ALL))
        .at(wide1(&[1e-300, 1e300])),
        def("log2", "base-2 logarithm, powers of two included")
            .no_fortran("no Fortran intrinsic")
            .d(&[&["1 / (a * LN2)"]])
            .at(all1(LOG_ALL))
            .at(all1(&[8.0, 0.125, 1024.0]))
            .at(wide1(&[1e-300, 1e300])),
        def("log10", "base-10 logarithm, powers of ten included")
            .fortran("r0 = log10(a)")
            .d(&[&["1 / (a * LN10)"]])
            .at(all1(LOG_ALL))
            .at(all1(&[1000.0, 1e10]))
            .at(wide1(&[1e-300, 1e300])),
        def("log1p", "log(1 + x), small arguments and near -1")
            .no_fortran("no Fortran intrinsic")
            .d(&[&["1 / (1 + a)"]])
            .at(all1(&[
                0.0, 1e-30, 1e-10, 1e-5, 0.01, 0.1, 0.25, 0.41, 0.5, 1.0, 2.0, 10.0, 100.0, 1e10,
                1e30, -1e-30, -1e-10, -1e-5, -0.1, -0.29, -0.5, -0.9, -0.999,
            ]))
            .at(wide1(&[1e300])),
        // ---- powers and roots ---------------------------------------------
        def(
            "pow",
            "x^y: integer and fractional y, x = 0 (partials y*x^(y-1) and 0), x < 0 with \
             integer y (d/dy 0), x near 1 with large |y|",
        )
        .arity(2)
        .fortran("r0 = a**b")
        .d(&[&["b * pow(a, b - 1)", "a > 0 ? pow(a, b) * log(a) : 0"]])
        .kink("a <= 0")
        .at(all2(&[
            (2.0, 3.0),
            (2.0, 0.5),
            (2.0, -1.0),
            (2.0, 10.5),
            (0.5, 2.0),
            (0.5, -3.25),
            (1.0, 5.0),
            (10.0, 0.3),
            (10.0, -5.0),
            (3.0, 20.0),
            (0.25, 0.125),
            (100.0, 1.5),
            (1e-10, 0.5),
            (1e10, 2.5),
            (0.999, 1000.0),
            (1.001, -1000.0),
            (7.0, 0.0),
            (0.0, 2.0),
            (0.0, 1.0),
            (0.0, 3.0),
            (-2.0, 3.0),
            (-2.0, 2.0),
            (-0.5, -3.0),
            (1.5, 1e-8),
            (2.0, 120.0),
            (1e-30, 1.1),
        ]))
        .at(wide2(&[
            (2.0, 1000.0),
            (10.0, 300.0),
            (0.5, 1000.0),
            (1e100, -2.5),
        ])),
        def(
            "sqrt",
            "square root (not at 0, where the derivative is +inf)",
        )
        .fortran("r0 = sqrt(a)")
        .d(&[&["1 / (2 * sqrt(a))"]])
        .at(all1(&[
            1e-30,
            1e-10,
            1e-5,
            0.01,
            0.1,
            0.25,
            0.5,
            1.0,
            1.5,
            2.0,
            3.0,
            4.0,
            10.0,
            100.0,
            12345.678,
            1e5,
            1e10,
            1e20,
            1e30,
            3e38,
            1.175_494_4e-38,
        ]))
        .at(wide1(&[1e-300, 1e300])),
        def("cbrt", "cube root, both signs (not at 0)")
            .no_fortran("no Fortran intrinsic")
            .d(&[&["1 / (3 * cbrt(a) * cbrt(a))"]])
            .at(all1(&[
                -1e30, -1000.0, -8.0, -2.0, -1.0, -0.5, -1e-10, 1e-30, 1e-8, 1e-3, 0.125, 0.5, 1.0,
                2.0, 3.0, 8.0, 27.0, 100.0, 1e5, 1e10, 1e30, 3e38,
            ]))
            .at(wide1(&[1e-300, -1e300])),
        def(
            "hypot",
            "sqrt(x^2 + y^2) without overflow: axes, the origin (partials 0), huge and tiny",
        )
        .arity(2)
        .fortran("r0 = hypot(a, b)")
        .d(&[&[
            "hypot(a, b) == 0 ? 0 : a / hypot(a, b)",
            "hypot(a, b) == 0 ? 0 : b / hypot(a, b)",
        ]])
        .kink("a == 0 && b == 0")
        .at(all2(&[
            (0.0, 0.0),
            (3.0, 4.0),
            (-3.0, 4.0),
            (3.0, -4.0),
            (0.0, 5.0),
            (-5.0, 0.0),
            (1.0, 1.0),
            (1e-30, 1e-30),
            (1e30, 1e30),
            (1e20, 1.0),
            (1.0, 1e-20),
            (0.5, 0.25),
            (1.5, -2.5),
            (100.0, 0.001),
            (7.0, 24.0),
            (-1e10, 1e10),
            (1e-20, 3e-20),
            (2.0, 2e10),
            (0.1, 0.2),
            (12345.0, 6789.0),
            (-0.0, 2.0),
        ]))
        .at(wide2(&[(1e300, 1e300), (1e-300, 2e-300)])),
        // ---- absolute value, rounding -------------------------------------
        def(
            "fabs",
            "absolute value; derivative copysign(1, x), so -1 at -0.0",
        )
        .fortran("r0 = abs(a)")
        .d(&[&["copysign(1, a)"]])
        .kink("a == 0")
        .at(all1(&[
            -3e38,
            -1e30,
            -100.0,
            -2.5,
            -1.0,
            -0.5,
            -1e-30,
            -0.0,
            0.0,
            1e-30,
            0.5,
            1.0,
            2.5,
            100.0,
            1e30,
            3e38,
            -1.5,
            7.0,
            -7.0,
            1e-10,
            1.175_494_4e-38,
        ]))
        .at(wide1(&[-1e300, 1e-300])),
        def("floor", "round down; derivative 0")
            .fortran_int("r0 = real(floor(a, int64), wp)")
            .d(&[&["0"]])
            .kink("a == floor(a)")
            .at(all1(ROUNDING))
            .at(wide1(ROUNDING_WIDE)),
        def("ceil", "round up; derivative 0")
            .fortran_int("r0 = real(ceiling(a, int64), wp)")
            .d(&[&["0"]])
            .kink("a == floor(a)")
            .at(all1(ROUNDING))
            .at(wide1(ROUNDING_WIDE)),
        def("trunc", "round towards zero; derivative 0")
            .fortran("r0 = aint(a)")
            .d(&[&["0"]])
            .kink("a == floor(a)")
            .at(all1(ROUNDING))
            .at(wide1(ROUNDING_WIDE)),
        def("round", "round half away from zero; derivative 0")
            .fortran("r0 = anint(a)")
            .d(&[&["0"]])
            .kink("a - floor(a) == 0.5Q")
            .at(all1(ROUNDING))
            .at(wide1(ROUNDING_WIDE)),
        def(
            "lround",
            "round half away from zero to long; the result is passive",
        )
        .c("r0 = (real)lround{t}(a);")
        .cxx("r0 = (real)std::lround(a);")
        .fortran("r0 = real(nint(a, int64), wp)")
        .d(&[&["0"]])
        .kink("a - floor(a) == 0.5Q")
        .at(all1(ROUNDING))
        .at(wide1(&[4_503_599_627_370_495.5, -4_503_599_627_370_495.5])),
        def("nearbyint", "round half to even; derivative 0")
            .no_fortran("no Fortran intrinsic")
            .d(&[&["0"]])
            .kink("a - floor(a) == 0.5Q")
            .at(all1(ROUNDING))
            .at(wide1(ROUNDING_WIDE)),
        def("rint", "round half to even; derivative 0")
            .no_fortran("no Fortran intrinsic")
            .d(&[&["0"]])
            .kink("a - floor(a) == 0.5Q")
            .at(all1(ROUNDING))
            .at(wide1(ROUNDING_WIDE)),
        // ---- remainders ---------------------------------------------------
        def(
            "fmod",
            "x - trunc(x/y)*y: all sign combinations, exact multiples, huge quotients",
        )
        .arity(2)
        .fortran("r0 = mod(a, b)")
        .d(&[&["1", "-trunc(a / b)"]])
        .kink("fmod(a, b) == 0 || fabs(a / b) > 1e9Q")
        .at(all2(&[
            (5.5, 2.0),
            (-5.5, 2.0),
            (5.5, -2.0),
            (-5.5, -2.0),
            (10.0, 3.0),
            (1.0, 0.75),
            (0.1, 0.03),
            (100.0, 7.0),
            (1e10, 3.0),
            (1e20, 7.0),
            (2.5, 0.5),
            (-2.5, 0.5),
            (3.0, 3.0),
            (0.5, 10.0),
            (1e-20, 1.0),
            (7.0, 1e-3),
            (-1e5, 0.3),
            (6.25, -1.5),
            (123.456, 0.1),
            (1e30, 1e-5),
        ])),
        def(
            "remainder",
            "x - n*y, n the integer nearest x/y with ties to even",
        )
        .arity(2)
        .no_fortran("no Fortran intrinsic (MODULO is floor-based and inline)")
        .d(&[&["1", "-rint(a / b)"]])
        .kink(
            "remainder(a, b) == 0 || fabs(remainder(a, b)) == fabs(b) / 2 \
                 || fabs(a / b) > 1e9Q",
        )
        .at(all2(&[
            (5.0, 2.0),
            (7.0, 2.0),
            (-5.0, 2.0),
            (5.5, 2.0),
            (10.0, 3.0),
            (11.0, 3.0),
            (1.0, 0.75),
            (100.0, 7.0),
            (-100.0, 7.0),
            (1e10, 3.0),
            (2.5, 0.5),
            (0.3, 1.0),
            (0.7, 1.0),
            (1.5, 1.0),
            (2.5, 1.0),
            (-2.5, 1.0),
            (3.0, -2.0),
            (1e20, 7.0),
            (0.1, 0.03),
            (6.25, -1.5),
            (1e-20, 1.0),
            (-7.5, 0.25),
        ])),
        // ---- min, max, dim, fma, copysign ---------------------------------
        def(
            "fmin",
            "the smaller argument; on ties the first gets the derivative",
        )
        .arity(2)
        .fortran("r0 = min(a, b)")
        .fortran_no_ties(FORTRAN_TIES)
        .d(&[&["a <= b ? 1 : 0", "a <= b ? 0 : 1"]])
        .kink("a == b")
        .at(all2(MIN_MAX)),
        def(
            "fmax",
            "the larger argument; on ties the first gets the derivative",
        )
        .arity(2)
        .fortran("r0 = max(a, b)")
        .fortran_no_ties(FORTRAN_TIES)
        .d(&[&["a >= b ? 1 : 0", "a >= b ? 0 : 1"]])
        .kink("a == b")
        .at(all2(MIN_MAX)),
        def(
            "fdim",
            "positive difference: partials (1, -1) if x > y, else (0, 0)",
        )
        .arity(2)
        .fortran("r0 = dim(a, b)")
        .fortran_no_ties(FORTRAN_TIES)
        .d(&[&["a > b ? 1 : 0", "a > b ? -1 : 0"]])
        .kink("a == b")
        .at(all2(&[
            (3.0, 1.0),
            (1.0, 3.0),
            (2.0, 2.0),
            (-1.0, -3.0),
            (-3.0, -1.0),
            (1e30, -1e30),
            (0.5, 0.25),
            (0.25, 0.5),
            (0.0, 0.0),
            (-0.5, -0.5),
            (7.0, 7.0),
            (1e-30, 0.0),
            (0.0, 1e-30),
            (100.0, 99.0),
            (99.0, 100.0),
            (-2.0, -2.5),
            (1.5, 1.500_000_1),
            (1e10, 1.0),
            (1.0, 1e10),
            (2.5, -2.5),
            (-1e20, 1e20),
            (4.0, 3.999_999_8),
            (10.0, -10.0),
            (0.3, 0.1),
        ])),
        def("fma", "a*b + c rounded once: partials (b, a, 1)")
            .arity(3)
            .no_fortran("no Fortran intrinsic in gfortran 12 (IEEE_FMA is Fortran 2018)")
            .d(&[&["b", "a", "1"]])
            .at(all3(&[
                (2.0, 3.0, 4.0),
                (-1.5, 2.0, 0.5),
                (1e10, 1e-10, -1.0),
                (0.1, 10.0, -1.0),
                (3.0, 0.0, 5.0),
                (0.0, 0.0, 0.0),
                (1e20, 1e18, 1.0),
                (-2.0, -2.0, -4.0),
                (0.5, 0.5, 0.5),
                (1.0, 1.0, -1.0),
                (1e-15, 1e-15, 1e-30),
                (7.0, -3.0, 21.0),
                (1.5, 2.5, -3.75),
                (123.0, 456.0, 789.0),
                (-1e5, 1e5, 1e10),
                (2.0, 0.5, -1.0),
                (1e30, 1e-30, 0.0),
                (3.0, 0.333_333_34, -1.0),
                (-0.0, 5.0, 0.0),
                (4.0, 4.0, 4.0),
                (1e-5, 1e5, -1.0),
            ])),
        def(
            "copysign",
            "|x| with the sign of y: d/dx +1 if the signs agree, else -1 (signed zeros \
             included); d/dy 0",
        )
        .arity(2)
        .fortran("r0 = sign(a, b)")
        .d(&[&["!signbit(a) == !signbit(b) ? 1 : -1", "0"]])
        .kink("a == 0")
        .at(all2(&[
            (1.0, 1.0),
            (1.0, -1.0),
            (-1.0, 1.0),
            (-1.0, -1.0),
            (2.5, -0.0),
            (2.5, 0.0),
            (-2.5, 0.0),
            (-2.5, -0.0),
            (0.0, -1.0),
            (-0.0, 1.0),
            (0.0, 1.0),
            (-0.0, -1.0),
            (1e30, -1e-30),
            (1e-30, 5.0),
            (-7.0, 3e38),
            (3.0, -1e-30),
            (100.0, -100.0),
            (-0.5, 0.5),
            (1.5, 2.0),
            (-1.5, -2.0),
            (0.25, -8.0),
        ])),
        // ---- decomposition ------------------------------------------------
        def(
            "frexp",
            "mantissa and exponent: mantissa' = 2^-e, the exponent is passive",
        )
        .outputs(2)
        .c("int e;\nr0 = frexp{t}(a, &e);\nr1 = (real)e;")
        .cxx("int e;\nr0 = std::frexp(a, &e);\nr1 = (real)e;")
        .no_fortran("FRACTION and EXPONENT are left out of the Fortran list (issue #4)")
        .value(&["frexp_mant(a)", "frexp_exp(a)"])
        .d(&[&["ldexp(1, -(int)frexp_exp(a))"], &["0"]])
        .kink("fabs(frexp_mant(a)) == 0.5Q")
        .at(all1(&[
            1.0,
            0.5,
            0.75,
            2.0,
            3.0,
            1000.0,
            1e-30,
            1e30,
            -1.0,
            -0.3,
            -1000.0,
            1e10,
            0.1,
            7.0,
            8.0,
            1.5,
            1e-10,
            3e38,
            1.175_494_4e-38,
            123.456,
            -5e-20,
        ]))
        .at(wide1(&[1e-300, 1e300])),
        def("ldexp", "x * 2^n: derivative 2^n")
            .with_int()
            .no_fortran("no Fortran intrinsic besides SCALE, which calls scalbn")
            .d(&[&["ldexp(1, n)"]])
            .at(all_n(SCALE_POINTS))
            .at(wide_n(SCALE_WIDE_POINTS)),
        def("scalbn", "x * 2^n: derivative 2^n (Fortran: SCALE)")
            .with_int()
            .fortran("r0 = scale(a, n)")
            .d(&[&["ldexp(1, n)"]])
            .at(all_n(SCALE_POINTS))
            .at(wide_n(SCALE_WIDE_POINTS)),
        def(
            "modf",
            "fractional part (derivative 1) and integral part through a pointer \
             (derivative 0)",
        )
        .outputs(2)
        .c("real i;\nr0 = modf{t}(a, &i);\nr1 = i;")
        .cxx("real i;\nr0 = std::modf(a, &i);\nr1 = i;")
        .no_fortran("no Fortran intrinsic (AINT covers trunc)")
        .value(&["modf_frac(a)", "modf_int(a)"])
        .d(&[&["1"], &["0"]])
        .kink("a == trunc(a)")
        .at(all1(&[
            -1e10,
            -2.75,
            -2.0,
            -0.5,
            -0.0,
            0.0,
            0.25,
            0.5,
            1.0,
            1.5,
            2.75,
            3.0,
            100.125,
            4_000_000.5,
            8_388_607.5,
            -8_388_607.5,
            1e-30,
            0.999,
            12.5,
            -12.5,
            1e15,
        ]))
        .at(wide1(&[4_503_599_627_370_495.5, -1e300])),
        // ---- special functions --------------------------------------------
        def(
            "erf",
            "error function: glibc's ranges split at 0.84375, 1.25, 1/0.35, 6",
        )
        .fortran("r0 = erf(a)")
        .d(&[&["2 / sqrt(PI) * exp(-a * a)"]])
        .at(all1(&[
            0.0, 1e-30, 1e-10, 1e-5, 0.1, 0.5, 0.84, 0.85, 1.0, 1.25, 1.3, 2.0, 2.857, 2.9, 3.5,
            4.0, 5.9, 6.1, -1e-5, -0.5, -0.843_75, -1.0, -2.0, -3.0,
        ]))
        .at(wide1(&[10.0, 20.0, -25.0])),
        def("erfc", "complementary error function, down to tiny values")
            .fortran("r0 = erfc(a)")
            .d(&[&["-2 / sqrt(PI) * exp(-a * a)"]])
            .at(all1(&[
                -5.0, -2.0, -1.0, -0.5, -1e-5, 0.0, 1e-30, 1e-10, 0.1, 0.5, 0.84, 0.85, 1.0, 1.25,
                1.3, 2.0, 2.857, 2.9, 4.0, 6.0, 8.0, 9.0,
            ]))
            .at(wide1(&[10.0, 15.0, 20.0, 26.0])),
        def(
            "tgamma",
            "gamma function: derivative tgamma*digamma, negative non-integers, near overflow",
        )
        .fortran("r0 = gamma(a)")
        .d(&[&["tgamma(a) * digamma(a)"]])
        .at(all1(&[
            1e-20, 1e-8, 0.01, 0.1, 0.5, 1.0, 1.25, 2.0, 2.5, 3.0, 4.5, 5.0, 7.5, 10.0, 15.5, 20.5,
            30.0, 34.5, -0.25, -1.5, -2.75, -3.25, -4.5, -10.5,
        ]))
        .at(wide1(&[100.0, 170.5])),
        def(
            "lgamma",
            "log|gamma|: derivative digamma, also for negative non-integers; away from the \
             zeros of lgamma and digamma",
        )
        .fortran("r0 = log_gamma(a)")
        .d(&[&["digamma(a)"]])
        .at(all1(&[
            1e-30, 1e-8, 0.01, 0.1, 0.5, 0.9, 1.0, 1.1, 2.0, 2.5, 3.0, 5.0, 10.0, 100.0, 1e5, 1e10,
            1e20, 1e30, -0.25, -1.25, -2.25, -3.25, -4.5, -10.5, -100.5,
        ]))
        .at(wide1(&[1e300])),
        // ---- Bessel functions (Fortran) -----------------------------------
        def(
            "j0",
            "Bessel J0 (Fortran BESSEL_J0, which calls j0): j0' = -j1; away from the zeros",
        )
        .no_c("not in issue #4's list for C and C++; Fortran's BESSEL_J0 calls it")
        .fortran("r0 = bessel_j0(a)")
        .d(&[&["-j1(a)"]])
        .at(all1(&[
            1e-10, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 3.5, 4.5, 5.0, 6.5, 7.5, 9.5, 12.0, 15.0, 20.0,
            30.0, 50.0, 100.0, 1000.0, -1.0, -3.0,
        ])),
        def(
            "j1",
            "Bessel J1 (Fortran BESSEL_J1): j1' = j0 - j1/x; away from the zeros",
        )
        .no_c("not in issue #4's list for C and C++; Fortran's BESSEL_J1 calls it")
        .fortran("r0 = bessel_j1(a)")
        .d(&[&["j0(a) - j1(a) / a"]])
        .at(all1(&[
            1e-10, 0.1, 0.5, 1.0, 1.3, 2.5, 3.0, 4.5, 5.0, 6.0, 8.0, 9.0, 12.5, 15.0, 20.0, 30.0,
            50.0, 100.0, 1000.0, -1.0, -2.5, -6.0,
        ])),
        def(
            "y0",
            "Bessel Y0 (Fortran BESSEL_Y0): y0' = -y1; away from the zeros",
        )
        .no_c("not in issue #4's list for C and C++; Fortran's BESSEL_Y0 calls it")
        .fortran("r0 = bessel_y0(a)")
        .d(&[&["-y1(a)"]])
        .at(all1(&[
            1e-10, 1e-5, 0.01, 0.1, 0.5, 1.2, 1.5, 2.8, 3.2, 4.7, 5.0, 6.3, 7.7, 9.2, 12.5, 15.0,
            20.0, 30.0, 50.0, 100.0, 1000.0,
        ])),
        def(
            "y1",
            "Bessel Y1 (Fortran BESSEL_Y1): y1' = y0 - y1/x; away from the zeros",
        )
        .no_c("not in issue #4's list for C and C++; Fortran's BESSEL_Y1 calls it")
        .fortran("r0 = bessel_y1(a)")
        .d(&[&["y0(a) - y1(a) / a"]])
        .at(all1(&[
            1e-10, 1e-5, 0.01, 0.1, 0.5, 1.0, 1.5, 3.0, 4.5, 5.0, 6.0, 7.7, 9.5, 12.5, 15.0, 20.0,
            30.0, 50.0, 100.0, 1000.0,
        ])),
    ]
}

/// The C functions issue #4 names (each as `f`, `f##f`, `f##l`), which the
/// table must cover in C and C++.
pub const ISSUE_C_FUNCTIONS: &[&str] = &[
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "pow",
    "sqrt",
    "cbrt",
    "hypot",
    "fabs",
    "floor",
    "ceil",
    "trunc",
    "round",
    "lround",
    "nearbyint",
    "rint",
    "fmod",
    "remainder",
    "fmin",
    "fmax",
    "fdim",
    "fma",
    "copysign",
    "frexp",
    "ldexp",
    "scalbn",
    "modf",
    "erf",
    "erfc",
    "tgamma",
    "lgamma",
    "sincos",
];

/// The Fortran intrinsics issue #4 names, as they appear in the Fortran
/// calls of the table.
pub const ISSUE_FORTRAN_INTRINSICS: &[&str] = &[
    "sin(",
    "cos(",
    "tan(",
    "asin(",
    "acos(",
    "atan(",
    "atan2(",
    "sinh(",
    "cosh(",
    "tanh(",
    "asinh(",
    "acosh(",
    "atanh(",
    "exp(",
    "log(",
    "log10(",
    "sqrt(",
    "hypot(",
    "erf(",
    "erfc(",
    "gamma(",
    "log_gamma(",
    "abs(",
    "floor(",
    "ceiling(",
    "aint(",
    "anint(",
    "mod(",
    "sign(",
    "min(",
    "max(",
    "dim(",
    "**",
    "bessel_j0(",
    "bessel_j1(",
    "bessel_y0(",
    "bessel_y1(",
];

// ---------------------------------------------------------------------------
// The test list
// ---------------------------------------------------------------------------

/// What a test of the matrix checks: its name's first part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// `native_values::`: the native run's values against the references.
    NativeValues,
    /// `record::`: the recording prints the native rows byte for byte, and
    /// both sweeps give the reference partial derivatives.
    Record,
    /// `nowrap_values::`: a recording with `DGAD_MATHWRAP=0` (libm run as
    /// machine code) prints the native rows byte for byte.
    NowrapValues,
    /// `dot::`: forward mode (`DGAD_MODE=dot`), one run per argument slot
    /// with a unit tangent on that argument of every call, prints the native
    /// rows byte for byte, and the results' tangents are the reference
    /// partials and the recording's forward sweep.
    Dot,
}

impl Category {
    /// Every category, in name order.
    pub const ALL: [Category; 4] = [
        Category::Dot,
        Category::NativeValues,
        Category::NowrapValues,
        Category::Record,
    ];

    /// The name prefix.
    pub fn label(self) -> &'static str {
        match self {
            Category::NativeValues => "native_values",
            Category::Record => "record",
            Category::NowrapValues => "nowrap_values",
            Category::Dot => "dot",
        }
    }
}

/// One test: a function on an axis, in one category.
#[derive(Clone, Copy)]
pub struct MathTest {
    /// What is checked.
    pub category: Category,
    /// The function.
    pub function: &'static MathFn,
    /// Language, compiler, optimisation and type.
    pub axis: Axis,
}

impl MathTest {
    /// `<category>::<function>::<lang>_<compiler>_<opt>_<type>`.
    pub fn name(&self) -> String {
        format!(
            "{}::{}::{}",
            self.category.label(),
            self.function.name,
            self.axis.label()
        )
    }

    /// Runs the test; panics with every difference on failure.
    pub fn run(&self) {
        let name = self.name();
        match self.category {
            Category::NativeValues => check_native_values(&name, self.function, self.axis),
            Category::Record => check_recording(&name, self.function, self.axis),
            Category::NowrapValues => check_nowrap_values(&name, self.function, self.axis),
            Category::Dot => check_dot(&name, self.function, self.axis),
        }
    }
}

/// Every test of a category: each function on each axis of a language it
/// exists in.
pub fn matrix_tests(category: Category) -> Vec<MathTest> {
    let mut tests = Vec::new();
    for function in functions() {
        for axis in all_axes() {
            if function.code(axis.language).is_ok() {
                tests.push(MathTest {
                    category,
                    function,
                    axis,
                });
            }
        }
    }
    tests
}

// ---------------------------------------------------------------------------
// Where each call's numbers live
// ---------------------------------------------------------------------------

/// One function's calls in a program: which points, and where their
/// arguments and results are in the program's arrays.
struct Block {
    function: &'static MathFn,
    /// Indices into `function.points`, in call order.
    points: Vec<usize>,
    /// First real argument: call `p`'s argument `j` is `x[x_at + p*args + j]`.
    x_at: usize,
    /// First integer argument: call `p`'s is `n[n_at + p]`.
    n_at: usize,
    /// First result: call `p`'s result `k` is `y[y_at + p*outputs + k]`.
    y_at: usize,
    /// The row printed for call `p` is row `row_at + p` of the output.
    row_at: usize,
}

/// The program of one (language, type): its calls in order.
struct Layout {
    blocks: Vec<Block>,
    /// Real arguments: the marked inputs.
    inputs: usize,
    /// Integer arguments.
    ints: usize,
    /// Results: the marked outputs.
    outputs: usize,
    /// Calls: printed rows.
    calls: usize,
}

impl Layout {
    fn of(language: Language, float: FloatType) -> Layout {
        let mut layout = Layout {
            blocks: Vec::new(),
            inputs: 0,
            ints: 0,
            outputs: 0,
            calls: 0,
        };
        for function in functions() {
            if function.code(language).is_err() {
                continue;
            }
            let points = function.points_for(language, float);
            let block = Block {
                function,
                x_at: layout.inputs,
                n_at: layout.ints,
                y_at: layout.outputs,
                row_at: layout.calls,
                points,
            };
            layout.calls += block.points.len();
            layout.inputs += block.points.len() * function.args;
            if function.int_arg {
                layout.ints += block.points.len();
            }
            layout.outputs += block.points.len() * function.outputs;
            layout.blocks.push(block);
        }
        layout
    }

    fn block(&self, function: &MathFn) -> &Block {
        self.blocks
            .iter()
            .find(|b| b.function.name == function.name)
            .expect("tests exist only for functions in the program")
    }

    /// The program's stdin: every real argument, one per line, in call
    /// order, then every integer argument. The reals are written exactly
    /// (all digits of their binary value), so that `float`, `double`,
    /// `long double` and the Fortran kinds all read the same number.
    fn stdin(&self) -> String {
        let mut text = String::new();
        for block in &self.blocks {
            for &i in &block.points {
                for &v in &block.function.points[i].args {
                    text.push_str(&exact_decimal(v));
                    text.push('\n');
                }
            }
        }
        for block in self.blocks.iter().filter(|b| b.function.int_arg) {
            for &i in &block.points {
                let _ = writeln!(text, "{}", block.function.points[i].n);
            }
        }
        text
    }
}

/// All the digits of `v`'s binary value (a finite `f64` has a finite
/// decimal expansion), e.g. `1.00000001490116119384765625e-1` for the float
/// nearest 0.1.
fn exact_decimal(v: f64) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // 767 significant digits suffice for any f64.
    let text = format!("{v:.800e}");
    let (mantissa, exponent) = text.split_once('e').expect("{:e} has an exponent");
    let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
    format!("{mantissa}e{exponent}")
}

// ---------------------------------------------------------------------------
// Generating the programs
// ---------------------------------------------------------------------------

/// Where the generated sources, inputs, module files and record directories
/// go: `<target>/testsuite-build/mathfns`.
pub fn mathfns_dir() -> PathBuf {
    build_root().join("mathfns")
}

fn language_extension(language: Language) -> &'static str {
    match language {
        Language::C => "c",
        Language::Cxx => "cpp",
        Language::Fortran => "f90",
    }
}

/// How C spells the float type.
fn c_spelling(float: FloatType) -> (&'static str, &'static str, &'static str, &'static str) {
    // (type, scanf conversion, printf of one value with a leading space, suffix)
    match float {
        FloatType::Float => ("float", "%f", "printf(\" %.9g\", (double)(v))", "f"),
        FloatType::Double => ("double", "%lf", "printf(\" %.17g\", (double)(v))", ""),
        FloatType::LongDouble => (
            "long double",
            "%Lf",
            "printf(\" %.21Lg\", (long double)(v))",
            "l",
        ),
    }
}

fn generate_c_family(language: Language, float: FloatType, layout: &Layout) -> String {
    let (real, scan, print, suffix) = c_spelling(float);
    let mut text = format!(
        "/* Generated by testsuite/src/mathfns.rs ({}, {}); do not edit: the mathfns\n \
         * tests rewrite it. Reads its points from stdin (the .in file beside it).\n \
         * {} */\n\
         #ifndef _GNU_SOURCE\n#define _GNU_SOURCE 1 /* sincos */\n#endif\n\
         #include <valgrind/derivgrind.h>\n",
        language.label(),
        float.label(language),
        dependency_note(language)
    );
    text.push_str(if language == Language::C {
        "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    } else {
        "#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n"
    });
    let _ = write!(
        text,
        "\ntypedef {real} real; /* the type under test */\n\
         #define SCAN_REAL \"{scan}\"\n\
         #define PRINT_REAL(v) {print}\n\
         #define NX {}\n#define NN {}\n#define NY {}\n\n\
         static real x_[NX + 1], y_[NY + 1]; /* marked inputs and outputs */\n\
         static int n_[NN + 1]; /* integer arguments */\n",
        layout.inputs, layout.ints, layout.outputs
    );
    text.push_str(&c_dot_hooks(float));
    let mut calls = String::new();
    let mut prints = String::new();
    for block in &layout.blocks {
        let f = block.function;
        let code = f
            .code(language)
            .ok()
            .and_then(Code::statements)
            .expect("blocks exist only for present code")
            .replace("{t}", suffix);
        let _ = write!(
            text,
            "\n/* {}: {} */\nstatic void t_{}(const real *x, const int *ns, real *y, int count)\n{{\n",
            f.name,
            f.about,
            f.name
        );
        if !f.int_arg {
            text.push_str("    (void)ns;\n");
        }
        text.push_str("    for (int p = 0; p < count; p++) {\n");
        for (j, arg) in f.arg_names().iter().enumerate() {
            let _ = writeln!(text, "        real {arg} = x[{} * p + {j}];", f.args);
        }
        if f.int_arg {
            text.push_str("        int n = ns[p];\n");
        }
        let results: Vec<String> = (0..f.outputs).map(|k| format!("r{k}")).collect();
        let _ = writeln!(text, "        real {};", results.join(", "));
        text.push_str(&indent(&code, "        "));
        for (k, result) in results.iter().enumerate() {
            let _ = writeln!(text, "        y[{} * p + {k}] = {result};", f.outputs);
        }
        text.push_str("    }\n}\n");
        let _ = writeln!(
            calls,
            "    t_{}(x_ + {}, n_ + {}, y_ + {}, {});",
            f.name,
            block.x_at,
            block.n_at,
            block.y_at,
            block.points.len()
        );
        let _ = writeln!(
            prints,
            "    print_rows(\"{}\", y_ + {}, {}, {});",
            f.name,
            block.y_at,
            block.points.len(),
            f.outputs
        );
    }
    let _ = write!(
        text,
        r#"
/* One row per call: the function, the point's number, the results. */
static void print_rows(const char *name, const real *y, int count, int outputs)
{{
    for (int p = 0; p < count; p++) {{
        printf("%s %d", name, p);
        for (int k = 0; k < outputs; k++)
            PRINT_REAL(y[outputs * p + k]);
        putchar('\n');
    }}
}}

int main(void)
{{
    for (int i = 0; i < NX; i++)
        if (scanf(SCAN_REAL, &x_[i]) != 1) {{
            fprintf(stderr, "cannot read real argument %d from stdin\n", i);
            return 2;
        }}
    for (int i = 0; i < NN; i++)
        if (scanf("%d", &n_[i]) != 1) {{
            fprintf(stderr, "cannot read integer argument %d from stdin\n", i);
            return 2;
        }}
    dot_seeds_begin_();
    for (int i = 0; i < NX; i++) {{
        DG_INPUTF(x_[i]);
        if (!dot_seed_(&x_[i]))
            return 2;
    }}
    if (!dot_seeds_end_())
        return 2;
{calls}    for (int k = 0; k < NY; k++)
        DG_OUTPUTF(y_[k]);
    if (!dot_write_(y_, NY))
        return 2;
{prints}    puts("END mathfns");
    return 0;
}}
"#
    );
    text
}

fn generate_fortran(float: FloatType, layout: &Layout) -> String {
    let c_kind = match float {
        FloatType::Float => "c_float",
        FloatType::Double => "c_double",
        FloatType::LongDouble => "c_long_double",
    };
    let mut procedures = String::new();
    let mut calls = String::new();
    let mut prints = String::new();
    for block in &layout.blocks {
        let f = block.function;
        let code = f
            .code(Language::Fortran)
            .ok()
            .and_then(Code::statements)
            .expect("blocks exist only for present code");
        let names = f.arg_names();
        let results: Vec<String> = (0..f.outputs).map(|k| format!("r{k}")).collect();
        let _ = write!(
            procedures,
            "\n  ! {}: {}\n  subroutine t_{}(x, {}y, count)\n    \
             real(wp), intent(in) :: x(*)\n{}    \
             real(wp), intent(out) :: y(*)\n    \
             integer, intent(in) :: count\n    \
             integer :: p\n{}    \
             real(wp) :: {}, {}\n    \
             do p = 0, count - 1\n",
            f.name,
            f.about,
            f.name,
            if f.int_arg { "ns, " } else { "" },
            if f.int_arg {
                "    integer, intent(in) :: ns(*)\n"
            } else {
                ""
            },
            if f.int_arg { "    integer :: n\n" } else { "" },
            names.join(", "),
            results.join(", ")
        );
        for (j, name) in names.iter().enumerate() {
            let _ = writeln!(procedures, "      {name} = x(1 + {} * p + {j})", f.args);
        }
        if f.int_arg {
            procedures.push_str("      n = ns(1 + p)\n");
        }
        procedures.push_str(&indent(code, "      "));
        for (k, result) in results.iter().enumerate() {
            let _ = writeln!(
                procedures,
                "      y(1 + {} * p + {k}) = {result}",
                f.outputs
            );
        }
        let _ = writeln!(procedures, "    end do\n  end subroutine t_{}", f.name);
        let _ = writeln!(
            calls,
            "  call t_{}(x({}), {}y({}), {})",
            f.name,
            block.x_at + 1,
            if f.int_arg {
                format!("ns({}), ", block.n_at + 1)
            } else {
                String::new()
            },
            block.y_at + 1,
            block.points.len()
        );
        let _ = writeln!(
            prints,
            "  call print_rows('{}', y({}), {}, {})",
            f.name,
            block.y_at + 1,
            block.points.len(),
            f.outputs
        );
    }
    format!(
        r#"! Generated by testsuite/src/mathfns.rs (fortran, {label}); do not edit: the
! mathfns tests rewrite it. Reads its points from stdin (the .in file beside it).
! {dependencies}
module mathfns_calls
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  ! The type under test.
  integer, parameter :: wp = {c_kind}
contains
{procedures}
  ! One row per call: the function, the point's number, the results.
  subroutine print_rows(name, y, count, outputs)
    character(*), intent(in) :: name
    real(wp), intent(in) :: y(*)
    integer, intent(in) :: count, outputs
    integer :: p
    do p = 0, count - 1
      write (*, '(a, 1x, i0, *(1x, es30.20e4))') name, p, y(1 + outputs * p:outputs * (p + 1))
    end do
  end subroutine print_rows
end module mathfns_calls
{dot_hooks}
program mathfns
  use, intrinsic :: iso_c_binding
  use derivgrind_clientrequests
  use mathfns_calls
  use dgtest_dot
  implicit none
  integer, parameter :: nx = {nx}, nn = {nn}, ny = {ny}
  real(wp), target :: x(nx + 1), y(ny + 1)
  integer :: ns(nn + 1), i
  read (*, *) x(1:nx)
  if (nn > 0) read (*, *) ns(1:nn)
  call dot_seeds_read(nx)
  do i = 1, nx
    call dg_inputf(c_loc(x(i)))
    call dot_seed(x(i), i)
  end do
{calls}  do i = 1, ny
    call dg_outputf(c_loc(y(i)))
  end do
  call dot_write(y, ny)
{prints}  write (*, '(a)') 'END mathfns'
end program mathfns
"#,
        label = float.label(Language::Fortran),
        dependencies = dependency_note(Language::Fortran),
        nx = layout.inputs,
        nn = layout.ints,
        ny = layout.outputs,
        dot_hooks = fortran_dot_hooks(float),
    )
}

/// The names the reference program maps to libquadmath.
const QUAD_FUNCTIONS: &[(&str, &str)] = &[
    ("sin(x)", "sinq(x)"),
    ("cos(x)", "cosq(x)"),
    ("tan(x)", "tanq(x)"),
    ("asin(x)", "asinq(x)"),
    ("acos(x)", "acosq(x)"),
    ("atan(x)", "atanq(x)"),
    ("atan2(y, x)", "atan2q(y, x)"),
    ("sinh(x)", "sinhq(x)"),
    ("cosh(x)", "coshq(x)"),
    ("tanh(x)", "tanhq(x)"),
    ("asinh(x)", "asinhq(x)"),
    ("acosh(x)", "acoshq(x)"),
    ("atanh(x)", "atanhq(x)"),
    ("exp(x)", "expq(x)"),
    ("exp2(x)", "exp2q(x)"),
    ("expm1(x)", "expm1q(x)"),
    ("log(x)", "logq(x)"),
    ("log2(x)", "log2q(x)"),
    ("log10(x)", "log10q(x)"),
    ("log1p(x)", "log1pq(x)"),
    ("pow(x, y)", "powq(x, y)"),
    ("sqrt(x)", "sqrtq(x)"),
    ("cbrt(x)", "cbrtq(x)"),
    ("hypot(x, y)", "hypotq(x, y)"),
    ("fabs(x)", "fabsq(x)"),
    ("floor(x)", "floorq(x)"),
    ("ceil(x)", "ceilq(x)"),
    ("trunc(x)", "truncq(x)"),
    ("round(x)", "roundq(x)"),
    ("lround(x)", "((Q)lroundq(x))"),
    ("nearbyint(x)", "nearbyintq(x)"),
    ("rint(x)", "rintq(x)"),
    ("fmod(x, y)", "fmodq(x, y)"),
    ("remainder(x, y)", "remainderq(x, y)"),
    ("fmin(x, y)", "fminq(x, y)"),
    ("fmax(x, y)", "fmaxq(x, y)"),
    ("fdim(x, y)", "fdimq(x, y)"),
    ("fma(x, y, z)", "fmaq(x, y, z)"),
    ("copysign(x, y)", "copysignq(x, y)"),
    ("signbit(x)", "signbitq(x)"),
    ("ldexp(x, n)", "ldexpq(x, n)"),
    ("scalbn(x, n)", "scalbnq(x, n)"),
    ("erf(x)", "erfq(x)"),
    ("erfc(x)", "erfcq(x)"),
    ("tgamma(x)", "tgammaq(x)"),
    ("lgamma(x)", "lgammaq(x)"),
    ("j0(x)", "j0q(x)"),
    ("j1(x)", "j1q(x)"),
    ("y0(x)", "y0q(x)"),
    ("y1(x)", "y1q(x)"),
];

/// Bernoulli numbers B2..B30 as exact fractions, for digamma's asymptotic
/// series.
const BERNOULLI: &[(&str, &str)] = &[
    ("1", "6"),
    ("-1", "30"),
    ("1", "42"),
    ("-1", "30"),
    ("5", "66"),
    ("-691", "2730"),
    ("7", "6"),
    ("-3617", "510"),
    ("43867", "798"),
    ("-174611", "330"),
    ("854513", "138"),
    ("-236364091", "2730"),
    ("8553103", "6"),
    ("-23749461029", "870"),
    ("8615841276005", "14322"),
];

/// The reference program: for each function and each of its points (all
/// of them, the same numbers for every type), one row
/// `name index kink values... partials... fd(h)... fd(h/2)...`, each number
/// with 36 significant digits of `__float128`. `fd` are central differences
/// of the value expressions for each result and argument, with the step of
/// [`difference_step`], a check of the table's partials. The last rows,
/// `selftest digamma(x) value`, check digamma against known constants.
fn generate_reference() -> String {
    let mut text = String::from(
        "/* Generated by testsuite/src/mathfns.rs: quad-precision references for the\n \
         * mathfns tests; do not edit. Reads the points from stdin. */\n\
         #include <quadmath.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n\
         typedef __float128 Q;\n",
    );
    for (from, to) in QUAD_FUNCTIONS {
        let _ = writeln!(text, "#define {from} {to}");
    }
    text.push_str(
        "#define PI M_PIq\n#define LN2 M_LN2q\n#define LN10 M_LN10q\n\n\
         static Q frexp_mant(Q a) { int e; return frexpq(a, &e); }\n\
         static Q frexp_exp(Q a) { int e; frexpq(a, &e); return e; }\n\
         static Q modf_frac(Q a) { Q i; return modfq(a, &i); }\n\
         static Q modf_int(Q a) { Q i; modfq(a, &i); return i; }\n\n\
         /* digamma: reflection below 0, recurrence up to 40, then the asymptotic\n   \
         series log x - 1/(2x) - sum B2k / (2k x^2k) to B30 (error below 1e-40). */\n\
         static Q digamma(Q x)\n{\n    \
         if (x <= 0)\n        return digamma(1 - x) - PI * cosq(PI * x) / sinq(PI * x);\n    \
         Q shift = 0;\n    \
         while (x < 40) {\n        shift -= 1 / x;\n        x += 1;\n    }\n    \
         static const Q b[][2] = {\n",
    );
    for (numerator, denominator) in BERNOULLI {
        let _ = writeln!(text, "        {{{numerator}.0Q, {denominator}.0Q}},");
    }
    text.push_str(
        "    };\n    \
         Q inv2 = 1 / (x * x), power = inv2, sum = 0;\n    \
         for (int k = 1; k <= (int)(sizeof b / sizeof b[0]); k++) {\n        \
         sum += b[k - 1][0] / b[k - 1][1] / (2 * k) * power;\n        power *= inv2;\n    }\n    \
         return shift + logq(x) - 1 / (2 * x) - sum;\n}\n\n\
         static void print_q(Q v)\n{\n    char buf[128];\n    \
         quadmath_snprintf(buf, sizeof buf, \"%.36Qg\", v);\n    printf(\" %s\", buf);\n}\n\n\
         static Q read_q(void)\n{\n    static char buf[2048];\n    \
         if (scanf(\"%2047s\", buf) != 1) {\n        fputs(\"cannot read a point\\n\", stderr);\n        exit(2);\n    }\n    \
         return strtoflt128(buf, NULL);\n}\n",
    );
    let mut table = String::new();
    for f in functions() {
        let names = f.arg_names();
        let unpack = |text: &mut String| {
            for (j, name) in names.iter().enumerate() {
                let _ = writeln!(text, "    Q {name} = x[{j}];\n    (void){name};");
            }
            text.push_str("    (void)n;\n");
        };
        let _ = writeln!(
            text,
            "\n/* {} */\nstatic void v_{}(const Q *x, int n, Q *v)\n{{",
            f.name, f.name
        );
        unpack(&mut text);
        for (k, value) in f.value.iter().enumerate() {
            let _ = writeln!(text, "    v[{k}] = {value};");
        }
        let _ = writeln!(
            text,
            "}}\nstatic void d_{}(const Q *x, int n, Q *d)\n{{",
            f.name
        );
        unpack(&mut text);
        for (k, row) in f.partials.iter().enumerate() {
            for (j, partial) in row.iter().enumerate() {
                let _ = writeln!(text, "    d[{}] = {partial};", k * f.args + j);
            }
        }
        let _ = writeln!(text, "}}\nstatic int k_{}(const Q *x, int n)\n{{", f.name);
        unpack(&mut text);
        let _ = writeln!(text, "    return ({});\n}}", f.kink);
        let _ = writeln!(
            table,
            "    {{\"{0}\", {1}, {2}, {3}, {4}, v_{0}, d_{0}, k_{0}}},",
            f.name,
            f.args,
            f.outputs,
            i32::from(f.int_arg),
            f.points.len()
        );
    }
    let _ = write!(
        text,
        r#"
struct function {{
    const char *name;
    int args, outputs, int_arg, points;
    void (*value)(const Q *, int, Q *);
    void (*partials)(const Q *, int, Q *);
    int (*kink)(const Q *, int);
}};

static const struct function functions[] = {{
{table}}};

int main(void)
{{
    for (size_t f = 0; f < sizeof functions / sizeof functions[0]; f++) {{
        const struct function *fn = &functions[f];
        for (int p = 0; p < fn->points; p++) {{
            Q x[3] = {{0, 0, 0}}, v[2], d[6], plus[2], minus[2];
            int n = 0;
            for (int j = 0; j < fn->args; j++)
                x[j] = read_q();
            if (fn->int_arg)
                n = (int)read_q();
            fn->value(x, n, v);
            fn->partials(x, n, d);
            printf("%s %d %d", fn->name, p, fn->kink(x, n));
            for (int k = 0; k < fn->outputs; k++)
                print_q(v[k]);
            for (int i = 0; i < fn->outputs * fn->args; i++)
                print_q(d[i]);
            /* The step's scale: |x_j| up to 1; at 0, the smallest nonzero
               |argument| up to 1. */
            Q smallest = 1;
            for (int j = 0; j < fn->args; j++)
                if (x[j] != 0 && fabsq(x[j]) < smallest)
                    smallest = fabsq(x[j]);
            for (int half = 0; half < 2; half++)
                for (int k = 0; k < fn->outputs; k++)
                    for (int j = 0; j < fn->args; j++) {{
                        Q scale = x[j] == 0 ? smallest : fabsq(x[j]) < 1 ? fabsq(x[j]) : 1;
                        Q h = ldexpq(scale, half ? -41 : -40);
                        Q xp[3] = {{x[0], x[1], x[2]}}, xm[3] = {{x[0], x[1], x[2]}};
                        xp[j] += h;
                        xm[j] -= h;
                        fn->value(xp, n, plus);
                        fn->value(xm, n, minus);
                        /* The step actually taken (x +- h rounds); 0/0 where
                           it is lost entirely. */
                        print_q((plus[k] - minus[k]) / (xp[j] - xm[j]));
                    }}
            putchar('\n');
        }}
    }}
    printf("selftest digamma(1)");
    print_q(digamma(1));
    printf("\nselftest digamma(0.5)");
    print_q(digamma(0.5Q));
    printf("\nselftest digamma(-0.5)");
    print_q(digamma(-0.5Q));
    printf("\nselftest digamma(10)");
    print_q(digamma(10));
    printf("\nselftest digamma(-2.25)");
    print_q(digamma(-2.25Q));
    putchar('\n');
    return 0;
}}
"#
    );
    text
}

/// The coarser step of the reference program's central differences in
/// argument `j`: `2^-40 min(|x_j|, 1)`, and at `x_j = 0` the same of the
/// smallest nonzero argument (so that `fdim(1e-30, 0)` is not stepped across
/// its tie). Small enough not to cross the jumps of `floor` at 1e15 or the
/// oscillations of `sin` at 1e22; quad precision keeps the rounding error
/// near 1e-22.
fn difference_step(args: &[f64], j: usize) -> f64 {
    let smallest = args
        .iter()
        .filter(|v| **v != 0.0)
        .fold(1.0f64, |m, v| m.min(v.abs()));
    let scale = if args[j] == 0.0 {
        smallest
    } else {
        args[j].abs().min(1.0)
    };
    scale * 2f64.powi(-40)
}

/// The reference program's stdin: every point of every function, in table
/// order, its real arguments then its integer argument, one per line.
fn reference_stdin() -> String {
    let mut text = String::new();
    for f in functions() {
        for point in &f.points {
            for &v in &point.args {
                text.push_str(&exact_decimal(v));
                text.push('\n');
            }
            if f.int_arg {
                let _ = writeln!(text, "{}", point.n);
            }
        }
    }
    text
}

// ---------------------------------------------------------------------------
// Building and running, once per axis
// ---------------------------------------------------------------------------

/// A generated program and the stdin it reads.
#[derive(Clone)]
struct Program {
    executable: PathBuf,
    stdin_file: PathBuf,
    stdin: Arc<Vec<u8>>,
}

impl Program {
    fn invocation(&self) -> Invocation {
        Invocation::new(&self.executable)
    }

    fn command_line(&self) -> String {
        format!(
            "{} < {}",
            self.invocation().display(),
            self.stdin_file.display()
        )
    }
}

/// Writes the source and stdin of (language, type) and builds the program
/// for `axis`, once per test process.
fn program(axis: Axis) -> Result<Program, String> {
    static PROGRAMS: Slots<Result<Program, String>> = OnceLock::new();
    let key = format!(
        "{}|{}|{}",
        axis.language.label(),
        axis.float.label(axis.language),
        axis.compiler_and_opt()
    );
    once(&PROGRAMS, key, || {
        let (source, stdin_file) = generated_source(axis.language, axis.float)?;
        let stem = source
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("generated names are UTF-8")
            .to_owned();
        let flag = |flag: &str, path: &Path| {
            let mut arg = OsString::from(flag);
            arg.push(path);
            arg
        };
        let (mut args, mut link_args) = (Vec::new(), Vec::new());
        if axis.language == Language::Fortran {
            let modules = mathfns_dir()
                .join("modules")
                .join(format!("{}-{stem}", axis.compiler_and_opt()));
            fs::create_dir_all(&modules)
                .map_err(|e| format!("cannot create {}: {e}", modules.display()))?;
            let client = fortran_client_build();
            args.push(flag("-J", &modules));
            args.push(flag("-I", &client));
            link_args.push(flag("-L", &client));
            link_args.push("-ldgadclient".into());
        } else {
            args.push(flag("-I", &include_dir()));
        }
        let executable = build_program_at(&source, axis.compiler, axis.opt, &args, &link_args);
        let stdin = fs::read(&stdin_file)
            .map_err(|e| format!("cannot read {}: {e}", stdin_file.display()))?;
        Ok(Program {
            executable,
            stdin_file,
            stdin: Arc::new(stdin),
        })
    })
}

/// The source and stdin files of (language, type), written once per test
/// process (and only when their contents change).
fn generated_source(language: Language, float: FloatType) -> Result<(PathBuf, PathBuf), String> {
    static SOURCES: Slots<Result<(PathBuf, PathBuf), String>> = OnceLock::new();
    let stem = format!("mathfns_{}_{}", language.label(), float.label(language));
    once(&SOURCES, stem.clone(), || {
        let dir = mathfns_dir().join("src");
        let source = dir.join(format!("{stem}.{}", language_extension(language)));
        let stdin_file = dir.join(format!("{stem}.in"));
        let layout = Layout::of(language, float);
        let text = match language {
            Language::C | Language::Cxx => generate_c_family(language, float, &layout),
            Language::Fortran => generate_fortran(float, &layout),
        };
        write_if_changed(&stdin_file, &layout.stdin());
        write_if_changed(&source, &text);
        Ok((source, stdin_file))
    })
}

/// The build-directory part of an axis: compiler and flags.
trait AxisExt {
    fn compiler_and_opt(&self) -> String;
    fn describe(&self) -> String;
}

impl AxisExt for Axis {
    fn compiler_and_opt(&self) -> String {
        let compiler = match self.compiler {
            Compiler::Gcc => "gcc",
            Compiler::Clang => "clang",
            Compiler::Gfortran => "gfortran",
        };
        format!("{compiler}-{}", self.opt.label())
    }

    fn describe(&self) -> String {
        format!(
            "{}, {}, {}",
            self.language.label(),
            self.compiler_and_opt(),
            self.float.label(self.language)
        )
    }
}

/// One printed row: `<function> <point> <result>...`.
#[derive(Clone, Debug)]
struct Row {
    text: String,
    values: Vec<Dd>,
}

/// A run's rows, in program order, checked against the layout.
type Rows = Arc<Vec<Row>>;

fn outcome_text(outcome: &Outcome) -> String {
    let stdout = outcome.stdout_text();
    let lines: Vec<&str> = stdout.lines().collect();
    let shown = if lines.len() > 40 {
        format!(
            "({} lines, the last 40:)\n{}",
            lines.len(),
            lines[lines.len() - 40..].join("\n")
        )
    } else {
        lines.join("\n")
    };
    format!(
        "{}\n--- stdout ---\n{shown}\n--- stderr ---\n{}",
        outcome.status,
        String::from_utf8_lossy(&outcome.stderr)
    )
}

/// Parses a run's stdout into rows: one per call of the layout, in order,
/// then `END mathfns`.
fn parse_rows(outcome: &Outcome, layout: &Layout) -> Result<Rows, String> {
    if !outcome.status.success() {
        return Err(format!("the program failed: {}", outcome_text(outcome)));
    }
    let stdout = outcome.stdout_text();
    let mut lines = stdout.lines();
    let mut rows = Vec::new();
    for block in &layout.blocks {
        for p in 0..block.points.len() {
            let line = lines.next().unwrap_or("<end of output>");
            let words: Vec<&str> = line.split_whitespace().collect();
            let values: Option<Vec<Dd>> = words.iter().skip(2).map(|w| Dd::parse(w)).collect();
            let well_formed = words.len() == 2 + block.function.outputs
                && words[0] == block.function.name
                && words[1] == p.to_string();
            match values {
                Some(values) if well_formed => rows.push(Row {
                    text: line.to_owned(),
                    values,
                }),
                _ => {
                    return Err(format!(
                        "expected the row of {} point {p} with {} number(s), got {line:?}: {}",
                        block.function.name,
                        block.function.outputs,
                        outcome_text(outcome)
                    ))
                }
            }
        }
    }
    match lines.next() {
        Some("END mathfns") => Ok(Arc::new(rows)),
        other => Err(format!(
            "expected `END mathfns` after the rows, got {other:?}: {}",
            outcome_text(outcome)
        )),
    }
}

/// The native run of an axis's program, once per test process.
fn native_rows(axis: Axis) -> Result<Rows, String> {
    static RUNS: Slots<Result<Rows, String>> = OnceLock::new();
    once(&RUNS, axis.label(), || {
        let program = program(axis)?;
        let outcome = run_native(&program.invocation(), Some(&program.stdin));
        parse_rows(&outcome, &Layout::of(axis.language, axis.float))
            .map_err(|e| format!("native run `{}`: {e}", program.command_line()))
    })
}

/// What a recording and its two sweeps produced.
#[derive(Clone)]
struct Recorded {
    rows: Rows,
    /// `dg-input-bars`: per input, a column per output slot.
    bars: Arc<Vec<Vec<f64>>>,
    /// `dg-output-dots`: per output, a column per argument slot.
    dots: Arc<Vec<Vec<f64>>>,
    dir: PathBuf,
    command: String,
}

fn record_dir(kind: &str, axis: Axis) -> Result<PathBuf, String> {
    let dir = mathfns_dir().join(kind).join(axis.label());
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Records the program under dgad into `dir` with `extra_env`; the run must
/// end like the native one (status) and print well-formed rows.
fn record_rows(
    program: &Program,
    axis: Axis,
    dir: &Path,
    extra_env: &[(&str, &str)],
) -> Result<(Rows, String), String> {
    let dir_text = dir.to_str().expect("target paths are UTF-8");
    let mut env = vec![("DGAD_MODE", "record"), ("DGAD_RECORD", dir_text)];
    env.extend_from_slice(extra_env);
    let settings: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let command = format!(
        "{} LD_PRELOAD={} {}",
        settings.join(" "),
        dgad_lib().display(),
        program.command_line()
    );
    let outcome = run_under_dgad(&program.invocation(), Some(&program.stdin), &env);
    let rows = parse_rows(&outcome, &Layout::of(axis.language, axis.float))
        .map_err(|e| format!("recording `{command}`: {e}"))?;
    Ok((rows, command))
}

/// The recording of an axis's program and both sweeps over its tape, once
/// per test process. The record directory stays for inspection
/// (`<target>/testsuite-build/mathfns/record/<axis>`, replaced by the next
/// run).
fn recorded(axis: Axis) -> Result<Recorded, String> {
    static RUNS: Slots<Result<Recorded, String>> = OnceLock::new();
    once(&RUNS, axis.label(), || {
        let program = program(axis)?;
        let layout = Layout::of(axis.language, axis.float);
        let dir = record_dir("record", axis)?;
        let (rows, command) = record_rows(&program, axis, &dir, &[])?;
        let context = |e: String| {
            format!(
                "{e}\n  recording: {command}\n  record directory: {}",
                dir.display()
            )
        };
        if !crate::recording::has_tape(&dir) {
            return Err(context(
                "the recording wrote no tape (dg-tape or dg-tape-compact)".to_owned(),
            ));
        }
        for (file, count) in [
            ("dg-input-indices", layout.inputs),
            ("dg-output-indices", layout.outputs),
        ] {
            let text = fs::read_to_string(dir.join(file)).unwrap_or_default();
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            if lines != count {
                return Err(context(format!(
                    "{file} has {lines} lines, expected one per mark: {count}"
                )));
            }
        }
        // Reverse: column k seeds result slot k of every call.
        let mut bars_seed = String::new();
        // Forward: column j seeds argument slot j of every call.
        let mut dots_seed = String::new();
        for block in &layout.blocks {
            let f = block.function;
            for _ in &block.points {
                for j in 0..f.args {
                    dots_seed.push_str(&unit_row(3, j));
                }
                for k in 0..f.outputs {
                    bars_seed.push_str(&unit_row(2, k));
                }
            }
        }
        let bars = sweep(&dir, "dg-output-bars", &bars_seed, "dg-input-bars", false)
            .and_then(|m| matrix_shape(m, layout.inputs, 2, "dg-input-bars"))
            .map_err(context)?;
        let dots = sweep(&dir, "dg-input-dots", &dots_seed, "dg-output-dots", true)
            .and_then(|m| matrix_shape(m, layout.outputs, 3, "dg-output-dots"))
            .map_err(context)?;
        Ok(Recorded {
            rows,
            bars: Arc::new(bars),
            dots: Arc::new(dots),
            dir,
            command,
        })
    })
}

/// The recording with `DGAD_MATHWRAP=0`, once per test process; its record
/// directory is removed when the rows are the native ones.
fn nowrap_rows(axis: Axis) -> Result<(Rows, String, PathBuf), String> {
    static RUNS: Slots<Result<(Rows, String, PathBuf), String>> = OnceLock::new();
    once(&RUNS, axis.label(), || {
        let program = program(axis)?;
        let dir = record_dir("record-nowrap", axis)?;
        let (rows, command) = record_rows(&program, axis, &dir, &[("DGAD_MATHWRAP", "0")])?;
        let same = native_rows(axis).is_ok_and(|native| {
            native
                .iter()
                .zip(rows.iter())
                .all(|(a, b)| a.text == b.text)
        });
        if same {
            let _ = fs::remove_dir_all(&dir);
        }
        Ok((rows, command, dir))
    })
}

/// The forward-mode runs of an axis's program.
#[derive(Clone)]
struct Dotted {
    /// `rows[j]`: what the run seeding argument slot `j` printed.
    rows: Vec<Rows>,
    /// `dots[j][y]`: the tangent of result `y` in that run.
    dots: Vec<Arc<Vec<Dd>>>,
    /// The runs' command lines.
    commands: Vec<String>,
    /// Where the tangent files are.
    dir: PathBuf,
}

/// The tangents the hooks wrote to `path`, one per result.
fn dot_file(path: &Path, count: usize) -> Result<Vec<Dd>, String> {
    let text = fs::read_to_string(path)
        .map_err(|e| format!("the program wrote no {}: {e}", path.display()))?;
    let dots: Vec<Dd> = text
        .split_whitespace()
        .map(|w| Dd::parse(w).ok_or_else(|| format!("{}: {w:?} is not a number", path.display())))
        .collect::<Result<_, _>>()?;
    if dots.len() == count {
        Ok(dots)
    } else {
        Err(format!(
            "{} has {} numbers, expected one per result: {count}",
            path.display(),
            dots.len()
        ))
    }
}

/// The program's runs in forward mode, once per test process: for each
/// argument slot `j` (up to the most arguments a function has), a run with
/// `DGAD_MODE=dot` and the tangent 1 on argument `j` of every call, 0 on
/// the others. Before them, a native run with the same hooks must print the
/// native rows and leave the tangents NaN (the requests do nothing
/// natively). The tangent files stay in
/// `<target>/testsuite-build/mathfns/dot/<axis>`.
fn dotted(axis: Axis) -> Result<Dotted, String> {
    static RUNS: Slots<Result<Dotted, String>> = OnceLock::new();
    once(&RUNS, axis.label(), || {
        let program = program(axis)?;
        let layout = Layout::of(axis.language, axis.float);
        let native = native_rows(axis)?;
        let dir = record_dir("dot", axis)?;
        let slots = layout
            .blocks
            .iter()
            .map(|b| b.function.args)
            .max()
            .unwrap_or(0);
        let seeds = |slot: usize| -> Vec<f64> {
            let mut seeds = Vec::with_capacity(layout.inputs);
            for block in &layout.blocks {
                for _ in &block.points {
                    seeds.extend((0..block.function.args).map(|j| f64::from(u8::from(j == slot))));
                }
            }
            seeds
        };
        // The seeds also go to a file, for the command lines in messages.
        let hooks = |slot: usize, out: &Path| -> Result<(Invocation, String), String> {
            let seeds = seeds(slot);
            let file = dir.join(format!("seeds-{slot}"));
            let text: Vec<String> = seeds.iter().map(|v| format!("{v:?}")).collect();
            fs::write(&file, text.join(" "))
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            let (hooked, _) = with_dot_hooks(&program.invocation(), &seeds, out);
            let settings = format!(
                "{DOT_SEEDS_VAR}=\"$(cat {})\" {DOT_OUT_VAR}={}",
                file.display(),
                out.display()
            );
            Ok((hooked, settings))
        };
        let (hooked, settings) = hooks(0, &dir.join("dots-native"))?;
        let command = format!("{settings} {}", program.command_line());
        let outcome = run_native(&hooked, Some(&program.stdin));
        let rows = parse_rows(&outcome, &layout)
            .map_err(|e| format!("native run with the tangent hooks `{command}`: {e}"))?;
        if let Some((a, b)) = native
            .iter()
            .zip(rows.iter())
            .find(|(a, b)| a.text != b.text)
        {
            return Err(format!(
                "the native run with the tangent hooks `{command}` prints {:?} instead of {:?}",
                b.text, a.text
            ));
        }
        let untouched = dot_file(&dir.join("dots-native"), layout.outputs)
            .map_err(|e| format!("native run with the tangent hooks `{command}`: {e}"))?;
        if let Some(dot) = untouched.iter().find(|d| !d.hi.is_nan()) {
            return Err(format!(
                "natively, DG_GET_DOTVALUE changed its buffer (NaN before) to {dot}: `{command}`"
            ));
        }
        let mut dotted = Dotted {
            rows: Vec::new(),
            dots: Vec::new(),
            commands: Vec::new(),
            dir: dir.clone(),
        };
        for slot in 0..slots {
            let out = dir.join(format!("dots-{slot}"));
            let (hooked, settings) = hooks(slot, &out)?;
            let command = format!(
                "{settings} DGAD_MODE=dot LD_PRELOAD={} {}",
                dgad_lib().display(),
                program.command_line()
            );
            let outcome = run_under_dgad(&hooked, Some(&program.stdin), &[("DGAD_MODE", "dot")]);
            let rows = parse_rows(&outcome, &layout)
                .map_err(|e| format!("dot-mode run `{command}`: {e}"))?;
            let dots = dot_file(&out, layout.outputs)
                .map_err(|e| format!("dot-mode run `{command}`: {e}"))?;
            dotted.rows.push(rows);
            dotted.dots.push(Arc::new(dots));
            dotted.commands.push(command);
        }
        Ok(dotted)
    })
}

fn unit_row(columns: usize, at: usize) -> String {
    let mut row: Vec<&str> = vec!["0"; columns];
    row[at] = "1";
    format!("{}\n", row.join(" "))
}

/// One `dg-eval` run: writes the seed file, runs, reads the result rows.
fn sweep(
    dir: &Path,
    seed_file: &str,
    seed: &str,
    result_file: &str,
    forward: bool,
) -> Result<Vec<Vec<f64>>, String> {
    let text = run_dg_eval(dir, seed_file, seed, result_file, forward)?;
    text.lines()
        .map(|line| {
            line.split_whitespace()
                .map(|w| {
                    w.parse::<f64>()
                        .map_err(|_| format!("{result_file}: {w:?} is not a number"))
                })
                .collect()
        })
        .collect()
}

fn matrix_shape(
    matrix: Vec<Vec<f64>>,
    rows: usize,
    columns: usize,
    file: &str,
) -> Result<Vec<Vec<f64>>, String> {
    if matrix.len() == rows && matrix.iter().all(|r| r.len() == columns) {
        Ok(matrix)
    } else {
        Err(format!(
            "{file} has {} rows (of {:?} columns), expected {rows} rows of {columns}",
            matrix.len(),
            matrix.iter().map(Vec::len).max()
        ))
    }
}

// ---------------------------------------------------------------------------
// Double-double numbers: references and long double results beyond f64
// ---------------------------------------------------------------------------

/// An unevaluated sum `hi + lo` with `|lo| <= ulp(hi)/2`: about 106 bits,
/// enough to hold a `long double` result and to compare it with a
/// `__float128` reference at 1e-16.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    fn new(hi: f64) -> Dd {
        Dd { hi, lo: 0.0 }
    }

    /// `a + b` exactly, for `|a| >= |b|`.
    fn quick_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        Dd {
            hi: s,
            lo: b - (s - a),
        }
    }

    /// `a + b` exactly.
    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let bb = s - a;
        Dd {
            hi: s,
            lo: (a - (s - bb)) + (b - bb),
        }
    }

    fn add(self, other: Dd) -> Dd {
        let s = Dd::two_sum(self.hi, other.hi);
        let t = Dd::two_sum(self.lo, other.lo);
        let u = Dd::quick_sum(s.hi, s.lo + t.hi);
        Dd::quick_sum(u.hi, u.lo + t.lo)
    }

    fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    fn sub(self, other: Dd) -> Dd {
        self.add(other.neg())
    }

    fn mul(self, other: Dd) -> Dd {
        let p = self.hi * other.hi;
        let e = self.hi.mul_add(other.hi, -p) + (self.hi * other.lo + self.lo * other.hi);
        Dd::quick_sum(p, e)
    }

    fn div(self, other: Dd) -> Dd {
        let q1 = self.hi / other.hi;
        let r = self.sub(other.mul(Dd::new(q1)));
        let q2 = r.hi / other.hi;
        let r = r.sub(other.mul(Dd::new(q2)));
        let q3 = r.hi / other.hi;
        Dd::quick_sum(q1, q2).add(Dd::new(q3))
    }

    /// An integer of up to 120 bits.
    fn from_u128(m: u128) -> Dd {
        let hi = m as f64;
        // `hi` is an integer within 2^67 of m; i128 holds both.
        let rest = m as i128 - hi as i128;
        Dd::quick_sum(hi, rest as f64)
    }

    /// `10^k` for `k <= 100`, within a few units of 2^-106.
    fn pow10(k: u32) -> Dd {
        (0..k).fold(Dd::new(1.0), |p, _| p.mul(Dd::new(10.0)))
    }

    /// Parses a decimal number as printed by C or Fortran (`-1.5e-3`,
    /// `1.50000000000000000000E-0003`, `inf`, `-nan`); at most 36
    /// significant digits count, which is plenty.
    fn parse(text: &str) -> Option<Dd> {
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            // inf, nan, Infinity, NaN
            let lower = body.to_ascii_lowercase();
            let v = if lower.starts_with("inf") {
                f64::INFINITY
            } else if lower.starts_with("nan") {
                f64::NAN
            } else {
                return None;
            };
            return Some(Dd::new(if negative { -v } else { v }));
        }
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(at) => (&body[..at], body[at + 1..].parse::<i32>().ok()?),
            None => (body, 0),
        };
        let mut digits: u128 = 0;
        let mut significant = 0;
        let mut scale = exponent;
        let mut seen_point = false;
        for c in mantissa.chars() {
            match c {
                '.' if !seen_point => seen_point = true,
                '0'..='9' => {
                    let d = u128::from(c as u8 - b'0');
                    if significant < 36 {
                        if digits > 0 || d > 0 {
                            significant += 1;
                        }
                        digits = digits * 10 + d;
                        if seen_point {
                            scale -= 1;
                        }
                    } else if !seen_point {
                        scale += 1;
                    }
                }
                _ => return None,
            }
        }
        let zero = if negative { -0.0 } else { 0.0 };
        if digits == 0 {
            return Some(Dd::new(zero));
        }
        let mut value = Dd::from_u128(digits);
        while scale != 0 {
            let step = scale.unsigned_abs().min(100);
            value = if scale > 0 {
                value.mul(Dd::pow10(step))
            } else {
                value.div(Dd::pow10(step))
            };
            scale -= scale.signum() * step as i32;
        }
        Some(if negative { value.neg() } else { value })
    }

    /// `|self - reference| / |reference|`; infinite for a nonzero difference
    /// from 0 or for non-finite numbers that differ.
    fn relative_error(self, reference: Dd) -> f64 {
        if !self.hi.is_finite() || !reference.hi.is_finite() {
            return if self.hi == reference.hi {
                0.0
            } else {
                f64::INFINITY
            };
        }
        let difference = self.sub(reference).hi.abs();
        if difference == 0.0 {
            0.0
        } else {
            difference / reference.hi.abs()
        }
    }
}

impl std::fmt::Display for Dd {
    /// The nearest `f64`, in its shortest form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:e}", self.hi)
    }
}

// ---------------------------------------------------------------------------
// The references
// ---------------------------------------------------------------------------

/// The reference row of one point.
#[derive(Clone, Debug)]
struct RefPoint {
    kink: bool,
    /// Per result.
    values: Vec<Dd>,
    /// `partials[k][j]`: d result k / d argument j.
    partials: Vec<Vec<Dd>>,
    /// Central differences with `h` and `h/2`, same shape.
    differences: [Vec<Vec<Dd>>; 2],
}

#[derive(Clone)]
struct Reference {
    /// Per function name, per point of the table.
    points: Arc<HashMap<&'static str, Vec<RefPoint>>>,
    /// `(what, value)` of the reference program's digamma self-test.
    selftest: Arc<Vec<(String, Dd)>>,
    command: String,
}

impl Reference {
    fn at(&self, function: &MathFn, point: usize) -> &RefPoint {
        &self.points[function.name][point]
    }
}

/// Builds and runs the reference program once per test process (gcc and
/// libquadmath; not a test axis).
fn reference() -> Result<Reference, String> {
    static REFERENCE: Slots<Result<Reference, String>> = OnceLock::new();
    once(&REFERENCE, String::new(), || {
        let dir = mathfns_dir().join("src");
        let source = dir.join("mathfns_reference.c");
        let stdin_file = dir.join("mathfns_reference.in");
        let stdin = reference_stdin();
        write_if_changed(&stdin_file, &stdin);
        write_if_changed(&source, &generate_reference());
        let executable = build_program_at(
            &source,
            Compiler::Gcc,
            OptLevel::O0,
            &[],
            &["-lquadmath".into()],
        );
        let invocation = Invocation::new(&executable);
        let command = format!("{} < {}", invocation.display(), stdin_file.display());
        let outcome = run_native(&invocation, Some(stdin.as_bytes()));
        if !outcome.status.success() {
            return Err(format!(
                "the reference program failed: `{command}`: {}",
                outcome_text(&outcome)
            ));
        }
        let stdout = outcome.stdout_text();
        let mut lines = stdout.lines();
        let mut points = HashMap::new();
        for f in functions() {
            let mut rows = Vec::new();
            for p in 0..f.points.len() {
                let line = lines.next().unwrap_or("");
                let row = parse_reference_row(f, p, line).ok_or_else(|| {
                    format!("`{command}`: bad row for {} point {p}: {line:?}", f.name)
                })?;
                rows.push(row);
            }
            points.insert(f.name, rows);
        }
        let mut selftest = Vec::new();
        for line in lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["selftest", what, value] => selftest.push((
                    (*what).to_owned(),
                    Dd::parse(value).ok_or_else(|| format!("bad self-test row {line:?}"))?,
                )),
                _ => return Err(format!("`{command}`: unexpected row {line:?}")),
            }
        }
        Ok(Reference {
            points: Arc::new(points),
            selftest: Arc::new(selftest),
            command,
        })
    })
}

fn parse_reference_row(f: &MathFn, p: usize, line: &str) -> Option<RefPoint> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (outputs, args) = (f.outputs, f.args);
    if words.len() != 3 + outputs + 3 * outputs * args
        || words[0] != f.name
        || words[1] != p.to_string()
    {
        return None;
    }
    let numbers: Option<Vec<Dd>> = words[3..].iter().map(|w| Dd::parse(w)).collect();
    let numbers = numbers?;
    let matrix = |at: usize| -> Vec<Vec<Dd>> {
        (0..outputs)
            .map(|k| numbers[at + k * args..at + (k + 1) * args].to_vec())
            .collect()
    };
    Some(RefPoint {
        kink: words[2] != "0",
        values: numbers[..outputs].to_vec(),
        partials: matrix(outputs),
        differences: [
            matrix(outputs + outputs * args),
            matrix(outputs + 2 * outputs * args),
        ],
    })
}

// ---------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------

/// The bound on the relative error of values and derivatives.
pub fn tolerance(float: FloatType) -> f64 {
    match float {
        FloatType::Float => 1e-5,
        FloatType::Double => 1e-13,
        FloatType::LongDouble => 1e-16,
    }
}

/// A printed value against its reference: relative error within the
/// type's bound; a zero reference needs a zero of the same sign (any sign
/// for results that went through an integer).
fn value_matches(actual: Dd, reference: Dd, float: FloatType, any_zero_sign: bool) -> bool {
    if reference.hi == 0.0 {
        return actual.hi == 0.0
            && (any_zero_sign || actual.hi.is_sign_negative() == reference.hi.is_sign_negative());
    }
    actual.relative_error(reference) <= tolerance(float)
}

/// A derivative from `dg-eval` (printed with 16 significant digits) against
/// its reference: relative error within the type's bound. A zero reference
/// needs a zero (either sign). For `long double`, whose partials the tape
/// holds as `f64`, it also passes when the printed number is the reference
/// rounded to `f64`, as far as 16 digits show.
fn derivative_matches(actual: f64, reference: Dd, float: FloatType) -> bool {
    if reference.hi == 0.0 {
        return actual == 0.0;
    }
    if !actual.is_finite() {
        return false;
    }
    if Dd::new(actual).relative_error(reference) <= tolerance(float) {
        return true;
    }
    float == FloatType::LongDouble && shows_as(actual, reference.hi)
}

/// Whether `printed`, a number `dg-eval` wrote with 16 significant digits
/// (Derivgrind's `%.16g`) and read back as `f64`, is the printing of the
/// `f64` value `exact`. Formatting `printed` to 16 digits again gives back
/// the digits `dg-eval` wrote where 16 digits do not pin an `f64` down, and
/// `printed` itself where they do; `dg-eval` formats with Rust's `{:e}`, so
/// ties round the same way.
fn shows_as(printed: f64, exact: f64) -> bool {
    format!("{printed:.15e}") == format!("{exact:.15e}")
}

fn fail(test: &str, what: &str, function: &MathFn, axis: Axis, details: &str) -> ! {
    panic!(
        "{test}: {what}\n  function: {} ({})\n  axis:     {}\n{details}",
        function.name,
        function.about,
        axis.describe()
    )
}

fn required<T>(
    test: &str,
    function: &MathFn,
    axis: Axis,
    what: &str,
    result: Result<T, String>,
) -> T {
    result.unwrap_or_else(|e| fail(test, what, function, axis, &format!("  {e}")))
}

/// `native_values::`: the native run's results against the references.
pub fn check_native_values(test: &str, function: &MathFn, axis: Axis) {
    let reference = required(
        test,
        function,
        axis,
        "the reference program failed",
        reference(),
    );
    let rows = required(
        test,
        function,
        axis,
        "the native run failed",
        native_rows(axis),
    );
    let layout = Layout::of(axis.language, axis.float);
    let block = layout.block(function);
    let any_zero_sign = matches!(function.code(axis.language), Ok(Code::IntResult(_)));
    let mut problems = Vec::new();
    for (p, &i) in block.points.iter().enumerate() {
        let row = &rows[block.row_at + p];
        let expected = &reference.at(function, i).values;
        for (k, (&actual, &expected)) in row.values.iter().zip(expected).enumerate() {
            if !value_matches(actual, expected, axis.float, any_zero_sign) {
                problems.push(format!(
                    "{} r{k}: expected {expected}, got {actual} (relative error {:.1e}; row {:?})",
                    function.points[i].describe(function),
                    actual.relative_error(expected),
                    row.text
                ));
            }
        }
    }
    if !problems.is_empty() {
        let program = program(axis).map(|p| p.command_line()).unwrap_or_default();
        fail(
            test,
            &format!(
                "{} of {} values differ from the references by more than {:e} (a test, \
                 compiler or libm problem, not dgad)",
                problems.len(),
                block.points.len() * function.outputs,
                tolerance(axis.float)
            ),
            function,
            axis,
            &format!(
                "  {}\n  command: {program}\n  references: {}",
                problems.join("\n  "),
                reference.command
            ),
        );
    }
}

/// `record::`: the recording's rows are the native ones, byte for byte; the
/// reverse sweep (a bar of 1 on each call's result k, in column k) gives
/// each argument's partial, and the forward sweep (a dot of 1 on each
/// call's argument j, in column j) each result's; the other columns are 0.
pub fn check_recording(test: &str, function: &MathFn, axis: Axis) {
    let reference = required(
        test,
        function,
        axis,
        "the reference program failed",
        reference(),
    );
    let native = required(
        test,
        function,
        axis,
        "the native run failed (see native_values::)",
        native_rows(axis),
    );
    let recorded = required(
        test,
        function,
        axis,
        "the recording or its sweeps failed",
        recorded(axis),
    );
    let layout = Layout::of(axis.language, axis.float);
    let block = layout.block(function);
    let (args, outputs) = (function.args, function.outputs);
    let mut problems = Vec::new();
    let mut compared = 0;
    for (p, &i) in block.points.iter().enumerate() {
        let call = function.points[i].describe(function);
        let (native_row, recorded_row) = (
            &native[block.row_at + p].text,
            &recorded.rows[block.row_at + p].text,
        );
        if native_row != recorded_row {
            problems.push(format!(
                "{call}: the recording prints {recorded_row:?}, natively {native_row:?}"
            ));
        }
        let point = reference.at(function, i);
        for k in 0..2 {
            for j in 0..3 {
                let bar = recorded.bars[block.x_at + p * args + j.min(args - 1)][k];
                let dot = recorded.dots[block.y_at + p * outputs + k.min(outputs - 1)][j];
                if k < outputs && j < args {
                    let expected = point.partials[k][j];
                    compared += 2;
                    for (direction, actual) in [("reverse", bar), ("forward", dot)] {
                        if !derivative_matches(actual, expected, axis.float) {
                            problems.push(format!(
                                "{call}: {direction} d r{k}/d {}: expected {expected}, got \
                                 {actual:e} (relative error {:.1e})",
                                function.arg_names()[j],
                                Dd::new(actual).relative_error(expected)
                            ));
                        }
                    }
                } else if k >= outputs && j < args && bar != 0.0 {
                    problems.push(format!(
                        "{call}: reverse column {k} (a result slot this function does not have) \
                         gives {} the bar {bar:e}, expected 0: derivatives leak between calls",
                        function.arg_names()[j]
                    ));
                } else if j >= args && k < outputs && dot != 0.0 {
                    problems.push(format!(
                        "{call}: forward column {j} (an argument slot this function does not \
                         have) gives r{k} the dot {dot:e}, expected 0: derivatives leak between \
                         calls"
                    ));
                }
            }
        }
    }
    if !problems.is_empty() {
        fail(
            test,
            &format!(
                "{} problem(s) in {} rows and {compared} derivatives",
                problems.len(),
                block.points.len()
            ),
            function,
            axis,
            &format!(
                "  {}\n  recording: {}\n  record directory: {} (sweeps: dg-eval DIR, dg-eval \
                 DIR --forward; vector mode, a column per result/argument slot)",
                problems.join("\n  "),
                recorded.command,
                recorded.dir.display()
            ),
        );
    }
}

/// A tangent from dot mode (printed in the type's full precision) against
/// its reference: as [`derivative_matches`], with the tangent's digits
/// beyond `f64` counted for `long double`.
fn dot_matches(actual: Dd, reference: Dd, float: FloatType) -> bool {
    if reference.hi == 0.0 {
        return actual.hi == 0.0;
    }
    if !actual.hi.is_finite() {
        return false;
    }
    actual.relative_error(reference) <= tolerance(float)
        || (float == FloatType::LongDouble && shows_as(actual.hi, reference.hi))
}

/// `dot::`: each forward-mode run prints the native rows byte for byte; in
/// the run seeding argument slot `j`, result `k` of each call has the
/// tangent d r_k / d arg_j, within the type's bound of the reference and of
/// the recording's forward sweep (`record::`'s, seeded the same way), and
/// tangent 0 for a slot the function does not have.
pub fn check_dot(test: &str, function: &MathFn, axis: Axis) {
    let reference = required(
        test,
        function,
        axis,
        "the reference program failed",
        reference(),
    );
    let native = required(
        test,
        function,
        axis,
        "the native run failed (see native_values::)",
        native_rows(axis),
    );
    let dotted = required(
        test,
        function,
        axis,
        "the forward-mode runs failed",
        dotted(axis),
    );
    let layout = Layout::of(axis.language, axis.float);
    let block = layout.block(function);
    let (args, outputs) = (function.args, function.outputs);
    let mut problems = Vec::new();
    let recorded = recorded(axis)
        .map_err(|e| problems.push(format!("no comparison with dg-eval --forward: {e}")))
        .ok();
    let mut compared = 0;
    for (p, &i) in block.points.iter().enumerate() {
        let call = function.points[i].describe(function);
        let native_row = &native[block.row_at + p].text;
        let point = reference.at(function, i);
        for (j, (rows, dots)) in dotted.rows.iter().zip(&dotted.dots).enumerate() {
            let row = &rows[block.row_at + p].text;
            if row != native_row {
                problems.push(format!(
                    "{call}: the dot-mode run for slot {j} prints {row:?}, natively {native_row:?}"
                ));
            }
            for k in 0..outputs {
                let dot = dots[block.y_at + p * outputs + k];
                if j >= args {
                    if dot.hi != 0.0 {
                        problems.push(format!(
                            "{call}: the tangent on argument slot {j} (which this function does \
                             not have) gives r{k} the tangent {dot}, expected 0: tangents leak \
                             between calls"
                        ));
                    }
                    continue;
                }
                let name = function.arg_names()[j];
                let expected = point.partials[k][j];
                compared += 1;
                if !dot_matches(dot, expected, axis.float) {
                    problems.push(format!(
                        "{call}: dot mode d r{k}/d {name}: expected {expected}, got {dot} \
                         (relative error {:.1e})",
                        dot.relative_error(expected)
                    ));
                }
                if let Some(recorded) = &recorded {
                    let eval = recorded.dots[block.y_at + p * outputs + k][j];
                    if !derivative_matches(eval, dot, axis.float) {
                        problems.push(format!(
                            "{call}: d r{k}/d {name} is {dot} in dot mode, {eval:e} from \
                             dg-eval --forward (relative difference {:.1e})",
                            Dd::new(eval).relative_error(dot)
                        ));
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        fail(
            test,
            &format!(
                "{} problem(s) in {} rows and {compared} tangents",
                problems.len(),
                block.points.len()
            ),
            function,
            axis,
            &format!(
                "  {}\n  dot-mode runs (one per argument slot):\n    {}\n  tangent files: {}",
                problems.join("\n  "),
                dotted.commands.join("\n    "),
                dotted.dir.display()
            ),
        );
    }
}

/// `nowrap_values::`: a recording with `DGAD_MATHWRAP=0` prints the native
/// rows byte for byte.
pub fn check_nowrap_values(test: &str, function: &MathFn, axis: Axis) {
    let native = required(
        test,
        function,
        axis,
        "the native run failed (see native_values::)",
        native_rows(axis),
    );
    let (rows, command, dir) = required(
        test,
        function,
        axis,
        "the recording with DGAD_MATHWRAP=0 failed",
        nowrap_rows(axis),
    );
    let layout = Layout::of(axis.language, axis.float);
    let block = layout.block(function);
    let mut problems = Vec::new();
    for (p, &i) in block.points.iter().enumerate() {
        let (native_row, recorded_row) =
            (&native[block.row_at + p].text, &rows[block.row_at + p].text);
        if native_row != recorded_row {
            problems.push(format!(
                "{}: the recording prints {recorded_row:?}, natively {native_row:?}",
                function.points[i].describe(function)
            ));
        }
    }
    if !problems.is_empty() {
        fail(
            test,
            "the recording without the math wrappers prints other values",
            function,
            axis,
            &format!(
                "  {}\n  recording: {command}\n  record directory (kept): {}",
                problems.join("\n  "),
                dir.display()
            ),
        );
    }
}

// ---------------------------------------------------------------------------
// Checks of the table and the references
// ---------------------------------------------------------------------------

/// The `meta::` tests: checks of the table and of the references, not of
/// dgad.
pub fn meta_tests() -> Vec<(&'static str, fn())> {
    vec![
        ("meta::function_table", check_function_table),
        ("meta::points_in_range", check_points_in_range),
        (
            "meta::reference_partials_match_finite_differences",
            check_reference_differences,
        ),
        ("meta::reference_digamma", check_reference_digamma),
        (
            "meta::fortran_bessel_calls_libm",
            check_fortran_bessel_calls,
        ),
    ]
}

/// The table is well formed and covers issue #4: unique names, shapes,
/// reasons for every absence, at least 20 points per language and type,
/// arguments exact in their types, every C function of the issue in C and
/// C++, every Fortran intrinsic of the issue in some Fortran call.
pub fn check_function_table() {
    let mut problems = Vec::new();
    let mut names = std::collections::HashSet::new();
    for f in functions() {
        let name = f.name;
        if !names.insert(name)
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            problems.push(format!("{name}: not a unique lower-case identifier"));
        }
        if f.about.is_empty() {
            problems.push(format!("{name}: says nothing about its points"));
        }
        if !(1..=3).contains(&f.args) || !(1..=2).contains(&f.outputs) {
            problems.push(format!("{name}: 1 to 3 arguments and 1 or 2 results"));
        }
        if f.value.len() != f.outputs
            || f.partials.len() != f.outputs
            || f.partials.iter().any(|row| row.len() != f.args)
        {
            problems.push(format!(
                "{name}: needs {} value(s) and {} rows of {} partial(s)",
                f.outputs, f.outputs, f.args
            ));
        }
        for language in Language::ALL {
            match f.code(language) {
                Err("") => problems.push(format!(
                    "{name}: no {} call and no reason why",
                    language.label()
                )),
                Err(_) => {}
                Ok(code) => {
                    let text = code.statements().unwrap_or_default();
                    if language == Language::C && !text.contains("{t}") {
                        problems.push(format!(
                            "{name}: the C call must use {{t}}, the type's suffix"
                        ));
                    }
                    if language == Language::Cxx && !text.contains("std::") {
                        problems.push(format!("{name}: the C++ call must use std::"));
                    }
                    for float in FloatType::ALL {
                        let count = f.points_for(language, float).len();
                        if count < 20 {
                            problems.push(format!(
                                "{name}: {count} points for {} {}, at least 20 needed",
                                language.label(),
                                float.label(language)
                            ));
                        }
                    }
                }
            }
        }
        for point in &f.points {
            let exact = point.args.iter().all(|&v| match point.range {
                Range::All => f64::from(v as f32).to_bits() == v.to_bits() && v.is_finite(),
                Range::Wide => v.is_finite(),
            });
            if point.args.len() != f.args || !exact {
                problems.push(format!(
                    "{}: needs {} finite argument(s), exact in float unless the point is wide",
                    point.describe(f),
                    f.args
                ));
            }
        }
    }
    for name in ISSUE_C_FUNCTIONS {
        let covered = functions().iter().any(|f| {
            f.name == *name && f.code(Language::C).is_ok() && f.code(Language::Cxx).is_ok()
        });
        if !covered {
            problems.push(format!("issue #4's {name} is not tested in C and C++"));
        }
    }
    for intrinsic in ISSUE_FORTRAN_INTRINSICS {
        let covered = functions().iter().any(|f| {
            f.code(Language::Fortran)
                .ok()
                .and_then(Code::statements)
                .is_some_and(|s| s.contains(intrinsic))
        });
        if !covered {
            problems.push(format!(
                "issue #4's Fortran {intrinsic} is not in any Fortran call"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the function table has problems:\n  {}",
        problems.join("\n  ")
    );
}

/// Every reference value and partial is finite, and zero or a normal number
/// of the types the point is used with (partials: of `f64`, as the tape
/// holds them), so that the relative comparisons mean something.
pub fn check_points_in_range() {
    let reference = reference().unwrap_or_else(|e| panic!("{e}"));
    let normal = |v: f64, float: FloatType| {
        let (min, max) = match float {
            FloatType::Float => (f64::from(f32::MIN_POSITIVE), f64::from(f32::MAX)),
            _ => (f64::MIN_POSITIVE, f64::MAX),
        };
        v == 0.0 || (min..=max).contains(&v.abs())
    };
    let mut problems = Vec::new();
    for f in functions() {
        for (i, point) in f.points.iter().enumerate() {
            let r = reference.at(f, i);
            let floats: &[FloatType] = match point.range {
                Range::All => &FloatType::ALL,
                Range::Wide => &[FloatType::Double, FloatType::LongDouble],
            };
            for &float in floats {
                for (k, v) in r.values.iter().enumerate() {
                    if !normal(v.hi, float) {
                        problems.push(format!(
                            "{} r{k} = {v} is not a normal {} number",
                            point.describe(f),
                            float.label(Language::C)
                        ));
                    }
                }
            }
            for (k, row) in r.partials.iter().enumerate() {
                for (j, d) in row.iter().enumerate() {
                    if !normal(d.hi, FloatType::Double) {
                        problems.push(format!(
                            "{}: d r{k}/d {} = {d} is not a normal double",
                            point.describe(f),
                            f.arg_names()[j]
                        ));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "points out of range:\n  {}",
        problems.join("\n  ")
    );
}

/// The table's partial derivatives agree with central differences of its
/// value expressions, in quad precision, wherever the differences converge
/// (the two step sizes agree) and the point is not a kink; at least 10
/// points of every function are checked this way.
pub fn check_reference_differences() {
    let reference = reference().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    for f in functions() {
        let mut checked = 0;
        for (i, point) in f.points.iter().enumerate() {
            let r = reference.at(f, i);
            if r.kink {
                continue;
            }
            let mut converged = true;
            for k in 0..f.outputs {
                for j in 0..f.args {
                    let h = difference_step(&point.args, j) / 2.0;
                    let (analytic, coarse, fine) = (
                        r.partials[k][j],
                        r.differences[0][k][j],
                        r.differences[1][k][j],
                    );
                    // Rounding of quad values, divided by the step.
                    let noise = 1e-25 * r.values[k].hi.abs() / h + 1e-300;
                    let scale = analytic.hi.abs().max(fine.hi.abs());
                    if !coarse.hi.is_finite()
                        || !fine.hi.is_finite()
                        || coarse.sub(fine).hi.abs() > 1e-9 * scale + noise
                    {
                        converged = false;
                        continue;
                    }
                    if analytic.sub(fine).hi.abs() > 1e-7 * scale + noise {
                        problems.push(format!(
                            "{}: d r{k}/d {} is {analytic} by the formula {:?}, {fine} by \
                             central differences",
                            point.describe(f),
                            f.arg_names()[j],
                            f.partials[k][j]
                        ));
                    }
                }
            }
            if converged {
                checked += 1;
            }
        }
        if checked < 10 {
            problems.push(format!(
                "{}: only {checked} points where the differences converge; at least 10 needed",
                f.name
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the table's partial derivatives disagree with finite differences (references: {}):\n  {}",
        reference.command,
        problems.join("\n  ")
    );
}

/// The reference program's digamma against known constants, to 1e-30.
pub fn check_reference_digamma() {
    const KNOWN: &[(&str, &str)] = &[
        ("digamma(1)", "-0.577215664901532860606512090082402431042"),
        ("digamma(0.5)", "-1.96351002602142347944097633299875556719"),
        (
            "digamma(-0.5)",
            "0.0364899739785765205590236670012444328068",
        ),
        ("digamma(10)", "2.25175258906672110764745616388585153721"),
        ("digamma(-2.25)", "4.15858356465797227481755768162726375127"),
    ];
    let reference = reference().unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    for (what, known) in KNOWN {
        let known = Dd::parse(known).expect("constants parse");
        match reference.selftest.iter().find(|(w, _)| w == what) {
            Some((_, value)) if value.relative_error(known) <= 1e-30 => {}
            Some((_, value)) => problems.push(format!(
                "{what} = {:e} + {:e}, known {:e} + {:e}",
                value.hi, value.lo, known.hi, known.lo
            )),
            None => problems.push(format!("{what}: not in the reference program's output")),
        }
    }
    assert!(
        problems.is_empty(),
        "digamma in the reference program ({}):\n  {}",
        reference.command,
        problems.join("\n  ")
    );
}

/// gfortran compiles BESSEL_J0/J1/Y0/Y1 into calls of libm's j0/j1/y0/y1
/// (with the f and l suffixes for real(4) and real(10)), at -O0 and -O3:
/// the reason the Fortran tests include them.
pub fn check_fortran_bessel_calls() {
    let source = mathfns_dir().join("src").join("bessel_calls.f90");
    let mut text = String::from("module bessel_calls\ncontains\n");
    for kind in [4, 8, 10] {
        let _ = write!(
            text,
            "  subroutine s{kind}(x, y)\n    real({kind}), intent(in) :: x\n    \
             real({kind}), intent(out) :: y(4)\n    \
             y(1) = bessel_j0(x)\n    y(2) = bessel_j1(x)\n    \
             y(3) = bessel_y0(x)\n    y(4) = bessel_y1(x)\n  end subroutine s{kind}\n"
        );
    }
    text.push_str("end module bessel_calls\n");
    write_if_changed(&source, &text);
    let mut problems = Vec::new();
    for opt in ["-O0", "-O3"] {
        let modules = mathfns_dir().join("modules").join(format!("bessel{opt}"));
        let _ = fs::create_dir_all(&modules);
        let invocation = Invocation::new("gfortran")
            .args([opt, "-S", "-o", "-"])
            .arg(format!("-J{}", modules.display()))
            .arg(&source);
        let outcome = run_native(&invocation, None);
        assert!(
            outcome.status.success(),
            "`{}` failed: {}",
            invocation.display(),
            outcome_text(&outcome)
        );
        let assembly = outcome.stdout_text();
        for base in ["j0", "j1", "y0", "y1"] {
            for suffix in ["f", "", "l"] {
                let symbol = format!("{base}{suffix}@PLT");
                let called = assembly.lines().any(|line| {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    matches!(words.as_slice(), [op, target]
                        if (op.starts_with("call") || op.starts_with("jmp")) && *target == symbol)
                });
                if !called {
                    problems.push(format!("gfortran {opt}: no call of {symbol}"));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "gfortran does not call libm for BESSEL_*: {}",
        problems.join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::{exact_decimal, shows_as, Dd};

    #[test]
    fn decimals_parse_beyond_f64() {
        // 0.1 = 0.1000000000000000055511151231257827... + (-5.55e-18)
        let tenth = Dd::parse("0.1").expect("parses");
        assert_eq!(tenth.hi, 0.1);
        assert!((tenth.lo + 5.551_115_123_125_783e-18).abs() < 1e-32);
        let fortran = Dd::parse("-1.50000000000000000000E-0003").expect("parses");
        assert_eq!(
            (fortran.hi, fortran.lo),
            (-1.5e-3, Dd::parse("-0.0015").unwrap().lo)
        );
        let negative_zero = Dd::parse("-0").expect("parses");
        assert!(negative_zero.hi == 0.0 && negative_zero.hi.is_sign_negative());
        assert_eq!(Dd::parse("-inf").map(|d| d.hi), Some(f64::NEG_INFINITY));
        assert!(Dd::parse("NaN").is_some_and(|d| d.hi.is_nan()));
        assert!(Dd::parse("1.2.3").is_none());
        // A long double 1/3 (64 bits) against quad 1/3: 1.8e-20 apart.
        let third_80 = Dd::parse("0.333333333333333333342").unwrap();
        let third_128 = Dd::parse("0.333333333333333333333333333333333317").unwrap();
        let error = third_80.relative_error(third_128);
        assert!(error > 1e-20 && error < 1e-19, "{error}");
        // Extremes of the exponent.
        assert_eq!(Dd::parse("1e-300").unwrap().hi, 1e-300);
        assert_eq!(Dd::parse("1.7976931348623157e308").unwrap().hi, f64::MAX);
    }

    #[test]
    fn exact_decimals_read_back() {
        for v in [
            0.1f32 as f64,
            1e-30f32 as f64,
            3e38f32 as f64,
            -0.0,
            1e-300,
            1e300,
        ] {
            let text = exact_decimal(v);
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                v.to_bits(),
                "{text}"
            );
            // Dd keeps 36 of the digits.
            let d = Dd::parse(&text).unwrap();
            assert_eq!(d.hi.to_bits(), v.to_bits(), "{text}");
            assert!(d.relative_error(Dd::new(v)) < 1e-30, "{text}");
        }
        assert_eq!(
            exact_decimal(0.1f32 as f64),
            "1.00000001490116119384765625e-1"
        );
    }

    #[test]
    fn sixteen_digits() {
        let third = 1.0f64 / 3.0;
        assert!(shows_as(0.333_333_333_333_333_3, third));
        assert!(!shows_as(0.333_333_333_333_333_4, third));
        // Near the top of a decade 16 digits pin an f64 down: one ulp shows.
        let nine = 9.876_543_210_987_654;
        assert!(shows_as(nine, nine));
        assert!(!shows_as(f64::from_bits(nine.to_bits() + 1), nine));
    }
}
