//! Crash reports in guest terms: when the program dies of a fault in its
//! own code (SIGSEGV, SIGBUS with the default action), the runtime prints
//! where, in the program's terms — never a code-cache address — before the
//! default action ends the process:
//!
//! ```text
//! dgad: crash report v1: signal 11 (SIGSEGV), fault address 0x10
//! dgad:   #0 0x55d0c0c5a139 /tmp/segv+0x1139 deref+0x0: mov eax,[rdi]
//! dgad:   #1 0x55d0c0c5a155 /tmp/segv+0x1155 middle+0x9
//! dgad:   #2 0x55d0c0c5a17e /tmp/segv+0x117e main+0x1e
//! ```
//!
//! Frame 0 is the faulting guest instruction (address, module and file
//! offset, the nearest function symbol of the module's `.symtab` or
//! `.dynsym`, disassembly). The frames after it are the return addresses
//! found on the guest stack (each in an executable mapping, right after a
//! `call`), innermost first, up to 16: a stack scan, since optimised code
//! keeps no frame pointers, so a stale return address may appear. The
//! format is versioned (`v1`); the lines start with `dgad:` like all the
//! runtime prints.
//!
//! Signal context: no allocation, no lock (the instruction is written by
//! `rewriter::disasm::write_plain`, which needs no formatter tables); ELF
//! files are read with `pread` into stack buffers.

use crate::sys::{self, StackBuf};
use core::fmt::Write as _;
use iced_x86::{Decoder, DecoderOptions};

/// The report format's version.
pub const VERSION: u32 = 1;

/// Up to 32 executable mappings: (start, end).
struct Code {
    ranges: [(u64, u64); 32],
    n: usize,
}

impl Code {
    fn read() -> Code {
        let mut c = Code {
            ranges: [(0, 0); 32],
            n: 0,
        };
        crate::diag::for_each_mapping(|m| {
            if m.executable && c.n < c.ranges.len() {
                c.ranges[c.n] = (m.start, m.end);
                c.n += 1;
            }
            true
        });
        c
    }

    fn contains(&self, a: u64, len: u64) -> bool {
        self.ranges[..self.n]
            .iter()
            .any(|&(s, e)| a >= s && a + len <= e)
    }
}

/// Whether the bytes before `ret` in code end with a `call`: `e8 rel32`,
/// or `ff /2` with a register, a disp8, a disp32 or a SIB operand (REX
/// prefixes before the `ff` are not needed to see it).
fn after_call(code: &Code, ret: u64) -> bool {
    if !code.contains(ret.wrapping_sub(7), 7) {
        return false;
    }
    let mut b = [0u8; 7];
    // Read without faulting (an execute-only mapping cannot be read).
    if crate::cache::read_guest(ret - 7, &mut b) != 7 {
        return false;
    }
    let call_ff = |at: usize, modrm_len: usize| {
        b[at] == 0xff && (b[at + 1] >> 3) & 7 == 2 && at + modrm_len == 7
    };
    b[2] == 0xe8
        || call_ff(5, 2) && b[6] >> 6 == 3
        || call_ff(4, 3) && b[5] >> 6 == 1
        || call_ff(3, 4) && b[4] >> 6 == 1 && b[4] & 7 == 4
        || call_ff(1, 6) && (b[2] >> 6 == 2 || b[2] & 0xc7 == 0x05)
        || call_ff(0, 7) && b[1] >> 6 == 2 && b[1] & 7 == 4
}

/// Prints the report. `guest_pc`: the faulting guest instruction; `rsp`:
/// the guest stack pointer there.
pub fn report(sig: i32, fault_addr: u64, guest_pc: u64, rsp: u64) {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        _ => "",
    };
    crate::dgad_eprintln!(
        "crash report v{}: signal {} ({}), fault address {:#x}",
        VERSION,
        sig,
        name,
        fault_addr
    );
    frame(0, guest_pc, true);
    let code = Code::read();
    // The guest stack: from rsp to the end of its mapping, at most 4 KiB
    // of words.
    let mut end = rsp;
    crate::diag::for_each_mapping(|m| {
        if rsp >= m.start && rsp < m.end {
            end = m.end.min(rsp + 4096 * 8);
            return false;
        }
        true
    });
    let mut k = 1;
    let mut at = rsp & !7;
    let mut words = [0u8; 512];
    while at + 8 <= end && k <= 16 {
        // Read without faulting, a piece at a time.
        let n = crate::cache::read_guest(at, &mut words[..((end - at) as usize).min(512)]);
        if n < 8 {
            break;
        }
        for w in words[..n - n % 8].chunks_exact(8) {
            let w = u64::from_le_bytes(w.try_into().unwrap());
            if k <= 16 && after_call(&code, w) {
                frame(k, w, false);
                k += 1;
            }
        }
        at += (n - n % 8) as u64;
    }
}

/// One line: address, module+offset, symbol+offset, and for frame 0 the
/// instruction.
fn frame(k: usize, pc: u64, disassemble: bool) {
    let mut module = StackBuf::<256>::new();
    let off = crate::diag::module_of(pc, &mut module).unwrap_or(0);
    let mut symbol = StackBuf::<128>::new();
    let path = module.as_bytes();
    let sym_off = symbol_of(path, off, &mut symbol);
    let mut line = StackBuf::<512>::new();
    let _ = write!(
        line,
        "  #{k} {pc:#x} {}+{off:#x}",
        core::str::from_utf8(path).unwrap_or("?")
    );
    if let Some(o) = sym_off {
        let _ = write!(
            line,
            " {}+{o:#x}",
            core::str::from_utf8(symbol.as_bytes()).unwrap_or("?")
        );
    }
    if disassemble {
        let mut dis = StackBuf::<128>::new();
        disassemble_at(pc, &mut dis);
        if !dis.as_bytes().is_empty() {
            let _ = write!(
                line,
                ": {}",
                core::str::from_utf8(dis.as_bytes()).unwrap_or("?")
            );
        }
    }
    crate::dgad_eprintln!("{}", core::str::from_utf8(line.as_bytes()).unwrap_or("?"));
}

