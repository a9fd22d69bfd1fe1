//! Encoder for the instructions the translator inserts around guest code.
//!
//! Inserted instructions are a small fixed set (segment-relative spills, the
//! exit stubs, the indirect-branch probe), so they are encoded by hand here
//! rather than through iced-x86: it is faster at translation time and each
//! encoding is pinned by a disassembly test below. Guest instructions never
//! pass through this module; they are copied or re-encoded by `translate`.
//!
//! Every helper says which registers and flags the emitted code clobbers.

/// A general-purpose register number as used in ModRM/REX (rax = 0 … r15 = 15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpr(pub u8);

impl Gpr {
    /// `rax`
    pub const RAX: Gpr = Gpr(0);
    /// `rcx`
    pub const RCX: Gpr = Gpr(1);
    /// `rdx`
    pub const RDX: Gpr = Gpr(2);
    /// `rsp`
    pub const RSP: Gpr = Gpr(4);
}

/// A growing buffer of machine code that knows the address it will run at.
pub struct Emitter {
    /// The bytes emitted so far.
    pub code: Vec<u8>,
    /// Address at which `code[0]` will execute.
    pub base: u64,
    /// The offsets that bound rel32 and rel8 fields reach
    /// ([`Self::bind_rel32`], [`Self::bind_rel8`]): the branches', where
    /// code may be entered other than from the instruction before (and the
    /// exit stubs' `lea` of their record, data that ends code anyway).
    pub targets: Vec<usize>,
}

impl Emitter {
    /// An empty buffer whose first byte will run at `base`.
    pub fn new(base: u64) -> Emitter {
        Emitter {
            code: Vec::with_capacity(1024),
            base,
            targets: Vec::new(),
        }
    }

    /// Offset of the next byte.
    pub fn offset(&self) -> usize {
        self.code.len()
    }

    /// Address of the next byte.
    pub fn pc(&self) -> u64 {
        self.base + self.code.len() as u64
    }

    /// Raw bytes (a copied guest instruction).
    pub fn bytes(&mut self, b: &[u8]) {
        self.code.extend_from_slice(b);
    }

    fn u32(&mut self, v: u32) {
        self.code.extend_from_slice(&v.to_le_bytes());
    }

    fn rex_w(r: Gpr) -> u8 {
        0x48 | if r.0 >= 8 { 0x04 } else { 0 }
    }

    /// `mov qword gs:[disp], reg`. Clobbers nothing.
    pub fn store_gs(&mut self, disp: u32, reg: Gpr) {
        self.bytes(&[
            0x65,
            Self::rex_w(reg),
            0x89,
            0x04 | ((reg.0 & 7) << 3),
            0x25,
        ]);
        self.u32(disp);
    }

    /// `mov qword [rsp + disp32], reg`. Clobbers nothing.
    pub fn store_rsp(&mut self, disp: i32, reg: Gpr) {
        self.bytes(&[Self::rex_w(reg), 0x89, 0x84 | ((reg.0 & 7) << 3), 0x24]);
        self.u32(disp as u32);
    }

    /// `mov reg, qword [rsp + disp32]`. Clobbers `reg`.
    pub fn load_rsp(&mut self, reg: Gpr, disp: i32) {
        self.bytes(&[Self::rex_w(reg), 0x8b, 0x84 | ((reg.0 & 7) << 3), 0x24]);
        self.u32(disp as u32);
    }

    /// `mov reg, qword gs:[disp]`. Clobbers `reg`.
    pub fn load_gs(&mut self, reg: Gpr, disp: u32) {
        self.bytes(&[
            0x65,
            Self::rex_w(reg),
            0x8b,
            0x04 | ((reg.0 & 7) << 3),
            0x25,
        ]);
        self.u32(disp);
    }

    /// `mov qword gs:[disp], 0` (or `dword` when `len` is 4). Clobbers
    /// nothing, not the flags.
    pub fn zero_gs(&mut self, disp: u32, len: u8) {
        if len == 8 {
            self.bytes(&[0x65, 0x48, 0xc7, 0x04, 0x25]);
        } else {
            self.bytes(&[0x65, 0xc7, 0x04, 0x25]);
        }
        self.u32(disp);
        self.u32(0);
    }

