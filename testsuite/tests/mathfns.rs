//! The libm derivative matrix of issue #4 (`testsuite/mathfns/README.md`).
//!
//! Tests come from the function table at run time, so this file is its own
//! harness (`harness = false` in Cargo.toml, the runner in
//! `src/harness.rs`). It takes libtest's usual arguments (filters,
//! `--exact`, `--skip`, `--list`, `--test-threads`, `--ignored`, `-q`) and
//! ends with libtest's summary line. Test names:
//!
//! - `meta::…`: checks of the function table, of the quad-precision
//!   references and of the expected-failure list;
//! - `native_values::<function>::<lang>_<compiler>_<opt>_<type>`: the native
//!   run's results against the references;
//! - `record::<function>::<axis>`: the recording prints the native rows, and
//!   its reverse and forward sweeps give the analytic partial derivatives;
//! - `nowrap_values::<function>::<axis>`: a recording with
//!   `DGAD_MATHWRAP=0` prints the native rows;
//! - `dot::<function>::<axis>`: forward mode (`DGAD_MODE=dot`), one run per
//!   argument slot, prints the native rows, and the results' tangents are
//!   the analytic partials and agree with the recording's forward sweep.
//!
//! Each (language, type) has one program calling every function at every
//! point; it is built, run, recorded and swept once per axis, whatever the
//! number of tests that look at its rows. A test listed in
//! `testsuite/mathfns/expected_failures.rs` runs like any other; it passes
//! while it fails as expected and fails once it passes.

use std::process::ExitCode;

use testsuite::harness::{Harness, Test};
use testsuite::mathfns::{matrix_tests, meta_tests, Category, EXPECTED_FAILURES};

fn all_tests() -> Vec<Test> {
    let mut tests: Vec<Test> = meta_tests()
        .into_iter()
        .map(|(name, run)| Test::new(name, run))
        .collect();
    for category in Category::ALL {
        for test in matrix_tests(category) {
            tests.push(Test::new(test.name(), move || test.run()));
        }
    }
    let all_names = tests.iter().map(|test| test.name.clone()).collect();
    tests.push(EXPECTED_FAILURES.meta_test(all_names));
    tests
}

fn main() -> ExitCode {
    Harness {
        name: "mathfns",
        subject: "function",
        expected_failures: EXPECTED_FAILURES,
        note: None,
    }
    .main(all_tests)
}
