//! The dispatcher: what the runtime does each time a thread leaves cache
//! code, and where it goes next.

use crate::cache::{self, CACHE};
use crate::context::{reason, reg, ThreadCtx};
use rewriter::translate::TranslateError;
use rewriter::ExitKind;

/// Entered from `entry.rs` with the guest state saved in `ctx`; sets
/// `ctx.resume_addr` to the cache code to continue at.
pub extern "C" fn dgad_dispatch(ctx: &mut ThreadCtx) {
    let mut link_from = None;
    let target = match ctx.reason {
        reason::EXIT_STUB => {
            let rec_addr = ctx.exit_record;
            let rec = cache::exit_record(rec_addr);
            match ExitKind::from_u32(rec.kind) {
                Some(ExitKind::Branch) => {
                    if rec.patch != 0 {
                        link_from =
                            Some((rec_addr.wrapping_add(rec.patch as i64 as u64), rec_addr));
                    }
                    rec.target
                }
                Some(ExitKind::Syscall) => {
                    ctx.regs.rip = rec.target;
                    crate::syscall::handle(ctx);
                    ctx.regs.rip
                }
                Some(ExitKind::Cpuid) => {
                    emulate_cpuid(ctx);
                    rec.target
                }
                Some(ExitKind::ClientRequest) => {
                    // Answered here; the block goes on right after the
                    // record (no lookup), where the next instruction
                    // starts: a signal that came meanwhile is delivered
                    // there at once, below (single-stepping to it through
                    // the way back into the block took a trap per
                    // instruction, twenty for every signal).
                    ctx.regs.rip = rec.target;
                    // The first request that may make data active in a
                    // process that started lazily: its block was made
                    // without instrumentation, so the thread goes on from
                    // a new translation of what follows the request.
                    let activated = crate::lazy::before_request(|| request_code(ctx));
                    crate::stats::request(false);
                    crate::tool::tool().client_request(ctx);
                    if crate::signals::pending_len(ctx) == 0 && !activated {
                        return continue_in_block(ctx, rec_addr, rec.patch);
                    }
                    rec.target
                }
                Some(ExitKind::Instrument) => {
                    // Apply the instruction's AD semantics, then run it: it
                    // follows the record in this block. A signal that came
                    // meanwhile is delivered after it ran, at the next
                    // boundary, so the shadows stay in step with the data.
                    let insn = cache::instrument_record(rec_addr);
                    crate::stats::runtime_rule(insn);
                    match crate::tool::tool().instruction(ctx, insn) {
                        crate::tool::After::Run => {
                            return continue_in_block(ctx, rec_addr, rec.patch)
                        }
                        // Part done, a signal waits: deliver it at the
                        // instruction, which goes on after the handler.
                        crate::tool::After::Restart => rec.target,
                    }
                }
                Some(ExitKind::Verify) => {
                    // Writable code: run the translation only if the code
                    // is still what it was made from; else drop it (and
                    // whatever else covers those bytes) and translate anew.
                    let start = rec.target;
                    let same = CACHE.lock().as_mut().is_some_and(|c| c.unchanged(start));
                    if same {
                        return continue_in_block(ctx, rec_addr, rec.patch);
                    }
                    crate::syscall::invalidate(start, 1);
                    rec.target
                }
                Some(ExitKind::Probe) => {
                    // The tool looks at how a function it watches is
                    // entered; the function's first instruction follows the
                    // record, a boundary.
                    ctx.regs.rip = rec.target;
                    crate::tool::tool().probe(ctx, rec.target);
                    if crate::signals::pending_len(ctx) == 0 {
                        return continue_in_block(ctx, rec_addr, rec.patch);
                    }
                    rec.target
                }
                Some(ExitKind::Unsupported) => {
                    crate::diag::fatal_at(rec.target, "unsupported instruction")
                }
                None => crate::diag::fatal_at(rec.target, "corrupt exit record"),
            }
        }
        reason::IBL_MISS => {
            ctx.ibl_misses += 1;
            ctx.ibl_target
        }
        reason::ADOPTED => {
            // Off the signal frame now: the thread gets the runtime's
            // alternate stack (the guest's was kept by `adopt`).
            ctx.install_signal_stack();
            ctx.regs.rip
        }
        _ => ctx.regs.rip,
    };
    ctx.regs.rip = target;
    if crate::signals::deliver_pending(ctx) {
        link_from = None;
    }
    enter_guest_at(ctx, link_from);
}

