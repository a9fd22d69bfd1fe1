//! Memory for the derivative vector of a sweep: one `[f64; L]` per tape
//! index, in anonymous memory backed by transparent huge pages where the
//! kernel allows, reused across the passes a thread runs.
//!
//! A tape of 220 M blocks needs 1.7 GB of bars per lane. Fresh 4 KiB pages
//! arrive at ~2.5 GB/s (one page fault each), huge pages at ~11 GB/s and a
//! `memset` of touched memory at tens of GB/s, so the memory asks for huge
//! pages, is faulted in before the first sweep, and is cleared, not
//! remapped, between passes.

use std::io;

use memmap2::{Advice, MmapMut};

/// Zero-initialised memory that can be viewed as `[[f64; L]]` for any `L`.
pub struct DerivativeMemory {
    map: MmapMut,
    /// Bytes from the start that may be nonzero.
    dirty: usize,
}

impl DerivativeMemory {
    /// Bytes needed for `len` entries of `lanes` lanes.
    pub fn bytes_for(len: u64, lanes: usize) -> u64 {
        len.saturating_mul(lanes as u64).saturating_mul(8)
    }

    /// Maps `bytes` of zeros and touches every page once, so that the first
    /// sweep runs without page faults.
    pub fn new(bytes: u64) -> io::Result<DerivativeMemory> {
        let bytes = usize::try_from(bytes).map_err(|_| {
            io::Error::new(io::ErrorKind::OutOfMemory, "derivative vector too large")
        })?;
        // A zero-length anonymous mapping is an error; keep at least a page.
        let mut map = MmapMut::map_anon(bytes.max(4096))?;
        // Huge pages are an optimisation; where they are refused, 4 KiB
        // pages work the same, only slower to fault in.
        let _ = map.advise(Advice::HugePage);
        // Indexing, not `iter_mut().step_by`, which walks every byte.
        for offset in (0..map.len()).step_by(4096) {
            map[offset] = 0;
        }
        Ok(DerivativeMemory { map, dirty: 0 })
    }

    /// The first `len` entries of `L` lanes as they are (after
    /// [`DerivativeMemory::zeroed`] with at least `len`).
    ///
    /// # Panics
    /// If they are not within what `zeroed` gave out.
    pub fn view<const L: usize>(&mut self, len: usize) -> &mut [[f64; L]] {
        assert!(
            len * L * 8 <= self.dirty,
            "only memory handed out is viewed"
        );
        // SAFETY: as in `zeroed`: aligned, in bounds (asserted), any bits
        // are a valid f64, and the slice borrows `self` uniquely.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<[f64; L]>(), len) }
    }

    /// The first `len` entries of `L` lanes, all zero.
    ///
    /// # Panics
    /// If they do not fit in the memory.
    pub fn zeroed<const L: usize>(&mut self, len: usize) -> &mut [[f64; L]] {
        let bytes = len * L * 8;
        assert!(bytes <= self.map.len(), "derivative memory too small");
        self.map[..self.dirty.min(bytes)].fill(0);
        self.dirty = self.dirty.max(bytes);
        // SAFETY: the mapping is page-aligned (so aligned for f64) and holds
        // at least `len * L * 8` bytes (asserted); all-zero bits are a valid
        // f64; the slice borrows `self` uniquely, so it is the only access
        // to the mapping while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<[f64; L]>(), len) }
    }
}
