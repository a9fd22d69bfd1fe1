//! Applies one guest instruction's AD semantics before it executes: reads
//! operand indices and values, writes tape blocks, updates destination
//! shadows. The class comes from `rewriter::semantics`; the partial
//! derivatives of each operation are written once, in [`partials`].

use super::guest::{
    effective_address, operand_shadow, read_index, read_mem, read_shadow, reg_shadow_offset,
    st_value, vec_value, write_shadow, x87_top, ShadowLoc,
};
use super::{elem_bytes, low_word, replay, word_elem, Mode, Shade};
use crate::context::ThreadCtx;
use iced_x86::{
    ConditionCode, EncodingKind, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind,
    Register,
};
use mathwrap::f80::F80;
use rewriter::disasm::is_immediate;
use rewriter::instrument::{
    byte_granular_shift, compares_with_constant, granule_shift, magnitude_shift, sign_bit_op,
    vector_magnitude_shift, writes, written_register_shadows,
};
use rewriter::semantics::{semantics, Elem, FpOp, LogicOp, Semantics, Shape, SpecialKind};
use shadowmem::RegFile;
use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::tool::After;

/// Applies the semantics of `insn` (decoded at translation time), which is
/// about to execute, with the derivatives of mode `m`.
pub fn instrument(ctx: &mut ThreadCtx, insn: &Instruction, m: &dyn Mode) -> After {
    let insn = *insn;
    let mut after = After::Run;
    match semantics(insn.code()) {
        Some(Semantics::FpArith { op, elem, shape }) => fp_arith(ctx, m, &insn, op, elem, shape),
        Some(Semantics::FpConvert { from, to, shape }) => {
            fp_convert(ctx, m, &insn, from, to, shape)
        }
        Some(Semantics::BitLogic(op)) => bit_logic(ctx, m, &insn, op),
        Some(Semantics::Move) => moves(ctx, m, &insn),
        Some(Semantics::Special(SpecialKind::X87)) => x87(ctx, m, &insn),
        Some(Semantics::Special(SpecialKind::String)) => after = strings(ctx, &insn),
        Some(Semantics::Special(SpecialKind::Exchange)) => exchange(ctx, &insn),
        Some(Semantics::Special(SpecialKind::StateSave)) => super::statesave::apply(ctx, &insn),
        Some(Semantics::NoWrite) if compares_with_constant(&insn) => {
            equal_to_constant(ctx, m, &insn)
        }
        Some(Semantics::NoWrite) | Some(Semantics::Special(SpecialKind::Control)) => {}
        Some(Semantics::Passive)
            if byte_granular_shift(&insn)
                || granule_shift(&insn)
                || granule_shift_by_register(ctx, &insn) =>
        {
            moves(ctx, m, &insn)
        }
        Some(Semantics::Passive) if sign_bit_op(&insn) => sign_bit(ctx, m, &insn),
        Some(Semantics::Passive) if magnitude_shift(&insn) => magnitude_pair(ctx, m, &insn),
        Some(Semantics::Passive) if vector_magnitude_pair(ctx, m, &insn) => {}
        Some(Semantics::Passive) if exponent_scaling(ctx, m, &insn) => {}
        Some(Semantics::Passive) if gpr_exponent_scaling(ctx, m, &insn) => {}
        Some(Semantics::Passive) if rewriter::instrument::is_gpr_add_sub(&insn) => {
            if gpr_active_input(ctx, m, &insn) {
                warn_once(
                    &insn,
                    "integer arithmetic on the bits of an active value in a general register \
                     (other than an exponent add of k·2^52 or k·2^23); the result is treated as a \
                     constant",
                );
            }
            clear_written(ctx, &insn, false)
        }
        Some(Semantics::Passive) => {
            let report = rewriter::instrument::is_vector_integer_arithmetic(&insn)
                && !exponent_extraction(ctx, &insn)
                || rewriter::instrument::half_precision_conversion(&insn);
            clear_written(
                ctx,
                &insn,
                report && !reads_only_shifter_sums(ctx, m, &insn),
            )
        }
        Some(Semantics::Special(SpecialKind::GatherScatter)) => gather_scatter(ctx, &insn),
        None => clear_written(ctx, &insn, true),
    }
    if crate::init::try_config().is_some_and(|c| c.trace) {
        trace(ctx, &insn);
    }
    after
}

/// One `DGAD_LOG` line: the instruction and the first index of each
/// register or memory operand after its semantics were applied.
fn trace(ctx: &ThreadCtx, insn: &Instruction) {
    use core::fmt::Write as _;
    let mut line = crate::sys::StackBuf::<256>::new();
    let mut dis = crate::sys::StackBuf::<128>::new();
    crate::diag::disassemble(insn.ip(), &mut dis);
    let _ = write!(
        line,
        "{:#x} {:<40}",
        insn.ip(),
        core::str::from_utf8(dis.as_bytes()).unwrap_or("?")
    );
    for op in 0..insn.op_count() {
        let Some(loc) = operand_shadow(ctx, insn, op) else {
            continue;
        };
        let size = match insn.op_kind(op) {
            OpKind::Register => insn.op_register(op).size().clamp(4, 64),
            _ => insn.memory_size().size().clamp(4, 64),
        }
        .next_multiple_of(4);
        let mut sh = [0u8; 64];
        read_shadow(ctx, loc, &mut sh[..size]);
        let _ = write!(line, " op{op}=");
        if size <= 8 {
            let _ = write!(line, "{}", read_index(ctx, loc));
        } else {
            let _ = write!(line, "[");
            for (g, c) in sh[..size].chunks(4).enumerate() {
                let i = u32::from_le_bytes(c.try_into().unwrap());
                if i != 0 {
                    let _ = write!(line, "{g}:{i} ");
                }
            }
            let _ = write!(line, "]");
        }
    }
    crate::log!("{}", core::str::from_utf8(line.as_bytes()).unwrap_or("?"));
}

