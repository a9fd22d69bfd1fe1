//! x87 extended precision (`long double`) for the partials of the `…l`
//! functions: a value type whose arithmetic runs on the x87 unit, and calls
//! of libm's `long double` functions (arguments on the stack, result in
//! `st(0)`, an ABI Rust cannot express).
//!
//! Every block below loads its operands from memory, leaves the x87
//! register stack as it found it (empty at a call, per the ABI), and
//! declares the x87 registers clobbered.

use core::arch::asm;
use core::ops::{Add, Div, Mul, Neg, Sub};

/// An 80-bit x87 value in the low 10 bytes, padded to 16 like a C
/// `long double`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F80(pub [u8; 16]);

/// The x87 instructions [`F80::x87`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum X87Op {
    /// Partial remainder, truncating quotient.
    Fprem,
    /// Partial remainder, IEEE (rounded) quotient.
    Fprem1,
    /// st(0) · 2^trunc(st(1)).
    Fscale,
    /// st(1) · log2 st(0), popping.
    Fyl2x,
    /// st(1) · log2(st(0) + 1), popping.
    Fyl2xp1,
    /// atan2(st(1), st(0)), popping.
    Fpatan,
    /// sin st(0).
    Fsin,
    /// cos st(0).
    Fcos,
    /// 2^st(0) − 1.
    F2xm1,
}

/// The libm `long double` functions the partials use; only their
/// addresses are taken (each is the C function of the same name).
#[allow(missing_docs)]
pub mod libm {
    extern "C" {
        pub fn sinl();
        pub fn cosl();
        pub fn tanl();
        pub fn sinhl();
        pub fn coshl();
        pub fn expl();
        pub fn logl();
        pub fn powl();
        pub fn hypotl();
        pub fn jnl();
        pub fn ynl();
        pub fn rintl();
    }
}

/// A constant the x87 unit loads itself (`fldpi`, `fldln2`, …).
pub struct X87Const(fn() -> F80);

impl X87Const {
    /// The value.
    pub fn get(&self) -> F80 {
        (self.0)()
    }
}

macro_rules! x87_const {
    ($name:ident, $($insn:literal),+) => {
        fn $name() -> F80 {
            let mut r = F80::ZERO;
            // SAFETY: loads a constant and stores it into `r`; the x87
            // stack is left as it was.
            unsafe {
                asm!($($insn,)+ "fstp tbyte ptr [{r}]", r = in(reg) &mut r,
                     out("st(0)") _, out("st(1)") _, options(nostack));
            }
            r
        }
    };
}

x87_const!(load_pi, "fldpi");
x87_const!(load_ln2, "fldln2");
// ln 10 = ln 2 · log₂ 10.
x87_const!(load_ln10, "fldl2t", "fldln2", "fmulp st(1), st");

macro_rules! binary_op {
    ($trait:ident, $method:ident, $insn:literal) => {
        impl $trait for F80 {
            type Output = F80;
            fn $method(self, o: F80) -> F80 {
                let mut r = F80::ZERO;
                // SAFETY: two loads from valid F80s, one operation that pops
                // one, a store that pops the other into `r`.
                unsafe {
                    asm!(
                        "fld tbyte ptr [{a}]",
                        "fld tbyte ptr [{b}]",
                        $insn,
                        "fstp tbyte ptr [{r}]",
                        a = in(reg) &self,
                        b = in(reg) &o,
                        r = in(reg) &mut r,
                        out("st(0)") _,
                        out("st(1)") _,
                        options(nostack),
                    );
                }
                r
            }
        }
    };
}

// With st(1) = self and st(0) = o, `fxxxp st(1), st` leaves self ∘ o.
binary_op!(Add, add, "faddp st(1), st");
binary_op!(Sub, sub, "fsubp st(1), st");
binary_op!(Mul, mul, "fmulp st(1), st");
binary_op!(Div, div, "fdivp st(1), st");

impl Neg for F80 {
    type Output = F80;
    fn neg(mut self) -> F80 {
        self.0[9] ^= 0x80;
        self
    }
}

/// Resets the x87 unit (`fninit`: empty register stack, default control
/// word) so that [`F80`] arithmetic has room. The wrappers never need it
/// (the register stack is empty at a call); the runtime does, since it
/// computes at arbitrary guest instructions.
///
/// # Safety
/// The caller's x87 state is lost: only call it where that state is saved
/// elsewhere and restored afterwards (the runtime's `xsave` area).
pub unsafe fn reset_x87() {
    // SAFETY: the caller guarantees the x87 state may be discarded.
    unsafe { asm!("fninit", options(nostack, nomem)) };
}

