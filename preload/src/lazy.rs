//! Instrumentation that starts when there is something to differentiate
//! (decision 53, `DGAD_LAZY`).
//!
//! A program's data become active only through its client requests: every
//! shadow starts at zero, and nothing but a request (`DG_SET_DOTVALUE`,
//! `DG_INPUTF`'s `NEW_INDEX`, …) makes one non-zero. Until the first such
//! request, instrumented code would only copy zeros onto zeros, so the
//! program runs from plain translations (null mode's, cheap to make and to
//! run): the loader's and libc's start-up, C++ static constructors, an
//! interpreter's imports. At the first request that may make data active
//! ([`crate::tool::Tool::may_activate`]) the runtime drops every
//! translation, and from then on translates with the tool's
//! instrumentation; the request's thread goes on from a new translation of
//! the instruction after the request, so nothing of the old block runs
//! after the data became active.
//!
//! Only one thread may run plain translations at that moment, or one of
//! them could go on in an old block over data the request just made
//! active: the runtime switches before a second thread is made (`clone`
//! with `CLONE_VM`, which starts the child from a new translation while
//! the parent finishes the block of the system call, over data still all
//! passive), and never starts lazily where threads exist at start-up
//! (adopted ones) or a debugger can make data active (`--vgdb-error`,
//! whose monitor commands set dot values and mark inputs).

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether translations are instrumented (always, unless the process
/// started lazily and nothing activated it yet).
static ACTIVE: AtomicBool = AtomicBool::new(true);

/// Blocks dropped when instrumentation began (`DGAD_STATS`).
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// What began the instrumentation, for `DGAD_STATS` (0: it was on from the
/// start or never began).
static WHY: AtomicU64 = AtomicU64::new(0);

/// [`WHY`]: a client request.
const BY_REQUEST: u64 = 1;
/// [`WHY`]: a second thread.
const BY_THREAD: u64 = 2;

/// Starts the process without instrumentation (at start-up, before any
/// translation, on its only thread).
pub fn start_lazily() {
    ACTIVE.store(false, Ordering::Relaxed);
}

/// Whether new translations get the tool's instrumentation.
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// A guest thread made a client request, not answered yet, whose code
/// `code` reads (`None` when unreadable; read only while the process runs
/// plain translations): begins the instrumentation if the request may make
/// data active. Returns whether it began now (the thread must then not go
/// on in its block).
pub fn before_request(code: impl FnOnce() -> Option<u64>) -> bool {
    if active() || !code().is_some_and(|c| crate::tool::tool().may_activate(c)) {
        return false;
    }
    activate(BY_REQUEST);
    true
}

/// The process is about to get a second thread (or a `vfork` child, which
/// shares its memory): begins the instrumentation first.
pub fn before_thread() {
    if !active() {
        activate(BY_THREAD);
    }
}

/// Drops every translation made so far (plain ones) and every thread's
/// lookup-table entries, and makes the next translations instrumented.
fn activate(why: u64) {
    ACTIVE.store(true, Ordering::SeqCst);
    WHY.store(why, Ordering::Relaxed);
    let dropped = crate::cache::CACHE
        .lock()
        .as_mut()
        .map_or(0, |c| c.forget_all());
    DROPPED.store(dropped, Ordering::Relaxed);
    crate::threads::for_each_context(|c| c.ibl_invalidate(0, u64::MAX));
}

/// `DGAD_STATS`' words on it: `None` when the process was instrumented
/// from the start.
pub fn stats_text() -> Option<String> {
    match WHY.load(Ordering::Relaxed) {
        0 if active() => None,
        0 => Some("no instrumentation (nothing made active)".into()),
        why => Some(format!(
            "instrumentation began at {} ({} plain blocks dropped)",
            if why == BY_REQUEST {
                "the first client request that may make data active"
            } else {
                "the program's second thread"
            },
            DROPPED.load(Ordering::Relaxed)
        )),
    }
}
