//! Tests of the derivative matrix known to fail, each with its reason.
//!
//! A listed test still runs: it is reported as an expected failure while it
//! fails, and fails the suite once it passes (remove its entry then). Every
//! `reason` must also appear, word for word, in `docs/limitations.md`, and
//! every pattern must match some test of the full matrix (with the
//! `record-matrix` feature on); `meta::expected_failures` checks both.

/// One known failure.
pub struct ExpectedFailure {
    /// Test name pattern; `*` matches any characters, e.g.
    /// `record::fma_call::*_long_double` or `record::*::fortran_*`.
    pub tests: &'static str,
    /// Why it fails, as `docs/limitations.md` says it.
    pub reason: &'static str,
}

/// The list.
pub const EXPECTED_FAILURES: &[ExpectedFailure] = &[
    ExpectedFailure {
        tests: "record::copysign::cxx_gcc_O0_long_double",
        reason: "copysign of an x87 long double that flips the sign bit with a byte operation on the value's top bytes (e.g. g++ -O0 std::copysign: xor dh, 0x80), away from the first four bytes where the value's index lives, is not seen as a negation",
    },
    ExpectedFailure {
        tests: "record::copysign::fortran_gfortran_O0_real10",
        reason: "copysign of an x87 long double that flips the sign bit with a byte operation on the value's top bytes (e.g. g++ -O0 std::copysign: xor dh, 0x80), away from the first four bytes where the value's index lives, is not seen as a negation",
    },
];
