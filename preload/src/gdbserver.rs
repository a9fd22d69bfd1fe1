//! A gdbserver for Derivgrind's interactive use (`valgrind --tool=derivgrind
//! --vgdb-error=0 PROG`, then gdb's `target remote | vgdb`): the program
//! stops before its first instruction, gdb sets breakpoints, continues,
//! steps, reads registers and memory, and sends Derivgrind's monitor
//! commands (`get`/`set` a dot value, `mark` an input, `index` of an output:
//! [`crate::tool::Tool::monitor`]).
//!
//! Where it hooks into the engine: every entry into translated code that
//! goes through the dispatcher asks [`before`] first; a block never runs
//! into a breakpoint (the translator ends blocks before one,
//! `TranslateOptions::stop_before`), and the block at a breakpoint, or the
//! one instruction of a single step, is translated for one use only
//! ([`one_off`]): never looked up, linked or put in the indirect-branch
//! table, so that reaching that address again comes back here. Setting or
//! removing a breakpoint drops the translations that cover its address.
//!
//! gdb talks to it through an abstract Unix socket named after the
//! process id, which the `vgdb` command of the launcher relays to gdb's
//! pipe. Only the thread that stops is stopped: the other threads run on
//! (Derivgrind's tests are single-threaded).

use crate::context::ThreadCtx;
use crate::lock::Lock;
use crate::sys;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};

/// The server runs (`DGAD_GDBSERVER`).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The listening socket, then the connection (-1: none).
static LISTEN: AtomicI32 = AtomicI32::new(-1);
static CONN: AtomicI32 = AtomicI32::new(-1);
/// The process whose server this is (a forked child has none).
static PID: AtomicI32 = AtomicI32::new(0);
/// Breakpoint addresses (0: a free slot), read without a lock by the
/// translator.
const SLOTS: usize = 64;
static BREAKPOINTS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// Serialises the server's conversation between threads.
static SERVING: Lock<()> = Lock::new(());

/// What the thread under the debugger does next.
const RUN: u8 = 0;
/// Stop before the first instruction run (the start, `--vgdb-error=0`).
const AT_START: u8 = 1;
/// One instruction (translated alone) is under way: stop at the next
/// entry.
const STEPPING: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(AT_START);
/// gdb waits for a stop reply (after a continue or a step).
static WAITING: AtomicBool = AtomicBool::new(false);

/// Starts the server: listens on `dgad-gdb-PID` and tells the user how to
/// connect (Valgrind's words, which Derivgrind's scripts look for). `vgdb`
/// is the relay command to name.
pub fn init(vgdb: &str) -> Result<(), String> {
    let pid = crate::init::pid();
    // SAFETY: `socket` touches no memory of ours.
    let fd = unsafe {
        sys::syscall3(
            libc::SYS_socket,
            libc::AF_UNIX as u64,
            (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as u64,
            0,
        )
    };
    if fd < 0 {
        return Err("gdbserver: cannot make a socket".into());
    }
    let (addr, len) = socket_address(pid);
    let fd = fd as i32;
    // SAFETY: `addr` is a valid sockaddr_un of `len` bytes, which `bind`
    // only reads; `listen` touches no memory.
    let ok = unsafe {
        let addr = &addr as *const libc::sockaddr_un as u64;
        sys::syscall3(libc::SYS_bind, fd as u64, addr, u64::from(len)) == 0
            && sys::syscall3(libc::SYS_listen, fd as u64, 1, 0) == 0
    };
    if !ok {
        sys::close(fd);
        return Err(format!("gdbserver: cannot listen on dgad-gdb-{pid}"));
    }
    LISTEN.store(crate::fds::adopt(fd), Ordering::Release);
    PID.store(pid, Ordering::Release);
    ACTIVE.store(true, Ordering::Release);
    crate::dgad_eprintln!(
        "=={pid}== the program waits for gdb: start `gdb PROG` and give it the command"
    );
    crate::dgad_eprintln!("=={pid}==   target remote | {vgdb} --pid={pid}");
    Ok(())
}

/// The abstract socket address `\0dgad-gdb-PID` and its length.
fn socket_address(pid: i32) -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: all-zero bytes are a valid sockaddr_un.
    let mut a: libc::sockaddr_un = unsafe { core::mem::zeroed() };
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let name = format!("dgad-gdb-{pid}");
    for (i, b) in name.bytes().enumerate() {
        a.sun_path[i + 1] = b as libc::c_char;
    }
    let len = core::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
    (a, len as libc::socklen_t)
}

