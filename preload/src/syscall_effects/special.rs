//! The system calls whose written extent a size rule cannot say: it
//! depends on a sub-command, on a structure to read after the call, or the
//! call changes mappings (fresh pages, moved contents, shared memory).
//! Each is called by `after_syscall` with the call's arguments and result
//! (a success, or `EINTR`: each checks which).

use super::table::{Report, AIO, IO_URING};
use super::{clear, report_call, report_shared};
use crate::guest_mem::{read_mem, read_u64};
use crate::sys;
use std::sync::atomic::{AtomicU64, Ordering};

/// The `u32` at `addr` in guest memory.
pub fn read_u32(addr: u64) -> Option<u32> {
    let mut b = [0u8; 4];
    read_mem(addr, &mut b).then(|| u32::from_le_bytes(b))
}

/// The result of a successful call as a byte count; `None` after an
/// error.
fn success(r: i64) -> Option<u64> {
    u64::try_from(r).ok()
}

/// Clears `len` bytes at `ptr` unless it is null.
fn clear_at(ptr: u64, len: u64) {
    if ptr != 0 {
        clear(ptr, len);
    }
}

/// Whether `prot`/`flags` make a writable shared mapping.
fn writable_shared(prot: u64, flags: u64) -> bool {
    let kind = flags as i32 & 0xf;
    prot & libc::PROT_WRITE as u64 != 0
        && (kind == libc::MAP_SHARED || kind == libc::MAP_SHARED_VALIDATE)
}

pub fn mmap(a: &[u64; 7], r: i64) {
    let Some(addr) = success(r) else { return };
    clear(addr, a[2]);
    if writable_shared(a[3], a[4]) {
        let how = if a[4] & libc::MAP_ANONYMOUS as u64 != 0 {
            "anonymous, shared with child processes"
        } else {
            "a file or device mapped MAP_SHARED"
        };
        report_shared(addr, a[2], how);
    }
}

pub fn munmap(a: &[u64; 7], r: i64) {
    if success(r).is_some() {
        clear(a[1], a[2]);
    }
}

/// Pages the program gives back read as zeros afterwards (glibc's
/// malloc_trim, other allocators' purging).
pub fn madvise(a: &[u64; 7], r: i64) {
    let zeroes = matches!(
        a[3] as i32,
        libc::MADV_DONTNEED | libc::MADV_FREE | libc::MADV_REMOVE
    );
    if success(r).is_some() && zeroes {
        clear(a[1], a[2]);
    }
}

/// The program break last seen (0 until the first `brk`).
static BREAK: AtomicU64 = AtomicU64::new(0);

pub fn brk(_: &[u64; 7], r: i64) {
    let Some(done) = success(r) else { return };
    let old = BREAK.swap(done, Ordering::AcqRel);
    if old != 0 && old != done {
        clear(old.min(done), old.max(done) - old.min(done));
    }
}

pub fn mremap(a: &[u64; 7], r: i64) {
    let Some(new) = success(r) else { return };
    if a[2] == 0 {
        // A second mapping of the same shared pages (only shared mappings
        // can be duplicated this way); possibly writable.
        clear(new, a[3]);
        report_shared(new, a[3], "a duplicate made by mremap");
        return;
    }
    moved(a[1], a[2], new, a[3]);
}

/// `mremap` moved or resized `[old, old + old_len)` to `[new, new + new_len)`.
fn moved(old: u64, old_len: u64, new: u64, new_len: u64) {
    if new == old {
        if new_len > old_len {
            clear(old + old_len, new_len - old_len);
        } else {
            clear(old + new_len, old_len - new_len);
        }
        return;
    }
    let kept = old_len.min(new_len);
    crate::tool::tool().mem_moved(old, new, kept);
    clear(new + kept, new_len - kept);
    clear(old, old_len);
}

/// `shmat`: fresh pages of the segment's size (asked of the kernel), shared
/// and writable unless attached read-only.
pub fn shmat(a: &[u64; 7], r: i64) {
    let Some(addr) = success(r) else { return };
    let mut ds = core::mem::MaybeUninit::<libc::shmid_ds>::zeroed();
    // SAFETY: IPC_STAT writes one shmid_ds into our local.
    let stat = unsafe {
        sys::syscall3(
            libc::SYS_shmctl,
            a[1],
            libc::IPC_STAT as u64,
            ds.as_mut_ptr() as u64,
        )
    };
    // SAFETY: zeroed, and filled by the kernel when it succeeded.
    let size = unsafe { ds.assume_init() }.shm_segsz as u64;
    let len = if stat == 0 {
        size.next_multiple_of(4096)
    } else {
        4096
    };
    clear(addr, len);
    if a[3] & libc::SHM_RDONLY as u64 == 0 {
        report_shared(addr, len, "System V shared memory, shmat");
    }
}

