//! The runtime's mutex: a futex lock made of one atomic word and raw
//! system calls.
//!
//! General-purpose locks are unsafe here: `parking_lot`'s contended path keeps
//! per-thread data in TLS whose destructor registration calls the guest's
//! `calloc`, which deadlocks when the guest thread that entered the runtime
//! holds `malloc`'s lock. This lock uses no TLS and never allocates. It is
//! not reentrant and must not be taken in signal context.

use crate::sys;
use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicU32, Ordering};

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
const CONTENDED: u32 = 2;

/// A mutex protecting a `T`.
pub struct Lock<T> {
    state: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: access to `value` is serialised by `state`.
unsafe impl<T: Send> Sync for Lock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Lock<T> {}

/// Access to the protected value; unlocks when dropped.
pub struct Guard<'a, T> {
    lock: &'a Lock<T>,
}

impl<T> Lock<T> {
    /// An unlocked lock.
    pub const fn new(value: T) -> Self {
        Lock {
            state: AtomicU32::new(UNLOCKED),
            value: UnsafeCell::new(value),
        }
    }

    /// The lock if it is free now, without waiting (signal context).
    pub fn try_lock(&self) -> Option<Guard<'_, T>> {
        self.state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| Guard { lock: self })
    }

    /// Takes the lock, waiting for it.
    pub fn lock(&self) -> Guard<'_, T> {
        if self
            .state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        Guard { lock: self }
    }

    #[cold]
    fn lock_contended(&self) {
        for _ in 0..100 {
            core::hint::spin_loop();
            if self
                .state
                .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
        while self.state.swap(CONTENDED, Ordering::Acquire) != UNLOCKED {
            sys::futex_wait(&self.state, CONTENDED);
        }
    }

    fn unlock(&self) {
        if self.state.swap(UNLOCKED, Ordering::Release) == CONTENDED {
            sys::futex_wake(&self.state, 1);
        }
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` is unique.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock();
    }
}
