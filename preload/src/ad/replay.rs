//! Shadow propagation for data moves by replaying the instruction on shadows.
//!
//! Shadow memory and the shadow register file hold 4 index bytes per 4
//! bytes of data, byte for byte. A move (load, store, shuffle, permute,
//! unpack, broadcast, insert, extract, blend, masked move, cmov) therefore
//! moves shadow bytes exactly as the same instruction moves data bytes. For
//! each such guest instruction the runtime generates, once, a thunk that
//! loads the shadows of the register operands into those registers, points
//! the memory operand at the shadow address, executes the instruction, and
//! stores the written registers' shadows back. Operands that *select* rather
//! than carry data (shuffle controls, blend masks, permutation indices, `k`
//! masks, the flags of `cmov`) are loaded with the guest's values instead.

use super::guest::{gpr_slot, kregs, vec_value};
use crate::context::ThreadCtx;
use crate::lock::Lock;
use crate::sys;
use iced_x86::{
    BlockEncoder, BlockEncoderOptions, Code, EncodingKind, Instruction, InstructionBlock,
    InstructionInfoFactory, MemoryOperand, Mnemonic, OpAccess, OpKind, Register,
};
use shadowmem::RegFile;
use std::collections::BTreeMap;

/// Generated thunks by guest pc: `None` when the instruction cannot be
/// replayed (the caller falls back).
struct Thunks {
    by_pc: BTreeMap<u64, Option<u64>>,
    arena: u64,
    used: u64,
}

const ARENA_BYTES: u64 = 32 << 20;

static THUNKS: Lock<Thunks> = Lock::new(Thunks {
    by_pc: BTreeMap::new(),
    arena: 0,
    used: 0,
});

/// Forgets thunks of guest code in `[start, end)` (it was unmapped).
pub fn invalidate(start: u64, end: u64) {
    let mut t = THUNKS.lock();
    let doomed: Vec<u64> = t.by_pc.range(start..end).map(|(&k, _)| k).collect();
    for k in doomed {
        t.by_pc.remove(&k);
    }
}

/// Which operands select rather than carry data, by mnemonic: operand
/// numbers that must hold guest values during the replay.
fn selector_operands(insn: &Instruction) -> &'static [u32] {
    let vex = insn.encoding() != EncodingKind::Legacy;
    match insn.mnemonic() {
        Mnemonic::Pshufb => &[1],
        Mnemonic::Vpshufb => &[2],
        Mnemonic::Vpermilpd | Mnemonic::Vpermilps if insn.op_kind(2) != OpKind::Immediate8 => &[2],
        Mnemonic::Vpermps | Mnemonic::Vpermd | Mnemonic::Vpermb | Mnemonic::Vpermw => &[1],
        Mnemonic::Vpermpd | Mnemonic::Vpermq
            if insn.op_count() == 3 && insn.op_kind(2) != OpKind::Immediate8 =>
        {
            &[1]
        }
        Mnemonic::Vpermt2pd
        | Mnemonic::Vpermt2ps
        | Mnemonic::Vpermt2d
        | Mnemonic::Vpermt2q
        | Mnemonic::Vpermt2b
        | Mnemonic::Vpermt2w => &[1],
        Mnemonic::Vpermi2pd
        | Mnemonic::Vpermi2ps
        | Mnemonic::Vpermi2d
        | Mnemonic::Vpermi2q
        | Mnemonic::Vpermi2b
        | Mnemonic::Vpermi2w => &[0],
        Mnemonic::Vblendvpd | Mnemonic::Vblendvps | Mnemonic::Vpblendvb => &[3],
        // Shift counts in a register.
        Mnemonic::Psllq | Mnemonic::Psrlq if insn.op_kind(1) == OpKind::Register => &[1],
        Mnemonic::Vpsllq | Mnemonic::Vpsrlq
            if insn.op_count() == 3 && insn.op_kind(2) == OpKind::Register =>
        {
            &[2]
        }
        Mnemonic::Vmaskmovpd
        | Mnemonic::Vmaskmovps
        | Mnemonic::Vpmaskmovd
        | Mnemonic::Vpmaskmovq => &[1],
        _ if vex => &[],
        _ => &[],
    }
}

