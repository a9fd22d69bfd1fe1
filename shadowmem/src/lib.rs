//! Shadow storage: the map from an application address to the address of its
//! shadow, the up-front reservation of the shadow regions, and the layout of
//! the per-thread shadow register file.
//!
//! Filled in by the recording issue (#3). It must not know about
//! instructions or tapes.
