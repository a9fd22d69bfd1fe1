//! The transparency suite: every program must behave under dgad
//! (`DGAD_MODE=null`) exactly as it does natively.
//!
//! Compiled programs get one test per compiler and optimisation level, named
//! `<program>::<compiler>_<flags>`, so `cargo test -p testsuite -- clang_O3_native`
//! runs one axis. System programs and Python scripts get one test each.

use testsuite::{
    assert_same_behaviour, assert_transparent, check_program, programs_dir, run_native,
    run_under_dgad, Compiler, Invocation, OptLevel, Program, ScratchDir,
};

/// One module per program, one test per (compiler, flags) pair listed.
macro_rules! program_tests {
    ($module:ident = $program:expr; $($test:ident => $compiler:ident $opt:ident),+ $(,)?) => {
        #[allow(non_snake_case)]
        mod $module {
            use super::*;
            $(
                #[test]
                fn $test() {
                    check_program(&$program, Compiler::$compiler, OptLevel::$opt);
                }
            )+
        }
    };
}

/// C and C++ programs: gcc/g++ and clang/clang++ at -O0, -O3 and
/// -O3 -march=native.
macro_rules! c_family_tests {
    ($($module:ident = $program:expr;)+) => {
        $(
            program_tests! {
                $module = $program;
                gcc_O0 => Gcc O0,
                gcc_O3 => Gcc O3,
                gcc_O3_native => Gcc O3Native,
                clang_O0 => Clang O0,
                clang_O3 => Clang O3,
                clang_O3_native => Clang O3Native,
            }
        )+
    };
}

/// Fortran programs: gfortran at -O0 and -O3.
macro_rules! fortran_tests {
    ($($module:ident = $program:expr;)+) => {
        $(
            program_tests! {
                $module = $program;
                gfortran_O0 => Gfortran O0,
                gfortran_O3 => Gfortran O3,
            }
        )+
    };
}

c_family_tests! {
    c_pthreads = Program::new("c/pthreads.c");
    c_sigalrm = Program::new("c/sigalrm.c");
    c_regression_signal_before_syscall = Program::new("c/regression_signal_before_syscall.c");
    c_sigsegv = Program::new("c/sigsegv.c");
    c_libm_signals = Program::new("c/libm_signals.c");
    c_setjmp_longjmp = Program::new("c/setjmp_longjmp.c");
    c_fork_exec = Program::new("c/fork_exec.c");
    c_dlopen_libm = Program::new("c/dlopen_libm.c");
    c_dlopen_plugins = Program::new("c/dlopen_plugins.c")
        .libraries(&["c/plugins/plugin_a.c", "c/plugins/plugin_b.c"]);
    c_tls = Program::new("c/tls.c");
    c_x87_long_double = Program::new("c/x87_long_double.c");
    c_printf_doubles = Program::new("c/printf_doubles.c");
    c_vector_sums = Program::new("c/vector_sums.c");
    c_exit_from_thread = Program::new("c/exit_from_thread.c").expected_status(3);
    c_exit_status = Program::new("c/exit_status.c").expected_status(7);
    c_main_exits_first = Program::new("c/main_exits_first.c");
    c_null_call = Program::new("c/null_call.c");
    c_no_exec = Program::new("c/no_exec.c");
    c_int3_trap = Program::new("c/int3_trap.c");
    c_many_threads = Program::new("c/many_threads.c");
    c_wild_addresses = Program::new("c/wild_addresses.c");
    c_rt_signal_burst = Program::new("c/rt_signal_burst.c");
    c_rwx_code = Program::new("c/rwx_code.c");
    c_dual_mapped_code = Program::new("c/dual_mapped_code.c");
    c_handler_fpu_state = Program::new("c/handler_fpu_state.c");
    c_altstack_query = Program::new("c/altstack_query.c");
    c_flags_across_indirect_jump = Program::new("c/flags_across_indirect_jump.c");
    c_red_zone = Program::new("c/red_zone.c");
    c_stack_overflow_altstack = Program::new("c/stack_overflow_altstack.c");
    c_lookup_conflicts = Program::new("c/lookup_conflicts.c");
    c_flags_across_calls = Program::new("c/flags_across_calls.c");
    c_code_replaced_across_page = Program::new("c/code_replaced_across_page.c");
    c_rlimit_as = Program::new("c/rlimit_as.c");
    c_vfork_sigaction = Program::new("c/vfork_sigaction.c");
    c_signal_pairs = Program::new("c/signal_pairs.c");
    c_alignment_check = Program::new("c/alignment_check.c");
    c_restart_rules = Program::new("c/restart_rules.c");
    c_far_code = Program::new("c/far_code.c");
    c_async_preempt = Program::new("c/async_preempt.c");
    c_fault_reports = Program::new("c/fault_reports.c");
    c_stack_overflow_no_altstack = Program::new("c/stack_overflow_no_altstack.c");
    c_clone_stacks = Program::new("c/clone_stacks.c");
    c_libm_bad_pointers = Program::new("c/libm_bad_pointers.c");
    // Exports its own memset & co., as sanitizer runtimes do.
    c_own_memfns = Program::new("c/own_memfns.c").link_args(&["-rdynamic"]);
    // The benchmark size would make -O0 under a slow mode take minutes.
    c_stencil = Program::new("c/stencil.c").args(&["96", "40"]);
    cxx_exceptions = Program::new("cxx/exceptions.cpp");
    cxx_containers = Program::new("cxx/containers.cpp");
}