/// A client request's light path (`entry.rs`, `dgad_enter_request`): the
/// guest's general registers and flags are in `ctx.regs`, its extended
/// state is still in the CPU but for xmm0–15 and MXCSR, put aside by the
/// entry (`ctx.xsave` is stale). Answers the request if the tool can on
/// this path ([`crate::tool::Tool::light_request`]), sets
/// `ctx.resume_addr` after the exit record as the full path does and
/// returns 0; else changes nothing and returns 1: the entry takes the full
/// path, whose dispatch answers it. (It also returns 1 after answering when
/// a signal waits, with the reason set so that the full path delivers it
/// rather than answering again.)
pub extern "C" fn dgad_light_request(ctx: &mut ThreadCtx) -> u32 {
    // The path keeps only xmm0–15 aside: a build whose Rust code may use
    // the AVX registers (`-C target-cpu=native`, say) takes the full one.
    if cfg!(target_feature = "avx") {
        return 1;
    }
    let tool = crate::tool::tool();
    if !tool.light_request() {
        return 1;
    }
    if !crate::lazy::active() && request_code(ctx).is_none_or(|c| tool.may_activate(c)) {
        // The request that begins the instrumentation (`lazy`) goes the
        // full way, once.
        return 1;
    }
    let rec_addr = ctx.exit_record;
    let rec = cache::exit_record(rec_addr);
    ctx.regs.rip = rec.target;
    crate::stats::request(true);
    tool.client_request(ctx);
    if crate::signals::pending_len(ctx) != 0 {
        // A signal came meanwhile: the full path delivers it at the
        // instruction after the request, from the whole state it saves
        // (`dgad_dispatch` with `RESUME_AT_RIP`), without answering again.
        ctx.reason = reason::RESUME_AT_RIP;
        return 1;
    }
    continue_in_block(ctx, rec_addr, rec.patch);
    0
}

/// The code of the guest's client request (the first word of the block
/// `rax` points to), if readable.
fn request_code(ctx: &ThreadCtx) -> Option<u64> {
    crate::guest_mem::read_u64(ctx.regs.gpr[reg::RAX])
}

/// Goes back into the block whose exit record is at `rec_addr`, at the
/// code `patch` bytes from the record, without the lookup and delivery
/// below: a signal that arrived meanwhile is delivered at the next
/// instruction boundary instead (`signals::step_to_boundary`).
fn continue_in_block(ctx: &mut ThreadCtx, rec_addr: u64, patch: i32) {
    ctx.resume_addr = rec_addr.wrapping_add(patch as i64 as u64);
    crate::signals::step_to_boundary(ctx);
}

/// First dispatch of a new thread (from `dgad_raw_clone`'s child path).
pub extern "C" fn dgad_thread_start(ctx: &mut ThreadCtx) {
    ctx.install_signal_stack();
    crate::threads::note_tid(ctx);
    enter_guest_at(ctx, None);
}

