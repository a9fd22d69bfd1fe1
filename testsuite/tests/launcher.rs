//! The `dgad` launcher (issue 19): `grad`, `jacobian` and `dot` print the
//! analytic derivatives of the README's example (3 inputs, 2 outputs),
//! `--json` parses back, `--version` names the commit, and Derivgrind's
//! command line runs Derivgrind-style clients in both modes.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use testsuite::derivatives::dg_eval;
use testsuite::dgad_json::{assert_jacobian, assert_tangents, close, numbers};
use testsuite::{
    build_program_at, build_record_program, dgad_lib, workspace_root, Compiler, OptLevel,
    ScratchDir,
};

const X: [f64; 3] = [1.5, -0.75, 2.0];

/// The example's Jacobian: f0 = x0 x1 + x1 x2² − x0/x2, f1 = |x|.
fn jacobian() -> [[f64; 3]; 2] {
    let [a, b, c] = X;
    let n = (a * a + b * b + c * c).sqrt();
    [
        [b - 1.0 / c, a + c * c, 2.0 * b * c + a / (c * c)],
        [a / n, b / n, c / n],
    ]
}

fn dgad() -> PathBuf {
    testsuite::dgad_launcher()
}

fn example() -> PathBuf {
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    build_program_at(
        &workspace_root().join("testsuite/derivatives/readme_gradient.c"),
        Compiler::Gcc,
        OptLevel::O3,
        &[include],
        &["-lm".into()],
    )
}