/// Partial derivatives of `op` at `(a, b)`: (∂/∂a, ∂/∂b). The conventions
/// at kinks (min/max ties, sqrt at 0) are documented in docs/limitations.md.
/// Quotients divide twice rather than by a square or product: `b·b`
/// overflows from |b| ≈ 1.3e154 and vanishes below ≈ 1.5e-154, where
/// `a/b/b` is still an ordinary number (a partial of 0 or ∞ there was a
/// silent wrong derivative).
pub fn partials(op: FpOp, a: f64, b: f64) -> (f64, f64) {
    match op {
        FpOp::Add => (1.0, 1.0),
        FpOp::Sub => (1.0, -1.0),
        FpOp::Mul => (b, a),
        FpOp::Div => (1.0 / b, -(a / b / b)),
        FpOp::Sqrt => (0.5 / a.sqrt(), 0.0),
        FpOp::Rcp => (-(1.0 / a / a), 0.0),
        FpOp::Rsqrt => (-(0.5 / a / a.sqrt()), 0.0),
        // x86 min/max return the second operand unless the first is
        // strictly smaller (larger).
        FpOp::Min => {
            if a < b {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        }
        FpOp::Max => {
            if a > b {
                (1.0, 0.0)
            } else {
                (0.0, 1.0)
            }
        }
        FpOp::Round => (0.0, 0.0),
        FpOp::Scalef => (b.floor().exp2(), 0.0),
        FpOp::Reduce => (1.0, 0.0),
        FpOp::HAdd | FpOp::AddSub | FpOp::HSub | FpOp::Fma(_) | FpOp::Mantissa | FpOp::Range => {
            unreachable!("lane-structured ops and ops that need their immediate")
        }
    }
}

/// The shifter `a ± b` adds when it is the first half of the rounding
/// trick `(x + c) − c`: one operand passive, the active one no larger, and
/// the passive one a *shifter*, whose ulp is so coarse that the sum keeps
/// none of `x`'s finer bits: 2^e or 1.5·2^e, plus an integer below 2^11
/// (an exponent bias), for 2^e from 2^42 to 2^53 (doubles; 2^13 to 2^24
/// for floats). Compilers add and subtract 2^52 or 1.5·2^52 for `rint`,
/// `floor`, … without SSE4.1; vectorised `exp`, `sin` and `cos` kernels
/// keep a few fraction bits of `x·c1 + 1.5·2^48 + 1023` to index a table.
/// Other constants of those binades (a polynomial's 9.7e15) are not
/// shifters, even subtracted again. The result is the signed addend (−c
/// for `x − c`); `c − x` is not taken.
///
/// Such a sum alone is an ordinary sum, derivative 1: polynomials end in
/// coefficients of that size (cephes' `j0`, `t·1e15 + 5e15`). Only the
/// subtraction of the shifter that follows ([`undoes_shift`]) makes the
/// pair a staircase in `x`, derivative 0.
pub fn shifter_addend(
    op: FpOp,
    elem: Elem,
    (va, ia): (f64, Shade),
    (vb, ib): (f64, Shade),
) -> Option<f64> {
    if !matches!(op, FpOp::Add | FpOp::Sub) || ia.is_active() == ib.is_active() {
        return None;
    }
    if op == FpOp::Sub && !ia.is_active() {
        return None;
    }
    let (c, x) = if !ia.is_active() { (va, vb) } else { (vb, va) };
    if x.abs() > c.abs() || !is_shifter(elem, c) {
        return None;
    }
    Some(if op == FpOp::Sub { -c } else { c })
}

/// Whether `c` lies where [`shifter_addend`] looks for shifters.
fn is_shifter(elem: Elem, c: f64) -> bool {
    let p = match elem {
        Elem::F64 => 52,
        Elem::F32 => 23,
        _ => return false,
    };
    let c = c.abs();
    if !c.is_finite() || c == 0.0 {
        return false;
    }
    let e = c.log2().floor() as i32;
    let shifter = |top: f64| c >= top && c - top < 2048.0;
    (p - 10..=p + 1).contains(&e) && (shifter(2f64.powi(e)) || shifter(1.5 * 2f64.powi(e)))
}

/// Whether `a ± b` is the second half of the rounding trick: `s − c`,
/// `s + (−c)` or `c − s` of a sum `s = x + c` still remembered in
/// [`ShifterSums`], with a passive `c` that cancels the shifter up to an
/// integer below 2^11 (an exponent bias the kernel keeps). The result is
/// `x` rounded to the shifter's grid: derivative 0. Operands: value, shade
/// and key ([`Mode::key`]).
pub fn undoes_shift(
    sums: &ShifterSums,
    op: FpOp,
    elem: Elem,
    (va, ia, ka): (f64, Shade, u32),
    (vb, ib, kb): (f64, Shade, u32),
) -> bool {
    if !matches!(op, FpOp::Add | FpOp::Sub) || ia.is_active() == ib.is_active() {
        return false;
    }
    let (s, d, d_first) = if !ia.is_active() {
        (kb, va, true)
    } else {
        (ka, vb, false)
    };
    let Some(c) = sums.shifter_of(s) else {
        return false;
    };
    // What the operation adds to `s` (`c − s` is −(s − c)).
    let added = match (op, d_first) {
        (FpOp::Add, _) => d,
        _ => -d,
    };
    is_shifter(elem, d) && (c + added).abs() < 2048.0
}

/// Per thread (in the tool's area of the context; all zeros is empty):
/// what rules that span two instructions remember between them.
#[derive(Clone, Copy)]
pub struct RuleMemory {
    /// Sums with the shifter of a rounding trick.
    pub shifter_sums: ShifterSums,
    /// The guest address of the `shr r, 1` that completes a sign-clearing
    /// pair whose first half ran last (`magnitude_pair`); 0: none.
    pub magnitude_pair_at: u64,
    /// Low words of the shades of float and x87 results made here.
    pub narrow: NarrowValues,
    /// The index and value of the latest `NEW_INDEX` request, for the
    /// `SET_INDEX` that attaches it to a variable (`client`): its bytes
    /// tell a float or long double input from a double.
    pub new_index: (u32, f64),
}

/// Per thread: the low words of the latest results known to be a
/// float or an x87 value (made by the runtime's float and x87 rules),
/// kept like [`ShifterSums`]. A general register's low
/// word that holds such an index is the whole float, or an x87 value's
/// significand word, whose exponent lies elsewhere; the low word of a
/// double is not the double (fdlibm's `SET_HIGH_WORD` keeps it and puts
/// another exponent above it). Indices not known here (inline double
/// arithmetic makes most) count as possibly a double's.
#[derive(Clone, Copy)]
pub struct NarrowValues {
    keys: [u32; NARROW_VALUES],
}

const NARROW_VALUES: usize = 1024;

/// Ways of the rules' set-associative tables.
const WAYS: usize = 4;

/// Where `key` is or goes in a 4-way set-associative table of nonzero keys
/// (`keys.len()` a power of two): its slot if present, else a free slot of
/// its set, else the set's way that the key's hash picks. The set comes
/// from a multiplicative hash: dot mode's keys are tangents' bits, whose
/// low bits are zero for round numbers, and a zmm instruction makes 16 at
/// once, so a direct-mapped table lost sums to collisions.
fn place(keys: &[u32], key: u32) -> usize {
    let sets = keys.len() / WAYS;
    let h = key.wrapping_mul(0x9e37_79b1);
    let set = (h >> (32 - sets.trailing_zeros())) as usize * WAYS;
    let ways = set..set + WAYS;
    ways.clone()
        .find(|&i| keys[i] == key)
        .or_else(|| ways.clone().find(|&i| keys[i] == 0))
        .unwrap_or(set + (h as usize & (WAYS - 1)))
}

impl NarrowValues {
    /// Notes that `index` is a float's or an x87 value's.
    pub fn note(&mut self, index: u32) {
        let at = place(&self.keys, index);
        self.keys[at] = index;
    }

    /// Whether `index` is known to be a float's or an x87 value's.
    pub fn holds(&self, index: u32) -> bool {
        index != 0 && self.keys[place(&self.keys, index)] == index
    }
}

/// [`result_index`] for a result of element type `elem`, noted in
/// [`NarrowValues`] when it is a float or an x87 value.
fn typed_result_index(
    ctx: &mut ThreadCtx,
    m: &dyn Mode,
    elem: Elem,
    (ia, pa): (Shade, f64),
    (ib, pb): (Shade, f64),
) -> Shade {
    let idx = result_index(ctx, m, ia, pa, ib, pb);
    if elem != Elem::F64 && idx.is_active() {
        let word = low_word(m, idx, elem);
        m.memory(ctx).narrow.note(word);
    }
    idx
}

/// Per thread: the keys of the latest sums with a shifter
/// ([`shifter_addend`]; [`Mode::key`]: record mode's index, dot mode's
/// tangent and value) and the shifter each added, 4-way set-associative
/// (an index is unique on the tape, so a hit is exact; a sum whose slot
/// later ones take before its subtraction keeps derivative 1). All zeros
/// (a fresh context) is empty: key 0 is never active.
#[derive(Clone, Copy)]
pub struct ShifterSums {
    keys: [u32; SHIFTER_SUMS],
    shifters: [f64; SHIFTER_SUMS],
}

const SHIFTER_SUMS: usize = 256;

impl ShifterSums {
    /// Notes that `index` is a sum that added `shifter`.
    pub fn remember(&mut self, index: u32, shifter: f64) {
        let at = place(&self.keys, index);
        self.keys[at] = index;
        self.shifters[at] = shifter;
    }

    /// The shifter the sum `index` added, if it is remembered.
    pub fn shifter_of(&self, index: u32) -> Option<f64> {
        let at = place(&self.keys, index);
        (index != 0 && self.keys[at] == index).then_some(self.shifters[at])
    }
}

/// Whether `insn` reads active data and every active index it reads is a
/// remembered shifter sum: integer and bitwise work on such a sum reads
/// the bits of `x` rounded to the shifter's grid (a table index, the
/// quadrant, the exponent of `2^n`), a staircase whose derivative is 0,
/// the default rule's, and nothing to report.
///
/// Record mode's indices name their values, so each granule is looked up;
/// a tangent is looked up with its value, as a double or as two floats.
fn reads_only_shifter_sums(ctx: &ThreadCtx, m: &dyn Mode, insn: &Instruction) -> bool {
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    let mut any = false;
    let sums = &m.memory_ref(ctx).shifter_sums;
    // An index names its value; a tangent with the value's bits does, read
    // as a double (8 bytes) or else as two floats.
    let remembered = |sh: &[u8], d: &[u8], elem: Elem| {
        let mut v = [0u8; 8];
        v[..d.len()].copy_from_slice(d);
        let s = m.read(sh, elem);
        !s.is_active() || sums.shifter_of(m.key(s, u64::from_le_bytes(v))).is_some()
    };
    let mut check = |sh: &[u8], d: &[u8]| {
        if m.granules_tell_layout() {
            return sh.chunks(4).all(|g| {
                let i = u32::from_le_bytes(g.try_into().unwrap());
                any |= i != 0;
                i == 0 || sums.shifter_of(i).is_some()
            });
        }
        sh.chunks(8).zip(d.chunks(8)).all(|(g, v)| {
            any |= g.iter().any(|&b| b != 0);
            g.len() == 8 && remembered(g, v, Elem::F64)
                || g.chunks(4)
                    .zip(v.chunks(4))
                    .all(|(g4, v4)| remembered(g4, v4, Elem::F32))
        })
    };
    for u in info.used_registers() {
        if matches!(
            u.access(),
            OpAccess::Write | OpAccess::CondWrite | OpAccess::NoMemAccess
        ) {
            continue;
        }
        let reg = u.register();
        let Some(off) = reg_shadow_offset(reg) else {
            continue;
        };
        let n = if reg.is_gpr() {
            8
        } else {
            reg.size().clamp(4, 64)
        };
        let mut b = [0u8; 64];
        read_shadow(ctx, ShadowLoc::Reg(off), &mut b[..n.next_multiple_of(4)]);
        let d = if reg.is_gpr() {
            let mut d = [0u8; 64];
            d[..8]
                .copy_from_slice(&super::guest::gpr_value(ctx, reg.full_register()).to_le_bytes());
            d
        } else if reg.is_xmm() || reg.is_ymm() || reg.is_zmm() {
            vec_value(ctx, reg.number())
        } else {
            [0u8; 64]
        };
        let n = n.next_multiple_of(4);
        if !check(&b[..n], &d[..n]) {
            return false;
        }
    }
    for mem in info.used_memory() {
        if writes(mem.access())
            && !matches!(mem.access(), OpAccess::ReadWrite | OpAccess::ReadCondWrite)
        {
            continue;
        }
        let Some(ea) = effective_address(ctx, insn, 0) else {
            continue;
        };
        let size = mem.memory_size().size().clamp(4, 64).next_multiple_of(4);
        let mut b = [0u8; 64];
        read_mem_shadow(ctx, ea, &mut b[..size]);
        let mut d = [0u8; 64];
        if !read_mem(ea, &mut d[..size]) {
            return false;
        }
        if !check(&b[..size], &d[..size]) {
            return false;
        }
    }
    any
}

/// The shade of a result `φ(a, b)` (passive when both operands that count
/// are: an operand with partial 0 does not).
fn result_index(
    ctx: &mut ThreadCtx,
    m: &dyn Mode,
    ia: Shade,
    pa: f64,
    ib: Shade,
    pb: f64,
) -> Shade {
    if (!ia.is_active() && !ib.is_active()) || !m.producing() {
        return Shade::PASSIVE;
    }
    let (ia, pa) = if pa == 0.0 {
        (Shade::PASSIVE, 0.0)
    } else {
        (ia, pa)
    };
    let (ib, pb) = if pb == 0.0 {
        (Shade::PASSIVE, 0.0)
    } else {
        (ib, pb)
    };
    if !ia.is_active() && !ib.is_active() {
        return Shade::PASSIVE;
    }
    m.combine(ctx, (ia, pa), (ib, pb))
}

/// `s` as a later reader of the value's shadow sees it: written as a value
/// of type `elem` and read back (a float's tangent is rounded to a float;
/// an index is unchanged), so that keys made now match keys made then.
fn stored(m: &dyn Mode, s: Shade, elem: Elem) -> Shade {
    let mut b = [0u8; 10];
    let w = elem_bytes(elem);
    m.write(&mut b[..w], elem, s);
    m.read(&b[..w], elem)
}

/// The guest's MXCSR (in its `xsave` image).
fn guest_mxcsr(ctx: &ThreadCtx) -> u32 {
    u32::from_le_bytes(ctx.xsave.0[24..28].try_into().unwrap())
}

/// A vector operand as lanes: data bytes and shadow bytes.
struct Lanes {
    data: [u8; 64],
    shadow: [u8; 64],
}

impl Lanes {
    fn value(&self, lane: usize, elem: Elem) -> f64 {
        match elem {
            Elem::F32 => f32::from_le_bytes(self.data[4 * lane..][..4].try_into().unwrap()) as f64,
            _ => f64::from_le_bytes(self.data[8 * lane..][..8].try_into().unwrap()),
        }
    }
    /// The value's bits (a float's in the low 32).
    fn bits(&self, lane: usize, elem: Elem) -> u64 {
        let w = elem_bytes(elem).min(8);
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(&self.data[w * lane..][..w]);
        u64::from_le_bytes(b)
    }
    fn index(&self, m: &dyn Mode, lane: usize, elem: Elem) -> Shade {
        let w = elem_bytes(elem);
        m.read(&self.shadow[w * lane..][..w], elem)
    }
}

/// Reads operand `op` as lanes (a memory operand: as many bytes as it
/// has, broadcast to every lane when the instruction broadcasts).
fn lanes_of(ctx: &ThreadCtx, insn: &Instruction, op: u32, elem: Elem) -> Option<Lanes> {
    let mut l = Lanes {
        data: [0; 64],
        shadow: [0; 64],
    };
    match insn.op_kind(op) {
        OpKind::Register => {
            let r = insn.op_register(op);
            l.data = vec_value(ctx, r.number());
            read_shadow(ctx, ShadowLoc::Reg(reg_shadow_offset(r)?), &mut l.shadow);
        }
        OpKind::Memory => {
            let ea = effective_address(ctx, insn, 0)?;
            let size = insn.memory_size().size().min(64);
            let loc = ShadowLoc::Mem(shadowmem::shadow_of(ea));
            if !shadowmem::is_app(ea) || !read_mem(ea, &mut l.data[..size]) {
                return None;
            }
            read_shadow(ctx, loc, &mut l.shadow[..size]);
            if insn.is_broadcast() {
                // The element read is the broadcast's (`{1to8}` of a dword
                // under a reading as doubles: every dword lane), not the
                // reading's.
                let w = if size.is_power_of_two() && size <= 8 {
                    size
                } else {
                    elem_bytes(elem)
                };
                for lane in 1..64 / w {
                    l.data.copy_within(0..w, lane * w);
                    l.shadow.copy_within(0..w, lane * w);
                }
            }
        }
        _ => return None,
    }
    Some(l)
}

/// Operand numbers of the register/memory operands (immediates skipped).
fn data_operands(insn: &Instruction) -> Vec<u32> {
    (0..insn.op_count())
        .filter(|&i| matches!(insn.op_kind(i), OpKind::Register | OpKind::Memory))
        .collect()
}

/// The width of a vector source operand: the register's, or for memory
/// the packed width the instruction reads (a broadcast's full width too).
fn source_bytes(insn: &Instruction, op: u32) -> usize {
    match insn.op_kind(op) {
        OpKind::Register => insn.op_register(op).size(),
        _ => rewriter::code_sizes::memory_bytes(insn.code()),
    }
    .min(64)
}

fn dest_bytes(insn: &Instruction) -> usize {
    insn.op0_register().size().clamp(4, 64)
}

/// SSE/AVX floating-point arithmetic, lane by lane.
fn fp_arith(
    ctx: &mut ThreadCtx,
    m: &dyn Mode,
    insn: &Instruction,
    op: FpOp,
    elem: Elem,
    shape: Shape,
) {
    let ops = data_operands(insn);
    let legacy = insn.encoding() == EncodingKind::Legacy;
    let w = elem_bytes(elem);
    let vl = dest_bytes(insn);
    let lanes = if shape == Shape::Scalar { 1 } else { vl / w };
    let Some(dest_loc) = reg_shadow_offset(insn.op0_register()) else {
        return clear_written(ctx, insn, true);
    };
    // The new destination shadow starts as what the destination keeps:
    // legacy SSE keeps bytes above what it writes; VEX/EVEX zero them, and
    // scalar VEX forms take bytes 4/8..16 from the first source.
    let mut out = [0u8; 64];
    let mut old = [0u8; 64];
    read_shadow(ctx, ShadowLoc::Reg(dest_loc), &mut old);
    if legacy {
        out = old;
    } else if shape == Shape::Scalar && ops.len() >= 3 {
        if let Some(src1) = lanes_of(ctx, insn, ops[1], elem) {
            out[..16].copy_from_slice(&src1.shadow[..16]);
        }
    }
    let unary = matches!(
        op,
        FpOp::Sqrt | FpOp::Rcp | FpOp::Rsqrt | FpOp::Round | FpOp::Mantissa | FpOp::Reduce
    );
    let get = |i: usize| lanes_of(ctx, insn, ops[i], elem);
    let set = |out: &mut [u8; 64], lane: usize, index: Shade| {
        m.write(&mut out[w * lane..][..w], elem, index);
    };
    match op {
        FpOp::Fma(form) => {
            let pick = |d: u8| ops.get(usize::from(d) - 1).copied();
            let (Some(x), Some(y), Some(z)) = (
                pick(form.order[0]),
                pick(form.order[1]),
                pick(form.order[2]),
            ) else {
                return clear_written(ctx, insn, true);
            };
            let (Some(x), Some(y), Some(z)) = (
                lanes_of(ctx, insn, x, elem),
                lanes_of(ctx, insn, y, elem),
                lanes_of(ctx, insn, z, elem),
            ) else {
                return clear_written(ctx, insn, true);
            };
            for lane in 0..lanes {
                let sign_p = if form.neg_product { -1.0 } else { 1.0 };
                let sub = if form.alternating {
                    (lane % 2 == 0) != form.sub_addend
                } else {
                    form.sub_addend
                };
                let sign_z = if sub { -1.0 } else { 1.0 };
                let (xv, yv) = (x.value(lane, elem), y.value(lane, elem));
                let (ix, iy, iz) = (
                    x.index(m, lane, elem),
                    y.index(m, lane, elem),
                    z.index(m, lane, elem),
                );
                // The rounding trick with the product as its operand,
                // `fma(x, c1, 1.5·2^52)`: a staircase, derivative 0
                // (vectorised exp, sin and cos kernels find their integer
                // part so).
                // Two blocks: the product, then the sum.
                let t = result_index(ctx, m, ix, sign_p * yv, iy, sign_p * xv);
                let idx = result_index(ctx, m, t, 1.0, iz, sign_z);
                // The first half of the rounding trick with the product
                // as its operand, `fma(x, c1, 1.5·2^52)` (vectorised exp,
                // sin and cos kernels find their integer part so).
                let zv = sign_z * z.value(lane, elem);
                if let Some(c) = shifter_addend(FpOp::Add, elem, (sign_p * xv * yv, t), (zv, iz)) {
                    let rc = super::rounding::rounding_bits(insn, guest_mxcsr(ctx));
                    let sum = super::rounding::fma_bits(elem, rc, sign_p * xv, yv, zv, true);
                    let key = m.key(stored(m, idx, elem), sum);
                    m.memory(ctx).shifter_sums.remember(key, c);
                }
                set(&mut out, lane, idx);
            }
        }
        FpOp::HAdd | FpOp::HSub => {
            let (Some(a), Some(b)) = (get(ops.len() - 2), get(ops.len() - 1)) else {
                return;
            };
            let sign = if op == FpOp::HSub { -1.0 } else { 1.0 };
            let per128 = 16 / w;
            for lane in 0..lanes {
                let block = lane / per128 * per128;
                let k = lane % per128;
                let src = if k < per128 / 2 { &a } else { &b };
                let j = block + 2 * (k % (per128 / 2));
                let idx = result_index(
                    ctx,
                    m,
                    src.index(m, j, elem),
                    1.0,
                    src.index(m, j + 1, elem),
                    sign,
                );
                set(&mut out, lane, idx);
            }
        }
        FpOp::AddSub => {
            let (Some(a), Some(b)) = (get(ops.len() - 2), get(ops.len() - 1)) else {
                return;
            };
            for lane in 0..lanes {
                let s = if lane % 2 == 0 { -1.0 } else { 1.0 };
                let (ia, ib) = (a.index(m, lane, elem), b.index(m, lane, elem));
                let idx = result_index(ctx, m, ia, 1.0, ib, s);
                set(&mut out, lane, idx);
            }
        }
        _ if unary => {
            let Some(a) = get(ops.len() - 1) else {
                return clear_written(ctx, insn, true);
            };
            for lane in 0..lanes {
                let x = a.value(lane, elem);
                let pa = if op == FpOp::Mantissa {
                    let m = super::avx512::getmant(x, insn.immediate8());
                    if x.is_finite() && x != 0.0 && m.is_finite() {
                        m / x
                    } else {
                        0.0
                    }
                } else {
                    partials(op, x, 0.0).0
                };
                let idx = result_index(ctx, m, a.index(m, lane, elem), pa, Shade::PASSIVE, 0.0);
                set(&mut out, lane, idx);
            }
        }
        _ => {
            let (ia, ib) = if legacy { (0, 1) } else { (1, 2) };
            let (Some(a), Some(b)) = (
                ops.get(ia).and_then(|&o| lanes_of(ctx, insn, o, elem)),
                ops.get(ib).and_then(|&o| lanes_of(ctx, insn, o, elem)),
            ) else {
                return clear_written(ctx, insn, true);
            };
            for lane in 0..lanes {
                let (va, vb) = (a.value(lane, elem), b.value(lane, elem));
                let (ia, ib) = (a.index(m, lane, elem), b.index(m, lane, elem));
                let (ka, kb) = (m.key(ia, a.bits(lane, elem)), m.key(ib, b.bits(lane, elem)));
                let idx = if undoes_shift(
                    &m.memory(ctx).shifter_sums,
                    op,
                    elem,
                    (va, ia, ka),
                    (vb, ib, kb),
                ) {
                    Shade::PASSIVE
                } else {
                    let (pa, pb) = if op == FpOp::Range {
                        super::avx512::range_partials(va, vb, insn.immediate8())
                    } else {
                        partials(op, va, vb)
                    };
                    if op == FpOp::Scalef && ia.is_active() && !pa.is_normal() {
                        // 2^⌊b⌋ with ⌊b⌋ beyond double's exponents.
                        warn_once_at(
                            insn,
                            "a scaling factor 2^n beyond the range of doubles (the tape's \
                             partials): derivatives through this operation are wrong",
                        );
                    }
                    let idx = result_index(ctx, m, ia, pa, ib, pb);
                    if let Some(c) = shifter_addend(op, elem, (va, ia), (vb, ib)) {
                        let rc = super::rounding::rounding_bits(insn, guest_mxcsr(ctx));
                        let b = if op == FpOp::Sub { -vb } else { vb };
                        let sum = super::rounding::fma_bits(elem, rc, va, 1.0, b, false);
                        let key = m.key(stored(m, idx, elem), sum);
                        m.memory(ctx).shifter_sums.remember(key, c);
                    }
                    idx
                };
                set(&mut out, lane, idx);
            }
        }
    }
    apply_mask(ctx, insn, &old, &mut out, w, lanes);
    if elem == Elem::F32 {
        // The lanes this instruction gave a new shade are floats.
        let word = |sh: &[u8; 64], lane: usize| {
            u32::from_le_bytes(sh[w * lane..][..4].try_into().unwrap())
        };
        for lane in 0..lanes {
            let new = word(&out, lane);
            if new != 0 && new != word(&old, lane) {
                m.memory(ctx).narrow.note(new);
            }
        }
    }
    write_shadow(ctx, ShadowLoc::Reg(dest_loc), &out);
}

/// EVEX masking: lanes whose mask bit is clear keep the old shadow
/// (merging) or become passive (zeroing).
fn apply_mask(
    ctx: &ThreadCtx,
    insn: &Instruction,
    old: &[u8; 64],
    out: &mut [u8; 64],
    w: usize,
    lanes: usize,
) {
    let k = insn.op_mask();
    if k == Register::None {
        return;
    }
    let bits = super::guest::kreg_value(ctx, k.number());
    for lane in 0..lanes {
        if bits & (1 << lane) == 0 {
            if insn.zeroing_masking() {
                out[w * lane..][..w].fill(0);
            } else {
                out[w * lane..][..w].copy_from_slice(&old[w * lane..][..w]);
            }
        }
    }
}

/// Conversions between f32 and f64: each lane's derivative carries over
/// with partial 1 (record: the same index; dot: the tangent converted).
fn fp_convert(
    ctx: &mut ThreadCtx,
    m: &dyn Mode,
    insn: &Instruction,
    from: Elem,
    to: Elem,
    shape: Shape,
) {
    let ops = data_operands(insn);
    let legacy = insn.encoding() == EncodingKind::Legacy;
    let Some(dest_loc) = reg_shadow_offset(insn.op0_register()) else {
        return clear_written(ctx, insn, true);
    };
    let Some(src) = lanes_of(ctx, insn, *ops.last().unwrap(), from) else {
        return clear_written(ctx, insn, true);
    };
    let mut old = [0u8; 64];
    read_shadow(ctx, ShadowLoc::Reg(dest_loc), &mut old);
    let mut out = if legacy { old } else { [0u8; 64] };
    if !legacy && shape == Shape::Scalar && ops.len() >= 3 {
        if let Some(src1) = lanes_of(ctx, insn, ops[1], to) {
            out[..16].copy_from_slice(&src1.shadow[..16]);
        }
    }
    let (wf, wt) = (elem_bytes(from), elem_bytes(to));
    // Widening fills the destination; narrowing converts the whole source,
    // whose width the destination does not tell (`vcvtpd2ps xmm` takes an
    // xmm or a ymm), nor, for memory, the register size.
    let lanes = match shape {
        Shape::Scalar => 1,
        _ if wt >= wf => dest_bytes(insn) / wt,
        _ => source_bytes(insn, *ops.last().unwrap()) / wf,
    };
    if shape == Shape::Packed && wt < wf {
        // Narrowing: the converted lanes fill half the source's width; the
        // rest of the register is zero (of its xmm part, for legacy SSE).
        out[lanes * wt..if legacy { 16 } else { 64 }].fill(0);
    }
    for lane in 0..lanes {
        let idx = src.index(m, lane, from);
        m.write(&mut out[wt * lane..][..wt], to, idx);
    }
    apply_mask(ctx, insn, &old, &mut out, wt, lanes);
    write_shadow(ctx, ShadowLoc::Reg(dest_loc), &out);
}

const SIGN64: u64 = 0x8000_0000_0000_0000;
const SIGN32: u64 = 0x8000_0000;

/// Bitwise logic on data that may be floating-point. One rule covers abs,
/// negation, negative abs and copysign in every encoding (and/andn/or/xor,
/// vpternlog): the bitwise function is evaluated in software, and if it
/// keeps an active operand's magnitude — on the actual value and on a probe
/// value, so that `-(-0.0)` and sign extraction are told apart — the result
/// is that operand with partial ±1 (by sign). Otherwise the result is a
/// constant, with a warning when active data went in.
fn bit_logic(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction, op: LogicOp) {
    let ops = data_operands(insn);
    if insn.op_count() < 2 || ops.is_empty() {
        return clear_written(ctx, insn, true);
    }
    // Two-operand forms read their destination; `andn r, a, b` (VEX, the
    // one three-operand form on general registers) reads a and b.
    let legacy = insn.encoding() == EncodingKind::Legacy
        || insn.op0_register().is_gpr() && insn.op_count() == 2;
    let gpr = insn.op0_kind() == OpKind::Register && insn.op0_register().is_gpr()
        || insn.op0_kind() == OpKind::Memory
            && insn.memory_size().size() <= 8
            && !is_vector_op(insn);
    // Source operand numbers: two-operand legacy forms read the destination.
    let sources: Vec<u32> = match (op, legacy) {
        (LogicOp::Ternary, _) => vec![0, 1, 2],
        (_, true) => vec![0, 1],
        (_, false) => vec![1, 2],
    };
    let read = |o: u32| -> Option<([u8; 64], [u8; 64])> {
        let mut d = [0u8; 64];
        let mut sh = [0u8; 64];
        match insn.op_kind(o) {
            OpKind::Register if gpr => {
                let reg = insn.op_register(o);
                d[..8].copy_from_slice(&super::guest::gpr_value(ctx, reg).to_le_bytes());
                read_shadow(ctx, ShadowLoc::Reg(reg_shadow_offset(reg)?), &mut sh[..8]);
            }
            OpKind::Register | OpKind::Memory => {
                let l = lanes_of(ctx, insn, o, Elem::F64)?;
                d = l.data;
                sh = l.shadow;
            }
            k if is_immediate(k) => d[..8].copy_from_slice(&insn.immediate(o).to_le_bytes()),
            _ => return None,
        }
        Some((d, sh))
    };
    let mut operands = Vec::with_capacity(3);
    for &o in &sources {
        match read(o) {
            Some(v) => operands.push(v),
            None => return clear_written(ctx, insn, true),
        }
    }
    let imm = if op == LogicOp::Ternary {
        insn.immediate8()
    } else {
        0
    };
    // Both sources the same register: `xor x, x` and `andn x, x` are the
    // zero idiom (a constant), `and x, x` and `or x, x` are x itself.
    let same_reg = op != LogicOp::Ternary
        && sources.iter().all(|&o| insn.op_kind(o) == OpKind::Register)
        && insn.op_register(sources[0]) == insn.op_register(sources[1]);
    if same_reg && matches!(op, LogicOp::Xor | LogicOp::AndNot) {
        return clear_written(ctx, insn, false);
    }
    if same_reg {
        return moves(ctx, m, insn);
    }
    let w = if gpr {
        if insn.op0_kind() == OpKind::Register {
            insn.op0_register().size()
        } else {
            insn.memory_size().size()
        }
        .min(8)
    } else {
        8
    };
    let bytes = if gpr { w } else { dest_bytes(insn) };
    // In general registers, taking a double apart with a mask is integer
    // work (glibc's printf extracts the significand so): a constant, as for
    // shifts there, without a report. Putting a value together (`or`/`xor`
    // of parts) is reported when the rule cannot follow it.
    let combines = matches!(op, LogicOp::Or | LogicOp::Xor);
    let lanes = LogicLanes { op, imm, operands };
    let mut out = [0u8; 64];
    let mut warned_unknown = false;
    let mut out_of_range = false;
    // A general register's lane the rules cannot follow and must say so.
    let mut unfollowed = false;
    let mut emit = |ctx: &mut ThreadCtx, off: usize, width: usize, out: &mut [u8; 64]| {
        let idx = match lanes.lane(ctx, m, off, width) {
            LaneRule::Index(i) => Some(i),
            LaneRule::Bytes(b) => {
                out[off..off + width].copy_from_slice(&b[..width]);
                return;
            }
            LaneRule::NotATrick | LaneRule::OutOfRange => None,
        };
        warned_unknown |= idx.is_none();
        let s = idx.unwrap_or(Shade::PASSIVE);
        m.write(&mut out[off..off + width], word_elem(width), s);
    };
    if gpr && w < 8 {
        emit(ctx, 0, 4, &mut out);
        // A tangent fills its value's every byte: masking a word of one
        // (printf's look at a long double's exponent) is integer work, a
        // constant, as on a whole double; putting words together is not.
        if !m.granules_tell_layout() && !combines {
            warned_unknown = false;
        }
    } else {
        // The suffix (ps/pd, d/q) says nothing about the data: clang
        // negates doubles with xorps. Each 8 bytes are one double unless a
        // value is active in the upper 4 bytes (two floats, or the halves of
        // a value being reassembled from 32-bit words).
        // A float's abs/neg mask changes bit 31, which is magnitude for a
        // double, so a failed double reading falls back to two granules.
        // A double whose significand the logic scales too far for the
        // sweeps is a constant, not two floats' worth of granules (the
        // low granule of `x & 0x000f…f` would pass for the identity).
        for off in (0..bytes).step_by(8) {
            if !(m.granules_tell_layout() && lanes.upper_half_active(off)) {
                match lanes.lane(ctx, m, off, 8) {
                    LaneRule::Index(idx) => {
                        m.write(&mut out[off..off + 8], Elem::F64, idx);
                        continue;
                    }
                    LaneRule::Bytes(b) => {
                        out[off..off + 8].copy_from_slice(&b);
                        continue;
                    }
                    // In a general register, the low word alone is the value
                    // only for a float, or the significand word of an x87
                    // value (put together again from its words: `shl rax,
                    // 32; or rcx, rax`). The low word of a double with
                    // another high word above it is not the double
                    // (fdlibm's `SET_HIGH_WORD`: another exponent).
                    _ if gpr
                        && !lanes.active_low_words_narrow(
                            &m.memory_ref(ctx).narrow,
                            off,
                            !m.granules_tell_layout(),
                            combines,
                        ) =>
                    {
                        unfollowed |= combines;
                        continue;
                    }
                    _ if gpr => {}
                    LaneRule::OutOfRange => {
                        out_of_range = true;
                        continue;
                    }
                    LaneRule::NotATrick => {}
                }
            }
            emit(ctx, off, 4, &mut out);
            emit(ctx, off + 4, 4, &mut out);
        }
    }
    // Masking off a double's exponent bits and keeping its whole
    // significand in a general register is frexp by hand (the exponent is
    // then set with `or`), not the integer work printf does on a double's
    // parts: said, where that work stays silent.
    if gpr && w == 8 && op == LogicOp::And && exponent_masked_off(m, &lanes.operands) {
        warn_once(
            insn,
            "a double's exponent bits masked off in a general register, its significand kept \
             (frexp by hand?); the result is treated as a constant",
        );
    }
    let w = if gpr { w } else { 4 };
    if warned_unknown || out_of_range || unfollowed {
        warn_once(insn, "bitwise logic on active data that is not a sign-bit trick; the result is treated as a constant");
    }
    // Destination: GPRs take the whole 8-byte shadow (32-bit writes zero the
    // upper half); vector registers as in fp_arith; memory its size.
    match insn.op0_kind() {
        OpKind::Register if gpr => {
            let reg = insn.op0_register();
            let Some(loc) = reg_shadow_offset(reg) else {
                return;
            };
            match reg.size() {
                8 | 4 => {
                    let mut v = [0u8; 8];
                    v[..reg.size()].copy_from_slice(&out[..reg.size()]);
                    write_shadow(
                        ctx,
                        ShadowLoc::Reg(RegFile::gpr_offset(reg.full_register().number(), 0)),
                        &v,
                    )
                }
                _ => write_shadow(ctx, ShadowLoc::Reg(loc), &[0u8; 4][..reg.size().min(4)]),
            }
        }
        OpKind::Register => {
            let Some(loc) = reg_shadow_offset(insn.op0_register()) else {
                return;
            };
            let mut old = [0u8; 64];
            read_shadow(ctx, ShadowLoc::Reg(loc), &mut old);
            let mut full = if legacy { old } else { [0u8; 64] };
            full[..bytes].copy_from_slice(&out[..bytes]);
            // A mask bit covers an element (`vxorpd`: 8 bytes), not a
            // 4-byte shadow granule.
            let elem = masked_element_bytes(insn).unwrap_or(w);
            apply_mask(ctx, insn, &old, &mut full, elem, bytes / elem);
            write_shadow(ctx, ShadowLoc::Reg(loc), &full);
        }
        OpKind::Memory => {
            if let Some(loc) = operand_shadow(ctx, insn, 0) {
                let size = insn.memory_size().size().min(64);
                write_shadow(ctx, loc, &out[..size]);
            }
        }
        _ => {}
    }
}

/// What the per-lane rule of bitwise logic found.
enum LaneRule {
    /// The result's shade.
    Index(Shade),
    /// The result's shadow bytes, exactly (`Mode::signed_copy`).
    Bytes([u8; 8]),
    /// Active data went into logic that is neither a sign-bit trick nor a
    /// scaling of one operand's significand.
    NotATrick,
    /// A scaling of one operand's significand by a factor the sweeps
    /// cannot carry: a constant, reported, and no narrower reading.
    OutOfRange,
}

/// Operand data and shadows of a bitwise instruction, for the per-lane rule.
struct LogicLanes {
    op: LogicOp,
    imm: u8,
    /// (data, shadow) per source operand, in the instruction's order.
    operands: Vec<([u8; 64], [u8; 64])>,
}

impl LogicLanes {
    fn index(sh: &[u8; 64], off: usize) -> u32 {
        u32::from_le_bytes(sh[off..off + 4].try_into().unwrap())
    }

    fn shade(m: &dyn Mode, sh: &[u8; 64], off: usize, width: usize) -> Shade {
        m.read(&sh[off..off + width], word_elem(width))
    }

    fn value(d: &[u8; 64], off: usize, width: usize) -> u64 {
        if width == 8 {
            u64::from_le_bytes(d[off..off + 8].try_into().unwrap())
        } else {
            u64::from(u32::from_le_bytes(d[off..off + 4].try_into().unwrap()))
        }
    }

    /// Whether every index in the low words of the lane at `off` is known
    /// to be a float's or an x87 value's ([`NarrowValues`]). `filled`: the
    /// shadow is a tangent, which fills its value's bytes: a zero low word
    /// under an active high one is a double's (tangent 1.0), not a passive
    /// word — unless the data's low word is zero too and the logic puts
    /// parts together (`combines`: `or`, `xor`): the upper part of a value
    /// being reassembled (`shl rax, 32; or rcx, rax`).
    fn active_low_words_narrow(
        &self,
        narrow: &NarrowValues,
        off: usize,
        filled: bool,
        combines: bool,
    ) -> bool {
        self.operands.iter().all(|(d, sh)| {
            let i = Self::index(sh, off);
            let upper_part = combines && Self::index(d, off) == 0;
            if filled && i == 0 && sh[off..off + 8] != [0; 8] && !upper_part {
                false
            } else {
                i == 0 || narrow.holds(i)
            }
        })
    }

    fn upper_half_active(&self, off: usize) -> bool {
        self.operands
            .iter()
            .any(|(_, sh)| Self::index(sh, off + 4) != 0)
    }

    /// The bitwise function on concrete operand values.
    fn eval(&self, v: &[u64]) -> u64 {
        match self.op {
            LogicOp::And => v[0] & v[1],
            LogicOp::AndNot => !v[0] & v[1],
            LogicOp::Or => v[0] | v[1],
            LogicOp::Xor => v[0] ^ v[1],
            LogicOp::Ternary => (0..8).fold(0, |acc, i| {
                if self.imm & (1 << i) == 0 {
                    return acc;
                }
                let pick = |bit: u32, x: u64| if i & (1 << bit) != 0 { x } else { !x };
                acc | (pick(2, v[0]) & pick(1, v[1]) & pick(0, v[2]))
            }),
        }
    }

    /// The result index of one lane, or why there is none.
    fn lane(&self, ctx: &mut ThreadCtx, m: &dyn Mode, off: usize, width: usize) -> LaneRule {
        let idx: Vec<Shade> = self
            .operands
            .iter()
            .map(|(_, sh)| Self::shade(m, sh, off, width))
            .collect();
        if idx.iter().all(|i| !i.is_active()) {
            return LaneRule::Index(Shade::PASSIVE);
        }
        let mask = if width == 8 { u64::MAX } else { 0xffff_ffff };
        let sign = if width == 8 { SIGN64 } else { SIGN32 };
        let vals: Vec<u64> = self
            .operands
            .iter()
            .map(|(d, _)| Self::value(d, off, width))
            .collect();
        // The probe magnitude must differ from every operand's, or an
        // operand equal in magnitude to the one really kept (copysign(1, 1))
        // would pass for it; and it has every significand bit set, or a
        // mask keeping only the exponent would pass for the identity on a
        // power of two.
        let one = (0..4u64)
            .map(|e| {
                if width == 8 {
                    0x3fff_ffff_ffff_ffff + (e << 52)
                } else {
                    0x3fff_ffff + (e << 23)
                }
            })
            .find(|&m| vals.iter().all(|&v| v & mask & !sign != m))
            .unwrap_or(0);
        // A double's probes also differ in bit 31, where a float's sign
        // would sit: a float in the low half with a passive neighbour
        // reads as a small double, and `orps` with clang's {−0.f, −0.f}
        // on a negative float keeps that double's magnitude while flipping
        // its sign — negation of the "double", the identity of the float.
        let probes: &[u64] = if width == 8 {
            &[one, one & !SIGN32]
        } else {
            &[one]
        };
        let result = self.eval(&vals) & mask;
        for (k, &ik) in idx.iter().enumerate() {
            if !ik.is_active() {
                continue;
            }
            let x = vals[k];
            let keeps_probe = |p: u64| {
                let mut probe_vals = vals.clone();
                let probe = (x & sign) | p;
                probe_vals[k] = probe;
                self.eval(&probe_vals) & mask & !sign == probe & !sign
            };
            if result & !sign == x & !sign && probes.iter().all(|&p| keeps_probe(p)) {
                let negate = (result ^ x) & sign != 0;
                let mut b = [0u8; 8];
                let (_, sh) = &self.operands[k];
                if m.signed_copy(&sh[off..off + width], negate, &mut b[..width]) {
                    return LaneRule::Bytes(b);
                }
                let p = if negate { -1.0 } else { 1.0 };
                return LaneRule::Index(result_index(ctx, m, ik, p, Shade::PASSIVE, 0.0));
            }
        }
        // The bits of a sum with a shifter: a staircase (the table index
        // or quadrant of a rounding trick), derivative 0.
        let sums = &m.memory_ref(ctx).shifter_sums;
        if idx
            .iter()
            .zip(&vals)
            .all(|(&i, &v)| !i.is_active() || sums.shifter_of(m.key(i, v)).is_some())
        {
            return LaneRule::Index(Shade::PASSIVE);
        }
        // One active operand whose significand passes through whole: the
        // result is that operand scaled within its binade.
        let mut active = idx.iter().enumerate().filter(|(_, &i)| i.is_active());
        let (Some((k, &ik)), None) = (active.next(), active.next()) else {
            return LaneRule::NotATrick;
        };
        match self.significand_slope(&vals, k, width) {
            None => LaneRule::NotATrick,
            // No significand bit moves the result: it is made of the sign
            // and exponent, a staircase (the exponent extraction of `log`
            // kernels); derivative 0, nothing lost.
            Some(0.0) => LaneRule::Index(Shade::PASSIVE),
            // Slopes beyond 2^±300 would over- or underflow the sweeps'
            // derivatives (a double's extraction has 2^−1022−e); a
            // float's are within 2^±253.
            Some(s) if !(-300.0..=300.0).contains(&s.abs().log2()) => LaneRule::OutOfRange,
            Some(s) => LaneRule::Index(result_index(ctx, m, ik, s, Shade::PASSIVE, 0.0)),
        }
    }

    /// The slope of the result in operand `k` when every bit of `k`'s
    /// significand moves the result by the same multiple of what it moves
    /// `k` (flipping each bit in turn, within the binade, where both
    /// differences are exact): the mantissa extraction `x & 0x007fffff`
    /// (a subnormal, slope 2^−126−e) and the exponent insertion
    /// `t | 0x3f800000` (slope 2^126) that vectorised `log` kernels use to
    /// take x apart, whose product is the mantissa's 2^−e; 0 when no bit
    /// moves the result (it is made of the sign and exponent). `None` when
    /// the bits do not move together (a truncation, a flipped mantissa
    /// bit) or the operand or result is not finite.
    fn significand_slope(&self, vals: &[u64], k: usize, width: usize) -> Option<f64> {
        let (mask, fraction_bits) = if width == 8 {
            (u64::MAX, 52)
        } else {
            (0xffff_ffff, 23)
        };
        let real = |bits: u64| {
            if width == 8 {
                f64::from_bits(bits)
            } else {
                f64::from(f32::from_bits(bits as u32))
            }
        };
        let result = self.eval(vals) & mask;
        let (x, y) = (real(vals[k]), real(result));
        if !x.is_finite() || !y.is_finite() {
            return None;
        }
        let mut probe = vals.to_vec();
        let mut slope = None;
        for bit in 0..fraction_bits {
            probe[k] = vals[k] ^ (1 << bit);
            let dx = real(probe[k]) - x;
            let dy = real(self.eval(&probe) & mask) - y;
            match slope {
                None => slope = Some(dy / dx),
                Some(s) if dy == s * dx => {}
                Some(_) => return None,
            }
        }
        // 0, or a power of two (a subnormal one included).
        slope.filter(|s: &f64| *s == 0.0 || s.is_finite() && s.abs().log2().fract() == 0.0)
    }
}

fn is_vector_op(insn: &Instruction) -> bool {
    (0..insn.op_count())
        .any(|i| insn.op_kind(i) == OpKind::Register && insn.op_register(i).is_vector_register())
}

/// Moves: replay on shadows; push/pop/leave by hand; anything else that
/// cannot be replayed falls back to the conservative rule.
fn moves(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction) {
    use super::guest::gpr_value;
    let rsp = ctx.regs.gpr[4];
    match insn.mnemonic() {
        Mnemonic::Push => {
            let size = insn.stack_pointer_increment().unsigned_abs() as usize;
            let mut sh = [0u8; 8];
            match insn.op0_kind() {
                OpKind::Register => {
                    if let Some(off) = reg_shadow_offset(insn.op0_register()) {
                        read_shadow(ctx, ShadowLoc::Reg(off), &mut sh[..size]);
                    }
                }
                OpKind::Memory => {
                    if let Some(loc) = operand_shadow(ctx, insn, 0) {
                        read_shadow(ctx, loc, &mut sh[..size]);
                    }
                }
                _ => {}
            }
            write_mem_shadow(ctx, rsp - size as u64, &sh[..size]);
        }
        Mnemonic::Pop => {
            let size = insn.stack_pointer_increment() as usize;
            let mut sh = [0u8; 8];
            read_mem_shadow(ctx, rsp, &mut sh[..size]);
            match insn.op0_kind() {
                OpKind::Register => {
                    if let Some(off) = reg_shadow_offset(insn.op0_register()) {
                        write_shadow(ctx, ShadowLoc::Reg(off), &sh[..size]);
                    }
                }
                OpKind::Memory => {
                    // The address is computed after rsp is incremented.
                    let mut after = ctx.regs.gpr;
                    after[4] += size as u64;
                    let saved = ctx.regs.gpr;
                    ctx.regs.gpr = after;
                    let ea = effective_address(ctx, insn, 0);
                    ctx.regs.gpr = saved;
                    if let Some(ea) = ea {
                        write_mem_shadow(ctx, ea, &sh[..size]);
                    }
                }
                _ => {}
            }
        }
        Mnemonic::Leave => {
            let rbp = gpr_value(ctx, Register::RBP);
            let mut sh = [0u8; 8];
            read_mem_shadow(ctx, rbp, &mut sh);
            write_shadow(ctx, ShadowLoc::Reg(RegFile::gpr_offset(5, 0)), &sh);
            write_shadow(ctx, ShadowLoc::Reg(RegFile::gpr_offset(4, 0)), &[0u8; 8]);
        }
        // `mov r/m, imm` writes a constant: its immediate is data, not a
        // selector, so it must not be replayed into the shadow.
        Mnemonic::Mov if (0..insn.op_count()).any(|i| is_immediate(insn.op_kind(i))) => {
            clear_written(ctx, insn, false)
        }
        _ => {
            let mem = if (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory) {
                match effective_address(ctx, insn, 0) {
                    // A control in memory is read as the guest's.
                    Some(ea) if replay::memory_is_selector(insn) => ea,
                    Some(ea) if shadowmem::is_app(ea) => shadowmem::shadow_of(ea),
                    _ => return clear_written(ctx, insn, false),
                }
            } else {
                0
            };
            // Indices are whole granules; tangents are bytes like the data.
            let before = if m.granules_tell_layout() {
                Some(replay_inputs(ctx, insn))
            } else {
                None
            };
            if !replay::replay(ctx, insn, mem) {
                return clear_written(ctx, insn, true);
            }
            if let Some(before) = before {
                keep_whole_granules(ctx, insn, &before);
            }
        }
    }
}

/// The index granules a replayed move may produce: those of its register
/// and memory operands (the destination's own included, for merges),
/// before it runs. Their data operands, that is; selectors widen the set
/// harmlessly.
fn replay_inputs(ctx: &ThreadCtx, insn: &Instruction) -> Vec<u32> {
    let mut set = Vec::new();
    for op in 0..insn.op_count() {
        let mut sh = [0u8; 64];
        let n = match insn.op_kind(op) {
            OpKind::Register => insn.op_register(op).size().min(64),
            OpKind::Memory => insn.memory_size().size().min(64),
            _ => continue,
        };
        let Some(loc) = operand_shadow(ctx, insn, op) else {
            continue;
        };
        read_shadow(ctx, loc, &mut sh[..n.next_multiple_of(4).min(64)]);
        set.extend(
            sh.chunks_exact(4)
                .map(|g| u32::from_le_bytes(g.try_into().unwrap()))
                .filter(|&i| i != 0),
        );
    }
    set
}

/// Byte-granular moves (`pblendvb` with a mask that differs within a
/// float, `pshufb`, `palignr` by 1–3, byte unpacks, byte broadcasts) can
/// assemble an index granule from the bytes of several indices — or of
/// one index in another order — naming some unrelated value: after the
/// replay every destination granule must be one of the inputs' (or 0);
/// one that is not is a constant, reported (the data there is no value
/// of the program's either).
fn keep_whole_granules(ctx: &mut ThreadCtx, insn: &Instruction, inputs: &[u32]) {
    if insn.op_count() == 0 {
        return;
    }
    let n = match insn.op0_kind() {
        OpKind::Register => insn.op0_register().size(),
        OpKind::Memory => insn.memory_size().size(),
        _ => return,
    }
    .min(64)
        / 4;
    let Some(loc) = operand_shadow(ctx, insn, 0) else {
        return;
    };
    let mut sh = [0u8; 64];
    read_shadow(ctx, loc, &mut sh[..4 * n]);
    let mut split = false;
    for g in sh[..4 * n].chunks_exact_mut(4) {
        let i = u32::from_le_bytes((&*g).try_into().unwrap());
        if i != 0 && !inputs.contains(&i) {
            g.fill(0);
            split = true;
        }
    }
    if split {
        write_shadow(ctx, loc, &sh[..4 * n]);
        warn_once(
            insn,
            "a byte-granular move took an active value apart; the result is treated as a constant",
        );
    }
}

/// Gathers and scatters move elements between vector lanes and the
/// addresses of a VSIB operand, so their shadows move the same way: for
/// each enabled lane, a gather copies the shadow of its element's memory
/// into the lane, a scatter the lane's shadow to that memory — lowest lane
/// first, so a later lane wins where addresses coincide, as in the
/// instruction. Disabled lanes keep their shadow; a gather's destination
/// beyond its lanes becomes passive, and so does the mask, which
/// the instruction clears (an EVEX `k` register, or for the VEX gathers a
/// vector register whose lanes' sign bits select). The prefetch forms
/// write nothing. Applied before the instruction runs, with its inputs.
fn gather_scatter(ctx: &mut ThreadCtx, insn: &Instruction) {
    let Some(mem_op) = (0..insn.op_count()).find(|&i| insn.op_kind(i) == OpKind::Memory) else {
        return clear_written(ctx, insn, true);
    };
    let scatter = mem_op == 0;
    let data_op = if scatter { 1 } else { 0 };
    if data_op >= insn.op_count() || insn.op_kind(data_op) != OpKind::Register {
        return; // gather/scatter prefetches
    }
    let data = insn.op_register(data_op);
    let Some(data_off) = reg_shadow_offset(data) else {
        return clear_written(ctx, insn, true);
    };
    let elem = insn.memory_size().size();
    let index_size = if insn.vsib() == Some(true) { 8 } else { 4 };
    if !matches!(elem, 4 | 8) {
        return clear_written(ctx, insn, true);
    }
    let lanes = (insn.memory_index().size() / index_size).min(data.size() / elem);
    let vex_mask = (!scatter && insn.op_count() == 3).then(|| insn.op2_register());
    let enabled: u64 = match vex_mask {
        Some(m) => {
            let v = super::guest::vec_value(ctx, m.number());
            (0..lanes).fold(0, |bits, j| {
                bits | (u64::from(v[j * elem + elem - 1] >> 7) << j)
            })
        }
        None if insn.op_mask() != Register::None => {
            super::guest::kreg_value(ctx, insn.op_mask().number())
        }
        None => !0,
    };
    let mut shadow = [0u8; 64];
    read_shadow(ctx, ShadowLoc::Reg(data_off), &mut shadow[..data.size()]);
    for j in (0..lanes).filter(|j| enabled & (1 << j) != 0) {
        let Some(addr) = effective_address(ctx, insn, j) else {
            return clear_written(ctx, insn, true);
        };
        let lane = &mut shadow[j * elem..][..elem];
        if scatter {
            write_mem_shadow(ctx, addr, lane);
        } else {
            read_mem_shadow(ctx, addr, lane);
        }
    }
    if !scatter {
        // Lanes beyond the indices (a qword-indexed gather of dwords
        // fills half its register) and everything above the vector length
        // are zeroed.
        shadow[lanes * elem..].fill(0);
        write_shadow(ctx, ShadowLoc::Reg(data_off), &shadow);
    }
    match vex_mask {
        Some(m) => {
            if let Some(off) = reg_shadow_offset(m) {
                write_shadow(ctx, ShadowLoc::Reg(off), &[0u8; 64]);
            }
        }
        None if insn.op_mask() != Register::None => {
            if let Some(off) = reg_shadow_offset(insn.op_mask()) {
                write_shadow(ctx, ShadowLoc::Reg(off), &[0u8; 8]);
            }
        }
        None => {}
    }
}

/// Integer addition of `k·2^23` to a float lane's bits (`k·2^52` to a
/// double's, in qword lanes), or subtraction from them: a multiplication
/// by 2^±k while the exponent stays in range — how vectorised `exp`
/// kernels apply 2^n (numpy's AVX2 float32 `exp`: `vpslld` then `vpaddd`).
/// Lanes with one active operand and a passive one whose mantissa bits are
/// zero get a block with that partial; lanes with both passive stay
/// passive. Returns false, leaving the instruction to the general rule
/// (a constant, reported), when any lane is something else.
fn exponent_scaling(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction) -> bool {
    use iced_x86::Mnemonic as M;
    let (elem, subtract) = match insn.mnemonic() {
        M::Paddd | M::Vpaddd => (Elem::F32, false),
        M::Paddq | M::Vpaddq => (Elem::F64, false),
        M::Psubd | M::Vpsubd => (Elem::F32, true),
        M::Psubq | M::Vpsubq => (Elem::F64, true),
        _ => return false,
    };
    let ops = data_operands(insn);
    let legacy = insn.encoding() == EncodingKind::Legacy;
    let (ia, ib) = if legacy { (0, 1) } else { (1, 2) };
    if insn.op0_kind() != OpKind::Register || ops.len() <= ib {
        return false;
    }
    let (Some(a), Some(b)) = (
        lanes_of(ctx, insn, ops[ia], elem),
        lanes_of(ctx, insn, ops[ib], elem),
    ) else {
        return false;
    };
    let w = if elem == Elem::F32 { 4 } else { 8 };
    let bits = |l: &Lanes, lane: usize| l.bits(lane, elem);
    let lanes = dest_bytes(insn) / w;
    let mut blocks = Vec::with_capacity(lanes);
    // The bits of a sum with a shifter are a staircase: a passive step.
    let staircase = |i: Shade, v: u64| {
        m.memory_ref(ctx)
            .shifter_sums
            .shifter_of(m.key(i, v))
            .is_some()
    };
    for lane in 0..lanes {
        let (xa, xb) = (a.index(m, lane, elem), b.index(m, lane, elem));
        let xa = if staircase(xa, bits(&a, lane)) {
            Shade::PASSIVE
        } else {
            xa
        };
        let xb = if staircase(xb, bits(&b, lane)) {
            Shade::PASSIVE
        } else {
            xb
        };
        let (active, index, step) = match (xa.is_active(), xb.is_active()) {
            (false, false) => {
                blocks.push(None);
                continue;
            }
            (true, false) => (bits(&a, lane), xa, bits(&b, lane)),
            (false, true) if !subtract => (bits(&b, lane), xb, bits(&a, lane)),
            _ => return false,
        };
        let Some(factor) = exponent_factor(active, step, subtract, elem) else {
            return false;
        };
        blocks.push(Some((index, factor)));
    }
    let Some(loc) = reg_shadow_offset(insn.op0_register()) else {
        return false;
    };
    let mut old = [0u8; 64];
    read_shadow(ctx, ShadowLoc::Reg(loc), &mut old);
    let mut out = if legacy { old } else { [0u8; 64] };
    for (lane, block) in blocks.into_iter().enumerate() {
        let idx = block.map_or(Shade::PASSIVE, |(i, p)| {
            result_index(ctx, m, i, p, Shade::PASSIVE, 0.0)
        });
        m.write(&mut out[lane * w..][..w], elem, idx);
    }
    apply_mask(ctx, insn, &old, &mut out, w, lanes);
    write_shadow(ctx, ShadowLoc::Reg(loc), &out);
    true
}

/// Whether an `and` of two 8-byte general-register operands (data,
/// shadow) keeps an active double's sign and significand bits and clears
/// all its exponent bits, the mask being the other, passive, operand.
fn exponent_masked_off(m: &dyn Mode, operands: &[([u8; 64], [u8; 64])]) -> bool {
    const SIGNIFICAND: u64 = (1 << 52) - 1;
    const EXPONENT: u64 = 0x7ff << 52;
    // The sign kept as well: printf takes the significand alone
    // (`& 0x000f…f`), a value's parts for printing, not a new value.
    const SIGN: u64 = 1 << 63;
    let value = |o: &([u8; 64], [u8; 64])| u64::from_le_bytes(o.0[..8].try_into().unwrap());
    let active = |o: &([u8; 64], [u8; 64])| m.read(&o.1[..8], Elem::F64).is_active();
    match operands {
        [a, b] => [(a, b), (b, a)].iter().any(|&(x, mask)| {
            let e = value(x) & EXPONENT;
            active(x)
                && !active(mask)
                && e != 0
                && e != EXPONENT
                && value(mask) & (SIGNIFICAND | SIGN) == SIGNIFICAND | SIGN
                && value(mask) & EXPONENT == 0
        }),
        _ => false,
    }
}

/// The factor 2^k by which adding (or subtracting) `step` to the bits of
/// the normal value `active` scales it, when `step` is k whole exponent
/// units and the result stays normal; None otherwise.
fn exponent_factor(active: u64, step: u64, subtract: bool, elem: Elem) -> Option<f64> {
    let (mantissa, exponent_max) = match elem {
        Elem::F32 => (23, 0xff_i64),
        _ => (52, 0x7ff_i64),
    };
    // The step as a signed count of exponent units.
    let signed = if elem == Elem::F32 {
        i64::from(step as u32 as i32)
    } else {
        step as i64
    };
    if signed & ((1 << mantissa) - 1) != 0 {
        return None;
    }
    let k = (signed >> mantissa) * if subtract { -1 } else { 1 };
    let e = ((active >> mantissa) as i64) & exponent_max;
    if e == 0 || e == exponent_max || !(1..exponent_max).contains(&(e + k)) {
        return None;
    }
    // The factor itself must be a double (the tape's partial): scaling
    // 2^-1000 by 2^2000 stays normal, but 2^2000 is no double — then the
    // derivative is reported lost, not given as ∞ or 0.
    let factor = 2f64.powi(k as i32);
    factor.is_normal().then_some(factor)
}

/// A general-register operand of an `add`/`sub` ([`is_gpr_add_sub`]) as
/// (bits, shade) of a value of `elem` (`w` bytes): a register, memory or an
/// immediate (passive).
fn gpr_operand(
    ctx: &ThreadCtx,
    m: &dyn Mode,
    insn: &Instruction,
    op: u32,
    elem: Elem,
) -> Option<(u64, Shade)> {
    let w = elem_bytes(elem);
    let mask = if w == 8 { u64::MAX } else { 0xffff_ffff };
    let mut sh = [0u8; 8];
    match insn.op_kind(op) {
        OpKind::Register => {
            let r = insn.op_register(op);
            read_shadow(ctx, ShadowLoc::Reg(reg_shadow_offset(r)?), &mut sh[..w]);
            Some((
                super::guest::gpr_value(ctx, r) & mask,
                m.read(&sh[..w], elem),
            ))
        }
        OpKind::Memory => {
            let ea = effective_address(ctx, insn, 0)?;
            let mut d = [0u8; 8];
            if !shadowmem::is_app(ea) || !read_mem(ea, &mut d[..w]) {
                return None;
            }
            read_shadow(ctx, ShadowLoc::Mem(shadowmem::shadow_of(ea)), &mut sh[..w]);
            Some((u64::from_le_bytes(d), m.read(&sh[..w], elem)))
        }
        k if is_immediate(k) => Some((insn.immediate(op) & mask, Shade::PASSIVE)),
        _ => None,
    }
}

/// The element a 32- or 64-bit general register holds, as float or double.
fn gpr_elem(insn: &Instruction) -> Elem {
    if insn.op0_register().size() == 8 {
        Elem::F64
    } else {
        Elem::F32
    }
}

/// Whether an `add`/`sub` on a general register reads an active value.
fn gpr_active_input(ctx: &ThreadCtx, m: &dyn Mode, insn: &Instruction) -> bool {
    let elem = gpr_elem(insn);
    (0..2).any(|o| gpr_operand(ctx, m, insn, o, elem).is_some_and(|(_, s)| s.is_active()))
}

/// An exponent add by hand in a general register: `add`/`sub` of k·2^52
/// to a double's bits (64-bit register) or of k·2^23 to a float's (32-bit),
/// as `ldexp` is written in C without libm — the value times 2^k, so the
/// derivative scales by 2^k (the vector forms: [`exponent_scaling`]).
fn gpr_exponent_scaling(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction) -> bool {
    if !rewriter::instrument::is_gpr_add_sub(insn) {
        return false;
    }
    let subtract = insn.mnemonic() == iced_x86::Mnemonic::Sub;
    let elem = gpr_elem(insn);
    let (Some((a, xa)), Some((b, xb))) = (
        gpr_operand(ctx, m, insn, 0, elem),
        gpr_operand(ctx, m, insn, 1, elem),
    ) else {
        return false;
    };
    let (active, index, step) = match (xa.is_active(), xb.is_active()) {
        (true, false) => (a, xa, b),
        (false, true) if !subtract => (b, xb, a),
        _ => return false,
    };
    let Some(factor) = exponent_factor(active, step, subtract, elem) else {
        return false;
    };
    let Some(loc) = reg_shadow_offset(insn.op0_register().full_register()) else {
        return false;
    };
    let idx = result_index(ctx, m, index, factor, Shade::PASSIVE, 0.0);
    // A 32-bit result zero-extends into the 64-bit register: so does its
    // shadow.
    let mut out = [0u8; 8];
    m.write(&mut out[..elem_bytes(elem)], elem, idx);
    write_shadow(ctx, ShadowLoc::Reg(loc), &out);
    true
}

/// The guest instruction right after `insn` in memory (invalid when it
/// cannot be read or decoded): the second half of an instruction pair.
fn instruction_after(insn: &Instruction) -> Instruction {
    let mut bytes = [0u8; 15];
    let n = crate::cache::read_guest(insn.next_ip(), &mut bytes);
    iced_x86::Decoder::with_ip(
        64,
        &bytes[..n],
        insn.next_ip(),
        iced_x86::DecoderOptions::NONE,
    )
    .decode()
}

/// Either half of the sign-clearing pair `shl r, 1; shr r, 1` (or `add
/// r, r; shr r, 1`) on the double (64-bit register) or float (32-bit) in a
/// general register ([`magnitude_shift`]): the pair is fabs. The first
/// half, when the next instruction in memory is the second on the same
/// register, records |x| (∂ = sign x) into the register's shadow, which
/// the second half then keeps. Anything else is integer work on the bits:
/// a constant, unreported (printing and hashing code shifts doubles so).
fn magnitude_pair(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction) {
    let reg = insn.op0_register();
    let full = ShadowLoc::Reg(RegFile::gpr_offset(reg.full_register().number(), 0));
    let mut shadow = [0u8; 8];
    read_shadow(ctx, full, &mut shadow);
    let bits = reg.size() * 8;
    let elem = word_elem(reg.size());
    let index = m.read(&shadow[..reg.size().min(8)], elem);
    let upper = u32::from_le_bytes(shadow[4..].try_into().unwrap());
    let upper = if m.granules_tell_layout() { upper } else { 0 };
    let pending = core::mem::take(&mut m.memory(ctx).magnitude_pair_at);
    if insn.mnemonic() == Mnemonic::Shr {
        if index.is_active() && pending == insn.ip() {
            return; // |x| from the first half
        }
        return clear_written(ctx, insn, false);
    }
    let second_half = || {
        let next = instruction_after(insn);
        !next.is_invalid()
            && next.mnemonic() == Mnemonic::Shr
            && magnitude_shift(&next)
            && next.op0_register() == reg
    };
    if !index.is_active() || (bits == 64 && upper != 0) || !second_half() {
        return clear_written(ctx, insn, false);
    }
    let value = super::guest::gpr_value(ctx, reg);
    let partial = if value >> (bits - 1) & 1 == 1 {
        -1.0
    } else {
        1.0
    };
    let new = result_index(ctx, m, index, partial, Shade::PASSIVE, 0.0);
    let mut out = [0u8; 8];
    m.write(&mut out[..reg.size().min(8)], elem, new);
    write_shadow(ctx, full, &out);
    m.memory(ctx).magnitude_pair_at = insn.next_ip();
}

/// [`magnitude_pair`] on vector lanes ([`vector_magnitude_shift`]): the
/// left shift, followed in memory by the right shift of its destination,
/// records |x| per lane into its destination's shadow, which the right
/// shift then copies to its own. False (the default rule, which reports
/// the shift) when the instruction is no such half, or a lane holds a
/// float pair where doubles are shifted.
fn vector_magnitude_pair(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction) -> bool {
    let Some((w, left)) = vector_magnitude_shift(insn) else {
        return false;
    };
    let legacy = insn.encoding() == EncodingKind::Legacy;
    let dst = insn.op0_register();
    let src = if legacy { dst } else { insn.op_register(1) };
    let (Some(dst_loc), Some(src_loc)) = (reg_shadow_offset(dst), reg_shadow_offset(src)) else {
        return false;
    };
    let vl = dst.size();
    let mut shadow = [0u8; 64];
    read_shadow(ctx, ShadowLoc::Reg(src_loc), &mut shadow[..vl]);
    let pending = core::mem::take(&mut m.memory(ctx).magnitude_pair_at);
    let mut out = [0u8; 64];
    if legacy {
        read_shadow(ctx, ShadowLoc::Reg(dst_loc), &mut out);
    }
    if !left {
        if pending != insn.ip() {
            return false;
        }
        out[..vl].copy_from_slice(&shadow[..vl]);
        write_shadow(ctx, ShadowLoc::Reg(dst_loc), &out);
        return true;
    }
    let second_half = || {
        let next = instruction_after(insn);
        let next_src = if next.encoding() == EncodingKind::Legacy {
            0
        } else {
            1
        };
        !next.is_invalid()
            && vector_magnitude_shift(&next) == Some((w, false))
            && next.op_register(next_src) == dst
            && next.op0_register().size() == vl
    };
    let split = m.granules_tell_layout()
        && (0..vl / w).any(|lane| w == 8 && shadow[8 * lane + 4..8 * lane + 8] != [0; 4]);
    if split || !second_half() {
        return false;
    }
    let data = vec_value(ctx, src.number());
    let elem = word_elem(w);
    for lane in 0..vl / w {
        let index = m.read(&shadow[w * lane..][..w], elem);
        let negative = data[w * lane + w - 1] & 0x80 != 0;
        let p = if negative { -1.0 } else { 1.0 };
        let new = result_index(ctx, m, index, p, Shade::PASSIVE, 0.0);
        m.write(&mut out[w * lane..][..w], elem, new);
    }
    write_shadow(ctx, ShadowLoc::Reg(dst_loc), &out);
    m.memory(ctx).magnitude_pair_at = insn.next_ip();
    true
}

/// A compare of an active value with a constant of the program
/// ([`compares_with_constant`]) that finds them equal: reported once per
/// guest address. Compilers may continue with the constant after such a
/// test — gcc rematerialises −1.0 after CPython's and numpy's
/// `x == -1.0 && PyErr_Occurred()` (`PyFloat_AsDouble`'s error value), so
/// `math.sin(x)` or `a[i] = x` at x = −1.0 lose x's derivative — and that
/// constant, loaded by a plain move or an immediate, carries no index.
fn equal_to_constant(ctx: &ThreadCtx, m: &dyn Mode, insn: &Instruction) {
    let elem = match insn.mnemonic() {
        Mnemonic::Ucomiss | Mnemonic::Comiss | Mnemonic::Vucomiss | Mnemonic::Vcomiss => Elem::F32,
        _ => Elem::F64,
    };
    let (Some(a), Some(b)) = (lanes_of(ctx, insn, 0, elem), lanes_of(ctx, insn, 1, elem)) else {
        return;
    };
    if a.index(m, 0, elem).is_active()
        && !b.index(m, 0, elem).is_active()
        && a.value(0, elem) == b.value(0, elem)
    {
        warn_once_at(
            insn,
            "an active value equals the constant it is compared with; code after the test may use the constant, whose derivative is 0",
        );
    }
}

/// `btr`/`bts`/`btc` of the sign bit ([`sign_bit_op`]): abs (∂ = sign x),
/// negative abs (−sign x), negation (−1) of the value the operand holds.
fn sign_bit(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction) {
    let Some(loc) = operand_shadow(ctx, insn, 0) else {
        return clear_written(ctx, insn, true);
    };
    let size = match insn.op0_kind() {
        OpKind::Register => insn.op0_register().size(),
        _ => insn.memory_size().size(),
    }
    .clamp(4, 8);
    let elem = word_elem(size);
    let mut sh = [0u8; 8];
    read_shadow(ctx, loc, &mut sh[..size]);
    let index = m.read(&sh[..size], elem);
    if !index.is_active() {
        return;
    }
    let bits = match insn.op0_kind() {
        OpKind::Register => super::guest::gpr_value(ctx, insn.op0_register()),
        _ => {
            let mut b = [0u8; 8];
            let size = insn.memory_size().size().min(8);
            match effective_address(ctx, insn, 0) {
                Some(ea) if read_mem(ea, &mut b[..size]) => u64::from_le_bytes(b),
                _ => return clear_written(ctx, insn, true),
            }
        }
    };
    let negative = bits >> insn.immediate8() & 1 == 1;
    let partial = match insn.mnemonic() {
        Mnemonic::Btc => -1.0,
        Mnemonic::Btr if negative => -1.0,
        Mnemonic::Bts if !negative => -1.0,
        _ => 1.0,
    };
    let new = result_index(ctx, m, index, partial, Shade::PASSIVE, 0.0);
    // A 32-bit register write zeroes the upper half, and its shadow.
    let mut shadow = [0u8; 8];
    m.write(&mut shadow[..size], elem, new);
    let len = if insn.op0_kind() == OpKind::Register && insn.op0_register().size() == 4 {
        8
    } else {
        size
    };
    write_shadow(ctx, loc, &shadow[..len]);
}

/// A right shift by an immediate that leaves none of a float's (dword
/// lanes) or double's (qword lanes) significand bits: what remains is the
/// sign and exponent, a staircase in the value, whose derivative 0 the
/// default rule gives — nothing to report (vectorised `log` kernels take
/// the exponent so).
fn exponent_extraction(ctx: &ThreadCtx, insn: &Instruction) -> bool {
    use iced_x86::Mnemonic as M;
    let significand_bits = match insn.mnemonic() {
        M::Psrld | M::Vpsrld | M::Psrad | M::Vpsrad => 23,
        M::Psrlq | M::Vpsrlq | M::Vpsraq => 52,
        _ => return false,
    };
    shift_count(ctx, insn).is_some_and(|count| count >= significand_bits)
}

/// The count of a vector shift: its immediate, or the low quadword of its
/// xmm count register (compilers at -O0 pass `_mm_srli_epi64`'s so).
fn shift_count(ctx: &ThreadCtx, insn: &Instruction) -> Option<u64> {
    let last = insn.op_count().checked_sub(1)?;
    match insn.op_kind(last) {
        k if is_immediate(k) => Some(insn.immediate(last)),
        OpKind::Register if insn.op_register(last).is_xmm() && insn.op_count() >= 2 => {
            let v = vec_value(ctx, insn.op_register(last).number());
            Some(u64::from_le_bytes(v[..8].try_into().unwrap()))
        }
        _ => None,
    }
}

/// [`granule_shift`] with the count in a register: `psrlq x, c` with c a
/// multiple of 32 below 64 moves whole index granules.
fn granule_shift_by_register(ctx: &ThreadCtx, insn: &Instruction) -> bool {
    use iced_x86::Mnemonic as M;
    matches!(insn.mnemonic(), M::Psllq | M::Psrlq | M::Vpsllq | M::Vpsrlq)
        && insn.op_kind(insn.op_count() - 1) == OpKind::Register
        && shift_count(ctx, insn).is_some_and(|c| c < 64 && c.is_multiple_of(32))
}

/// The bytes one bit of an EVEX instruction's mask covers: its element
/// size (iced's opcode table), whatever the register's data.
fn masked_element_bytes(insn: &Instruction) -> Option<usize> {
    let elem = rewriter::code_sizes::element_bytes(insn.code());
    matches!(elem, 1 | 2 | 4 | 8).then_some(elem)
}

fn read_mem_shadow(ctx: &ThreadCtx, addr: u64, buf: &mut [u8]) {
    if shadowmem::is_app(addr) {
        read_shadow(ctx, ShadowLoc::Mem(shadowmem::shadow_of(addr)), buf);
    } else {
        buf.fill(0);
    }
}

fn write_mem_shadow(ctx: &mut ThreadCtx, addr: u64, buf: &[u8]) {
    if shadowmem::is_app(addr) {
        write_shadow(ctx, ShadowLoc::Mem(shadowmem::shadow_of(addr)), buf);
    }
}

/// Bytes of a `rep movs`/`rep stos` carried out per round by
/// [`rep_in_chunks`].
const REP_CHUNK_BYTES: u64 = 64 << 10;

/// String instructions: `movs` copies shadow like data, `stos` stores the
/// accumulator's shadow, `lods` loads it; compares write nothing tracked.
fn strings(ctx: &mut ThreadCtx, insn: &Instruction) -> After {
    let size = insn.memory_size().size().max(1);
    let rep = insn.has_rep_prefix() || insn.has_repne_prefix();
    let count = if rep { ctx.regs.gpr[1] } else { 1 };
    if count == 0 {
        return After::Run;
    }
    let back = ctx.regs.rflags & (1 << 10) != 0;
    if rep {
        if let Some(after) = rep_in_chunks(ctx, insn, size as u64, back) {
            return after;
        }
    }
    let (rsi, rdi) = (ctx.regs.gpr[6], ctx.regs.gpr[7]);
    let total = count * size as u64;
    let span = |start: u64| {
        if back {
            start + size as u64 - total
        } else {
            start
        }
    };
    match insn.mnemonic() {
        Mnemonic::Movsb | Mnemonic::Movsw | Mnemonic::Movsd | Mnemonic::Movsq => {
            let (src, dst) = (span(rsi), span(rdi));
            if shadowmem::is_app_range(src, src + total)
                && shadowmem::is_app_range(dst, dst + total)
            {
                // SAFETY: both ranges are application memory, whose shadow is
                // mapped; `copy` handles overlap like the data copy does.
                unsafe {
                    core::ptr::copy(
                        shadowmem::shadow_of(src) as *const u8,
                        shadowmem::shadow_of(dst) as *mut u8,
                        total as usize,
                    )
                };
            }
        }
        Mnemonic::Stosb | Mnemonic::Stosw | Mnemonic::Stosd | Mnemonic::Stosq => {
            let mut acc = [0u8; 8];
            read_shadow(ctx, ShadowLoc::Reg(RegFile::gpr_offset(0, 0)), &mut acc);
            let dst = span(rdi);
            if shadowmem::is_app_range(dst, dst + total) {
                let base = shadowmem::shadow_of(dst);
                for i in 0..count {
                    // SAFETY: inside the checked application range's shadow.
                    unsafe {
                        core::ptr::copy_nonoverlapping(
                            acc.as_ptr(),
                            (base + i * size as u64) as *mut u8,
                            size,
                        )
                    };
                }
            }
        }
        Mnemonic::Lodsb | Mnemonic::Lodsw | Mnemonic::Lodsd | Mnemonic::Lodsq => {
            let last = if back {
                rsi - (count - 1) * size as u64
            } else {
                rsi + (count - 1) * size as u64
            };
            let mut sh = [0u8; 8];
            read_mem_shadow(ctx, last, &mut sh[..size]);
            let full = if size == 4 { 8 } else { size };
            write_shadow(ctx, ShadowLoc::Reg(RegFile::gpr_offset(0, 0)), &sh[..full]);
        }
        _ => {}
    }
    After::Run
}

/// A `rep movs` or `rep stos` on application memory: done here, data and
/// shadow a chunk at a time (at most [`REP_CHUNK_BYTES`]), the registers
/// advanced after each chunk as the instruction advances them, until the
/// count is zero (the instruction then runs with nothing left to do) or a
/// signal waits (`After::Restart`: delivered at the instruction, which goes
/// on from there after the handler). Applying the shadow of the whole
/// range first and running the instruction natively took longer than a
/// fast timer's period for 128 KiB (glibc's `memset` under a 100 µs
/// timer); every signal then came during the shadow work, the step to the
/// next boundary let one iteration run, and the instruction restarted with
/// the shadow of nearly the whole range to redo: a livelock. Overlapping
/// `movs` ranges go in chunks no longer than the distance between them,
/// which gives exactly the instruction's element-by-element result.
/// `None`: not handled here (memory without shadow, an overlap closer than
/// one element, or a fault, which the instruction itself then raises at
/// its element).
fn rep_in_chunks(ctx: &mut ThreadCtx, insn: &Instruction, size: u64, back: bool) -> Option<After> {
    let moves = match insn.mnemonic() {
        Mnemonic::Movsb | Mnemonic::Movsw | Mnemonic::Movsd | Mnemonic::Movsq => true,
        Mnemonic::Stosb | Mnemonic::Stosw | Mnemonic::Stosd | Mnemonic::Stosq => false,
        _ => return None,
    };
    // The byte range of `n` elements starting (in the instruction's
    // direction) at `at`.
    let range = |at: u64, n: u64| {
        let bytes = n * size;
        let lo = if back {
            (at + size).wrapping_sub(bytes)
        } else {
            at
        };
        (lo, lo.wrapping_add(bytes))
    };
    // A pointer register moved past `bytes` bytes in that direction.
    let advance = |at: u64, bytes: u64| if back { at - bytes } else { at + bytes };
    let count = ctx.regs.gpr[1];
    let (dst_lo, dst_hi) = range(ctx.regs.gpr[7], count);
    if dst_hi <= dst_lo || !shadowmem::is_app_range(dst_lo, dst_hi) {
        return None;
    }
    let mut chunk = REP_CHUNK_BYTES;
    if moves {
        let (src_lo, src_hi) = range(ctx.regs.gpr[6], count);
        if src_hi <= src_lo || !shadowmem::is_app_range(src_lo, src_hi) {
            return None;
        }
        if src_lo < dst_hi && dst_lo < src_hi {
            // Within a chunk no longer than the distance, no byte is both
            // read and written; chunks go in the instruction's direction.
            let distance = ctx.regs.gpr[7].abs_diff(ctx.regs.gpr[6]);
            if distance < size {
                return None;
            }
            chunk = chunk.min(distance / size * size);
        }
    }
    // `stos`: a page of the stored value and one of its shadow.
    let mut value = [0u8; 4096];
    let mut value_shadow = [0u8; 4096];
    if !moves {
        let mut acc = [0u8; 8];
        read_shadow(ctx, ShadowLoc::Reg(RegFile::gpr_offset(0, 0)), &mut acc);
        let rax = ctx.regs.gpr[0].to_le_bytes();
        for (i, (v, sh)) in value.iter_mut().zip(value_shadow.iter_mut()).enumerate() {
            *v = rax[i % size as usize];
            *sh = acc[i % size as usize];
        }
    }
    let step = chunk / size;
    loop {
        let count = ctx.regs.gpr[1];
        if count == 0 {
            return Some(After::Run);
        }
        let n = count.min(step);
        let (lo, hi) = range(ctx.regs.gpr[7], n);
        let bytes = (hi - lo) as usize;
        if moves {
            let (src, _) = range(ctx.regs.gpr[6], n);
            // SAFETY: copies between guest ranges that do not overlap; a
            // fault (unmapped or read-only memory) is recovered and
            // reported as false. The shadows are application shadow,
            // mapped for the whole process.
            unsafe {
                if !crate::sys::safe_copy(lo as *mut u8, src as *const u8, bytes) {
                    return None;
                }
                core::ptr::copy_nonoverlapping(
                    shadowmem::shadow_of(src) as *const u8,
                    shadowmem::shadow_of(lo) as *mut u8,
                    bytes,
                );
            }
            ctx.regs.gpr[6] = advance(ctx.regs.gpr[6], bytes as u64);
        } else {
            let mut at = 0;
            while at < bytes {
                let len = (bytes - at).min(value.len());
                // SAFETY: as above; the chunk starts on an element, and
                // the page of values repeats the element (4096 is a
                // multiple of every element size).
                unsafe {
                    if !crate::sys::safe_copy((lo as usize + at) as *mut u8, value.as_ptr(), len) {
                        return None;
                    }
                    core::ptr::copy_nonoverlapping(
                        value_shadow.as_ptr(),
                        shadowmem::shadow_of(lo + at as u64) as *mut u8,
                        len,
                    );
                }
                at += len;
            }
        }
        ctx.regs.gpr[7] = advance(ctx.regs.gpr[7], bytes as u64);
        ctx.regs.gpr[1] = count - n;
        if count > n && crate::signals::any_pending(ctx) {
            return Some(After::Restart);
        }
    }
}

/// `xchg` swaps shadows; `xadd`/`cmpxchg` move like the data they move.
fn exchange(ctx: &mut ThreadCtx, insn: &Instruction) {
    let size = if insn.op0_kind() == OpKind::Register {
        insn.op0_register().size()
    } else {
        insn.memory_size().size()
    };
    let (Some(a), Some(b)) = (operand_shadow(ctx, insn, 0), operand_shadow(ctx, insn, 1)) else {
        return clear_written(ctx, insn, true);
    };
    let mut sa = [0u8; 16];
    let mut sb = [0u8; 16];
    read_shadow(ctx, a, &mut sa[..size]);
    read_shadow(ctx, b, &mut sb[..size]);
    let widen = |loc: ShadowLoc, reg: Option<Register>, data: &[u8]| -> (ShadowLoc, Vec<u8>) {
        match (loc, reg) {
            (ShadowLoc::Reg(_), Some(r)) if r.size() == 4 => {
                let mut v = data[..4].to_vec();
                v.extend_from_slice(&[0; 4]);
                (
                    ShadowLoc::Reg(RegFile::gpr_offset(r.full_register().number(), 0)),
                    v,
                )
            }
            _ => (loc, data.to_vec()),
        }
    };
    let reg = |i: u32| (insn.op_kind(i) == OpKind::Register).then(|| insn.op_register(i));
    match insn.mnemonic() {
        Mnemonic::Xchg => {
            let (la, va) = widen(a, reg(0), &sb[..size]);
            let (lb, vb) = widen(b, reg(1), &sa[..size]);
            write_shadow(ctx, la, &va);
            write_shadow(ctx, lb, &vb);
        }
        Mnemonic::Xadd => {
            let (lb, vb) = widen(b, reg(1), &sa[..size]);
            write_shadow(ctx, lb, &vb);
            let (la, va) = widen(a, reg(0), &[0u8; 16][..size]);
            write_shadow(ctx, la, &va);
        }
        Mnemonic::Cmpxchg => {
            let acc = Register::RAX;
            let mask = if size == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * size)) - 1
            };
            let accv = super::guest::gpr_value(ctx, acc) & mask;
            let mut dv = [0u8; 8];
            let destv = match insn.op0_kind() {
                OpKind::Register => super::guest::gpr_value(ctx, insn.op0_register()) & mask,
                _ => {
                    let ea = effective_address(ctx, insn, 0).unwrap_or(0);
                    if read_mem(ea, &mut dv[..size]) {
                        u64::from_le_bytes(dv) & mask
                    } else {
                        return clear_written(ctx, insn, true);
                    }
                }
            };
            if accv == destv {
                let (la, va) = widen(a, reg(0), &sb[..size]);
                write_shadow(ctx, la, &va);
            } else {
                let acc_reg = match size {
                    8 => Register::RAX,
                    4 => Register::EAX,
                    2 => Register::AX,
                    _ => Register::AL,
                };
                let loc = ShadowLoc::Reg(RegFile::gpr_offset(0, 0));
                let (l, v) = widen(loc, Some(acc_reg), &sa[..size]);
                write_shadow(ctx, l, &v);
            }
        }
        _ => clear_written(ctx, insn, true),
    }
}

