//! Statically linked programs (decision 45).
//!
//! `LD_PRELOAD` cannot reach a program the kernel starts without the
//! dynamic loader, and the runtime needs a libc of its own. So a static
//! program runs inside a small dynamic *host* (`dgad-static-host`, next
//! to `libdgad.so`): the runtime takes the host over as any program, and
//! its initialisation, finding [`ENV`] in the environment, maps the static
//! image itself, builds the stack the kernel would have built (the host's
//! arguments and environment, an auxiliary vector describing the image),
//! and starts the guest at the image's entry with every register zero.
//! The host's own `main` never runs.
//!
//! Two libcs then share each thread: the guest's, whose thread block the
//! guest's `arch_prctl(ARCH_SET_FS)` installs, and the runtime's (the
//! host's). The `%fs` base is the guest's whenever cache code or a guest
//! function runs and the host's whenever runtime code does: the runtime's
//! entries put the guest's aside in `ThreadCtx::guest_fs` and load
//! `ThreadCtx::host_fs`, `dgad_resume` gives the guest's back (`entry.rs`,
//! with `wrfsbase`, so the CPU and kernel must offer FSGSBASE), and the
//! host signal handler and the libm wrappers' thunk do the same. The
//! guest's `arch_prctl` on `%fs` and its `brk` are answered here
//! ([`set_fs`], [`brk`]): the host's heap is not the guest's. A guest
//! thread's `CLONE_SETTLS` becomes its context's `guest_fs`; the runtime
//! code of all threads runs on the host thread block of the thread that
//! started the image (the runtime's own allocator and raw system calls
//! keep it off that block's per-thread state; see `docs/limitations.md`).
//!
//! The libm wrappers stand in for the image's own copies of the math
//! functions, found in its symbol table ([`Image::entries_of`]); for the
//! value they call the image's own function natively on the guest's base
//! ([`guest_call_stub`]), so results and `errno` are the program's own. A
//! stripped image has no symbol table: it runs without wrappers, and the
//! runtime says so.

use crate::context::ThreadCtx;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;

/// Set (to 1) once a static image is the guest: read by the assembly of
/// `entry.rs` and `signals.rs` as a byte.
pub static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// The environment entry that asks the host's runtime to run a static
/// program: its path.
pub const ENV: &str = "DGAD_STATIC_EXEC";

/// The host program's file name, in the directory of `libdgad.so`.
pub const HOST: &str = "dgad-static-host";

/// Whether the guest is a statically linked image.
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// The image, once mapped.
static IMAGE: OnceLock<Image> = OnceLock::new();

/// The guest's program break: where its heap starts and where it ends now.
static BRK_START: AtomicU64 = AtomicU64::new(0);
static BRK_END: AtomicU64 = AtomicU64::new(0);
/// The end of the address range reserved for the break after the image
/// (`PROT_NONE` until the break grows into it), so that no other mapping
/// (the code cache's chunks are placed near the code) takes it first.
static BRK_RESERVED: AtomicU64 = AtomicU64::new(0);
/// How much is reserved: the rest of a larger break goes where free.
const BRK_RESERVATION: u64 = 256 << 20;
static BRK_LOCK: crate::lock::Lock<()> = crate::lock::Lock::new(());

/// A mapped static image: what the libm interception needs of it.
pub struct Image {
    /// Function symbols: name → the address guest code reaches it at.
    functions: Vec<(String, u64)>,
    /// Whether the file had a symbol table at all.
    pub has_symbols: bool,
    /// The file as given.
    pub path: String,
    /// Its absolute path, NUL-terminated: what `/proc/self/exe` names for
    /// the guest ([`exe_alias`]).
    pub exe: std::ffi::CString,
}

impl Image {
    /// The entries at which guest code reaches function `name`: its own
    /// address, or for an IFUNC the PLT stub every call and address-of
    /// goes through (the stub's slot is filled by the image's start-up
    /// code, after this table is built).
    pub fn entries_of(&self, name: &str) -> Vec<u64> {
        let i = self.functions.partition_point(|(n, _)| n.as_str() < name);
        self.functions[i..]
            .iter()
            .take_while(|(n, _)| n == name)
            .map(|&(_, a)| a)
            .collect()
    }
}