/// Finds or makes the translation of `ctx.regs.rip` and sets it as the
/// resume address; links the exit that brought us here when there is one.
fn enter_guest_at(ctx: &mut ThreadCtx, link_from: Option<(u64, u64)>) {
    let target = ctx.regs.rip;
    // Under a debugger: stop here if it says so; a breakpoint's block and a
    // single step's instruction are translated for one use.
    let once = if crate::gdbserver::active() {
        crate::gdbserver::before(ctx, target);
        crate::gdbserver::one_off(target)
    } else {
        None
    };
    let epoch = ctx.ibl_epoch.load(core::sync::atomic::Ordering::SeqCst);
    let mut guard = CACHE.lock();
    let cache = guard.as_mut().expect("cache initialised");
    let translated = match once {
        Some(max) => cache.translate_once(target, max),
        None => cache.lookup_or_translate(target),
    };
    let block = match translated {
        Ok(b) => b,
        Err(TranslateError::Unreadable(pc)) => {
            drop(guard);
            // Jumping to unmapped memory: the guest gets the SIGSEGV it
            // would get natively.
            crate::signals::raise_fault(ctx, libc::SIGSEGV, pc);
            return enter_guest_at(ctx, None);
        }
        Err(TranslateError::OutOfReach(pc)) => {
            drop(guard);
            crate::diag::fatal_at(pc, "RIP-relative operand out of reach of the code cache")
        }
    };
    if once.is_some() {
        drop(guard);
        ctx.resume_addr = block.entry;
        return;
    }
    if let Some((field, record)) = link_from {
        cache.link(field, record, block);
    }
    drop(guard);
    ctx.ibl_insert(target, block.lookup_entry, epoch);
    ctx.resume_addr = block.entry;
}

/// What `DGAD_CPUID=avx2` (the default) hides: (leaf, sub-leaf, register
/// index EAX=0 EBX=1 ECX=2 EDX=3, bits). Extensions the instrumentation
/// has no derivative rules for, or whose state the runtime does not carry
/// through signal frames, so that code dispatching on `cpuid` after
/// takeover picks AVX2 paths.
pub const HIDDEN_BY_AVX2_POLICY: &[(u32, u32, usize, u32)] = &[
    // EBX: HLE(4), RTM(11), AVX512F(16), DQ(17), IFMA(21), PF(26), ER(27),
    // CD(28), BW(30), VL(31).
    (
        7,
        0,
        1,
        (1 << 4)
            | (1 << 11)
            | (1 << 16)
            | (1 << 17)
            | (1 << 21)
            | (1 << 26)
            | (1 << 27)
            | (1 << 28)
            | (1 << 30)
            | (1 << 31),
    ),
    // ECX: VBMI(1), VBMI2(6), VNNI(11), BITALG(12), VPOPCNTDQ(14).
    (
        7,
        0,
        2,
        (1 << 1) | (1 << 6) | (1 << 11) | (1 << 12) | (1 << 14),
    ),
    // EDX: 4VNNIW(2), 4FMAPS(3), VP2INTERSECT(8), AMX-BF16(22),
    // AVX512_FP16(23), AMX-TILE(24), AMX-INT8(25).
    (
        7,
        0,
        3,
        (1 << 2) | (1 << 3) | (1 << 8) | (1 << 22) | (1 << 23) | (1 << 24) | (1 << 25),
    ),
    // EAX: AVX512_BF16(5), AMX-FP16(21).
    (7, 1, 0, (1 << 5) | (1 << 21)),
    // EDX: AMX-COMPLEX(8), AVX10(19), APX(21).
    (7, 1, 3, (1 << 8) | (1 << 19) | (1 << 21)),
];

/// Runs `cpuid` for the guest and hides what the instrumentation will not
/// support under the configured policy.
fn emulate_cpuid(ctx: &mut ThreadCtx) {
    let leaf = ctx.regs.gpr[reg::RAX] as u32;
    let sub = ctx.regs.gpr[reg::RCX] as u32;
    let r = core::arch::x86_64::__cpuid_count(leaf, sub);
    let mut r = [r.eax, r.ebx, r.ecx, r.edx];
    if crate::init::config().cpuid == crate::init::CpuidPolicy::Avx2 {
        for &(l, s, i, bits) in HIDDEN_BY_AVX2_POLICY {
            if (l, s) == (leaf, sub) {
                r[i] &= !bits;
            }
        }
    }
    let r = core::arch::x86_64::CpuidResult {
        eax: r[0],
        ebx: r[1],
        ecx: r[2],
        edx: r[3],
    };
    ctx.regs.gpr[reg::RAX] = u64::from(r.eax);
    ctx.regs.gpr[reg::RCX] = u64::from(r.ecx);
    ctx.regs.gpr[reg::RDX] = u64::from(r.edx);
    ctx.regs.gpr[3] = u64::from(r.ebx);
}
