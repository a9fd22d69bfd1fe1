//! The arithmetic the partial derivatives are written in, once for every
//! precision: [`Real`] is implemented by `f64` (for `float` and `double`
//! functions) and by [`F80`] (x87 extended precision, for `long double`).
//! Transcendental helpers call the real libm of the process natively.

use crate::f80::F80;
use core::ops::{Add, Div, Mul, Neg, Sub};

/// A floating-point type the partials can be computed in.
pub trait Real:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// How far [`digamma`] shifts its argument up before the asymptotic
    /// series, so that the first omitted term is below half an ulp.
    const DIGAMMA_SHIFT: f64;
    /// Whether its arithmetic runs on the x87 unit.
    const X87: bool;
    /// The value of an `f64` (exact).
    fn of(v: f64) -> Self;
    /// Rounded to `f64` (the tape's partials are `f64`).
    fn to_f64(self) -> f64;
    /// Whether [`Real::to_f64`] loses the value: it is finite and nonzero
    /// but beyond the range of normal doubles (never, for an `f64`).
    fn beyond_double(self) -> bool;
    /// π to this type's precision.
    fn pi() -> Self;
    /// ln 2 to this type's precision.
    fn ln2() -> Self;
    /// ln 10 to this type's precision.
    fn ln10() -> Self;
    /// √self.
    fn sqrt(self) -> Self;
    /// sin self.
    fn sin(self) -> Self;
    /// cos self.
    fn cos(self) -> Self;
    /// tan self.
    fn tan(self) -> Self;
    /// sinh self.
    fn sinh(self) -> Self;
    /// cosh self.
    fn cosh(self) -> Self;
    /// e^self.
    fn exp(self) -> Self;
    /// ln self.
    fn ln(self) -> Self;
    /// self^e.
    fn pow(self, e: Self) -> Self;
    /// √(self² + o²) without overflow.
    fn hypot(self, o: Self) -> Self;
    /// Bessel function of the first kind, order `n`.
    fn jn(n: i32, x: Self) -> Self;
    /// Bessel function of the second kind, order `n`.
    fn yn(n: i32, x: Self) -> Self;
    /// Rounds to the nearest integer, ties to even.
    fn round_even(self) -> Self;
    /// `2^n`, saturating to 0 or infinity outside the exponent range.
    fn exp2i(n: i64) -> Self;
    /// Whether the sign bit is set (also for zeros and NaNs).
    fn sign_bit(self) -> bool;
    /// Whether `self` and `o` are the same value bit for bit.
    fn same_bits(self, o: Self) -> bool;
    /// `self < o` (false when either is NaN).
    fn lt(self, o: Self) -> bool;
    /// `self == 0` (either sign).
    fn is_zero(self) -> bool {
        self.to_f64() == 0.0 && !self.to_f64().is_nan()
    }
    /// `|self|`.
    fn abs(self) -> Self {
        if self.sign_bit() {
            -self
        } else {
            self
        }
    }
    /// Whether `self` is an integer (false for infinities and NaN).
    fn is_integer(self) -> bool {
        self.to_f64().is_finite() && self.round_even().same_bits(self)
    }
}

mod libm {
    extern "C" {
        pub fn sin(x: f64) -> f64;
        pub fn cos(x: f64) -> f64;
        pub fn tan(x: f64) -> f64;
        pub fn sinh(x: f64) -> f64;
        pub fn cosh(x: f64) -> f64;
        pub fn exp(x: f64) -> f64;
        pub fn log(x: f64) -> f64;
        pub fn pow(x: f64, y: f64) -> f64;
        pub fn sqrt(x: f64) -> f64;
        pub fn hypot(x: f64, y: f64) -> f64;
        pub fn jn(n: i32, x: f64) -> f64;
        pub fn yn(n: i32, x: f64) -> f64;
        pub fn rint(x: f64) -> f64;
        pub fn ldexp(x: f64, n: i32) -> f64;
    }
}

macro_rules! f64_libm {
    ($($name:ident => $f:ident;)*) => {
        $(
            fn $name(self) -> f64 {
                // SAFETY: a pure libm function of one double.
                unsafe { libm::$f(self) }
            }
        )*
    };
}

