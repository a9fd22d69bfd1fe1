//! Forward mode (`DGAD_MODE=dot`) must be as transparent as null mode:
//! programs behave exactly as natively — stdout, exit status — while every
//! floating-point value carries a dot value. The same programs and checks
//! as record mode's (`testsuite::mode_transparency`).

use std::path::Path;

use testsuite::mode_transparency::{
    check_pipeline_is_silent, check_programs, check_python_threads, Mode,
};

/// Forward mode needs no setting besides `DGAD_MODE=dot`.
fn no_settings(_: &Path) -> Vec<(&'static str, String)> {
    Vec::new()
}

const DOT: Mode = Mode {
    name: "dot",
    settings: no_settings,
};

#[test]
fn c_and_cxx_programs_under_dot_mode() {
    check_programs(DOT);
}

#[test]
fn python_threads_under_dot_mode() {
    check_python_threads(DOT);
}

/// A shell pipeline under forward mode: every process inherits the
/// preload; none may report anything.
#[test]
fn shell_pipeline_under_dot_mode_is_silent() {
    check_pipeline_is_silent(DOT);
}
