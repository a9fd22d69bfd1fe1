//! Derivgrind's client requests in dot mode: `DG_SET_DOTVALUE` and
//! `DG_GET_DOTVALUE` move tangents between a variable's shadow and a
//! variable of the program's; `DG_GET_MODE` answers `d`. The recording
//! requests (`DG_INPUTF`/`DG_OUTPUTF` and the index requests under them)
//! are accepted and do nothing, as in Derivgrind's forward mode.

use crate::context::{reg, ThreadCtx};
use crate::guest_mem::read_mem;
use crate::tool::request::*;
use rewriter::semantics::Elem;

/// The request block's six words; a word that cannot be read is 0.
fn load_words(addr: u64) -> [u64; 6] {
    let mut b = [0u8; 48];
    if !read_mem(addr, &mut b) {
        return [0; 6];
    }
    core::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
}

/// The type of a `size`-byte floating-point variable: float, double, or
/// x87 long double (10 bytes, or 16 with its padding).
fn elem_of(size: u64) -> Option<Elem> {
    match size {
        4 => Some(Elem::F32),
        8 => Some(Elem::F64),
        10 | 12 | 16 => Some(Elem::F80),
        _ => None,
    }
}

/// Bytes of a value of type `e`.
fn width(e: Elem) -> usize {
    crate::ad::elem_bytes(e)
}

/// Answers the request; sets `rdx` to its result (unknown requests keep
/// the default).
pub fn handle(ctx: &mut ThreadCtx) {
    let args = load_words(ctx.regs.gpr[reg::RAX]);
    let result = match args[0] {
        GET_MODE => Some(u64::from(b'd')),
        SET_DOTVALUE | GET_DOTVALUE => {
            let (addr, daddr, size) = (args[1], args[2], args[3]);
            match elem_of(size) {
                Some(e)
                    if shadowmem::is_app_range(addr, addr + width(e) as u64)
                        && shadowmem::is_app_range(daddr, daddr + width(e) as u64) =>
                {
                    if args[0] == SET_DOTVALUE {
                        set_dot(addr, daddr, e);
                    } else {
                        get_dot(addr, daddr, e);
                    }
                    Some(1)
                }
                _ => {
                    crate::dgad_eprintln!(
                        "dot: DG_{}_DOTVALUE with size {} at {:#x} ignored (sizes: 4 float, 8 double, 10 or 16 long double)",
                        if args[0] == SET_DOTVALUE { "SET" } else { "GET" },
                        size,
                        addr
                    );
                    None
                }
            }
        }
        DISABLE => Some(0),
        GET_INDEX | SET_INDEX | NEW_INDEX | NEW_INDEX_NOACTIVITYANALYSIS | INDEX_TO_FILE => Some(1),
        GET_FLAGS => Some(0),
        _ => None,
    };
    if let Some(v) = result {
        ctx.regs.gpr[reg::RDX] = v;
    }
}

/// The tangent of the variable at `addr` becomes the value of the
/// program's variable at `daddr` (same type).
fn set_dot(addr: u64, daddr: u64, e: Elem) {
    let mut v = [0u8; 10];
    if !read_mem(daddr, &mut v[..width(e)]) {
        return;
    }
    // SAFETY: `addr` is in application memory (checked by the caller),
    // whose shadow is mapped read-write; the tangent has the value's
    // format, so its bytes are the seed's.
    unsafe {
        core::ptr::copy_nonoverlapping(v.as_ptr(), shadowmem::shadow_of(addr) as *mut u8, width(e))
    };
}

/// The program's variable at `daddr` gets the tangent of the variable at
/// `addr`; its own bytes are a passive value.
fn get_dot(addr: u64, daddr: u64, e: Elem) {
    let mut t = [0u8; 10];
    // SAFETY: both addresses are in application memory (checked by the
    // caller): the shadow is mapped; `daddr` is the program's variable,
    // written as the request means (a bad pointer faults as natively).
    unsafe {
        core::ptr::copy_nonoverlapping(
            shadowmem::shadow_of(addr) as *const u8,
            t.as_mut_ptr(),
            width(e),
        );
        core::ptr::copy_nonoverlapping(t.as_ptr(), daddr as *mut u8, width(e));
        core::ptr::write_bytes(shadowmem::shadow_of(daddr) as *mut u8, 0, width(e));
    }
}
