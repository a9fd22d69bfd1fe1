//! Human-readable disassembly, for diagnostics and golden files.

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

/// The first instruction in `bytes` (at address `ip`), Intel syntax, or a
/// note with the raw bytes when they do not decode.
pub fn one_insn(bytes: &[u8], ip: u64) -> String {
    let insn = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE).decode();
    if insn.is_invalid() {
        let hex: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return format!("(undecodable: {})", hex.join(" "));
    }
    let mut s = String::new();
    IntelFormatter::new().format(&insn, &mut s);
    s
}

/// Writes `insn` in Intel syntax to `out` without allocating and without
/// the formatter's tables (which iced builds on first use, about 0.3 ms
/// of every process's start when made in advance): for crash reports,
/// written in signal context. The common forms read as [`one_insn`]'s
/// (`mov eax,[rdi]`, `vaddpd zmm1{k1}{z},zmm0,[rsi+40h]`); rarer
/// decorations (broadcasts, rounding, `far`) are left out.
pub fn write_plain(insn: &Instruction, out: &mut impl core::fmt::Write) -> core::fmt::Result {
    lower(out, format_args!("{:?}", insn.mnemonic()))?;
    let sized = !(0..insn.op_count()).any(|k| insn.op_kind(k) == OpKind::Register);
    for k in 0..insn.op_count() {
        out.write_str(if k == 0 { " " } else { "," })?;
        match insn.op_kind(k) {
            OpKind::Register => register(out, insn.op_register(k))?,
            OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64 => {
                write!(out, "{:016X}h", insn.near_branch_target())?
            }
            kind if is_immediate(kind) => number(out, insn.immediate(k))?,
            OpKind::Immediate8_2nd => number(out, u64::from(insn.immediate8_2nd()))?,
            OpKind::Memory => memory(out, insn, sized)?,
            _ => out.write_str("?")?,
        }
        if k == 0 && insn.op_mask() != Register::None {
            out.write_str("{")?;
            register(out, insn.op_mask())?;
            out.write_str("}")?;
            if insn.zeroing_masking() {
                out.write_str("{z}")?;
            }
        }
    }
    Ok(())
}

use core::fmt::Write as _;
use iced_x86::{Instruction, OpKind, Register};

/// Whether an operand of kind `k` is an immediate whose value
/// `Instruction::immediate` gives (not the second immediate of `enter` or
/// `extrq`).
pub fn is_immediate(k: OpKind) -> bool {
    matches!(
        k,
        OpKind::Immediate8
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate64
            | OpKind::Immediate8to16
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64
    )
}

/// Writes `args` in lower case.
fn lower(out: &mut impl core::fmt::Write, args: core::fmt::Arguments<'_>) -> core::fmt::Result {
    struct Lower<'a, W: core::fmt::Write>(&'a mut W);
    impl<W: core::fmt::Write> core::fmt::Write for Lower<'_, W> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            for c in s.chars() {
                self.0.write_char(c.to_ascii_lowercase())?;
            }
            Ok(())
        }
    }
    Lower(out).write_fmt(args)
}

fn register(out: &mut impl core::fmt::Write, r: Register) -> core::fmt::Result {
    lower(out, format_args!("{r:?}"))
}

/// A number as iced writes it: 0–9 in decimal, else upper-case hex with a
/// `h` suffix and a leading 0 before a letter.
fn number(out: &mut impl core::fmt::Write, v: u64) -> core::fmt::Result {
    if v < 10 {
        return write!(out, "{v}");
    }
    let digits = 64 - v.leading_zeros() as usize;
    let lead = (v >> ((digits - 1) / 4 * 4)) & 0xf;
    if lead >= 10 {
        out.write_str("0")?;
    }
    write!(out, "{v:X}h")
}