/// x87 `st(i)` in extended precision. Resets the unit first, so that
/// [`F80`] arithmetic has stack room whatever the guest left there.
fn st_f80(ctx: &ThreadCtx, i: usize) -> F80 {
    // SAFETY: runtime code; the guest's x87 state is in ctx.xsave and is
    // restored from there when the runtime returns to the guest.
    unsafe { mathwrap::f80::reset_x87() };
    F80::from_bytes(&crate::ad::guest::st_bytes(ctx, i))
}

/// The x87 stack: loads and stores keep indices, arithmetic records blocks.
/// Register shadows are kept per physical register (`st(i)` is physical
/// register `(TOP + i) mod 8`).
fn x87(ctx: &mut ThreadCtx, m: &dyn Mode, insn: &Instruction) {
    let top = x87_top(ctx);
    let phys = |t: usize, i: usize| (t + i) & 7;
    let get = |ctx: &ThreadCtx, p: usize| {
        let mut b = [0u8; 10];
        read_shadow(ctx, ShadowLoc::Reg(RegFile::x87_offset(p)), &mut b);
        m.read(&b, Elem::F80)
    };
    let set = |ctx: &mut ThreadCtx, p: usize, v: Shade| {
        let mut b = [0u8; 10];
        m.write(&mut b, Elem::F80, v);
        write_shadow(ctx, ShadowLoc::Reg(RegFile::x87_offset(p)), &b);
    };
    // A memory operand's type: float, double or x87 by its size.
    let mem_elem = |size: usize| match size {
        4 => Some(Elem::F32),
        8 => Some(Elem::F64),
        10 => Some(Elem::F80),
        _ => None,
    };
    let st_operand = |i: u32| -> Option<usize> {
        let reg = insn.op_register(i);
        (reg >= Register::ST0 && reg <= Register::ST7)
            .then(|| reg as usize - Register::ST0 as usize)
    };
    let mem_index = |ctx: &ThreadCtx| -> Shade {
        let Some(elem) = mem_elem(insn.memory_size().size()) else {
            return Shade::PASSIVE;
        };
        let Some(loc) = operand_shadow(
            ctx,
            insn,
            (0..insn.op_count())
                .find(|&i| insn.op_kind(i) == OpKind::Memory)
                .unwrap_or(0),
        ) else {
            return Shade::PASSIVE;
        };
        let mut b = [0u8; 10];
        let w = elem_bytes(elem);
        read_shadow(ctx, loc, &mut b[..w]);
        m.read(&b[..w], elem)
    };
    let mem_value = |ctx: &ThreadCtx| -> f64 {
        let Some(ea) = effective_address(ctx, insn, 0) else {
            return 0.0;
        };
        let mut b = [0u8; 10];
        let size = insn.memory_size().size();
        if !read_mem(ea, &mut b[..size.min(10)]) {
            return 0.0;
        }
        match size {
            4 => f32::from_le_bytes(b[..4].try_into().unwrap()) as f64,
            8 => f64::from_le_bytes(b[..8].try_into().unwrap()),
            10 => super::guest::f80_to_f64(&b),
            2 => i16::from_le_bytes(b[..2].try_into().unwrap()) as f64,
            _ => 0.0,
        }
    };
    let mn = insn.mnemonic();
    match mn {
        Mnemonic::Fld => {
            let idx = match insn.op0_kind() {
                OpKind::Memory => mem_index(ctx),
                _ => get(ctx, phys(top, st_operand(0).unwrap_or(0))),
            };
            set(ctx, phys(top, 7), idx);
        }
        Mnemonic::Fst | Mnemonic::Fstp => {
            let idx = get(ctx, phys(top, 0));
            match insn.op0_kind() {
                OpKind::Memory => {
                    if let Some(loc) = operand_shadow(ctx, insn, 0) {
                        let size = insn.memory_size().size().min(12);
                        let mut sh = [0u8; 12];
                        if let Some(elem) = mem_elem(size) {
                            m.write(&mut sh[..size], elem, idx);
                        }
                        write_shadow(ctx, loc, &sh[..size]);
                    }
                }
                _ => {
                    let i = st_operand(0).unwrap_or(0);
                    set(ctx, phys(top, i), idx);
                }
            }
        }
        Mnemonic::Fxch => {
            let i = st_operand(1).or(st_operand(0)).unwrap_or(1);
            let (a, b) = (get(ctx, phys(top, 0)), get(ctx, phys(top, i)));
            set(ctx, phys(top, 0), b);
            set(ctx, phys(top, i), a);
        }
        Mnemonic::Fchs | Mnemonic::Fabs | Mnemonic::Fsqrt | Mnemonic::Frndint => {
            let v = st_value(ctx, 0);
            let p = match mn {
                Mnemonic::Fchs => -1.0,
                Mnemonic::Fabs => {
                    if v.is_sign_negative() {
                        -1.0
                    } else {
                        1.0
                    }
                }
                // In extended precision: the value and its square root
                // have more bits than an f64.
                Mnemonic::Fsqrt => x87_partial(
                    insn,
                    F80::from_f64(0.5) / st_f80(ctx, 0).sqrt(),
                    get(ctx, phys(top, 0)),
                ),
                _ => 0.0,
            };
            let idx = typed_result_index(
                ctx,
                m,
                Elem::F80,
                (get(ctx, phys(top, 0)), p),
                (Shade::PASSIVE, 0.0),
            );
            set(ctx, phys(top, 0), idx);
        }
        Mnemonic::Fadd
        | Mnemonic::Faddp
        | Mnemonic::Fsub
        | Mnemonic::Fsubp
        | Mnemonic::Fsubr
        | Mnemonic::Fsubrp
        | Mnemonic::Fmul
        | Mnemonic::Fmulp
        | Mnemonic::Fdiv
        | Mnemonic::Fdivp
        | Mnemonic::Fdivr
        | Mnemonic::Fdivrp
        | Mnemonic::Fiadd
        | Mnemonic::Fisub
        | Mnemonic::Fisubr
        | Mnemonic::Fimul
        | Mnemonic::Fidiv
        | Mnemonic::Fidivr => {
            // dest op src, or with the `r` forms: dest = src op dest.
            // Register operands in extended precision (for the quotient's
            // partials; memory operands are at most doubles).
            let (dest80, src80) = match (insn.op_count(), insn.op0_kind()) {
                (1, OpKind::Memory) => (st_f80(ctx, 0), None),
                _ => (
                    st_f80(ctx, st_operand(0).unwrap_or(0)),
                    Some(st_f80(ctx, st_operand(1).unwrap_or(0))),
                ),
            };
            let (dest_st, dest_val, dest_idx, src_val, src_idx) =
                match (insn.op_count(), insn.op0_kind()) {
                    (1, OpKind::Memory) => {
                        let integer = matches!(
                            mn,
                            Mnemonic::Fiadd
                                | Mnemonic::Fisub
                                | Mnemonic::Fisubr
                                | Mnemonic::Fimul
                                | Mnemonic::Fidiv
                                | Mnemonic::Fidivr
                        );
                        let sv = if integer {
                            int_mem_value(ctx, insn)
                        } else {
                            mem_value(ctx)
                        };
                        let si = if integer {
                            Shade::PASSIVE
                        } else {
                            mem_index(ctx)
                        };
                        (0, st_value(ctx, 0), get(ctx, phys(top, 0)), sv, si)
                    }
                    _ => {
                        let d = st_operand(0).unwrap_or(0);
                        let s = st_operand(1).unwrap_or(0);
                        (
                            d,
                            st_value(ctx, d),
                            get(ctx, phys(top, d)),
                            st_value(ctx, s),
                            get(ctx, phys(top, s)),
                        )
                    }
                };
            let reversed = matches!(
                mn,
                Mnemonic::Fsubr
                    | Mnemonic::Fsubrp
                    | Mnemonic::Fdivr
                    | Mnemonic::Fdivrp
                    | Mnemonic::Fisubr
                    | Mnemonic::Fidivr
            );
            let op = match mn {
                Mnemonic::Fadd | Mnemonic::Faddp | Mnemonic::Fiadd => FpOp::Add,
                Mnemonic::Fmul | Mnemonic::Fmulp | Mnemonic::Fimul => FpOp::Mul,
                Mnemonic::Fdiv
                | Mnemonic::Fdivp
                | Mnemonic::Fdivr
                | Mnemonic::Fdivrp
                | Mnemonic::Fidiv
                | Mnemonic::Fidivr => FpOp::Div,
                _ => FpOp::Sub,
            };
            let ((a, ia), (b, ib)) = if reversed {
                ((src_val, src_idx), (dest_val, dest_idx))
            } else {
                ((dest_val, dest_idx), (src_val, src_idx))
            };
            let (mut pa, mut pb) = partials(op, a, b);
            let src80 = src80.unwrap_or(F80::from_f64(src_val));
            let (a80, b80) = if reversed {
                (src80, dest80)
            } else {
                (dest80, src80)
            };
            if op == FpOp::Div {
                let one = F80::from_f64(1.0);
                pa = x87_partial(insn, one / b80, ia);
                pb = x87_partial(insn, -(a80 / b80) / b80, ib);
            } else if op == FpOp::Mul {
                // The partials are the operands (as doubles already).
                x87_partial(insn, b80, ia);
                x87_partial(insn, a80, ib);
            }
            let idx = typed_result_index(ctx, m, Elem::F80, (ia, pa), (ib, pb));
            set(ctx, phys(top, dest_st), idx);
        }
        Mnemonic::Fcmovb
        | Mnemonic::Fcmove
        | Mnemonic::Fcmovbe
        | Mnemonic::Fcmovu
        | Mnemonic::Fcmovnb
        | Mnemonic::Fcmovne
        | Mnemonic::Fcmovnbe
        | Mnemonic::Fcmovnu => {
            // iced reports no condition code for fcmovcc.
            let cc = match mn {
                Mnemonic::Fcmovb => ConditionCode::b,
                Mnemonic::Fcmove => ConditionCode::e,
                Mnemonic::Fcmovbe => ConditionCode::be,
                Mnemonic::Fcmovu => ConditionCode::p,
                Mnemonic::Fcmovnb => ConditionCode::ae,
                Mnemonic::Fcmovne => ConditionCode::ne,
                Mnemonic::Fcmovnbe => ConditionCode::a,
                _ => ConditionCode::np,
            };
            if condition_holds(cc, ctx.regs.rflags) {
                let s = st_operand(1).unwrap_or(0);
                let idx = get(ctx, phys(top, s));
                set(ctx, phys(top, 0), idx);
            }
        }
        Mnemonic::Fprem
        | Mnemonic::Fprem1
        | Mnemonic::Fscale
        | Mnemonic::Fyl2x
        | Mnemonic::Fyl2xp1
        | Mnemonic::Fpatan
        | Mnemonic::Fsin
        | Mnemonic::Fcos
        | Mnemonic::F2xm1 => {
            // The result lands in st(0), or in st(1) for the ones that pop.
            let pops = matches!(mn, Mnemonic::Fyl2x | Mnemonic::Fyl2xp1 | Mnemonic::Fpatan);
            let (i0, i1) = (get(ctx, phys(top, 0)), get(ctx, phys(top, 1)));
            let unary = matches!(mn, Mnemonic::Fsin | Mnemonic::Fcos | Mnemonic::F2xm1);
            let i1 = if unary { Shade::PASSIVE } else { i1 };
            let idx = if !i0.is_active() && !i1.is_active() {
                Shade::PASSIVE
            } else {
                let (p0, p1) = x87_transcendental_partials(mn, st_f80(ctx, 0), st_f80(ctx, 1));
                let (p0, p1) = (x87_partial(insn, p0, i0), x87_partial(insn, p1, i1));
                typed_result_index(ctx, m, Elem::F80, (i0, p0), (i1, p1))
            };
            set(ctx, phys(top, usize::from(pops)), idx);
        }
        _ => {
            if any_x87_active(ctx) {
                warn_once(insn, "x87 instruction without a derivative rule; its result is treated as a constant");
            }
            clear_x87_written(ctx, insn, top);
        }
    }
}

