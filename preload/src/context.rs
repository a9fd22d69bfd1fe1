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
use core::sync::atomic::Ordering;
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
    /// A thread that ran natively before the takeover enters for the
    /// first time (`adopt`); continue at `regs.rip`.
    pub const ADOPTED: u64 = 3;
}

/// Size reserved for the `xsave` image (AVX-512 needs 2,696 bytes).
pub const XSAVE_BYTES: usize = 8192;
/// Size of each thread's runtime stack.
pub const RUNTIME_STACK_BYTES: usize = 1 << 20;
/// Size of each thread's alternate signal stack for the runtime's host
/// handler (a kernel frame with AVX-512 state is ~3.5 KiB).
pub const RUNTIME_SIGSTACK_BYTES: usize = 64 << 10;

/// No alternate signal stack, as a new process or thread has.
pub const NO_ALTSTACK: libc::stack_t = libc::stack_t {
    ss_sp: core::ptr::null_mut(),
    ss_flags: libc::SS_DISABLE,
    ss_size: 0,
};

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

/// Bytes of a context's tool area ([`ToolArea`]).
pub const TOOL_AREA_BYTES: usize = 16 << 10;

/// The tool's per-thread state in a context, as bytes: the tool casts
/// them to its own type (whose size and alignment it checks against
/// these at compile time). Translated code reaches it at
/// `ContextLayout::tool_area`.
#[repr(C, align(64))]
pub struct ToolArea(pub [u8; TOOL_AREA_BYTES]);

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
    /// Spill slot for the scratch register of a RIP-relative operand
    /// out of the cache's reach (`rewriter::translate::SPILLS_SCRATCH`).
    pub spill_scratch: u64,
    /// Guest target of the indirect branch that missed.
    pub ibl_target: u64,
    /// Address of `dgad_enter_exit`.
    pub enter_exit: u64,
    /// Address of `dgad_enter_ibl_miss`.
    pub enter_ibl_miss: u64,
    /// Address of `dgad_enter_request` (a client request's exit).
    pub enter_request: u64,
    /// The exit record of the stub that entered the runtime.
    pub exit_record: u64,
    /// One of [`reason`].
    pub reason: u64,
    /// Cache address to continue at when leaving the runtime.
    pub resume_addr: u64,
    /// Top of this thread's runtime stack.
    pub rt_stack_top: u64,
    /// Base of the alternate signal stack the runtime's host handler runs
    /// on ([`RUNTIME_SIGSTACK_BYTES`]): never the guest's stack, below
    /// whose red zone the lookups keep registers (decision 24).
    pub sigstack: u64,
    /// The guest's `sigaltstack` (the kernel holds the runtime's);
    /// [`NO_ALTSTACK`] when none.
    pub guest_ss: libc::stack_t,
    /// The guest signal dispositions this thread uses: 0 for the
    /// process's table, else the address of a context's `own_actions`
    /// (a child sharing memory but not handlers; `signals::child_actions`).
    pub actions: u64,
    /// The table of such a child.
    pub own_actions: crate::signals::GuestActions,
    /// Guest registers while the runtime runs.
    pub regs: GuestRegs,
    /// Kernel thread id.
    pub tid: i32,
    /// Set while the thread executes in the runtime (not in cache code).
    pub in_runtime: u32,
    /// Set for a `CLONE_VM` child that is a process of its own (`vfork`),
    /// not a thread of ours.
    pub other_process: u32,
    /// A statically linked guest (`static_exec`): its `%fs` base, which
    /// the runtime's entries put aside and `dgad_resume` gives back.
    pub guest_fs: u64,
    /// A statically linked guest: the `%fs` base of the runtime's own
    /// libc (the host program's thread block), set on every entry.
    pub host_fs: u64,
    /// A statically linked guest: the return address and target of a
    /// native call of a libm wrapper (`entry.rs`, `dgad_native_host_fs`).
    pub native_ret: u64,
    /// See [`Self::native_ret`].
    pub native_target: u64,
    /// A statically linked guest: the return address of a wrapper's call
    /// of the image's own function (`static_exec::guest_call_stub`).
    pub guest_call_ret: u64,
    /// One of [`life`]: whether a new thread may take this context over.
    pub life: core::sync::atomic::AtomicU32,
    /// Signals caught but not yet delivered to the guest.
    pub pending: [PendingSignal; PENDING_MAX],
    /// Number of valid entries in `pending`.
    pub pending_len: u32,
    /// Nonzero while single-stepping out of inserted code towards a
    /// boundary (bit 0; bit 1: the instruction being stepped is a `pushf`,
    /// `signals::note_pushf`).
    pub stepping: u32,
    /// Counters for `DGAD_STATS`.
    pub ibl_misses: u64,
    /// Indirect-branch hits (counted only with `DGAD_STATS`).
    pub ibl_hits: u64,
    /// Hits in the table's second way (always counted: they are taken
    /// in `dgad_enter_ibl_miss`, off the inline path).
    pub ibl_hits2: u64,
    /// Bumped by another thread before and after it drops entries from
    /// this thread's lookup table ([`Self::ibl_invalidate`]); a change
    /// seen across a write of the table means the write may have brought
    /// a dropped entry back, so the thread drops it again.
    pub ibl_epoch: core::sync::atomic::AtomicU64,
    /// Scratch for `dgad_enter_ibl_miss` (the epoch it started with, the
    /// target's entry).
    pub ibl_scratch: [u64; 2],
    /// `shadowmem::XOR_MASK`, for inline shadow-address computation.
    pub shadow_mask: u64,
    /// Scratch slots for inline record-mode sequences.
    pub spill_tmp: [u64; 2],
    /// Where the shadow address of an `fs:` operand keeps `rcx`
    /// (`ContextLayout::fs_tmp`).
    pub fs_tmp: u64,
    /// Scratch area for vector lanes in inline record-mode sequences.
    pub lane_tmp: [u64; 2],
    /// `ContextLayout::abs_masks`: constants of the inline tangent code.
    pub abs_masks: AbsMasks,
    /// `ContextLayout::vec_tmp`: where inline code saves the vector
    /// register it borrows (a masked move's shadows).
    pub vec_tmp: VecTmp,
    /// `ContextLayout::held_xmm`: the guest's values of the xmm registers
    /// translated code holds as temporaries (`InsnMapEntry::held`).
    pub held_xmm: HeldXmm,
    /// The tool's per-thread state, opaque to the engine (the tool
    /// gives the bytes its own type; zero in a fresh context).
    pub tool: ToolArea,
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
    /// The guest's xmm0–15 (low 128 bits each) while a client request is
    /// answered on the light path (`entry.rs`), which leaves the rest of
    /// the extended state in the CPU.
    pub light_xmm: [[u64; 2]; 16],
    /// The guest's MXCSR on the light path.
    pub light_mxcsr: u32,
    /// The indirect-branch lookup table, two-way set associative by the
    /// low 16 bits of the guest address. Way 0: the guest address whose
    /// translation `ibl_values` holds (the runtime's bookkeeping;
    /// translated code does not read it)…
    pub ibl_keys: [u64; IBL_ENTRIES],
    /// …and what translated code jumps through: the lookup entry of that
    /// translation, which checks the target itself, or the miss entry
    /// (`dgad_enter_ibl_miss`) for an empty set.
    pub ibl_values: [u64; IBL_ENTRIES],
    /// Way 1, probed by `dgad_enter_ibl_miss` when way 0 misses: the entry
    /// way 0 held before its current one (two hot targets 64 KiB apart
    /// would otherwise evict each other at every use). A zero value is an
    /// empty entry (fresh memory).
    pub ibl_keys2: [u64; IBL_ENTRIES],
    /// Way 1's cache addresses.
    pub ibl_values2: [u64; IBL_ENTRIES],
}

