//! The launcher's early injection (issue 19): under `dgad` the runtime
//! takes over at the loader's rendezvous, before `.preinit_array` and every
//! library constructor. Inputs marked and computed on there carry their
//! derivatives, and so does work on a thread and in signal handlers a
//! library constructor set up; `--no-early` (plain `LD_PRELOAD`) shows what
//! is lost without it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use testsuite::{
    build_program_at, build_shared_library, programs_dir, run_native, workspace_root, Compiler,
    Invocation, OptLevel,
};

fn dgad() -> PathBuf {
    testsuite::dgad_launcher()
}

/// `source` (under `programs/record`) linked against `lib`.
fn build_with_library(source: &str, lib: &str) -> PathBuf {
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let lib = build_shared_library(lib, Compiler::Gcc, OptLevel::O3);
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    build_program_at(
        &programs_dir().join("record").join(source),
        Compiler::Gcc,
        OptLevel::O3,
        &[include],
        &[
            lib.clone().into(),
            format!("-Wl,-rpath,{}", lib.parent().unwrap().display()).into(),
            "-lm".into(),
        ],
    )
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-12 * want.abs().max(1.0)
}

/// `dgad jacobian --json [extra] -- prog args` with `env`: the parsed
/// output and the program's stdout (which `--json` sends to stderr).
fn jacobian(
    prog: &Path,
    args: &[String],
    extra: &[&str],
    env: &[(&str, &str)],
) -> serde_json::Value {
    let mut cmd = Command::new(dgad());
    cmd.args(["jacobian", "--json"])
        .args(extra)
        .arg("--")
        .arg(prog)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "dgad jacobian: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rows(v: &serde_json::Value) -> Vec<Vec<f64>> {
    v["jacobian"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

fn check(got: &[Vec<f64>], want: &[Vec<f64>]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "row {r}: {g:?} vs {w:?}");
        for (c, (a, b)) in g.iter().zip(w).enumerate() {
            assert!(close(*a, *b), "J[{r}][{c}]: {a} vs {b}");
        }
    }
}

/// Inputs marked in `.preinit_array` and used by a library constructor.
#[test]
fn inputs_marked_before_every_constructor_carry_derivatives() {
    let prog = build_with_library("early_marks.c", "record/early_marks_lib.c");
    let native = run_native(&Invocation::new(&prog), None);
    assert!(native.status.success(), "{native:?}");
    let (x, z) = (1.5f64, 2.0f64);
    let v = jacobian(&prog, &[], &[], &[]);
    assert_eq!(v["inputs"], 2, "{v}");
    assert_eq!(v["outputs"], 2, "{v}");
    check(
        &rows(&v),
        &[vec![x.sin() + x * x.cos(), 0.0], vec![0.0, 3.0 * z * z]],
    );
    // Under plain LD_PRELOAD the runtime starts after both: the marks are
    // made natively, nothing is an input, and dgad says so.
    let late = Command::new(dgad())
        .args(["jacobian", "--json", "--no-early", "--"])
        .arg(&prog)
        .output()
        .unwrap();
    assert_eq!(late.status.code(), Some(125), "{late:?}");
    assert!(
        String::from_utf8_lossy(&late.stderr).contains("marked no inputs"),
        "{late:?}"
    );
}

/// A worker thread and signal handlers set up by a library constructor
/// and `.preinit_array` (the program of `early_threads.rs`): with the early
/// takeover they run from the cache from their first instruction, whether
/// or not the worker blocks every signal.
#[test]
fn a_constructor_thread_and_handlers_carry_derivatives_under_dgad() {
    let prog = build_with_library("early_threads.c", "record/early_worker.c");
    const X: [f64; 3] = [0.5, 1.5, 2.0];
    let dy = |x: f64| 2.0 * x * x.sin() + x * x * x.cos() + 2.0;
    let x1 = X[1];
    let want = vec![
        vec![dy(X[0]), 0.0, 0.0],
        vec![0.0, dy(X[1]), 0.0],
        vec![0.0, 0.0, dy(X[2])],
        vec![6.0 * X[0] + X[0].exp(), 0.0, 0.0],
        vec![
            0.0,
            (1.0 - x1 * x1) / ((1.0 + x1 * x1) * (1.0 + x1 * x1)),
            0.0,
        ],
    ];
    let args: Vec<String> = X.iter().map(|x| x.to_string()).collect();
    for block in ["0", "1"] {
        let env: &[(&str, &str)] = if block == "1" {
            &[("EARLY_WORKER_BLOCK", "1")]
        } else {
            &[]
        };
        check(&rows(&jacobian(&prog, &args, &[], env)), &want);
    }
}

/// The early takeover changes nothing a program prints: the programs
/// above in null mode, libc's start-up state (`environ`, the program's
/// name) in null, record and forward mode, and a shell pipeline (whose
/// children take over in their constructors), against the native runs.
#[test]
fn early_takeover_is_transparent() {
    let prog = build_with_library("early_threads.c", "record/early_worker.c");
    let inv = Invocation::new(&prog).args(["0.5", "1.5", "2.0"]);
    let native = run_native(&inv, None);
    let out = Command::new(dgad())
        .args(["run", "--"])
        .arg(&prog)
        .args(["0.5", "1.5", "2.0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, native.stdout);
    // libc's own initialiser, run from the cache in every mode.
    let state = testsuite::build_program("c/startup_state.c", Compiler::Gcc, OptLevel::O3);
    let native = Command::new(&state)
        .args(["one", "two"])
        .env("STARTUP_STATE_PROBE", "here")
        .output()
        .unwrap();
    assert!(native.status.success());
    assert!(String::from_utf8_lossy(&native.stdout).contains("environ is envp: yes"));
    let tool_run: [&[&str]; 3] = [&["run", "--"], &["record", "--"], &["--tool=derivgrind"]];
    for args in tool_run {
        let scratch = testsuite::ScratchDir::new("early-startup");
        let out = Command::new(dgad())
            .args(args)
            .arg(&state)
            .args(["one", "two"])
            .env("STARTUP_STATE_PROBE", "here")
            .env("TMPDIR", scratch.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "dgad {args:?}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&native.stdout),
            "dgad {args:?}"
        );
    }
    let script = "printf 'b\\na\\nc\\n' | sort | tr a-z A-Z; exit 7";
    let native = Command::new("sh").args(["-c", script]).output().unwrap();
    let out = Command::new(dgad())
        .args(["run", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    assert_eq!(out.stdout, native.stdout);
    assert_eq!(out.stdout, b"A\nB\nC\n");
}

/// Where the program cannot be traced (here: `strace -f` traces it
/// already), the launcher says so in one line and runs it as plain
/// `LD_PRELOAD` does.
#[test]
fn without_ptrace_the_launcher_falls_back_to_ld_preload() {
    let prog = build_with_library("early_marks.c", "record/early_marks_lib.c");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null"])
        .arg(dgad())
        .args(["jacobian", "--json", "--"])
        .arg(&prog)
        .output()
        .expect("strace is needed (scripts/setup.sh installs it)");
    // As under plain LD_PRELOAD: the marks made before the runtime came in
    // are lost, which dgad says too.
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("cannot trace the program").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("marked no inputs"), "{stderr}");
}
