//! Signals: the guest's handlers run translated, never natively.
//!
//! For every signal the guest handles, the kernel gets the runtime's
//! `host_handler` instead (every signal blocked while it runs, no
//! `SA_RESTART`). The host handler
//! runs in signal context (no allocation, no locks) and decides:
//! - interrupted at a guest-instruction boundary in cache code (always the
//!   case for a fault raised by a guest instruction): the thread is sent to
//!   `dgad_signal_entry` with the guest state, and the dispatcher builds the
//!   guest's signal frame right away;
//! - interrupted inside inserted code: the signal is queued and the thread
//!   single-steps (trap flag) to the next boundary, then as above;
//! - interrupted in the runtime: the signal is queued; the dispatcher
//!   delivers it before re-entering cache code, and a blocking system call
//!   is cut short with EINTR (see `syscall::guarded_window_escape`), then
//!   restarted after the handler if the guest asked for `SA_RESTART`.
//!
//! `rt_sigreturn` from a guest handler is emulated from the frame the
//! runtime built.

use crate::cache;
use crate::context::{reason, reg, PendingSignal, ThreadCtx, PENDING_MAX};
use crate::stats::STATS;
use crate::sys;
use core::arch::global_asm;
use rewriter::translate::InsnMapEntry;
use std::sync::atomic::{compiler_fence, AtomicU64, Ordering};

const NSIG: usize = 65;
const TF: u64 = 1 << 8;
const DF: u64 = 1 << 10;
const SA_RESTORER: u64 = 0x0400_0000;

/// The kernel's `struct sigaction` on x86-64.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct KernelSigaction {
    handler: u64,
    flags: u64,
    restorer: u64,
    mask: u64,
}

struct GuestAction {
    handler: AtomicU64,
    flags: AtomicU64,
    restorer: AtomicU64,
    mask: AtomicU64,
}

/// The guest's signal dispositions, as the kernel would hold them for a
/// process. All-zero bytes are a valid table (every signal `SIG_DFL`).
pub struct GuestActions([GuestAction; NSIG]);

/// The table of the process (of every thread whose context names none).
static ACTIONS: GuestActions = GuestActions(
    [const {
        GuestAction {
            handler: AtomicU64::new(0),
            flags: AtomicU64::new(0),
            restorer: AtomicU64::new(0),
            mask: AtomicU64::new(0),
        }
    }; NSIG],
);
static ACTION_LOCK: crate::lock::Lock<()> = crate::lock::Lock::new(());

/// The disposition table of the calling thread: its context's
/// (`ThreadCtx::actions`) when set, else the process's. A `CLONE_VM`
/// child without `CLONE_SIGHAND` (`vfork`, `posix_spawn`) shares our
/// memory but not the kernel's handler table, so it gets a copy of its
/// own: its `sigaction` must not change its parent's. Signal-safe.
fn table() -> &'static GuestActions {
    if crate::context::installed() {
        // SAFETY: the thread has a context installed (checked above).
        let own = unsafe { crate::context::current() }.actions;
        if own != 0 {
            // SAFETY: `actions` names a table inside a context, and
            // contexts are never unmapped.
            return unsafe { &*(own as *const GuestActions) };
        }
    }
    &ACTIONS
}

/// The table a child created with clone `flags` by a thread whose table
/// is `parent` (a `ThreadCtx::actions` value) uses: the same one, or — a
/// child sharing memory but not handlers — a copy in the child's context
/// at `own`. Returns the child's `ThreadCtx::actions`.
pub fn child_actions(flags: u64, parent: u64, own: &GuestActions) -> u64 {
    let private = flags & libc::CLONE_VM as u64 != 0 && flags & libc::CLONE_SIGHAND as u64 == 0;
    if !private {
        return parent;
    }
    let from = if parent == 0 {
        &ACTIONS
    } else {
        // SAFETY: as in `table`.
        unsafe { &*(parent as *const GuestActions) }
    };
    let _g = ACTION_LOCK.lock();
    for (to, a) in own.0.iter().zip(from.0.iter()) {
        to.flags
            .store(a.flags.load(Ordering::Relaxed), Ordering::Relaxed);
        to.restorer
            .store(a.restorer.load(Ordering::Relaxed), Ordering::Relaxed);
        to.mask
            .store(a.mask.load(Ordering::Relaxed), Ordering::Relaxed);
        to.handler
            .store(a.handler.load(Ordering::Acquire), Ordering::Release);
    }
    own as *const GuestActions as u64
}

global_asm!(
    ".globl dgad_host_restorer",
    "dgad_host_restorer:",
    "    mov eax, 15",
    "    syscall",
    "    ud2",
    // The kernel enters a handler with the interrupted code's alignment
    // check flag (AC): a guest that set it would have the handler's own
    // unaligned accesses fault. The interrupted flags come back with
    // `rt_sigreturn`.
    //
    // A statically linked guest (`static_exec`) has its own `%fs` base,
    // live whenever cache code or a guest function runs: the handler,
    // which is the runtime's code on the runtime's libc, runs on the
    // host's base (`ThreadCtx::host_fs`, through `%gs`, which every
    // thread that can get here has, runtime tasks included), and the
    // interrupted base comes back before `rt_sigreturn` (the kernel does
    // not restore it).
    ".globl dgad_host_handler_entry",
    "dgad_host_handler_entry:",
    "    push 0x202",
    "    popfq",
    "    cmp byte ptr [rip + {STATIC_FS}], 0",
    "    je {handler}",
    "    push rbx",
    "    rdfsbase rbx",
    "    rdgsbase rax",
    "    test rax, rax",
    "    jz 1f",
    "    mov rax, qword ptr [rax + {HOST_FS}]",
    "    test rax, rax",
    "    jz 1f",
    "    wrfsbase rax",
    "1:  call {handler}",
    "    wrfsbase rbx",
    "    pop rbx",
    "    ret",
    handler = sym host_handler,
    STATIC_FS = sym crate::static_exec::ACTIVE,
    HOST_FS = const core::mem::offset_of!(crate::context::ThreadCtx, host_fs),
);
extern "C" {
    fn dgad_host_restorer();
    fn dgad_host_handler_entry();
}

fn guest_action(sig: i32) -> KernelSigaction {
    let a = &table().0[sig as usize];
    KernelSigaction {
        handler: a.handler.load(Ordering::Acquire),
        flags: a.flags.load(Ordering::Relaxed),
        restorer: a.restorer.load(Ordering::Relaxed),
        mask: a.mask.load(Ordering::Relaxed),
    }
}

fn set_guest_action(sig: i32, act: &KernelSigaction) {
    let a = &table().0[sig as usize];
    a.flags.store(act.flags, Ordering::Relaxed);
    a.restorer.store(act.restorer, Ordering::Relaxed);
    a.mask.store(act.mask, Ordering::Relaxed);
    a.handler.store(act.handler, Ordering::Release);
}

fn kernel_sigaction(
    sig: i32,
    new: Option<&KernelSigaction>,
    old: Option<&mut KernelSigaction>,
) -> i64 {
    let newp = new.map_or(0, |n| n as *const _ as u64);
    let oldp = old.map_or(0, |o| o as *mut _ as u64);
    // SAFETY: both pointers are null or point at KernelSigaction values.
    unsafe { sys::syscall6(libc::SYS_rt_sigaction, sig as u64, newp, oldp, 8, 0, 0) }
}

