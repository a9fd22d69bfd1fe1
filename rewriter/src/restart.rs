//! Whether a thread interrupted inside a guest instruction's inserted code
//! may be sent back to the instruction's start.
//!
//! An asynchronous signal must reach the guest between two instructions.
//! One that arrives inside the code a translation inserted before an
//! instruction (its AD code, address computations, spills) is delivered at
//! the next boundary; reaching it by single steps costs a debug trap per
//! instruction, which some hosts make very slow (tens of µs each in the
//! virtual machines this was measured on: a program under a 50 µs timer ran
//! 20x slower in dot mode than without the timer).
//!
//! Often the code run so far has changed nothing that running it again
//! would not recompute: it loaded, computed into temporaries and saved
//! registers in their spill slots, but wrote no shadow, no tape, no guest
//! register the runtime cannot put back. Then the thread may as well be
//! where the instruction's code starts, and the signal is delivered there
//! at once. [`restartable`] decides this from the code itself, by a short
//! list of instruction forms whose effects it knows, and says no to
//! everything else: a wrong yes would run part of an instruction's AD code
//! twice (a tangent added twice, a shadow recorded over itself), so every
//! doubt is a no, and the thread single-steps as before.
//!
//! It runs in signal context: no allocation, only the decoder.

use crate::layout::ContextLayout;
use crate::translate::{InsnMapEntry, SPILLS_RAX, SPILLS_RCX, SPILLS_RDX, SPILLS_SCRATCH};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register};

/// Where the guest registers are when the code is abandoned: the spill
/// bits and scratch register for the instruction's map entry, to restore
/// as after a fault there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restart {
    /// [`InsnMapEntry::spills`]: the registers the abandoned code saved in
    /// their slots (and may have changed since).
    pub spills: u8,
    /// [`InsnMapEntry::scratch`] with [`SPILLS_SCRATCH`].
    pub scratch: u8,
}

/// What an instruction form does, as far as [`restartable`] knows it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Writes its first operand and nothing else.
    Writes,
    /// Writes its first operand and the status flags.
    WritesWithFlags,
    /// Writes the status flags only.
    Compares,
    /// Changes nothing.
    Nothing,
}

