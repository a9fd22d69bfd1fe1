//! libgcc's `__float128` conversions, watched: a program that computes in
//! `__float128` (C's quad type, gfortran's `real(16)`, libquadmath) does
//! its arithmetic in software, on the values' bits in general registers,
//! where no derivative rule can follow it — the derivatives through it
//! come out 0. dgad does not differentiate that arithmetic; it says so.
//!
//! An active `double` or `float` becomes a `__float128` through libgcc's
//! `__extenddftf2` or `__extendsftf2` (compilers call them for every such
//! conversion), so those are the gate: their wrappers run the real
//! function natively, report an active argument once per process
//! ([`Host::untracked`]), and leave the result passive, as it would be
//! anyway. The runtime finds the functions in the program's symbol table
//! and in `libgcc_s.so.1` (`preload`'s `ad::libm`).

use crate::wrap::{without_traps, Host};
use core::arch::x86_64::__m128;

/// One watched conversion, handed to its wrapper.
#[repr(C)]
#[derive(Debug)]
pub struct SoftDesc {
    /// The real libgcc function.
    pub real: u64,
}

/// The watched functions: symbol, argument width in bytes (8: `double`,
/// 4: `float`).
pub const WATCHED: [(&str, usize); 2] = [("__extenddftf2", 8), ("__extendsftf2", 4)];

/// What the report says.
const UNTRACKED: &str = "__float128 arithmetic (a double or float converted by libgcc's \
     __extenddftf2 or __extendsftf2) on an active value: dgad does not differentiate \
     it, and derivatives through it are 0";

/// The wrapper of the watched function whose argument is `width` bytes
/// wide, and the register that carries its [`SoftDesc`] (`rdi`: the
/// function takes no integer argument).
pub fn wrapper<H: Host>(width: usize) -> (u64, u8) {
    let entry = if width == 4 {
        extend::<H, f32> as *const () as u64
    } else {
        extend::<H, f64> as *const () as u64
    };
    (entry, 7)
}

/// `__float128 __extend{s,d}ftf2(T)`, watched.
// `__m128` travels in xmm0 under the C ABI of x86-64, where SSE is always
// enabled: as `__float128` does.
#[allow(improper_ctypes_definitions)]
extern "C" fn extend<H: Host, T: Copy>(x: T, desc: &SoftDesc) -> __m128 {
    if H::vec_index(0, core::mem::size_of::<T>()) != 0 {
        H::untracked(UNTRACKED);
    }
    // SAFETY: `desc.real` is libgcc's conversion of a `T` (`float` or
    // `double`, in xmm0 as here) to a `__float128` (in xmm0, as an
    // `__m128`).
    let real: extern "C" fn(T) -> __m128 = unsafe { core::mem::transmute(desc.real) };
    let r = without_traps::<H, _>(desc.real, || real(x));
    H::set_vec_index(0, 16, 0);
    r
}