fn install_host(sig: i32, guest: &KernelSigaction) -> i64 {
    install_host_with(sig, guest, 0)
}

/// [`install_host`] with `extra` flags for the host handler.
fn install_host_with(sig: i32, guest: &KernelSigaction, extra: u64) -> i64 {
    // Always on the runtime's alternate stack (the guest's SA_ONSTACK is
    // for the frames the runtime builds): the kernel's frame must not
    // land below the guest's red zone, where lookups keep registers.
    let keep =
        (libc::SA_NODEFER | libc::SA_RESETHAND | libc::SA_NOCLDSTOP | libc::SA_NOCLDWAIT) as u64;
    let host = KernelSigaction {
        handler: dgad_host_handler_entry as *const () as u64,
        flags: (guest.flags & keep)
            | extra
            | libc::SA_SIGINFO as u64
            | libc::SA_ONSTACK as u64
            | SA_RESTORER,
        restorer: dgad_host_restorer as *const () as u64,
        // Every signal waits while the host handler runs (the kernel lets
        // them in when it returns): a nested one would append to the
        // pending queue in the middle of another's append and one of the
        // two would be lost. Faults stay open, so that one in the handler
        // itself still ends with the runtime's diagnostic rather than a
        // silent kill. The guest's mask applies to its own frame.
        mask: !SYNCHRONOUS_MASK,
    };
    kernel_sigaction(sig, Some(&host), None)
}

/// Records the dispositions inherited from the parent and takes SIGTRAP
/// (needed for single-stepping out of inserted code).
pub fn init() {
    for sig in 1..NSIG as i32 {
        let mut old = KernelSigaction::default();
        if kernel_sigaction(sig, None, Some(&mut old)) == 0 {
            set_guest_action(sig, &old);
        }
    }
    // Handlers set before the takeover (by `.preinit_array`, library
    // constructors) run translated like later ones.
    for sig in 1..NSIG as i32 {
        let act = guest_action(sig);
        if guest_handles(act.handler) || runtime_keeps(sig, act.handler) {
            install_host(sig, &act);
        }
    }
}

/// Whether `handler` is a function of the guest's (not `SIG_DFL`/`SIG_IGN`).
fn guest_handles(handler: u64) -> bool {
    handler != libc::SIG_DFL as u64 && handler != libc::SIG_IGN as u64
}

/// Whether the host handler must stay installed for `sig` although the
/// guest's disposition is `handler` (`SIG_DFL`/`SIG_IGN` included): SIGTRAP
/// always (single-stepping out of inserted code); SIGSEGV and SIGBUS with the
/// default action (the runtime's fault-tolerant reads, `sys::safe_copy`);
/// when recording, every signal whose default action ends the process (the
/// tape is completed first). Decided here for both start-up and the guest's
/// `rt_sigaction`.
fn runtime_keeps(sig: i32, handler: u64) -> bool {
    let default = handler == libc::SIG_DFL as u64;
    sig == libc::SIGTRAP
        || default && matches!(sig, libc::SIGSEGV | libc::SIGBUS)
        || default && crate::tool::tool().keeps_fatal_signals() && FATAL_BY_DEFAULT.contains(&sig)
}

/// The fault signals, as a mask.
const SYNCHRONOUS_MASK: u64 = 1 << (libc::SIGSEGV - 1)
    | 1 << (libc::SIGBUS - 1)
    | 1 << (libc::SIGILL - 1)
    | 1 << (libc::SIGFPE - 1)
    | 1 << (libc::SIGTRAP - 1);

/// Signals whose default action ends the process.
const FATAL_BY_DEFAULT: [i32; 14] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGSEGV,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGSYS,
];

/// A signal with the default action is about to end the process: complete
/// the tape, say so, and let the default action happen. Signal context.
fn die_by_default(sig: i32, fault: bool) {
    crate::tool::tool().dying_in_signal(Some(sig));
    kernel_sigaction(sig, Some(&KernelSigaction::default()), None);
    if !fault {
        // Re-sent to ourselves, it is delivered with the default action
        // once this handler returns.
        sys::signal_self(sig);
    }
    // A fault re-executes the faulting instruction, which faults again.
}

/// The guest's `rt_sigaction`.
pub fn sigaction(sig: i32, act: u64, oldact: u64, setsize: u64) -> i64 {
    if setsize != 8 || !(1..NSIG as i32).contains(&sig) {
        return -(libc::EINVAL as i64);
    }
    if sig == libc::SIGKILL || sig == libc::SIGSTOP {
        // SAFETY: forwarded as the guest asked; the kernel validates it.
        return unsafe {
            sys::syscall6(
                libc::SYS_rt_sigaction,
                sig as u64,
                act,
                oldact,
                setsize,
                0,
                0,
            )
        };
    }
    let _g = ACTION_LOCK.lock();
    let old = guest_action(sig);
    if act != 0 {
        // SAFETY: reading the guest's struct; a bad pointer faults in the
        // runtime, which is reported as an internal error.
        let new = unsafe { core::ptr::read_unaligned(act as *const KernelSigaction) };
        let r = if guest_handles(new.handler) || runtime_keeps(sig, new.handler) {
            install_host(sig, &new)
        } else {
            kernel_sigaction(sig, Some(&new), None)
        };
        if r < 0 {
            return r;
        }
        set_guest_action(sig, &new);
    }
    if oldact != 0 {
        // SAFETY: the guest's output struct.
        unsafe { core::ptr::write_unaligned(oldact as *mut KernelSigaction, old) };
    }
    0
}

/// The guest's alternate signal stack (kept in the context: the kernel
/// holds the runtime's), and whether a guest stack pointer `rsp` lies on
/// it while it is enabled.
fn guest_altstack(ctx: &ThreadCtx, rsp: u64) -> (libc::stack_t, bool) {
    let alt = ctx.guest_ss;
    let lo = alt.ss_sp as u64;
    let on_it = alt.ss_flags & libc::SS_DISABLE == 0 && rsp > lo && rsp <= lo + alt.ss_size as u64;
    (alt, on_it)
}

