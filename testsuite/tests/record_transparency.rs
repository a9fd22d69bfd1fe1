//! Record mode must be as transparent as null mode: programs that declare
//! no AD inputs (and one that does) behave exactly as natively — stdout,
//! exit status — while every instruction is instrumented. The programs and
//! checks are shared with forward mode (`testsuite::mode_transparency`).

use std::path::Path;

use testsuite::mode_transparency::{
    check_pipeline_is_silent, check_programs, check_python_threads, Mode,
};

fn record_settings(dir: &Path) -> Vec<(&'static str, String)> {
    vec![("DGAD_RECORD", dir.to_str().unwrap().to_owned())]
}

const RECORD: Mode = Mode {
    name: "record",
    settings: record_settings,
};

#[test]
fn c_and_cxx_programs_under_record_mode() {
    check_programs(RECORD);
}

#[test]
fn python_threads_under_record_mode() {
    check_python_threads(RECORD);
}

/// A shell pipeline under record mode: children inherit the preload, none
/// declares an input, so none may write files or report anything (a
/// `sort` ended by SIGPIPE once printed a tape note).
#[test]
fn shell_pipeline_under_record_mode_is_silent() {
    let scratch = check_pipeline_is_silent(RECORD);
    assert!(
        !scratch.path().join("run/dg-tape").exists(),
        "a process that declared no input wrote a tape"
    );
}