/// The command of a System V IPC `*ctl` call, without `IPC_64`.
fn ipc_cmd(arg: u64) -> i32 {
    arg as i32 & 0xff
}

pub fn shmctl(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    let len = match ipc_cmd(a[2]) {
        // SHM_STAT, SHM_STAT_ANY.
        libc::IPC_STAT | 13 | 15 => core::mem::size_of::<libc::shmid_ds>() as u64,
        // struct shminfo: nine longs.
        libc::IPC_INFO => 72,
        // struct shm_info: an int, five longs.
        // SHM_INFO.
        14 => 48,
        _ => return,
    };
    clear_at(a[3], len);
}

pub fn msgctl(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    let len = match ipc_cmd(a[2]) {
        // MSG_STAT_ANY is 13.
        libc::IPC_STAT | libc::MSG_STAT | 13 => core::mem::size_of::<libc::msqid_ds>() as u64,
        // struct msginfo: eight ints.
        libc::IPC_INFO | libc::MSG_INFO => 32,
        _ => return,
    };
    clear_at(a[3], len);
}

pub fn semctl(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    // The fourth argument is `union semun`, passed by value: a pointer.
    let len = match ipc_cmd(a[3]) {
        libc::IPC_STAT | libc::SEM_STAT | libc::SEM_STAT_ANY => {
            core::mem::size_of::<libc::semid_ds>() as u64
        }
        // struct seminfo: ten ints.
        libc::IPC_INFO | libc::SEM_INFO => 40,
        libc::GETALL => {
            let mut ds = core::mem::MaybeUninit::<libc::semid_ds>::zeroed();
            // SAFETY: IPC_STAT writes one semid_ds into our local.
            let stat = unsafe {
                sys::syscall6(
                    libc::SYS_semctl,
                    a[1],
                    0,
                    libc::IPC_STAT as u64,
                    ds.as_mut_ptr() as u64,
                    0,
                    0,
                )
            };
            if stat != 0 {
                return;
            }
            // SAFETY: filled by the kernel.
            2 * unsafe { ds.assume_init() }.sem_nsems
        }
        _ => return,
    };
    clear_at(a[4], len);
}

/// The message type (a long), then the text.
pub fn msgrcv(a: &[u64; 7], r: i64) {
    if let Some(done) = success(r) {
        clear(a[2], 8 + done);
    }
}

pub fn mq_timedreceive(a: &[u64; 7], r: i64) {
    if let Some(done) = success(r) {
        clear(a[2], done);
        clear_at(a[4], 4);
    }
}

/// `readv`, `preadv`, `preadv2`.
pub fn readv(a: &[u64; 7], r: i64) {
    if let Some(done) = success(r) {
        clear_iovecs(a[2], a[3], done);
    }
}

/// Into this process's own iovecs (the remote ones are another process's,
/// or its own read).
pub fn process_vm_readv(a: &[u64; 7], r: i64) {
    if let Some(done) = success(r) {
        clear_iovecs(a[2], a[3], done);
    }
}

/// A write into another process cannot matter here; into this one (its
/// own pid), the remote iovecs are this process's memory.
pub fn process_vm_writev(a: &[u64; 7], r: i64) {
    if let Some(done) = success(r) {
        if a[1] as i32 == crate::init::pid() {
            clear_iovecs(a[4], a[5], done);
        }
    }
}

/// From a pipe's read end into the iovecs (to the write end: a read of
/// the program's memory).
pub fn vmsplice(a: &[u64; 7], r: i64) {
    let Some(done) = success(r) else { return };
    // SAFETY: F_GETFL reads the descriptor's flags; no memory involved.
    let flags = unsafe { sys::syscall3(libc::SYS_fcntl, a[1], libc::F_GETFL as u64, 0) };
    if flags >= 0 && flags as i32 & libc::O_ACCMODE == libc::O_RDONLY {
        clear_iovecs(a[2], a[3], done);
    }
}

pub fn recvmsg(a: &[u64; 7], r: i64) {
    if let Some(done) = success(r) {
        received(a[2], done);
    }
}

