//! Transparency of the AD modes: programs that declare no AD inputs behave
//! under record mode (`record_transparency.rs`) and forward mode
//! (`dot_transparency.rs`) exactly as natively — stdout bytes and exit
//! status — while every instruction is instrumented. One list of programs
//! and one set of checks serve both modes.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use crate::{
    build_program, programs_dir, run_native, run_under_dgad, Compiler, Invocation, OptLevel,
    Outcome, ScratchDir,
};

/// Programs of the transparency suite, built with gcc -O3, with their
/// arguments.
pub const PROGRAMS: &[(&str, &[&str])] = &[
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

/// The shell pipeline of [`check_pipeline_is_silent`]; children inherit
/// the preload.
pub const PIPELINE: &str = "seq 1 20000 | sort -rn | head -3";

/// An AD mode: its name (`DGAD_MODE`) and the settings of one run, given a
/// fresh directory the run may use (record mode records into it).
#[derive(Clone, Copy)]
pub struct Mode {
    /// `DGAD_MODE`.
    pub name: &'static str,
    /// Settings besides `DGAD_MODE`, from a fresh directory of the run.
    pub settings: fn(&Path) -> Vec<(&'static str, String)>,
}

impl Mode {
    /// Runs `invocation` under dgad in this mode; the directory handed to
    /// the settings is `<scratch>/run`.
    pub fn run(&self, invocation: &Invocation, scratch: &ScratchDir) -> Outcome {
        let settings = (self.settings)(&scratch.path().join("run"));
        let mut env: Vec<(&str, &str)> = vec![("DGAD_MODE", self.name)];
        env.extend(settings.iter().map(|(k, v)| (*k, v.as_str())));
        run_under_dgad(invocation, None, &env)
    }
}

/// Runs `invocation` natively and in `mode`; asserts the same exit status
/// (code or signal) and the same stdout bytes.
pub fn check_same_output(invocation: &Invocation, what: &str, mode: Mode) {
    let scratch = ScratchDir::new(&format!("{}-transparency", mode.name));
    let native = run_native(invocation, None);
    let under = mode.run(invocation, &scratch);
    assert_eq!(
        (under.status.code(), under.status.signal()),
        (native.status.code(), native.status.signal()),
        "{what}: exit status differs under {} mode\n--- stderr under {0} mode\n{}",
        mode.name,
        String::from_utf8_lossy(&under.stderr)
    );
    assert!(
        under.stdout == native.stdout,
        "{what}: stdout differs under {} mode\n--- native\n{}\n--- {0} mode\n{}",
        mode.name,
        native.stdout_text(),
        under.stdout_text()
    );
}

/// Every program of [`PROGRAMS`], at gcc -O3, natively and in `mode`.
pub fn check_programs(mode: Mode) {
    for (source, args) in PROGRAMS {
        let prog = build_program(source, Compiler::Gcc, OptLevel::O3);
        check_same_output(
            &Invocation::new(&prog).args(args.iter().copied()),
            source,
            mode,
        );
    }
}

/// `python3 threading_workers.py` natively and in `mode`.
pub fn check_python_threads(mode: Mode) {
    let script = programs_dir().join("python/threading_workers.py");
    check_same_output(
        &Invocation::new("python3").arg(&script),
        "python3 threading_workers.py",
        mode,
    );
}

/// [`PIPELINE`] in `mode`: the same stdout and status as natively, and no
/// process of it reports anything on stderr. Returns the scratch directory
/// whose `run` the mode's settings were given, for checks of its own.
pub fn check_pipeline_is_silent(mode: Mode) -> ScratchDir {
    let invocation = Invocation::new("bash").args(["-c", PIPELINE]);
    let scratch = ScratchDir::new(&format!("{}-pipeline", mode.name));
    let native = run_native(&invocation, None);
    let under = mode.run(&invocation, &scratch);
    let stderr = String::from_utf8_lossy(&under.stderr);
    assert!(
        under.stdout == native.stdout && under.status.code() == native.status.code(),
        "the pipeline behaves differently under {} mode (status {}, natively {})\n\
         --- native stdout\n{}\n--- stdout under {0} mode\n{}\n--- stderr under {0} mode\n{stderr}",
        mode.name,
        under.status,
        native.status,
        native.stdout_text(),
        under.stdout_text()
    );
    assert!(
        stderr.is_empty(),
        "the pipeline reported under {} mode: {stderr}",
        mode.name
    );
    scratch
}
