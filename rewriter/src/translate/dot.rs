//! Dot mode's inline arithmetic ([`Plan::DotArithmetic`]): the tangent of
//! an SSE/AVX `add`, `sub`, `mul` or `div` computed by vector code on the
//! shadows before the instruction runs, with registers the instruction
//! does not name as temporaries.
//!
//! ```text
//! add  dot = dA + dB          mul  dot = dA·b + a·dB   (each term only
//! sub  dot = dA − dB          div  dot = (dA − (a/b)·dB) / b   where its
//! min  dot = a < b ? dA : dB  max  dot = a > b ? dA : dB   tangent is nonzero)
//! fma  dot = ±(dA·b + a·dB) ± dC   sqrt  dot = dB / (2·√b)  (b: the operand)
//! ```
//! A term whose tangent is zero is left out rather than multiplied (so
//! `∞ · 0` makes no NaN tangent out of passive data). An `add` or `sub`
//! with exactly one passive operand in some lane whose magnitude lies
//! where the shifters of rounding tricks lie (2^42 to 2^54 for doubles,
//! 2^13 to 2^25 for floats) takes the runtime path, where the shared
//! rules recognise the trick.
//!
//! The temporaries are saved in the tool area (dot mode's per-thread
//! state starts with room for seven 64-byte registers) and restored after.
//! Legacy SSE code computes with legacy SSE (which leaves bits above 128
//! alone: 16 bytes saved); VEX code with VEX, which zeroes bits above the
//! vector length, so the whole register is saved (a zmm when the CPU has
//! AVX-512 state, [`crate::TranslateOptions::zmm_state`]). The only
//! instruction that can fault, the load of a memory operand's value,
//! comes before any temporary changes. The tangent arithmetic runs under
//! the program's MXCSR (its sticky flags may gain bits; see
//! `docs/limitations.md`).
#![allow(clippy::too_many_lines)]

use super::{gs_operand, TranslateError, Translator, SPILLS_RAX};
use crate::emit::Gpr;
use crate::instrument::DotArithmetic;
use crate::semantics::{Elem, FpOp};
use iced_x86::{Code, Instruction, InstructionInfoFactory, MemoryOperand, Register};
use shadowmem::RegFile;

/// Bytes of tool area per saved temporary.
const TEMP_SLOT: u32 = 64;
/// Temporaries the arithmetic needs.
const TEMPS: usize = 7;

/// The vector operations the tangent code uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum V {
    Load,
    Store,
    Copy,
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
    And,
    /// `!dst & src`.
    AndNot,
    Or,
    Xor,
    Max,
    CmpLe,
    CmpLt,
    /// One element from memory into every lane.
    Broadcast,
    CmpEq,
    CmpNeq,
    MoveMask,
    /// VEX scalar merge: `vmovsd x, x, y` (low lane of y, rest of x).
    Merge,
}

/// The encoding family of the tangent code.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Form {
    vex: bool,
    ymm: bool,
    scalar: bool,
    double: bool,
}

