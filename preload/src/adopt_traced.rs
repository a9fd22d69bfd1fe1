//! Adoption of threads that block every signal (`adopt` reaches the
//! others with a signal): a helper process sharing our memory
//! (`CLONE_VM`, not a thread: a thread cannot trace its own group) stops
//! each with ptrace, moves its registers into a fresh context, points it
//! at the runtime's signal entry on its runtime stack with `%gs` set, and
//! lets it go. Its floating-point and vector state stays in the CPU and is
//! saved by that entry like any interrupted thread's.
//!
//! A system call the stop interrupted (a worker waiting on a futex) is
//! restarted from the dispatcher, as the kernel would have restarted it:
//! the saved pc goes back to the `syscall` instruction, `rax` to the call's
//! number, and `orig_rax = -1` keeps the kernel from restarting it again.

use crate::adopt::Stray;
use crate::context::{reason, reg};
use crate::sys;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

const MAX_JOBS: usize = 256;
const STACK_BYTES: usize = 256 << 10;
/// How long the helper may take for all threads.
const TIMEOUT_MS: u64 = 5000;
/// Yama's `PR_SET_PTRACER`: lets the helper (not our ancestor) trace us.
const PR_SET_PTRACER: u64 = 0x5961_6d61;
const PTRACE_SEIZE: u64 = 0x4206;
const PTRACE_INTERRUPT: u64 = 0x4207;
const PTRACE_EVENT_STOP: i32 = 128;

/// Kernel results (`-errno`) of a restarted call: ERESTARTSYS,
/// ERESTARTNOINTR, ERESTARTNOHAND, ERESTART_RESTARTBLOCK.
const RESTART_CODES: [i64; 4] = [-512, -513, -514, -516];

/// Thread ids to adopt; the helper writes each one's outcome: 1 adopted,
/// a negative errno, or 0 when it never got to it.
static JOBS: [AtomicI32; MAX_JOBS] = [const { AtomicI32::new(0) }; MAX_JOBS];
static OUTCOMES: [AtomicI32; MAX_JOBS] = [const { AtomicI32::new(0) }; MAX_JOBS];
static JOB_COUNT: AtomicU32 = AtomicU32::new(0);
/// 1 once `PR_SET_PTRACER` names the helper (it waits for it).
static GO: AtomicU32 = AtomicU32::new(0);
/// 1 once the helper is done.
static DONE: AtomicU32 = AtomicU32::new(0);

/// Adopts `tids` through the helper; returns those it could not adopt.
pub fn adopt(tids: &[i32]) -> Vec<Stray> {
    let tids = &tids[..tids.len().min(MAX_JOBS)];
    let mut strays = Vec::new();
    let mut n = 0;
    for &tid in tids {
        if !crate::adopt::prepare_one() {
            strays.push(Stray {
                tid,
                why: "could not be given a context (out of memory, or too many threads)",
            });
            continue;
        }
        JOBS[n].store(tid, Ordering::Relaxed);
        OUTCOMES[n].store(0, Ordering::Relaxed);
        n += 1;
    }
    JOB_COUNT.store(n as u32, Ordering::Release);
    if n == 0 {
        return strays;
    }
    GO.store(0, Ordering::Release);
    DONE.store(0, Ordering::Release);
    let helper = spawn_helper();
    if helper > 0 {
        // SAFETY: prctl with integer arguments.
        unsafe { sys::syscall3(libc::SYS_prctl, PR_SET_PTRACER, helper as u64, 0) };
        GO.store(1, Ordering::Release);
        sys::futex_wake(&GO, 1);
        let deadline = crate::adopt::now_ms() + TIMEOUT_MS;
        while DONE.load(Ordering::Acquire) == 0 {
            let now = crate::adopt::now_ms();
            if now >= deadline {
                break;
            }
            sys::futex_wait_ms(&DONE, 0, deadline - now);
        }
        if DONE.load(Ordering::Acquire) == 0 {
            // SAFETY: kills the helper process we started.
            unsafe { sys::syscall3(libc::SYS_kill, helper as u64, libc::SIGKILL as u64, 0) };
        }
        // SAFETY: reaps our own helper; the status goes to a local.
        unsafe {
            let mut status = 0i32;
            sys::syscall6(
                libc::SYS_wait4,
                helper as u64,
                &mut status as *mut i32 as u64,
                libc::__WALL as u64,
                0,
                0,
                0,
            );
            sys::syscall3(libc::SYS_prctl, PR_SET_PTRACER, 0, 0);
        }
    }
    let adopted = (0..n)
        .filter(|&i| OUTCOMES[i].load(Ordering::Acquire) == 1)
        .count();
    if adopted > 0 {
        crate::log!(
            "adopted {} thread(s) that block every signal, with ptrace",
            adopted
        );
    }
    for i in 0..n {
        let tid = JOBS[i].load(Ordering::Relaxed);
        let why = match OUTCOMES[i].load(Ordering::Acquire) {
            1 => continue,
            _ if crate::adopt::blocked_signals(tid).is_none() => continue, // gone
            _ if helper <= 0 => "blocks every signal, and no ptrace helper could be started",
            r if r == -libc::EPERM => {
                "blocks every signal, and ptrace is not permitted here (a tracer is attached, or \
                 the system's ptrace policy forbids it)"
            }
            _ => "blocks every signal, and could not be stopped with ptrace",
        };
        strays.push(Stray { tid, why });
    }
    strays
}

