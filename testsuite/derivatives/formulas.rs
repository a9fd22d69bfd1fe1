//! The formulas of the derivative matrix, one definition each: code per
//! language, inputs, expected outputs and the Jacobian derived by hand.
//!
//! C and C++ snippets use `real` (the type under test), `R(0.5)` for a
//! literal of that type, and `FABS`, `FMIN`, `FMAX`, `FMA`, `SQRT`,
//! `COPYSIGN`, `FLOOR`, `CEIL`, `POWI`, `NOINLINE`, `VA_REAL` and (C only)
//! `complex_real`, defined per type by the generator in
//! `testsuite/src/derivatives.rs`. Fortran snippets use kind `wp`, the
//! kinds `int8`/`int32`/`int64`, and `c_fma` (libm's `fma` for kind `wp`).
//! Helper names start with the formula's name, since all formulas share one
//! source file. `testsuite/derivatives/README.md` says how to add one.

use super::Snippet::{Absent, SameAsC};
use super::{code, code_with, Formula};

/// Defaults of the fields most formulas leave alone. A language left
/// `Absent("")` fails the table check: every absence needs a reason.
const BASE: Formula = Formula {
    name: "",
    about: "",
    inputs: &[],
    outputs: &[],
    c: Absent(""),
    cxx: SameAsC,
    fortran: Absent(""),
    value: |_| Vec::new(),
    jacobian: |_| Vec::new(),
    smooth: true,
};

/// Two inputs most formulas share: exact in every type, different
/// magnitudes and signs.
const AB: &[(&str, f64)] = &[("a", 1.5), ("b", -2.25)];
const ABC: &[(&str, f64)] = &[("a", 1.5), ("b", -2.25), ("c", 0.75)];
const A: &[(&str, f64)] = &[("a", 1.5)];
const Y: &[&str] = &["y"];

/// Derivgrind's autovectorisation test: `cs[i] = i*a OP b` over 16
/// elements in a vectorisable loop, then summed in order.
macro_rules! vectorised_binary {
    ($name:literal, $op:tt, $value:expr, $jacobian:expr) => {
        Formula {
            name: $name,
            about: concat!(
                "elementwise ",
                stringify!($op),
                " of two 16-element arrays in a vectorisable loop, then a sum"
            ),
            inputs: &[("a", 10.0), ("b", -1.0)],
            outputs: Y,
            c: code(concat!(
                "real xs[16], bs[16], cs[16], y = R(0.0);
                for (int i = 0; i < 16; i++) { xs[i] = (real)i * a; bs[i] = b; }
                for (int i = 0; i < 16; i++) cs[i] = xs[i] ",
                stringify!($op),
                " bs[i];
                for (int i = 0; i < 16; i++) y += cs[i];"
            )),
            fortran: code(concat!(
                "real(wp) :: xs(16), bs(16), cs(16), y
                integer :: i
                do i = 1, 16
                xs(i) = real(i - 1, wp) * a
                bs(i) = b
                end do
                cs = xs ",
                stringify!($op),
                " bs
                y = 0.0_wp
                do i = 1, 16
                y = y + cs(i)
                end do"
            )),
            value: $value,
            jacobian: $jacobian,
            ..BASE
        }
    };
}

/// `[a, b, c, a*b]` sorted, each with its gradient in (a, b, c).
fn sorted_with_gradients(x: &[f64]) -> Vec<(f64, Vec<f64>)> {
    let (a, b, c) = (x[0], x[1], x[2]);
    let mut elements = vec![
        (a, vec![1.0, 0.0, 0.0]),
        (b, vec![0.0, 1.0, 0.0]),
        (c, vec![0.0, 0.0, 1.0]),
        (a * b, vec![b, a, 0.0]),
    ];
    elements.sort_by(|p, q| p.0.total_cmp(&q.0));
    elements
}

/// The sign pattern of `vec_abs` and `vec_neg`: +1 for even i, -1 for odd.
fn alternating(i: usize) -> f64 {
    if i % 2 == 1 {
        -1.0
    } else {
        1.0
    }
}

/// `A[i][j] = (i - j)*a + 1` and `v[j] = b*(j + 1) + c` of `matvec_inputs`.
fn matvec_entries(x: &[f64], i: usize, j: usize) -> (f64, f64) {
    let (a, b, c) = (x[0], x[1], x[2]);
    let offset = i as f64 - j as f64;
    (offset * a + 1.0, b * (j as f64 + 1.0) + c)
}

/// `indexed_gather_scatter`: y = sum_i x[p(i)] 2 x[q(i)] with p(i) = 7i mod 32,
/// q its inverse, x[k] = a (k + 1) + b; returns (y, dy/da, dy/db).
fn indexed_gather_scatter(v: &[f64]) -> (f64, f64, f64) {
    let (a, b) = (v[0], v[1]);
    let p = |i: usize| (7 * i) % 32;
    let mut q = [0usize; 32];
    for j in 0..32 {
        q[p(j)] = j;
    }
    let x = |k: usize| a * (k as f64 + 1.0) + b;
    let (mut y, mut da, mut db) = (0.0, 0.0, 0.0);
    for (i, &s) in q.iter().enumerate() {
        let g = p(i);
        y += x(g) * 2.0 * x(s);
        da += 2.0 * ((g as f64 + 1.0) * x(s) + x(g) * (s as f64 + 1.0));
        db += 2.0 * (x(s) + x(g));
    }
    (y, da, db)
}

/// The constant matrix of `matvec_const`.
const MATRIX: [[f64; 3]; 3] = [[2.0, -1.0, 0.5], [1.0, 3.0, -2.0], [-0.5, 0.25, 4.0]];

/// Shared by `if_branch` and `else_branch`, which differ in the input.
const IF_ELSE_C: &str = "real y;
    if (a < R(1.0)) y = R(2.0) + a; else y = R(2.0) * a;";
const IF_ELSE_FORTRAN: &str = "real(wp) :: y
    if (a < 1.0_wp) then
    y = 2.0_wp + a
    else
    y = 2.0_wp * a
    end if";
const TERNARY_C: &str = "real y = (a > R(-1.0)) ? R(3.0) * a : a * a;";
const TERNARY_FORTRAN: &str = "real(wp) :: y
    y = merge(3.0_wp * a, a * a, a > -1.0_wp)";
const CLAMP_C: &str = "real y = a < R(-1.0) ? R(-1.0) : (a > R(1.0) ? R(1.0) : a);";
const CLAMP_FORTRAN: &str = "real(wp) :: y
    if (a < -1.0_wp) then
    y = -1.0_wp
    else if (a > 1.0_wp) then
    y = 1.0_wp
    else
    y = a
    end if";
const NEG_C: &str = "real y = -a;";
const NEG_FORTRAN: &str = "real(wp) :: y
    y = -a";
const FABS_C: &str = "real y = FABS(a);";
const FABS_FORTRAN: &str = "real(wp) :: y
    y = abs(a)";
const FOUR_OUTPUTS: &[&str] = &["y0", "y1", "y2", "y3"];

