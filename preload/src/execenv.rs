//! The environment handed to `execve`: `libdgad.so` stays in `LD_PRELOAD`
//! so the new program image runs under the runtime as well.

/// An environment array built for `execve`, with the strings it points at.
pub struct ExecEnv {
    _strings: Vec<Vec<u8>>,
    ptrs: Vec<*const libc::c_char>,
}

impl ExecEnv {
    /// The NULL-terminated array.
    pub fn as_ptr(&self) -> *const *const libc::c_char {
        self.ptrs.as_ptr()
    }
}

/// `None` when `envp` already preloads us (the common case); otherwise a
/// copy of it with our library added to `LD_PRELOAD` and the `DGAD_`
/// settings of this process that it lacks (a program that cleans the
/// environment of its child, `env -i`, still gets it run as itself). A
/// `DGAD_GDBSERVER` entry is left out either way.
pub fn with_preload(envp: u64) -> Option<ExecEnv> {
    let config = crate::init::config();
    let ours = config.preload.as_ref()?;
    let mut entries: Vec<*const libc::c_char> = Vec::new();
    let mut names: Vec<&[u8]> = Vec::new();
    let mut preload_at = None;
    let mut preloaded = false;
    let mut dropped = false;
    if envp != 0 {
        let mut p = envp as *const *const libc::c_char;
        // SAFETY: the guest's NULL-terminated environment array.
        unsafe {
            while !(*p).is_null() {
                let entry = *p;
                p = p.add(1);
                let s = core::ffi::CStr::from_ptr(entry).to_bytes();
                // The debugger waits for the first image only (Valgrind's
                // gdbserver does not follow `execve` either).
                if s.starts_with(GDBSERVER) {
                    dropped = true;
                    continue;
                }
                if let Some(v) = s.strip_prefix(b"LD_PRELOAD=") {
                    preloaded |= v
                        .split(|&c| c == b':' || c == b' ')
                        .any(|e| e == ours.as_slice());
                    preload_at = Some(entries.len());
                }
                if s.starts_with(b"DGAD_") {
                    names.push(s.split(|&c| c == b'=').next().unwrap_or(s));
                }
                entries.push(entry);
            }
        }
    }
    if preloaded && !dropped {
        return None;
    }
    let mut strings = Vec::new();
    if !preloaded {
        let mut value = b"LD_PRELOAD=".to_vec();
        value.extend_from_slice(ours);
        if let Some(i) = preload_at {
            // SAFETY: entry i is a valid C string from the guest's array.
            let old = unsafe { core::ffi::CStr::from_ptr(entries[i]).to_bytes() };
            value.push(b':');
            value.extend_from_slice(&old[b"LD_PRELOAD=".len()..]);
        }
        value.push(0);
        strings.push(value);
        match preload_at {
            Some(i) => entries[i] = strings[0].as_ptr().cast(),
            None => entries.push(strings[0].as_ptr().cast()),
        }
        for own in &config.own_env {
            let name = own.split(|&c| c == b'=').next().unwrap_or(own);
            if !names.contains(&name) && !own.starts_with(GDBSERVER) {
                entries.push(own.as_ptr().cast());
            }
        }
    }
    entries.push(core::ptr::null());
    Some(ExecEnv {
        _strings: strings,
        ptrs: entries,
    })
}

/// A copy of the environment array `envp` with `entry` (`NAME=value`)
/// added, replacing an entry of the same name.
pub fn with_entry(envp: u64, entry: &[u8]) -> ExecEnv {
    let name_len = entry
        .iter()
        .position(|&c| c == b'=')
        .map_or(entry.len(), |i| i + 1);
    let mut strings = vec![entry.to_vec()];
    strings[0].push(0);
    let mut ptrs: Vec<*const libc::c_char> = Vec::new();
    let mut p = envp as *const *const libc::c_char;
    // SAFETY: a NULL-terminated environment array (the guest's, or one
    // built by `with_preload`).
    unsafe {
        while !p.is_null() && !(*p).is_null() {
            let s = core::ffi::CStr::from_ptr(*p).to_bytes();
            if !s.starts_with(&entry[..name_len]) {
                ptrs.push(*p);
            }
            p = p.add(1);
        }
    }
    ptrs.push(strings[0].as_ptr().cast());
    ptrs.push(core::ptr::null());
    ExecEnv {
        _strings: strings,
        ptrs,
    }
}

/// The setting that makes an image wait for gdb (`DGAD_GDBSERVER`).
const GDBSERVER: &[u8] = b"DGAD_GDBSERVER=";

/// Whether the file `execve` is about to run (`path`, relative to `dirfd`
/// for `execveat`) is a statically linked ELF program: the kernel starts it
/// without the dynamic loader, so `LD_PRELOAD` cannot bring the runtime
/// into it. Scripts, dynamic programs, the dynamic loader run as a program
/// and unreadable files answer `false`.
pub fn statically_linked(dirfd: i64, path: u64) -> bool {
    // SAFETY: `path` is the guest's NUL-terminated string (the kernel reads
    // it, and fails with EFAULT on a bad pointer).
    let fd = unsafe {
        crate::sys::syscall6(
            libc::SYS_openat,
            dirfd as u64,
            path,
            (libc::O_RDONLY | libc::O_CLOEXEC) as u64,
            0,
            0,
            0,
        )
    };
    if fd < 0 {
        return false;
    }
    let pread =
        |buf: &mut [u8], offset: u64| crate::sys::pread(fd as i32, buf, offset) == buf.len() as i64;
    let mut header = [0u8; 64];
    let mut static_elf = false;
    if pread(&mut header, 0) && header[..4] == *b"\x7fELF" && header[4] == 2 {
        let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
        let phoff = u64::from_le_bytes(header[32..40].try_into().unwrap());
        let (phentsize, phnum) = (u16_at(&header, 54), u16_at(&header, 56));
        let mut table = [0u8; 64 * 56];
        let len = phentsize * phnum;
        if phentsize >= 40 && len <= table.len() && pread(&mut table[..len], phoff) {
            const PT_DYNAMIC: u32 = 2;
            const PT_INTERP: u32 = 3;
            let kind = |ph: &[u8]| u32::from_le_bytes(ph[..4].try_into().unwrap());
            let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
            let headers = || table[..len].chunks(phentsize);
            // A shared object run as a program (the dynamic loader itself,
            // `/lib64/ld-linux-x86-64.so.2 PROG`) has no interpreter either,
            // but names itself (DT_SONAME) and honours LD_PRELOAD.
            let names_itself = headers()
                .find(|ph| kind(ph) == PT_DYNAMIC)
                .is_some_and(|ph| {
                    let mut dynamic = [0u8; 64 * 16];
                    let n = (u64_at(ph, 32) as usize).min(dynamic.len()) & !15;
                    const DT_SONAME: u64 = 14;
                    pread(&mut dynamic[..n], u64_at(ph, 8))
                        && dynamic[..n].chunks(16).any(|d| u64_at(d, 0) == DT_SONAME)
                });
            static_elf = !names_itself && !headers().any(|ph| kind(ph) == PT_INTERP);
        }
    }
    // SAFETY: closing the descriptor we opened.
    unsafe { crate::sys::syscall3(libc::SYS_close, fd as u64, 0, 0) };
    static_elf
}
