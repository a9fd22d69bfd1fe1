//! What this CPU and kernel let the runtime's own generated code use.
//!
//! The guest can only hold state the operating system enabled in XCR0, so
//! code that copies register shadows needs vector registers exactly as wide
//! as the widest enabled state: zmm where AVX-512 is on, ymm with AVX, xmm
//! otherwise. Using a wider form than the CPU has stops the program with
//! SIGILL (an AVX2-only machine ran every replayed move into one).

use std::sync::OnceLock;

/// XCR0: the state components the kernel saves and the guest may use.
pub fn xcr0() -> u64 {
    static X: OnceLock<u64> = OnceLock::new();
    *X.get_or_init(|| {
        let (lo, hi): (u32, u32);
        // SAFETY: xgetbv with ecx = 0 reads XCR0; OSXSAVE is set wherever
        // the runtime runs (its runtime entries use xsave).
        unsafe {
            core::arch::asm!("xgetbv", in("ecx") 0, out("eax") lo, out("edx") hi, options(nomem, nostack))
        };
        (u64::from(hi) << 32) | u64::from(lo)
    })
}

/// Width in bytes of the vector registers the guest can use: 64 (AVX-512:
/// opmask, ZMM_Hi256 and Hi16_ZMM enabled), 32 (AVX) or 16 (SSE).
pub fn vector_bytes() -> usize {
    let x = xcr0();
    if x & 0xe0 == 0xe0 {
        64
    } else if x & 0x4 != 0 {
        32
    } else {
        16
    }
}

/// Bytes of the `xsave` image of the state components XCR0 enables
/// (standard format; CPUID leaf 0xD, sub-leaf 0, EBX), rounded up to 64:
/// what a signal frame holds (2,696 bytes with AVX-512; the context keeps
/// a larger buffer).
pub fn xsave_bytes() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        // Leaf 0xD exists wherever xsave does, which the runtime requires.
        let r = core::arch::x86_64::__cpuid_count(0xd, 0);
        (r.ebx as usize)
            .next_multiple_of(64)
            .min(crate::context::XSAVE_BYTES)
    })
}