/// The default floating-point environment (round to nearest, every
/// exception masked, x87 extended precision) for as long as it lives; the
/// caller's environment, flags included, comes back when it is dropped.
/// Partials are computed inside one: the program may have unmasked an
/// exception or chosen another rounding mode, and a partial must neither
/// trap where the function itself did not nor round differently, nor leave
/// an exception flag the function did not raise.
///
/// Cheap in the common case: control registers are only reloaded when the
/// program's differ from the default, flags only when the partials changed
/// them. The x87 part is only looked at for partials computed with
/// [`F80`]; SSE partials touch only MXCSR.
pub struct DefaultFpEnv {
    mxcsr: u32,
    /// The x87 control and status words, when saved.
    x87: Option<(u16, u16)>,
}

/// MXCSR at power-on: round to nearest, every exception masked, no flags.
pub const DEFAULT_MXCSR: u32 = 0x1f80;
/// MXCSR's exception flags.
const MXCSR_FLAGS: u32 = 0x3f;
/// x87 control word at `fninit`: every exception masked, round to nearest,
/// 64-bit significands.
pub const DEFAULT_X87_CW: u16 = 0x037f;
/// The x87 status word's exception flags (with the stack fault and error
/// summary bits).
const X87_FLAGS: u16 = 0xff;

pub(crate) fn stmxcsr() -> u32 {
    let mut v = 0u32;
    // SAFETY: stores MXCSR into our local.
    unsafe { asm!("stmxcsr dword ptr [{p}]", p = in(reg) &mut v, options(nostack)) };
    v
}

pub(crate) fn ldmxcsr(v: u32) {
    // SAFETY: loads a value the caller saved or the default one.
    unsafe { asm!("ldmxcsr dword ptr [{p}]", p = in(reg) &v, options(nostack, readonly)) };
}

fn x87_words() -> (u16, u16) {
    let (mut cw, mut sw) = (0u16, 0u16);
    // SAFETY: stores the control and status words into our locals.
    unsafe {
        asm!(
            "fnstcw word ptr [{c}]",
            "fnstsw word ptr [{s}]",
            c = in(reg) &mut cw,
            s = in(reg) &mut sw,
            options(nostack),
        )
    };
    (cw, sw)
}

fn fldcw(cw: u16) {
    // SAFETY: loads a control word the caller saved or the default one.
    unsafe { asm!("fldcw word ptr [{p}]", p = in(reg) &cw, options(nostack, readonly)) };
}

impl DefaultFpEnv {
    /// Saves the current environment (the x87 part too when `x87`) and
    /// installs the default one where it differs.
    pub fn enter(x87: bool) -> DefaultFpEnv {
        let mxcsr = stmxcsr();
        if mxcsr & !MXCSR_FLAGS != DEFAULT_MXCSR {
            ldmxcsr(DEFAULT_MXCSR);
        }
        let x87 = x87.then(|| {
            let (cw, sw) = x87_words();
            if cw != DEFAULT_X87_CW {
                fldcw(DEFAULT_X87_CW);
            }
            (cw, sw)
        });
        DefaultFpEnv { mxcsr, x87 }
    }
}

impl Drop for DefaultFpEnv {
    fn drop(&mut self) {
        if let Some((cw, sw)) = self.x87 {
            let (_, now) = x87_words();
            if now & X87_FLAGS != sw & X87_FLAGS {
                // Only `fldenv` writes the status word: patch the saved
                // flags into the current environment and reload it.
                let mut env = [0u8; 28];
                // SAFETY: stores the x87 environment into our buffer.
                unsafe { asm!("fnstenv [{e}]", e = in(reg) env.as_mut_ptr(), options(nostack)) };
                env[4..6].copy_from_slice(&sw.to_le_bytes());
                // SAFETY: reloads that environment with the old flags.
                unsafe {
                    asm!("fldenv [{e}]", e = in(reg) env.as_ptr(), options(nostack, readonly))
                };
            }
            if cw != DEFAULT_X87_CW {
                fldcw(cw);
            }
        }
        if stmxcsr() != self.mxcsr {
            ldmxcsr(self.mxcsr);
        }
    }
}

impl F80 {
    /// +0.
    pub const ZERO: F80 = F80([0; 16]);
    /// π.
    pub const PI: X87Const = X87Const(load_pi);
    /// ln 2.
    pub const LN2: X87Const = X87Const(load_ln2);
    /// ln 10.
    pub const LN10: X87Const = X87Const(load_ln10);

    /// The value of a double (exact).
    pub fn from_f64(v: f64) -> F80 {
        let mut r = F80::ZERO;
        // SAFETY: loads a double, stores it as 80 bits into `r`.
        unsafe {
            asm!("fld qword ptr [{v}]", "fstp tbyte ptr [{r}]", v = in(reg) &v,
                 r = in(reg) &mut r, out("st(0)") _, options(nostack));
        }
        r
    }

