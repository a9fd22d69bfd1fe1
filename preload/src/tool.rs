//! The one door between the engine and the tool it runs (`DGAD_MODE`):
//! the engine calls the [`Tool`] for every event a tool may care about and
//! never names a tool; a tool reaches the engine only through this module,
//! the context layout and the machine-access helpers.
//!
//! Events, by when they happen:
//! - start-up: [`Tool::start`] (address ranges, tables), then
//!   translation-time insertion through [`Tool::planner`];
//! - running: [`Tool::instruction`] (an instrumented instruction left the
//!   cache for the runtime), [`Tool::client_request`] (on the light path
//!   where [`Tool::light_request`] allows),
//!   [`Tool::intercepted`] (a guest function the tool answers natively);
//! - the kernel and the runtime: [`Tool::mem_written`] and
//!   [`Tool::mem_moved`] (what a system call wrote or moved, decoded by the
//!   engine's `syscall_effects`; a signal frame the runtime wrote);
//! - threads and processes: [`Tool::thread_exiting`], [`Tool::fork_lock`]
//!   and [`Tool::fork_child`], [`Tool::process_ending`] (exit, `execve`, a
//!   fatal signal outside signal context), [`Tool::dying_in_signal`]
//!   (signal context: no allocation, no locks).
//!
//! `null` ([`NullTool`]) translates only; `record` (`crate::record`) writes
//! the tape. See `docs/architecture.md`.

use crate::context::ThreadCtx;
use iced_x86::Instruction;
use std::sync::OnceLock;

/// What the engine does once a tool handled an instrumented instruction.
pub enum After {
    /// Run the instruction, which follows its exit record in the block.
    Run,
    /// A signal waits and the instruction is only partly done (a long
    /// `rep` string): deliver the signal at the instruction, which goes on
    /// after the handler.
    Restart,
}

/// A guest function answered natively (libm): the wrapper's address, the
/// register that carries its descriptor, the descriptor.
pub type Interception = (u64, u8, u64);

/// Translation-time insertion: the plan for one guest instruction, given
/// whether the flags are free to clobber there.
pub type Planner = fn(&Instruction, bool) -> rewriter::instrument::Plan;

/// A tool the engine runs. Every event has a default that does nothing,
/// so a tool states only what it cares about.
pub trait Tool: Sync {
    /// Its name, as `DGAD_MODE` spells it.
    fn name(&self) -> &'static str;

    /// Whether the tool keeps shadows of registers and memory: the engine
    /// then keeps the register shadows of interrupted code while a guest
    /// signal handler runs, and the shadow memory's address ranges are
    /// reserved.
    fn has_shadows(&self) -> bool {
        false
    }

    /// Whether the tool follows data through the program, so that a
    /// thread running outside the code cache would make its results
    /// wrong (start-up then stops instead of letting one run natively).
    fn follows_data(&self) -> bool {
        false
    }

    /// Whether a signal whose default action ends the process must reach
    /// the runtime first (to complete the tool's files).
    fn keeps_fatal_signals(&self) -> bool {
        false
    }

    /// Start-up, before any guest code runs translated: reserve address
    /// ranges, build tables. An error is for the user; the engine stops.
    fn start(&self) -> Result<(), String> {
        Ok(())
    }

    /// The insertion hook the translator calls for every guest
    /// instruction; `None` translates only.
    fn planner(&self) -> Option<Planner> {
        None
    }

    /// Whether the planner's code may keep register shadows in registers
    /// the program does not use (dot mode's tangent cache,
    /// [`rewriter::TranslateOptions::tangent_cache`]).
    fn caches_tangents(&self) -> bool {
        false
    }

    /// Whether the planner's code may hold program registers as
    /// temporaries across instructions
    /// ([`rewriter::TranslateOptions::hold_registers`]).
    fn holds_registers(&self) -> bool {
        false
    }

    /// An instrumented instruction left the cache for the runtime.
    fn instruction(&self, _ctx: &mut ThreadCtx, _insn: &Instruction) -> After {
        After::Run
    }

    /// A client request: `rax` points at `{request, arg1, …, arg5}`, `rdx`
    /// holds the default result (what the program gets natively).
    fn client_request(&self, _ctx: &mut ThreadCtx) {}

