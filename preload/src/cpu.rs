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