    /// `rax` = the shadow address of the application address in `rax`
    /// (`shadowmem::shadow_of`): `xor rax, qword gs:[mask_disp]` and
    /// `lea rax, [rax + SHADOW_OFFSET]`. Clobbers the flags.
    pub fn shadow_address_of_rax(&mut self, mask_disp: u32) {
        self.shadow_mask_rax(mask_disp);
        self.shadow_offset_rax();
    }

    /// `xor rax, gs:[mask_disp]`: the first half of
    /// [`Self::shadow_address_of_rax`].
    pub fn shadow_mask_rax(&mut self, mask_disp: u32) {
        self.bytes(&[0x65, 0x48, 0x33, 0x04, 0x25]);
        self.u32(mask_disp);
    }

    /// `lea rax, [rax + SHADOW_OFFSET]`: the second half of
    /// [`Self::shadow_address_of_rax`].
    pub fn shadow_offset_rax(&mut self) {
        self.bytes(&[0x48, 0x8d, 0x80]);
        self.u32(shadowmem::SHADOW_OFFSET as u32);
    }

    /// `mov eax, dword gs:[disp]` (zero-extends into `rax`). Clobbers `rax`.
    pub fn load_gs32_eax(&mut self, disp: u32) {
        self.bytes(&[0x65, 0x8b, 0x04, 0x25]);
        self.u32(disp);
    }

    /// `rax` = the `size` (8, 4, 2 or 1) bytes at `[rax]`, zero-extended.
    pub fn load_rax_from_rax(&mut self, size: u8) {
        match size {
            8 => self.bytes(&[0x48, 0x8b, 0x00]),
            4 => self.bytes(&[0x8b, 0x00]),
            2 => self.bytes(&[0x0f, 0xb7, 0x00]),
            _ => self.bytes(&[0x0f, 0xb6, 0x00]),
        }
    }

    /// Stores the low `size` (8, 4, 2 or 1) bytes of `rdx` at `[rax]`.
    /// Clobbers nothing.
    pub fn store_rdx_to_rax(&mut self, size: u8) {
        match size {
            8 => self.bytes(&[0x48, 0x89, 0x10]),
            4 => self.bytes(&[0x89, 0x10]),
            2 => self.bytes(&[0x66, 0x89, 0x10]),
            _ => self.bytes(&[0x88, 0x10]),
        }
    }

    /// Zeroes `size` (8, 4, 2 or 1) bytes at `[rax]`. Clobbers nothing.
    pub fn zero_at_rax(&mut self, size: u8) {
        match size {
            8 => {
                self.bytes(&[0x48, 0xc7, 0x00]);
                self.u32(0);
            }
            4 => {
                self.bytes(&[0xc7, 0x00]);
                self.u32(0);
            }
            2 => self.bytes(&[0x66, 0xc7, 0x00, 0x00, 0x00]),
            _ => self.bytes(&[0xc6, 0x00, 0x00]),
        }
    }

    /// `rax` = the `size` (8, 4, 2 or 1) bytes at `gs:[disp]`,
    /// zero-extended. Clobbers `rax`.
    pub fn load_gs_zx_rax(&mut self, disp: u32, size: u8) {
        match size {
            8 => self.bytes(&[0x65, 0x48, 0x8b, 0x04, 0x25]),
            4 => self.bytes(&[0x65, 0x8b, 0x04, 0x25]),
            2 => self.bytes(&[0x65, 0x0f, 0xb7, 0x04, 0x25]),
            _ => self.bytes(&[0x65, 0x0f, 0xb6, 0x04, 0x25]),
        }
        self.u32(disp);
    }

