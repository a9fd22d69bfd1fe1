//! Reading the guest's state while the runtime runs (registers from the
//! context and its `xsave` image, memory directly), and locating the shadow
//! of an operand.

use crate::context::ThreadCtx;
use iced_x86::{Instruction, OpKind, Register};
use shadowmem::RegFile;
use std::sync::OnceLock;

/// Offsets of the `xsave` components the runtime reads (CPUID leaf 0xD).
struct XsaveLayout {
    avx: usize,
    opmask: usize,
    zmm_hi256: usize,
    hi16_zmm: usize,
}

fn xsave_layout() -> &'static XsaveLayout {
    static L: OnceLock<XsaveLayout> = OnceLock::new();
    L.get_or_init(|| {
        let off = |c: u32| core::arch::x86_64::__cpuid_count(0xd, c).ebx as usize;
        XsaveLayout {
            avx: off(2),
            opmask: off(5),
            zmm_hi256: off(6),
            hi16_zmm: off(7),
        }
    })
}

/// Whether the `xsave` image holds component `c` (else it is in its
/// initial, all-zero state).
fn has_component(ctx: &ThreadCtx, c: u32) -> bool {
    has_component_bits(&ctx.xsave.0, c)
}

/// Writes the x87 and SSE components into the image where the header marks
/// them initial (an `xsaveopt` image leaves their bytes as they were), so
/// that a copy of the image shows their values to whoever reads the legacy
/// area without looking at the header, as a guest signal handler reading
/// `uc_mcontext.fpregs` does.
pub fn materialize_legacy(ctx: &mut ThreadCtx) {
    let x = &mut ctx.xsave.0;
    if !has_component_bits(x, 0) {
        x[..24].fill(0);
        x[0..2].copy_from_slice(&mathwrap::f80::DEFAULT_X87_CW.to_le_bytes());
        x[32..160].fill(0);
        x[512] |= 1;
    }
    if !has_component_bits(x, 1) {
        x[160..416].fill(0);
        x[512] |= 2;
    }
}

fn has_component_bits(image: &[u8], c: u32) -> bool {
    u64::from_le_bytes(image[512..520].try_into().unwrap()) & (1 << c) != 0
}

/// The 64 bytes of zmm register `n` (xmm/ymm are its low 16/32 bytes).
pub fn vec_value(ctx: &ThreadCtx, n: usize) -> [u8; 64] {
    let l = xsave_layout();
    let x = &ctx.xsave.0;
    let mut v = [0u8; 64];
    if n < 16 {
        if has_component(ctx, 1) {
            v[..16].copy_from_slice(&x[160 + 16 * n..][..16]);
        }
        if has_component(ctx, 2) {
            v[16..32].copy_from_slice(&x[l.avx + 16 * n..][..16]);
        }
        if has_component(ctx, 6) {
            v[32..].copy_from_slice(&x[l.zmm_hi256 + 32 * n..][..32]);
        }
    } else if has_component(ctx, 7) {
        v.copy_from_slice(&x[l.hi16_zmm + 64 * (n - 16)..][..64]);
    }
    v
}

/// The value of mask register k`n`.
pub fn kreg_value(ctx: &ThreadCtx, n: usize) -> u64 {
    if !has_component(ctx, 5) {
        return 0;
    }
    let o = xsave_layout().opmask + 8 * n;
    u64::from_le_bytes(ctx.xsave.0[o..o + 8].try_into().unwrap())
}

/// All eight mask registers.
pub fn kregs(ctx: &ThreadCtx) -> [u64; 8] {
    core::array::from_fn(|i| kreg_value(ctx, i))
}

/// x87 TOP (from the status word; 0 in the initial state).
pub fn x87_top(ctx: &ThreadCtx) -> usize {
    if !has_component(ctx, 0) {
        return 0;
    }
    let fsw = u16::from_le_bytes([ctx.xsave.0[2], ctx.xsave.0[3]]);
    ((fsw >> 11) & 7) as usize
}

/// The 10 bytes of x87 register `i` of the image (physical order as the
/// image keeps it, `st(i)` relative to TOP): zero in the initial state.
pub fn st_bytes(ctx: &ThreadCtx, i: usize) -> [u8; 10] {
    let mut b = [0u8; 10];
    if has_component(ctx, 0) {
        b.copy_from_slice(&ctx.xsave.0[32 + 16 * i..][..10]);
    }
    b
}

/// The 80-bit value of x87 `st(i)` as an f64.
pub fn st_value(ctx: &ThreadCtx, i: usize) -> f64 {
    f80_to_f64(&st_bytes(ctx, i))
}

/// A marked variable's first 10 bytes `b` read as a double, a float and
/// an x87 value (in software, not with the x87 unit: requests may be
/// answered while the program's x87 registers are live), for telling in
/// which format it holds the `value` its mark carries. `None` for a mark
/// without its value: 0, as Derivgrind's Fortran interface
/// `dg_inputf(c_loc(x))` sends, not knowing x's type, while the variable's
/// first 8 bytes are not all zero (compared with 0, the bytes after a
/// float read as an x87 exponent would decide, and a double whose low word
/// is zero would read as a float 0).
pub fn mark_readings(b: &[u8; 10], value: f64) -> Option<(f64, f64, f64)> {
    if value == 0.0 && b[..8] != [0; 8] {
        return None;
    }
    Some((
        f64::from_le_bytes(b[..8].try_into().unwrap()),
        f64::from(f32::from_le_bytes(b[..4].try_into().unwrap())),
        f80_to_f64(b),
    ))
}

