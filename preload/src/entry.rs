//! The assembly seams between cache code and the runtime.
//!
//! - `dgad_takeover`: the `.init_array` entry. It initialises the runtime and,
//!   instead of returning to the dynamic loader, enters the dispatcher with
//!   the loader's return address as the first guest pc.
//! - `dgad_enter_exit` / `dgad_enter_ibl_miss`: where exit stubs and the
//!   indirect-branch probe jump; they save the guest state into the context,
//!   switch to the runtime stack and call [`crate::dispatch::dgad_dispatch`].
//! - `dgad_enter_request`: where a client request's exit stub jumps; it
//!   answers most requests saving only what the runtime's Rust code uses
//!   (the light path), the rest as `dgad_enter_exit` does.
//! - `dgad_signal_entry`: where the signal handler redirects a thread that
//!   was interrupted at a guest-instruction boundary.
//! - `dgad_resume`: restores the guest state and jumps to `resume_addr`.
//! - `dgad_raw_clone`: runs `clone`/`clone3`; the child starts on its own
//!   runtime stack with its own context.
//!
//! Invariant: outside the runtime, `rsp` is the guest's; the runtime never
//! pushes anything onto the guest stack (its red zone belongs to the guest).

use crate::context::ThreadCtx;
use core::arch::global_asm;
use core::mem::offset_of;

