//! What record mode does for each guest instruction, decided at
//! translation time from the semantics table: nothing, clear some register
//! shadows inline, or call the runtime, which applies the full semantics.

use crate::semantics::{semantics, Semantics, SpecialKind};
use iced_x86::{
    EncodingKind, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind, Register,
};
use shadowmem::RegFile;

/// The instrumentation of one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Writes nothing a shadow tracks.
    Nothing,
    /// Writes only registers, with values that carry no derivative: zero
    /// these `(offset in the shadow register file, bytes)` ranges inline.
    ClearRegisters(Vec<(u32, u8)>),
    /// Everything else: the runtime applies the semantics before the
    /// instruction runs.
    Runtime,
}

/// A shift or rotate of a general register by a constant multiple of 8
/// bits only moves bytes (e.g. `shr rax, 32` unpacking the upper float of a
/// packed pair), so it is a move for the shadows, not a passive result.
pub fn byte_granular_shift(insn: &Instruction) -> bool {
    matches!(
        insn.mnemonic(),
        Mnemonic::Shl
            | Mnemonic::Shr
            | Mnemonic::Sal
            | Mnemonic::Rol
            | Mnemonic::Ror
            | Mnemonic::Shld
            | Mnemonic::Shrd
            | Mnemonic::Rorx
    ) && (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Immediate8)
        && insn.immediate8().is_multiple_of(8)
        && insn.op0_kind() == OpKind::Register
}

fn writes(a: OpAccess) -> bool {
    matches!(
        a,
        OpAccess::Write | OpAccess::ReadWrite | OpAccess::CondWrite | OpAccess::ReadCondWrite
    )
}

/// The record-mode plan for `insn`.
pub fn record_plan(insn: &Instruction) -> Plan {
    match semantics(insn.code()) {
        Some(Semantics::NoWrite) | Some(Semantics::Special(SpecialKind::Control)) => Plan::Nothing,
        Some(Semantics::Passive) if !byte_granular_shift(insn) => {
            passive_registers(insn).map_or(Plan::Runtime, Plan::ClearRegisters)
        }
        _ => Plan::Runtime,
    }
}

/// The register shadows a passive instruction clears, or `None` when it
/// also writes memory or x87 state (left to the runtime).
fn passive_registers(insn: &Instruction) -> Option<Vec<(u32, u8)>> {
    if insn.fpu_stack_increment_info().increment() != 0 {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    if info.used_memory().iter().any(|m| writes(m.access())) {
        return None;
    }
    let legacy = insn.encoding() == EncodingKind::Legacy;
    let mut clears = Vec::new();
    for u in info.used_registers() {
        let r = u.register();
        if !writes(u.access()) {
            continue;
        }
        if r.is_gpr() {
            // 32- and 64-bit writes replace the whole register; narrower
            // ones spoil its low granule.
            let len = if r.size() >= 4 { 8 } else { 4 };
            clears.push((
                RegFile::gpr_offset(r.full_register().number(), 0) as u32,
                len,
            ));
        } else if r.is_xmm() || r.is_ymm() || r.is_zmm() {
            let len = if legacy { r.size() } else { 64 };
            let base = RegFile::vec_offset(r.number(), 0) as u32;
            for chunk in (0..len).step_by(8) {
                clears.push((base + chunk as u32, 8));
            }
        } else if !(r.is_k()
            || matches!(r, Register::RIP | Register::EIP)
            || r.is_segment_register())
        {
            // x87 and anything unexpected: leave it to the runtime. (Masks
            // and control state never carry indices.)
            return None;
        }
    }
    clears.sort_unstable();
    clears.dedup();
    Some(clears)
}