/// The guest's `sigaltstack`, emulated with the kernel's rules: `EPERM`
/// for a change while running on it, `EINVAL` for unknown flags, `ENOMEM`
/// below `MINSIGSTKSZ`, `EFAULT` for unreadable or unwritable arguments;
/// the old value reports `SS_ONSTACK` by the guest's stack pointer.
pub fn sigaltstack(ctx: &mut ThreadCtx, ss: u64, old: u64) -> i64 {
    let (cur, on_it) = guest_altstack(ctx, ctx.regs.gpr[reg::RSP]);
    let mut new = None;
    if ss != 0 {
        let mut req = [0u8; core::mem::size_of::<libc::stack_t>()];
        // SAFETY: req is a local of the copied length; a fault on the
        // guest's pointer is recovered.
        if !unsafe { sys::safe_copy(req.as_mut_ptr(), ss as *const u8, req.len()) } {
            return -(libc::EFAULT as i64);
        }
        // SAFETY: stack_t is plain data; any bytes are a value.
        let req: libc::stack_t = unsafe { core::mem::transmute(req) };
        if on_it {
            return -(libc::EPERM as i64);
        }
        let mode = req.ss_flags & !SS_AUTODISARM;
        if mode != 0 && mode != libc::SS_DISABLE && mode != libc::SS_ONSTACK {
            return -(libc::EINVAL as i64);
        }
        new = Some(if mode == libc::SS_DISABLE {
            crate::context::NO_ALTSTACK
        } else {
            if req.ss_size < libc::MINSIGSTKSZ {
                return -(libc::ENOMEM as i64);
            }
            libc::stack_t {
                ss_flags: req.ss_flags & SS_AUTODISARM,
                ..req
            }
        });
    }
    if old != 0 {
        let mut out = cur;
        if on_it {
            out.ss_flags |= libc::SS_ONSTACK;
        }
        // SAFETY: stack_t is plain data.
        let bytes: [u8; core::mem::size_of::<libc::stack_t>()] =
            unsafe { core::mem::transmute(out) };
        // SAFETY: the destination is the guest's pointer, its faults
        // (unmapped, read-only) recovered as the source's are.
        if !unsafe { sys::safe_copy(old as *mut u8, bytes.as_ptr(), bytes.len()) } {
            return -(libc::EFAULT as i64);
        }
    }
    if let Some(ss) = new {
        ctx.guest_ss = ss;
    }
    0
}

/// `SS_AUTODISARM` (Linux 4.7): kept and reported, not acted on.
const SS_AUTODISARM: i32 = 1 << 31;

fn queue(ctx: &mut ThreadCtx, sig: i32, info: &libc::siginfo_t, uc: Option<&libc::ucontext_t>) {
    let n = pending_len(ctx);
    // A standard signal is pending at most once, as in the kernel (only
    // real-time signals, from 32 up, queue every instance); faults are
    // synchronous and always kept.
    let synchronous = matches!(
        sig,
        libc::SIGSEGV | libc::SIGBUS | libc::SIGFPE | libc::SIGILL | libc::SIGTRAP
    );
    if sig < 32 && !synchronous && ctx.pending[..n].iter().any(|p| p.signo == sig) {
        return;
    }
    if n >= PENDING_MAX {
        static TOLD: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
        if !TOLD.swap(true, Ordering::Relaxed) {
            crate::dgad_eprintln!(
                "more than {} signals arrived for one thread before it could take them; \
                 signal {} and later ones of the burst are lost",
                PENDING_MAX,
                sig
            );
        }
        return;
    }
    let mut p = PendingSignal {
        signo: sig,
        info: *info,
        err: 0,
        trapno: 0,
        cr2: 0,
    };
    if let Some(uc) = uc {
        p.err = uc.uc_mcontext.gregs[libc::REG_ERR as usize] as u64;
        p.trapno = uc.uc_mcontext.gregs[libc::REG_TRAPNO as usize] as u64;
        p.cr2 = uc.uc_mcontext.gregs[libc::REG_CR2 as usize] as u64;
    }
    ctx.pending[n] = p;
    set_pending_len(ctx, n + 1);
}

/// A fault in record mode's inserted code outside application memory came
/// from the shadow access that precedes the guest's own (the shadow of an
/// application address is always mapped, and a non-application address
/// has its shadow in a reserved gap): the guest is told about its own
/// address, unmapped as far as it can know. Signal context.
fn report_guest_address(ctx: &mut ThreadCtx) {
    let n = ctx.pending_len as usize;
    if n == 0 || !crate::tool::tool().has_shadows() {
        return;
    }
    let p = &mut ctx.pending[n - 1];
    if p.signo != libc::SIGSEGV || shadowmem::is_app(p.cr2) {
        return;
    }
    let guest = shadowmem::app_of(p.cr2);
    p.cr2 = guest;
    p.info.si_code = 1; // SEGV_MAPERR
    set_si_addr(&mut p.info, guest);
}

/// Sets `si_addr` of a fault's siginfo (SIGSEGV, SIGBUS, SIGILL, SIGFPE).
fn set_si_addr(info: &mut libc::siginfo_t, addr: u64) {
    // SAFETY: for these signals si_addr is the field right after the
    // 16-byte header (signo, errno, code, padding) of the 128-byte struct.
    unsafe { *((info as *mut libc::siginfo_t as *mut u8).add(16) as *mut u64) = addr };
}

/// Where in cache code `pc` is, in guest terms: the guest pc, whether the
/// state there is exactly the guest's, and the map entry that says which
/// guest registers are in their spill slots (`rewriter::translate::SPILLS_*`;
/// none where the state is exact).
fn locate(pc: u64) -> Option<(u64, bool, InsnMapEntry)> {
    let (mut e, start) = map_entry(pc)?;
    let exact = e.boundary && start == pc;
    if exact {
        e.spills = 0;
    }
    Some((e.guest_pc, exact, e))
}

/// The map entry that covers cache address `pc`, and the address where its
/// code starts. Signal context.
fn map_entry(pc: u64) -> Option<(InsnMapEntry, u64)> {
    let b = cache::find_block(pc)?;
    let off = (pc - b.cache_start) as u32;
    let i = b.insn_map.partition_point(|e| e.cache_off <= off);
    let e = *b.insn_map.get(i.checked_sub(1)?)?;
    Some((e, b.cache_start + u64::from(e.cache_off)))
}

/// A thread interrupted at `pc` inside the inserted code of a boundary
/// entry, which may be abandoned and run again from the entry's start
/// (`rewriter::restart`): the guest pc there and the entry with the
/// spills in effect at `pc`, for [`redirect`]. Signal context.
fn restart_point(pc: u64) -> Option<(u64, InsnMapEntry)> {
    let (e, start) = map_entry(pc)?;
    if !e.boundary || start == pc {
        return None;
    }
    // SAFETY: `[start, pc)` is this block's cache code, mapped and never
    // changed for the process's life.
    let code = unsafe { core::slice::from_raw_parts(start as *const u8, (pc - start) as usize) };
    let r = rewriter::restart::restartable(code, start, &e, &ThreadCtx::LAYOUT)?;
    Some((
        e.guest_pc,
        InsnMapEntry {
            spills: r.spills,
            scratch: r.scratch,
            ..e
        },
    ))
}

pub(crate) fn is_fault(sig: i32, info: &libc::siginfo_t) -> bool {
    matches!(
        sig,
        libc::SIGSEGV | libc::SIGBUS | libc::SIGFPE | libc::SIGILL | libc::SIGTRAP
    ) && info.si_code > 0
}