/// `(∂r/∂st0, ∂r/∂st1)` of an x87 transcendental or remainder
/// instruction `m` on st(0) = `a`, st(1) = `b`, its result `r` computed
/// here as the CPU does (the rule runs before the instruction does):
/// `fprem`/`fprem1` r = a − q·b with q an integer: (1, −q); `fscale`
/// a·2^trunc(b): (2^trunc(b), 0); `fyl2x` b·log2 a: (b/(a ln 2), log2 a);
/// `fyl2xp1` b·log2(a + 1); `fpatan` atan2(b, a): (−b, a)/(a² + b²);
/// `fsin`, `fcos` (left unchanged beyond 2^63: 1); `f2xm1` 2^a − 1:
/// (2^a ln 2). A unary one's second partial is 0.
fn x87_transcendental_partials(m: Mnemonic, a: F80, b: F80) -> (F80, F80) {
    use mathwrap::f80::X87Op;
    let one = F80::from_f64(1.0);
    let ln2 = F80::from_f64(core::f64::consts::LN_2);
    let op = match m {
        Mnemonic::Fprem => X87Op::Fprem,
        Mnemonic::Fprem1 => X87Op::Fprem1,
        Mnemonic::Fscale => X87Op::Fscale,
        Mnemonic::Fyl2x => X87Op::Fyl2x,
        Mnemonic::Fyl2xp1 => X87Op::Fyl2xp1,
        Mnemonic::Fpatan => X87Op::Fpatan,
        Mnemonic::Fsin => X87Op::Fsin,
        Mnemonic::Fcos => X87Op::Fcos,
        _ => X87Op::F2xm1,
    };
    let r = a.x87(op, b);
    let in_range = a.to_f64().abs() < 2f64.powi(63);
    let zero = F80::ZERO;
    match op {
        X87Op::Fprem | X87Op::Fprem1 => (one, -((a - r) / b)),
        X87Op::Fscale => (one.x87(X87Op::Fscale, b), zero),
        X87Op::Fyl2x => (b / (a * ln2), a.x87(X87Op::Fyl2x, one)),
        X87Op::Fyl2xp1 => (b / ((a + one) * ln2), a.x87(X87Op::Fyl2xp1, one)),
        X87Op::Fpatan => {
            let d = a * a + b * b;
            (-(b / d), a / d)
        }
        X87Op::Fsin if in_range => (a.x87(X87Op::Fcos, one), zero),
        X87Op::Fcos if in_range => (-a.x87(X87Op::Fsin, one), zero),
        X87Op::Fsin | X87Op::Fcos => (one, zero),
        X87Op::F2xm1 => ((r + one) * ln2, zero),
    }
}

