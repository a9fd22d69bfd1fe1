//! Dot mode as a back-end of the shared AD rules: a shade is the tangent
//! (as `f64` bits), stored in the shadow in the value's format.

use super::DotState;
use crate::ad::apply::RuleMemory;
use crate::ad::{Mode, Shade};
use crate::context::ThreadCtx;
use rewriter::semantics::Elem;

/// Dot mode's back-end.
pub struct DotMode;

/// The back-end the dot tool hands to the rules.
pub static DOT_MODE: DotMode = DotMode;

/// The tangent a shade holds.
pub fn tangent(s: Shade) -> f64 {
    f64::from_bits(s.0)
}

/// The shade of tangent `t` (+0 is passive; −0 is kept, so that a word
/// 0x8000_0000 of a wider tangent, read as a float, survives).
pub fn shade(t: f64) -> Shade {
    Shade(t.to_bits())
}

/// Reads a tangent stored as a value of type `elem` (missing bytes are 0).
pub fn load(sh: &[u8], elem: Elem) -> f64 {
    let mut b = [0u8; 10];
    let n = sh.len().min(10);
    b[..n].copy_from_slice(&sh[..n]);
    match elem {
        Elem::F32 => f64::from(f32::from_le_bytes(b[..4].try_into().unwrap())),
        Elem::F64 => f64::from_le_bytes(b[..8].try_into().unwrap()),
        Elem::F80 => crate::ad::guest::f80_to_f64(&b),
    }
}

/// Stores tangent `t` as a value of type `elem` into `out` (zero beyond).
pub fn store(out: &mut [u8], elem: Elem, t: f64) {
    let mut b = [0u8; 10];
    let w = match elem {
        Elem::F32 => {
            b[..4].copy_from_slice(&(t as f32).to_le_bytes());
            4
        }
        Elem::F64 => {
            b[..8].copy_from_slice(&t.to_le_bytes());
            8
        }
        Elem::F80 => {
            b = f64_to_f80(t);
            10
        }
    };
    let n = out.len().min(w);
    out.fill(0);
    out[..n].copy_from_slice(&b[..n]);
}

/// A double as an x87 80-bit value (exact), in software.
pub fn f64_to_f80(v: f64) -> [u8; 10] {
    let bits = v.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (e80, sig): (u16, u64) = match (exp, frac) {
        (0, 0) => (0, 0),
        (0x7ff, f) => (0x7fff, 1 << 63 | f << 11),
        (0, f) => {
            // Subnormal: normalise the fraction.
            let shift = f.leading_zeros() - 11;
            let e = 1 - 1023 - shift as i32 + 16383;
            (e as u16, (f << (11 + shift)) | 1 << 63)
        }
        (e, f) => ((e - 1023 + 16383) as u16, 1 << 63 | f << 11),
    };
    let mut b = [0u8; 10];
    b[..8].copy_from_slice(&sig.to_le_bytes());
    b[8..].copy_from_slice(&(e80 | sign).to_le_bytes());
    b
}

impl Mode for DotMode {
    fn name(&self) -> &'static str {
        "dot"
    }

    /// Tangents propagate always (`DG_DISABLE` only silences diagnostics
    /// in Derivgrind's forward mode).
    fn producing(&self) -> bool {
        true
    }

    fn read(&self, sh: &[u8], elem: Elem) -> Shade {
        shade(load(sh, elem))
    }

    fn write(&self, out: &mut [u8], elem: Elem, s: Shade) {
        store(out, elem, tangent(s))
    }

    /// `dot(y) = pa · dot(a) + pb · dot(b)`; a passive operand adds
    /// nothing (not `0 · ∞`).
    fn combine(&self, _ctx: &mut ThreadCtx, (a, pa): (Shade, f64), (b, pb): (Shade, f64)) -> Shade {
        let term = |s: Shade, p: f64| if s.is_active() { p * tangent(s) } else { 0.0 };
        shade(term(a, pa) + term(b, pb))
    }

    fn memory<'a>(&self, ctx: &'a mut ThreadCtx) -> &'a mut RuleMemory {
        &mut ctx.dot().rule_memory
    }

    fn memory_ref<'a>(&self, ctx: &'a ThreadCtx) -> &'a RuleMemory {
        &ctx.dot_ref().rule_memory
    }

    /// A tangent does not name its value (a sum and its operand share
    /// one): the value's bits are mixed in.
    fn key(&self, s: Shade, value_bits: u64) -> u32 {
        if !s.is_active() {
            return 0;
        }
        let v = value_bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ s.0;
        (v ^ v >> 32) as u32 | 1
    }

    fn granules_tell_layout(&self) -> bool {
        false
    }

    fn signed_copy(&self, sh: &[u8], negate: bool, out: &mut [u8]) -> bool {
        out.copy_from_slice(sh);
        if negate && sh.iter().any(|&b| b != 0) {
            if let Some(top) = out.last_mut() {
                *top ^= 0x80;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f80_conversions_round_trip() {
        for v in [1.0, -2.5, 1e-310, 3.0e300, f64::MIN_POSITIVE, 0.1, -0.0] {
            let b = f64_to_f80(v);
            assert_eq!(
                crate::ad::guest::f80_to_f64(&b).to_bits(),
                v.to_bits(),
                "{v}"
            );
        }
        let back = |v: f64| crate::ad::guest::f80_to_f64(&f64_to_f80(v));
        assert!(back(f64::INFINITY).is_infinite());
        assert!(back(f64::NAN).is_nan());
        // 1.0 as x87: significand 2^63, exponent 16383.
        let one = f64_to_f80(1.0);
        assert_eq!(u64::from_le_bytes(one[..8].try_into().unwrap()), 1 << 63);
        assert_eq!(u16::from_le_bytes([one[8], one[9]]), 16383);
    }

    #[test]
    fn tangents_are_stored_in_the_value_format() {
        let mut b = [0xffu8; 8];
        store(&mut b, Elem::F32, 0.5);
        assert_eq!(&b[..4], &0.5f32.to_le_bytes());
        assert_eq!(&b[4..], &[0; 4]);
        assert_eq!(load(&b, Elem::F32), 0.5);
        store(&mut b, Elem::F64, -3.25);
        assert_eq!(load(&b, Elem::F64), -3.25);
        assert!(!shade(0.0).is_active());
    }
}
