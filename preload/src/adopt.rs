//! Threads that exist before the takeover — started by a library
//! constructor or `.preinit_array`, which run before ours — are brought
//! into the code cache: each is sent a signal that the runtime's host
//! handler answers by giving the thread a context and sending it to the
//! dispatcher with the state it was interrupted in (DynamoRIO takes over
//! existing threads the same way). A thread that blocks every signal
//! (OpenBLAS's workers do) is stopped with ptrace by a helper process
//! instead (`adopt_traced`). A thread that cannot be reached either way is
//! named on stderr; in record mode the run stops there, since what it
//! computes would be passive.
//!
//! The requests are queued with `rt_tgsigqueueinfo` and carry
//! `REQUEST_COOKIE` as their value, so that the host handler tells them
//! from the guest's own signals, and drops one that arrives late on a
//! thread adopted already.

use crate::context::{reason, reg, ThreadCtx};
use crate::sys;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// `si_value` of an adoption request.
const REQUEST_COOKIE: u64 = 0x6467_6164_2d61_646f;
/// `SI_QUEUE`: what `rt_tgsigqueueinfo` requests carry as `si_code`.
const SI_QUEUE: i32 = -1;
/// Threads adopted at start-up at most (each gets a context made before
/// the request is sent: the handler cannot allocate).
const POOL_MAX: usize = 512;
/// How long start-up waits for the threads asked in one round to answer.
const ANSWER_TIMEOUT_MS: u64 = 2000;

/// Contexts made for threads being adopted, taken by the host handler.
static POOL: [AtomicU64; POOL_MAX] = [const { AtomicU64::new(0) }; POOL_MAX];
/// Thread ids of the adopted threads, in the order they answered.
static ANSWERED: [AtomicI32; POOL_MAX] = [const { AtomicI32::new(0) }; POOL_MAX];
/// How many threads answered (a futex word: start-up waits on it).
static ANSWERED_LEN: AtomicU32 = AtomicU32::new(0);

/// Whether `info` is an adoption request sent by [`existing_threads`].
/// Signal-safe.
pub fn is_request(info: &libc::siginfo_t) -> bool {
    // SAFETY: for SI_QUEUE the siginfo holds si_pid, si_uid and si_value.
    info.si_code == SI_QUEUE
        && unsafe { info.si_pid() } == crate::init::pid()
        && unsafe { info.si_value() }.sival_ptr as u64 == REQUEST_COOKIE
}

/// The host handler ran on a thread that has no context: it started
/// before the takeover. Gives it a context and sends it to the dispatcher
/// at the interrupted instruction when `sig` is a request; a guest signal
/// that arrives first adopts the thread just as well and is then queued
/// for delivery (a fault is raised again by the instruction, translated).
/// Returns false when no context was left (the thread stays native).
/// Signal context: no allocation, no locks.
pub fn adopt_in_handler(sig: i32, info: &libc::siginfo_t, uc: &mut libc::ucontext_t) -> bool {
    let Some(ctx) = take_prepared() else {
        return false;
    };
    ctx.tid = sys::gettid();
    if !ctx.install() {
        return false;
    }
    ctx.guest_ss = crate::signals::altstack_of_calling_thread();
    crate::threads::adopted(ctx);
    let g = &mut uc.uc_mcontext.gregs;
    ctx.regs.gpr[reg::RSP] = g[libc::REG_RSP as usize] as u64;
    ctx.regs.rip = g[libc::REG_RIP as usize] as u64;
    ctx.reason = reason::ADOPTED;
    g[libc::REG_RSP as usize] = ctx.rt_stack_top as i64;
    g[libc::REG_RIP as usize] = crate::entry::signal_entry_addr() as i64;
    if !is_request(info) && !(crate::signals::is_fault(sig, info)) {
        crate::signals::queue_for_adopted(ctx, sig, info);
    }
    // Start-up polls the list, so a slot read before its store is seen
    // at the next look.
    let i = ANSWERED_LEN.fetch_add(1, Ordering::AcqRel) as usize;
    if i < POOL_MAX {
        ANSWERED[i].store(ctx.tid, Ordering::Release);
    }
    sys::futex_wake(&ANSWERED_LEN, u32::MAX);
    true
}

pub(crate) fn take_prepared() -> Option<&'static mut ThreadCtx> {
    POOL.iter().find_map(|slot| {
        let a = slot.swap(0, Ordering::AcqRel);
        // SAFETY: the pool holds contexts made by `ThreadCtx::allocate`,
        // never unmapped; the swap gives this one to us alone.
        (a != 0).then(|| unsafe { &mut *(a as *mut ThreadCtx) })
    })
}