/// Dot mode's tangent cache (decision 46) held the tangents of the guest
/// xmm registers in `regs` (bit n) in `xmm(16+n)`, newer than the shadow
/// register file's: copies them there from the interrupted state, the
/// kernel's standard-format `xsave` image in the frame. Signal context: a
/// `cpuid` and plain copies.
fn write_back_tangents(ctx: &mut ThreadCtx, uc: &libc::ucontext_t, regs: u16) {
    let fp = uc.uc_mcontext.fpregs as *const u8;
    if fp.is_null() {
        return;
    }
    let offset = crate::cpu::hi16_zmm_offset();
    // SAFETY: the frame's fpstate is an xsave image whose header
    // (XSTATE_BV at byte 512) is present; the translator used these
    // registers only where XCR0 enables AVX-512 state, so the image holds
    // the Hi16_ZMM component at its CPUID offset, 16 registers of 64
    // bytes.
    let present = unsafe { (fp.add(512) as *const u64).read_unaligned() } & (1 << 7) != 0;
    for n in 0..16 {
        if regs & 1 << n == 0 {
            continue;
        }
        let mut lanes = [0u32; 4];
        if present {
            for (k, lane) in lanes.iter_mut().enumerate() {
                // SAFETY: as above; byte offset + 64 n + 4 k of the image.
                *lane = unsafe { (fp.add(offset + 64 * n + 4 * k) as *const u32).read_unaligned() };
            }
        }
        ctx.shadow.vec[n][..4].copy_from_slice(&lanes);
    }
}

/// The translation held the guest xmm registers in `regs` (bit n) as
/// temporaries (`InsnMapEntry::held`, decision 54): their guest values are
/// in the context's `held_xmm` slots. Copies them into the interrupted
/// state in the frame (its legacy area: bytes 160 + 16 n), from which the
/// kernel's `rt_sigreturn` loads the registers. Signal context: plain
/// copies.
fn put_back_held(ctx: &ThreadCtx, uc: &mut libc::ucontext_t, regs: u16) {
    const XMM_AREA: usize = 160;
    const SW_RESERVED: usize = 464;
    const XSTATE_BV: usize = 512;
    const FP_XSTATE_MAGIC1: u32 = 0x4650_5853;
    let fp = uc.uc_mcontext.fpregs as *mut u8;
    if fp.is_null() {
        return;
    }
    // SAFETY: the frame's fpstate is at least the 512-byte fxsave area;
    // with the xsave magic in its software-reserved bytes, an xsave header
    // follows at byte 512.
    unsafe {
        if (fp.add(SW_RESERVED) as *const u32).read_unaligned() == FP_XSTATE_MAGIC1 {
            let bv = fp.add(XSTATE_BV) as *mut u64;
            if bv.read_unaligned() & 2 == 0 {
                // The SSE state was in its initial form (all registers
                // zero), which the kernel did not write out: write it, or
                // `xrstor` would ignore the area.
                core::ptr::write_bytes(fp.add(XMM_AREA), 0, 16 * 16);
                bv.write_unaligned(bv.read_unaligned() | 2);
            }
        }
        for n in (0..16).filter(|n| regs & 1 << n != 0) {
            core::ptr::copy_nonoverlapping(
                ctx.held_xmm.0[n].as_ptr(),
                fp.add(XMM_AREA + 16 * n),
                16,
            );
        }
    }
}

/// Sends the interrupted thread to `dgad_signal_entry` with guest state.
fn redirect(ctx: &mut ThreadCtx, uc: &mut libc::ucontext_t, guest_pc: u64, at: InsnMapEntry) {
    use rewriter::translate::{
        LOOKUP_SLOT_RAX, LOOKUP_SLOT_RCX, SPILLS_RAX, SPILLS_RAX_STACK, SPILLS_RCX,
        SPILLS_RCX_STACK, SPILLS_RDX, SPILLS_SCRATCH,
    };
    let (spilled, stack_bias) = (at.spills, at.stack_bias);
    if at.tangents != 0 {
        write_back_tangents(ctx, uc, at.tangents);
    }
    if at.held != 0 {
        put_back_held(ctx, uc, at.held);
    }
    let g = &mut uc.uc_mcontext.gregs;
    for (bit, reg, slot) in [
        (SPILLS_RAX, libc::REG_RAX, ctx.spill_rax),
        (SPILLS_RCX, libc::REG_RCX, ctx.spill_rcx),
        (SPILLS_RDX, libc::REG_RDX, ctx.spill_rdx),
    ] {
        if spilled & bit != 0 {
            g[reg as usize] = slot as i64;
        }
    }
    if spilled & SPILLS_SCRATCH != 0 {
        if let Some(&(greg, _)) = GREG_OF_GPR
            .iter()
            .find(|&&(_, idx)| idx == usize::from(at.scratch))
        {
            g[greg as usize] = ctx.spill_scratch as i64;
        }
    }
    let rsp = g[libc::REG_RSP as usize] as u64;
    for (bit, reg, slot) in [
        (SPILLS_RAX_STACK, libc::REG_RAX, LOOKUP_SLOT_RAX),
        (SPILLS_RCX_STACK, libc::REG_RCX, LOOKUP_SLOT_RCX),
    ] {
        if spilled & bit != 0 {
            let at = rsp.wrapping_add_signed(i64::from(stack_bias) + i64::from(slot));
            // SAFETY: the translation stored the register there before
            // this position (the map entry says so), so the guest stack
            // address is mapped and writable; a plain load, fine in
            // signal context.
            g[reg as usize] = unsafe { core::ptr::read_volatile(at as *const i64) };
        }
    }
    g[libc::REG_EFL as usize] &= !(TF as i64);
    ctx.regs.gpr[reg::RSP] = g[libc::REG_RSP as usize] as u64;
    ctx.regs.rip = guest_pc;
    ctx.reason = reason::RESUME_AT_RIP;
    ctx.stepping = 0;
    g[libc::REG_RSP as usize] = ctx.rt_stack_top as i64;
    g[libc::REG_RIP as usize] = crate::entry::signal_entry_addr() as i64;
}

