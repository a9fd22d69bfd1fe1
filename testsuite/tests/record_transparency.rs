//! Record mode must be as transparent as null mode: programs that declare
//! no AD inputs (and one that does) behave exactly as natively — stdout,
//! exit status — while every instruction is instrumented.

use std::os::unix::process::ExitStatusExt;
use testsuite::{
    build_program, run_native, run_under_dgad, Compiler, Invocation, OptLevel, ScratchDir,
};

/// Programs of the transparency suite, at gcc -O3, with their arguments.
const PROGRAMS: &[(&str, &[&str])] = &[
    ("c/pthreads.c", &[]),
    ("c/sigalrm.c", &[]),
    ("c/sigsegv.c", &[]),
    ("c/setjmp_longjmp.c", &[]),
    ("c/fork_exec.c", &[]),
    ("c/dlopen_libm.c", &[]),
    ("c/tls.c", &[]),
    ("c/x87_long_double.c", &[]),
    ("c/printf_doubles.c", &[]),
    ("c/vector_sums.c", &[]),
    ("c/exit_from_thread.c", &[]),
    ("c/stencil.c", &["96", "40"]),
    ("c/regression_signal_before_syscall.c", &[]),
    ("c/libm_signals.c", &[]),
    ("c/main_exits_first.c", &[]),
    ("c/null_call.c", &[]),
    ("c/no_exec.c", &[]),
    ("c/int3_trap.c", &[]),
    ("c/many_threads.c", &[]),
    ("c/wild_addresses.c", &[]),
    ("c/rwx_code.c", &[]),
    ("c/dual_mapped_code.c", &[]),
    ("c/code_replaced_across_page.c", &[]),
    ("c/flags_across_indirect_jump.c", &[]),
    ("c/red_zone.c", &[]),
    ("c/stack_overflow_altstack.c", &[]),
    ("c/rlimit_as.c", &[]),
    ("c/vfork_sigaction.c", &[]),
    ("c/signal_pairs.c", &[]),
    ("c/alignment_check.c", &[]),
    ("c/restart_rules.c", &[]),
    ("c/far_code.c", &[]),
    ("c/async_preempt.c", &[]),
    ("c/fault_reports.c", &[]),
    ("c/stack_overflow_no_altstack.c", &[]),
    ("c/clone_stacks.c", &[]),
    ("c/libm_bad_pointers.c", &[]),
    ("c/libm_bad_pointers.c", &["die"]),
    ("cxx/exceptions.cpp", &[]),
    ("cxx/containers.cpp", &[]),
];

fn check_recorded(inv: &Invocation, what: &str) {
    let scratch = ScratchDir::new("record-transparency");
    let dir = scratch.path().join("run");
    let native = run_native(inv, None);
    let recorded = run_under_dgad(
        inv,
        None,
        &[
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", dir.to_str().unwrap()),
        ],
    );
    assert_eq!(
        (recorded.status.code(), recorded.status.signal()),
        (native.status.code(), native.status.signal()),
        "{what}: exit status differs under record mode"
    );
    assert!(
        recorded.stdout == native.stdout,
        "{what}: stdout differs under record mode\n--- native\n{}\n--- recorded\n{}",
        native.stdout_text(),
        recorded.stdout_text()
    );
}

#[test]
fn c_and_cxx_programs_under_record_mode() {
    for (source, args) in PROGRAMS {
        let prog = build_program(source, Compiler::Gcc, OptLevel::O3);
        check_recorded(&Invocation::new(&prog).args(args.iter().copied()), source);
    }
}

#[test]
fn python_threads_under_record_mode() {
    let script = testsuite::programs_dir().join("python/threading_workers.py");
    check_recorded(
        &Invocation::new("python3").arg(&script),
        "python3 threading_workers.py",
    );
}

/// A shell pipeline under record mode: children inherit the preload, none
/// declares an input, so none may write files or report anything (a
/// `sort` ended by SIGPIPE once printed a tape note).
#[test]
fn shell_pipeline_under_record_mode_is_silent() {
    let inv = Invocation::new("bash").args(["-c", "seq 1 20000 | sort -rn | head -3"]);
    let scratch = ScratchDir::new("record-pipeline");
    let dir = scratch.path().join("run");
    let native = run_native(&inv, None);
    let recorded = run_under_dgad(
        &inv,
        None,
        &[
            ("DGAD_MODE", "record"),
            ("DGAD_RECORD", dir.to_str().unwrap()),
        ],
    );
    assert_eq!(
        recorded.stdout, native.stdout,
        "stdout differs under record mode"
    );
    assert_eq!(recorded.status.code(), native.status.code());
    let stderr = String::from_utf8_lossy(&recorded.stderr);
    assert!(stderr.is_empty(), "the pipeline reported: {stderr}");
    assert!(
        !dir.join("dg-tape").exists(),
        "a process that declared no input wrote a tape"
    );
}
