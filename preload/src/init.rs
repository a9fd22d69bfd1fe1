//! Start-up: configuration from the environment and the takeover of the
//! main thread.

use crate::context::ThreadCtx;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::sync::OnceLock;

/// What the runtime does besides executing the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Translate only: measures the engine alone.
    Null,
    /// Record a tape into `DGAD_RECORD`.
    Record,
    /// Forward mode: tangents propagated in the run.
    Dot,
}

/// Which CPU features the guest's `cpuid` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuidPolicy {
    /// Hide AVX-512 and TSX, so code dispatched after takeover picks AVX2
    /// paths (`DGAD_CPUID=avx2`, the default).
    Avx2,
    /// Report what the CPU has (`DGAD_CPUID=native`).
    Native,
}

/// Settings read once from the environment at start-up.
#[derive(Debug)]
pub struct Config {
    /// `DGAD_MODE`.
    pub mode: Mode,
    /// `DGAD_STATS`.
    pub stats: bool,
    /// File descriptor of `DGAD_LOG`, or -1.
    pub log_fd: i32,
    /// `DGAD_DUMP_CACHE=path`: where to write the code cache at exit (for
    /// attributing instruction counts to inserted code; `scripts/cache_profile.py`).
    pub dump_cache: Option<Vec<u8>>,
    /// `DGAD_CPUID`.
    pub cpuid: CpuidPolicy,
    /// `DGAD_TRACE` (with `DGAD_LOG`): log every instrumented instruction
    /// with the indices it leaves in its destinations.
    pub trace: bool,
    /// `DGAD_MATHWRAP` (on by default): answer libm calls natively with
    /// analytic derivatives (record mode).
    pub mathwrap: bool,
    /// `DGAD_TAPE_WRITER` (on by default): a thread of the runtime writes
    /// full tape chunks while the program goes on.
    pub tape_writer: bool,
    /// `DGAD_LAZY` (on by default): record and dot mode run plain
    /// translations until a client request may make data active
    /// (decision 53, `lazy`).
    pub lazy: bool,
    /// `DGAD_TANGENT_CACHE` (on by default): dot mode keeps tangents in
    /// registers within a block where the CPU allows (decision 46).
    pub tangent_cache: bool,
    /// The `LD_PRELOAD` entry that loaded us, re-added on `execve` if the
    /// program drops it.
    pub preload: Option<Vec<u8>>,
    /// The `DGAD_…=…` entries of our environment, NUL-terminated: added
    /// with the preload, so that a program started with a cleaned
    /// environment runs as its parent (a record-mode parent's child in
    /// record mode, not in null mode).
    pub own_env: Vec<Vec<u8>>,
    /// `DGAD_GDBSERVER=VGDB`: wait for gdb at the start (Valgrind's
    /// `--vgdb-error=0`); VGDB is the relay command gdb is told to run.
    pub gdbserver: Option<Vec<u8>>,
}

static CONFIG: OnceLock<Config> = OnceLock::new();
static PID: AtomicI32 = AtomicI32::new(0);

/// The configuration (only valid after `dgad_init`).
pub fn config() -> &'static Config {
    CONFIG.get().expect("runtime initialised")
}

/// The process id, kept current across `fork`.
pub fn pid() -> i32 {
    PID.load(Ordering::Relaxed)
}

/// Re-reads the process id (in a child after `fork`).
pub fn refresh_pid() {
    PID.store(crate::sys::getpid(), Ordering::Relaxed);
}

/// The `DGAD_` entries of `envp`, each NUL-terminated.
fn dgad_entries(envp: *const *const libc::c_char) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if envp.is_null() {
        return out;
    }
    let mut p = envp;
    // SAFETY: envp is the NULL-terminated environment array the loader
    // passes to initialisers; its strings live for the whole process.
    unsafe {
        while !(*p).is_null() {
            let s = core::ffi::CStr::from_ptr(*p).to_bytes_with_nul();
            if s.starts_with(b"DGAD_") && s.contains(&b'=') {
                out.push(s.to_vec());
            }
            p = p.add(1);
        }
    }
    out
}

fn fail(msg: &str) -> ! {
    crate::dgad_eprintln!("{}", msg);
    crate::sys::exit_group(125)
}