/// The guest's auxiliary vector as bytes (what `/proc/self/auxv` would
/// hold for it), for the gdbserver.
static AUXV: OnceLock<Vec<u8>> = OnceLock::new();

/// The auxiliary vector the static guest started with, if the guest is one.
pub fn auxv() -> Option<&'static [u8]> {
    AUXV.get().map(Vec::as_slice)
}

/// The mapped image, when the guest is one.
pub fn image() -> Option<&'static Image> {
    IMAGE.get()
}

/// The value of [`ENV`] in `envp`, if this process is the host. Other
/// programs ignore it (`timeout 10 HOST …` passes it on to the host).
pub fn requested(envp: *const *const libc::c_char) -> Option<Vec<u8>> {
    let path = crate::settings::value(envp, ENV)?;
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    (exe.file_name()? == HOST).then(|| path.to_vec())
}

fn os_path(p: &[u8]) -> &std::path::Path {
    std::path::Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(p))
}

const PAGE: u64 = 4096;

fn page_down(a: u64) -> u64 {
    a & !(PAGE - 1)
}
fn page_up(a: u64) -> u64 {
    (a + PAGE - 1) & !(PAGE - 1)
}

/// A file mapped read-only (the image's headers and symbol table are read
/// from it, only the pages they are on touched), unmapped when dropped.
pub(crate) struct FileMap {
    at: *const u8,
    len: usize,
}

impl FileMap {
    pub(crate) fn new(file: &std::fs::File) -> std::io::Result<FileMap> {
        let len = file.metadata()?.len() as usize;
        if len == 0 {
            return Ok(FileMap {
                at: core::ptr::NonNull::<u8>::dangling().as_ptr(),
                len: 0,
            });
        }
        // SAFETY: a new private read-only mapping of the whole file.
        let at = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                std::os::fd::AsRawFd::as_raw_fd(file),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(FileMap { at: at.cast(), len })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `at` while the mapping lives (a
        // file truncated meanwhile raises SIGBUS, as a running program's
        // own mapped file does).
        unsafe { core::slice::from_raw_parts(self.at, self.len) }
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: our own mapping, no longer borrowed.
            unsafe { libc::munmap(self.at as *mut libc::c_void, self.len) };
        }
    }
}

/// A program header, the fields used.
struct Segment {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
}

