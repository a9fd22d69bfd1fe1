//! The wrapped libm functions: their table with the analytic partial
//! derivatives ([`table`]), the arithmetic they are written in for every
//! precision ([`real`], [`f80`]), and the native wrappers the runtime calls
//! in place of the real functions ([`wrap`]).
//!
//! The runtime finds each wrapped function's entry when it is about to
//! translate it and runs the wrapper instead: libm itself runs natively
//! (fast, and its table look-ups and rounding bit-tricks never reach the
//! instrumentation) and one block with the analytic partials is recorded.
//! This crate must not decode instructions; the tape and shadows are the
//! runtime's, reached through [`wrap::Host`].

pub mod f80;
pub mod real;
pub mod softfloat;
pub mod table;
pub mod wrap;

pub use table::{Func, Precision, Shape};
pub use wrap::{wrappers, Desc, Host, Wrapped};
