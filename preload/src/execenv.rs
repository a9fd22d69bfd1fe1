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
/// copy of it with our library added to `LD_PRELOAD`.
pub fn with_preload(envp: u64) -> Option<ExecEnv> {
    let ours = crate::init::config().preload.as_ref()?;
    let mut entries: Vec<*const libc::c_char> = Vec::new();
    let mut preload_at = None;
    if envp != 0 {
        let mut p = envp as *const *const libc::c_char;
        // SAFETY: the guest's NULL-terminated environment array.
        unsafe {
            while !(*p).is_null() {
                let s = core::ffi::CStr::from_ptr(*p).to_bytes();
                if let Some(v) = s.strip_prefix(b"LD_PRELOAD=") {
                    if v.split(|&c| c == b':' || c == b' ')
                        .any(|e| e == ours.as_slice())
                    {
                        return None;
                    }
                    preload_at = Some(entries.len());
                }
                entries.push(*p);
                p = p.add(1);
            }
        }
    }
    let mut value = b"LD_PRELOAD=".to_vec();
    value.extend_from_slice(ours);
    if let Some(i) = preload_at {
        // SAFETY: entry i is a valid C string from the guest's array.
        let old = unsafe { core::ffi::CStr::from_ptr(entries[i]).to_bytes() };
        value.push(b':');
        value.extend_from_slice(&old[b"LD_PRELOAD=".len()..]);
    }
    value.push(0);
    let strings = vec![value];
    match preload_at {
        Some(i) => entries[i] = strings[0].as_ptr().cast(),
        None => entries.push(strings[0].as_ptr().cast()),
    }
    entries.push(core::ptr::null());
    Some(ExecEnv {
        _strings: strings,
        ptrs: entries,
    })
}