    /// Whether [`Tool::client_request`] may answer requests now on the
    /// engine's light path (`entry.rs`, `dgad_enter_request`): the
    /// guest's general registers and flags are in `ctx.regs`, but its
    /// vector, x87 and mask registers stay live in the CPU (`ctx.xsave` is
    /// stale) and only xmm0–15 and MXCSR are put aside. The handler must
    /// then read and write only memory, shadows and `ctx.regs`, and run
    /// only this library's Rust code: no x87 instruction, no libc or libm
    /// function (glibc's string and math functions use the AVX and AVX-512
    /// registers), except on a path that ends the process. `false` takes
    /// the full path (every register saved), about 2.5 times the cost.
    fn light_request(&self) -> bool {
        false
    }

    /// A debugger's monitor command (Derivgrind's: `get ADDR`, `set ADDR
    /// VALUE` and their `f`/`l` forms for floats and long doubles in
    /// forward mode, `mark ADDR` and `index ADDR` when recording), split
    /// into words; its output, or `None` if the tool has no such command.
    fn monitor(&self, _ctx: &mut ThreadCtx, _words: &[&str]) -> Option<String> {
        None
    }

    /// Whether the process may start on plain translations (null mode's)
    /// until a client request may make data active (decision 53,
    /// `lazy`): true for a tool whose shadows all start at zero and become
    /// non-zero only through client requests.
    fn starts_lazily(&self) -> bool {
        false
    }

    /// Whether client request `code` may make data active (begin the
    /// instrumentation of a process that started lazily): every
    /// Derivgrind request but the mode's query, which a program may ask
    /// long before it marks anything.
    fn may_activate(&self, code: u64) -> bool {
        code >> 16 == request::GET_MODE >> 16 && code != request::GET_MODE
    }

    /// A guest function the tool answers natively, by its address.
    fn intercepted(&self, _guest_pc: u64) -> Option<Interception> {
        None
    }

    /// Whether the tool watches the function that starts at `guest_pc`:
    /// its translation starts with an exit to [`Self::probe`], then runs
    /// the function as usual.
    fn probed(&self, _guest_pc: u64) -> bool {
        false
    }

    /// A watched function ([`Self::probed`]) is entered, the guest's state
    /// in `ctx` (registers, shadows): look, change nothing.
    fn probe(&self, _ctx: &mut ThreadCtx, _guest_pc: u64) {}

    /// The kernel (a system call, decoded by `syscall_effects`) or the
    /// runtime (a signal frame) wrote `[addr, addr + len)` of guest
    /// memory without instrumented stores. Called only for tools with
    /// shadows.
    fn mem_written(&self, _addr: u64, _len: u64) {}

    /// The kernel moved `len` bytes of guest memory from `from` to `to`
    /// (`mremap`; the ranges do not overlap).
    fn mem_moved(&self, _from: u64, _to: u64, _len: u64) {}

    /// The calling thread leaves with `exit`.
    fn thread_exiting(&self, _ctx: &mut ThreadCtx) {}

    /// Whether the tool is done with the context of a thread that left
    /// (nothing of it still being written), so a new thread may take it.
    fn context_idle(&self, _ctx: &ThreadCtx) -> bool {
        true
    }

    /// A context whose thread is gone goes to a new thread: what the
    /// tool's area described of the old one goes.
    fn context_reused(&self, _ctx: &mut ThreadCtx) {}

    /// Whether the tool runs a thread of its own now (it would keep the
    /// process alive once the guest's last thread left with `exit`).
    fn own_thread_running(&self) -> bool {
        false
    }

    /// The process (or its program image) ends, in normal context: how is
    /// [`Ending`].
    fn process_ending(&self, _how: Ending) {}

    /// The process dies of signal `sig` (`None`: the runtime stops it)
    /// in signal context: complete what can be completed, without
    /// allocating or locking, and say so on stderr.
    fn dying_in_signal(&self, _sig: Option<i32>) {}

    /// Held across `fork`, so that no thread of the tool is in the middle
    /// of something the child would inherit half-done.
    fn fork_lock(&self) -> Option<crate::lock::Guard<'static, ()>> {
        None
    }

    /// In the child after `fork`.
    fn fork_child(&self, _ctx: &mut ThreadCtx) {}
}

/// `DGAD_MODE=null`: translation only; client requests answer as natively.
pub struct NullTool;

