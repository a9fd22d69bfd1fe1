//! The per-thread runtime context, reached from translated code through the
//! `%gs` segment base (the guest's TLS uses `%fs`; `%gs` is free on x86-64
//! Linux).
//!
//! One [`ThreadCtx`] per guest thread, in its own anonymous mapping: spill
//! slots and entry addresses for translated code, the guest register file
//! while the runtime runs, the saved extended state (`xsave`), the thread's
//! indirect-branch lookup table, and the runtime stack.

use crate::sys;
use core::mem::offset_of;
use rewriter::layout::{ContextLayout, IBL_ENTRIES};

/// Guest general-purpose registers in hardware order (rax = 0 … r15 = 15),
/// then `rip` and `rflags`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct GuestRegs {
    /// rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8 … r15.
    pub gpr: [u64; 16],
    /// Guest instruction pointer.
    pub rip: u64,
    /// Guest flags.
    pub rflags: u64,
}

/// Indices into [`GuestRegs::gpr`].
pub mod reg {
    /// rax
    pub const RAX: usize = 0;
    /// rcx
    pub const RCX: usize = 1;
    /// rdx
    pub const RDX: usize = 2;
    /// rsp
    pub const RSP: usize = 4;
    /// rsi
    pub const RSI: usize = 6;
    /// rdi
    pub const RDI: usize = 7;
    /// r8
    pub const R8: usize = 8;
    /// r9
    pub const R9: usize = 9;
    /// r10
    pub const R10: usize = 10;
    /// r11
    pub const R11: usize = 11;
}

/// Why the thread entered the runtime.
pub mod reason {
    /// An exit stub; `exit_record` points at its record.
    pub const EXIT_STUB: u64 = 0;
    /// An indirect branch missed the lookup table; target in `ibl_target`.
    pub const IBL_MISS: u64 = 1;
    /// Continue at `regs.rip` (takeover, new thread, signal delivery).
    pub const RESUME_AT_RIP: u64 = 2;
}

/// Size reserved for the `xsave` image (AVX-512 needs 2,696 bytes).
pub const XSAVE_BYTES: usize = 8192;
/// Size of each thread's runtime stack.
pub const RUNTIME_STACK_BYTES: usize = 1 << 20;

/// States of [`ThreadCtx::life`].
pub mod life {
    /// Its thread runs (or is being created).
    pub const RUNNING: u32 = 0;
    /// Its thread left with `exit`; reusable once the kernel has let the
    /// thread go (its id is gone).
    pub const EXITED: u32 = 1;
    /// Unused (a `vfork` child that has exec'd or exited, a failed clone).
    pub const FREE: u32 = 2;
}

/// Nested guest signal handlers whose interrupted shadows are kept.
pub const FRAME_SHADOWS: usize = 8;

/// Maximum number of signals queued for delivery to one thread (a burst of
/// queued real-time signals arrives all at once when unblocked).
pub const PENDING_MAX: usize = 64;

/// A signal waiting to be delivered to the guest.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PendingSignal {
    /// Signal number.
    pub signo: i32,
    /// The kernel's siginfo for it.
    pub info: libc::siginfo_t,
    /// Error code of a fault (ucontext `REG_ERR`).
    pub err: u64,
    /// Trap number of a fault (ucontext `REG_TRAPNO`).
    pub trapno: u64,
    /// Faulting address register (ucontext `REG_CR2`).
    pub cr2: u64,
}

/// An `xsave` image; the instruction requires 64-byte alignment.
#[repr(C, align(64))]
pub struct XsaveArea(pub [u8; XSAVE_BYTES]);

