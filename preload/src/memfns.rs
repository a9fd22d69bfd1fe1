//! The runtime's own `memset`, `memcpy`, `memmove`, `memcmp`, `bcmp` and
//! `strlen`: the compiler calls these names for copies, zeroing and
//! comparisons throughout the runtime (and Rust's standard library).
//! Left to the dynamic loader, those calls would bind to the first
//! definition in the process's global scope — a program's own, or a
//! sanitizer's interceptor (libtsan, libasan), or an allocator library's:
//! guest code, run natively on the runtime's stack and memory
//! (ThreadSanitizer then reported races in the runtime and hung, test
//! `c/own_memfns.c`). Defined here as hidden symbols, every reference in
//! `libdgad.so` binds to them when it is linked.
//!
//! They run with the direction flag clear (the runtime entries clear the
//! flags): small sizes with a few overlapping register moves, larger ones
//! with `rep movsb`/`rep stosb`, fast on CPUs with ERMS/FSRM.

// SAFETY (the whole block): each function implements its C contract
// exactly — memory is touched only within the given lengths, callee-saved
// registers are preserved (only rax, rcx, rdx, rsi, rdi, r8, xmm0 and xmm1
// change, all caller-saved), and the direction flag stays clear.
core::arch::global_asm!(
    ".pushsection .text.dgad_memfns, \"ax\", @progbits",
    ".globl memset, memcpy, memmove, memcmp, bcmp, strlen",
    ".hidden memset, memcpy, memmove, memcmp, bcmp, strlen",
    ".type memset, @function",
    ".type memcpy, @function",
    ".type memmove, @function",
    ".type memcmp, @function",
    ".type bcmp, @function",
    ".type strlen, @function",
    // memset(dst, byte, n) -> dst: up to 16 bytes with two overlapping
    // stores of the byte repeated, more with `rep stosb`.
    "memset:",
    ".cfi_startproc",
    "    mov r8, rdi",
    "    cmp rdx, 16",
    "    ja 24f",
    "    movzx eax, sil",
    "    mov rcx, 0x0101010101010101",
    "    imul rax, rcx",
    "    cmp rdx, 8",
    "    jb 21f",
    "    mov qword ptr [rdi], rax",
    "    mov qword ptr [rdi + rdx - 8], rax",
    "    mov rax, r8",
    "    ret",
    "21: cmp rdx, 4",
    "    jb 22f",
    "    mov dword ptr [rdi], eax",
    "    mov dword ptr [rdi + rdx - 4], eax",
    "    mov rax, r8",
    "    ret",
    "22: test rdx, rdx",
    "    jz 23f",
    "    mov byte ptr [rdi], al",
    "    mov byte ptr [rdi + rdx - 1], al",
    "    cmp rdx, 2",
    "    jbe 23f",
    "    mov byte ptr [rdi + 1], al",
    "23: mov rax, r8",
    "    ret",
    "24: mov eax, esi",
    "    mov rcx, rdx",
    "    rep stosb",
    "    mov rax, r8",
    "    ret",
    ".cfi_endproc",
    // memcpy(dst, src, n) and memmove(dst, src, n) -> dst, both safe for
    // overlapping ranges: up to 32 bytes every load comes before the
    // first store (two overlapping moves of the widest size that fits);
    // more goes forwards with `rep movsb` unless dst lies inside
    // [src, src + n), then backwards 8 bytes at a time (the backward
    // `rep movsb`, with the direction flag set, moves one byte per cycle
    // and BTreeMap insertions shift their nodes' keys with it).
    "memcpy:",
    "memmove:",
    ".cfi_startproc",
    "    mov rax, rdi",
    "    cmp rdx, 16",
    "    ja 34f",
    "    cmp rdx, 8",
    "    jb 31f",
    "    mov rcx, qword ptr [rsi]",
    "    mov r8, qword ptr [rsi + rdx - 8]",
    "    mov qword ptr [rdi], rcx",
    "    mov qword ptr [rdi + rdx - 8], r8",
    "    ret",
    "31: cmp rdx, 4",
    "    jb 32f",
    "    mov ecx, dword ptr [rsi]",
    "    mov r8d, dword ptr [rsi + rdx - 4]",
    "    mov dword ptr [rdi], ecx",
    "    mov dword ptr [rdi + rdx - 4], r8d",
    "    ret",
    "32: cmp rdx, 2",
    "    jb 33f",
    "    movzx ecx, word ptr [rsi]",
    "    movzx r8d, word ptr [rsi + rdx - 2]",
    "    mov word ptr [rdi], cx",
    "    mov word ptr [rdi + rdx - 2], r8w",
    "    ret",
    "33: test rdx, rdx",
    "    jz 39f",
    "    movzx ecx, byte ptr [rsi]",
    "    mov byte ptr [rdi], cl",
    "    ret",
    "34: cmp rdx, 32",
    "    ja 35f",
    "    movups xmm0, xmmword ptr [rsi]",
    "    movups xmm1, xmmword ptr [rsi + rdx - 16]",
    "    movups xmmword ptr [rdi], xmm0",
    "    movups xmmword ptr [rdi + rdx - 16], xmm1",
    "    ret",
    "35: mov rcx, rdi",
    "    sub rcx, rsi",
    "    cmp rcx, rdx",
    "    jb 36f",
    "    mov rcx, rdx",
    "    rep movsb",
    "    ret",
    "36: sub rdx, 8",
    "    mov rcx, qword ptr [rsi + rdx]",
    "    mov qword ptr [rdi + rdx], rcx",
    "    cmp rdx, 8",
    "    jae 36b",
    "37: test rdx, rdx",
    "    jz 39f",
    "    dec rdx",
    "    movzx ecx, byte ptr [rsi + rdx]",
    "    mov byte ptr [rdi + rdx], cl",
    "    jmp 37b",
    "39: ret",
    ".cfi_endproc",
    // memcmp(a, b, n) / bcmp(a, b, n): 8 bytes at a time while they are
    // equal, then bytewise; the sign of the first differing byte's
    // difference (as unsigned chars).
    "memcmp:",
    "bcmp:",
    ".cfi_startproc",
    "3:  cmp rdx, 8",
    "    jb 4f",
    "    mov rax, qword ptr [rdi]",
    "    cmp rax, qword ptr [rsi]",
    "    jne 4f",
    "    add rdi, 8",
    "    add rsi, 8",
    "    sub rdx, 8",
    "    jmp 3b",
    "4:  xor eax, eax",
    "    test rdx, rdx",
    "    jz 6f",
    "5:  movzx eax, byte ptr [rdi]",
    "    movzx ecx, byte ptr [rsi]",
    "    sub eax, ecx",
    "    jnz 6f",
    "    inc rdi",
    "    inc rsi",
    "    dec rdx",
    "    jnz 5b",
    "6:  ret",
    ".cfi_endproc",
    // strlen(s)
    "strlen:",
    ".cfi_startproc",
    "    mov rax, rdi",
    "7:  cmp byte ptr [rax], 0",
    "    je 8f",
    "    inc rax",
    "    jmp 7b",
    "8:  sub rax, rdi",
    "    ret",
    ".cfi_endproc",
    ".popsection",
);