/// A partial derivative of an x87 operation, exact in extended precision,
/// as the tape and the tangents keep it: a double. Beyond double's range
/// (a value of 2^1024 or more, or below 2^-1022) it would become infinite
/// or lose its digits, and the derivative through the operation would be
/// wrong even where the partials of a chain multiply back into range
/// (`(x·2^2000)·2^-2000`; Boost's Bessel functions start recurrences at
/// √(smallest long double)): said once per address, for the partial of
/// an active `operand`.
fn x87_partial(insn: &Instruction, p: F80, operand: Shade) -> f64 {
    // A passive operand's partial multiplies nothing.
    if operand.is_active() && p.beyond_double() {
        warn_once_at(
            insn,
            "a partial derivative of an x87 operation lies beyond the range of doubles (the \
             tape's and the tangents' precision): it becomes infinite or loses its digits, and \
             derivatives through this operation are wrong unless its part in them is negligible",
        );
    }
    p.to_f64()
}

fn int_mem_value(ctx: &ThreadCtx, insn: &Instruction) -> f64 {
    let Some(ea) = effective_address(ctx, insn, 0) else {
        return 0.0;
    };
    let mut b = [0u8; 4];
    let size = insn.memory_size().size();
    if !read_mem(ea, &mut b[..size.min(4)]) {
        return 0.0;
    }
    match size {
        2 => i16::from_le_bytes([b[0], b[1]]) as f64,
        _ => i32::from_le_bytes(b) as f64,
    }
}