global_asm!(
    // The guest's general registers (but rsp) and flags into the context.
    ".macro dgad_save_gprs_and_flags",
    "    mov qword ptr gs:[{GPR} + 0*8], rax",
    "    mov qword ptr gs:[{GPR} + 1*8], rcx",
    "    mov qword ptr gs:[{GPR} + 2*8], rdx",
    "    mov qword ptr gs:[{GPR} + 3*8], rbx",
    "    mov qword ptr gs:[{GPR} + 5*8], rbp",
    "    mov qword ptr gs:[{GPR} + 6*8], rsi",
    "    mov qword ptr gs:[{GPR} + 7*8], rdi",
    "    mov qword ptr gs:[{GPR} + 8*8], r8",
    "    mov qword ptr gs:[{GPR} + 9*8], r9",
    "    mov qword ptr gs:[{GPR} + 10*8], r10",
    "    mov qword ptr gs:[{GPR} + 11*8], r11",
    "    mov qword ptr gs:[{GPR} + 12*8], r12",
    "    mov qword ptr gs:[{GPR} + 13*8], r13",
    "    mov qword ptr gs:[{GPR} + 14*8], r14",
    "    mov qword ptr gs:[{GPR} + 15*8], r15",
    "    pushfq",
    "    pop qword ptr gs:[{RFLAGS}]",
    ".endm",
    "",
    ".globl dgad_takeover",
    ".type dgad_takeover,@function",
    "dgad_takeover:",
    // Taken over already (the launcher's early entry below): this is the
    // constructor running as guest code, which has nothing left to do.
    "    cmp byte ptr [rip + {TAKEN}], 0",
    "    jne 2f",
    "    sub rsp, 8",
    "    call {init}",
    "    add rsp, 8",
    "1:  test eax, eax",
    "    jz 2f",
    "    cmp eax, 2",
    "    je 3f",
    "    pop qword ptr gs:[{RIP}]",
    "    mov qword ptr gs:[{REASON}], {RESUME_AT_RIP}",
    "    jmp dgad_save_and_dispatch",
    "2:  ret",
    // A statically linked program (`static_exec`): init mapped it and left
    // its entry in the context's rip and its first stack in rsp. It starts
    // as the kernel starts a program: every other register and the %fs
    // base zero (rdx = 0: no function for `atexit`).
    "3:  mov rsp, qword ptr gs:[{GPR} + 4*8]",
    "    push qword ptr gs:[{RIP}]",
    "    xor eax, eax",
    "    wrfsbase rax",
    "    xor ebx, ebx",
    "    xor ecx, ecx",
    "    xor edx, edx",
    "    xor esi, esi",
    "    xor edi, edi",
    "    xor ebp, ebp",
    "    xor r8d, r8d",
    "    xor r9d, r9d",
    "    xor r10d, r10d",
    "    xor r11d, r11d",
    "    xor r12d, r12d",
    "    xor r13d, r13d",
    "    xor r14d, r14d",
    "    xor r15d, r15d",
    "    pop qword ptr gs:[{RIP}]",
    "    mov qword ptr gs:[{REASON}], {RESUME_AT_RIP}",
    "    jmp dgad_save_and_dispatch",
    "",
    // The launcher's early entry (`dgad` stops the loader at
    // `_dl_debug_state`, relocation done and no initialiser run yet, and
    // sends the thread here): r11 holds the guest pc, rdi/rsi/rdx argc,
    // argv and envp, rsp is the guest's. At a function's entry with no
    // arguments every caller-saved register is dead and the callee-saved
    // ones survive the call, so the guest state is the registers after
    // init, the guest pc pushed as a return address.
    ".globl dgad_takeover_traced",
    ".type dgad_takeover_traced,@function",
    "dgad_takeover_traced:",
    "    push r11",
    "    push rbp",
    "    mov rbp, rsp",
    "    and rsp, -16",
    "    call {init_early}",
    "    mov rsp, rbp",
    "    pop rbp",
    "    jmp 1b",
    "",
    ".globl dgad_enter_exit",
    ".type dgad_enter_exit,@function",
    "dgad_enter_exit:",
    "    mov qword ptr gs:[{EXIT_RECORD}], rax",
    "    mov rax, qword ptr gs:[{SPILL_RAX}]",
    "    mov qword ptr gs:[{REASON}], {EXIT_STUB}",
    "    jmp dgad_save_and_dispatch",
    "",
    // A client request's exit (as `dgad_enter_exit`). The light path: the
    // general registers and flags are saved as for every entry, but of the
    // extended state only xmm0–15 and MXCSR, the registers this library's
    // Rust code uses (it is built for baseline x86-64, whose SSE
    // instructions leave the upper halves of the ymm and zmm registers
    // alone); no `xsave`, `fninit` or `xrstor`, which are 60 % of a full
    // entry. `dgad_light_request` answers the request if the tool can
    // without touching anything else (`Tool::light_request`); else it
    // changes nothing and the full path runs from where it would have
    // (the registers it needs are in the context or back in the CPU). A
    // guest with AC or TF set (the runtime's own code must not run with
    // them) and a statically linked guest (its %fs base must be swapped)
    // take the full path at once.
    ".globl dgad_enter_request",
    ".type dgad_enter_request,@function",
    "dgad_enter_request:",
    "    mov qword ptr gs:[{EXIT_RECORD}], rax",
    "    mov rax, qword ptr gs:[{SPILL_RAX}]",
    "    mov qword ptr gs:[{REASON}], {EXIT_STUB}",
    "    mov qword ptr gs:[{GPR} + 4*8], rsp",
    "    mov rsp, qword ptr gs:[{STACK}]",
    "    dgad_save_gprs_and_flags",
    "    test dword ptr gs:[{RFLAGS}], {AC_TF}",
    "    jnz dgad_entry_flags_saved",
    "    cmp byte ptr [rip + {STATIC_FS}], 0",
    "    jne dgad_entry_flags_saved",
    "    cld",
    "    mov rbx, qword ptr gs:[0]",
    "    stmxcsr dword ptr [rbx + {LIGHT_MXCSR}]",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 0*16], xmm0",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 1*16], xmm1",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 2*16], xmm2",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 3*16], xmm3",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 4*16], xmm4",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 5*16], xmm5",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 6*16], xmm6",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 7*16], xmm7",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 8*16], xmm8",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 9*16], xmm9",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 10*16], xmm10",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 11*16], xmm11",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 12*16], xmm12",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 13*16], xmm13",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 14*16], xmm14",
    "    movups xmmword ptr [rbx + {LIGHT_XMM} + 15*16], xmm15",
    // The default MXCSR only when the guest's is not it: one `ldmxcsr`
    // fewer on the common path.
    "    cmp dword ptr [rbx + {LIGHT_MXCSR}], {DEFAULT_MXCSR_VALUE}",
    "    je 13f",
    "    ldmxcsr dword ptr [rip + {DEFAULT_MXCSR}]",
    "13:",
    "    mov dword ptr [rbx + {IN_RUNTIME}], 1",
    "    mov rdi, rbx",
    "    call {light}",
    "    movups xmm0, xmmword ptr [rbx + {LIGHT_XMM} + 0*16]",
    "    movups xmm1, xmmword ptr [rbx + {LIGHT_XMM} + 1*16]",
    "    movups xmm2, xmmword ptr [rbx + {LIGHT_XMM} + 2*16]",
    "    movups xmm3, xmmword ptr [rbx + {LIGHT_XMM} + 3*16]",
    "    movups xmm4, xmmword ptr [rbx + {LIGHT_XMM} + 4*16]",
    "    movups xmm5, xmmword ptr [rbx + {LIGHT_XMM} + 5*16]",
    "    movups xmm6, xmmword ptr [rbx + {LIGHT_XMM} + 6*16]",
    "    movups xmm7, xmmword ptr [rbx + {LIGHT_XMM} + 7*16]",
    "    movups xmm8, xmmword ptr [rbx + {LIGHT_XMM} + 8*16]",
    "    movups xmm9, xmmword ptr [rbx + {LIGHT_XMM} + 9*16]",
    "    movups xmm10, xmmword ptr [rbx + {LIGHT_XMM} + 10*16]",
    "    movups xmm11, xmmword ptr [rbx + {LIGHT_XMM} + 11*16]",
    "    movups xmm12, xmmword ptr [rbx + {LIGHT_XMM} + 12*16]",
    "    movups xmm13, xmmword ptr [rbx + {LIGHT_XMM} + 13*16]",
    "    movups xmm14, xmmword ptr [rbx + {LIGHT_XMM} + 14*16]",
    "    movups xmm15, xmmword ptr [rbx + {LIGHT_XMM} + 15*16]",
    // Always: the runtime's code may have raised sticky exception flags.
    "    ldmxcsr dword ptr [rbx + {LIGHT_MXCSR}]",
    "    mov dword ptr [rbx + {IN_RUNTIME}], 0",
    "    test eax, eax",
    "    jz dgad_resume_guest",
    "    jmp dgad_entry_flags_saved",
    "",
    ".globl dgad_enter_ibl_miss",
    ".type dgad_enter_ibl_miss,@function",
    "dgad_enter_ibl_miss:",
    // Way 0 of the lookup table had no translation of the target (an
    // empty set, or a translation whose check failed): the target is in
    // rcx, guest rax and rcx in the lookup slots below the guest's red
    // zone (copied into the context first: the runtime reads them there,
    // and a way-1 hit leaves them in place for its target), rdx live.
    // Probe way 1 without touching the flags (a computed goto's target
    // may read them): rcx = target - key, zero on a match.
    "    mov rax, qword ptr [rsp + {SLOT_RAX}]",
    "    mov qword ptr gs:[{SPILL_RAX}], rax",
    "    mov rax, qword ptr [rsp + {SLOT_RCX}]",
    "    mov qword ptr gs:[{SPILL_RCX}], rax",
    "    mov qword ptr gs:[{IBL_TARGET}], rcx",
    "    mov qword ptr gs:[{SPILL_RDX}], rdx",
    "    movzx eax, cx",
    "    mov rdx, qword ptr gs:[{KEYS2} + rax*8]",
    "    not rdx",
    "    lea rcx, [rcx + rdx + 1]",
    "    jrcxz 3f",
    "4:  mov rax, qword ptr gs:[{SPILL_RAX}]",
    "    mov rcx, qword ptr gs:[{SPILL_RCX}]",
    "    mov rdx, qword ptr gs:[{SPILL_RDX}]",
    "    mov qword ptr gs:[{REASON}], {IBL_MISS}",
    "    jmp dgad_save_and_dispatch",
    // Way 1 matches (unless its value is 0, an empty entry): swap the
    // ways, so the entry used last is the one probed inline, and go to
    // the translation's lookup entry with the target in rcx (it checks
    // it and restores rax and rcx). If another thread dropped entries
    // meanwhile (the epoch moved), the swap may have brought one back:
    // empty the set and leave for the runtime instead
    // (`ThreadCtx::ibl_invalidate`). No flags change.
    "3:  mov rcx, qword ptr gs:[{VALUES2} + rax*8]",
    "    jrcxz 4b",
    "    mov rdx, qword ptr gs:[{EPOCH}]",
    "    mov qword ptr gs:[{SCRATCH}], rdx",
    "    mov qword ptr gs:[{SCRATCH} + 8], rcx",
    "    mov rdx, qword ptr gs:[{KEYS} + rax*8]",
    "    mov qword ptr gs:[{KEYS2} + rax*8], rdx",
    "    mov rdx, qword ptr gs:[{VALUES} + rax*8]",
    "    mov qword ptr gs:[{VALUES2} + rax*8], rdx",
    "    mov qword ptr gs:[{VALUES} + rax*8], rcx",
    "    mov rdx, qword ptr gs:[{IBL_TARGET}]",
    "    mov qword ptr gs:[{KEYS} + rax*8], rdx",
    "    mfence",
    "    mov rcx, qword ptr gs:[{EPOCH}]",
    "    mov rdx, qword ptr gs:[{SCRATCH}]",
    "    not rdx",
    "    lea rcx, [rcx + rdx + 1]",
    "    jrcxz 5f",
    "    lea rdx, [rip + dgad_enter_ibl_miss]",
    "    mov qword ptr gs:[{VALUES} + rax*8], rdx",
    "    mov qword ptr gs:[{KEYS} + rax*8], 0",
    "    mov qword ptr gs:[{KEYS2} + rax*8], 0",
    "    mov qword ptr gs:[{VALUES2} + rax*8], 0",
    "    jmp 4b",
    "5:  mov rax, qword ptr gs:[{HITS2}]",
    "    lea rax, [rax + 1]",
    "    mov qword ptr gs:[{HITS2}], rax",
    "    mov rax, qword ptr gs:[{SCRATCH} + 8]",
    "    mov rcx, qword ptr gs:[{IBL_TARGET}]",
    "    mov rdx, qword ptr gs:[{SPILL_RDX}]",
    "    jmp rax",
    "",
    // Guest GPRs and flags are live; rsp is the guest's.
    "dgad_save_and_dispatch:",
    "    mov qword ptr gs:[{GPR} + 4*8], rsp",
    "    mov rsp, qword ptr gs:[{STACK}]",
    // Entered with rsp already on the runtime stack and guest rsp saved.
    ".globl dgad_signal_entry",
    "dgad_signal_entry:",
    "    dgad_save_gprs_and_flags",
    "dgad_entry_flags_saved:",
    // The runtime runs with the guest's flags cleared, alignment checking
    // (AC) included: a guest that sets AC (CPU-feature probes do) must
    // not have the runtime's own unaligned accesses fault. `dgad_resume`
    // gives the guest its flags back. Of the flags the runtime's code
    // could notice, only AC, DF and TF are not the default (arithmetic
    // flags it sets itself): `popfq` (microcoded) only when one of them
    // is set. With `fninit` below, the two were 30 % of a client request
    // (126 → 88 ns per `DG_GET_MODE`, decision 48).
    "    test dword ptr gs:[{RFLAGS}], {ODD_FLAGS}",
    "    jz 10f",
    "    push 0x202",
    "    popfq",
    "10:",
    // A statically linked guest's %fs base is its own: put it aside and
    // run the runtime on the host's (`static_exec`).
    "    cmp byte ptr [rip + {STATIC_FS}], 0",
    "    je 8f",
    "    rdfsbase rax",
    "    mov qword ptr gs:[{GUEST_FS}], rax",
    "    mov rax, qword ptr gs:[{HOST_FS}]",
    "    wrfsbase rax",
    "8:  mov rbx, qword ptr gs:[0]",
    "    mov eax, {XSAVE_MASK}",
    "    xor edx, edx",
    "    cmp byte ptr [rip + {USE_XSAVEOPT}], 0",
    "    je 6f",
    "    xsaveopt64 [rbx + {XSAVE}]",
    "    jmp 7f",
    "6:  xsave64 [rbx + {XSAVE}]",
    "7:",
    // The runtime computes with the default floating-point environment
    // (round to nearest, exceptions masked), whatever the guest set: a
    // partial must neither trap nor round differently. `xrstor` gives the
    // guest its own back. The x87 part is reset only when it is in use:
    // a clear bit 0 of the saved XSTATE_BV says it is in its initial
    // configuration, which is what `fninit` makes (control word 0x37f,
    // stack empty).
    "    test byte ptr [rbx + {XSAVE} + 512], 1",
    "    jz 11f",
    "    fninit",
    "11:",
    "    ldmxcsr dword ptr [rip + {DEFAULT_MXCSR}]",
    "    mov dword ptr [rbx + {IN_RUNTIME}], 1",
    "    cld",
    "    mov rdi, rbx",
    "    call {dispatch}",
    "",
    ".globl dgad_resume",
    "dgad_resume:",
    "    mov rbx, qword ptr gs:[0]",
    "    mov dword ptr [rbx + {IN_RUNTIME}], 0",
    "    mov eax, {XSAVE_MASK}",
    "    xor edx, edx",
    "    xrstor64 [rbx + {XSAVE}]",
    "    cmp byte ptr [rip + {STATIC_FS}], 0",
    "    je 9f",
    "    mov rax, qword ptr gs:[{GUEST_FS}]",
    "    wrfsbase rax",
    "9:",
    // The general registers and flags (the light path of a client request
    // comes here with the rest of the state in the CPU).
    "dgad_resume_guest:",
    "    push qword ptr gs:[{RFLAGS}]",
    "    popfq",
    "    mov rax, qword ptr gs:[{GPR} + 0*8]",
    "    mov rcx, qword ptr gs:[{GPR} + 1*8]",
    "    mov rdx, qword ptr gs:[{GPR} + 2*8]",
    "    mov rbx, qword ptr gs:[{GPR} + 3*8]",
    "    mov rbp, qword ptr gs:[{GPR} + 5*8]",
    "    mov rsi, qword ptr gs:[{GPR} + 6*8]",
    "    mov rdi, qword ptr gs:[{GPR} + 7*8]",
    "    mov r8, qword ptr gs:[{GPR} + 8*8]",
    "    mov r9, qword ptr gs:[{GPR} + 9*8]",
    "    mov r10, qword ptr gs:[{GPR} + 10*8]",
    "    mov r11, qword ptr gs:[{GPR} + 11*8]",
    "    mov r12, qword ptr gs:[{GPR} + 12*8]",
    "    mov r13, qword ptr gs:[{GPR} + 13*8]",
    "    mov r14, qword ptr gs:[{GPR} + 14*8]",
    "    mov r15, qword ptr gs:[{GPR} + 15*8]",
    "    mov rsp, qword ptr gs:[{GPR} + 4*8]",
    "    jmp qword ptr gs:[{RESUME}]",
    ".globl dgad_resume_end",
    "dgad_resume_end:",
    "",
    // A libm wrapper called from cache code for a statically linked guest
    // (`static_exec`): r10 (dead at a function's entry) holds the wrapper.
    // It runs on the host's %fs base, with the stack as the cache's call
    // left it (the return address replaced by ours at the same slot, so
    // arguments on the stack stay where the wrapper expects them).
    ".globl dgad_native_host_fs",
    "dgad_native_host_fs:",
    "    pop qword ptr gs:[{NATIVE_RET}]",
    "    mov qword ptr gs:[{NATIVE_TARGET}], r10",
    "    rdfsbase r10",
    "    mov qword ptr gs:[{GUEST_FS}], r10",
    "    mov r10, qword ptr gs:[{HOST_FS}]",
    "    wrfsbase r10",
    "    call qword ptr gs:[{NATIVE_TARGET}]",
    "    mov r10, qword ptr gs:[{GUEST_FS}]",
    "    wrfsbase r10",
    "    jmp qword ptr gs:[{NATIVE_RET}]",
    "",
    // i64 dgad_raw_clone(nr, a1, a2, a3, a4, a5): the child's stack (a1 of
    // clone, inside the args of clone3) holds its context address at [rsp].
    ".globl dgad_raw_clone",
    "dgad_raw_clone:",
    "    mov rax, rdi",
    "    mov rdi, rsi",
    "    mov rsi, rdx",
    "    mov rdx, rcx",
    "    mov r10, r8",
    "    mov r8, r9",
    "    syscall",
    "    test rax, rax",
    "    jz 3f",
    "    ret",
    "3:  mov rsi, qword ptr [rsp]",
    "    mov edi, 0x1001",
    "    mov eax, 158",
    "    syscall",
    "    mov rsp, qword ptr gs:[{STACK}]",
    "    mov rbx, qword ptr gs:[0]",
    "    mov dword ptr [rbx + {IN_RUNTIME}], 1",
    "    mov rdi, rbx",
    "    call {child_start}",
    "    jmp dgad_resume",
    init = sym crate::init::dgad_init,
    init_early = sym crate::init::dgad_init_early,
    TAKEN = sym crate::init::TAKEN_OVER,
    dispatch = sym crate::dispatch::dgad_dispatch,
    child_start = sym crate::dispatch::dgad_thread_start,
    RIP = const offset_of!(ThreadCtx, regs) + 16 * 8,
    RFLAGS = const offset_of!(ThreadCtx, regs) + 17 * 8,
    ODD_FLAGS = const ODD_FLAGS,
    AC_TF = const 1u32 << 8 | 1 << 18,
    LIGHT_XMM = const offset_of!(ThreadCtx, light_xmm),
    LIGHT_MXCSR = const offset_of!(ThreadCtx, light_mxcsr),
    DEFAULT_MXCSR_VALUE = const mathwrap::f80::DEFAULT_MXCSR,
    light = sym crate::dispatch::dgad_light_request,
    GPR = const offset_of!(ThreadCtx, regs),
    REASON = const offset_of!(ThreadCtx, reason),
    EXIT_RECORD = const offset_of!(ThreadCtx, exit_record),
    SPILL_RAX = const offset_of!(ThreadCtx, spill_rax),
    SLOT_RAX = const rewriter::translate::LOOKUP_SLOT_RAX,
    SLOT_RCX = const rewriter::translate::LOOKUP_SLOT_RCX,
    SPILL_RCX = const offset_of!(ThreadCtx, spill_rcx),
    SPILL_RDX = const offset_of!(ThreadCtx, spill_rdx),
    IBL_TARGET = const offset_of!(ThreadCtx, ibl_target),
    KEYS = const offset_of!(ThreadCtx, ibl_keys),
    KEYS2 = const offset_of!(ThreadCtx, ibl_keys2),
    VALUES = const offset_of!(ThreadCtx, ibl_values),
    EPOCH = const offset_of!(ThreadCtx, ibl_epoch),
    SCRATCH = const offset_of!(ThreadCtx, ibl_scratch),
    VALUES2 = const offset_of!(ThreadCtx, ibl_values2),
    HITS2 = const offset_of!(ThreadCtx, ibl_hits2),
    DEFAULT_MXCSR = sym DEFAULT_MXCSR,
    STACK = const offset_of!(ThreadCtx, rt_stack_top),
    XSAVE = const offset_of!(ThreadCtx, xsave),
    XSAVE_MASK = const crate::cpu::XSAVE_MASK,
    USE_XSAVEOPT = sym crate::cpu::USE_XSAVEOPT,
    IN_RUNTIME = const offset_of!(ThreadCtx, in_runtime),
    STATIC_FS = sym crate::static_exec::ACTIVE,
    GUEST_FS = const offset_of!(ThreadCtx, guest_fs),
    HOST_FS = const offset_of!(ThreadCtx, host_fs),
    NATIVE_RET = const offset_of!(ThreadCtx, native_ret),
    NATIVE_TARGET = const offset_of!(ThreadCtx, native_target),
    RESUME = const offset_of!(ThreadCtx, resume_addr),
    RESUME_AT_RIP = const crate::context::reason::RESUME_AT_RIP,
    EXIT_STUB = const crate::context::reason::EXIT_STUB,
    IBL_MISS = const crate::context::reason::IBL_MISS,
);

