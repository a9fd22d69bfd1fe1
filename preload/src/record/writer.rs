//! The tape writer: a thread of the runtime's own that writes full tape
//! chunks to `dg-tape` while the guest threads go on recording.
//!
//! Copying the tape into the file is most of what recording costs on a
//! vectorised kernel (`docs/performance.md`); handing the copy to a second
//! thread lets it overlap with the instrumented program. Each recording
//! thread owns a ring of [`RING`] chunk buffers: it fills one, queues it and
//! fills the next, waiting only when that one is still queued. One process
//! wide FIFO of queued buffers keeps the file growing in order, so a
//! process that dies leaves a tape that is complete up to some block.
//!
//! The thread is started at the first full chunk (small recordings never
//! have it), runs no guest code, blocks every signal, and is a member of
//! the thread group, so `exit_group` and `execve` end it — after
//! [`drain`] has waited for the queue to empty. A guest thread that leaves
//! with `exit` while the writer is the only other thread ends the process
//! as the kernel would have (`crate::syscall`). `DGAD_TAPE_WRITER=0` writes
//! every chunk from the recording thread instead. Decision 13 in
//! `docs/decisions.md`.

use super::{recorder, ThreadTape, CHUNK};
use crate::lock::Lock;
use crate::sys;
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// Chunk buffers per recording thread: one being filled, the rest queued.
pub const RING: usize = 4;
/// Bytes of one chunk buffer.
pub const BUFFER_BYTES: usize = (CHUNK * 32) as usize;

/// A recording thread's chunk buffers and what is queued of them. Lives in
/// the thread context (never unmapped), so the writer may read it after the
/// thread is gone.
#[repr(C)]
#[derive(Debug, Default)]
pub struct TapeRing {
    /// Buffer addresses (0 until the thread's first block).
    pub bufs: [AtomicU64; RING],
    /// Per buffer: [`FREE`], [`QUEUED`] or [`AWAITED`].
    busy: [AtomicU32; RING],
    /// Per queued buffer: address, length and file offset of the blocks.
    ptr: [AtomicU64; RING],
    len: [AtomicU64; RING],
    off: [AtomicU64; RING],
    /// The buffer `ThreadTape::buf` points into.
    cur: AtomicU32,
    /// A buffer of `compact::MAX_PIECE_BYTES` where the thread encodes the
    /// compact pieces of the chunks it writes itself (0 until then).
    scratch: AtomicU64,
}

impl TapeRing {
    /// Maps the ring's buffers (untouched pages cost nothing) and returns
    /// the first, or `None` if the kernel refuses.
    pub fn map(&self) -> Option<u64> {
        let base = sys::map_anon(
            BUFFER_BYTES * RING,
            libc::PROT_READ | libc::PROT_WRITE,
            0,
            false,
        )?;
        for (i, b) in self.bufs.iter().enumerate() {
            b.store(base + (i * BUFFER_BYTES) as u64, Ordering::Relaxed);
        }
        self.cur.store(0, Ordering::Relaxed);
        Some(base)
    }

    /// The thread's own buffer for encoding compact pieces, mapped on
    /// first use; `None` if the kernel refuses.
    pub fn scratch(&self) -> Option<u64> {
        let s = self.scratch.load(Ordering::Relaxed);
        if s != 0 {
            return Some(s);
        }
        let s = super::stream::scratch().ok()?;
        self.scratch.store(s, Ordering::Relaxed);
        Some(s)
    }

    /// Whether the writer holds none of the buffers.
    pub fn idle(&self) -> bool {
        self.busy.iter().all(|b| b.load(Ordering::Acquire) == FREE)
    }

    /// The lowest tape offset of a buffer still queued, if any, leaving out
    /// the one whose write failed at offset `failed` (written up to there).
    pub fn lowest_queued(&self, failed: u64) -> Option<u64> {
        (0..RING)
            .filter(|&i| self.busy[i].load(Ordering::Acquire) != FREE)
            .map(|i| {
                let off = self.off[i].load(Ordering::Relaxed);
                let end = off + self.len[i].load(Ordering::Relaxed);
                if (off..=end).contains(&failed) {
                    failed
                } else {
                    off
                }
            })
            .min()
    }

    /// Forgets what was queued (in a child after `fork`, where the parent's
    /// writer writes those buffers).
    pub fn forget_queued(&self) {
        for b in &self.busy {
            b.store(FREE, Ordering::Relaxed);
        }
    }

    /// The blocks queued in buffer `i`.
    fn queued(&self, i: usize) -> &[u8] {
        // SAFETY: a queued buffer's [ptr, ptr+len) lies in its mapping,
        // which is never unmapped; its owner does not touch it while it is
        // queued.
        unsafe {
            core::slice::from_raw_parts(
                self.ptr[i].load(Ordering::Relaxed) as *const u8,
                self.len[i].load(Ordering::Relaxed) as usize,
            )
        }
    }

