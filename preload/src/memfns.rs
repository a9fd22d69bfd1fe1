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
//! flags) and use `rep movsb`/`rep stosb`, fast on CPUs with ERMS/FSRM.

// SAFETY (the whole block): each function implements its C contract
// exactly — memory is touched only within the given lengths, callee-saved
// registers are preserved (only rax, rcx, rdx, rsi, rdi, r8 change), and
// the direction flag is clear again on return.
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
    // memset(dst, byte, n) -> dst
    "memset:",
    "    mov r8, rdi",
    "    mov eax, esi",
    "    mov rcx, rdx",
    "    rep stosb",
    "    mov rax, r8",
    "    ret",
    // memcpy(dst, src, n) -> dst
    "memcpy:",
    "    mov rax, rdi",
    "    mov rcx, rdx",
    "    rep movsb",
    "    ret",
    // memmove(dst, src, n) -> dst: forwards unless dst lies inside
    // [src, src + n), then backwards.
    "memmove:",
    "    mov rax, rdi",
    "    mov rcx, rdx",
    "    mov r8, rdi",
    "    sub r8, rsi",
    "    cmp r8, rdx",
    "    jae 2f",
    "    lea rsi, [rsi + rdx - 1]",
    "    lea rdi, [rdi + rdx - 1]",
    "    std",
    "    rep movsb",
    "    cld",
    "    ret",
    "2:  rep movsb",
    "    ret",
    // memcmp(a, b, n) / bcmp(a, b, n): 8 bytes at a time while they are
    // equal, then bytewise; the sign of the first differing byte's
    // difference (as unsigned chars).
    "memcmp:",
    "bcmp:",
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
    // strlen(s)
    "strlen:",
    "    mov rax, rdi",
    "7:  cmp byte ptr [rax], 0",
    "    je 8f",
    "    inc rax",
    "    jmp 7b",
    "8:  sub rax, rdi",
    "    ret",
    ".popsection",
);

#[cfg(test)]
mod tests {
    extern "C" {
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
