//! Block translation: decode a run of guest instructions, rewrite the ones
//! that cannot run as they are, and produce the cache code plus the metadata
//! the runtime needs (exit records, the cache-to-guest map).
//!
//! Stages, one guest instruction at a time:
//! 1. decode (`iced_x86::Decoder`), stopping after a control transfer
//!    other than a conditional branch (a side exit: the fall-through path
//!    goes on in the block), a system call, `cpuid`, or
//!    [`MAX_BLOCK_INSNS`];
//! 2. app-to-app rewrites: RIP-relative operands re-encoded at the cache
//!    address, `call` pushing the guest return address, `ret` and indirect
//!    branches through the lookup probe, `syscall`/`cpuid` exits;
//! 3. instrumentation (none in `null` mode; the AD modes hook in here);
//! 4. encode into an [`Emitter`] at the final cache address.
//!
//! Guest-visible state is exact at the start of each guest instruction's
//! translation (recorded in [`Translation::insn_map`]), which is what lets a
//! signal or a fault in cache code be explained in guest terms.

mod dot;
mod held;
mod shuffle;
mod tangent_cache;

use crate::emit::{rel32_for, Emitter, Gpr};
use crate::instrument::{Arithmetic, LowLane, MoveSide, Plan};
use crate::layout::ContextLayout;
use iced_x86::{
    Code, ConditionCode, Decoder, DecoderOptions, Encoder, EncodingKind, FlowControl, Instruction,
    InstructionInfoFactory, MemoryOperand, OpKind, Register,
};

/// A block never holds more guest instructions than this.
pub const MAX_BLOCK_INSNS: usize = 128;

/// Where a translation's lookup entry starts: after the complement of the
/// guest address it checks targets against ([`Translation::lookup_off`]).
pub const LOOKUP_OFF: u32 = 8;

/// How many guest bytes the translator reads at most: enough for
/// [`MAX_BLOCK_INSNS`] instructions and a client request after them.
const FETCH_WINDOW: usize = 16 * MAX_BLOCK_INSNS;

/// How many it reads first. Most blocks are far shorter (~50 bytes when
/// CPython starts), and copying the whole window from the guest for each
/// of them was a noticeable part of start-up; a block that comes within
/// [`WINDOW_MARGIN`] of the end of this one is translated again from the
/// whole window.
const FIRST_WINDOW: usize = 512;

/// Bytes that must follow an instruction inside a short window: a
/// longest instruction after a client-request sequence.
const WINDOW_MARGIN: u64 = 40;

/// What an exit stub asks the runtime to do. Stored in [`ExitRecord::kind`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    /// Continue at `target`; the branch at `patch` may be linked to it.
    Branch = 0,
    /// Run the guest `syscall` (registers in the context), then continue at `target`.
    Syscall = 1,
    /// Answer the guest `cpuid`, then continue at `target`.
    Cpuid = 2,
    /// The instruction at `target` cannot be translated: stop with a diagnostic.
    Unsupported = 3,
    /// A Valgrind client request (`rax` → request words, default result in
    /// `rdx`); answer it, then continue at `target`.
    ClientRequest = 4,
    /// Apply the AD semantics of the guest instruction at `target` (not yet
    /// executed), then continue in this block at the record's `patch`
    /// offset, where the instruction itself follows.
    Instrument = 5,
    /// The block's guest code lies in writable memory: check that it is
    /// unchanged (else translate it again), then continue in this block at
    /// the record's `patch` offset.
    Verify = 6,
    /// A function the tool watches starts at `target`: the tool looks at
    /// the guest state, then the block goes on at the record's `patch`
    /// offset, where the function's first instruction follows.
    Probe = 7,
}

impl ExitKind {
    /// Decodes a stored kind.
    pub fn from_u32(v: u32) -> Option<ExitKind> {
        Some(match v {
            0 => ExitKind::Branch,
            1 => ExitKind::Syscall,
            2 => ExitKind::Cpuid,
            3 => ExitKind::Unsupported,
            4 => ExitKind::ClientRequest,
            5 => ExitKind::Instrument,
            6 => ExitKind::Verify,
            7 => ExitKind::Probe,
            _ => return None,
        })
    }
}

/// The data placed in the cache right after each exit stub; the stub passes
/// its address to the runtime in `rax`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ExitRecord {
    /// Guest address to continue at (or of the offending instruction).
    pub target: u64,
    /// An [`ExitKind`].
    pub kind: u32,
    /// Offset from this record to the rel32 field of the branch that can be
    /// linked to `target`'s translation, or 0 when the exit is not linkable;
    /// for [`ExitKind::Instrument`] and [`ExitKind::ClientRequest`], the
    /// offset of the code to come back to.
    pub patch: i32,
}

/// The record of an [`ExitKind::Instrument`] exit: the exit record and the
/// address of the decoded guest instruction.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct InstrumentRecord {
    /// `target` is the instruction's guest address; `patch` the offset of
    /// the code that continues (the instruction itself).
    pub exit: ExitRecord,
    /// Address of the decoded instruction (`&'static iced_x86::Instruction`).
    pub insn: u64,
}

/// Size of the stub code in front of each [`ExitRecord`].
pub const EXIT_STUB_LEN: usize = 24;

/// One guest instruction's place in the translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InsnMapEntry {
    /// Offset in the translation where this guest instruction's code starts;
    /// all guest registers hold their guest values there.
    pub cache_off: u32,
    /// Guest address of the instruction.
    pub guest_pc: u64,
    /// All guest registers and memory hold exactly their guest values at
    /// `cache_off`, with the guest about to execute `guest_pc`. Entries
    /// without it only attribute inserted code to a guest instruction.
    pub boundary: bool,
    /// Guest registers this instruction's translation spills to their slots
    /// before changing them ([`SPILLS_RAX`], [`SPILLS_RCX`], [`SPILLS_RDX`]
    /// in the thread context, [`SPILLS_RAX_STACK`] and [`SPILLS_RCX_STACK`]
    /// below the guest's red zone): a fault inside must restore them from
    /// there.
    pub spills: u8,
    /// With the `_STACK` spills: how far the lookup slots are from the
    /// `rsp` of this position (the site's `rsp` will move by this much
    /// before the lookup's target reads them: a `ret` pops, a `call`
    /// pushes).
    pub stack_bias: i16,
    /// With [`SPILLS_SCRATCH`]: the number of the register (0 = `rax` …
    /// 15 = `r15`) whose guest value is in the scratch slot.
    pub scratch: u8,
    /// Guest xmm registers (bit n: `xmmn`) whose tangents dot mode's
    /// tangent cache holds in `xmm(16+n)`, newer than the shadow register
    /// file's: a signal or fault here writes them back first
    /// ([`TranslateOptions::tangent_cache`]).
    pub tangents: u16,
    /// Guest xmm registers (bit n: `xmmn`) the translation holds here as
    /// temporaries: their guest values are in the context's `held_xmm`
    /// slot n, the registers hold anything. A signal or fault here puts
    /// them back ([`TranslateOptions::tangent_cache`]).
    pub held: u16,
    /// On a boundary entry: the guest's status flags are dead before the
    /// instruction, so its inserted code may change them and still be
    /// abandoned and run again from [`Self::cache_off`] (the runtime
    /// delivers a signal that arrives in that code there when the code
    /// has changed nothing else the guest or the tool keeps).
    pub flags_dead: bool,
}

/// [`InsnMapEntry::spills`]: guest `rax` is in its spill slot.
pub const SPILLS_RAX: u8 = 1;
/// [`InsnMapEntry::spills`]: guest `rcx` is in its spill slot.
pub const SPILLS_RCX: u8 = 2;
/// [`InsnMapEntry::spills`]: guest `rdx` is in its spill slot.
pub const SPILLS_RDX: u8 = 4;
/// [`InsnMapEntry::spills`]: guest `rax` is at `[rsp + stack_bias +`
/// [`LOOKUP_SLOT_RAX`]`]`.
pub const SPILLS_RAX_STACK: u8 = 8;
/// [`InsnMapEntry::spills`]: guest `rcx` is at `[rsp + stack_bias +`
/// [`LOOKUP_SLOT_RCX`]`]`.
pub const SPILLS_RCX_STACK: u8 = 16;
/// [`InsnMapEntry::spills`]: the guest value of register
/// [`InsnMapEntry::scratch`] is in the scratch slot (it holds the absolute
/// address of a RIP-relative operand out of the cache's reach).
pub const SPILLS_SCRATCH: u8 = 32;
/// Where an indirect-branch lookup leaves guest `rax` for its target,
/// relative to the target's `rsp`: below the guest's red zone (128
/// bytes), which the System V ABI lets a signal handler overwrite at any
/// moment, so no guest keeps data there. A store and a load there are
/// forwarded at once; as `%gs:[disp]` (the thread context, no base
/// register) they took ~8 cycles on the Zen 4 machine, on the path of
/// every return's `rax` (decision 24).
pub const LOOKUP_SLOT_RAX: i32 = -160;
/// Where a lookup leaves guest `rcx`; see [`LOOKUP_SLOT_RAX`].
pub const LOOKUP_SLOT_RCX: i32 = -152;

/// A translated block, ready to be copied to the cache address it was made for.
#[derive(Debug)]
pub struct Translation {
    /// Machine code; it runs only at the cache address given to the translator.
    pub code: Vec<u8>,
    /// One entry per guest instruction, in order, plus a final entry for the
    /// block's fall-through exit (`guest_pc` = first address after the block).
    pub insn_map: Vec<InsnMapEntry>,
    /// Offsets of the exit records in `code`.
    pub exits: Vec<usize>,
    /// Offset where the block's 8-byte literals start (`code.len()` when it
    /// has none); everything from there on is data.
    pub literals_start: usize,
    /// Guest bytes covered: `[guest_pc, guest_pc + guest_len)`.
    pub guest_len: u64,
    /// Offset of the entry for direct links and the runtime; the code
    /// from [`Translation::lookup_off`] to it is the entry of lookup-table
    /// hits, which checks the target and restores the registers the
    /// lookup spilled.
    pub entry_off: u32,
    /// Offset of the entry of lookup-table hits ([`LOOKUP_OFF`]: the
    /// translation starts with the complement of its guest address, which
    /// that entry checks the target against).
    pub lookup_off: u32,
    /// Number of guest instructions translated.
    pub guest_insns: usize,
    /// How many of them have no entry in the semantics table.
    pub no_semantics: usize,
    /// The tangent code uses dot mode's tangent cache
    /// ([`TranslateOptions::tangent_cache`]).
    pub tangent_cache_used: bool,
}

/// Why a block could not be translated.
#[derive(Debug, PartialEq, Eq)]
pub enum TranslateError {
    /// No guest byte could be read at the start address.
    Unreadable(u64),
    /// A RIP-relative operand at this guest address is out of reach from
    /// the cache address; the runtime must place the block closer.
    OutOfReach(u64),
}

/// Per-translation settings that do not come from the context layout.
#[derive(Clone, Copy, Debug)]
pub struct TranslateOptions {
    /// End blocks after this many guest instructions (≤ [`MAX_BLOCK_INSNS`]).
    pub max_insns: usize,
    /// Count indirect-branch hits in the context (for statistics; costs
    /// three instructions per hit).
    pub count_ibl_hits: bool,
    /// The AD mode's instrumentation of each instruction (`None` in null
    /// mode), given whether the flags are dead before it: see
    /// [`crate::instrument::Plan`].
    pub instrument: Option<fn(&Instruction, bool) -> crate::instrument::Plan>,
    /// Start the block with an [`ExitKind::Verify`] exit: its guest code is
    /// in writable memory and may change without `mprotect`.
    pub verify_entry: bool,
    /// Start the block with an [`ExitKind::Probe`] exit: the tool looks at
    /// the state with which a function it watches is entered.
    pub probe_entry: bool,
    /// The CPU has AVX-512 state: inserted VEX code, which zeroes vector
    /// registers above 256 bits, saves whole zmm registers.
    pub zmm_state: bool,
    /// Guest addresses a block must not run into (a debugger's
    /// breakpoints): a block ends before such an address unless it starts
    /// there, so that reaching it always goes through the runtime.
    pub stop_before: Option<fn(u64) -> bool>,
    /// Dot mode's tangent cache (decision 46, `translate::tangent_cache`):
    /// keep the tangents of `xmm0`–`xmm12` in `xmm16`–`xmm28` within a
    /// block, with `xmm29`–`xmm31` and `k1`–`k3` as temporaries. Only
    /// where the CPU has AVX-512 state ([`Self::zmm_state`]), and only in
    /// blocks of legacy SSE code (no VEX or EVEX instruction, no mask
    /// register named), which no AVX-512 code shares a function with.
    pub tangent_cache: bool,
    /// Dot mode without the tangent cache (CPUs without AVX-512): inline
    /// tangent code may hold guest xmm registers as temporaries across
    /// instructions, in blocks of legacy SSE code (decision 54,
    /// `translate::held`).
    pub hold_registers: bool,
}

impl Default for TranslateOptions {
    fn default() -> Self {
        TranslateOptions {
            max_insns: MAX_BLOCK_INSNS,
            count_ibl_hits: false,
            instrument: None,
            verify_entry: false,
            probe_entry: false,
            zmm_state: false,
            stop_before: None,
            tangent_cache: false,
            hold_registers: false,
        }
    }
}

/// Translates the guest block starting at `guest_pc` for execution at
/// `cache_pc`. `read(addr, buf)` copies guest code bytes and returns how many
/// could be read (fewer at the end of a mapping).
pub fn translate_block(
    read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    guest_pc: u64,
    cache_pc: u64,
    layout: &ContextLayout,
    opts: &TranslateOptions,
) -> Result<Translation, TranslateError> {
    let mut window = vec![0u8; FIRST_WINDOW];
    loop {
        let want = window.len();
        let avail = read(guest_pc, &mut window);
        if avail == 0 {
            return Err(TranslateError::Unreadable(guest_pc));
        }
        window.truncate(avail);
        // The window is all there is when the mapping ended inside it.
        let whole = avail < want || want == FETCH_WINDOW;
        if let Some(t) = translate_window(&window, whole, guest_pc, cache_pc, layout, opts)? {
            return Ok(t);
        }
        window = vec![0u8; FETCH_WINDOW];
    }
}

