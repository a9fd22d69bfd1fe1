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

/// Nonzero when the runtime's entry saves the guest's extended state with
/// `xsaveopt` rather than `xsave` (set once by [`init_entry`]). `xsaveopt`
/// skips components in their initial state and components unchanged since
/// the last `xrstor` from the same image, which cuts a runtime round trip
/// (a client request, an instruction left to the runtime) by a fifth here.
/// The image stays exact either way: a skipped component is either marked
/// initial in the header (readers check it, [`crate::ad::guest`]) or holds
/// what the previous `xrstor` loaded from it, and the runtime changes the
/// image only between its entry's save and its exit's `xrstor`.
pub static USE_XSAVEOPT: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

/// Chooses the entry's save instruction: `xsaveopt` where CPUID leaf
/// 0xD, sub-leaf 1 says the CPU has it.
pub fn init_entry() {
    // Leaf 0xD exists wherever xsave does, which the runtime requires.
    let eax = core::arch::x86_64::__cpuid_count(0xd, 1).eax;
    USE_XSAVEOPT.store(
        u8::from(eax & 1 != 0),
        core::sync::atomic::Ordering::Relaxed,
    );
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

/// Whether the CPU runs EVEX code on xmm registers (AVX512F and AVX512VL):
/// dot mode's tangent cache needs both, beside the state of
/// [`vector_bytes`] (a CPU with AVX-512 state but without VL has none).
pub fn has_avx512vl() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

/// The state components the runtime's entry saves and its exit restores
/// (`xsave`/`xrstor` mask, intersected with XCR0 by the CPU): x87, SSE,
/// AVX, MPX, AVX-512 and PKRU, everything the runtime or a guest signal
/// frame deals with. AMX tile state (components 17 and 18, 8 KiB of tile
/// data) is left out: the kernel enables it in XCR0 on CPUs that have it
/// (Sapphire Rapids), leaves it out of signal frames unless the process
/// asked for it, and the runtime never touches the tiles, so they stay in
/// the registers. Saving every XCR0 component (mask -1) wrote 11,008
/// bytes into the context's buffer, past its end, and made guest signal
/// frames 8 KiB larger than the kernel's, too large for an alternate
/// stack of SIGSTKSZ.
pub const XSAVE_MASK: u32 = 0x2ff;

/// Where the standard-format `xsave` image keeps `zmm16`–`zmm31`
/// (component 7, Hi16_ZMM; CPUID leaf 0xD, sub-leaf 7). Only meaningful
/// where XCR0 enables it. No lock: callable in signal context.
pub fn hi16_zmm_offset() -> usize {
    // Leaf 0xD exists wherever xsave does, which the runtime requires.
    core::arch::x86_64::__cpuid_count(0xd, 7).ebx as usize
}

/// Bytes of the standard-format `xsave` image of the components in
/// [`XSAVE_MASK`] that XCR0 enables (the end of the last one, from CPUID
/// leaf 0xD), rounded up to 64: what a guest signal frame holds (2,752
/// bytes with AVX-512 and PKRU; the context keeps a larger buffer).
pub fn xsave_bytes() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        let enabled = xcr0() & u64::from(XSAVE_MASK);
        // The legacy area and the header.
        let mut end = 576;
        for c in 2..32u32 {
            if enabled & (1 << c) != 0 {
                // Leaf 0xD exists wherever xsave does, which the runtime
                // requires; sub-leaf c gives the size (EAX) and offset (EBX)
                // of user component c.
                let r = core::arch::x86_64::__cpuid_count(0xd, c);
                end = end.max(r.ebx as usize + r.eax as usize);
            }
        }
        let n = end.next_multiple_of(64);
        assert!(
            n <= crate::context::XSAVE_BYTES,
            "xsave image of {n} bytes exceeds the context's buffer"
        );
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runtime's entry writes an image of `xsave_bytes()` and no more:
    /// with every XCR0 component saved, a CPU with AMX wrote 11,008 bytes
    /// into the context's 8,192.
    #[test]
    fn the_runtime_xsave_stays_inside_its_image() {
        #[repr(C, align(64))]
        struct Area([u8; 3 * crate::context::XSAVE_BYTES]);
        let mut area = Area([0xa5; 3 * crate::context::XSAVE_BYTES]);
        // SAFETY: the area is 64-byte aligned and larger than any standard
        // xsave image of the masked components; the header must be zero
        // for xrstor, which this test does not run.
        unsafe {
            core::arch::asm!(
                "xsave64 [{a}]",
                a = in(reg) area.0.as_mut_ptr(),
                in("eax") XSAVE_MASK,
                in("edx") 0,
                options(nostack)
            )
        };
        let n = xsave_bytes();
        assert!(n <= crate::context::XSAVE_BYTES);
        // Component 2 (AVX) where XCR0 enables it lies inside the image.
        assert!(n >= 576);
        let beyond = area.0[n..].iter().position(|&b| b != 0xa5);
        assert_eq!(beyond.map(|i| n + i), None, "xsave wrote past {n} bytes");
    }
}
