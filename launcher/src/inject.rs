//! Early injection: the runtime takes over before any initialiser runs.
//!
//! Under plain `LD_PRELOAD` the runtime starts in its own constructor,
//! after the constructors of the libraries it depends on (libc's among
//! them) and of those the loader initialises first, and after the main
//! program's `.preinit_array`: their work runs natively, and threads or
//! handlers they set up have to be adopted afterwards. The launcher
//! starts the program traced instead and stops the loader at the
//! debugger rendezvous: the loader calls `_dl_debug_state` with
//! `_r_debug.r_state == RT_CONSISTENT` once every initial object is
//! mapped and relocated (and libc's early initialisation done), and only
//! then calls the initialisers (`_dl_init`). At that stop the thread is
//! sent to the runtime's early entry (`DGAD_EARLY_ENTRY`, exported by
//! `libdgad.so`), which initialises the runtime and continues the loader
//! from the code cache; the launcher then detaches, so the run costs
//! nothing more than under `LD_PRELOAD` (decision 33).
//!
//! Every way this can fail — ptrace refused, a static program, a loader
//! without the rendezvous symbols, `libdgad.so` not in the link map —
//! leaves the program running as under plain `LD_PRELOAD`, with one line
//! on stderr saying so.

use anyhow::{bail, Context, Result};
use nix::sys::ptrace;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;
use object::{Object, ObjectSymbol};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// `_r_debug.r_state` once the link map is complete (`<link.h>`).
const RT_CONSISTENT: u32 = 0;
/// `auxv` tag of the interpreter's load address.
const AT_BASE: u64 = 7;

/// How the runtime came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takeover {
    /// At the loader's rendezvous, before any initialiser.
    Early,
    /// In its constructor (`LD_PRELOAD` alone), for the reason printed.
    Constructor,
}

/// Starts `cmd` (whose environment preloads `lib`) and waits for it. With
/// `early`, the runtime is injected at the loader's rendezvous; see the
/// module documentation. Returns the program's status and how the runtime
/// came in.
pub fn run(cmd: &mut Command, lib: &Path, early: bool) -> Result<(ExitStatus, Takeover)> {
    refuse_foreign(cmd.get_program())?;
    // The host of a static program ([`command`]): the runtime starts the
    // program from its first instruction either way, and takes the host
    // over in its constructor, after the host's libc has initialised
    // itself (an early takeover would leave the host's initialisers unrun).
    let host = cmd
        .get_envs()
        .any(|(k, v)| k == "DGAD_STATIC_EXEC" && v.is_some());
    let early = early && !host;
    if !early {
        let status = cmd.status()?;
        return Ok((status, Takeover::Constructor));
    }
    // SAFETY: the closure runs in the child between fork and exec and
    // only makes the ptrace system call, which is async-signal-safe; its
    // failure is detected by the parent (`traced_by_us`).
    unsafe {
        cmd.pre_exec(|| {
            let _ = ptrace::traceme();
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pid = Pid::from_raw(child.id() as i32);
    let takeover = if traced_by_us(pid) {
        match inject(pid, lib) {
            Ok(Injected::Early) => Takeover::Early,
            Ok(Injected::Ended(status)) => return Ok((status, Takeover::Constructor)),
            Ok(Injected::Not(why)) => {
                eprintln!("dgad: {why}");
                Takeover::Constructor
            }
            Err(e) => {
                // The tracee may be stopped: let it go, as under LD_PRELOAD.
                let _ = ptrace::detach(pid, None);
                eprintln!(
                    "dgad: early injection failed ({e:#}); the runtime starts in its \
                     constructor, after the initialisers that run before it"
                );
                Takeover::Constructor
            }
        }
    } else {
        eprintln!(
            "dgad: cannot trace the program (ptrace refused: another tracer, or a seccomp or \
             Yama policy); the runtime starts in its constructor, so .preinit_array and the \
             constructors that run before it run natively"
        );
        Takeover::Constructor
    };
    Ok((wait_raw(pid)?, takeover))
}

/// What the injection did.
enum Injected {
    /// The runtime runs from the rendezvous on; the tracer has detached.
    Early,
    /// Not injected, for this reason; the tracer has detached.
    Not(String),
    /// The program ended before the rendezvous.
    Ended(ExitStatus),
}

/// Whether the child is traced by this process (its `PTRACE_TRACEME`
/// succeeded before the exec that `spawn` waited for).
fn traced_by_us(pid: Pid) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        == Some(std::process::id())
}

/// Waits for `pid` to end (no ptrace involved any more).
fn wait_raw(pid: Pid) -> Result<ExitStatus> {
    let mut raw = 0;
    loop {
        // SAFETY: waitpid writes the status into `raw`, a live i32.
        let r = unsafe { libc::waitpid(pid.as_raw(), &mut raw, 0) };
        if r == pid.as_raw() {
            return Ok(ExitStatus::from_raw(raw));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).context("waiting for the program");
        }
    }
}

/// The traced child's memory.
struct Memory(File);

impl Memory {
    fn open(pid: Pid) -> Result<Memory> {
        Ok(Memory(
            File::open(format!("/proc/{pid}/mem")).context("opening the program's memory")?,
        ))
    }

    fn u64(&self, addr: u64) -> Result<u64> {
        let mut b = [0u8; 8];
        self.0
            .read_exact_at(&mut b, addr)
            .with_context(|| format!("reading the program's memory at 0x{addr:x}"))?;
        Ok(u64::from_le_bytes(b))
    }

    fn c_string(&self, addr: u64) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut chunk = [0u8; 64];
        while out.len() < 4096 {
            let n = self.0.read_at(&mut chunk, addr + out.len() as u64)?;
            if n == 0 {
                break;
            }
            if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
        }
        anyhow::bail!("unterminated string at 0x{addr:x} in the program's memory")
    }
}