/// Translates the block at `guest_pc` from the guest bytes in `window`;
/// `None` when the block reaches the end of a window that is not `whole`.
fn translate_window(
    window: &[u8],
    whole: bool,
    guest_pc: u64,
    cache_pc: u64,
    layout: &ContextLayout,
    opts: &TranslateOptions,
) -> Result<Option<Translation>, TranslateError> {
    let window_end = guest_pc + window.len() as u64;
    let mut t = Translator::new(cache_pc, layout);
    t.count_ibl_hits = opts.count_ibl_hits;
    t.zmm_state = opts.zmm_state;
    t.entry_prologue(guest_pc);
    t.instrument = opts.instrument;
    if opts.instrument.is_some() {
        let run = straight_line(window, guest_pc, opts.max_insns, opts.stop_before);
        t.flags_dead = crate::instrument::flags_dead_before(&run);
        let crate::instrument::RunRegisters { dead, used, gprs } =
            crate::instrument::vectors_dead_before(&run);
        t.vectors_dead = dead;
        t.gprs_named = gprs;
        let legacy = !run.iter().any(tangent_cache::not_legacy_code);
        t.tangent_cache = opts.tangent_cache && opts.zmm_state && legacy;
        t.hold = opts.hold_registers && !t.tangent_cache && legacy;
        if t.hold {
            t.vectors_named = held::vectors_named(&run, &used);
        }
    }
    // Code that may change under us is compared with its translation-time
    // bytes at every entry: inline, at the end of the translation, and
    // only a difference enters the runtime (the `Verify` exit, which
    // translates the block again).
    let verify = opts.verify_entry.then(|| {
        t.map(guest_pc, 0);
        let to_check = t.e.jmp32_placeholder();
        let stub = t.e.offset();
        t.stub_and_record(
            guest_pc,
            ExitKind::Verify,
            core::mem::size_of::<ExitRecord>() as i32,
        );
        (to_check, stub, t.e.offset())
    });
    if opts.probe_entry {
        // The tool looks first; it changes nothing, so the way back is the
        // boundary of the function's first instruction, mapped below.
        t.map(guest_pc, 0);
        t.stub_and_record(
            guest_pc,
            ExitKind::Probe,
            core::mem::size_of::<ExitRecord>() as i32,
        );
    }
    let mut decoder = Decoder::with_ip(64, window, guest_pc, DecoderOptions::NONE);
    let mut insn = Instruction::default();
    let mut count = 0;
    let mut no_semantics = 0;
    let mut end_pc = guest_pc;
    let mut ended = false;
    while decoder.can_decode() && count < opts.max_insns.min(MAX_BLOCK_INSNS) {
        if !whole && decoder.ip() + WINDOW_MARGIN > window_end {
            return Ok(None);
        }
        decoder.decode_out(&mut insn);
        if count > 0 && opts.stop_before.is_some_and(|stop| stop(insn.ip())) {
            // The block goes on there through the runtime.
            end_pc = insn.ip();
            break;
        }
        if insn.is_invalid() {
            // Undecodable bytes (or an instruction cut off by the end of
            // the mapping): stop before them; if they start the block, run
            // `ud2` in their place so the guest gets its SIGILL at that pc.
            if count == 0 {
                t.map(insn.ip(), 0);
                t.e.bytes(&[0x0f, 0x0b]);
                end_pc = guest_pc + 1;
                ended = true;
                count = 1;
            }
            break;
        }
        t.index = count;
        count += 1;
        no_semantics += usize::from(crate::semantics::semantics(insn.code()).is_none());
        end_pc = insn.next_ip();
        let offset = (insn.ip() - guest_pc) as usize;
        if let Some(len) = client_request_at(&window[offset..]) {
            // The runtime answers the request and comes back right after
            // the exit record, where the block goes on after the sequence.
            t.drop_tangents();
            t.release_held(u16::MAX);
            t.map(insn.ip(), 0);
            end_pc = insn.ip() + len as u64;
            t.stub_and_record(
                end_pc,
                ExitKind::ClientRequest,
                core::mem::size_of::<ExitRecord>() as i32,
            );
            while decoder.can_decode() && decoder.ip() < end_pc {
                decoder.decode_out(&mut insn);
                count += 1;
            }
            continue;
        }
        let mark = t.mark();
        let flow = match t.translate_insn(
            &insn,
            &window[(insn.ip() - guest_pc) as usize..][..insn.len()],
        ) {
            // Past a side exit the path may never run (data after a
            // conditional branch): end the block before the instruction
            // rather than fail the whole translation.
            Err(TranslateError::OutOfReach(_)) if t.side_exits > 0 => {
                t.rollback(mark);
                count -= 1;
                end_pc = insn.ip();
                break;
            }
            r => r?,
        };
        match flow {
            Flow::Continue => {}
            Flow::EndFallingThrough => break,
            Flow::Ended => {
                ended = true;
                break;
            }
        }
    }
    if !ended {
        t.flush_tangents();
        t.release_held(u16::MAX);
        t.map(end_pc, 0);
        let field = t.e.jmp_rel32_patchable();
        t.pending.push((field, end_pc, ExitKind::Branch));
    }
    t.rare_tangent_paths(end_pc)?;
    if let Some((to_check, stub, body)) = verify {
        let here = t.e.offset();
        t.e.bind_rel32(to_check, here);
        let bytes = &window[..(end_pc - guest_pc) as usize];
        t.code_check(bytes, guest_pc, stub, body)?;
    }
    let literals_start = t.finish_exits();
    t.split_boundaries();
    Ok(Some(Translation {
        literals_start,
        code: t.e.code,
        insn_map: t.insn_map,
        exits: t.exits,
        entry_off: t.entry_off,
        lookup_off: LOOKUP_OFF,
        guest_len: end_pc - guest_pc,
        guest_insns: count,
        no_semantics,
        tangent_cache_used: t.tangent_cache_used,
    }))
}

/// Translates the entry of a guest function that the runtime answers
/// natively: the block calls `native` (runtime code with the function's
/// calling convention, run on the guest stack) and then returns to
/// the guest's caller the way the function's own `ret` would. Signals
/// queued while `native` ran are delivered before the caller continues.
/// `regs` = (register number, value) are loaded first: registers the
/// function takes no argument in, so dead at its entry.
pub fn translate_native_call(
    guest_pc: u64,
    cache_pc: u64,
    layout: &ContextLayout,
    native: u64,
    regs: &[(u8, u64)],
) -> Translation {
    let mut t = Translator::new(cache_pc, layout);
    t.entry_prologue(guest_pc);
    t.map(guest_pc, 0);
    // The function was entered with rsp = 8 (mod 16); keep the ABI's
    // alignment for the native call.
    t.e.lea_rsp(-8);
    for &(reg, v) in regs {
        t.e.mov_imm64(Gpr(reg), v);
    }
    let field = t.e.call_rip_literal_placeholder();
    t.literals.push((field, native));
    t.e.lea_rsp(8);
    // From here on the function has returned but its `ret` has not run:
    // not a guest-instruction boundary (a signal steps on to the caller).
    t.insn_map.push(InsnMapEntry {
        cache_off: t.e.offset() as u32,
        guest_pc,
        boundary: false,
        spills: 0,
        stack_bias: 0,
        scratch: 0,
        tangents: 0,
        held: 0,
        flags_dead: false,
    });
    let l = *layout;
    let signals = t.e.jne_if_gs32_nonzero_placeholder(l.pending_signals);
    t.spill_rcx_for_lookup(guest_pc, 8);
    t.e.pop(Gpr::RCX);
    t.ibl_jump();
    // A signal is queued: return through the runtime, which delivers it.
    t.e.bind_rel8(signals);
    t.inside(guest_pc, 0, 0);
    t.spill_rcx_for_lookup(guest_pc, 8);
    t.e.pop(Gpr::RCX);
    t.e.store_rsp(LOOKUP_SLOT_RAX, Gpr::RAX);
    t.e.jmp_gs(l.enter_ibl_miss);
    let literals_start = t.finish_exits();
    Translation {
        literals_start,
        code: t.e.code,
        insn_map: t.insn_map,
        exits: t.exits,
        entry_off: t.entry_off,
        lookup_off: LOOKUP_OFF,
        guest_len: 1,
        guest_insns: 1,
        no_semantics: 0,
        tangent_cache_used: false,
    }
}

/// What follows a translated guest instruction.
enum Flow {
    /// Keep decoding.
    Continue,
    /// End the block with a jump to the next guest instruction.
    EndFallingThrough,
    /// The instruction's translation already ends the block.
    Ended,
}

struct Translator<'a> {
    e: Emitter,
    layout: &'a ContextLayout,
    insn_map: Vec<InsnMapEntry>,
    exits: Vec<usize>,
    /// RIP-relative fields waiting for their 8-byte literal: (field, value).
    literals: Vec<(usize, u64)>,
    /// Branch fields waiting for their exit stub: (field offset, target, kind).
    pending: Vec<(usize, u64, ExitKind)>,
    encoder: Encoder,
    count_ibl_hits: bool,
    zmm_state: bool,
    instrument: Option<fn(&Instruction, bool) -> crate::instrument::Plan>,
    /// Per instruction of the block (in order): flags dead before it.
    flags_dead: Vec<bool>,
    /// Per instruction: vector registers dead before it (see
    /// [`crate::instrument::vectors_dead_before`]).
    vectors_dead: Vec<(u16, u16)>,
    /// Per instruction: the general registers it names or uses (bit n:
    /// the 64-bit register numbered n).
    gprs_named: Vec<u16>,
    /// Where the copies of guest instructions start and end: neither the
    /// copy nor code after it is a boundary's ([`Self::split_boundaries`]).
    guest_copies: Vec<usize>,
    /// Index of the instruction being translated.
    index: usize,
    /// See [`Translation::entry_off`].
    entry_off: u32,
    /// The branch of the lookup entry's check that leaves for the miss
    /// entry, bound at the end of the translation.
    entry_miss: Option<usize>,
    /// Conditional branches passed so far (their fall-through translated
    /// in line).
    side_exits: usize,
    /// The tangent cache is in use in this block
    /// ([`TranslateOptions::tangent_cache`]).
    tangent_cache: bool,
    /// Guest xmm registers whose tangents the cache holds here (bit n).
    cached: u16,
    /// Of those, the ones newer than the shadow register file's.
    dirty: u16,
    /// The cache's rare paths, emitted after the block's code.
    rare_paths: Vec<tangent_cache::RarePath>,
    /// The cache emitted code in this block.
    tangent_cache_used: bool,
    /// The cache's temporary `xmm31` holds zero here (its activity tests
    /// compare against it; the code that uses it otherwise clears this).
    t2_zero: bool,
    /// The lanes of the instruction being recorded inline whose
    /// all-passive path [`Self::blocks_epilogue`] emits out of line.
    passive_lanes: Vec<PassiveLane>,
    /// Inline tangent code may hold guest xmm registers as temporaries
    /// across instructions in this block (`translate::held`).
    hold: bool,
    /// The guest xmm registers held here (bit n), their values in the
    /// context's `held_xmm` slots.
    held: u16,
    /// Per instruction of the block: the xmm registers it names or uses
    /// (bit n), and those that instructions after it do.
    vectors_named: Vec<(u16, u16)>,
    /// Per held register h: which guest register's tangent it holds too
    /// (`translate::held`'s tangent entries; 0: none).
    tangent_in: [u8; 16],
}

/// An inline-recorded lane's path for all-passive operands: the `je` at
/// `field` to it, the lane's shadow to clear (`width` bytes at `lane_sh`),
/// the code to go back to.
struct PassiveLane {
    field: usize,
    lane_sh: u32,
    width: u8,
    back: usize,
}

/// How far a [`Translator`] had got, to undo one instruction.
#[derive(Clone, Copy)]
struct Mark {
    code: usize,
    insn_map: usize,
    exits: usize,
    literals: usize,
    pending: usize,
    cached: u16,
    dirty: u16,
    held: u16,
    tangent_in: [u8; 16],
    rare_paths: usize,
    t2_zero: bool,
    targets: usize,
    guest_copies: usize,
}

