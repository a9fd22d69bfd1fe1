//! Functions watched at their entry (`Tool::probed`, `Tool::probe`):
//! library functions that take a `double` or a `float` into arithmetic
//! dgad cannot follow — arbitrary precision (GMP's `mpf_set_d`,
//! `mpq_set_d`, MPFR's `mpfr_set_d`), which turns the value into limbs
//! with integer instructions. Unlike libgcc's conversions
//! (`mathwrap::softfloat`) they write memory, so they cannot run natively
//! under a wrapper (the shadows would not follow their stores): they run
//! translated as ever, and their translation starts with an exit where
//! the tool looks at the argument's shadow and, when it is active, says
//! once that the derivatives through it are lost (`ad::libm::untracked`).

use crate::context::ThreadCtx;
use std::sync::OnceLock;

/// (entry, argument bytes in xmm0, what the report says), sorted.
static PROBES: OnceLock<Vec<(u64, usize, &'static str)>> = OnceLock::new();

const GMP: &str = "arbitrary-precision arithmetic (GMP's __gmpf_set_d, __gmpf_init_set_d or \
     __gmpq_set_d) from an active value: dgad does not differentiate it, and derivatives \
     through it are 0";
const MPFR: &str = "arbitrary-precision arithmetic (MPFR's mpfr_set_d or mpfr_set_flt) from \
     an active value: dgad does not differentiate it, and derivatives through it are 0";

/// The watched functions: library, symbol, argument bytes, report.
const WATCHED: [(&[u8], &str, usize, &str); 5] = [
    (b"libgmp.so.10", "__gmpf_set_d", 8, GMP),
    (b"libgmp.so.10", "__gmpf_init_set_d", 8, GMP),
    (b"libgmp.so.10", "__gmpq_set_d", 8, GMP),
    (b"libmpfr.so.6", "mpfr_set_d", 8, MPFR),
    (b"libmpfr.so.6", "mpfr_set_flt", 4, MPFR),
];

/// Finds the watched functions in the libraries loaded at start-up (a
/// library `dlopen`ed later is not watched: `docs/limitations.md`).
pub fn init() {
    use crate::loaded::{find, Version};
    let mut table = Vec::new();
    for (library, symbol, bytes, what) in WATCHED {
        if let Some(entry) = find(library).and_then(|o| o.symbol(symbol, Version::Default)) {
            table.push((entry, bytes, what));
        }
    }
    table.sort_unstable_by_key(|&(entry, ..)| entry);
    table.dedup_by_key(|&mut (entry, ..)| entry);
    let _ = PROBES.set(table);
}

fn find_probe(pc: u64) -> Option<(usize, &'static str)> {
    let t = PROBES.get()?;
    let i = t.binary_search_by_key(&pc, |&(entry, ..)| entry).ok()?;
    Some((t[i].1, t[i].2))
}

/// Whether the function at `pc` is watched.
pub fn is_probe(pc: u64) -> bool {
    find_probe(pc).is_some()
}

/// The watched function at `pc` is entered: reports an active argument.
/// A shadow is active when it is not 0 but for its top bit (a tape index
/// below 2^31, or a tangent other than ±0).
pub fn probe(ctx: &ThreadCtx, pc: u64) {
    let Some((bytes, what)) = find_probe(pc) else {
        return;
    };
    let lanes = ctx.shadow.vec[0];
    let active = if bytes == 4 {
        lanes[0] & 0x7fff_ffff != 0
    } else {
        lanes[0] != 0 || lanes[1] & 0x7fff_ffff != 0
    };
    if active {
        crate::ad::libm::untracked(what);
    }
}