/// Whether the server runs in this process.
#[inline(always)]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The translator's question: is there a breakpoint at `pc`?
pub fn is_breakpoint(pc: u64) -> bool {
    pc != 0 && BREAKPOINTS.iter().any(|b| b.load(Ordering::Acquire) == pc)
}

/// Whether the block at `pc` is translated for one use only (a breakpoint,
/// or a single step), and if so with how many instructions at most.
pub fn one_off(pc: u64) -> Option<usize> {
    if !active() {
        return None;
    }
    if STATE.load(Ordering::Acquire) == STEPPING {
        return Some(1);
    }
    is_breakpoint(pc).then_some(rewriter::translate::MAX_BLOCK_INSNS)
}

/// Before the thread enters translated code at `pc`: stop for gdb if it
/// should (the start, a breakpoint, the end of a step).
pub fn before(ctx: &mut ThreadCtx, pc: u64) {
    if PID.load(Ordering::Relaxed) != crate::init::pid() {
        return;
    }
    // Resuming happens in the caller, after this: every call is a new
    // arrival at `pc`.
    let stop = match STATE.load(Ordering::Acquire) {
        AT_START | STEPPING => true,
        _ => is_breakpoint(pc),
    };
    if !stop {
        return;
    }
    let _serving = SERVING.lock();
    ctx.regs.rip = pc;
    match serve(ctx) {
        Resume::Continue => STATE.store(RUN, Ordering::Release),
        // The instruction at `pc`, which the caller enters next, alone.
        Resume::Step => STATE.store(STEPPING, Ordering::Release),
        Resume::Detach => {
            STATE.store(RUN, Ordering::Release);
            for b in &BREAKPOINTS {
                b.store(0, Ordering::Release);
            }
            ACTIVE.store(false, Ordering::Release);
        }
    }
}

/// The process exits with `code`: tell a waiting gdb.
pub fn exiting(code: i32) {
    if !active() || PID.load(Ordering::Relaxed) != crate::init::pid() {
        return;
    }
    let conn = CONN.load(Ordering::Acquire);
    if conn >= 0 && WAITING.load(Ordering::Acquire) {
        send(conn, format!("W{:02x}", code as u8).as_bytes());
    }
}

/// How the thread goes on after gdb let it.
enum Resume {
    Continue,
    Step,
    Detach,
}