fn any_x87_active(ctx: &ThreadCtx) -> bool {
    ctx.shadow.x87.iter().any(|r| r.iter().any(|&g| g != 0))
}

fn condition_holds(cc: ConditionCode, f: u64) -> bool {
    let (cf, pf, zf) = (f & 1 != 0, f & 4 != 0, f & 0x40 != 0);
    let (sf, of) = (f & 0x80 != 0, f & 0x800 != 0);
    match cc {
        ConditionCode::o => of,
        ConditionCode::no => !of,
        ConditionCode::b => cf,
        ConditionCode::ae => !cf,
        ConditionCode::e => zf,
        ConditionCode::ne => !zf,
        ConditionCode::be => cf || zf,
        ConditionCode::a => !cf && !zf,
        ConditionCode::s => sf,
        ConditionCode::ns => !sf,
        ConditionCode::p => pf,
        ConditionCode::np => !pf,
        ConditionCode::l => sf != of,
        ConditionCode::ge => sf == of,
        ConditionCode::le => zf || sf != of,
        ConditionCode::g => !zf && sf == of,
        ConditionCode::None => true,
    }
}

/// Passive x87 instructions: the registers they write (after any push)
/// become passive.
pub(super) fn clear_x87_written(ctx: &mut ThreadCtx, insn: &Instruction, top: usize) {
    let inc = insn.fpu_stack_increment_info().increment();
    let new_top = (top as i32 + inc).rem_euclid(8) as usize;
    // A push writes the new st(0) (iced does not list it for `fld1` & co.).
    for i in 0..(-inc).max(0) as usize {
        ctx.shadow.x87[(new_top + i) & 7] = [0; 4];
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    for u in info.used_registers() {
        let reg = u.register();
        if reg >= Register::ST0 && reg <= Register::ST7 && writes(u.access()) {
            let i = reg as usize - Register::ST0 as usize;
            ctx.shadow.x87[(new_top + i) & 7] = [0; 4];
        }
    }
    clear_memory_written(ctx, insn);
}

fn clear_memory_written(ctx: &mut ThreadCtx, insn: &Instruction) {
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    for m in info.used_memory() {
        if !writes(m.access()) {
            continue;
        }
        let Some(ea) = effective_address(ctx, insn, 0) else {
            continue;
        };
        let size = m.memory_size().size().clamp(1, 64);
        let k = insn.op_mask();
        match masked_element_bytes(insn) {
            // A masked store (`vpmovqd m{k}`, `vmovdqu8 m{k}`) leaves the
            // elements its mask clears alone, values and shadows.
            Some(elem) if k != Register::None && insn.op0_kind() == OpKind::Memory => {
                let bits = super::guest::kreg_value(ctx, k.number());
                for lane in (0..size / elem).filter(|lane| bits & (1 << lane) != 0) {
                    write_mem_shadow(ctx, ea + (lane * elem) as u64, &[0u8; 64][..elem]);
                }
            }
            _ => write_mem_shadow(ctx, ea, &[0u8; 64][..size]),
        }
    }
}

/// The default rule: every register and memory location the instruction
/// writes becomes passive. With `report`, a read of active data is reported
/// once per instruction form (the result would have carried a derivative
/// that dgad does not know how to compute).
fn clear_written(ctx: &mut ThreadCtx, insn: &Instruction, report: bool) {
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    if report {
        let active_input = info.used_registers().iter().any(|u| {
            !matches!(
                u.access(),
                OpAccess::Write | OpAccess::CondWrite | OpAccess::NoMemAccess
            ) && reg_shadow_offset(u.register()).is_some_and(|off| {
                let mut b = [0u8; 64];
                let n = if u.register().is_gpr() {
                    8
                } else {
                    u.register().size().clamp(1, 64)
                };
                read_shadow(ctx, ShadowLoc::Reg(off), &mut b[..n]);
                b.iter().any(|&x| x != 0)
            })
        });
        if active_input {
            warn_once(
                insn,
                "no derivative rule for this instruction; its result is treated as a constant",
            );
        }
    }
    let x87 = insn.fpu_stack_increment_info().increment() != 0
        || info
            .used_registers()
            .iter()
            .any(|u| u.register() >= Register::ST0 && u.register() <= Register::ST7);
    if x87 {
        // Pushes (fld1, fild, …) write the register that becomes st(0).
        clear_x87_written(ctx, insn, x87_top(ctx));
    }
    let kept = merge_masked_lanes(ctx, insn);
    for (off, len) in written_register_shadows(insn, info).0 {
        write_shadow(
            ctx,
            ShadowLoc::Reg(off as usize),
            &[0u8; 8][..usize::from(len)],
        );
    }
    if let Some((loc, old, elem, bits)) = kept {
        let mut now = [0u8; 64];
        read_shadow(ctx, ShadowLoc::Reg(loc), &mut now);
        let lanes = insn.op0_register().size() / elem;
        for lane in (0..lanes).filter(|lane| bits & (1 << lane) == 0) {
            now[lane * elem..][..elem].copy_from_slice(&old[lane * elem..][..elem]);
        }
        write_shadow(ctx, ShadowLoc::Reg(loc), &now);
    }
    clear_memory_written(ctx, insn);
}

/// For an EVEX instruction that merge-masks a vector register destination:
/// where the destination's shadow is, its shadow now, the element width
/// and the mask. The lanes whose mask bit is clear keep their values, and
/// must keep their shadows when the instruction's result is passive (an
/// integer operation, the masked zero idiom `vxorpd z{k}, a, a`).
fn merge_masked_lanes(
    ctx: &ThreadCtx,
    insn: &Instruction,
) -> Option<(usize, [u8; 64], usize, u64)> {
    let k = insn.op_mask();
    if k == Register::None
        || insn.zeroing_masking()
        || insn.op0_kind() != OpKind::Register
        || !insn.op0_register().is_vector_register()
    {
        return None;
    }
    let elem = masked_element_bytes(insn)?;
    let loc = reg_shadow_offset(insn.op0_register())?;
    let mut old = [0u8; 64];
    read_shadow(ctx, ShadowLoc::Reg(loc), &mut old);
    Some((loc, old, elem, super::guest::kreg_value(ctx, k.number())))
}

/// Prints one line per guest address (up to 256 addresses; beyond, one
/// per instruction form) that may lose derivatives.
fn warn_once_at(insn: &Instruction, what: &str) {
    static SEEN: [AtomicU64; 256] = [const { AtomicU64::new(0) }; 256];
    let ip = insn.ip();
    let start = (ip ^ ip >> 8) as usize;
    for k in 0..SEEN.len() {
        let slot = &SEEN[(start + k) % SEEN.len()];
        match slot.compare_exchange(0, ip, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break,
            Err(seen) if seen == ip => return,
            Err(_) if k + 1 == SEEN.len() => return warn_once(insn, what),
            Err(_) => {}
        }
    }
    let mut dis = crate::sys::StackBuf::<128>::new();
    crate::diag::disassemble(ip, &mut dis);
    let mut module = crate::sys::StackBuf::<256>::new();
    let offset = crate::diag::module_of(ip, &mut module).unwrap_or(0);
    crate::dgad_eprintln!(
        "{}: {} (at 0x{:x}, {}+0x{:x}: {})",
        crate::tool::tool().name(),
        what,
        ip,
        core::str::from_utf8(module.as_bytes()).unwrap_or("?"),
        offset,
        core::str::from_utf8(dis.as_bytes()).unwrap_or("?")
    );
    crate::stats::STATS
        .lost_derivatives
        .fetch_add(1, Ordering::Relaxed);
}

/// Prints one line per instruction form that loses derivatives.
fn warn_once(insn: &Instruction, what: &str) {
    static SEEN: [AtomicU64; 128] = [const { AtomicU64::new(0) }; 128];
    let c = insn.code() as usize;
    let bit = 1u64 << (c % 64);
    if SEEN[(c / 64) % 128].fetch_or(bit, Ordering::Relaxed) & bit == 0 {
        let mut dis = crate::sys::StackBuf::<128>::new();
        crate::diag::disassemble(insn.ip(), &mut dis);
        crate::dgad_eprintln!(
            "{}: {} (first at 0x{:x}: {})",
            crate::tool::tool().name(),
            what,
            insn.ip(),
            core::str::from_utf8(dis.as_bytes()).unwrap_or("?")
        );
        crate::stats::STATS
            .lost_derivatives
            .fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exponent added as an integer scales by 2^k; the factor is a
    /// partial, so it must be a double, even where the result is normal.
    #[test]
    fn exponent_factors_are_doubles() {
        let bits = |e: i32| 2f64.powi(e).to_bits();
        assert_eq!(
            exponent_factor(bits(-10), 20 << 52, false, Elem::F64),
            Some(2f64.powi(20))
        );
        assert_eq!(
            exponent_factor(bits(10), 20 << 52, true, Elem::F64),
            Some(2f64.powi(-20))
        );
        // 2^-1000 · 2^2000 = 2^1000 is normal; 2^2000 is no double.
        assert_eq!(
            exponent_factor(bits(-1000), 2000 << 52, false, Elem::F64),
            None
        );
        assert_eq!(
            exponent_factor(bits(1000), 2000 << 52, true, Elem::F64),
            None
        );
    }
}
