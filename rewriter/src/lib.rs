//! The translator: guest x86-64 code in, instrumented cache code out.
//!
//! [`translate::translate_block`] is the pipeline (decode → app-to-app
//! rewrites → instrumentation → encode) for one block; [`emit::Emitter`]
//! encodes the instructions the translator inserts, which are a different
//! thing from the guest instructions it copies; [`layout::ContextLayout`] is
//! the contract with the runtime about where per-thread state lives
//! (`%gs`-relative). The runtime (`preload`) owns the code cache memory, the
//! dispatcher and block linking; this crate knows nothing of files,
//! environment variables or libm.

pub mod code_sizes;
pub mod disasm;
pub mod emit;
pub mod instrument;
pub mod layout;
pub mod restart;
pub mod semantics;
pub mod translate;

pub use layout::ContextLayout;
pub use translate::{
    translate_block, ExitKind, ExitRecord, InsnMapEntry, TranslateError, TranslateOptions,
    Translation,
};
