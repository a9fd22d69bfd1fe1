//! The reverse sweep with its bars in a window of recent indices.
//!
//! A reverse sweep needs, at block `i`, the bars of `i` and of its
//! operands, which on recorded tapes lie a few blocks to a few hundred
//! thousand blocks below `i`. Keeping one bar per index of the whole tape
//! costs fresh memory the kernel must clear (246 MB for the 30.8 M blocks
//! of the Burgers benchmark, most of `dg-eval`'s time there), although
//! the bars above `i` are dead once `i` is reached. So the bars live in a
//! ring of `W` slots (a power of two), slot `x mod W` for index `x`, which
//! holds the indices `i + 1 − W ..= i` while block `i` is swept. The slot
//! of `i` is cleared once its bar is used, ready for `i − W`.
//!
//! A contribution to an operand whose slot is not free yet (an index `W`
//! or more below `i`) is kept aside, in a bucket of `B = W/4` indices, in
//! the order it is made. When the sweep reaches `bB + W − 1`, the slots of
//! bucket `b` have all been freed and none of its indices has received a
//! contribution in the ring yet: the bucket is added in, in its order, and
//! from then on its indices are updated in the ring. Seeds are kept aside
//! the same way, ahead of every contribution. The bars read (the inputs') are taken as the sweep
//! passes them. Each bar thus receives the same additions in the same
//! order as in a full array: the results are bit-identical to
//! [`crate::reverse_sweep`]'s (but for which NaN a sum of two NaNs is: the
//! compiler may swap the operands of an addition, in either loop). Should the contributions kept aside grow
//! large (a tape whose operands lie far apart), the sweep moves to a full
//! array for the rest.

use tape_format::{Block, Layout, Tape};

use crate::derivative_memory::DerivativeMemory;
use crate::evaluate::EvalError;
use crate::sweep::{compact_backward, contribution, prefetch, PREFETCH_DISTANCE, TAPE_DISTANCE};

/// Slots of the window (per lane: 32 MiB): larger than the distance
/// between a value and its last use on the tapes measured (Burgers: about
/// 600,000 blocks), small enough to be cleared quickly.
pub const WINDOW: usize = 1 << 22;

/// Slots a window for a tape of `blocks` blocks takes: the tape's size
/// rounded up to a power of two, at most `window`.
pub fn window_len(blocks: u64, window: usize) -> usize {
    usize::try_from(blocks)
        .unwrap_or(usize::MAX)
        .max(1)
        .checked_next_power_of_two()
        .unwrap_or(window)
        .min(window)
}

/// The state of one windowed reverse sweep.
struct Sweep<'m, const L: usize> {
    tape: &'m Tape,
    /// The ring (while `full` is `None`).
    ring: *mut [f64; L],
    mask: usize,
    /// Indices per bucket (a power of two, at most the window).
    bucket: usize,
    /// The lowest index whose slot is its own: updates at or above it go
    /// to the ring, below it to its bucket.
    owned: u64,
    /// Additions kept aside, per bucket, in their order.
    buckets: Vec<Vec<(u64, [f64; L])>>,
    kept: usize,
    /// Additions kept aside beyond which the sweep moves to a full array:
    /// a quarter of the window's slots (each takes more than twice a
    /// slot's bytes).
    kept_limit: usize,
    /// The full array and its length, once the sweep moved to it.
    full: Option<(DerivativeMemory, usize)>,
    /// (index, row of the result), by index from the highest.
    reads: Vec<(u64, usize)>,
    at: usize,
    /// Index of the next bar to read (0: none left on the tape).
    next_read: u64,
    out: Vec<[f64; L]>,
}