fn read_config(envp: *const *const libc::c_char) -> Config {
    crate::settings::warn_unknown(envp);
    // Empty values are unset ones (`settings::value`).
    let get = |n: &str| crate::settings::value(envp, n);
    let switch = |n: &str| crate::settings::switch(envp, n);
    let record = get("DGAD_RECORD");
    let mode = match (get("DGAD_MODE"), record) {
        (Some(b"null"), _) | (None, None) => Mode::Null,
        (Some(b"record"), Some(_)) | (None, Some(_)) => Mode::Record,
        (Some(b"record"), None) => {
            fail("DGAD_MODE=record needs DGAD_RECORD=DIR (where to write the tape)")
        }
        (Some(b"dot"), _) => Mode::Dot,
        (Some(m), _) => fail(&format!(
            "DGAD_MODE={} is not one of null, record, dot",
            String::from_utf8_lossy(m)
        )),
    };
    let recording = |name: &str| (mode == Mode::Record).then(|| get(name)).flatten();
    if mode != Mode::Record && get("DGAD_GRAD").is_some() {
        fail("DGAD_GRAD needs record mode and DGAD_RECORD=DIR (where the gradient is written)");
    }
    let settings = crate::tools::RecordSettings {
        tape_limit: recording("DGAD_TAPE_LIMIT"),
        grad: recording("DGAD_GRAD"),
        tape_memory: recording("DGAD_TAPE_MEMORY"),
        tape_format: recording("DGAD_TAPE_FORMAT"),
    };
    match crate::tools::for_mode(mode, record, settings) {
        Ok(tool) => crate::tool::install(tool),
        Err(e) => fail(&e),
    }
    let cpuid = match get("DGAD_CPUID") {
        None | Some(b"avx2") => CpuidPolicy::Avx2,
        Some(b"native") => CpuidPolicy::Native,
        Some(v) => fail(&format!(
            "DGAD_CPUID={} is not one of avx2, native",
            String::from_utf8_lossy(v)
        )),
    };
    let log_fd = match get("DGAD_LOG") {
        None => -1,
        Some(path) => match crate::user_files::open_for_append("DGAD_LOG", path) {
            Ok(fd) => crate::fds::adopt(fd),
            Err(e) => fail(&e),
        },
    };
    let preload = get("LD_PRELOAD").and_then(|v| {
        v.split(|&c| c == b':' || c == b' ')
            .find(|e| e.ends_with(b"libdgad.so"))
            .map(<[u8]>::to_vec)
    });
    let mathwrap = switch("DGAD_MATHWRAP");
    let tape_writer = switch("DGAD_TAPE_WRITER");
    let trace = switch("DGAD_TRACE") && log_fd >= 0;
    let dump_cache = get("DGAD_DUMP_CACHE").map(<[u8]>::to_vec);
    Config {
        own_env: dgad_entries(envp),
        tape_writer,
        tangent_cache: switch("DGAD_TANGENT_CACHE"),
        lazy: switch("DGAD_LAZY"),
        mode,
        stats: switch("DGAD_STATS"),
        log_fd,
        dump_cache,
        cpuid,
        trace,
        mathwrap,
        preload,
        gdbserver: get("DGAD_GDBSERVER").map(<[u8]>::to_vec),
    }
}

/// Set once the runtime has taken over the process (1), by the launcher's
/// early entry or by the constructor; read by the constructor's entry
/// (`entry.rs`), which then returns at once.
pub static TAKEN_OVER: AtomicU8 = AtomicU8::new(0);

/// Whether the launcher brought the runtime in before the loader ran any
/// initialiser (`dgad_takeover_traced`).
pub fn taken_over_early() -> bool {
    TAKEN_OVER.load(Ordering::Relaxed) == 2
}

/// The launcher's early entry (`dgad_takeover_traced` in `entry.rs`): the
/// loader is stopped in `_dl_debug_state` with every initial object mapped
/// and relocated and no initialiser run. As [`dgad_init`].
pub extern "C" fn dgad_init_early(
    argc: i32,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
) -> u32 {
    let taken = dgad_init(argc, argv, envp);
    if taken != 0 {
        TAKEN_OVER.store(2, Ordering::Relaxed);
    }
    taken
}

/// Called by `dgad_takeover` from the loader's initialiser loop. Returns 1
/// when the calling thread should continue under the runtime, 2 when it
/// should start the static program mapped into this host instead
/// (`static_exec`: the context holds its entry and stack), 0 to run
/// natively (`DGAD_DISABLE` on).
pub extern "C" fn dgad_init(
    _argc: i32,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
) -> u32 {
    if crate::settings::switch(envp, "DGAD_DISABLE") {
        return 0;
    }
    refresh_pid();
    crate::cpu::init_entry();
    std::panic::set_hook(Box::new(|info| {
        crate::dgad_eprintln!("internal error: {}", info);
        crate::sys::exit_group(125);
    }));
    let cfg = CONFIG.get_or_init(|| read_config(envp));
    // A statically linked program in the host (`static_exec`): its image
    // is mapped before the tool starts, which looks for its libm.
    let mut static_start = None;
    if let Some(path) = crate::static_exec::requested(envp) {
        let Some(ctx) = ThreadCtx::allocate() else {
            fail("cannot map the main thread's context")
        };
        if let Err(e) = crate::static_exec::start(ctx, &path, argv, envp) {
            crate::dgad_eprintln!("{e}");
            crate::sys::exit_group(127);
        }
        static_start = Some(ctx);
    }
    let tool = crate::tool::tool();
    if let Err(e) = tool.start() {
        fail(&e);
    }
    crate::cache::init(rewriter::TranslateOptions {
        count_ibl_hits: cfg.stats,
        instrument: tool.planner(),
        zmm_state: crate::cpu::vector_bytes() == 64,
        tangent_cache: tool.caches_tangents(),
        hold_registers: tool.holds_registers(),
        stop_before: cfg
            .gdbserver
            .is_some()
            .then_some(crate::gdbserver::is_breakpoint as fn(u64) -> bool),
        ..Default::default()
    });
    if let Some(vgdb) = &cfg.gdbserver {
        if let Err(e) = crate::gdbserver::init(&String::from_utf8_lossy(vgdb)) {
            fail(&e);
        }
    }
    let Some(ctx) = static_start.or_else(ThreadCtx::allocate) else {
        fail("cannot map the main thread's context")
    };
    ctx.tid = crate::sys::gettid();
    if !ctx.install() {
        fail("arch_prctl(ARCH_SET_GS) failed: cannot give the runtime a segment base");
    }
    ctx.guest_ss = crate::signals::altstack_of_calling_thread();
    ctx.install_signal_stack();
    crate::threads::register(ctx);
    crate::signals::init();
    let others = crate::adopt::existing_threads();
    if cfg.lazy && tool.starts_lazily() && cfg.gdbserver.is_none() && !others {
        crate::lazy::start_lazily();
    }
    TAKEN_OVER.store(1, Ordering::Relaxed);
    crate::log!("takeover of pid {}", pid());
    if crate::static_exec::active() {
        // `entry.rs` starts the image from the context's rip and rsp.
        return 2;
    }
    1
}

/// The configuration, if initialised.
pub fn try_config() -> Option<&'static Config> {
    CONFIG.get()
}
