//! The derivative test matrix (`testsuite/derivatives/README.md`).
//!
//! Tests come from the formula table at run time, so this file is its own
//! harness (`harness = false` in Cargo.toml, the runner in
//! `src/harness.rs`). It takes libtest's usual arguments (filters,
//! `--exact`, `--skip`, `--list`, `--test-threads`, `--ignored`, `-q`) and
//! ends with libtest's summary line. Test names:
//!
//! - `meta::…`: checks of the formula table and of the expected-failure list;
//! - `native_values::<formula>::<lang>_<compiler>_<opt>_<type>`: the native
//!   run prints the expected values;
//! - with `--features record-matrix`, `record::<formula>::<axis>`: values,
//!   a recording with the same output, and the Jacobian from `dg-eval`'s
//!   reverse and forward sweeps;
//! - `dot::<formula>::<axis>`: one forward-mode run (`DGAD_MODE=dot`) per
//!   input with a unit tangent on it, the output tangents against the
//!   Jacobian's column and against `dg-eval --forward` on a recording.
//!
//! A test listed in `testsuite/derivatives/expected_failures.rs` runs like
//! any other; it passes while it fails as expected and fails once it passes.

use std::process::ExitCode;

use testsuite::derivatives::{
    check_formula_table, check_reference_jacobians, matrix_tests, Category, EXPECTED_FAILURES,
};
use testsuite::harness::{Harness, Test};

fn all_tests() -> Vec<Test> {
    // Every name the matrix can have, whatever the feature says, so that the
    // expected-failure list is checked against the full matrix.
    let all_names: Vec<String> = [Category::NativeValues, Category::Record, Category::Dot]
        .into_iter()
        .flat_map(matrix_tests)
        .map(|t| t.name())
        .collect();
    let mut tests = vec![
        Test::new("meta::formula_table", check_formula_table),
        Test::new(
            "meta::reference_jacobians_match_finite_differences",
            check_reference_jacobians,
        ),
        EXPECTED_FAILURES.meta_test(all_names),
    ];
    for test in matrix_tests(Category::NativeValues) {
        tests.push(Test::new(test.name(), move || test.run()));
    }
    #[cfg(feature = "record-matrix")]
    for test in matrix_tests(Category::Record) {
        tests.push(Test::new(test.name(), move || test.run()));
    }
    for test in matrix_tests(Category::Dot) {
        tests.push(Test::new(test.name(), move || test.run()));
    }
    tests
}

fn main() -> ExitCode {
    Harness {
        name: "derivatives",
        subject: "formula",
        expected_failures: EXPECTED_FAILURES,
        note: (!cfg!(feature = "record-matrix")).then_some(
            "note: the record:: tests (recording, reverse and forward sweeps) are off; \
             run with `--features record-matrix` to include them",
        ),
    }
    .main(all_tests)
}