fn memory(out: &mut impl core::fmt::Write, insn: &Instruction, sized: bool) -> core::fmt::Result {
    if sized {
        let size = match insn.memory_size().size() {
            1 => "byte ptr ",
            2 => "word ptr ",
            4 => "dword ptr ",
            8 => "qword ptr ",
            10 => "tbyte ptr ",
            16 => "xmmword ptr ",
            32 => "ymmword ptr ",
            64 => "zmmword ptr ",
            _ => "",
        };
        out.write_str(size)?;
    }
    let segment = insn.segment_prefix();
    if segment != Register::None {
        register(out, segment)?;
        out.write_str(":")?;
    }
    out.write_str("[")?;
    let (base, index) = (insn.memory_base(), insn.memory_index());
    let disp = insn.memory_displacement64();
    if base == Register::RIP || base == Register::EIP {
        number(out, disp)?;
        return out.write_str("]");
    }
    let mut any = false;
    if base != Register::None {
        register(out, base)?;
        any = true;
    }
    if index != Register::None {
        if any {
            out.write_str("+")?;
        }
        register(out, index)?;
        if insn.memory_index_scale() > 1 {
            write!(out, "*{}", insn.memory_index_scale())?;
        }
        any = true;
    }
    let signed = disp as i64;
    if !any {
        number(out, disp)?;
    } else if signed < 0 {
        out.write_str("-")?;
        number(out, signed.unsigned_abs())?;
    } else if signed > 0 {
        out.write_str("+")?;
        number(out, disp)?;
    }
    out.write_str("]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::code_asm::*;

    /// Each instruction as `write_plain` and as iced's formatter write it.
    #[test]
    fn plain_text_reads_as_the_formatter() {
        let mut a = CodeAssembler::new(64).unwrap();
        a.mov(eax, dword_ptr(rdi)).unwrap();
        a.mov(rax, qword_ptr(rsp - 0xa0)).unwrap();
        a.mov(qword_ptr(0x10u64).gs(), rcx).unwrap();
        a.mov(qword_ptr(8u64).gs(), rax).unwrap();
        a.mov(dword_ptr(rdi + rcx * 4 + 0x10), 5).unwrap();
        a.add(rax, 0x7f).unwrap();
        a.lea(rcx, ptr(rcx + rax + 1)).unwrap();
        a.movsd_2(xmm0, qword_ptr(rcx + rax * 8 - 8)).unwrap();
        a.mulsd(xmm1, xmm5).unwrap();
        a.vfmadd231sd(xmm2, xmm3, qword_ptr(rdx)).unwrap();
        a.xor(eax, eax).unwrap();
        a.mov(rax, 0xffff_ffff_ffbf_efff_u64).unwrap();
        a.push(rbx).unwrap();
        a.ret().unwrap();
        a.cpuid().unwrap();
        a.set_prefer_vex(false);
        a.vaddpd(zmm1.k1().z(), zmm0, zmmword_ptr(rsi + 0x40))
            .unwrap();
        a.vmovupd(zmmword_ptr(rsi).k2(), zmm1).unwrap();
        let bytes = a.assemble(0x40_1000).unwrap();
        let mut rip_relative = CodeAssembler::new(64).unwrap();
        let mut data = rip_relative.create_label();
        rip_relative.movsd_2(xmm0, qword_ptr(data)).unwrap();
        rip_relative.jmp(0x40_2000).unwrap();
        rip_relative.set_label(&mut data).unwrap();
        rip_relative.dq(&[0]).unwrap();
        let more = rip_relative.assemble(0x40_3000).unwrap();
        let mut seen = 0;
        for (code, ip) in [(&bytes, 0x40_1000), (&more, 0x40_3000)] {
            let mut d = iced_x86::Decoder::with_ip(64, code, ip, iced_x86::DecoderOptions::NONE);
            while d.can_decode() {
                let insn = d.decode();
                let mut plain = String::new();
                write_plain(&insn, &mut plain).unwrap();
                let mut full = String::new();
                IntelFormatter::new().format(&insn, &mut full);
                assert_eq!(plain, full);
                seen += 1;
            }
        }
        // 17, then 2 and the literal's zeros as four `add [rax],al`.
        assert_eq!(seen, 23);
    }
}