/// Reverse sweep of `tape` from `seeds` (index, seed; seeds at one index
/// add up in this order) to the bars of `read` (in that order), with the
/// bars in `ring` (all zero; its length, a power of two, is the window).
/// The same bits as [`crate::reverse_sweep`] on a full array (NaN
/// payloads aside).
///
/// Fails at the first block (from the back) whose operand index is not
/// smaller than its own, or if the full array it may move to cannot be
/// allocated.
///
/// # Panics
/// If `ring.len()` is not a power of two, or an index is not on the tape.
pub fn reverse_sweep_window<const L: usize>(
    tape: &Tape,
    ring: &mut [[f64; L]],
    seeds: &[(u64, [f64; L])],
    read: &[u64],
) -> Result<Vec<[f64; L]>, EvalError> {
    let w = ring.len();
    assert!(w.is_power_of_two(), "a window of 2^k slots");
    let blocks = tape.block_count();
    let bucket = (w / 4).max(1);
    // Every slot is free at the start: the indices from `blocks − W` up
    // own theirs (from a bucket boundary, so that buckets enter whole).
    let owned = blocks
        .saturating_sub(w as u64)
        .next_multiple_of(bucket as u64);
    let mut reads: Vec<(u64, usize)> = read.iter().copied().zip(0..).collect();
    reads.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    assert!(
        reads.first().map_or(true, |r| r.0 < blocks),
        "read index beyond the tape"
    );
    // Prefetches go to the ring (harmlessly on after a move to a full
    // array).
    let (ring_at, mask) = (ring.as_ptr(), w as u64 - 1);
    let prefetch_bars = |b: &Block| {
        prefetch(ring_at, b.index1 & mask);
        prefetch(ring_at, b.index2 & mask);
    };
    let mut s = Sweep {
        tape,
        ring: ring.as_mut_ptr(),
        mask: w - 1,
        bucket,
        owned,
        buckets: Vec::new(),
        kept: 0,
        kept_limit: (w / 4).max(1),
        full: None,
        next_read: reads.first().map_or(0, |r| r.0),
        reads,
        at: 0,
        out: vec![[0.0; L]; read.len()],
    };
    for &(index, value) in seeds {
        assert!(index < blocks, "seed index {index} beyond the tape");
        if index != 0 {
            s.add(index, value);
        }
    }
    match tape.layout() {
        Layout::Blocks(blocks) => {
            for i in (1..blocks.len()).rev() {
                prefetch(blocks.as_ptr(), i.wrapping_sub(TAPE_DISTANCE) as u64);
                prefetch_bars(&blocks[i.saturating_sub(PREFETCH_DISTANCE)]);
                s.step(i, &blocks[i])?;
            }
        }
        Layout::Compact(c) => {
            // Every index is visited: its slot is freed for the index W
            // below, and a bar read there is taken.
            compact_backward(c, blocks, true, prefetch_bars, |i, b| s.step(i, b))?
        }
    }
    // Bars of index 0 (passive) are zero, as `out` starts.
    Ok(s.out)
}