/// Maps the static program `path` and prepares `ctx` to start it: its
/// entry in `rip`, its first stack (arguments `argv`, environment `envp`
/// without [`ENV`], the auxiliary vector) in `rsp`. Called by the
/// runtime's initialisation on the host's only thread.
pub fn start(
    ctx: &mut ThreadCtx,
    path: &[u8],
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
) -> Result<(), String> {
    let shown = String::from_utf8_lossy(path).into_owned();
    const HWCAP2_FSGSBASE: u64 = 1 << 1;
    // SAFETY: getauxval reads the process's auxiliary vector.
    if unsafe { libc::getauxval(libc::AT_HWCAP2) } & HWCAP2_FSGSBASE == 0 {
        return Err(format!(
            "{shown} is statically linked, and running it needs the FSGSBASE instructions, \
             which this CPU or kernel does not offer"
        ));
    }
    let opened =
        std::fs::File::open(os_path(path)).map_err(|e| format!("cannot open {shown}: {e}"))?;
    let mapped = FileMap::new(&opened).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let file = mapped.bytes();
    let bad = |why: &str| format!("{shown}: not a static x86-64 ELF program ({why})");
    use object::elf::{FileHeader64, EM_X86_64, ET_DYN, ET_EXEC, PT_INTERP, PT_LOAD, PT_PHDR};
    use object::read::elf::{FileHeader, ProgramHeader};
    let header = FileHeader64::<object::Endianness>::parse(file).map_err(|_| bad("header"))?;
    let endian = header.endian().map_err(|_| bad("header"))?;
    if header.e_machine(endian) != EM_X86_64 {
        return Err(bad("machine"));
    }
    let e_type = header.e_type(endian);
    let (entry, phoff) = (header.e_entry(endian), header.e_phoff(endian));
    let phentsize = u64::from(header.e_phentsize(endian));
    let segments: Vec<Segment> = header
        .program_headers(endian, file)
        .map_err(|_| bad("program headers"))?
        .iter()
        .map(|h| Segment {
            kind: h.p_type(endian),
            flags: h.p_flags(endian),
            offset: h.p_offset(endian),
            vaddr: h.p_vaddr(endian),
            filesz: h.p_filesz(endian),
            memsz: h.p_memsz(endian),
        })
        .collect();
    let phnum = segments.len() as u64;
    if segments.iter().any(|s| s.kind == PT_INTERP) {
        return Err(bad("it has an interpreter"));
    }
    let loads: Vec<&Segment> = segments.iter().filter(|s| s.kind == PT_LOAD).collect();
    let (Some(lo), Some(hi)) = (
        loads.iter().map(|s| page_down(s.vaddr)).min(),
        loads.iter().map(|s| s.vaddr.saturating_add(s.memsz)).max(),
    ) else {
        return Err(bad("no loadable segment"));
    };
    if hi >= 1 << 47 {
        return Err(bad("addresses beyond user space"));
    }
    if loads
        .iter()
        .any(|s| s.filesz > s.memsz || s.offset.saturating_add(s.filesz) > file.len() as u64)
    {
        return Err(bad("segment sizes"));
    }
    // ET_EXEC at its addresses; ET_DYN (static-pie) where the kernel puts
    // a reservation of the whole span.
    let bias = match e_type {
        ET_EXEC => 0,
        ET_DYN => {
            let span = page_up(hi) - lo;
            let at = crate::sys::map_anon(span as usize, libc::PROT_NONE, 0, false)
                .ok_or_else(|| format!("{shown}: no room for {span} bytes"))?;
            at - lo
        }
        _ => return Err(bad("not an executable")),
    };
    map_segments(
        std::os::fd::AsRawFd::as_raw_fd(&opened),
        &loads,
        bias,
        &shown,
    )?;
    let end = page_up(bias + hi);
    BRK_START.store(end, Ordering::Relaxed);
    BRK_END.store(end, Ordering::Relaxed);
    let reserved = crate::sys::map_anon(BRK_RESERVATION as usize, libc::PROT_NONE, end, true)
        .map_or(end, |at| at + BRK_RESERVATION);
    BRK_RESERVED.store(reserved, Ordering::Relaxed);
    // Where the program headers are in memory (AT_PHDR).
    let phdr = segments
        .iter()
        .find(|s| s.kind == PT_PHDR)
        .map(|s| s.vaddr)
        .or_else(|| {
            loads
                .iter()
                .find(|s| s.offset <= phoff && phoff < s.offset + s.filesz)
                .map(|s| s.vaddr + (phoff - s.offset))
        })
        .ok_or_else(|| bad("program headers not loaded"))?
        + bias;
    let (functions, has_symbols) = functions(header, endian, file, bias);
    let exe = std::fs::canonicalize(os_path(path))
        .ok()
        .and_then(|p| std::ffi::CString::new(p.into_os_string().into_encoded_bytes()).ok())
        .unwrap_or_else(|| std::ffi::CString::new(path).unwrap_or_default());
    // The thread's name (`/proc/self/comm`, `ps`) is the program's, as
    // after its own execve: the kernel's first 15 bytes of its file name.
    let name = exe
        .to_bytes()
        .rsplit(|&c| c == b'/')
        .next()
        .unwrap_or_default();
    let mut comm = [0u8; 16];
    let len = name.len().min(15);
    comm[..len].copy_from_slice(&name[..len]);
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, comm.as_ptr()) };
    let _ = IMAGE.set(Image {
        functions,
        has_symbols,
        path: shown,
        exe,
    });
    let sp = build_stack(
        argv,
        envp,
        &[
            (libc::AT_PHDR, phdr),
            (libc::AT_PHENT, phentsize),
            (libc::AT_PHNUM, phnum),
            (libc::AT_ENTRY, entry + bias),
        ],
        path,
        // An executable stack where the image asks for one (PT_GNU_STACK
        // with PF_X, or none at all), as the kernel gives: GCC's nested
        // functions put trampolines there.
        segments
            .iter()
            .find(|s| s.kind == object::elf::PT_GNU_STACK)
            .is_none_or(|s| s.flags & object::elf::PF_X != 0),
    )?;
    ctx.regs.rip = entry + bias;
    ctx.regs.gpr[crate::context::reg::RSP] = sp;
    let host_fs: u64;
    // SAFETY: reads this thread's %fs base (FSGSBASE checked above).
    unsafe { core::arch::asm!("rdfsbase {}", out(reg) host_fs, options(nomem, nostack)) };
    ctx.host_fs = host_fs;
    ctx.guest_fs = 0;
    ACTIVE.store(1, Ordering::Relaxed);
    Ok(())
}