/// The handler the kernel runs for every guest-handled signal. Signal
/// context: no allocation, no locks.
extern "C" fn host_handler(sig: i32, info: *mut libc::siginfo_t, ucv: *mut libc::c_void) {
    // SAFETY: the kernel passes valid siginfo and ucontext pointers.
    let (info, uc) = unsafe { (&*info, &mut *(ucv as *mut libc::ucontext_t)) };
    if !crate::context::installed() {
        return on_thread_without_context(sig, info, uc);
    }
    if crate::adopt::is_request(info) {
        return; // adopted already, by an earlier signal
    }
    // SAFETY: the thread has a context installed in %gs (checked above).
    let ctx = unsafe { crate::context::current() };
    let pc = uc.uc_mcontext.gregs[libc::REG_RIP as usize] as u64;
    if matches!(sig, libc::SIGSEGV | libc::SIGBUS) {
        if let Some(fixup) = sys::safe_copy_fixup(pc) {
            uc.uc_mcontext.gregs[libc::REG_RIP as usize] = fixup as i64;
            return;
        }
    }
    if sig != libc::SIGTRAP
        && guest_action(sig).handler == libc::SIG_DFL as u64
        && !default_ignores(sig)
    {
        let fault = is_fault(sig, info);
        if fault {
            if let Some((guest_pc, _, _)) = locate(pc) {
                let rsp = uc.uc_mcontext.gregs[libc::REG_RSP as usize] as u64;
                // SAFETY: a fault's siginfo has its address in si_addr.
                let addr = unsafe { info.si_addr() } as u64;
                crate::crash::report(sig, addr, guest_pc, rsp);
            }
        }
        return die_by_default(sig, fault);
    }
    // A single step reports TRAP_TRACE, but now and then TRAP_BRKPT (seen
    // on this machine, 1 run in 30 of a loop under a 50 µs timer: the
    // thread died of the SIGTRAP meant for the stepping). While stepping,
    // that too is the step's trap unless a guest `int3` just ran (its
    // translation is the byte 0xcc, and a boundary follows it).
    let stepping_trap = sig == libc::SIGTRAP
        && ctx.stepping != 0
        && (info.si_code == 2 // TRAP_TRACE
            || info.si_code == 1 && !after_int3(pc)); // TRAP_BRKPT
    if stepping_trap {
        STATS.steps.fetch_add(1, Ordering::Relaxed);
        if ctx.stepping & STEPPED_PUSHF != 0 {
            clear_pushed_trap_flag(uc);
            ctx.stepping &= !STEPPED_PUSHF;
        }
        match locate(pc) {
            Some((gpc, true, at)) => redirect(ctx, uc, gpc, at),
            Some(_) => note_pushf(ctx, pc),
            // Still leaving the runtime towards the block (see
            // `step_to_boundary`): keep stepping.
            None if crate::entry::in_resume(pc) => {}
            None => {
                // Left cache code: the dispatcher delivers what is queued.
                uc.uc_mcontext.gregs[libc::REG_EFL as usize] &= !(TF as i64);
                ctx.stepping = 0;
            }
        }
        return;
    }
    if let Some(esc) = crate::syscall::guarded_window_escape(pc) {
        queue(ctx, sig, info, None);
        uc.uc_mcontext.gregs[libc::REG_RIP as usize] = esc as i64;
        return;
    }
    let fault = is_fault(sig, info);
    match locate(pc) {
        Some((gpc, exact, spilled)) if fault || exact => {
            queue(ctx, sig, info, Some(uc));
            if fault && !exact {
                report_guest_address(ctx);
            }
            if fault && matches!(sig, libc::SIGILL | libc::SIGFPE) {
                // The kernel names the faulting instruction: the guest's.
                let last = pending_len(ctx) - 1;
                set_si_addr(&mut ctx.pending[last].info, gpc);
            }
            redirect(ctx, uc, gpc, spilled);
        }
        Some(_) => {
            if let Some((gpc, at)) = restart_point(pc) {
                // The instruction's code so far can be run again: deliver
                // as at its start, without stepping there.
                STATS.restarts.fetch_add(1, Ordering::Relaxed);
                queue(ctx, sig, info, Some(uc));
                redirect(ctx, uc, gpc, at);
                return;
            }
            queue(ctx, sig, info, None);
            ctx.stepping = STEPPING;
            uc.uc_mcontext.gregs[libc::REG_EFL as usize] |= TF as i64;
            note_pushf(ctx, pc);
        }
        None if fault && !cache::in_cache(pc) => {
            crate::dgad_eprintln!(
                "internal error: signal {} in the runtime at 0x{:x} (address 0x{:x})",
                sig,
                pc,
                unsafe {
                    // SAFETY: si_addr is valid to read for fault signals.
                    info.si_addr()
                } as u64
            );
            sys::exit_group(125);
        }
        None => queue(ctx, sig, info, None),
    }
}

/// A signal on a thread that started before the takeover and runs
/// natively still: adopt it (`adopt`), or, if that cannot be done, carry
/// out a default action that ends the process and drop anything else.
/// Signal context.
fn on_thread_without_context(sig: i32, info: &libc::siginfo_t, uc: &mut libc::ucontext_t) {
    if crate::adopt::adopt_in_handler(sig, info, uc) || crate::adopt::is_request(info) {
        return;
    }
    let handler = guest_action(sig).handler;
    if handler == libc::SIG_DFL as u64 && !default_ignores(sig) {
        return die_by_default(sig, is_fault(sig, info));
    }
    crate::dgad_eprintln!(
        "signal {} reached thread {}, which runs natively (it could not be taken over): \
         the signal is lost",
        sig,
        sys::gettid()
    );
}

/// Queues `sig` for a thread adopted in the handler that caught it; the
/// dispatcher delivers it before the thread runs guest code. Signal
/// context.
pub(crate) fn queue_for_adopted(ctx: &mut ThreadCtx, sig: i32, info: &libc::siginfo_t) {
    queue(ctx, sig, info, None);
}

/// The calling thread's alternate signal stack as the guest set it (for
/// a thread taken over while running natively), or `NO_ALTSTACK`.
pub(crate) fn altstack_of_calling_thread() -> libc::stack_t {
    let mut ss = crate::context::NO_ALTSTACK;
    // SAFETY: sigaltstack writes the old value into the local.
    let r = unsafe {
        sys::syscall3(
            libc::SYS_sigaltstack,
            0,
            &mut ss as *mut libc::stack_t as u64,
            0,
        )
    };
    if r != 0 || ss.ss_flags & libc::SS_DISABLE != 0 {
        return crate::context::NO_ALTSTACK;
    }
    ss.ss_flags &= SS_AUTODISARM;
    ss
}

/// Gives `sig` the host handler for adoption requests (`adopt`), whatever
/// the guest's disposition: one it ignores would be dropped by the kernel.
/// With `SA_RESTART`: a thread the request finds waiting in a system call
/// the kernel restarts (a futex wait) comes back to the `syscall`
/// instruction, which then runs again translated.
pub(crate) fn take_for_requests(sig: i32) {
    let _g = ACTION_LOCK.lock();
    install_host_with(sig, &guest_action(sig), libc::SA_RESTART as u64);
}

/// The signals whose disposition is a handler of the guest's, as a mask
/// (bit `sig - 1`).
pub(crate) fn guest_handled_mask() -> u64 {
    (1..NSIG as i32)
        .filter(|&sig| guest_handles(guest_action(sig).handler))
        .fold(0, |m, sig| m | 1 << (sig - 1))
}

/// Gives `sig` back the disposition it has without requests.
pub(crate) fn give_back_after_requests(sig: i32) {
    let _g = ACTION_LOCK.lock();
    let act = guest_action(sig);
    if !guest_handles(act.handler) && !runtime_keeps(sig, act.handler) {
        kernel_sigaction(sig, Some(&act), None);
    }
}

fn set_mask(how: i32, set: Option<u64>) -> u64 {
    let mut old = 0u64;
    let newp = set.as_ref().map_or(0, |s| s as *const u64 as u64);
    // SAFETY: 8-byte masks in locals.
    unsafe {
        sys::syscall6(
            libc::SYS_rt_sigprocmask,
            how as u64,
            newp,
            &mut old as *mut u64 as u64,
            8,
            0,
            0,
        )
    };
    old
}

/// Runs `f` with every signal blocked: for the runtime's changes to the
/// queue of pending signals, which the host handler appends to. Without
/// it, a signal arriving while the runtime took the first entry off was
/// written where the shift then dropped it, and the taken one was
/// delivered twice (a SIGALRM became a second SIGUSR1; CPython's
/// `test_stress_delivery_simultaneous`).
fn with_signals_blocked<R>(f: impl FnOnce() -> R) -> R {
    let old = set_mask(libc::SIG_SETMASK, Some(!0));
    compiler_fence(Ordering::SeqCst);
    let r = f();
    compiler_fence(Ordering::SeqCst);
    set_mask(libc::SIG_SETMASK, Some(old));
    r
}

