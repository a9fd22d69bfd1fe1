//! Guest threads: the registry of contexts and thread creation through
//! `clone`/`clone3` with `CLONE_VM`.

use crate::context::{life, reg, ThreadCtx};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const MAX_THREADS: usize = 1 << 14;
static CONTEXTS: [AtomicU64; MAX_THREADS] = [const { AtomicU64::new(0) }; MAX_THREADS];
static COUNT: AtomicUsize = AtomicUsize::new(0);
/// Guest threads of the thread group that have not left with `exit`.
static MEMBERS: AtomicUsize = AtomicUsize::new(1);

/// Adds a context to the registry (contexts are never unmapped).
pub fn register(ctx: &ThreadCtx) {
    let i = COUNT.fetch_add(1, Ordering::AcqRel);
    if i >= MAX_THREADS {
        crate::dgad_eprintln!("fatal: more than {} threads alive at once", MAX_THREADS);
        crate::sys::exit_group(125);
    }
    CONTEXTS[i].store(ctx.self_addr, Ordering::Release);
}

/// Calls `f` on every registered context.
pub fn for_each_context(mut f: impl FnMut(&mut ThreadCtx)) {
    let n = COUNT.load(Ordering::Acquire).min(MAX_THREADS);
    for slot in &CONTEXTS[..n] {
        let a = slot.load(Ordering::Acquire);
        if a != 0 {
            // SAFETY: registered contexts stay mapped for the process's life.
            f(unsafe { &mut *(a as *mut ThreadCtx) });
        }
    }
}

/// Forgets every context except `keep` (in a child after `fork`, where the
/// other threads do not exist).
pub fn fork_child(keep: &ThreadCtx) {
    let n = COUNT.load(Ordering::Acquire).min(MAX_THREADS);
    for slot in &CONTEXTS[..n] {
        slot.store(0, Ordering::Relaxed);
    }
    COUNT.store(0, Ordering::Release);
    MEMBERS.store(1, Ordering::Release);
    register(keep);
}

/// A guest thread leaves with `exit`: whether it was the last guest thread
/// of the group.
pub fn leave(ctx: &ThreadCtx) -> bool {
    ctx.other_process == 0 && MEMBERS.fetch_sub(1, Ordering::AcqRel) == 1
}

/// Runs a guest `clone` (`nr` = clone or clone3) that shares the address
/// space: the child gets a new context whose registers are the parent's
/// with `rax = 0` and the guest's new stack, and starts on its own runtime
/// stack. `a` are the system call's arguments. Returns the syscall result
/// for the parent.
pub fn clone_thread(parent: &mut ThreadCtx, nr: i64, a: [u64; 5], next_pc: u64) -> i64 {
    // Two threads must not run plain translations once data may become
    // active (`lazy`).
    crate::lazy::before_thread();
    let Some(child) = take_context() else {
        return -(libc::ENOMEM as i64);
    };
    child.regs = parent.regs;
    child.regs.gpr[reg::RAX] = 0;
    child.regs.rip = next_pc;
    child.regs.gpr[reg::RCX] = next_pc;
    child.regs.gpr[reg::R11] = parent.regs.rflags;
    child.xsave.0.copy_from_slice(&parent.xsave.0);
    child.shadow = parent.shadow;
    child.shadow.gpr[reg::RAX] = [0; 2];
    // The child's first runtime frame: its context address at [rsp].
    let child_sp = child.rt_stack_top - 64;
    // SAFETY: child_sp is inside the child's fresh runtime stack.
    unsafe { *(child_sp as *mut u64) = child.self_addr };
    let (r, flags) = if nr == libc::SYS_clone3 {
        let mut args = [0u64; 16];
        let size = (a[1] as usize).min(core::mem::size_of_val(&args));
        // SAFETY: the guest passed a clone_args of a[1] bytes at a[0]; we
        // copy it and only change the stack fields.
        unsafe {
            core::ptr::copy_nonoverlapping(a[0] as *const u8, args.as_mut_ptr().cast(), size)
        };
        // clone_args: flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, …
        start_member(child, args[0], parent);
        args[0] = static_tls(child, parent, args[0], args[7]);
        if args[5] != 0 {
            child.regs.gpr[reg::RSP] = args[5] + args[6];
        }
        let stack_base = child.rt_stack_top - crate::context::RUNTIME_STACK_BYTES as u64 + 64;
        args[5] = stack_base;
        args[6] = child_sp - stack_base;
        // SAFETY: the kernel copies args; the child starts at child_sp.
        let r =
            unsafe { crate::entry::dgad_raw_clone(nr, args.as_ptr() as u64, size as u64, 0, 0, 0) };
        (r, args[0])
    } else {
        // clone(flags, newsp, parent_tid, child_tid, tls)
        start_member(child, a[0], parent);
        let flags = static_tls(child, parent, a[0], a[4]);
        if a[1] != 0 {
            child.regs.gpr[reg::RSP] = a[1];
        }
        // SAFETY: as above, with the child's stack given directly.
        let r = unsafe { crate::entry::dgad_raw_clone(nr, flags, child_sp, a[2], a[3], a[4]) };
        (r, a[0])
    };
    let member = flags & libc::CLONE_THREAD as u64 != 0;
    if r < 0 {
        child.tid = -1;
        if member {
            MEMBERS.fetch_sub(1, Ordering::AcqRel);
        }
        child.life.store(life::FREE, Ordering::Release);
    } else if !member && flags & libc::CLONE_VFORK as u64 != 0 {
        // The kernel lets the parent of a vfork child go on only once the
        // child has exec'd or exited: it no longer runs on this context.
        child.life.store(life::FREE, Ordering::Release);
    }
    r
}