impl Form {
    fn code(self, v: V) -> Code {
        use Code::*;
        let Form {
            vex,
            ymm,
            scalar,
            double,
        } = self;
        // Bitwise operations and masks work on whole registers.
        let packed_only = matches!(
            v,
            V::And | V::AndNot | V::Or | V::Xor | V::MoveMask | V::Copy | V::Broadcast
        );
        let scalar = scalar && !packed_only;
        macro_rules! pick {
            ($lpd:ident, $lsd:ident, $vpd:ident, $vpdy:ident, $vsd:ident,
             $lps:ident, $lss:ident, $vps:ident, $vpsy:ident, $vss:ident) => {
                match (double, vex, ymm, scalar) {
                    (true, false, _, false) => $lpd,
                    (true, false, _, true) => $lsd,
                    (true, true, false, false) => $vpd,
                    (true, true, true, false) => $vpdy,
                    (true, true, _, true) => $vsd,
                    (false, false, _, false) => $lps,
                    (false, false, _, true) => $lss,
                    (false, true, false, false) => $vps,
                    (false, true, true, false) => $vpsy,
                    (false, true, _, true) => $vss,
                }
            };
        }
        match v {
            V::Load => pick!(
                Movupd_xmm_xmmm128,
                Movsd_xmm_xmmm64,
                VEX_Vmovupd_xmm_xmmm128,
                VEX_Vmovupd_ymm_ymmm256,
                VEX_Vmovsd_xmm_m64,
                Movups_xmm_xmmm128,
                Movss_xmm_xmmm32,
                VEX_Vmovups_xmm_xmmm128,
                VEX_Vmovups_ymm_ymmm256,
                VEX_Vmovss_xmm_m32
            ),
            V::Store => pick!(
                Movupd_xmmm128_xmm,
                Movsd_xmmm64_xmm,
                VEX_Vmovupd_xmmm128_xmm,
                VEX_Vmovupd_ymmm256_ymm,
                VEX_Vmovsd_m64_xmm,
                Movups_xmmm128_xmm,
                Movss_xmmm32_xmm,
                VEX_Vmovups_xmmm128_xmm,
                VEX_Vmovups_ymmm256_ymm,
                VEX_Vmovss_m32_xmm
            ),
            V::Copy => pick!(
                Movapd_xmm_xmmm128,
                Movapd_xmm_xmmm128,
                VEX_Vmovapd_xmm_xmmm128,
                VEX_Vmovapd_ymm_ymmm256,
                VEX_Vmovapd_xmm_xmmm128,
                Movaps_xmm_xmmm128,
                Movaps_xmm_xmmm128,
                VEX_Vmovaps_xmm_xmmm128,
                VEX_Vmovaps_ymm_ymmm256,
                VEX_Vmovaps_xmm_xmmm128
            ),
            V::Add => pick!(
                Addpd_xmm_xmmm128,
                Addsd_xmm_xmmm64,
                VEX_Vaddpd_xmm_xmm_xmmm128,
                VEX_Vaddpd_ymm_ymm_ymmm256,
                VEX_Vaddsd_xmm_xmm_xmmm64,
                Addps_xmm_xmmm128,
                Addss_xmm_xmmm32,
                VEX_Vaddps_xmm_xmm_xmmm128,
                VEX_Vaddps_ymm_ymm_ymmm256,
                VEX_Vaddss_xmm_xmm_xmmm32
            ),
            V::Sub => pick!(
                Subpd_xmm_xmmm128,
                Subsd_xmm_xmmm64,
                VEX_Vsubpd_xmm_xmm_xmmm128,
                VEX_Vsubpd_ymm_ymm_ymmm256,
                VEX_Vsubsd_xmm_xmm_xmmm64,
                Subps_xmm_xmmm128,
                Subss_xmm_xmmm32,
                VEX_Vsubps_xmm_xmm_xmmm128,
                VEX_Vsubps_ymm_ymm_ymmm256,
                VEX_Vsubss_xmm_xmm_xmmm32
            ),
            V::Mul => pick!(
                Mulpd_xmm_xmmm128,
                Mulsd_xmm_xmmm64,
                VEX_Vmulpd_xmm_xmm_xmmm128,
                VEX_Vmulpd_ymm_ymm_ymmm256,
                VEX_Vmulsd_xmm_xmm_xmmm64,
                Mulps_xmm_xmmm128,
                Mulss_xmm_xmmm32,
                VEX_Vmulps_xmm_xmm_xmmm128,
                VEX_Vmulps_ymm_ymm_ymmm256,
                VEX_Vmulss_xmm_xmm_xmmm32
            ),
            V::Div => pick!(
                Divpd_xmm_xmmm128,
                Divsd_xmm_xmmm64,
                VEX_Vdivpd_xmm_xmm_xmmm128,
                VEX_Vdivpd_ymm_ymm_ymmm256,
                VEX_Vdivsd_xmm_xmm_xmmm64,
                Divps_xmm_xmmm128,
                Divss_xmm_xmmm32,
                VEX_Vdivps_xmm_xmm_xmmm128,
                VEX_Vdivps_ymm_ymm_ymmm256,
                VEX_Vdivss_xmm_xmm_xmmm32
            ),
            V::Sqrt => pick!(
                Sqrtpd_xmm_xmmm128,
                Sqrtsd_xmm_xmmm64,
                VEX_Vsqrtpd_xmm_xmmm128,
                VEX_Vsqrtpd_ymm_ymmm256,
                VEX_Vsqrtsd_xmm_xmm_xmmm64,
                Sqrtps_xmm_xmmm128,
                Sqrtss_xmm_xmmm32,
                VEX_Vsqrtps_xmm_xmmm128,
                VEX_Vsqrtps_ymm_ymmm256,
                VEX_Vsqrtss_xmm_xmm_xmmm32
            ),
            V::And => pick!(
                Andpd_xmm_xmmm128,
                Andpd_xmm_xmmm128,
                VEX_Vandpd_xmm_xmm_xmmm128,
                VEX_Vandpd_ymm_ymm_ymmm256,
                VEX_Vandpd_xmm_xmm_xmmm128,
                Andps_xmm_xmmm128,
                Andps_xmm_xmmm128,
                VEX_Vandps_xmm_xmm_xmmm128,
                VEX_Vandps_ymm_ymm_ymmm256,
                VEX_Vandps_xmm_xmm_xmmm128
            ),
            V::AndNot => pick!(
                Andnpd_xmm_xmmm128,
                Andnpd_xmm_xmmm128,
                VEX_Vandnpd_xmm_xmm_xmmm128,
                VEX_Vandnpd_ymm_ymm_ymmm256,
                VEX_Vandnpd_xmm_xmm_xmmm128,
                Andnps_xmm_xmmm128,
                Andnps_xmm_xmmm128,
                VEX_Vandnps_xmm_xmm_xmmm128,
                VEX_Vandnps_ymm_ymm_ymmm256,
                VEX_Vandnps_xmm_xmm_xmmm128
            ),
            V::Or => pick!(
                Orpd_xmm_xmmm128,
                Orpd_xmm_xmmm128,
                VEX_Vorpd_xmm_xmm_xmmm128,
                VEX_Vorpd_ymm_ymm_ymmm256,
                VEX_Vorpd_xmm_xmm_xmmm128,
                Orps_xmm_xmmm128,
                Orps_xmm_xmmm128,
                VEX_Vorps_xmm_xmm_xmmm128,
                VEX_Vorps_ymm_ymm_ymmm256,
                VEX_Vorps_xmm_xmm_xmmm128
            ),
            V::Max => pick!(
                Maxpd_xmm_xmmm128,
                Maxsd_xmm_xmmm64,
                VEX_Vmaxpd_xmm_xmm_xmmm128,
                VEX_Vmaxpd_ymm_ymm_ymmm256,
                VEX_Vmaxsd_xmm_xmm_xmmm64,
                Maxps_xmm_xmmm128,
                Maxss_xmm_xmmm32,
                VEX_Vmaxps_xmm_xmm_xmmm128,
                VEX_Vmaxps_ymm_ymm_ymmm256,
                VEX_Vmaxss_xmm_xmm_xmmm32
            ),
            // Legacy float broadcasts load one float (the lanes above it
            // are never looked at: `movss` + the packed compares of the
            // scalar form), the others every lane.
            V::Broadcast => pick!(
                Movddup_xmm_xmmm64,
                Movddup_xmm_xmmm64,
                VEX_Vmovddup_xmm_xmmm64,
                VEX_Vbroadcastsd_ymm_m64,
                VEX_Vmovddup_xmm_xmmm64,
                Movss_xmm_xmmm32,
                Movss_xmm_xmmm32,
                VEX_Vbroadcastss_xmm_m32,
                VEX_Vbroadcastss_ymm_m32,
                VEX_Vbroadcastss_xmm_m32
            ),
            V::Xor => pick!(
                Xorpd_xmm_xmmm128,
                Xorpd_xmm_xmmm128,
                VEX_Vxorpd_xmm_xmm_xmmm128,
                VEX_Vxorpd_ymm_ymm_ymmm256,
                VEX_Vxorpd_xmm_xmm_xmmm128,
                Xorps_xmm_xmmm128,
                Xorps_xmm_xmmm128,
                VEX_Vxorps_xmm_xmm_xmmm128,
                VEX_Vxorps_ymm_ymm_ymmm256,
                VEX_Vxorps_xmm_xmm_xmmm128
            ),
            V::CmpEq | V::CmpNeq | V::CmpLe | V::CmpLt => pick!(
                Cmppd_xmm_xmmm128_imm8,
                Cmpsd_xmm_xmmm64_imm8,
                VEX_Vcmppd_xmm_xmm_xmmm128_imm8,
                VEX_Vcmppd_ymm_ymm_ymmm256_imm8,
                VEX_Vcmpsd_xmm_xmm_xmmm64_imm8,
                Cmpps_xmm_xmmm128_imm8,
                Cmpss_xmm_xmmm32_imm8,
                VEX_Vcmpps_xmm_xmm_xmmm128_imm8,
                VEX_Vcmpps_ymm_ymm_ymmm256_imm8,
                VEX_Vcmpss_xmm_xmm_xmmm32_imm8
            ),
            V::MoveMask => pick!(
                Movmskpd_r32_xmm,
                Movmskpd_r32_xmm,
                VEX_Vmovmskpd_r32_xmm,
                VEX_Vmovmskpd_r32_ymm,
                VEX_Vmovmskpd_r32_xmm,
                Movmskps_r32_xmm,
                Movmskps_r32_xmm,
                VEX_Vmovmskps_r32_xmm,
                VEX_Vmovmskps_r32_ymm,
                VEX_Vmovmskps_r32_xmm
            ),
            V::Merge => {
                if double {
                    VEX_Vmovsd_xmm_xmm_xmm
                } else {
                    VEX_Vmovss_xmm_xmm_xmm
                }
            }
        }
    }