pub fn recvmmsg(a: &[u64; 7], r: i64) {
    let Some(done) = success(r) else { return };
    // struct mmsghdr: a msghdr (56 bytes), the received length (a u32),
    // padding to 64.
    for k in 0..done.min(1024) {
        let hdr = a[2] + 64 * k;
        if let Some(len) = read_u32(hdr + 56) {
            clear(hdr + 56, 4);
            received(hdr, u64::from(len));
        }
    }
}

/// The kernel writes each sent message's length.
pub fn sendmmsg(a: &[u64; 7], r: i64) {
    let Some(done) = success(r) else { return };
    for k in 0..done.min(1024) {
        clear(a[2] + 64 * k + 56, 4);
    }
}

/// A `struct msghdr` at `hdr` after receiving `bytes`: its data (through
/// its iovecs), the sender's address and the ancillary data, with the
/// lengths the kernel wrote back.
fn received(hdr: u64, bytes: u64) {
    let word = |off: u64| read_u64(hdr + off);
    if let (Some(iov), Some(n)) = (word(16), word(24)) {
        clear_iovecs(iov, n, bytes);
    }
    if let (Some(name), Some(len)) = (word(0), word(8)) {
        if name != 0 {
            clear(name, len & 0xffff_ffff);
        }
    }
    if let (Some(control), Some(len)) = (word(32), word(40)) {
        if control != 0 {
            clear(control, len);
        }
    }
    // msg_namelen, msg_controllen, msg_flags.
    clear(hdr + 8, 4);
    clear(hdr + 40, 8);
    clear(hdr + 48, 4);
}

/// Clears the first `total` bytes described by the `count` iovecs at `iov`.
fn clear_iovecs(iov: u64, count: u64, mut total: u64) {
    for k in 0..count.min(1024) {
        if total == 0 {
            break;
        }
        let (Some(base), Some(len)) = (read_u64(iov + 16 * k), read_u64(iov + 16 * k + 8)) else {
            break;
        };
        let n = len.min(total);
        clear(base, n);
        total -= n;
    }
}

/// `CLONE_PARENT_SETTID` and `CLONE_PIDFD` write an int through the
/// parent-tid pointer (in the parent; the child's own are its business).
pub fn clone(a: &[u64; 7], r: i64) {
    let flags = a[1] as i32;
    if r > 0 && flags & (libc::CLONE_PARENT_SETTID | libc::CLONE_PIDFD) != 0 {
        clear_at(a[3], 4);
    }
}

/// `struct clone_args`: flags (0), pidfd (8), child_tid (16), parent_tid
/// (24).
pub fn clone3(a: &[u64; 7], r: i64) {
    if r <= 0 || a[2] < 32 {
        return;
    }
    let Some(flags) = read_u64(a[1]) else { return };
    if flags & libc::CLONE_PIDFD as u64 != 0 {
        clear_at(read_u64(a[1] + 8).unwrap_or(0), 4);
    }
    if flags & libc::CLONE_PARENT_SETTID as u64 != 0 {
        clear_at(read_u64(a[1] + 24).unwrap_or(0), 4);
    }
}

/// `F_GETLK`/`F_OFD_GETLK` (struct flock), `F_GETOWN_EX` (struct
/// f_owner_ex), the read/write hints (a u64).
pub fn fcntl(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    let len = match a[2] as i32 {
        libc::F_GETLK | libc::F_OFD_GETLK => core::mem::size_of::<libc::flock>() as u64,
        // F_GETOWN_EX.
        16 => 8,
        // F_GET_RW_HINT, F_GET_FILE_RW_HINT.
        1035 | 1037 => 8,
        _ => return,
    };
    clear_at(a[3], len);
}

/// The requests that read the tracee into the tracer's memory; any other
/// request that succeeds and is not known to write nothing is reported.
pub fn ptrace(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    let (data, addr) = (a[4], a[3]);
    let len = match a[1] as u32 {
        // PEEKTEXT, PEEKDATA, PEEKUSER: glibc passes a word to fill.
        1..=3 => 8,
        libc::PTRACE_GETREGS => core::mem::size_of::<libc::user_regs_struct>() as u64,
        libc::PTRACE_GETFPREGS => core::mem::size_of::<libc::user_fpregs_struct>() as u64,
        libc::PTRACE_GETSIGINFO => core::mem::size_of::<libc::siginfo_t>() as u64,
        libc::PTRACE_GETEVENTMSG => 8,
        // PTRACE_GETSIGMASK: addr is the size.
        0x420a => addr,
        // PTRACE_PEEKSIGINFO: the result is the number of siginfos.
        0x4209 => 128 * r as u64,
        // PTRACE_GET_SYSCALL_INFO: addr is the size; the result the
        // kernel's size.
        0x420e => addr.min(r as u64),
        libc::PTRACE_GETREGSET => {
            // An iovec whose length the kernel set to what it wrote.
            if let (Some(base), Some(len)) = (read_u64(data), read_u64(data + 8)) {
                clear_at(base, len);
            }
            return;
        }
        // TRACEME, POKE*, CONT, KILL, SINGLESTEP, SET*, ATTACH, DETACH,
        // SYSCALL, SYSEMU*, SINGLEBLOCK, SETOPTIONS, SEIZE, INTERRUPT,
        // LISTEN, SETSIGMASK: nothing written here.
        0 | 4..=9 | 13 | 15..=17 | 24 | 31..=33 | 0x4200 | 0x4203 | 0x4205..=0x4208 | 0x420b => {
            return
        }
        _ => {
            report_call(&Report {
                key: libc::SYS_ptrace,
                name: "ptrace",
                what: "the result of a request dgad does not know",
            });
            return;
        }
    };
    clear_at(data, len);
}

