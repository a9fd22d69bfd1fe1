//! The reverse sweep with its bars in a window of recent indices.
//!
//! A reverse sweep needs, at block `i`, the bars of `i` and of its
//! operands, which on recorded tapes lie a few blocks to a few hundred
//! thousand blocks below `i`. Keeping one bar per index of the whole tape
//! costs fresh memory the kernel must clear (246 MB for the 30.8 M blocks
//! of the Burgers benchmark, most of `dg-eval`'s time there), although the
//! bars above `i` are dead once `i` is reached. So the bars live in a ring
//! of `W` slots (a power of two), slot `x mod W` for index `x`, which holds
//! the indices `i + 1 − W ..= i` while block `i` is swept. The slot of `i`
//! is cleared once its bar is used, ready for `i − W`.
//!
//! A contribution to an operand whose slot is not free yet (an index `W` or
//! more below `i`) is kept aside, in a bucket of `B = W/4` indices, in the
//! order it is made. When the sweep reaches `bB + W − 1`, the slots of bucket
//! `b` have all been freed and none of its indices has received a contribution
//! in the ring yet: the bucket is added in, in its order, and from then on its
//! indices are updated in the ring. Seeds are kept aside the same way, ahead of
//! every contribution. The bars read (the inputs') are taken as the sweep
//! passes them. Each bar thus receives the same additions in the same order as
//! in a full array: the results are bit-identical to [`crate::reverse_sweep`]'s
//! (but for which NaN a sum of two NaNs is: the compiler may swap the operands
//! of an addition, in either loop). Should the contributions kept aside grow
//! large (a tape whose operands lie far apart), the sweep moves to a full array
//! for the rest.
//!
//! [`crate::evaluate`] takes this sweep when full arrays would leave fewer
//! lanes or threads within its memory budget: it costs about 15 % more time
//! per block on a block tape (masked indices, a slot cleared per block, a
//! comparison per operand), so where memory is plentiful the full array is
//! faster.

use tape_format::{Block, Layout, Tape};

use crate::derivative_memory::DerivativeMemory;
use crate::evaluate::EvalError;
use crate::sweep::{
    compact_backward, contribution, prefetch, reverse_step, PREFETCH_DISTANCE, TAPE_DISTANCE,
};

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
    /// (index, row of the result), by index from the highest.
    reads: Vec<(u64, usize)>,
    at: usize,
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
    let mut reads: Vec<(u64, usize)> = read.iter().copied().zip(0..).collect();
    reads.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    assert!(
        reads.first().map_or(true, |r| r.0 < blocks),
        "read index beyond the tape"
    );
    let mut s = Sweep {
        tape,
        ring: ring.as_mut_ptr(),
        mask: w - 1,
        bucket,
        // Every slot is free at the start: the indices from `blocks − W`
        // up own theirs (from a bucket boundary, so buckets enter whole).
        owned: blocks
            .saturating_sub(w as u64)
            .next_multiple_of(bucket as u64),
        buckets: Vec::new(),
        kept: 0,
        kept_limit: (w / 4).max(1),
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
    // What a step needs on every block, kept in registers: copies of the
    // sweep's fields (the ring is written through a raw pointer, so the
    // compiler could not keep the fields themselves there).
    let (ring, mask) = (s.ring, s.mask);
    let (mut owned, mut event) = s.marks(blocks as usize);
    // Prefetches go to the ring.
    let prefetch_bars = |b: &Block| {
        prefetch(ring, b.index1 & mask as u64);
        prefetch(ring, b.index2 & mask as u64);
    };
    // After a move to a full array (at the block given): the array.
    let mut full: Option<(DerivativeMemory, usize)> = None;
    match tape.layout() {
        Layout::Blocks(blocks) => {
            for i in (1..blocks.len()).rev() {
                prefetch(blocks.as_ptr(), i.wrapping_sub(TAPE_DISTANCE) as u64);
                prefetch_bars(&blocks[i.saturating_sub(PREFETCH_DISTANCE)]);
                let moved = window_step(&mut s, ring, mask, &mut owned, &mut event, i, &blocks[i])?;
                if let Some(memory) = moved {
                    let len = i;
                    let bars = full.insert((memory, len)).0.view::<L>(len).as_mut_ptr();
                    for i in (1..i).rev() {
                        full_step(tape, bars, len, i, &blocks[i])?;
                    }
                    break;
                }
            }
        }
        Layout::Compact(c) => {
            // Every index is visited: its slot is freed for the index W
            // below, and a bar read there is taken.
            let (mut bars, mut len): (*mut [f64; L], usize) = (core::ptr::null_mut(), 0);
            compact_backward!(c, blocks, true, |b| { prefetch_bars(b) }, |i, b| {
                if bars.is_null() {
                    let moved = window_step(&mut s, ring, mask, &mut owned, &mut event, i, b)?;
                    if let Some(memory) = moved {
                        len = i;
                        bars = full.insert((memory, len)).0.view::<L>(len).as_mut_ptr();
                    }
                } else {
                    full_step(tape, bars, len, i, b)?;
                }
            });
        }
    }
    if let Some((mut memory, len)) = full {
        // The bars still to read are below the move.
        let bars = memory.view::<L>(len);
        for &(index, row) in &s.reads[s.at..] {
            // Index 0 took the passive operands' contributions there.
            if index != 0 {
                s.out[row] = bars[index as usize];
            }
        }
    }
    // Bars of index 0 (passive) are zero, as `out` starts.
    Ok(s.out)
}