    /// Stores the low `size` (8, 4, 2 or 1) bytes of `rax` at `gs:[disp]`.
    /// Clobbers nothing.
    pub fn store_gs_rax_sized(&mut self, disp: u32, size: u8) {
        match size {
            8 => self.bytes(&[0x65, 0x48, 0x89, 0x04, 0x25]),
            4 => self.bytes(&[0x65, 0x89, 0x04, 0x25]),
            2 => self.bytes(&[0x66, 0x65, 0x89, 0x04, 0x25]),
            _ => self.bytes(&[0x65, 0x88, 0x04, 0x25]),
        }
        self.u32(disp);
    }

    /// `mov rdx, gs:[disp]` (8) or `mov edx, gs:[disp]` (4). Clobbers `rdx`.
    pub fn load_gs_sized(&mut self, reg: Gpr, disp: u32, size: u8) {
        if size == 8 {
            self.load_gs(reg, disp);
        } else {
            self.bytes(&[0x65, 0x8b, 0x04 | ((reg.0 & 7) << 3), 0x25]);
            self.u32(disp);
        }
    }

    /// `mov gs:[disp], rdx` (8) or `mov gs:[disp], edx` (4). Clobbers nothing.
    pub fn store_gs_sized(&mut self, disp: u32, reg: Gpr, size: u8) {
        if size == 8 {
            self.store_gs(disp, reg);
        } else {
            self.bytes(&[0x65, 0x89, 0x04 | ((reg.0 & 7) << 3), 0x25]);
            self.u32(disp);
        }
    }

    /// `mov rdx, [rax + disp8]` (8) or `mov edx, [rax + disp8]` (4).
    /// Clobbers `rdx`.
    pub fn load_rdx_from_rax(&mut self, disp: u32, size: u8) {
        if size == 8 {
            self.code.push(0x48);
        }
        self.bytes(&[0x8b, 0x50, disp as u8]);
    }

    /// `mov [rax + disp8], rdx` (8) or `mov [rax + disp8], edx` (4).
    /// Clobbers nothing.
    pub fn store_rdx_to_rax_at(&mut self, disp: u32, size: u8) {
        if size == 8 {
            self.code.push(0x48);
        }
        self.bytes(&[0x89, 0x50, disp as u8]);
    }

    /// `jmp qword gs:[disp]`. Clobbers nothing.
    pub fn jmp_gs(&mut self, disp: u32) {
        self.bytes(&[0x65, 0xff, 0x24, 0x25]);
        self.u32(disp);
    }

    /// `jmp qword gs:[rax*8 + disp]`. Clobbers nothing.
    pub fn jmp_gs_rax8(&mut self, disp: u32) {
        self.bytes(&[0x65, 0xff, 0x24, 0xc5]);
        self.u32(disp);
    }

    /// `not rax`. Clobbers `rax`, not the flags.
    pub fn not_rax(&mut self) {
        self.bytes(&[0x48, 0xf7, 0xd0]);
    }

    /// `lea rcx, [rcx + rax + 1]`: with `rax` = !x, `rcx` − x. Clobbers
    /// `rcx`, not the flags.
    pub fn rcx_minus_not_rax(&mut self) {
        self.bytes(&[0x48, 0x8d, 0x4c, 0x01, 0x01]);
    }

    /// `lea rcx, [rcx + rax]`. Clobbers `rcx`, not the flags.
    pub fn add_rax_to_rcx_keep_flags(&mut self) {
        self.bytes(&[0x48, 0x8d, 0x0c, 0x01]);
    }

    /// `movzx eax, cx`. Clobbers `rax`.
    pub fn movzx_eax_cx(&mut self) {
        self.bytes(&[0x0f, 0xb7, 0xc1]);
    }

    /// `lea rcx, [rcx + 1]`. Clobbers `rcx`, not the flags.
    pub fn inc_rcx_keep_flags(&mut self) {
        self.bytes(&[0x48, 0x8d, 0x49, 0x01]);
    }

    /// `push qword [rip + rel32]` with a placeholder; returns the field
    /// offset. One 8-byte store, so a later 8-byte load of the slot is
    /// store-forwarded. Clobbers nothing but `rsp`, not the flags.
    pub fn push_rip_literal_placeholder(&mut self) -> usize {
        self.bytes(&[0xff, 0x35]);
        self.u32(0);
        self.offset() - 4
    }