/// Maps each loadable segment as the kernel does: the file's pages
/// private, the rest of the last page zero, anonymous pages for the rest
/// of its size.
fn map_segments(fd: i32, loads: &[&Segment], bias: u64, shown: &str) -> Result<(), String> {
    for s in loads {
        let start = bias + s.vaddr;
        let page = page_down(start);
        let file_end = start + s.filesz;
        let mem_end = page_up(start + s.memsz);
        let prot = (if s.flags & 4 != 0 { libc::PROT_READ } else { 0 })
            | (if s.flags & 2 != 0 {
                libc::PROT_WRITE
            } else {
                0
            })
            | (if s.flags & 1 != 0 { libc::PROT_EXEC } else { 0 });
        let fail = |what: &str, at: u64| {
            format!("{shown}: cannot map its segment at {at:#x} ({what}): the address is taken")
        };
        let fixed = if bias == 0 {
            libc::MAP_FIXED_NOREPLACE
        } else {
            libc::MAP_FIXED
        };
        if s.filesz > 0 {
            let len = page_up(file_end) - page;
            let off = page_down(s.offset);
            if s.offset - off != start - page {
                return Err(format!("{shown}: a segment's offset and address disagree"));
            }
            // Writable while the tail of the last page is zeroed.
            // SAFETY: maps the file at an address of the image's span.
            let r = unsafe {
                libc::mmap(
                    page as *mut libc::c_void,
                    len as usize,
                    prot | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | fixed,
                    fd,
                    off as libc::off_t,
                )
            };
            if r as u64 != page {
                return Err(fail("file", page));
            }
            if s.memsz > s.filesz {
                let zero_end = page_up(file_end).min(start + s.memsz);
                // SAFETY: [file_end, zero_end) lies in the page just mapped writable.
                unsafe {
                    core::ptr::write_bytes(file_end as *mut u8, 0, (zero_end - file_end) as usize)
                };
            }
            // SAFETY: the pages just mapped get the segment's protection.
            unsafe { libc::mprotect(page as *mut libc::c_void, len as usize, prot) };
        }
        let anon = if s.filesz > 0 {
            page_up(file_end)
        } else {
            page
        };
        if mem_end > anon && !map_at(anon, mem_end - anon, prot, fixed) {
            return Err(fail("zero pages", anon));
        }
    }
    Ok(())
}

