//! Diagnostics that explain a failure in guest terms: address, module and
//! offset, and the disassembly of the guest instruction.

use crate::sys;
use core::fmt::Write as _;

/// One line of `/proc/self/maps`.
pub struct Mapping<'a> {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub offset: u64,
    /// Mapped with execute permission.
    pub executable: bool,
    /// Mapped with write permission.
    pub writable: bool,
    /// A shared mapping (`MAP_SHARED`): another view of the same pages may
    /// write them.
    pub shared: bool,
    /// The file, or `[heap]`, `[stack]`, … (`[anonymous]` when empty).
    pub path: &'a [u8],
}

/// Calls `f` for each line of `/proc/self/maps` until it returns `false`.
/// Reads the file in pieces into stack buffers; no allocation.
pub fn for_each_mapping(mut f: impl FnMut(&Mapping) -> bool) {
    let path = b"/proc/self/maps\0";
    // SAFETY: path is NUL-terminated.
    let fd = unsafe {
        sys::syscall3(
            libc::SYS_open,
            path.as_ptr() as u64,
            libc::O_RDONLY as u64,
            0,
        )
    };
    if fd < 0 {
        return;
    }
    let mut buf = [0u8; 4096];
    let mut line = [0u8; 512];
    let mut line_len = 0;
    'read: loop {
        let n = sys::read(fd as i32, &mut buf);
        if n <= 0 {
            break;
        }
        for &c in &buf[..n as usize] {
            if c != b'\n' {
                if line_len < line.len() {
                    line[line_len] = c;
                    line_len += 1;
                }
                continue;
            }
            if let Some(m) = parse_maps_line(&line[..line_len]) {
                if !f(&m) {
                    break 'read;
                }
            }
            line_len = 0;
        }
    }
    sys::close(fd as i32);
}

/// Finds the mapping of `addr`: writes its path and returns the file offset
/// of `addr`.
pub fn module_of(addr: u64, out: &mut sys::StackBuf<256>) -> Option<u64> {
    let mut found = None;
    for_each_mapping(|m| {
        if addr >= m.start && addr < m.end {
            let _ = out.write_str(core::str::from_utf8(m.path).unwrap_or("?"));
            found = Some(addr - m.start + m.offset);
            return false;
        }
        true
    });
    found
}

fn parse_hex(s: &[u8]) -> Option<u64> {
    u64::from_str_radix(core::str::from_utf8(s).ok()?, 16).ok()
}

/// `start-end perms offset dev inode path`.
fn parse_maps_line(line: &[u8]) -> Option<Mapping<'_>> {
    let mut fields = line.split(|&c| c == b' ').filter(|f| !f.is_empty());
    let range = fields.next()?;
    let dash = range.iter().position(|&c| c == b'-')?;
    let (start, end) = (parse_hex(&range[..dash])?, parse_hex(&range[dash + 1..])?);
    let perms = fields.next()?;
    let offset = parse_hex(fields.next()?)?;
    let _dev = fields.next();
    let _inode = fields.next();
    let path: &[u8] = fields.next().unwrap_or(b"[anonymous]");
    Some(Mapping {
        start,
        end,
        offset,
        executable: perms.get(2) == Some(&b'x'),
        writable: perms.get(1) == Some(&b'w'),
        shared: perms.get(3) == Some(&b's'),
        path,
    })
}

/// Disassembles the guest instruction at `pc` (Intel syntax).
pub fn disassemble(pc: u64, out: &mut sys::StackBuf<128>) {
    let mut bytes = [0u8; 15];
    let n = crate::cache::read_guest(pc, &mut bytes);
    let _ = out.write_str(&rewriter::disasm::one_insn(&bytes[..n], pc));
}

/// Stops the client: one line on stderr naming the guest instruction, and
/// exit status 125 (so it cannot be mistaken for the program's own).
pub fn fatal_at(guest_pc: u64, what: &str) -> ! {
    let mut module = sys::StackBuf::<256>::new();
    let off = module_of(guest_pc, &mut module).unwrap_or(0);
    let mut dis = sys::StackBuf::<128>::new();
    disassemble(guest_pc, &mut dis);
    crate::dgad_eprintln!(
        "fatal: {} at guest 0x{:x} ({}+0x{:x}): {}",
        what,
        guest_pc,
        core::str::from_utf8(module.as_bytes()).unwrap_or("?"),
        off,
        core::str::from_utf8(dis.as_bytes()).unwrap_or("?")
    );
    crate::stats::report();
    sys::exit_group(125)
}