impl<const L: usize> Sweep<'_, L> {
    /// For the blocks below `i`: the lowest index owning its slot, and
    /// the next index (from the top) where a bucket enters or a bar is
    /// read (0 for none: index 0 is never swept).
    fn marks(&self, i: usize) -> (u64, u64) {
        let w = self.mask + 1;
        // The highest index below `i` where a bucket enters: `kB − 1` with
        // `kB ≥ W`.
        let entry = (i / self.bucket * self.bucket).checked_sub(1);
        let entry = entry
            .filter(|&e| e + 1 >= w && e < i)
            .map_or(0, |e| e as u64);
        let read = self.reads.get(self.at).map_or(0, |r| r.0);
        (self.owned, entry.max(read))
    }

    /// At index `i`, before its block: a bucket enters, bars are read.
    #[cold]
    fn event(&mut self, i: usize) {
        let w = self.mask + 1;
        if (i + 1) % self.bucket == 0 && i + 1 >= w {
            self.enter((i + 1 - w) / self.bucket);
        }
        while let Some(&(index, row)) = self.reads.get(self.at) {
            if index != i as u64 {
                break;
            }
            // SAFETY: the ring holds mask + 1 slots and the index is masked.
            self.out[row] = unsafe { self.ring.add(i & self.mask).read() };
            self.at += 1;
        }
    }

    /// Adds `value` to the bar of `j` now (its slot is its own) or when its
    /// bucket enters (seeds, before the sweep).
    fn add(&mut self, j: u64, value: [f64; L]) {
        if j >= self.owned {
            ring_add(self.ring, self.mask, j, value);
        } else {
            let b = j as usize / self.bucket;
            if self.buckets.len() <= b {
                self.buckets.resize_with(b + 1, Vec::new);
            }
            self.buckets[b].push((j, value));
            self.kept += 1;
        }
    }

    /// A contribution to `j`, below the owned slots, kept in its bucket;
    /// true if too many are kept now.
    #[cold]
    fn keep(&mut self, j: u64, value: [f64; L]) -> bool {
        // Adding -0.0 changes no bar: only real additions are kept.
        if value.iter().any(|v| v.to_bits() != (-0.0f64).to_bits()) {
            self.add(j, value);
        }
        self.kept > self.kept_limit
    }

    /// Bucket `b`'s slots are free (its indices are `W` or less below the
    /// next block): its additions go in, in their order, and its indices
    /// own their slots from now on.
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
                ring_add(self.ring, self.mask, j, value);
            }
        }
    }

    /// A full array of the indices below `i` (swept last): the slots of
    /// the indices from `owned` (their own, as they are at most `W` below
    /// `i`), then the additions kept, in their order.
    #[cold]
    fn go_full(&mut self, i: usize) -> Result<DerivativeMemory, EvalError> {
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
        Ok(memory)
    }
}

/// Sweeps block `i` of `s`, whose ring is at `ring` (`mask + 1` slots),
/// with copies of its hot fields in `owned` and `event` (the ring is
/// written through a raw pointer, so the compiler keeps no field of `s`
/// in a register across a write; locals it does); returns the full array
/// the sweep moved to, if it did.
#[inline(always)]
fn window_step<const L: usize>(
    s: &mut Sweep<'_, L>,
    ring: *mut [f64; L],
    mask: usize,
    owned: &mut u64,
    event: &mut u64,
    i: usize,
    block: &Block,
) -> Result<Option<DerivativeMemory>, EvalError> {
    if block.max_operand() >= i as u64 {
        return Err(s.tape.operand_error(i as u64, block.max_operand()).into());
    }
    if i as u64 == *event {
        s.event(i);
        (*owned, *event) = s.marks(i);
    }
    // SAFETY: the ring holds mask + 1 slots; the index is masked.
    let bar_i = unsafe {
        let slot = ring.add(i & mask);
        let bar = slot.read();
        slot.write([0.0; L]);
        bar
    };
    // The two operands written out: an array of them would be built on
    // the stack on every block.
    let mut c1 = [0.0; L];
    let mut c2 = [0.0; L];
    for k in 0..L {
        c1[k] = contribution(block.partial1, bar_i[k]);
        c2[k] = contribution(block.partial2, bar_i[k]);
    }
    let mut over = false;
    if block.index1 >= *owned {
        ring_add(ring, mask, block.index1, c1);
    } else if block.index1 != 0 {
        over |= s.keep(block.index1, c1);
    }
    if block.index2 >= *owned {
        ring_add(ring, mask, block.index2, c2);
    } else if block.index2 != 0 {
        over |= s.keep(block.index2, c2);
    }
    if over {
        return s.go_full(i).map(Some);
    }
    Ok(None)
}

/// The full array's step for block `i`, after the move: `bars` holds
/// `len` bar vectors (the indices below the block the move followed).
fn full_step<const L: usize>(
    tape: &Tape,
    bars: *mut [f64; L],
    len: usize,
    i: usize,
    block: &Block,
) -> Result<(), tape_format::FormatError> {
    assert!(i < len, "the full array holds every index still to sweep");
    // SAFETY: `bars` holds `len > i` vectors (asserted), as `reverse_step`
    // needs.
    unsafe { reverse_step(tape, bars, i, block) }
}

/// Adds `value` to the slot of `j` in the ring at `ring` of `mask + 1`
/// slots.
#[inline(always)]
fn ring_add<const L: usize>(ring: *mut [f64; L], mask: usize, j: u64, value: [f64; L]) {
    // SAFETY: the ring holds mask + 1 slots and the index is masked.
    unsafe {
        let slot = ring.add(j as usize & mask);
        let mut bar = slot.read();
        for k in 0..L {
            bar[k] += value[k];
        }
        slot.write(bar);
    }
}
