//! The two sweeps over a tape, for `L` directions at once (vector mode).
//!
//! These loops are the evaluator's hot path: one 32-byte block in, two
//! multiply-adds per lane out, bandwidth-bound. They check operand order as
//! they go (one predictable branch per block), which is also what makes the
//! unchecked adjoint accesses sound.
//!
//! Zero propagation follows Derivgrind's `Tapefile::evaluateBackward` and
//! `evaluateForward`: a zero bar (reverse) or a zero operand dot (forward)
//! contributes nothing, even when the partial is infinite or NaN, so a
//! singular partial of an operation that does not influence the result does
//! not poison it. A skipped contribution adds `-0.0`, the exact neutral
//! element of `+`, which keeps the loop free of data-dependent branches and
//! the results bit-identical to Derivgrind's.

use tape_format::compact::PIECE_ENTRIES;
use tape_format::{Block, CompactView, FormatError, Layout, Tape};

/// `partial * derivative`, or the neutral `-0.0` when `derivative` is zero.
#[inline(always)]
pub(crate) fn contribution(partial: f64, derivative: f64) -> f64 {
    if derivative != 0.0 {
        partial * derivative
    } else {
        -0.0
    }
}

/// Blocks of look-ahead for prefetching the derivatives a block will update
/// or read: far enough that most of a cache miss is hidden, near enough that
/// the lines are still in L1 when the sweep arrives (16 to 64 measure
/// within 5 % of each other with `examples/sweep_speed.rs`).
pub(crate) const PREFETCH_DISTANCE: usize = 32;

/// Blocks of look-ahead for prefetching the tape itself (4 KiB). The
/// hardware prefetcher alone leaves a sweep ~40 % slower than with this,
/// because it does not cross pages and the sweep's dependency chains keep
/// the out-of-order window from issuing tape loads early.
pub(crate) const TAPE_DISTANCE: usize = 128;

