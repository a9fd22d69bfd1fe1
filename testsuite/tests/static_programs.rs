//! Statically linked programs under `dgad` (issue 19, decision 45): they run
//! inside `dgad-static-host`, with the runtime's libm wrappers standing in
//! for the image's own math functions. Derivatives against the analytic
//! Jacobian in reverse and forward mode, output byte-identical to the
//! native run, children of both kinds through `execve`, and crash reports
//! in guest terms.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use testsuite::derivatives::dg_eval;
use testsuite::dgad_json::{assert_jacobian, assert_tangents};
use testsuite::{build_program_at, programs_dir, workspace_root, Compiler, OptLevel, ScratchDir};

const X: [f64; 3] = [0.7, 1.3, 2.1];

/// The Jacobian of `static_libm.c` at `X`.
fn jacobian() -> [[f64; 3]; 2] {
    let [a, b, c] = X;
    let r2 = b * b + c * c;
    let cbrt = a.cbrt();
    [
        [
            a.cos() * b.exp() + c * a.powf(c - 1.0),
            a.sin() * b.exp() + c / r2,
            a.powf(c) * a.ln() - b / r2,
        ],
        [
            c.ln() * cbrt / (3.0 * a) + b.tanh(),
            a / (b.cosh() * b.cosh()),
            cbrt / c,
        ],
    ]
}

/// `gcc -O3 -static` of a program of `testsuite/programs/static`.
fn build(name: &str) -> PathBuf {
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    build_program_at(
        &programs_dir().join("static").join(name),
        Compiler::Gcc,
        OptLevel::O3,
        &[include, "-static".into(), "-pthread".into()],
        &["-lm".into()],
    )
}

/// `static_libm.c` built by `compiler` (`-O2 -static`, `flags` added) into
/// `dir`: the variants `build` cannot name apart (its output is named after
/// the source).
fn build_libm_client(dir: &ScratchDir, compiler: &str, flags: &[&str]) -> PathBuf {
    let prog = dir.path().join("static_libm");
    let built = Command::new(compiler)
        .args(["-O2", "-static"])
        .args(flags)
        .arg("-o")
        .arg(&prog)
        .arg("-I")
        .arg(workspace_root().join("include"))
        .arg(programs_dir().join("static/static_libm.c"))
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| {
            panic!("{compiler}: {e} (scripts/setup.sh installs gcc and musl-tools)")
        });
    succeed(compiler, built);
    prog
}

fn dgad() -> Command {
    Command::new(testsuite::dgad_launcher())
}

/// `dgad MODE`, recording into `dir/rec` for `record`.
fn dgad_in(mode: &str, dir: &ScratchDir) -> Command {
    let mut cmd = dgad();
    cmd.arg(mode);
    if mode == "record" {
        cmd.arg("--dir").arg(dir.path().join("rec"));
    }
    cmd
}

fn args() -> Vec<String> {
    X.map(|x| x.to_string()).to_vec()
}

fn succeed(what: &str, out: Output) -> Output {
    assert!(out.status.success(), "{what}: {out:?}");
    out
}

/// Checks `dgad jacobian --json`'s output against `static_libm.c`'s
/// Jacobian at `X`.
fn check_jacobian(what: &str, json: &[u8]) {
    assert_jacobian(what, &serde_json::from_slice(json).unwrap(), &jacobian());
}

/// `dgad jacobian --json` of `static_libm.c`'s build `prog`: the analytic
/// Jacobian, and the program's own output (on stderr there) as `native`.
fn jacobian_of(what: &str, prog: &Path, native: &Output) {
    let jac = succeed(
        what,
        dgad()
            .args(["jacobian", "--json", "--"])
            .arg(prog)
            .args(args())
            .output()
            .unwrap(),
    );
    check_jacobian(what, &jac.stdout);
    assert_eq!(jac.stderr, native.stdout, "{what}");
}

