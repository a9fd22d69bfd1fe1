//! The AD rules every derivative tool shares, and the back-end trait that
//! makes them one tool's or another's.
//!
//! A rule (in [`apply`]) knows what an instruction does to derivatives:
//! which lanes it reads and writes, and the partial derivative of each
//! result lane with respect to each input lane. It does not know what a
//! derivative *is*: it reads each lane's [`Shade`] from the shadow bytes
//! through [`Mode::read`], combines shades with partials through
//! [`Mode::combine`], and writes the result back through [`Mode::write`].
//!
//! - Record mode's shade is a tape index (4 bytes in the value's first
//!   shadow granule, the rest zero), and `combine` appends a tape block.
//! - Dot mode's shade is the tangent itself, kept in the shadow in the
//!   value's own format (float, double, x87 80-bit), and `combine` is
//!   `dot(y) = ∂y/∂a · dot(a) + ∂y/∂b · dot(b)`.
//!
//! Moves, shuffles, blends, masks, gathers, `xsave`, `rep` strings copy
//! shadow bytes as the data moves, which is right for both shades.

pub mod apply;
pub mod avx512;
pub mod guest;
pub mod libm;
pub mod probes;
pub mod replay;
pub mod rounding;
pub mod shadow;
pub mod statesave;

use crate::context::ThreadCtx;
use rewriter::semantics::Elem;

/// One lane's derivative, as a mode sees it: a tape index (record) or the
/// bits of an `f64` tangent (dot). All zero bits are passive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shade(pub u64);

impl Shade {
    /// No derivative.
    pub const PASSIVE: Shade = Shade(0);

    /// Whether the lane carries a derivative.
    pub fn is_active(self) -> bool {
        self.0 != 0
    }
}

/// A derivative back-end: what a shade is and how shades combine.
pub trait Mode: Sync {
    /// The tool's name, for diagnostics ("record", "dot").
    fn name(&self) -> &'static str;

    /// Whether derivatives are produced now (`DG_DISABLE` not in force,
    /// the recording not stopped).
    fn producing(&self) -> bool;

    /// The shade of a value of type `elem` whose shadow bytes are `sh`
    /// (`elem`'s width, or fewer where the data is cut short).
    fn read(&self, sh: &[u8], elem: Elem) -> Shade;

    /// Writes `s` as the shadow of a value of type `elem` into `out` (all
    /// of `out`: `elem`'s width, or the lane's).
    fn write(&self, out: &mut [u8], elem: Elem, s: Shade);

    /// The shade of `φ(a, b)` with partial derivatives `pa`, `pb`; the
    /// caller has checked nothing (passive operands, zero partials).
    fn combine(&self, ctx: &mut ThreadCtx, a: (Shade, f64), b: (Shade, f64)) -> Shade;

    /// The rules' per-thread memory.
    fn memory<'a>(&self, ctx: &'a mut ThreadCtx) -> &'a mut apply::RuleMemory;

    /// The rules' per-thread memory, to read.
    fn memory_ref<'a>(&self, ctx: &'a ThreadCtx) -> &'a apply::RuleMemory;

    /// A key naming the value `value_bits` with shade `s` in the rules'
    /// memory (a remembered shifter sum), nonzero when `s` is active:
    /// record mode's index names its value alone; a tangent does not, so
    /// dot mode mixes in the value.
    fn key(&self, s: Shade, value_bits: u64) -> u32;

    /// Whether the shadow's layout tells how data is split into values:
    /// record mode keeps an index in a value's first 4-byte granule and
    /// zeros after it, so an active second granule means two floats, not
    /// a double; a tangent fills every byte of its value.
    fn granules_tell_layout(&self) -> bool;

    /// Writes into `out` the shadow of ±(the value whose shadow is `sh`),
    /// negated with `negate`, without going through a shade, and returns
    /// true; false when the mode records such a result as any other
    /// (record mode: a block with partial ±1). Dot mode copies the
    /// tangent's bytes, flipping its sign bit: exact for any word of a
    /// tangent, which a shade's conversion to `f64` would not keep
    /// (signalling-NaN patterns in a word of a wider tangent).
    fn signed_copy(&self, sh: &[u8], negate: bool, out: &mut [u8]) -> bool;
}

/// A derivative tool's start: the shadow memory reserved, and (with
/// `DGAD_MATHWRAP`) the libm table built with the tool's host `H`, the
/// soft-float conversions and the probed functions watched.
pub fn start<H: mathwrap::Host>() -> Result<(), String> {
    shadow::reserve_shadow()?;
    if crate::init::config().mathwrap {
        libm::init_softfloat::<H>();
        probes::init();
        let n = libm::init::<H>();
        crate::log!("mathwrap: {} libm entry points answered natively", n);
        if let Some(image) = crate::static_exec::image() {
            // A static program: a stripped one cannot be searched.
            if !image.has_symbols {
                crate::dgad_eprintln!(
                    "{} has no symbol table (stripped): its math functions are differentiated \
                     as machine code, without the analytic wrappers",
                    image.path
                );
            }
        } else if n == 0 && crate::loaded::find(b"libm.so.6").is_some() {
            // Not silently: glibc's machine code for these functions is
            // differentiated instead, accurately only near where it was
            // tabulated (docs/math-functions.md).
            crate::dgad_eprintln!(
                "none of libm's functions were found in its symbol table: math functions \
                 are differentiated as machine code, without the analytic wrappers"
            );
        }
    }
    Ok(())
}

/// The first four bytes of `s` written as a value of type `elem`: what a
/// general register's low word holds when the value is moved there.
pub fn low_word(m: &dyn Mode, s: Shade, elem: Elem) -> u32 {
    let mut b = [0u8; 16];
    let w = elem_bytes(elem);
    m.write(&mut b[..w], elem, s);
    u32::from_le_bytes(b[..4].try_into().unwrap())
}

/// Bytes of a value of type `e`.
pub fn elem_bytes(e: Elem) -> usize {
    match e {
        Elem::F32 => 4,
        Elem::F64 => 8,
        Elem::F80 => 10,
    }
}

/// The element type of a general-register or memory word of `width`
/// bytes read as floating-point data (8: a double, else a float).
pub fn word_elem(width: usize) -> Elem {
    if width >= 8 {
        Elem::F64
    } else {
        Elem::F32
    }
}