/// The length of the pending queue, read from memory: the host handler
/// changes it behind the runtime's `&mut ThreadCtx`, so a value the
/// compiler kept from before signals were blocked would be stale (it did
/// keep one: the queue lost the signal that came in between).
pub fn pending_len(ctx: &ThreadCtx) -> usize {
    // SAFETY: a plain aligned u32 field of a live context.
    unsafe { core::ptr::read_volatile(&ctx.pending_len) as usize }
}

/// Whether a signal waits for delivery to this thread.
pub fn any_pending(ctx: &ThreadCtx) -> bool {
    pending_len(ctx) > 0
}

/// Sets the queue's length in memory now (see [`pending_len`]).
fn set_pending_len(ctx: &mut ThreadCtx, n: usize) {
    // SAFETY: as in `pending_len`.
    unsafe { core::ptr::write_volatile(&mut ctx.pending_len, n as u32) };
}

/// Dies of `sig` the way the kernel's default action would.
fn die_of(sig: i32) -> ! {
    crate::tool::tool().process_ending(crate::tool::Ending::Signal);
    crate::stats::report();
    let dfl = KernelSigaction::default();
    kernel_sigaction(sig, Some(&dfl), None);
    set_mask(libc::SIG_UNBLOCK, Some(1u64 << (sig - 1)));
    sys::signal_self(sig);
    sys::exit_group(128 + sig)
}

fn default_ignores(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGCHLD | libc::SIGURG | libc::SIGWINCH | libc::SIGCONT
    )
}

/// Queues the fault `sig` with `si_code` `code` and `si_addr` `addr` at the
/// front of the thread's queue (it is synchronous), to be delivered at
/// the next guest-instruction boundary: a libm function run natively for
/// the guest raised an exception the guest had unmasked.
pub fn queue_fault(ctx: &mut ThreadCtx, sig: i32, code: i32, addr: u64) {
    // SAFETY: an all-zero siginfo is valid; fields are filled below.
    let mut info: libc::siginfo_t = unsafe { core::mem::zeroed() };
    info.si_signo = sig;
    info.si_code = code;
    set_si_addr(&mut info, addr);
    with_signals_blocked(|| {
        queue(ctx, sig, &info, None);
        let n = pending_len(ctx);
        ctx.pending[..n].rotate_right(1);
    });
}

/// Queues the SIGSEGV of a store to `addr` that the runtime found would
/// fault (a libm output pointer, before the real function ran): the
/// kernel's report of a user-mode write, delivered when the runtime next
/// delivers signals.
pub fn queue_write_fault(ctx: &mut ThreadCtx, addr: u64) {
    queue_page_fault(ctx, libc::SIGSEGV, addr, 0x6); // user, write
}

/// Queues a fault the runtime itself detected for the guest (e.g. a jump to
/// unmapped memory) and delivers it now.
pub fn raise_fault(ctx: &mut ThreadCtx, sig: i32, addr: u64) {
    ctx.regs.rip = addr;
    queue_page_fault(ctx, sig, addr, 0x14); // user, instruction fetch
    if guest_action(sig).handler <= 1 {
        die_of(sig);
    }
    deliver_pending(ctx);
}

/// Queues `sig` for a page fault at `addr` at the front of the queue (it
/// is synchronous), as the kernel reports one: SEGV_ACCERR and a present
/// page for mapped memory the access is not allowed on, SEGV_MAPERR for
/// none; the page-fault error code (`access` bits, plus present) and trap
/// number 14 in the frame.
fn queue_page_fault(ctx: &mut ThreadCtx, sig: i32, addr: u64, access: u64) {
    // SAFETY: an all-zero siginfo is valid; fields are filled below.
    let mut info: libc::siginfo_t = unsafe { core::mem::zeroed() };
    info.si_signo = sig;
    let mapped = sys::is_mapped(addr);
    info.si_code = if mapped { 2 } else { 1 };
    set_si_addr(&mut info, addr);
    with_signals_blocked(|| {
        queue(ctx, sig, &info, None);
        let n = pending_len(ctx);
        ctx.pending[..n].rotate_right(1);
        let p = &mut ctx.pending[0];
        p.err = access | u64::from(mapped);
        p.trapno = 14;
        p.cr2 = addr;
    });
}

/// Remembers that the guest's system call `nr` at `next - 2` was cut short
/// by a signal, so it can be restarted after an `SA_RESTART` handler.
pub fn note_interrupted_syscall(ctx: &mut ThreadCtx, nr: i64, next: u64) {
    let g = &ctx.regs.gpr;
    let args = [g[reg::RDI], g[reg::RSI], g[reg::RDX], g[reg::R10]];
    if pending_len(ctx) == 0 || !restartable(nr, args) {
        return;
    }
    let sig = ctx.pending[0].signo;
    let act = guest_action(sig);
    if act.handler > 1 && act.flags & libc::SA_RESTART as u64 != 0 {
        ctx.regs.gpr[reg::RAX] = nr as u64;
        ctx.regs.rip = next - 2;
    }
}

/// Whether the kernel restarts system call `nr` with arguments `a`
/// (rdi, rsi, rdx, r10) after an `SA_RESTART` handler. A futex wait with
/// a timeout and a socket call on a socket with a receive or send timeout
/// fail with `EINTR` whatever the handler's flags (signal(7)).
fn restartable(nr: i64, a: [u64; 4]) -> bool {
    if nr == libc::SYS_futex && a[3] != 0 {
        return false;
    }
    let receiving = [
        libc::SYS_read,
        libc::SYS_readv,
        libc::SYS_recvfrom,
        libc::SYS_recvmsg,
        libc::SYS_accept,
        libc::SYS_accept4,
    ];
    let sending = [
        libc::SYS_write,
        libc::SYS_writev,
        libc::SYS_sendto,
        libc::SYS_sendmsg,
        libc::SYS_connect,
    ];
    let timeout = if receiving.contains(&nr) {
        Some(libc::SO_RCVTIMEO)
    } else if sending.contains(&nr) {
        Some(libc::SO_SNDTIMEO)
    } else {
        None
    };
    if let Some(opt) = timeout {
        if socket_timeout_set(a[0] as i32, opt) {
            return false;
        }
    }
    restartable_call(nr)
}

/// Whether `fd` is a socket with the timeout `opt` (`SO_RCVTIMEO` or
/// `SO_SNDTIMEO`) set; false for anything else (`ENOTSOCK`, `EBADF`).
fn socket_timeout_set(fd: i32, opt: i32) -> bool {
    let mut tv = [0u64; 2];
    let mut len: u32 = 16;
    // SAFETY: getsockopt writes at most `len` bytes into our local.
    let r = unsafe {
        sys::syscall6(
            libc::SYS_getsockopt,
            fd as u64,
            libc::SOL_SOCKET as u64,
            opt as u64,
            tv.as_mut_ptr() as u64,
            &mut len as *mut u32 as u64,
            0,
        )
    };
    r == 0 && (tv[0] != 0 || tv[1] != 0)
}

