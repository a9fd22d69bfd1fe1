//! The on-disk contract between the recording runtime and the evaluator.
//!
//! A tape is a file `dg-tape` of 32-byte blocks `{u64 index1, u64 index2,
//! f64 partial1, f64 partial2}` (little-endian), block `i` at byte offset
//! `32*i`; block 0 and the blocks of inputs are all-zero. The record directory
//! also holds `dg-input-indices` and `dg-output-indices` (one decimal index per
//! line). Readers, writers and validation land with the recording issue (#3);
//! this crate depends on nothing else in the workspace.
