//! Raw system calls and allocation-free output for the runtime.
//!
//! The runtime never goes through libc for system calls: libc's wrappers
//! touch `errno` (guest TLS), some take locks, and the guest may be inside
//! libc when the runtime runs. Errors come back as negative errno values.

use core::arch::{asm, global_asm};

// bool dgad_safe_copy(dst, src, len): `rep movsb` whose fault is turned into
// a `false` return by the signal handler (see `safe_copy_fixup`).
global_asm!(
    ".globl dgad_safe_copy",
    "dgad_safe_copy:",
    "    mov rcx, rdx",
    ".globl dgad_safe_copy_insn",
    "dgad_safe_copy_insn:",
    "    rep movsb",
    "    mov eax, 1",
    "    ret",
    ".globl dgad_safe_copy_fault",
    "dgad_safe_copy_fault:",
    "    xor eax, eax",
    "    ret",
);

// bool dgad_safe_load_words(addr, out, n): the n words at addr into out[],
// false (out partly written) on a fault. One load per word: a `rep movsb`
// of a few words, read back as words, stalls on store forwarding (a third
// of a client request's time in the runtime).
global_asm!(
    ".globl dgad_safe_load_words",
    "dgad_safe_load_words:",
    "    xor ecx, ecx",
    "2:  cmp rcx, rdx",
    "    jae 3f",
    ".globl dgad_safe_load_words_insn",
    "dgad_safe_load_words_insn:",
    "    mov rax, qword ptr [rdi + rcx*8]",
    "    mov qword ptr [rsi + rcx*8], rax",
    "    inc rcx",
    "    jmp 2b",
    "3:  mov eax, 1",
    "    ret",
);

// bool dgad_safe_touch(addr): whether the byte at addr can be written,
// found by writing it unchanged (`lock or` of 0: atomic, so a concurrent
// store of another thread is not undone); a fault returns false.
global_asm!(
    ".globl dgad_safe_touch",
    "dgad_safe_touch:",
    ".globl dgad_safe_touch_insn",
    "dgad_safe_touch_insn:",
    "    lock or byte ptr [rdi], 0",
    "    mov eax, 1",
    "    ret",
);

extern "C" {
    fn dgad_safe_copy(dst: *mut u8, src: *const u8, len: usize) -> bool;
    fn dgad_safe_copy_insn();
    fn dgad_safe_copy_fault();
    fn dgad_safe_touch(addr: u64) -> bool;
    fn dgad_safe_touch_insn();
    fn dgad_safe_load_words(addr: u64, out: *mut u64, n: u64) -> bool;
    fn dgad_safe_load_words_insn();
}

/// Copies `len` bytes from memory that may be unmapped; returns false (with
/// `dst` partly written) when it is.
///
/// # Safety
/// `dst` must be valid for `len` bytes.
pub unsafe fn safe_copy(dst: *mut u8, src: *const u8, len: usize) -> bool {
    // SAFETY: the caller vouches for dst; faults on src are recovered.
    unsafe { dgad_safe_copy(dst, src, len) }
}

/// Fills `out` with the words at `addr`, from memory that may be
/// unmapped (false then, `out` partly written).
///
/// # Safety
/// `addr` must not be memory whose reading has side effects (the runtime's
/// callers read application memory only).
pub unsafe fn safe_load_words(addr: u64, out: &mut [u64]) -> bool {
    // SAFETY: a fault on a load is recovered (`safe_copy_fixup`); `out` is
    // the caller's own slice.
    unsafe { dgad_safe_load_words(addr, out.as_mut_ptr(), out.len() as u64) }
}

/// The first byte of `[addr, addr + len)` (`len` ≤ one page) that cannot
/// be written, or `None`; writes nothing (each page's byte is rewritten
/// unchanged, atomically).
pub fn first_unwritable(addr: u64, len: usize) -> Option<u64> {
    let last = addr.wrapping_add(len.max(1) as u64 - 1);
    // SAFETY: faults of the probe are recovered (`safe_copy_fixup`); the
    // probe does not change the byte's value.
    if !unsafe { dgad_safe_touch(addr) } {
        return Some(addr);
    }
    // SAFETY: as above.
    if last & !4095 != addr & !4095 && !unsafe { dgad_safe_touch(last) } {
        return Some(last & !4095);
    }
    None
}