/// Starts [`helper_main`] as a process sharing our memory, with every
/// signal blocked and no exit signal (the guest sees no SIGCHLD). Returns
/// its pid, or a negative errno. Its stack stays mapped after it is
/// reaped (once per process, and only when a thread blocks every signal).
fn spawn_helper() -> i64 {
    sys::spawn_runtime_task(libc::CLONE_VM as u64, STACK_BYTES, helper_main)
}

/// The helper: adopts each job's thread, then leaves. It shares our
/// memory but runs nothing that takes a lock or allocates.
extern "C" fn helper_main() -> ! {
    while GO.load(Ordering::Acquire) == 0 {
        sys::futex_wait(&GO, 0);
    }
    let n = JOB_COUNT.load(Ordering::Acquire) as usize;
    for i in 0..n {
        let tid = JOBS[i].load(Ordering::Relaxed);
        OUTCOMES[i].store(adopt_one(tid), Ordering::Release);
    }
    DONE.store(1, Ordering::Release);
    sys::futex_wake(&DONE, 1);
    // SAFETY: exit ends the helper alone (it is a process of its own).
    unsafe { sys::syscall3(libc::SYS_exit, 0, 0, 0) };
    unreachable!("exit returned")
}

fn ptrace(req: u64, tid: i32, addr: u64, data: u64) -> i64 {
    // SAFETY: the callers pass addresses of locals of the right type.
    unsafe { sys::syscall6(libc::SYS_ptrace, req, tid as u64, addr, data, 0, 0) }
}

/// Stops `tid`, moves it into a prepared context and lets it go: 1, or a
/// negative errno.
fn adopt_one(tid: i32) -> i32 {
    let r = ptrace(PTRACE_SEIZE, tid, 0, 0);
    if r < 0 {
        return r as i32;
    }
    let r = ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    if r < 0 {
        ptrace(libc::PTRACE_DETACH as u64, tid, 0, 0);
        return r as i32;
    }
    // Wait for the interrupt's stop; a signal-delivery stop that comes
    // first (a fault) is passed on.
    loop {
        let mut status = 0i32;
        // SAFETY: the status goes to a local.
        let w = unsafe {
            sys::syscall6(
                libc::SYS_wait4,
                tid as u64,
                &mut status as *mut i32 as u64,
                libc::__WALL as u64,
                0,
                0,
                0,
            )
        };
        if w < 0 {
            return w as i32;
        }
        if !libc::WIFSTOPPED(status) {
            return -libc::ESRCH; // it ended
        }
        if status >> 16 == PTRACE_EVENT_STOP {
            break;
        }
        ptrace(
            libc::PTRACE_CONT as u64,
            tid,
            0,
            libc::WSTOPSIG(status) as u64,
        );
    }
    // SAFETY: user_regs_struct is plain data.
    let mut regs: libc::user_regs_struct = unsafe { core::mem::zeroed() };
    let r = ptrace(
        libc::PTRACE_GETREGS as u64,
        tid,
        0,
        &mut regs as *mut libc::user_regs_struct as u64,
    );
    let Some(ctx) = (r == 0).then(crate::adopt::take_prepared).flatten() else {
        ptrace(libc::PTRACE_DETACH as u64, tid, 0, 0);
        return if r < 0 { r as i32 } else { -libc::ENOMEM };
    };
    let mut guest_rip = regs.rip;
    if (regs.orig_rax as i64) >= 0 && RESTART_CODES.contains(&(regs.rax as i64)) {
        regs.rax = if regs.rax as i64 == -516 {
            libc::SYS_restart_syscall as u64
        } else {
            regs.orig_rax
        };
        guest_rip -= 2; // back to the `syscall` instruction
    }
    ctx.tid = tid;
    ctx.regs.gpr[reg::RSP] = regs.rsp;
    ctx.regs.rip = guest_rip;
    ctx.reason = reason::ADOPTED;
    // Every other register stays the guest's: the entry saves them.
    regs.orig_rax = u64::MAX;
    regs.rip = crate::entry::signal_entry_addr();
    regs.rsp = ctx.rt_stack_top;
    regs.gs_base = ctx.self_addr;
    let r = ptrace(
        libc::PTRACE_SETREGS as u64,
        tid,
        0,
        &regs as *const libc::user_regs_struct as u64,
    );
    if r == 0 {
        crate::threads::adopted(ctx);
    }
    ptrace(libc::PTRACE_DETACH as u64, tid, 0, 0);
    if r < 0 {
        return r as i32;
    }
    1
}