fortran_tests! {
    fortran_intrinsics = Program::new("fortran/intrinsics.f90");
    fortran_internal_procedures = Program::new("fortran/internal_procedures.f90");
}

/// Targets that share a set of the lookup table, used in turn, are both
/// found in it (a two-way set) instead of evicting each other at every
/// use: the program makes 650,000 lookups, most of them to a target the
/// other one of its pair had just displaced (and a third target of one
/// set, used every eighth round, which two ways cannot hold). With a
/// one-way table ~275,000 of them missed, each a round trip through the
/// runtime; now ~31,000.
#[test]
fn lookup_conflicts_stay_in_the_table() {
    let exe = testsuite::build_program("c/lookup_conflicts.c", Compiler::Gcc, OptLevel::O3);
    let invocation = Invocation::new(&exe);
    let dgad = run_under_dgad(&invocation, None, &[("DGAD_STATS", "1")]);
    dgad.assert_completed(&invocation, "lookup_conflicts", 0);
    assert!(
        dgad.stdout_text()
            .contains("pairs share their low 16 bits: yes"),
        "the program's targets do not share a set; the test checks nothing:\n{}",
        dgad.stdout_text()
    );
    let stderr = String::from_utf8_lossy(&dgad.stderr);
    let count = |before: &str, after: &str| -> u64 {
        let line = stderr
            .lines()
            .find(|l| l.contains("indirect lookups"))
            .unwrap_or_else(|| panic!("no statistics line on stderr:\n{stderr}"));
        let rest = &line[line.find(before).expect("statistics format") + before.len()..];
        rest[..rest.find(after).expect("statistics format")]
            .trim()
            .parse()
            .expect("a count")
    };
    let second_way = count("hit, ", " of them in the table's second way");
    let missed = count("second way; ", " missed");
    assert!(
        second_way >= 200_000 && missed < 50_000,
        "{second_way} lookups found in the second way and {missed} missed; expected the \
         conflicting pairs to be served by the second way:\n{stderr}"
    );
}

// ---------------------------------------------------------------------------
// System programs
// ---------------------------------------------------------------------------