const _: () = assert!(offset_of!(ThreadCtx, xsave) % 64 == 0);

/// One vector register's bytes, 64-byte aligned (`vmovdqu64` of a zmm).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct VecTmp(pub [u8; 64]);

/// Guest `xmm0`–`xmm15` while translated code holds them (16 bytes each).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct HeldXmm(pub [[u8; 16]; 16]);

/// Every bit but the sign: two double lanes, then four float lanes,
/// 16-byte aligned for legacy SSE's `ptest` with a memory operand.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct AbsMasks([u64; 4]);

impl AbsMasks {
    const VALUE: AbsMasks = AbsMasks([
        0x7fff_ffff_ffff_ffff,
        0x7fff_ffff_ffff_ffff,
        0x7fff_ffff_7fff_ffff,
        0x7fff_ffff_7fff_ffff,
    ]);
}

impl ThreadCtx {
    /// The layout translated code is built against.
    pub const LAYOUT: ContextLayout = ContextLayout {
        spill_rax: offset_of!(ThreadCtx, spill_rax) as u32,
        spill_rcx: offset_of!(ThreadCtx, spill_rcx) as u32,
        spill_rdx: offset_of!(ThreadCtx, spill_rdx) as u32,
        spill_scratch: offset_of!(ThreadCtx, spill_scratch) as u32,
        ibl_target: offset_of!(ThreadCtx, ibl_target) as u32,
        enter_exit: offset_of!(ThreadCtx, enter_exit) as u32,
        enter_ibl_miss: offset_of!(ThreadCtx, enter_ibl_miss) as u32,
        enter_request: offset_of!(ThreadCtx, enter_request) as u32,
        ibl_values: offset_of!(ThreadCtx, ibl_values) as u32,
        ibl_hits: offset_of!(ThreadCtx, ibl_hits) as u32,
        shadow_regs: offset_of!(ThreadCtx, shadow) as u32,
        shadow_mask: offset_of!(ThreadCtx, shadow_mask) as u32,
        tool_area: offset_of!(ThreadCtx, tool) as u32,
        spill_tmp: offset_of!(ThreadCtx, spill_tmp) as u32,
        lane_tmp: offset_of!(ThreadCtx, lane_tmp) as u32,
        abs_masks: offset_of!(ThreadCtx, abs_masks) as u32,
        vec_tmp: offset_of!(ThreadCtx, vec_tmp) as u32,
        pending_signals: offset_of!(ThreadCtx, pending_len) as u32,
        fs_tmp: offset_of!(ThreadCtx, fs_tmp) as u32,
        held_xmm: offset_of!(ThreadCtx, held_xmm) as u32,
    };

