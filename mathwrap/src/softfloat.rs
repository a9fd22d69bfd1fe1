//! libgcc's software floating-point conversions, watched: a program that
//! computes in `__float128` (C's quad type, gfortran's `real(16)`,
//! libquadmath), or converts a `double` to `_Float16` (a `float` too,
//! without F16C), does it in
//! software, on the values' bits in general registers, where no
//! derivative rule can follow — the derivatives through it come out 0.
//! dgad does not differentiate that; it says so.
//!
//! An active `double` or `float` enters that arithmetic through libgcc's
//! `__extenddftf2`, `__extendsftf2`, `__truncdfhf2` or `__truncsfhf2`
//! (compilers call them for every such conversion), so those are the
//! gate: their wrappers run the real function natively, report an active
//! argument once per process ([`Host::untracked`]), and leave the result
//! passive, as it would be anyway. The runtime finds the functions in the program's symbol table
//! and in `libgcc_s.so.1` (`preload`'s `ad::libm`).

use crate::wrap::{without_traps, Host};
use core::arch::x86_64::__m128;

/// One watched conversion, handed to its wrapper.
#[repr(C)]
#[derive(Debug)]
pub struct SoftDesc {
    /// The real libgcc function.
    pub real: u64,
    /// What the report says.
    pub what: &'static str,
}

/// The watched functions: symbol, argument width in bytes (8: `double`,
/// 4: `float`), what the report says. Each returns its result in xmm0.
pub const WATCHED: [(&str, usize, &str); 4] = [
    ("__extenddftf2", 8, QUAD),
    ("__extendsftf2", 4, QUAD),
    ("__truncdfhf2", 8, HALF),
    ("__truncsfhf2", 4, HALF),
];

const QUAD: &str = "__float128 arithmetic (a double or float converted by libgcc's \
     __extenddftf2 or __extendsftf2) on an active value: dgad does not differentiate \
     it, and derivatives through it are 0";

const HALF: &str = "_Float16 conversion in software (libgcc's __truncdfhf2, every \
     double to _Float16, or __truncsfhf2, float to _Float16 without F16C) of an active \
     value: dgad does not differentiate it, and derivatives through it are 0";

/// The wrapper of the watched function whose argument is `width` bytes
/// wide, and the register that carries its [`SoftDesc`] (`rdi`: the
/// function takes no integer argument).
pub fn wrapper<H: Host>(width: usize) -> (u64, u8) {
    let entry = if width == 4 {
        convert::<H, f32> as *const () as u64
    } else {
        convert::<H, f64> as *const () as u64
    };
    (entry, 7)
}

/// A watched conversion of a `T` (`float` or `double`) whose result
/// comes back in xmm0 (a `__float128`, or a `_Float16` in its low bits).
// `__m128` travels in xmm0 under the C ABI of x86-64, where SSE is always
// enabled: as `__float128` does.
#[allow(improper_ctypes_definitions)]
extern "C" fn convert<H: Host, T: Copy>(x: T, desc: &SoftDesc) -> __m128 {
    if H::vec_index(0, core::mem::size_of::<T>()) != 0 {
        H::untracked(desc.what);
    }
    // SAFETY: `desc.real` is libgcc's conversion of a `T` (`float` or
    // `double`, in xmm0 as here) whose result is in xmm0, which an
    // `__m128` return takes whole.
    let real: extern "C" fn(T) -> __m128 = unsafe { core::mem::transmute(desc.real) };
    let r = without_traps::<H, _>(desc.real, || real(x));
    H::set_vec_index(0, 16, 0);
    r
}