/// Deterministic pseudo-random numbers (xorshift64), so generated inputs
/// are the same on every run.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// About 4 MB of signed decimal numbers, one per line, with duplicates.
fn numbers_text() -> Vec<u8> {
    let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
    let mut text = Vec::new();
    for _ in 0..400_000 {
        let r = rng.next();
        let magnitude = r % 2_000_000;
        let sign = if r & (1 << 40) != 0 { "-" } else { "" };
        text.extend_from_slice(
            format!("{sign}{}.{:03}\n", magnitude / 10, (r >> 20) % 1000).as_bytes(),
        );
    }
    text
}

/// A small directory tree for tar: text, binary data, a subdirectory, an
/// empty file and a symlink.
fn populate_tree(scratch: &ScratchDir) {
    scratch.write("tree/numbers.txt", &numbers_text()[..1 << 20]);
    let mut rng = Xorshift(42);
    let binary: Vec<u8> = (0..300_000).map(|_| rng.next() as u8).collect();
    scratch.write("tree/data/random.bin", &binary);
    scratch.write("tree/data/empty", b"");
    scratch.write("tree/README", b"generated by the dgad test suite\n");
    std::os::unix::fs::symlink("data/random.bin", scratch.path().join("tree/link"))
        .expect("create symlink");
}

#[test]
fn system_ls_la_usr_lib() {
    // Modification times print as nothing: an unrelated package install
    // between the two runs must not fail the test.
    assert_transparent(
        &Invocation::new("ls").args(["-la", "--time-style=+", "/usr/lib"]),
        None,
    );
}

#[test]
fn system_sort_n() {
    let scratch = ScratchDir::new("sort_n");
    let file = scratch.write("numbers.txt", &numbers_text());
    // Large enough input for sort to use several threads.
    assert_transparent(&Invocation::new("sort").arg("-n").arg(&file), None);
}

#[test]
fn system_sha256sum() {
    let scratch = ScratchDir::new("sha256sum");
    let numbers = numbers_text();
    let file = scratch.write("numbers.txt", &numbers);
    // Once from a file and once from stdin.
    assert_transparent(
        &Invocation::new("sha256sum").arg(&file).arg("-"),
        Some(&numbers),
    );
}

#[test]
fn system_tar_piped_to_sha256sum() {
    let scratch = ScratchDir::new("tar");
    populate_tree(&scratch);
    let script =
        r#"set -o pipefail; tar -C "$1" -c . | sha256sum; tar -C "$1" -c . | tar -t | sort"#;
    assert_transparent(
        &Invocation::new("bash")
            .args(["-c", script, "tar-test"])
            .arg(scratch.path().join("tree")),
        None,
    );
}

#[test]
fn system_awk() {
    let scratch = ScratchDir::new("awk");
    let file = scratch.write("numbers.txt", &numbers_text());
    let program = r#"{ n++; s += $1; if (n == 1 || $1 > max) max = $1; c[int($1) % 7]++; if ($1 ~ /99\./) nines++ }
        END { printf "n=%d sum=%.6f max=%.3f nines=%d\n", n, s, max, nines;
              for (k = -6; k <= 6; k++) if (k in c) printf "%d:%d\n", k, c[k];
              x = "the quick brown fox"; gsub(/o/, "0", x); print toupper(x), length(x), substr(x, 5, 5) }"#;
    assert_transparent(&Invocation::new("awk").arg(program).arg(&file), None);
}

#[test]
fn system_grep_c() {
    let scratch = ScratchDir::new("grep_c");
    let file = scratch.write("numbers.txt", &numbers_text());
    assert_transparent(
        &Invocation::new("grep")
            .args(["-c", "-E", r"^-?[0-9]*7\.[0-9]*3$"])
            .arg(&file),
        None,
    );
}