/// The guest flags the runtime's entry must clear before running Rust
/// code: trap (TF, bit 8), direction (DF, bit 10), alignment check (AC,
/// bit 18).
const ODD_FLAGS: u32 = 1 << 8 | 1 << 10 | 1 << 18;

/// Loaded by the runtime's entry (`ldmxcsr` needs it in memory).
static DEFAULT_MXCSR: u32 = mathwrap::f80::DEFAULT_MXCSR;

extern "C" {
    #[cfg_attr(test, allow(dead_code))]
    fn dgad_takeover();
    #[cfg_attr(test, allow(dead_code))]
    fn dgad_takeover_traced();
    fn dgad_enter_exit();
    fn dgad_enter_request();
    fn dgad_enter_ibl_miss();
    fn dgad_signal_entry();
    fn dgad_resume();
    fn dgad_resume_end();
    fn dgad_native_host_fs();
    /// Raw `clone`/`clone3`; returns in the parent only.
    pub fn dgad_raw_clone(nr: i64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64) -> i64;
}

/// The loader calls this (through `.init_array`) before the program's own
/// constructors run. Not in this crate's own test executable: there the
/// runtime and the "guest" would share one heap, and a lookup miss inside
/// the guest's allocation would deadlock on the heap lock.
#[cfg(not(test))]
#[used]
#[link_section = ".init_array"]
static TAKEOVER: unsafe extern "C" fn() = dgad_takeover;

