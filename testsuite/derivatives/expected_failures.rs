//! Tests of the derivative matrix known to fail, each with its reason.
//!
//! A listed test still runs: it is reported as an expected failure while it
//! fails, and fails the suite once it passes (remove its entry then). Every
//! `reason` must also appear, word for word, in `docs/limitations.md`, and
//! every pattern (`*` matches any characters, e.g.
//! `record::fma_call::*_long_double` or `dot::*::fortran_*`) must match
//! some test of the full matrix (with the `record-matrix` feature on);
//! `meta::expected_failures` checks both. The type and the checks are in
//! `src/harness.rs`.

use crate::harness::{ExpectedFailure, ExpectedFailures};

/// An x87 long double's sign flipped by a byte operation on its top bytes.
pub const COPYSIGN_X87_TOP_BYTE: &str = "copysign of an x87 long double that flips the sign bit with a byte operation on the value's top bytes (e.g. g++ -O0 std::copysign: xor dh, 0x80), away from the first four bytes where the value's index lives, is not seen as a negation";

/// A double reassembled from its 32-bit words in a general register.
pub const DOUBLE_FROM_WORDS: &str = "a double put together again from its two 32-bit words in a general register (shl and or, as gcc -O3 compiles a word-by-word copy) is a reported constant: its low word under a high word cannot be told from fdlibm's SET_HIGH_WORD, which puts another exponent above a double's low word and makes another value";

/// A float input marked without its type, packed beside another word.
pub const UNTYPED_FLOAT_INPUT_IN_GPR: &str = "a real(4) input marked through Derivgrind's Fortran interface (dg_inputf(c_loc(x)) says nothing of x's type), copied in a general register beside another word (gfortran -O0 building a derived type's value in rax from an uninitialised register's high half and the input's low word), is a reported constant: the low word of a double under another high word is the same bits";

/// Dot mode: the x87 sign byte flipped by a byte operation.
pub const DOT_X87_SIGN_BYTE: &str = "dot mode: copysign of an x87 long double that flips the sign bit with a byte operation on the value's top bytes (e.g. g++ -O0 std::copysign: xor dh, 0x80) is bitwise logic that is not taken for a sign-bit trick, so the result's tangent is 0 (a `dgad: dot:` line names the instruction)";

/// Dot mode: values reassembled from 32-bit words in a general register.
pub const DOT_WORDS_IN_GPR: &str = "dot mode: an x87 long double put together from its 32-bit words in a general register with shl and or (gcc -O3 -march=native reassembling a long double word by word), where the word with the sign and exponent is joined to the padding above it, loses its tangent, said on stderr: a tangent fills its value's bytes, so the sign and exponent word cannot be told from the low word of a double being given another high word, which record mode reports too";

/// The list.
pub const EXPECTED_FAILURES: ExpectedFailures = ExpectedFailures {
    file: "testsuite/derivatives/expected_failures.rs",
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
            tests: "record::split_words::c*_gcc_O3_double",
            reason: DOUBLE_FROM_WORDS,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "record::split_words::c*_gcc_O3_native_double",
            reason: DOUBLE_FROM_WORDS,
            codegen_dependent: true,
        },
        ExpectedFailure {
            tests: "record::struct_copy::fortran_gfortran_O0_real4",
            reason: UNTYPED_FLOAT_INPUT_IN_GPR,
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
        // Dot mode gives the analytic tangents here; the recording's forward
        // sweep, which they are compared with, does not.
        ExpectedFailure {
            tests: "dot::split_words::c*_gcc_O3_double",
            reason: DOUBLE_FROM_WORDS,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::split_words::c*_gcc_O3_native_double",
            reason: DOUBLE_FROM_WORDS,
            codegen_dependent: true,
        },
        ExpectedFailure {
            tests: "dot::struct_copy::fortran_gfortran_O0_real4",
            reason: UNTYPED_FLOAT_INPUT_IN_GPR,
            codegen_dependent: false,
        },
        ExpectedFailure {
            tests: "dot::split_words::c*_gcc_O3_native_long_double",
            reason: DOT_WORDS_IN_GPR,
            codegen_dependent: true,
        },
    ],
};
