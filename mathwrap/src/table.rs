//! The wrapped functions: one line each — the double, float and long
//! double symbols, the shape of the call — and their partial derivatives,
//! written once over [`Real`] for every precision.
//!
//! Conventions where the derivative is not classical (see
//! `docs/math-functions.md`): `fabs'(±0) = ±1` (the sign bit decides, like
//! the inline bit-trick rule); `fmin`/`fmax` give the partial 1 to the
//! argument returned, the first one on ties; `fdim` is (1, −1) when it
//! returns `x − y`, else (0, 0); rounding functions have a passive result;
//! `pow`'s partial for the exponent is 0 when the base is ≤ 0; `hypot` and
//! `atan2` at (0, 0) have partials 0; `sqrt'(0)` and `cbrt'(0)` are +∞ (the
//! formula as it stands).

use crate::real::{digamma, Real};

/// How a wrapped function takes its arguments and returns its results,
/// which is what its wrapper has to handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `R f(R)`.
    Unary,
    /// `R f(R, R)`.
    Binary,
    /// `R fma(R, R, R)`: two blocks, `t = x·y`, then `t + z`.
    Fma,
    /// `R f(R, int n)`: `ldexp`, `scalbn`.
    ScaleInt,
    /// `R f(R, long n)`: `scalbln`.
    ScaleLong,
    /// `R f(int n, R)`: `jn`, `yn`.
    IntFirst,
    /// `R frexp(R, int *e)`.
    Frexp,
    /// `R modf(R, R *integral)`: the integral part is passive.
    Modf,
    /// `void sincos(R, R *s, R *c)`.
    SinCos,
    /// `R remquo(R, R, int *quo)`.
    Remquo,
    /// `R lgamma_r(R, int *sign)`.
    LgammaR,
    /// An integer result: `long lround(R)` and friends (nothing active).
    ToInt,
}

/// One precision of a wrapped function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `float`, in `xmm` registers.
    F32,
    /// `double`, in `xmm` registers.
    F64,
    /// `long double` (x87 80-bit), on the stack and in `st(0)`.
    F80,
}

macro_rules! functions {
    ($($v:ident: $shape:ident, $d:literal, $f:literal, $l:literal;)*) => {
        /// A wrapped libm function.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(missing_docs)]
        pub enum Func { $($v),* }

        impl Func {
            /// Every wrapped function.
            pub const ALL: &'static [Func] = &[$(Func::$v),*];

            /// The call's shape.
            pub fn shape(self) -> Shape {
                match self { $(Func::$v => Shape::$shape),* }
            }

            /// The symbol of the given precision.
            pub fn symbol(self, p: Precision) -> &'static str {
                match (self, p) {
                    $(
                        (Func::$v, Precision::F64) => $d,
                        (Func::$v, Precision::F32) => $f,
                        (Func::$v, Precision::F80) => $l,
                    )*
                }
            }
        }
    };
}

