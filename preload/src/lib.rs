//! `libdgad.so`: the runtime injected with `LD_PRELOAD` that takes over the
//! process at start-up and runs it from the code cache.
//!
//! # Rules for code in this crate
//! This code runs inside someone else's process, at moments the guest did
//! not choose. Therefore:
//! - **System calls are raw** ([`sys`]): never through libc wrappers, which
//!   touch the guest's `errno` and may take locks the guest holds.
//! - **Allocation uses the runtime's own heap** ([`alloc::RuntimeAlloc`]),
//!   never the guest's `malloc`, which may be mid-operation.
//! - **Signal context** (the host signal handler in [`signals`]) neither
//!   allocates nor takes locks; it only reads lock-free tables, queues, and
//!   edits the interrupted context.
//! - **No general-purpose locks** ([`lock::Lock`] only): library locks may
//!   keep TLS or allocate through libc on contention.
//! - **No thread-local storage**: per-thread state is the [`context`]
//!   behind `%gs`, valid from the first instruction a thread runs under us.
//!   A statically linked guest ([`static_exec`]) owns `%fs` and its own
//!   libc: every way from guest or cache code into this crate's code
//!   (the entries in [`entry`], the host signal handler, the libm
//!   wrappers' thunk) switches to the runtime's `%fs` base and back, and a
//!   new one must too.
//! - **Before initialisation** (`init::dgad_init`) nothing but the
//!   environment may be read.
//! - **Never write to the client's stdout**; diagnostics go to stderr, one
//!   line each, prefixed `dgad:`; debug logs to `DGAD_LOG`.
//! - **Unsafe blocks are small** and each carries a one-line safety argument.
//!
//! # Parts
//! [`entry`] (assembly seams) → [`dispatch`] (what happens on each exit from
//! cache code) → [`cache`] (translation, linking, invalidation, via the
//! `rewriter` crate); [`syscall`], [`signals`] and [`threads`] keep the guest's
//! view of the kernel intact.

pub mod ad;
pub mod adopt;
pub mod adopt_traced;
pub mod alloc;
pub mod cache;
pub mod context;
pub mod cpu;
pub mod crash;
pub mod diag;
pub mod directory;
pub mod dispatch;
pub mod dot;
pub mod entry;
pub mod execenv;
pub mod fds;
pub mod gdbserver;
pub mod guest_mem;
pub mod init;
pub mod lazy;
pub mod loaded;
pub mod lock;
pub mod log;
pub mod memfns;
pub mod record;
pub mod settings;
pub mod signals;
pub mod static_exec;
pub mod stats;
pub mod sys;
pub mod syscall;
pub mod syscall_effects;
pub mod threads;
pub mod tool;
pub mod tools;
pub mod user_files;

/// All Rust allocations of the runtime.
#[global_allocator]
pub static ALLOCATOR: alloc::RuntimeAlloc = alloc::RuntimeAlloc::new();