    /// Maps a fresh context and its runtime stack. The lookup table starts
    /// empty (see `empty_ibl_entry`).
    pub fn allocate() -> Option<&'static mut ThreadCtx> {
        let size = core::mem::size_of::<ThreadCtx>().next_multiple_of(4096);
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let addr = sys::map_anon(size, rw, 0, false)?;
        let stack = sys::map_anon(RUNTIME_STACK_BYTES, rw, 0, false)?;
        let sigstack = sys::map_anon(RUNTIME_SIGSTACK_BYTES, rw, 0, false)?;
        // SAFETY: a fresh, zeroed, suitably aligned mapping of the right size;
        // all-zero bytes are a valid ThreadCtx.
        let ctx = unsafe { &mut *(addr as *mut ThreadCtx) };
        ctx.self_addr = addr;
        ctx.rt_stack_top = stack + RUNTIME_STACK_BYTES as u64 - 64;
        ctx.sigstack = sigstack;
        ctx.guest_ss = NO_ALTSTACK;
        ctx.enter_exit = crate::entry::enter_exit_addr();
        ctx.enter_ibl_miss = crate::entry::enter_ibl_miss_addr();
        ctx.enter_request = crate::entry::enter_request_addr();
        ctx.shadow_mask = shadowmem::XOR_MASK;
        ctx.abs_masks = AbsMasks::VALUE;
        ctx.init_ibl();
        Some(ctx)
    }

    /// The key of an empty lookup-table entry: no target is 0 (a jump to
    /// address 0 faults before anything is inserted), and fresh memory
    /// holds it, so a new context's keys and way 1 need no writing.
    /// `dgad_enter_ibl_miss` writes it too.
    const EMPTY_KEY: u64 = 0;

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
        crate::tool::tool().context_reused(self);
    }

    /// Makes the lookup table of a fresh (zeroed) context empty: way 0's
    /// values lead to the miss entry; zero keys and a zero way 1 are empty
    /// already. Touches 512 KiB, not the whole 2 MiB table.
    fn init_ibl(&mut self) {
        self.ibl_values.fill(crate::entry::enter_ibl_miss_addr());
    }

    /// Empties set `i`, both ways. A lookup in another thread meanwhile
    /// jumps through the old value or the miss entry: each is one
    /// aligned 8-byte store.
    fn ibl_empty(&mut self, i: usize) {
        self.ibl_values[i] = crate::entry::enter_ibl_miss_addr();
        self.ibl_keys[i] = Self::EMPTY_KEY;
        self.ibl_values2[i] = 0;
        self.ibl_keys2[i] = Self::EMPTY_KEY;
    }

    /// Records `guest_pc → cache_pc` in way 0 of the lookup table; the
    /// entry it replaces moves to way 1. Only the thread itself inserts,
    /// from the runtime, so no lookup sees half an entry. `epoch` is
    /// [`Self::ibl_epoch`] as it was before the translation was looked up:
    /// if another thread has dropped entries since, the one written here
    /// may be among them, and the index is emptied instead.
    pub fn ibl_insert(&mut self, guest_pc: u64, cache_pc: u64, epoch: u64) {
        let i = (guest_pc & 0xffff) as usize;
        let old = self.ibl_keys[i];
        if old != guest_pc && old != Self::EMPTY_KEY {
            self.ibl_values2[i] = self.ibl_values[i];
            self.ibl_keys2[i] = old;
        } else if self.ibl_keys2[i] == guest_pc {
            self.ibl_values2[i] = 0;
        }
        self.ibl_values[i] = cache_pc;
        self.ibl_keys[i] = guest_pc;
        core::sync::atomic::fence(Ordering::SeqCst);
        if self.ibl_epoch.load(Ordering::SeqCst) != epoch {
            self.ibl_empty(i);
        }
    }

    /// Drops table entries whose guest address lies in `[start, end)`.
    /// Other threads call this while the thread may be looking up: each
    /// set changes by aligned 8-byte stores (a lookup jumps through the
    /// old translation, which checks its target, or the miss entry).
    /// The epoch is bumped before and after a first pass and a second pass
    /// follows: the thread itself writes entries in the runtime and when
    /// it moves a way-1 hit to way 0 (`dgad_enter_ibl_miss`), and checks
    /// the epoch after each such write. A write that read its entries
    /// before the first pass and landed after it is either seen by that
    /// check (epoch changed) or cleared by the second pass.
    pub fn ibl_invalidate(&mut self, start: u64, end: u64) {
        self.ibl_epoch.fetch_add(1, Ordering::SeqCst);
        self.ibl_drop_range(start, end);
        self.ibl_epoch.fetch_add(1, Ordering::SeqCst);
        self.ibl_drop_range(start, end);
    }

    fn ibl_drop_range(&mut self, start: u64, end: u64) {
        for i in 0..IBL_ENTRIES {
            // An empty entry stays as it is: rewriting it would only touch
            // (and fault in) pages of the table that no lookup used.
            let in_range = |k: u64| k != Self::EMPTY_KEY && k >= start && k < end;
            if in_range(self.ibl_keys[i]) {
                self.ibl_values[i] = crate::entry::enter_ibl_miss_addr();
                self.ibl_keys[i] = Self::EMPTY_KEY;
            }
            if in_range(self.ibl_keys2[i]) {
                self.ibl_values2[i] = 0;
                self.ibl_keys2[i] = Self::EMPTY_KEY;
            }
        }
    }

    /// Makes this context the calling thread's `%gs` base.
    pub fn install(&self) -> bool {
        // SAFETY: ARCH_SET_GS only changes this thread's gs base, which
        // neither the guest nor libc uses.
        unsafe { sys::syscall3(libc::SYS_arch_prctl, 0x1001, self.self_addr, 0) == 0 }
    }

    /// Makes this context's signal stack the calling thread's alternate
    /// stack (the host handler is installed with `SA_ONSTACK`); the
    /// guest's own is kept in the context.
    pub fn install_signal_stack(&self) {
        let ss = libc::stack_t {
            ss_sp: self.sigstack as *mut libc::c_void,
            ss_flags: 0,
            ss_size: RUNTIME_SIGSTACK_BYTES,
        };
        // SAFETY: sigaltstack reads the stack_t in a local; the memory it
        // names is this context's, mapped for the process's life.
        unsafe { sys::syscall3(libc::SYS_sigaltstack, &ss as *const _ as u64, 0, 0) };
    }
}