#[test]
fn reverse_and_forward_derivatives_of_a_static_program() {
    let prog = build("static_libm.c");
    assert!(
        testsuite_is_static(&prog),
        "{} should be statically linked",
        prog.display()
    );
    let native = succeed("native", Command::new(&prog).args(args()).output().unwrap());
    // Null mode prints the native bytes.
    let run = succeed(
        "run",
        dgad()
            .arg("run")
            .arg("--")
            .arg(&prog)
            .args(args())
            .output()
            .unwrap(),
    );
    assert_eq!(run.stdout, native.stdout);
    jacobian_of("glibc", &prog, &native);
    // Forward mode in the run along (1, 2, -1).
    let dot = succeed(
        "dot",
        dgad()
            .args(["dot", "--json", "--seed", "1,2,-1", "--"])
            .arg(&prog)
            .args(args())
            .output()
            .unwrap(),
    );
    let v: serde_json::Value = serde_json::from_slice(&dot.stdout).unwrap();
    assert_tangents("dot", &v, &jacobian(), [1.0, 2.0, -1.0]);
}

/// Whether `path` has no program interpreter (what `file` calls static).
fn testsuite_is_static(path: &Path) -> bool {
    let out = Command::new("readelf")
        .arg("-lW")
        .arg(path)
        .output()
        .unwrap();
    !String::from_utf8_lossy(&out.stdout).contains("INTERP")
}