/// The image's function symbols, sorted by name (with the bias added), and
/// whether it has a symbol table. An IFUNC symbol is reached through the
/// PLT stubs whose slots `R_X86_64_IRELATIVE` relocations with the
/// symbol's resolver fill (one entry each). Whatever cannot be read counts
/// as absent.
fn functions(
    header: &object::elf::FileHeader64<object::Endianness>,
    endian: object::Endianness,
    file: &[u8],
    bias: u64,
) -> (Vec<(String, u64)>, bool) {
    use object::elf::{R_X86_64_IRELATIVE, SHF_EXECINSTR, SHT_SYMTAB, STT_FUNC, STT_GNU_IFUNC};
    use object::read::elf::{FileHeader, Rela, SectionHeader, Sym};
    let Ok(sections) = header.sections(endian, file) else {
        return (Vec::new(), false);
    };
    let Ok(symbols) = sections.symbols(endian, file, SHT_SYMTAB) else {
        return (Vec::new(), false);
    };
    if symbols.is_empty() {
        return (Vec::new(), false);
    }
    // Resolver address → the GOT slot its IRELATIVE relocation fills.
    let mut slots: Vec<(u64, u64)> = Vec::new();
    for section in sections.iter() {
        if let Ok(Some((relas, _))) = section.rela(endian, file) {
            for r in relas {
                if r.r_type(endian, false) == R_X86_64_IRELATIVE {
                    slots.push((r.r_addend(endian) as u64, r.r_offset(endian)));
                }
            }
        }
    }
    slots.sort_unstable();
    // GOT slot → the PLT stub that jumps through it (`ff 25 disp32`, after
    // `endbr64` and a `bnd` prefix in IBT builds).
    let mut stubs: Vec<(u64, u64)> = Vec::new();
    for section in sections.iter().filter(|_| !slots.is_empty()) {
        let executable = section.sh_flags(endian) & u64::from(SHF_EXECINSTR) != 0;
        let small = section.sh_size(endian) <= 1 << 20;
        let (Ok(code), true) = (section.data(endian, file), executable && small) else {
            continue;
        };
        let addr = section.sh_addr(endian);
        for k in 0..code.len().saturating_sub(6) {
            if code[k] == 0xff && code[k + 1] == 0x25 {
                let disp = i32::from_le_bytes([code[k + 2], code[k + 3], code[k + 4], code[k + 5]]);
                let slot = (addr + k as u64 + 6).wrapping_add(disp as i64 as u64);
                let mut at = k;
                if at >= 1 && code[at - 1] == 0xf2 {
                    at -= 1;
                }
                if at >= 4 && code[at - 4..at] == [0xf3, 0x0f, 0x1e, 0xfa] {
                    at -= 4;
                }
                stubs.push((slot, addr + at as u64));
            }
        }
    }
    stubs.sort_unstable();
    // Every stub of every slot of a resolver: an IFUNC can have several
    // (calls from the program and from the library itself).
    let stubs_of = |resolver: u64| {
        let i = slots.partition_point(|&(r, _)| r < resolver);
        slots[i..]
            .iter()
            .take_while(|&&(r, _)| r == resolver)
            .flat_map(|&(_, slot)| {
                let j = stubs.partition_point(|&(s, _)| s < slot);
                stubs[j..].iter().take_while(move |&&(s, _)| s == slot)
            })
            .map(|&(_, stub)| stub)
            .collect::<Vec<u64>>()
    };
    let mut out = Vec::new();
    let mut ifuncs = Vec::new();
    for sym in symbols.iter() {
        let (kind, value) = (sym.st_type(), sym.st_value(endian));
        if value == 0 || sym.is_undefined(endian) || !(kind == STT_FUNC || kind == STT_GNU_IFUNC) {
            continue;
        }
        let Some(name) = symbols
            .symbol_name(endian, sym)
            .ok()
            .and_then(|n| std::str::from_utf8(n).ok())
        else {
            continue;
        };
        if kind == STT_GNU_IFUNC {
            out.extend(
                stubs_of(value)
                    .into_iter()
                    .map(|stub| (name.to_string(), stub + bias)),
            );
            ifuncs.push(name);
        } else {
            out.push((name.to_string(), value + bias));
        }
    }
    out.sort();
    // glibc's variants of an IFUNC `f` are `__f_sse2`, `__f_fma`, …: a call
    // that reaches one without the stub (through a GOT slot, `-fno-plt`)
    // is answered too.
    const VARIANTS: [&str; 8] = [
        "sse2", "sse41", "avx", "avx2", "fma", "fma4", "avx512", "evex",
    ];
    let mut variants = Vec::new();
    for name in ifuncs {
        for v in VARIANTS {
            let variant = format!("__{name}_{v}");
            let i = out.partition_point(|(n, _)| *n < variant);
            if let Some((_, a)) = out.get(i).filter(|(n, _)| *n == variant) {
                variants.push((name.to_string(), *a));
            }
        }
    }
    out.extend(variants);
    out.sort();
    out.dedup();
    (out, true)
}