fn disassemble_at(pc: u64, out: &mut StackBuf<128>) {
    let mut bytes = [0u8; 15];
    let n = crate::cache::read_guest(pc, &mut bytes);
    let insn = Decoder::with_ip(64, &bytes[..n], pc, DecoderOptions::NONE).decode();
    if !insn.is_invalid() {
        let _ = rewriter::disasm::write_plain(&insn, out);
    }
}

/// Reads all of `buf` at `off`.
fn pread(fd: i32, buf: &mut [u8], off: u64) -> bool {
    sys::pread(fd, buf, off) == buf.len() as i64
}

fn u16_at(b: &[u8], o: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[o], b[o + 1]]))
}
fn u32_at(b: &[u8], o: usize) -> u64 {
    u64::from(u32::from_le_bytes(b[o..o + 4].try_into().unwrap()))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// The function symbol of ELF file `path` containing file offset `off`:
/// writes its name, returns the offset into it.
fn symbol_of(path: &[u8], off: u64, name: &mut StackBuf<128>) -> Option<u64> {
    let mut p = [0u8; 257];
    let n = path.len().min(256);
    p[..n].copy_from_slice(&path[..n]);
    // SAFETY: `p` is NUL-terminated.
    let fd = unsafe {
        sys::syscall3(
            libc::SYS_open,
            p.as_ptr() as u64,
            (libc::O_RDONLY | libc::O_CLOEXEC) as u64,
            0,
        )
    };
    if fd < 0 {
        return None;
    }
    let fd = fd as i32;
    let r = symbol_in(fd, off, name);
    sys::close(fd);
    r
}

fn symbol_in(fd: i32, off: u64, name: &mut StackBuf<128>) -> Option<u64> {
    let mut eh = [0u8; 64];
    if !pread(fd, &mut eh, 0) || eh[..4] != *b"\x7fELF" || eh[4] != 2 {
        return None;
    }
    // The file offset as a virtual address: through the loadable segment
    // that holds it.
    let (phoff, phentsize, phnum) = (u64_at(&eh, 32), u16_at(&eh, 54), u16_at(&eh, 56));
    let mut vaddr = None;
    for i in 0..phnum {
        let mut ph = [0u8; 56];
        if !pread(fd, &mut ph, phoff + i * phentsize) {
            return None;
        }
        let (p_type, p_offset, p_vaddr, p_filesz) = (
            u32_at(&ph, 0),
            u64_at(&ph, 8),
            u64_at(&ph, 16),
            u64_at(&ph, 32),
        );
        if p_type == 1 && off >= p_offset && off < p_offset + p_filesz {
            vaddr = Some(off - p_offset + p_vaddr);
        }
    }
    let vaddr = vaddr?;
    let (shoff, shentsize, shnum) = (u64_at(&eh, 40), u16_at(&eh, 58), u16_at(&eh, 60));
    let section = |i: u64| -> Option<[u8; 64]> {
        let mut sh = [0u8; 64];
        pread(fd, &mut sh, shoff + i * shentsize).then_some(sh)
    };
    // .symtab if the file keeps it, else .dynsym.
    let mut best: Option<(u64, u64, u64)> = None; // (value, name offset, strtab offset)
    for wanted in [2u64, 11] {
        for i in 0..shnum {
            let sh = section(i)?;
            if u32_at(&sh, 4) != wanted {
                continue;
            }
            let (sym_off, sym_size, link) = (u64_at(&sh, 24), u64_at(&sh, 32), u32_at(&sh, 40));
            let strtab = section(link)?;
            let str_off = u64_at(&strtab, 24);
            let mut chunk = [0u8; 24 * 170];
            let mut at = 0;
            while at < sym_size {
                let len = (sym_size - at).min(chunk.len() as u64) as usize;
                if !pread(fd, &mut chunk[..len], sym_off + at) {
                    break;
                }
                for s in chunk[..len].chunks_exact(24) {
                    let (st_name, st_info, value, size) =
                        (u32_at(s, 0), s[4], u64_at(s, 8), u64_at(s, 16));
                    let func = st_info & 0xf == 2;
                    let inside = vaddr >= value && (vaddr < value + size || size == 0);
                    let better = match best {
                        Some((v, _, _)) => value > v,
                        None => true,
                    };
                    if func && value != 0 && inside && better {
                        best = Some((value, st_name, str_off));
                    }
                }
                at += len as u64;
            }
        }
        if best.is_some() {
            break;
        }
    }
    let (value, st_name, str_off) = best?;
    let mut s = [0u8; 128];
    // A name near the end of the file reads short.
    let got = usize::try_from(sys::pread(fd, &mut s, str_off + st_name)).ok()?;
    let n = s[..got].iter().position(|&c| c == 0).unwrap_or(got);
    let _ = name.write_str(core::str::from_utf8(&s[..n]).unwrap_or("?"));
    Some(vaddr - value)
}
