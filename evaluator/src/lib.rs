//! `dg-eval` and its library: reverse and forward sweeps over a recorded
//! tape, in vector mode (up to 8 directions per pass) and for whole Jacobians.
//!
//! The layers, bottom up: [`reverse_sweep`] and [`forward_sweep`] are the
//! hot loops over a `tape_format::Tape`, generic over the lane count `L`, on
//! a derivative vector of `[f64; L]` per index held in [`DerivativeMemory`]
//! ([`reverse_sweep_window`] keeps the reverse sweep's bars in a window of
//! recent indices instead, which is what [`evaluate`] uses);
//! [`evaluate`] seeds a table of directions ([`Seeds`]), splits it into
//! passes of up to [`MAX_LANES`] lanes run on threads within a memory budget
//! ([`Plan`], [`SweepOptions`]) and collects an [`Evaluation`]; [`reverse`],
//! [`forward`] and [`jacobian`] apply that to an opened
//! `tape_format::Recording`. The `dg-eval` binary reads and writes the
//! record directory's files as Derivgrind's `tape-evaluation` does.
//!
//! It depends only on `tape-format`, never on the runtime.

mod derivative_memory;
mod evaluate;
mod sweep;
mod window;

pub use derivative_memory::DerivativeMemory;
pub use evaluate::{
    evaluate, forward, jacobian, reverse, EvalError, Evaluation, Mode, Plan, Seeds, SweepOptions,
    MAX_LANES,
};
pub use sweep::{forward_sweep, reverse_sweep};
pub use window::{reverse_sweep_window, window_len, WINDOW};
