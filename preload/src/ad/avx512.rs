//! AVX-512 instructions evaluated on the CPU itself, for partial
//! derivatives whose value is easiest to get from the instruction: only
//! called while applying the semantics of that instruction, which the guest
//! is about to execute, so the CPU has it and the OS enabled its state.

use core::arch::asm;

/// Runs a scalar AVX-512 instruction `template` (`{r}` its result, `{i}`
/// its immediate) with the immediate's low four bits `imm`: the immediate
/// must be a constant in the encoding, hence one arm per value.
macro_rules! sd_by_immediate {
    ($imm:expr, $template:literal, $($operand:tt)*) => {
        match $imm & 0xf {
            0 => sd_by_immediate!(@one 0, $template, $($operand)*),
            1 => sd_by_immediate!(@one 1, $template, $($operand)*),
            2 => sd_by_immediate!(@one 2, $template, $($operand)*),
            3 => sd_by_immediate!(@one 3, $template, $($operand)*),
            4 => sd_by_immediate!(@one 4, $template, $($operand)*),
            5 => sd_by_immediate!(@one 5, $template, $($operand)*),
            6 => sd_by_immediate!(@one 6, $template, $($operand)*),
            7 => sd_by_immediate!(@one 7, $template, $($operand)*),
            8 => sd_by_immediate!(@one 8, $template, $($operand)*),
            9 => sd_by_immediate!(@one 9, $template, $($operand)*),
            10 => sd_by_immediate!(@one 10, $template, $($operand)*),
            11 => sd_by_immediate!(@one 11, $template, $($operand)*),
            12 => sd_by_immediate!(@one 12, $template, $($operand)*),
            13 => sd_by_immediate!(@one 13, $template, $($operand)*),
            14 => sd_by_immediate!(@one 14, $template, $($operand)*),
            _ => sd_by_immediate!(@one 15, $template, $($operand)*),
        }
    };
    (@one $i:literal, $template:literal, $($operand:tt)*) => {{
        let r: f64;
        // SAFETY: the CPU has the instruction (see the module comment);
        // it reads and writes only the xmm registers named.
        unsafe {
            asm!(
                $template,
                $($operand)*
                r = lateout(xmm_reg) r,
                i = const $i,
                options(pure, nomem, nostack, preserves_flags),
            )
        };
        r
    }};
}

/// `vgetmantsd` of `x` with immediate `imm` (its low four bits: the
/// normalisation interval and the sign control; the others must be 0).
/// f32 lanes use it too: a float's significand and exponent are its
/// double's.
pub fn getmant(x: f64, imm: u8) -> f64 {
    sd_by_immediate!(imm, "vgetmantsd {r}, {x}, {x}, {i}", x = in(xmm_reg) x,)
}

/// `vrangesd` of `a` and `b` with immediate `imm` (its low four bits: the
/// selection and the sign control; AVX-512DQ, which a guest running
/// `vrange` has). f32 lanes use it too: the selection and the sign are
/// the same on their doubles.
pub fn range(a: f64, b: f64, imm: u8) -> f64 {
    sd_by_immediate!(imm, "vrangesd {r}, {a}, {b}, {i}", a = in(xmm_reg) a, b = in(xmm_reg) b,)
}

/// Partial derivatives of `vrange` at `(a, b)` with immediate `imm`: the
/// operand the selection picks (found by running it with the sign taken
/// from that operand, so that `min(2, -2)` is told from `min(-2, 2)`)
/// gets ±1, the sign the result has relative to it; NaN results get none.
pub fn range_partials(a: f64, b: f64, imm: u8) -> (f64, f64) {
    let r = range(a, b, imm);
    let picked = range(a, b, (imm & 3) | 4);
    if r.is_nan() || picked.is_nan() {
        return (0.0, 0.0);
    }
    let sign = |x: f64| if x.is_sign_negative() { -1.0 } else { 1.0 };
    let p = sign(r) * sign(picked);
    if picked.to_bits() == a.to_bits() {
        (p, 0.0)
    } else {
        (0.0, p)
    }
}
