//! AVX-512 instructions evaluated on the CPU itself, for partial
//! derivatives whose value is easiest to get from the instruction: only
//! called while applying the semantics of that instruction, which the guest
//! is about to execute, so the CPU has it and the OS enabled its state.

use core::arch::asm;

/// `vgetmantsd` of `x` with immediate `imm` (its low four bits: the
/// normalisation interval and the sign control; the others must be 0).
/// f32 lanes use it too: a float's significand and exponent are its
/// double's.
pub fn getmant(x: f64, imm: u8) -> f64 {
    macro_rules! by_immediate {
        ($($i:literal)+) => {
            match imm & 0xf {
                $(
                    $i => {
                        let r: f64;
                        // SAFETY: AVX-512F is present (see the module
                        // comment); the instruction reads and writes only
                        // the two xmm registers named.
                        unsafe {
                            asm!(
                                "vgetmantsd {r}, {x}, {x}, {i}",
                                r = lateout(xmm_reg) r,
                                x = in(xmm_reg) x,
                                i = const $i,
                                options(pure, nomem, nostack, preserves_flags),
                            )
                        };
                        r
                    }
                )+
                _ => unreachable!("four bits"),
            }
        };
    }
    by_immediate!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
}
