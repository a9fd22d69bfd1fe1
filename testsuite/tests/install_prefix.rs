//! `scripts/install.sh PREFIX` lays out a prefix shaped like a Derivgrind
//! installation (issue 19). Clients written for Derivgrind — C, Fortran and
//! Python, unchanged — build against the prefix's headers and libraries
//! and run through its `bin/valgrind --tool=derivgrind`, `bin/derivgrind`
//! and `bin/tape-evaluation` (C and Fortran clients also linked
//! statically), with derivatives checked against the analytic ones.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use testsuite::{dgad_lib, workspace_root, ScratchDir};

/// Installs into `scratch/prefix` from the build under test.
fn install(scratch: &ScratchDir) -> PathBuf {
    let prefix = scratch.path().join("prefix");
    let out = Command::new("bash")
        .arg(workspace_root().join("scripts/install.sh"))
        .arg(&prefix)
        .arg("--from")
        .arg(dgad_lib().parent().unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "install.sh: {out:?}");
    prefix
}

fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `cmd` with `stdin` as its input.
fn with_input(mut cmd: Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// One number per line of `dir/name`.
fn column(dir: &Path, name: &str) -> Vec<f64> {
    std::fs::read_to_string(dir.join(name))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-13 * want.abs().max(1.0)
}

/// `tape-evaluation DIR` in reverse mode with `bars` on the outputs.
fn reverse(prefix: &Path, dir: &Path, bars: &str) -> Vec<f64> {
    std::fs::write(dir.join("dg-output-bars"), bars).unwrap();
    let out = Command::new(prefix.join("bin/tape-evaluation"))
        .arg(dir)
        .output()
        .unwrap();
    ok(out, "tape-evaluation");
    column(dir, "dg-input-bars")
}

#[test]
fn derivgrind_clients_run_against_the_installed_prefix() {
    let scratch = ScratchDir::new("install-prefix");
    let prefix = install(&scratch);
    let root = workspace_root();
    let valgrind = prefix.join("bin/valgrind");

    // C, recording: Derivgrind's cube example, compiled against the
    // prefix's <valgrind/derivgrind.h>.
    let cube = scratch.path().join("cube");
    let out = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&cube)
        .arg(root.join("testsuite/derivatives/derivgrind_cube.c"))
        .arg(format!("-I{}", prefix.join("include").display()))
        .output()
        .unwrap();
    ok(out, "gcc cube");
    let dir = scratch.path().join("cube-tape");
    let mut cmd = Command::new(&valgrind);
    cmd.arg("--tool=derivgrind")
        .arg(format!("--record={}", dir.display()))
        .arg(&cube);
    assert_eq!(ok(with_input(cmd, "2\n"), "valgrind cube").trim(), "8");
    assert_eq!(reverse(&prefix, &dir, "1\n"), [12.0]);
    // Derivgrind's earlier file names: dg-output-adjoints in,
    // dg-input-adjoints out.
    std::fs::remove_file(dir.join("dg-output-bars")).unwrap();
    std::fs::write(dir.join("dg-output-adjoints"), "1\n").unwrap();
    let out = Command::new(prefix.join("bin/tape-evaluation"))
        .arg(&dir)
        .output()
        .unwrap();
    ok(out, "tape-evaluation, adjoint names");
    assert_eq!(column(&dir, "dg-input-adjoints"), [12.0]);
    // Forward over the tape, and Derivgrind's --stats line: blocks with
    // no, one and two operands, adding up to the tape's blocks.
    std::fs::write(dir.join("dg-input-dots"), "1\n").unwrap();
    let out = Command::new(prefix.join("bin/tape-evaluation"))
        .arg(&dir)
        .arg("--forward")
        .output()
        .unwrap();
    ok(out, "tape-evaluation --forward");
    assert_eq!(column(&dir, "dg-output-dots"), [12.0]);
    let out = Command::new(prefix.join("bin/tape-evaluation"))
        .arg(&dir)
        .arg("--stats")
        .output()
        .unwrap();
    let stats = ok(out, "tape-evaluation --stats");
    let counts: Vec<u64> = stats
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    let blocks = std::fs::metadata(dir.join("dg-tape")).unwrap().len() / 32;
    assert_eq!(counts.len(), 3, "{stats:?}");
    assert_eq!(counts.iter().sum::<u64>(), blocks, "{stats:?}");
    // Block 0 and the input have no operands; x·x·x has operations.
    assert!(counts[0] >= 2 && counts[1] + counts[2] >= 1, "{stats:?}");

    // The same client linked statically, through the same command line:
    // it runs in the prefix's lib/dgad-static-host (decision 45).
    let cube_static = scratch.path().join("cube-static");
    let out = Command::new("gcc")
        .args(["-O2", "-static", "-o"])
        .arg(&cube_static)
        .arg(root.join("testsuite/derivatives/derivgrind_cube.c"))
        .arg(format!("-I{}", prefix.join("include").display()))
        .output()
        .unwrap();
    ok(out, "gcc -static cube");
    assert!(prefix.join("lib/dgad-static-host").is_file());
    let dir = scratch.path().join("cube-static-tape");
    let mut cmd = Command::new(&valgrind);
    cmd.arg("--tool=derivgrind")
        .arg(format!("--record={}", dir.display()))
        .arg(&cube_static);
    assert_eq!(
        ok(with_input(cmd, "2\n"), "valgrind static cube").trim(),
        "8"
    );
    assert_eq!(reverse(&prefix, &dir, "1\n"), [12.0]);

    // C, forward mode in the run through bin/derivgrind (which implies
    // --tool=derivgrind, as Derivgrind's wrapper script passes it).
    let forward = scratch.path().join("forward");
    let out = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&forward)
        .arg(root.join("testsuite/programs/record/derivgrind_forward.c"))
        .arg(format!("-I{}", prefix.join("include").display()))
        .output()
        .unwrap();
    ok(out, "gcc forward");
    let mut cmd = Command::new(prefix.join("bin/derivgrind"));
    cmd.arg(&forward);
    assert_eq!(
        ok(with_input(cmd, "2\n"), "derivgrind forward").trim(),
        "8 12"
    );

    // Fortran, as Derivgrind's documentation builds it: the module from
    // include/valgrind, the client library from lib/valgrind; linked
    // dynamically and statically.
    for link in [None, Some("-static")] {
        let what = link.unwrap_or("dynamic");
        let fortran = scratch
            .path()
            .join(format!("fortran{}", link.unwrap_or("")));
        let out = Command::new("gfortran")
            .args(["-O2", "-o"])
            .arg(&fortran)
            .args(link)
            .arg(root.join("testsuite/programs/fortran/derivgrind_style.f90"))
            .arg(format!("-I{}", prefix.join("include/valgrind").display()))
            .arg(prefix.join("lib/valgrind/libderivgrind_clientrequests-amd64.a"))
            .output()
            .unwrap();
        ok(out, "gfortran");
        let (x, z) = (0.75f64, 2.5f64);
        let dir = scratch
            .path()
            .join(format!("fortran-tape{}", link.unwrap_or("")));
        let out = Command::new(&valgrind)
            .arg("--tool=derivgrind")
            .arg(format!("--record={}", dir.display()))
            .arg(&fortran)
            .output()
            .unwrap();
        let y: f64 = ok(out, "valgrind fortran").trim().parse().unwrap();
        assert!(close(y, x.sin() * z * z), "{what}: {y}");
        let bars = reverse(&prefix, &dir, "1\n");
        assert_eq!(bars.len(), 2);
        assert!(close(bars[0], x.cos() * z * z), "{what}: {bars:?}");
        assert!(close(bars[1], 2.0 * x.sin() * z), "{what}: {bars:?}");
        let out = Command::new(prefix.join("bin/derivgrind"))
            .arg(&fortran)
            .arg("dot")
            .output()
            .unwrap();
        let dot: f64 = ok(out, "derivgrind fortran dot").trim().parse().unwrap();
        assert!(close(dot, x.cos() * z * z), "{what}: {dot}");
    }

    // Python: Derivgrind's `derivgrind` module from the prefix's
    // site-packages, recorded under bin/valgrind; and dgad.grad, which
    // finds the prefix's libdgad.so and dg-eval by itself.
    let site = prefix.join("lib/python3/site-packages");
    let dir = scratch.path().join("python-tape");
    let script = "import derivgrind as dg\n\
                  x = dg.inputf(1.25)\n\
                  y = x * x * x + 2.0 * x\n\
                  dg.outputf(y)\n\
                  print(y)\n";
    let out = Command::new(&valgrind)
        .arg("--tool=derivgrind")
        .arg(format!("--record={}", dir.display()))
        .args(["python3", "-c", script])
        .env("PYTHONPATH", &site)
        .env_remove("DGAD_LIB")
        .output()
        .unwrap();
    ok(out, "valgrind python3");
    assert_eq!(reverse(&prefix, &dir, "1\n"), [3.0 * 1.25 * 1.25 + 2.0]);
    let out = Command::new("python3")
        .args([
            "-c",
            "import dgad; g = dgad.grad(lambda v: v[0] ** 2 * v[1], [3.0, 2.0]); \
             print(repr(g[0]), repr(g[1]))",
        ])
        .env("PYTHONPATH", &site)
        .env_remove("DGAD_LIB")
        .env_remove("DGAD_EVAL")
        .output()
        .unwrap();
    assert_eq!(ok(out, "dgad.grad").trim(), "12.0 9.0");
}