    /// An instruction `head` followed by a `[rip + rel32]` placeholder (the
    /// last operand; nothing after it); returns the field offset.
    pub fn rip_placeholder(&mut self, head: &[u8]) -> usize {
        self.bytes(head);
        self.u32(0);
        self.offset() - 4
    }

    /// `call qword [rip + rel32]` with a placeholder; returns the field offset.
    pub fn call_rip_literal_placeholder(&mut self) -> usize {
        self.bytes(&[0xff, 0x15]);
        self.u32(0);
        self.offset() - 4
    }

    /// `mov reg, imm64`. Clobbers `reg`, not the flags.
    pub fn mov_imm64(&mut self, reg: Gpr, imm: u64) {
        self.bytes(&[0x48 | (reg.0 >> 3), 0xb8 + (reg.0 & 7)]);
        self.bytes(&imm.to_le_bytes());
    }

    /// `cmp dword gs:[disp32], 0` then `jne rel8` with a placeholder;
    /// returns the offset of the rel8 byte. Clobbers the flags.
    pub fn jne_if_gs32_nonzero_placeholder(&mut self, disp: u32) -> usize {
        self.bytes(&[0x65, 0x83, 0x3c, 0x25]);
        self.u32(disp);
        self.bytes(&[0x00, 0x75, 0x00]);
        self.offset() - 1
    }

    /// `cmp qword gs:[disp32], 0` then `jne rel32` with a placeholder;
    /// returns the offset of the rel32 field. Clobbers the flags.
    pub fn jne32_if_gs64_nonzero_placeholder(&mut self, disp: u32) -> usize {
        self.bytes(&[0x65, 0x48, 0x83, 0x3c, 0x25]);
        self.u32(disp);
        self.bytes(&[0x00, 0x0f, 0x85]);
        self.u32(0);
        self.offset() - 4
    }

    /// `cmp <size> [rax + disp8], 0` for a size of 1, 2, 4 or 8 bytes.
    /// Clobbers the flags.
    pub fn cmp_at_rax_zero(&mut self, disp: u8, size: u8) {
        match size {
            8 => self.bytes(&[0x48, 0x83, 0x78, disp, 0x00]),
            4 => self.bytes(&[0x83, 0x78, disp, 0x00]),
            2 => self.bytes(&[0x66, 0x83, 0x78, disp, 0x00]),
            _ => self.bytes(&[0x80, 0x78, disp, 0x00]),
        }
    }

    /// Zeroes `size` (1, 2, 4 or 8) bytes at `[rax + disp8]`.
    pub fn zero_at_rax_disp(&mut self, disp: u8, size: u8) {
        match size {
            8 => self.bytes(&[0x48, 0xc7, 0x40, disp, 0, 0, 0, 0]),
            4 => self.bytes(&[0xc7, 0x40, disp, 0, 0, 0, 0]),
            2 => self.bytes(&[0x66, 0xc7, 0x40, disp, 0, 0]),
            _ => self.bytes(&[0xc6, 0x40, disp, 0]),
        }
    }

    /// `jne rel32` with a placeholder; returns the field offset.
    pub fn jne32_placeholder(&mut self) -> usize {
        self.bytes(&[0x0f, 0x85]);
        self.u32(0);
        self.offset() - 4
    }

    /// `jmp rel32` with a placeholder (not patched at run time); returns
    /// the offset of the rel32 field.
    pub fn jmp32_placeholder(&mut self) -> usize {
        self.code.push(0xe9);
        self.u32(0);
        self.offset() - 4
    }

    /// `jrcxz rel8` with a placeholder; returns the offset of the rel8 byte.
    pub fn jrcxz_placeholder(&mut self) -> usize {
        self.bytes(&[0xe3, 0x00]);
        self.offset() - 1
    }