/// Runs `dgad ARGS -- example X`; returns stdout, requiring success.
fn run_dgad(args: &[&str]) -> String {
    let mut cmd = Command::new(dgad());
    cmd.args(args).arg("--").arg(example());
    cmd.args(X.map(|x| x.to_string()));
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "dgad {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn grad_prints_the_analytic_gradient() {
    let out = run_dgad(&["grad"]);
    let j = jacobian();
    let got: Vec<f64> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("d/dx"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(got.len(), 3, "{out}");
    for i in 0..3 {
        assert!(
            close(got[i], j[0][i] + j[1][i]),
            "d/dx{i}: {} vs {}",
            got[i],
            j[0][i] + j[1][i]
        );
    }
    // The program's own output comes first, as natively.
    assert!(out.starts_with("-4.875\n"), "{out}");
}

#[test]
fn grad_json_parses_back_for_each_output() {
    let j = jacobian();
    for (k, seed) in ["1,0", "0,1"].iter().enumerate() {
        let out = run_dgad(&["grad", "--json", "--seed", seed]);
        let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is one JSON object");
        let g = numbers(&v["gradient"]);
        assert_eq!(numbers(&v["output_seeds"]).len(), 2);
        for i in 0..3 {
            assert!(
                close(g[i], j[k][i]),
                "f{k} d/dx{i}: {} vs {}",
                g[i],
                j[k][i]
            );
        }
    }
}

#[test]
fn jacobian_and_dot_agree_with_the_analytic_jacobian() {
    let j = jacobian();
    let v: serde_json::Value = serde_json::from_str(&run_dgad(&["jacobian", "--json"])).unwrap();
    assert_eq!(v["inputs"], 3);
    assert_eq!(v["outputs"], 2);
    assert_jacobian("jacobian", &v, &j);
    // Forward mode in the run along (1, 2, -1): J·v.
    let v: serde_json::Value =
        serde_json::from_str(&run_dgad(&["dot", "--json", "--seed", "1,2,-1"])).unwrap();
    assert_tangents("dot", &v, &j, [1.0, 2.0, -1.0]);
    let csv = run_dgad(&["jacobian", "--csv"]);
    assert_eq!(
        csv.lines().next(),
        Some("output,d/dx0,d/dx1,d/dx2"),
        "{csv}"
    );
}

/// `grad` and `jacobian` sweep in the program's process at exit by
/// default (DGAD_GRAD); `--keep-tape` records a file (compact by default,
/// Derivgrind's blocks with `--tape-format derivgrind`) and runs dg-eval.
/// All print the same bits, and only `--keep-tape` leaves a tape.
#[test]
fn in_process_and_file_sweeps_print_the_same() {
    let scratch = ScratchDir::new("launcher-keep-tape");
    for command in [
        &["grad", "--seed", "0.5,-2"][..],
        &["jacobian"][..],
        &["grad"][..],
    ] {
        let mut printed = Vec::new();
        for (keep, format) in [
            (false, None),
            (true, None),
            (true, Some("derivgrind")),
            (true, Some("compact")),
        ] {
            let dir = scratch.path().join(format!(
                "{}-{keep}-{}",
                command.len(),
                format.unwrap_or("default")
            ));
            let mut args: Vec<&str> = command.to_vec();
            args.extend(["--json", "--dir", dir.to_str().unwrap()]);
            if keep {
                args.push("--keep-tape");
            }
            if let Some(f) = format {
                args.extend(["--tape-format", f]);
            }
            // The same text but for the directory it names.
            printed.push(run_dgad(&args).replace(dir.to_str().unwrap(), "DIR"));
            let blocks = format == Some("derivgrind");
            assert_eq!(dir.join("dg-tape").exists(), keep && blocks, "{args:?}");
            assert_eq!(
                dir.join("dg-tape-compact").exists(),
                keep && !blocks,
                "{args:?}"
            );
        }
        for p in &printed[1..] {
            assert_eq!(&printed[0], p, "{command:?}");
        }
    }
}

/// A `DGAD_TAPE_FORMAT` in the user's environment does not stop `grad`,
/// whose tape in memory has no file format, and `record` follows it.
#[test]
fn a_tape_format_in_the_environment_is_for_tape_files_only() {
    let scratch = ScratchDir::new("launcher-env-format");
    let gradient = |text: &str| {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["gradient"].clone()
    };
    let reference = gradient(&run_dgad(&["grad", "--json"]));
    for format in ["compact", "derivgrind"] {
        let mut cmd = Command::new(dgad());
        cmd.env("DGAD_TAPE_FORMAT", format)
            .args(["grad", "--json", "--"])
            .arg(example());
        cmd.args(X.map(|x| x.to_string()));
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{format}: {out:?}");
        let printed = gradient(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(printed, reference, "{format}");
    }
    let dir = scratch.path().join("record");
    let out = Command::new(dgad())
        .env("DGAD_TAPE_FORMAT", "compact")
        .args(["record", "--tape-format", "derivgrind", "--dir"])
        .arg(&dir)
        .arg("--")
        .arg(example())
        .args(X.map(|x| x.to_string()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(dir.join("dg-tape").is_file() && !dir.join("dg-tape-compact").exists());
}

#[test]
fn bad_seeds_are_refused() {
    let mut cmd = Command::new(dgad());
    cmd.args(["grad", "--seed", "1,2,3", "--"]).arg(example());
    cmd.args(X.map(|x| x.to_string()));
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--seed has 3 values"),
        "{out:?}"
    );
}

#[test]
fn versions_name_the_commit() {
    for tool in [dgad(), dg_eval()] {
        let out = Command::new(&tool).arg("--version").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("(commit "),
            "{}: {text}",
            tool.display()
        );
    }
}

/// Derivgrind's command line: `--record=DIR` records (then dg-eval gives
/// 3x²); without it, forward mode for a client that seeds its own dot values.
#[test]
fn derivgrind_command_line() {
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    let cube = build_program_at(
        &workspace_root().join("testsuite/derivatives/derivgrind_cube.c"),
        Compiler::Gcc,
        OptLevel::O3,
        &[include],
        &[],
    );
    let scratch = ScratchDir::new("launcher-derivgrind");
    let dir = scratch.path().join("rec");
    let run = |args: &[OsString], prog: &PathBuf| {
        let mut child = Command::new(dgad())
            .args(args)
            .arg(prog)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(b"2\n").unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let record: OsString = format!("--record={}", dir.display()).into();
    let out = run(&["--tool=derivgrind".into(), record], &cube);
    assert_eq!(out.trim(), "8");
    std::fs::write(dir.join("dg-output-bars"), "1\n").unwrap();
    let status = Command::new(dg_eval()).arg(&dir).status().unwrap();
    assert!(status.success());
    let bar: f64 = std::fs::read_to_string(dir.join("dg-input-bars"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(bar, 12.0);
    let forward = build_record_program("derivgrind_forward.c", &[], OptLevel::O3);
    let out = run(&["--tool=derivgrind".into()], &forward);
    assert_eq!(out.trim(), "8 12");
    // Valgrind's gdbserver options that only matter once gdb attaches.
    let out = run(
        &[
            "--tool=derivgrind".into(),
            "--vgdb=yes".into(),
            "--vgdb-error=9".into(),
        ],
        &forward,
    );
    assert_eq!(out.trim(), "8 12");
}

/// A program for another machine (here a copy of an x86-64 one marked as
/// 32-bit x86, which Derivgrind supports and dgad does not) is refused
/// before it runs: the loader would drop the runtime with a warning and
/// run it natively, every derivative silently missing.
#[test]
fn programs_for_another_machine_are_refused() {
    let scratch = ScratchDir::new("launcher-foreign");
    let x32 = scratch.path().join("prog32");
    let mut elf = std::fs::read(example()).unwrap();
    assert_eq!(&elf[..5], b"\x7fELF\x02");
    elf[4] = 1; // ELFCLASS32
    elf[18..20].copy_from_slice(&3u16.to_le_bytes()); // EM_386
    std::fs::write(&x32, &elf).unwrap();
    for args in [&["run", "--"][..], &["--tool=derivgrind"][..]] {
        let out = Command::new(dgad()).args(args).arg(&x32).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{out:?}");
        assert!(out.stdout.is_empty(), "it did not run: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is not an x86-64 program (32-bit, ELF machine 3)"),
            "{err}"
        );
    }
}

/// `dgad vgdb` (the relay gdb runs) says what is wrong instead of hanging:
/// no `--pid`, or no gdbserver in that process.
#[test]
fn vgdb_without_a_server_says_so() {
    for (args, message) in [
        (&["vgdb"][..], "vgdb: --pid=PID names the process to debug"),
        (
            &["vgdb", "--pid=1"][..],
            "vgdb: no dgad gdbserver in process 1",
        ),
    ] {
        let out = Command::new(dgad()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(125), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{err}");
    }
}

/// Derivgrind's interactive use, as its own tests drive it: `--vgdb-error=0`
/// stops the program for gdb, which attaches with `target remote | vgdb`,
/// breaks at two lines, continues, steps over its breakpoints, and sends
/// the monitor commands: forward mode seeds `a` and `b` (`set`) and reads
/// the tangent of `c = a·b + sin a` (`get`); recording marks `a` and `b`
/// as inputs (`mark`) and reads the index of `c` (`index`), after which
/// `dg-eval` gives the gradient. Both against the analytic derivatives.
#[test]
fn derivgrind_interactive_under_gdb() {
    interactive_under_gdb(false);
}

/// The same session with the program linked statically: it runs in
/// `dgad-static-host` (decision 45), and gdb gets the program's own
/// auxiliary vector from the gdbserver.
#[test]
fn derivgrind_interactive_under_gdb_static() {
    interactive_under_gdb(true);
}

fn interactive_under_gdb(static_link: bool) {
    use std::io::{BufRead as _, BufReader};
    let scratch = ScratchDir::new("launcher-gdb");
    let source = testsuite::programs_dir().join("record/gdb_interactive.c");
    let prog = scratch.path().join("gdb_interactive");
    let built = Command::new("cc")
        .args(["-g", "-O0"])
        .args(static_link.then_some("-static"))
        .arg(&source)
        .arg("-o")
        .arg(&prog)
        .arg("-lm")
        .status()
        .unwrap();
    assert!(built.success());
    let text = std::fs::read_to_string(&source).unwrap();
    let line_of = |marker: &str| 1 + text.lines().position(|l| l.contains(marker)).unwrap();
    let (before, after, lp) = (
        line_of("gdb: before"),
        line_of("gdb: after"),
        line_of("gdb: loop"),
    );
    let dir = scratch.path().join("rec");
    for recording in [false, true] {
        let mut args: Vec<OsString> = vec!["--tool=derivgrind".into(), "--vgdb-error=0".into()];
        if recording {
            args.push(format!("--record={}", dir.display()).into());
        }
        let mut child = Command::new(dgad())
            .args(&args)
            .arg(&prog)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The program waits; dgad says how to attach.
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut target = None;
        let mut line = String::new();
        while stderr.read_line(&mut line).unwrap() > 0 {
            if let Some(at) = line.find("target remote | ") {
                target = Some(line[at..].trim().to_string());
                break;
            }
            line.clear();
        }
        let target = target.expect("dgad names the gdb command");
        let (seed, read) = if recording {
            (
                "eval \"monitor mark 0x%lx\", &a\neval \"monitor mark 0x%lx\", &b",
                "eval \"monitor index 0x%lx\", &c",
            )
        } else {
            (
                "eval \"monitor set 0x%lx 3\", &a\neval \"monitor set 0x%lx 4\", &b",
                "eval \"monitor get 0x%lx\", &c",
            )
        };
        let script = scratch.path().join("commands.gdb");
        std::fs::write(
            &script,
            format!(
                "set pagination off\n{target}\nbreak gdb_interactive.c:{before}\n\
                 break gdb_interactive.c:{after}\ncontinue\n{seed}\ncontinue\nprint c\n\
                 {read}\nbreak gdb_interactive.c:{lp}\ncontinue\nprint i\ncontinue\n\
                 print i\ncontinue\nprint i\ndelete\ncontinue\n"
            ),
        )
        .unwrap();
        let gdb = Command::new("timeout")
            .args(["60", "gdb", "-batch", "-nx", "-x"])
            .arg(&script)
            .arg(&prog)
            .output()
            .expect("gdb runs (scripts/setup.sh installs it)");
        // gdb prints the monitor's answers on stderr in batch mode.
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&gdb.stdout),
            String::from_utf8_lossy(&gdb.stderr)
        );
        // gdb hears of the exit when the program calls `exit_group`; the
        // runtime still writes its files after that. Give it time to end
        // on its own (killing it at once made the status 9 on a busy
        // machine); kill it only if it hangs.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let c = 2.0 + 1f64.sin();
        assert!(
            said.contains(&format!("$1 = {}", c)) || said.contains("$1 = 2.84"),
            "{said}"
        );
        assert!(said.contains("exited normally"), "{said}");
        // The loop's breakpoint stops on every iteration.
        for (k, i) in (2..5).zip(0..3) {
            assert!(said.contains(&format!("${k} = {i}\n")), "{said}");
        }
        assert!(out.status.success(), "{out:?}");
        if recording {
            let indices: Vec<u64> = said
                .lines()
                .filter_map(|l| l.trim().strip_prefix("index: "))
                .map(|n| n.parse().unwrap())
                .collect();
            assert_eq!(indices.len(), 3, "{said}");
            let write = |name: &str, rows: &[u64]| {
                let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
                std::fs::write(dir.join(name), text).unwrap();
            };
            write("dg-input-indices", &indices[..2]);
            write("dg-output-indices", &indices[2..]);
            std::fs::write(dir.join("dg-output-bars"), "1\n").unwrap();
            assert!(Command::new(dg_eval())
                .arg(&dir)
                .status()
                .unwrap()
                .success());
            let bars: Vec<f64> = std::fs::read_to_string(dir.join("dg-input-bars"))
                .unwrap()
                .lines()
                .map(|l| l.trim().parse().unwrap())
                .collect();
            let want = [2.0 + 1f64.cos(), 1.0];
            assert!(
                close(bars[0], want[0]) && close(bars[1], want[1]),
                "{bars:?}"
            );
        } else {
            let dot: f64 = said
                .lines()
                .find_map(|l| l.trim().strip_prefix("dot value: "))
                .expect("the monitor's answer")
                .parse()
                .unwrap();
            let want = 3.0 * 2.0 + 4.0 * 1.0 + 3.0 * 1f64.cos();
            assert!(close(dot, want), "{dot} against {want}");
        }
    }
}

/// A program that dies of SIGSEGV in its own code: the report names the
/// faulting instruction and the calls that led there in the program's
/// terms (module+offset, function+offset), and the process still dies of
/// the signal, as natively.
#[test]
fn crash_report_names_the_guest_functions() {
    use std::os::unix::process::ExitStatusExt;
    let prog = build_record_program("segv_in_own_code.c", &[], OptLevel::O3);
    for mode in ["null", "dot"] {
        let out = Command::new(&prog)
            .env("LD_PRELOAD", dgad_lib())
            .env("DGAD_MODE", mode)
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(11), "{mode}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("dgad:")).collect();
        assert!(
            lines.first().is_some_and(
                |l| l.contains("crash report v1: signal 11 (SIGSEGV), fault address 0x10")
            ),
            "{mode}: {err}"
        );
        let name = prog.file_name().unwrap().to_string_lossy().into_owned();
        let frame = |k: usize, func: &str| {
            lines.iter().any(|l| {
                l.contains(&format!("#{k} 0x"))
                    && l.contains(&format!("{name}+0x"))
                    && l.contains(&format!(" {func}+0x"))
            })
        };
        assert!(frame(0, "deref"), "{mode}: frame 0 in deref:\n{err}");
        assert!(
            lines[1].contains(": mov"),
            "{mode}: frame 0 disassembled:\n{err}"
        );
        assert!(frame(1, "middle"), "{mode}: frame 1 in middle:\n{err}");
        assert!(frame(2, "main"), "{mode}: frame 2 in main:\n{err}");
    }
}