#[test]
fn system_bash_pipeline() {
    // Every process in the pipeline inherits LD_PRELOAD. `sed -n 1,5p`
    // rather than `head` reads all its input, so no stage can die of
    // SIGPIPE and PIPESTATUS is the same on every run.
    let script = r#"
        seq 1 200000 | awk '{ print ($1 * $1) % 1000 }' | sort -n | uniq -c | sort -k1,1nr -k2,2n | sed -n 1,5p
        echo "statuses ${PIPESTATUS[*]}"
        total=0; for i in $(seq 1 100); do total=$((total + i * i)); done; echo "sum of squares $total"
        upper=$(echo hello world | tr a-z A-Z); echo "$upper"
        (exit 3); echo "subshell status $?"
        while read -r word; do printf '%s;' "${word^}"; done <<< $'alpha\nbeta\ngamma'; echo
        echo "END bash_pipeline"
    "#;
    let native = assert_transparent(&Invocation::new("bash").args(["-c", script]), None);
    assert!(
        native.stdout_text().ends_with("END bash_pipeline\n"),
        "bash script did not complete natively"
    );
}

/// A statically linked program started by a dynamic one (bash) under dgad:
/// `LD_PRELOAD` cannot reach it, so the runtime execs it inside
/// `dgad-static-host` (decision 45): the same output and status, no note,
/// and the child translated (its own statistics line, beside bash's).
/// Both kinds: a classic static executable and a static PIE (no
/// interpreter either, but a dynamic section, like the loader itself).
#[test]
fn statically_linked_child_runs_under_dgad() {
    for kind in ["-static", "-static-pie"] {
        let prog = testsuite::build_program_at(
            &programs_dir().join("c/static_child.c"),
            Compiler::Gcc,
            OptLevel::O3,
            &[],
            &[kind.into()],
        );
        let script = format!("{} 7; echo \"status $?\"", prog.display());
        let invocation = Invocation::new("bash").args(["-c", &script]);
        let native = run_native(&invocation, None);
        let dgad = run_under_dgad(&invocation, None, &[("DGAD_STATS", "1")]);
        assert_eq!(dgad.stdout, native.stdout);
        assert_eq!(dgad.status.code(), native.status.code());
        assert!(
            native.stdout_text().ends_with("status 3\n"),
            "{kind}: {}",
            native.stdout_text()
        );
        let stderr = String::from_utf8_lossy(&dgad.stderr);
        assert!(!stderr.contains("statically linked"), "{kind}: {stderr}");
        let translated = stderr
            .lines()
            .filter(|l| l.contains("dgad: stats pid"))
            .count();
        assert!(
            translated >= 2,
            "{kind}: bash and the static child: {stderr}"
        );
    }
}

/// Runs `c/unsupported.c` with `what` natively (it completes) and under
/// dgad, which must stop it with exit status 125 and one `dgad: fatal:`
/// line naming the instruction (its disassembly starts with `disassembly`)
/// at its module offset.
fn stops_with_a_diagnostic(what: &str, disassembly: &str) {
    let exe = testsuite::build_program("c/unsupported.c", Compiler::Gcc, OptLevel::O3);
    let invocation = Invocation::new(&exe).arg(what);
    let native = run_native(&invocation, None);
    assert!(native.status.success(), "{what} natively: {native:?}");
    let dgad = run_under_dgad(&invocation, None, &[]);
    assert_eq!(dgad.status.code(), Some(125), "{what} under dgad: {dgad:?}");
    let stderr = String::from_utf8_lossy(&dgad.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("dgad: fatal: unsupported instruction at guest 0x"))
        .unwrap_or_else(|| panic!("no diagnostic: {stderr}"));
    let shown = line.rsplit("): ").next().unwrap_or("");
    assert!(
        line.contains("unsupported+0x") && shown.starts_with(disassembly),
        "{line}"
    );
}

#[test]
fn a_32_bit_system_call_stops_with_a_diagnostic() {
    stops_with_a_diagnostic("int80", "int 80h");
}