#[cfg(test)]
mod tests {
    extern "C" {
        fn memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
        fn memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
        fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32;
        fn memset(d: *mut u8, c: i32, n: usize) -> *mut u8;
        fn strlen(s: *const u8) -> usize;
    }

    #[test]
    fn overlapping_moves_both_ways() {
        for (from, to) in [(0usize, 5usize), (5, 0), (3, 3)] {
            let mut buf: Vec<u8> = (0..40).collect();
            let mut want = buf.clone();
            want.copy_within(from..from + 30, to);
            // SAFETY: both ranges lie inside `buf`.
            unsafe { memmove(buf.as_mut_ptr().add(to), buf.as_ptr().add(from), 30) };
            assert_eq!(buf, want);
        }
    }

    /// Every length through the size cases (0–3, 4–7, 8–16, 17–32, more)
    /// at every overlap distance both ways, against `copy_within`; bytes
    /// outside the destination stay as they were.
    #[test]
    fn moves_of_every_size_and_overlap() {
        for n in 0..100usize {
            for to in 0..40usize {
                let from = 20;
                let mut buf: Vec<u8> = (0..160u8).collect();
                let mut want = buf.clone();
                want.copy_within(from..from + n, to);
                // SAFETY: both ranges lie inside `buf` (20 + 99 < 160).
                let r = unsafe { memmove(buf.as_mut_ptr().add(to), buf.as_ptr().add(from), n) };
                assert_eq!(buf, want, "memmove n={n} from={from} to={to}");
                assert_eq!(r, buf.as_mut_ptr().wrapping_add(to));
            }
            let src: Vec<u8> = (100..200u8).collect();
            let mut dst = vec![0xeeu8; 120];
            // SAFETY: n ≤ 99 bytes of both.
            let r = unsafe { memcpy(dst.as_mut_ptr().add(7), src.as_ptr(), n) };
            assert_eq!(r, dst.as_mut_ptr().wrapping_add(7));
            assert_eq!(&dst[7..7 + n], &src[..n], "memcpy n={n}");
            assert!(dst[..7].iter().chain(&dst[7 + n..]).all(|&b| b == 0xee));
        }
    }

    #[test]
    fn fills_of_every_size() {
        for n in 0..80usize {
            let mut buf = vec![0x11u8; 100];
            // SAFETY: 5 + n < 100.
            let r = unsafe { memset(buf.as_mut_ptr().add(5), 0x3c5, n) };
            assert_eq!(r, buf.as_mut_ptr().wrapping_add(5));
            assert!(buf[5..5 + n].iter().all(|&b| b == 0xc5), "memset n={n}");
            assert!(buf[..5].iter().chain(&buf[5 + n..]).all(|&b| b == 0x11));
        }
    }

    #[test]
    fn comparisons_order_as_unsigned_bytes() {
        let a = *b"0123456789abcdefXYZ";
        let mut b = a;
        // SAFETY: all lengths are within the arrays.
        unsafe {
            assert_eq!(memcmp(a.as_ptr(), b.as_ptr(), a.len()), 0);
            b[17] = 0xff;
            assert!(memcmp(a.as_ptr(), b.as_ptr(), a.len()) < 0);
            assert!(memcmp(b.as_ptr(), a.as_ptr(), a.len()) > 0);
            assert_eq!(memcmp(a.as_ptr(), b.as_ptr(), 17), 0);
            b[3] = b'0';
            assert!(memcmp(a.as_ptr(), b.as_ptr(), 8) > 0);
            assert_eq!(memcmp(a.as_ptr(), b.as_ptr(), 0), 0);
        }
    }

    #[test]
    fn fill_and_length() {
        let mut buf = [7u8; 33];
        // SAFETY: 32 bytes of the 33.
        unsafe { memset(buf.as_mut_ptr(), 0x1ab, 32) };
        assert!(buf[..32].iter().all(|&x| x == 0xab) && buf[32] == 7);
        // SAFETY: a NUL-terminated literal.
        assert_eq!(unsafe { strlen(c"dgad runtime".as_ptr().cast()) }, 12);
    }
}