/// The address of the dynamic symbol `name` in the ELF file `path`,
/// relative to its load address.
fn symbol(path: &Path, name: &str) -> Result<Option<u64>> {
    // Read on demand: libdgad.so with its debug information is ~10 MB,
    // of which the dynamic symbols are a few kilobytes.
    let cache = object::ReadCache::new(
        File::open(path).with_context(|| format!("opening {}", path.display()))?,
    );
    let file =
        object::File::parse(&cache).with_context(|| format!("parsing {}", path.display()))?;
    let named = |s: &object::Symbol<'_, '_, &object::ReadCache<File>>| {
        s.name_bytes().ok() == Some(name.as_bytes()) && s.address() != 0
    };
    let found = file
        .dynamic_symbols()
        .find(named)
        .or_else(|| file.symbols().find(named));
    Ok(found.map(|s| s.address()))
}

/// The interpreter's load address (`AT_BASE`; 0 for a static program).
fn interpreter_base(pid: Pid) -> Result<u64> {
    let auxv =
        std::fs::read(format!("/proc/{pid}/auxv")).context("reading the auxiliary vector")?;
    Ok(auxv
        .chunks_exact(16)
        .map(|e| {
            (
                u64::from_le_bytes(e[..8].try_into().unwrap()),
                u64::from_le_bytes(e[8..].try_into().unwrap()),
            )
        })
        .find(|&(tag, _)| tag == AT_BASE)
        .map_or(0, |(_, v)| v))
}

/// The file mapped at `base` in `pid` (`/proc/PID/maps`).
fn mapped_file(pid: Pid, base: u64) -> Result<PathBuf> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).context("reading maps")?;
    maps.lines()
        .find_map(|l| {
            let start = u64::from_str_radix(l.split('-').next()?, 16).ok()?;
            let path = l.split_whitespace().nth(5)?;
            (start == base && path.starts_with('/')).then(|| PathBuf::from(path))
        })
        .with_context(|| format!("no file mapped at 0x{base:x} (the interpreter)"))
}

/// Waits for the next stop or end of the traced child.
fn next_event(pid: Pid) -> Result<WaitStatus> {
    loop {
        match waitpid(pid, None) {
            Err(nix::errno::Errno::EINTR) => continue,
            r => return r.context("waiting for the traced program"),
        }
    }
}

/// The exit status behind a `WaitStatus` that ended the process.
fn ended(w: WaitStatus) -> Option<ExitStatus> {
    match w {
        WaitStatus::Exited(_, code) => Some(ExitStatus::from_raw((code & 0xff) << 8)),
        WaitStatus::Signaled(_, sig, core) => Some(ExitStatus::from_raw(
            sig as i32 | if core { 0x80 } else { 0 },
        )),
        _ => None,
    }
}

