//! `dg-eval`: reverse and forward sweeps over a recorded tape.
//!
//! Filled in by the recording issue (#3). It depends only on `tape-format`,
//! never on the runtime.
