//! The native wrappers. The runtime replaces the entry of every wrapped
//! libm function with a call of its wrapper on the guest stack; the wrapper
//! has the function's own calling convention plus one pointer to its
//! [`Desc`] in an integer register the function does not use. It runs the
//! real function natively, records one block (two for `fma` and
//! `sincos`) when an argument is active, and sets the shadows of the
//! results. Shadows and the tape belong to the runtime, reached through
//! [`Host`].
//!
//! `float` and `double` wrappers are Rust functions; the `long double` ones
//! share an assembly routine that passes the stack arguments on to the
//! real function and hands values and result to a Rust function.

use crate::f80::{ldmxcsr, stmxcsr, DefaultFpEnv, F80};
use crate::real::Real;
use crate::table::{Func, Precision, Shape};
use core::arch::global_asm;

/// What the wrappers need from the runtime, for the calling thread.
pub trait Host {
    /// The index of the `bytes`-byte value in lane 0 of vector register
    /// `reg`. An index names a derivative: a tape block (record mode) or
    /// whatever the host keeps it as (dot mode: a tangent); 0 is none.
    fn vec_index(reg: usize, bytes: usize) -> u32;
    /// Sets lane 0 (`bytes` wide) of vector register `reg` to `index` and
    /// clears the rest of its shadow.
    fn set_vec_index(reg: usize, bytes: usize, index: u32);
    /// The indices of the `64 / lane_bytes` lanes of vector register `reg`.
    fn vec_lanes(reg: usize, lane_bytes: usize) -> [u32; 16];
    /// Sets the lanes of vector register `reg` (the register's whole
    /// shadow).
    fn set_vec_lanes(reg: usize, lane_bytes: usize, indices: &[u32; 16]);
    /// The index of the `bytes`-byte value at guest address `addr`.
    fn mem_index(addr: u64, bytes: usize) -> u32;
    /// Sets the shadow of the `bytes` bytes at `addr`: `index` for the
    /// value, nothing active in the rest.
    fn set_mem_index(addr: u64, bytes: usize, index: u32);
    /// Sets the shadow of x87 physical register `phys`.
    fn set_x87_index(phys: usize, index: u32);
    /// Clears the shadow of general register `reg` (hardware numbering).
    fn clear_gpr(reg: usize);
    /// Whether operations record now (`DG_DISABLE` not in force).
    fn recording() -> bool;
    /// Appends the block `{index1, index2, partial1, partial2}`; returns
    /// its index.
    fn new_block(index1: u32, partial1: f64, index2: u32, partial2: f64) -> u32;
    /// The real function at `function` raised the SSE exceptions `flags`
    /// (MXCSR's low six bits), which the program had unmasked: natively it
    /// would have trapped (SIGFPE) inside the function.
    fn fp_exception(flags: u32, function: u64);
    /// The first byte of the `len` bytes at guest address `addr` that the
    /// program cannot write, if any (without changing them).
    fn first_unwritable(addr: u64, len: usize) -> Option<u64>;
    /// A real function's store to `addr` would fault: natively the program
    /// got SIGSEGV inside the function; the host raises it for the program.
    fn write_fault(addr: u64);
    /// A partial derivative to record lies beyond the range of doubles
    /// (a long double function's, or a scaling by 2^n with n beyond
    /// double's exponents): it becomes infinite or loses its digits on the
    /// tape (and in the tangents), so the derivative through it is wrong.
    /// The host says so.
    fn partial_beyond_double();
    /// An active value reached code whose derivatives dgad does not
    /// follow (`what` says which): the host reports it, once per process.
    fn untracked(what: &'static str);
}

/// Whether the real function may store its outputs (address, bytes): a
/// store of libm to a bad pointer would fault inside the runtime's native
/// call, where no guest instruction is to blame. When one cannot be
/// written, the function is not called, and the program gets the SIGSEGV
/// it would have got natively, delivered as the call returns (to a
/// handler with the fault's address), or dies of it.
fn outputs_writable<H: Host>(outputs: &[(u64, usize)]) -> bool {
    for &(addr, len) in outputs {
        if let Some(bad) = H::first_unwritable(addr, len) {
            H::write_fault(bad);
            return false;
        }
    }
    true
}

/// Runs `call`, a real function of this precision, with the SSE
/// floating-point exceptions masked: the program may have unmasked some,
/// and a trap would then hit the function's code inside the runtime's
/// native call, where no guest instruction is to blame. An exception the
/// program had unmasked and the call raised is reported to the host
/// instead; the flags the call raised stay raised, as natively.
pub(crate) fn without_traps<H: Host, T>(function: u64, call: impl FnOnce() -> T) -> T {
    let before = stmxcsr();
    if !(before >> 7) & 0x3f == 0 {
        return call();
    }
    ldmxcsr(masked(before));
    let r = call();
    settle_traps::<H>(before, function);
    r
}

/// MXCSR `guest` with every exception masked and no flag raised (the
/// assembly wrappers compute the same).
fn masked(guest: u32) -> u32 {
    (guest | 0x1f80) & !0x3f
}

/// After a real function ran with [`masked`] exceptions: gives the program
/// its MXCSR `guest` back with the flags the function raised, and reports
/// those it had unmasked.
fn settle_traps<H: Host>(guest: u32, function: u64) {
    let raised = stmxcsr() & 0x3f;
    ldmxcsr(guest | raised);
    let unmasked = !(guest >> 7) & 0x3f;
    if raised & unmasked != 0 {
        H::fp_exception(raised & unmasked, function);
    }
}

/// One wrapped symbol of one precision, handed to its wrapper.
#[repr(C)]
#[derive(Debug)]
pub struct Desc {
    /// The real libm function.
    pub real: u64,
    /// `long double` wrappers: the Rust half of the wrapper.
    pub finish: u64,
    /// `long double` wrappers: how many 16-byte stack arguments.
    pub stack_args: u8,
    /// `long double` wrappers: whether the result comes in `st(0)`.
    pub x87_result: u8,
    /// Vector variants (libmvec): lanes per call; 0 for scalar functions.
    pub lanes: u8,
    /// The function.
    pub func: Func,
    /// Its precision.
    pub precision: Precision,
    /// `long double` wrappers: the check of the output pointers, run
    /// before the real function (`check_f80`).
    pub check: u64,
}

/// One interception: where the real function starts, what to call instead
/// and which register carries the descriptor.
#[derive(Debug)]
pub struct Wrapped {
    /// The libm (or libmvec) symbol.
    pub symbol: String,
    /// Entry of the function as guest code reaches it (the table's key;
    /// the function the wrapper calls is `desc.real`, the same one unless
    /// the guest is a statically linked program, whose own copy the
    /// runtime's libm stands in for).
    pub real: u64,
    /// Entry of the wrapper.
    pub wrapper: u64,
    /// Hardware number of the integer register that holds `desc` at the
    /// wrapper's entry.
    pub desc_reg: u8,
    /// The descriptor (lives for the whole process).
    pub desc: &'static Desc,
}

const RDI: u8 = 7;
const RSI: u8 = 6;
const RDX: u8 = 2;
const R11: u8 = 11;

/// Records `{index1, index2, p1, p2}` unless both operands are passive.
fn block<H: Host>(index1: u32, p1: f64, index2: u32, p2: f64) -> u32 {
    if (index1 | index2) == 0 || !H::recording() {
        0
    } else {
        H::new_block(index1, p1, index2, p2)
    }
}

/// Partial `p` (with respect to the operand of index `index`) as a
/// double, as the tape and the tangents keep it; a long double one
/// beyond double's range ([`Real::beyond_double`]) is reported
/// ([`Host::partial_beyond_double`]).
fn partial<H: Host, R: Real>(p: R, index: u32) -> f64 {
    if index != 0 && p.beyond_double() {
        H::partial_beyond_double();
    }
    p.to_f64()
}

/// The result index of a function of one active argument.
fn unary_index<H: Host, R: Real>(f: Func, i: u32, x: R, r: R) -> u32 {
    if i == 0 {
        return 0;
    }
    let _env = DefaultFpEnv::enter(R::X87);
    match f.unary_partial(x, r) {
        Some(p) => block::<H>(i, partial::<H, R>(p, i), 0, 0.0),
        None => 0,
    }
}

fn binary_index<H: Host, R: Real>(f: Func, (ix, iy): (u32, u32), x: R, y: R, r: R) -> u32 {
    if (ix | iy) == 0 {
        return 0;
    }
    let _env = DefaultFpEnv::enter(R::X87);
    let (px, py) = f.binary_partials(x, y, r);
    block::<H>(ix, partial::<H, R>(px, ix), iy, partial::<H, R>(py, iy))
}

fn fma_index<H: Host, R: Real>((ix, iy, iz): (u32, u32, u32), x: R, y: R) -> u32 {
    let t = block::<H>(ix, partial::<H, R>(y, ix), iy, partial::<H, R>(x, iy));
    block::<H>(t, 1.0, iz, 1.0)
}

fn scale_index<H: Host>(i: u32, n: i64) -> u32 {
    if i == 0 {
        0
    } else {
        if !(-1022..=1023).contains(&n) {
            // 2^n is no normal double: the partial is lost.
            H::partial_beyond_double();
        }
        let _env = DefaultFpEnv::enter(false);
        block::<H>(i, f64::exp2i(n), 0, 0.0)
    }
}

/// Wrappers of one `xmm` precision: `$t` is `f32` or `f64`, `$bytes` its size.
macro_rules! xmm_wrappers {
    ($module:ident, $t:ty, $bytes:literal) => {
        /// Wrappers of the functions of this precision.
        pub mod $module {
            use super::*;

            /// The result of a call whose outputs could not be written (the
            /// program gets SIGSEGV as it returns): a passive NaN.
            fn unwritten<H: Host>() -> $t {
                H::set_vec_index(0, $bytes, 0);
                <$t>::NAN
            }

            fn real<F>(d: &Desc) -> F {
                // SAFETY: `real` is the entry of the libm function of
                // signature F (the table's shape for this precision).
                unsafe { core::mem::transmute_copy(&(d.real as usize)) }
            }

            /// `R f(R)`.
            extern "C" fn unary<H: Host>(x: $t, d: &Desc) -> $t {
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn($t) -> $t = real(d);
                // SAFETY: calls the real function with its own argument.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x) });
                H::set_vec_index(
                    0,
                    $bytes,
                    unary_index::<H, f64>(d.func, i, x as f64, r as f64),
                );
                r
            }

            /// `R f(R, R)`.
            extern "C" fn binary<H: Host>(x: $t, y: $t, d: &Desc) -> $t {
                let i = (H::vec_index(0, $bytes), H::vec_index(1, $bytes));
                let f: unsafe extern "C" fn($t, $t) -> $t = real(d);
                // SAFETY: as in `unary`.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, y) });
                let idx = binary_index::<H, f64>(d.func, i, x as f64, y as f64, r as f64);
                H::set_vec_index(0, $bytes, idx);
                r
            }

            /// `R fma(R, R, R)`.
            extern "C" fn fma<H: Host>(x: $t, y: $t, z: $t, d: &Desc) -> $t {
                let i = (
                    H::vec_index(0, $bytes),
                    H::vec_index(1, $bytes),
                    H::vec_index(2, $bytes),
                );
                let f: unsafe extern "C" fn($t, $t, $t) -> $t = real(d);
                // SAFETY: as in `unary`.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, y, z) });
                H::set_vec_index(0, $bytes, fma_index::<H, f64>(i, x as f64, y as f64));
                r
            }

            /// `R ldexp(R, int)`.
            extern "C" fn scale_int<H: Host>(x: $t, n: i32, d: &Desc) -> $t {
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn($t, i32) -> $t = real(d);
                // SAFETY: as in `unary`.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, n) });
                H::set_vec_index(0, $bytes, scale_index::<H>(i, i64::from(n)));
                r
            }

            /// `R scalbln(R, long)`.
            extern "C" fn scale_long<H: Host>(x: $t, n: i64, d: &Desc) -> $t {
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn($t, i64) -> $t = real(d);
                // SAFETY: as in `unary`.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, n) });
                H::set_vec_index(0, $bytes, scale_index::<H>(i, n));
                r
            }

            /// `R jn(int, R)`.
            extern "C" fn int_first<H: Host>(n: i32, x: $t, d: &Desc) -> $t {
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn(i32, $t) -> $t = real(d);
                // SAFETY: as in `unary`.
                let r = without_traps::<H, _>(d.real, || unsafe { f(n, x) });
                let idx = if i == 0 {
                    0
                } else {
                    let _env = DefaultFpEnv::enter(false);
                    block::<H>(i, d.func.bessel_partial(n, x as f64), 0, 0.0)
                };
                H::set_vec_index(0, $bytes, idx);
                r
            }

            /// `R frexp(R, int *)`.
            extern "C" fn frexp<H: Host>(x: $t, e: *mut i32, d: &Desc) -> $t {
                if !outputs_writable::<H>(&[(e as u64, 4)]) {
                    return unwritten::<H>();
                }
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn($t, *mut i32) -> $t = real(d);
                // SAFETY: as in `unary`; the pointer is the guest's.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, e) });
                // SAFETY: frexp just stored through it.
                let n = unsafe { *e };
                H::set_mem_index(e as u64, 4, 0);
                H::set_vec_index(0, $bytes, scale_index::<H>(i, -i64::from(n)));
                r
            }

            /// `R modf(R, R *)`.
            extern "C" fn modf<H: Host>(x: $t, ip: *mut $t, d: &Desc) -> $t {
                if !outputs_writable::<H>(&[(ip as u64, $bytes)]) {
                    return unwritten::<H>();
                }
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn($t, *mut $t) -> $t = real(d);
                // SAFETY: as in `unary`; the pointer is the guest's.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, ip) });
                H::set_mem_index(ip as u64, $bytes, 0);
                H::set_vec_index(
                    0,
                    $bytes,
                    if i == 0 {
                        0
                    } else {
                        block::<H>(i, 1.0, 0, 0.0)
                    },
                );
                r
            }

            /// `void sincos(R, R *, R *)`.
            extern "C" fn sincos<H: Host>(x: $t, s: *mut $t, c: *mut $t, d: &Desc) {
                if !outputs_writable::<H>(&[(s as u64, $bytes), (c as u64, $bytes)]) {
                    return;
                }
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn($t, *mut $t, *mut $t) = real(d);
                // SAFETY: as in `unary`; the pointers are the guest's.
                without_traps::<H, _>(d.real, || unsafe { f(x, s, c) });
                let xf = x as f64;
                let (is, ic) = if i == 0 {
                    (0, 0)
                } else {
                    let _env = DefaultFpEnv::enter(false);
                    (
                        block::<H>(i, xf.cos(), 0, 0.0),
                        block::<H>(i, -xf.sin(), 0, 0.0),
                    )
                };
                H::set_mem_index(s as u64, $bytes, is);
                H::set_mem_index(c as u64, $bytes, ic);
            }

            /// `R remquo(R, R, int *)`.
            extern "C" fn remquo<H: Host>(x: $t, y: $t, q: *mut i32, d: &Desc) -> $t {
                if !outputs_writable::<H>(&[(q as u64, 4)]) {
                    return unwritten::<H>();
                }
                let i = (H::vec_index(0, $bytes), H::vec_index(1, $bytes));
                let f: unsafe extern "C" fn($t, $t, *mut i32) -> $t = real(d);
                // SAFETY: as in `unary`; the pointer is the guest's.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, y, q) });
                H::set_mem_index(q as u64, 4, 0);
                let idx = binary_index::<H, f64>(d.func, i, x as f64, y as f64, r as f64);
                H::set_vec_index(0, $bytes, idx);
                r
            }

            /// `R lgamma_r(R, int *)`.
            extern "C" fn lgamma_r<H: Host>(x: $t, sign: *mut i32, d: &Desc) -> $t {
                if !outputs_writable::<H>(&[(sign as u64, 4)]) {
                    return unwritten::<H>();
                }
                let i = H::vec_index(0, $bytes);
                let f: unsafe extern "C" fn($t, *mut i32) -> $t = real(d);
                // SAFETY: as in `unary`; the pointer is the guest's.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x, sign) });
                H::set_mem_index(sign as u64, 4, 0);
                H::set_vec_index(
                    0,
                    $bytes,
                    unary_index::<H, f64>(d.func, i, x as f64, r as f64),
                );
                r
            }

            /// `long lround(R)` and friends.
            extern "C" fn to_int<H: Host>(x: $t, d: &Desc) -> i64 {
                let f: unsafe extern "C" fn($t) -> i64 = real(d);
                // SAFETY: as in `unary`.
                let r = without_traps::<H, _>(d.real, || unsafe { f(x) });
                H::clear_gpr(0);
                r
            }

            /// The wrapper of `shape` and the register its descriptor goes in.
            pub fn entry<H: Host>(shape: Shape) -> (u64, u8) {
                match shape {
                    Shape::Unary => (unary::<H> as *const () as u64, RDI),
                    Shape::Binary => (binary::<H> as *const () as u64, RDI),
                    Shape::Fma => (fma::<H> as *const () as u64, RDI),
                    Shape::ScaleInt => (scale_int::<H> as *const () as u64, RSI),
                    Shape::ScaleLong => (scale_long::<H> as *const () as u64, RSI),
                    Shape::IntFirst => (int_first::<H> as *const () as u64, RSI),
                    Shape::Frexp => (frexp::<H> as *const () as u64, RSI),
                    Shape::Modf => (modf::<H> as *const () as u64, RSI),
                    Shape::SinCos => (sincos::<H> as *const () as u64, RDX),
                    Shape::Remquo => (remquo::<H> as *const () as u64, RSI),
                    Shape::LgammaR => (lgamma_r::<H> as *const () as u64, RSI),
                    Shape::ToInt => (to_int::<H> as *const () as u64, RDI),
                }
            }
        }
    };
}

xmm_wrappers!(f64_wrappers, f64, 8);
xmm_wrappers!(f32_wrappers, f32, 4);

// The `long double` wrapper. Entered with r11 = &Desc and the stack as the
// runtime's call left it: [rsp] return into the cache, [rsp+8] alignment
// padding, [rsp+16] the guest's return address, [rsp+24] the first 16-byte
// argument slot. Integer arguments (rdi, rsi, rdx) pass through to the real
// function untouched and are saved for the Rust half, which gets
// (desc, address of the guest's argument slots, result area, saved rdi/rsi/rdx).
// The real function runs with the SSE and x87 exceptions masked ([rsp +
// 56] keeps the guest's MXCSR, [rsp + 88] its x87 control word): an
// exception the program unmasked would trap inside the function, in the
// runtime's native call. The Rust half gives the MXCSR back and reports
// an SSE exception as `without_traps` does; with the guest's control word
// back at the end, an x87 exception the function raised is pending and
// traps at the program's next x87 instruction, in guest code, as the x87
// defers its traps.
global_asm!(
    ".globl dgad_mathwrap_f80",
    "dgad_mathwrap_f80:",
    "    push rbp",
    "    mov rbp, rsp",
    "    push r12",
    "    push r13",
    "    sub rsp, 96",
    "    mov r12, r11",
    "    stmxcsr dword ptr [rsp + 56]",
    "    mov eax, dword ptr [rsp + 56]",
    "    or eax, 0x1f80",
    "    and eax, -64",
    "    mov dword ptr [rsp + 60], eax",
    "    ldmxcsr dword ptr [rsp + 60]",
    "    fnstcw word ptr [rsp + 88]",
    "    movzx eax, word ptr [rsp + 88]",
    "    or eax, 0x3f",
    "    mov word ptr [rsp + 90], ax",
    "    fldcw word ptr [rsp + 90]",
    "    mov [rsp + 64], rdi",
    "    mov [rsp + 72], rsi",
    "    mov [rsp + 80], rdx",
    // Copy the stack arguments into the outgoing slots [rsp, rsp+48).
    "    movzx eax, byte ptr [r12 + 16]",
    "    xor r13d, r13d",
    "2:  cmp r13, rax",
    "    jae 3f",
    "    mov rcx, r13",
    "    shl rcx, 4",
    "    movups xmm0, [rbp + 32 + rcx]",
    "    movups [rsp + rcx], xmm0",
    "    inc r13",
    "    jmp 2b",
    "3:  mov rdi, r12",
    "    lea rsi, [rsp + 64]",
    "    call [r12 + {CHECK}]",
    "    test eax, eax",
    "    jz 6f",
    "    mov rdi, [rsp + 64]",
    "    mov rsi, [rsp + 72]",
    "    mov rdx, [rsp + 80]",
    "    call [r12]",
    "    mov [rsp + 48], rax",
    "    cmp byte ptr [r12 + 17], 0",
    "    je 4f",
    "    fstp tbyte ptr [rsp + 32]",
    "4:  mov rdi, r12",
    "    lea rsi, [rbp + 32]",
    "    lea rdx, [rsp + 32]",
    "    lea rcx, [rsp + 64]",
    "    mov r8d, dword ptr [rsp + 56]",
    "    call [r12 + 8]",
    "    mov rax, [rsp + 48]",
    "    cmp byte ptr [r12 + 17], 0",
    "    je 5f",
    "    fld tbyte ptr [rsp + 32]",
    "5:  fldcw word ptr [rsp + 88]",
    "    add rsp, 96",
    "    pop r13",
    "    pop r12",
    "    pop rbp",
    "    ret",
    // An output pointer cannot be written: no call, a NaN result, the
    // guest's MXCSR back (the SIGSEGV is queued).
    "6:  ldmxcsr dword ptr [rsp + 56]",
    "    cmp byte ptr [r12 + 17], 0",
    "    je 5b",
    "    fld qword ptr [rip + {NAN}]",
    "    jmp 5b",
    CHECK = const core::mem::offset_of!(Desc, check),
    NAN = sym QUIET_NAN,
);

/// The result of a `long double` call whose outputs cannot be written.
static QUIET_NAN: f64 = f64::NAN;

/// Before a `long double` function with output pointers runs: whether
/// they can be written (`ints`: the saved rdi, rsi, rdx, where the
/// pointers are). If not, the SIGSEGV is queued, and the result the
/// wrapper pushes instead (a NaN) is passive.
extern "C" fn check_f80<H: Host>(d: &Desc, ints: &[u64; 3]) -> u32 {
    let outputs: &[(u64, usize)] = match d.func.shape() {
        Shape::Frexp | Shape::Remquo | Shape::LgammaR => &[(ints[0], 4)],
        Shape::Modf => &[(ints[0], 10)],
        Shape::SinCos => &[(ints[0], 10), (ints[1], 10)],
        _ => &[],
    };
    if outputs_writable::<H>(outputs) {
        return 1;
    }
    if d.x87_result != 0 {
        H::set_x87_index(x87_phys_after_push(), 0);
    }
    0
}

extern "C" {
    fn dgad_mathwrap_f80();
}

/// The x87 physical register that is `st(0)` after one push, given the
/// current status word.
fn x87_phys_after_push() -> usize {
    let fsw: u16;
    // SAFETY: reads the x87 status word.
    unsafe { core::arch::asm!("fnstsw ax", out("ax") fsw, options(nostack, nomem)) };
    (((fsw >> 11) & 7) as usize + 7) & 7
}

/// The Rust half of the `long double` wrapper: `args` is the guest address
/// of the first 16-byte argument slot, `result` the returned value (when
/// `x87_result`), `ints` the saved rdi, rsi and rdx.
extern "C" fn finish_f80<H: Host>(
    d: &Desc,
    args: u64,
    result: &F80,
    ints: &[u64; 3],
    guest_mxcsr: u32,
) {
    settle_traps::<H>(guest_mxcsr, d.real);
    let arg = |k: u64| {
        // SAFETY: the real function just read these argument slots.
        let bytes = unsafe { core::slice::from_raw_parts((args + 16 * k) as *const u8, 10) };
        (F80::from_bytes(bytes), H::mem_index(args + 16 * k, 10))
    };
    let r = *result;
    let idx = match d.func.shape() {
        Shape::Unary | Shape::LgammaR => {
            let (x, i) = arg(0);
            if d.func.shape() == Shape::LgammaR {
                H::set_mem_index(ints[0], 4, 0);
            }
            unary_index::<H, F80>(d.func, i, x, r)
        }
        Shape::Binary | Shape::Remquo => {
            let ((x, ix), (y, iy)) = (arg(0), arg(1));
            if d.func.shape() == Shape::Remquo {
                H::set_mem_index(ints[0], 4, 0);
            }
            binary_index::<H, F80>(d.func, (ix, iy), x, y, r)
        }
        Shape::Fma => {
            let ((x, ix), (y, iy), (_, iz)) = (arg(0), arg(1), arg(2));
            fma_index::<H, F80>((ix, iy, iz), x, y)
        }
        Shape::ScaleInt => scale_index::<H>(arg(0).1, i64::from(ints[0] as i32)),
        Shape::ScaleLong => scale_index::<H>(arg(0).1, ints[0] as i64),
        Shape::IntFirst => {
            let (x, i) = arg(0);
            if i == 0 {
                0
            } else {
                let _env = DefaultFpEnv::enter(true);
                let p = d.func.bessel_partial(ints[0] as i32, x);
                block::<H>(i, partial::<H, F80>(p, i), 0, 0.0)
            }
        }
        Shape::Frexp => {
            // SAFETY: frexpl just stored the exponent there.
            let e = unsafe { *(ints[0] as *const i32) };
            H::set_mem_index(ints[0], 4, 0);
            scale_index::<H>(arg(0).1, -i64::from(e))
        }
        Shape::Modf => {
            H::set_mem_index(ints[0], 10, 0);
            let i = arg(0).1;
            if i == 0 {
                0
            } else {
                block::<H>(i, 1.0, 0, 0.0)
            }
        }
        Shape::SinCos => {
            let (x, i) = arg(0);
            let (is, ic) = if i == 0 {
                (0, 0)
            } else {
                let _env = DefaultFpEnv::enter(true);
                (
                    block::<H>(i, partial::<H, F80>(x.cos(), i), 0, 0.0),
                    block::<H>(i, partial::<H, F80>(-x.sin(), i), 0, 0.0),
                )
            };
            H::set_mem_index(ints[0], 10, is);
            H::set_mem_index(ints[1], 10, ic);
            return;
        }
        Shape::ToInt => {
            H::clear_gpr(0);
            return;
        }
    };
    H::set_x87_index(x87_phys_after_push(), idx);
}

// The libmvec wrappers, one per vector width (SSE, AVX/AVX2, AVX-512).
// Entered with r11 = &Desc; the vector arguments in xmm/ymm/zmm 0 and 1
// are saved, the real function runs with the SSE exceptions masked (the
// guest's MXCSR at [rbp - 16]), and the Rust half gets (desc, saved
// arguments: 64 bytes each, the result: 64 bytes, the guest's MXCSR) and
// settles the exceptions as `without_traps` does.
macro_rules! vector_entry {
    ($name:literal, $save0:literal, $save1:literal, $save_r:literal, $load_r:literal) => {
        global_asm!(
            concat!(".globl ", $name),
            concat!($name, ":"),
            "    push rbp",
            "    mov rbp, rsp",
            "    push r12",
            "    sub rsp, 8",
            "    stmxcsr dword ptr [rbp - 16]",
            "    mov eax, dword ptr [rbp - 16]",
            "    or eax, 0x1f80",
            "    and eax, -64",
            "    mov dword ptr [rbp - 12], eax",
            "    ldmxcsr dword ptr [rbp - 12]",
            "    and rsp, -64",
            "    sub rsp, 192",
            "    mov r12, r11",
            $save0,
            $save1,
            "    call [r12]",
            $save_r,
            "    mov rdi, r12",
            "    mov rsi, rsp",
            "    lea rdx, [rsp + 128]",
            "    mov ecx, dword ptr [rbp - 16]",
            "    call [r12 + 8]",
            $load_r,
            "    lea rsp, [rbp - 8]",
            "    pop r12",
            "    pop rbp",
            "    ret",
        );
    };
}

vector_entry!(
    "dgad_mathwrap_v128",
    "    movups [rsp], xmm0",
    "    movups [rsp + 64], xmm1",
    "    movups [rsp + 128], xmm0",
    "    movups xmm0, [rsp + 128]"
);
vector_entry!(
    "dgad_mathwrap_v256",
    "    vmovups [rsp], ymm0",
    "    vmovups [rsp + 64], ymm1",
    "    vmovups [rsp + 128], ymm0",
    "    vmovups ymm0, [rsp + 128]"
);
vector_entry!(
    "dgad_mathwrap_v512",
    "    vmovups [rsp], zmm0",
    "    vmovups [rsp + 64], zmm1",
    "    vmovups [rsp + 128], zmm0",
    "    vmovups zmm0, [rsp + 128]"
);

extern "C" {
    fn dgad_mathwrap_v128();
    fn dgad_mathwrap_v256();
    fn dgad_mathwrap_v512();
}

/// The Rust half of the libmvec wrappers: one block per lane whose
/// argument is active, with the scalar function's partials.
extern "C" fn finish_vector<H: Host>(
    d: &Desc,
    args: &[[u8; 64]; 2],
    result: &[u8; 64],
    guest_mxcsr: u32,
) {
    settle_traps::<H>(guest_mxcsr, d.real);
    let lanes = usize::from(d.lanes);
    let binary = d.func.shape() == Shape::Binary;
    let mut out = [0u32; 16];
    let lane = |bytes: &[u8; 64], k: usize| -> f64 {
        if d.precision == Precision::F64 {
            f64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().expect("8 bytes"))
        } else {
            f64::from(f32::from_le_bytes(
                bytes[4 * k..4 * k + 4].try_into().expect("4 bytes"),
            ))
        }
    };
    let w = if d.precision == Precision::F64 { 8 } else { 4 };
    let ix = H::vec_lanes(0, w);
    let iy = if binary { H::vec_lanes(1, w) } else { [0; 16] };
    for k in 0..lanes {
        let (i, j) = (ix[k], iy[k]);
        let (x, r) = (lane(&args[0], k), lane(result, k));
        out[k] = if binary {
            binary_index::<H, f64>(d.func, (i, j), x, lane(&args[1], k), r)
        } else {
            unary_index::<H, f64>(d.func, i, x, r)
        };
    }
    H::set_vec_lanes(0, w, &out);
}

