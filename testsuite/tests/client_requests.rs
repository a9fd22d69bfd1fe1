//! What a client request keeps: the runtime answers most requests on a
//! light path that saves only the registers its own code uses (`entry.rs`,
//! `Tool::light_request`); every other register of the program must come
//! back as it was, and the answers must be those of the full path.

use testsuite::derivatives::eval_values;
use testsuite::recording;
use testsuite::{
    build_record_program, run_native, run_under_dgad, Invocation, OptLevel, ScratchDir,
};

/// `request_state.c` at -O0 and -O3 in every mode: ymm0–15, zmm16–31 and
/// k1–7 (with AVX-512), a full x87 stack under a single-precision control
/// word, MXCSR (round to zero, FTZ, DAZ), DF and AC unchanged by each
/// request; the answers right (the mode, dot values set and read back,
/// input indices kept, a result pointer that cannot be written said and
/// skipped); record mode's gradient of y = v0·v1 + w is (v1, v0, 1).
#[test]
fn requests_keep_every_register_they_do_not_answer_in() {
    for opt in [OptLevel::O0, OptLevel::O3] {
        let prog = build_record_program("request_state.c", &[], opt);
        let inv = Invocation::new(&prog);
        let native = run_native(&inv, None);
        assert!(native.status.success(), "{opt:?} native: {native:?}");
        let stdout = |out: &testsuite::Outcome| String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            stdout(&native),
            "mode 0 (flags 0)\nmode 0 (flags 0x400)\nmode 0 (flags 0x40000)\n"
        );

        let null = run_under_dgad(&inv, None, &[("DGAD_MODE", "null")]);
        assert!(null.status.success(), "{opt:?} null mode: {null:?}");
        assert_eq!(stdout(&null), stdout(&native), "{opt:?} null mode");

        let dot = run_under_dgad(&inv, None, &[("DGAD_MODE", "dot")]);
        assert!(dot.status.success(), "{opt:?} dot mode: {dot:?}");
        let unwritable = "a client request's result address 0x10 is not writable";
        assert!(
            String::from_utf8_lossy(&dot.stderr).contains(unwritable),
            "{opt:?} dot mode: {dot:?}"
        );
        let modes = "mode 100 (flags 0)\nmode 100 (flags 0x400)\nmode 100 (flags 0x40000)\n";
        assert_eq!(
            stdout(&dot),
            format!("{modes}dot 0x1.8p-1 same\ny = 14.75\n"),
            "{opt:?} dot mode"
        );

        let dir = ScratchDir::new("request-state");
        let rec = run_under_dgad(
            &inv,
            None,
            &[
                ("DGAD_MODE", "record"),
                ("DGAD_RECORD", dir.path().to_str().unwrap()),
            ],
        );
        assert!(rec.status.success(), "{opt:?} record mode: {rec:?}");
        assert!(
            String::from_utf8_lossy(&rec.stderr).contains(unwritable),
            "{opt:?} record mode: {rec:?}"
        );
        let inputs: String = (0..3).map(|i| format!("input {i}: index kept\n")).collect();
        assert_eq!(
            stdout(&rec),
            format!(
                "{}{inputs}y = 14.75\n",
                modes.replace("mode 100", "mode 98")
            ),
            "{opt:?} record mode"
        );
        let grad = eval_values(dir.path(), "dg-output-bars", "1\n", "dg-input-bars", false);
        assert_eq!(grad, [4.0, 3.0, 1.0], "{opt:?}: the gradient of v0·v1 + w");
    }
}