/// A context for a new thread: one whose thread is gone (its lookup table
/// still warm, its buffers mapped), else a fresh one. Creating thousands of
/// short-lived threads then costs neither memory nor cold lookups.
fn take_context() -> Option<&'static mut ThreadCtx> {
    let n = COUNT.load(Ordering::Acquire).min(MAX_THREADS);
    for slot in &CONTEXTS[..n] {
        let a = slot.load(Ordering::Acquire);
        if a == 0 {
            continue;
        }
        // SAFETY: registered contexts stay mapped for the process's life;
        // only the winner of the exchange below touches this one.
        let c = unsafe { &mut *(a as *mut ThreadCtx) };
        let state = c.life.load(Ordering::Acquire);
        let reusable = match state {
            life::FREE => true,
            life::EXITED => thread_gone(c.tid) && crate::tool::tool().context_idle(c),
            _ => false,
        };
        if reusable
            && c.life
                .compare_exchange(state, life::RUNNING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            c.reset_for_reuse();
            return Some(c);
        }
    }
    let c = ThreadCtx::allocate()?;
    register(c);
    Some(c)
}

/// Whether the kernel has let thread `tid` of this process go: from then
/// on it runs nothing of ours (not even the end of its `exit`).
fn thread_gone(tid: i32) -> bool {
    // SAFETY: signal 0 only checks that the thread exists.
    let r =
        unsafe { crate::sys::syscall3(libc::SYS_tgkill, crate::init::pid() as u64, tid as u64, 0) };
    tid > 0 && r == -(libc::ESRCH as i64)
}

/// Marks the calling thread's context as leaving with `exit`.
pub fn exiting(ctx: &ThreadCtx) {
    if ctx.other_process == 0 {
        ctx.life.store(life::EXITED, Ordering::Release);
    }
}

/// Counts a new thread of the group (before it can run and leave), or
/// marks a `CLONE_VM` child without `CLONE_THREAD` as a process of its own.
/// The guest's alternate signal stack goes as the kernel's does: a vfork
/// child shares its parent's, any other child starts without one; so do
/// the signal dispositions (`signals::child_actions`).
fn start_member(child: &mut ThreadCtx, flags: u64, parent: &ThreadCtx) {
    child.guest_ss = if flags & libc::CLONE_VFORK as u64 != 0 {
        parent.guest_ss
    } else {
        crate::context::NO_ALTSTACK
    };
    child.actions = crate::signals::child_actions(flags, parent.actions, &child.own_actions);
    if flags & libc::CLONE_THREAD as u64 != 0 {
        MEMBERS.fetch_add(1, Ordering::AcqRel);
    } else {
        child.other_process = 1;
    }
}

/// A statically linked guest (`static_exec`): the child's `%fs` bases
/// (the guest's own, or the `CLONE_SETTLS` one, and the runtime's), and
/// the flags for the kernel without `CLONE_SETTLS`, so that the child
/// starts in the runtime on the runtime's base. Other guests: `flags`.
fn static_tls(child: &mut ThreadCtx, parent: &ThreadCtx, flags: u64, tls: u64) -> u64 {
    if !crate::static_exec::active() {
        return flags;
    }
    child.host_fs = parent.host_fs;
    child.guest_fs = parent.guest_fs;
    if flags & libc::CLONE_SETTLS as u64 != 0 {
        child.guest_fs = tls;
    }
    flags & !(libc::CLONE_SETTLS as u64)
}

/// Registers the context of a thread that ran natively before the
/// takeover, taken over in the host handler: a member of the group like
/// any other. Signal-safe.
pub fn adopted(ctx: &mut ThreadCtx) {
    ctx.life.store(life::RUNNING, Ordering::Release);
    MEMBERS.fetch_add(1, Ordering::AcqRel);
    register(ctx);
}

/// Records the tid of a context (for diagnostics); `0` while unknown.
pub fn note_tid(ctx: &mut ThreadCtx) {
    ctx.tid = crate::sys::gettid();
}

/// Counter of threads started, for statistics.
pub static STARTED: AtomicU64 = AtomicU64::new(0);
