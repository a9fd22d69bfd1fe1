//! The dot tool's side of the libm wrappers (`mathwrap`): the wrappers name
//! derivatives by `u32` handles (record mode's are tape indices); here a
//! handle is a slot of a small per-thread ring of tangents, valid for the
//! one wrapper call that made it. "Appending a block" computes the
//! result's tangent from the partials the wrappers supply, so libm calls
//! get the same analytic derivatives as in record mode.

use super::mode::{load, store};
use super::DotState;
use crate::context::{current, ThreadCtx};
use mathwrap::Host;
use rewriter::semantics::Elem;

/// Slots of the handle ring: more than one wrapper call makes (a 16-lane
/// binary libmvec call reads 32 and makes 16).
const SLOTS: usize = 128;

/// A thread's ring of tangents behind handles (all zeros: empty).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Handles {
    next: u32,
    slots: [f64; SLOTS],
}

impl Handles {
    /// A handle for tangent `t` (0: passive).
    fn make(&mut self, t: f64) -> u32 {
        if t == 0.0 {
            return 0;
        }
        self.next = (self.next + 1) % SLOTS as u32;
        self.slots[self.next as usize] = t;
        self.next + 1
    }

    /// The tangent behind handle `h`.
    fn get(&self, h: u32) -> f64 {
        match h {
            0 => 0.0,
            h => self.slots[(h as usize - 1) % SLOTS],
        }
    }
}

/// The runtime as the wrappers see it in dot mode.
pub struct DotHost;

fn ctx() -> &'static mut ThreadCtx {
    // SAFETY: wrappers run on guest threads, which all have a context.
    unsafe { current() }
}

/// A float, a double or (10 bytes and more) an x87 value.
fn elem_of(bytes: usize) -> Elem {
    match bytes {
        4 => Elem::F32,
        8 => Elem::F64,
        _ => Elem::F80,
    }
}

fn vec_bytes(reg: usize) -> &'static mut [u8; 64] {
    // SAFETY: a register's shadow is 16 u32s, 64 plain bytes.
    unsafe { &mut *(ctx().shadow.vec[reg].as_mut_ptr() as *mut [u8; 64]) }
}

fn handle(t: f64) -> u32 {
    ctx().dot().handles.make(t)
}

fn tangent(h: u32) -> f64 {
    ctx().dot_ref().handles.get(h)
}

impl Host for DotHost {
    fn vec_index(reg: usize, bytes: usize) -> u32 {
        handle(load(&vec_bytes(reg)[..bytes.min(8)], elem_of(bytes)))
    }

    fn set_vec_index(reg: usize, bytes: usize, index: u32) {
        let t = tangent(index);
        let v = vec_bytes(reg);
        v.fill(0);
        store(&mut v[..bytes.min(8)], elem_of(bytes), t);
    }

    fn vec_lanes(reg: usize, lane_bytes: usize) -> [u32; 16] {
        let v = *vec_bytes(reg);
        let mut out = [0u32; 16];
        for (k, lane) in v.chunks_exact(lane_bytes).enumerate() {
            out[k] = handle(load(lane, elem_of(lane_bytes)));
        }
        out
    }

    fn set_vec_lanes(reg: usize, lane_bytes: usize, indices: &[u32; 16]) {
        let mut v = [0u8; 64];
        for (k, lane) in v.chunks_exact_mut(lane_bytes).enumerate() {
            store(lane, elem_of(lane_bytes), tangent(indices[k]));
        }
        *vec_bytes(reg) = v;
    }

    fn mem_index(addr: u64, bytes: usize) -> u32 {
        let n = bytes.min(10);
        if !shadowmem::is_app_range(addr, addr.saturating_add(n as u64)) {
            return 0;
        }
        let mut b = [0u8; 10];
        // SAFETY: the shadow of application memory is mapped read-write
        // for the whole process.
        unsafe {
            core::ptr::copy_nonoverlapping(
                shadowmem::shadow_of(addr) as *const u8,
                b.as_mut_ptr(),
                n,
            )
        };
        handle(load(&b[..n], elem_of(bytes)))
    }

    fn set_mem_index(addr: u64, bytes: usize, index: u32) {
        let bytes = bytes.min(16);
        if !shadowmem::is_app_range(addr, addr.saturating_add(bytes as u64)) {
            return;
        }
        let mut sh = [0u8; 16];
        store(&mut sh[..bytes], elem_of(bytes), tangent(index));
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
        let mut b = [0u8; 16];
        store(&mut b[..10], Elem::F80, tangent(index));
        let slot = &mut ctx().shadow.x87[phys & 7];
        for (g, c) in slot.iter_mut().zip(b.chunks_exact(4)) {
            *g = u32::from_le_bytes(c.try_into().unwrap());
        }
    }

    fn clear_gpr(reg: usize) {
        ctx().shadow.gpr[reg] = [0, 0];
    }

    fn recording() -> bool {
        true
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

    /// The tangent `p1 · dot1 + p2 · dot2` of the result.
    fn new_block(index1: u32, partial1: f64, index2: u32, partial2: f64) -> u32 {
        let term = |h: u32, p: f64| if h == 0 { 0.0 } else { p * tangent(h) };
        handle(term(index1, partial1) + term(index2, partial2))
    }
}
