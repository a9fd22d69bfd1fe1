//! Guest system calls: executed by the runtime on the guest's behalf, with a
//! look at each one first.
//!
//! The kernel's `syscall` semantics are kept: `rax` gets the result, `rcx`
//! the return address and `r11` the flags.

use crate::context::{reg, ThreadCtx};
use crate::static_exec::ProcSelf;
use crate::stats::STATS;
use crate::sys;
use core::arch::global_asm;
use std::sync::atomic::Ordering;

// i64 dgad_guarded_syscall(const u64 args[7], const u32 *pending): makes the
// system call unless a signal is pending, in which case it returns
// NOT_STARTED. The signal handler moves a thread interrupted between the
// check and the `syscall` instruction to that exit, so a signal can never be
// lost to a syscall that then blocks.
global_asm!(
    ".globl dgad_guarded_syscall",
    "dgad_guarded_syscall:",
    "    mov r11, rdi",
    "    mov rcx, rsi",
    "    mov rax, qword ptr [r11]",
    "    mov rdi, qword ptr [r11 + 8]",
    "    mov rsi, qword ptr [r11 + 16]",
    "    mov rdx, qword ptr [r11 + 24]",
    "    mov r10, qword ptr [r11 + 32]",
    "    mov r8, qword ptr [r11 + 40]",
    "    mov r9, qword ptr [r11 + 48]",
    ".globl dgad_guarded_syscall_check",
    "dgad_guarded_syscall_check:",
    "    cmp dword ptr [rcx], 0",
    "    jne dgad_guarded_syscall_not_started",
    ".globl dgad_guarded_syscall_insn",
    "dgad_guarded_syscall_insn:",
    "    syscall",
    "    ret",
    ".globl dgad_guarded_syscall_not_started",
    "dgad_guarded_syscall_not_started:",
    "    mov rax, {NOT_STARTED}",
    "    ret",
    NOT_STARTED = const NOT_STARTED,
);

/// Result of a guarded call that was not made because a signal is pending
/// (`-ERESTARTSYS`, a value the kernel never returns to user space). The
/// guest is rewound to its `syscall` instruction, the handler runs, and the
/// call is made afterwards — as natively, where the signal would have been
/// handled before the call.
const NOT_STARTED: i64 = -512;

extern "C" {
    fn dgad_guarded_syscall(args: *const u64, pending: *const u32) -> i64;
    fn dgad_guarded_syscall_check();
    fn dgad_guarded_syscall_insn();
    fn dgad_guarded_syscall_not_started();
}

/// If `pc` is in the window between the pending check and the `syscall`
/// instruction, the address to continue at instead (the call not made).
pub fn guarded_window_escape(pc: u64) -> Option<u64> {
    let (start, insn) = (
        dgad_guarded_syscall_check as *const () as u64,
        dgad_guarded_syscall_insn as *const () as u64,
    );
    (pc >= start && pc <= insn).then_some(dgad_guarded_syscall_not_started as *const () as u64)
}

fn args(ctx: &ThreadCtx) -> [u64; 7] {
    let g = &ctx.regs.gpr;
    [
        g[reg::RAX],
        g[reg::RDI],
        g[reg::RSI],
        g[reg::RDX],
        g[reg::R10],
        g[reg::R8],
        g[reg::R9],
    ]
}

/// Runs the guest's system call as the guest asked (interruptible by signals).
fn passthrough(ctx: &ThreadCtx) -> i64 {
    let a = args(ctx);
    // SAFETY: the guest asked for exactly this call; calls that would break
    // the runtime are intercepted in `handle` before reaching here.
    unsafe { dgad_guarded_syscall(a.as_ptr(), &ctx.pending_len) }
}

