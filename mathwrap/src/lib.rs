//! The table of wrapped libm functions with their analytic partial
//! derivatives, and the native wrappers that run the real function and record
//! one tape block.
//!
//! Filled in by the math-library issue (#4). It must not decode instructions.
