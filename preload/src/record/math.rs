//! The record tool's side of the libm wrappers (`mathwrap`): the shadows
//! and tape of the calling thread. The table of wrapped functions is
//! shared ([`crate::ad::libm`]).

use crate::context::{current, ThreadCtx};
use mathwrap::Host;

/// The runtime as the wrappers see it.
pub struct RuntimeHost;

fn ctx() -> &'static mut ThreadCtx {
    // SAFETY: wrappers run on guest threads, which all have a context.
    unsafe { current() }
}

impl Host for RuntimeHost {
    fn vec_index(reg: usize, _bytes: usize) -> u32 {
        ctx().shadow.vec[reg][0]
    }

    fn set_vec_index(reg: usize, _bytes: usize, index: u32) {
        let v = &mut ctx().shadow.vec[reg];
        *v = [0; 16];
        v[0] = index;
    }

    /// A lane's index is in its first 4-byte granule.
    fn vec_lanes(reg: usize, lane_bytes: usize) -> [u32; 16] {
        let g = &ctx().shadow.vec[reg];
        core::array::from_fn(|k| g.get(k * lane_bytes / 4).copied().unwrap_or(0))
    }

    fn set_vec_lanes(reg: usize, lane_bytes: usize, indices: &[u32; 16]) {
        let mut g = [0u32; 16];
        for (k, &i) in indices.iter().enumerate().take(64 / lane_bytes) {
            g[k * lane_bytes / 4] = i;
        }
        ctx().shadow.vec[reg] = g;
    }

    fn mem_index(addr: u64, _bytes: usize) -> u32 {
        if !shadowmem::is_app_range(addr, addr.saturating_add(4)) {
            return 0;
        }
        // SAFETY: the shadow of application memory is mapped read-write
        // for the whole process.
        unsafe { (shadowmem::shadow_of(addr) as *const u32).read_unaligned() }
    }

    fn set_mem_index(addr: u64, bytes: usize, index: u32) {
        let bytes = bytes.min(16);
        if !shadowmem::is_app_range(addr, addr.saturating_add(bytes as u64)) {
            return;
        }
        let mut sh = [0u8; 16];
        sh[..4].copy_from_slice(&index.to_le_bytes());
        // SAFETY: as in `mem_index`.
        unsafe {
            core::ptr::copy_nonoverlapping(
                sh.as_ptr(),
                shadowmem::shadow_of(addr) as *mut u8,
                bytes,
            )
        };
    }

    fn set_x87_index(phys: usize, index: u32) {
        ctx().shadow.x87[phys & 7][0] = index;
    }

    fn clear_gpr(reg: usize) {
        ctx().shadow.gpr[reg] = [0, 0];
    }

    fn recording() -> bool {
        super::recorder().is_some_and(|r| r.records())
    }

    fn fp_exception(flags: u32, function: u64) {
        crate::ad::libm::fp_exception(ctx(), flags, function);
    }

    fn first_unwritable(addr: u64, len: usize) -> Option<u64> {
        crate::sys::first_unwritable(addr, len)
    }

    fn write_fault(addr: u64) {
        crate::signals::queue_write_fault(ctx(), addr);
    }

    fn partial_beyond_double() {
        crate::ad::libm::partial_beyond_double();
    }

    fn untracked(what: &'static str) {
        crate::ad::libm::untracked(what);
    }

    fn new_block(index1: u32, partial1: f64, index2: u32, partial2: f64) -> u32 {
        let Some(r) = super::recorder() else { return 0 };
        r.new_block(
            ctx(),
            u64::from(index1),
            partial1,
            u64::from(index2),
            partial2,
        ) as u32
    }
}