/// Every interception: `real(symbol)` gives the places a libm symbol is
/// reached at in this process (several: glibc keeps old symbol versions,
/// and libc has its own `ldexp`, `frexp`, …; none when there is no such
/// symbol), each as (the entry guest code reaches, the function the
/// wrapper calls for the value: the same address in a dynamically linked
/// process); `vector(symbol)` the same for a libmvec symbol.
pub fn wrappers<H: Host>(
    real: impl Fn(&str) -> Vec<(u64, u64)>,
    vector: impl Fn(&str) -> Option<(u64, u64)>,
) -> Vec<Wrapped> {
    let mut out = Vec::new();
    for &func in Func::ALL {
        for precision in [Precision::F64, Precision::F32, Precision::F80] {
            let symbol = func.symbol(precision);
            for (entry_addr, real_addr) in real(symbol) {
                let shape = func.shape();
                let (wrapper, desc_reg) = match precision {
                    Precision::F64 => f64_wrappers::entry::<H>(shape),
                    Precision::F32 => f32_wrappers::entry::<H>(shape),
                    Precision::F80 => (dgad_mathwrap_f80 as *const () as u64, R11),
                };
                let stack_args = match shape {
                    Shape::Binary | Shape::Remquo => 2,
                    Shape::Fma => 3,
                    _ => 1,
                };
                let x87_result = !matches!(shape, Shape::SinCos | Shape::ToInt);
                let desc: &'static Desc = Box::leak(Box::new(Desc {
                    real: real_addr,
                    finish: finish_f80::<H> as *const () as u64,
                    check: check_f80::<H> as *const () as u64,
                    stack_args,
                    x87_result: u8::from(x87_result),
                    lanes: 0,
                    func,
                    precision,
                }));
                out.push(Wrapped {
                    symbol: symbol.to_string(),
                    real: entry_addr,
                    wrapper,
                    desc_reg,
                    desc,
                });
            }
        }
        // libmvec: `_ZGV<isa>N<lanes><v per argument>_<name>`.
        let params = match func.shape() {
            Shape::Unary => "v",
            Shape::Binary => "vv",
            _ => continue,
        };
        for precision in [Precision::F64, Precision::F32] {
            for (isa, bits, entry) in [
                ('b', 128, dgad_mathwrap_v128 as *const () as u64),
                ('c', 256, dgad_mathwrap_v256 as *const () as u64),
                ('d', 256, dgad_mathwrap_v256 as *const () as u64),
                ('e', 512, dgad_mathwrap_v512 as *const () as u64),
            ] {
                let lanes = if precision == Precision::F64 {
                    bits / 64
                } else {
                    bits / 32
                };
                let symbol = format!("_ZGV{isa}N{lanes}{params}_{}", func.symbol(precision));
                let Some((entry_addr, real_addr)) = vector(&symbol) else {
                    continue;
                };
                let desc: &'static Desc = Box::leak(Box::new(Desc {
                    real: real_addr,
                    finish: finish_vector::<H> as *const () as u64,
                    check: 0,
                    stack_args: 0,
                    x87_result: 0,
                    lanes: lanes as u8,
                    func,
                    precision,
                }));
                out.push(Wrapped {
                    symbol,
                    real: entry_addr,
                    wrapper: entry,
                    desc_reg: R11,
                    desc,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::offset_of;

    #[test]
    fn descriptor_layout_matches_the_assembly() {
        assert_eq!(offset_of!(Desc, real), 0);
        assert_eq!(offset_of!(Desc, finish), 8);
        assert_eq!(offset_of!(Desc, stack_args), 16);
        assert_eq!(offset_of!(Desc, x87_result), 17);
        assert_eq!(offset_of!(Desc, lanes), 18);
    }
}