/// The forms inserted code uses before its first lasting effect; `None`
/// for every other instruction (not restartable).
fn form(m: Mnemonic) -> Option<Form> {
    use Mnemonic::*;
    Some(match m {
        Add | Sub | And | Or | Xor | Shl | Shr | Sar | Rol | Ror | Inc | Dec | Neg | Btc | Bts
        | Btr => Form::WritesWithFlags,
        Cmp | Test | Bt | Ucomisd | Ucomiss | Vucomisd | Vucomiss | Comisd | Comiss | Vcomisd
        | Vcomiss | Ptest | Vptest | Kortestb | Kortestw | Kortestd | Kortestq | Ktestb
        | Ktestw | Ktestd | Ktestq => Form::Compares,
        Nop => Form::Nothing,
        Mov | Movzx | Movsx | Movsxd | Lea | Not | Movd | Movq | Movsd | Movss | Movapd
        | Movaps | Movupd | Movups | Movdqa | Movdqu | Movhpd | Movlpd | Vmovd | Vmovq | Vmovsd
        | Vmovss | Vmovapd | Vmovaps | Vmovupd | Vmovups | Vmovdqa | Vmovdqu | Vmovdqa32
        | Vmovdqa64 | Vmovdqu8 | Vmovdqu16 | Vmovdqu32 | Vmovdqu64 | Vmovhpd | Vmovlpd
        | Vmovddup | Vpbroadcastq | Vpbroadcastd | Vbroadcastsd | Vbroadcastss | Vaddsd
        | Vaddss | Vaddpd | Vaddps | Vsubsd | Vsubss | Vsubpd | Vsubps | Vmulsd | Vmulss
        | Vmulpd | Vmulps | Vdivsd | Vdivss | Vdivpd | Vdivps | Vsqrtsd | Vsqrtss | Vsqrtpd
        | Vsqrtps | Vminsd | Vminss | Vminpd | Vminps | Vmaxsd | Vmaxss | Vmaxpd | Vmaxps
        | Vfmadd132sd | Vfmadd213sd | Vfmadd231sd | Vfmadd132pd | Vfmadd213pd | Vfmadd231pd
        | Vfmadd132ss | Vfmadd213ss | Vfmadd231ss | Vfmadd132ps | Vfmadd213ps | Vfmadd231ps
        | Vfnmadd132sd | Vfnmadd213sd | Vfnmadd231sd | Vfnmadd132pd | Vfnmadd213pd
        | Vfnmadd231pd | Vfnmadd132ss | Vfnmadd213ss | Vfnmadd231ss | Vfnmadd132ps
        | Vfnmadd213ps | Vfnmadd231ps | Vfmsub132sd | Vfmsub213sd | Vfmsub231sd | Vfmsub132pd
        | Vfmsub213pd | Vfmsub231pd | Vfnmsub132sd | Vfnmsub213sd | Vfnmsub231sd | Vfnmsub132pd
        | Vfnmsub213pd | Vfnmsub231pd | Vpxor | Vpxord | Vpxorq | Vxorpd | Vxorps | Vpand
        | Vpandd | Vpandq | Vandpd | Vandps | Vandnpd | Vandnps | Vpor | Vpord | Vporq | Vorpd
        | Vorps | Vpternlogd | Vpternlogq | Vblendmpd | Vblendmps | Vpblendmq | Vpblendmd
        | Vunpcklpd | Vunpckhpd | Vshufpd | Vpermilpd | Vcvtss2sd | Vcvtsd2ss | Vptestmq
        | Vptestmd | Vptestnmq | Vptestnmd | Vcmpsd | Vcmpss | Vcmppd | Vcmpps | Vfpclasssd
        | Vfpclasspd | Vfpclassss | Vfpclassps | Kmovb | Kmovw | Kmovd | Kmovq | Kandb | Kandw
        | Kandd | Kandq | Kandnb | Kandnw | Kandnd | Kandnq | Korb | Korw | Kord | Korq | Kxorb
        | Kxorw | Kxord | Kxorq | Kxnorb | Kxnorw | Kxnord | Kxnorq | Knotb | Knotw | Knotd
        | Knotq | Kshiftlb | Kshiftlw | Kshiftld | Kshiftlq | Kshiftrb | Kshiftrw | Kshiftrd
        | Kshiftrq => Form::Writes,
        _ => return None,
    })
}

/// The general register (number) a spill slot of `layout` holds, with its
/// spill bit; `rax`, `rcx` and `rdx` have their own slots, the scratch
/// slot holds whichever register the code stores there.
fn spill_slot(layout: &ContextLayout, disp: u32, reg: u8) -> Option<u8> {
    let own = [
        (layout.spill_rax, 0, SPILLS_RAX),
        (layout.spill_rcx, 1, SPILLS_RCX),
        (layout.spill_rdx, 2, SPILLS_RDX),
    ];
    for (slot, r, bit) in own {
        if disp == slot {
            return (reg == r).then_some(bit);
        }
    }
    (disp == layout.spill_scratch && reg != 4).then_some(SPILLS_SCRATCH)
}

/// Record mode's address of the tape block at the thread's next index
/// (`Translator::next_block_address`: `mov rdx, gs:[next]; mov rcx, rdx;
/// sub rcx, gs:[base]; shl rcx, 5; add rcx, gs:[buf]`, the chunk's fields
/// at the start of the tool area), followed through the code: `tape` while
/// `rcx` holds it. That block is not the tape's yet — the index is
/// published (`add gs:[next], n`, a lasting effect) only after it is
/// written — so writing it again after a restart, at whatever the next
/// index is then, changes nothing anyone has read.
#[derive(Default)]
struct TapeChain {
    /// How much of the sequence has run (0: none).
    step: u8,
    tape: bool,
}