/// Converts an x87 extended-precision value to the nearest f64.
pub fn f80_to_f64(b: &[u8]) -> f64 {
    let sig = u64::from_le_bytes(b[..8].try_into().unwrap());
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7fff);
    if exp == 0x7fff {
        return if sig << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if sig == 0 {
        return sign * 0.0;
    }
    // value = sig · 2^(exp − 16383 − 63) (a denormal's exponent is 1),
    // scaled in steps that stay finite, so that results in f64's subnormal
    // range come out as such. Far outside f64's range the steps would only
    // reach ∞ or 0 (sig < 2^64): those come at once (a double's bytes read
    // as an x87 value, as `mark_readings` does, mostly land there).
    let mut e = exp.max(1) - 16383 - 63;
    if e > 1100 {
        return sign * f64::INFINITY;
    }
    if e < -1200 {
        return sign * 0.0;
    }
    let mut v = sig as f64;
    while e > 1000 {
        v *= pow2(1000);
        e -= 1000;
    }
    while e < -1000 {
        v *= pow2(-1000);
        e += 1000;
    }
    sign * v * pow2(e)
}

/// 2^k for k in −1022..=1023, exactly (from its bits, without `powi`'s
/// loop of multiplications).
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Full 64-bit register number (0–15) of a general-purpose register of any
/// width, and the byte offset of the register within it (1 for ah…bh).
pub fn gpr_slot(r: Register) -> Option<(usize, usize)> {
    if !r.is_gpr() {
        return None;
    }
    let high8 = matches!(r, Register::AH | Register::CH | Register::DH | Register::BH);
    let full = r.full_register();
    let n = full.number();
    Some((n, usize::from(high8)))
}

/// The value of a general register (the full 64-bit container).
pub fn gpr_value(ctx: &ThreadCtx, r: Register) -> u64 {
    match gpr_slot(r) {
        Some((n, _)) => ctx.regs.gpr[n],
        None => 0,
    }
}

/// The guest's `%fs` base (its TLS pointer): the live one, or for a
/// statically linked guest the one the runtime's entry put aside (the
/// runtime runs on its own then, `static_exec`).
pub fn guest_fs_base(ctx: &ThreadCtx) -> u64 {
    if crate::static_exec::active() {
        ctx.guest_fs
    } else {
        fs_base()
    }
}

/// The thread's live `%fs` base.
fn fs_base() -> u64 {
    let v: u64;
    // SAFETY: rdfsbase reads the fs base; the kernel enables FSGSBASE
    // instructions for user space on this CPU (checked at start-up).
    unsafe {
        core::arch::asm!("rdfsbase {}", out(reg) v, options(nomem, nostack, preserves_flags))
    };
    v
}

/// Effective address of memory operand of `insn` (element `elem` for VSIB:
/// the address of the gather's or scatter's `elem`-th element).
pub fn effective_address(ctx: &ThreadCtx, insn: &Instruction, elem: usize) -> Option<u64> {
    let fs = guest_fs_base(ctx);
    let operand = (0..insn.op_count()).find(|&i| insn.op_kind(i) == OpKind::Memory)?;
    insn.virtual_address(operand, elem, |reg, e, size| {
        Some(match reg {
            Register::FS => fs,
            Register::ES | Register::CS | Register::SS | Register::DS => 0,
            Register::GS => return None,
            r if r.is_gpr() => {
                let (n, hi) = gpr_slot(r)?;
                let v = ctx.regs.gpr[n] >> (8 * hi);
                match r.size() {
                    1 => v & 0xff,
                    2 => v & 0xffff,
                    4 => v & 0xffff_ffff,
                    _ => v,
                }
            }
            Register::RIP => insn.next_ip(),
            // A VSIB index: lane `e` of `size` (4 or 8) bytes, raw; iced
            // sign-extends dword lanes.
            r if r.is_xmm() || r.is_ymm() || r.is_zmm() => {
                let v = vec_value(ctx, r.number());
                let lane = v.get(e * size..e * size + size)?;
                let mut b = [0u8; 8];
                b[..size].copy_from_slice(lane);
                u64::from_le_bytes(b)
            }
            _ => return None,
        })
    })
}

/// Where the shadow of an operand is.
#[derive(Clone, Copy, Debug)]
pub enum ShadowLoc {
    /// Bytes of the shadow register file, from this offset.
    Reg(usize),
    /// Shadow memory at this address.
    Mem(u64),
}