/// If a fault happened inside `safe_copy` or `first_unwritable`'s probe,
/// where to continue instead (both return false from there).
pub fn safe_copy_fixup(pc: u64) -> Option<u64> {
    (pc == dgad_safe_copy_insn as *const () as u64
        || pc == dgad_safe_touch_insn as *const () as u64
        || pc == dgad_safe_load_words_insn as *const () as u64)
        .then_some(dgad_safe_copy_fault as *const () as u64)
}

/// Performs a raw system call with up to six arguments.
///
/// # Safety
/// The caller must uphold the kernel's contract for `nr` (valid pointers,
/// no memory the runtime still uses being unmapped, …).
#[inline(always)]
pub unsafe fn syscall6(nr: i64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64, a6: u64) -> i64 {
    let ret: i64;
    // SAFETY: the `syscall` instruction clobbers rcx and r11 only; the
    // caller vouches for the arguments.
    unsafe {
        asm!("syscall",
            inlateout("rax") nr => ret,
            in("rdi") a1, in("rsi") a2, in("rdx") a3,
            in("r10") a4, in("r8") a5, in("r9") a6,
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    ret
}

/// Raw system call with fewer arguments.
///
/// # Safety
/// As for [`syscall6`].
#[inline(always)]
pub unsafe fn syscall3(nr: i64, a1: u64, a2: u64, a3: u64) -> i64 {
    // SAFETY: forwarded contract.
    unsafe { syscall6(nr, a1, a2, a3, 0, 0, 0) }
}

/// Sleeps while `word` holds `expected`, until a [`futex_wake`] on it
/// (returns at once if it no longer does; spurious returns are possible).
pub fn futex_wait(word: &core::sync::atomic::AtomicU32, expected: u32) {
    futex(word, libc::FUTEX_WAIT, expected);
}

/// Wakes up to `n` threads sleeping in [`futex_wait`] on `word`.
pub fn futex_wake(word: &core::sync::atomic::AtomicU32, n: u32) {
    futex(word, libc::FUTEX_WAKE, n);
}

/// [`futex_wait`] for at most `ms` milliseconds.
pub fn futex_wait_ms(word: &core::sync::atomic::AtomicU32, expected: u32, ms: u64) {
    let ts = libc::timespec {
        tv_sec: (ms / 1000) as i64,
        tv_nsec: ((ms % 1000) * 1_000_000) as i64,
    };
    futex_timed(word, libc::FUTEX_WAIT, expected, &ts);
}

fn futex(word: &core::sync::atomic::AtomicU32, op: i32, value: u32) {
    futex_timed(word, op, value, core::ptr::null());
}

fn futex_timed(
    word: &core::sync::atomic::AtomicU32,
    op: i32,
    value: u32,
    timeout: *const libc::timespec,
) {
    // SAFETY: FUTEX_WAIT only reads the word, which `word` keeps alive, and
    // the timeout (null or a local of the caller); FUTEX_WAKE touches no
    // memory.
    unsafe {
        syscall6(
            libc::SYS_futex,
            word.as_ptr() as u64,
            (op | libc::FUTEX_PRIVATE_FLAG) as u64,
            u64::from(value),
            timeout as u64,
            0,
            0,
        )
    };
}

/// `read(2)` into `buf`: the bytes read, or a negative errno.
pub fn read(fd: i32, buf: &mut [u8]) -> i64 {
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    unsafe {
        syscall3(
            libc::SYS_read,
            fd as u64,
            buf.as_mut_ptr() as u64,
            buf.len() as u64,
        )
    }
}

/// `pread(2)` into `buf` at `offset`: the bytes read, or a negative errno.
pub fn pread(fd: i32, buf: &mut [u8], offset: u64) -> i64 {
    // SAFETY: the kernel writes at most buf.len() bytes into buf.
    unsafe {
        syscall6(
            libc::SYS_pread64,
            fd as u64,
            buf.as_mut_ptr() as u64,
            buf.len() as u64,
            offset,
            0,
            0,
        )
    }
}

/// `close(2)` of a descriptor the runtime opened.
pub fn close(fd: i32) {
    // SAFETY: closes a descriptor of the runtime's; no memory is touched.
    unsafe { syscall3(libc::SYS_close, fd as u64, 0, 0) };
}

/// Anonymous private memory, `MAP_NORESERVE`: pages appear on first touch.
/// Returns `None` when the kernel refuses.
pub fn map_anon(len: usize, prot: i32, hint: u64, fixed_noreplace: bool) -> Option<u64> {
    let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    if fixed_noreplace {
        flags |= libc::MAP_FIXED_NOREPLACE;
    }
    // SAFETY: a fresh anonymous mapping cannot alias runtime memory; with
    // MAP_FIXED_NOREPLACE the kernel refuses instead of replacing.
    let r = unsafe {
        syscall6(
            libc::SYS_mmap,
            hint,
            len as u64,
            prot as u64,
            flags as u64,
            u64::MAX,
            0,
        )
    };
    if r < 0 || (fixed_noreplace && r as u64 != hint) {
        if r >= 0 {
            // SAFETY: we just created this mapping and nobody uses it.
            unsafe { syscall3(libc::SYS_munmap, r as u64, len as u64, 0) };
        }
        return None;
    }
    Some(r as u64)
}

/// A new anonymous shared-memory file (`memfd_create`, close-on-exec);
/// `name` is NUL-terminated.
pub fn memfd_create(name: &[u8]) -> Result<i32, i64> {
    // SAFETY: name is NUL-terminated; the call touches no other memory.
    let r = unsafe {
        syscall3(
            libc::SYS_memfd_create,
            name.as_ptr() as u64,
            libc::MFD_CLOEXEC as u64,
            0,
        )
    };
    if r < 0 {
        Err(-r)
    } else {
        Ok(r as i32)
    }
}

/// `ftruncate(2)` of a descriptor the runtime owns.
pub fn ftruncate(fd: i32, len: u64) -> Result<(), i64> {
    // SAFETY: changes the size of our own file; no memory is touched.
    let r = unsafe { syscall3(libc::SYS_ftruncate, fd as u64, len, 0) };
    if r < 0 {
        Err(-r)
    } else {
        Ok(())
    }
}

/// `len` bytes of file `fd` mapped shared, readable and writable.
pub fn map_shared(fd: i32, len: usize) -> Option<u64> {
    // SAFETY: a new mapping at an address the kernel chooses cannot alias
    // runtime memory.
    let r = unsafe {
        syscall6(
            libc::SYS_mmap,
            0,
            len as u64,
            (libc::PROT_READ | libc::PROT_WRITE) as u64,
            libc::MAP_SHARED as u64,
            fd as u64,
            0,
        )
    };
    (r >= 0).then_some(r as u64)
}

/// Faults in `[addr, addr + len)` for reading at once
/// (`MADV_POPULATE_READ`; a hint: ignored where the kernel lacks it).
pub fn populate_read(addr: u64, len: usize) {
    // SAFETY: populating changes no contents and no access.
    unsafe {
        syscall3(
            libc::SYS_madvise,
            addr,
            len as u64,
            22, /* MADV_POPULATE_READ */
        )
    };
}

/// Asks for transparent huge pages on `[addr, addr + len)` (a hint: the
/// kernel may ignore it, e.g. with THP disabled).
pub fn advise_huge_pages(addr: u64, len: usize) {
    // SAFETY: madvise with MADV_HUGEPAGE changes no contents and no access.
    unsafe {
        syscall3(
            libc::SYS_madvise,
            addr,
            len as u64,
            libc::MADV_HUGEPAGE as u64,
        )
    };
}

/// Writes all of `buf` to file descriptor `fd`, ignoring errors (used for
/// diagnostics, where there is nobody left to report an error to).
pub fn write_all(fd: i32, mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: buf is a valid readable slice.
        let r = unsafe {
            syscall3(
                libc::SYS_write,
                fd as u64,
                buf.as_ptr() as u64,
                buf.len() as u64,
            )
        };
        if r == -(libc::EINTR as i64) {
            continue;
        }
        if r <= 0 {
            return;
        }
        buf = &buf[r as usize..];
    }
}

/// Writes all of `buf` to `fd` at `offset`, retrying interrupted writes.
/// On failure returns the errno (`EIO` for a write of nothing) and the
/// offset reached. Takes no lock and allocates nothing.
pub fn pwrite_all(fd: i32, mut buf: &[u8], mut offset: u64) -> Result<(), (i64, u64)> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid readable slice.
        let r = unsafe {
            syscall6(
                libc::SYS_pwrite64,
                fd as u64,
                buf.as_ptr() as u64,
                buf.len() as u64,
                offset,
                0,
                0,
            )
        };
        if r == -(libc::EINTR as i64) {
            continue;
        }
        if r <= 0 {
            return Err((if r == 0 { libc::EIO as i64 } else { -r }, offset));
        }
        buf = &buf[r as usize..];
        offset += r as u64;
    }
    Ok(())
}