    /// `ptest` in this form's encoding and width.
    fn ptest(self) -> Code {
        match (self.vex, self.ymm) {
            (false, _) => Code::Ptest_xmm_xmmm128,
            (true, false) => Code::VEX_Vptest_xmm_xmmm128,
            (true, true) => Code::VEX_Vptest_ymm_ymmm256,
        }
    }

    /// Temporary `n` (0–15) as this form's register.
    fn reg(self, n: u32) -> Register {
        if self.vex && self.ymm {
            Register::YMM0 + n
        } else {
            Register::XMM0 + n
        }
    }
}

/// [`TEMPS`] xmm registers `insn` does not name, those in `dead` (whose
/// values no later instruction reads) first.
pub(super) fn temporaries(insn: &Instruction, dead: u16) -> [u32; TEMPS] {
    temporaries_ranked(insn, [None, None], &[dead])
}

/// [`TEMPS`] xmm registers `insn` does not name: `fixed` first where
/// given (registers it does not name), then those of `ranks[0]`, then of
/// `ranks[1]`, …, then the rest.
fn temporaries_ranked(insn: &Instruction, fixed: [Option<u32>; 2], ranks: &[u16]) -> [u32; TEMPS] {
    let mut factory = InstructionInfoFactory::new();
    let used: Vec<u32> = factory
        .info(insn)
        .used_registers()
        .iter()
        .map(|u| u.register())
        .filter(|r| r.is_xmm() || r.is_ymm() || r.is_zmm())
        .map(|r| r.number() as u32)
        .collect();
    let mut out = [0; TEMPS];
    let taken_fixed = fixed.iter().flatten().fold(0u16, |m, &n| m | 1 << n);
    let mut taken = taken_fixed;
    let mut next = ranks
        .iter()
        .copied()
        .chain([u16::MAX])
        .flat_map(|rank| (0..16u32).filter(move |n| rank & 1 << n != 0));
    for (k, f) in fixed.iter().copied().chain([None; TEMPS - 2]).enumerate() {
        out[k] = match f {
            Some(n) => n,
            None => loop {
                match next.next() {
                    Some(n) if taken & 1 << n == 0 && !used.contains(&n) => break n,
                    Some(_) => {}
                    None => break 0,
                }
            },
        };
        taken |= 1 << out[k];
    }
    out
}