impl TapeChain {
    fn follow(&mut self, insn: &Instruction, layout: &ContextLayout) {
        use Mnemonic::*;
        let t = layout.tool_area;
        let reg =
            |k: u32, r: Register| insn.op_kind(k) == OpKind::Register && insn.op_register(k) == r;
        let slot = |d: u32| insn.op_kind(1) == OpKind::Memory && is_gs_slot(insn, d);
        let next = match (self.step, insn.mnemonic()) {
            (_, Mov) if reg(0, Register::RDX) && slot(t + 16) => 1,
            (1, Mov) if reg(0, Register::RCX) && reg(1, Register::RDX) => 2,
            (2, Sub) if reg(0, Register::RCX) && slot(t + 8) => 3,
            (3, Shl)
                if reg(0, Register::RCX)
                    && insn.op_kind(1) == OpKind::Immediate8
                    && insn.immediate8() == 5 =>
            {
                4
            }
            (4, Add) if reg(0, Register::RCX) && slot(t) => {
                self.tape = true;
                0
            }
            _ => {
                let writes = |r: Register| {
                    insn.op_kind(0) == OpKind::Register
                        && insn.op_register(0).full_register() == r
                        && !matches!(form(insn.mnemonic()), Some(Form::Compares | Form::Nothing))
                };
                if writes(Register::RCX) {
                    self.tape = false;
                }
                match self.step {
                    1 if !writes(Register::RDX) && !writes(Register::RCX) => 1,
                    _ => 0,
                }
            }
        };
        if next == 2 {
            self.tape = false;
        }
        self.step = next;
    }
}

/// The memory operand is `gs:[disp]`, a thread-context field.
fn is_gs_field(insn: &Instruction) -> bool {
    insn.segment_prefix() == Register::GS
        && insn.memory_base() == Register::None
        && insn.memory_index() == Register::None
}

/// The memory operand is the thread-context field at `disp`.
fn is_gs_slot(insn: &Instruction, disp: u32) -> bool {
    is_gs_field(insn) && insn.memory_displacement64() == u64::from(disp)
}

/// A store into the tape block (blocks) at `[rcx + d]`, within the four
/// blocks an instruction writes at most.
fn is_tape_block(insn: &Instruction) -> bool {
    insn.memory_base() == Register::RCX
        && insn.memory_index() == Register::None
        && matches!(insn.segment_prefix(), Register::None | Register::DS)
        && insn.memory_displacement64() < 4 * 32
}