    /// Rounded to a double in the current rounding mode.
    pub fn to_f64(self) -> f64 {
        let mut v = 0.0f64;
        // SAFETY: loads the 80-bit value, stores it rounded into `v`.
        unsafe {
            asm!("fld tbyte ptr [{a}]", "fstp qword ptr [{v}]", a = in(reg) &self,
                 v = in(reg) &mut v, out("st(0)") _, options(nostack));
        }
        v
    }

    /// Whether the value is finite and nonzero but beyond the range of
    /// normal doubles: [`F80::to_f64`] makes it infinite, or subnormal or
    /// zero (its digits lost).
    pub fn beyond_double(self) -> bool {
        let exponent = u16::from_le_bytes([self.0[8], self.0[9]]) & 0x7fff;
        let finite = exponent != 0x7fff;
        let nonzero = self.0[..8].iter().any(|&b| b != 0);
        finite && nonzero && !self.to_f64().is_normal()
    }

    /// From the 10 bytes of a value in memory.
    pub fn from_bytes(b: &[u8]) -> F80 {
        let mut r = F80::ZERO;
        r.0[..10].copy_from_slice(&b[..10]);
        r
    }

    /// √self (correctly rounded, `fsqrt`).
    pub fn sqrt(self) -> F80 {
        let mut r = F80::ZERO;
        // SAFETY: load, square root in place, store-and-pop into `r`.
        unsafe {
            asm!("fld tbyte ptr [{a}]", "fsqrt", "fstp tbyte ptr [{r}]", a = in(reg) &self,
                 r = in(reg) &mut r, out("st(0)") _, options(nostack));
        }
        r
    }

    /// The x87 instruction `op` (a one-operand transcendental: `fsin`,
    /// `fcos`, `f2xm1`, or a two-operand one: `fprem`, `fprem1`, `fscale`,
    /// `fyl2x`, `fyl2xp1`, `fpatan`) on st(0) = `self` and st(1) = `st1`,
    /// as the CPU computes it: the new st(0) (for the ones that pop, the
    /// value left at the top).
    pub fn x87(self, op: X87Op, st1: F80) -> F80 {
        let mut r = F80::ZERO;
        macro_rules! two {
            ($insn:literal) => {
                // SAFETY: loads st(1) and st(0), runs the instruction on
                // them, stores the top and empties the stack.
                unsafe {
                    asm!("fld tbyte ptr [{b}]", "fld tbyte ptr [{a}]", $insn,
                         "fstp tbyte ptr [{r}]", "fstp st(0)",
                         a = in(reg) &self, b = in(reg) &st1, r = in(reg) &mut r,
                         out("st(0)") _, out("st(1)") _, options(nostack));
                }
            };
        }
        macro_rules! popping {
            ($insn:literal) => {
                // SAFETY: loads st(1) and st(0); the instruction pops one,
                // the result is stored and popped.
                unsafe {
                    asm!("fld tbyte ptr [{b}]", "fld tbyte ptr [{a}]", $insn,
                         "fstp tbyte ptr [{r}]",
                         a = in(reg) &self, b = in(reg) &st1, r = in(reg) &mut r,
                         out("st(0)") _, out("st(1)") _, options(nostack));
                }
            };
        }
        macro_rules! one {
            ($insn:literal) => {
                // SAFETY: load, the instruction in place, store-and-pop.
                unsafe {
                    asm!("fld tbyte ptr [{a}]", $insn, "fstp tbyte ptr [{r}]",
                         a = in(reg) &self, r = in(reg) &mut r,
                         out("st(0)") _, options(nostack));
                }
            };
        }
        match op {
            X87Op::Fprem => two!("fprem"),
            X87Op::Fprem1 => two!("fprem1"),
            X87Op::Fscale => two!("fscale"),
            X87Op::Fyl2x => popping!("fyl2x"),
            X87Op::Fyl2xp1 => popping!("fyl2xp1"),
            X87Op::Fpatan => popping!("fpatan"),
            X87Op::Fsin => one!("fsin"),
            X87Op::Fcos => one!("fcos"),
            X87Op::F2xm1 => one!("f2xm1"),
        }
        r
    }

    /// `self < o`, false when unordered.
    pub fn lt(self, o: F80) -> bool {
        let below: u8;
        // SAFETY: loads both values, compares st(0) = self with st(1) = o
        // (`fcomip` pops one), pops the other.
        unsafe {
            asm!(
                "fld tbyte ptr [{b}]",
                "fld tbyte ptr [{a}]",
                "fcomip st, st(1)",
                "fstp st(0)",
                "setb {below}",
                "jnp 2f",
                "xor {below}, {below}",
                "2:",
                a = in(reg) &self,
                b = in(reg) &o,
                below = out(reg_byte) below,
                out("st(0)") _,
                out("st(1)") _,
                options(nostack),
            );
        }
        below != 0
    }