/// The number of tape blocks `dgad record` (Derivgrind's format, options
/// `extra`) writes for one run of `static_libm.c`'s build `prog`.
fn tape_blocks(prog: &Path, extra: &[&str]) -> u64 {
    let dir = ScratchDir::new("static-blocks");
    let rec = dir.path().join("rec");
    succeed(
        "record",
        dgad()
            .args(["record", "--tape-format", "derivgrind", "--dir"])
            .arg(&rec)
            .args(extra)
            .arg("--")
            .arg(prog)
            .args(args())
            .output()
            .unwrap(),
    );
    std::fs::write(rec.join("dg-output-bars"), "1\n1\n").unwrap();
    let out = succeed(
        "dg-eval --stats",
        Command::new(dg_eval())
            .arg(&rec)
            .arg("--stats")
            .output()
            .unwrap(),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("tape:"))
        .unwrap()
        .to_owned();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The wrappers stand in for the image's own `sin`, `exp`, … (found in
/// its symbol table, IFUNCs through their PLT stubs): a handful of tape
/// blocks per evaluation, where glibc's machine code takes well over a
/// hundred.
#[test]
fn the_static_images_math_functions_are_answered_by_the_wrappers() {
    let prog = build("static_libm.c");
    let wrapped = tape_blocks(&prog, &[]);
    let machine_code = tape_blocks(&prog, &["--no-mathwrap"]);
    assert!(wrapped <= 40, "{wrapped} tape blocks with the wrappers");
    assert!(
        machine_code > 3 * wrapped,
        "{machine_code} blocks without the wrappers against {wrapped} with them"
    );
}

/// Built with `-fno-plt`, the program calls `sin`, `atan2` (IFUNCs) through
/// their GOT slots, not PLT stubs, and so reaches glibc's variants
/// (`__sin_fma`, …) directly: they are answered as well.
#[test]
fn ifunc_variants_reached_without_a_plt_stub_are_answered() {
    let dir = ScratchDir::new("static-noplt");
    let prog = build_libm_client(&dir, "gcc", &["-fno-plt"]);
    let native = succeed("native", Command::new(&prog).args(args()).output().unwrap());
    jacobian_of("-fno-plt", &prog, &native);
    let blocks = tape_blocks(&prog, &[]);
    assert!(
        // 21 with every function answered; 46 when sin and atan2 run as
        // machine code.
        blocks <= 30,
        "{blocks} tape blocks: a math function ran as machine code"
    );
}

/// A stripped static program cannot be searched for its math functions:
/// it runs without the wrappers, and says so.
#[test]
fn a_stripped_static_program_says_it_runs_without_the_wrappers() {
    let prog = build("static_libm.c");
    let dir = ScratchDir::new("static-stripped");
    let stripped = dir.path().join("stripped");
    let s = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&prog)
        .status()
        .unwrap();
    assert!(s.success());
    let out = succeed(
        "grad",
        dgad()
            .arg("grad")
            .arg("--")
            .arg(&stripped)
            .args(args())
            .output()
            .unwrap(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has no symbol table (stripped)")
            && err.contains("without the analytic wrappers"),
        "{err}"
    );
}

/// Runs `prog ARGS` under `dgad run` and `dgad record`: the output must be
/// `native`'s, byte for byte.
fn runs_as_natively(prog: &Path, args: &[&str], native: &Output) {
    for mode in ["run", "record"] {
        let dir = ScratchDir::new("static-modes");
        let out = succeed(
            mode,
            dgad_in(mode, &dir)
                .arg("--")
                .arg(prog)
                .args(args)
                .output()
                .unwrap(),
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&native.stdout),
            "{mode} of {}: {}",
            prog.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Null mode: threads with their own TLS and errno, the heap and the
/// break (100 MiB with `sbrk`, where the code cache would otherwise have
/// taken the room after the image), a handler
/// left with siglongjmp, timer signals, fork and an execve of a dynamic
/// program, byte for byte as natively; record mode too.
#[test]
fn a_static_program_runs_as_natively() {
    let prog = build("static_plain.c");
    let echo = ["/bin/echo", "dynamic", "after", "static"];
    let native = succeed("native", Command::new(&prog).args(echo).output().unwrap());
    let text = String::from_utf8_lossy(&native.stdout);
    assert!(
        text.contains("fault caught")
            && text.contains("break: grew yes, now 50 MiB above")
            && text.ends_with("dynamic after static\n"),
        "{text}"
    );
    runs_as_natively(&prog, &echo, &native);
}

/// `/proc/self/exe` and `/proc/self/auxv` are the host's to the kernel; the
/// program gets its own file from `readlink`, `open` and `execve` of the
/// first, and its own vector from the second, as natively.
#[test]
fn a_static_program_finds_itself_at_proc_self_exe() {
    let prog = build("static_self.c");
    let native = succeed("native", Command::new(&prog).output().unwrap());
    let text = String::from_utf8_lossy(&native.stdout);
    assert!(
        text.contains("generation 1: static_self, magic ELF, auxv 3 of 3 agree"),
        "{text}"
    );
    runs_as_natively(&prog, &[], &native);
}

/// An image that asks for an executable stack gets one: GCC's nested
/// functions call through trampolines written there.
#[test]
fn a_static_program_with_an_executable_stack_runs() {
    let prog = build("static_nested.c");
    let native = succeed("native", Command::new(&prog).output().unwrap());
    assert_eq!(native.stdout, b"43\n");
    runs_as_natively(&prog, &[], &native);
}

/// `execve` keeps every child under dgad: a shell script runs the static
/// program in a pipeline, and a static program execs a static one (which
/// runs in the host again). The Jacobian comes from the grandchild.
#[test]
fn static_and_dynamic_children_stay_under_dgad() {
    let client = build("static_libm.c");
    let plain = build("static_plain.c");
    let line = format!("'{}' {} | cat; true", client.display(), args().join(" "));
    let native = succeed(
        "native",
        Command::new("bash").args(["-c", &line]).output().unwrap(),
    );
    let out = succeed(
        "jacobian of a script",
        dgad()
            .args(["jacobian", "--json", "--", "bash", "-c", &line])
            .output()
            .unwrap(),
    );
    check_jacobian("script", &out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains(&String::from_utf8_lossy(&native.stdout).into_owned()),
        "{out:?}"
    );
    let out = succeed(
        "jacobian through a static exec",
        dgad()
            .args(["jacobian", "--json", "--"])
            .arg(&plain)
            .arg(&client)
            .args(args())
            .output()
            .unwrap(),
    );
    check_jacobian("static exec", &out.stdout);
}

/// A static program that dies of SIGSEGV: the report names its functions.
#[test]
fn crash_report_of_a_static_program_names_its_functions() {
    use std::os::unix::process::ExitStatusExt;
    let prog = build("static_segv.c");
    for mode in ["run", "record"] {
        let dir = ScratchDir::new("static-segv");
        let out = dgad_in(mode, &dir).arg("--").arg(&prog).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.signal() == Some(11) || out.status.code() == Some(139),
            "{mode}: {out:?}"
        );
        assert!(
            err.contains("crash report v1: signal 11 (SIGSEGV), fault address 0x10"),
            "{mode}: {err}"
        );
        let name = prog.file_name().unwrap().to_string_lossy().into_owned();
        for (k, func) in ["deref", "middle", "main"].iter().enumerate() {
            assert!(
                err.lines().any(|l| l.contains(&format!("#{k} 0x"))
                    && l.contains(&format!("{name}+0x"))
                    && l.contains(&format!(" {func}+0x"))),
                "{mode}: frame {k} in {func}:\n{err}"
            );
        }
    }
}

/// A program linked statically against musl instead of glibc: its own
/// thread pointer and math functions (plain symbols there), the same
/// Jacobian and output.
#[test]
fn a_musl_static_program_gives_the_analytic_jacobian() {
    let dir = ScratchDir::new("static-musl");
    let prog = build_libm_client(&dir, "musl-gcc", &[]);
    assert!(testsuite_is_static(&prog));
    let native = succeed("native", Command::new(&prog).args(args()).output().unwrap());
    jacobian_of("musl", &prog, &native);
}

/// A static Go program: Go's runtime keeps its thread data at `%fs`
/// without the ELF TLS ABI's thread pointer at fs:0, starts its threads
/// itself and preempts with signals. Output byte-identical in null,
/// record and dot mode.
#[test]
fn a_go_program_runs_as_natively() {
    let dir = ScratchDir::new("static-go");
    let prog = dir.path().join("goroutines");
    let built = Command::new("go")
        .args(["build", "-o"])
        .arg(&prog)
        .arg(".")
        .current_dir(programs_dir().join("static/go"))
        .env("CGO_ENABLED", "0")
        .env("GOCACHE", dir.path().join("gocache"))
        .env("GOFLAGS", "-mod=mod")
        .output()
        .expect("go (scripts/setup.sh installs golang-go)");
    succeed("go build", built);
    assert!(testsuite_is_static(&prog));
    let native = succeed("native", Command::new(&prog).output().unwrap());
    assert!(String::from_utf8_lossy(&native.stdout).contains("alloc 2000"));
    runs_as_natively(&prog, &[], &native);
    // Dot mode with nothing marked: straight through the host, as dgad
    // would start it.
    let host = testsuite::dgad_lib().with_file_name("dgad-static-host");
    let out = succeed(
        "dot",
        Command::new(host)
            .env("LD_PRELOAD", testsuite::dgad_lib())
            .env("DGAD_MODE", "dot")
            .env("DGAD_STATIC_EXEC", &prog)
            .output()
            .unwrap(),
    );
    assert_eq!(out.stdout, native.stdout, "dot");
}

/// The host given something that is not a static x86-64 program (by hand,
/// or a file replaced between the check and the exec): one line naming
/// the file and why, exit status 127, nothing run.
#[test]
fn the_host_refuses_what_is_not_a_static_program() {
    let dir = ScratchDir::new("static-refused");
    let text = dir.write("notes.txt", b"not a program\n");
    let empty = dir.write("empty", b"");
    let host = testsuite::dgad_lib().with_file_name("dgad-static-host");
    for (file, why) in [
        (text.as_path(), "(header)"),
        (empty.as_path(), "(header)"),
        (Path::new("/bin/true"), "(it has an interpreter)"),
    ] {
        let out = Command::new(&host)
            .env("LD_PRELOAD", testsuite::dgad_lib())
            .env("DGAD_STATIC_EXEC", file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(127), "{}: {err}", file.display());
        assert!(
            err.contains(&format!(
                "{}: not a static x86-64 ELF program {why}",
                file.display()
            )),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}