pub(crate) fn prepare_one() -> bool {
    let Some(ctx) = ThreadCtx::allocate() else {
        return false;
    };
    let addr = ctx.self_addr;
    POOL.iter().any(|slot| {
        slot.compare_exchange(0, addr, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    })
}

/// A thread that could not be adopted, and why.
pub struct Stray {
    /// Its thread id.
    pub tid: i32,
    /// Why, completing "was started before dgad took over and …".
    pub why: &'static str,
}

/// Brings every other thread of the process into the code cache. Called
/// once by the main thread at takeover, after the signal dispositions are
/// the runtime's. Threads that native threads start meanwhile are found
/// by listing the process's threads again until no new one appears.
/// Returns whether any other thread was found.
pub fn existing_threads() -> bool {
    let me = sys::gettid();
    let mut asked: Vec<i32> = vec![me];
    let mut strays: Vec<Stray> = Vec::new();
    let mut borrowed = 0u64; // signals whose disposition we set for requests
    let mut waiting: Vec<i32> = Vec::new();
    let handled = crate::signals::guest_handled_mask();
    for _round in 0..16 {
        let mut deaf: Vec<i32> = Vec::new();
        let fresh: Vec<i32> = list_threads()
            .into_iter()
            .filter(|t| !asked.contains(t))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for tid in fresh {
            asked.push(tid);
            let Some(blocked) = blocked_signals(tid) else {
                continue; // gone
            };
            let Some(sig) = request_signal(blocked, handled) else {
                deaf.push(tid);
                continue;
            };
            if !prepare_one() {
                strays.push(Stray {
                    tid,
                    why: "could not be given a context (out of memory, or too many threads)",
                });
                continue;
            }
            if borrowed & bit(sig) == 0 {
                crate::signals::take_for_requests(sig);
                borrowed |= bit(sig);
            }
            match send_request(tid, sig) {
                0 => waiting.push(tid),
                r if r == -(libc::ESRCH as i64) => {}
                _ => strays.push(Stray {
                    tid,
                    why: "could not be signalled",
                }),
            }
        }
        if !deaf.is_empty() {
            strays.extend(crate::adopt_traced::adopt(&deaf));
        }
        wait_for_answers(&mut waiting);
    }
    let unanswered = !waiting.is_empty();
    for tid in waiting {
        if blocked_signals(tid).is_some() {
            strays.push(Stray {
                tid,
                why: "did not answer the runtime's signal",
            });
        }
    }
    // A request may still be pending on a thread that did not answer: its
    // signal keeps the runtime's handler then, which adopts the thread if
    // it ever takes it.
    if !unanswered {
        for sig in 1..64 {
            if borrowed & bit(sig) != 0 {
                crate::signals::give_back_after_requests(sig);
            }
        }
    }
    let n = ANSWERED_LEN.load(Ordering::Acquire);
    if n > 0 {
        crate::log!(
            "adopted {} thread(s) started before the takeover, with a signal",
            n
        );
    }
    report(&strays);
    asked.len() > 1
}

fn bit(sig: i32) -> u64 {
    1u64 << (sig - 1)
}

/// A signal for a request to a thread that blocks `blocked`: a real-time
/// one, from the top (glibc keeps 32–34 for itself), that the guest has
/// no handler for (`handled`), so that none of its own signals can be
/// taken for a request while they are sent; else any other open one the
/// runtime can catch.
fn request_signal(blocked: u64, handled: u64) -> Option<i32> {
    let catchable = |s: i32| {
        s != libc::SIGKILL && s != libc::SIGSTOP && !(32..=34).contains(&s) && blocked & bit(s) == 0
    };
    let candidates = || (35..=64).rev().chain(1..32).filter(|&s| catchable(s));
    candidates()
        .find(|&s| handled & bit(s) == 0)
        .or_else(|| candidates().next())
}

fn send_request(tid: i32, sig: i32) -> i64 {
    // SAFETY: siginfo_t is plain data; all-zero is a valid value.
    let mut info: libc::siginfo_t = unsafe { core::mem::zeroed() };
    info.si_signo = sig;
    info.si_code = SI_QUEUE;
    // The _rt layout after the 16-byte header: pid, uid, value.
    let words = &mut info as *mut libc::siginfo_t as *mut u8;
    // SAFETY: offsets 16, 20 and 24 lie inside the 128-byte siginfo_t.
    unsafe {
        *(words.add(16) as *mut i32) = crate::init::pid();
        *(words.add(20) as *mut u32) = sys::syscall3(libc::SYS_getuid, 0, 0, 0) as u32;
        *(words.add(24) as *mut u64) = REQUEST_COOKIE;
    }
    // SAFETY: the kernel copies the siginfo in the local.
    unsafe {
        sys::syscall6(
            libc::SYS_rt_tgsigqueueinfo,
            crate::init::pid() as u64,
            tid as u64,
            sig as u64,
            &info as *const libc::siginfo_t as u64,
            0,
            0,
        )
    }
}

/// Waits until every thread in `waiting` answered or the time is up;
/// leaves the ones that did not in `waiting`.
fn wait_for_answers(waiting: &mut Vec<i32>) {
    let deadline = now_ms() + ANSWER_TIMEOUT_MS;
    loop {
        let n = ANSWERED_LEN.load(Ordering::Acquire);
        let answered: Vec<i32> = ANSWERED[..(n as usize).min(POOL_MAX)]
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .collect();
        waiting.retain(|t| !answered.contains(t) && blocked_signals(*t).is_some());
        let now = now_ms();
        if waiting.is_empty() || now >= deadline {
            return;
        }
        sys::futex_wait_ms(&ANSWERED_LEN, n, (deadline - now).min(50));
    }
}

pub(crate) fn now_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec in the local.
    unsafe {
        sys::syscall3(
            libc::SYS_clock_gettime,
            libc::CLOCK_MONOTONIC as u64,
            &mut ts as *mut libc::timespec as u64,
            0,
        )
    };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Names the threads that run natively. In record mode that is the end
/// of the run: what they compute on marked data would be passive, and a
/// derivative tool must not be silently wrong.
fn report(strays: &[Stray]) {
    let recording = crate::tool::tool().follows_data();
    for s in strays {
        let name = thread_name(s.tid);
        crate::dgad_eprintln!(
            "thread {} ({}) was started before dgad took over and {}: it {}",
            s.tid,
            String::from_utf8_lossy(&name),
            s.why,
            if recording {
                "would run natively, and derivatives of what it computes would be lost"
            } else {
                "runs natively"
            }
        );
    }
    if recording && !strays.is_empty() {
        crate::dgad_eprintln!(
            "record: stopping: {} thread(s) started before the takeover cannot be followed",
            strays.len()
        );
        sys::exit_group(125);
    }
}

/// The thread ids of this process, from `/proc/self/task`.
fn list_threads() -> Vec<i32> {
    let mut out = Vec::new();
    let fd = open_read(b"/proc/self/task\0", libc::O_DIRECTORY);
    if fd < 0 {
        return out;
    }
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe {
            sys::syscall3(
                libc::SYS_getdents64,
                fd as u64,
                buf.as_mut_ptr() as u64,
                buf.len() as u64,
            )
        };
        if n <= 0 {
            break;
        }
        let mut off = 0usize;
        while off < n as usize {
            // struct linux_dirent64: ino u64, off i64, reclen u16, type u8, name.
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            let name = &buf[off + 19..off + reclen];
            let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())];
            if let Some(tid) = parse_decimal(name) {
                out.push(tid);
            }
            off += reclen;
        }
    }
    sys::close(fd);
    out
}