impl Tool for NullTool {
    fn name(&self) -> &'static str {
        "null"
    }

    /// Its answer reads memory and formats one message.
    fn light_request(&self) -> bool {
        true
    }

    /// The first input declaration gets one line per process saying that
    /// nothing records it. Costs nothing to a program without client
    /// requests: they are the only way here.
    fn client_request(&self, ctx: &mut ThreadCtx) {
        use std::sync::atomic::{AtomicBool, Ordering};
        static TOLD: AtomicBool = AtomicBool::new(false);
        if TOLD.load(Ordering::Relaxed) {
            return;
        }
        let mut b = [0u8; 16];
        if !crate::guest_mem::read_mem(ctx.regs.gpr[crate::context::reg::RAX], &mut b) {
            return;
        }
        let word = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
        let input_file = word(0) == request::INDEX_TO_FILE && word(1) == 0;
        if input_file && !TOLD.swap(true, Ordering::Relaxed) {
            let why = crate::settings::why_not_recording(&crate::init::config().own_env);
            crate::dgad_eprintln!(
                "the program marks AD inputs, but nothing is recorded ({why}): derivatives are not computed"
            );
        }
    }
}

/// How a process or its program image ends ([`Tool::process_ending`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `exit_group`, or the last thread's `exit`: the program finished.
    Exit,
    /// `execve`: this program image is replaced by another (which may fail
    /// and let the image go on).
    Exec,
    /// A signal's default action, taken from the runtime: the program did
    /// not finish.
    Signal,
}

/// Derivgrind's client request codes (`valgrind/derivgrind.h`), which
/// every tool answers in its own way.
pub mod request {
    const BASE: u64 = 0x4447_0000;
    /// `DG_GET_DOTVALUE`.
    pub const GET_DOTVALUE: u64 = BASE;
    /// `DG_SET_DOTVALUE`.
    pub const SET_DOTVALUE: u64 = BASE + 1;
    /// `DG_DISABLE`.
    pub const DISABLE: u64 = BASE + 2;
    /// `DG_GET_INDEX`.
    pub const GET_INDEX: u64 = BASE + 3;
    /// `DG_SET_INDEX`.
    pub const SET_INDEX: u64 = BASE + 4;
    /// `DG_NEW_INDEX`.
    pub const NEW_INDEX: u64 = BASE + 5;
    /// `DG_NEW_INDEX_NOACTIVITYANALYSIS`.
    pub const NEW_INDEX_NOACTIVITYANALYSIS: u64 = BASE + 6;
    /// `DG_INDEX_TO_FILE` (first argument: 0 the input file, 1 the output file).
    pub const INDEX_TO_FILE: u64 = BASE + 7;
    /// `DG_GET_MODE`.
    pub const GET_MODE: u64 = BASE + 8;
    /// `DG_GET_FLAGS`.
    pub const GET_FLAGS: u64 = BASE + 9;
    /// `DG_SET_FLAGS`.
    pub const SET_FLAGS: u64 = BASE + 10;
    /// dgad's one-request input mark (`dgad/request.h`): `(addr, value
    /// bits, to_file, index_addr)` does what Derivgrind's
    /// `NEW_INDEX_NOACTIVITYANALYSIS`, `SET_INDEX` and (with `to_file`)
    /// `INDEX_TO_FILE` of an input mark do, and writes the mark's index to
    /// `index_addr`. A tool that leaves that word alone has the header
    /// send the three requests instead.
    pub const MARK_INPUT: u64 = BASE + 0x100;
    /// dgad's one-request output mark: what `GET_INDEX`,
    /// `NEW_INDEX_NOACTIVITYANALYSIS` (the value's index, partial 1) and
    /// `INDEX_TO_FILE` of an output mark do; arguments as [`MARK_INPUT`].
    pub const MARK_OUTPUT: u64 = BASE + 0x101;
}

static TOOL: OnceLock<&'static dyn Tool> = OnceLock::new();

/// Makes `tool` the process's tool (once, at start-up).
pub fn install(tool: &'static dyn Tool) {
    let _ = TOOL.set(tool);
}

/// The process's tool ([`NullTool`] before start-up chose one). A load,
/// safe in signal context.
pub fn tool() -> &'static dyn Tool {
    TOOL.get().copied().unwrap_or(&NullTool)
}