    /// Writes the queued buffers from the calling thread with `store`
    /// (bytes, tape offset), oldest first (signal context: the process is
    /// about to die and the writer may not get to them; writing the same
    /// bytes twice is harmless).
    pub fn write_queued_in_signal(&self, store: impl Fn(&[u8], u64)) {
        let cur = self.cur.load(Ordering::Relaxed) as usize;
        for k in 1..=RING {
            let i = (cur + k) % RING;
            if self.busy[i].load(Ordering::Acquire) != FREE {
                store(self.queued(i), self.off[i].load(Ordering::Relaxed));
            }
        }
    }
}

/// Buffer states.
const FREE: u32 = 0;
const QUEUED: u32 = 1;
/// Queued, and the owner sleeps until it is free.
const AWAITED: u32 = 2;

/// Polls before sleeping on a futex: waking a sleeping thread costs more
/// than the writer takes for a chunk.
const SPINS: u32 = 2_000;

const NOT_STARTED: u32 = 0;
const STARTING: u32 = 1;
const RUNNING: u32 = 2;
const UNAVAILABLE: u32 = 3;

static STATE: AtomicU32 = AtomicU32::new(NOT_STARTED);
/// The process whose thread the writer is (a `vfork` child shares our
/// memory but not our threads).
static WRITER_PID: AtomicI32 = AtomicI32::new(0);

/// Capacity of the queue.
const SLOTS: usize = 256;
/// Queued buffers: the ring's address with the buffer number in the low
/// bits. `HEAD` counts entries added, `TAIL` entries written.
static QUEUE: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static HEAD: AtomicU32 = AtomicU32::new(0);
static TAIL: AtomicU32 = AtomicU32::new(0);
/// Set while the writer sleeps on `HEAD`.
static WRITER_SLEEPS: AtomicU32 = AtomicU32::new(0);
/// Threads sleeping on `TAIL` (queue full, or draining).
static TAIL_WAITERS: AtomicU32 = AtomicU32::new(0);
/// Serialises producers.
static PRODUCERS: Lock<()> = Lock::new(());

/// Bytes of the writer's stack.
const STACK_BYTES: usize = 256 * 1024;

/// Whether this process's chunks go to the writer thread (starting it on
/// first use).
fn available() -> bool {
    loop {
        match STATE.load(Ordering::Acquire) {
            RUNNING => return WRITER_PID.load(Ordering::Relaxed) == sys::getpid(),
            UNAVAILABLE => return false,
            STARTING => sys::sched_yield(),
            _ => {
                if STATE
                    .compare_exchange(NOT_STARTED, STARTING, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    let started = crate::init::config().tape_writer && spawn();
                    WRITER_PID.store(sys::getpid(), Ordering::Relaxed);
                    let state = if started { RUNNING } else { UNAVAILABLE };
                    STATE.store(state, Ordering::Release);
                    return started;
                }
            }
        }
    }
}

/// Whether the writer thread runs in this process.
pub fn running() -> bool {
    STATE.load(Ordering::Acquire) == RUNNING && WRITER_PID.load(Ordering::Relaxed) == sys::getpid()
}

/// Queues the thread's pending blocks and moves it to its next buffer.
/// Returns false when there is no writer, or when the tape is a compact
/// stream and the writer is behind (the thread's next buffer still
/// queued): the caller then writes them itself and goes on in the same
/// buffer — encoding its chunk on its own core rather than waiting for the
/// writer to encode the ones before it.
pub fn hand_off(tape: &mut ThreadTape, ring: &TapeRing) -> bool {
    if !tape.has_unflushed() {
        return true;
    }
    if !available() {
        return false;
    }
    let cur = ring.cur.load(Ordering::Relaxed) as usize;
    let behind = ring.busy[(cur + 1) % RING].load(Ordering::Acquire) != FREE;
    if behind && recorder().is_some_and(|r| r.encodes()) {
        return false;
    }
    let (bytes, offset) = tape.take_unflushed();
    ring.ptr[cur].store(bytes.as_ptr() as u64, Ordering::Relaxed);
    ring.len[cur].store(bytes.len() as u64, Ordering::Relaxed);
    ring.off[cur].store(offset, Ordering::Relaxed);
    ring.busy[cur].store(QUEUED, Ordering::Release);
    submit(ring as *const TapeRing as u64 | cur as u64);
    let next = (cur + 1) % RING;
    let busy = &ring.busy[next];
    let mut spins = 0;
    while busy.load(Ordering::Acquire) != FREE {
        if spins < SPINS {
            spins += 1;
            core::hint::spin_loop();
        } else if busy
            .compare_exchange(QUEUED, AWAITED, Ordering::AcqRel, Ordering::Acquire)
            .map_or_else(|s| s == AWAITED, |_| true)
        {
            sys::futex_wait(busy, AWAITED);
        }
    }
    ring.cur.store(next as u32, Ordering::Relaxed);
    tape.buf = ring.bufs[next].load(Ordering::Relaxed);
    true
}