/// Whether the instruction's memory operand selects rather than carries
/// data (`vpermilps ymm, ymm, [control]`, `pshufb xmm, [control]`): the
/// replay must then read the guest's memory, not its shadow.
pub fn memory_is_selector(insn: &Instruction) -> bool {
    selector_operands(insn)
        .iter()
        .any(|&op| op < insn.op_count() && insn.op_kind(op) == OpKind::Memory)
}

/// Legacy blendv forms read their mask from xmm0 implicitly.
fn implicit_xmm0_selector(insn: &Instruction) -> bool {
    matches!(
        insn.mnemonic(),
        Mnemonic::Blendvpd | Mnemonic::Blendvps | Mnemonic::Pblendvb
    )
}

/// Replays `insn` on shadows. Returns false when it cannot (the caller
/// falls back to its conservative rule).
pub fn replay(ctx: &mut ThreadCtx, insn: &Instruction, mem_shadow: u64) -> bool {
    let thunk = {
        let mut t = THUNKS.lock();
        match t.by_pc.get(&insn.ip()) {
            Some(&known) => known,
            None => {
                let made = build(&mut t, insn);
                if made.is_none() {
                    crate::log!("replay: no thunk for {:#x} {:?}", insn.ip(), insn.code());
                }
                t.by_pc.insert(insn.ip(), made);
                made
            }
        }
    };
    let Some(addr) = thunk else { return false };
    let k = kregs(ctx);
    let mut selectors = [[0u8; 64]; 32];
    for r in selector_registers(insn) {
        selectors[r.number()] = vec_value(ctx, r.number());
    }
    // SAFETY: the thunk was generated for this instruction with this
    // calling convention; it only touches the register file, `mem_shadow`
    // (the shadow of the instruction's own memory operand), the selector
    // and k arrays, and restores callee-saved registers and DF.
    let f: extern "C" fn(u64, u64, u64, u64, u64) = unsafe { core::mem::transmute(addr) };
    f(
        &mut ctx.shadow as *mut RegFile as u64,
        mem_shadow,
        k.as_ptr() as u64,
        ctx.regs.rflags,
        selectors.as_ptr() as u64,
    );
    true
}

fn selector_registers(insn: &Instruction) -> Vec<Register> {
    let mut v: Vec<Register> = selector_operands(insn)
        .iter()
        .filter(|&&op| op < insn.op_count() && insn.op_kind(op) == OpKind::Register)
        .map(|&op| insn.op_register(op))
        .collect();
    if implicit_xmm0_selector(insn) {
        v.push(Register::XMM0);
    }
    v
}

/// Registers the thunk may take for its own pointers: callee-saved ones
/// and r10/r11 (never r8/r9, which carry its arguments).
const SCRATCH_CANDIDATES: [Register; 8] = [
    Register::R10,
    Register::R11,
    Register::R12,
    Register::R13,
    Register::R14,
    Register::R15,
    Register::RBX,
    Register::RBP,
];

/// A whole vector register `n` loaded from (`load`) or stored to `mem`, in
/// the widest form this machine has (the guest cannot use more of it).
fn vector_move(
    load: bool,
    n: usize,
    mem: MemoryOperand,
) -> Result<Instruction, iced_x86::IcedError> {
    use Code::*;
    let (reg, code) = match (crate::cpu::vector_bytes(), load) {
        (64, true) => (Register::ZMM0, EVEX_Vmovdqu64_zmm_k1z_zmmm512),
        (64, false) => (Register::ZMM0, EVEX_Vmovdqu64_zmmm512_k1z_zmm),
        (32, true) => (Register::YMM0, VEX_Vmovdqu_ymm_ymmm256),
        (32, false) => (Register::YMM0, VEX_Vmovdqu_ymmm256_ymm),
        (_, true) => (Register::XMM0, Movdqu_xmm_xmmm128),
        (_, false) => (Register::XMM0, Movdqu_xmmm128_xmm),
    };
    let reg = reg + n as u32;
    if load {
        Instruction::with2(code, reg, mem)
    } else {
        Instruction::with2(code, mem, reg)
    }
}

