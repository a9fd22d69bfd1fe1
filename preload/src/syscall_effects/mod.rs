//! What the kernel wrote: the guest memory each system call wrote without
//! an instrumented store, handed to the tool (`Tool::mem_written`,
//! `Tool::mem_moved`), whose shadows there must go — for record mode, bytes
//! that held active values before would keep their stale indices and
//! silently feed wrong derivatives into whatever reads them next — `read()` of binary input into a reused
//! buffer, `calloc` memory that a freed active array occupied (fresh
//! `mmap` pages are zero, so glibc does not clear them), a signal frame on
//! the stack, a `wait4` status in a union with a double. `mremap` moves a
//! mapping's contents, so it moves their shadow.
//!
//! What each system call writes is data: `table` (one entry per number),
//! with the calls whose extent needs a closer look (sub-commands, `ioctl`
//! requests, structures to read) in `special` and `ioctl`. Writers dgad
//! cannot delimit — asynchronous I/O, writable shared memory, an `ioctl`
//! request it does not know — are reported once per process on stderr.

mod ioctl;
mod special;
mod table;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use table::{Effect, Out, Size, When};

/// The kernel wrote `[addr, addr + len)`: the tool's shadows there go.
pub fn clear(addr: u64, len: u64) {
    crate::tool::tool().mem_written(addr, len);
}

/// `result` of an interrupted call.
const EINTR: i64 = -(libc::EINTR as i64);

/// After the system call `nr` with arguments `a` (`a[1]` the first)
/// returned `result` (possibly an error): clears or moves the shadow of
/// the memory it wrote, or reports once that it may have written memory
/// dgad cannot delimit.
pub fn after_syscall(nr: i64, a: &[u64; 7], result: i64) {
    if result < 0 && result != EINTR {
        return;
    }
    let effect = usize::try_from(nr)
        .ok()
        .and_then(|n| table::TABLE.get(n).copied())
        .unwrap_or(Effect::Unclassified);
    let succeeded = result >= 0;
    match effect {
        Effect::Nothing => {}
        Effect::Writes(outs) => {
            for o in outs {
                written(o, a, result);
            }
        }
        Effect::Custom(f) => f(a, result),
        Effect::Unknown(report) if succeeded => report_call(report),
        Effect::Unclassified if succeeded => unclassified(nr),
        Effect::Unknown(_) | Effect::Unclassified => {}
    }
}

/// Clears output `o` of a call with arguments `a` that returned `result`.
fn written(o: &Out, a: &[u64; 7], result: i64) {
    if let Some((ptr, len)) = extent(o, a, result, special::read_u32) {
        clear(ptr, len);
    }
}

/// Where and how many bytes output `o` of a call with arguments `a` that
/// returned `result` holds, if it was written; `read_u32` reads a length
/// the kernel stored.
fn extent(
    o: &Out,
    a: &[u64; 7],
    result: i64,
    read_u32: impl Fn(u64) -> Option<u32>,
) -> Option<(u64, u64)> {
    let wanted = match o.when {
        When::Success => result >= 0,
        When::AlsoInterrupted => result >= 0 || result == EINTR,
        When::Interrupted => result == EINTR,
    };
    let ptr = a[usize::from(o.arg)];
    if !wanted || ptr == 0 {
        return None;
    }
    let arg = |n: u8| a[usize::from(n)];
    let returned = result.max(0) as u64;
    let len = match o.size {
        Size::Bytes(n) => n,
        Size::Returned => returned,
        Size::ReturnedTimes(n) => returned.saturating_mul(n),
        Size::ReturnedWithin(n, k) => returned.min(arg(n)).saturating_mul(k),
        Size::Arg(n) => arg(n),
        Size::ArgTimes(n, k) => arg(n).saturating_mul(k),
        Size::LenAt(n) => read_u32(arg(n)).map_or(0, u64::from),
        Size::BitsIn(n) => (arg(n) & 0xffff_ffff).div_ceil(64) * 8,
        Size::PagesIn(n) => arg(n).div_ceil(4096),
    };
    Some((ptr, len))
}

/// One bit per report already made in this process, keyed by system call
/// number (`after_syscall` is cheap when nothing is new: one load).
static REPORTED: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

/// Whether the report keyed `key` (a system call number) is the first;
/// marks it made.
fn first_report(key: usize) -> bool {
    let (word, bit) = (key / 64 % REPORTED.len(), 1u64 << (key % 64));
    REPORTED[word].load(Ordering::Relaxed) & bit == 0
        && REPORTED[word].fetch_or(bit, Ordering::Relaxed) & bit == 0
}