/// Builds the guest's first stack as the kernel lays it out: `argc`, the
/// argument and environment pointers, the auxiliary vector, then the
/// strings. Returns its address (16-byte aligned, at `argc`).
fn build_stack(
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    image_aux: &[(u64, u64)],
    path: &[u8],
    executable: bool,
) -> Result<u64, String> {
    let collect = |mut p: *const *const libc::c_char| {
        let mut out: Vec<&[u8]> = Vec::new();
        // SAFETY: the host's NULL-terminated argument or environment array.
        unsafe {
            while !p.is_null() && !(*p).is_null() {
                out.push(core::ffi::CStr::from_ptr(*p).to_bytes_with_nul());
                p = p.add(1);
            }
        }
        out
    };
    let args = collect(argv);
    let prefix = format!("{ENV}=");
    let env: Vec<&[u8]> = collect(envp)
        .into_iter()
        .filter(|e| !e.starts_with(prefix.as_bytes()))
        .collect();
    // The stack: the soft limit of RLIMIT_STACK, within [8 MiB, 1 GiB].
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass.
    unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut lim) };
    let size = (lim.rlim_cur).clamp(8 << 20, 1 << 30) as usize;
    // SAFETY: a fresh private mapping for the guest's stack, reserved
    // lazily, with a guard page below it.
    let base = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            size + PAGE as usize,
            libc::PROT_READ | libc::PROT_WRITE | if executable { libc::PROT_EXEC } else { 0 },
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err("cannot map the static program's stack".into());
    }
    // SAFETY: the lowest page of the mapping becomes the guard.
    unsafe { libc::mprotect(base, PAGE as usize, libc::PROT_NONE) };
    let top = base as u64 + size as u64 + PAGE;
    let mut cursor = top - 16;
    let mut put = |bytes: &[u8]| {
        cursor -= bytes.len() as u64;
        // SAFETY: [cursor, +len) lies in the stack just mapped (the
        // strings are far smaller than 8 MiB, checked below).
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), cursor as *mut u8, bytes.len()) };
        cursor
    };
    let mut random = [0u8; 16];
    // SAFETY: fills our buffer (AT_RANDOM's bytes; a short read leaves zeros).
    unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
    let random_at = put(&random);
    let platform_at = put(b"x86_64\0");
    let mut execfn = path.to_vec();
    execfn.push(0);
    let execfn_at = put(&execfn);
    let env_at: Vec<u64> = env.iter().map(|e| put(e)).collect();
    let args_at: Vec<u64> = args.iter().map(|a| put(a)).collect();
    if top - cursor > (size / 2) as u64 {
        return Err("the arguments and environment do not fit the stack".into());
    }
    let host = |t: u64| {
        // SAFETY: reads the host's auxiliary vector.
        unsafe { libc::getauxval(t) }
    };
    let mut aux: Vec<(u64, u64)> = image_aux.to_vec();
    aux.extend([
        (libc::AT_PAGESZ, PAGE),
        (libc::AT_BASE, 0),
        (libc::AT_FLAGS, 0),
        (libc::AT_UID, host(libc::AT_UID)),
        (libc::AT_EUID, host(libc::AT_EUID)),
        (libc::AT_GID, host(libc::AT_GID)),
        (libc::AT_EGID, host(libc::AT_EGID)),
        (libc::AT_SECURE, 0),
        (libc::AT_HWCAP, host(libc::AT_HWCAP)),
        (libc::AT_HWCAP2, host(libc::AT_HWCAP2)),
        (libc::AT_CLKTCK, host(libc::AT_CLKTCK)),
        (libc::AT_PLATFORM, platform_at),
        (libc::AT_RANDOM, random_at),
        (libc::AT_EXECFN, execfn_at),
    ]);
    const AT_MINSIGSTKSZ: u64 = 51;
    for t in [libc::AT_SYSINFO_EHDR, AT_MINSIGSTKSZ] {
        let v = host(t);
        if v != 0 {
            aux.push((t, v));
        }
    }
    aux.push((libc::AT_NULL, 0));
    let _ = AUXV.set(
        aux.iter()
            .flat_map(|&(t, v)| [t, v])
            .flat_map(u64::to_ne_bytes)
            .collect(),
    );
    let mut words: Vec<u64> = Vec::new();
    words.push(args_at.len() as u64);
    words.extend(&args_at);
    words.push(0);
    words.extend(&env_at);
    words.push(0);
    for (t, v) in aux {
        words.extend([t, v]);
    }
    let mut sp = (cursor - 8 * words.len() as u64) & !15;
    let start = sp;
    for w in words {
        // SAFETY: [start, cursor) lies in the stack mapped above.
        unsafe { (sp as *mut u64).write(w) };
        sp += 8;
    }
    Ok(start)
}

/// Where [`guest_call_stub`] puts its stubs, and how far it got.
static STUBS: crate::lock::Lock<(u64, u64)> = crate::lock::Lock::new((0, 0));
const STUB_AREA: u64 = 256 << 10;
const STUB_BYTES: u64 = 64;

