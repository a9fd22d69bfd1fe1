//! Dot mode's tangent cache (decision 46): within a block, the tangent of
//! guest `xmm0`–`xmm12` is kept in `xmm16`–`xmm28`, so that the tangent
//! code of one instruction takes its operands' tangents from registers
//! instead of loading what the instruction before stored.
//!
//! ```text
//! movsd  xmm1, [m]      vmovsd xmm17, [shadow(m)]          ; and the file
//! movapd xmm2, xmm1     vmovdqa64 xmm18, xmm17             ; and the file
//! mulsd  xmm2, xmm3     vptestmq k1, xmm18, |mask|  vptestmq k2, xmm19, |mask|
//!                       vmulsd xmm31{k1}{z}, xmm18, xmm3
//!                       vmulsd xmm29{k2}{z}, xmm19, xmm2
//!                       vaddsd xmm18, xmm31, xmm29         ; and the file
//! ```
//!
//! - **Write-through.** Every tangent the cache computes is also stored in
//!   the shadow register file, as the ordinary code does. The file is
//!   therefore current at every instruction boundary: exits, faults,
//!   signals, client requests and the runtime see what they always saw,
//!   and nothing is written back anywhere. What the cache saves is the
//!   loads (and the store-to-load round trip each of them waited for) and
//!   the saving and restoring of temporaries among the program's own
//!   registers: `xmm29`–`xmm31` and `k1`–`k3` are the cache's.
//! - **Validity.** A register's entry is loaded from the file at its
//!   first use in the block. An instruction the cache does not handle
//!   drops every entry before its ordinary code runs (that code may
//!   write the file); one that only touches general registers and memory
//!   keeps them; one that clears register shadows drops those.
//! - **Whose registers.** `xmm16`–`xmm31` and `k1`–`k3` exist only on CPUs
//!   with AVX-512, and only AVX-512 code (EVEX-encoded) names them; the
//!   cache is used only in blocks of legacy SSE code, where no instruction
//!   is VEX- or EVEX-encoded. Compilers never mix the two encodings in a
//!   function (code built for AVX encodes its SSE instructions with VEX),
//!   blocks end at calls and returns, and the ABI leaves these registers
//!   to the callee, so no program value lives in them while such a block
//!   runs: glibc's `strchr` and `memcpy` on this kind of CPU keep theirs
//!   in `ymm16`–`ymm31`, within their own EVEX blocks. A signal handler
//!   that interrupts AVX-512 code gets its registers back from the frame;
//!   the runtime saves and restores them with the rest. Hand-written
//!   assembly that keeps a value in `xmm16`–`xmm31` or `k1`–`k3` across
//!   legacy SSE instructions would see it change: `DGAD_TANGENT_CACHE=0`
//!   (`docs/limitations.md`).
//! - **Legacy SSE only**, also because VEX code would need the bits above
//!   128 of each tangent.

use super::{gs_operand, TranslateError, Translator, SPILLS_RAX};
use crate::emit::Gpr;
use crate::instrument::{DotArithmetic, MoveSide, Plan};
use crate::semantics::{Elem, FpOp};
use iced_x86::{Code, EncodingKind, Instruction, MemoryOperand, Register};
use shadowmem::RegFile;

/// Guest xmm registers whose tangents the cache holds: `0..CACHED`.
pub(super) const CACHED: u32 = 13;
/// The cache's temporaries.
const T0: Register = Register::XMM29;
const T1: Register = Register::XMM30;
const T2: Register = Register::XMM31;

/// The register holding guest xmm `n`'s tangent.
fn hi(n: u32) -> Register {
    Register::XMM16 + n
}

/// Whether `insn` is VEX- or EVEX-encoded or names a mask register: a
/// block with one does not use the cache.
pub(super) fn not_legacy_code(insn: &Instruction) -> bool {
    !matches!(insn.encoding(), EncodingKind::Legacy | EncodingKind::D3NOW)
        || (0..insn.op_count()).any(|i| insn.op_register(i).is_k())
}

