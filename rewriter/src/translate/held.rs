//! Guest xmm registers held as temporaries across instructions (dot mode
//! without the AVX-512 tangent cache, decision 54).
//!
//! The inline tangent code of an SSE `add`, `mul`, … computes in vector
//! registers the instruction does not name. Where none is dead, it used to
//! save each temporary before and restore it after, four memory operations
//! per temporary and instruction. In a block of legacy SSE code the
//! translation instead *holds* such a register: its guest value is stored
//! once in the context's `held_xmm` slot and the register stays the
//! tangent code's until something needs the guest's value again:
//!
//! - an instruction that names or uses it (put back before that
//!   instruction's code, which may read it as an operand);
//! - anything that leaves the block or its straight line — a branch, a
//!   call, a return, a system call, a client request, an instruction
//!   without semantics, a state save (`fxsave`, `xsave`), the block's end;
//! - a runtime entry from inline code (`instrument_call`): all are put
//!   back before it and held again after it, so the runtime always sees
//!   and saves the guest's values.
//!
//! Registers no later instruction of the block names are chosen first, so
//! a loop body holds a few registers once per iteration.
//!
//! A held register also keeps the tangent the operation that used it last
//! computed there (a *tangent entry*: guest `xmmN`'s tangent as the
//! operation's load from the shadow register file would give it: a
//! scalar's low 8 bytes, or 4 for a float, then zeros; a packed
//! operation's 16 bytes). The file is still written at
//! every operation, so an entry is only a copy: the next operation that
//! reads that tangent takes the register as its temporary instead of
//! loading what the one before just stored, and the chain of dependent
//! instructions no longer waits for a store to reach the load. An entry
//! ends where its register is put back or used for anything else, where
//! an instruction names its guest register (its shadow may change), and
//! with every plan this account does not follow; after a runtime entry the
//! entries are loaded from the file again, so that both paths of an
//! instruction meet with the same account. Every map
//! entry says which registers are held there ([`InsnMapEntry::held`]): a
//! fault or a signal delivered there has the runtime copy their slots into
//! the interrupted state before the guest sees it. Legacy SSE code only
//! (whose instructions leave bits above 128 alone: 16 bytes per register);
//! blocks with VEX or EVEX code keep saving around each instruction.

use super::{gs_operand, InsnMapEntry, Translator};
use crate::instrument::Plan;
use crate::semantics::{semantics, Semantics, SpecialKind};
use iced_x86::{Code, FlowControl, Instruction, MemoryOperand, Mnemonic, Register};
use shadowmem::RegFile;

/// For each instruction of a straight-line run, from the registers each
/// names or uses (`used`, [`crate::instrument::vectors_dead_before`]'s):
/// the xmm registers 0–15 held before it that must be put back (those it
/// names or uses; all sixteen before one that must not be passed with
/// registers held), and those that the instructions after it name or use.
pub(super) fn vectors_named(run: &[Instruction], used: &[u16]) -> Vec<(u16, u16)> {
    let mut out = vec![(0u16, 0u16); run.len()];
    let mut after = 0u16;
    for (i, (insn, &named)) in run.iter().zip(used).enumerate().rev() {
        out[i] = (if releases_all(insn) { u16::MAX } else { named }, after);
        after |= named;
    }
    out
}

/// Whether the translation must put every held register back before
/// `insn`: it leaves the straight line (or the block) or may read or
/// write registers it does not name.
fn releases_all(insn: &Instruction) -> bool {
    insn.flow_control() != FlowControl::Next
        || matches!(
            insn.code(),
            Code::Syscall | Code::Cpuid | Code::Wrgsbase_r32 | Code::Wrgsbase_r64
        )
        || matches!(
            semantics(insn.code()),
            Some(Semantics::Special(SpecialKind::StateSave)) | None
        )
        || matches!(insn.mnemonic(), Mnemonic::Vzeroupper | Mnemonic::Vzeroall)
}

/// A tangent entry ([`Translator::tangent_in`]): valid; a scalar double's
/// (8 bytes, zeros above), a scalar float's (4) or 16 bytes; the guest
/// register in the low bits.
const ENTRY: u8 = 0x40;
const ENTRY_DOUBLE: u8 = 0x20;
const ENTRY_WHOLE: u8 = 0x10;

fn entry(n: u32, scalar: bool, double: bool) -> u8 {
    ENTRY
        | match (scalar, double) {
            (false, _) => ENTRY_WHOLE,
            (true, true) => ENTRY_DOUBLE,
            (true, false) => 0,
        }
        | n as u8
}

/// The slot of guest xmm `n` while it is held.
fn slot(layout_held: u32, n: u32) -> MemoryOperand {
    gs_operand(layout_held + 16 * n)
}

