//! One value of a value file (`dg-input-dots`, `dg-output-bars`, …): how
//! it is read and written. Without `std`, so that the runtime reads and
//! writes the same text as `dg-eval`.

use alloc::string::String;
use core::fmt::Write as _;

/// Significant digits of written values: Derivgrind's `tape-evaluation`
/// writes with `std::setprecision(16)` (`%.16g`), so dgad does as well; the
/// last digit may then differ from the shortest round-trip form.
pub const VALUE_PRECISION: usize = 16;

/// `value` as Derivgrind's `tape-evaluation` writes it: C's `%.16g`
/// (16 significant digits, trailing zeros removed, exponent form `1e+20`
/// below 1e-4 and from 1e16 on), `inf`, `-inf`, `nan`, `-nan`, `-0`.
pub fn format_value(value: f64) -> String {
    let mut s = String::new();
    push_value(&mut s, value);
    s
}

pub(crate) fn push_value(out: &mut String, v: f64) {
    push_general(out, v, VALUE_PRECISION);
}

/// C's `%.{precision}g`. Rust's `{:.Ne}` rounds exactly (to nearest, ties to
/// even on the exact binary value) like glibc's printf, so its digits and
/// exponent are reused and only the layout rules of `%g` are applied here.
fn push_general(out: &mut String, v: f64, precision: usize) {
    if v.is_nan() {
        out.push_str(if v.is_sign_negative() { "-nan" } else { "nan" });
        return;
    }
    if v.is_infinite() {
        out.push_str(if v < 0.0 { "-inf" } else { "inf" });
        return;
    }
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    let p = precision.max(1);
    let mut sci = String::with_capacity(p + 8);
    // Writing to a String cannot fail.
    let _ = write!(sci, "{:.*e}", p - 1, v.abs());
    let (mantissa, exponent) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if v < 0.0 {
        out.push('-');
    }
    if exponent < -4 || exponent >= p as i32 {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        let rest = rest.trim_end_matches('0');
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exponent.unsigned_abs());
    } else if exponent >= 0 {
        let (int, frac) = digits.split_at(exponent as usize + 1);
        out.push_str(int);
        let frac = frac.trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
    } else {
        out.push_str("0.");
        for _ in 0..(-exponent - 1) {
            out.push('0');
        }
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// One value as the files write it (C's `%g` forms, `-nan` included).
pub fn parse_value(token: &str) -> Option<f64> {
    if let Ok(v) = token.parse::<f64>() {
        return Some(v);
    }
    // C's printf writes a NaN with its sign bit set as "-nan".
    let (negative, rest) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token.strip_prefix('+').unwrap_or(token)),
    };
    rest.eq_ignore_ascii_case("nan")
        .then(|| if negative { -f64::NAN } else { f64::NAN })
}
