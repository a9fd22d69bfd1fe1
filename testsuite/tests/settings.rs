//! The `DGAD_*` settings read one way (issue #16, point 9): every switch
//! takes the same spellings and refuses others, an empty value is an unset
//! one, an unknown `DGAD_` name is warned about, and a program that marks
//! inputs while nothing records is told so.

use std::path::Path;
use testsuite::derivatives::eval_values;
use testsuite::{
    build_record_program, run_native, run_under_dgad, Invocation, OptLevel, Outcome, ScratchDir,
};

/// The switches of `preload/src/settings.rs`.
const SWITCHES: [&str; 5] = [
    "DGAD_STATS",
    "DGAD_DISABLE",
    "DGAD_TRACE",
    "DGAD_MATHWRAP",
    "DGAD_TAPE_WRITER",
];

/// `marks_inputs.c`: 3 inputs by `DG_INPUTF` and one by `dgad_input`, their
/// product as the output.
fn marks_inputs() -> Invocation {
    let exe = build_record_program("marks_inputs.c", &[], OptLevel::O3);
    Invocation::new(exe).arg("3")
}

/// An outcome for a failure message.
fn show(out: &Outcome) -> String {
    format!(
        "{}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The tool's lines on stderr.
fn dgad_lines(out: &Outcome) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("dgad:"))
        .map(str::to_owned)
        .collect()
}

fn record_env<'a>(dir: &'a Path, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut env = vec![
        ("DGAD_MODE", "record"),
        ("DGAD_RECORD", dir.to_str().unwrap()),
    ];
    env.extend_from_slice(extra);
    env
}

/// Checks that `dir` holds the recording of `marks_inputs 3`: dy/dx_i =
/// y / x_i.
fn assert_recorded(dir: &Path) {
    let bars = eval_values(dir, "dg-output-bars", "1.0\n", "dg-input-bars", false);
    let x = [1.0, 4.0 / 3.0, 5.0 / 3.0, 0.5];
    let y: f64 = x.iter().product();
    assert_eq!(bars.len(), x.len(), "{bars:?}");
    for (bar, xi) in bars.iter().zip(x) {
        assert!((bar - y / xi).abs() <= 1e-12, "{bars:?}");
    }
}

/// `DGAD_DISABLE=no` used to disable the runtime and `DGAD_STATS=no` to
/// print the statistics: every non-`0` value counted as on.
#[test]
fn issue16_switches_spelled_no_are_off() {
    let inv = marks_inputs();
    let native = run_native(&inv, None);
    for no in ["no", "NO", "off", "false", "0"] {
        let scratch = ScratchDir::new("settings-disable-no");
        let dir = scratch.path().join("run");
        let out = run_under_dgad(&inv, None, &record_env(&dir, &[("DGAD_DISABLE", no)]));
        assert!(out.status.success(), "DGAD_DISABLE={no}: {}", show(&out));
        assert_eq!(out.stdout, native.stdout, "DGAD_DISABLE={no}");
        assert_recorded(&dir);

        let out = run_under_dgad(&Invocation::new("/bin/true"), None, &[("DGAD_STATS", no)]);
        assert!(out.status.success(), "DGAD_STATS={no}: {}", show(&out));
        assert_eq!(dgad_lines(&out), Vec::<String>::new(), "DGAD_STATS={no}");
    }
    for yes in ["yes", "On", "TRUE", "1"] {
        let out = run_under_dgad(&Invocation::new("/bin/true"), None, &[("DGAD_STATS", yes)]);
        let lines = dgad_lines(&out);
        assert!(
            out.status.success() && lines.len() == 1 && lines[0].starts_with("dgad: stats"),
            "DGAD_STATS={yes}: {}",
            show(&out)
        );
        let scratch = ScratchDir::new("settings-disable-yes");
        let dir = scratch.path().join("run");
        let out = run_under_dgad(&inv, None, &record_env(&dir, &[("DGAD_DISABLE", yes)]));
        assert!(out.status.success(), "DGAD_DISABLE={yes}: {}", show(&out));
        assert!(!dir.exists(), "DGAD_DISABLE={yes} recorded");
    }
}

