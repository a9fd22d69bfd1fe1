//! Guest memory the kernel (or the runtime) writes without an instrumented
//! store: its shadow must say "passive", or bytes that held active values
//! before keep their stale indices and silently feed wrong derivatives
//! into whatever reads them next — `read()` of binary input into a reused
//! buffer, `calloc` memory that a freed active array occupied (fresh
//! `mmap` pages are zero, so glibc does not clear them), a signal frame on
//! the stack. `mremap` moves a mapping's contents, so it moves their shadow.

use super::guest::read_u64;
use crate::sys;
use std::sync::atomic::{AtomicU64, Ordering};

/// Below this, shadow bytes are zeroed by storing; above, whole pages are
/// dropped (`MADV_DONTNEED`: zero on next touch, memory given back).
const STORE_LIMIT: u64 = 64 * 1024;

/// Marks `[addr, addr + len)` passive (the parts inside application
/// memory).
pub fn clear(addr: u64, len: u64) {
    for (lo, hi) in shadowmem::APP_RANGES {
        let (start, end) = (addr.max(lo), addr.saturating_add(len).min(hi));
        if start < end {
            clear_app(start, end);
        }
    }
}

fn clear_app(start: u64, end: u64) {
    let (s, e) = (
        shadowmem::shadow_of(start),
        shadowmem::shadow_of(end - 1) + 1,
    );
    if end - start < STORE_LIMIT {
        // SAFETY: the shadow of application memory is mapped read-write.
        unsafe { core::ptr::write_bytes(s as *mut u8, 0, (e - s) as usize) };
        return;
    }
    let (page_lo, page_hi) = (s.next_multiple_of(4096), e & !4095);
    // SAFETY: as above, for the partial pages at both ends.
    unsafe {
        core::ptr::write_bytes(s as *mut u8, 0, (page_lo - s) as usize);
        core::ptr::write_bytes(page_hi as *mut u8, 0, (e - page_hi) as usize);
    }
    // SAFETY: whole pages of the shadow region, which reads back as zeros
    // after MADV_DONTNEED (private anonymous memory).
    unsafe {
        sys::syscall3(
            libc::SYS_madvise,
            page_lo,
            page_hi - page_lo,
            libc::MADV_DONTNEED as u64,
        )
    };
}

/// The program break last seen (0 until the first `brk`).
static BREAK: AtomicU64 = AtomicU64::new(0);

/// After the system call `nr` with arguments `a` (`a[1]` the first)
/// returned `result` (not an error): clears or moves the shadow of the
/// memory it wrote.
pub fn after_syscall(nr: i64, a: &[u64; 7], result: i64) {
    let done = result as u64;
    match nr {
        libc::SYS_read | libc::SYS_pread64 | libc::SYS_recvfrom => clear(a[2], done),
        libc::SYS_getrandom => clear(a[1], done),
        libc::SYS_readv | libc::SYS_preadv | libc::SYS_preadv2 => clear_iovecs(a[2], a[3], done),
        libc::SYS_recvmsg => received(a[2], done),
        libc::SYS_recvmmsg => {
            // struct mmsghdr: a msghdr (56 bytes), the received length (a
            // u32), padding to 64.
            for k in 0..done.min(1024) {
                let hdr = a[2] + 64 * k;
                let mut len = [0u8; 4];
                if super::guest::read_mem(hdr + 56, &mut len) {
                    received(hdr, u64::from(u32::from_le_bytes(len)));
                }
            }
        }
        // The message type (a long), then the text.
        libc::SYS_msgrcv => clear(a[2], 8 + done),
        libc::SYS_mq_timedreceive => {
            clear(a[2], done);
            if a[4] != 0 {
                clear(a[4], 4);
            }
        }
        libc::SYS_process_vm_readv => clear_iovecs(a[2], a[3], done),
        // Structures the kernel fills: a buffer that held active values
        // before must not keep their indices (spurious reports, or worse
        // when the bytes are read as floating-point data).
        libc::SYS_getdents64 => clear(a[2], done),
        libc::SYS_fstat | libc::SYS_stat | libc::SYS_lstat => {
            clear(a[2], core::mem::size_of::<libc::stat>() as u64)
        }
        libc::SYS_newfstatat => clear(a[3], core::mem::size_of::<libc::stat>() as u64),
        libc::SYS_statx => clear(a[5], 256),
        libc::SYS_clock_gettime => clear(a[2], 16),
        libc::SYS_mmap => clear(done, a[2]),
        libc::SYS_munmap => clear(a[1], a[2]),
        // Pages the program gives back read as zeros afterwards (glibc's
        // malloc_trim, other allocators' purging).
        libc::SYS_madvise
            if matches!(
                a[3] as i32,
                libc::MADV_DONTNEED | libc::MADV_FREE | libc::MADV_REMOVE
            ) =>
        {
            clear(a[1], a[2])
        }
        libc::SYS_mremap => moved(a[1], a[2], done, a[3]),
        libc::SYS_brk => {
            let old = BREAK.swap(done, Ordering::AcqRel);
            if old != 0 && old != done {
                clear(old.min(done), old.max(done) - old.min(done));
            }
        }
        _ => {}
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
    let in_app = |addr: u64, len: u64| len > 0 && shadowmem::is_app_range(addr, addr + len);
    if in_app(old, kept) && in_app(new, kept) {
        // SAFETY: both shadow ranges are mapped; a moved mapping never
        // overlaps its old place.
        unsafe {
            core::ptr::copy_nonoverlapping(
                shadowmem::shadow_of(old) as *const u8,
                shadowmem::shadow_of(new) as *mut u8,
                kept as usize,
            )
        };
    } else {
        clear(new, kept);
    }
    clear(new + kept, new_len - kept);
    clear(old, old_len);
}