/// Whether the inserted code in `code` (the translation's bytes from
/// `entry`'s start, at cache address `ip`, up to where the thread was
/// interrupted) may be abandoned and run again from the start, the thread
/// put back at the boundary `entry` maps; if so, where the guest registers
/// it changed are kept. Yes only when every instruction in `code`:
///
/// - falls through, or is a conditional branch to somewhere else (not
///   taken, then: the translator ends a boundary's range wherever another
///   branch comes back into it, so the path taken is the bytes in order),
///   and has no `rep` or `lock` prefix;
/// - is of a form the module lists, so that its only effects are its first
///   operand and perhaps the flags;
/// - writes the flags only where the guest's are dead before the
///   instruction ([`InsnMapEntry::flags_dead`]);
/// - writes a general register only after storing it in its spill slot
///   (a store to a spill slot must hold its own register, not changed
///   since it was stored unless loaded back from there), and memory
///   only there and in record mode's tape block at the thread's next
///   index before that index is published (see `TapeChain`): no shadow, no
///   published tape, no other context field, no borrowed register's save
///   area;
/// - writes a vector register only among `xmm16`–`xmm31`, and of the
///   tangent cache's `xmm16`–`xmm28` only those not newer than the shadow
///   register file at the boundary ([`InsnMapEntry::tangents`]; a clean one
///   only holds a copy), or a mask register.
///
/// `entry` must be a boundary entry. Runs in signal context: decodes on
/// the stack, allocates nothing.
pub fn restartable(
    code: &[u8],
    ip: u64,
    entry: &InsnMapEntry,
    layout: &ContextLayout,
) -> Option<Restart> {
    if !entry.boundary
        || entry.spills & !(SPILLS_RAX | SPILLS_RCX | SPILLS_RDX | SPILLS_SCRATCH) != 0
    {
        return None;
    }
    let mut decoder = Decoder::with_ip(64, code, ip, DecoderOptions::NONE);
    let mut chain = TapeChain::default();
    let mut saved = 0u16; // general registers stored in their slots
    let mut changed = 0u16; // of those, the ones changed since
    let mut restart = Restart {
        spills: 0,
        scratch: 0,
    };
    while decoder.can_decode() {
        let insn = decoder.decode();
        if insn.is_invalid()
            || insn.has_rep_prefix()
            || insn.has_repne_prefix()
            || insn.has_lock_prefix()
        {
            return None;
        }
        match insn.flow_control() {
            FlowControl::Next => {}
            // Not taken (the thread is past it), unless it leads back into
            // the code run so far.
            FlowControl::ConditionalBranch
                if !(ip..=ip + code.len() as u64).contains(&insn.near_branch_target()) =>
            {
                continue;
            }
            _ => return None,
        }
        let form = form(insn.mnemonic())?;
        let tape_block = chain.tape;
        chain.follow(&insn, layout);
        if matches!(form, Form::WritesWithFlags | Form::Compares) && !entry.flags_dead {
            return None;
        }
        if !matches!(form, Form::Writes | Form::WritesWithFlags) {
            continue;
        }
        match insn.op0_kind() {
            OpKind::Register => {
                let r = insn.op0_register();
                if r.is_gpr() {
                    let n = r.full_register().number();
                    if saved & 1 << n == 0 {
                        return None;
                    }
                    // Loaded back from its own slot it is the guest's
                    // again; anything else changes it.
                    let reload = insn.mnemonic() == Mnemonic::Mov
                        && r.is_gpr64()
                        && insn.op1_kind() == OpKind::Memory
                        && is_gs_field(&insn)
                        && u32::try_from(insn.memory_displacement64())
                            .ok()
                            .and_then(|d| spill_slot(layout, d, n as u8))
                            .is_some_and(|bit| bit != SPILLS_SCRATCH || restart.scratch == n as u8);
                    if reload {
                        changed &= !(1 << n);
                    } else {
                        changed |= 1 << n;
                    }
                } else if r.is_xmm() || r.is_ymm() || r.is_zmm() {
                    let n = r.number();
                    if n < 16 || n <= 28 && entry.tangents & 1 << (n - 16) != 0 {
                        return None;
                    }
                } else if !r.is_k() {
                    return None;
                }
            }
            OpKind::Memory if tape_block && is_tape_block(&insn) => {}
            OpKind::Memory => {
                // Only `mov gs:[slot], reg64` with the slot's own register.
                let plain_slot = insn.mnemonic() == Mnemonic::Mov
                    && is_gs_field(&insn)
                    && insn.op1_kind() == OpKind::Register
                    && insn.op1_register().is_gpr64();
                if !plain_slot {
                    return None;
                }
                let reg = insn.op1_register().number() as u8;
                let disp = insn.memory_displacement64();
                let bit = u32::try_from(disp)
                    .ok()
                    .and_then(|d| spill_slot(layout, d, reg))?;
                if bit == SPILLS_SCRATCH {
                    if restart.spills & SPILLS_SCRATCH != 0 && restart.scratch != reg {
                        return None; // the slot held another register before
                    }
                    restart.scratch = reg;
                }
                if changed & 1 << reg != 0 {
                    return None; // the slot would lose the guest's value
                }
                if saved & 1 << reg == 0 {
                    saved |= 1 << reg;
                    restart.spills |= bit;
                }
            }
            _ => return None,
        }
    }
    // The decoder must have stopped exactly at the interrupted address,
    // not inside an instruction cut off by it.
    (decoder.position() == code.len()).then_some(restart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::code_asm::*;

    const IP: u64 = 0x2000_0000;

    fn bytes(build: impl FnOnce(&mut CodeAssembler)) -> Vec<u8> {
        let mut a = CodeAssembler::new(64).unwrap();
        a.set_prefer_vex(false); // EVEX: xmm16 and up
        build(&mut a);
        a.assemble(IP).unwrap()
    }

    fn entry(flags_dead: bool, tangents: u16) -> InsnMapEntry {
        InsnMapEntry {
            cache_off: 0,
            guest_pc: 0x401000,
            boundary: true,
            spills: SPILLS_RAX,
            stack_bias: 0,
            scratch: 0,
            tangents,
            held: 0,
            flags_dead,
        }
    }

    fn gs(disp: u32) -> AsmMemoryOperand {
        qword_ptr(disp as u64).gs()
    }

    /// Dot mode's cached load, cut before the guest's `movsd`.
    fn cached_load(a: &mut CodeAssembler) {
        let l = ContextLayout::EXAMPLE;
        a.mov(gs(l.spill_rax), rax).unwrap();
        a.lea(rax, ptr(rcx + rax * 8)).unwrap();
        a.xor(rax, gs(l.shadow_mask)).unwrap();
        a.vmovsd(xmm20, ptr(rax + 0x765_4000)).unwrap();
        a.mov(rax, gs(l.spill_rax)).unwrap();
    }

    #[test]
    fn a_cached_load_restarts_with_rax_in_its_slot() {
        let code = bytes(cached_load);
        let r = restartable(&code, IP, &entry(true, 0), &ContextLayout::EXAMPLE);
        assert_eq!(
            r,
            Some(Restart {
                spills: SPILLS_RAX,
                scratch: 0
            })
        );
        // Every prefix that ends between instructions is restartable too;
        // none that ends inside one is.
        let mut d = Decoder::with_ip(64, &code, IP, DecoderOptions::NONE);
        let mut ends = vec![0];
        while d.can_decode() {
            let _ = d.decode();
            ends.push(d.position());
        }
        for cut in 0..code.len() {
            let r = restartable(&code[..cut], IP, &entry(true, 0), &ContextLayout::EXAMPLE);
            assert_eq!(r.is_some(), ends.contains(&cut), "cut at {cut}");
        }
    }

    #[test]
    fn live_flags_forbid_what_writes_them() {
        let code = bytes(cached_load);
        assert_eq!(
            restartable(&code, IP, &entry(false, 0), &ContextLayout::EXAMPLE),
            None
        );
        // A store to the slot and a load alone do not touch the flags.
        let store = bytes(|a| {
            a.mov(gs(ContextLayout::EXAMPLE.spill_rax), rax).unwrap();
            a.lea(rax, ptr(rcx + 8)).unwrap();
        });
        assert!(restartable(&store, IP, &entry(false, 0), &ContextLayout::EXAMPLE).is_some());
    }

    #[test]
    fn a_register_changed_before_its_spill_is_not_restored() {
        let code = bytes(|a| {
            a.lea(rax, ptr(rcx + 8)).unwrap();
            a.mov(gs(ContextLayout::EXAMPLE.spill_rax), rax).unwrap();
        });
        assert_eq!(
            restartable(&code, IP, &entry(true, 0), &ContextLayout::EXAMPLE),
            None
        );
        // rbx has no slot of its own, and a slot holds only its register.
        let other = bytes(|a| {
            a.mov(gs(ContextLayout::EXAMPLE.spill_rax), rbx).unwrap();
            a.mov(rbx, 1u64).unwrap();
        });
        assert_eq!(
            restartable(&other, IP, &entry(true, 0), &ContextLayout::EXAMPLE),
            None
        );
    }

    #[test]
    fn a_changed_register_is_not_stored_over_its_guest_value() {
        let l = ContextLayout::EXAMPLE;
        // Stored, changed, stored again: the slot no longer holds the
        // guest's value.
        let twice = bytes(|a| {
            a.mov(gs(l.spill_rax), rax).unwrap();
            a.lea(rax, ptr(rcx + 8)).unwrap();
            a.mov(gs(l.spill_rax), rax).unwrap();
        });
        assert_eq!(restartable(&twice, IP, &entry(true, 0), &l), None);
        // Loaded back between the two, it is the guest's again.
        let reloaded = bytes(|a| {
            a.mov(gs(l.spill_rax), rax).unwrap();
            a.lea(rax, ptr(rcx + 8)).unwrap();
            a.mov(rax, gs(l.spill_rax)).unwrap();
            a.mov(gs(l.spill_rax), rax).unwrap();
            a.lea(rax, ptr(rcx + 16)).unwrap();
        });
        assert!(restartable(&reloaded, IP, &entry(true, 0), &l).is_some());
    }

    #[test]
    fn the_scratch_slot_names_its_register() {
        let code = bytes(|a| {
            a.mov(gs(ContextLayout::EXAMPLE.spill_scratch), r11)
                .unwrap();
            a.mov(r11, 0x1234_5678_9abc_u64).unwrap();
            a.vmovsd(xmm29, ptr(r11)).unwrap();
        });
        let r = restartable(&code, IP, &entry(true, 0), &ContextLayout::EXAMPLE);
        assert_eq!(
            r,
            Some(Restart {
                spills: SPILLS_SCRATCH,
                scratch: 11
            })
        );
    }

    #[test]
    fn lasting_effects_are_not_restartable() {
        let l = ContextLayout::EXAMPLE;
        let cases: Vec<(&str, Vec<u8>)> = vec![
            (
                "store to shadow memory",
                bytes(|a| {
                    a.mov(gs(l.spill_rax), rax).unwrap();
                    a.lea(rax, ptr(rcx + 8)).unwrap();
                    a.vmovsd(ptr(rax + 0x765_4000), xmm20).unwrap();
                }),
            ),
            (
                "store to the shadow register file",
                bytes(|a| {
                    a.vmovdqu64(xmmword_ptr(u64::from(l.shadow_regs)).gs(), xmm16)
                        .unwrap();
                }),
            ),
            (
                "bump of the tape's next index",
                bytes(|a| {
                    a.add(gs(l.tool_area + 16), 1).unwrap();
                }),
            ),
            (
                "a guest vector register",
                bytes(|a| {
                    a.movsd_2(xmm0, ptr(rcx)).unwrap();
                }),
            ),
            (
                "a dirty cached tangent",
                bytes(|a| {
                    a.vaddsd(xmm21, xmm21, xmm17).unwrap();
                }),
            ),
            (
                "a branch",
                bytes(|a| {
                    let mut l1 = a.create_label();
                    a.vucomisd(xmm29, xmm31).unwrap();
                    a.je(l1).unwrap();
                    a.set_label(&mut l1).unwrap();
                    a.nop().unwrap();
                }),
            ),
            (
                "an unknown form",
                bytes(|a| {
                    a.pushfq().unwrap();
                }),
            ),
            (
                "a saved vector register",
                bytes(|a| {
                    a.vmovdqu64(xmmword_ptr(u64::from(l.vec_tmp)).gs(), xmm29)
                        .unwrap();
                }),
            ),
        ];
        for (what, code) in cases {
            let e = entry(true, 1 << 5); // xmm5's tangent (xmm21) is dirty
            assert_eq!(restartable(&code, IP, &e, &l), None, "{what}");
        }
        // A clean cached tangent and the temporaries may change.
        let clean = bytes(|a| {
            a.vmovsd(xmm21, ptr(rsp + 8)).unwrap();
            a.vmulsd(xmm29, xmm17, xmm1).unwrap();
            a.vptestmq(k1, xmm16, xmm16).unwrap();
        });
        assert!(restartable(&clean, IP, &entry(true, 0), &l).is_some());
    }

    #[test]
    fn a_branch_not_taken_elsewhere_is_passed() {
        let l = ContextLayout::EXAMPLE;
        // Record mode's start: spills, the chunk's room, an operand check.
        let code = bytes(|a| {
            a.mov(gs(l.spill_rax), rax).unwrap();
            a.mov(gs(l.spill_rcx), rcx).unwrap();
            a.mov(gs(l.spill_rdx), rdx).unwrap();
            a.mov(rdx, gs(l.tool_area + 16)).unwrap();
            a.lea(rax, ptr(rdx + 1)).unwrap();
            a.cmp(rax, gs(l.tool_area + 24)).unwrap();
            a.ja(IP + 0x1000).unwrap();
            a.mov(eax, dword_ptr(u64::from(l.shadow_regs)).gs())
                .unwrap();
            a.cmp(rax, rdx).unwrap();
            a.jae(IP + 0x1040).unwrap();
        });
        let r = restartable(&code, IP, &entry(true, 0), &l);
        assert_eq!(
            r,
            Some(Restart {
                spills: SPILLS_RAX | SPILLS_RCX | SPILLS_RDX,
                scratch: 0
            })
        );
        // A jump, and a branch back into the code run, are not passed.
        let jump = bytes(|a| {
            a.nop().unwrap();
            a.jmp(IP + 0x1000).unwrap();
        });
        assert_eq!(restartable(&jump, IP, &entry(true, 0), &l), None);
        let back = bytes(|a| {
            a.nop().unwrap();
            a.jne(IP).unwrap();
        });
        assert_eq!(restartable(&back, IP, &entry(true, 0), &l), None);
    }

    /// Record mode's block for a binary instruction, up to `upto` of its
    /// parts: the chain to the block's address, its writes, the result's
    /// index into the shadow, the published index.
    fn record_block(upto: usize) -> Vec<u8> {
        let l = ContextLayout::EXAMPLE;
        let t = u64::from(l.tool_area);
        bytes(|a| {
            a.mov(gs(l.spill_rax), rax).unwrap();
            a.mov(gs(l.spill_rcx), rcx).unwrap();
            a.mov(gs(l.spill_rdx), rdx).unwrap();
            a.mov(rdx, qword_ptr(t + 16).gs()).unwrap();
            a.mov(rcx, rdx).unwrap();
            a.sub(rcx, qword_ptr(t + 8).gs()).unwrap();
            a.shl(rcx, 5).unwrap();
            a.add(rcx, qword_ptr(t).gs()).unwrap();
            if upto >= 1 {
                a.mov(eax, dword_ptr(u64::from(l.shadow_regs)).gs())
                    .unwrap();
                a.mov(qword_ptr(rcx), rax).unwrap();
                a.or(rax, qword_ptr(rcx)).unwrap();
                a.movsd_2(qword_ptr(rcx + 0x10), xmm1).unwrap();
                a.btc(qword_ptr(rcx + 0x18), 0x3f).unwrap();
            }
            if upto >= 2 {
                a.mov(qword_ptr(u64::from(l.shadow_regs + 0x40)).gs(), rdx)
                    .unwrap();
            }
            if upto >= 3 {
                a.add(qword_ptr(t + 16).gs(), 1).unwrap();
            }
        })
    }

    #[test]
    fn an_unpublished_tape_block_may_be_written_again() {
        let l = ContextLayout::EXAMPLE;
        let all = SPILLS_RAX | SPILLS_RCX | SPILLS_RDX;
        let e = entry(true, 0);
        for (upto, want) in [(0, true), (1, true), (2, false), (3, false)] {
            let r = restartable(&record_block(upto), IP, &e, &l);
            assert_eq!(r.is_some(), want, "upto {upto}");
            if want {
                assert_eq!(r.unwrap().spills, all);
            }
        }
        // Without the chain, or with rcx changed after it, `[rcx]` is
        // anybody's memory.
        let bare = bytes(|a| {
            a.mov(gs(l.spill_rax), rax).unwrap();
            a.mov(qword_ptr(rcx), rax).unwrap();
        });
        assert_eq!(restartable(&bare, IP, &e, &l), None);
        let mut moved = record_block(0);
        moved.extend(bytes(|a| {
            a.add(rcx, 64).unwrap();
            a.mov(qword_ptr(rcx), rax).unwrap();
        }));
        assert_eq!(restartable(&moved, IP, &e, &l), None);
        // Beyond four blocks is not the instruction's.
        let mut far = record_block(0);
        far.extend(bytes(|a| {
            a.mov(qword_ptr(rcx + 0x80), rax).unwrap();
        }));
        assert_eq!(restartable(&far, IP, &e, &l), None);
    }

    #[test]
    fn only_boundaries_restart() {
        let code = bytes(cached_load);
        let mut e = entry(true, 0);
        e.boundary = false;
        assert_eq!(restartable(&code, IP, &e, &ContextLayout::EXAMPLE), None);
        let mut e = entry(true, 0);
        e.spills |= crate::translate::SPILLS_RAX_STACK;
        assert_eq!(restartable(&code, IP, &e, &ContextLayout::EXAMPLE), None);
    }
}