/// Handles the system call whose registers are in `ctx.regs`; on return
/// `ctx.regs` holds the state after it (`rip` may have been changed, e.g. by
/// `rt_sigreturn`).
pub fn handle(ctx: &mut ThreadCtx) {
    STATS.syscalls.fetch_add(1, Ordering::Relaxed);
    let nr = ctx.regs.gpr[reg::RAX] as i64;
    let a = args(ctx);
    let next = ctx.regs.rip;
    // A static guest's `/proc/self/exe` or `auxv`, looked up once.
    let proc_file = match nr {
        libc::SYS_open | libc::SYS_readlink => crate::static_exec::proc_self(a[1]),
        libc::SYS_openat | libc::SYS_readlinkat => crate::static_exec::proc_self(a[2]),
        _ => None,
    };
    let result = match nr {
        _ if shadow_conflict(nr, &a) => -(libc::ENOMEM as i64),
        libc::SYS_exit_group => {
            crate::gdbserver::exiting(a[1] as i32);
            crate::tool::tool().process_ending(crate::tool::Ending::Exit);
            crate::stats::report();
            sys::exit_group(a[1] as i32)
        }
        libc::SYS_exit => {
            crate::tool::tool().thread_exiting(ctx);
            if crate::threads::leave(ctx) {
                // The process ends with this thread: complete the files,
                // and if the tool's own thread would keep the process
                // alive, end it as the kernel does when its last thread
                // leaves.
                crate::tool::tool().process_ending(crate::tool::Ending::Exit);
                if crate::tool::tool().own_thread_running() {
                    crate::stats::report();
                    sys::exit_group(a[1] as i32)
                }
            }
            crate::threads::exiting(ctx);
            passthrough(ctx)
        }
        // The runtime's own descriptors stay open (see `fds`).
        libc::SYS_close if crate::fds::is_own(i64::from(a[1] as u32)) => 0,
        libc::SYS_close_range => crate::fds::close_range(
            u64::from(a[1] as u32),
            u64::from(a[2] as u32),
            u64::from(a[3] as u32),
        ),
        libc::SYS_dup2 | libc::SYS_dup3 if crate::fds::is_own(i64::from(a[2] as u32)) => {
            crate::dgad_eprintln!(
                "the program duplicates a descriptor onto {}, which dgad uses for its own files; \
                 refusing (EBUSY)",
                a[2] as u32
            );
            -(libc::EBUSY as i64)
        }
        libc::SYS_rt_sigreturn => {
            crate::signals::sigreturn(ctx);
            return;
        }
        libc::SYS_rt_sigaction => crate::signals::sigaction(a[1] as i32, a[2], a[3], a[4]),
        libc::SYS_sigaltstack => crate::signals::sigaltstack(ctx, a[1], a[2]),
        libc::SYS_clone if a[1] & libc::CLONE_VM as u64 != 0 => {
            crate::threads::clone_thread(ctx, nr, [a[1], a[2], a[3], a[4], a[5]], next)
        }
        libc::SYS_clone3 => {
            let mut flags = 0u64;
            if a[2] >= 8 {
                // SAFETY: clone_args begins with the u64 flags; the guest passed it.
                flags = unsafe { core::ptr::read_unaligned(a[1] as *const u64) };
            }
            if flags & libc::CLONE_VM as u64 != 0 {
                crate::threads::clone_thread(ctx, nr, [a[1], a[2], 0, 0, 0], next)
            } else {
                fork_like(ctx, &a)
            }
        }
        libc::SYS_vfork => {
            // A vfork child shares memory: run it as a CLONE_VM child with
            // its own runtime context (the parent waits as with vfork).
            let flags = (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as u64;
            crate::threads::clone_thread(ctx, libc::SYS_clone, [flags, 0, 0, 0, 0], next)
        }
        libc::SYS_fork | libc::SYS_clone => fork_like(ctx, &a),
        libc::SYS_setrlimit if a[1] == libc::RLIMIT_AS as u64 => address_space_limit(a[2], 0),
        libc::SYS_getrlimit if a[1] == libc::RLIMIT_AS as u64 => address_space_limit(0, a[2]),
        libc::SYS_prlimit64
            if a[2] == libc::RLIMIT_AS as u64
                && (a[1] == 0 || a[1] as i32 == crate::init::pid()) =>
        {
            address_space_limit(a[3], a[4])
        }
        libc::SYS_execve => exec(ctx, a[1], a[2], a[3], None),
        libc::SYS_execveat => exec(ctx, a[2], a[3], a[4], Some((a[1], a[5]))),
        // A static program's own libc sets and reads its %fs base and
        // moves its own break (`static_exec`).
        libc::SYS_arch_prctl if a[1] == 0x1002 && crate::static_exec::active() => {
            crate::static_exec::set_fs(ctx, a[2])
        }
        libc::SYS_arch_prctl if a[1] == 0x1003 && crate::static_exec::active() => {
            put_guest_u64(a[2], ctx.guest_fs)
        }
        libc::SYS_brk if crate::static_exec::active() => crate::static_exec::brk(a[1]),
        // `/proc/self/exe` and `auxv` are the host's; the guest gets its own.
        _ if proc_file.is_some() => proc_self_call(ctx, nr, &a, proc_file),
        libc::SYS_arch_prctl if a[1] == 0x1001 => {
            // ARCH_SET_GS: %gs belongs to the runtime.
            crate::dgad_eprintln!(
                "the program sets its %gs base (arch_prctl), which dgad reserves; refusing it"
            );
            -(libc::EINVAL as i64)
        }
        // ARCH_GET_GS: the guest's base is 0, as the kernel starts it.
        libc::SYS_arch_prctl if a[1] == 0x1004 => put_guest_u64(a[2], 0),
        libc::SYS_munmap | libc::SYS_mprotect | libc::SYS_mremap => {
            let r = passthrough(ctx);
            if r >= 0 {
                invalidate(a[1], a[2]);
            }
            r
        }
        libc::SYS_mmap if a[4] & libc::MAP_FIXED as u64 != 0 => {
            let r = passthrough(ctx);
            if r >= 0 {
                invalidate(a[1], a[2]);
            }
            r
        }
        _ => passthrough(ctx),
    };
    if result == NOT_STARTED {
        // Registers are untouched; run the handler, then the call.
        ctx.regs.rip = next - 2;
        return;
    }
    // Also after errors: a sleep interrupted by a signal wrote its
    // remaining time.
    if crate::tool::tool().has_shadows() {
        crate::syscall_effects::after_syscall(nr, &a, result);
    }
    finish(ctx, result, next);
    if result == -(libc::EINTR as i64) {
        crate::signals::note_interrupted_syscall(ctx, nr, next);
    }
}

/// Tools with shadows: whether system call `nr` (arguments `a`) would map, unmap,
/// reprotect or advise memory outside the application ranges, where the
/// shadow memory and the reserved gaps around it lie (`shadowmem`). A
/// `MAP_FIXED` mapping there would replace shadow pages (derivatives of
/// unrelated data lost, silently), so such calls fail with `ENOMEM`, with
/// a note on stderr the first time. A hint or `MAP_FIXED_NOREPLACE`
/// request there passes (the kernel places the mapping elsewhere or
/// refuses), with the same note: a program that insists on such an
/// address (the Java VM's ZGC heap at 4 TiB) fails for that reason.
fn shadow_conflict(nr: i64, a: &[u64; 7]) -> bool {
    if !crate::tool::tool().has_shadows() {
        return false;
    }
    let outside =
        |addr: u64, len: u64| len != 0 && !shadowmem::is_app_range(addr, addr.saturating_add(len));
    let (asked, refused) = match nr {
        libc::SYS_mmap if a[1] != 0 && outside(a[1], a[2]) => {
            (a[1], a[4] & libc::MAP_FIXED as u64 != 0)
        }
        libc::SYS_munmap | libc::SYS_mprotect | libc::SYS_madvise if outside(a[1], a[2]) => {
            (a[1], true)
        }
        libc::SYS_mremap if outside(a[1], a[2]) => (a[1], true),
        libc::SYS_mremap if a[4] & libc::MREMAP_FIXED as u64 != 0 && outside(a[5], a[3]) => {
            (a[5], true)
        }
        _ => return false,
    };
    static NOTED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if !NOTED.swap(true, core::sync::atomic::Ordering::Relaxed) {
        let ranges: Vec<String> = shadowmem::APP_RANGES
            .iter()
            .map(|(lo, hi)| format!("{lo:#x}-{hi:#x}"))
            .collect();
        crate::dgad_eprintln!(
            "record: the program asks for memory at {asked:#x}, where record mode keeps its \
             shadow memory (program memory must lie in {}){}",
            ranges.join(", "),
            if refused { "; refused (ENOMEM)" } else { "" }
        );
    }
    refused
}

/// Sets the registers the way the kernel leaves them after `syscall`.
fn finish(ctx: &mut ThreadCtx, result: i64, next: u64) {
    ctx.regs.gpr[reg::RAX] = result as u64;
    ctx.regs.gpr[reg::RCX] = next;
    ctx.regs.gpr[reg::R11] = ctx.regs.rflags;
    ctx.regs.rip = next;
}

/// `fork` and `clone`/`clone3` without `CLONE_VM` (system call `a[0]`,
/// arguments `a[1..]`): the child is a copy of this thread only, so no
/// runtime lock may be held by another thread at that moment. A new stack
/// the guest gives the child is its stack from the child's first guest
/// instruction on; the call itself runs without it, so that the child
/// comes back here, in the runtime, on its copy of the runtime's stack.
fn fork_like(ctx: &mut ThreadCtx, a: &[u64; 7]) -> i64 {
    let mut call = *a;
    let mut clone_args = [0u64; 16];
    let child_sp = match a[0] as i64 {
        libc::SYS_clone => core::mem::replace(&mut call[2], 0),
        libc::SYS_clone3 if (64..=128).contains(&a[2]) => {
            // struct clone_args: ... stack (5), stack_size (6), ...
            let n = a[2] as usize;
            // SAFETY: copies the guest's struct (n ≤ 128 bytes) into our
            // local; a bad pointer is caught (the kernel answers EFAULT).
            let copied =
                unsafe { sys::safe_copy(clone_args.as_mut_ptr().cast(), a[1] as *const u8, n) };
            if !copied {
                return -(libc::EFAULT as i64);
            }
            let sp = if clone_args[5] != 0 {
                clone_args[5] + clone_args[6]
            } else {
                0
            };
            clone_args[5] = 0;
            clone_args[6] = 0;
            call[1] = clone_args.as_ptr() as u64;
            sp
        }
        _ => 0,
    };
    let queue = crate::tool::tool().fork_lock();
    let cache = crate::cache::CACHE.lock();
    crate::ALLOCATOR.fork_lock();
    // SAFETY: the guest's call, without its child stack (see above).
    let r = unsafe { dgad_guarded_syscall(call.as_ptr(), &ctx.pending_len) };
    crate::ALLOCATOR.fork_unlock();
    drop(cache);
    drop(queue);
    if r == 0 && child_sp != 0 {
        ctx.regs.gpr[reg::RSP] = child_sp;
    }
    if r == 0 {
        crate::init::refresh_pid();
        crate::tool::tool().fork_child(ctx);
        ctx.other_process = 0;
        crate::threads::fork_child(ctx);
        ctx.tid = sys::gettid();
    }
    r
}

/// Drops translations of guest code in `[addr, addr+len)`, and every
/// thread's lookup-table entries for them (from the lowest start of a
/// dropped block: one that began before `addr` is gone as well).
pub(crate) fn invalidate(addr: u64, len: u64) {
    let end = addr.saturating_add(len);
    let lowest = crate::cache::CACHE
        .lock()
        .as_mut()
        .and_then(|c| c.invalidate(addr, end));
    if let Some(lowest) = lowest {
        let from = lowest.min(addr);
        crate::threads::for_each_context(|c| c.ibl_invalidate(from, end));
    }
}

/// The guest's address-space limit (`RLIMIT_AS`) while it is deferred:
/// soft and hard, `u64::MAX` for none set.
static DEFERRED_AS: [core::sync::atomic::AtomicU64; 2] = [
    core::sync::atomic::AtomicU64::new(u64::MAX),
    core::sync::atomic::AtomicU64::new(u64::MAX),
];

/// `setrlimit`/`getrlimit`/`prlimit64` of this process's `RLIMIT_AS`. The
/// runtime's reservations (terabytes in record mode) already exceed any
/// limit a program sets for itself, so applying it would leave the
/// runtime unable to map memory (a shell running `ulimit -v` under dgad
/// would die before its `exec`). The limit is kept, reported back as set,
/// and its soft part applied at `execve`, where it takes effect for the
/// new image as it would natively (and is taken back if the `execve`
/// fails: a shell tries several paths). The program's own mappings before
/// that are not limited by it, and the new image keeps the old hard limit
/// (a lowered one could not be raised again after a failed `execve`).
/// Writes the old limit to `old` if non-zero.
fn address_space_limit(new: u64, old: u64) -> i64 {
    let native = match sys::address_space_limit() {
        Ok(l) => l,
        Err(e) => return e,
    };
    let current = |i: usize, native: u64| match DEFERRED_AS[i].load(Ordering::Acquire) {
        u64::MAX => native,
        v => v,
    };
    let (cur, max) = (current(0, native.rlim_cur), current(1, native.rlim_max));
    if new != 0 {
        let mut bytes = [0u8; core::mem::size_of::<libc::rlimit>()];
        // SAFETY: bytes is a local of the copied length; a fault on the
        // guest's pointer is recovered (EFAULT, as the kernel answers).
        if !unsafe { sys::safe_copy(bytes.as_mut_ptr(), new as *const u8, bytes.len()) } {
            return -(libc::EFAULT as i64);
        }
        // SAFETY: rlimit is plain data; any bytes are a value.
        let want: libc::rlimit = unsafe { core::mem::transmute(bytes) };
        if want.rlim_cur > want.rlim_max {
            return -(libc::EINVAL as i64);
        }
        if want.rlim_max > native.rlim_max {
            // Raising the hard limit needs privilege: let the kernel judge
            // (the soft limit stays as it is natively).
            let raised = libc::rlimit {
                rlim_cur: native.rlim_cur,
                rlim_max: want.rlim_max,
            };
            let r = sys::set_address_space_limit(&raised);
            if r < 0 {
                return r;
            }
        } else if want.rlim_max > max && !has_cap_sys_resource() {
            // Back above a hard limit lowered earlier: only with privilege.
            return -(libc::EPERM as i64);
        }
        DEFERRED_AS[0].store(want.rlim_cur, Ordering::Release);
        DEFERRED_AS[1].store(want.rlim_max, Ordering::Release);
    }
    if old != 0 {
        let was = libc::rlimit {
            rlim_cur: cur,
            rlim_max: max,
        };
        // SAFETY: rlimit is plain data.
        let bytes: [u8; core::mem::size_of::<libc::rlimit>()] =
            unsafe { core::mem::transmute(was) };
        // SAFETY: the destination is the guest's pointer; a fault
        // (unmapped, read-only) is recovered. As in the kernel, a new
        // limit read before stays set.
        if !unsafe { sys::safe_copy(old as *mut u8, bytes.as_ptr(), bytes.len()) } {
            return -(libc::EFAULT as i64);
        }
    }
    0
}

/// Whether this thread's effective capabilities include
/// `CAP_SYS_RESOURCE`, which raising a hard limit needs.
fn has_cap_sys_resource() -> bool {
    const CAP_SYS_RESOURCE: u32 = 24;
    // _LINUX_CAPABILITY_VERSION_3, this thread; two {effective,
    // permitted, inheritable} sets.
    let header: [u32; 2] = [0x2008_0522, 0];
    let mut data = [0u32; 6];
    // SAFETY: capget reads the header and writes the data arrays we own.
    let r = unsafe {
        sys::syscall3(
            libc::SYS_capget,
            header.as_ptr() as u64,
            data.as_mut_ptr() as u64,
            0,
        )
    };
    r == 0 && data[0] & (1 << CAP_SYS_RESOURCE) != 0
}

/// Applies a deferred `RLIMIT_AS` (soft limit) before `execve`; returns
/// the soft limit to restore if the `execve` fails.
fn apply_deferred_address_space_limit() -> Option<u64> {
    let soft = DEFERRED_AS[0].load(Ordering::Acquire);
    if soft == u64::MAX {
        return None;
    }
    let native = sys::address_space_limit().ok()?;
    sys::set_address_space_limit(&libc::rlimit {
        rlim_cur: soft.min(native.rlim_max),
        rlim_max: native.rlim_max,
    });
    Some(native.rlim_cur)
}

/// Puts the soft `RLIMIT_AS` back after a failed `execve`.
fn restore_address_space_limit(soft: u64) {
    if let Ok(mut native) = sys::address_space_limit() {
        native.rlim_cur = soft;
        sys::set_address_space_limit(&native);
    }
}

/// Writes `value` to the guest's 8 bytes at `addr`: 0, or `-EFAULT` where
/// they cannot be written, as the kernel answers.
fn put_guest_u64(addr: u64, value: u64) -> i64 {
    // SAFETY: copies our local to the guest's pointer; a bad one is caught.
    if unsafe { sys::safe_copy(addr as *mut u8, (&value as *const u64).cast(), 8) } {
        0
    } else {
        -(libc::EFAULT as i64)
    }
}

/// `open`, `openat`, `readlink` or `readlinkat` (arguments `a`) of the
/// static guest's `/proc/self` file `file`, whose kernel answer would be
/// the host's: its own file or auxiliary vector instead.
fn proc_self_call(ctx: &ThreadCtx, nr: i64, a: &[u64; 7], file: Option<ProcSelf>) -> i64 {
    // The path, buffer and size, or flags, by the call's argument order.
    let at = usize::from(matches!(nr, libc::SYS_openat | libc::SYS_readlinkat));
    let exe = crate::static_exec::image().map_or(c"", |i| i.exe.as_c_str());
    match (nr, file) {
        (libc::SYS_open | libc::SYS_openat, Some(ProcSelf::Auxv)) => open_auxv(a[at + 2]),
        (libc::SYS_open | libc::SYS_openat, _) => {
            let mut call = *a;
            call[at + 1] = exe.as_ptr() as u64;
            // SAFETY: the guest's call with its path replaced by the
            // image's (a NUL-terminated string that lives for the process).
            unsafe { dgad_guarded_syscall(call.as_ptr(), &ctx.pending_len) }
        }
        (_, Some(ProcSelf::Exe)) => readlink_exe(exe.to_bytes(), a[at + 2], a[at + 3]),
        // readlink of auxv: the kernel's answer (it is no link).
        _ => passthrough(ctx),
    }
}

/// `open` of `/proc/self/auxv` for a static guest: a memory file holding
/// the vector it started with (the kernel's is the host's), read from its
/// start, close-on-exec only if `flags` ask.
fn open_auxv(flags: u64) -> i64 {
    let Some(auxv) = crate::static_exec::auxv() else {
        return -(libc::ENOENT as i64);
    };
    let fd = match sys::memfd_create(b"auxv\0") {
        Ok(fd) => fd,
        Err(e) => return -e,
    };
    sys::write_all(fd, auxv);
    // SAFETY: our new descriptor: rewind it, and keep close-on-exec only
    // where the guest's flags ask for it.
    unsafe {
        sys::syscall3(libc::SYS_lseek, fd as u64, 0, libc::SEEK_SET as u64);
        if flags & libc::O_CLOEXEC as u64 == 0 {
            sys::syscall3(libc::SYS_fcntl, fd as u64, libc::F_SETFD as u64, 0);
        }
    }
    i64::from(fd)
}

/// `readlink` of `/proc/self/exe` for a static guest: its own path `exe`
/// (not NUL-terminated, cut to `size`), as the kernel answers.
fn readlink_exe(exe: &[u8], buf: u64, size: u64) -> i64 {
    let n = exe.len().min(size as usize);
    // SAFETY: copies into the guest's buffer of `size` bytes; a bad one is
    // caught (EFAULT, as the kernel answers).
    if unsafe { sys::safe_copy(buf as *mut u8, exe.as_ptr(), n) } {
        n as i64
    } else {
        -(libc::EFAULT as i64)
    }
}

/// `execve`/`execveat`: keeps `libdgad.so` in `LD_PRELOAD` so the new image
/// runs under the runtime too.
fn exec(ctx: &mut ThreadCtx, path: u64, argv: u64, envp: u64, at: Option<(u64, u64)>) -> i64 {
    let env = crate::execenv::with_preload(envp);
    let envp2 = env.as_ref().map_or(envp, |e| e.as_ptr() as u64);
    let mut a = args(ctx);
    match at {
        None => a[3] = envp2,
        Some(_) => a[4] = envp2,
    }
    let dirfd = at.map_or(libc::AT_FDCWD as i64, |(fd, _)| fd as i64);
    // The static guest re-executing itself through /proc/self/exe.
    let path = crate::static_exec::exe_alias(path).map_or(path, |e| e.as_ptr() as u64);
    // A static program runs in the host beside `libdgad.so`
    // (`static_exec`): exec that instead, with the program named in the
    // environment and the guest's own arguments. `host` keeps the strings
    // the call points at.
    let mut host = None;
    if crate::execenv::statically_linked(dirfd, path) {
        // SAFETY: the file opened, so `path` is a valid guest string.
        let given = unsafe { core::ffi::CStr::from_ptr(path as *const libc::c_char) }.to_bytes();
        let usable = dirfd == libc::AT_FDCWD as i64 || given.starts_with(b"/");
        match usable.then(|| crate::static_exec::host_for(given)).flatten() {
            Some((mut program, entry)) => {
                program.push(0);
                let env = crate::execenv::with_entry(envp2, &entry);
                a = [
                    libc::SYS_execve as u64,
                    program.as_ptr() as u64,
                    argv,
                    env.as_ptr() as u64,
                    0,
                    0,
                    0,
                ];
                host = Some((program, env));
            }
            None => crate::dgad_eprintln!(
                "{} is statically linked: LD_PRELOAD cannot bring dgad into it, so it runs natively (not translated, nothing recorded)",
                String::from_utf8_lossy(given)
            ),
        }
    }
    crate::tool::tool().process_ending(crate::tool::Ending::Exec);
    let restore = apply_deferred_address_space_limit();
    // SAFETY: as for `passthrough`, with the environment array replaced by
    // an equivalent one that keeps the preload, or the host's call, whose
    // strings `host` holds.
    let r = unsafe { dgad_guarded_syscall(a.as_ptr(), &ctx.pending_len) };
    drop(host);
    if let Some(soft) = restore {
        restore_address_space_limit(soft);
    }
    r
}
