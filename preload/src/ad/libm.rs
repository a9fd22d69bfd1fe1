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

/// libgcc's `__float128` conversions watched (`mathwrap::softfloat`):
/// (entry, wrapper, descriptor register, descriptor), sorted by entry.
static SOFT: OnceLock<Vec<(u64, u64, u8, u64)>> = OnceLock::new();

/// Finds libgcc's `__float128` conversions — the program's own copies (its
/// symbol table: they are linked in from `libgcc.a`, as local symbols)
/// and `libgcc_s.so.1`'s — and watches them with host `H`'s wrappers.
/// A stripped program keeps no names for its copies; those are not
/// watched (`docs/limitations.md`).
pub fn init_softfloat<H: Host>() {
    use mathwrap::softfloat::{wrapper, SoftDesc, WATCHED};
    let image = crate::static_exec::image();
    let own = if image.is_none() {
        main_program_functions(&WATCHED.map(|(n, ..)| n))
    } else {
        Vec::new()
    };
    let libgcc = crate::loaded::find(b"libgcc_s.so.1");
    let mut table = Vec::new();
    for (name, width, what) in WATCHED {
        let mut entries: Vec<u64> = match image {
            Some(image) => image.entries_of(name),
            None => own
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|&(_, a)| a)
                .collect(),
        };
        entries.extend(libgcc.and_then(|o| o.symbol(name, crate::loaded::Version::Default)));
        for real in entries {
            let (entry, reg) = wrapper::<H>(width);
            let desc: &'static SoftDesc = Box::leak(Box::new(SoftDesc { real, what }));
            table.push((real, entry, reg, desc as *const SoftDesc as u64));
        }
    }
    table.sort_unstable_by_key(|&(real, ..)| real);
    table.dedup_by_key(|&mut (real, ..)| real);
    let _ = SOFT.set(table);
}

/// The addresses of the main program's functions named in `names`, from
/// its symbol table (`/proc/self/exe` mapped, so that only the pages of
/// the headers and the symbol and string tables are read; the load bias
/// added); none when it has no symbol table or cannot be read.
fn main_program_functions(names: &[&'static str]) -> Vec<(&'static str, u64)> {
    use object::elf::{FileHeader64, SHT_SYMTAB, STT_FUNC};
    use object::read::elf::{FileHeader, Sym};
    let Some(bias) = crate::loaded::main_program_bias() else {
        return Vec::new();
    };
    let Some(mapped) = std::fs::File::open("/proc/self/exe")
        .ok()
        .and_then(|f| crate::static_exec::FileMap::new(&f).ok())
    else {
        return Vec::new();
    };
    let file = mapped.bytes();
    let Ok(header) = FileHeader64::<object::Endianness>::parse(file) else {
        return Vec::new();
    };
    let Ok(endian) = header.endian() else {
        return Vec::new();
    };
    let Ok(sections) = header.sections(endian, file) else {
        return Vec::new();
    };
    let Ok(symbols) = sections.symbols(endian, file, SHT_SYMTAB) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for sym in symbols.iter() {
        if sym.st_type() != STT_FUNC || sym.is_undefined(endian) || sym.st_value(endian) == 0 {
            continue;
        }
        let Ok(name) = symbols.symbol_name(endian, sym) else {
            continue;
        };
        if let Some(&n) = names.iter().find(|n| n.as_bytes() == name) {
            out.push((n, bias.wrapping_add(sym.st_value(endian))));
        }
    }
    out
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
    if let Some(t) = TABLE.get() {
        if let Ok(i) = t.binary_search_by_key(&pc, |w| w.real) {
            let w = &t[i];
            return Some((
                w.wrapper,
                w.desc_reg,
                w.desc as *const mathwrap::Desc as u64,
            ));
        }
    }
    let soft = SOFT.get()?;
    let i = soft.binary_search_by_key(&pc, |&(real, ..)| real).ok()?;
    let (_, wrapper, reg, desc) = soft[i];
    Some((wrapper, reg, desc))
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

/// An active value reached code dgad does not differentiate
/// (`mathwrap::Host::untracked`, `ad::probes`): one line per process for
/// each `what`, and a lost derivative in the statistics. (One line for all
/// of them kept a second kind of loss quiet behind the first.)
pub fn untracked(what: &'static str) {
    use core::sync::atomic::{AtomicUsize, Ordering};
    // The messages said so far, by address; there are a handful.
    static SAID: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];
    let key = what.as_ptr() as usize;
    for slot in &SAID {
        match slot.compare_exchange(0, key, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break,
            Err(k) if k == key => return,
            Err(_) => {}
        }
    }
    crate::dgad_eprintln!("{}: {}", crate::tool::tool().name(), what);
    crate::stats::STATS
        .lost_derivatives
        .fetch_add(1, Ordering::Relaxed);
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