impl<'a> Translator<'a> {
    /// An empty translation at `cache_pc`, without instrumentation.
    fn new(cache_pc: u64, layout: &'a ContextLayout) -> Translator<'a> {
        Translator {
            e: Emitter::new(cache_pc),
            layout,
            // Sized for typical blocks, so that they grow rarely.
            insn_map: Vec::with_capacity(32),
            exits: Vec::with_capacity(8),
            literals: Vec::with_capacity(8),
            pending: Vec::with_capacity(8),
            encoder: Encoder::new(64),
            count_ibl_hits: false,
            zmm_state: false,
            instrument: None,
            flags_dead: Vec::new(),
            vectors_dead: Vec::new(),
            gprs_named: Vec::new(),
            guest_copies: Vec::new(),
            index: 0,
            entry_off: 0,
            entry_miss: None,
            side_exits: 0,
            tangent_cache: false,
            cached: 0,
            dirty: 0,
            rare_paths: Vec::new(),
            tangent_cache_used: false,
            t2_zero: false,
            passive_lanes: Vec::new(),
            hold: false,
            held: 0,
            vectors_named: Vec::new(),
            tangent_in: [0; 16],
        }
    }

    fn mark(&self) -> Mark {
        Mark {
            code: self.e.code.len(),
            insn_map: self.insn_map.len(),
            exits: self.exits.len(),
            literals: self.literals.len(),
            pending: self.pending.len(),
            cached: self.cached,
            dirty: self.dirty,
            held: self.held,
            tangent_in: self.tangent_in,
            rare_paths: self.rare_paths.len(),
            t2_zero: self.t2_zero,
            targets: self.e.targets.len(),
            guest_copies: self.guest_copies.len(),
        }
    }

    fn rollback(&mut self, m: Mark) {
        self.e.code.truncate(m.code);
        self.insn_map.truncate(m.insn_map);
        self.exits.truncate(m.exits);
        self.literals.truncate(m.literals);
        self.pending.truncate(m.pending);
        self.cached = m.cached;
        self.dirty = m.dirty;
        self.held = m.held;
        self.tangent_in = m.tangent_in;
        self.rare_paths.truncate(m.rare_paths);
        self.t2_zero = m.t2_zero;
        self.e.targets.truncate(m.targets);
        self.guest_copies.truncate(m.guest_copies);
        // An instruction's passive lanes are emitted with it.
        self.passive_lanes.clear();
    }

    fn map(&mut self, guest_pc: u64, spills: u8) {
        self.insn_map.push(InsnMapEntry {
            cache_off: self.e.offset() as u32,
            guest_pc,
            boundary: true,
            spills,
            stack_bias: 0,
            scratch: 0,
            tangents: self.dirty,
            held: self.held,
            flags_dead: false,
        });
    }

    /// A pop's shadow: the 8 bytes' at `[from]` into the shadow register
    /// file at `dst`, and with `clear` that register's shadow zeroed
    /// (`leave`'s `rsp`). Clobbers the flags.
    fn pop_shadow(&mut self, insn: &Instruction, from: Register, dst: u32, clear: Option<u32>) {
        let l = *self.layout;
        self.spilled(insn, SPILLS_RAX);
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.asm(Instruction::with2(Code::Mov_r64_rm64, Register::RAX, from));
        self.e.shadow_address_of_rax(l.shadow_mask);
        self.e.load_rax_from_rax(8);
        self.e.store_gs(l.shadow_regs + dst, Gpr::RAX);
        if let Some(c) = clear {
            self.e.zero_gs(l.shadow_regs + c, 8);
        }
        self.e.load_gs(Gpr::RAX, l.spill_rax);
    }

    /// Ends every boundary entry's range where code may be reached other
    /// than from its start — at a bound branch's target — and at the start
    /// and end of a guest instruction's copy, with an inside entry (the
    /// same spills and tangents). So a boundary's range is only inserted
    /// code run in order from the boundary, before the guest instruction,
    /// which [`crate::restart`] relies on: a signal in that code may be
    /// delivered at the boundary when the code can run again; the guest
    /// instruction never can.
    fn split_boundaries(&mut self) {
        let mut at: Vec<usize> = self
            .e
            .targets
            .iter()
            .chain(&self.guest_copies)
            .copied()
            .collect();
        at.sort_unstable();
        at.dedup();
        let mut map = Vec::with_capacity(self.insn_map.len() + at.len());
        let mut cuts = at.into_iter().peekable();
        let entries = core::mem::take(&mut self.insn_map);
        for (i, &e) in entries.iter().enumerate() {
            map.push(e);
            let end = entries
                .get(i + 1)
                .map_or(usize::MAX, |n| n.cache_off as usize);
            while let Some(&c) = cuts.peek() {
                if c >= end {
                    break;
                }
                cuts.next();
                let last = *map.last().expect("pushed above");
                if c > e.cache_off as usize && last.boundary {
                    map.push(InsnMapEntry {
                        cache_off: c as u32,
                        boundary: false,
                        flags_dead: false,
                        ..last
                    });
                }
            }
        }
        self.insn_map = map;
    }

    /// Marks the code from here on as inside `guest_pc`'s translation,
    /// with guest registers in the slots `spills` names.
    fn inside(&mut self, guest_pc: u64, spills: u8, stack_bias: i16) {
        self.insn_map.push(InsnMapEntry {
            cache_off: self.e.offset() as u32,
            guest_pc,
            boundary: false,
            spills,
            stack_bias,
            scratch: 0,
            tangents: self.dirty,
            held: self.held,
            flags_dead: false,
        });
    }

    /// Spills guest `rcx` for the lookup of the indirect branch at
    /// `guest_pc`, whose `rsp` will have moved by `bias` when its target
    /// reloads it, and maps the code after the store as inside, with
    /// `rcx` there.
    fn spill_rcx_for_lookup(&mut self, guest_pc: u64, bias: i32) {
        self.e.store_rsp(LOOKUP_SLOT_RCX + bias, Gpr::RCX);
        self.inside(guest_pc, SPILLS_RCX_STACK, bias as i16);
    }

    /// Pushes the guest return address `ret_to` with one 8-byte store, so
    /// the callee's `ret` load is store-forwarded.
    fn push_return_address(&mut self, ret_to: u64) {
        let lit = self.e.push_rip_literal_placeholder();
        self.literals.push((lit, ret_to));
    }

    /// Emits the translation of one guest instruction; returns whether it
    /// ends the block.
    fn translate_insn(&mut self, insn: &Instruction, bytes: &[u8]) -> Result<Flow, TranslateError> {
        let next = insn.next_ip();
        if insn.flow_control() != FlowControl::Next
            || matches!(
                insn.code(),
                Code::Syscall | Code::Cpuid | Code::Wrgsbase_r32 | Code::Wrgsbase_r64
            )
        {
            // Leaving the block, or the runtime: the file must be current.
            self.flush_tangents();
        }
        self.release_held_for_insn();
        match insn.code() {
            Code::Syscall => {
                self.map(insn.ip(), 0);
                self.exit_stub(next, ExitKind::Syscall, None);
                return Ok(Flow::Ended);
            }
            Code::Cpuid => {
                self.map(insn.ip(), 0);
                self.exit_stub(next, ExitKind::Cpuid, None);
                return Ok(Flow::Ended);
            }
            Code::Wrgsbase_r32 | Code::Wrgsbase_r64 => {
                // %gs is the runtime's (its base is the thread context):
                // the guest cannot have it.
                self.map(insn.ip(), 0);
                self.exit_stub(insn.ip(), ExitKind::Unsupported, None);
                return Ok(Flow::Ended);
            }
            Code::Xbegin_rel16 | Code::Xbegin_rel32 => {
                // Transactions are never started: report an immediate abort
                // (status 0: no retry hint) and continue at the fallback.
                self.map(insn.ip(), 0);
                self.e.mov_eax_imm(0);
                let field = self.e.jmp_rel32_patchable();
                self.pending
                    .push((field, insn.near_branch_target(), ExitKind::Branch));
                return Ok(Flow::Ended);
            }
            _ => {}
        }
        match insn.flow_control() {
            FlowControl::Next | FlowControl::Exception | FlowControl::XbeginXabortXend => {
                self.map(insn.ip(), 0);
                let flags_dead = self.flags_dead.get(self.index).copied().unwrap_or(false);
                if let Some(e) = self.insn_map.last_mut() {
                    e.flags_dead = flags_dead;
                }
                if let Some(plan) = self.instrument.map(|plan| plan(insn, flags_dead)) {
                    self.instrument_inline(insn, plan)?;
                }
                if matches!(insn.code(), Code::Rdgsbase_r32 | Code::Rdgsbase_r64) {
                    // The guest's %gs base is 0, as the kernel starts every
                    // process (the runtime refuses to change it); the
                    // real one is the thread context's.
                    let r32 = insn.op0_register().full_register32();
                    self.asm(Instruction::with2(Code::Mov_r32_imm32, r32, 0u32));
                } else {
                    self.guest_copies.push(self.e.offset());
                    self.copy(insn, bytes)?;
                    self.guest_copies.push(self.e.offset());
                }
                // A trapping instruction (ud2, int3, hlt) ends the block, so
                // the pc the kernel reports after it is a mapped boundary.
                Ok(if insn.flow_control() == FlowControl::Exception {
                    Flow::EndFallingThrough
                } else {
                    Flow::Continue
                })
            }
            FlowControl::UnconditionalBranch if is_near_direct(insn) => {
                self.map(insn.ip(), 0);
                let field = self.e.jmp_rel32_patchable();
                self.pending
                    .push((field, insn.near_branch_target(), ExitKind::Branch));
                Ok(Flow::Ended)
            }
            FlowControl::ConditionalBranch if insn.condition_code() != ConditionCode::None => {
                self.map(insn.ip(), 0);
                let cc = insn.condition_code() as u8 - 1;
                let taken = self.e.jcc_rel32_patchable(cc);
                self.pending
                    .push((taken, insn.near_branch_target(), ExitKind::Branch));
                // The fall-through path goes on in this translation.
                self.side_exits += 1;
                Ok(Flow::Continue)
            }
            FlowControl::ConditionalBranch => {
                // loop/loope/loopne/jrcxz/jecxz: rel8 only; branch over the
                // fall-through jump to a taken jump.
                self.map(insn.ip(), 0);
                self.e.bytes(bytes);
                let rel8_at = self.e.offset() - 1;
                self.map(next, 0);
                let fall = self.e.jmp_rel32_patchable();
                self.pending.push((fall, next, ExitKind::Branch));
                self.e.bind_rel8(rel8_at);
                let taken = self.e.jmp_rel32_patchable();
                self.pending
                    .push((taken, insn.near_branch_target(), ExitKind::Branch));
                Ok(Flow::Ended)
            }
            FlowControl::Call if is_near_direct(insn) => {
                self.map(insn.ip(), 0);
                self.push_return_address(next);
                let field = self.e.jmp_rel32_patchable();
                self.pending
                    .push((field, insn.near_branch_target(), ExitKind::Branch));
                Ok(Flow::Ended)
            }
            FlowControl::IndirectCall | FlowControl::IndirectBranch if is_near_indirect(insn) => {
                let call = insn.flow_control() == FlowControl::IndirectCall;
                self.map(insn.ip(), 0);
                self.spill_rcx_for_lookup(insn.ip(), if call { -8 } else { 0 });
                self.load_target_into_rcx(insn)?;
                if call {
                    self.push_return_address(next);
                }
                self.ibl_jump();
                Ok(Flow::Ended)
            }
            FlowControl::Return if matches!(insn.code(), Code::Retnq | Code::Retnq_imm16) => {
                let imm = if insn.code() == Code::Retnq_imm16 {
                    i32::from(insn.immediate16())
                } else {
                    0
                };
                self.map(insn.ip(), 0);
                self.spill_rcx_for_lookup(insn.ip(), 8 + imm);
                self.e.pop(Gpr::RCX);
                if insn.code() == Code::Retnq_imm16 {
                    self.e.lea_rsp(imm);
                }
                // A jump rather than a `ret` to a continuation: measured
                // faster (docs/decisions.md).
                self.ibl_jump();
                Ok(Flow::Ended)
            }
            FlowControl::Interrupt if insn.code() == Code::Int3 => {
                // Runs as it is and ends the block, like `ud2`: the kernel's
                // SIGTRAP reports the pc after it, a mapped boundary.
                self.map(insn.ip(), 0);
                self.copy(insn, bytes)?;
                Ok(Flow::EndFallingThrough)
            }
            _ => {
                // Far transfers, `int n`, `sysenter`, `iret`, 16/32-bit
                // operand-size branches: never silently skipped.
                self.map(insn.ip(), 0);
                self.exit_stub(insn.ip(), ExitKind::Unsupported, None);
                Ok(Flow::Ended)
            }
        }
    }

    /// Emits the record-mode code before a guest instruction.
    fn instrument_inline(&mut self, insn: &Instruction, plan: Plan) -> Result<(), TranslateError> {
        let l = *self.layout;
        let sr = l.shadow_regs;
        if self.hold {
            self.tangents_before(&plan);
        }
        let plan = if self.tangent_cache {
            match self.cached_plan(insn, plan)? {
                Some(plan) => plan,
                None => return Ok(()),
            }
        } else {
            plan
        };
        match plan {
            Plan::Nothing => {}
            Plan::ClearRegisters(clears) => {
                for (off, len) in clears {
                    self.e.zero_gs(sr + off, len);
                }
            }
            Plan::CopyRegister { dst, src, narrow } => {
                self.spilled(insn, SPILLS_RAX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                if narrow {
                    self.e.load_gs32_eax(sr + src);
                } else {
                    self.e.load_gs(Gpr::RAX, sr + src);
                }
                self.e.store_gs(sr + dst, Gpr::RAX);
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            Plan::LoadShadow { dst, size, extend } => {
                self.shadow_address_in_spilled_rax(insn)?;
                self.e.load_rax_from_rax(size);
                self.e
                    .store_gs_rax_sized(sr + dst, if extend { 8 } else { size });
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            Plan::Push { src } => {
                self.spilled(insn, SPILLS_RAX | SPILLS_RDX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                self.e.store_gs(l.spill_rdx, Gpr::RDX);
                self.asm(Instruction::with2(
                    Code::Lea_r64_m,
                    Register::RAX,
                    MemoryOperand::with_base_displ(Register::RSP, -8),
                ));
                self.e.shadow_address_of_rax(l.shadow_mask);
                match src {
                    Some(off) => {
                        self.e.load_gs(Gpr::RDX, sr + off);
                        self.e.store_rdx_to_rax(8);
                    }
                    None => self.e.zero_at_rax(8),
                }
                self.e.load_gs(Gpr::RDX, l.spill_rdx);
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            Plan::Pop { dst } => self.pop_shadow(insn, Register::RSP, dst, None),
            Plan::Leave { rbp, rsp } => self.pop_shadow(insn, Register::RBP, rbp, Some(rsp)),
            Plan::ExtendRegister { dst, src, size } => {
                self.spilled(insn, SPILLS_RAX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                self.e.load_gs_zx_rax(sr + src, size);
                self.e.store_gs(sr + dst, Gpr::RAX);
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            Plan::StoreShadow { src, size } => {
                self.spilled(insn, SPILLS_RAX | SPILLS_RDX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                self.e.store_gs(l.spill_rdx, Gpr::RDX);
                self.shadow_address_in_rax(insn)?;
                self.e.load_gs(Gpr::RDX, sr + src);
                self.e.store_rdx_to_rax(size);
                self.e.load_gs(Gpr::RDX, l.spill_rdx);
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            Plan::ZeroShadow { size } => {
                self.shadow_address_in_spilled_rax(insn)?;
                self.e.zero_at_rax(size);
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            Plan::VectorMove {
                src,
                dst,
                len,
                zero,
            } => self.vector_move(insn, src, dst, len, zero)?,
            Plan::MaskedMove {
                src,
                dst,
                unit_bits,
            } => {
                let split = (unit_bits != 0).then(|| self.whole_units_or_runtime(insn, unit_bits));
                self.masked_move(insn, src, dst)?;
                if let Some(split) = split {
                    // A mask that splits 4-byte units: nothing to do when
                    // every shadow byte involved is zero (text and bytes
                    // copied with `memcpy`), else the runtime.
                    let done = self.e.jmp32_placeholder();
                    let here = self.e.offset();
                    self.e.bind_rel32(split, here);
                    // The guest's registers again: the memory operand's
                    // address may use them.
                    self.e.load_gs(Gpr::RDX, l.spill_rdx);
                    self.e.load_gs(Gpr::RAX, l.spill_rax);
                    let active = self.masked_move_shadows_nonzero(insn, src, dst)?;
                    self.e.load_gs(Gpr::RAX, l.spill_rax);
                    let passive = self.e.jmp32_placeholder();
                    let here = self.e.offset();
                    for field in active {
                        self.e.bind_rel32(field, here);
                    }
                    self.e.load_gs(Gpr::RAX, l.spill_rax);
                    self.instrument_call(insn);
                    let here = self.e.offset();
                    self.e.bind_rel32(done, here);
                    self.e.bind_rel32(passive, here);
                }
            }
            Plan::ConvertIndex {
                src,
                src1,
                dst,
                low,
            } => self.convert_index(insn, src, src1, dst, low)?,
            Plan::Arithmetic(a) => self.arithmetic(insn, a)?,
            Plan::DotArithmetic(a) => self.dot_arithmetic(insn, a)?,
            Plan::ShadowShuffle => self.shadow_shuffle(insn)?,
            Plan::AllPassive {
                checks,
                clears,
                memory,
                save_flags,
            } => {
                if save_flags {
                    self.save_flags();
                }
                let mut to_runtime = Vec::new();
                for off in checks {
                    to_runtime.push(self.e.jne32_if_gs64_nonzero_placeholder(sr + off));
                }
                let mut to_runtime_rax = Vec::new();
                if let Some(m) = memory {
                    self.shadow_address_in_spilled_rax(insn)?;
                    let piece = m.bytes.min(8);
                    if m.read {
                        for k in (0..m.bytes).step_by(8) {
                            self.e.cmp_at_rax_zero(k, piece);
                            to_runtime_rax.push(self.e.jne32_placeholder());
                        }
                    }
                    if m.written {
                        for k in (0..m.bytes).step_by(8) {
                            self.e.zero_at_rax_disp(k, piece);
                        }
                    }
                    self.e.load_gs(Gpr::RAX, l.spill_rax);
                }
                for (off, len) in clears {
                    self.e.zero_gs(sr + off, len);
                }
                if save_flags {
                    self.restore_flags();
                }
                let done = self.e.jmp32_placeholder();
                if !to_runtime_rax.is_empty() {
                    let here = self.e.offset();
                    for field in to_runtime_rax {
                        self.e.bind_rel32(field, here);
                    }
                    self.e.load_gs(Gpr::RAX, l.spill_rax);
                }
                let slow = self.e.offset();
                for field in to_runtime {
                    self.e.bind_rel32(field, slow);
                }
                if save_flags {
                    self.restore_flags();
                }
                self.instrument_call(insn);
                let here = self.e.offset();
                self.e.bind_rel32(done, here);
            }
            Plan::SaveFlags(plan) => {
                self.save_flags();
                self.instrument_inline(insn, *plan)?;
                self.restore_flags();
            }
            Plan::Runtime => self.instrument_call(insn),
        }
        Ok(())
    }

    /// `rax` = the bits of double lane `lane` of vector register `reg`
    /// (`side` Register) or of the memory operand whose address is in
    /// `spill_tmp` (`side` Memory). Clobbers `rax` and `lane_tmp`.
    fn lane_value_to_rax(&mut self, side: MoveSide, reg: Register, lane: u32, vex: bool) {
        use iced_x86::Code::*;
        let l = *self.layout;
        let gs = gs_operand;
        if side == MoveSide::Memory {
            self.asm(Instruction::with2(
                Mov_r64_rm64,
                Register::RAX,
                gs(l.spill_tmp),
            ));
            self.asm(Instruction::with2(
                Mov_r64_rm64,
                Register::RAX,
                MemoryOperand::with_base_displ(Register::RAX, i64::from(8 * lane)),
            ));
            return;
        }
        let xmm = Register::XMM0 + reg.number() as u32;
        match lane {
            0 => {
                let code = if vex {
                    VEX_Vmovsd_m64_xmm
                } else {
                    Movsd_xmmm64_xmm
                };
                self.asm(Instruction::with2(code, gs(l.lane_tmp), xmm));
            }
            1 => {
                let code = if vex {
                    VEX_Vmovhpd_m64_xmm
                } else {
                    Movhpd_m64_xmm
                };
                self.asm(Instruction::with2(code, gs(l.lane_tmp), xmm));
            }
            _ => {
                let ymm = Register::YMM0 + reg.number() as u32;
                self.asm(Instruction::with3(
                    VEX_Vextractf128_xmmm128_ymm_imm8,
                    gs(l.lane_tmp),
                    ymm,
                    1u32,
                ));
            }
        }
        let disp = if lane >= 2 { 8 * (lane - 2) } else { 0 };
        self.asm(Instruction::with2(
            Mov_r64_rm64,
            Register::RAX,
            gs(l.lane_tmp + disp),
        ));
    }

    /// Given a double's bits in `rax`: a `jbe rel32` (returned, to be bound
    /// to the runtime path) taken when its magnitude is in [2^42, 2^54),
    /// the binades of the shifters of rounding tricks (the runtime
    /// remembers a sum with a shifter and gives the subtraction that
    /// undoes it derivative 0: both halves must reach it, `record::apply::
    /// shifter_addend` and `undoes_shift`). Clobbers `rax` and the flags.
    fn rounding_constant_check(&mut self) -> usize {
        self.shifter_binade_compare(true);
        self.e.jcc_rel32_placeholder(0x6) // jbe
    }

    /// Given a double's bits in `rax` (`double`) or a float's in `eax`:
    /// compares its biased exponent less the lowest shifter binade's
    /// (2^42, 2^13) with 11, so that `jbe` is taken in the shifters'
    /// binades ([`Self::rounding_constant_check`],
    /// [`Self::float_rounding_constant_check`]). Clobbers `rax` and the
    /// flags.
    pub(super) fn shifter_binade_compare(&mut self, double: bool) {
        use iced_x86::Code::*;
        use Register::*;
        if double {
            self.asm(Instruction::with2(Shr_rm64_imm8, RAX, 52u32));
            self.asm(Instruction::with2(And_rm32_imm32, EAX, 0x7ffu32));
            self.asm(Instruction::with2(Sub_rm32_imm32, EAX, 1065u32));
        } else {
            self.asm(Instruction::with2(Shr_rm32_imm8, EAX, 23u32));
            self.asm(Instruction::with2(And_rm32_imm32, EAX, 0xffu32));
            self.asm(Instruction::with2(Sub_rm32_imm32, EAX, 140u32));
        }
        self.asm(Instruction::with2(Cmp_rm32_imm8, EAX, 11u32));
    }

    /// Saves the status flags in the context (`lahf` for SF ZF AF PF CF,
    /// `seto` for OF), through `rax`, which is restored.
    fn save_flags(&mut self) {
        let l = *self.layout;
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.e.bytes(&[0x9f]); // lahf
        self.e.bytes(&[0x0f, 0x90, 0xc0]); // seto al
        self.e.store_gs(l.spill_tmp + 8, Gpr::RAX);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
    }

    /// Restores the flags [`Self::save_flags`] saved (`add al, 0x7f` sets
    /// OF exactly when `al` is 1, `sahf` the rest); `rax` is kept.
    fn restore_flags(&mut self) {
        let l = *self.layout;
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.e.load_gs(Gpr::RAX, l.spill_tmp + 8);
        self.e.bytes(&[0x04, 0x7f]); // add al, 0x7f
        self.e.bytes(&[0x9e]); // sahf
        self.e.load_gs(Gpr::RAX, l.spill_rax);
    }

    /// Encodes one inserted instruction at the current address.
    fn asm(&mut self, i: Result<Instruction, iced_x86::IcedError>) {
        let i = i.expect("inserted instruction is encodable");
        self.encode_here(&i).expect("inserted instruction encodes");
    }

    /// Encodes `i` at the current cache address and emits it; fails only
    /// when a RIP-relative operand is out of reach from here.
    fn encode_here(&mut self, i: &Instruction) -> Result<(), iced_x86::IcedError> {
        let r = self.encoder.encode(i, self.e.pc());
        // Taken on failure too: the encoder leaves the failed bytes there.
        let buf = self.encoder.take_buffer();
        let len = r?;
        debug_assert_eq!(buf.len(), len);
        self.e.bytes(&buf);
        Ok(())
    }

    /// Inline recording of SSE2/AVX `add/sub/mul sd/pd` (see
    /// [`Plan::Arithmetic`]). Checks first, writes after; any failed check
    /// leaves everything untouched and takes the runtime path.
    fn arithmetic(&mut self, insn: &Instruction, a: Arithmetic) -> Result<(), TranslateError> {
        if let crate::semantics::FpOp::Fma(form) = a.op {
            return self.record_fma(insn, a, form);
        }
        if a.float {
            return self.record_float_arithmetic(insn, a);
        }
        if a.op == crate::semantics::FpOp::Sqrt {
            return self.record_sqrt(insn, a);
        }
        let Arithmetic {
            op,
            lanes,
            dst,
            src1,
            src,
            vex,
            float: _,
        } = a;
        use crate::semantics::FpOp;
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        let gs = gs_operand;
        let at = |base: Register, disp: i64| MemoryOperand::with_base_displ(base, disp);
        self.blocks_prologue(insn, src == MoveSide::Memory);
        // rax = index of source lane `lane` (zero-extended).
        let src_index = |t: &mut Self, lane: u32| t.lane_index_to_eax(src, 8 * lane);
        let mut slow = Vec::new();
        // Checks: room for `lanes` blocks, operands older than `next`.
        let no_room = self.room_for(u32::from(lanes));
        let a_sh = shadowmem::RegFile::vec_offset(src1.number(), 0) as u32;
        // Every operand index below rdx, or on to the runtime.
        let operands_below_rdx = |t: &mut Self, slow: &mut Vec<usize>| {
            for lane in 0..u32::from(lanes) {
                t.asm(Instruction::with2(
                    Mov_r32_rm32,
                    EAX,
                    gs(sr + a_sh + 8 * lane),
                ));
                t.asm(Instruction::with2(Cmp_r64_rm64, RAX, RDX));
                slow.push(t.e.jcc_rel32_placeholder(0x3)); // jae
                src_index(t, lane);
                t.asm(Instruction::with2(Cmp_r64_rm64, RAX, RDX));
                slow.push(t.e.jcc_rel32_placeholder(0x3));
            }
        };
        // One lane: each operand's index is checked as it goes into the
        // block (which stays unpublished until the commit), instead of
        // loading it once for the checks and again for the block.
        let fused = lanes == 1;
        let add_sub = matches!(op, FpOp::Add | FpOp::Sub);
        let last = insn.op_register(insn.op_count() - 1);
        // A passive operand of magnitude in [2^42, 2^54) may be the
        // shifter of a rounding trick `(x + c) - c`, either half: the
        // runtime remembers the sum and decides at the subtraction. With
        // the operand's index in `eax`, its value checked when it is 0.
        let shifter_check = |t: &mut Self, slow: &mut Vec<usize>, second: bool, lane: u32| {
            t.asm(Instruction::with2(Test_rm32_r32, EAX, EAX));
            let active = t.e.jcc_rel32_placeholder(0x5); // jnz
            if second {
                t.lane_value_to_rax(src, last, lane, vex);
            } else {
                t.lane_value_to_rax(MoveSide::Register(0), src1, lane, vex);
            }
            slow.push(t.rounding_constant_check());
            let here = t.e.offset();
            t.e.bind_rel32(active, here);
        };
        if !fused {
            operands_below_rdx(self, &mut slow);
            if add_sub {
                for lane in 0..u32::from(lanes) {
                    self.asm(Instruction::with2(
                        Mov_r32_rm32,
                        EAX,
                        gs(sr + a_sh + 8 * lane),
                    ));
                    shifter_check(self, &mut slow, false, lane);
                    src_index(self, lane);
                    shifter_check(self, &mut slow, true, lane);
                }
            }
        }
        // Commit. A scalar VEX form keeps the rest of its first source's xmm.
        let save_vex_upper = |t: &mut Self| {
            if vex && lanes == 1 {
                t.save_scalar_upper(a_sh, 8);
            }
        };
        // A division computes its partials, 1/b and -(a/b/b), in a
        // borrowed xmm register, under the default MXCSR as the runtime's
        // rule does: the program's rounding mode, exception masks and
        // sticky flags are saved around it and stay its own.
        let mut div_temp: Option<Register> = Option::None;
        if !fused {
            save_vex_upper(self);
            div_temp = (op == FpOp::Div).then(|| self.borrow_xmm_default_mxcsr(insn, 1)[0]);
        }
        for lane in 0..u32::from(lanes) {
            let lane_sh = sr + dst + 8 * lane;
            if fused {
                self.block_address_of_rdx();
            } else {
                self.next_block_address();
            }
            self.asm(Instruction::with2(
                Mov_r32_rm32,
                EAX,
                gs(sr + a_sh + 8 * lane),
            ));
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 0), RAX));
            if fused {
                self.asm(Instruction::with2(Cmp_r64_rm64, RAX, RDX));
                slow.push(self.e.jcc_rel32_placeholder(0x3)); // jae
                if add_sub {
                    shifter_check(self, &mut slow, false, lane);
                }
            }
            src_index(self, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 8), RAX));
            if fused {
                self.asm(Instruction::with2(Cmp_r64_rm64, RAX, RDX));
                slow.push(self.e.jcc_rel32_placeholder(0x3)); // jae
                if add_sub {
                    shifter_check(self, &mut slow, true, lane);
                }
                save_vex_upper(self);
                div_temp = (op == FpOp::Div).then(|| self.borrow_xmm_default_mxcsr(insn, 1)[0]);
                if add_sub || vex {
                    // rax was used for the checks or the saved upper lane.
                    self.asm(Instruction::with2(Mov_r64_rm64, RAX, at(RCX, 8)));
                }
            }
            self.asm(Instruction::with2(Or_r64_rm64, RAX, at(RCX, 0)));
            let passive = self.e.jcc_rel32_placeholder(0x4); // jz
            match op {
                FpOp::Add | FpOp::Sub => {
                    self.asm(Instruction::with2(Mov_r64_imm64, RAX, 1.0f64.to_bits()));
                    self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 16), RAX));
                    if op == FpOp::Sub {
                        self.asm(Instruction::with2(Mov_r64_imm64, RAX, (-1.0f64).to_bits()));
                    }
                    self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 24), RAX));
                }
                _ => {
                    // d(a*b) = b da + a db: partial1 is b's value, partial2 a's.
                    // Lanes 2 and 3 of a ymm register go through a 16-byte
                    // scratch area in the context first.
                    let store_lane = |t: &mut Self, reg: Register, disp: i64| {
                        let xmm = Register::XMM0 + reg.number() as u32;
                        match lane {
                            0 | 1 => {
                                let code = match (lane, vex) {
                                    (0, false) => Movsd_xmmm64_xmm,
                                    (0, true) => VEX_Vmovsd_m64_xmm,
                                    (_, false) => Movhpd_m64_xmm,
                                    (_, true) => VEX_Vmovhpd_m64_xmm,
                                };
                                t.asm(Instruction::with2(code, at(RCX, disp), xmm));
                            }
                            _ => {
                                let ymm = Register::YMM0 + reg.number() as u32;
                                t.asm(Instruction::with3(
                                    VEX_Vextractf128_xmmm128_ymm_imm8,
                                    gs(l.lane_tmp),
                                    ymm,
                                    1u32,
                                ));
                                t.asm(Instruction::with2(
                                    Mov_r64_rm64,
                                    RAX,
                                    gs(l.lane_tmp + 8 * (lane - 2)),
                                ));
                                t.asm(Instruction::with2(Mov_rm64_r64, at(RCX, disp), RAX));
                            }
                        }
                    };
                    match src {
                        MoveSide::Register(_) => {
                            store_lane(self, insn.op_register(insn.op_count() - 1), 16)
                        }
                        MoveSide::Memory => {
                            self.asm(Instruction::with2(Mov_r64_rm64, RAX, gs(l.spill_tmp)));
                            self.asm(Instruction::with2(
                                Mov_r64_rm64,
                                RAX,
                                at(RAX, i64::from(8 * lane)),
                            ));
                            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 16), RAX));
                        }
                    }
                    store_lane(self, src1, 24);
                    if let Some(t0) = div_temp {
                        // b is at 16, a at 24: partial1 = 1/b, partial2 =
                        // -(a/b/b), the runtime rule's (dividing twice:
                        // b·b over- or underflows long before a/b/b does).
                        let (b, a) = (at(RCX, 16), at(RCX, 24));
                        self.asm(Instruction::with2(Movsd_xmm_xmmm64, t0, a));
                        self.asm(Instruction::with2(Divsd_xmm_xmmm64, t0, b));
                        self.asm(Instruction::with2(Divsd_xmm_xmmm64, t0, b));
                        self.asm(Instruction::with2(Movsd_xmmm64_xmm, a, t0));
                        self.asm(Instruction::with2(Btc_rm64_imm8, a, 63u32));
                        self.asm(Instruction::with2(Mov_r64_imm64, RAX, 1.0f64.to_bits()));
                        self.asm(Instruction::with2(Movq_xmm_rm64, t0, RAX));
                        self.asm(Instruction::with2(Divsd_xmm_xmmm64, t0, b));
                        self.asm(Instruction::with2(Movsd_xmmm64_xmm, b, t0));
                    }
                }
            }
            self.commit_lane(lane_sh, 8, 1, passive);
        }
        if let Some(t0) = div_temp {
            self.give_back_xmm_mxcsr(&[t0]);
        }
        let tail = self.e.offset();
        if vex {
            self.vex_shadow_tail(dst, 8, u32::from(lanes), lanes == 1);
        }
        // No room in the tape chunk (or no chunk yet: a thread that has
        // recorded nothing): operands that are all passive still need no
        // block, so their result's shadow is cleared here, not in the
        // runtime.
        self.blocks_epilogue(insn, no_room, tail, slow, |t, slow| {
            operands_below_rdx(t, slow);
            save_vex_upper(t);
            for lane in 0..u32::from(lanes) {
                t.e.zero_gs(sr + dst + 8 * lane, 8);
            }
        });
        Ok(())
    }

    /// `eax` = the bits of float lane `lane` of vector register `reg`, or
    /// with `memory` of the memory operand whose address is in `spill_tmp`
    /// (`rax` clobbered; lanes 4–7 of a ymm register go through
    /// `lane_tmp`).
    fn float_lane_to_eax(&mut self, memory: bool, reg: Register, lane: u32) {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        if memory {
            self.asm(Instruction::with2(
                Mov_r64_rm64,
                RAX,
                gs_operand(l.spill_tmp),
            ));
            self.asm(Instruction::with2(
                Mov_r32_rm32,
                EAX,
                MemoryOperand::with_base_displ(RAX, i64::from(4 * lane)),
            ));
            return;
        }
        let x = XMM0 + reg.number() as u32;
        match lane {
            0 => self.asm(Instruction::with2(Movd_rm32_xmm, EAX, x)),
            1..=3 => self.asm(Instruction::with3(Extractps_rm32_xmm_imm8, EAX, x, lane)),
            _ => {
                self.asm(Instruction::with3(
                    VEX_Vextractf128_xmmm128_ymm_imm8,
                    gs_operand(l.lane_tmp),
                    YMM0 + reg.number() as u32,
                    1u32,
                ));
                self.asm(Instruction::with2(
                    Mov_r32_rm32,
                    EAX,
                    gs_operand(l.lane_tmp + 4 * (lane - 4)),
                ));
            }
        }
    }

    /// Given a float's bits in `eax`: a `jbe rel32` (returned, to be bound
    /// to the runtime path) taken when its magnitude is in [2^13, 2^25),
    /// the binades of a float rounding trick's shifters (see
    /// [`Self::rounding_constant_check`]). Clobbers `eax` and the flags.
    fn float_rounding_constant_check(&mut self) -> usize {
        self.shifter_binade_compare(false);
        self.e.jcc_rel32_placeholder(0x6) // jbe
    }

    /// `eax` = the 4-byte index `offset` bytes into `side`'s shadow: the
    /// shadow register file at its offset, or the shadow of the memory
    /// operand whose address is in `spill_tmp` (`rax` is clobbered).
    fn lane_index_to_eax(&mut self, side: MoveSide, offset: u32) {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        match side {
            MoveSide::Register(off) => self.asm(Instruction::with2(
                Mov_r32_rm32,
                EAX,
                gs_operand(l.shadow_regs + off + offset),
            )),
            MoveSide::Memory => {
                self.asm(Instruction::with2(
                    Mov_r64_rm64,
                    RAX,
                    gs_operand(l.spill_tmp),
                ));
                self.e.shadow_address_of_rax(l.shadow_mask);
                self.asm(Instruction::with2(
                    Mov_r32_rm32,
                    EAX,
                    MemoryOperand::with_base_displ(RAX, i64::from(offset)),
                ));
            }
        }
    }

    /// Borrows `count` (1 or 2) xmm registers the instruction does not name,
    /// from xmm15 down, saving them in `vec_tmp`, and switches to the
    /// default MXCSR (round to nearest, exceptions masked, no DAZ/FTZ),
    /// saving the program's: partials computed inline round as the
    /// runtime's rules do and leave the program's sticky flags alone.
    /// [`Self::give_back_xmm_mxcsr`] undoes it.
    fn borrow_xmm_default_mxcsr(&mut self, insn: &Instruction, count: usize) -> Vec<Register> {
        use iced_x86::Code::*;
        let l = *self.layout;
        let used: Vec<u32> = (0..insn.op_count())
            .filter(|&i| insn.op_kind(i) == OpKind::Register)
            .map(|i| insn.op_register(i).number() as u32)
            .collect();
        let temps: Vec<Register> = (0..16u32)
            .rev()
            .filter(|n| !used.contains(n))
            .take(count)
            .map(|n| Register::XMM0 + n)
            .collect();
        for (k, &t) in temps.iter().enumerate() {
            self.asm(Instruction::with2(
                Movdqu_xmmm128_xmm,
                gs_operand(l.vec_tmp + 16 * k as u32),
                t,
            ));
        }
        self.asm(Instruction::with1(Stmxcsr_m32, gs_operand(l.vec_tmp + 36)));
        self.asm(Instruction::with2(
            Mov_rm32_imm32,
            gs_operand(l.vec_tmp + 32),
            0x1f80u32,
        ));
        self.asm(Instruction::with1(Ldmxcsr_m32, gs_operand(l.vec_tmp + 32)));
        temps
    }

    /// The program's MXCSR and the borrowed registers back.
    fn give_back_xmm_mxcsr(&mut self, temps: &[Register]) {
        use iced_x86::Code::*;
        let l = *self.layout;
        self.asm(Instruction::with1(Ldmxcsr_m32, gs_operand(l.vec_tmp + 36)));
        for (k, &t) in temps.iter().enumerate() {
            self.asm(Instruction::with2(
                Movdqu_xmm_xmmm128,
                t,
                gs_operand(l.vec_tmp + 16 * k as u32),
            ));
        }
    }

    /// The end of a lane's commit: the result's index (`rdx`, the lane's
    /// first block, plus `blocks - 1`) into the lane's shadow — 8 bytes, a
    /// double's index and its zero upper half in one store, or a float's
    /// 4 — and the next index advanced by `blocks`; the all-passive path
    /// (`passive`, to bind) zeroes the lane's shadow instead.
    fn commit_lane(&mut self, lane_sh: u32, width: u8, blocks: u32, passive: usize) {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        if blocks > 1 {
            self.asm(Instruction::with2(
                Lea_r64_m,
                RAX,
                MemoryOperand::with_base_displ(RDX, i64::from(blocks - 1)),
            ));
            if width == 8 {
                self.asm(Instruction::with2(Mov_rm64_r64, gs_operand(lane_sh), RAX));
            } else {
                self.asm(Instruction::with2(Mov_rm32_r32, gs_operand(lane_sh), EAX));
            }
        } else if width == 8 {
            // The new index (below 2^32) and the zero upper half in one
            // 8-byte store: later 8-byte loads of this shadow can take it
            // from the store buffer (a 4-byte index and a 4-byte zero
            // stall every such load, ~20 cycles on Zen 3).
            self.asm(Instruction::with2(Mov_rm64_r64, gs_operand(lane_sh), RDX));
        } else {
            self.asm(Instruction::with2(Mov_rm32_r32, gs_operand(lane_sh), EDX));
        }
        self.asm(Instruction::with2(
            Add_rm64_imm8,
            gs_operand(l.tool_area + 16),
            blocks,
        ));
        // All-passive operands: the lane's shadow cleared out of line
        // ([`Self::blocks_epilogue`]), so that the common path, a block
        // written, falls through without a jump.
        self.passive_lanes.push(PassiveLane {
            field: passive,
            lane_sh,
            width,
            back: self.e.offset(),
        });
    }

    /// A VEX scalar form of lanes of `w` bytes keeps bytes `w..16` of its
    /// first source, whose shadow (at `src1` in the shadow register file)
    /// the result may overwrite: saved before the commit, in `spill_tmp + 8`
    /// (and for a float's form bytes 8..16 in `lane_tmp`), for
    /// [`Self::vex_shadow_tail`]. Clobbers `rax`.
    fn save_scalar_upper(&mut self, src1: u32, w: u8) {
        use iced_x86::Code::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        let rax = Register::RAX;
        if w == 4 {
            self.asm(Instruction::with2(Mov_r64_rm64, rax, gs_operand(sr + src1)));
            self.asm(Instruction::with2(
                Mov_rm64_r64,
                gs_operand(l.spill_tmp + 8),
                rax,
            ));
            self.asm(Instruction::with2(
                Mov_r64_rm64,
                rax,
                gs_operand(sr + src1 + 8),
            ));
            self.asm(Instruction::with2(
                Mov_rm64_r64,
                gs_operand(l.lane_tmp),
                rax,
            ));
        } else {
            self.asm(Instruction::with2(
                Mov_r64_rm64,
                rax,
                gs_operand(sr + src1 + 8),
            ));
            self.asm(Instruction::with2(
                Mov_rm64_r64,
                gs_operand(l.spill_tmp + 8),
                rax,
            ));
        }
    }

    /// The shadow of a VEX result at `dst` after its `lanes` lanes of `w`
    /// bytes: with `scalar_upper`, bytes `w..16` from
    /// [`Self::save_scalar_upper`]; then zero above the vector length (at
    /// least 16 bytes). Clobbers `rax`.
    fn vex_shadow_tail(&mut self, dst: u32, w: u8, lanes: u32, scalar_upper: bool) {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        if scalar_upper {
            self.asm(Instruction::with2(
                Mov_r64_rm64,
                RAX,
                gs_operand(l.spill_tmp + 8),
            ));
            if w == 4 {
                self.asm(Instruction::with2(Shr_rm64_imm8, RAX, 32u32));
                self.asm(Instruction::with2(
                    Mov_rm32_r32,
                    gs_operand(sr + dst + 4),
                    EAX,
                ));
                self.asm(Instruction::with2(
                    Mov_r64_rm64,
                    RAX,
                    gs_operand(l.lane_tmp),
                ));
            }
            self.asm(Instruction::with2(
                Mov_rm64_r64,
                gs_operand(sr + dst + 8),
                RAX,
            ));
        }
        let mut z = (u32::from(w) * lanes).max(16);
        while z < 64 {
            self.e.zero_gs(sr + dst + z, 8);
            z += 8;
        }
    }

    /// The start of inline block writing: `rax`, `rcx` and `rdx` in their
    /// spill slots, and with `memory` the memory operand's address in
    /// `spill_tmp`.
    fn blocks_prologue(&mut self, insn: &Instruction, memory: bool) {
        let l = *self.layout;
        self.spilled(insn, SPILLS_RAX | SPILLS_RCX | SPILLS_RDX);
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.e.store_gs(l.spill_rcx, Gpr::RCX);
        self.e.store_gs(l.spill_rdx, Gpr::RDX);
        if memory {
            self.lea_of_operand(Register::RCX, insn);
            self.asm(Instruction::with2(
                Code::Mov_rm64_r64,
                gs_operand(l.spill_tmp),
                Register::RCX,
            ));
        }
    }

    /// `rdx` = the thread's next index; returns the jump (to bind) taken
    /// when its tape chunk has no room for `blocks` more (`rax` clobbered).
    fn room_for(&mut self, blocks: u32) -> usize {
        use iced_x86::Code::*;
        let l = *self.layout;
        self.asm(Instruction::with2(
            Mov_r64_rm64,
            Register::RDX,
            gs_operand(l.tool_area + 16),
        ));
        if blocks == 1 {
            // next + 1 > end: next ≥ end.
            self.asm(Instruction::with2(
                Cmp_r64_rm64,
                Register::RDX,
                gs_operand(l.tool_area + 24),
            ));
            return self.e.jcc_rel32_placeholder(0x3); // jae
        }
        self.asm(Instruction::with2(
            Lea_r64_m,
            Register::RAX,
            MemoryOperand::with_base_displ(Register::RDX, i64::from(blocks)),
        ));
        self.asm(Instruction::with2(
            Cmp_r64_rm64,
            Register::RAX,
            gs_operand(l.tool_area + 24),
        ));
        self.e.jcc_rel32_placeholder(0x7) // ja
    }

    /// `rdx` = the next index, `rcx` = the address of its block in the
    /// thread's chunk buffer (`buf + 32 (next - base)`).
    fn next_block_address(&mut self) {
        let tape_next = self.layout.tool_area + 16;
        self.asm(Instruction::with2(
            Code::Mov_r64_rm64,
            Register::RDX,
            gs_operand(tape_next),
        ));
        self.block_address_of_rdx();
    }

    /// `rcx` = the address of the block of index `rdx` (the next index,
    /// loaded by [`Self::room_for`] and unchanged since) in the thread's
    /// chunk buffer.
    fn block_address_of_rdx(&mut self) {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        let (tape_buf, tape_base) = (l.tool_area, l.tool_area + 8);
        self.asm(Instruction::with2(Mov_r64_rm64, RCX, RDX));
        self.asm(Instruction::with2(Sub_r64_rm64, RCX, gs_operand(tape_base)));
        self.asm(Instruction::with2(Shl_rm64_imm8, RCX, 5u32));
        self.asm(Instruction::with2(Add_r64_rm64, RCX, gs_operand(tape_buf)));
    }

    /// The end of inline block writing, after the committed path's tail
    /// (bound at `tail`): the registers back and on to the guest
    /// instruction; at `no_room` (the chunk is full, or there is none yet)
    /// `rdx` = 1 and `no_room_body`, which clears the results of
    /// all-passive operands (an index ≥ 1 sends the lane to `slow`) and
    /// goes on at `tail`; the `slow` jumps give the registers back and call
    /// the runtime.
    fn blocks_epilogue(
        &mut self,
        insn: &Instruction,
        no_room: usize,
        tail: usize,
        mut slow: Vec<usize>,
        no_room_body: impl FnOnce(&mut Self, &mut Vec<usize>),
    ) {
        let l = *self.layout;
        self.e.load_gs(Gpr::RDX, l.spill_rdx);
        self.e.load_gs(Gpr::RCX, l.spill_rcx);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        let to_insn = self.e.jmp_rel32_placeholder();
        for p in std::mem::take(&mut self.passive_lanes) {
            let here = self.e.offset();
            self.e.bind_rel32(p.field, here);
            self.e.zero_gs(p.lane_sh, p.width);
            let back = self.e.jmp_rel32_placeholder();
            self.e.bind_rel32(back, p.back);
        }
        let here = self.e.offset();
        self.e.bind_rel32(no_room, here);
        self.asm(Instruction::with2(Code::Mov_r32_imm32, Register::EDX, 1u32));
        no_room_body(self, &mut slow);
        let to_tail = self.e.jmp_rel32_placeholder();
        self.e.bind_rel32(to_tail, tail);
        let here = self.e.offset();
        for j in slow {
            self.e.bind_rel32(j, here);
        }
        self.e.load_gs(Gpr::RDX, l.spill_rdx);
        self.e.load_gs(Gpr::RCX, l.spill_rcx);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        self.instrument_call(insn);
        let here = self.e.offset();
        self.e.bind_rel32(to_insn, here);
    }

    /// [`Plan::Arithmetic`] for floats (`add/sub/mul ss/ps` in xmm, legacy
    /// and VEX, and in ymm): one block per 4-byte lane as for doubles — `{a: 1, b: ±1}`,
    /// or `{a: b, b: a}` with the values widened to doubles (`cvtss2sd` in a
    /// borrowed xmm register under the default MXCSR, the program's saved
    /// around it, as the runtime's rule widens them) — and the new index in
    /// the lane's 4 bytes. A passive addend in the binades of a float
    /// rounding shifter (2^13 to 2^24) goes to the runtime. Needs dead flags.
    fn record_float_arithmetic(
        &mut self,
        insn: &Instruction,
        a: Arithmetic,
    ) -> Result<(), TranslateError> {
        use crate::semantics::FpOp;
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        let gs = gs_operand;
        let at = |base: Register, disp: i64| MemoryOperand::with_base_displ(base, disp);
        let lanes = u32::from(a.lanes);
        let last = insn.op_register(insn.op_count() - 1);
        let a_sh = shadowmem::RegFile::vec_offset(a.src1.number(), 0) as u32;
        self.blocks_prologue(insn, a.src == MoveSide::Memory);
        // eax = the index of the first (`second` false) or second source's lane.
        let index = |t: &mut Self, second: bool, lane: u32| {
            if !second {
                t.asm(Instruction::with2(
                    Mov_r32_rm32,
                    EAX,
                    gs(sr + a_sh + 4 * lane),
                ));
                return;
            }
            t.lane_index_to_eax(a.src, 4 * lane);
        };
        // eax = the float bits of the first or second source's lane.
        let value = |t: &mut Self, second: bool, lane: u32| {
            let memory = second && a.src == MoveSide::Memory;
            t.float_lane_to_eax(memory, if second { last } else { a.src1 }, lane);
        };
        let mut slow = Vec::new();
        let no_room = self.room_for(lanes);
        let operands_below_rdx = |t: &mut Self, slow: &mut Vec<usize>| {
            for lane in 0..lanes {
                for second in [false, true] {
                    index(t, second, lane);
                    t.asm(Instruction::with2(Cmp_r64_rm64, RAX, RDX));
                    slow.push(t.e.jcc_rel32_placeholder(0x3)); // jae
                }
            }
        };
        operands_below_rdx(self, &mut slow);
        if matches!(a.op, FpOp::Add | FpOp::Sub) {
            // A passive operand in a float shifter's binades: the runtime.
            for lane in 0..lanes {
                for second in [false, true] {
                    index(self, second, lane);
                    self.asm(Instruction::with2(Test_rm32_r32, EAX, EAX));
                    let active = self.e.jcc_rel32_placeholder(0x5); // jnz
                    value(self, second, lane);
                    slow.push(self.float_rounding_constant_check());
                    let here = self.e.offset();
                    self.e.bind_rel32(active, here);
                }
            }
        }
        // Commit. A scalar VEX form keeps bytes 4..16 of its first source.
        if a.vex && lanes == 1 {
            self.save_scalar_upper(a_sh, 4);
        }
        let widen = (a.op == FpOp::Mul).then(|| self.borrow_xmm_default_mxcsr(insn, 1)[0]);
        for lane in 0..lanes {
            let lane_sh = sr + a.dst + 4 * lane;
            self.next_block_address();
            index(self, false, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 0), RAX));
            index(self, true, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 8), RAX));
            self.asm(Instruction::with2(Or_r64_rm64, RAX, at(RCX, 0)));
            let passive = self.e.jcc_rel32_placeholder(0x4); // jz
            match (a.op, widen) {
                (FpOp::Mul, Some(t)) => {
                    // d(a*b) = b da + a db, the floats widened.
                    for (second, disp) in [(true, 16), (false, 24)] {
                        value(self, second, lane);
                        self.asm(Instruction::with2(Movd_xmm_rm32, t, EAX));
                        self.asm(Instruction::with2(Cvtss2sd_xmm_xmmm32, t, t));
                        self.asm(Instruction::with2(Movsd_xmmm64_xmm, at(RCX, disp), t));
                    }
                }
                _ => {
                    self.asm(Instruction::with2(Mov_r64_imm64, RAX, 1.0f64.to_bits()));
                    self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 16), RAX));
                    if a.op == FpOp::Sub {
                        self.asm(Instruction::with2(Mov_r64_imm64, RAX, (-1.0f64).to_bits()));
                    }
                    self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 24), RAX));
                }
            }
            self.commit_lane(lane_sh, 4, 1, passive);
        }
        if let Some(t) = widen {
            self.give_back_xmm_mxcsr(&[t]);
        }
        let tail = self.e.offset();
        if a.vex {
            self.vex_shadow_tail(a.dst, 4, lanes, lanes == 1);
        }
        // No room in the chunk: all-passive lanes still need no block.
        self.blocks_epilogue(insn, no_room, tail, slow, |t, slow| {
            operands_below_rdx(t, slow);
            if a.vex && lanes == 1 {
                t.save_scalar_upper(a_sh, 4);
            }
            for lane in 0..lanes {
                t.e.zero_gs(sr + a.dst + 4 * lane, 4);
            }
        });
        Ok(())
    }

    /// [`Plan::Arithmetic`] for the square roots of doubles (`sqrtsd/pd`,
    /// legacy and VEX): one block per lane `{a: 0.5/√a}`, the partial the
    /// runtime's rule computes, in two borrowed xmm registers under the
    /// default MXCSR (the program's saved around them). The operand is the
    /// last one; a legacy scalar form keeps its destination's upper lane, a
    /// VEX scalar form takes it from its first source. Needs dead flags.
    fn record_sqrt(&mut self, insn: &Instruction, a: Arithmetic) -> Result<(), TranslateError> {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        let at = |base: Register, disp: i64| MemoryOperand::with_base_displ(base, disp);
        let lanes = u32::from(a.lanes);
        let last = insn.op_register(insn.op_count() - 1);
        let a_sh = shadowmem::RegFile::vec_offset(a.src1.number(), 0) as u32;
        let vex_scalar = a.vex && lanes == 1;
        self.blocks_prologue(insn, a.src == MoveSide::Memory);
        let mut slow = Vec::new();
        let no_room = self.room_for(lanes);
        let operand_below_rdx = |t: &mut Self, slow: &mut Vec<usize>| {
            for lane in 0..lanes {
                t.lane_index_to_eax(a.src, 8 * lane);
                t.asm(Instruction::with2(Cmp_r64_rm64, RAX, RDX));
                slow.push(t.e.jcc_rel32_placeholder(0x3)); // jae
            }
        };
        operand_below_rdx(self, &mut slow);
        // A VEX scalar form's upper lane comes from its first source, which
        // may be the destination: saved before the commit.
        let save_upper = |t: &mut Self| {
            if vex_scalar {
                t.save_scalar_upper(a_sh, 8);
            }
        };
        save_upper(self);
        let temps = self.borrow_xmm_default_mxcsr(insn, 2);
        let (t0, t1) = (temps[0], temps[1]);
        for lane in 0..lanes {
            let lane_sh = sr + a.dst + 8 * lane;
            self.next_block_address();
            self.lane_index_to_eax(a.src, 8 * lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 0), RAX));
            self.asm(Instruction::with2(Test_rm32_r32, EAX, EAX));
            let passive = self.e.jcc_rel32_placeholder(0x4); // jz
            self.asm(Instruction::with2(Mov_rm64_imm32, at(RCX, 8), 0u32));
            self.asm(Instruction::with2(Mov_rm64_imm32, at(RCX, 24), 0u32));
            if a.src == MoveSide::Memory {
                self.lane_value_to_rax(MoveSide::Memory, RAX, lane, a.vex);
            } else {
                self.lane_value_to_rax(MoveSide::Register(0), last, lane, a.vex);
            }
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 16), RAX));
            self.asm(Instruction::with2(Sqrtsd_xmm_xmmm64, t1, at(RCX, 16)));
            self.asm(Instruction::with2(Mov_r64_imm64, RAX, 0.5f64.to_bits()));
            self.asm(Instruction::with2(Movq_xmm_rm64, t0, RAX));
            self.asm(Instruction::with2(Divsd_xmm_xmmm64, t0, t1));
            self.asm(Instruction::with2(Movsd_xmmm64_xmm, at(RCX, 16), t0));
            self.commit_lane(lane_sh, 8, 1, passive);
        }
        self.give_back_xmm_mxcsr(&temps);
        let tail = self.e.offset();
        if a.vex {
            self.vex_shadow_tail(a.dst, 8, lanes, vex_scalar);
        }
        self.blocks_epilogue(insn, no_room, tail, slow, |t, slow| {
            operand_below_rdx(t, slow);
            save_upper(t);
            for lane in 0..lanes {
                t.e.zero_gs(sr + a.dst + 8 * lane, 8);
            }
        });
        Ok(())
    }

    /// [`Plan::Arithmetic`] for a fused multiply-add `y = ±(a·b) ± c`: per
    /// lane two blocks, the product's `p = {a: b, b: a}` (the partials
    /// negated for `fnm…`) and the sum's `y = {p: 1, c: ±1}`, written inline
    /// when the chunk has room for both and every operand is older than
    /// the next index; a lane whose three operands are passive gets index
    /// 0 and no block. A lane whose addend is passive and of a rounding
    /// shifter's magnitude (`fma(x, k, 1.5·2^52)`, the first half of the
    /// rounding trick) goes to the runtime, which remembers the sum, as
    /// for `add`. Needs dead flags.
    fn record_fma(
        &mut self,
        insn: &Instruction,
        a: Arithmetic,
        form: crate::semantics::FmaForm,
    ) -> Result<(), TranslateError> {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        let at = |base: Register, disp: i64| MemoryOperand::with_base_displ(base, disp);
        let lanes = u32::from(a.lanes);
        // Bytes per lane: a double's or a float's.
        let w: u8 = if a.float { 4 } else { 8 };
        let regs = [insn.op0_register(), a.src1, insn.op_register(2)];
        self.blocks_prologue(insn, a.src == MoveSide::Memory);
        // eax = the index of operand `n` (1-based), lane `lane`.
        let index = |t: &mut Self, n: u8, lane: u32| {
            let side = if n == 3 && a.src == MoveSide::Memory {
                MoveSide::Memory
            } else {
                let r = regs[usize::from(n - 1)];
                MoveSide::Register(shadowmem::RegFile::vec_offset(r.number(), 0) as u32)
            };
            t.lane_index_to_eax(side, u32::from(w) * lane);
        };
        // The bits of operand `n`, lane `lane`: a double's in rax, a
        // float's in eax.
        let bits = |t: &mut Self, n: u8, lane: u32| {
            let memory = n == 3 && a.src == MoveSide::Memory;
            let r = regs[usize::from(n - 1)];
            if a.float {
                t.float_lane_to_eax(memory, r, lane);
            } else if memory {
                t.lane_value_to_rax(MoveSide::Memory, RAX, lane, true);
            } else {
                t.lane_value_to_rax(MoveSide::Register(0), r, lane, true);
            }
        };
        let [na, nb, nc] = form.order;
        let mut slow = Vec::new();
        // Room for two blocks per lane, every operand older than `next`.
        let no_room = self.room_for(2 * lanes);
        let operands_below_rdx = |t: &mut Self, slow: &mut Vec<usize>| {
            for lane in 0..lanes {
                for n in 1..=3 {
                    index(t, n, lane);
                    t.asm(Instruction::with2(Cmp_r64_rm64, RAX, RDX));
                    slow.push(t.e.jcc_rel32_placeholder(0x3)); // jae
                }
            }
        };
        operands_below_rdx(self, &mut slow);
        // A passive addend of a shifter's size: the rounding trick's first
        // half, for the runtime to remember.
        for lane in 0..lanes {
            index(self, nc, lane);
            self.asm(Instruction::with2(Test_rm32_r32, EAX, EAX));
            let c_active = self.e.jcc_rel32_placeholder(0x5); // jnz
            bits(self, nc, lane);
            slow.push(if a.float {
                self.float_rounding_constant_check()
            } else {
                self.rounding_constant_check()
            });
            let here = self.e.offset();
            self.e.bind_rel32(c_active, here);
        }
        // A float's value is widened to the partial's double in a borrowed
        // register, as the runtime's rule widens it.
        let widen = a.float.then(|| self.borrow_xmm_default_mxcsr(insn, 1)[0]);
        // rax = the double value of operand `n`, lane `lane`.
        let value = |t: &mut Self, n: u8, lane: u32| {
            bits(t, n, lane);
            if let Some(x) = widen {
                t.asm(Instruction::with2(Movd_xmm_rm32, x, EAX));
                t.asm(Instruction::with2(Cvtss2sd_xmm_xmmm32, x, x));
                t.asm(Instruction::with2(Movq_rm64_xmm, RAX, x));
            }
        };
        // Commit, lane by lane: rcx = the product's block, rdx its index.
        for lane in 0..lanes {
            let lane_sh = sr
                + shadowmem::RegFile::vec_offset(regs[0].number(), 0) as u32
                + u32::from(w) * lane;
            index(self, na, lane);
            self.asm(Instruction::with2(Mov_r64_rm64, RCX, RAX));
            index(self, nb, lane);
            self.asm(Instruction::with2(Or_r64_rm64, RCX, RAX));
            index(self, nc, lane);
            self.asm(Instruction::with2(Or_r64_rm64, RCX, RAX));
            let passive = self.e.jcc_rel32_placeholder(0x4); // jz
            self.next_block_address();
            // The product: {a: b, b: a}.
            index(self, na, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 0), RAX));
            index(self, nb, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 8), RAX));
            value(self, nb, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 16), RAX));
            value(self, na, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 24), RAX));
            if form.neg_product {
                for disp in [16, 24] {
                    self.asm(Instruction::with2(Btc_rm64_imm8, at(RCX, disp), 63u32));
                }
            }
            // The sum: {p: 1, c: ±1}.
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 32), RDX));
            index(self, nc, lane);
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 40), RAX));
            self.asm(Instruction::with2(Mov_r64_imm64, RAX, 1.0f64.to_bits()));
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 48), RAX));
            if form.sub_addend {
                self.asm(Instruction::with2(Mov_r64_imm64, RAX, (-1.0f64).to_bits()));
            }
            self.asm(Instruction::with2(Mov_rm64_r64, at(RCX, 56), RAX));
            // The sum's index: the lane's second block.
            self.commit_lane(lane_sh, w, 2, passive);
        }
        if let Some(x) = widen {
            self.give_back_xmm_mxcsr(&[x]);
        }
        // VEX: zero above the vector length (a scalar form keeps the rest
        // of its destination's xmm, its first operand).
        let tail = self.e.offset();
        let dst = shadowmem::RegFile::vec_offset(regs[0].number(), 0) as u32;
        self.vex_shadow_tail(dst, w, lanes, false);
        // No room in the chunk: all-passive lanes still need no block.
        self.blocks_epilogue(insn, no_room, tail, slow, |t, slow| {
            operands_below_rdx(t, slow);
            for lane in 0..lanes {
                t.e.zero_gs(sr + dst + u32::from(w) * lane, w);
            }
        });
        Ok(())
    }

    /// Copies `len` shadow bytes in 8- or 4-byte pieces through `rdx`, with
    /// `rax` holding the memory side's shadow address.
    fn vector_move(
        &mut self,
        insn: &Instruction,
        src: MoveSide,
        dst: MoveSide,
        len: u8,
        zero: u8,
    ) -> Result<(), TranslateError> {
        if self.vector_move_via_dead_register(insn, src, dst, len, zero)? {
            return Ok(());
        }
        let l = *self.layout;
        let sr = l.shadow_regs;
        let memory = matches!(src, MoveSide::Memory) || matches!(dst, MoveSide::Memory);
        self.spilled(insn, SPILLS_RAX | SPILLS_RDX);
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.e.store_gs(l.spill_rdx, Gpr::RDX);
        if memory {
            self.shadow_address_in_rax(insn)?;
        }
        let mut at = 0u32;
        while at < u32::from(len) {
            let piece = if u32::from(len) - at >= 8 { 8 } else { 4 };
            match src {
                MoveSide::Register(off) => self.e.load_gs_sized(Gpr::RDX, sr + off + at, piece),
                MoveSide::Memory => self.e.load_rdx_from_rax(at, piece),
            }
            match dst {
                MoveSide::Register(off) => self.e.store_gs_sized(sr + off + at, Gpr::RDX, piece),
                MoveSide::Memory => self.e.store_rdx_to_rax_at(at, piece),
            }
            at += u32::from(piece);
        }
        if let MoveSide::Register(off) = dst {
            self.zero_shadow_bytes(sr + off + u32::from(len), u32::from(zero));
        }
        self.e.load_gs(Gpr::RDX, l.spill_rdx);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        Ok(())
    }

    /// [`Plan::ConvertIndex`]: every source read before the destination is
    /// written (either source may be the destination).
    fn convert_index(
        &mut self,
        insn: &Instruction,
        src: MoveSide,
        src1: u32,
        dst: u32,
        low: LowLane,
    ) -> Result<(), TranslateError> {
        use iced_x86::Code::*;
        use Register::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        let gs = gs_operand;
        self.spilled(insn, SPILLS_RAX | SPILLS_RDX);
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.e.store_gs(l.spill_rdx, Gpr::RDX);
        // rax = the low lane's shadow: 8 bytes for a double, else a 4-byte
        // index zero-extended.
        let (load, to) = if low == LowLane::Double {
            (Mov_r64_rm64, RAX)
        } else {
            (Mov_r32_rm32, EAX)
        };
        match src {
            MoveSide::Register(off) => self.asm(Instruction::with2(load, to, gs(sr + off))),
            MoveSide::Memory => {
                self.shadow_address_in_rax(insn)?;
                self.asm(Instruction::with2(load, to, MemoryOperand::with_base(RAX)));
            }
        }
        let widen = low != LowLane::Float;
        if !widen {
            // A float's lane: bytes 4..8 come from the first source.
            self.asm(Instruction::with2(Mov_r32_rm32, EDX, gs(sr + src1 + 4)));
            self.asm(Instruction::with2(Mov_rm32_r32, gs(sr + dst + 4), EDX));
        }
        self.asm(Instruction::with2(Mov_r64_rm64, RDX, gs(sr + src1 + 8)));
        self.asm(Instruction::with2(Mov_rm64_r64, gs(sr + dst + 8), RDX));
        if widen {
            // A double's 8 shadow bytes (or a float's index zero-extended)
            // in one store.
            self.asm(Instruction::with2(Mov_rm64_r64, gs(sr + dst), RAX));
        } else {
            self.asm(Instruction::with2(Mov_rm32_r32, gs(sr + dst), EAX));
        }
        self.zero_shadow_bytes(sr + dst + 16, 48);
        self.e.load_gs(Gpr::RDX, l.spill_rdx);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        Ok(())
    }

    /// The check of a byte- or word-masked move ([`Plan::MaskedMove`]
    /// with `unit_bits`): within every 4-byte unit the mask's bits are all
    /// set or all clear (`(k ^ k >> 1) & 0x7777…` zero for bytes, `& 0x5555…`
    /// for words). Returns the jump to patch to the runtime path, taken
    /// with `rax` and `rdx` in their spill slots; on the way on both are
    /// the guest's again. Needs dead flags.
    fn whole_units_or_runtime(&mut self, insn: &Instruction, unit_bits: u8) -> usize {
        use Code::*;
        let l = *self.layout;
        self.spilled(insn, SPILLS_RAX | SPILLS_RDX);
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        self.e.store_gs(l.spill_rdx, Gpr::RDX);
        let k = insn.op_mask();
        let (kmov, pattern) = if unit_bits == 4 {
            (VEX_Kmovq_r64_kr, 0x7777_7777_7777_7777u64)
        } else {
            (VEX_Kmovd_r32_kr, 0x5555_5555)
        };
        // kmovd zero-extends into rax.
        let to = if unit_bits == 4 {
            Register::RAX
        } else {
            Register::EAX
        };
        self.asm(Instruction::with2(kmov, to, k));
        self.asm(Instruction::with2(
            Mov_r64_rm64,
            Register::RDX,
            Register::RAX,
        ));
        self.asm(Instruction::with2(Shr_rm64_imm8, Register::RDX, 1u32));
        self.asm(Instruction::with2(
            Xor_r64_rm64,
            Register::RDX,
            Register::RAX,
        ));
        self.asm(Instruction::with2(Mov_r64_imm64, Register::RAX, pattern));
        self.asm(Instruction::with2(
            Test_rm64_r64,
            Register::RDX,
            Register::RAX,
        ));
        let slow = self.e.jne32_placeholder();
        self.e.load_gs(Gpr::RDX, l.spill_rdx);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        slow
    }

    /// For a masked move whose mask splits 4-byte units: jumps (to patch)
    /// taken when a shadow byte it involves is nonzero — the source's
    /// vector-length bytes and the destination's (a register's whole 64,
    /// which the move zeroes above its length). With all of them zero the
    /// move leaves the shadows as they are. `rax` is spilled, and the
    /// shadow address of a memory side goes into it.
    fn masked_move_shadows_nonzero(
        &mut self,
        insn: &Instruction,
        src: MoveSide,
        dst: MoveSide,
    ) -> Result<Vec<usize>, TranslateError> {
        let sr = self.layout.shadow_regs;
        let vector = if insn.op0_kind() == OpKind::Register {
            insn.op0_register()
        } else {
            insn.op1_register()
        };
        let width = vector.size() as u32;
        let dst_bytes = if matches!(dst, MoveSide::Memory) {
            width
        } else {
            64
        };
        let mut active = Vec::new();
        for (side, bytes) in [(src, width), (dst, dst_bytes)] {
            match side {
                MoveSide::Register(off) => {
                    for k in (0..bytes).step_by(8) {
                        active.push(self.e.jne32_if_gs64_nonzero_placeholder(sr + off + k));
                    }
                }
                MoveSide::Memory => {
                    self.shadow_address_in_rax(insn)?;
                    for k in (0..bytes).step_by(8) {
                        self.e.cmp_at_rax_zero(k as u8, 8);
                        active.push(self.e.jne32_placeholder());
                    }
                }
            }
        }
        Ok(active)
    }

    /// [`Plan::MaskedMove`]: the instruction itself, with its mask, run on
    /// the shadows — the source's shadow (register file or shadow memory)
    /// into a borrowed vector register that holds the destination's shadow
    /// (merging) or nothing (`{z}`), and that register stored whole (EVEX
    /// zeroes it above the vector length, as it does the destination); or
    /// for a store, the source register's shadow stored under the mask.
    /// The borrowed register (zmm31, zmm30 if the instruction names 31)
    /// is saved in `vec_tmp` and given back.
    fn masked_move(
        &mut self,
        insn: &Instruction,
        src: MoveSide,
        dst: MoveSide,
    ) -> Result<(), TranslateError> {
        use Code::*;
        let l = *self.layout;
        let sr = l.shadow_regs;
        let names_31 = (0..insn.op_count())
            .any(|i| insn.op_kind(i) == OpKind::Register && insn.op_register(i).number() == 31);
        let t = if names_31 { 30 } else { 31 };
        let zmm = Register::ZMM0 + t;
        // The temporary in the width of the instruction's vector operand.
        let vector = if insn.op0_kind() == OpKind::Register {
            insn.op0_register()
        } else {
            insn.op1_register()
        };
        let temp = if vector.is_zmm() {
            zmm
        } else if vector.is_ymm() {
            Register::YMM0 + t
        } else {
            Register::XMM0 + t
        };
        let memory = matches!(src, MoveSide::Memory) || matches!(dst, MoveSide::Memory);
        if memory {
            self.shadow_address_in_spilled_rax(insn)?;
        }
        let at_rax = MemoryOperand::with_base(Register::RAX);
        self.asm(Instruction::with2(
            EVEX_Vmovdqu64_zmmm512_k1z_zmm,
            gs_operand(l.vec_tmp),
            zmm,
        ));
        let shadow = match (dst, src) {
            (MoveSide::Register(d), src) => {
                if !insn.zeroing_masking() {
                    self.asm(Instruction::with2(
                        EVEX_Vmovdqu64_zmm_k1z_zmmm512,
                        zmm,
                        gs_operand(sr + d),
                    ));
                }
                let from = match src {
                    MoveSide::Register(s) => gs_operand(sr + s),
                    MoveSide::Memory => at_rax,
                };
                Instruction::with2(insn.code(), temp, from)
            }
            (MoveSide::Memory, MoveSide::Register(s)) => {
                self.asm(Instruction::with2(
                    EVEX_Vmovdqu64_zmm_k1z_zmmm512,
                    zmm,
                    gs_operand(sr + s),
                ));
                Instruction::with2(insn.code(), at_rax, temp)
            }
            (MoveSide::Memory, MoveSide::Memory) => {
                unreachable!("a move between two memory operands")
            }
        };
        let mut shadow = shadow.expect("the move's own code takes these operands");
        shadow.set_op_mask(insn.op_mask());
        shadow.set_zeroing_masking(insn.zeroing_masking());
        self.asm(Ok(shadow));
        if let MoveSide::Register(d) = dst {
            self.asm(Instruction::with2(
                EVEX_Vmovdqu64_zmmm512_k1z_zmm,
                gs_operand(sr + d),
                zmm,
            ));
        }
        self.asm(Instruction::with2(
            EVEX_Vmovdqu64_zmm_k1z_zmmm512,
            zmm,
            gs_operand(l.vec_tmp),
        ));
        if memory {
            self.e.load_gs(Gpr::RAX, l.spill_rax);
        }
        Ok(())
    }

    /// [`Plan::VectorMove`] of 4, 8 or 16 bytes through a vector register
    /// whose value is dead here (often the move's own destination), in
    /// the instruction's encoding family (legacy SSE leaves the bits above
    /// 128 alone; VEX needs the whole register dead): one load and one
    /// store, and `rax` saved only when a side is memory. Returns false
    /// (nothing emitted) when no register is dead or the size is another.
    fn vector_move_via_dead_register(
        &mut self,
        insn: &Instruction,
        src: MoveSide,
        dst: MoveSide,
        len: u8,
        zero: u8,
    ) -> Result<bool, TranslateError> {
        use Code::*;
        let vex = insn.encoding() != EncodingKind::Legacy;
        let (low, whole) = self.vectors_dead.get(self.index).copied().unwrap_or((0, 0));
        // Held registers (legacy code) are free to change.
        let dead = if vex { whole } else { low | self.held };
        let store = match (len, vex) {
            (4, false) => Movss_xmmm32_xmm,
            (8, false) => Movsd_xmmm64_xmm,
            (16, false) => Movdqu_xmmm128_xmm,
            (4, true) => VEX_Vmovss_m32_xmm,
            (8, true) => VEX_Vmovsd_m64_xmm,
            (16, true) => VEX_Vmovdqu_xmmm128_xmm,
            _ => return Ok(false),
        };
        if dead == 0 {
            return Ok(false);
        }
        // A load into a register through a held register without a
        // tangent leaves the register's new tangent there (`held`).
        let free_held = self.held & !self.tangent_registers();
        let n = if free_held != 0 { free_held } else { dead }.trailing_zeros();
        let temp = Register::XMM0 + n;
        self.drop_tangents_in(1 << n);
        let l = *self.layout;
        let sr = l.shadow_regs;
        let memory = matches!(src, MoveSide::Memory) || matches!(dst, MoveSide::Memory);
        let mut shadow = MemoryOperand::with_base(Register::RAX);
        let mut scratch = None;
        if memory {
            scratch = self.address_scratch(insn);
            match scratch {
                Some(r) => shadow = self.shadow_operand_in_scratch(insn, r)?,
                None => self.shadow_address_in_spilled_rax(insn)?,
            }
        }
        let operand = |side: MoveSide| match side {
            MoveSide::Register(off) => gs_operand(sr + off),
            MoveSide::Memory => shadow,
        };
        self.load_shadow(temp, operand(src), u32::from(len), vex);
        // The load (from memory in every case) zero-extends the temporary
        // to 16 bytes at least: a register destination that is zeroed that
        // far takes them in the same store.
        let (store, z) = match dst {
            MoveSide::Register(_) if len < 16 && u32::from(len) + u32::from(zero) >= 16 => (
                if vex {
                    VEX_Vmovdqu_xmmm128_xmm
                } else {
                    Movdqu_xmmm128_xmm
                },
                16 - u32::from(len),
            ),
            _ => (store, 0),
        };
        self.asm(Instruction::with2(store, operand(dst), temp));
        if let MoveSide::Register(off) = dst {
            let from = sr + off + u32::from(len) + z;
            self.zero_shadow_bytes(from, u32::from(zero).saturating_sub(z));
            if matches!(src, MoveSide::Memory) && !vex && u32::from(len) + u32::from(zero) >= 16 {
                // The register's first 16 shadow bytes are the temporary's.
                self.loaded_tangent(n, off, len);
            }
        }
        match scratch {
            Some(r) => self.e.load_gs(Gpr(r.number() as u8), l.spill_scratch),
            None if memory => self.e.load_gs(Gpr::RAX, l.spill_rax),
            None => {}
        }
        Ok(true)
    }

    /// A general register for the shadow address of `insn`'s memory
    /// operand: one `insn` does not use, and where there is one, one that
    /// none of the next [`SCRATCH_WINDOW`] instructions names, so that its
    /// save and reload stay off the guest's dependency chains (`rax`,
    /// which compiled loops index with, put a store-to-load round trip on
    /// the way to every next access's address). `None` (take `rax`) for an
    /// operand with a segment override, whose address needs the `fs` base,
    /// or without the run's register table.
    fn address_scratch(&self, insn: &Instruction) -> Option<Register> {
        if insn.segment_prefix() != Register::None {
            return None;
        }
        // `rax` counts as busy: without another register, the caller's
        // `rax` path (its own slot) serves.
        let own = *self.gprs_named.get(self.index)? | 1 << Register::RAX.number();
        let end = self.gprs_named.len().min(self.index + 1 + SCRATCH_WINDOW);
        let soon = self.gprs_named[self.index + 1..end]
            .iter()
            .fold(0u16, |m, &g| m | g);
        free_gpr(own | soon).or_else(|| free_gpr(own))
    }

    /// `[r + SHADOW_OFFSET]`, the shadow of `insn`'s memory operand, with
    /// the guest's `r` in the scratch slot (the map entry says so); the
    /// caller loads it back. Clobbers the flags.
    fn shadow_operand_in_scratch(
        &mut self,
        insn: &Instruction,
        r: Register,
    ) -> Result<MemoryOperand, TranslateError> {
        let g = Gpr(r.number() as u8);
        if let Some(e) = self.insn_map.last_mut().filter(|e| e.guest_pc == insn.ip()) {
            e.spills |= SPILLS_SCRATCH;
            e.scratch = g.0;
        }
        self.e.store_gs(self.layout.spill_scratch, g);
        self.lea_of_operand(r, insn);
        self.asm(Instruction::with2(
            Code::Xor_r64_rm64,
            r,
            gs_operand(self.layout.shadow_mask),
        ));
        Ok(MemoryOperand::with_base_displ(
            r,
            shadowmem::SHADOW_OFFSET as i64,
        ))
    }

    /// `t` = `bytes` (4, 8, 16 or 32) of shadow at `m`, in the legacy or
    /// VEX encoding; 16 as two 8-byte loads: the shadow was often written 8
    /// bytes at a time just before (a scalar result's), and a 16-byte load
    /// over a narrower store waits for it to reach the cache instead of
    /// taking it from the store buffer.
    fn load_shadow(&mut self, t: Register, m: MemoryOperand, bytes: u32, vex: bool) {
        use Code::*;
        match bytes {
            32 => self.asm(Instruction::with2(VEX_Vmovdqu_ymm_ymmm256, t, m)),
            16 => {
                let x = Register::XMM0 + t.number() as u32;
                let mut upper = m;
                upper.displacement += 8;
                upper.displ_size = upper.displ_size.max(1);
                if vex {
                    self.asm(Instruction::with2(VEX_Vmovsd_xmm_m64, x, m));
                    self.asm(Instruction::with3(VEX_Vmovhpd_xmm_xmm_m64, x, x, upper));
                } else {
                    self.asm(Instruction::with2(Movsd_xmm_xmmm64, x, m));
                    self.asm(Instruction::with2(Movhpd_xmm_m64, x, upper));
                }
            }
            _ => {
                let x = Register::XMM0 + t.number() as u32;
                let code = match (bytes, vex) {
                    (8, false) => Movsd_xmm_xmmm64,
                    (8, true) => VEX_Vmovsd_xmm_m64,
                    (_, false) => Movss_xmm_xmmm32,
                    (_, true) => VEX_Vmovss_xmm_m32,
                };
                self.asm(Instruction::with2(code, x, m));
            }
        }
    }

    /// Zeroes `len` bytes (a multiple of 4) of the shadow register file
    /// from `gs:disp`, 8 bytes at a time where it can.
    fn zero_shadow_bytes(&mut self, disp: u32, len: u32) {
        let mut z = 0;
        while z < len {
            let piece = if len - z >= 8 { 8 } else { 4 };
            self.e.zero_gs(disp + z, piece);
            z += u32::from(piece);
        }
    }

    /// Marks the current instruction's code as spilling `regs` (the map
    /// entry just pushed for it).
    fn spilled(&mut self, insn: &Instruction, regs: u8) {
        if let Some(e) = self.insn_map.last_mut().filter(|e| e.guest_pc == insn.ip()) {
            e.spills |= regs;
        }
    }

    /// [`Self::shadow_address_in_rax`] after saving the guest's `rax` in
    /// its slot (the instruction's map entry says so); the caller loads it
    /// back.
    fn shadow_address_in_spilled_rax(&mut self, insn: &Instruction) -> Result<(), TranslateError> {
        self.shadow_operand_in_spilled_rax(insn)?;
        self.e.shadow_offset_rax();
        Ok(())
    }

    /// [`Self::shadow_address_in_spilled_rax`] without its last addition:
    /// returns `[rax + SHADOW_OFFSET]`, the shadow of `insn`'s memory
    /// operand as an operand for the one access that follows (one
    /// instruction fewer, one step shorter to the address).
    fn shadow_operand_in_spilled_rax(
        &mut self,
        insn: &Instruction,
    ) -> Result<MemoryOperand, TranslateError> {
        self.spilled(insn, SPILLS_RAX);
        self.e.store_gs(self.layout.spill_rax, Gpr::RAX);
        self.masked_address_in_rax(insn)?;
        Ok(shadow_of_masked_rax())
    }

    /// `rax` = the shadow address of `insn`'s memory operand: `lea rax,
    /// <operand>` (re-encoded here, so RIP-relative operands stay right),
    /// then the shadow mask applied.
    fn shadow_address_in_rax(&mut self, insn: &Instruction) -> Result<(), TranslateError> {
        self.masked_address_in_rax(insn)?;
        self.e.shadow_offset_rax();
        Ok(())
    }

    /// `rax` = `insn`'s memory operand's address with the shadow mask
    /// applied: its shadow address less `SHADOW_OFFSET`.
    fn masked_address_in_rax(&mut self, insn: &Instruction) -> Result<(), TranslateError> {
        self.lea_of_operand(Register::RAX, insn);
        if insn.segment_prefix() == Register::FS {
            // Thread-local data: add the fs base, read with `rdfsbase`
            // (not from fs:0, where the ELF TLS ABI keeps the thread
            // pointer but Go's runtime keeps other data), through rcx
            // kept in a slot. No flags change.
            let slot = gs_operand(self.layout.fs_tmp);
            self.asm(Instruction::with2(Code::Mov_rm64_r64, slot, Register::RCX));
            self.asm(Instruction::with1(Code::Rdfsbase_r64, Register::RCX));
            self.asm(Instruction::with2(
                Code::Lea_r64_m,
                Register::RAX,
                MemoryOperand::with_base_index(Register::RAX, Register::RCX),
            ));
            self.asm(Instruction::with2(Code::Mov_r64_rm64, Register::RCX, slot));
        }
        self.e.shadow_mask_rax(self.layout.shadow_mask);
        Ok(())
    }

    /// An exit to the runtime that applies the instruction's AD semantics
    /// and comes back right after its record, where the instruction
    /// follows. The record is followed by the address of the decoded
    /// instruction (an [`InstrumentRecord`]), so the runtime neither reads
    /// nor decodes guest code again. Where it comes back is *inside* the
    /// instruction, not a boundary: the AD semantics are applied there and
    /// the instruction not yet run, and the inline code's fast path reaches
    /// the same place the same way. A signal delivered there would run the
    /// instruction again from its start after the handler, AD code
    /// included, applying it twice (a tangent added again, a block
    /// recorded over the result's own index): it is delivered at the next
    /// boundary instead.
    fn instrument_call(&mut self, insn: &Instruction) {
        // The runtime sees and saves the guest's registers; after it the
        // held registers hold their tangents again, from the file.
        let (held, entries) = (self.held, self.tangent_in);
        self.release_held(u16::MAX);
        let resume = core::mem::size_of::<InstrumentRecord>() as i32;
        self.stub_and_record(insn.ip(), ExitKind::Instrument, resume);
        // Translations are never freed, so neither is their instruction.
        let decoded: &'static Instruction = Box::leak(Box::new(*insn));
        self.e
            .bytes(&(decoded as *const Instruction as u64).to_le_bytes());
        self.inside(insn.ip(), 0, 0);
        self.hold(held);
        self.reload_tangents(entries);
    }

    /// Copies a guest instruction, re-encoding it at the cache address when
    /// it has a RIP-relative operand.
    fn copy(&mut self, insn: &Instruction, bytes: &[u8]) -> Result<(), TranslateError> {
        if !insn.is_ip_rel_memory_operand() {
            self.e.bytes(bytes);
            return Ok(());
        }
        if self.encode_here(insn).is_ok() {
            return Ok(());
        }
        self.copy_absolute(insn)
    }

    /// Copies `insn`, whose RIP-relative operand is out of rel32 reach of
    /// the cache address (data more than 2 GiB from where the block could
    /// be placed, or code far from any free cache memory), with the
    /// operand's absolute address in a scratch register the instruction
    /// does not use, spilled to the context around it:
    /// `mov gs:[scratch], r; mov r, imm64; <insn with [r]>; mov r,
    /// gs:[scratch]`. Flags are untouched.
    fn copy_absolute(&mut self, insn: &Instruction) -> Result<(), TranslateError> {
        let out = || TranslateError::OutOfReach(insn.ip());
        if insn.memory_base() != Register::RIP {
            return Err(out()); // EIP-relative (addr32): not rewritten
        }
        let scratch = scratch_register(insn).ok_or_else(out)?;
        let gpr = Gpr(scratch.number() as u8);
        let slot = self.layout.spill_scratch;
        let (spills, stack_bias, tangents) = self
            .insn_map
            .last()
            .filter(|e| e.guest_pc == insn.ip())
            .map_or((0, 0, self.dirty), |e| (e.spills, e.stack_bias, e.tangents));
        self.e.store_gs(slot, gpr);
        self.insn_map.push(InsnMapEntry {
            cache_off: self.e.offset() as u32,
            guest_pc: insn.ip(),
            boundary: false,
            spills: spills | SPILLS_SCRATCH,
            stack_bias,
            scratch: gpr.0,
            tangents,
            held: self.held,
            flags_dead: false,
        });
        self.e.mov_imm64(gpr, insn.ip_rel_memory_address());
        let mut absolute = *insn;
        absolute.set_memory_base(scratch);
        absolute.set_memory_displacement64(0);
        absolute.set_memory_displ_size(0);
        self.encode_here(&absolute).map_err(|_| out())?;
        self.e.load_gs(gpr, slot);
        Ok(())
    }

    /// `mov rcx, <operand of the indirect call/jmp>`.
    fn load_target_into_rcx(&mut self, insn: &Instruction) -> Result<(), TranslateError> {
        if insn.op0_kind() == OpKind::Register {
            self.asm(Instruction::with2(
                Code::Mov_r64_rm64,
                Register::RCX,
                insn.op0_register(),
            ));
            return Ok(());
        }
        let mem = memory_operand_of(insn, insn.segment_prefix());
        let mov = Instruction::with2(Code::Mov_r64_rm64, Register::RCX, mem)
            .expect("mov rcx, m64 is always encodable");
        if self.encode_here(&mov).is_ok() {
            return Ok(());
        }
        // A slot out of reach: its absolute address, then the load.
        if insn.memory_base() != Register::RIP {
            return Err(TranslateError::OutOfReach(insn.ip()));
        }
        self.e.mov_imm64(Gpr::RCX, insn.ip_rel_memory_address());
        let at_rcx = MemoryOperand::new(
            Register::RCX,
            Register::None,
            1,
            0,
            0,
            false,
            insn.segment_prefix(),
        );
        self.asm(Instruction::with2(
            Code::Mov_r64_rm64,
            Register::RCX,
            at_rcx,
        ));
        Ok(())
    }

    /// `lea reg, <insn's memory operand>`, re-encoded here so RIP-relative
    /// operands stay right; the absolute address as an immediate when the
    /// operand is out of reach from here or a 64-bit absolute one.
    fn lea_of_operand(&mut self, reg: Register, insn: &Instruction) {
        let mem = memory_operand_of(insn, Register::None);
        let lea = Instruction::with2(Code::Lea_r64_m, reg, mem).expect("lea r64, m is encodable");
        if self.encode_here(&lea).is_err() {
            // Only an operand without base and index fails: RIP-relative
            // (iced keeps the absolute target as its displacement) or a
            // 64-bit absolute address (`mov rax, [moffs64]`).
            self.asm(Instruction::with2(
                Code::Mov_r64_imm64,
                reg,
                insn.memory_displacement64(),
            ));
        }
    }

    /// The inline indirect-branch lookup and jump. On entry guest `rcx` is
    /// in its lookup slot, `rsp` is the target's and the guest target is
    /// in `rcx`. The site only indexes the table by the target's low 16
    /// bits and jumps through it, touching no flags; the translation it reaches checks that it is
    /// the target's ([`Self::entry_prologue`]) and restores guest `rax` and
    /// `rcx`. An empty entry leads to the miss entry of the runtime.
    fn ibl_jump(&mut self) {
        let l = *self.layout;
        self.e.store_rsp(LOOKUP_SLOT_RAX, Gpr::RAX);
        self.e.movzx_eax_cx();
        self.e.jmp_gs_rax8(l.ibl_values);
    }

    /// Compares the guest code `bytes` at `guest_pc` with their values at
    /// translation time (literals), keeping every register and flag; goes on
    /// at offset `body` when all are equal, else at the `Verify` exit stub
    /// at offset `stub`. The loads are aligned 8-byte words, a word the
    /// block covers only in part compared under a mask: a guest that sets
    /// the alignment-check flag (AC) must not fault on the check's loads
    /// (an aligned word lies in one page with a byte of the block, so it
    /// is mapped).
    fn code_check(
        &mut self,
        bytes: &[u8],
        guest_pc: u64,
        stub: usize,
        body: usize,
    ) -> Result<(), TranslateError> {
        let l = *self.layout;
        let end = guest_pc + bytes.len() as u64;
        self.save_flags();
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        let mut differ = Vec::new();
        let mut word = guest_pc & !7;
        while word < end {
            let (mut value, mut mask) = ([0u8; 8], [0u8; 8]);
            for k in 0..8 {
                let a = word + k as u64;
                if a >= guest_pc && a < end {
                    value[k] = bytes[(a - guest_pc) as usize];
                    mask[k] = 0xff;
                }
            }
            // mov rax, [rip + word]; out of reach: mov rax, word; mov rax, [rax]
            if let Some(rel) = rel32_for(self.e.pc() + 3, word) {
                let field = self.e.rip_placeholder(&[0x48, 0x8b, 0x05]);
                self.e.code[field..field + 4].copy_from_slice(&rel.to_le_bytes());
            } else {
                self.e.mov_imm64(Gpr::RAX, word);
                self.e.bytes(&[0x48, 0x8b, 0x00]);
            }
            if mask != [0xff; 8] {
                // and rax, [rip + mask]
                let lit = self.e.rip_placeholder(&[0x48, 0x23, 0x05]);
                self.literals.push((lit, u64::from_le_bytes(mask)));
            }
            // cmp rax, [rip + value]
            let lit = self.e.rip_placeholder(&[0x48, 0x3b, 0x05]);
            self.literals.push((lit, u64::from_le_bytes(value)));
            differ.push(self.e.jne32_placeholder());
            word += 8;
        }
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        self.restore_flags();
        let same = self.e.jmp32_placeholder();
        self.e.bind_rel32(same, body);
        let here = self.e.offset();
        for f in differ {
            self.e.bind_rel32(f, here);
        }
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        self.restore_flags();
        let changed = self.e.jmp32_placeholder();
        self.e.bind_rel32(changed, stub);
        Ok(())
    }

    /// Bumps the hit counter when [`TranslateOptions::count_ibl_hits`] is
    /// set (clobbers `rcx`, not the flags).
    fn count_ibl_hit(&mut self) {
        if self.count_ibl_hits {
            let l = *self.layout;
            self.e.load_gs(Gpr::RCX, l.ibl_hits);
            self.e.inc_rcx_keep_flags();
            self.e.store_gs(l.ibl_hits, Gpr::RCX);
        }
    }

    /// The start of every translation: the complement of the block's
    /// guest address, then the entry of lookup-table hits
    /// ([`LOOKUP_OFF`]), reached with the target in `rcx` and guest `rax`
    /// and `rcx` in the lookup slots below the red zone
    /// ([`LOOKUP_SLOT_RAX`]). It checks that the target is this
    /// block's guest address with `lea` and `jrcxz`, which leave the flags
    /// alone (the site may have live flags, and a lookup may land on
    /// another block of its table set, whose check fails), restores `rax`
    /// and `rcx`, and goes on into the block; a different target leaves
    /// for the runtime's miss entry with the target in `rcx`. Direct links
    /// and the runtime enter after it ([`Translation::entry_off`]).
    fn entry_prologue(&mut self, guest_pc: u64) {
        self.e.bytes(&(!guest_pc).to_le_bytes());
        debug_assert_eq!(self.e.offset() as u32, LOOKUP_OFF);
        self.insn_map.push(InsnMapEntry {
            cache_off: self.e.offset() as u32,
            guest_pc,
            boundary: false,
            spills: SPILLS_RAX_STACK | SPILLS_RCX_STACK,
            stack_bias: 0,
            scratch: 0,
            tangents: 0,
            held: 0,
            flags_dead: false,
        });
        // rcx − guest_pc, from rax = !guest_pc; on a miss, back to the
        // target, out of line. The key is an immediate: loading the
        // literal in front (which the runtime reads) from the line being
        // executed made CPython's loop 3–6% slower (decision 21).
        self.e.mov_imm64(Gpr::RAX, !guest_pc);
        self.e.rcx_minus_not_rax();
        let hit = self.e.jrcxz_placeholder();
        let miss = self.e.jmp32_placeholder();
        self.e.bind_rel8(hit);
        self.entry_miss = Some(miss);
        self.count_ibl_hit();
        self.e.load_rsp(Gpr::RAX, LOOKUP_SLOT_RAX);
        self.e.load_rsp(Gpr::RCX, LOOKUP_SLOT_RCX);
        self.entry_off = self.e.offset() as u32;
    }

    /// An exit stub followed by its record; `patch` is the offset of a
    /// rel32 field that branches here.
    fn exit_stub(&mut self, target: u64, kind: ExitKind, patch: Option<usize>) {
        let stub = self.e.offset();
        let record = stub + EXIT_STUB_LEN;
        let patch_rel = patch.map_or(0, |f| f as i64 - record as i64) as i32;
        self.stub_and_record(target, kind, patch_rel);
        if let Some(field) = patch {
            self.e.bind_rel32(field, stub);
        }
    }

    /// The part every exit shares: the stub (save `rax`, point it at the
    /// record, leave through `enter_exit`) and the record's target, kind
    /// and 32-bit field.
    fn stub_and_record(&mut self, target: u64, kind: ExitKind, field: i32) {
        let stub = self.e.offset();
        self.e.store_gs(self.layout.spill_rax, Gpr::RAX);
        let rel = self.e.lea_rax_rip_placeholder();
        self.e.jmp_gs(if kind == ExitKind::ClientRequest {
            self.layout.enter_request
        } else {
            self.layout.enter_exit
        });
        let record = self.e.offset();
        debug_assert_eq!(record - stub, EXIT_STUB_LEN);
        self.e.bind_rel32(rel, record);
        self.e.bytes(&target.to_le_bytes());
        self.e.bytes(&(kind as u32).to_le_bytes());
        self.e.bytes(&field.to_le_bytes());
        self.exits.push(record);
    }

    /// Emits the pending exit stubs and the literal pool; returns where
    /// the pool starts.
    fn finish_exits(&mut self) -> usize {
        for (field, target, kind) in std::mem::take(&mut self.pending) {
            self.exit_stub(target, kind, Some(field));
        }
        if let Some(miss) = self.entry_miss.take() {
            let here = self.e.offset();
            self.e.bind_rel32(miss, here);
            self.e.not_rax();
            self.e.add_rax_to_rcx_keep_flags();
            self.e.jmp_gs(self.layout.enter_ibl_miss);
        }
        let literals_start = self.e.offset();
        for (field, value) in std::mem::take(&mut self.literals) {
            while !self.e.offset().is_multiple_of(8) {
                self.e.bytes(&[0xcc]);
            }
            let at = self.e.offset();
            self.e.bytes(&value.to_le_bytes());
            self.e.bind_rel32(field, at);
        }
        literals_start
    }
}