    /// Resolves a rel8 placeholder to jump to the current offset.
    pub fn bind_rel8(&mut self, rel8_at: usize) {
        self.targets.push(self.offset());
        let rel = self.offset() as i64 - (rel8_at as i64 + 1);
        assert!((-128..=127).contains(&rel), "rel8 out of range");
        self.code[rel8_at] = rel as i8 as u8;
    }

    /// `pop reg`. Clobbers `reg`, not the flags.
    pub fn pop(&mut self, reg: Gpr) {
        if reg.0 >= 8 {
            self.code.push(0x41);
        }
        self.code.push(0x58 + (reg.0 & 7));
    }

    /// `lea rsp, [rsp + disp32]`. Clobbers nothing but `rsp`, not the flags.
    pub fn lea_rsp(&mut self, disp: i32) {
        self.bytes(&[0x48, 0x8d, 0xa4, 0x24]);
        self.u32(disp as u32);
    }

    /// `lea rax, [rip + rel32]` with a placeholder; returns the offset of rel32.
    pub fn lea_rax_rip_placeholder(&mut self) -> usize {
        self.bytes(&[0x48, 0x8d, 0x05]);
        self.u32(0);
        self.offset() - 4
    }

    /// `mov eax, imm32` (zero-extends into `rax`). Clobbers `rax`, not the flags.
    pub fn mov_eax_imm(&mut self, imm: u32) {
        self.code.push(0xb8);
        self.u32(imm);
    }

    /// Makes the 4-byte field `within` bytes into the next instruction lie
    /// inside one aligned 8-byte word, so that it can be patched with one
    /// atomic store of that word (the runtime's `patch_rel32`). Pads with `cs` segment
    /// prefixes of that instruction (ignored on a near branch), not with
    /// `nop`s: the padding of a side exit's `jcc` runs every time.
    pub fn align_field(&mut self, within: u64) {
        let at = (self.pc() + within) % 8;
        if at > 4 {
            for _ in at..8 {
                self.code.push(0x2e);
            }
        }
    }

    /// Patchable `jmp rel32` (see [`Self::align_field`]): a block's exit,
    /// which the runtime links to its target; returns the field offset.
    pub fn jmp_rel32_patchable(&mut self) -> usize {
        self.align_field(1);
        self.jmp_rel32_placeholder()
    }

    /// Patchable `jcc rel32` for condition code `cc` (the low nibble of the
    /// short-form opcode `0x70+cc`): a side exit; returns the field offset.
    pub fn jcc_rel32_patchable(&mut self, cc: u8) -> usize {
        self.align_field(2);
        self.jcc_rel32_placeholder(cc)
    }

    /// `jmp rel32` within the translation, bound before it is published
    /// and never patched, so not padded (decision 56); returns the field
    /// offset.
    pub fn jmp_rel32_placeholder(&mut self) -> usize {
        self.code.push(0xe9);
        self.u32(0);
        self.offset() - 4
    }

    /// `jcc rel32` within the translation (as [`Self::jmp_rel32_placeholder`]);
    /// returns the field offset.
    pub fn jcc_rel32_placeholder(&mut self, cc: u8) -> usize {
        self.bytes(&[0x0f, 0x80 | (cc & 0xf)]);
        self.u32(0);
        self.offset() - 4
    }

    /// Sets the rel32 field at `field` to reach the code offset `target`.
    pub fn bind_rel32(&mut self, field: usize, target: usize) {
        self.targets.push(target);
        let rel = target as i64 - (field as i64 + 4);
        self.code[field..field + 4].copy_from_slice(&(rel as i32).to_le_bytes());
    }
}