/// `SYSLOG_ACTION_READ`, `_READ_ALL`, `_READ_CLEAR`: the result's bytes.
pub fn syslog(a: &[u64; 7], r: i64) {
    if let (Some(done), 2..=4) = (success(r), a[1]) {
        clear_at(a[2], done);
    }
}

/// `_LINUX_CAPABILITY_VERSION_1` fills one set of three u32, later
/// versions two.
pub fn capget(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    let v1 = read_u32(a[1]) == Some(0x1998_0330);
    clear_at(a[2], if v1 { 12 } else { 24 });
}

/// Option 2: the file system's name, a string.
pub fn sysfs(a: &[u64; 7], r: i64) {
    if success(r).is_some() && a[1] == 2 {
        let mut name = [0u8; 64];
        let n = (0..64u64)
            .find(|&k| read_mem(a[3] + k, &mut name[..1]) && name[0] == 0)
            .map_or(64, |k| k + 1);
        clear_at(a[3], n);
    }
}

/// Reading the LDT (functions 0 and 2): the result's bytes.
pub fn modify_ldt(a: &[u64; 7], r: i64) {
    if let (Some(done), 0 | 2) = (success(r), a[1]) {
        clear_at(a[2], done);
    }
}

/// `struct __sysctl_args`: oldval (16), oldlenp (24) (ENOSYS since 5.5).
pub fn sysctl(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    if let (Some(old), Some(lenp)) = (read_u64(a[1] + 16), read_u64(a[1] + 24)) {
        if lenp != 0 {
            clear_at(old, read_u64(lenp).unwrap_or(0));
            clear(lenp, 8);
        }
    }
}

/// The `PR_GET_*` options that store through their second argument.
pub fn prctl(a: &[u64; 7], r: i64) {
    let Some(done) = success(r) else { return };
    let (ptr, len) = match a[1] as i32 {
        libc::PR_GET_PDEATHSIG
        | libc::PR_GET_UNALIGN
        | libc::PR_GET_FPEMU
        | libc::PR_GET_FPEXC
        | libc::PR_GET_ENDIAN
        | libc::PR_GET_TSC
        | libc::PR_GET_CHILD_SUBREAPER => (a[2], 4),
        libc::PR_GET_NAME => (a[2], 16),
        libc::PR_GET_TID_ADDRESS => (a[2], 8),
        // PR_GET_AUXV: the result is the vector's full size.
        0x4155_5856 => (a[2], done.min(a[3])),
        // PR_SET_MM with PR_SET_MM_MAP_SIZE: a u32.
        libc::PR_SET_MM if a[2] == 15 => (a[3], 4),
        _ => return,
    };
    clear_at(ptr, len);
}

/// `ARCH_GET_FS`, `ARCH_GET_GS` (emulated), `ARCH_GET_XCOMP_SUPP`,
/// `ARCH_GET_XCOMP_PERM`, `ARCH_GET_XCOMP_GUEST_PERM`: a u64.
pub fn arch_prctl(a: &[u64; 7], r: i64) {
    if success(r).is_some() && matches!(a[1], 0x1003 | 0x1004 | 0x1021 | 0x1022 | 0x1024) {
        clear_at(a[2], 8);
    }
}

/// `quotactl(cmd, special, id, addr)`.
pub fn quotactl(a: &[u64; 7], r: i64) {
    quota(a[1], a[4], r, libc::SYS_quotactl, "quotactl");
}

/// `quotactl_fd(fd, cmd, id, addr)`.
pub fn quotactl_fd(a: &[u64; 7], r: i64) {
    quota(a[2], a[4], r, libc::SYS_quotactl_fd, "quotactl_fd");
}