#[test]
#[cfg_attr(
    not(host_fsgsbase),
    ignore = "this CPU has no FSGSBASE: wrgsbase cannot run natively here"
)]
fn setting_the_gs_base_stops_with_a_diagnostic() {
    stops_with_a_diagnostic("wrgsbase", "wrgsbase ");
}

/// The feature bits `DGAD_CPUID=avx2` (the default) must hide, by the
/// names `cpuid_policy.c` prints: (leaf, register, bits). AVX-512 (F, DQ,
/// IFMA, PF, ER, CD, BW, VL, VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ, 4VNNIW,
/// 4FMAPS, VP2INTERSECT, FP16, BF16), TSX (HLE, RTM), AMX (BF16, TILE,
/// INT8, FP16, COMPLEX), AVX10 and APX.
const HIDDEN_BY_DEFAULT: &[(&str, &str, u32)] = &[
    ("7.0", "ebx", 0xdc23_0810),
    ("7.0", "ecx", 0x0000_5842),
    ("7.0", "edx", 0x03c0_010c),
    ("7.1", "eax", 0x0020_0020),
    ("7.1", "edx", 0x0028_0100),
];

/// The value of `register` on the line of `leaf` in `cpuid_policy.c`'s output.
fn cpuid_word(output: &str, leaf: &str, register: &str) -> u32 {
    let line = output
        .lines()
        .find(|l| l.starts_with(&format!("{leaf} ")))
        .unwrap_or_else(|| panic!("no leaf {leaf} in {output}"));
    let field = line
        .split(' ')
        .find_map(|f| f.strip_prefix(&format!("{register}=")))
        .unwrap_or_else(|| panic!("no {register} in {line}"));
    u32::from_str_radix(field, 16).expect("hex word")
}

/// `cpuid` after takeover: by default the program sees the CPU without
/// the extensions the instrumentation does not support and everything else
/// as it is; with `DGAD_CPUID=native` exactly as it is; another value stops
/// the program before it runs, with a diagnostic.
#[test]
fn cpuid_reports_what_the_policy_allows() {
    let exe = testsuite::build_program("c/cpuid_policy.c", Compiler::Gcc, OptLevel::O3);
    let invocation = Invocation::new(&exe);
    let native = run_native(&invocation, None);
    native.assert_completed(&invocation, "cpuid_policy", 0);
    let native_text = native.stdout_text();
    let quiet = |run: &testsuite::Outcome, what: &str| {
        assert!(
            run.status.success() && run.stderr.is_empty(),
            "{what}: {run:?}"
        );
    };

    let as_is = run_under_dgad(&invocation, None, &[("DGAD_CPUID", "native")]);
    quiet(&as_is, "DGAD_CPUID=native");
    assert_eq!(as_is.stdout_text(), native_text, "DGAD_CPUID=native");

    let default = run_under_dgad(&invocation, None, &[]);
    quiet(&default, "default policy");
    let seen = default.stdout_text();
    assert_eq!(seen.lines().count(), native_text.lines().count(), "{seen}");
    for line in native_text.lines().filter(|l| l.contains("eax=")) {
        let leaf = line.split(' ').next().unwrap();
        for register in ["eax", "ebx", "ecx", "edx"] {
            let hidden = HIDDEN_BY_DEFAULT
                .iter()
                .filter(|(l, r, _)| *l == leaf && *r == register)
                .fold(0, |m, (_, _, bits)| m | bits);
            let cpu = cpuid_word(&native_text, leaf, register);
            let shown = cpuid_word(&seen, leaf, register);
            assert_eq!(
                shown,
                cpu & !hidden,
                "leaf {leaf} {register}: the CPU has {cpu:08x}, the program saw {shown:08x}, \
                 expected everything but {hidden:08x}"
            );
        }
    }

    let bad = run_under_dgad(&invocation, None, &[("DGAD_CPUID", "avx9")]);
    assert_eq!(bad.status.code(), Some(125), "{bad:?}");
    assert!(bad.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("DGAD_CPUID=avx9 is not one of avx2, native"),
        "{bad:?}"
    );
}