functions! {
    Sin: Unary, "sin", "sinf", "sinl";
    Cos: Unary, "cos", "cosf", "cosl";
    Tan: Unary, "tan", "tanf", "tanl";
    Asin: Unary, "asin", "asinf", "asinl";
    Acos: Unary, "acos", "acosf", "acosl";
    Atan: Unary, "atan", "atanf", "atanl";
    Sinh: Unary, "sinh", "sinhf", "sinhl";
    Cosh: Unary, "cosh", "coshf", "coshl";
    Tanh: Unary, "tanh", "tanhf", "tanhl";
    Asinh: Unary, "asinh", "asinhf", "asinhl";
    Acosh: Unary, "acosh", "acoshf", "acoshl";
    Atanh: Unary, "atanh", "atanhf", "atanhl";
    Exp: Unary, "exp", "expf", "expl";
    Exp2: Unary, "exp2", "exp2f", "exp2l";
    Exp10: Unary, "exp10", "exp10f", "exp10l";
    Expm1: Unary, "expm1", "expm1f", "expm1l";
    Log: Unary, "log", "logf", "logl";
    Log2: Unary, "log2", "log2f", "log2l";
    Log10: Unary, "log10", "log10f", "log10l";
    Log1p: Unary, "log1p", "log1pf", "log1pl";
    Sqrt: Unary, "sqrt", "sqrtf", "sqrtl";
    Cbrt: Unary, "cbrt", "cbrtf", "cbrtl";
    Fabs: Unary, "fabs", "fabsf", "fabsl";
    Erf: Unary, "erf", "erff", "erfl";
    Erfc: Unary, "erfc", "erfcf", "erfcl";
    Tgamma: Unary, "tgamma", "tgammaf", "tgammal";
    Lgamma: Unary, "lgamma", "lgammaf", "lgammal";
    J0: Unary, "j0", "j0f", "j0l";
    J1: Unary, "j1", "j1f", "j1l";
    Y0: Unary, "y0", "y0f", "y0l";
    Y1: Unary, "y1", "y1f", "y1l";
    Floor: Unary, "floor", "floorf", "floorl";
    Ceil: Unary, "ceil", "ceilf", "ceill";
    Trunc: Unary, "trunc", "truncf", "truncl";
    Round: Unary, "round", "roundf", "roundl";
    Roundeven: Unary, "roundeven", "roundevenf", "roundevenl";
    Nearbyint: Unary, "nearbyint", "nearbyintf", "nearbyintl";
    Rint: Unary, "rint", "rintf", "rintl";
    Atan2: Binary, "atan2", "atan2f", "atan2l";
    Pow: Binary, "pow", "powf", "powl";
    Hypot: Binary, "hypot", "hypotf", "hypotl";
    Fmod: Binary, "fmod", "fmodf", "fmodl";
    Remainder: Binary, "remainder", "remainderf", "remainderl";
    Fmin: Binary, "fmin", "fminf", "fminl";
    Fmax: Binary, "fmax", "fmaxf", "fmaxl";
    Fdim: Binary, "fdim", "fdimf", "fdiml";
    Copysign: Binary, "copysign", "copysignf", "copysignl";
    Fma: Fma, "fma", "fmaf", "fmal";
    Ldexp: ScaleInt, "ldexp", "ldexpf", "ldexpl";
    Scalbn: ScaleInt, "scalbn", "scalbnf", "scalbnl";
    Scalbln: ScaleLong, "scalbln", "scalblnf", "scalblnl";
    Jn: IntFirst, "jn", "jnf", "jnl";
    Yn: IntFirst, "yn", "ynf", "ynl";
    Frexp: Frexp, "frexp", "frexpf", "frexpl";
    Modf: Modf, "modf", "modff", "modfl";
    Sincos: SinCos, "sincos", "sincosf", "sincosl";
    Remquo: Remquo, "remquo", "remquof", "remquol";
    LgammaR: LgammaR, "lgamma_r", "lgammaf_r", "lgammal_r";
    Lround: ToInt, "lround", "lroundf", "lroundl";
    Llround: ToInt, "llround", "llroundf", "llroundl";
    Lrint: ToInt, "lrint", "lrintf", "lrintl";
    Llrint: ToInt, "llrint", "llrintf", "llrintl";
    Ilogb: ToInt, "ilogb", "ilogbf", "ilogbl";
}

/// `1/√((1 − x)(1 + x))`, the derivative of `asin` (without the
/// cancellation of `1 − x²` near ±1).
fn inv_sqrt_one_minus_sq<R: Real>(x: R) -> R {
    let one = R::of(1.0);
    one / ((one - x) * (one + x)).sqrt()
}

impl Func {
    /// `∂f/∂x` of a function of one argument at `x`, where `r = f(x)` as
    /// libm returned it; `None` when the result is passive (piecewise
    /// constant functions).
    pub fn unary_partial<R: Real>(self, x: R, r: R) -> Option<R> {
        let one = R::of(1.0);
        let two = R::of(2.0);
        Some(match self {
            Func::Sin => x.cos(),
            Func::Cos => -x.sin(),
            Func::Tan => {
                let c = x.cos();
                one / (c * c)
            }
            Func::Asin => inv_sqrt_one_minus_sq(x),
            Func::Acos => -inv_sqrt_one_minus_sq(x),
            Func::Atan => {
                if x.abs().lt(R::of(1e150)) {
                    one / (one + x * x)
                } else {
                    // x² would overflow: 1/(1 + x²) = (1/x)² to precision.
                    let t = one / x;
                    t * t
                }
            }
            Func::Sinh => x.cosh(),
            Func::Cosh => x.sinh(),
            Func::Tanh => {
                let c = x.cosh();
                one / (c * c)
            }
            Func::Asinh => {
                if x.abs().lt(R::of(1e150)) {
                    one / (one + x * x).sqrt()
                } else {
                    one / x.abs()
                }
            }
            Func::Acosh => {
                if x.lt(R::of(1e150)) {
                    one / ((x - one) * (x + one)).sqrt()
                } else {
                    // (x − 1)(x + 1) would overflow: 1/√(x² − 1) = 1/x to precision.
                    one / x
                }
            }
            Func::Atanh => one / ((one - x) * (one + x)),
            Func::Exp => r,
            Func::Exp2 => R::ln2() * r,
            Func::Exp10 => R::ln10() * r,
            Func::Expm1 => x.exp(),
            Func::Log => one / x,
            Func::Log2 => one / (x * R::ln2()),
            Func::Log10 => one / (x * R::ln10()),
            Func::Log1p => one / (one + x),
            Func::Sqrt => one / (two * r),
            Func::Cbrt => one / (R::of(3.0) * r * r),
            Func::Fabs => {
                if x.sign_bit() {
                    -one
                } else {
                    one
                }
            }
            Func::Erf | Func::Erfc => {
                let d = two / R::pi().sqrt() * (-(x * x)).exp();
                if self == Func::Erf {
                    d
                } else {
                    -d
                }
            }
            Func::Tgamma => r * digamma(x),
            Func::Lgamma | Func::LgammaR => digamma(x),
            Func::J0 => -R::jn(1, x),
            Func::J1 => bessel_first_derivative::<R>(1, x, true),
            Func::Y0 => -R::yn(1, x),
            Func::Y1 => bessel_first_derivative::<R>(1, x, false),
            Func::Floor
            | Func::Ceil
            | Func::Trunc
            | Func::Round
            | Func::Roundeven
            | Func::Nearbyint
            | Func::Rint
            | Func::Lround
            | Func::Llround
            | Func::Lrint
            | Func::Llrint
            | Func::Ilogb => return None,
            // Fixed partial 1 for the value-carrying result.
            Func::Modf | Func::Frexp | Func::Sincos => one,
            _ => unreachable!("{self:?} is not a function of one argument"),
        })
    }