/// A fixed-capacity text buffer for formatting without allocation.
pub struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBuf<N> {
    /// An empty buffer.
    pub const fn new() -> Self {
        StackBuf {
            buf: [0; N],
            len: 0,
        }
    }

    /// The text so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> Default for StackBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> core::fmt::Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(N - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// `eprintln!` for the runtime: formats on the stack, one `write` to fd 2,
/// each line prefixed with `dgad: `. Never touches the client's stdout.
#[macro_export]
macro_rules! dgad_eprintln {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let mut b = $crate::sys::StackBuf::<1024>::new();
        let _ = write!(b, "dgad: ");
        let _ = write!(b, $($arg)*);
        let _ = b.write_str("\n");
        $crate::sys::write_all(2, b.as_bytes());
    }};
}

/// The calling process's id (the thread group's).
pub fn getpid() -> i32 {
    // SAFETY: getpid has no arguments and cannot fail.
    unsafe { syscall3(libc::SYS_getpid, 0, 0, 0) as i32 }
}

/// The effective user id.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { syscall3(libc::SYS_geteuid, 0, 0, 0) as u32 }
}

/// The calling thread's kernel thread id.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { syscall3(libc::SYS_gettid, 0, 0, 0) as i32 }
}

/// Whether the page holding `addr` is mapped (with any protection).
pub fn is_mapped(addr: u64) -> bool {
    let mut vec = 0u8;
    // SAFETY: mincore writes one byte for the one page asked about into
    // our local; it fails with ENOMEM where nothing is mapped.
    let r = unsafe {
        syscall3(
            libc::SYS_mincore,
            addr & !4095,
            4096,
            &mut vec as *mut u8 as u64,
        )
    };
    r == 0
}

