//! [`Plan::ShadowShuffle`](crate::instrument::Plan::ShadowShuffle): an
//! SSE/AVX shuffle, unpack or blend of 4- or 8-byte pieces run a second
//! time, before the instruction itself, on its operands' shadows.
//!
//! ```text
//! unpckhpd xmm1, xmm2        vshufps ymm0, ymm1, [rdi], 0x4e
//!   T1 = shadow(xmm1)          T1 = shadow(ymm1)
//!   T2 = shadow(xmm2)          T2 = shadow of the 32 bytes at rdi
//!   unpckhpd T1, T2            vshufps T1, T1, T2, 0x4e
//!   shadow(xmm1) = T1          shadow(ymm0) = T1, zero above 32 bytes
//! ```
//! Legacy code leaves the bits above 128 alone and so do its shadows; VEX
//! code zeroes them. The temporaries are two vector registers the
//! instruction does not name, dead ones first; live ones are saved in the
//! context's two 16-byte scratch slots, which only legacy (16-byte) forms
//! can use — a VEX form without two dead registers goes to the runtime.
//! Every shadow is read as 8-byte halves where it may just have been
//! written 8 bytes at a time (see `vector_move_via_dead_register`).

use super::{gs_operand, TranslateError, Translator, SPILLS_RAX};
use crate::emit::Gpr;
use iced_x86::{Code, EncodingKind, Instruction, MemoryOperand, OpKind, Register};
use shadowmem::RegFile;

impl Translator<'_> {
    /// [`Plan::ShadowShuffle`](crate::instrument::Plan::ShadowShuffle).
    pub(super) fn shadow_shuffle(&mut self, insn: &Instruction) -> Result<(), TranslateError> {
        let vex = insn.encoding() == EncodingKind::VEX;
        let dst = insn.op0_register();
        let width = dst.size() as u32;
        let (low, whole) = self.vectors_dead.get(self.index).copied().unwrap_or((0, 0));
        // Held registers (legacy code) are free to change.
        let dead = if vex { whole } else { low | self.held };
        let temps = super::dot::temporaries(insn, dead);
        let (n1, n2) = (temps[0], temps[1]);
        self.drop_tangents_in(1 << n1 | 1 << n2);
        let saved: Vec<u32> = [n1, n2]
            .into_iter()
            .filter(|n| dead & 1 << n == 0)
            .collect();
        if vex && !saved.is_empty() {
            self.instrument_call(insn);
            return Ok(());
        }
        let reg = |n: u32| {
            if width == 32 {
                Register::YMM0 + n
            } else {
                Register::XMM0 + n
            }
        };
        let (t1, t2) = (reg(n1), reg(n2));
        let l = *self.layout;
        let sr = l.shadow_regs;
        let slots = [l.spill_tmp, l.lane_tmp];
        for (k, &n) in saved.iter().enumerate() {
            self.asm(Instruction::with2(
                Code::Movdqu_xmmm128_xmm,
                gs_operand(slots[k]),
                Register::XMM0 + n,
            ));
        }
        let memory = (1..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory);
        if memory {
            self.spilled(insn, SPILLS_RAX);
            self.e.store_gs(l.spill_rax, Gpr::RAX);
            self.shadow_address_in_rax(insn)?;
        }
        let shadow_of = |r: Register| gs_operand(sr + RegFile::vec_offset(r.number(), 0) as u32);
        // The mirrored instruction: the destination (and, legacy, first
        // source) is T1, the other data operand T2, the immediate kept.
        let mut mirror = *insn;
        mirror.set_op0_register(t1);
        // VEX forms with two sources read the first into T1.
        let first_source =
            usize::from(vex && insn.op_count() >= 3 && insn.op_kind(2) != OpKind::Immediate8);
        if vex {
            if first_source == 1 {
                self.load_shadow(t1, shadow_of(insn.op1_register()), width, vex);
                mirror.set_op1_register(t1);
            }
        } else {
            self.load_shadow(t1, shadow_of(dst), width, vex);
        }
        let other = first_source as u32 + 1;
        match insn.op_kind(other) {
            OpKind::Register => {
                self.load_shadow(t2, shadow_of(insn.op_register(other)), width, vex);
            }
            _ => {
                let bytes = (insn.memory_size().size() as u32).min(width);
                self.load_shadow(t2, MemoryOperand::with_base(Register::RAX), bytes, vex);
                mirror.set_op_kind(other, OpKind::Register);
                mirror.set_segment_prefix(Register::None);
            }
        }
        mirror.set_op_register(other, t2);
        self.asm(Ok::<_, iced_x86::IcedError>(mirror));
        let store = match (vex, width) {
            (false, _) => Code::Movdqu_xmmm128_xmm,
            (true, 16) => Code::VEX_Vmovdqu_xmmm128_xmm,
            _ => Code::VEX_Vmovdqu_ymmm256_ymm,
        };
        let dst_shadow = sr + RegFile::vec_offset(dst.number(), 0) as u32;
        self.asm(Instruction::with2(store, gs_operand(dst_shadow), t1));
        if vex {
            self.zero_shadow_bytes(dst_shadow + width, 64 - width);
        }
        if memory {
            self.e.load_gs(Gpr::RAX, l.spill_rax);
        }
        for (k, &n) in saved.iter().enumerate() {
            self.asm(Instruction::with2(
                Code::Movdqu_xmm_xmmm128,
                Register::XMM0 + n,
                gs_operand(slots[k]),
            ));
        }
        Ok(())
    }
}