/// Asks for the cache line of `base[index]` without waiting for it.
/// `index` may be anything (it comes from a block not validated yet): the
/// address is computed with wrapping arithmetic, and a prefetch never faults.
#[inline(always)]
pub(crate) fn prefetch<T>(base: *const T, index: u64) {
    let address = base.wrapping_add(index as usize);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` has no architectural effect, for any address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Reverse sweep: with `bars[i]` holding the seeded bar values of index `i`
/// (one per lane), visits blocks from the last down to 1 and adds
/// `partial1 * bars[i]` to `bars[index1]` and `partial2 * bars[i]` to
/// `bars[index2]`. Afterwards `bars[x]` is the derivative of the seeded
/// combination of outputs with respect to the value of index `x`; `bars[0]`
/// (the passive index) is zero.
///
/// Fails, leaving `bars` partly swept, at the first block (from the back)
/// whose operand index is not smaller than its own.
///
/// # Panics
/// If `bars.len()` is not the tape's number of blocks.
pub fn reverse_sweep<const L: usize>(
    tape: &Tape,
    bars: &mut [[f64; L]],
) -> Result<(), FormatError> {
    assert_eq!(
        bars.len() as u64,
        tape.block_count(),
        "one bar vector per tape block"
    );
    let bar = bars.as_mut_ptr();
    match tape.layout() {
        Layout::Blocks(blocks) => {
            for i in (1..blocks.len()).rev() {
                prefetch(blocks.as_ptr(), i.wrapping_sub(TAPE_DISTANCE) as u64);
                let ahead = &blocks[i.saturating_sub(PREFETCH_DISTANCE)];
                prefetch(bar, ahead.index1);
                prefetch(bar, ahead.index2);
                // SAFETY: `i < blocks.len() == bars.len()`.
                unsafe { reverse_step(tape, bar, i, &blocks[i])? };
            }
        }
        Layout::Compact(c) => reverse_compact(tape, c, bar)?,
    }
    // Passive operands dumped their contributions here; a passive value has
    // no derivative.
    bars[0] = [0.0; L];
    Ok(())
}

/// The reverse sweep's update for block `i`.
///
/// # Safety
/// `bar` must point to at least `i + 1` bar vectors.
#[inline(always)]
pub(crate) unsafe fn reverse_step<const L: usize>(
    tape: &Tape,
    bar: *mut [f64; L],
    i: usize,
    block: &Block,
) -> Result<(), FormatError> {
    if block.max_operand() >= i as u64 {
        return Err(tape.operand_error(i as u64, block.max_operand()));
    }
    let (j, l) = (block.index1 as usize, block.index2 as usize);
    // SAFETY: `i` is in bounds (the caller's contract) and `j, l < i`
    // (checked just above), so all three pointers are in bounds. Each
    // access is a separate read or write through the raw pointer, never a
    // reference held across another, so `j == l` (x*x) is fine: the second
    // update reads what the first wrote, as in sequential code.
    unsafe {
        let bar_i = bar.add(i).read();
        let mut bar_j = bar.add(j).read();
        for k in 0..L {
            bar_j[k] += contribution(block.partial1, bar_i[k]);
        }
        bar.add(j).write(bar_j);
        let mut bar_l = bar.add(l).read();
        for k in 0..L {
            bar_l[k] += contribution(block.partial2, bar_i[k]);
        }
        bar.add(l).write(bar_l);
    }
    Ok(())
}

/// Entries decoded ahead of the reverse sweep over a compact tape, so the
/// bars they touch can be prefetched as the block sweep does.
pub(crate) const DECODE_AHEAD: usize = 32;

/// The reverse sweep over a compact tape.
fn reverse_compact<const L: usize>(
    tape: &Tape,
    c: CompactView<'_>,
    bar: *mut [f64; L],
) -> Result<(), FormatError> {
    // SAFETY: every own index is below `block_count() == bars.len()`.
    let step = |i, block: &Block| unsafe { reverse_step(tape, bar, i, block) };
    compact_backward!(
        c,
        tape.block_count(),
        false,
        |block| {
            prefetch(bar, block.index1);
            prefetch(bar, block.index2);
        },
        |i, block| { step(i, block)? }
    );
    Ok(())
}

/// Visits the entries of a compact tape `c` from the last down to index
/// 1, running `step` with each entry's index `i` and `block`: each is
/// decoded [`DECODE_AHEAD`] entries ahead of its step into a ring, and
/// `ahead` runs with it then (to prefetch what its step will touch). With
/// `gaps` true, the indices no piece covers (passive entries) below `top`
/// (the tape's block count) are visited as well, as zero blocks.
///
/// A macro, not a function taking closures: the step is expanded in
/// place, so the caller's locals it updates stay in registers (a closure
/// the compiler would not inline keeps them in memory, reloaded after each
/// write through the bars' raw pointer). `step` may use `?` and
/// `continue` nothing else; it runs in the caller's function.
macro_rules! compact_backward {
    ($c:expr, $top:expr, $gaps:expr, |$ab:ident| $ahead:block, |$i:ident, $sb:ident| $step:block) => {{
        let c: tape_format::CompactView<'_> = $c;
        let base = c.bytes.as_ptr();
        let mut ring = [(0usize, tape_format::Block::ZERO); $crate::sweep::DECODE_AHEAD];
        let mut queued = 0usize;
        let mut k = 0usize;
        // Queues `block` as entry `own`, running the step of the one it
        // replaces in the ring.
        macro_rules! feed {
            ($own:expr, $block:expr) => {{
                let own: u64 = $own;
                let block: tape_format::Block = $block;
                {
                    let $ab = &block;
                    $ahead
                }
                let slot = ring[k % $crate::sweep::DECODE_AHEAD];
                if queued == $crate::sweep::DECODE_AHEAD {
                    if slot.0 != 0 {
                        let ($i, $sb) = (slot.0, &slot.1);
                        $step
                    }
                } else {
                    queued += 1;
                }
                ring[k % $crate::sweep::DECODE_AHEAD] = (own as usize, block);
                k += 1;
            }};
        }
        // One past the highest index not fed yet.
        let mut next: u64 = $top;
        for p in c.pieces.iter().rev() {
            if $gaps {
                for g in (p.end()..next).rev() {
                    feed!(g, tape_format::Block::ZERO);
                }
            }
            next = p.first;
            let tags = &c.bytes[p.tags..p.payload];
            let mut at = p.payload + p.payload_len;
            for (n, &t) in tags.iter().enumerate().rev() {
                let own = p.first + n as u64;
                let l = &tape_format::compact::LAYOUTS[t as usize];
                at -= l.len as usize;
                // SAFETY: a parsed piece's payloads lie in the stream,
                // followed by its padding.
                feed!(own, unsafe {
                    tape_format::compact::decode_at(own, l, base.add(at))
                });
            }
        }
        if $gaps {
            for g in (1..next).rev() {
                feed!(g, tape_format::Block::ZERO);
            }
        }
        // The last `queued` entries, oldest first.
        for m in 0..queued {
            let slot =
                ring[(k + $crate::sweep::DECODE_AHEAD - queued + m) % $crate::sweep::DECODE_AHEAD];
            if slot.0 != 0 {
                let ($i, $sb) = (slot.0, &slot.1);
                $step
            }
        }
    }};
}
pub(crate) use compact_backward;

/// Forward sweep: with `dots[x]` holding the seeded dot values of the inputs
/// (zero elsewhere, and always at index 0), visits blocks from 1 to the last
/// and adds `partial1 * dots[index1] + partial2 * dots[index2]` to
/// `dots[i]`. Input blocks are all-zero, so inputs keep their seeds.
///
/// Fails, leaving `dots` partly swept, at the first block whose operand index
/// is not smaller than its own.
///
/// # Panics
/// If `dots.len()` is not the tape's number of blocks, or `dots[0]` is not zero.
pub fn forward_sweep<const L: usize>(
    tape: &Tape,
    dots: &mut [[f64; L]],
) -> Result<(), FormatError> {
    assert_eq!(
        dots.len() as u64,
        tape.block_count(),
        "one dot vector per tape block"
    );
    assert!(
        dots[0].iter().all(|d| *d == 0.0),
        "the passive index has no dot value"
    );
    let dot = dots.as_mut_ptr();
    match tape.layout() {
        Layout::Blocks(blocks) => {
            for (i, block) in blocks.iter().enumerate().skip(1) {
                prefetch(blocks.as_ptr(), (i + TAPE_DISTANCE) as u64);
                if let Some(ahead) = blocks.get(i + PREFETCH_DISTANCE) {
                    prefetch(dot, ahead.index1);
                    prefetch(dot, ahead.index2);
                }
                // SAFETY: `i < blocks.len() == dots.len()`.
                unsafe { forward_step(tape, dot, i, block)? };
            }
        }
        Layout::Compact(c) => {
            let mut buf = Vec::with_capacity(PIECE_ENTRIES);
            for p in c.pieces {
                buf.clear();
                buf.extend(p.entries(c.bytes));
                let first = p.first as usize;
                for (n, block) in buf.iter().enumerate() {
                    if let Some(ahead) = buf.get(n + PREFETCH_DISTANCE) {
                        prefetch(dot, ahead.index1);
                        prefetch(dot, ahead.index2);
                    }
                    if first + n != 0 {
                        // SAFETY: every own index is below `dots.len()`.
                        unsafe { forward_step(tape, dot, first + n, block)? };
                    }
                }
            }
        }
    }
    Ok(())
}

/// The forward sweep's update for block `i`.
///
/// # Safety
/// `dot` must point to at least `i + 1` dot vectors.
#[inline(always)]
unsafe fn forward_step<const L: usize>(
    tape: &Tape,
    dot: *mut [f64; L],
    i: usize,
    block: &Block,
) -> Result<(), FormatError> {
    if block.max_operand() >= i as u64 {
        return Err(tape.operand_error(i as u64, block.max_operand()));
    }
    let (j, l) = (block.index1 as usize, block.index2 as usize);
    // SAFETY: `i` is in bounds (the caller's contract) and `j, l < i`
    // (checked just above): all in bounds, and the operands are read before
    // `dot[i]` is written, through the raw pointer only.
    unsafe {
        let dot_j = dot.add(j).read();
        let dot_l = dot.add(l).read();
        let mut dot_i = dot.add(i).read();
        // Two separate additions, in this order, as Derivgrind does.
        for k in 0..L {
            dot_i[k] += contribution(block.partial1, dot_j[k]);
        }
        for k in 0..L {
            dot_i[k] += contribution(block.partial2, dot_l[k]);
        }
        dot.add(i).write(dot_i);
    }
    Ok(())
}