/// Whether the calling thread has a context installed (its gs base is
/// set): false on the tape writer and before takeover.
pub fn installed() -> bool {
    let base: u64;
    // SAFETY: rdgsbase reads this thread's gs base; FSGSBASE is enabled
    // for user space (checked at start-up).
    unsafe {
        core::arch::asm!("rdgsbase {}", out(reg) base, options(nomem, nostack, preserves_flags))
    };
    base != 0
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the table has `guest`: `Some((way, value))`. Way 0 of an
    /// empty set leads to the miss entry (its key, 0, is no target).
    fn probe(c: &ThreadCtx, guest: u64) -> Option<(u8, u64)> {
        let i = (guest & 0xffff) as usize;
        let miss = crate::entry::enter_ibl_miss_addr();
        if c.ibl_keys[i] == guest && c.ibl_values[i] != miss {
            Some((0, c.ibl_values[i]))
        } else if c.ibl_keys2[i] == guest && c.ibl_values2[i] != 0 {
            Some((1, c.ibl_values2[i]))
        } else {
            None
        }
    }

    #[test]
    fn a_displaced_entry_moves_to_the_second_way() {
        let c = ThreadCtx::allocate().expect("a context");
        let (a, b, other) = (0x7f00_0001_2340, 0x7f00_0005_2340, 0x7f00_0009_2340);
        assert_eq!(probe(c, a), None, "a fresh table is empty");
        assert_eq!(probe(c, 0), None, "address 0 is not in a fresh table");
        assert!(c
            .ibl_values
            .iter()
            .all(|&v| v == crate::entry::enter_ibl_miss_addr()));
        c.ibl_insert(a, 0x1000, 0);
        c.ibl_insert(b, 0x2000, 0);
        assert_eq!(probe(c, b), Some((0, 0x2000)));
        assert_eq!(probe(c, a), Some((1, 0x1000)));
        // A third target of the set displaces the older of the two.
        c.ibl_insert(other, 0x3000, 0);
        assert_eq!(probe(c, other), Some((0, 0x3000)));
        assert_eq!(probe(c, b), Some((1, 0x2000)));
        assert_eq!(probe(c, a), None);
        // Inserting what way 1 holds leaves one copy, in way 0.
        c.ibl_insert(b, 0x4000, 0);
        assert_eq!(probe(c, b), Some((0, 0x4000)));
        assert_eq!(c.ibl_keys2[0x2340], other);
    }

    #[test]
    fn invalidation_empties_both_ways_and_bumps_the_epoch() {
        let c = ThreadCtx::allocate().expect("a context");
        let (a, b, kept) = (0x7f00_0001_0010, 0x7f00_0002_0010, 0x7f00_0003_0020);
        c.ibl_insert(a, 0x1000, 0);
        c.ibl_insert(b, 0x2000, 0);
        c.ibl_insert(kept, 0x3000, 0);
        let before = c.ibl_epoch.load(Ordering::SeqCst);
        c.ibl_invalidate(0x7f00_0000_0000, 0x7f00_0003_0000);
        assert_eq!(probe(c, a), None);
        assert_eq!(probe(c, b), None);
        assert_eq!(
            c.ibl_values[0x0010],
            crate::entry::enter_ibl_miss_addr(),
            "translated code finds the miss entry there"
        );
        assert_eq!(probe(c, kept), Some((0, 0x3000)));
        assert_eq!(c.ibl_epoch.load(Ordering::SeqCst), before + 2);
    }

    #[test]
    fn an_insert_overtaken_by_an_invalidation_leaves_the_set_empty() {
        let c = ThreadCtx::allocate().expect("a context");
        let (a, b) = (0x7f00_0001_4440, 0x7f00_0002_4440);
        c.ibl_insert(a, 0x1000, 0);
        // The translation of `b` was looked up before another thread
        // dropped entries (epoch 0 then, 2 now): the insert must not stay.
        c.ibl_invalidate(0x7f00_0002_0000, 0x7f00_0003_0000);
        c.ibl_insert(b, 0x2000, 0);
        assert_eq!(probe(c, b), None);
        assert_eq!(probe(c, a), None, "the set is emptied as a whole");
        c.ibl_insert(b, 0x2000, c.ibl_epoch.load(Ordering::SeqCst));
        assert_eq!(probe(c, b), Some((0, 0x2000)));
    }
}