    /// `2^n`, saturating outside the extended exponent range.
    pub fn exp2i(n: i64) -> F80 {
        let mut r = F80::ZERO;
        if n < -16445 {
            return r;
        }
        if n > 16383 {
            r.0[7] = 0x80;
            r.0[8] = 0xff;
            r.0[9] = 0x7f;
            return r;
        }
        if n < -16382 {
            // Denormal: the integer bit moves down the significand.
            let shift = (-16382 - n) as u32;
            r.0[..8].copy_from_slice(&((1u64 << 63) >> shift).to_le_bytes());
            return r;
        }
        r.0[..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
        let e = (n + 16383) as u16;
        r.0[8..10].copy_from_slice(&e.to_le_bytes());
        r
    }

    /// `f(self)` for a libm `long double f(long double)`: the call of
    /// [`F80::call_int_first`] (`edi` is not an argument of `f`).
    pub fn call1(self, f: unsafe extern "C" fn()) -> F80 {
        self.call_int_first(f, 0)
    }

    /// `f(self, o)` for a libm `long double f(long double, long double)`.
    pub fn call2(self, f: unsafe extern "C" fn(), o: F80) -> F80 {
        let mut r = F80::ZERO;
        // SAFETY: as in `call_int_first`, with two stack slots.
        unsafe {
            asm!(
                "sub rsp, 32",
                "movups xmm0, [{a}]",
                "movups [rsp], xmm0",
                "movups xmm0, [{b}]",
                "movups [rsp + 16], xmm0",
                "call {f}",
                "add rsp, 32",
                "fstp tbyte ptr [r12]",
                a = in(reg) &self,
                b = in(reg) &o,
                f = in(reg) f,
                in("r12") &mut r,
                clobber_abi("C"),
            );
        }
        r
    }

    /// `f(n, self)` for a libm `long double f(int, long double)`.
    pub fn call_int_first(self, f: unsafe extern "C" fn(), n: i32) -> F80 {
        let mut r = F80::ZERO;
        // SAFETY: the argument goes into a 16-byte stack slot (rsp is
        // 16-byte aligned at the block's start and stays so), the int in
        // edi; the callee follows the C ABI (clobber_abi), its result in
        // st(0) is stored and popped into `r` through a callee-saved
        // register.
        unsafe {
            asm!(
                "sub rsp, 16",
                "movups xmm0, [{a}]",
                "movups [rsp], xmm0",
                "call {f}",
                "add rsp, 16",
                "fstp tbyte ptr [r12]",
                a = in(reg) &self,
                f = in(reg) f,
                in("edi") n,
                in("r12") &mut r,
                clobber_abi("C"),
            );
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real::Real;

    #[test]
    fn arithmetic_and_conversions() {
        let a = F80::from_f64(1.5);
        let b = F80::from_f64(-2.25);
        assert_eq!((a + b).to_f64(), -0.75);
        assert_eq!((a - b).to_f64(), 3.75);
        assert_eq!((a * b).to_f64(), -3.375);
        assert_eq!((a / b).to_f64(), 1.5 / -2.25);
        assert_eq!((-a).to_f64(), -1.5);
        assert_eq!(F80::from_f64(2.0).sqrt().to_f64(), 2f64.sqrt());
        assert!(b.lt(a) && !a.lt(b) && !a.lt(a));
        assert!(!F80::from_f64(f64::NAN).lt(a));
        assert_eq!(F80::exp2i(-3).to_f64(), 0.125);
        assert_eq!(F80::exp2i(100).to_f64(), 2f64.powi(100));
        assert_eq!(F80::exp2i(-16400).to_f64(), 0.0);
    }

    #[test]
    fn constants_and_libm_calls() {
        assert_eq!(F80::PI.get().to_f64(), core::f64::consts::PI);
        assert_eq!(F80::LN2.get().to_f64(), core::f64::consts::LN_2);
        assert_eq!(F80::LN10.get().to_f64(), core::f64::consts::LN_10);
        let x = F80::from_f64(0.75);
        assert!((Real::sin(x).to_f64() - 0.75f64.sin()).abs() < 1e-16);
        assert!((Real::pow(x, F80::from_f64(3.0)).to_f64() - 0.421875).abs() < 1e-17);
        assert!((<F80 as Real>::jn(1, x).to_f64() - 0.349_243_602_174_862_2).abs() < 1e-15);
        assert_eq!(Real::round_even(F80::from_f64(2.5)).to_f64(), 2.0);
    }
}
