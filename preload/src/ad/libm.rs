//! libm interception (`mathwrap`) for the derivative tools: the table
//! from each wrapped function's entry address to its native wrapper,
//! built with the calling tool's [`Host`].
//!
//! The addresses are libm's own definitions as the dynamic loader resolved
//! them (`dlsym` on the loaded libm, so IFUNC-selected variants are the
//! ones guest calls reach). libdgad itself depends on libm, so libm is
//! loaded before the guest runs, and a later `dlopen` of it returns the
//! same instance.

use mathwrap::{Host, Wrapped};
use std::sync::OnceLock;

/// Interceptions sorted by the real function's address.
static TABLE: OnceLock<Vec<Wrapped>> = OnceLock::new();

/// Builds the table with the wrappers of host `H` (a tool with
/// `DGAD_MATHWRAP` on; once per process). Returns how many symbols were
/// found.
pub fn init<H: Host>() -> usize {
    // SAFETY: dlopen/dlsym with NUL-terminated names, at start-up, on the
    // single thread that exists; RTLD_NOLOAD only looks the library up.
    let handle =
        unsafe { libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if handle.is_null() {
        return 0;
    }
    // libmvec (the vector variants gfortran and `-fopenmp-simd` code call)
    // is only there when the program needs it.
    // SAFETY: as above.
    let vector_handle = unsafe {
        libc::dlopen(
            c"libmvec.so.1".as_ptr(),
            libc::RTLD_NOLOAD | libc::RTLD_LAZY,
        )
    };
    // libc defines its own ldexp, frexp, modf, scalbn (and their f/l
    // variants); programs that find libc first (CPython) call those.
    // SAFETY: as above.
    let libc_handle =
        unsafe { libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    let lookup = |handle: *mut libc::c_void, name: &str, version: Option<&core::ffi::CStr>| {
        if handle.is_null() {
            return None;
        }
        let mut c = name.as_bytes().to_vec();
        c.push(0);
        let name = c.as_ptr() as *const libc::c_char;
        // SAFETY: as above; `c` and `version` are NUL-terminated.
        let p = unsafe {
            match version {
                None => libc::dlsym(handle, name),
                Some(v) => libc::dlvsym(handle, name, v.as_ptr()),
            }
        };
        (!p.is_null()).then_some(p as u64)
    };
    let mut table = mathwrap::wrappers::<H>(
        |name| {
            // The default version, the first one (glibc ≥ 2.29 still
            // exports exp, log, pow, … @GLIBC_2.2.5 for old binaries such
            // as numpy wheels), and libc's copy.
            let mut all: Vec<u64> = [
                lookup(handle, name, None),
                lookup(handle, name, Some(c"GLIBC_2.2.5")),
                lookup(libc_handle, name, None),
            ]
            .into_iter()
            .flatten()
            .collect();
            all.sort_unstable();
            all.dedup();
            all
        },
        |name| lookup(vector_handle, name, None),
    );
    table.sort_by_key(|w| w.real);
    // Aliases (`gamma` and `lgamma`, …) share an entry: keep the first.
    table.dedup_by_key(|w| w.real);
    let n = table.len();
    let _ = TABLE.set(table);
    n
}

/// The interception of the guest function starting at `pc`, if it is a
/// wrapped libm function: (wrapper, descriptor register, descriptor).
pub fn interception(pc: u64) -> Option<(u64, u8, u64)> {
    let t = TABLE.get()?;
    let i = t.binary_search_by_key(&pc, |w| w.real).ok()?;
    let w = &t[i];
    Some((
        w.wrapper,
        w.desc_reg,
        w.desc as *const mathwrap::Desc as u64,
    ))
}

/// A wrapped function raised the SSE exceptions `flags` that the program
/// had unmasked (`mathwrap::Host::fp_exception`): the SIGFPE it would
/// have got natively, queued for the calling thread.
pub fn fp_exception(ctx: &mut crate::context::ThreadCtx, flags: u32, function: u64) {
    // The kernel's choice of si_code for SSE exceptions: invalid,
    // division by zero, overflow, underflow or denormal, inexact.
    let code = if flags & 0x01 != 0 {
        7 // FPE_FLTINV
    } else if flags & 0x04 != 0 {
        3 // FPE_FLTDIV
    } else if flags & 0x08 != 0 {
        4 // FPE_FLTOVF
    } else if flags & 0x12 != 0 {
        5 // FPE_FLTUND
    } else {
        6 // FPE_FLTRES
    };
    crate::signals::queue_fault(ctx, libc::SIGFPE, code, function);
}