/// System calls the kernel restarts after an `SA_RESTART` handler (in
/// their usual forms; see [`restartable`]).
fn restartable_call(nr: i64) -> bool {
    [
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_readv,
        libc::SYS_writev,
        libc::SYS_pread64,
        libc::SYS_pwrite64,
        libc::SYS_wait4,
        libc::SYS_waitid,
        libc::SYS_open,
        libc::SYS_openat,
        libc::SYS_accept,
        libc::SYS_accept4,
        libc::SYS_connect,
        libc::SYS_recvfrom,
        libc::SYS_sendto,
        libc::SYS_recvmsg,
        libc::SYS_sendmsg,
        libc::SYS_flock,
        libc::SYS_fcntl,
        libc::SYS_ioctl,
        libc::SYS_futex,
        libc::SYS_splice,
        libc::SYS_tee,
    ]
    .contains(&nr)
}

/// ucontext `gregs` slot of each general register, as `(REG_*, index into
/// GuestRegs::gpr)`.
const GREG_OF_GPR: [(i32, usize); 16] = [
    (libc::REG_R8, 8),
    (libc::REG_R9, 9),
    (libc::REG_R10, 10),
    (libc::REG_R11, 11),
    (libc::REG_R12, 12),
    (libc::REG_R13, 13),
    (libc::REG_R14, 14),
    (libc::REG_R15, 15),
    (libc::REG_RDI, 7),
    (libc::REG_RSI, 6),
    (libc::REG_RBP, 5),
    (libc::REG_RBX, 3),
    (libc::REG_RDX, 2),
    (libc::REG_RAX, 0),
    (libc::REG_RCX, 1),
    (libc::REG_RSP, 4),
];

/// The guest-visible frame the runtime builds below the guest stack.
#[repr(C)]
struct GuestFrame {
    restorer: u64,
    uc: libc::ucontext_t,
    info: libc::siginfo_t,
}

/// The runtime is about to return into the middle of a block (after an
/// instrumentation or client-request exit, which do not pass through the
/// dispatcher's delivery): if a signal arrived meanwhile, single-step from
/// there to the next guest-instruction boundary, where the step trap
/// delivers it. Without this, a loop whose only exits are such returns
/// (record mode's arithmetic on a thread without a tape chunk) never saw
/// its `SIGALRM`.
pub fn step_to_boundary(ctx: &mut ThreadCtx) {
    if pending_len(ctx) > 0 {
        ctx.stepping = STEPPING;
        ctx.regs.rflags |= TF;
    }
}

/// Whether the cache code before `pc` is an `int3` that a boundary
/// follows: a guest breakpoint, not a step. Signal context.
fn after_int3(pc: u64) -> bool {
    cache::in_cache(pc.wrapping_sub(1))
        && locate(pc).is_some_and(|(_, exact, _)| exact)
        // SAFETY: `pc - 1` is in cache code (checked), which stays mapped.
        && unsafe { core::ptr::read_volatile((pc - 1) as *const u8) } == 0xcc
}

/// [`ThreadCtx::stepping`]: single-stepping towards a boundary.
const STEPPING: u32 = 1;
/// [`ThreadCtx::stepping`]: the instruction being stepped pushes the
/// flags (`pushf`), with the trap flag the stepping set in them.
const STEPPED_PUSHF: u32 = 2;

/// Stepping is about to run the instruction at `pc` (cache code): if it
/// is a `pushf`, the next trap takes the trap flag out of what it pushed,
/// so that the guest never sees it (a later `popf` would set it again, and
/// the thread die of `SIGTRAP`). Signal context.
fn note_pushf(ctx: &mut ThreadCtx, pc: u64) {
    let mut at = pc;
    // SAFETY: `pc` is in cache code (located in a block), which stays
    // mapped and readable; an instruction's prefixes and opcode lie
    // within its block.
    let byte = |a: u64| unsafe { core::ptr::read_volatile(a as *const u8) };
    while matches!(byte(at), 0x66 | 0x40..=0x4f) && at - pc < 4 {
        at += 1;
    }
    if byte(at) == 0x9c {
        ctx.stepping |= STEPPED_PUSHF;
    }
}

/// The trap after a stepped `pushf`: clears the trap flag (bit 8) in the
/// flags it pushed, at the interrupted `rsp`. Signal context.
fn clear_pushed_trap_flag(uc: &libc::ucontext_t) {
    let rsp = uc.uc_mcontext.gregs[libc::REG_RSP as usize] as u64;
    // SAFETY: the guest's `pushf` just wrote its flags (2 or 8 bytes) at
    // `rsp`, so the byte holding bit 8 is mapped and writable.
    unsafe {
        let p = (rsp + 1) as *mut u8;
        core::ptr::write_volatile(p, core::ptr::read_volatile(p) & !1);
    }
}

/// Delivers the first queued signal to its guest handler by building a
/// signal frame and pointing the guest registers at the handler. Returns
/// whether the guest's next pc changed.
pub fn deliver_pending(ctx: &mut ThreadCtx) -> bool {
    while pending_len(ctx) > 0 {
        let p = with_signals_blocked(|| {
            let n = pending_len(ctx);
            let p = ctx.pending[0];
            ctx.pending.copy_within(1..n, 0);
            set_pending_len(ctx, n - 1);
            p
        });
        let sig = p.signo;
        let act = guest_action(sig);
        if act.handler == libc::SIG_IGN as u64 {
            continue;
        }
        if act.handler == libc::SIG_DFL as u64 {
            if default_ignores(sig) {
                continue;
            }
            die_of(sig);
        }
        build_frame(ctx, &p, &act);
        STATS.signals.fetch_add(1, Ordering::Relaxed);
        return true;
    }
    false
}