/// The signals thread `tid` blocks (`SigBlk` of its status), or `None`
/// when it is gone.
pub(crate) fn blocked_signals(tid: i32) -> Option<u64> {
    let status = read_task_file(tid, b"status")?;
    let line = status
        .split(|&c| c == b'\n')
        .find(|l| l.starts_with(b"SigBlk:"))?;
    let hex = line[7..].trim_ascii();
    u64::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

fn thread_name(tid: i32) -> Vec<u8> {
    let mut name = read_task_file(tid, b"comm").unwrap_or_default();
    while name.last() == Some(&b'\n') {
        name.pop();
    }
    name
}

fn read_task_file(tid: i32, file: &[u8]) -> Option<Vec<u8>> {
    let mut path = format!("/proc/self/task/{tid}/").into_bytes();
    path.extend_from_slice(file);
    path.push(0);
    let fd = open_read(&path, 0);
    if fd < 0 {
        return None;
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let n = sys::read(fd, &mut buf);
        if n <= 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    sys::close(fd);
    (!out.is_empty()).then_some(out)
}

fn open_read(path: &[u8], flags: i32) -> i32 {
    debug_assert_eq!(path.last(), Some(&0));
    // SAFETY: path is NUL-terminated.
    unsafe {
        sys::syscall3(
            libc::SYS_open,
            path.as_ptr() as u64,
            (libc::O_RDONLY | libc::O_CLOEXEC | flags) as u64,
            0,
        ) as i32
    }
}

fn parse_decimal(s: &[u8]) -> Option<i32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_use_a_real_time_signal_the_thread_leaves_open() {
        assert_eq!(request_signal(0, 0), Some(64));
        assert_eq!(request_signal(bit(64), 0), Some(63));
        assert_eq!(request_signal(0, bit(64) | bit(63)), Some(62));
        let all_rt = (35..=64).fold(0u64, |m, s| m | bit(s));
        assert_eq!(request_signal(all_rt, 0), Some(1));
        assert_eq!(request_signal(0, !0), Some(64));
        assert_eq!(request_signal(!0, 0), None);
        assert_eq!(
            request_signal(!(bit(libc::SIGKILL) | bit(libc::SIGSTOP) | bit(33)), 0),
            None
        );
    }

    #[test]
    fn thread_ids_are_decimal_names() {
        assert_eq!(parse_decimal(b"1234"), Some(1234));
        assert_eq!(parse_decimal(b"."), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"12a"), None);
    }
}
