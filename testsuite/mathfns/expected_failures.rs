//! Tests of the libm matrix known to fail, each with its reason.
//!
//! As for the derivative matrix (`testsuite/derivatives/expected_failures.rs`):
//! a listed test still runs, is reported as an expected failure while it
//! fails, and fails the suite once it passes (remove its entry then). Every
//! `reason` must appear, word for word, in `docs/limitations.md`, and every
//! pattern (`*` matches any characters) must match some test;
//! `meta::expected_failures` checks both. List only the tests that fail: a
//! pattern must not cover a test that passes.

use crate::derivatives::{COPYSIGN_X87_TOP_BYTE, DOT_X87_SIGN_BYTE};
use crate::harness::{ExpectedFailure, ExpectedFailures};

/// `lgammal`'s derivative at 1.1, one `f64` ulp off.
const LGAMMAL_DIGAMMA_ULP: &str = "lgammal at x = 1.1 (as a float): the digamma partial, computed in x87 extended precision, is within 4e-19 of the exact value, which lies 3.6e-19 from a rounding midpoint of the f64 partial the tape stores; the partial is one f64 ulp (1.3e-16 relative) away from the correctly rounded one";

/// Inline rounding code that returns an integral argument itself.
const INLINE_ROUNDING_INTEGRAL: &str = "rounding functions the compiler expands inline (rint, floor, ceil, trunc without SSE4.1, Fortran aint) return their argument itself when it is already integral (|x| ≥ 2^52, 2^23 for float, and ±0), so the recorded derivative there is 1, not the 0 of the convention; at every other point it is 0";

/// Dot mode: a float's tangent is a float.
const DOT_FLOAT_TANGENT_RANGE: &str = "dot mode keeps a float's tangent as a float, the type of its value: a derivative beyond float's range becomes ±inf or 0 (tgamma at 1e-20: -1e40; atan at 1e30: 1e-60), where record mode's f64 partials hold it";

/// The list.
pub const EXPECTED_FAILURES: ExpectedFailures = ExpectedFailures {
    file: "testsuite/mathfns/expected_failures.rs",
    list: &[
        ExpectedFailure {
            tests: "record::copysign::cxx_gcc_O0_long_double",
            reason: COPYSIGN_X87_TOP_BYTE,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::copysign::fortran_gfortran_O0_real10",
            reason: COPYSIGN_X87_TOP_BYTE,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::lgamma::*_long_double",
            reason: LGAMMAL_DIGAMMA_ULP,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::lgamma::fortran_*_real10",
            reason: LGAMMAL_DIGAMMA_ULP,
            codegen_dependent: false,
        },
        // gcc -O3 without -march=native expands rintf and rint inline (SSE2).
        ExpectedFailure {
            tests: "record::rint::c_gcc_O3_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::rint::c_gcc_O3_double",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::rint::cxx_gcc_O3_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::rint::cxx_gcc_O3_double",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        // g++ -O0 expands the float overloads std::rint, std::floor,
        // std::ceil and std::trunc inline.
        ExpectedFailure {
            tests: "record::rint::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::floor::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::ceil::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::trunc::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        // gfortran expands aint inline for real(4) and real(8).
        ExpectedFailure {
            tests: "record::trunc::fortran_gfortran_*_real4",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::trunc::fortran_gfortran_*_real8",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::copysign::cxx_gcc_O0_long_double",
            reason: DOT_X87_SIGN_BYTE,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::copysign::fortran_gfortran_O0_real10",
            reason: DOT_X87_SIGN_BYTE,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::atan::*_float",
            reason: DOT_FLOAT_TANGENT_RANGE,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::atan::*_real4",
            reason: DOT_FLOAT_TANGENT_RANGE,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::tgamma::*_float",
            reason: DOT_FLOAT_TANGENT_RANGE,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::tgamma::*_real4",
            reason: DOT_FLOAT_TANGENT_RANGE,
            codegen_dependent: false,
        },
        // The inline rounding code of the record:: entries above, in dot mode.
        ExpectedFailure {
            tests: "dot::rint::c_gcc_O3_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::rint::c_gcc_O3_double",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::rint::cxx_gcc_O3_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::rint::cxx_gcc_O3_double",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::rint::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::floor::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::ceil::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::trunc::cxx_gcc_O0_float",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::trunc::fortran_gfortran_*_real4",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::trunc::fortran_gfortran_*_real8",
            reason: INLINE_ROUNDING_INTEGRAL,
            codegen_dependent: false,
        },
    ],
};