impl Real for f64 {
    const X87: bool = false;
    const DIGAMMA_SHIFT: f64 = 10.0;
    fn of(v: f64) -> f64 {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn beyond_double(self) -> bool {
        false
    }
    fn pi() -> f64 {
        core::f64::consts::PI
    }
    fn ln2() -> f64 {
        core::f64::consts::LN_2
    }
    fn ln10() -> f64 {
        core::f64::consts::LN_10
    }
    f64_libm! {
        sqrt => sqrt;
        sin => sin;
        cos => cos;
        tan => tan;
        sinh => sinh;
        cosh => cosh;
        exp => exp;
        ln => log;
        round_even => rint;
    }
    fn pow(self, e: f64) -> f64 {
        // SAFETY: a pure libm function.
        unsafe { libm::pow(self, e) }
    }
    fn hypot(self, o: f64) -> f64 {
        // SAFETY: a pure libm function.
        unsafe { libm::hypot(self, o) }
    }
    fn jn(n: i32, x: f64) -> f64 {
        // SAFETY: a pure libm function.
        unsafe { libm::jn(n, x) }
    }
    fn yn(n: i32, x: f64) -> f64 {
        // SAFETY: a pure libm function.
        unsafe { libm::yn(n, x) }
    }
    fn exp2i(n: i64) -> f64 {
        // SAFETY: a pure libm function; n is clamped into int range.
        unsafe { libm::ldexp(1.0, n.clamp(-4000, 4000) as i32) }
    }
    fn sign_bit(self) -> bool {
        self.is_sign_negative()
    }
    fn same_bits(self, o: f64) -> bool {
        self.to_bits() == o.to_bits()
    }
    fn lt(self, o: f64) -> bool {
        self < o
    }
}

impl Real for F80 {
    const X87: bool = true;
    const DIGAMMA_SHIFT: f64 = 16.0;
    fn of(v: f64) -> F80 {
        F80::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        F80::to_f64(self)
    }
    fn beyond_double(self) -> bool {
        F80::beyond_double(self)
    }
    fn pi() -> F80 {
        F80::PI.get()
    }
    fn ln2() -> F80 {
        F80::LN2.get()
    }
    fn ln10() -> F80 {
        F80::LN10.get()
    }
    fn sqrt(self) -> F80 {
        F80::sqrt(self)
    }
    fn sin(self) -> F80 {
        self.call1(crate::f80::libm::sinl)
    }
    fn cos(self) -> F80 {
        self.call1(crate::f80::libm::cosl)
    }
    fn tan(self) -> F80 {
        self.call1(crate::f80::libm::tanl)
    }
    fn sinh(self) -> F80 {
        self.call1(crate::f80::libm::sinhl)
    }
    fn cosh(self) -> F80 {
        self.call1(crate::f80::libm::coshl)
    }
    fn exp(self) -> F80 {
        self.call1(crate::f80::libm::expl)
    }
    fn ln(self) -> F80 {
        self.call1(crate::f80::libm::logl)
    }
    fn pow(self, e: F80) -> F80 {
        self.call2(crate::f80::libm::powl, e)
    }
    fn hypot(self, o: F80) -> F80 {
        self.call2(crate::f80::libm::hypotl, o)
    }
    fn jn(n: i32, x: F80) -> F80 {
        x.call_int_first(crate::f80::libm::jnl, n)
    }
    fn yn(n: i32, x: F80) -> F80 {
        x.call_int_first(crate::f80::libm::ynl, n)
    }
    fn round_even(self) -> F80 {
        self.call1(crate::f80::libm::rintl)
    }
    fn exp2i(n: i64) -> F80 {
        F80::exp2i(n)
    }
    fn sign_bit(self) -> bool {
        self.0[9] & 0x80 != 0
    }
    fn same_bits(self, o: F80) -> bool {
        self.0[..10] == o.0[..10]
    }
    fn lt(self, o: F80) -> bool {
        F80::lt(self, o)
    }
}

/// The digamma function ψ = Γ'/Γ, for the derivatives of `tgamma` and
/// `lgamma` (libm has no digamma). Reflection below 1/2, the recurrence
/// ψ(x) = ψ(x+1) − 1/x up to `x ≥ shift`, then the asymptotic series; the
/// shift is chosen per precision so the first omitted term is below half
/// an ulp ([`Real::DIGAMMA_SHIFT`]). NaN at the poles (0, −1, −2, …).
pub fn digamma<R: Real>(x: R) -> R {
    let one = R::of(1.0);
    if x.lt(R::of(0.5)) {
        if x.is_integer() {
            return R::of(f64::NAN);
        }
        // ψ(x) = ψ(1 − x) − π / tan(π x), with tan(π x) = tan(π r) for the
        // exactly reduced r = x − round(x) ∈ [−1/2, 1/2].
        let r = x - x.round_even();
        return digamma(one - x) - R::pi() / (R::pi() * r).tan();
    }
    let mut x = x;
    let mut acc = R::of(0.0);
    while x.lt(R::of(R::DIGAMMA_SHIFT)) {
        acc = acc - one / x;
        x = x + one;
    }
    // ln x − 1/(2x) − Σ B₂ₖ / (2k x²ᵏ), Bernoulli numbers B₂ … B₂₀.
    const TERMS: [(f64, f64); 10] = [
        (1.0, 12.0),
        (-1.0, 120.0),
        (1.0, 252.0),
        (-1.0, 240.0),
        (1.0, 132.0),
        (-691.0, 32760.0),
        (1.0, 12.0),
        (-3617.0, 8160.0),
        (43867.0, 14364.0),
        (-174611.0, 6600.0),
    ];
    let inv2 = one / (x * x);
    let mut series = R::of(0.0);
    for &(num, den) in TERMS.iter().rev() {
        series = (series + R::of(num) / R::of(den)) * inv2;
    }
    acc + x.ln() - one / (R::of(2.0) * x) - series
}