fn build_frame(ctx: &mut ThreadCtx, p: &PendingSignal, act: &KernelSigaction) {
    let sig = p.signo;
    let guest_rsp = ctx.regs.gpr[reg::RSP];
    let (alt, on_alt) = guest_altstack(ctx, guest_rsp);
    let mut sp = if act.flags & libc::SA_ONSTACK as u64 != 0
        && alt.ss_flags & libc::SS_DISABLE == 0
        && !on_alt
    {
        alt.ss_sp as u64 + alt.ss_size as u64
    } else {
        guest_rsp - 128
    };
    // The image as large as this machine's state, not the context's
    // whole buffer: a guest's alternate stack of SIGSTKSZ (8 KiB, as
    // Rust's runtime makes them) holds the kernel's frame, and must hold
    // ours.
    let xsave_bytes = crate::cpu::xsave_bytes();
    sp = (sp - xsave_bytes as u64) & !63;
    let fp = sp;
    sp -= core::mem::size_of::<GuestFrame>() as u64;
    sp = ((sp + 8) & !15) - 8;
    let old_mask = set_mask(libc::SIG_BLOCK, None);
    // SAFETY: GuestFrame is plain data, valid all zero.
    let mut frame_image: GuestFrame = unsafe { core::mem::zeroed() };
    {
        let f = &mut frame_image;
        f.restorer = act.restorer;
        f.info = p.info;
        f.uc.uc_stack = alt;
        let g = &mut f.uc.uc_mcontext.gregs;
        let r = &ctx.regs.gpr;
        use libc::*;
        for (greg, idx) in GREG_OF_GPR {
            g[greg as usize] = r[idx] as i64;
        }
        g[REG_RIP as usize] = ctx.regs.rip as i64;
        g[REG_EFL as usize] = ctx.regs.rflags as i64;
        g[REG_CSGSFS as usize] = 0x33;
        g[REG_ERR as usize] = p.err as i64;
        g[REG_TRAPNO as usize] = p.trapno as i64;
        g[REG_CR2 as usize] = p.cr2 as i64;
        f.uc.uc_mcontext.fpregs = fp as *mut libc::_libc_fpstate;
        // SAFETY: the first 8 bytes of a sigset_t are the kernel's mask.
        unsafe { *(&mut f.uc.uc_sigmask as *mut libc::sigset_t as *mut u64) = old_mask };
    }
    crate::ad::guest::materialize_legacy(ctx);
    // SAFETY: both sources are ours and as long as copied; the guest memory
    // written (below its stack pointer past the red zone, or its alternate
    // stack) may be unwritable, which safe_copy reports instead of faulting.
    let written = unsafe {
        sys::safe_copy(fp as *mut u8, ctx.xsave.0.as_ptr(), xsave_bytes)
            && sys::safe_copy(
                sp as *mut u8,
                (&frame_image as *const GuestFrame).cast(),
                core::mem::size_of::<GuestFrame>(),
            )
    };
    if !written {
        // A stack overflow with no alternate stack: the kernel cannot
        // push the frame either and kills the process with SIGSEGV.
        die_of(libc::SIGSEGV);
    }
    let mut mask = old_mask | act.mask;
    if act.flags & libc::SA_NODEFER as u64 == 0 {
        mask |= 1 << (sig - 1);
    }
    set_mask(libc::SIG_SETMASK, Some(mask));
    if act.flags & libc::SA_RESETHAND as u64 != 0 {
        set_guest_action(sig, &KernelSigaction::default());
    }
    let frame = sp;
    if crate::tool::tool().has_shadows() {
        keep_shadows(
            ctx,
            frame + core::mem::offset_of!(GuestFrame, uc) as u64,
            fp,
        );
        // The handler's vector and x87 registers start zeroed (below).
        ctx.shadow.vec = [[0; shadowmem::VEC_BYTES / 4]; 32];
        ctx.shadow.x87 = [[0; shadowmem::X87_BYTES / 4]; 8];
    }
    reset_extended_state(&mut ctx.xsave.0);
    ctx.regs.gpr[reg::RSP] = frame;
    ctx.regs.gpr[reg::RDI] = sig as u64;
    ctx.regs.gpr[reg::RSI] = frame + core::mem::offset_of!(GuestFrame, info) as u64;
    ctx.regs.gpr[reg::RDX] = frame + core::mem::offset_of!(GuestFrame, uc) as u64;
    ctx.regs.gpr[reg::RAX] = 0;
    ctx.regs.rflags &= !(DF | TF);
    ctx.regs.rip = act.handler;
}

/// The extended state a handler starts with, as the kernel gives it: x87,
/// SSE, AVX and AVX-512 registers zero, default control words (round to
/// nearest, exceptions masked). Offsets of the standard `xsave` layout;
/// MXCSR_MASK (bytes 28..32) and the header stay as saved.
fn reset_extended_state(area: &mut [u8]) {
    area[..24].fill(0);
    area[32..512].fill(0);
    area[0..2].copy_from_slice(&mathwrap::f80::DEFAULT_X87_CW.to_le_bytes()); // FCW
    area[24..28].copy_from_slice(&mathwrap::f80::DEFAULT_MXCSR.to_le_bytes()); // MXCSR
                                                                               // AVX upper halves, opmasks, ZMM_Hi256, Hi16_ZMM.
    for (offset, len) in [(576, 256), (1088, 64), (1152, 512), (1664, 1024)] {
        area[offset..offset + len].fill(0);
    }
}

/// Record mode, at delivery: the frame's bytes (written by the runtime, not
/// by instrumented stores) are passive, the handler's arguments too, and the
/// interrupted code's register shadows are kept until its `rt_sigreturn`
/// (the handler's arithmetic would otherwise leave its indices in them).
fn keep_shadows(ctx: &mut ThreadCtx, uc: u64, fp: u64) {
    let end = fp + crate::cpu::xsave_bytes() as u64;
    crate::tool::tool().mem_written(uc - 8, end - (uc - 8));
    let n = ctx.frame_shadows_len as usize;
    if n == ctx.frame_shadows.len() {
        // The oldest was most likely left with siglongjmp.
        ctx.frame_shadows.copy_within(1.., 0);
        ctx.frame_shadows_len -= 1;
    }
    let n = ctx.frame_shadows_len as usize;
    ctx.frame_shadows[n] = (uc, ctx.shadow);
    ctx.frame_shadows_len += 1;
    for r in [reg::RAX, reg::RDI, reg::RSI, reg::RDX, reg::RSP] {
        ctx.shadow.gpr[r] = [0; 2];
    }
}

/// Record mode, at `rt_sigreturn` from the frame whose ucontext is at
/// `uc`: the interrupted code's register shadows come back (frames above
/// it were left with siglongjmp).
fn restore_shadows(ctx: &mut ThreadCtx, uc: u64) {
    let n = ctx.frame_shadows_len as usize;
    if let Some(i) = ctx.frame_shadows[..n].iter().rposition(|(a, _)| *a == uc) {
        ctx.shadow = ctx.frame_shadows[i].1;
        ctx.frame_shadows_len = i as u32;
    }
}

/// The guest's `rt_sigreturn`: restores the state saved in the frame that
/// `build_frame` made (and the handler may have edited).
pub fn sigreturn(ctx: &mut ThreadCtx) {
    let uc_addr = ctx.regs.gpr[reg::RSP];
    if crate::tool::tool().has_shadows() {
        restore_shadows(ctx, uc_addr);
    }
    // SAFETY: the guest's rsp points at the ucontext of the frame we built;
    // a corrupted frame is the guest's bug, as natively.
    unsafe {
        let uc = &*(uc_addr as *const libc::ucontext_t);
        let g = &uc.uc_mcontext.gregs;
        use libc::*;
        for (greg, idx) in GREG_OF_GPR {
            ctx.regs.gpr[idx] = g[greg as usize] as u64;
        }
        ctx.regs.rip = g[REG_RIP as usize] as u64;
        let user_flags = 0x0000_0000_0025_4dd5u64; // CF PF AF ZF SF TF DF OF AC ID (as the kernel's FIX_EFLAGS)
        ctx.regs.rflags =
            (ctx.regs.rflags & !user_flags) | (g[REG_EFL as usize] as u64 & user_flags);
        let fp = uc.uc_mcontext.fpregs as u64;
        if fp != 0 {
            let n = crate::cpu::xsave_bytes();
            core::ptr::copy_nonoverlapping(fp as *const u8, ctx.xsave.0.as_mut_ptr(), n);
        }
        let mask = *(&uc.uc_sigmask as *const libc::sigset_t as *const u64);
        set_mask(libc::SIG_SETMASK, Some(mask));
    }
    ctx.reason = reason::RESUME_AT_RIP;
}