/// The vector register whose shadow starts at file offset `off`, if `off`
/// is the start of a cached one.
fn cached_register_at(off: u32) -> Option<u32> {
    let base = RegFile::vec_offset(0, 0) as u32;
    let stride = RegFile::vec_offset(1, 0) as u32 - base;
    let rel = off.checked_sub(base)?;
    (rel % stride == 0 && rel / stride < CACHED).then_some(rel / stride)
}

/// Sets a `{k}{z}` mask on `i`.
fn masked(mut i: Instruction, k: Register) -> Instruction {
    i.set_op_mask(k);
    i.set_zeroing_masking(true);
    i
}

impl Translator<'_> {
    /// Runs `plan` through the cache. Returns `None` when the cache emitted
    /// the instruction's tangent code, else the plan for the ordinary
    /// emitters, after dropping the entries their code may make stale.
    pub(super) fn cached_plan(
        &mut self,
        insn: &Instruction,
        plan: Plan,
    ) -> Result<Option<Plan>, TranslateError> {
        match plan {
            // General registers and memory only.
            Plan::Nothing
            | Plan::CopyRegister { .. }
            | Plan::LoadShadow { .. }
            | Plan::StoreShadow { .. }
            | Plan::Push { .. }
            | Plan::Pop { .. }
            | Plan::ZeroShadow { .. }
            | Plan::ExtendRegister { .. }
            // Its inner plan comes through here again.
            | Plan::SaveFlags(_) => return Ok(Some(plan)),
            Plan::ClearRegisters(ref clears) => {
                let base = RegFile::vec_offset(0, 0) as u32;
                let stride = RegFile::vec_offset(1, 0) as u32 - base;
                for &(off, len) in clears {
                    for n in 0..CACHED {
                        let start = base + n * stride;
                        if off < start + 16 && off + u32::from(len) > start {
                            self.cached &= !(1 << n);
                        }
                    }
                }
                return Ok(Some(plan));
            }
            _ => {}
        }
        let handled = match plan {
            Plan::VectorMove {
                src,
                dst,
                len,
                zero,
            } if insn.encoding() == EncodingKind::Legacy => {
                self.cached_move(insn, src, dst, len, zero)?
            }
            Plan::DotArithmetic(a) if cacheable(&a) => {
                self.cached_arithmetic(insn, a)?;
                true
            }
            _ => false,
        };
        if handled {
            self.tangent_cache_used = true;
            return Ok(None);
        }
        self.cached = 0;
        Ok(Some(plan))
    }

    /// The file's bytes of guest xmm `n`'s shadow.
    fn file(&self, n: u32) -> MemoryOperand {
        gs_operand(self.layout.shadow_regs + RegFile::vec_offset(n as usize, 0) as u32)
    }

    /// Loads guest xmm `n`'s tangent (16 bytes) into its register unless it
    /// is there: two 8-byte loads, since the file was often written 8 bytes
    /// at a time just before (as [`Self::load_shadow`] does).
    fn ensure(&mut self, n: u32) {
        if self.cached & 1 << n != 0 {
            return;
        }
        let m = self.file(n);
        self.load16(hi(n), m);
        self.cached |= 1 << n;
    }

    /// `r` = the 16 bytes at `m`, as two 8-byte loads.
    fn load16(&mut self, r: Register, m: MemoryOperand) {
        let mut upper = m;
        upper.displacement += 8;
        upper.displ_size = upper.displ_size.max(1);
        self.asm(Instruction::with2(Code::EVEX_Vmovsd_xmm_k1z_m64, r, m));
        self.asm(Instruction::with3(
            Code::EVEX_Vmovhpd_xmm_xmm_m64,
            r,
            r,
            upper,
        ));
    }

    /// Stores guest xmm `n`'s cached tangent in the file (bytes 0–16).
    fn write_through(&mut self, n: u32) {
        let m = self.file(n);
        self.asm(Instruction::with2(
            Code::EVEX_Vmovdqu64_xmmm128_k1z_xmm,
            m,
            hi(n),
        ));
    }

    /// [`Plan::VectorMove`] of a legacy SSE move through the cache, or
    /// false (nothing emitted) for a shape it does not take.
    fn cached_move(
        &mut self,
        insn: &Instruction,
        src: MoveSide,
        dst: MoveSide,
        len: u8,
        zero: u8,
    ) -> Result<bool, TranslateError> {
        use Code::*;
        let l = *self.layout;
        match (src, dst) {
            (MoveSide::Register(s), MoveSide::Register(d)) => {
                let (Some(s), Some(d)) = (cached_register_at(s), cached_register_at(d)) else {
                    return Ok(false);
                };
                match (len, zero) {
                    (16, 0) => {
                        self.ensure(s);
                        self.asm(Instruction::with2(
                            EVEX_Vmovdqa64_xmm_k1z_xmmm128,
                            hi(d),
                            hi(s),
                        ));
                    }
                    (8 | 4, 0) => {
                        self.ensure(s);
                        self.ensure(d);
                        let code = if len == 8 {
                            EVEX_Vmovsd_xmm_k1z_xmm_xmm
                        } else {
                            EVEX_Vmovss_xmm_k1z_xmm_xmm
                        };
                        self.asm(Instruction::with3(code, hi(d), hi(d), hi(s)));
                    }
                    _ => return Ok(false),
                }
                self.cached |= 1 << d;
                self.write_through(d);
            }
            (MoveSide::Memory, MoveSide::Register(d)) => {
                let Some(d) = cached_register_at(d) else {
                    return Ok(false);
                };
                if !matches!(len, 4 | 8 | 16) || u32::from(len) + u32::from(zero) != 16 {
                    return Ok(false);
                }
                self.spilled(insn, SPILLS_RAX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                self.shadow_address_in_rax(insn)?;
                let at = MemoryOperand::with_base(Register::RAX);
                match len {
                    16 => self.load16(hi(d), at),
                    8 => self.asm(Instruction::with2(EVEX_Vmovsd_xmm_k1z_m64, hi(d), at)),
                    _ => self.asm(Instruction::with2(EVEX_Vmovss_xmm_k1z_m32, hi(d), at)),
                }
                self.e.load_gs(Gpr::RAX, l.spill_rax);
                self.cached |= 1 << d;
                self.write_through(d);
            }
            (MoveSide::Register(s), MoveSide::Memory) => {
                let Some(s) = cached_register_at(s) else {
                    return Ok(false);
                };
                let code = match len {
                    16 => EVEX_Vmovdqu64_xmmm128_k1z_xmm,
                    8 => EVEX_Vmovsd_m64_k1_xmm,
                    4 => EVEX_Vmovss_m32_k1_xmm,
                    _ => return Ok(false),
                };
                self.ensure(s);
                self.spilled(insn, SPILLS_RAX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                self.shadow_address_in_rax(insn)?;
                self.asm(Instruction::with2(
                    code,
                    MemoryOperand::with_base(Register::RAX),
                    hi(s),
                ));
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// [`Plan::DotArithmetic`] of a legacy SSE `add`, `sub`, `mul` or
    /// `div` through the cache: the same tangents as
    /// [`Self::dot_arithmetic`] (a term whose tangent is ±0 is left out,
    /// `ptest` against the sign-less mask there, `vptestm` here), with the
    /// rare path of `add` and `sub` (exactly one passive operand in some
    /// lane) being that method's whole code, out of line.
    fn cached_arithmetic(
        &mut self,
        insn: &Instruction,
        a: DotArithmetic,
    ) -> Result<(), TranslateError> {
        use Code::*;
        let l = *self.layout;
        let double = a.elem == Elem::F64;
        let d = a.dst.number() as u32;
        let pick = |pd: Code, sd: Code, ps: Code, ss: Code| match (double, a.scalar) {
            (true, false) => pd,
            (true, true) => sd,
            (false, false) => ps,
            (false, true) => ss,
        };
        let ptestm = if double {
            EVEX_Vptestmq_kr_k1_xmm_xmmm128b64
        } else {
            EVEX_Vptestmd_kr_k1_xmm_xmmm128b32
        };
        let mask = gs_operand(l.abs_masks + if double { 0 } else { 16 });
        self.ensure(d);
        // b's value and tangent.
        let (b, db) = match a.src {
            Some(r) => {
                let n = r.number() as u32;
                self.ensure(n);
                (Register::XMM0 + n, hi(n))
            }
            None => {
                // The value first: the only load that can fault, before
                // any register of the cache changes.
                self.spilled(insn, SPILLS_RAX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                self.lea_of_operand(Register::RAX, insn);
                let at = MemoryOperand::with_base(Register::RAX);
                let load = pick(
                    EVEX_Vmovupd_xmm_k1z_xmmm128,
                    EVEX_Vmovsd_xmm_k1z_m64,
                    EVEX_Vmovups_xmm_k1z_xmmm128,
                    EVEX_Vmovss_xmm_k1z_m32,
                );
                self.asm(Instruction::with2(load, T0, at));
                self.e.shadow_address_of_rax(l.shadow_mask);
                match (a.scalar, double) {
                    (false, _) => self.load16(T1, at),
                    (true, true) => self.asm(Instruction::with2(EVEX_Vmovsd_xmm_k1z_m64, T1, at)),
                    (true, false) => self.asm(Instruction::with2(EVEX_Vmovss_xmm_k1z_m32, T1, at)),
                }
                self.e.load_gs(Gpr::RAX, l.spill_rax);
                (T0, T1)
            }
        };
        let av = Register::XMM0 + d;
        let op3 = |code: Code, x: Register, y: Register, z: Register| {
            Instruction::with3(code, x, y, z).expect("EVEX arithmetic on registers encodes")
        };
        let mut rare = None;
        match a.op {
            FpOp::Add | FpOp::Sub => {
                // k3 = lanes with exactly one passive operand (in a scalar
                // operation, lane 0 only: shifted to the top, alone).
                self.asm(Instruction::with3(ptestm, Register::K1, hi(d), mask));
                self.asm(Instruction::with3(ptestm, Register::K2, db, mask));
                self.asm(Instruction::with3(
                    VEX_Kxorw_kr_kr_kr,
                    Register::K3,
                    Register::K1,
                    Register::K2,
                ));
                if a.scalar {
                    self.asm(Instruction::with3(
                        VEX_Kshiftlw_kr_kr_imm8,
                        Register::K3,
                        Register::K3,
                        15u32,
                    ));
                }
                self.asm(Instruction::with2(
                    VEX_Kortestw_kr_kr,
                    Register::K3,
                    Register::K3,
                ));
                rare = Some(self.e.jcc_rel32_placeholder(0x5)); // jnz
                let code = match a.op {
                    FpOp::Add => pick(
                        EVEX_Vaddpd_xmm_k1z_xmm_xmmm128b64,
                        EVEX_Vaddsd_xmm_k1z_xmm_xmmm64_er,
                        EVEX_Vaddps_xmm_k1z_xmm_xmmm128b32,
                        EVEX_Vaddss_xmm_k1z_xmm_xmmm32_er,
                    ),
                    _ => pick(
                        EVEX_Vsubpd_xmm_k1z_xmm_xmmm128b64,
                        EVEX_Vsubsd_xmm_k1z_xmm_xmmm64_er,
                        EVEX_Vsubps_xmm_k1z_xmm_xmmm128b32,
                        EVEX_Vsubss_xmm_k1z_xmm_xmmm32_er,
                    ),
                };
                self.asm(Ok(op3(code, hi(d), hi(d), db)));
            }
            FpOp::Mul => {
                let mul = pick(
                    EVEX_Vmulpd_xmm_k1z_xmm_xmmm128b64,
                    EVEX_Vmulsd_xmm_k1z_xmm_xmmm64_er,
                    EVEX_Vmulps_xmm_k1z_xmm_xmmm128b32,
                    EVEX_Vmulss_xmm_k1z_xmm_xmmm32_er,
                );
                let add = pick(
                    EVEX_Vaddpd_xmm_k1z_xmm_xmmm128b64,
                    EVEX_Vaddsd_xmm_k1z_xmm_xmmm64_er,
                    EVEX_Vaddps_xmm_k1z_xmm_xmmm128b32,
                    EVEX_Vaddss_xmm_k1z_xmm_xmmm32_er,
                );
                self.asm(Instruction::with3(ptestm, Register::K1, hi(d), mask));
                self.asm(Instruction::with3(ptestm, Register::K2, db, mask));
                // T2 = dA·b where dA ≠ 0 (a scalar form keeps dA's upper
                // lanes, the destination's as the instruction leaves them).
                self.asm(Ok(masked(op3(mul, T2, hi(d), b), Register::K1)));
                // dB·a where dB ≠ 0: in place over a memory operand's
                // tangent (T1; T0 holds its value), else in T0.
                let t = if a.src.is_none() { T1 } else { T0 };
                self.asm(Ok(masked(op3(mul, t, db, av), Register::K2)));
                self.asm(Ok(op3(add, hi(d), T2, t)));
            }
            FpOp::Div => {
                let (div, mul, sub) = (
                    pick(
                        EVEX_Vdivpd_xmm_k1z_xmm_xmmm128b64,
                        EVEX_Vdivsd_xmm_k1z_xmm_xmmm64_er,
                        EVEX_Vdivps_xmm_k1z_xmm_xmmm128b32,
                        EVEX_Vdivss_xmm_k1z_xmm_xmmm32_er,
                    ),
                    pick(
                        EVEX_Vmulpd_xmm_k1z_xmm_xmmm128b64,
                        EVEX_Vmulsd_xmm_k1z_xmm_xmmm64_er,
                        EVEX_Vmulps_xmm_k1z_xmm_xmmm128b32,
                        EVEX_Vmulss_xmm_k1z_xmm_xmmm32_er,
                    ),
                    pick(
                        EVEX_Vsubpd_xmm_k1z_xmm_xmmm128b64,
                        EVEX_Vsubsd_xmm_k1z_xmm_xmmm64_er,
                        EVEX_Vsubps_xmm_k1z_xmm_xmmm128b32,
                        EVEX_Vsubss_xmm_k1z_xmm_xmmm32_er,
                    ),
                );
                // T2 = (a/b)·dB where dB ≠ 0; numerator dA − T2 (dA's upper
                // lanes); divided by b where it is not ±0.
                self.asm(Instruction::with3(ptestm, Register::K2, db, mask));
                self.asm(Ok(op3(div, T2, av, b)));
                self.asm(Ok(masked(op3(mul, T2, T2, db), Register::K2)));
                self.asm(Ok(op3(sub, T2, hi(d), T2)));
                self.asm(Instruction::with3(ptestm, Register::K1, T2, mask));
                self.asm(Ok(masked(op3(div, hi(d), T2, b), Register::K1)));
            }
            _ => unreachable!("only add, sub, mul and div are cached"),
        }
        self.write_through(d);
        if let Some(rare) = rare {
            // The ordinary code, on the file (current: written through),
            // then the destination's new tangent into its register.
            let done = self.e.jmp_rel32_placeholder();
            let here = self.e.offset();
            self.e.bind_rel32(rare, here);
            self.dot_arithmetic(insn, a)?;
            let m = self.file(d);
            self.load16(hi(d), m);
            let here = self.e.offset();
            self.e.bind_rel32(done, here);
        }
        Ok(())
    }
}

/// Whether the cache computes this operation's tangent.
fn cacheable(a: &DotArithmetic) -> bool {
    let small = |r: Register| (r.number() as u32) < CACHED;
    !a.vex
        && a.width == 16
        && matches!(a.op, FpOp::Add | FpOp::Sub | FpOp::Mul | FpOp::Div)
        && a.dst == a.src1
        && small(a.dst)
        && a.src.is_none_or(small)
}