/// The conversation with gdb while the thread is stopped at `ctx.regs.rip`.
fn serve(ctx: &mut ThreadCtx) -> Resume {
    let mut conn = CONN.load(Ordering::Acquire);
    if conn < 0 {
        // SAFETY: accepting on our own listening socket, without asking
        // for the peer's address (no memory is written).
        conn = unsafe {
            sys::syscall6(
                libc::SYS_accept4,
                LISTEN.load(Ordering::Acquire) as u64,
                0,
                0,
                libc::SOCK_CLOEXEC as u64,
                0,
                0,
            )
        } as i32;
        if conn < 0 {
            return Resume::Detach;
        }
        conn = crate::fds::adopt(conn);
        CONN.store(conn, Ordering::Release);
    }
    let stop_reply = format!("T05thread:{:x};", ctx.tid);
    if WAITING.swap(false, Ordering::AcqRel) {
        send(conn, stop_reply.as_bytes());
    }
    let mut input = Reader {
        fd: conn,
        buf: Vec::new(),
    };
    loop {
        let Some(packet) = input.packet() else {
            // gdb went away: run on without it.
            CONN.store(-1, Ordering::Release);
            return Resume::Detach;
        };
        let p = packet.as_slice();
        let text = String::from_utf8_lossy(p);
        let reply: Vec<u8> = match p {
            _ if p.starts_with(b"qSupported") => {
                "PacketSize=4000;qXfer:auxv:read+;qXfer:features:read+".into()
            }
            _ if p.starts_with(b"qXfer:features:read:target.xml:") => {
                let range = &text["qXfer:features:read:target.xml:".len()..];
                xfer(TARGET_XML.as_bytes(), range)
            }
            b"?" => stop_reply.clone().into_bytes(),
            b"!" => "OK".into(),
            _ if p.starts_with(b"Hg") || p.starts_with(b"Hc") => "OK".into(),
            b"qC" => format!("QC{:x}", ctx.tid).into_bytes(),
            b"qAttached" => "1".into(),
            b"qfThreadInfo" => format!("m{:x}", ctx.tid).into_bytes(),
            b"qsThreadInfo" => "l".into(),
            _ if p.starts_with(b"qSymbol") => "OK".into(),
            b"g" => registers(ctx).into_bytes(),
            _ if p.starts_with(b"m") => read_memory(&text[1..]).into_bytes(),
            _ if p.starts_with(b"M") => write_memory(&text[1..]).into(),
            _ if p.starts_with(b"Z0,") || p.starts_with(b"z0,") => breakpoint(&text).into(),
            b"vCont?" => "vCont;c;C;s;S".into(),
            _ if p.starts_with(b"vCont;c") || p.starts_with(b"vCont;C") || p.starts_with(b"c") => {
                WAITING.store(true, Ordering::Release);
                return Resume::Continue;
            }
            _ if p.starts_with(b"vCont;s") || p.starts_with(b"vCont;S") || p.starts_with(b"s") => {
                WAITING.store(true, Ordering::Release);
                return Resume::Step;
            }
            _ if p.starts_with(b"qXfer:auxv:read::") => {
                let annex = &text["qXfer:auxv:read::".len()..];
                match crate::static_exec::auxv() {
                    // A static guest's own vector (the process's is the host's).
                    Some(data) => xfer(data, annex),
                    None => match crate::directory::read_file(libc::AT_FDCWD, "/proc/self/auxv") {
                        Ok(data) => xfer(&data, annex),
                        Err(_) => b"E01".to_vec(),
                    },
                }
            }
            _ if p.starts_with(b"qRcmd,") => {
                let command = unhex(&text["qRcmd,".len()..]);
                let command = String::from_utf8_lossy(&command).into_owned();
                let words: Vec<&str> = command.split_whitespace().collect();
                let output = crate::tool::tool().monitor(ctx, &words).unwrap_or_else(|| {
                    format!("dgad: unknown monitor command '{command}' (get, set, fget, fset, lget, lset in forward mode; mark, index when recording)\n")
                });
                send(conn, format!("O{}", hex(output.as_bytes())).as_bytes());
                "OK".into()
            }
            _ if p.starts_with(b"D") => {
                send(conn, b"OK");
                return Resume::Detach;
            }
            b"k" => crate::sys::exit_group(137),
            _ if p.starts_with(b"vKill") => crate::sys::exit_group(137),
            _ => Vec::new(),
        };
        send(conn, &reply);
    }
}

/// Reads gdb's packets (`$data#ck`), acknowledging each.
struct Reader {
    fd: i32,
    buf: Vec<u8>,
}

impl Reader {
    fn fill(&mut self) -> bool {
        let mut b = [0u8; 4096];
        let n = sys::read(self.fd, &mut b);
        if n <= 0 {
            return false;
        }
        self.buf.extend_from_slice(&b[..n as usize]);
        true
    }

    fn packet(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(start) = self.buf.iter().position(|&c| c == b'$') {
                if let Some(end) = self.buf[start..].iter().position(|&c| c == b'#') {
                    let end = start + end;
                    if self.buf.len() >= end + 3 {
                        let data = unescape(&self.buf[start + 1..end]);
                        self.buf.drain(..end + 3);
                        sys::write_all(self.fd, b"+");
                        return Some(data);
                    }
                }
            } else {
                // Acknowledgements and interrupts before a packet.
                self.buf.clear();
            }
            if !self.fill() {
                return None;
            }
        }
    }
}