/// Value of a rel32 field at absolute address `field_addr` that makes the
/// branch reach `target`, or `None` when the distance does not fit.
pub fn rel32_for(field_addr: u64, target: u64) -> Option<i32> {
    let rel = target.wrapping_sub(field_addr + 4) as i64;
    i32::try_from(rel).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

    fn disasm(e: &Emitter) -> Vec<String> {
        let mut d = Decoder::with_ip(64, &e.code, e.base, DecoderOptions::NONE);
        let mut f = IntelFormatter::new();
        let mut out = Vec::new();
        while d.can_decode() {
            let i = d.decode();
            let mut s = String::new();
            f.format(&i, &mut s);
            out.push(s);
        }
        out
    }

    #[test]
    fn inserted_encodings_disassemble_as_intended() {
        let mut e = Emitter::new(0x1000);
        e.store_gs(0x18, Gpr::RCX);
        e.store_gs(0x20, Gpr(9));
        e.load_gs(Gpr(15), 0x28);
        e.jmp_gs(0x40);
        e.movzx_eax_cx();
        e.jmp_gs_rax8(0x90000);
        e.rcx_minus_not_rax();
        e.add_rax_to_rcx_keep_flags();
        e.not_rax();
        e.pop(Gpr::RCX);
        e.pop(Gpr(12));
        e.lea_rsp(16);
        e.mov_eax_imm(0);
        e.push_rip_literal_placeholder();
        e.zero_gs(0x2010, 8);
        e.zero_gs(0x2018, 4);
        e.shadow_address_of_rax(0x48);
        e.load_gs32_eax(0x2020);
        e.load_rax_from_rax(8);
        e.load_rax_from_rax(4);
        e.store_rdx_to_rax(8);
        e.store_rdx_to_rax(4);
        e.zero_at_rax(8);
        e.zero_at_rax(4);
        e.load_gs_sized(Gpr::RDX, 0x2000, 4);
        e.store_gs_sized(0x2004, Gpr::RDX, 4);
        e.load_rdx_from_rax(0x18, 8);
        e.load_rdx_from_rax(0x4, 4);
        e.store_rdx_to_rax_at(0x8, 8);
        e.store_rdx_to_rax_at(0xc, 4);
        assert_eq!(
            disasm(&e),
            [
                "mov gs:[18h],rcx",
                "mov gs:[20h],r9",
                "mov r15,gs:[28h]",
                "jmp qword ptr gs:[40h]",
                "movzx eax,cx",
                "jmp qword ptr gs:[rax*8+90000h]",
                "lea rcx,[rcx+rax+1]",
                "lea rcx,[rcx+rax]",
                "not rax",
                "pop rcx",
                "pop r12",
                "lea rsp,[rsp+10h]",
                "mov eax,0",
                "push qword ptr [1050h]",
                "mov qword ptr gs:[2010h],0",
                "mov dword ptr gs:[2018h],0",
                "xor rax,gs:[48h]",
                "lea rax,[rax+7654000h]",
                "mov eax,gs:[2020h]",
                "mov rax,[rax]",
                "mov eax,[rax]",
                "mov [rax],rdx",
                "mov [rax],edx",
                "mov qword ptr [rax],0",
                "mov dword ptr [rax],0",
                "mov edx,gs:[2000h]",
                "mov gs:[2004h],edx",
                "mov rdx,[rax+18h]",
                "mov edx,[rax+4]",
                "mov [rax+8],rdx",
                "mov [rax+0Ch],edx",
            ]
        );
    }

    #[test]
    fn patchable_branch_fields_are_aligned() {
        for start in 0..8u64 {
            let mut e = Emitter::new(0x1000 + start);
            let j = e.jmp_rel32_patchable();
            let c = e.jcc_rel32_patchable(0x4);
            for f in [e.base + j as u64, e.base + c as u64] {
                assert!(f % 8 <= 4, "field at {f:#x} crosses an 8-byte word");
            }
            let code = e.code.clone();
            let insns: Vec<_> =
                iced_x86::Decoder::with_ip(64, &code, e.base, iced_x86::DecoderOptions::NONE)
                    .into_iter()
                    .collect();
            assert_eq!(insns.len(), 2, "padding belongs to the branches");
            assert_eq!(insns[0].mnemonic(), iced_x86::Mnemonic::Jmp);
            assert_eq!(insns[1].mnemonic(), iced_x86::Mnemonic::Je);
        }
    }
}