/// Gives up the CPU for a moment.
pub fn sched_yield() {
    // SAFETY: sched_yield has no arguments and touches no memory.
    unsafe { syscall3(libc::SYS_sched_yield, 0, 0, 0) };
}

/// Sends `sig` to the calling thread.
pub fn signal_self(sig: i32) {
    // SAFETY: tgkill only queues a signal; it touches no memory of ours.
    unsafe {
        syscall3(
            libc::SYS_tgkill,
            crate::init::pid() as u64,
            gettid() as u64,
            sig as u64,
        )
    };
}

/// Ends the whole process now with `code`, without running anything else.
pub fn exit_group(code: i32) -> ! {
    // SAFETY: exit_group does not return.
    unsafe { syscall3(libc::SYS_exit_group, code as u64, 0, 0) };
    unreachable!("exit_group returned")
}

/// This process's `RLIMIT_AS` (soft, hard), or the error.
pub fn address_space_limit() -> Result<libc::rlimit, i64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we own.
    let r = unsafe {
        syscall3(
            libc::SYS_getrlimit,
            libc::RLIMIT_AS as u64,
            &mut limit as *mut libc::rlimit as u64,
            0,
        )
    };
    if r < 0 {
        Err(r)
    } else {
        Ok(limit)
    }
}

/// Sets this process's `RLIMIT_AS`; 0 or the error.
pub fn set_address_space_limit(limit: &libc::rlimit) -> i64 {
    // SAFETY: setrlimit reads the struct we own.
    unsafe {
        syscall3(
            libc::SYS_setrlimit,
            libc::RLIMIT_AS as u64,
            limit as *const libc::rlimit as u64,
            0,
        )
    }
}

