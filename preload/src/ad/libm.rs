//! libm interception (`mathwrap`) for the derivative tools: the table
//! from each wrapped function's entry address to its native wrapper,
//! built with the calling tool's [`Host`].
//!
//! The addresses are libm's own definitions as the dynamic loader resolves
//! them (looked up in the loaded libm's symbol table, `crate::loaded`, with
//! IFUNCs resolved, so the selected variants are the ones guest calls
//! reach). libdgad itself depends on libm, so libm is loaded before the
//! guest runs, and a later `dlopen` of it returns the same instance.

use mathwrap::{Host, Wrapped};
use std::sync::OnceLock;

/// Interceptions sorted by the real function's address.
static TABLE: OnceLock<Vec<Wrapped>> = OnceLock::new();

/// Builds the table with the wrappers of host `H` (a tool with
/// `DGAD_MATHWRAP` on; once per process). Returns how many symbols were
/// found.
pub fn init<H: Host>() -> usize {
    use crate::loaded::{find, Object, Version};
    let Some(libm) = find(b"libm.so.6") else {
        return 0;
    };
    // libmvec (the vector variants gfortran and `-fopenmp-simd` code call)
    // is only there when the program needs it.
    let libmvec = find(b"libmvec.so.1");
    // libc defines its own ldexp, frexp, modf, scalbn (and their f/l
    // variants); programs that find libc first (CPython) call those.
    let libc = find(b"libc.so.6");
    let lookup = |object: Option<Object>, name: &str, version: Version<'_>| {
        object.and_then(|o| o.symbol(name, version))
    };
    if let Some(image) = crate::static_exec::image() {
        // A static program: its own copies are reached, and called for the
        // value on the guest's %fs base (their errno is the program's).
        let stub = crate::static_exec::guest_call_stub;
        let table = mathwrap::wrappers::<H>(
            |name| {
                let entries = image.entries_of(name);
                entries
                    .into_iter()
                    .filter_map(|e| Some((e, stub(e)?)))
                    .collect()
            },
            |name| {
                let e = *image.entries_of(name).first()?;
                Some((e, stub(e)?))
            },
        );
        return set_table(table);
    }
    let table = mathwrap::wrappers::<H>(
        |name| {
            // The default version, the first one (glibc ≥ 2.29 still
            // exports exp, log, pow, … @GLIBC_2.2.5 for old binaries such
            // as numpy wheels), and libc's copy.
            let mut all: Vec<u64> = [
                lookup(Some(libm), name, Version::Default),
                lookup(Some(libm), name, Version::Named(c"GLIBC_2.2.5")),
                lookup(libc, name, Version::Default),
            ]
            .into_iter()
            .flatten()
            .collect();
            all.sort_unstable();
            all.dedup();
            all.into_iter().map(|a| (a, a)).collect()
        },
        |name| lookup(libmvec, name, Version::Default).map(|a| (a, a)),
    );
    set_table(table)
}

/// Sorts and keeps the table; returns its size.
fn set_table(mut table: Vec<Wrapped>) -> usize {
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

/// A wrapped libm function's partial lies beyond the range of doubles
/// (`mathwrap::Host::partial_beyond_double`): one line per process, as the
/// derivative through it is wrong.
pub fn partial_beyond_double() {
    use core::sync::atomic::{AtomicBool, Ordering};
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        crate::dgad_eprintln!(
            "{}: a partial derivative of a libm function (long double, or ldexp/scalbn/frexp by \
             more than double's exponents) lies beyond the range of doubles (the tape's and the \
             tangents' precision): it becomes infinite or loses its digits, and derivatives \
             through it are wrong unless its part in them is negligible",
            crate::tool::tool().name()
        );
        crate::stats::STATS
            .lost_derivatives
            .fetch_add(1, Ordering::Relaxed);
    }
}
