//! Dot mode (`DGAD_MODE=dot`): forward-mode AD inside the run. Every
//! floating-point value's tangent lives in its shadow, in the value's own
//! format (a float's as a float, a double's as a double, an x87 value's in
//! 80 bits), so memory keeps one shadow byte per byte. Moves copy shadow
//! bytes like data; arithmetic goes through the shared AD rules
//! ([`crate::ad`]) with [`mode::DotMode`] as the back-end; libm calls run
//! natively with the same analytic partials as in record mode
//! ([`math`]). The program seeds and reads tangents with Derivgrind's
//! `DG_SET_DOTVALUE`/`DG_GET_DOTVALUE` ([`client`]).

pub mod client;
pub mod files;
pub mod math;
pub mod mode;
pub mod tool;

#[cfg(test)]
mod rule_tests;

use crate::ad::apply::RuleMemory;
use crate::context::ThreadCtx;

/// Dot mode's per-thread state, in the context's tool area (all zeros is
/// a fresh thread's).
#[repr(C)]
pub struct ThreadState {
    /// Where inline tangent code saves its vector temporaries (first:
    /// translated code reaches it at `ContextLayout::tool_area`; seven
    /// 64-byte slots, `rewriter`'s `translate/dot.rs`).
    pub inline_temps: [[u8; 64]; 7],
    /// What derivative rules spanning two instructions remember.
    pub rule_memory: RuleMemory,
    /// Tangents handed to the libm wrappers by handle ([`math`]).
    pub handles: math::Handles,
    /// The latest tokens of the recording requests ([`client`]).
    pub marks: client::Marks,
}

const _: () = {
    assert!(core::mem::size_of::<ThreadState>() <= crate::context::TOOL_AREA_BYTES);
    assert!(core::mem::align_of::<ThreadState>() <= 64);
    assert!(core::mem::offset_of!(ThreadState, inline_temps) == 0);
};

/// Dot mode's view of a context: its [`ThreadState`].
pub trait DotState {
    /// The state, to change.
    fn dot(&mut self) -> &mut ThreadState;
    /// The state, to read.
    fn dot_ref(&self) -> &ThreadState;
}

impl DotState for ThreadCtx {
    fn dot(&mut self) -> &mut ThreadState {
        // SAFETY: the tool area is 64-byte aligned and large enough (checked
        // above); all-zero bytes are a valid ThreadState, and only dot mode
        // gives the area a type in a dot-mode process.
        unsafe { &mut *(self.tool.0.as_mut_ptr() as *mut ThreadState) }
    }

    fn dot_ref(&self) -> &ThreadState {
        // SAFETY: as in `dot`.
        unsafe { &*(self.tool.0.as_ptr() as *const ThreadState) }
    }
}