impl Translator<'_> {
    /// Emits one operation `dst op= src` of the tangent code.
    fn v(&mut self, f: Form, op: V, dst: Register, src: VSrc) {
        let code = f.code(op);
        let imm = match op {
            V::CmpEq => Some(0u32),
            V::CmpLt => Some(1u32),
            V::CmpLe => Some(2u32),
            V::CmpNeq => Some(4u32),
            _ => None,
        };
        let three = f.vex
            && !matches!(
                op,
                V::Load | V::Store | V::Copy | V::MoveMask | V::Broadcast
            )
            // Packed square roots have one source: `vsqrtpd y, x`.
            && (op != V::Sqrt || f.scalar);
        let i = match (src, three, imm) {
            (VSrc::R(r), false, None) => Instruction::with2(code, dst, r),
            (VSrc::R(r), true, None) => Instruction::with3(code, dst, dst, r),
            (VSrc::R(r), false, Some(k)) => Instruction::with3(code, dst, r, k),
            (VSrc::R(r), true, Some(k)) => Instruction::with4(code, dst, dst, r, k),
            (VSrc::M(m), false, None) if op == V::Store => Instruction::with2(code, m, dst),
            (VSrc::M(m), true, None) if op == V::Store => Instruction::with2(code, m, dst),
            (VSrc::M(m), _, None) if matches!(op, V::Load | V::Broadcast) => {
                Instruction::with2(code, dst, m)
            }
            (VSrc::M(m), false, None) => Instruction::with2(code, dst, m),
            (VSrc::M(m), true, None) => Instruction::with3(code, dst, dst, m),
            (VSrc::M(_), _, Some(_)) => unreachable!("comparisons take registers"),
        };
        self.asm(i);
    }

    /// Saves (`save`) or restores temporaries `slots` (of [`TEMPS`]),
    /// except those dead here.
    /// A block that holds registers (`held`) saves a temporary in the
    /// register's own slot, and not at all when it is held.
    fn dot_temps(&mut self, f: Form, temps: &[u32; TEMPS], slots: &[usize], save: bool) {
        use Code::*;
        let base = self.layout.tool_area;
        let (low, whole) = self.vectors_dead.get(self.index).copied().unwrap_or((0, 0));
        let hold = self.hold && !f.vex;
        let free = if f.vex { whole } else { low } | if hold { self.held } else { 0 };
        for &k in slots {
            let n = temps[k];
            if free & 1 << n != 0 {
                continue;
            }
            let slot = if hold {
                self.held_slot(n)
            } else {
                gs_operand(base + TEMP_SLOT * k as u32)
            };
            let (code, reg) = match (f.vex, self.zmm_state) {
                (false, _) => (
                    if save {
                        Movdqu_xmmm128_xmm
                    } else {
                        Movdqu_xmm_xmmm128
                    },
                    Register::XMM0 + n,
                ),
                (true, false) => (
                    if save {
                        VEX_Vmovdqu_ymmm256_ymm
                    } else {
                        VEX_Vmovdqu_ymm_ymmm256
                    },
                    Register::YMM0 + n,
                ),
                (true, true) => (
                    if save {
                        EVEX_Vmovdqu64_zmmm512_k1z_zmm
                    } else {
                        EVEX_Vmovdqu64_zmm_k1z_zmmm512
                    },
                    Register::ZMM0 + n,
                ),
            };
            let i = if save {
                Instruction::with2(code, slot, reg)
            } else {
                Instruction::with2(code, reg, slot)
            };
            self.asm(i);
        }
    }

    /// [`Plan::DotArithmetic`](crate::instrument::Plan::DotArithmetic).
    pub(super) fn dot_arithmetic(
        &mut self,
        insn: &Instruction,
        a: DotArithmetic,
    ) -> Result<(), TranslateError> {
        if let FpOp::Fma(form) = a.op {
            return self.dot_fma(insn, a, form);
        }
        let l = *self.layout;
        let sr = l.shadow_regs;
        let f = Form {
            vex: a.vex,
            ymm: a.width == 32,
            scalar: a.scalar,
            double: a.elem == Elem::F64,
        };
        let (low, whole) = self.vectors_dead.get(self.index).copied().unwrap_or((0, 0));
        let dead = if f.vex { whole } else { low };
        // Holding (legacy code): the registers held already, then those
        // no later instruction names, which stay held to the block's end.
        let hold = self.hold && !f.vex;
        // Holding, an operation takes an operand's tangent from the held
        // register that has it (written through to the file: the same
        // bytes as the load), and leaves its result's there.
        let cached = |r: Register| {
            if hold {
                self.cached_tangent(r.number() as u32, f.scalar, f.double)
            } else {
                None
            }
        };
        let ca = if a.op == FpOp::Sqrt {
            None
        } else {
            cached(a.src1)
        };
        let cb = a
            .src
            .filter(|r| r.number() != a.src1.number())
            .and_then(cached);
        let temps = if hold {
            // Registers whose tangents are worth keeping come last.
            let later_free = self.unnamed_after();
            let keep = self.tangent_registers();
            temporaries_ranked(
                insn,
                [ca, cb],
                &[
                    dead & !keep,
                    self.held & later_free & !keep,
                    self.held & !keep,
                    later_free & !keep,
                    !keep,
                ],
            )
        } else {
            temporaries(insn, dead)
        };
        if hold {
            // The destination's tangent changes.
            self.drop_tangents_of(1 << a.dst.number());
        }
        let t = |k: usize| f.reg(temps[k]);
        let shadow =
            |r: Register| VSrc::M(gs_operand(sr + RegFile::vec_offset(r.number(), 0) as u32));
        let (t0, t1, t2, t3, t4) = (t(0), t(1), t(2), t(3), t(4));
        // The temporaries each operation uses (t4: a memory operand's value).
        // A scalar product branches on its tangents instead of masking
        // them where the flags are free (add and sub are planned only
        // there).
        let flags_free = self.flags_dead.get(self.index).copied().unwrap_or(false);
        let branchy_product = a.op == FpOp::Mul && f.scalar && flags_free;
        let mut used: Vec<usize> = match a.op {
            FpOp::Mul if branchy_product => vec![0, 1],
            FpOp::Mul | FpOp::Min | FpOp::Max => vec![0, 1, 2],
            // The activity test of a scalar add or sub saves what its rare
            // path needs there.
            FpOp::Add | FpOp::Sub if f.scalar => vec![0, 1],
            _ => vec![0, 1, 2, 3],
        };
        if a.src.is_none() {
            used.push(4);
        }
        // rax: a memory operand's address (the activity test of add and
        // sub saves it itself on its rare path).
        let uses_rax = a.src.is_none();
        if uses_rax {
            self.spilled(insn, SPILLS_RAX);
            self.e.store_gs(l.spill_rax, Gpr::RAX);
        }
        if hold {
            let regs = used.iter().fold(0u16, |m, &k| m | 1 << temps[k]);
            self.hold(regs & !dead);
        } else {
            self.dot_temps(f, &temps, &used, true);
        }
        // b, and its tangent into t1.
        let b = match a.src {
            Some(r) => {
                if cb.is_none() {
                    self.v(f, V::Load, t1, shadow(r));
                }
                f.reg(r.number() as u32)
            }
            None => {
                self.lea_of_operand(Register::RAX, insn);
                let at_rax = VSrc::M(MemoryOperand::with_base(Register::RAX));
                self.v(f, V::Load, t4, at_rax);
                self.e.shadow_address_of_rax(l.shadow_mask);
                self.v(f, V::Load, t1, at_rax);
                t4
            }
        };
        // a's tangent into t0 (a square root has no a); a is the guest's
        // register.
        let a_reg = f.reg(a.src1.number() as u32);
        if a.op != FpOp::Sqrt && ca.is_none() {
            self.v(f, V::Load, t0, shadow(a.src1));
        }
        let mut slow = None;
        if matches!(a.op, FpOp::Add | FpOp::Sub) {
            slow = Some(self.lone_passive_shifter(f, &temps, a_reg, b, uses_rax));
        }
        match a.op {
            FpOp::Add => self.v(f, V::Add, t0, VSrc::R(t1)),
            FpOp::Sub => self.v(f, V::Sub, t0, VSrc::R(t1)),
            FpOp::Mul if branchy_product => self.dot_scalar_product(f, t0, t1, a_reg, b),
            FpOp::Mul => {
                // t0 = dA·b where dA ≠ 0; t1 = dB·a where dB ≠ 0.
                self.v(f, V::Xor, t2, VSrc::R(t2));
                self.v(f, V::CmpNeq, t2, VSrc::R(t0));
                self.v(f, V::Mul, t0, VSrc::R(b));
                self.v(f, V::And, t0, VSrc::R(t2));
                self.v(f, V::Xor, t2, VSrc::R(t2));
                self.v(f, V::CmpNeq, t2, VSrc::R(t1));
                self.v(f, V::Mul, t1, VSrc::R(a_reg));
                self.v(f, V::And, t1, VSrc::R(t2));
                self.v(f, V::Add, t0, VSrc::R(t1));
            }
            FpOp::Sqrt => {
                // dot = dB / (2·√b) where dB ≠ 0 (√0 would make 0/0).
                self.v(f, V::Copy, t2, VSrc::R(b));
                self.v(f, V::Sqrt, t2, VSrc::R(t2));
                self.v(f, V::Add, t2, VSrc::R(t2));
                self.v(f, V::Xor, t3, VSrc::R(t3));
                self.v(f, V::CmpNeq, t3, VSrc::R(t1));
                self.v(f, V::Div, t1, VSrc::R(t2));
                self.v(f, V::And, t1, VSrc::R(t3));
                self.v(f, V::Copy, t0, VSrc::R(t1));
            }
            FpOp::Min | FpOp::Max => {
                // The operand the instruction returns: a where a < b (min)
                // or a > b (max), else b (ties and NaN: the second).
                if a.op == FpOp::Min {
                    self.v(f, V::Copy, t2, VSrc::R(a_reg));
                    self.v(f, V::CmpLt, t2, VSrc::R(b));
                } else {
                    self.v(f, V::Copy, t2, VSrc::R(b));
                    self.v(f, V::CmpLt, t2, VSrc::R(a_reg));
                }
                self.v(f, V::And, t0, VSrc::R(t2));
                self.v(f, V::AndNot, t2, VSrc::R(t1));
                self.v(f, V::Or, t0, VSrc::R(t2));
            }
            FpOp::Div => {
                // t3 = a/b; t1 = (a/b)·dB where dB ≠ 0; the numerator
                // dA − t1, divided by b where it is not zero.
                self.v(f, V::Copy, t3, VSrc::R(a_reg));
                self.v(f, V::Div, t3, VSrc::R(b));
                self.v(f, V::Xor, t2, VSrc::R(t2));
                self.v(f, V::CmpNeq, t2, VSrc::R(t1));
                self.v(f, V::Mul, t1, VSrc::R(t3));
                self.v(f, V::And, t1, VSrc::R(t2));
                self.v(f, V::Sub, t0, VSrc::R(t1));
                self.v(f, V::Xor, t2, VSrc::R(t2));
                self.v(f, V::CmpNeq, t2, VSrc::R(t0));
                self.v(f, V::Div, t0, VSrc::R(b));
                self.v(f, V::And, t0, VSrc::R(t2));
            }
            _ => unreachable!("the plan takes add, sub, mul, div, sqrt, min and max"),
        }
        // The destination's shadow, as the instruction writes its value.
        let dst = sr + RegFile::vec_offset(a.dst.number(), 0) as u32;
        match (f.vex, f.scalar) {
            (false, _) => self.v(f, V::Store, t0, VSrc::M(gs_operand(dst))),
            (true, true) => {
                // The low lane, the rest of the first source's xmm part,
                // zero above (in t1, free by now: scalar add, sub and mul
                // need only t0 and t1).
                let x = Form { scalar: false, ..f };
                self.v(x, V::Load, t1, shadow(a.src1));
                self.v(f, V::Merge, t1, VSrc::R(t0));
                self.v(x, V::Store, t1, VSrc::M(gs_operand(dst)));
                self.zero_shadow_from(dst, 16);
            }
            (true, false) => {
                self.v(f, V::Store, t0, VSrc::M(gs_operand(dst)));
                self.zero_shadow_from(dst, u32::from(a.width));
            }
        }
        self.dot_temps(f, &temps, &used, false);
        if uses_rax {
            self.e.load_gs(Gpr::RAX, l.spill_rax);
        }
        if hold {
            // Every temporary may have changed on some path; t0 has the
            // result's tangent (a scalar's with zeros above, as loaded),
            // and an add's or sub's t1 its second operand's. Set before the runtime path,
            // which loads them from the file after the runtime's rule.
            self.drop_tangents_in(temps.iter().fold(0, |m, &n| m | 1 << n));
            let (scalar, double) = (f.scalar, f.double);
            self.set_tangent_entry(temps[0], a.dst.number() as u32, scalar, double);
            if let (FpOp::Add | FpOp::Sub, Some(r)) = (a.op, a.src) {
                if r.number() != a.dst.number() {
                    self.set_tangent_entry(temps[1], r.number() as u32, scalar, double);
                }
            }
        }
        if let Some(slow) = slow {
            self.dot_runtime_path(insn, f, &temps, &used, slow);
        }
        Ok(())
    }

    /// The runtime path of an operation whose test jumps to `slow` (a
    /// rel32 field): the fast path jumps over it; it restores the
    /// temporaries `used` and `rax` and has the runtime apply the rule.
    fn dot_runtime_path(
        &mut self,
        insn: &Instruction,
        f: Form,
        temps: &[u32; TEMPS],
        used: &[usize],
        slow: usize,
    ) {
        let done = self.e.jmp_rel32_placeholder();
        let here = self.e.offset();
        self.e.bind_rel32(slow, here);
        self.dot_temps(f, temps, used, false);
        self.e.load_gs(Gpr::RAX, self.layout.spill_rax);
        self.instrument_call(insn);
        let here = self.e.offset();
        self.e.bind_rel32(done, here);
    }

    /// t0 = dA·b + dB·a for one lane, each term only where its tangent is
    /// not ±0 (`ptest` against the sign-less mask: no compare, no other
    /// register; the flags must be dead). Both tangents nonzero, the
    /// common case, falls through; the sums keep the masked form's zeros
    /// (+0 where both are zero).
    fn dot_scalar_product(
        &mut self,
        f: Form,
        t0: Register,
        t1: Register,
        a: Register,
        b: Register,
    ) {
        let mask = gs_operand(self.layout.abs_masks + if f.double { 0 } else { 16 });
        // Scalar: an xmm form.
        let ptest = f.ptest();
        self.asm(Instruction::with2(ptest, t0, mask));
        let a_zero = self.e.jcc_rel32_placeholder(0x4); // jz
        self.asm(Instruction::with2(ptest, t1, mask));
        let b_zero = self.e.jcc_rel32_placeholder(0x4); // jz
        self.v(f, V::Mul, t0, VSrc::R(b));
        self.v(f, V::Mul, t1, VSrc::R(a));
        let sum = self.e.offset();
        self.v(f, V::Add, t0, VSrc::R(t1));
        let done = self.e.jmp_rel32_placeholder();
        // dA = ±0: 0 + dB·a, or +0 when dB is zero too.
        let here = self.e.offset();
        self.e.bind_rel32(a_zero, here);
        self.v(f, V::Xor, t0, VSrc::R(t0));
        self.asm(Instruction::with2(ptest, t1, mask));
        let both_zero = self.e.jcc_rel32_placeholder(0x4); // jz
        self.v(f, V::Mul, t1, VSrc::R(a));
        let to_sum = self.e.jmp_rel32_placeholder();
        self.e.bind_rel32(to_sum, sum);
        // dB = ±0: dA·b + 0.
        let here = self.e.offset();
        self.e.bind_rel32(b_zero, here);
        self.v(f, V::Mul, t0, VSrc::R(b));
        self.v(f, V::Xor, t1, VSrc::R(t1));
        let to_sum = self.e.jmp_rel32_placeholder();
        self.e.bind_rel32(to_sum, sum);
        let here = self.e.offset();
        self.e.bind_rel32(done, here);
        self.e.bind_rel32(both_zero, here);
    }

    /// VEX FMA (`vfmadd`, `vfmsub`, `vfnmadd`, `vfnmsub`; 132, 213, 231):
    /// dot = ±(dA·b + a·dB) ± dC, each product term where its tangent is
    /// nonzero. Lanes whose addend is passive and of a rounding shifter's
    /// magnitude go to the runtime (`fma(x, c, 1.5·2^52)` is the first half
    /// of the rounding trick, which the rules remember).
    fn dot_fma(
        &mut self,
        insn: &Instruction,
        a: DotArithmetic,
        form: crate::semantics::FmaForm,
    ) -> Result<(), TranslateError> {
        let l = *self.layout;
        let sr = l.shadow_regs;
        let f = Form {
            vex: true,
            ymm: a.width == 32,
            scalar: a.scalar,
            double: a.elem == Elem::F64,
        };
        let (_, whole) = self.vectors_dead.get(self.index).copied().unwrap_or((0, 0));
        let temps = temporaries(insn, whole);
        let t = |k: usize| f.reg(temps[k]);
        let shadow =
            |r: Register| VSrc::M(gs_operand(sr + RegFile::vec_offset(r.number(), 0) as u32));
        // t0 acc, t1/t2/t3 the tangents of operands 1/2/3, t4 a memory
        // operand's value, t5 a mask, t6 the shifter check's scratch.
        let used: Vec<usize> = (0..TEMPS).filter(|&k| k != 4 || a.src.is_none()).collect();
        self.spilled(insn, SPILLS_RAX);
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.dot_temps(f, &temps, &used, true);
        let op3_value = match a.src {
            Some(r) => {
                self.v(f, V::Load, t(3), shadow(r));
                f.reg(r.number() as u32)
            }
            None => {
                self.lea_of_operand(Register::RAX, insn);
                let at_rax = VSrc::M(MemoryOperand::with_base(Register::RAX));
                self.v(f, V::Load, t(4), at_rax);
                self.e.shadow_address_of_rax(l.shadow_mask);
                self.v(f, V::Load, t(3), at_rax);
                t(4)
            }
        };
        self.v(f, V::Load, t(1), shadow(a.dst));
        self.v(f, V::Load, t(2), shadow(a.src1));
        let operand = |n: u8| match n {
            1 => (f.reg(a.dst.number() as u32), t(1)),
            2 => (f.reg(a.src1.number() as u32), t(2)),
            _ => (op3_value, t(3)),
        };
        let ((va, da), (vb, db), (vc, dc)) = (
            operand(form.order[0]),
            operand(form.order[1]),
            operand(form.order[2]),
        );
        // The addend passive and a shifter's size in some lane: runtime.
        let (t0, t5, t6) = (t(0), t(5), t(6));
        self.v(f, V::Xor, t5, VSrc::R(t5));
        self.v(f, V::CmpEq, t5, VSrc::R(dc));
        self.in_shifter_binades(f, vc, t5, t6, t0);
        self.v(f, V::MoveMask, Register::EAX, VSrc::R(t5));
        let lanes = if f.scalar { 1u32 } else { 0xffu32 };
        self.asm(Instruction::with2(
            Code::Test_rm32_imm32,
            Register::EAX,
            lanes,
        ));
        let slow = self.e.jcc_rel32_placeholder(0x5); // jnz
                                                      // t0 = dA·b where dA ≠ 0, plus dB·a where dB ≠ 0.
        self.v(f, V::Copy, t0, VSrc::R(da));
        self.v(f, V::Xor, t5, VSrc::R(t5));
        self.v(f, V::CmpNeq, t5, VSrc::R(t0));
        self.v(f, V::Mul, t0, VSrc::R(vb));
        self.v(f, V::And, t0, VSrc::R(t5));
        self.v(f, V::Xor, t5, VSrc::R(t5));
        self.v(f, V::CmpNeq, t5, VSrc::R(db));
        self.v(f, V::Copy, t6, VSrc::R(db));
        self.v(f, V::Mul, t6, VSrc::R(va));
        self.v(f, V::And, t6, VSrc::R(t5));
        self.v(f, V::Add, t0, VSrc::R(t6));
        if form.neg_product {
            self.v(f, V::Xor, t6, VSrc::R(t6));
            self.v(f, V::Sub, t6, VSrc::R(t0));
            self.v(f, V::Copy, t0, VSrc::R(t6));
        }
        let addend = if form.sub_addend { V::Sub } else { V::Add };
        self.v(f, addend, t0, VSrc::R(dc));
        // The destination's shadow: a scalar form keeps the destination's
        // own bytes 8..16 (4..16), zero above; a packed one its width.
        let dst = sr + RegFile::vec_offset(a.dst.number(), 0) as u32;
        if f.scalar {
            let x = Form { scalar: false, ..f };
            self.v(x, V::Load, t5, shadow(a.dst));
            self.v(f, V::Merge, t5, VSrc::R(t0));
            self.v(x, V::Store, t5, VSrc::M(gs_operand(dst)));
            self.zero_shadow_from(dst, 16);
        } else {
            self.v(f, V::Store, t0, VSrc::M(gs_operand(dst)));
            self.zero_shadow_from(dst, u32::from(a.width));
        }
        self.dot_temps(f, &temps, &used, false);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        self.dot_runtime_path(insn, f, &temps, &used, slow);
        Ok(())
    }

    /// With dA in t0 and dB in t1: a `jnz` (returned, to the runtime path,
    /// taken with the temporaries of `used` still to restore and `rax`
    /// saved) when some lane has exactly one passive operand whose
    /// magnitude lies in the shifters' binades. Lanes both active or both
    /// passive are the common case: a scalar operation tests the tangents'
    /// bits with two `ptest`s and needs no other register (its rare path
    /// saves t2, t3, t5 and t6 itself); a packed one compares each lane
    /// with zero into t2 and t3 and tests with one `ptest`. Clobbers the
    /// flags (and, packed, t2 and t3); `rax` only on the rare path, which
    /// saves it first unless `rax_saved`. (`ptest` is SSE4.1, which every
    /// CPU with AVX has.)
    fn lone_passive_shifter(
        &mut self,
        f: Form,
        temps: &[u32; TEMPS],
        a_reg: Register,
        b: Register,
        rax_saved: bool,
    ) -> usize {
        let t = |k: usize| f.reg(temps[k]);
        let (t0, t1, t2, t3, t5, t6) = (t(0), t(1), t(2), t(3), t(5), t(6));
        let lanes = if f.scalar { 1u32 } else { 0xffu32 };
        let ptest = f.ptest();
        // A scalar operation tests the two tangents' bits themselves (the
        // loads zeroed the lanes above): both nonzero or both zero is the
        // fast path, with no other register; only the rare path compares.
        let mut to_fast = Vec::new();
        let mut a_passive = None;
        if f.scalar {
            self.asm(Instruction::with2(ptest, t0, t0));
            a_passive = Some(self.e.jcc_rel32_placeholder(0x4)); // jz
            self.asm(Instruction::with2(ptest, t1, t1));
            to_fast.push(self.e.jcc_rel32_placeholder(0x5)); // jnz: both active
        }
        let rare = self.e.offset();
        let extra: &[usize] = if f.scalar { &[2, 3, 5, 6] } else { &[5, 6] };
        // t2 = lanes with one passive operand, t3 = lanes where b is passive.
        if f.scalar {
            self.dot_temps(f, temps, &[2, 3], true);
        }
        self.v(f, V::Xor, t2, VSrc::R(t2));
        self.v(f, V::CmpEq, t2, VSrc::R(t0));
        self.v(f, V::Xor, t3, VSrc::R(t3));
        self.v(f, V::CmpEq, t3, VSrc::R(t1));
        self.v(f, V::Xor, t2, VSrc::R(t3));
        let uniform = if f.scalar {
            None
        } else {
            // Packed: the lanes a scalar compare leaves are zeroed ones.
            self.asm(Instruction::with2(ptest, t2, t2));
            Some(self.e.jcc_rel32_placeholder(0x4)) // jz
        };
        let l = *self.layout;
        if !rax_saved {
            self.e.store_gs(l.spill_rax, Gpr::RAX);
        }
        self.dot_temps(f, temps, &[5, 6], true);
        // t5 = the lone passive operand's value: b where t2 & t3, a where
        // t2 & !t3.
        self.v(f, V::And, t3, VSrc::R(t2));
        self.v(f, V::Copy, t5, VSrc::R(t3));
        self.v(f, V::And, t5, VSrc::R(b));
        self.v(f, V::Copy, t6, VSrc::R(t2));
        self.v(f, V::Xor, t6, VSrc::R(t3));
        self.v(f, V::And, t6, VSrc::R(a_reg));
        self.v(f, V::Or, t5, VSrc::R(t6));
        self.in_shifter_binades(f, t5, t2, t6, t3);
        self.v(f, V::MoveMask, Register::EAX, VSrc::R(t2));
        self.dot_temps(f, temps, extra, false);
        self.asm(Instruction::with2(
            Code::Test_rm32_imm32,
            Register::EAX,
            lanes,
        ));
        if !rax_saved {
            // A move: the flags of the test stay.
            self.e.load_gs(Gpr::RAX, l.spill_rax);
        }
        let to_runtime = self.e.jcc_rel32_placeholder(0x5); // jnz
        if let Some(a_passive) = a_passive {
            // dA is zero: the rare path if dB is not, else both passive.
            to_fast.push(self.e.jmp_rel32_placeholder());
            let here = self.e.offset();
            self.e.bind_rel32(a_passive, here);
            self.asm(Instruction::with2(ptest, t1, t1));
            let back = self.e.jcc_rel32_placeholder(0x5); // jnz
            self.e.bind_rel32(back, rare);
        }
        let here = self.e.offset();
        for j in to_fast.into_iter().chain(uniform) {
            self.e.bind_rel32(j, here);
        }
        to_runtime
    }

    /// `mask` &= the lanes where `value`'s magnitude lies in the binades of
    /// rounding tricks' shifters: [2^42, 2^54) for doubles, [2^13, 2^25)
    /// for floats. `s1` and `s2` are scratch (neither `value` nor `mask`);
    /// clobbers `rax` and the context's `spill_tmp` (the bounds, broadcast
    /// from there).
    fn in_shifter_binades(
        &mut self,
        f: Form,
        value: Register,
        mask: Register,
        s1: Register,
        s2: Register,
    ) {
        let l = *self.layout;
        let (lo, hi) = if f.double {
            (2f64.powi(42).to_bits(), 2f64.powi(54).to_bits())
        } else {
            (
                u64::from(2f32.powi(13).to_bits()),
                u64::from(2f32.powi(25).to_bits()),
            )
        };
        self.e.mov_imm64(Gpr::RAX, lo);
        self.e.store_gs(l.spill_tmp, Gpr::RAX);
        self.e.mov_imm64(Gpr::RAX, hi);
        self.e.store_gs(l.spill_tmp + 8, Gpr::RAX);
        // |value| into s1 (as max(−v, v)), then lo ≤ |value| < hi.
        self.v(f, V::Xor, s1, VSrc::R(s1));
        self.v(f, V::Sub, s1, VSrc::R(value));
        self.v(f, V::Max, s1, VSrc::R(value));
        self.broadcast(f, s2, l.spill_tmp);
        self.v(f, V::CmpLe, s2, VSrc::R(s1));
        self.v(f, V::And, mask, VSrc::R(s2));
        self.broadcast(f, s2, l.spill_tmp + 8);
        self.v(f, V::CmpLt, s1, VSrc::R(s2));
        self.v(f, V::And, mask, VSrc::R(s1));
    }

    /// `dst` = the element at `gs:disp` in every lane.
    fn broadcast(&mut self, f: Form, dst: Register, disp: u32) {
        self.v(f, V::Broadcast, dst, VSrc::M(gs_operand(disp)));
        if !f.vex && !f.double {
            // SSE has no float broadcast from memory: `movss`, then
            // `shufps` of lane 0 into every lane.
            self.asm(Instruction::with3(
                Code::Shufps_xmm_xmmm128_imm8,
                dst,
                dst,
                0u32,
            ));
        }
    }

    /// Zeroes a vector register's shadow from byte `from` to its end.
    fn zero_shadow_from(&mut self, reg_shadow: u32, from: u32) {
        let mut z = from;
        while z < 64 {
            self.e.zero_gs(reg_shadow + z, 8);
            z += 8;
        }
    }
}

/// A source operand of the tangent code.
#[derive(Clone, Copy)]
enum VSrc {
    R(Register),
    M(MemoryOperand),
}
