//! `fxsave`/`xsave*` and `fxrstor`/`xrstor*`: the shadows of the saved
//! registers go to (and come back from) the shadow of the save area, at the
//! same offsets as the data. glibc's lazy-binding trampoline saves and
//! restores every vector register this way around each first call of a
//! PLT entry; without this rule, arguments would lose their indices there.

use super::guest::{effective_address, read_mem, x87_top};
use crate::context::{reg, ThreadCtx};
use iced_x86::{Instruction, Mnemonic};
use std::sync::OnceLock;

/// Per state component: (offset in the standard format, size, 64-byte
/// aligned in the compacted format).
fn components() -> &'static [(usize, usize, bool); 8] {
    static C: OnceLock<[(usize, usize, bool); 8]> = OnceLock::new();
    C.get_or_init(|| {
        core::array::from_fn(|i| match i {
            0 => (0, 160, false),
            1 => (160, 256, false),
            _ => {
                let r = core::arch::x86_64::__cpuid_count(0xd, i as u32);
                (r.ebx as usize, r.eax as usize, r.ecx & 2 != 0)
            }
        })
    })
}

/// Where component `c` lives in an area with the given format.
fn offset(c: usize, compact: Option<u64>) -> usize {
    let comps = components();
    let Some(xcomp) = compact else {
        return comps[c].0;
    };
    if c < 2 {
        return comps[c].0;
    }
    let mut at: usize = 576;
    for (i, &(_, size, aligned)) in comps.iter().enumerate().take(c).skip(2) {
        if xcomp & (1 << i) != 0 {
            if aligned {
                at = at.next_multiple_of(64);
            }
            at += size;
        }
    }
    if comps[c].2 {
        at = at.next_multiple_of(64);
    }
    at
}

/// Copies one register's shadow bytes to or from the area's shadow.
fn transfer(
    ctx: &mut ThreadCtx,
    save: bool,
    area: u64,
    off: usize,
    regfile_off: usize,
    len: usize,
) {
    let addr = area + off as u64;
    if !shadowmem::is_app_range(addr, addr + len as u64) {
        return;
    }
    let sh = shadowmem::shadow_of(addr) as *mut u8;
    let rf = &mut ctx.shadow as *mut shadowmem::RegFile as *mut u8;
    // SAFETY: `sh` is the mapped shadow of application memory; `rf` points
    // into the register file and regfile_off + len stays inside it.
    unsafe {
        if save {
            core::ptr::copy_nonoverlapping(rf.add(regfile_off), sh, len);
        } else {
            core::ptr::copy_nonoverlapping(sh, rf.add(regfile_off), len);
        }
    }
}

fn zero(ctx: &mut ThreadCtx, regfile_off: usize, len: usize) {
    let rf = &mut ctx.shadow as *mut shadowmem::RegFile as *mut u8;
    // SAFETY: inside the register file (offsets from RegFile).
    unsafe { core::ptr::write_bytes(rf.add(regfile_off), 0, len) };
}

/// Applies a save or restore.
pub fn apply(ctx: &mut ThreadCtx, insn: &Instruction) {
    let Some(area) = effective_address(ctx, insn, 0) else {
        return;
    };
    let m = insn.mnemonic();
    let legacy_only = matches!(
        m,
        Mnemonic::Fxsave | Mnemonic::Fxsave64 | Mnemonic::Fxrstor | Mnemonic::Fxrstor64
    );
    let save = matches!(
        m,
        Mnemonic::Fxsave
            | Mnemonic::Fxsave64
            | Mnemonic::Xsave
            | Mnemonic::Xsave64
            | Mnemonic::Xsavec
            | Mnemonic::Xsavec64
            | Mnemonic::Xsaveopt
            | Mnemonic::Xsaveopt64
            | Mnemonic::Xsaves
            | Mnemonic::Xsaves64
    );
    let requested = if legacy_only {
        0b11
    } else {
        (ctx.regs.gpr[reg::RDX] << 32 | (ctx.regs.gpr[reg::RAX] & 0xffff_ffff)) & crate::cpu::xcr0()
    };
    let compacted_save = matches!(
        m,
        Mnemonic::Xsavec | Mnemonic::Xsavec64 | Mnemonic::Xsaves | Mnemonic::Xsaves64
    );
    let mut header = [0u8; 16];
    let have_header = !legacy_only && read_mem(area + 512, &mut header);
    let xstate_bv = u64::from_le_bytes(header[..8].try_into().unwrap());
    let xcomp_bv = u64::from_le_bytes(header[8..].try_into().unwrap());
    let compact = if save {
        compacted_save.then_some(requested | (1 << 63))
    } else if have_header && xcomp_bv & (1 << 63) != 0 {
        Some(xcomp_bv)
    } else {
        None
    };
    // On restore, a component absent from XSTATE_BV is loaded in its
    // initial state: all-zero data, passive shadows.
    let present = |c: usize| save || legacy_only || !have_header || xstate_bv & (1 << c) != 0;
    use shadowmem::RegFile;
    if requested & 1 != 0 {
        let top = x87_top(ctx);
        for i in 0..8 {
            let phys = (top + i) & 7;
            let off = RegFile::x87_offset(phys);
            if present(0) {
                transfer(ctx, save, area, 32 + 16 * i, off, 4);
            } else {
                zero(ctx, off, 4);
            }
        }
    }
    for (c, regs, per, within) in [
        (1usize, 0..16usize, 16usize, 0usize),
        (2, 0..16, 16, 16),
        (6, 0..16, 32, 32),
        (7, 16..32, 64, 0),
    ] {
        if requested & (1 << c) == 0 {
            continue;
        }
        let base = offset(c, compact);
        for n in regs.clone() {
            let slot = base + per * (n - regs.start);
            let rf = RegFile::vec_offset(n, within);
            if present(c) {
                transfer(ctx, save, area, slot, rf, per);
            } else {
                zero(ctx, rf, per);
            }
        }
    }
}
