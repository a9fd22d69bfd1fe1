//! The per-thread runtime context as translated code sees it: byte offsets
//! from the `%gs` segment base.
//!
//! The runtime (`preload`) owns the context structure and fills this table
//! from its field offsets; the translator only needs the numbers. Keeping the
//! contract this small lets golden tests use a fixed, readable layout.

/// `%gs`-relative offsets of everything translated code touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextLayout {
    /// Spill slot for guest `rax`.
    pub spill_rax: u32,
    /// Spill slot for guest `rcx`.
    pub spill_rcx: u32,
    /// Spill slot for guest `rdx`.
    pub spill_rdx: u32,
    /// Spill slot for the scratch register that holds the absolute
    /// address of a RIP-relative operand out of the cache's reach.
    pub spill_scratch: u32,
    /// Guest target of an indirect branch that missed the lookup table.
    pub ibl_target: u32,
    /// Holds the address of the runtime entry taken by exit stubs
    /// (`rax` = exit record, guest `rax` in `spill_rax`).
    pub enter_exit: u32,
    /// Holds the address of the runtime entry taken by a client request's
    /// exit stub (as [`Self::enter_exit`]; the runtime answers most
    /// requests there without saving the extended state).
    pub enter_request: u32,
    /// Holds the address of the runtime entry taken when a lookup finds no
    /// translation of its target (target in `rcx`, guest `rax` and `rcx`
    /// in their spill slots, every other register the guest's).
    pub enter_ibl_miss: u32,
    /// The indirect-branch lookup table: 65,536 cache addresses indexed by
    /// the low 16 bits of the target, each the lookup entry of a
    /// translation (which checks the target) or of the runtime's miss
    /// entry.
    pub ibl_values: u32,
    /// Counter of indirect-branch hits, bumped only when
    /// [`crate::TranslateOptions::count_ibl_hits`] is set.
    pub ibl_hits: u32,
    /// Start of the shadow register file (`shadowmem::RegFile`).
    pub shadow_regs: u32,
    /// Holds `shadowmem::XOR_MASK` (with `shadowmem::SHADOW_OFFSET`:
    /// application address → shadow address).
    pub shadow_mask: u32,
    /// The tool's per-thread area. Record mode keeps the thread's tape
    /// chunk at its start: buffer address, first index, next index and end
    /// index, four consecutive u64s (its inline recording). Dot mode keeps
    /// seven 64-byte slots there for the vector temporaries of its inline
    /// tangent code.
    pub tool_area: u32,
    /// Two scratch slots for inline sequences (16 bytes).
    pub spill_tmp: u32,
    /// A 16-byte scratch area for vector lanes.
    pub lane_tmp: u32,
    /// Two 16-byte-aligned constants: every bit but the sign of each
    /// double lane (`0x7fff…` twice), then of each float lane
    /// (`0x7fff_ffff` four times) — `ptest` against them tells whether a
    /// value is ±0.
    pub abs_masks: u32,
    /// A 64-byte, 64-byte-aligned slot where inline code saves a vector
    /// register it borrows as a temporary.
    pub vec_tmp: u32,
    /// The number of signals queued for the guest (a `u32`): code returning
    /// from a native call must enter the runtime when it is not zero.
    pub pending_signals: u32,
    /// A slot where the shadow address of an `fs:` operand keeps the
    /// register it reads the `%fs` base into.
    pub fs_tmp: u32,
    /// Sixteen 16-byte slots, one per guest `xmm0`–`xmm15`: where a
    /// translation keeps the guest's value of a register it holds as a
    /// temporary across instructions (`InsnMapEntry::held`).
    pub held_xmm: u32,
}

impl ContextLayout {
    /// A small fixed layout for tests and golden files.
    pub const EXAMPLE: ContextLayout = ContextLayout {
        spill_rax: 0x08,
        spill_rcx: 0x10,
        spill_rdx: 0x18,
        spill_scratch: 0x98,
        ibl_target: 0x20,
        enter_exit: 0x30,
        enter_ibl_miss: 0x38,
        enter_request: 0xa8,
        ibl_values: 0x90000,
        ibl_hits: 0x40,
        shadow_regs: 0x2000,
        shadow_mask: 0x48,
        tool_area: 0x50,
        spill_tmp: 0x70,
        lane_tmp: 0x80,
        abs_masks: 0x1f00,
        vec_tmp: 0x1f40,
        pending_signals: 0x90,
        fs_tmp: 0xa0,
        held_xmm: 0x1d00,
    };
}

/// Number of entries of the indirect-branch lookup table.
pub const IBL_ENTRIES: usize = 1 << 16;