/// Copies `len` bytes between `local`, this runtime's buffer, and the
/// guest's memory at `remote` through the kernel (`process_vm_writev` when
/// `write`, else `process_vm_readv`): an unmapped or protected target is an
/// error, never a fault. Returns the bytes copied or a negative errno. The
/// call names the calling thread, not the process: once the main thread has
/// left with `exit`, the process id no longer has an address space.
///
/// # Safety
/// `local..local + len` must be this runtime's memory, writable when
/// reading from the guest.
pub unsafe fn process_vm(write: bool, local: *mut u8, remote: u64, len: usize) -> i64 {
    let local = libc::iovec {
        iov_base: local.cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: remote as *mut libc::c_void,
        iov_len: len,
    };
    let nr = if write {
        libc::SYS_process_vm_writev
    } else {
        libc::SYS_process_vm_readv
    };
    // SAFETY: the kernel copies between the two ranges, checking the
    // remote one; the caller vouches for the local one.
    unsafe {
        syscall6(
            nr,
            gettid() as u64,
            &local as *const libc::iovec as u64,
            1,
            &remote as *const libc::iovec as u64,
            1,
            0,
        )
    }
}

/// Starts `main` on a task of the runtime's own, made by `clone` with
/// `flags` (a thread of the group, or a process sharing our memory), on
/// a fresh stack of `stack_bytes`, with every signal blocked, so that the
/// guest's signals go to the guest's threads. Returns the child's id, or a
/// negative errno (the stack is unmapped again then).
pub fn spawn_runtime_task(flags: u64, stack_bytes: usize, main: extern "C" fn() -> !) -> i64 {
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let Some(stack) = map_anon(stack_bytes, rw, 0, false) else {
        return -(libc::ENOMEM as i64);
    };
    let top = stack + stack_bytes as u64 - 64;
    let all: u64 = !0;
    let mut old: u64 = 0;
    let r: i64;
    // SAFETY: the mask words are ours; the child starts on its own fresh
    // stack (16-aligned at `top`) with the parent's registers, `main` among
    // them, and never returns from it, so it never runs the code after the
    // asm block on the parent's frame.
    unsafe {
        syscall6(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK as u64,
            &all as *const u64 as u64,
            &mut old as *mut u64 as u64,
            8,
            0,
            0,
        );
        core::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "call r9",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone => r,
            in("rdi") flags,
            in("rsi") top,
            in("rdx") 0u64,
            in("r10") 0u64,
            in("r8") 0u64,
            in("r9") main as usize as u64,
            lateout("rcx") _,
            lateout("r11") _,
        );
        syscall6(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK as u64,
            &old as *const u64 as u64,
            0,
            8,
            0,
            0,
        );
    }
    if r < 0 {
        // SAFETY: the stack was never used.
        unsafe { syscall3(libc::SYS_munmap, stack, stack_bytes as u64, 0) };
    }
    r
}