    /// `(∂f/∂x, ∂f/∂y)` of a function of two arguments at `(x, y)`, where
    /// `r = f(x, y)` as libm returned it.
    pub fn binary_partials<R: Real>(self, x: R, y: R, r: R) -> (R, R) {
        let zero = R::of(0.0);
        let one = R::of(1.0);
        match self {
            Func::Atan2 => {
                // atan2(y = x, x = y): ∂/∂first = second/(first² + second²),
                // ∂/∂second = −first/(…); through hypot so nothing overflows.
                let d = x * x + y * y;
                let df = d.to_f64();
                if df == 0.0 && x.is_zero() && y.is_zero() {
                    (zero, zero)
                } else if df.is_normal() && df < 1e300 {
                    (y / d, -x / d)
                } else {
                    // x² + y² over- or underflows: scale through hypot.
                    let h = x.hypot(y);
                    (y / h / h, -x / h / h)
                }
            }
            Func::Pow => {
                // y·(r/x): y·r overflows near the top of the range where
                // the derivative itself is an ordinary number.
                let dx = if x.is_zero() {
                    y * x.pow(y - one)
                } else {
                    y * (r / x)
                };
                let dy = if R::of(0.0).lt(x) { r * x.ln() } else { zero };
                (dx, dy)
            }
            Func::Hypot => {
                if r.is_zero() {
                    (zero, zero)
                } else {
                    (x / r, y / r)
                }
            }
            Func::Fmod | Func::Remainder | Func::Remquo => {
                // r = x − n·y exactly, n an integer.
                let n = ((x - r) / y).round_even();
                (one, if n.is_zero() { zero } else { -n })
            }
            Func::Fmin | Func::Fmax => {
                if r.same_bits(x) {
                    (one, zero)
                } else {
                    (zero, one)
                }
            }
            Func::Fdim => {
                if zero.lt(r) {
                    (one, -one)
                } else {
                    (zero, zero)
                }
            }
            Func::Copysign => (
                if r.sign_bit() == x.sign_bit() {
                    one
                } else {
                    -one
                },
                zero,
            ),
            _ => unreachable!("{self:?} is not a function of two arguments"),
        }
    }

    /// `∂f/∂x` of `jn(n, x)`/`yn(n, x)`.
    pub fn bessel_partial<R: Real>(self, n: i32, x: R) -> R {
        bessel_first_derivative(n, x, self == Func::Jn)
    }
}