/// The table.
pub static FORMULAS: &[Formula] = &[
    // --- The four operations, constants on either side ---------------------
    Formula {
        name: "add",
        about: "a + b",
        inputs: AB,
        outputs: Y,
        c: code("real y = a + b;"),
        fortran: code("real(wp) :: y\n y = a + b"),
        value: |x| vec![x[0] + x[1]],
        jacobian: |_| vec![vec![1.0, 1.0]],
        ..BASE
    },
    Formula {
        name: "add_const_left",
        about: "0.3 + a",
        inputs: A,
        outputs: Y,
        c: code("real y = R(0.3) + a;"),
        fortran: code("real(wp) :: y\n y = 0.3_wp + a"),
        value: |x| vec![0.3 + x[0]],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "add_const_right",
        about: "a + 0.3",
        inputs: A,
        outputs: Y,
        c: code("real y = a + R(0.3);"),
        fortran: code("real(wp) :: y\n y = a + 0.3_wp"),
        value: |x| vec![x[0] + 0.3],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "sub",
        about: "a - b",
        inputs: AB,
        outputs: Y,
        c: code("real y = a - b;"),
        fortran: code("real(wp) :: y\n y = a - b"),
        value: |x| vec![x[0] - x[1]],
        jacobian: |_| vec![vec![1.0, -1.0]],
        ..BASE
    },
    Formula {
        name: "sub_const_left",
        about: "0.3 - a",
        inputs: A,
        outputs: Y,
        c: code("real y = R(0.3) - a;"),
        fortran: code("real(wp) :: y\n y = 0.3_wp - a"),
        value: |x| vec![0.3 - x[0]],
        jacobian: |_| vec![vec![-1.0]],
        ..BASE
    },
    Formula {
        name: "sub_const_right",
        about: "a - 0.5",
        inputs: A,
        outputs: Y,
        c: code("real y = a - R(0.5);"),
        fortran: code("real(wp) :: y\n y = a - 0.5_wp"),
        value: |x| vec![x[0] - 0.5],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "mul",
        about: "a * b",
        inputs: AB,
        outputs: Y,
        c: code("real y = a * b;"),
        fortran: code("real(wp) :: y\n y = a * b"),
        value: |x| vec![x[0] * x[1]],
        jacobian: |x| vec![vec![x[1], x[0]]],
        ..BASE
    },
    Formula {
        name: "mul_const_left",
        about: "0.3 * a",
        inputs: A,
        outputs: Y,
        c: code("real y = R(0.3) * a;"),
        fortran: code("real(wp) :: y\n y = 0.3_wp * a"),
        value: |x| vec![0.3 * x[0]],
        jacobian: |_| vec![vec![0.3]],
        ..BASE
    },
    Formula {
        name: "mul_const_right",
        about: "a * -2.5",
        inputs: A,
        outputs: Y,
        c: code("real y = a * R(-2.5);"),
        fortran: code("real(wp) :: y\n y = a * (-2.5_wp)"),
        value: |x| vec![x[0] * -2.5],
        jacobian: |_| vec![vec![-2.5]],
        ..BASE
    },
    Formula {
        name: "div",
        about: "a / b",
        inputs: AB,
        outputs: Y,
        c: code("real y = a / b;"),
        fortran: code("real(wp) :: y\n y = a / b"),
        value: |x| vec![x[0] / x[1]],
        jacobian: |x| vec![vec![1.0 / x[1], -x[0] / (x[1] * x[1])]],
        ..BASE
    },
    Formula {
        name: "div_const_left",
        about: "0.3 / a",
        inputs: A,
        outputs: Y,
        c: code("real y = R(0.3) / a;"),
        fortran: code("real(wp) :: y\n y = 0.3_wp / a"),
        value: |x| vec![0.3 / x[0]],
        jacobian: |x| vec![vec![-0.3 / (x[0] * x[0])]],
        ..BASE
    },
    Formula {
        name: "div_const_right",
        about: "a / 0.5 (compilers multiply by 2 instead)",
        inputs: A,
        outputs: Y,
        c: code("real y = a / R(0.5);"),
        fortran: code("real(wp) :: y\n y = a / 0.5_wp"),
        value: |x| vec![x[0] / 0.5],
        jacobian: |_| vec![vec![2.0]],
        ..BASE
    },
    Formula {
        name: "div_const_inexact",
        about: "a / 3 (a real division: 1/3 is not exact)",
        inputs: A,
        outputs: Y,
        c: code("real y = a / R(3.0);"),
        fortran: code("real(wp) :: y\n y = a / 3.0_wp"),
        value: |x| vec![x[0] / 3.0],
        jacobian: |_| vec![vec![1.0 / 3.0]],
        ..BASE
    },
    Formula {
        name: "square",
        about: "a * a, one value as both operands",
        inputs: A,
        outputs: Y,
        c: code("real y = a * a;"),
        fortran: code("real(wp) :: y\n y = a * a"),
        value: |x| vec![x[0] * x[0]],
        jacobian: |x| vec![vec![2.0 * x[0]]],
        ..BASE
    },
    Formula {
        name: "sub_self",
        about: "a - a: partials that cancel",
        inputs: A,
        outputs: Y,
        c: code("real y = a - a;"),
        fortran: code("real(wp) :: y\n y = a - a"),
        value: |_| vec![0.0],
        jacobian: |_| vec![vec![0.0]],
        ..BASE
    },
    Formula {
        name: "div_self",
        about: "a / a: partials that cancel",
        inputs: A,
        outputs: Y,
        c: code("real y = a / a;"),
        fortran: code("real(wp) :: y\n y = a / a"),
        value: |_| vec![1.0],
        jacobian: |_| vec![vec![0.0]],
        ..BASE
    },
    Formula {
        name: "reciprocal",
        about: "1 / a",
        inputs: A,
        outputs: Y,
        c: code("real y = R(1.0) / a;"),
        fortran: code("real(wp) :: y\n y = 1.0_wp / a"),
        value: |x| vec![1.0 / x[0]],
        jacobian: |x| vec![vec![-1.0 / (x[0] * x[0])]],
        ..BASE
    },
    Formula {
        name: "rational",
        about: "(a + b) / (a - b)",
        inputs: AB,
        outputs: Y,
        c: code("real y = (a + b) / (a - b);"),
        fortran: code("real(wp) :: y\n y = (a + b) / (a - b)"),
        value: |x| vec![(x[0] + x[1]) / (x[0] - x[1])],
        jacobian: |x| {
            let (a, b) = (x[0], x[1]);
            let d2 = (a - b) * (a - b);
            vec![vec![-2.0 * b / d2, 2.0 * a / d2]]
        },
        ..BASE
    },
    Formula {
        name: "long_expression",
        about: "(a*b - 1.5) * (a + b*b) / (2 + a*a)",
        inputs: AB,
        outputs: Y,
        c: code("real y = (a * b - R(1.5)) * (a + b * b) / (R(2.0) + a * a);"),
        fortran: code("real(wp) :: y\n y = (a * b - 1.5_wp) * (a + b * b) / (2.0_wp + a * a)"),
        value: |x| {
            let (a, b) = (x[0], x[1]);
            vec![(a * b - 1.5) * (a + b * b) / (2.0 + a * a)]
        },
        jacobian: |x| {
            // y = u v / w with u = ab - 1.5, v = a + b², w = 2 + a².
            let (a, b) = (x[0], x[1]);
            let (u, v, w) = (a * b - 1.5, a + b * b, 2.0 + a * a);
            vec![vec![
                (b * v + u) / w - u * v * 2.0 * a / (w * w),
                (a * v + u * 2.0 * b) / w,
            ]]
        },
        ..BASE
    },
    Formula {
        name: "multi_output",
        about: "three outputs of two inputs: a*b, a + b, a/b",
        inputs: AB,
        outputs: &["y", "z", "w"],
        c: code("real y = a * b, z = a + b, w = a / b;"),
        fortran: code("real(wp) :: y, z, w\n y = a * b\n z = a + b\n w = a / b"),
        value: |x| vec![x[0] * x[1], x[0] + x[1], x[0] / x[1]],
        jacobian: |x| {
            let (a, b) = (x[0], x[1]);
            vec![vec![b, a], vec![1.0, 1.0], vec![1.0 / b, -a / (b * b)]]
        },
        ..BASE
    },
    Formula {
        name: "passive_output",
        about: "an output that is a constant, beside an active one",
        inputs: AB,
        outputs: &["y", "z"],
        c: code("real y = R(2.5), z = a * b;"),
        fortran: code("real(wp) :: y, z\n y = 2.5_wp\n z = a * b"),
        value: |x| vec![2.5, x[0] * x[1]],
        jacobian: |x| vec![vec![0.0, 0.0], vec![x[1], x[0]]],
        ..BASE
    },
    Formula {
        name: "unused_input",
        about: "an input that no output depends on",
        inputs: AB,
        outputs: Y,
        c: code("real y = a * R(2.0);"),
        fortran: code("real(wp) :: y\n y = a * 2.0_wp"),
        value: |x| vec![2.0 * x[0]],
        jacobian: |_| vec![vec![2.0, 0.0]],
        ..BASE
    },
    Formula {
        name: "input_as_output",
        about: "an input marked as output unchanged",
        inputs: A,
        outputs: Y,
        c: code("real y = a;"),
        fortran: code("real(wp) :: y\n y = a"),
        value: |x| vec![x[0]],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "overwrite",
        about: "one variable overwritten in turn: ((a*b) + a)^2",
        inputs: AB,
        outputs: Y,
        c: code("real y = a;\n y = y * b;\n y = y + a;\n y = y * y;"),
        fortran: code("real(wp) :: y\n y = a\n y = y * b\n y = y + a\n y = y * y"),
        value: |x| {
            let t = x[0] * x[1] + x[0];
            vec![t * t]
        },
        jacobian: |x| {
            let (a, b) = (x[0], x[1]);
            let t = a * b + a;
            vec![vec![2.0 * t * (b + 1.0), 2.0 * t * a]]
        },
        ..BASE
    },
    Formula {
        name: "sqrt",
        about: "square root",
        inputs: &[("a", 2.25)],
        outputs: Y,
        c: code("real y = SQRT(a);"),
        fortran: code("real(wp) :: y\n y = sqrt(a)"),
        value: |x| vec![x[0].sqrt()],
        jacobian: |x| vec![vec![0.5 / x[0].sqrt()]],
        ..BASE
    },
    Formula {
        name: "sqrt_norm",
        about: "sqrt(a*a + b*b)",
        inputs: &[("a", 3.0), ("b", 4.0)],
        outputs: Y,
        c: code("real y = SQRT(a * a + b * b);"),
        fortran: code("real(wp) :: y\n y = sqrt(a * a + b * b)"),
        value: |x| vec![(x[0] * x[0] + x[1] * x[1]).sqrt()],
        jacobian: |x| {
            let r = (x[0] * x[0] + x[1] * x[1]).sqrt();
            vec![vec![x[0] / r, x[1] / r]]
        },
        ..BASE
    },
    // --- Negation and signed zeros -----------------------------------------
    Formula {
        name: "neg",
        about: "-a (a sign-bit xor in SSE code, fchs on x87)",
        inputs: A,
        outputs: Y,
        c: code(NEG_C),
        fortran: code(NEG_FORTRAN),
        value: |x| vec![-x[0]],
        jacobian: |_| vec![vec![-1.0]],
        ..BASE
    },
    Formula {
        name: "neg_zero",
        about: "-a of a = +0.0: the result is -0.0",
        inputs: &[("a", 0.0)],
        outputs: Y,
        c: code(NEG_C),
        fortran: code(NEG_FORTRAN),
        value: |x| vec![-x[0]],
        jacobian: |_| vec![vec![-1.0]],
        ..BASE
    },
    Formula {
        name: "neg_negative_zero",
        about: "-a of a = -0.0: the result is +0.0",
        inputs: &[("a", -0.0)],
        outputs: Y,
        c: code(NEG_C),
        fortran: code(NEG_FORTRAN),
        value: |x| vec![-x[0]],
        jacobian: |_| vec![vec![-1.0]],
        ..BASE
    },
    Formula {
        name: "neg_twice_zero",
        about: "-(-a) through a function, a = 0.0 (Derivgrind's negative_0)",
        inputs: &[("a", 0.0)],
        outputs: Y,
        c: code_with(
            "static NOINLINE real neg_twice_zero_minus(real v) { return -v; }",
            "real y = neg_twice_zero_minus(neg_twice_zero_minus(a));",
        ),
        fortran: code_with(
            "function neg_twice_zero_minus(v) result(r)
            real(wp), intent(in) :: v
            real(wp) :: r
            r = -v
            end function neg_twice_zero_minus",
            "real(wp) :: y
            y = neg_twice_zero_minus(neg_twice_zero_minus(a))",
        ),
        value: |x| vec![x[0]],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "mul_negative_zero",
        about: "-0.0 * b: a signed-zero product",
        inputs: &[("a", -0.0), ("b", 3.0)],
        outputs: Y,
        c: code("real y = a * b;"),
        fortran: code("real(wp) :: y\n y = a * b"),
        value: |x| vec![x[0] * x[1]],
        jacobian: |x| vec![vec![x[1], x[0]]],
        ..BASE
    },
    // --- fabs and copysign (bit masks) --------------------------------------
    Formula {
        name: "fabs_positive",
        about: "fabs of a positive value (builtin: an and-mask)",
        inputs: A,
        outputs: Y,
        c: code(FABS_C),
        fortran: code(FABS_FORTRAN),
        value: |x| vec![x[0].abs()],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "fabs_negative",
        about: "fabs of a negative value",
        inputs: &[("a", -2.25)],
        outputs: Y,
        c: code(FABS_C),
        fortran: code(FABS_FORTRAN),
        value: |x| vec![x[0].abs()],
        jacobian: |_| vec![vec![-1.0]],
        ..BASE
    },
    Formula {
        name: "fabs_expression",
        about: "fabs(a*b) + fabs(b)",
        inputs: AB,
        outputs: Y,
        c: code("real y = FABS(a * b) + FABS(b);"),
        fortran: code("real(wp) :: y\n y = abs(a * b) + abs(b)"),
        value: |x| vec![(x[0] * x[1]).abs() + x[1].abs()],
        jacobian: |x| {
            let (a, b) = (x[0], x[1]);
            let s = (a * b).signum();
            vec![vec![s * b, s * a + b.signum()]]
        },
        ..BASE
    },
    Formula {
        name: "copysign",
        about: "copysign(a, b) and copysign(b, a) (and/andn/or masks)",
        inputs: AB,
        outputs: &["y", "z"],
        c: code("real y = COPYSIGN(a, b), z = COPYSIGN(b, a);"),
        fortran: code("real(wp) :: y, z\n y = sign(a, b)\n z = sign(b, a)"),
        value: |x| vec![x[0].copysign(x[1]), x[1].copysign(x[0])],
        jacobian: |x| {
            let s = x[0].signum() * x[1].signum();
            vec![vec![s, 0.0], vec![0.0, s]]
        },
        ..BASE
    },
    // --- min and max -----------------------------------------------------------
    Formula {
        name: "fmin",
        about: "fmin(a, b) (Fortran min)",
        inputs: AB,
        outputs: Y,
        c: code("real y = FMIN(a, b);"),
        fortran: code("real(wp) :: y\n y = min(a, b)"),
        value: |x| vec![x[0].min(x[1])],
        jacobian: |_| vec![vec![0.0, 1.0]],
        ..BASE
    },
    Formula {
        name: "fmax",
        about: "fmax(a, b) (Fortran max)",
        inputs: AB,
        outputs: Y,
        c: code("real y = FMAX(a, b);"),
        fortran: code("real(wp) :: y\n y = max(a, b)"),
        value: |x| vec![x[0].max(x[1])],
        jacobian: |_| vec![vec![1.0, 0.0]],
        ..BASE
    },
    Formula {
        name: "ternary_min_max",
        about: "a < b ? a : b and a > b ? a : b (minsd/maxsd patterns)",
        inputs: AB,
        outputs: &["y", "z"],
        c: code("real y = a < b ? a : b;\n real z = a > b ? a : b;"),
        fortran: code("real(wp) :: y, z\n y = merge(a, b, a < b)\n z = merge(a, b, a > b)"),
        value: |x| vec![x[0].min(x[1]), x[0].max(x[1])],
        jacobian: |_| vec![vec![0.0, 1.0], vec![1.0, 0.0]],
        ..BASE
    },
    Formula {
        name: "std_min_max",
        about: "std::min(a*b, b) and std::max(a, b)",
        inputs: AB,
        outputs: &["y", "z"],
        c: Absent("std::min/std::max are C++; fmin, fmax and ternary_min_max cover C"),
        cxx: code("real y = std::min(a * b, b);\n real z = std::max(a, b);"),
        fortran: Absent("C++ only; fmin and fmax cover Fortran's min and max"),
        value: |x| vec![(x[0] * x[1]).min(x[1]), x[0].max(x[1])],
        jacobian: |x| vec![vec![x[1], x[0]], vec![1.0, 0.0]],
        ..BASE
    },
    Formula {
        name: "min_max_nested",
        about: "fmin(fmax(a, b), c) and fmax(a*c, b)",
        inputs: ABC,
        outputs: &["y", "z"],
        c: code("real y = FMIN(FMAX(a, b), c);\n real z = FMAX(a * c, b);"),
        fortran: code("real(wp) :: y, z\n y = min(max(a, b), c)\n z = max(a * c, b)"),
        value: |x| vec![x[0].max(x[1]).min(x[2]), (x[0] * x[2]).max(x[1])],
        jacobian: |x| vec![vec![0.0, 0.0, 1.0], vec![x[2], 0.0, x[0]]],
        ..BASE
    },
    // --- Comparisons and branches ----------------------------------------------
    Formula {
        name: "if_branch",
        about: "if (a < 1) 2 + a else 2a, taking the if branch",
        inputs: &[("a", 0.5)],
        outputs: Y,
        c: code(IF_ELSE_C),
        fortran: code(IF_ELSE_FORTRAN),
        value: |x| vec![2.0 + x[0]],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "else_branch",
        about: "if (a < 1) 2 + a else 2a, taking the else branch",
        inputs: A,
        outputs: Y,
        c: code(IF_ELSE_C),
        fortran: code(IF_ELSE_FORTRAN),
        value: |x| vec![2.0 * x[0]],
        jacobian: |_| vec![vec![2.0]],
        ..BASE
    },
    Formula {
        name: "ternary_true",
        about: "a > -1 ? 3a : a*a, true",
        inputs: &[("a", 10.0)],
        outputs: Y,
        c: code(TERNARY_C),
        fortran: code(TERNARY_FORTRAN),
        value: |x| vec![3.0 * x[0]],
        jacobian: |_| vec![vec![3.0]],
        ..BASE
    },
    Formula {
        name: "ternary_false",
        about: "a > -1 ? 3a : a*a, false",
        inputs: &[("a", -10.0)],
        outputs: Y,
        c: code(TERNARY_C),
        fortran: code(TERNARY_FORTRAN),
        value: |x| vec![x[0] * x[0]],
        jacobian: |x| vec![vec![2.0 * x[0]]],
        ..BASE
    },
    Formula {
        name: "branch_on_product",
        about: "if (a*b > 0) a/b else b/a",
        inputs: AB,
        outputs: Y,
        c: code("real y;\n if (a * b > R(0.0)) y = a / b; else y = b / a;"),
        fortran: code(
            "real(wp) :: y
            if (a * b > 0.0_wp) then
            y = a / b
            else
            y = b / a
            end if",
        ),
        value: |x| vec![x[1] / x[0]],
        jacobian: |x| vec![vec![-x[1] / (x[0] * x[0]), 1.0 / x[0]]],
        ..BASE
    },
    Formula {
        name: "clamp_inside",
        about: "clamp to [-1, 1] of a value inside",
        inputs: &[("a", 0.75)],
        outputs: Y,
        c: code(CLAMP_C),
        fortran: code(CLAMP_FORTRAN),
        value: |x| vec![x[0]],
        jacobian: |_| vec![vec![1.0]],
        ..BASE
    },
    Formula {
        name: "clamp_above",
        about: "clamp to [-1, 1] of a value above: a constant result",
        inputs: A,
        outputs: Y,
        c: code(CLAMP_C),
        fortran: code(CLAMP_FORTRAN),
        value: |_| vec![1.0],
        jacobian: |_| vec![vec![0.0]],
        ..BASE
    },
    Formula {
        name: "select_both_computed",
        about: "a > b ? a*b : a + b with both arms computed (cmov/blend)",
        inputs: AB,
        outputs: Y,
        c: code("real p = a * b, s = a + b;\n real y = (a > b) ? p : s;"),
        fortran: code("real(wp) :: p, s, y\n p = a * b\n s = a + b\n y = merge(p, s, a > b)"),
        value: |x| vec![x[0] * x[1]],
        jacobian: |x| vec![vec![x[1], x[0]]],
        ..BASE
    },
    Formula {
        name: "compare_equal",
        about: "a == b ? a*b : a - b with a == b",
        inputs: &[("a", 1.5), ("b", 1.5)],
        outputs: Y,
        c: code("real y = (a == b) ? a * b : a - b;"),
        fortran: code(
            "real(wp) :: y
            if (a == b) then
            y = a * b
            else
            y = a - b
            end if",
        ),
        value: |x| vec![if x[0] == x[1] { x[0] * x[1] } else { x[0] - x[1] }],
        jacobian: |x| vec![vec![x[1], x[0]]],
        // The derivative is the taken branch's; finite differences leave it.
        smooth: false,
        ..BASE
    },
    // --- Loops -------------------------------------------------------------------
    Formula {
        name: "for_loop_sum",
        about: "y += a, 10 times",
        inputs: &[("a", 2.0)],
        outputs: Y,
        c: code("real y = R(0.0);\n for (int i = 0; i < 10; i++) y += a;"),
        fortran: code(
            "real(wp) :: y
            integer :: i
            y = 0.0_wp
            do i = 1, 10
            y = y + a
            end do",
        ),
        value: |x| vec![10.0 * x[0]],
        jacobian: |_| vec![vec![10.0]],
        ..BASE
    },
    Formula {
        name: "for_loop_product",
        about: "y *= a, 10 times",
        inputs: &[("a", 2.0)],
        outputs: Y,
        c: code("real y = R(1.0);\n for (int i = 0; i < 10; i++) y *= a;"),
        fortran: code(
            "real(wp) :: y
            integer :: i
            y = 1.0_wp
            do i = 1, 10
            y = y * a
            end do",
        ),
        value: |x| vec![x[0].powi(10)],
        jacobian: |x| vec![vec![10.0 * x[0].powi(9)]],
        ..BASE
    },
    Formula {
        name: "while_loop",
        about: "while (y < 19) y += a",
        inputs: &[("a", 2.0)],
        outputs: Y,
        c: code("real y = R(0.0);\n while (y < R(19.0)) y += a;"),
        fortran: code(
            "real(wp) :: y
            y = 0.0_wp
            do while (y < 19.0_wp)
            y = y + a
            end do",
        ),
        value: |x| vec![10.0 * x[0]],
        jacobian: |_| vec![vec![10.0]],
        ..BASE
    },
    Formula {
        name: "do_while_loop",
        about: "do y *= a while (y < 1000)",
        inputs: &[("a", 2.0)],
        outputs: Y,
        c: code("real y = R(1.0);\n do y *= a; while (y < R(1000.0));"),
        fortran: code(
            "real(wp) :: y
            y = 1.0_wp
            do
            y = y * a
            if (y >= 1000.0_wp) exit
            end do",
        ),
        value: |x| vec![x[0].powi(10)],
        jacobian: |x| vec![vec![10.0 * x[0].powi(9)]],
        ..BASE
    },
    Formula {
        name: "horner",
        about: "1 + 2a + 3a^2 + 4a^3 + 5a^4 + 6a^5 by Horner's rule (contracts to FMAs)",
        inputs: &[("a", 0.5)],
        outputs: Y,
        c: code("real y = R(6.0);\n for (int i = 4; i >= 0; i--) y = y * a + (real)(i + 1);"),
        fortran: code(
            "real(wp) :: y
            integer :: i
            y = 6.0_wp
            do i = 4, 0, -1
            y = y * a + real(i + 1, wp)
            end do",
        ),
        value: |x| vec![(0..6).map(|k| (k + 1) as f64 * x[0].powi(k)).sum()],
        jacobian: |x| {
            vec![vec![(1..6)
                .map(|k| ((k + 1) * k) as f64 * x[0].powi(k - 1))
                .sum()]]
        },
        ..BASE
    },
    Formula {
        name: "nested_loops",
        about: "sum over i < 4, j < 3 of (i*a + j*b) * a",
        inputs: AB,
        outputs: Y,
        c: code(
            "real y = R(0.0);
            for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++)
            y += ((real)i * a + (real)j * b) * a;",
        ),
        fortran: code(
            "real(wp) :: y
            integer :: i, j
            y = 0.0_wp
            do i = 0, 3
            do j = 0, 2
            y = y + (real(i, wp) * a + real(j, wp) * b) * a
            end do
            end do",
        ),
        // 18 a^2 + 12 a b
        value: |x| vec![18.0 * x[0] * x[0] + 12.0 * x[0] * x[1]],
        jacobian: |x| vec![vec![36.0 * x[0] + 12.0 * x[1], 12.0 * x[0]]],
        ..BASE
    },
    Formula {
        name: "loop_early_exit",
        about: "y += i*a until y > 20 (a data-dependent break)",
        inputs: A,
        outputs: Y,
        c: code(
            "real y = R(0.0);
            for (int i = 0; i < 100; i++) { y += a * (real)i; if (y > R(20.0)) break; }",
        ),
        fortran: code(
            "real(wp) :: y
            integer :: i
            y = 0.0_wp
            do i = 0, 99
            y = y + a * real(i, wp)
            if (y > 20.0_wp) exit
            end do",
        ),
        // The loop stops after i = 5: y = (0 + 1 + ... + 5) a.
        value: |x| vec![15.0 * x[0]],
        jacobian: |_| vec![vec![15.0]],
        ..BASE
    },
    // --- Recursion ------------------------------------------------------------------
    Formula {
        name: "recursion_sum",
        about: "f(n, x) = x + f(n-1, x), f(0, x) = 0; f(10, a)",
        inputs: &[("a", 2.0)],
        outputs: Y,
        c: code_with(
            "static real recursion_sum_f(int n, real x)
            { return n == 0 ? R(0.0) : x + recursion_sum_f(n - 1, x); }",
            "real y = recursion_sum_f(10, a);",
        ),
        fortran: code_with(
            "recursive function recursion_sum_f(n, x) result(r)
            integer, intent(in) :: n
            real(wp), intent(in) :: x
            real(wp) :: r
            if (n == 0) then
            r = 0.0_wp
            else
            r = x + recursion_sum_f(n - 1, x)
            end if
            end function recursion_sum_f",
            "real(wp) :: y\n y = recursion_sum_f(10, a)",
        ),
        value: |x| vec![10.0 * x[0]],
        jacobian: |_| vec![vec![10.0]],
        ..BASE
    },
    Formula {
        name: "recursion_product",
        about: "f(n, x) = x * f(n-1, x), f(0, x) = 1; f(5, a)",
        inputs: A,
        outputs: Y,
        c: code_with(
            "static real recursion_product_f(int n, real x)
            { return n == 0 ? R(1.0) : x * recursion_product_f(n - 1, x); }",
            "real y = recursion_product_f(5, a);",
        ),
        fortran: code_with(
            "recursive function recursion_product_f(n, x) result(r)
            integer, intent(in) :: n
            real(wp), intent(in) :: x
            real(wp) :: r
            if (n == 0) then
            r = 1.0_wp
            else
            r = x * recursion_product_f(n - 1, x)
            end if
            end function recursion_product_f",
            "real(wp) :: y\n y = recursion_product_f(5, a)",
        ),
        value: |x| vec![x[0].powi(5)],
        jacobian: |x| vec![vec![5.0 * x[0].powi(4)]],
        ..BASE
    },
    Formula {
        name: "recursion_fibonacci",
        about: "f(n, u, v) = f(n-1, v, u + v), f(0, u, v) = u; f(6, a, b) = 5a + 8b",
        inputs: AB,
        outputs: Y,
        c: code_with(
            "static real recursion_fibonacci_f(int n, real u, real v)
            { return n == 0 ? u : recursion_fibonacci_f(n - 1, v, u + v); }",
            "real y = recursion_fibonacci_f(6, a, b);",
        ),
        fortran: code_with(
            "recursive function recursion_fibonacci_f(n, u, v) result(r)
            integer, intent(in) :: n
            real(wp), intent(in) :: u, v
            real(wp) :: r
            if (n == 0) then
            r = u
            else
            r = recursion_fibonacci_f(n - 1, v, u + v)
            end if
            end function recursion_fibonacci_f",
            "real(wp) :: y\n y = recursion_fibonacci_f(6, a, b)",
        ),
        value: |x| vec![5.0 * x[0] + 8.0 * x[1]],
        jacobian: |_| vec![vec![5.0, 8.0]],
        ..BASE
    },
    Formula {
        name: "mutual_recursion",
        about: "ping(n, x) = pong(n-1, 2x), pong(n, x) = ping(n-1, x + 1); ping(4, a)",
        inputs: A,
        outputs: Y,
        c: code_with(
            "static real mutual_recursion_pong(int n, real x);
            static real mutual_recursion_ping(int n, real x)
            { return n == 0 ? x : mutual_recursion_pong(n - 1, R(2.0) * x); }
            static real mutual_recursion_pong(int n, real x)
            { return n == 0 ? x : mutual_recursion_ping(n - 1, x + R(1.0)); }",
            "real y = mutual_recursion_ping(4, a);",
        ),
        fortran: code_with(
            "recursive function mutual_recursion_ping(n, x) result(r)
            integer, intent(in) :: n
            real(wp), intent(in) :: x
            real(wp) :: r
            if (n == 0) then
            r = x
            else
            r = mutual_recursion_pong(n - 1, 2.0_wp * x)
            end if
            end function mutual_recursion_ping
            recursive function mutual_recursion_pong(n, x) result(r)
            integer, intent(in) :: n
            real(wp), intent(in) :: x
            real(wp) :: r
            if (n == 0) then
            r = x
            else
            r = mutual_recursion_ping(n - 1, x + 1.0_wp)
            end if
            end function mutual_recursion_pong",
            "real(wp) :: y\n y = mutual_recursion_ping(4, a)",
        ),
        value: |x| vec![4.0 * x[0] + 3.0],
        jacobian: |_| vec![vec![4.0]],
        ..BASE
    },
    // --- Integer powers ----------------------------------------------------------------
    Formula {
        name: "powi_positive",
        about: "a^5 (__builtin_powi, Fortran a**5)",
        inputs: A,
        outputs: Y,
        c: code("real y = POWI(a, 5);"),
        fortran: code("real(wp) :: y\n y = a**5"),
        value: |x| vec![x[0].powi(5)],
        jacobian: |x| vec![vec![5.0 * x[0].powi(4)]],
        ..BASE
    },
    Formula {
        name: "powi_negative",
        about: "a^-3 (__builtin_powi, Fortran a**(-3))",
        inputs: &[("a", 2.0)],
        outputs: Y,
        c: code("real y = POWI(a, -3);"),
        fortran: code("real(wp) :: y\n y = a**(-3)"),
        value: |x| vec![x[0].powi(-3)],
        jacobian: |x| vec![vec![-3.0 * x[0].powi(-4)]],
        ..BASE
    },
    Formula {
        name: "powi_runtime_exponent",
        about: "a^n with n = (int)b known only at run time (libgcc's __powi*)",
        inputs: &[("a", 1.5), ("b", 4.5)],
        outputs: Y,
        c: code("int n = (int)b;\n real y = POWI(a, n);"),
        fortran: code("real(wp) :: y\n integer :: n\n n = int(b)\n y = a**n"),
        value: |x| vec![x[0].powi(x[1] as i32)],
        jacobian: |x| {
            let n = x[1] as i32;
            vec![vec![f64::from(n) * x[0].powi(n - 1), 0.0]]
        },
        ..BASE
    },
    Formula {
        name: "cube",
        about: "a*a*a (Derivgrind's example)",
        inputs: A,
        outputs: Y,
        c: code("real y = a * a * a;"),
        fortran: code("real(wp) :: y\n y = a * a * a"),
        value: |x| vec![x[0] * x[0] * x[0]],
        jacobian: |x| vec![vec![3.0 * x[0] * x[0]]],
        ..BASE
    },
    Formula {
        name: "power_by_loop",
        about: "a^7 by a multiplication loop",
        inputs: &[("a", 1.25)],
        outputs: Y,
        c: code("real y = R(1.0);\n for (int k = 0; k < 7; k++) y *= a;"),
        fortran: code(
            "real(wp) :: y
            integer :: k
            y = 1.0_wp
            do k = 1, 7
            y = y * a
            end do",
        ),
        value: |x| vec![x[0].powi(7)],
        jacobian: |x| vec![vec![7.0 * x[0].powi(6)]],
        ..BASE
    },
    Formula {
        name: "power_by_squaring",
        about: "a^13 by repeated squaring",
        inputs: &[("a", 1.25)],
        outputs: Y,
        c: code(
            "real base = a, y = R(1.0);
            for (int e = 13; e > 0; e >>= 1) { if (e & 1) y *= base; base *= base; }",
        ),
        fortran: code(
            "real(wp) :: base, y
            integer :: e
            base = a
            y = 1.0_wp
            e = 13
            do while (e > 0)
            if (iand(e, 1) == 1) y = y * base
            base = base * base
            e = ishft(e, -1)
            end do",
        ),
        value: |x| vec![x[0].powi(13)],
        jacobian: |x| vec![vec![13.0 * x[0].powi(12)]],
        ..BASE
    },
    // --- Conversions between float, double and long double ---------------------------
    Formula {
        name: "convert_to_float",
        about: "through float: (real)(float)(3a) * b",
        inputs: AB,
        outputs: Y,
        c: code("float f = (float)(a * R(3.0));\n real y = (real)f * b;"),
        fortran: code("real(wp) :: y\n real(4) :: f\n f = real(a * 3.0_wp, 4)\n y = real(f, wp) * b"),
        value: |x| vec![3.0 * x[0] * x[1]],
        jacobian: |x| vec![vec![3.0 * x[1], 3.0 * x[0]]],
        ..BASE
    },
    Formula {
        name: "convert_to_double",
        about: "through double: (real)((double)a * (double)b + (double)a)",
        inputs: AB,
        outputs: Y,
        c: code("double d = (double)a * (double)b;\n real y = (real)(d + (double)a);"),
        fortran: code(
            "real(wp) :: y\n real(8) :: d\n d = real(a, 8) * real(b, 8)\n y = real(d + real(a, 8), wp)",
        ),
        value: |x| vec![x[0] * x[1] + x[0]],
        jacobian: |x| vec![vec![x[1] + 1.0, x[0]]],
        ..BASE
    },
    Formula {
        name: "convert_to_long_double",
        about: "through long double (x87): (real)(3a^2 - b)",
        inputs: AB,
        outputs: Y,
        c: code(
            "long double l = (long double)a;\n l = l * l * 3.0L;\n real y = (real)(l - (long double)b);",
        ),
        fortran: code(
            "real(wp) :: y\n real(10) :: l\n l = real(a, 10)\n l = l * l * 3.0_10\n y = real(l - real(b, 10), wp)",
        ),
        value: |x| vec![3.0 * x[0] * x[0] - x[1]],
        jacobian: |x| vec![vec![6.0 * x[0], -1.0]],
        ..BASE
    },
    Formula {
        name: "convert_chain",
        about: "float -> double -> long double -> real: 6a + b",
        inputs: AB,
        outputs: Y,
        c: code(
            "float f = (float)a;
            double d = (double)f * 2.0;
            long double l = (long double)d * 3.0L;
            real y = (real)(l + (long double)b);",
        ),
        fortran: code(
            "real(wp) :: y
            real(4) :: f
            real(8) :: d
            real(10) :: l
            f = real(a, 4)
            d = real(f, 8) * 2.0_8
            l = real(d, 10) * 3.0_10
            y = real(l + real(b, 10), wp)",
        ),
        value: |x| vec![6.0 * x[0] + x[1]],
        jacobian: |_| vec![vec![6.0, 1.0]],
        ..BASE
    },
    // --- Integers and floats ------------------------------------------------------------
    Formula {
        name: "float_to_int_passive",
        about: "(real)(long)(a*b) + a: the integer part carries no derivative",
        inputs: AB,
        outputs: Y,
        c: code("long k = (long)(a * b);\n real y = (real)k + a;"),
        fortran: code("real(wp) :: y\n integer(int64) :: k\n k = int(a * b, int64)\n y = real(k, wp) + a"),
        value: |x| vec![(x[0] * x[1]).trunc() + x[0]],
        jacobian: |_| vec![vec![1.0, 0.0]],
        ..BASE
    },
    Formula {
        name: "int_to_float_scale",
        about: "k = (int)b; a*k + k",
        inputs: &[("a", 1.5), ("b", 3.5)],
        outputs: Y,
        c: code("int k = (int)b;\n real y = a * (real)k + (real)k;"),
        fortran: code("real(wp) :: y\n integer :: k\n k = int(b)\n y = a * real(k, wp) + real(k, wp)"),
        value: |x| {
            let k = x[1].trunc();
            vec![x[0] * k + k]
        },
        jacobian: |x| vec![vec![x[1].trunc(), 0.0]],
        ..BASE
    },
    Formula {
        name: "int_loop_counter",
        about: "sum of a * (real)i for i < 5",
        inputs: A,
        outputs: Y,
        c: code("real y = R(0.0);\n for (int i = 0; i < 5; i++) y += a * (real)i;"),
        fortran: code(
            "real(wp) :: y
            integer :: i
            y = 0.0_wp
            do i = 0, 4
            y = y + a * real(i, wp)
            end do",
        ),
        value: |x| vec![10.0 * x[0]],
        jacobian: |_| vec![vec![10.0]],
        ..BASE
    },
    Formula {
        name: "unsigned_conversion",
        about: "(real)(unsigned long long)(4a) * b",
        inputs: &[("a", 1.625), ("b", -2.25)],
        outputs: Y,
        c: code("unsigned long long u = (unsigned long long)(a * R(4.0));\n real y = (real)u * b;"),
        fortran: Absent("Fortran has no unsigned integers; float_to_int_passive covers int64"),
        value: |x| vec![(4.0 * x[0]).trunc() * x[1]],
        jacobian: |x| vec![vec![0.0, (4.0 * x[0]).trunc()]],
        ..BASE
    },
    Formula {
        name: "int_roundtrip_quantise",
        about: "m = (long)(1024a); m/1024 and m*b/1024: quantised, so passive in a",
        // 1024 a = 1536.25: away from an integer, where the truncation jumps.
        inputs: &[("a", 1.500244140625), ("b", -2.25)],
        outputs: &["y", "z"],
        c: code(
            "long m = (long)(a * R(1024.0));
            real y = (real)m / R(1024.0);
            real z = (real)m * b / R(1024.0);",
        ),
        fortran: code(
            "real(wp) :: y, z
            integer(int64) :: m
            m = int(a * 1024.0_wp, int64)
            y = real(m, wp) / 1024.0_wp
            z = real(m, wp) * b / 1024.0_wp",
        ),
        value: |x| {
            let m = (x[0] * 1024.0).trunc();
            vec![m / 1024.0, m * x[1] / 1024.0]
        },
        jacobian: |x| vec![vec![0.0, 0.0], vec![0.0, (x[0] * 1024.0).trunc() / 1024.0]],
        ..BASE
    },
    Formula {
        name: "floor_ceil",
        about: "floor(a) + a and ceil(b) * a (rounding has derivative 0)",
        inputs: &[("a", 2.75), ("b", -2.25)],
        outputs: &["y", "z"],
        c: code("real y = FLOOR(a) + a;\n real z = CEIL(b) * a;"),
        fortran: code(
            "real(wp) :: y, z\n y = real(floor(a), wp) + a\n z = real(ceiling(b), wp) * a",
        ),
        value: |x| vec![x[0].floor() + x[0], x[1].ceil() * x[0]],
        jacobian: |x| vec![vec![1.0, 0.0], vec![x[1].ceil(), 0.0]],
        ..BASE
    },
    // --- Values through general registers, unions and bytes ---------------------------
    Formula {
        name: "through_gpr",
        about: "the bits of a*b through uint64_t function arguments, then + a",
        inputs: AB,
        outputs: Y,
        c: code_with(
            "static NOINLINE uint64_t through_gpr_pass(uint64_t v) { return v; }",
            "real t = a * b, c;
            uint64_t w[2] = {0, 0};
            memcpy(w, &t, sizeof t);
            w[0] = through_gpr_pass(w[0]);
            w[1] = through_gpr_pass(w[1]);
            memcpy(&c, w, sizeof c);
            real y = c + a;",
        ),
        fortran: code_with(
            "function through_gpr_pass(v) result(r)
            integer(int64), intent(in) :: v
            integer(int64) :: r
            r = v
            end function through_gpr_pass",
            "real(wp) :: t, c, y
            real(wp) :: padded(16 / (storage_size(1.0_wp) / 8))
            integer(int64) :: w(2)
            t = a * b
            padded = 0.0_wp
            padded(1) = t
            w = transfer(padded, w)
            w(1) = through_gpr_pass(w(1))
            w(2) = through_gpr_pass(w(2))
            padded = transfer(w, padded)
            c = padded(1)
            y = c + a",
        ),
        value: |x| vec![x[0] * x[1] + x[0]],
        jacobian: |x| vec![vec![x[1] + 1.0, x[0]]],
        ..BASE
    },
    Formula {
        name: "union_pun",
        about: "a*b written as real, copied as integers through a union, read as real",
        inputs: AB,
        outputs: Y,
        c: code(
            "union { real r; uint64_t u[2]; } p, q;
            memset(&p, 0, sizeof p);
            p.r = a * b;
            q.u[0] = p.u[0];
            q.u[1] = p.u[1];
            real y = q.r + a;",
        ),
        fortran: code_with(
            "function union_pun_copy(t) result(c)
            real(wp), intent(in) :: t
            real(wp) :: c, r1, r2
            integer(int64) :: u1(2), u2(2)
            equivalence (r1, u1)
            equivalence (r2, u2)
            u1 = 0
            r1 = t
            u2 = u1
            c = r2
            end function union_pun_copy",
            "real(wp) :: y\n y = union_pun_copy(a * b) + a",
        ),
        value: |x| vec![x[0] * x[1] + x[0]],
        jacobian: |x| vec![vec![x[1] + 1.0, x[0]]],
        ..BASE
    },
    Formula {
        name: "split_words",
        about: "(a + b) split into 32-bit words, each through a function, reassembled; * b",
        inputs: AB,
        outputs: Y,
        c: code_with(
            "static NOINLINE uint32_t split_words_pass(uint32_t v) { return v; }",
            "real t = a + b, c;
            uint32_t h[4] = {0, 0, 0, 0};
            memcpy(h, &t, sizeof t);
            for (int i = 0; i < 4; i++) h[i] = split_words_pass(h[i]);
            memcpy(&c, h, sizeof c);
            real y = c * b;",
        ),
        fortran: code_with(
            "function split_words_pass(v) result(r)
            integer(int32), intent(in) :: v
            integer(int32) :: r
            r = v
            end function split_words_pass",
            "real(wp) :: t, c, y
            integer(int32) :: h(storage_size(1.0_wp) / 32)
            integer :: i
            t = a + b
            h = transfer(t, h)
            do i = 1, size(h)
            h(i) = split_words_pass(h(i))
            end do
            c = transfer(h, c)
            y = c * b",
        ),
        value: |x| vec![(x[0] + x[1]) * x[1]],
        jacobian: |x| vec![vec![x[1], x[0] + 2.0 * x[1]]],
        ..BASE
    },
    Formula {
        name: "byte_reverse_copy",
        about: "a*b copied byte by byte, last byte first; - a",
        inputs: AB,
        outputs: Y,
        c: code(
            "real t = a * b, c;
            const unsigned char *from = (const unsigned char *)&t;
            unsigned char *into = (unsigned char *)&c;
            for (size_t i = sizeof t; i-- > 0;) into[i] = from[i];
            real y = c - a;",
        ),
        fortran: code(
            "real(wp) :: t, c, y
            integer(int8) :: from(storage_size(1.0_wp) / 8), into(storage_size(1.0_wp) / 8)
            integer :: i
            t = a * b
            from = transfer(t, from)
            do i = size(from), 1, -1
            into(i) = from(i)
            end do
            c = transfer(into, c)
            y = c - a",
        ),
        value: |x| vec![x[0] * x[1] - x[0]],
        jacobian: |x| vec![vec![x[1] - 1.0, x[0]]],
        ..BASE
    },
    Formula {
        name: "through_global",
        about: "a + b stored in a global by one function, loaded by another; * a",
        inputs: AB,
        outputs: Y,
        c: code_with(
            "static real through_global_store;
            static NOINLINE void through_global_put(real v) { through_global_store = v; }
            static NOINLINE real through_global_get(void) { return through_global_store; }",
            "through_global_put(a + b);\n real y = through_global_get() * a;",
        ),
        fortran: code_with(
            "real(wp), save :: through_global_store
            contains
            subroutine through_global_put(v)
            real(wp), intent(in) :: v
            through_global_store = v
            end subroutine through_global_put
            function through_global_get() result(r)
            real(wp) :: r
            r = through_global_store
            end function through_global_get",
            "real(wp) :: y\n call through_global_put(a + b)\n y = through_global_get() * a",
        ),
        value: |x| vec![(x[0] + x[1]) * x[0]],
        jacobian: |x| vec![vec![2.0 * x[0] + x[1], x[0]]],
        ..BASE
    },
    Formula {
        name: "volatile_roundtrip",
        about: "a*b through a volatile variable, t + t",
        inputs: AB,
        outputs: Y,
        c: code("volatile real t = a * b;\n real y = t + t;"),
        fortran: code("real(wp) :: y\n real(wp), volatile :: t\n t = a * b\n y = t + t"),
        value: |x| vec![2.0 * x[0] * x[1]],
        jacobian: |x| vec![vec![2.0 * x[1], 2.0 * x[0]]],
        ..BASE
    },
    Formula {
        name: "varargs_sum",
        about: "a, b, a*b passed through '...' (promoted to double/long double)",
        inputs: AB,
        outputs: Y,
        c: code_with(
            "static NOINLINE real varargs_sum_of(int n, ...)
            {
            va_list ap;
            va_start(ap, n);
            real s = R(0.0);
            for (int i = 0; i < n; i++) s += (real)va_arg(ap, VA_REAL);
            va_end(ap);
            return s;
            }",
            "real y = varargs_sum_of(3, a, b, a * b);",
        ),
        fortran: Absent("Fortran has no variadic procedures"),
        value: |x| vec![x[0] + x[1] + x[0] * x[1]],
        jacobian: |x| vec![vec![1.0 + x[1], 1.0 + x[0]]],
        ..BASE
    },
    // --- Structs, memcpy, containers, sorting ----------------------------------------
    Formula {
        name: "struct_pass_by_value",
        about: "struct {a, b} passed by value (packed in one register for float): u*v - u",
        inputs: AB,
        outputs: Y,
        c: code_with(
            "struct struct_pass_pair { real u, v; };
            static NOINLINE real struct_pass_mul(struct struct_pass_pair p) { return p.u * p.v - p.u; }",
            "struct struct_pass_pair p;\n p.u = a;\n p.v = b;\n real y = struct_pass_mul(p);",
        ),
        fortran: code_with(
            "type :: struct_pass_pair
            real(wp) :: u, v
            end type struct_pass_pair
            contains
            function struct_pass_mul(p) result(r)
            type(struct_pass_pair), value :: p
            real(wp) :: r
            r = p%u * p%v - p%u
            end function struct_pass_mul",
            "type(struct_pass_pair) :: p
            real(wp) :: y
            p%u = a
            p%v = b
            y = struct_pass_mul(p)",
        ),
        value: |x| vec![x[0] * x[1] - x[0]],
        jacobian: |x| vec![vec![x[1] - 1.0, x[0]]],
        ..BASE
    },
    Formula {
        name: "struct_return",
        about: "a struct {a + b, a*b} returned by value",
        inputs: AB,
        outputs: &["y", "z"],
        c: code_with(
            "struct struct_return_pair { real sum, product; };
            static NOINLINE struct struct_return_pair struct_return_make(real u, real v)
            {
            struct struct_return_pair r;
            r.sum = u + v;
            r.product = u * v;
            return r;
            }",
            "struct struct_return_pair r = struct_return_make(a, b);\n real y = r.sum, z = r.product;",
        ),
        fortran: code_with(
            "type :: struct_return_pair
            real(wp) :: sum, product
            end type struct_return_pair
            contains
            function struct_return_make(u, v) result(r)
            real(wp), intent(in) :: u, v
            type(struct_return_pair) :: r
            r%sum = u + v
            r%product = u * v
            end function struct_return_make",
            "type(struct_return_pair) :: r
            real(wp) :: y, z
            r = struct_return_make(a, b)
            y = r%sum
            z = r%product",
        ),
        value: |x| vec![x[0] + x[1], x[0] * x[1]],
        jacobian: |x| vec![vec![1.0, 1.0], vec![x[1], x[0]]],
        ..BASE
    },
    Formula {
        name: "struct_copy",
        about: "a struct {a, b, 1, a*b} copied along an array of structs: x*z + y",
        inputs: AB,
        outputs: Y,
        c: code(
            "struct struct_copy_record { real x, y; int tag; real z; } chain[4];
            chain[0].x = a;
            chain[0].y = b;
            chain[0].tag = 1;
            chain[0].z = a * b;
            for (int i = 1; i < 4; i++) chain[i] = chain[i - 1];
            struct struct_copy_record q = chain[3];
            real y = q.x * q.z + q.y;",
        ),
        fortran: code_with(
            "type :: struct_copy_record
            real(wp) :: x, y
            integer :: tag
            real(wp) :: z
            end type struct_copy_record
            contains",
            "type(struct_copy_record) :: chain(4), q
            real(wp) :: y
            integer :: i
            chain(1) = struct_copy_record(a, b, 1, a * b)
            do i = 2, 4
            chain(i) = chain(i - 1)
            end do
            q = chain(4)
            y = q%x * q%z + q%y",
        ),
        value: |x| vec![x[0] * x[0] * x[1] + x[1]],
        jacobian: |x| vec![vec![2.0 * x[0] * x[1], x[0] * x[0] + 1.0]],
        ..BASE
    },
    Formula {
        name: "memcpy_array",
        about: "memcpy of {0, a, 100a} (Fortran: array assignment)",
        inputs: A,
        outputs: &["y", "z"],
        c: code(
            "real from[3], into[3];
            from[0] = R(0.0);
            from[1] = a;
            from[2] = R(100.0) * a;
            memcpy(into, from, sizeof from);
            real y = into[1], z = into[2];",
        ),
        fortran: code(
            "real(wp) :: from(3), into(3), y, z
            from = [0.0_wp, a, 100.0_wp * a]
            into = from
            y = into(2)
            z = into(3)",
        ),
        value: |x| vec![x[0], 100.0 * x[0]],
        jacobian: |_| vec![vec![1.0], vec![100.0]],
        ..BASE
    },
    Formula {
        name: "memmove_overlap",
        about: "memmove of {3.5a, a, 0} one element up (Fortran: overlapping section)",
        inputs: A,
        outputs: &["y", "z"],
        c: code(
            "real v[3];
            v[0] = R(3.5) * a;
            v[1] = a;
            v[2] = R(0.0);
            memmove(v + 1, v, 2 * sizeof v[0]);
            real y = v[1], z = v[2];",
        ),
        fortran: code(
            "real(wp) :: v(3), y, z
            v = [3.5_wp * a, a, 0.0_wp]
            v(2:3) = v(1:2)
            y = v(2)
            z = v(3)",
        ),
        value: |x| vec![3.5 * x[0], x[0]],
        jacobian: |_| vec![vec![3.5], vec![1.0]],
        ..BASE
    },
    Formula {
        name: "memset_clear",
        about: "y = a*b, then memset to zero bytes, then + b (Fortran: transfer of zero bytes)",
        inputs: AB,
        outputs: Y,
        c: code("real y = a * b;\n memset(&y, 0, sizeof y);\n y += b;"),
        fortran: code(
            "real(wp) :: y
            integer(int8) :: zeros(storage_size(1.0_wp) / 8)
            zeros = 0_int8
            y = a * b
            y = transfer(zeros, y)
            y = y + b",
        ),
        value: |x| vec![x[1]],
        jacobian: |_| vec![vec![0.0, 1.0]],
        ..BASE
    },
    Formula {
        name: "vector_copy",
        about: "a container {a, b, a*b} copied, a + b appended, last two summed",
        inputs: AB,
        outputs: Y,
        c: Absent("std::vector is C++; memcpy_array covers C"),
        cxx: code(
            "std::vector<real> v{a, b, a * b};
            std::vector<real> w = v;
            w.push_back(a + b);
            real y = w[2] + w[3];",
        ),
        fortran: code(
            "real(wp), allocatable :: v(:), w(:)
            real(wp) :: y
            allocate (v(0), w(0))
            v = [a, b, a * b]
            w = v
            w = [w, a + b]
            y = w(3) + w(4)",
        ),
        value: |x| vec![x[0] * x[1] + x[0] + x[1]],
        jacobian: |x| vec![vec![x[1] + 1.0, x[0] + 1.0]],
        ..BASE
    },
    Formula {
        name: "vector_growth",
        about: "100 values i*a appended one by one (reallocation copies), v[99] + v[50]",
        inputs: A,
        outputs: Y,
        c: code(
            "real *v = NULL;
            for (int i = 0; i < 100; i++) {
            real *grown = (real *)realloc(v, (size_t)(i + 1) * sizeof *v);
            if (!grown) abort();
            v = grown;
            v[i] = a * (real)i;
            }
            real y = v[99] + v[50];
            free(v);",
        ),
        cxx: code(
            "std::vector<real> v;
            for (int i = 0; i < 100; i++) v.push_back(a * (real)i);
            real y = v[99] + v[50];",
        ),
        fortran: code(
            "real(wp), allocatable :: v(:)
            real(wp) :: y
            integer :: i
            allocate (v(0))
            do i = 0, 99
            v = [v, a * real(i, wp)]
            end do
            y = v(100) + v(51)",
        ),
        value: |x| vec![149.0 * x[0]],
        jacobian: |_| vec![vec![149.0]],
        ..BASE
    },
    Formula {
        name: "std_sort",
        about: "std::sort of {a, b, c, a*b}",
        inputs: ABC,
        outputs: FOUR_OUTPUTS,
        c: Absent("std::sort is C++; qsort and insertion_sort cover C"),
        cxx: code(
            "std::vector<real> v{a, b, c, a * b};
            std::sort(v.begin(), v.end());
            real y0 = v[0], y1 = v[1], y2 = v[2], y3 = v[3];",
        ),
        fortran: Absent("C++ only; qsort and insertion_sort cover Fortran"),
        value: |x| sorted_with_gradients(x).into_iter().map(|e| e.0).collect(),
        jacobian: |x| sorted_with_gradients(x).into_iter().map(|e| e.1).collect(),
        ..BASE
    },
    Formula {
        name: "qsort",
        about: "libc qsort of {a, b, c, a*b} with a comparison callback",
        inputs: ABC,
        outputs: FOUR_OUTPUTS,
        c: code_with(
            "static int qsort_compare(const void *p, const void *q)
            {
            real u = *(const real *)p, v = *(const real *)q;
            return (u > v) - (u < v);
            }",
            "real v[4] = {a, b, c, a * b};
            qsort(v, 4, sizeof v[0], qsort_compare);
            real y0 = v[0], y1 = v[1], y2 = v[2], y3 = v[3];",
        ),
        fortran: code_with(
            "interface
            subroutine qsort_libc(base, count, size, compare) bind(C, name='qsort')
            import :: c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: base
            integer(c_size_t), value :: count, size
            type(c_funptr), value :: compare
            end subroutine qsort_libc
            end interface
            contains
            function qsort_compare(p, q) result(r) bind(C)
            real(wp), intent(in) :: p, q
            integer(c_int) :: r
            r = 0
            if (p < q) r = -1
            if (p > q) r = 1
            end function qsort_compare",
            "real(wp), target :: v(4)
            real(wp) :: y0, y1, y2, y3
            v = [a, b, c, a * b]
            call qsort_libc(c_loc(v), 4_c_size_t, int(storage_size(v(1)) / 8, c_size_t), &
            c_funloc(qsort_compare))
            y0 = v(1)
            y1 = v(2)
            y2 = v(3)
            y3 = v(4)",
        ),
        value: |x| sorted_with_gradients(x).into_iter().map(|e| e.0).collect(),
        jacobian: |x| sorted_with_gradients(x).into_iter().map(|e| e.1).collect(),
        ..BASE
    },
    Formula {
        name: "insertion_sort",
        about: "hand-written insertion sort of {a, b, c, a*b}",
        inputs: ABC,
        outputs: FOUR_OUTPUTS,
        c: code(
            "real v[4] = {a, b, c, a * b};
            for (int i = 1; i < 4; i++) {
            real key = v[i];
            int j = i - 1;
            while (j >= 0 && v[j] > key) { v[j + 1] = v[j]; j--; }
            v[j + 1] = key;
            }
            real y0 = v[0], y1 = v[1], y2 = v[2], y3 = v[3];",
        ),
        fortran: code(
            "real(wp) :: v(4), key, y0, y1, y2, y3
            integer :: i, j
            v = [a, b, c, a * b]
            do i = 2, 4
            key = v(i)
            j = i - 1
            do while (j >= 1)
            if (v(j) <= key) exit
            v(j + 1) = v(j)
            j = j - 1
            end do
            v(j + 1) = key
            end do
            y0 = v(1)
            y1 = v(2)
            y2 = v(3)
            y3 = v(4)",
        ),
        value: |x| sorted_with_gradients(x).into_iter().map(|e| e.0).collect(),
        jacobian: |x| sorted_with_gradients(x).into_iter().map(|e| e.1).collect(),
        ..BASE
    },
    Formula {
        name: "library_reductions",
        about: "inner product of {a, b, c} with {1, 2, 3}, and their sum, by library functions",
        inputs: ABC,
        outputs: &["y", "z"],
        c: Absent("the C library has no reductions; the vec_ formulas cover C loops"),
        cxx: code(
            "std::vector<real> v{a, b, c}, weights{R(1.0), R(2.0), R(3.0)};
            real y = std::inner_product(v.begin(), v.end(), weights.begin(), R(0.0));
            real z = std::accumulate(v.begin(), v.end(), R(0.0));",
        ),
        fortran: code(
            "real(wp) :: v(3), y, z
            v = [a, b, c]
            y = dot_product(v, [1.0_wp, 2.0_wp, 3.0_wp])
            z = sum(v)",
        ),
        value: |x| vec![x[0] + 2.0 * x[1] + 3.0 * x[2], x[0] + x[1] + x[2]],
        jacobian: |_| vec![vec![1.0, 2.0, 3.0], vec![1.0, 1.0, 1.0]],
        ..BASE
    },
    // --- Vectorised loops ---------------------------------------------------------------
    vectorised_binary!(
        "vec_add",
        +,
        |x| vec![120.0 * x[0] + 16.0 * x[1]],
        |_| vec![vec![120.0, 16.0]]
    ),
    vectorised_binary!(
        "vec_sub",
        -,
        |x| vec![120.0 * x[0] - 16.0 * x[1]],
        |_| vec![vec![120.0, -16.0]]
    ),
    vectorised_binary!(
        "vec_mul",
        *,
        |x| vec![120.0 * x[0] * x[1]],
        |x| vec![vec![120.0 * x[1], 120.0 * x[0]]]
    ),
    vectorised_binary!(
        "vec_div",
        /,
        |x| vec![120.0 * x[0] / x[1]],
        |x| vec![vec![120.0 / x[1], -120.0 * x[0] / (x[1] * x[1])]]
    ),
    Formula {
        name: "vec_sum_simd",
        about: "sum of 64 values i*a + b, an 'omp simd' reduction (vector partial sums)",
        inputs: AB,
        outputs: Y,
        c: code(
            "real v[64], y = R(0.0);
            for (int i = 0; i < 64; i++) v[i] = a * (real)i + b;
            #pragma omp simd reduction(+:y)
            for (int i = 0; i < 64; i++) y += v[i];",
        ),
        fortran: code(
            "real(wp) :: v(64), y
            integer :: i
            do i = 1, 64
            v(i) = a * real(i - 1, wp) + b
            end do
            y = 0.0_wp
            !$omp simd reduction(+:y)
            do i = 1, 64
            y = y + v(i)
            end do",
        ),
        value: |x| vec![2016.0 * x[0] + 64.0 * x[1]],
        jacobian: |_| vec![vec![2016.0, 64.0]],
        ..BASE
    },
    Formula {
        name: "vec_dot_simd",
        about: "dot product of (a + i) and (b - i), i < 32, an 'omp simd' reduction",
        inputs: AB,
        outputs: Y,
        c: code(
            "real xs[32], ys[32], y = R(0.0);
            for (int i = 0; i < 32; i++) { xs[i] = a + (real)i; ys[i] = b - (real)i; }
            #pragma omp simd reduction(+:y)
            for (int i = 0; i < 32; i++) y += xs[i] * ys[i];",
        ),
        fortran: code(
            "real(wp) :: xs(32), ys(32), y
            integer :: i
            do i = 1, 32
            xs(i) = a + real(i - 1, wp)
            ys(i) = b - real(i - 1, wp)
            end do
            y = 0.0_wp
            !$omp simd reduction(+:y)
            do i = 1, 32
            y = y + xs(i) * ys(i)
            end do",
        ),
        value: |x| {
            let s: f64 = (0..32).map(|i| (x[0] + f64::from(i)) * (x[1] - f64::from(i))).sum();
            vec![s]
        },
        jacobian: |x| {
            // d/da sum (a+i)(b-i) = sum (b-i); d/db = sum (a+i).
            let da: f64 = (0..32).map(|i| x[1] - f64::from(i)).sum();
            let db: f64 = (0..32).map(|i| x[0] + f64::from(i)).sum();
            vec![vec![da, db]]
        },
        ..BASE
    },
    Formula {
        name: "vec_abs",
        about: "fabs over 16 values ±i*a + 1 in a vectorisable loop (and-mask), then a sum",
        inputs: &[("a", 10.0)],
        outputs: Y,
        c: code(
            "real xs[16], y = R(0.0);
            for (int i = 0; i < 16; i++) xs[i] = (real)i * a * (i % 2 ? R(-1.0) : R(1.0)) + R(1.0);
            for (int i = 0; i < 16; i++) xs[i] = FABS(xs[i]);
            for (int i = 0; i < 16; i++) y += xs[i];",
        ),
        fortran: code(
            "real(wp) :: xs(16), y
            integer :: i
            do i = 1, 16
            xs(i) = real(i - 1, wp) * a * merge(-1.0_wp, 1.0_wp, mod(i - 1, 2) == 1) + 1.0_wp
            end do
            xs = abs(xs)
            y = 0.0_wp
            do i = 1, 16
            y = y + xs(i)
            end do",
        ),
        value: |x| {
            vec![(0..16)
                .map(|i| (i as f64 * x[0] * alternating(i) + 1.0).abs())
                .sum()]
        },
        jacobian: |x| {
            vec![vec![(0..16)
                .map(|i| {
                    let s = alternating(i);
                    (i as f64 * x[0] * s + 1.0).signum() * i as f64 * s
                })
                .sum()]]
        },
        ..BASE
    },
    Formula {
        name: "vec_neg",
        about: "negation of 16 values ±i*a + 1 in a vectorisable loop (xor-mask), then a sum",
        inputs: &[("a", 10.0)],
        outputs: Y,
        c: code(
            "real xs[16], y = R(0.0);
            for (int i = 0; i < 16; i++) xs[i] = (real)i * a * (i % 2 ? R(-1.0) : R(1.0)) + R(1.0);
            for (int i = 0; i < 16; i++) xs[i] = -xs[i];
            for (int i = 0; i < 16; i++) y += xs[i];",
        ),
        fortran: code(
            "real(wp) :: xs(16), y
            integer :: i
            do i = 1, 16
            xs(i) = real(i - 1, wp) * a * merge(-1.0_wp, 1.0_wp, mod(i - 1, 2) == 1) + 1.0_wp
            end do
            xs = -xs
            y = 0.0_wp
            do i = 1, 16
            y = y + xs(i)
            end do",
        ),
        value: |x| vec![(0..16).map(|i| -(i as f64 * x[0] * alternating(i) + 1.0)).sum()],
        jacobian: |_| vec![vec![(0..16).map(|i| -(i as f64) * alternating(i)).sum()]],
        ..BASE
    },
    Formula {
        name: "vec_max",
        about: "max(a*(i - 8), b) over 16 values in a vectorisable loop (maxps/maxpd), then a sum",
        inputs: AB,
        outputs: Y,
        c: code(
            "real xs[16], y = R(0.0);
            for (int i = 0; i < 16; i++) xs[i] = a * (real)(i - 8);
            for (int i = 0; i < 16; i++) xs[i] = xs[i] > b ? xs[i] : b;
            for (int i = 0; i < 16; i++) y += xs[i];",
        ),
        fortran: code(
            "real(wp) :: xs(16), y
            integer :: i
            do i = 1, 16
            xs(i) = a * real(i - 9, wp)
            end do
            xs = max(xs, b)
            y = 0.0_wp
            do i = 1, 16
            y = y + xs(i)
            end do",
        ),
        value: |x| vec![(0..16).map(|i| (x[0] * (i as f64 - 8.0)).max(x[1])).sum()],
        jacobian: |x| {
            let (mut da, mut db) = (0.0, 0.0);
            for i in 0..16 {
                if x[0] * (i as f64 - 8.0) > x[1] {
                    da += i as f64 - 8.0;
                } else {
                    db += 1.0;
                }
            }
            vec![vec![da, db]]
        },
        ..BASE
    },
    Formula {
        name: "vec_relu",
        about: "max(a*(i - 7.5), 0) over 16 values in a vectorisable loop, then a sum",
        inputs: A,
        outputs: Y,
        c: code(
            "real xs[16], y = R(0.0);
            for (int i = 0; i < 16; i++) xs[i] = a * ((real)i - R(7.5));
            for (int i = 0; i < 16; i++) xs[i] = xs[i] > R(0.0) ? xs[i] : R(0.0);
            for (int i = 0; i < 16; i++) y += xs[i];",
        ),
        fortran: code(
            "real(wp) :: xs(16), y
            integer :: i
            do i = 1, 16
            xs(i) = a * (real(i - 1, wp) - 7.5_wp)
            end do
            xs = max(xs, 0.0_wp)
            y = 0.0_wp
            do i = 1, 16
            y = y + xs(i)
            end do",
        ),
        value: |x| vec![(0..16).map(|i| (x[0] * (i as f64 - 7.5)).max(0.0)).sum()],
        jacobian: |_| vec![vec![(8..16).map(|i| i as f64 - 7.5).sum()]],
        ..BASE
    },
    Formula {
        name: "vec_float_to_double",
        about: "32 floats i*a widened to double in a vectorisable loop (cvtps2pd), then summed",
        inputs: A,
        outputs: Y,
        c: code(
            "float fs[32];
            double ds[32], s = 0.0;
            for (int i = 0; i < 32; i++) fs[i] = (float)a * (float)i;
            for (int i = 0; i < 32; i++) ds[i] = (double)fs[i];
            for (int i = 0; i < 32; i++) s += ds[i];
            real y = (real)s;",
        ),
        fortran: code(
            "real(wp) :: y
            real(4) :: fs(32)
            real(8) :: ds(32), s
            integer :: i
            do i = 1, 32
            fs(i) = real(a, 4) * real(i - 1, 4)
            end do
            ds = real(fs, 8)
            s = 0.0_8
            do i = 1, 32
            s = s + ds(i)
            end do
            y = real(s, wp)",
        ),
        value: |x| vec![496.0 * x[0]],
        jacobian: |_| vec![vec![496.0]],
        ..BASE
    },
    Formula {
        name: "vec_double_to_float",
        about: "32 doubles i*a narrowed to float in a vectorisable loop (cvtpd2ps, whose \
                destination is half its source's width), then summed in double",
        inputs: A,
        outputs: Y,
        c: code(
            "double ds[32], s = 0.0;
            float fs[32];
            for (int i = 0; i < 32; i++) ds[i] = (double)a * (double)i;
            for (int i = 0; i < 32; i++) fs[i] = (float)ds[i];
            for (int i = 0; i < 32; i++) s += (double)fs[i];
            real y = (real)s;",
        ),
        fortran: code(
            "real(wp) :: y
            real(8) :: ds(32), s
            real(4) :: fs(32)
            integer :: i
            do i = 1, 32
            ds(i) = real(a, 8) * real(i - 1, 8)
            end do
            fs = real(ds, 4)
            s = 0.0_8
            do i = 1, 32
            s = s + real(fs(i), 8)
            end do
            y = real(s, wp)",
        ),
        value: |x| vec![496.0 * x[0]],
        jacobian: |_| vec![vec![496.0]],
        ..BASE
    },
    // --- Matrix-vector products ------------------------------------------------------
    Formula {
        name: "matvec_const",
        about: "a constant 3x3 matrix times (a, b, c) (Fortran: matmul)",
        inputs: ABC,
        outputs: &["y", "z", "w"],
        c: code(
            "static const real m[3][3] = {{R(2.0), R(-1.0), R(0.5)},
            {R(1.0), R(3.0), R(-2.0)},
            {R(-0.5), R(0.25), R(4.0)}};
            real v[3] = {a, b, c}, r[3];
            for (int i = 0; i < 3; i++) {
            r[i] = R(0.0);
            for (int j = 0; j < 3; j++) r[i] += m[i][j] * v[j];
            }
            real y = r[0], z = r[1], w = r[2];",
        ),
        fortran: code(
            "real(wp), parameter :: m(3, 3) = reshape([2.0_wp, 1.0_wp, -0.5_wp, &
            -1.0_wp, 3.0_wp, 0.25_wp, 0.5_wp, -2.0_wp, 4.0_wp], [3, 3])
            real(wp) :: r(3), y, z, w
            r = matmul(m, [a, b, c])
            y = r(1)
            z = r(2)
            w = r(3)",
        ),
        value: |x| {
            MATRIX
                .iter()
                .map(|row| row.iter().zip(x).map(|(m, v)| m * v).sum())
                .collect()
        },
        jacobian: |_| MATRIX.iter().map(|row| row.to_vec()).collect(),
        ..BASE
    },
    Formula {
        name: "indexed_gather_scatter",
        about: "ys[idx[i]] = 2 xs[i], then sum of xs[idx[i]] ys[i], idx a permutation of 32 \
                (gathers and scatters where vectorised)",
        inputs: AB,
        outputs: Y,
        c: code(
            "real xs[32], ys[32], zs[32], y = R(0.0);
            int idx[32];
            for (int i = 0; i < 32; i++) { xs[i] = a * (real)(i + 1) + b; idx[i] = (i * 7) % 32; ys[i] = R(0.0); }
            for (int i = 0; i < 32; i++) ys[idx[i]] = R(2.0) * xs[i];
            for (int i = 0; i < 32; i++) zs[i] = xs[idx[i]] * ys[i];
            for (int i = 0; i < 32; i++) y += zs[i];",
        ),
        fortran: code(
            "real(wp) :: xs(32), ys(32), zs(32), y
            integer :: i, idx(32)
            do i = 1, 32
            xs(i) = a * real(i, wp) + b
            idx(i) = mod((i - 1) * 7, 32) + 1
            ys(i) = 0.0_wp
            end do
            do i = 1, 32
            ys(idx(i)) = 2.0_wp * xs(i)
            end do
            do i = 1, 32
            zs(i) = xs(idx(i)) * ys(i)
            end do
            y = 0.0_wp
            do i = 1, 32
            y = y + zs(i)
            end do",
        ),
        value: |x| vec![indexed_gather_scatter(x).0],
        jacobian: |x| {
            let (_, da, db) = indexed_gather_scatter(x);
            vec![vec![da, db]]
        },
        ..BASE
    },
    Formula {
        name: "matvec_inputs",
        about: "A v with A[i][j] = (i - j) a + 1 and v[j] = (j + 1) b + c, 4x4 (Fortran: matmul)",
        inputs: ABC,
        outputs: FOUR_OUTPUTS,
        c: code(
            "real m[4][4], v[4], r[4];
            for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) m[i][j] = (real)(i - j) * a + R(1.0);
            for (int j = 0; j < 4; j++) v[j] = b * (real)(j + 1) + c;
            for (int i = 0; i < 4; i++) {
            r[i] = R(0.0);
            for (int j = 0; j < 4; j++) r[i] += m[i][j] * v[j];
            }
            real y0 = r[0], y1 = r[1], y2 = r[2], y3 = r[3];",
        ),
        fortran: code(
            "real(wp) :: m(4, 4), v(4), r(4), y0, y1, y2, y3
            integer :: i, j
            do j = 1, 4
            do i = 1, 4
            m(i, j) = real(i - j, wp) * a + 1.0_wp
            end do
            v(j) = b * real(j, wp) + c
            end do
            r = matmul(m, v)
            y0 = r(1)
            y1 = r(2)
            y2 = r(3)
            y3 = r(4)",
        ),
        value: |x| {
            (0..4)
                .map(|i| {
                    (0..4)
                        .map(|j| {
                            let (m, v) = matvec_entries(x, i, j);
                            m * v
                        })
                        .sum()
                })
                .collect()
        },
        jacobian: |x| {
            // d/da: sum_j (i - j) v_j; d/db: sum_j A_ij (j + 1); d/dc: sum_j A_ij.
            (0..4)
                .map(|i| {
                    let mut row = vec![0.0; 3];
                    for j in 0..4 {
                        let (m, v) = matvec_entries(x, i, j);
                        row[0] += (i as f64 - j as f64) * v;
                        row[1] += m * (j as f64 + 1.0);
                        row[2] += m;
                    }
                    row
                })
                .collect()
        },
        ..BASE
    },
    // --- Fused multiply-add ------------------------------------------------------------
    Formula {
        name: "fma_call",
        about: "fma(a, b, c) (std::fma; Fortran: libm's fma through bind(C))",
        inputs: ABC,
        outputs: Y,
        c: code("real y = FMA(a, b, c);"),
        fortran: code("real(wp) :: y\n y = c_fma(a, b, c)"),
        value: |x| vec![x[0].mul_add(x[1], x[2])],
        jacobian: |x| vec![vec![x[1], x[0], 1.0]],
        ..BASE
    },
    Formula {
        name: "fma_call_nested",
        about: "fma(a, a, fma(b, b, c))",
        inputs: ABC,
        outputs: Y,
        c: code("real y = FMA(a, a, FMA(b, b, c));"),
        fortran: code("real(wp) :: y\n y = c_fma(a, a, c_fma(b, b, c))"),
        value: |x| vec![x[0] * x[0] + x[1] * x[1] + x[2]],
        jacobian: |x| vec![vec![2.0 * x[0], 2.0 * x[1], 1.0]],
        ..BASE
    },
    Formula {
        name: "fma_contraction",
        about: "a*b + c (contracted to an FMA where the target has one)",
        inputs: ABC,
        outputs: Y,
        c: code("real y = a * b + c;"),
        fortran: code("real(wp) :: y\n y = a * b + c"),
        value: |x| vec![x[0] * x[1] + x[2]],
        jacobian: |x| vec![vec![x[1], x[0], 1.0]],
        ..BASE
    },
    Formula {
        name: "fms_contraction",
        about: "a*b - c*d (fmsub/fnmadd when contracted)",
        inputs: &[("a", 1.5), ("b", -2.25), ("c", 0.75), ("d", 3.0)],
        outputs: Y,
        c: code("real y = a * b - c * d;"),
        fortran: code("real(wp) :: y\n y = a * b - c * d"),
        value: |x| vec![x[0] * x[1] - x[2] * x[3]],
        jacobian: |x| vec![vec![x[1], x[0], -x[3], -x[2]]],
        ..BASE
    },
    Formula {
        name: "fnma_contraction",
        about: "c - a*b (fnmadd when contracted)",
        inputs: ABC,
        outputs: Y,
        c: code("real y = c - a * b;"),
        fortran: code("real(wp) :: y\n y = c - a * b"),
        value: |x| vec![x[2] - x[0] * x[1]],
        jacobian: |x| vec![vec![-x[1], -x[0], 1.0]],
        ..BASE
    },
    Formula {
        name: "fma_chain_dot",
        about: "in-order dot product of (a + i) and (b - i), i < 8 (an FMA chain when contracted)",
        inputs: AB,
        outputs: Y,
        c: code(
            "real y = R(0.0);\n for (int i = 0; i < 8; i++) y += (a + (real)i) * (b - (real)i);",
        ),
        fortran: code(
            "real(wp) :: y
            integer :: i
            y = 0.0_wp
            do i = 0, 7
            y = y + (a + real(i, wp)) * (b - real(i, wp))
            end do",
        ),
        value: |x| {
            vec![(0..8)
                .map(|i| (x[0] + f64::from(i)) * (x[1] - f64::from(i)))
                .sum()]
        },
        jacobian: |x| {
            let da: f64 = (0..8).map(|i| x[1] - f64::from(i)).sum();
            let db: f64 = (0..8).map(|i| x[0] + f64::from(i)).sum();
            vec![vec![da, db]]
        },
        ..BASE
    },
    // --- Complex arithmetic -------------------------------------------------------------
    Formula {
        name: "complex_mul",
        about: "(a + ib)^2 in complex arithmetic: real and imaginary parts",
        inputs: AB,
        outputs: &["y", "w"],
        c: code(
            "complex_real z;\n __real__ z = a;\n __imag__ z = b;\n z = z * z;\n real y = __real__ z, w = __imag__ z;",
        ),
        cxx: code(
            "std::complex<real> z(a, b);\n z = z * z;\n real y = z.real(), w = z.imag();",
        ),
        fortran: code(
            "complex(wp) :: z
            real(wp) :: y, w
            z = cmplx(a, b, kind=wp)
            z = z * z
            y = real(z)
            w = aimag(z)",
        ),
        value: |x| vec![x[0] * x[0] - x[1] * x[1], 2.0 * x[0] * x[1]],
        jacobian: |x| {
            let (a, b) = (x[0], x[1]);
            vec![vec![2.0 * a, -2.0 * b], vec![2.0 * b, 2.0 * a]]
        },
        ..BASE
    },
];