/// A general register `insn` does not use, explicitly or implicitly, to
/// hold the absolute address of its memory operand.
fn scratch_register(insn: &Instruction) -> Option<Register> {
    let mut factory = InstructionInfoFactory::new();
    let used = factory
        .info(insn)
        .used_registers()
        .iter()
        .map(|u| u.register())
        .filter(|r| r.is_gpr())
        .fold(0u16, |m, r| m | 1 << r.full_register().number());
    free_gpr(used)
}

/// The first general register, in the order inserted code takes them as
/// scratch (`rsp` never), whose bit (its number) is clear in `busy`.
fn free_gpr(busy: u16) -> Option<Register> {
    use Register::*;
    [
        R11, R10, R9, R8, RBX, RSI, RDI, RBP, R12, R13, R14, R15, RDX, RCX, RAX,
    ]
    .into_iter()
    .find(|r| busy & 1 << r.number() == 0)
}

/// Instructions ahead whose general registers [`Translator::address_scratch`]
/// avoids.
const SCRATCH_WINDOW: usize = 24;

/// `gs:[disp]`, an operand in the thread context.
fn gs_operand(disp: u32) -> MemoryOperand {
    // Displacement size 8: 64-bit addressing, `[disp32]` through a SIB
    // byte. With 4, iced takes 32-bit addressing and adds the 0x67
    // prefix: the same address for the context's small offsets, one
    // prefix more, measurably slower in dot mode's loops (decision 56).
    MemoryOperand::new(
        Register::None,
        Register::None,
        1,
        i64::from(disp),
        8,
        false,
        Register::GS,
    )
}