/// Per-thread state. `#[repr(C)]`: the assembly in `entry.rs` and the
/// translated code address fields by offset.
#[repr(C, align(64))]
pub struct ThreadCtx {
    /// Linear address of this structure (the `%gs` base).
    pub self_addr: u64,
    /// Spill slot for guest rax.
    pub spill_rax: u64,
    /// Spill slot for guest rcx.
    pub spill_rcx: u64,
    /// Spill slot for guest rdx.
    pub spill_rdx: u64,
    /// Guest target of the indirect branch that missed.
    pub ibl_target: u64,
    /// Address of `dgad_enter_exit`.
    pub enter_exit: u64,
    /// Address of `dgad_enter_ibl_miss`.
    pub enter_ibl_miss: u64,
    /// The exit record of the stub that entered the runtime.
    pub exit_record: u64,
    /// One of [`reason`].
    pub reason: u64,
    /// Cache address to continue at when leaving the runtime.
    pub resume_addr: u64,
    /// Top of this thread's runtime stack.
    pub rt_stack_top: u64,
    /// Guest registers while the runtime runs.
    pub regs: GuestRegs,
    /// Kernel thread id.
    pub tid: i32,
    /// Set while the thread executes in the runtime (not in cache code).
    pub in_runtime: u32,
    /// Set for a `CLONE_VM` child that is a process of its own (`vfork`),
    /// not a thread of ours.
    pub other_process: u32,
    /// One of [`life`]: whether a new thread may take this context over.
    pub life: core::sync::atomic::AtomicU32,
    /// Signals caught but not yet delivered to the guest.
    pub pending: [PendingSignal; PENDING_MAX],
    /// Number of valid entries in `pending`.
    pub pending_len: u32,
    /// Set while single-stepping out of inserted code towards a boundary.
    pub stepping: u32,
    /// Counters for `DGAD_STATS`.
    pub ibl_misses: u64,
    /// Indirect-branch hits (counted only with `DGAD_STATS`).
    pub ibl_hits: u64,
    /// `shadowmem::XOR_MASK`, for inline shadow-address computation.
    pub shadow_mask: u64,
    /// Scratch slots for inline record-mode sequences.
    pub spill_tmp: [u64; 2],
    /// Scratch area for vector lanes in inline record-mode sequences.
    pub lane_tmp: [u64; 2],
    /// Record mode: this thread's chunk of the tape.
    pub tape: crate::record::ThreadTape,
    /// Record mode: this thread's tape buffers.
    pub tape_ring: crate::record::writer::TapeRing,
    /// Shadow register file (indices of the values in the registers).
    pub shadow: shadowmem::RegFile,
    /// Record mode: the shadow register files of code interrupted by the
    /// guest signal handlers running now, innermost last, each with the
    /// address of its frame's ucontext (`rt_sigreturn` brings it back).
    pub frame_shadows: [(u64, shadowmem::RegFile); FRAME_SHADOWS],
    /// Entries in use in `frame_shadows`.
    pub frame_shadows_len: u32,
    /// Extended state (x87, SSE, AVX, AVX-512) of the guest.
    pub xsave: XsaveArea,
    /// The indirect-branch lookup table: guest addresses…
    pub ibl_keys: [u64; IBL_ENTRIES],
    /// …and the cache addresses of their translations' entry prologues.
    pub ibl_values: [u64; IBL_ENTRIES],
}

const _: () = assert!(offset_of!(ThreadCtx, xsave) % 64 == 0);

impl ThreadCtx {
    /// The layout translated code is built against.
    pub const LAYOUT: ContextLayout = ContextLayout {
        spill_rax: offset_of!(ThreadCtx, spill_rax) as u32,
        spill_rcx: offset_of!(ThreadCtx, spill_rcx) as u32,
        spill_rdx: offset_of!(ThreadCtx, spill_rdx) as u32,
        ibl_target: offset_of!(ThreadCtx, ibl_target) as u32,
        enter_exit: offset_of!(ThreadCtx, enter_exit) as u32,
        enter_ibl_miss: offset_of!(ThreadCtx, enter_ibl_miss) as u32,
        ibl_keys: offset_of!(ThreadCtx, ibl_keys) as u32,
        ibl_values: offset_of!(ThreadCtx, ibl_values) as u32,
        ibl_hits: offset_of!(ThreadCtx, ibl_hits) as u32,
        shadow_regs: offset_of!(ThreadCtx, shadow) as u32,
        shadow_mask: offset_of!(ThreadCtx, shadow_mask) as u32,
        tape: offset_of!(ThreadCtx, tape) as u32,
        spill_tmp: offset_of!(ThreadCtx, spill_tmp) as u32,
        lane_tmp: offset_of!(ThreadCtx, lane_tmp) as u32,
        pending_signals: offset_of!(ThreadCtx, pending_len) as u32,
    };