fn submit(entry: u64) {
    let _g = PRODUCERS.lock();
    loop {
        let head = HEAD.load(Ordering::Relaxed);
        let tail = TAIL.load(Ordering::Acquire);
        if head.wrapping_sub(tail) < SLOTS as u32 {
            QUEUE[head as usize % SLOTS].store(entry, Ordering::Relaxed);
            HEAD.store(head.wrapping_add(1), Ordering::SeqCst);
            if WRITER_SLEEPS.swap(0, Ordering::SeqCst) != 0 {
                sys::futex_wake(&HEAD, 1);
            }
            return;
        }
        wait_tail(tail);
    }
}

/// Sleeps until the writer has moved `TAIL` past `tail`.
fn wait_tail(tail: u32) {
    TAIL_WAITERS.fetch_add(1, Ordering::SeqCst);
    if TAIL.load(Ordering::SeqCst) == tail {
        sys::futex_wait(&TAIL, tail);
    }
    TAIL_WAITERS.fetch_sub(1, Ordering::SeqCst);
}

/// Waits until everything queued so far is in the file (before
/// `exit_group`, `execve` or writing the current chunks at exit); what
/// other threads queue meanwhile is not waited for, so a thread that keeps
/// recording cannot hold the exit up. Normal context only.
pub fn drain() {
    if !running() {
        return;
    }
    let head = HEAD.load(Ordering::Acquire);
    loop {
        let tail = TAIL.load(Ordering::Acquire);
        // Entries written since the snapshot, modulo the counter's wrap.
        if head.wrapping_sub(tail) as i32 <= 0 {
            return;
        }
        wait_tail(tail);
    }
}

/// Holds producers off across `fork`, so the child inherits a consistent
/// queue; call [`after_fork_child`] in the child.
pub fn fork_lock() -> crate::lock::Guard<'static, ()> {
    PRODUCERS.lock()
}

/// In a child after `fork`: the writer thread did not come along; the
/// parent's writes what was queued. The child starts its own if it needs
/// one.
pub fn after_fork_child() {
    HEAD.store(0, Ordering::Relaxed);
    TAIL.store(0, Ordering::Relaxed);
    STATE.store(NOT_STARTED, Ordering::Release);
}

/// The writer's loop: write queued buffers in order, forever.
extern "C" fn writer_main() -> ! {
    // %gs still holds the creating thread's context; nothing here may use it.
    // SAFETY: ARCH_SET_GS with 0 only changes this thread's gs base.
    unsafe { sys::syscall3(libc::SYS_arch_prctl, 0x1001, 0, 0) };
    let rec = recorder().expect("the writer runs only when recording");
    // Compact pieces are encoded here, outside the stream's lock, while a
    // recording thread may be appending its own (0: under the lock).
    let scratch = if rec.encodes() {
        super::stream::scratch().unwrap_or(0)
    } else {
        0
    };
    let mut idle = 0;
    loop {
        let tail = TAIL.load(Ordering::Relaxed);
        let head = HEAD.load(Ordering::Acquire);
        if tail == head {
            if idle < SPINS {
                idle += 1;
                core::hint::spin_loop();
                continue;
            }
            WRITER_SLEEPS.store(1, Ordering::SeqCst);
            if HEAD.load(Ordering::SeqCst) == head {
                sys::futex_wait(&HEAD, head);
            }
            WRITER_SLEEPS.store(0, Ordering::SeqCst);
            continue;
        }
        idle = 0;
        let entry = QUEUE[tail as usize % SLOTS].load(Ordering::Relaxed);
        // SAFETY: entries are addresses of rings in thread contexts, which
        // are never unmapped, with the buffer number in the low bits
        // (rings are 8-aligned and RING ≤ 8).
        let ring = unsafe { &*((entry & !7) as *const TapeRing) };
        let i = (entry & 7) as usize;
        rec.write_tape(ring.queued(i), ring.off[i].load(Ordering::Relaxed), scratch);
        crate::stats::STATS
            .writer_chunks
            .fetch_add(1, Ordering::Relaxed);
        if ring.busy[i].swap(FREE, Ordering::AcqRel) == AWAITED {
            sys::futex_wake(&ring.busy[i], 1);
        }
        TAIL.store(tail.wrapping_add(1), Ordering::SeqCst);
        if TAIL_WAITERS.load(Ordering::SeqCst) != 0 {
            sys::futex_wake(&TAIL, u32::MAX);
        }
    }
}

/// Starts [`writer_main`] on a new thread of this thread group, with every
/// signal blocked so that the guest's signals go to the guest's threads.
fn spawn() -> bool {
    let flags = (libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM) as u64;
    sys::spawn_runtime_task(flags, STACK_BYTES, writer_main) > 0
}