/// The launcher's early entry, exported for `dgad` to find in the
/// loader's link map (a data symbol: the version script of a `cdylib`
/// exports `#[no_mangle]` items only). Read by the tracer once the loader
/// has relocated it.
#[cfg(not(test))]
#[no_mangle]
#[used]
pub static DGAD_EARLY_ENTRY: unsafe extern "C" fn() = dgad_takeover_traced;

/// Address of the exit-stub entry.
pub fn enter_exit_addr() -> u64 {
    dgad_enter_exit as *const () as u64
}

/// Address of `dgad_enter_request` (a client request's exit).
pub fn enter_request_addr() -> u64 {
    dgad_enter_request as *const () as u64
}

/// Address of the lookup-miss entry.
pub fn enter_ibl_miss_addr() -> u64 {
    dgad_enter_ibl_miss as *const () as u64
}

/// Address a signal handler redirects an interrupted thread to.
pub fn signal_entry_addr() -> u64 {
    dgad_signal_entry as *const () as u64
}

/// Address of the native-call thunk of a statically linked guest.
pub fn native_host_fs_addr() -> u64 {
    dgad_native_host_fs as *const () as u64
}

/// Address of the code that leaves the runtime.
pub fn resume_addr() -> u64 {
    dgad_resume as *const () as u64
}

/// Whether `pc` lies in the code that leaves the runtime (from
/// [`resume_addr`] to its final jump into cache code, inclusive).
pub fn in_resume(pc: u64) -> bool {
    (dgad_resume as *const () as u64..dgad_resume_end as *const () as u64).contains(&pc)
}
