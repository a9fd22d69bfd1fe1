//! The value an addition or FMA computes, rounded the way the guest's
//! instruction rounds it: its EVEX embedded rounding (`{rz-sae}`, …) or
//! the guest's MXCSR rounding mode. The rules run before the instruction,
//! so when they need its result's exact bits (dot mode names a rounding
//! trick's sum by its value) they compute it here: numpy's AVX-512 `exp`
//! adds its shifter with round-toward-zero, which a round-to-nearest sum
//! misses by an ulp.

use iced_x86::{Instruction, RoundingControl};
use rewriter::semantics::Elem;

/// MXCSR's rounding-control field (bits 13–14) for `insn`, given the
/// guest's MXCSR.
pub fn rounding_bits(insn: &Instruction, guest_mxcsr: u32) -> u32 {
    match insn.rounding_control() {
        RoundingControl::None => (guest_mxcsr >> 13) & 3,
        RoundingControl::RoundToNearest => 0,
        RoundingControl::RoundDown => 1,
        RoundingControl::RoundUp => 2,
        RoundingControl::RoundTowardZero => 3,
    }
}

/// `a·b + c` rounded once, to `elem` (float or double), with MXCSR
/// rounding control `rc`; the result's bits (a float's in the low 32).
/// `fused`: an FMA instruction computed it (the host has FMA3); otherwise
/// `b` is 1 and an addition is used.
pub fn fma_bits(elem: Elem, rc: u32, a: f64, b: f64, c: f64, fused: bool) -> u64 {
    let mut saved: u32 = 0;
    // Every exception masked (the runtime's computation must not trap), the
    // rounding asked for.
    let mxcsr: u32 = 0x1f80 | (rc & 3) << 13;
    let out: u64;
    // SAFETY: saves and restores the runtime's own MXCSR around scalar SSE
    // arithmetic on registers; the FMA form runs only where the guest's
    // FMA instruction did, so the CPU has FMA3.
    unsafe {
        core::arch::asm!("stmxcsr [{s}]", "ldmxcsr [{m}]", s = in(reg) &mut saved, m = in(reg) &mxcsr, options(nostack));
        out = match (elem, fused) {
            (Elem::F32, true) => {
                let mut x = c as f32;
                core::arch::asm!("vfmadd231ss {x}, {a}, {b}", x = inout(xmm_reg) x, a = in(xmm_reg) a as f32, b = in(xmm_reg) b as f32, options(nostack));
                u64::from(x.to_bits())
            }
            (Elem::F32, false) => {
                let mut x = c as f32;
                core::arch::asm!("addss {x}, {a}", x = inout(xmm_reg) x, a = in(xmm_reg) a as f32, options(nostack));
                u64::from(x.to_bits())
            }
            (_, true) => {
                let mut x = c;
                core::arch::asm!("vfmadd231sd {x}, {a}, {b}", x = inout(xmm_reg) x, a = in(xmm_reg) a, b = in(xmm_reg) b, options(nostack));
                x.to_bits()
            }
            (_, false) => {
                let mut x = c;
                core::arch::asm!("addsd {x}, {a}", x = inout(xmm_reg) x, a = in(xmm_reg) a, options(nostack));
                x.to_bits()
            }
        };
        core::arch::asm!("ldmxcsr [{s}]", s = in(reg) &saved, options(nostack));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_differs_from_nearest() {
        let (a, b) = (1.0, 2f64.powi(-60));
        let near = fma_bits(Elem::F64, 0, a, 1.0, b, false);
        let up = fma_bits(Elem::F64, 2, a, 1.0, b, false);
        assert_eq!(f64::from_bits(near), 1.0);
        assert_eq!(f64::from_bits(up), 1.0 + f64::EPSILON);
        let zero = fma_bits(Elem::F64, 3, -1.0, 1.0, -b, false);
        assert_eq!(f64::from_bits(zero), -1.0);
        let f = fma_bits(Elem::F32, 2, 1.0, 1.0, 1e-10, false);
        assert_eq!(f32::from_bits(f as u32), 1.0 + f32::EPSILON);
    }
}