/// The dynamic loader run as a program (`ld.so PROG`, as `ldd` and some
/// launchers do) has no interpreter of its own, like a static program, but
/// honours `LD_PRELOAD`: PROG runs translated, and dgad must not call it
/// statically linked (it did).
#[test]
fn dynamic_loader_run_as_a_program_is_not_taken_for_a_static_one() {
    let loader = "/lib64/ld-linux-x86-64.so.2";
    let script = format!("{loader} /bin/echo hi; {loader} /bin/true; true");
    let invocation = Invocation::new("bash").args(["-c", &script]);
    let native = assert_transparent(&invocation, None);
    assert_eq!(native.stdout_text(), "hi\n");
    let dgad = run_under_dgad(&invocation, None, &[("DGAD_STATS", "1")]);
    let stderr = String::from_utf8_lossy(&dgad.stderr);
    assert!(
        !stderr.contains("statically linked"),
        "the loader was taken for a static program: {stderr}"
    );
    // bash and the loader running /bin/true (echo closes its stderr).
    let translated = stderr.lines().filter(|l| l.contains("dgad: stats")).count();
    assert_eq!(
        translated, 2,
        "PROG under the loader was not translated: {stderr}"
    );
}

// ---------------------------------------------------------------------------
// Python
// ---------------------------------------------------------------------------

/// python3 with hash randomisation off, so that nothing depends on the seed,
/// and no bytecode written into the source tree.
fn python3() -> Invocation {
    Invocation::new("python3")
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
}

/// Runs `programs/python/<name>.py` as `python3 -c <source>`, checks the
/// native run completes, then compares with the run under dgad.
fn check_python_script(name: &str) {
    let path = programs_dir().join("python").join(format!("{name}.py"));
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let invocation = python3().arg("-c").arg(source);
    let native = run_native(&invocation, None);
    native.assert_completed(&invocation, name, 0);
    let dgad = run_under_dgad(&invocation, None, &[]);
    assert_same_behaviour(&invocation, &native, &dgad);
}

#[test]
fn python_json() {
    check_python_script("json_roundtrip");
}

#[test]
fn python_re() {
    check_python_script("re_matching");
}

#[test]
fn python_math() {
    check_python_script("math_functions");
}

#[test]
fn python_hashlib() {
    check_python_script("hashlib_digests");
}

#[test]
fn python_decimal() {
    check_python_script("decimal_arithmetic");
}

#[test]
fn python_threading() {
    check_python_script("threading_workers");
}

#[test]
fn python_subprocess() {
    check_python_script("subprocess_children");
}

#[test]
fn python_unittest() {
    // unittest reports on stderr, including "Ran N tests in 0.002s". The
    // duration is rewritten by a sed on stderr only, so the tool's dgad:
    // lines stay on stderr where the comparison ignores them.
    let script = r#"python3 -m unittest -v unittest_suite 2> >(sed -E 's/^(Ran [0-9]+ tests?) in [0-9.]+s$/\1/' >&2)"#;
    let invocation = Invocation::new("bash")
        .args(["-c", script])
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(programs_dir().join("python"));
    let native = run_native(&invocation, None);
    let report = String::from_utf8_lossy(&native.stderr);
    assert!(
        native.status.success() && report.contains("\nOK (skipped=1, expected failures=1)"),
        "the unittest suite does not pass natively ({}):\n{report}",
        native.status
    );
    let dgad = run_under_dgad(&invocation, None, &[]);
    assert_same_behaviour(&invocation, &native, &dgad);
}

#[test]
fn python_numpy_linalg() {
    let probe = run_native(&python3().args(["-c", "import numpy"]), None);
    assert!(
        probe.status.success(),
        "numpy is not importable by python3, so the numpy test cannot run: run scripts/setup.sh \
         (it installs numpy with pip)\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    check_python_script("numpy_linalg");
}