    /// Maps a fresh context and its runtime stack. The lookup table starts
    /// empty (see `empty_ibl_entry`).
    pub fn allocate() -> Option<&'static mut ThreadCtx> {
        let size = core::mem::size_of::<ThreadCtx>().next_multiple_of(4096);
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let addr = sys::map_anon(size, rw, 0, false)?;
        let stack = sys::map_anon(RUNTIME_STACK_BYTES, rw, 0, false)?;
        // SAFETY: a fresh, zeroed, suitably aligned mapping of the right size;
        // all-zero bytes are a valid ThreadCtx.
        let ctx = unsafe { &mut *(addr as *mut ThreadCtx) };
        ctx.self_addr = addr;
        ctx.rt_stack_top = stack + RUNTIME_STACK_BYTES as u64 - 64;
        ctx.enter_exit = crate::entry::enter_exit_addr();
        ctx.enter_ibl_miss = crate::entry::enter_ibl_miss_addr();
        ctx.shadow_mask = shadowmem::XOR_MASK;
        ctx.clear_ibl();
        Some(ctx)
    }

    /// The key of an empty lookup-table entry `i`: a guest address whose
    /// low 16 bits are not `i`, so no target looked up there matches it
    /// (every target whose entry is `i` has `i` as its low 16 bits).
    fn empty_ibl_key(i: usize) -> u64 {
        (i ^ 1) as u64
    }

    /// Prepares a context whose thread is gone for a new thread: the
    /// lookup table, tape buffers and runtime stack stay; what described
    /// the old thread goes (registers and shadows are the creator's to set).
    pub fn reset_for_reuse(&mut self) {
        self.tid = 0;
        self.in_runtime = 0;
        self.other_process = 0;
        self.pending_len = 0;
        self.stepping = 0;
        self.frame_shadows_len = 0;
        // The next block takes a fresh chunk; the old chunk's unused rest
        // stays zero blocks nobody refers to.
        self.tape.base = 0;
        self.tape.next = 0;
        self.tape.end = 0;
        self.tape.flushed = 0;
    }

    /// Empties the indirect-branch lookup table.
    pub fn clear_ibl(&mut self) {
        for (i, k) in self.ibl_keys.iter_mut().enumerate() {
            *k = Self::empty_ibl_key(i);
        }
    }

    /// Records `guest_pc → cache_pc` in the lookup table. Only the thread
    /// itself inserts, from the runtime, so no lookup sees half an entry.
    pub fn ibl_insert(&mut self, guest_pc: u64, cache_pc: u64) {
        let i = (guest_pc & 0xffff) as usize;
        self.ibl_values[i] = cache_pc;
        self.ibl_keys[i] = guest_pc;
    }

    /// Drops table entries whose guest address lies in `[start, end)`.
    /// Other threads call this while the thread may be looking up: only
    /// the key changes, so a lookup sees either the whole old entry or an
    /// empty one.
    pub fn ibl_invalidate(&mut self, start: u64, end: u64) {
        for (i, k) in self.ibl_keys.iter_mut().enumerate() {
            if *k >= start && *k < end {
                *k = Self::empty_ibl_key(i);
            }
        }
    }

    /// Makes this context the calling thread's `%gs` base.
    pub fn install(&self) -> bool {
        // SAFETY: ARCH_SET_GS only changes this thread's gs base, which
        // neither the guest nor libc uses.
        unsafe { sys::syscall3(libc::SYS_arch_prctl, 0x1001, self.self_addr, 0) == 0 }
    }
}

/// The calling thread's context, read through `%gs`.
///
/// # Safety
/// Only valid on a thread that has installed a context.
pub unsafe fn current() -> &'static mut ThreadCtx {
    let addr: u64;
    // SAFETY: gs:[0] is `self_addr` of the installed context.
    unsafe {
        core::arch::asm!("mov {}, gs:[0]", out(reg) addr, options(nostack, readonly, preserves_flags))
    };
    // SAFETY: installed contexts are never unmapped.
    unsafe { &mut *(addr as *mut ThreadCtx) }
}