/// The same requests, checked the same way, 1,000 rounds under a 200 µs
/// timer whose handler computes with vector and x87 registers: signals
/// that arrive while a request is answered (on the light path or the full
/// one) are delivered after it, and nothing of the program's state moves.
#[test]
fn requests_under_a_timer_keep_every_register() {
    let prog = build_record_program("request_state.c", &[], OptLevel::O3);
    let inv = Invocation::new(&prog).args(["timer", "1000"]);
    let dir = ScratchDir::new("request-state-timer");
    let record = dir.path().join("run");
    for env in [
        vec![("DGAD_MODE", "null")],
        vec![("DGAD_MODE", "dot")],
        vec![
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", record.to_str().unwrap()),
        ],
    ] {
        let out = run_under_dgad(&inv, None, &env);
        assert!(out.status.success(), "{env:?}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "timer ok\n",
            "{env:?}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        let handled: u64 = err
            .lines()
            .find_map(|l| {
                l.strip_prefix("timer: ")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("{env:?}: no count of signals: {err}"));
        assert!(handled > 0, "{env:?}: no signal arrived: {err}");
    }
}

/// `mark_forms.c` (every form of input and output mark) as built, whose
/// marks are dgad's one request each, and built with
/// `DGAD_THREE_REQUEST_MARKS`, whose marks are Derivgrind's three requests
/// (what a program built against Derivgrind's header sends): the same
/// output natively and under dgad, the same record files byte for byte,
/// the same tangents in dot mode, and both right: the gradient of the
/// declared outputs y1, y1, yf, yl, yg over the inputs xf, xd, xl, xg
/// seeded with ones, and their tangents along (1, 2, 3, 4).
#[test]
fn one_request_marks_record_what_three_requests_record() {
    let one = build_record_program("mark_forms.c", &[], OptLevel::O3);
    let source = std::fs::read_to_string(testsuite::programs_dir().join("record/mark_forms.c"))
        .expect("mark_forms.c");
    let generated = testsuite::target_dir().join("generated/mark_forms_three.c");
    let text = format!("#define DGAD_THREE_REQUEST_MARKS 1\n{source}");
    if std::fs::read_to_string(&generated).ok().as_deref() != Some(text.as_str()) {
        std::fs::create_dir_all(generated.parent().unwrap()).unwrap();
        std::fs::write(&generated, &text).unwrap();
    }
    let include: std::ffi::OsString = format!(
        "-I{}",
        testsuite::workspace_root().join("include").display()
    )
    .into();
    let three = testsuite::build_program_at(
        &generated,
        testsuite::Compiler::Gcc,
        OptLevel::O3,
        &[include],
        &[],
    );
    let scratch = ScratchDir::new("one-request-marks");
    let mut stdouts = Vec::new();
    let mut files = Vec::new();
    let mut requests = Vec::new();
    for (name, prog) in [("one", &one), ("three", &three)] {
        let inv = Invocation::new(prog);
        let native = run_native(&inv, None);
        assert!(native.status.success(), "{name} native: {native:?}");
        assert_eq!(
            String::from_utf8_lossy(&native.stdout),
            "y1 4.5 y2 18.75 yg 18 yf 2.25 yl 1.875\nDG_INPUT index 0, DG_OUTPUT index 0\n"
        );
        let rec_dir = scratch.path().join(format!("record-{name}"));
        let rec = recording::record(&inv, &rec_dir, &[("DGAD_STATS", "1")]);
        assert!(rec.status.success(), "{name} record: {rec:?}");
        let stderr = recording::stderr(&rec);
        let answered = recording::stats_count(&stderr, " client requests (")
            .unwrap_or_else(|| panic!("no request count in the statistics: {stderr}"));
        requests.push(answered);
        let grad = eval_values(
            &rec_dir,
            "dg-output-bars",
            "1\n1\n1\n1\n1\n",
            "dg-input-bars",
            false,
        );
        assert_eq!(grad, [18.0, 9.75, 8.5, 4.5], "{name}: the gradient");
        let dot_dir = scratch.path().join(format!("dot-{name}"));
        std::fs::create_dir_all(&dot_dir).unwrap();
        std::fs::write(dot_dir.join("dg-input-dots"), "1\n2\n3\n4\n").unwrap();
        let dot = run_under_dgad(
            &inv,
            None,
            &[
                ("DGAD_MODE", "dot"),
                ("DGAD_RECORD", dot_dir.to_str().unwrap()),
            ],
        );
        assert!(dot.status.success(), "{name} dot: {dot:?}");
        let dots: Vec<f64> = std::fs::read_to_string(dot_dir.join("dg-output-dots"))
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert_eq!(dots, [8.5, 8.5, 3.0, 9.0, 52.0], "{name}: the tangents");
        stdouts.push((rec.stdout.clone(), dot.stdout.clone()));
        let read = |f: &str| std::fs::read(rec_dir.join(f)).unwrap();
        files.push((
            read("dg-tape"),
            read("dg-input-indices"),
            read("dg-output-indices"),
            std::fs::read(dot_dir.join("dg-output-dots")).unwrap(),
        ));
    }
    // Eleven marks and five passive copies: one request per mark, or
    // three (two for DG_INPUT and DG_OUTPUT, which write no index file).
    assert_eq!(requests, [16, 36], "client requests answered");
    assert_eq!(stdouts[0], stdouts[1], "the programs' output under dgad");
    assert!(files[0] == files[1], "the record files and the output dots");
}