fn unescape(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut it = data.iter();
    while let Some(&c) = it.next() {
        if c == b'}' {
            if let Some(&n) = it.next() {
                out.push(n ^ 0x20);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Sends `data` as a packet (escaped).
fn send(fd: i32, data: &[u8]) {
    let mut p = Vec::with_capacity(data.len() + 4);
    p.push(b'$');
    let mut sum = 0u8;
    for &c in data {
        if matches!(c, b'$' | b'#' | b'}' | b'*') {
            p.push(b'}');
            p.push(c ^ 0x20);
            sum = sum.wrapping_add(b'}').wrapping_add(c ^ 0x20);
        } else {
            p.push(c);
            sum = sum.wrapping_add(c);
        }
    }
    p.extend_from_slice(format!("#{sum:02x}").as_bytes());
    sys::write_all(fd, &p);
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .filter_map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// `addr,len` in hex.
fn addr_len(text: &str) -> Option<(u64, usize)> {
    let (a, l) = text.split_once(',')?;
    let l = l.split(':').next()?;
    Some((
        u64::from_str_radix(a, 16).ok()?,
        usize::from_str_radix(l, 16).ok()?,
    ))
}

fn read_memory(text: &str) -> String {
    match addr_len(text) {
        Some((addr, len)) if len <= 4096 => {
            let mut buf = vec![0u8; len];
            if crate::guest_mem::read_mem(addr, &mut buf) {
                hex(&buf)
            } else {
                "E14".into()
            }
        }
        _ => "E01".into(),
    }
}

fn write_memory(text: &str) -> String {
    let Some((addr, len)) = addr_len(text) else {
        return "E01".into();
    };
    let data = unhex(text.split_once(':').map_or("", |x| x.1));
    if data.len() != len || !shadowmem::is_app_range(addr, addr + len as u64) {
        return "E14".into();
    }
    // SAFETY: writing into this process through the kernel, which reports
    // an unmapped or read-only target instead of faulting; it only reads
    // `data`'s `len` bytes.
    let n = unsafe { sys::process_vm(true, data.as_ptr().cast_mut(), addr, len) };
    if n != len as i64 {
        return "E14".into();
    }
    "OK".into()
}

/// `Z0,addr,kind` inserts, `z0,…` removes a breakpoint.
fn breakpoint(text: &str) -> String {
    let insert = text.starts_with('Z');
    let Some(addr) = text[3..]
        .split(',')
        .next()
        .and_then(|a| u64::from_str_radix(a, 16).ok())
    else {
        return "E01".into();
    };
    if insert {
        if is_breakpoint(addr) {
            return "OK".into();
        }
        let taken = BREAKPOINTS.iter().any(|b| {
            b.compare_exchange(0, addr, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        });
        if !taken {
            return "E28".into();
        }
    } else {
        for b in &BREAKPOINTS {
            let _ = b.compare_exchange(addr, 0, Ordering::AcqRel, Ordering::Acquire);
        }
    }
    // The translations covering the address run into it (or stop there).
    crate::syscall::invalidate(addr, 1);
    "OK".into()
}

/// gdb's amd64 registers: rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8–r15,
/// rip, eflags, cs, ss, ds, es, fs, gs, the x87 stack and control words,
/// xmm0–15, mxcsr (from the saved extended state).
fn registers(ctx: &ThreadCtx) -> String {
    let g = &ctx.regs.gpr;
    let mut out = String::with_capacity(1100);
    for i in [0usize, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15] {
        out += &hex(&g[i].to_le_bytes());
    }
    out += &hex(&ctx.regs.rip.to_le_bytes());
    out += &hex(&(ctx.regs.rflags as u32).to_le_bytes());
    for seg in [0x33u32, 0x2b, 0, 0, 0, 0] {
        out += &hex(&seg.to_le_bytes());
    }
    let x = &ctx.xsave.0;
    for i in 0..8 {
        out += &hex(&x[32 + 16 * i..32 + 16 * i + 10]);
    }
    let word = |off: usize| u32::from(u16::from_le_bytes([x[off], x[off + 1]]));
    let abridged = x[4];
    let mut tags = 0u32;
    for i in 0..8 {
        if abridged & (1 << i) == 0 {
            tags |= 3 << (2 * i);
        }
    }
    let dword = |off: usize| u32::from_le_bytes(x[off..off + 4].try_into().unwrap());
    for v in [
        word(0),
        word(2),
        tags,
        word(12),
        dword(8),
        word(20),
        dword(16),
        word(6),
    ] {
        out += &hex(&v.to_le_bytes());
    }
    for i in 0..16 {
        out += &hex(&x[160 + 16 * i..176 + 16 * i]);
    }
    out += &hex(&dword(24).to_le_bytes());
    out
}

/// The target's description: amd64 Linux (its default registers, of
/// which [`registers`] sends the general, x87 and SSE ones).
const TARGET_XML: &str = "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\">\
<target><architecture>i386:x86-64</architecture><osabi>GNU/Linux</osabi></target>";

/// The part `offset,length` of `data` (a `qXfer` read: the auxiliary
/// vector, where gdb finds the program's load address; the target
/// description): `l` (the last part) or `m`, then the bytes (`send`
/// escapes them).
fn xfer(data: &[u8], range: &str) -> Vec<u8> {
    let Some((offset, len)) = addr_len(range) else {
        return b"E01".to_vec();
    };
    let offset = (offset as usize).min(data.len());
    let end = (offset + len).min(data.len());
    let mut reply = vec![if end == data.len() { b'l' } else { b'm' }];
    reply.extend_from_slice(&data[offset..end]);
    reply
}
