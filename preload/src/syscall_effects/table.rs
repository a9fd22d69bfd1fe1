//! What every x86-64 Linux system call writes into the calling process's
//! memory, as data: one entry per system call number (0 to 462), built into
//! an array indexed by number. Sizes follow the kernel's structures for
//! x86-64 (and Valgrind's `syswrap-linux.c` post-conditions, which say the
//! same); `libc` types are named where glibc's layout is the kernel's.

use super::special as sp;
use core::mem::size_of;

/// What one system call does to program memory.
#[derive(Clone, Copy)]
pub enum Effect {
    /// Writes no program memory (or does not exist on x86-64: `ENOSYS`).
    Nothing,
    /// Writes these outputs, each one pointer argument and a size rule.
    Writes(&'static [Out]),
    /// Writes memory whose extent depends on the arguments in ways a size
    /// rule cannot say (a sub-command, a structure to read): worked out by
    /// a function, called after a call that succeeded or failed with
    /// `EINTR` (it checks which).
    Custom(fn(&[u64; 7], i64)),
    /// May write program memory whose extent dgad cannot know, now or
    /// later (asynchronously): reported once per process.
    Unknown(&'static Report),
    /// Not classified: a hole in the table (the unit test finds none).
    Unclassified,
}

/// A report of a writer dgad cannot follow.
pub struct Report {
    /// The number that keys the report: calls that set up the same writer
    /// share one (`io_submit` is reported as `io_setup`).
    pub key: i64,
    /// The system call named in the report.
    pub name: &'static str,
    /// What may hold stale derivative indices afterwards.
    pub what: &'static str,
}

/// A buffer the kernel fills: the pointer is argument `arg` (1-based, as
/// `a[arg]`); a null pointer is skipped.
#[derive(Clone, Copy)]
pub struct Out {
    /// Index of the pointer argument.
    pub arg: u8,
    /// How many bytes the kernel wrote there.
    pub size: Size,
    /// After which results.
    pub when: When,
}

/// A size rule, evaluated after the call.
#[derive(Clone, Copy)]
pub enum Size {
    /// A fixed number of bytes.
    Bytes(u64),
    /// The call's result, in bytes.
    Returned,
    /// The call's result times an element size (records returned).
    ReturnedTimes(u64),
    /// The call's result, at most argument `n`, times an element size:
    /// calls that, given a size of 0, return the size needed and write
    /// nothing.
    ReturnedWithin(u8, u64),
    /// The value of argument `n`, in bytes.
    Arg(u8),
    /// The value of argument `n` times an element size.
    ArgTimes(u8, u64),
    /// The `u32` the kernel stored at pointer argument `n` (a value-result
    /// length such as a `socklen_t`).
    LenAt(u8),
    /// A bit set of argument `n` bits, in whole longs (`select`'s fd sets).
    BitsIn(u8),
    /// One byte per page of argument `n` bytes (`mincore`).
    PagesIn(u8),
}

/// After which results an output has been written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Only after success.
    Success,
    /// After success and after an interruption by a signal (`EINTR`).
    AlsoInterrupted,
    /// Only after an interruption (the remaining time of a sleep).
    Interrupted,
}

const fn out(arg: u8, size: Size) -> Out {
    Out {
        arg,
        size,
        when: When::Success,
    }
}

const fn out_when(arg: u8, size: Size, when: When) -> Out {
    Out { arg, size, when }
}

const fn bytes<T>() -> Size {
    Size::Bytes(size_of::<T>() as u64)
}

/// The highest system call number the table classifies.
pub const LAST: usize = 462;

use Effect::{Custom, Nothing, Unknown, Writes};
use Size::{Arg, ArgTimes, BitsIn, Bytes, LenAt, PagesIn, Returned, ReturnedTimes, ReturnedWithin};

/// The kernel's `struct stat`.
const STAT: Size = bytes::<libc::stat>();
const RUSAGE: Size = bytes::<libc::rusage>();
const TIMESPEC: Size = bytes::<libc::timespec>();
const TIMEVAL: Size = bytes::<libc::timeval>();
const ITIMER: Size = bytes::<libc::itimerspec>();
const SIGINFO: Size = bytes::<libc::siginfo_t>();
const RLIMIT: Size = bytes::<libc::rlimit>();
const STATFS: Size = bytes::<libc::statfs>();
const TIMEX: Size = bytes::<libc::timex>();
/// `struct epoll_event` (packed: 12 bytes).
const EPOLL_EVENT: u64 = size_of::<libc::epoll_event>() as u64;
/// `struct io_event`: data, obj, res, res2.
const IO_EVENT: u64 = 32;
/// `struct sockaddr` with its value-result length after it.
const ADDRESS: [Out; 2] = [out(2, LenAt(3)), out(3, Bytes(4))];
const SOCKET_ADDRESS_OUT: &[Out] = &ADDRESS;

/// Numbers `libc` does not name (yet).
mod nr {
    pub const CREATE_MODULE: i64 = 174;
    pub const GET_KERNEL_SYMS: i64 = 177;
    pub const QUERY_MODULE: i64 = 178;
    pub const IO_PGETEVENTS: i64 = 333;
    pub const CACHESTAT: i64 = 451;
    pub const MAP_SHADOW_STACK: i64 = 453;
    pub const FUTEX_WAKE: i64 = 454;
    pub const FUTEX_WAIT: i64 = 455;
    pub const FUTEX_REQUEUE: i64 = 456;
    pub const STATMOUNT: i64 = 457;
    pub const LISTMOUNT: i64 = 458;
    pub const LSM_GET_SELF_ATTR: i64 = 459;
    pub const LSM_SET_SELF_ATTR: i64 = 460;
    pub const LSM_LIST_MODULES: i64 = 461;
}

/// Numbers between `rseq` (334) and `pidfd_send_signal` (424) that x86-64
/// never assigned (the 32-bit time64 calls of other architectures):
/// `ENOSYS`.
const UNASSIGNED: (usize, usize) = (335, 423);

/// Asynchronous I/O (`io_setup`, `io_submit`).
pub const AIO: Report = Report {
    key: libc::SYS_io_setup,
    name: "io_setup",
    what: "the buffers of asynchronous I/O requests, which the kernel fills later",
};
/// `io_uring` (set-up, submission, registration).
pub const IO_URING: Report = Report {
    key: libc::SYS_io_uring_setup,
    name: "io_uring_setup",
    what: "the buffers of io_uring requests, which the kernel fills asynchronously",
};

/// Every classified system call, by number. The comment on a `Nothing`
/// says why where it is not obvious.
const ENTRIES: &[(i64, Effect)] = &[
    (libc::SYS_read, Writes(&[out(2, Returned)])),
    (libc::SYS_write, Nothing),
    (libc::SYS_open, Nothing),
    (libc::SYS_close, Nothing),
    (libc::SYS_stat, Writes(&[out(2, STAT)])),
    (libc::SYS_fstat, Writes(&[out(2, STAT)])),
    (libc::SYS_lstat, Writes(&[out(2, STAT)])),
    // The whole pollfd array (only `revents` changes; the rest holds
    // integers the program stored).
    (
        libc::SYS_poll,
        Writes(&[out_when(1, ArgTimes(2, 8), When::AlsoInterrupted)]),
    ),
    (libc::SYS_lseek, Nothing),
    (libc::SYS_mmap, Custom(sp::mmap)),
    // A shared mapping made writable later is not reported (see the docs).
    (libc::SYS_mprotect, Nothing),
    (libc::SYS_munmap, Custom(sp::munmap)),
    (libc::SYS_brk, Custom(sp::brk)),
    // Emulated (`signals::sigaction` writes the old action).
    (libc::SYS_rt_sigaction, Writes(&[out(3, Bytes(32))])),
    (libc::SYS_rt_sigprocmask, Writes(&[out(3, Arg(4))])),
    // Emulated; never returns to the call site.
    (libc::SYS_rt_sigreturn, Nothing),
    (libc::SYS_ioctl, Custom(sp::ioctl)),
    (libc::SYS_pread64, Writes(&[out(2, Returned)])),
    (libc::SYS_pwrite64, Nothing),
    (libc::SYS_readv, Custom(sp::readv)),
    (libc::SYS_writev, Nothing),
    (libc::SYS_access, Nothing),
    (libc::SYS_pipe, Writes(&[out(1, Bytes(8))])),
    (
        libc::SYS_select,
        Writes(&[
            out(2, BitsIn(1)),
            out(3, BitsIn(1)),
            out(4, BitsIn(1)),
            out_when(5, TIMEVAL, When::AlsoInterrupted),
        ]),
    ),
    (libc::SYS_sched_yield, Nothing),
    (libc::SYS_mremap, Custom(sp::mremap)),
    (libc::SYS_msync, Nothing),
    (libc::SYS_mincore, Writes(&[out(3, PagesIn(2))])),
    (libc::SYS_madvise, Custom(sp::madvise)),
    (libc::SYS_shmget, Nothing),
    (libc::SYS_shmat, Custom(sp::shmat)),
    (libc::SYS_shmctl, Custom(sp::shmctl)),
    (libc::SYS_dup, Nothing),
    (libc::SYS_dup2, Nothing),
    (libc::SYS_pause, Nothing),
    (
        libc::SYS_nanosleep,
        Writes(&[out_when(2, TIMESPEC, When::Interrupted)]),
    ),
    (
        libc::SYS_getitimer,
        Writes(&[out(2, bytes::<libc::itimerval>())]),
    ),
    (libc::SYS_alarm, Nothing),
    (
        libc::SYS_setitimer,
        Writes(&[out(3, bytes::<libc::itimerval>())]),
    ),
    (libc::SYS_getpid, Nothing),
    // The file offset, advanced.
    (libc::SYS_sendfile, Writes(&[out(3, Bytes(8))])),
    (libc::SYS_socket, Nothing),
    (libc::SYS_connect, Nothing),
    (libc::SYS_accept, Writes(SOCKET_ADDRESS_OUT)),
    (libc::SYS_sendto, Nothing),
    (
        libc::SYS_recvfrom,
        Writes(&[out(2, Returned), out(5, LenAt(6)), out(6, Bytes(4))]),
    ),
    (libc::SYS_sendmsg, Nothing),
    (libc::SYS_recvmsg, Custom(sp::recvmsg)),
    (libc::SYS_shutdown, Nothing),
    (libc::SYS_bind, Nothing),
    (libc::SYS_listen, Nothing),
    (libc::SYS_getsockname, Writes(SOCKET_ADDRESS_OUT)),
    (libc::SYS_getpeername, Writes(SOCKET_ADDRESS_OUT)),
    (libc::SYS_socketpair, Writes(&[out(4, Bytes(8))])),
    (libc::SYS_setsockopt, Nothing),
    (
        libc::SYS_getsockopt,
        Writes(&[out(4, LenAt(5)), out(5, Bytes(4))]),
    ),
    // Emulated for threads; the parent's thread id or pidfd.
    (libc::SYS_clone, Custom(sp::clone)),
    (libc::SYS_fork, Nothing),
    (libc::SYS_vfork, Nothing),
    // Emulated; returns only on failure.
    (libc::SYS_execve, Nothing),
    (libc::SYS_exit, Nothing),
    (libc::SYS_wait4, Writes(&[out(2, Bytes(4)), out(4, RUSAGE)])),
    (libc::SYS_kill, Nothing),
    (libc::SYS_uname, Writes(&[out(1, bytes::<libc::utsname>())])),
    (libc::SYS_semget, Nothing),
    (libc::SYS_semop, Nothing),
    (libc::SYS_semctl, Custom(sp::semctl)),
    (libc::SYS_shmdt, Nothing),
    (libc::SYS_msgget, Nothing),
    (libc::SYS_msgsnd, Nothing),
    (libc::SYS_msgrcv, Custom(sp::msgrcv)),
    (libc::SYS_msgctl, Custom(sp::msgctl)),
    (libc::SYS_fcntl, Custom(sp::fcntl)),
    (libc::SYS_flock, Nothing),
    (libc::SYS_fsync, Nothing),
    (libc::SYS_fdatasync, Nothing),
    (libc::SYS_truncate, Nothing),
    (libc::SYS_ftruncate, Nothing),
    (libc::SYS_getdents, Writes(&[out(2, Returned)])),
    // The result is the length with the terminating NUL.
    (libc::SYS_getcwd, Writes(&[out(1, Returned)])),
    (libc::SYS_chdir, Nothing),
    (libc::SYS_fchdir, Nothing),
    (libc::SYS_rename, Nothing),
    (libc::SYS_mkdir, Nothing),
    (libc::SYS_rmdir, Nothing),
    (libc::SYS_creat, Nothing),
    (libc::SYS_link, Nothing),
    (libc::SYS_unlink, Nothing),
    (libc::SYS_symlink, Nothing),
    (libc::SYS_readlink, Writes(&[out(2, Returned)])),
    (libc::SYS_chmod, Nothing),
    (libc::SYS_fchmod, Nothing),
    (libc::SYS_chown, Nothing),
    (libc::SYS_fchown, Nothing),
    (libc::SYS_lchown, Nothing),
    (libc::SYS_umask, Nothing),
    (
        libc::SYS_gettimeofday,
        Writes(&[out(1, TIMEVAL), out(2, bytes::<libc::timezone>())]),
    ),
    // Emulated for RLIMIT_AS (the old limit written by the runtime).
    (libc::SYS_getrlimit, Writes(&[out(2, RLIMIT)])),
    (libc::SYS_getrusage, Writes(&[out(2, RUSAGE)])),
    (
        libc::SYS_sysinfo,
        Writes(&[out(1, bytes::<libc::sysinfo>())]),
    ),
    (libc::SYS_times, Writes(&[out(1, bytes::<libc::tms>())])),
    (libc::SYS_ptrace, Custom(sp::ptrace)),
    (libc::SYS_getuid, Nothing),
    (libc::SYS_syslog, Custom(sp::syslog)),
    (libc::SYS_getgid, Nothing),
    (libc::SYS_setuid, Nothing),
    (libc::SYS_setgid, Nothing),
    (libc::SYS_geteuid, Nothing),
    (libc::SYS_getegid, Nothing),
    (libc::SYS_setpgid, Nothing),
    (libc::SYS_getppid, Nothing),
    (libc::SYS_getpgrp, Nothing),
    (libc::SYS_setsid, Nothing),
    (libc::SYS_setreuid, Nothing),
    (libc::SYS_setregid, Nothing),
    (libc::SYS_getgroups, Writes(&[out(2, ReturnedWithin(1, 4))])),
    (libc::SYS_setgroups, Nothing),
    (libc::SYS_setresuid, Nothing),
    (
        libc::SYS_getresuid,
        Writes(&[out(1, Bytes(4)), out(2, Bytes(4)), out(3, Bytes(4))]),
    ),
    (libc::SYS_setresgid, Nothing),
    (
        libc::SYS_getresgid,
        Writes(&[out(1, Bytes(4)), out(2, Bytes(4)), out(3, Bytes(4))]),
    ),
    (libc::SYS_getpgid, Nothing),
    (libc::SYS_setfsuid, Nothing),
    (libc::SYS_setfsgid, Nothing),
    (libc::SYS_getsid, Nothing),
    (libc::SYS_capget, Custom(sp::capget)),
    (libc::SYS_capset, Nothing),
    (libc::SYS_rt_sigpending, Writes(&[out(1, Arg(2))])),
    (libc::SYS_rt_sigtimedwait, Writes(&[out(2, SIGINFO)])),
    (libc::SYS_rt_sigqueueinfo, Nothing),
    (libc::SYS_rt_sigsuspend, Nothing),
    // Emulated (`signals::sigaltstack` writes the old stack).
    (
        libc::SYS_sigaltstack,
        Writes(&[out(2, bytes::<libc::stack_t>())]),
    ),
    (libc::SYS_utime, Nothing),
    (libc::SYS_mknod, Nothing),
    (libc::SYS_uselib, Nothing),
    (libc::SYS_personality, Nothing),
    // struct ustat (ENOSYS on most kernels).
    (libc::SYS_ustat, Writes(&[out(2, Bytes(32))])),
    (libc::SYS_statfs, Writes(&[out(2, STATFS)])),
    (libc::SYS_fstatfs, Writes(&[out(2, STATFS)])),
    (libc::SYS_sysfs, Custom(sp::sysfs)),
    (libc::SYS_getpriority, Nothing),
    (libc::SYS_setpriority, Nothing),
    (libc::SYS_sched_setparam, Nothing),
    (
        libc::SYS_sched_getparam,
        Writes(&[out(2, bytes::<libc::sched_param>())]),
    ),
    (libc::SYS_sched_setscheduler, Nothing),
    (libc::SYS_sched_getscheduler, Nothing),
    (libc::SYS_sched_get_priority_max, Nothing),
    (libc::SYS_sched_get_priority_min, Nothing),
    (libc::SYS_sched_rr_get_interval, Writes(&[out(2, TIMESPEC)])),
    (libc::SYS_mlock, Nothing),
    (libc::SYS_munlock, Nothing),
    (libc::SYS_mlockall, Nothing),
    (libc::SYS_munlockall, Nothing),
    (libc::SYS_vhangup, Nothing),
    (libc::SYS_modify_ldt, Custom(sp::modify_ldt)),
    (libc::SYS_pivot_root, Nothing),
    (libc::SYS__sysctl, Custom(sp::sysctl)),
    (libc::SYS_prctl, Custom(sp::prctl)),
    // Partly emulated (%gs).
    (libc::SYS_arch_prctl, Custom(sp::arch_prctl)),
    (libc::SYS_adjtimex, Writes(&[out(1, TIMEX)])),
    // Emulated for RLIMIT_AS.
    (libc::SYS_setrlimit, Nothing),
    (libc::SYS_chroot, Nothing),
    (libc::SYS_sync, Nothing),
    (libc::SYS_acct, Nothing),
    (libc::SYS_settimeofday, Nothing),
    (libc::SYS_mount, Nothing),
    (libc::SYS_umount2, Nothing),
    (libc::SYS_swapon, Nothing),
    (libc::SYS_swapoff, Nothing),
    (libc::SYS_reboot, Nothing),
    (libc::SYS_sethostname, Nothing),
    (libc::SYS_setdomainname, Nothing),
    (libc::SYS_iopl, Nothing),
    (libc::SYS_ioperm, Nothing),
    // Removed from the kernel long ago: ENOSYS.
    (nr::CREATE_MODULE, Nothing),
    (libc::SYS_init_module, Nothing),
    (libc::SYS_delete_module, Nothing),
    (nr::GET_KERNEL_SYMS, Nothing),
    (nr::QUERY_MODULE, Nothing),
    (libc::SYS_quotactl, Custom(sp::quotactl)),
    // ENOSYS (never implemented or removed).
    (libc::SYS_nfsservctl, Nothing),
    (libc::SYS_getpmsg, Nothing),
    (libc::SYS_putpmsg, Nothing),
    (libc::SYS_afs_syscall, Nothing),
    (libc::SYS_tuxcall, Nothing),
    (libc::SYS_security, Nothing),
    (libc::SYS_gettid, Nothing),
    (libc::SYS_readahead, Nothing),
    (libc::SYS_setxattr, Nothing),
    (libc::SYS_lsetxattr, Nothing),
    (libc::SYS_fsetxattr, Nothing),
    (libc::SYS_getxattr, Writes(&[out(3, ReturnedWithin(4, 1))])),
    (libc::SYS_lgetxattr, Writes(&[out(3, ReturnedWithin(4, 1))])),
    (libc::SYS_fgetxattr, Writes(&[out(3, ReturnedWithin(4, 1))])),
    (libc::SYS_listxattr, Writes(&[out(2, ReturnedWithin(3, 1))])),
    (
        libc::SYS_llistxattr,
        Writes(&[out(2, ReturnedWithin(3, 1))]),
    ),
    (
        libc::SYS_flistxattr,
        Writes(&[out(2, ReturnedWithin(3, 1))]),
    ),
    (libc::SYS_removexattr, Nothing),
    (libc::SYS_lremovexattr, Nothing),
    (libc::SYS_fremovexattr, Nothing),
    (libc::SYS_tkill, Nothing),
    (libc::SYS_time, Writes(&[out(1, Bytes(8))])),
    (libc::SYS_futex, Custom(sp::futex)),
    (libc::SYS_sched_setaffinity, Nothing),
    // The result is the size of the kernel's mask, in bytes.
    (libc::SYS_sched_getaffinity, Writes(&[out(3, Returned)])),
    // The entry number, written back into the user_desc.
    (libc::SYS_set_thread_area, Writes(&[out(1, Bytes(16))])),
    (libc::SYS_io_setup, Custom(sp::io_setup)),
    (libc::SYS_io_destroy, Nothing),
    (
        libc::SYS_io_getevents,
        Writes(&[out(4, ReturnedTimes(IO_EVENT))]),
    ),
    (libc::SYS_io_submit, Unknown(&AIO)),
    (libc::SYS_io_cancel, Writes(&[out(3, Bytes(IO_EVENT))])),
    (libc::SYS_get_thread_area, Writes(&[out(1, Bytes(16))])),
    (libc::SYS_lookup_dcookie, Writes(&[out(2, Returned)])),
    (libc::SYS_epoll_create, Nothing),
    // ENOSYS.
    (libc::SYS_epoll_ctl_old, Nothing),
    (libc::SYS_epoll_wait_old, Nothing),
    // Rearranges pages of a shared mapping (reported when it was mapped).
    (libc::SYS_remap_file_pages, Nothing),
    (libc::SYS_getdents64, Writes(&[out(2, Returned)])),
    // The kernel writes 0 to that address when the thread ends (an int
    // the threading library owns).
    (libc::SYS_set_tid_address, Nothing),
    // Issued by the kernel's signal return to continue an interrupted
    // call of the runtime's; never by the program.
    (libc::SYS_restart_syscall, Nothing),
    (libc::SYS_semtimedop, Nothing),
    (libc::SYS_fadvise64, Nothing),
    (libc::SYS_timer_create, Writes(&[out(3, Bytes(4))])),
    (libc::SYS_timer_settime, Writes(&[out(4, ITIMER)])),
    (libc::SYS_timer_gettime, Writes(&[out(2, ITIMER)])),
    (libc::SYS_timer_getoverrun, Nothing),
    (libc::SYS_timer_delete, Nothing),
    (libc::SYS_clock_settime, Nothing),
    (libc::SYS_clock_gettime, Writes(&[out(2, TIMESPEC)])),
    (libc::SYS_clock_getres, Writes(&[out(2, TIMESPEC)])),
    (libc::SYS_clock_nanosleep, Custom(sp::clock_nanosleep)),
    (libc::SYS_exit_group, Nothing),
    (
        libc::SYS_epoll_wait,
        Writes(&[out(2, ReturnedTimes(EPOLL_EVENT))]),
    ),
    (libc::SYS_epoll_ctl, Nothing),
    (libc::SYS_tgkill, Nothing),
    (libc::SYS_utimes, Nothing),
    (libc::SYS_vserver, Nothing),
    (libc::SYS_mbind, Nothing),
    (libc::SYS_set_mempolicy, Nothing),
    (libc::SYS_get_mempolicy, Custom(sp::get_mempolicy)),
    (libc::SYS_mq_open, Nothing),
    (libc::SYS_mq_unlink, Nothing),
    (libc::SYS_mq_timedsend, Nothing),
    (libc::SYS_mq_timedreceive, Custom(sp::mq_timedreceive)),
    (libc::SYS_mq_notify, Nothing),
    (
        libc::SYS_mq_getsetattr,
        Writes(&[out(3, bytes::<libc::mq_attr>())]),
    ),
    (libc::SYS_kexec_load, Nothing),
    (libc::SYS_waitid, Writes(&[out(3, SIGINFO), out(5, RUSAGE)])),
    (libc::SYS_add_key, Nothing),
    (libc::SYS_request_key, Nothing),
    (libc::SYS_keyctl, Custom(sp::keyctl)),
    (libc::SYS_ioprio_set, Nothing),
    (libc::SYS_ioprio_get, Nothing),
    (libc::SYS_inotify_init, Nothing),
    (libc::SYS_inotify_add_watch, Nothing),
    (libc::SYS_inotify_rm_watch, Nothing),
    (libc::SYS_migrate_pages, Nothing),
    (libc::SYS_openat, Nothing),
    (libc::SYS_mkdirat, Nothing),
    (libc::SYS_mknodat, Nothing),
    (libc::SYS_fchownat, Nothing),
    (libc::SYS_futimesat, Nothing),
    (libc::SYS_newfstatat, Writes(&[out(3, STAT)])),
    (libc::SYS_unlinkat, Nothing),
    (libc::SYS_renameat, Nothing),
    (libc::SYS_linkat, Nothing),
    (libc::SYS_symlinkat, Nothing),
    (libc::SYS_readlinkat, Writes(&[out(3, Returned)])),
    (libc::SYS_fchmodat, Nothing),
    (libc::SYS_faccessat, Nothing),
    (
        libc::SYS_pselect6,
        Writes(&[
            out(2, BitsIn(1)),
            out(3, BitsIn(1)),
            out(4, BitsIn(1)),
            out_when(5, TIMESPEC, When::AlsoInterrupted),
        ]),
    ),
    (
        libc::SYS_ppoll,
        Writes(&[
            out_when(1, ArgTimes(2, 8), When::AlsoInterrupted),
            out_when(3, TIMESPEC, When::AlsoInterrupted),
        ]),
    ),
    (libc::SYS_unshare, Nothing),
    (libc::SYS_set_robust_list, Nothing),
    (
        libc::SYS_get_robust_list,
        Writes(&[out(2, Bytes(8)), out(3, Bytes(8))]),
    ),
    // The file offsets, advanced.
    (
        libc::SYS_splice,
        Writes(&[out(2, Bytes(8)), out(4, Bytes(8))]),
    ),
    (libc::SYS_tee, Nothing),
    (libc::SYS_sync_file_range, Nothing),
    (libc::SYS_vmsplice, Custom(sp::vmsplice)),
    (libc::SYS_move_pages, Writes(&[out(5, ArgTimes(2, 4))])),
    (libc::SYS_utimensat, Nothing),
    (
        libc::SYS_epoll_pwait,
        Writes(&[out(2, ReturnedTimes(EPOLL_EVENT))]),
    ),
    (libc::SYS_signalfd, Nothing),
    (libc::SYS_timerfd_create, Nothing),
    (libc::SYS_eventfd, Nothing),
    (libc::SYS_fallocate, Nothing),
    (libc::SYS_timerfd_settime, Writes(&[out(4, ITIMER)])),
    (libc::SYS_timerfd_gettime, Writes(&[out(2, ITIMER)])),
    (libc::SYS_accept4, Writes(SOCKET_ADDRESS_OUT)),
    (libc::SYS_signalfd4, Nothing),
    (libc::SYS_eventfd2, Nothing),
    (libc::SYS_epoll_create1, Nothing),
    (libc::SYS_dup3, Nothing),
    (libc::SYS_pipe2, Writes(&[out(1, Bytes(8))])),
    (libc::SYS_inotify_init1, Nothing),
    (libc::SYS_preadv, Custom(sp::readv)),
    (libc::SYS_pwritev, Nothing),
    (libc::SYS_rt_tgsigqueueinfo, Nothing),
    // Its ring buffer is a shared mapping, reported by mmap.
    (libc::SYS_perf_event_open, Nothing),
    (libc::SYS_recvmmsg, Custom(sp::recvmmsg)),
    (libc::SYS_fanotify_init, Nothing),
    (libc::SYS_fanotify_mark, Nothing),
    // Emulated for this process's RLIMIT_AS.
    (libc::SYS_prlimit64, Writes(&[out(4, RLIMIT)])),
    (libc::SYS_name_to_handle_at, Custom(sp::name_to_handle_at)),
    (libc::SYS_open_by_handle_at, Nothing),
    (libc::SYS_clock_adjtime, Writes(&[out(2, TIMEX)])),
    (libc::SYS_syncfs, Nothing),
    (libc::SYS_sendmmsg, Custom(sp::sendmmsg)),
    (libc::SYS_setns, Nothing),
    (
        libc::SYS_getcpu,
        Writes(&[out(1, Bytes(4)), out(2, Bytes(4))]),
    ),
    (libc::SYS_process_vm_readv, Custom(sp::process_vm_readv)),
    (libc::SYS_process_vm_writev, Custom(sp::process_vm_writev)),
    (libc::SYS_kcmp, Nothing),
    (libc::SYS_finit_module, Nothing),
    (libc::SYS_sched_setattr, Nothing),
    // The kernel fills the whole size given (zeros past its structure).
    (libc::SYS_sched_getattr, Writes(&[out(2, Arg(3))])),
    (libc::SYS_renameat2, Nothing),
    (libc::SYS_seccomp, Custom(sp::seccomp)),
    (libc::SYS_getrandom, Writes(&[out(1, Returned)])),
    (libc::SYS_memfd_create, Nothing),
    (libc::SYS_kexec_file_load, Nothing),
    (
        libc::SYS_bpf,
        Unknown(&Report {
            key: libc::SYS_bpf,
            name: "bpf",
            what: "buffers named in its attribute union (map values, program information), \
                   of sizes only the kernel knows",
        }),
    ),
    // Emulated; returns only on failure.
    (libc::SYS_execveat, Nothing),
    (
        libc::SYS_userfaultfd,
        Unknown(&Report {
            key: libc::SYS_userfaultfd,
            name: "userfaultfd",
            what: "pages registered with it, which whoever serves their faults fills",
        }),
    ),
    (libc::SYS_membarrier, Nothing),
    (libc::SYS_mlock2, Nothing),
    (
        libc::SYS_copy_file_range,
        Writes(&[out(2, Bytes(8)), out(4, Bytes(8))]),
    ),
    (libc::SYS_preadv2, Custom(sp::readv)),
    (libc::SYS_pwritev2, Nothing),
    (libc::SYS_pkey_mprotect, Nothing),
    (libc::SYS_pkey_alloc, Nothing),
    (libc::SYS_pkey_free, Nothing),
    (libc::SYS_statx, Writes(&[out(5, Bytes(256))])),
    (
        nr::IO_PGETEVENTS,
        Writes(&[out(4, ReturnedTimes(IO_EVENT))]),
    ),
    // The area is cleared as registered; the kernel keeps updating its
    // integers (cpu and node numbers), which no value ever occupies.
    (libc::SYS_rseq, Writes(&[out(1, Arg(2))])),
    (libc::SYS_pidfd_send_signal, Nothing),
    (libc::SYS_io_uring_setup, Custom(sp::io_uring_setup)),
    (libc::SYS_io_uring_enter, Unknown(&IO_URING)),
    (libc::SYS_io_uring_register, Unknown(&IO_URING)),
    (libc::SYS_open_tree, Nothing),
    (libc::SYS_move_mount, Nothing),
    (libc::SYS_fsopen, Nothing),
    (libc::SYS_fsconfig, Nothing),
    (libc::SYS_fsmount, Nothing),
    (libc::SYS_fspick, Nothing),
    (libc::SYS_pidfd_open, Nothing),
    // Emulated for threads; the parent's thread id or pidfd.
    (libc::SYS_clone3, Custom(sp::clone3)),
    // Emulated (the runtime's descriptors stay open).
    (libc::SYS_close_range, Nothing),
    (libc::SYS_openat2, Nothing),
    (libc::SYS_pidfd_getfd, Nothing),
    (libc::SYS_faccessat2, Nothing),
    // Advice only (no advice it takes zeroes pages).
    (libc::SYS_process_madvise, Nothing),
    (
        libc::SYS_epoll_pwait2,
        Writes(&[out(2, ReturnedTimes(EPOLL_EVENT))]),
    ),
    (libc::SYS_mount_setattr, Nothing),
    (libc::SYS_quotactl_fd, Custom(sp::quotactl_fd)),
    (libc::SYS_landlock_create_ruleset, Nothing),
    (libc::SYS_landlock_add_rule, Nothing),
    (libc::SYS_landlock_restrict_self, Nothing),
    // A new descriptor; its mapping is reported by mmap like any shared one.
    (libc::SYS_memfd_secret, Nothing),
    (libc::SYS_process_mrelease, Nothing),
    (libc::SYS_futex_waitv, Nothing),
    (libc::SYS_set_mempolicy_home_node, Nothing),
    // struct cachestat: five u64 counters.
    (nr::CACHESTAT, Writes(&[out(3, Bytes(40))])),
    (libc::SYS_fchmodat2, Nothing),
    (nr::MAP_SHADOW_STACK, Custom(sp::map_shadow_stack)),
    (nr::FUTEX_WAKE, Nothing),
    (nr::FUTEX_WAIT, Nothing),
    (nr::FUTEX_REQUEUE, Nothing),
    // The kernel fills up to the buffer size given.
    (nr::STATMOUNT, Writes(&[out(2, Arg(3))])),
    (nr::LISTMOUNT, Writes(&[out(2, ReturnedTimes(8))])),
    (
        nr::LSM_GET_SELF_ATTR,
        Writes(&[out(2, LenAt(3)), out(3, Bytes(4))]),
    ),
    (nr::LSM_SET_SELF_ATTR, Nothing),
    (
        nr::LSM_LIST_MODULES,
        Writes(&[out(1, ReturnedTimes(8)), out(2, Bytes(4))]),
    ),
    (libc::SYS_mseal, Nothing),
];

/// The table, indexed by system call number.
pub static TABLE: [Effect; LAST + 1] = build();

const fn build() -> [Effect; LAST + 1] {
    let mut t = [Effect::Unclassified; LAST + 1];
    let mut n = UNASSIGNED.0;
    while n <= UNASSIGNED.1 {
        t[n] = Nothing;
        n += 1;
    }
    let mut i = 0;
    while i < ENTRIES.len() {
        let (nr, effect) = ENTRIES[i];
        assert!(
            matches!(t[nr as usize], Effect::Unclassified),
            "a system call classified twice"
        );
        t[nr as usize] = effect;
        i += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_system_call_number_is_classified() {
        let missing: Vec<usize> = (0..=LAST)
            .filter(|&n| matches!(TABLE[n], Effect::Unclassified))
            .collect();
        assert!(missing.is_empty(), "unclassified system calls: {missing:?}");
    }

    #[test]
    fn structure_sizes_are_the_kernels() {
        let size = |s: Size| match s {
            Bytes(n) => n,
            _ => unreachable!(),
        };
        assert_eq!(size(STAT), 144);
        assert_eq!(size(RUSAGE), 144);
        assert_eq!(size(SIGINFO), 128);
        assert_eq!(size(STATFS), 120);
        assert_eq!(size(TIMEX), 208);
        assert_eq!(EPOLL_EVENT, 12);
        assert_eq!(size(bytes::<libc::utsname>()), 390);
        assert_eq!(size(bytes::<libc::sysinfo>()), 112);
        assert_eq!(size(bytes::<libc::mq_attr>()), 64);
        assert_eq!(size(bytes::<libc::stack_t>()), 24);
    }
}