/// glibc's messages for errno 0 to 133 (Linux, x86-64), as
/// `strerror` gives them; "" where it has none. Kept here so that
/// [`errno_text`] calls no libc function: it runs on the light path of
/// client requests (`Tool::light_request`), where glibc's string
/// functions would overwrite the program's vector registers.
const ERRNO_TEXT: [&str; 134] = [
    "Success",
    "Operation not permitted",
    "No such file or directory",
    "No such process",
    "Interrupted system call",
    "Input/output error",
    "No such device or address",
    "Argument list too long",
    "Exec format error",
    "Bad file descriptor",
    "No child processes",
    "Resource temporarily unavailable",
    "Cannot allocate memory",
    "Permission denied",
    "Bad address",
    "Block device required",
    "Device or resource busy",
    "File exists",
    "Invalid cross-device link",
    "No such device",
    "Not a directory",
    "Is a directory",
    "Invalid argument",
    "Too many open files in system",
    "Too many open files",
    "Inappropriate ioctl for device",
    "Text file busy",
    "File too large",
    "No space left on device",
    "Illegal seek",
    "Read-only file system",
    "Too many links",
    "Broken pipe",
    "Numerical argument out of domain",
    "Numerical result out of range",
    "Resource deadlock avoided",
    "File name too long",
    "No locks available",
    "Function not implemented",
    "Directory not empty",
    "Too many levels of symbolic links",
    "",
    "No message of desired type",
    "Identifier removed",
    "Channel number out of range",
    "Level 2 not synchronized",
    "Level 3 halted",
    "Level 3 reset",
    "Link number out of range",
    "Protocol driver not attached",
    "No CSI structure available",
    "Level 2 halted",
    "Invalid exchange",
    "Invalid request descriptor",
    "Exchange full",
    "No anode",
    "Invalid request code",
    "Invalid slot",
    "",
    "Bad font file format",
    "Device not a stream",
    "No data available",
    "Timer expired",
    "Out of streams resources",
    "Machine is not on the network",
    "Package not installed",
    "Object is remote",
    "Link has been severed",
    "Advertise error",
    "Srmount error",
    "Communication error on send",
    "Protocol error",
    "Multihop attempted",
    "RFS specific error",
    "Bad message",
    "Value too large for defined data type",
    "Name not unique on network",
    "File descriptor in bad state",
    "Remote address changed",
    "Can not access a needed shared library",
    "Accessing a corrupted shared library",
    ".lib section in a.out corrupted",
    "Attempting to link in too many shared libraries",
    "Cannot exec a shared library directly",
    "Invalid or incomplete multibyte or wide character",
    "Interrupted system call should be restarted",
    "Streams pipe error",
    "Too many users",
    "Socket operation on non-socket",
    "Destination address required",
    "Message too long",
    "Protocol wrong type for socket",
    "Protocol not available",
    "Protocol not supported",
    "Socket type not supported",
    "Operation not supported",
    "Protocol family not supported",
    "Address family not supported by protocol",
    "Address already in use",
    "Cannot assign requested address",
    "Network is down",
    "Network is unreachable",
    "Network dropped connection on reset",
    "Software caused connection abort",
    "Connection reset by peer",
    "No buffer space available",
    "Transport endpoint is already connected",
    "Transport endpoint is not connected",
    "Cannot send after transport endpoint shutdown",
    "Too many references: cannot splice",
    "Connection timed out",
    "Connection refused",
    "Host is down",
    "No route to host",
    "Operation already in progress",
    "Operation now in progress",
    "Stale file handle",
    "Structure needs cleaning",
    "Not a XENIX named type file",
    "No XENIX semaphores available",
    "Is a named type file",
    "Remote I/O error",
    "Disk quota exceeded",
    "No medium found",
    "Wrong medium type",
    "Operation canceled",
    "Required key not available",
    "Key has expired",
    "Key has been revoked",
    "Key was rejected by service",
    "Owner died",
    "State not recoverable",
    "Operation not possible due to RF-kill",
    "Memory page has hardware error",
];

/// A short description of an errno value, as Rust's standard library
/// gives it (`No such file or directory (os error 2)`), without libc.
pub fn errno_text(e: i64) -> String {
    match usize::try_from(e).ok().and_then(|i| ERRNO_TEXT.get(i)) {
        Some(text) if !text.is_empty() => format!("{text} (os error {e})"),
        _ => format!("Unknown error {e} (os error {e})"),
    }
}

#[cfg(test)]
mod tests {
    /// The table says what the standard library (through glibc's
    /// `strerror_r`) says, for every errno Linux has and a few beyond.
    #[test]
    fn errno_text_is_the_standard_librarys() {
        for e in 0..140i64 {
            let std_text = std::io::Error::from_raw_os_error(e as i32).to_string();
            assert_eq!(super::errno_text(e), std_text, "errno {e}");
        }
    }
}