/// Reports once that a call may let the kernel write memory unseen
/// (calls that share a report's key share the line).
fn report_call(r: &table::Report) {
    if first_report(r.key as usize) {
        crate::dgad_eprintln!(
            "{}: {}: the kernel may write program memory that dgad does not see ({}); \
             values read from there may carry stale derivatives",
            crate::tool::tool().name(),
            r.name,
            r.what
        );
    }
}

/// A successful system call beyond the table (a newer kernel's): its
/// number, or one report for all numbers beyond 511.
fn unclassified(nr: i64) {
    let key = usize::try_from(nr).map_or(511, |n| n.min(511));
    if first_report(key) {
        crate::dgad_eprintln!(
            "{}: system call {nr} is unknown to dgad; memory it may have written can carry \
             stale derivatives",
            crate::tool::tool().name()
        );
    }
}

/// Reports once per process that writable memory at `[addr, addr + len)`
/// is shared (`how`): other processes or devices write there unseen.
fn report_shared(addr: u64, len: u64, how: &str) {
    static SHARED: AtomicBool = AtomicBool::new(false);
    if !SHARED.load(Ordering::Relaxed) && !SHARED.swap(true, Ordering::Relaxed) {
        crate::dgad_eprintln!(
            "{}: writable shared memory at {addr:#x}-{:#x} ({how}): other processes or \
             devices may write it without dgad seeing it, and values read from there (or from \
             any later shared mapping) may carry stale derivatives",
            crate::tool::tool().name(),
            addr.saturating_add(len)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::table::{Effect, TABLE};
    use super::{extent, EINTR};

    /// The extents `nr` writes, by its table entry.
    fn extents(nr: i64, a: [u64; 7], result: i64, len_at: u32) -> Vec<(u64, u64)> {
        let Effect::Writes(outs) = TABLE[nr as usize] else {
            panic!("system call {nr} has no size rules");
        };
        outs.iter()
            .filter_map(|o| extent(o, &a, result, |_| Some(len_at)))
            .collect()
    }

    #[test]
    fn size_rules_give_the_bytes_written() {
        // wait4(pid, status, options, rusage).
        let a = [0, 7, 0x1000, 0, 0x2000, 0, 0];
        assert_eq!(
            extents(libc::SYS_wait4, a, 7, 0),
            [(0x1000, 4), (0x2000, 144)]
        );
        // No rusage pointer, and nothing after an error.
        let a = [0, 7, 0x1000, 0, 0, 0, 0];
        assert_eq!(extents(libc::SYS_wait4, a, 7, 0), [(0x1000, 4)]);
        assert!(extents(libc::SYS_wait4, a, -10, 0).is_empty());
        // getsockname(fd, addr, &len): the length the kernel stored.
        let a = [0, 3, 0x1000, 0x2000, 0, 0, 0];
        assert_eq!(
            extents(libc::SYS_getsockname, a, 0, 8),
            [(0x1000, 8), (0x2000, 4)]
        );
        // select(65 fds, ...): two longs per set; the timeout also after EINTR.
        let a = [0, 65, 0x1000, 0, 0x3000, 0x4000, 0];
        assert_eq!(
            extents(libc::SYS_select, a, 1, 0),
            [(0x1000, 16), (0x3000, 16), (0x4000, 16)]
        );
        assert_eq!(extents(libc::SYS_select, a, EINTR, 0), [(0x4000, 16)]);
        // nanosleep: the remaining time only when interrupted.
        let a = [0, 0x1000, 0x2000, 0, 0, 0, 0];
        assert!(extents(libc::SYS_nanosleep, a, 0, 0).is_empty());
        assert_eq!(extents(libc::SYS_nanosleep, a, EINTR, 0), [(0x2000, 16)]);
        // epoll_wait: 12 bytes per event returned.
        let a = [0, 3, 0x1000, 16, 0, 0, 0];
        assert_eq!(extents(libc::SYS_epoll_wait, a, 3, 0), [(0x1000, 36)]);
        // getxattr asked for the size (0): nothing written.
        let a = [0, 0x1000, 0x2000, 0x3000, 0, 0, 0];
        assert_eq!(extents(libc::SYS_getxattr, a, 20, 0), [(0x3000, 0)]);
    }
}