/// Any other value stops the program before it runs, with one line naming
/// the variable and the accepted spellings (`DGAD_STATS=maybe` used to turn
/// the statistics on, `DGAD_TRACE=maybe` tracing).
#[test]
fn issue16_bad_switch_value_stops_with_the_spellings() {
    let inv = marks_inputs();
    for name in SWITCHES {
        let out = run_under_dgad(&inv, None, &[(name, "maybe")]);
        let lines = dgad_lines(&out);
        assert_eq!(out.status.code(), Some(125), "{name}=maybe: {}", show(&out));
        assert!(out.stdout.is_empty(), "{name}=maybe: the program ran");
        assert!(
            lines.len() == 1
                && lines[0].contains(&format!("{name}=maybe is not a switch"))
                && lines[0].contains("1/0, yes/no, true/false or on/off"),
            "{name}=maybe: {lines:?}"
        );
    }
}

/// An empty value is the default, for switches (`DGAD_MATHWRAP=` used to
/// stop the program) and for the other settings (`DGAD_MODE=` too).
#[test]
fn issue16_empty_values_are_unset() {
    let inv = marks_inputs();
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("settings-empty");
    let dir = scratch.path().join("run");
    let empty: Vec<(&str, &str)> = SWITCHES
        .iter()
        .map(|&n| (n, ""))
        .chain([("DGAD_MODE", ""), ("DGAD_CPUID", ""), ("DGAD_LOG", "")])
        .collect();
    let mut env = vec![("DGAD_RECORD", dir.to_str().unwrap())];
    env.extend(empty);
    let out = run_under_dgad(&inv, None, &env);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(out.stdout, native.stdout);
    assert_eq!(dgad_lines(&out), Vec::<String>::new());
    assert_recorded(&dir);
}

/// A misspelt name is not silently ignored: one line, with the name it
/// probably meant; the run goes on. The variables of dgad's Python package
/// and test suite are known and not warned about.
#[test]
fn issue16_unknown_setting_warns_once() {
    let inv = marks_inputs();
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("settings-unknown");
    let dir = scratch.path().join("run");
    let extra = [
        ("DGAD_RECORDS", "/x"),
        ("DGAD_PY_KEEP", "1"),
        ("DGAD_TEST_TIMEOUT_SECS", "60"),
    ];
    let out = run_under_dgad(&inv, None, &record_env(&dir, &extra));
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(out.stdout, native.stdout);
    let lines = dgad_lines(&out);
    assert!(
        lines.len() == 1
            && lines[0].starts_with("dgad: unknown setting DGAD_RECORDS ")
            && lines[0].contains("did you mean DGAD_RECORD?")
            && lines[0].contains("known: DGAD_RECORD, DGAD_MODE, "),
        "{lines:?}"
    );
    assert_recorded(&dir);
}

/// Marks without a recording (DGAD_RECORD forgotten) used to pass without a
/// word: one line per process now, however many inputs, and otherwise the
/// program behaves as natively. A program without marks hears nothing.
#[test]
fn issue16_marked_program_without_recording_warns_once() {
    let inv = marks_inputs();
    let native = run_native(&inv, None);
    let scratch = ScratchDir::new("settings-unrecorded");
    let dir = scratch.path().join("run");
    let cases: [(&[(&str, &str)], &str); 3] = [
        (&[], "(DGAD_RECORD is not set)"),
        // DGAD_MODE= is unset: the default mode, null without DGAD_RECORD.
        (&[("DGAD_MODE", "")], "(DGAD_RECORD is not set)"),
        (
            &[("DGAD_RECORD", dir.to_str().unwrap())],
            "(DGAD_MODE=null)",
        ),
    ];
    for (env, why) in cases {
        let out = run_under_dgad(&inv, None, env);
        assert_eq!(out.status, native.status, "{env:?}");
        assert_eq!(out.stdout, native.stdout, "{env:?}");
        let lines = dgad_lines(&out);
        assert!(
            lines.len() == 1
                && lines[0].contains("the program marks AD inputs, but nothing is recorded")
                && lines[0].contains(why),
            "{env:?}: {lines:?}"
        );
        let program_stderr: Vec<_> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.starts_with("dgad:"))
            .map(str::to_owned)
            .collect();
        assert_eq!(
            program_stderr,
            String::from_utf8_lossy(&native.stderr)
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        );
    }
    assert!(!dir.exists(), "null mode wrote the record directory");
    let plain = run_under_dgad(&Invocation::new("/bin/echo").arg("hi"), None, &[]);
    assert_eq!(plain.stdout, b"hi\n");
    assert!(plain.stderr.is_empty(), "{}", show(&plain));
}