/// The memory operand of `insn` as an operand for inserted code, with the
/// given segment override (RIP-relative operands keep their absolute
/// target, so the encoder re-targets them at the new address).
fn memory_operand_of(insn: &Instruction, segment: Register) -> MemoryOperand {
    MemoryOperand::new(
        insn.memory_base(),
        insn.memory_index(),
        insn.memory_index_scale(),
        insn.memory_displacement64() as i64,
        insn.memory_displ_size(),
        false,
        segment,
    )
}

/// The instructions of the block starting at `guest_pc` as far as it runs
/// straight (through conditional branches, to the first other control
/// transfer, system call or `cpuid`: the instructions it translates), for
/// the flags liveness of the instrumentation.
fn straight_line(
    window: &[u8],
    guest_pc: u64,
    max: usize,
    stop_before: Option<fn(u64) -> bool>,
) -> Vec<Instruction> {
    let mut out = Vec::new();
    for insn in Decoder::with_ip(64, window, guest_pc, DecoderOptions::NONE) {
        if insn.is_invalid()
            || out.len() >= max.min(MAX_BLOCK_INSNS)
            || (!out.is_empty() && stop_before.is_some_and(|stop| stop(insn.ip())))
        {
            break;
        }
        out.push(insn);
        let side_exit = insn.flow_control() == FlowControl::ConditionalBranch
            && insn.condition_code() != ConditionCode::None;
        if (insn.flow_control() != FlowControl::Next && !side_exit)
            || matches!(insn.code(), Code::Syscall | Code::Cpuid)
        {
            break;
        }
    }
    out
}