/// A stub through which a libm wrapper (running on the host's `%fs` base,
/// `dgad_native_host_fs`) calls the image's own function `target`
/// natively on the guest's base, so that the function computes the
/// value the program would have got and sets the guest's `errno`. The
/// stub keeps the stack as its caller left it (arguments on the stack stay
/// in place): it puts the return address aside in the context, and uses
/// r10, which no libm function takes an argument in. `None` when no
/// memory is left for it.
pub fn guest_call_stub(target: u64) -> Option<u64> {
    use core::mem::offset_of;
    let ret = offset_of!(ThreadCtx, guest_call_ret) as u32;
    let guest_fs = offset_of!(ThreadCtx, guest_fs) as u32;
    let host_fs = offset_of!(ThreadCtx, host_fs) as u32;
    let mut code: Vec<u8> = Vec::with_capacity(STUB_BYTES as usize);
    // pop qword ptr gs:[ret]
    code.extend([0x65, 0x8f, 0x04, 0x25]);
    code.extend(ret.to_le_bytes());
    // mov r10, qword ptr gs:[guest_fs]; wrfsbase r10
    code.extend([0x65, 0x4c, 0x8b, 0x14, 0x25]);
    code.extend(guest_fs.to_le_bytes());
    code.extend([0xf3, 0x49, 0x0f, 0xae, 0xd2]);
    // mov r10, target; call r10
    code.extend([0x49, 0xba]);
    code.extend(target.to_le_bytes());
    code.extend([0x41, 0xff, 0xd2]);
    // mov r10, qword ptr gs:[host_fs]; wrfsbase r10
    code.extend([0x65, 0x4c, 0x8b, 0x14, 0x25]);
    code.extend(host_fs.to_le_bytes());
    code.extend([0xf3, 0x49, 0x0f, 0xae, 0xd2]);
    // jmp qword ptr gs:[ret]
    code.extend([0x65, 0xff, 0x24, 0x25]);
    code.extend(ret.to_le_bytes());
    assert!(code.len() as u64 <= STUB_BYTES);
    let mut area = STUBS.lock();
    if area.0 == 0 {
        let rwx = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC;
        area.0 = crate::sys::map_anon(STUB_AREA as usize, rwx, 0, false).unwrap_or(u64::MAX);
    }
    // Said once (`area.1` then stays at STUB_AREA): the function runs as
    // machine code, not silently.
    if area.1 >= STUB_AREA {
        return None;
    }
    if area.0 == u64::MAX || area.1 + STUB_BYTES > STUB_AREA {
        crate::dgad_eprintln!(
            "no memory for the libm wrappers' calls of the static program's own \
             functions: some math functions are differentiated as machine code"
        );
        area.1 = STUB_AREA;
        return None;
    }
    let at = area.0 + area.1;
    // SAFETY: [at, at + STUB_BYTES) is unused memory of the stub area.
    unsafe { core::ptr::copy_nonoverlapping(code.as_ptr(), at as *mut u8, code.len()) };
    area.1 += STUB_BYTES;
    Some(at)
}

/// A file of `/proc/self` (or `/proc/PID` of this process) whose kernel
/// answer is the host's, not the static guest's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcSelf {
    /// `exe`: the running program.
    Exe,
    /// `auxv`: the auxiliary vector.
    Auxv,
}

/// For a static guest, the [`ProcSelf`] file a path argument `path` (a
/// guest string) names, if any.
pub fn proc_self(path: u64) -> Option<ProcSelf> {
    image()?;
    if path == 0 {
        return None;
    }
    let mut buf = [0u8; 32];
    for (i, b) in buf.iter_mut().enumerate() {
        // SAFETY: copies the guest's string one byte at a time, at most 32;
        // a bad pointer fails the copy (the call then goes to the kernel,
        // which says EFAULT).
        if !unsafe { crate::sys::safe_copy(b, (path + i as u64) as *const u8, 1) } || *b == 0 {
            break;
        }
    }
    let text = buf.split(|&c| c == 0).next().unwrap_or(&[]);
    let own = format!("/proc/{}/", crate::init::pid());
    let name = text
        .strip_prefix(b"/proc/self/")
        .or_else(|| text.strip_prefix(own.as_bytes()))?;
    match name {
        b"exe" => Some(ProcSelf::Exe),
        b"auxv" => Some(ProcSelf::Auxv),
        _ => None,
    }
}

/// For a static guest, a path argument naming its `/proc/self/exe`, which
/// the kernel resolves to the host: the image's own path instead, for
/// `readlink`, `open` and `execve`.
pub fn exe_alias(path: u64) -> Option<&'static std::ffi::CStr> {
    (proc_self(path)? == ProcSelf::Exe).then(|| image().map(|i| i.exe.as_c_str()))?
}