/// The ModRM form of a `mov` between the accumulator and a 64-bit
/// absolute address (`moffs`), which has no form with a base register
/// for the replay to redirect to the shadow.
fn modrm_form(insn: &Instruction) -> Option<Instruction> {
    use Code::*;
    let (code, load) = match insn.code() {
        Mov_AL_moffs8 => (Mov_r8_rm8, true),
        Mov_AX_moffs16 => (Mov_r16_rm16, true),
        Mov_EAX_moffs32 => (Mov_r32_rm32, true),
        Mov_RAX_moffs64 => (Mov_r64_rm64, true),
        Mov_moffs8_AL => (Mov_rm8_r8, false),
        Mov_moffs16_AX => (Mov_rm16_r16, false),
        Mov_moffs32_EAX => (Mov_rm32_r32, false),
        Mov_moffs64_RAX => (Mov_rm64_r64, false),
        _ => return None,
    };
    let reg = insn.op_register(if load { 0 } else { 1 });
    // Any base other than the accumulator: the replay redirects it.
    let mem = MemoryOperand::with_base_displ(Register::RBX, 0);
    let mut i = if load {
        Instruction::with2(code, reg, mem)
    } else {
        Instruction::with2(code, mem, reg)
    }
    .ok()?;
    i.set_ip(insn.ip());
    Some(i)
}