fn quota(cmd: u64, addr: u64, r: i64, key: i64, name: &'static str) {
    if success(r).is_none() {
        return;
    }
    let len = match cmd as u32 >> 8 {
        // Q_GETFMT: a u32; Q_GETINFO: struct if_dqinfo; Q_GETQUOTA: struct
        // if_dqblk; Q_GETNEXTQUOTA: struct if_nextdqblk.
        0x80_0004 => 4,
        0x80_0005 => 24,
        0x80_0007 | 0x80_0009 => 72,
        // Q_SYNC, Q_QUOTAON, Q_QUOTAOFF, Q_SETINFO, Q_SETQUOTA.
        0x80_0001..=0x80_0003 | 0x80_0006 | 0x80_0008 => return,
        _ => {
            // The XFS commands and others.
            report_call(&Report {
                key,
                name,
                what: "the result of a command dgad does not know",
            });
            return;
        }
    };
    clear_at(addr, len);
}

/// The futex operations that store to the futex words: the PI ones
/// (owner's thread id into `uaddr`) and `FUTEX_WAKE_OP` (`uaddr2`).
pub fn futex(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    match a[2] & 0x7f {
        // FUTEX_WAKE_OP, FUTEX_CMP_REQUEUE_PI.
        5 | 12 => clear_at(a[5], 4),
        // FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI, FUTEX_LOCK_PI2.
        6..=8 | 13 => clear_at(a[1], 4),
        // FUTEX_WAIT_REQUEUE_PI: ends owning the PI futex.
        11 => clear_at(a[5], 4),
        _ => {}
    }
}

/// The context id; asynchronous I/O through it is reported here.
pub fn io_setup(a: &[u64; 7], r: i64) {
    if success(r).is_some() {
        clear_at(a[2], 8);
        report_call(&AIO);
    }
}

/// `struct io_uring_params` (120 bytes) comes back filled; the rings and
/// the buffers of requests are written asynchronously.
pub fn io_uring_setup(a: &[u64; 7], r: i64) {
    if success(r).is_some() {
        clear_at(a[2], 120);
        report_call(&IO_URING);
    }
}

/// The remaining time, after an interruption of a relative sleep.
pub fn clock_nanosleep(a: &[u64; 7], r: i64) {
    if r == super::EINTR && a[2] & libc::TIMER_ABSTIME as u64 == 0 {
        clear_at(a[4], 16);
    }
}

/// The mode (an int) and the node mask: `maxnode - 1` bits in longs.
pub fn get_mempolicy(a: &[u64; 7], r: i64) {
    if success(r).is_some() {
        clear_at(a[1], 4);
        clear_at(a[2], a[3].saturating_sub(1).div_ceil(64) * 8);
    }
}

/// `struct file_handle`: the handle's byte count (written back), its type,
/// the handle; the mount id is a u64 with `AT_HANDLE_MNT_ID_UNIQUE`.
pub fn name_to_handle_at(a: &[u64; 7], r: i64) {
    if success(r).is_none() {
        return;
    }
    let n = read_u32(a[3]).map_or(0, |n| u64::from(n).min(128));
    clear_at(a[3], 8 + n);
    clear_at(a[4], if a[5] & 1 != 0 { 8 } else { 4 });
}

/// `KEYCTL_DESCRIBE`, `_READ`, `_GET_SECURITY`, `_DH_COMPUTE`,
/// `_CAPABILITIES`: up to the buffer's length of the result;
/// `KEYCTL_PKEY_QUERY`: a struct; the public-key operations: the result's
/// bytes into the output buffer.
pub fn keyctl(a: &[u64; 7], r: i64) {
    let Some(done) = success(r) else { return };
    match a[1] {
        6 | 11 | 17 | 23 => clear_at(a[3], done.min(a[4])),
        31 => clear_at(a[2], done.min(a[3])),
        24 => clear_at(a[5], 56),
        25..=27 => clear_at(a[5], done),
        _ => {}
    }
}

/// `SECCOMP_GET_NOTIF_SIZES`: three u16.
pub fn seccomp(a: &[u64; 7], r: i64) {
    if success(r).is_some() && a[1] == 3 {
        clear_at(a[3], 6);
    }
}

/// A fresh mapping.
pub fn map_shadow_stack(a: &[u64; 7], r: i64) {
    if let Some(addr) = success(r) {
        clear(addr, a[2]);
    }
}

pub use super::ioctl::ioctl;
