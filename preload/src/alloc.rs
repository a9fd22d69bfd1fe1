//! The runtime's own heap: size classes carved from `mmap`ed chunks.
//!
//! The guest may be anywhere (inside `malloc`, holding its locks) when the
//! runtime runs, so Rust allocations in `libdgad.so` must never reach the
//! guest's allocator. Small blocks come from power-of-two free lists, large
//! ones straight from `mmap`. A spin lock guards the lists; it is never taken
//! in signal context (the signal handler does not allocate).

use crate::sys;
use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicBool, Ordering};

const CLASSES: usize = 13; // 16 B … 64 KiB
const MIN_SHIFT: usize = 4;
const CHUNK: usize = 4 << 20;

struct Lists {
    free: [usize; CLASSES],
    cursor: usize,
    end: usize,
}

/// The global allocator of `libdgad.so`.
pub struct RuntimeAlloc {
    lock: AtomicBool,
    lists: core::cell::UnsafeCell<Lists>,
}

// SAFETY: `lists` is only accessed with `lock` held.
unsafe impl Sync for RuntimeAlloc {}

impl RuntimeAlloc {
    /// The allocator, empty until first use.
    pub const fn new() -> Self {
        RuntimeAlloc {
            lock: AtomicBool::new(false),
            lists: core::cell::UnsafeCell::new(Lists {
                free: [0; CLASSES],
                cursor: 0,
                end: 0,
            }),
        }
    }

    fn class_of(layout: &Layout) -> Option<usize> {
        let size = layout.size().max(layout.align()).max(1 << MIN_SHIFT);
        let shift = usize::BITS as usize - (size - 1).leading_zeros() as usize;
        let class = shift - MIN_SHIFT;
        (class < CLASSES).then_some(class)
    }

    fn with_lists<R>(&self, f: impl FnOnce(&mut Lists) -> R) -> R {
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        // SAFETY: the lock is held, so this is the only reference.
        let r = f(unsafe { &mut *self.lists.get() });
        self.lock.store(false, Ordering::Release);
        r
    }

    /// Takes the lock so that a `fork` cannot copy it held; see `fork_unlock`.
    pub fn fork_lock(&self) {
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
    }

    /// Releases the lock taken by `fork_lock` (in parent and child).
    pub fn fork_unlock(&self) {
        self.lock.store(false, Ordering::Release);
    }
}

impl Default for RuntimeAlloc {
    fn default() -> Self {
        Self::new()
    }
}

/// The kernel refused the runtime memory: stop the client with a one-line
/// reason (Rust's own handler would abort with a backtrace), after writing
/// what the tape holds so far. Runs with the allocator's lock held, so
/// nothing here allocates.
fn out_of_memory(len: usize) -> ! {
    let limit = sys::address_space_limit();
    if let Some(limit) = limit.ok().filter(|l| l.rlim_cur != libc::RLIM_INFINITY) {
        crate::dgad_eprintln!(
            "fatal: the runtime cannot map {} bytes of memory under the virtual memory limit of \
             {} KiB: lift it (`ulimit -v unlimited`)",
            len,
            limit.rlim_cur / 1024
        );
    } else {
        crate::dgad_eprintln!("fatal: the runtime cannot map {} bytes of memory", len);
    }
    crate::tool::tool().dying_in_signal(None);
    sys::exit_group(125)
}

// SAFETY: blocks handed out are disjoint, at least `layout.size()` bytes and
// aligned to their (power-of-two) size class, which is ≥ the alignment.
unsafe impl GlobalAlloc for RuntimeAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = Self::class_of(&layout) else {
            let len = layout.size().next_multiple_of(4096);
            return sys::map_anon(len, libc::PROT_READ | libc::PROT_WRITE, 0, false)
                .map_or_else(|| out_of_memory(len), |a| a as *mut u8);
        };
        let size = 1usize << (class + MIN_SHIFT);
        self.with_lists(|l| {
            let head = l.free[class];
            if head != 0 {
                // SAFETY: a free block stores the next free block in its first word.
                l.free[class] = unsafe { *(head as *const usize) };
                return head as *mut u8;
            }
            let start = l.cursor.next_multiple_of(size);
            if start + size > l.end || l.end == 0 {
                let Some(chunk) =
                    sys::map_anon(CHUNK, libc::PROT_READ | libc::PROT_WRITE, 0, false)
                else {
                    out_of_memory(CHUNK)
                };
                sys::advise_huge_pages(chunk, CHUNK);
                l.cursor = chunk as usize + size;
                l.end = chunk as usize + CHUNK;
                return chunk as *mut u8;
            }
            l.cursor = start + size;
            start as *mut u8
        })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(class) = Self::class_of(&layout) else {
            let len = layout.size().next_multiple_of(4096);
            // SAFETY: large blocks are whole mappings of exactly this length.
            unsafe { sys::syscall3(libc::SYS_munmap, ptr as u64, len as u64, 0) };
            return;
        };
        self.with_lists(|l| {
            // SAFETY: the block is ours again and at least a word long.
            unsafe { *(ptr as *mut usize) = l.free[class] };
            l.free[class] = ptr as usize;
        });
    }
}