impl<const L: usize> Sweep<'_, L> {
    /// Sweeps block `i`.
    #[inline(always)]
    fn step(&mut self, i: usize, block: &Block) -> Result<(), EvalError> {
        if block.max_operand() >= i as u64 {
            return Err(self
                .tape
                .operand_error(i as u64, block.max_operand())
                .into());
        }
        if self.full.is_some() {
            return self.full_step(i, block);
        }
        let w = self.mask + 1;
        if (i + 1) & (self.bucket - 1) == 0 && i + 1 >= w {
            self.enter((i + 1 - w) / self.bucket);
        }
        // SAFETY: the ring holds mask + 1 slots and every index is masked.
        let bar_i = unsafe {
            let slot = self.ring.add(i & self.mask);
            let bar = slot.read();
            slot.write([0.0; L]);
            bar
        };
        for (j, p) in [
            (block.index1, block.partial1),
            (block.index2, block.partial2),
        ] {
            let mut c = [0.0; L];
            for k in 0..L {
                c[k] = contribution(p, bar_i[k]);
            }
            if j >= self.owned {
                self.ring_add(j, c);
            } else if j != 0 {
                self.keep(j, c)?;
            }
        }
        if i as u64 == self.next_read {
            self.take_reads(i as u64, bar_i);
        }
        if self.kept > self.kept_limit {
            self.go_full(i)?;
        }
        Ok(())
    }

    /// Adds `value` to the bar of `j` in its slot.
    #[inline(always)]
    fn ring_add(&mut self, j: u64, value: [f64; L]) {
        // SAFETY: the ring holds mask + 1 slots and the index is masked.
        unsafe {
            let slot = self.ring.add(j as usize & self.mask);
            let mut bar = slot.read();
            for k in 0..L {
                bar[k] += value[k];
            }
            slot.write(bar);
        }
    }

    /// Adds `value` to the bar of `j` now (its slot is its own) or when its
    /// bucket enters (seeds, before the sweep).
    fn add(&mut self, j: u64, value: [f64; L]) {
        if j >= self.owned {
            self.ring_add(j, value);
        } else {
            let b = j as usize / self.bucket;
            if self.buckets.len() <= b {
                self.buckets.resize_with(b + 1, Vec::new);
            }
            self.buckets[b].push((j, value));
            self.kept += 1;
        }
    }

    /// A contribution to `j`, below the owned slots, kept in its bucket.
    #[cold]
    fn keep(&mut self, j: u64, value: [f64; L]) -> Result<(), EvalError> {
        // Adding -0.0 changes no bar: only real additions are kept.
        if value.iter().all(|v| v.to_bits() == (-0.0f64).to_bits()) {
            return Ok(());
        }
        self.add(j, value);
        Ok(())
    }

    /// Bucket `b`'s slots are free (its indices are `W` or less below the
    /// next block): its additions go in, in their order, and its indices
    /// own their slots from now on.
    #[cold]
    fn enter(&mut self, b: usize) {
        let start = (b * self.bucket) as u64;
        if start >= self.owned {
            return;
        }
        self.owned = start;
        if let Some(bucket) = self.buckets.get_mut(b) {
            let kept = core::mem::take(bucket);
            self.kept -= kept.len();
            for (j, value) in kept {
                self.ring_add(j, value);
            }
        }
    }

    /// Records `bar` as the result of every read of index `i`.
    fn take_reads(&mut self, i: u64, bar: [f64; L]) {
        while let Some(&(index, row)) = self.reads.get(self.at) {
            if index != i {
                break;
            }
            self.out[row] = bar;
            self.at += 1;
        }
        self.next_read = self.reads.get(self.at).map_or(0, |r| r.0);
    }

    /// Moves the bars into a full array of the indices below `i` (swept
    /// last): the slots of the indices from `owned` (their own, as they are
    /// at most `W` below `i`), then the additions kept, in their order.
    #[cold]
    fn go_full(&mut self, i: usize) -> Result<(), EvalError> {
        let bytes = DerivativeMemory::bytes_for(i as u64, L);
        let mut memory =
            DerivativeMemory::new(bytes).map_err(|error| EvalError::Alloc { bytes, error })?;
        let full = memory.zeroed::<L>(i);
        for (x, bar) in full.iter_mut().enumerate().skip(self.owned as usize) {
            // SAFETY: the ring holds mask + 1 slots and the index is masked.
            *bar = unsafe { self.ring.add(x & self.mask).read() };
        }
        for bucket in core::mem::take(&mut self.buckets) {
            for (j, value) in bucket {
                for k in 0..L {
                    full[j as usize][k] += value[k];
                }
            }
        }
        self.kept = 0;
        self.full = Some((memory, i));
        Ok(())
    }

    /// [`Sweep::step`] on the full array.
    #[cold]
    fn full_step(&mut self, i: usize, block: &Block) -> Result<(), EvalError> {
        let Some((memory, len)) = &mut self.full else {
            unreachable!("called after go_full");
        };
        let bars = memory.view::<L>(*len);
        let bar_i = bars[i];
        for (j, p) in [
            (block.index1, block.partial1),
            (block.index2, block.partial2),
        ] {
            let slot = &mut bars[j as usize];
            for k in 0..L {
                slot[k] += contribution(p, bar_i[k]);
            }
        }
        if i as u64 == self.next_read {
            self.take_reads(i as u64, bar_i);
        }
        Ok(())
    }
}