/// Refuses a program that is an ELF file for another machine than x86-64
/// (a 32-bit x86 one, which Derivgrind supports and dgad does not): the
/// loader would drop the runtime with one warning and run it natively,
/// without a single derivative. Scripts and what cannot be read go on.
fn refuse_foreign(program: &std::ffi::OsStr) -> Result<()> {
    let Some(found) = locate(program) else {
        return Ok(());
    };
    let mut header = [0u8; 20];
    let read = std::fs::File::open(&found)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header));
    if read.is_err() || header[..4] != *b"\x7fELF" {
        return Ok(());
    }
    // e_ident[EI_CLASS] (2: 64-bit) and e_machine (62: x86-64).
    let machine = u16::from_le_bytes([header[18], header[19]]);
    if header[4] != 2 || machine != 62 {
        bail!(
            "{} is not an x86-64 program ({}-bit, ELF machine {machine}): dgad differentiates \
             x86-64 programs only",
            found.display(),
            if header[4] == 1 { 32 } else { 64 }
        );
    }
    Ok(())
}

/// Where `program` (a path, or a name looked up in `PATH`) is, if found.
fn locate(program: &std::ffi::OsStr) -> Option<PathBuf> {
    let path = Path::new(program);
    if program.as_encoded_bytes().contains(&b'/') {
        return Some(path.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|dirs| {
        std::env::split_paths(&dirs)
            .map(|d| d.join(path))
            .find(|p| p.is_file())
    })
}

/// The path of `program` if it is a statically linked x86-64 ELF program
/// (no interpreter; a shared object run as a program, which names itself
/// with `DT_SONAME`, is not one): the kernel starts it without the
/// dynamic loader, so it runs in `dgad-static-host` (decision 45).
pub fn static_program(program: &std::ffi::OsStr) -> Option<PathBuf> {
    use object::elf::{DT_SONAME, PT_DYNAMIC, PT_INTERP};
    use object::read::elf::{Dyn, FileHeader, ProgramHeader};
    let found = locate(program)?;
    // Only the headers are read (python3 or a large solver is megabytes).
    let cache = object::read::ReadCache::new(File::open(&found).ok()?);
    let data = &cache;
    let header = object::elf::FileHeader64::<object::Endianness>::parse(data).ok()?;
    let endian = header.endian().ok()?;
    if header.e_machine(endian) != object::elf::EM_X86_64 {
        return None;
    }
    let headers = header.program_headers(endian, data).ok()?;
    if headers.iter().any(|h| h.p_type(endian) == PT_INTERP) {
        return None;
    }
    let names_itself = headers
        .iter()
        .filter(|h| h.p_type(endian) == PT_DYNAMIC)
        .filter_map(|h| h.dynamic(endian, data).ok().flatten())
        .any(|d| d.iter().any(|e| e.d_tag(endian) == u64::from(DT_SONAME)));
    (!names_itself).then_some(found)
}

/// The command that runs `program` under the runtime `lib`: the program
/// itself, or for a statically linked one the host beside `lib`
/// (`dgad-static-host`), with the program's own `argv[0]` and its path in
/// `DGAD_STATIC_EXEC` (decision 45). Arguments and environment are the
/// caller's to add.
pub fn command(program: &std::ffi::OsStr, lib: &Path) -> Result<Command> {
    let Some(path) = static_program(program) else {
        return Ok(Command::new(program));
    };
    let host = lib.with_file_name("dgad-static-host");
    if !host.is_file() {
        bail!(
            "{} is statically linked, and running it needs {} beside {} \
             (cargo build --release -p launcher)",
            path.display(),
            host.display(),
            lib.display()
        );
    }
    let mut cmd = Command::new(host);
    cmd.arg0(program).env("DGAD_STATIC_EXEC", path);
    Ok(cmd)
}

/// From the stop after `execve` to the rendezvous: see the module
/// documentation.
fn inject(pid: Pid, lib: &Path) -> Result<Injected> {
    // The stop of the exec itself (a SIGTRAP, as PTRACE_TRACEME asks).
    let first = next_event(pid)?;
    if let Some(status) = ended(first) {
        return Ok(Injected::Ended(status));
    }
    let regs = ptrace::getregs(pid).context("reading the program's registers")?;
    let mem = Memory::open(pid)?;
    // The initial stack: argc, argv[], NULL, envp[].
    let argc = mem.u64(regs.rsp)?;
    let argv = regs.rsp + 8;
    let envp = argv + 8 * (argc + 1);
    let base = interpreter_base(pid)?;
    let not = |why: String| -> Result<Injected> {
        ptrace::detach(pid, None).context("detaching")?;
        Ok(Injected::Not(why))
    };
    if base == 0 {
        return not(
            "the program is statically linked: LD_PRELOAD cannot reach it, it runs natively \
             (docs/limitations.md)"
                .into(),
        );
    }
    let loader = mapped_file(pid, base)?;
    let (Some(debug_state), Some(r_debug)) = (
        symbol(&loader, "_dl_debug_state")?,
        symbol(&loader, "_r_debug")?,
    ) else {
        return not(format!(
            "{} has no _dl_debug_state/_r_debug: the runtime starts in its constructor",
            loader.display()
        ));
    };
    let Some(entry_offset) = symbol(lib, "DGAD_EARLY_ENTRY")? else {
        return not(format!(
            "{} has no DGAD_EARLY_ENTRY (an older build?): the runtime starts in its constructor",
            lib.display()
        ));
    };
    let lib_name = lib
        .file_name()
        .unwrap_or_default()
        .as_encoded_bytes()
        .to_vec();
    let bp = base + debug_state;
    let r_debug = base + r_debug;
    let word = ptrace::read(pid, bp as ptrace::AddressType).context("reading the loader's code")?;
    let trap = (word & !0xff) | 0xcc;
    ptrace::write(pid, bp as ptrace::AddressType, trap).context("setting the breakpoint")?;
    let mut deliver = None;
    loop {
        ptrace::cont(pid, deliver).context("resuming the program")?;
        deliver = None;
        let w = next_event(pid)?;
        if let Some(status) = ended(w) {
            return Ok(Injected::Ended(status));
        }
        let WaitStatus::Stopped(_, sig) = w else {
            continue;
        };
        let mut regs = ptrace::getregs(pid)?;
        if sig != Signal::SIGTRAP || regs.rip != bp + 1 {
            deliver = Some(sig);
            continue;
        }
        // At the rendezvous: take the breakpoint out, back to its start.
        ptrace::write(pid, bp as ptrace::AddressType, word)?;
        regs.rip = bp;
        let state = mem.u64(r_debug + 24)? as u32;
        if state != RT_CONSISTENT {
            // RT_ADD or RT_DELETE: step over the first instruction and
            // wait for the next call.
            ptrace::setregs(pid, regs)?;
            ptrace::step(pid, None)?;
            if let Some(status) = ended(next_event(pid)?) {
                return Ok(Injected::Ended(status));
            }
            ptrace::write(pid, bp as ptrace::AddressType, trap)?;
            continue;
        }
        ptrace::setregs(pid, regs)?;
        let Some(lib_base) = link_map_find(&mem, r_debug, &lib_name)? else {
            return not(format!(
                "{} is not among the loaded objects: the program runs without the runtime",
                lib.display()
            ));
        };
        let entry = mem.u64(lib_base + entry_offset)?;
        regs.r11 = bp;
        regs.rip = entry;
        regs.rdi = argc;
        regs.rsi = argv;
        regs.rdx = envp;
        ptrace::setregs(pid, regs)?;
        ptrace::detach(pid, None).context("detaching")?;
        return Ok(Injected::Early);
    }
}

/// The load address of the object whose name ends in `/name` (or is
/// `name`) in the loader's list (`_r_debug.r_map`, `struct link_map`:
/// `l_addr` at 0, `l_name` at 8, `l_next` at 24).
fn link_map_find(mem: &Memory, r_debug: u64, name: &[u8]) -> Result<Option<u64>> {
    let mut map = mem.u64(r_debug + 8)?;
    for _ in 0..4096 {
        if map == 0 {
            break;
        }
        let l_name = mem.c_string(mem.u64(map + 8)?)?;
        if l_name == name || l_name.ends_with(&[b"/", name].concat()) {
            return Ok(Some(mem.u64(map)?));
        }
        map = mem.u64(map + 24)?;
    }
    Ok(None)
}
