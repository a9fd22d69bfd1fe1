//! End-to-end tests of dgad: programs run natively and under `libdgad.so`.
//!
//! The library part holds what the test files share: locating the built
//! `libdgad.so`, compiling the test programs, and running a command natively
//! and under the preload. Nothing here is needed at run time.