/// The shadow register-file bytes of a register operand.
pub fn reg_shadow_offset(r: Register) -> Option<usize> {
    if let Some((n, hi)) = gpr_slot(r) {
        return Some(RegFile::gpr_offset(n, hi));
    }
    if r.is_xmm() || r.is_ymm() || r.is_zmm() {
        return Some(RegFile::vec_offset(r.number(), 0));
    }
    if r.is_k() {
        return Some(core::mem::offset_of!(RegFile, k) + 8 * r.number());
    }
    None
}

/// The shadow location of operand `op`, if it is a register or memory.
pub fn operand_shadow(ctx: &ThreadCtx, insn: &Instruction, op: u32) -> Option<ShadowLoc> {
    match insn.op_kind(op) {
        OpKind::Register => reg_shadow_offset(insn.op_register(op)).map(ShadowLoc::Reg),
        OpKind::Memory => {
            let ea = effective_address(ctx, insn, 0)?;
            shadowmem::is_app(ea).then(|| ShadowLoc::Mem(shadowmem::shadow_of(ea)))
        }
        _ => None,
    }
}

/// Reads `buf.len()` shadow bytes.
pub fn read_shadow(ctx: &ThreadCtx, loc: ShadowLoc, buf: &mut [u8]) {
    match loc {
        ShadowLoc::Reg(off) => {
            // SAFETY: the register file is plain bytes; offsets come from
            // `reg_shadow_offset` and lengths are at most a register's.
            let rf = unsafe {
                core::slice::from_raw_parts(
                    &ctx.shadow as *const RegFile as *const u8,
                    core::mem::size_of::<RegFile>(),
                )
            };
            buf.copy_from_slice(&rf[off..off + buf.len()]);
        }
        // SAFETY: shadow memory of application addresses is mapped
        // read-write for the whole process (reserved at start-up).
        ShadowLoc::Mem(a) => unsafe {
            core::ptr::copy_nonoverlapping(a as *const u8, buf.as_mut_ptr(), buf.len())
        },
    }
}

/// Writes shadow bytes.
pub fn write_shadow(ctx: &mut ThreadCtx, loc: ShadowLoc, buf: &[u8]) {
    match loc {
        ShadowLoc::Reg(off) => {
            // SAFETY: as in `read_shadow`.
            let rf = unsafe {
                core::slice::from_raw_parts_mut(
                    &mut ctx.shadow as *mut RegFile as *mut u8,
                    core::mem::size_of::<RegFile>(),
                )
            };
            rf[off..off + buf.len()].copy_from_slice(buf);
        }
        // SAFETY: as in `read_shadow`.
        ShadowLoc::Mem(a) => unsafe {
            core::ptr::copy_nonoverlapping(buf.as_ptr(), a as *mut u8, buf.len())
        },
    }
}

/// The index stored at a shadow location (first granule).
pub fn read_index(ctx: &ThreadCtx, loc: ShadowLoc) -> u32 {
    let mut b = [0u8; 4];
    read_shadow(ctx, loc, &mut b);
    u32::from_le_bytes(b)
}

pub use crate::guest_mem::{read_mem, read_u64};

#[cfg(test)]
mod tests {
    use super::f80_to_f64;

    /// The conversion as it was written first, with `powi` at every step:
    /// the reference the faster one must equal bit for bit.
    fn reference(b: &[u8]) -> f64 {
        let sig = u64::from_le_bytes(b[..8].try_into().unwrap());
        let se = u16::from_le_bytes([b[8], b[9]]);
        let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
        let exp = i32::from(se & 0x7fff);
        if exp == 0x7fff {
            return if sig << 1 == 0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        if sig == 0 {
            return sign * 0.0;
        }
        let mut v = sig as f64;
        let mut e = exp.max(1) - 16383 - 63;
        while e > 1000 {
            v *= 2f64.powi(1000);
            e -= 1000;
        }
        while e < -1000 {
            v *= 2f64.powi(-1000);
            e += 1000;
        }
        sign * v * 2f64.powi(e)
    }

    #[test]
    fn every_exponent_converts_as_the_stepwise_reference() {
        // Significands: the smallest, a power of two, an x87 normal one
        // with low bits that round, all ones, and one of each sign.
        let sigs = [
            1u64,
            1 << 40,
            0x8000_0000_0000_0000,
            0xc000_0000_0000_0401,
            0xffff_ffff_ffff_ffff,
            0x8000_0000_0000_0bff,
        ];
        for exp in 0..0x8000u16 {
            for &sig in &sigs {
                for sign in [0u16, 0x8000] {
                    let mut b = [0u8; 10];
                    b[..8].copy_from_slice(&sig.to_le_bytes());
                    b[8..].copy_from_slice(&(exp | sign).to_le_bytes());
                    let (got, want) = (f80_to_f64(&b), reference(&b));
                    assert!(
                        got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                        "exponent {exp:#x}, significand {sig:#x}, sign {sign:#x}: {got:e} against {want:e}"
                    );
                }
            }
        }
        // 1.0 and -2.5 as an x87 value.
        let one = [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f];
        assert_eq!(f80_to_f64(&one), 1.0);
        let m = [0, 0, 0, 0, 0, 0, 0, 0xa0, 0x00, 0xc0];
        assert_eq!(f80_to_f64(&m), -2.5);
    }
}