/// Valgrind's amd64 client-request preamble (`rol rdi,3; rol rdi,13;
/// rol rdi,61; rol rdi,51`, a no-op natively) and the `xchg rbx,rbx` that
/// marks the request.
const CLIENT_REQUEST: [u8; 19] = [
    0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d, 0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33,
    0x48, 0x87, 0xdb,
];

/// `[rax + SHADOW_OFFSET]`: the shadow of the address whose masked form
/// (`Emitter::shadow_mask_rax`) `rax` holds.
pub(super) fn shadow_of_masked_rax() -> MemoryOperand {
    MemoryOperand::with_base_displ(Register::RAX, shadowmem::SHADOW_OFFSET as i64)
}

/// The length of the client-request sequence if `code` starts with one.
fn client_request_at(code: &[u8]) -> Option<usize> {
    code.starts_with(&CLIENT_REQUEST)
        .then_some(CLIENT_REQUEST.len())
}

fn is_near_direct(insn: &Instruction) -> bool {
    matches!(insn.op0_kind(), OpKind::NearBranch64)
}

fn is_near_indirect(insn: &Instruction) -> bool {
    matches!(insn.code(), Code::Call_rm64 | Code::Jmp_rm64)
}

/// The value a linked branch's rel32 field must hold to reach `target`, if
/// it is in reach; exposed for the runtime's linker.
pub fn link_field_value(field_addr: u64, target: u64) -> Option<i32> {
    rel32_for(field_addr, target)
}