/// The guest's `arch_prctl(ARCH_SET_FS, base)`: the base the guest runs
/// on from now on (`dgad_resume` loads it).
pub fn set_fs(ctx: &mut ThreadCtx, base: u64) -> i64 {
    ctx.guest_fs = base;
    0
}

/// The guest's `brk(want)`: moves the guest's own break (after its image),
/// not the host's. Fails (answers the old break) where the pages are taken.
pub fn brk(want: u64) -> i64 {
    let _held = BRK_LOCK.lock();
    let (start, end, reserved) = (
        BRK_START.load(Ordering::Relaxed),
        BRK_END.load(Ordering::Relaxed),
        BRK_RESERVED.load(Ordering::Relaxed),
    );
    if want < start {
        return end as i64;
    }
    let (old_top, new_top) = (page_up(end), page_up(want));
    let (lo, hi) = (old_top.min(new_top), old_top.max(new_top));
    // Never into the shadow memory's ranges (the kernel's break would fail
    // there too: something is mapped).
    if crate::tool::tool().has_shadows() && !shadowmem::is_app_range(lo, hi) {
        return end as i64;
    }
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    // The break's pages are reserved lazily, as the kernel's are.
    const BREAK: i32 = libc::MAP_NORESERVE;
    let ok = if new_top > old_top {
        // Within the reservation the pages replace reserved ones; beyond
        // it they go only where nothing is.
        let split = new_top.min(reserved).max(old_top);
        (split == old_top || map_at(old_top, split - old_top, rw, BREAK | libc::MAP_FIXED))
            && (split == new_top
                || map_at(
                    split,
                    new_top - split,
                    rw,
                    BREAK | libc::MAP_FIXED_NOREPLACE,
                ))
    } else {
        if new_top < old_top {
            // The pages above the new break go: back to the reservation
            // within it, unmapped beyond.
            let split = reserved.clamp(new_top, old_top);
            if split > new_top {
                map_at(
                    new_top,
                    split - new_top,
                    libc::PROT_NONE,
                    BREAK | libc::MAP_FIXED,
                );
            }
            if old_top > split {
                // SAFETY: the guest's own break pages beyond the reservation.
                unsafe { libc::munmap(split as *mut libc::c_void, (old_top - split) as usize) };
            }
            crate::syscall::invalidate(new_top, old_top - new_top);
        }
        true
    };
    if !ok {
        return end as i64;
    }
    if hi > lo {
        crate::tool::tool().mem_written(lo, hi - lo);
    }
    BRK_END.store(want, Ordering::Relaxed);
    want as i64
}

/// Maps `len` bytes of fresh anonymous memory exactly at `at` (`flags`:
/// `MAP_FIXED` over the image's span or the break's own reservation, or
/// `MAP_FIXED_NOREPLACE`, and any others); whether it did.
fn map_at(at: u64, len: u64, prot: i32, flags: i32) -> bool {
    // SAFETY: with MAP_FIXED only over the image's span or the guest
    // break's reservation, which nothing else uses; with
    // MAP_FIXED_NOREPLACE the kernel refuses where anything is mapped.
    let r = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len as usize,
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if r != libc::MAP_FAILED && r as u64 != at {
        // SAFETY: a mapping the kernel put elsewhere (an old kernel ignoring
        // MAP_FIXED_NOREPLACE): ours to drop.
        unsafe { libc::munmap(r, len as usize) };
    }
    r as u64 == at
}

/// The `execve` of a static program by a guest under the runtime: the
/// host to run instead, and the environment entry naming the program.
/// `None` when the host is not beside `libdgad.so`.
pub fn host_for(path: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let lib = crate::init::config().preload.as_ref()?;
    let dir = match lib.iter().rposition(|&c| c == b'/') {
        Some(i) => &lib[..=i],
        None => b"./".as_slice(),
    };
    let mut host = dir.to_vec();
    host.extend_from_slice(HOST.as_bytes());
    let exists = std::fs::metadata(os_path(&host)).is_ok();
    exists.then(|| {
        let mut entry = format!("{ENV}=").into_bytes();
        entry.extend_from_slice(path);
        (host, entry)
    })
}