impl Translator<'_> {
    /// Before the code of the instruction being translated: puts back the
    /// held registers it names, or all of them where it must not be passed
    /// with registers held.
    pub(super) fn release_held_for_insn(&mut self) {
        if self.held == 0 {
            return;
        }
        // (All sixteen where `insn` must not be passed with registers
        // held, or lies beyond the run.)
        let named = self
            .vectors_named
            .get(self.index)
            .map_or(u16::MAX, |&(named, _)| named);
        self.release_held(named);
    }

    /// Puts the guest's values of the held registers in `regs` back (the
    /// map entry from here on says so).
    pub(super) fn release_held(&mut self, regs: u16) {
        let back = self.held & regs;
        if back == 0 {
            return;
        }
        self.copy_held(back, false);
        self.held &= !back;
        self.drop_tangents_in(back);
        self.mark_held();
    }

    /// Holds the registers of `regs` not held yet: their guest values go
    /// to their slots (the map entry from here on says so).
    pub(super) fn hold(&mut self, regs: u16) {
        let new = regs & !self.held;
        if new == 0 {
            return;
        }
        self.copy_held(new, true);
        self.held |= new;
        self.mark_held();
    }

    /// Copies the registers of `regs` to their slots (`to_slots`) or back.
    fn copy_held(&mut self, regs: u16, to_slots: bool) {
        let base = self.layout.held_xmm;
        for n in (0..16).filter(|n| regs & 1 << n != 0) {
            let (r, m) = (Register::XMM0 + n, slot(base, n));
            self.asm(if to_slots {
                Instruction::with2(Code::Movdqu_xmmm128_xmm, m, r)
            } else {
                Instruction::with2(Code::Movdqu_xmm_xmmm128, r, m)
            });
        }
    }

    /// The slot where a temporary `n` is saved around one instruction's
    /// code while the block holds registers (the slot it has when held).
    pub(super) fn held_slot(&self, n: u32) -> MemoryOperand {
        slot(self.layout.held_xmm, n)
    }

    /// Registers no instruction after this one names: the best to hold.
    pub(super) fn unnamed_after(&self) -> u16 {
        !self
            .vectors_named
            .get(self.index)
            .map_or(u16::MAX, |&(_, after)| after)
    }

    /// An inside entry here with the current held set, the rest as the
    /// latest entry's (before the block's first entry there is nothing to
    /// mark: no instruction has run).
    fn mark_held(&mut self) {
        if let Some(last) = self.insn_map.last().copied() {
            self.insn_map.push(InsnMapEntry {
                cache_off: self.e.offset() as u32,
                boundary: false,
                flags_dead: false,
                held: self.held,
                ..last
            });
        }
    }

    /// The held register that holds guest xmm `n`'s tangent as the load
    /// of a `scalar` (`double` or float) or a packed operation from the
    /// shadow register file would: a scalar's low 8 or 4 bytes, then
    /// zeros; a packed operation's 16 bytes.
    pub(super) fn cached_tangent(&self, n: u32, scalar: bool, double: bool) -> Option<u32> {
        let want = entry(n, scalar, double);
        (0..16u32).find(|&h| self.tangent_in[h as usize] == want && self.held & 1 << h != 0)
    }

    /// Held register `h` holds guest xmm `n`'s tangent (as
    /// [`Self::cached_tangent`] describes), written through to the file.
    pub(super) fn set_tangent_entry(&mut self, h: u32, n: u32, scalar: bool, double: bool) {
        if self.held & 1 << h != 0 {
            self.tangent_in[h as usize] = entry(n, scalar, double);
        }
    }

    /// A load into the vector register whose shadow starts at file
    /// offset `off` (`len` bytes, zeros after them to 16) went through
    /// held register `h`: it holds that register's tangent.
    pub(super) fn loaded_tangent(&mut self, h: u32, off: u32, len: u8) {
        if let Some(n) = (0..16).find(|&n| RegFile::vec_offset(n, 0) as u32 == off) {
            self.set_tangent_entry(h, n as u32, len < 16, len == 8);
        }
    }

    /// The registers (bit h) that hold a tangent.
    pub(super) fn tangent_registers(&self) -> u16 {
        (0..16).fold(0, |m, h| {
            m | if self.tangent_in[h] != 0 { 1 << h } else { 0 }
        })
    }

    /// Registers `regs` (bit h) no longer hold tangents.
    pub(super) fn drop_tangents_in(&mut self, regs: u16) {
        for h in 0..16 {
            if regs & 1 << h != 0 {
                self.tangent_in[h] = 0;
            }
        }
    }

    /// The tangents of guest registers `guests` (bit n) may change: no
    /// register holds them any more.
    pub(super) fn drop_tangents_of(&mut self, guests: u16) {
        for e in &mut self.tangent_in {
            if *e != 0 && guests & 1 << (*e & 0xf) != 0 {
                *e = 0;
            }
        }
    }

    /// Before an instruction's inline code (`plan`): the tangents of the
    /// registers it names may change (dot arithmetic keeps its own
    /// account); code of plans that may use vector registers otherwise
    /// (other modes' inline arithmetic, masked moves) drops them all.
    pub(super) fn tangents_before(&mut self, plan: &Plan) {
        let named = self
            .vectors_named
            .get(self.index)
            .map_or(u16::MAX, |&(named, _)| named);
        // (Vector moves and shuffles drop what their scratch registers
        // held themselves.)
        let followed = plan.general_registers_and_memory_only()
            || matches!(
                plan,
                Plan::ClearRegisters(_)
                    | Plan::VectorMove { .. }
                    | Plan::ShadowShuffle
                    | Plan::AllPassive { .. }
                    | Plan::Runtime
            );
        match plan {
            Plan::DotArithmetic(a) if !a.vex => {}
            _ if followed => self.drop_tangents_of(named),
            _ => self.tangent_in = [0; 16],
        }
    }

    /// After a runtime entry that put the held registers back and held
    /// them again: the tangents of `entries` (the account before it) into
    /// their registers again, from the file, which is current.
    pub(super) fn reload_tangents(&mut self, entries: [u8; 16]) {
        for h in 0..16u32 {
            let e = entries[h as usize];
            if e == 0 || self.held & 1 << h == 0 {
                continue;
            }
            let n = u32::from(e & 0xf);
            let file =
                gs_operand(self.layout.shadow_regs + RegFile::vec_offset(n as usize, 0) as u32);
            let code = if e & ENTRY_WHOLE != 0 {
                Code::Movdqu_xmm_xmmm128
            } else if e & ENTRY_DOUBLE != 0 {
                Code::Movsd_xmm_xmmm64
            } else {
                Code::Movss_xmm_xmmm32
            };
            self.asm(Instruction::with2(code, Register::XMM0 + h, file));
            self.tangent_in[h as usize] = e;
        }
    }
}