/// `d/dx Zₙ(x) = (Zₙ₋₁(x) − Zₙ₊₁(x)) / 2` for the Bessel functions of the
/// first (`first`) or second kind; `Z₋₁ = −Z₁`.
fn bessel_first_derivative<R: Real>(n: i32, x: R, first: bool) -> R {
    let z = |k: i32| if first { R::jn(k, x) } else { R::yn(k, x) };
    if n == 0 {
        return -z(1);
    }
    (z(n - 1) - z(n + 1)) / R::of(2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::f80::F80;

    /// Central difference of `f` at `x` with step `h`.
    fn diff(f: impl Fn(f64) -> f64, x: f64, h: f64) -> f64 {
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    #[test]
    fn symbols_are_unique_and_shapes_consistent() {
        let mut seen = std::collections::HashSet::new();
        for f in Func::ALL {
            for p in [Precision::F32, Precision::F64, Precision::F80] {
                assert!(seen.insert(f.symbol(p)), "{} twice", f.symbol(p));
            }
        }
        assert_eq!(Func::Fma.shape(), Shape::Fma);
        assert_eq!(Func::Sincos.symbol(Precision::F80), "sincosl");
    }

    #[test]
    fn unary_partials_match_finite_differences() {
        // (function, libm value, points)
        type Case = (Func, fn(f64) -> f64, &'static [f64]);
        let cases: &[Case] = &[
            (Func::Sin, f64::sin, &[0.1, 2.5, -7.0]),
            (Func::Tan, f64::tan, &[0.3, -1.2]),
            (Func::Asin, f64::asin, &[0.5, -0.9]),
            (Func::Acos, f64::acos, &[0.5, -0.9]),
            (Func::Atan, f64::atan, &[0.5, -30.0]),
            (Func::Tanh, f64::tanh, &[0.5, -3.0]),
            (Func::Asinh, f64::asinh, &[0.5, -30.0]),
            (Func::Acosh, f64::acosh, &[1.5, 30.0]),
            (Func::Atanh, f64::atanh, &[0.5, -0.9]),
            (Func::Exp2, f64::exp2, &[0.5, -3.0]),
            (Func::Log10, f64::log10, &[0.5, 300.0]),
            (Func::Log1p, f64::ln_1p, &[0.5, -0.3]),
            (Func::Cbrt, f64::cbrt, &[0.5, -8.0]),
        ];
        for &(f, g, xs) in cases {
            for &x in xs {
                let d = f.unary_partial(x, g(x)).unwrap();
                let fd = diff(g, x, 1e-6 * x.abs().max(1e-3));
                assert!(
                    (d - fd).abs() <= 1e-7 * d.abs().max(1.0),
                    "{f:?} at {x}: {d} vs {fd}"
                );
            }
        }
    }

    #[test]
    fn digamma_values() {
        // ψ(1) = −γ, ψ(1/2) = −γ − 2 ln 2, ψ(−1/2) = 2 − γ − 2 ln 2.
        let gamma = 0.577_215_664_901_532_9;
        let ln2 = core::f64::consts::LN_2;
        for (x, want) in [
            (1.0, -gamma),
            (0.5, -gamma - 2.0 * ln2),
            (-0.5, 2.0 - gamma - 2.0 * ln2),
            (30.25, 3.392_876_200_343_285),
        ] {
            let got = digamma(x);
            assert!(
                (got - want).abs() <= 2e-15 * want.abs().max(1.0),
                "ψ({x}) = {got}, want {want}"
            );
            let got = digamma(F80::from_f64(x)).to_f64();
            assert!(
                (got - want).abs() <= 2e-16 * want.abs().max(1.0),
                "ψ_80({x}) = {got}, want {want}"
            );
        }
        assert!(digamma(-3.0).is_nan());
    }

    #[test]
    fn binary_partials_follow_the_conventions() {
        assert_eq!(
            Func::Atan2.binary_partials(1.0, 2.0, 1f64.atan2(2.0)),
            (2.0 / 5.0, -1.0 / 5.0)
        );
        assert_eq!(Func::Atan2.binary_partials(0.0, 0.0, 0.0), (0.0, 0.0));
        assert_eq!(Func::Pow.binary_partials(0.0, 2.0, 0.0), (0.0, 0.0));
        let (dx, dy) = Func::Pow.binary_partials(2.0, 3.0, 8.0);
        assert_eq!(dx, 12.0);
        assert!((dy - 8.0 * core::f64::consts::LN_2).abs() < 1e-15);
        assert_eq!(Func::Pow.binary_partials(-2.0, 3.0, -8.0), (12.0, 0.0));
        assert_eq!(Func::Fmod.binary_partials(7.5, 2.0, 1.5), (1.0, -3.0));
        assert_eq!(Func::Remainder.binary_partials(7.5, 2.0, -0.5), (1.0, -4.0));
        assert_eq!(Func::Fmin.binary_partials(1.0, 1.0, 1.0), (1.0, 0.0));
        assert_eq!(Func::Fmax.binary_partials(1.0, 2.0, 2.0), (0.0, 1.0));
        assert_eq!(Func::Fdim.binary_partials(1.0, 2.0, 0.0), (0.0, 0.0));
        assert_eq!(Func::Copysign.binary_partials(1.0, -2.0, -1.0), (-1.0, 0.0));
        assert_eq!(Func::Fabs.unary_partial(-0.0, 0.0), Some(-1.0));
        assert_eq!(Func::Floor.unary_partial(1.5, 1.0), None);
    }
}