/// Generates the thunk: `fn(regfile, mem_shadow, kregs, rflags, selectors)`.
fn build(t: &mut Thunks, insn: &Instruction) -> Option<u64> {
    let normalized = modrm_form(insn);
    let insn = normalized.as_ref().unwrap_or(insn);
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    // Registers the instruction touches (explicitly or implicitly).
    let mut used: Vec<(Register, OpAccess)> = Vec::new();
    for u in info.used_registers() {
        used.push((u.register(), u.access()));
    }
    // Registers that only form the memory operand's address need no
    // shadow: the replay addresses the shadow directly.
    let mem_regs: Vec<Register> = info
        .used_memory()
        .iter()
        .flat_map(|m| [m.base(), m.index()])
        .filter(|r| *r != Register::None)
        .collect();
    let full = |r: Register| if r.is_gpr() { r.full_register() } else { r };
    let data_regs: Vec<Register> = (0..insn.op_count())
        .filter(|&i| insn.op_kind(i) == OpKind::Register)
        .map(|i| full(insn.op_register(i)))
        .collect();
    used.retain(|(r, _)| !mem_regs.contains(r) || data_regs.contains(&full(*r)));
    if used.iter().any(|(r, _)| {
        matches!(
            *r,
            Register::RSP | Register::ESP | Register::SP | Register::RIP
        )
    }) || insn.stack_pointer_increment() != 0
        || info
            .used_memory()
            .iter()
            .any(|m| m.index().is_vector_register())
        || info.used_memory().len() > 1
    {
        return None; // push/pop/leave and gathers have their own rules
    }
    // One name per architectural register: gprs by their 64-bit name,
    // vector registers by their zmm name (iced may list ymm0 as read and
    // zmm0 as written for one EVEX operand).
    let canonical = |r: Register| {
        if r.is_gpr() {
            r.full_register()
        } else if r.is_xmm() || r.is_ymm() || r.is_zmm() {
            Register::ZMM0 + r.number() as u32
        } else {
            r
        }
    };
    let mut selectors: Vec<Register> = selector_registers(insn)
        .into_iter()
        .map(canonical)
        .collect();
    // A selector register that is also a data operand (`vblendvpd x0, x1,
    // x0, x0`) must hold the guest's value and a shadow at once: the
    // replay reads the selector from a register the instruction does not
    // use. Legacy blendv's implicit xmm0 cannot be renamed.
    let data_operands: Vec<Register> = (0..insn.op_count())
        .filter(|&i| insn.op_kind(i) == OpKind::Register && !selector_operands(insn).contains(&i))
        .map(|i| canonical(insn.op_register(i)))
        .collect();
    let mut renamed: Vec<(u32, Register, Register)> = Vec::new();
    for &op in selector_operands(insn) {
        if op >= insn.op_count() || insn.op_kind(op) != OpKind::Register {
            continue;
        }
        let original = insn.op_register(op);
        if !data_operands.contains(&canonical(original)) {
            continue;
        }
        let taken = |n: usize| {
            used.iter()
                .any(|(r, _)| canonical(*r) == Register::ZMM0 + n as u32)
                || renamed.iter().any(|(_, _, v)| v.number() == n)
        };
        let spare = (0..16).find(|&n| !taken(n))?;
        let base_reg = if original.is_xmm() {
            Register::XMM0
        } else if original.is_ymm() {
            Register::YMM0
        } else {
            Register::ZMM0
        };
        renamed.push((op, original, base_reg + spare as u32));
    }
    if implicit_xmm0_selector(insn) && data_operands.contains(&Register::ZMM0) {
        return None;
    }
    if !renamed.is_empty() {
        selectors.retain(|r| !renamed.iter().any(|(_, o, _)| canonical(*o) == *r));
    }
    let touched_full: Vec<Register> = used
        .iter()
        .map(|(r, _)| if r.is_gpr() { r.full_register() } else { *r })
        .collect();
    let mut free = SCRATCH_CANDIDATES
        .iter()
        .copied()
        .filter(|r| !touched_full.contains(r));
    let base = free.next()?;
    let mem = free.next()?;
    let sel = free.next()?;
    let mut code: Vec<Instruction> = Vec::new();
    let mut push = |i: Result<Instruction, iced_x86::IcedError>| code.push(i.expect("encodable"));
    use Code::*;
    for r in [
        Register::RBX,
        Register::RBP,
        Register::R12,
        Register::R13,
        Register::R14,
        Register::R15,
    ] {
        push(Instruction::with1(Push_r64, r));
    }
    push(Instruction::with2(Mov_r64_rm64, base, Register::RDI));
    push(Instruction::with2(Mov_r64_rm64, mem, Register::RSI));
    push(Instruction::with2(Mov_r64_rm64, sel, Register::R8));
    // Mask registers (guest values) first: rdx still holds their address.
    for (r, _) in &used {
        if r.is_k() {
            push(Instruction::with2(
                VEX_Kmovq_kr_km64,
                *r,
                MemoryOperand::with_base_displ(Register::RDX, 8 * r.number() as i64),
            ));
        }
    }
    // Guest flags (for cmov and friends).
    push(Instruction::with1(Push_r64, Register::RCX));
    push(Ok(Instruction::with(Popfq)));
    // Operand shadows (selectors: guest values) into the same registers.
    let mut loaded: Vec<Register> = Vec::new();
    for (r, access) in &used {
        let full = canonical(*r);
        if loaded.contains(&full) || full == base || full == mem || full == sel || r.is_k() {
            continue;
        }
        let reads = !matches!(
            access,
            OpAccess::Write | OpAccess::CondWrite | OpAccess::NoMemAccess
        );
        let _ = reads;
        if full.is_gpr64() {
            push(Instruction::with2(
                Mov_r64_rm64,
                full,
                MemoryOperand::with_base_displ(base, RegFile::gpr_offset(full.number(), 0) as i64),
            ));
        } else if full.is_xmm() || full.is_ymm() || full.is_zmm() {
            let (src, off) = if selectors.contains(&full) {
                (sel, 64 * full.number())
            } else {
                (base, RegFile::vec_offset(full.number(), 0))
            };
            push(vector_move(
                true,
                full.number(),
                MemoryOperand::with_base_displ(src, off as i64),
            ));
        } else if full == Register::None {
            continue;
        } else {
            return None; // segment, x87, control registers: not a plain move
        }
        loaded.push(full);
    }
    // Renamed selectors: the guest's value into the spare register.
    for (_, original, spare) in &renamed {
        push(vector_move(
            true,
            spare.number(),
            MemoryOperand::with_base_displ(sel, 64 * original.number() as i64),
        ));
    }
    // The instruction itself, its memory operand redirected to the shadow
    // (or, for a selector, left to the guest address the caller passes).
    let mut replayed = *insn;
    for (op, _, spare) in &renamed {
        replayed.set_op_register(*op, *spare);
    }
    if (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory) {
        replayed.set_memory_base(mem);
        replayed.set_memory_index(Register::None);
        replayed.set_memory_index_scale(1);
        replayed.set_memory_displacement64(0);
        replayed.set_memory_displ_size(0);
        replayed.set_segment_prefix(Register::None);
    } else if (0..insn.op_count())
        .any(|i| !matches!(insn.op_kind(i), OpKind::Register | OpKind::Immediate8))
    {
        return None;
    }
    push(Ok(replayed));
    // Written registers' shadows back to the register file.
    let mut stored: Vec<Register> = Vec::new();
    for (r, access) in &used {
        let writes = matches!(
            access,
            OpAccess::Write | OpAccess::ReadWrite | OpAccess::CondWrite | OpAccess::ReadCondWrite
        );
        if !writes || r.is_k() {
            continue;
        }
        let full = canonical(*r);
        if stored.contains(&full) {
            continue;
        }
        stored.push(full);
        if full.is_gpr64() {
            push(Instruction::with2(
                Mov_rm64_r64,
                MemoryOperand::with_base_displ(base, RegFile::gpr_offset(full.number(), 0) as i64),
                full,
            ));
        } else if full.is_xmm() || full.is_ymm() || full.is_zmm() {
            push(vector_move(
                false,
                full.number(),
                MemoryOperand::with_base_displ(base, RegFile::vec_offset(full.number(), 0) as i64),
            ));
        }
    }
    push(Ok(Instruction::with(Cld)));
    for r in [
        Register::R15,
        Register::R14,
        Register::R13,
        Register::R12,
        Register::RBP,
        Register::RBX,
    ] {
        push(Instruction::with1(Pop_r64, r));
    }
    push(Ok(Instruction::with(Retnq)));
    if t.arena == 0 {
        let rwx = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC;
        t.arena = sys::map_anon(ARENA_BYTES as usize, rwx, 0, false)?;
    }
    let at = t.arena + t.used;
    let encoded = BlockEncoder::encode(
        64,
        InstructionBlock::new(&code, at),
        BlockEncoderOptions::NONE,
    )
    .ok()?;
    let bytes = encoded.code_buffer;
    if crate::init::config().trace {
        let mut d = iced_x86::Decoder::with_ip(64, &bytes, at, iced_x86::DecoderOptions::NONE);
        let mut f = iced_x86::IntelFormatter::new();
        for i in &mut d {
            let mut s = String::new();
            iced_x86::Formatter::format(&mut f, &i, &mut s);
            crate::log!("thunk {:#x}: {}", insn.ip(), s);
        }
    }
    if t.used + bytes.len() as u64 > ARENA_BYTES {
        return None;
    }
    // SAFETY: [at, at+len) is unused RWX arena memory owned by this lock.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), at as *mut u8, bytes.len()) };
    t.used += (bytes.len() as u64).next_multiple_of(16);
    let _ = gpr_slot;
    Some(at)
}
