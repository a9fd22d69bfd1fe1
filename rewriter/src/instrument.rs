//! What record mode does for each guest instruction, decided at
//! translation time from the semantics table: nothing, clear some register
//! shadows inline, or call the runtime, which applies the full semantics.

use crate::semantics::{semantics, Elem, FpOp, Semantics, Shape, SpecialKind};
use iced_x86::{
    EncodingKind, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind, Register,
};
use shadowmem::RegFile;

/// The instrumentation of one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Writes nothing a shadow tracks.
    Nothing,
    /// Writes only registers, with values that carry no derivative: zero
    /// these `(offset in the shadow register file, bytes)` ranges inline.
    ClearRegisters(Vec<(u32, u8)>),
    /// `movzx` from a general register: the source's low `size` shadow
    /// bytes, zero-extended, become the destination's shadow.
    ExtendRegister {
        /// Shadow of the destination register.
        dst: u32,
        /// Shadow of the source register.
        src: u32,
        /// Source size in bytes (1 or 2).
        size: u8,
    },
    /// `mov` between general registers: copy the source's shadow
    /// (`narrow`: 32-bit, the upper half becomes passive).
    CopyRegister {
        /// Shadow of the destination register (offset in the register file).
        dst: u32,
        /// Shadow of the source register.
        src: u32,
        /// A 32-bit move.
        narrow: bool,
    },
    /// `mov reg, [mem]` (8 or 4 bytes): shadow of the memory operand into
    /// the register's shadow. Needs dead flags (the shadow address is
    /// computed with `xor`).
    LoadShadow {
        /// Shadow of the destination register.
        dst: u32,
        /// Operand size in bytes (8, 4, 2 or 1).
        size: u8,
        /// The destination register's whole shadow is written (the
        /// loaded bytes zero-extended: 32- and 64-bit moves, `movzx`);
        /// otherwise only `size` bytes (8- and 16-bit moves).
        extend: bool,
    },
    /// `mov [mem], reg` (8, 4, 2 or 1 bytes): the register's shadow to the
    /// memory operand's shadow. Needs dead flags.
    StoreShadow {
        /// Shadow of the source register.
        src: u32,
        /// Operand size in bytes.
        size: u8,
    },
    /// `push`: the shadow of the 8 bytes below `rsp` becomes the source
    /// register's shadow (`None`: an immediate, passive). Needs dead flags.
    Push {
        /// Shadow of the pushed register.
        src: Option<u32>,
    },
    /// `pop reg` (not `rsp`): the shadow of the 8 bytes at `rsp` becomes
    /// the register's. Needs dead flags.
    Pop {
        /// Shadow of the destination register.
        dst: u32,
    },
    /// `leave` (`mov rsp, rbp; pop rbp`): the shadow of the 8 bytes at
    /// `rbp` becomes `rbp`'s, `rsp`'s is passive (as the runtime's rule
    /// has it). Needs dead flags.
    Leave {
        /// Shadow of `rbp`.
        rbp: u32,
        /// Shadow of `rsp`.
        rsp: u32,
    },
    /// `mov [mem], imm`: the memory operand's shadow becomes passive.
    /// Needs dead flags.
    ZeroShadow {
        /// Operand size in bytes.
        size: u8,
    },
    /// A vector move between registers or with memory: copy `len` shadow
    /// bytes from `src` to `dst`, then zero `zero` bytes after them in the
    /// destination register (scalar loads, VEX zero-extension). Memory
    /// sides need dead flags.
    VectorMove {
        /// Where the data comes from.
        src: MoveSide,
        /// Where it goes.
        dst: MoveSide,
        /// Bytes moved (a multiple of 4).
        len: u8,
        /// Destination-register bytes zeroed after the moved ones.
        zero: u8,
    },
    /// An EVEX move under a mask register (`vmovdqu8 [m]{k1}, zmm1`,
    /// `vmovupd zmm1{k2}{z}, [m]`, …): the same instruction, with the same
    /// mask and element size, moves the shadows — shadow bytes follow their
    /// data bytes one for one, so the elements the mask leaves alone keep
    /// their shadows, and `{z}` zeroes the shadows of those it zeroes. Run
    /// on a vector temporary saved around it (`ContextLayout::vec_tmp`).
    /// Memory sides need dead flags. Byte and word masks (`vmovdqu8`,
    /// `vmovdqu16`) could take a value apart — copy part of a 4-byte
    /// index — so their code first checks that the mask selects whole
    /// 4-byte units, and leaves any other mask to the runtime (which
    /// reports a value taken apart): these need dead flags in any case.
    MaskedMove {
        /// Where the data comes from.
        src: MoveSide,
        /// Where it goes.
        dst: MoveSide,
        /// Mask bits per 4-byte unit to check for being all set or all
        /// clear: 4 (bytes), 2 (words), or 0 (no check).
        unit_bits: u8,
    },
    /// A VEX scalar merge of three operands: record mode's conversions
    /// between float and double (`vcvtss2sd`, `vcvtsd2ss xmm1, xmm2,
    /// xmm3/m`), whose converted lane keeps the source's index, and the
    /// register forms of `vmovss`/`vmovsd xmm1, xmm2, xmm3`: the low lane
    /// from the last source, the rest of the xmm from the first, and
    /// everything above 16 bytes zero. A memory source needs dead flags.
    ConvertIndex {
        /// The low lane's source: a register's shadow, or the memory operand.
        src: MoveSide,
        /// The first source's shadow (the rest of the xmm).
        src1: u32,
        /// The destination's shadow.
        dst: u32,
        /// What the low lane is.
        low: LowLane,
    },
    /// SSE2 / AVX `add/sub/mul/div sd/pd`, VEX `vfmadd…/vfmsub…/vfnmadd…/
    /// vfnmsub… sd/pd` (two blocks per lane): record one block per lane
    /// inline when the thread's tape chunk has room and every operand index
    /// is older than the next index; otherwise call the runtime (nothing is
    /// written before that decision). Needs dead flags.
    Arithmetic(Arithmetic),
    /// Any other data-flow instruction whose inputs all turn out passive
    /// has passive outputs: check the read registers' shadows (8-byte
    /// pieces at `checks`) and the memory operand's, and if all are zero,
    /// clear the written registers' (`clears`) and the written memory
    /// operand's inline; otherwise call the runtime. With `save_flags` the
    /// flags are live and kept around the checks.
    AllPassive {
        /// Shadow pieces (8 bytes each) of the registers read.
        checks: Vec<u32>,
        /// Shadow pieces of the registers written.
        clears: Vec<(u32, u8)>,
        /// The memory operand, if any.
        memory: Option<MemoryAccess>,
        /// The flags are live: save and restore them.
        save_flags: bool,
    },
    /// A plan that needs dead flags, run between a save and a restore of
    /// the live flags (only straight-line shadow moves, which never leave
    /// for the runtime).
    SaveFlags(Box<Plan>),
    /// Dot mode: SSE/AVX `add`, `sub`, `mul`, `div`, `min`, `max` or VEX FMA of floats or
    /// doubles (scalar, or packed in an xmm or ymm register, unmasked):
    /// the tangent computed inline by vector code on the shadows, with
    /// registers the instruction does not name as temporaries (saved in
    /// the tool area around it). A memory operand needs dead flags.
    DotArithmetic(DotArithmetic),
    /// An SSE/AVX lane shuffle, unpack or blend whose pieces are 4 or 8
    /// bytes (`unpckhpd`, `shufps`, `pshufd`, `movddup`, `blendpd`, …,
    /// legacy or VEX, xmm or ymm, unmasked): the same instruction run on
    /// the operands' shadows in two vector temporaries — what the runtime's
    /// rule for moves does, since the shadow bytes move as the data does
    /// (whole 4-byte granules: no index is split). A memory operand needs
    /// dead flags.
    ShadowShuffle,
    /// Everything else: the runtime applies the semantics before the
    /// instruction runs.
    Runtime,
}

impl Plan {
    /// Whether the plan's inline code touches general registers' shadows
    /// and memory only (no vector register, no vector register's shadow).
    /// `SaveFlags` counts: its inner plan is asked again.
    pub fn general_registers_and_memory_only(&self) -> bool {
        matches!(
            self,
            Plan::Nothing
                | Plan::CopyRegister { .. }
                | Plan::LoadShadow { .. }
                | Plan::StoreShadow { .. }
                | Plan::Push { .. }
                | Plan::Pop { .. }
                | Plan::Leave { .. }
                | Plan::ZeroShadow { .. }
                | Plan::ExtendRegister { .. }
                | Plan::SaveFlags(_)
        )
    }
}

/// The operands of a [`Plan::DotArithmetic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DotArithmetic {
    /// Add, Sub, Mul, Div, Min, Max, or a VEX FMA (not the alternating
    /// forms).
    pub op: FpOp,
    /// Float or double lanes.
    pub elem: Elem,
    /// One lane (`sd`/`ss`), else the whole register.
    pub scalar: bool,
    /// The register's width in bytes (16 or 32).
    pub width: u8,
    /// The destination register.
    pub dst: Register,
    /// The first source (the destination for legacy SSE).
    pub src1: Register,
    /// The second source: a register, or `None` for the memory operand.
    pub src: Option<Register>,
    /// VEX encoding (else legacy SSE).
    pub vex: bool,
}

/// The explicit memory operand of a [`Plan::AllPassive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryAccess {
    /// Operand size in bytes (1, 2, 4, 8, 16, 32 or 64).
    pub bytes: u8,
    /// The instruction reads it.
    pub read: bool,
    /// The instruction writes it.
    pub written: bool,
}

/// The operands of a [`Plan::Arithmetic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arithmetic {
    /// The operation.
    pub op: crate::semantics::FpOp,
    /// Lanes (1 scalar, 2 or 4 packed).
    pub lanes: u8,
    /// Shadow of the destination register.
    pub dst: u32,
    /// The first source register (the destination for legacy SSE):
    /// its number, for its values.
    pub src1: Register,
    /// The second source: a register's shadow, or the memory operand.
    pub src: MoveSide,
    /// VEX encoding: scalar forms take bytes 8..16 from the first
    /// source, and everything above the vector length becomes zero.
    pub vex: bool,
    /// Floats (`ss`/`ps`, 4-byte lanes) rather than doubles.
    pub float: bool,
}

/// The low lane of a [`Plan::ConvertIndex`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LowLane {
    /// A float (4 bytes; bytes 4..8 come from the first source).
    Float,
    /// A double (its 8 shadow bytes copied).
    Double,
    /// A float's index widened to a double's (zero-extended to 8 bytes).
    FloatToDouble,
}

/// One side of a [`Plan::VectorMove`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveSide {
    /// The shadow register file, at this offset.
    Register(u32),
    /// The instruction's memory operand (its shadow).
    Memory,
}

/// A shift or rotate of a general register by a constant multiple of 8
/// bits only moves bytes (e.g. `shr rax, 32` unpacking the upper float of a
/// packed pair), so it is a move for the shadows, not a passive result.
pub fn byte_granular_shift(insn: &Instruction) -> bool {
    matches!(
        insn.mnemonic(),
        Mnemonic::Shl
            | Mnemonic::Shr
            | Mnemonic::Sal
            | Mnemonic::Rol
            | Mnemonic::Ror
            | Mnemonic::Shld
            | Mnemonic::Shrd
            | Mnemonic::Rorx
    ) && (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Immediate8)
        && insn.immediate8().is_multiple_of(8)
        && insn.op0_kind() == OpKind::Register
}

/// A vector shift or rotate of qword (dword) lanes by a multiple of 32
/// bits: it moves whole 4-byte shadow granules (two floats swapped by
/// `vprolq x, 32`, the upper float brought down by `psrlq x, 32`), so its
/// replay on shadows is exact.
pub fn granule_shift(insn: &Instruction) -> bool {
    use Mnemonic as M;
    let last = insn.op_count().saturating_sub(1);
    matches!(
        insn.mnemonic(),
        M::Vprolq | M::Vprorq | M::Vprold | M::Vprord | M::Psllq | M::Psrlq | M::Vpsllq | M::Vpsrlq
    ) && insn.op0_kind() == OpKind::Register
        && insn.op_kind(last) == OpKind::Immediate8
        && insn.immediate8().is_multiple_of(32)
}

/// Conversions to or from 16-bit floating-point formats (F16C's half
/// precision, AVX-512 BF16): a 2-byte value has no index granule of its
/// own, so an active input loses its derivative — reported, never silent.
pub fn half_precision_conversion(insn: &Instruction) -> bool {
    use Mnemonic as M;
    matches!(
        insn.mnemonic(),
        M::Vcvtps2ph | M::Vcvtph2ps | M::Vcvtneps2bf16 | M::Vcvtne2ps2bf16 | M::Vdpbf16ps
    )
}

/// `btr`/`bts`/`btc` of the sign bit of a 64-bit (32-bit) operand with an
/// immediate bit number: abs, negative abs, negation of a double (float)
/// in a general register or memory (gcc -O2 compiles `fabs` through a
/// `memcpy` to an integer so).
pub fn sign_bit_op(insn: &Instruction) -> bool {
    use Mnemonic as M;
    let bits = match insn.op0_kind() {
        OpKind::Register => insn.op0_register().size() * 8,
        OpKind::Memory => insn.memory_size().size() * 8,
        _ => 0,
    };
    matches!(insn.mnemonic(), M::Btr | M::Bts | M::Btc)
        && matches!(bits, 32 | 64)
        && insn.op_count() == 2
        && insn.op_kind(1) == OpKind::Immediate8
        && usize::from(insn.immediate8()) == bits - 1
}

/// A half of the sign-clearing pair `shl r, 1; shr r, 1` (`sal`, or `add
/// r, r` for the first) on a 32- or 64-bit general register: fabs of the
/// float or double it holds. Both halves go to the runtime when the
/// register is active, which differentiates the pair and treats either
/// half alone as integer work.
pub fn magnitude_shift(insn: &Instruction) -> bool {
    use Mnemonic as M;
    if insn.op0_kind() != OpKind::Register
        || !insn.op0_register().is_gpr()
        || !matches!(insn.op0_register().size(), 4 | 8)
        || insn.op_count() != 2
    {
        return false;
    }
    match insn.mnemonic() {
        M::Shl | M::Sal | M::Shr => insn.op_kind(1) == OpKind::Immediate8 && insn.immediate8() == 1,
        M::Add => insn.op_kind(1) == OpKind::Register && insn.op_register(1) == insn.op0_register(),
        _ => false,
    }
}

/// A half of the sign-clearing pair on vector lanes: `psllq x, 1` then
/// `psrlq x, 1` (doubles; `pslld`/`psrld` for floats), legacy or VEX
/// (`vpsllq y, x, 1; vpsrlq z, y, 1`), unmasked, registers only: fabs of
/// each lane. Vector integer shifts reach the runtime when active anyway.
/// The element width in bytes (8 or 4) and whether this is the left shift.
pub fn vector_magnitude_shift(insn: &Instruction) -> Option<(usize, bool)> {
    use Mnemonic as M;
    let (w, left) = match insn.mnemonic() {
        M::Psllq | M::Vpsllq => (8, true),
        M::Psrlq | M::Vpsrlq => (8, false),
        M::Pslld | M::Vpslld => (4, true),
        M::Psrld | M::Vpsrld => (4, false),
        _ => return None,
    };
    let last = insn.op_count().checked_sub(1)?;
    let registers = (0..last)
        .all(|i| insn.op_kind(i) == OpKind::Register && insn.op_register(i).is_vector_register());
    (registers
        && insn.op_mask() == Register::None
        && insn.op_kind(last) == OpKind::Immediate8
        && insn.immediate8() == 1)
        .then_some((w, left))
}

/// `ucomisd`/`comisd`/`ucomiss`/`comiss` (any encoding) of a register
/// with a constant of the program (a RIP-relative or absolute memory
/// operand). When an active value compares equal to it, compiled code may
/// go on with the constant instead of the value (gcc does after CPython's
/// and numpy's `x == -1.0 && PyErr_Occurred()` checks), and the value's
/// derivative is lost where no instruction can see it: the runtime
/// reports it.
pub fn compares_with_constant(insn: &Instruction) -> bool {
    use Mnemonic as M;
    matches!(
        insn.mnemonic(),
        M::Ucomisd
            | M::Comisd
            | M::Vucomisd
            | M::Vcomisd
            | M::Ucomiss
            | M::Comiss
            | M::Vucomiss
            | M::Vcomiss
    ) && insn.op_count() == 2
        && insn.op_kind(0) == OpKind::Register
        && insn.op_kind(1) == OpKind::Memory
        && (insn.is_ip_rel_memory_operand()
            || insn.memory_base() == Register::None && insn.memory_index() == Register::None)
}

/// Whether an operand access writes the location.
pub fn writes(a: OpAccess) -> bool {
    matches!(
        a,
        OpAccess::Write | OpAccess::ReadWrite | OpAccess::CondWrite | OpAccess::ReadCondWrite
    )
}

/// The record-mode plan for `insn`; `flags_free` says whether the status
/// flags are dead just before it (so inserted code may clobber them).
pub fn record_plan(insn: &Instruction, flags_free: bool) -> Plan {
    let plan = specific_plan(insn, flags_free);
    if plan != Plan::Runtime {
        return plan;
    }
    // Live flags would send a memory move to the runtime: keep it inline
    // between a save and a restore of them. It beats the general rule.
    if !flags_free {
        let saved = specific_plan(insn, true);
        if flags_can_be_saved_around(&saved) {
            return Plan::SaveFlags(Box::new(saved));
        }
    }
    let general = matches!(
        semantics(insn.code()),
        Some(
            Semantics::Move
                | Semantics::BitLogic(_)
                | Semantics::FpArith { .. }
                | Semantics::FpConvert { .. }
                | Semantics::Passive
        )
    );
    if general {
        if let Some(p) = all_passive(insn, !flags_free) {
            return p;
        }
    }
    Plan::Runtime
}

/// Whether `insn`'s memory operand is one inline plans address: no segment
/// override, no vector index, and dead flags (its shadow address is
/// computed with `xor` and `lea`).
fn plain_memory(insn: &Instruction, flags_free: bool) -> bool {
    flags_free
        && insn.segment_prefix() == Register::None
        && !insn.memory_index().is_vector_register()
}

/// Operand `i` as a side of a shadow move: a vector register's shadow, or
/// a plain memory operand ([`plain_memory`]).
fn vector_side(insn: &Instruction, i: u32, flags_free: bool) -> Option<MoveSide> {
    match insn.op_kind(i) {
        OpKind::Register => {
            let r = insn.op_register(i);
            (r.is_xmm() || r.is_ymm() || r.is_zmm())
                .then(|| MoveSide::Register(RegFile::vec_offset(r.number(), 0) as u32))
        }
        OpKind::Memory if plain_memory(insn, flags_free) => Some(MoveSide::Memory),
        _ => None,
    }
}

/// Inline recording for the square roots of doubles: `sqrtsd`/`sqrtpd`
/// (legacy, two operands), `vsqrtsd` (three), `vsqrtpd` (two, xmm or ymm).
fn inline_sqrt(insn: &Instruction, shape: Shape, flags_free: bool) -> Option<Plan> {
    let scalar = shape == Shape::Scalar;
    let vex = match (insn.encoding(), insn.op_count(), scalar) {
        (EncodingKind::Legacy, 2, _) => false,
        (EncodingKind::VEX, 3, true) | (EncodingKind::VEX, 2, false) => true,
        _ => return None,
    };
    let dst = insn.op0_register();
    if !flags_free || insn.op0_kind() != OpKind::Register || !(dst.is_xmm() || dst.is_ymm()) {
        return None;
    }
    let src = vector_side(insn, insn.op_count() - 1, flags_free)?;
    Some(Plan::Arithmetic(Arithmetic {
        op: FpOp::Sqrt,
        lanes: if scalar { 1 } else { (dst.size() / 8) as u8 },
        dst: RegFile::vec_offset(dst.number(), 0) as u32,
        // A VEX scalar form's upper lane comes from its first source.
        src1: if vex && scalar {
            insn.op1_register()
        } else {
            dst
        },
        src,
        vex,
        float: false,
    }))
}

/// Record mode's scalar conversions between float and double (legacy
/// `cvtss2sd`, `cvtsd2ss`): the value keeps its index — a float's shadow is
/// its 4-byte index, a double's the index and 4 zero bytes — so the shadow
/// moves as a 4-byte copy, zero-extended for the double. The rest of the
/// xmm register keeps its shadow. (Dot mode converts the tangent instead.)
fn index_conversion(insn: &Instruction, flags_free: bool) -> Option<Plan> {
    use iced_x86::Code::*;
    let reg = |r: Register| RegFile::vec_offset(r.number(), 0) as u32;
    let side = |i: u32| vector_side(insn, i, flags_free);
    let last = insn.op_count() - 1;
    if matches!(
        insn.code(),
        VEX_Vcvtss2sd_xmm_xmm_xmmm32 | VEX_Vcvtsd2ss_xmm_xmm_xmmm64
    ) {
        return Some(Plan::ConvertIndex {
            src: side(last)?,
            src1: reg(insn.op1_register()),
            dst: reg(insn.op0_register()),
            low: if insn.code() == VEX_Vcvtss2sd_xmm_xmm_xmmm32 {
                LowLane::FloatToDouble
            } else {
                LowLane::Float
            },
        });
    }
    let zero = match insn.code() {
        Cvtss2sd_xmm_xmmm32 => 4,
        Cvtsd2ss_xmm_xmmm64 => 0,
        _ => return None,
    };
    Some(Plan::VectorMove {
        src: side(1)?,
        dst: MoveSide::Register(RegFile::vec_offset(insn.op0_register().number(), 0) as u32),
        len: 4,
        zero,
    })
}

/// Dot mode's plan: record mode's (shadow moves and clears are the same
/// bytes for tangents as for indices), except for arithmetic: the common
/// forms compute tangents inline ([`Plan::DotArithmetic`]); the others,
/// which record mode may write to the tape inline, go to the runtime,
/// where the shared rules compute tangents.
pub fn dot_plan(insn: &Instruction, flags_free: bool) -> Plan {
    if let Some(Semantics::FpArith { op, elem, shape }) = semantics(insn.code()) {
        if let Some(p) = dot_arithmetic(insn, op, elem, shape, flags_free) {
            return p;
        }
    }
    match record_plan(insn, flags_free) {
        Plan::Arithmetic(_) => Plan::Runtime,
        Plan::SaveFlags(p) if matches!(*p, Plan::Arithmetic(_)) => Plan::Runtime,
        // A conversion changes a tangent's format: only passive inputs stay
        // inline.
        Plan::VectorMove { .. } | Plan::ConvertIndex { .. } | Plan::SaveFlags(_)
            if matches!(semantics(insn.code()), Some(Semantics::FpConvert { .. })) =>
        {
            all_passive(insn, !flags_free).unwrap_or(Plan::Runtime)
        }
        p => p,
    }
}

/// [`Plan::AllPassive`] for `insn`: explicit register, memory (one, plain)
/// and immediate operands only, no masking, at most 16 shadow pieces to
/// check.
fn all_passive(insn: &Instruction, save_flags: bool) -> Option<Plan> {
    // x87 instructions change the register stack in ways iced does not
    // list as register uses (`fld1` pushes): they stay with the runtime.
    // Masked forms keep what the mask leaves alone: their destination
    // counts as an input below.
    let masked = insn.op_mask() != Register::None;
    if insn.has_rep_prefix()
        || insn.has_repne_prefix()
        || insn.has_lock_prefix()
        || insn.fpu_stack_increment_info().increment() != 0
        || insn.cpuid_features().contains(&iced_x86::CpuidFeature::FPU)
        // Masked stores keep the memory they do not write, but iced lists
        // the memory as plainly written.
        || matches!(
            insn.mnemonic(),
            Mnemonic::Vmaskmovps
                | Mnemonic::Vmaskmovpd
                | Mnemonic::Vpmaskmovd
                | Mnemonic::Vpmaskmovq
                | Mnemonic::Maskmovdqu
                | Mnemonic::Vmaskmovdqu
                | Mnemonic::Maskmovq
        )
    {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    let mut memory = None;
    if let Some(i) = (0..insn.op_count()).find(|&i| insn.op_kind(i) == OpKind::Memory) {
        let bytes = insn.memory_size().size();
        if insn.segment_prefix() != Register::None
            || insn.memory_index().is_vector_register()
            || info.used_memory().len() != 1
            || !matches!(bytes, 1 | 2 | 4 | 8 | 16 | 32 | 64)
        {
            return None;
        }
        // A conditional write (masked store) keeps what it does not write:
        // its old shadow must be passive too.
        let access = info.used_memory()[0].access();
        memory = Some(MemoryAccess {
            bytes: bytes as u8,
            read: masked || !matches!(access, OpAccess::Write | OpAccess::NoMemAccess),
            written: writes(access),
        });
        let _ = i;
    } else if !info.used_memory().is_empty() {
        return None;
    }
    let mut checks = Vec::new();
    for u in info.used_registers() {
        let r = u.register();
        // A conditionally written register (cmov) keeps its value when the
        // condition fails: it counts as an input.
        let input = matches!(
            u.access(),
            OpAccess::Read
                | OpAccess::ReadWrite
                | OpAccess::CondRead
                | OpAccess::ReadCondWrite
                | OpAccess::CondWrite
        ) || (masked && writes(u.access()));
        if !input
            || r.is_k()
            || r.is_segment_register()
            || matches!(r, Register::RIP | Register::EIP)
        {
            continue;
        }
        if r.is_gpr() {
            checks.push(RegFile::gpr_offset(r.full_register().number(), 0) as u32);
        } else if r.is_xmm() || r.is_ymm() || r.is_zmm() {
            let base = RegFile::vec_offset(r.number(), 0) as u32;
            checks.extend((0..r.size() as u32).step_by(8).map(|b| base + b));
        } else {
            return None;
        }
    }
    let (clears, others) = written_register_shadows(insn, info);
    checks.sort_unstable();
    checks.dedup();
    let memory_pieces = memory.map_or(0, |m| usize::from(m.bytes).div_ceil(8));
    if others || checks.len() + memory_pieces > 16 {
        return None;
    }
    Some(Plan::AllPassive {
        checks,
        clears,
        memory,
        save_flags,
    })
}

/// The plan of an instruction with its own inline rule, or `Runtime`.
fn specific_plan(insn: &Instruction, flags_free: bool) -> Plan {
    if is_zero_idiom(insn) {
        let mut factory = InstructionInfoFactory::new();
        let (clears, others) = written_register_shadows(insn, factory.info(insn));
        if !others {
            return Plan::ClearRegisters(clears);
        }
    }
    match semantics(insn.code()) {
        // An active value compared with a constant goes to the runtime,
        // which reports an equal one; with live flags (never seen: the
        // compare writes them all) it goes unchecked.
        Some(Semantics::NoWrite) if flags_free && compares_with_constant(insn) => {
            passive_unless_active(insn, true).unwrap_or(Plan::Nothing)
        }
        Some(Semantics::NoWrite) | Some(Semantics::Special(SpecialKind::Control)) => Plan::Nothing,
        // The sign-clearing shift pair: the runtime when the register is
        // active (both halves write every status flag, so they are free).
        Some(Semantics::Passive) if flags_free && magnitude_shift(insn) => {
            passive_unless_active(insn, false).unwrap_or(Plan::Runtime)
        }
        Some(Semantics::Passive)
            if is_vector_integer_arithmetic(insn)
                || granule_shift(insn)
                || sign_bit_op(insn)
                || half_precision_conversion(insn) =>
        {
            // Integer arithmetic on floating-point bits (exponent tricks),
            // granule moves and sign-bit tricks by other means: the runtime
            // gives them their derivatives or reports the loss. Inline only
            // the check that every input is passive (which needs the
            // flags; `record_plan` saves live ones).
            if flags_free {
                passive_unless_active(insn, true).unwrap_or(Plan::Runtime)
            } else {
                Plan::Runtime
            }
        }
        // The memory operand is checked too: the value whose exponent is
        // changed is often read straight from memory (`add rax, [rsp+8]`).
        Some(Semantics::Passive)
            if flags_free
                && is_gpr_add_sub(insn)
                && (0..insn.op_count()).all(|i| insn.op_kind(i) != OpKind::Memory) =>
        {
            all_passive(insn, false).unwrap_or(Plan::Runtime)
        }
        Some(Semantics::Passive) if !byte_granular_shift(insn) => passive_registers(insn)
            .map(Plan::ClearRegisters)
            .or_else(|| passive_memory(insn, flags_free))
            .unwrap_or(Plan::Runtime),
        // A shift by whole bytes moves shadow bytes: nothing to do when the
        // register carries no index.
        Some(Semantics::Passive) if flags_free && insn.op0_register().is_gpr() => {
            Plan::AllPassive {
                memory: None,
                save_flags: false,
                checks: vec![
                    RegFile::gpr_offset(insn.op0_register().full_register().number(), 0) as u32,
                ],
                clears: Vec::new(),
            }
        }
        Some(Semantics::FpArith {
            op: FpOp::Sqrt,
            elem: Elem::F64,
            shape,
        }) => inline_sqrt(insn, shape, flags_free).unwrap_or(Plan::Runtime),
        Some(Semantics::FpArith {
            op,
            elem: Elem::F64,
            shape,
        }) => inline_arithmetic(insn, op, shape, flags_free).unwrap_or(Plan::Runtime),
        Some(Semantics::FpArith {
            op: op @ (FpOp::Add | FpOp::Sub | FpOp::Mul | FpOp::Fma(_)),
            elem: Elem::F32,
            shape,
        }) if insn.op0_register().is_xmm() || insn.op0_register().is_ymm() => {
            inline_arithmetic(insn, op, shape, flags_free)
                .map(|p| match p {
                    Plan::Arithmetic(a) => Plan::Arithmetic(Arithmetic {
                        float: true,
                        lanes: if shape == Shape::Scalar {
                            1
                        } else {
                            (insn.op0_register().size() / 4) as u8
                        },
                        ..a
                    }),
                    p => p,
                })
                .unwrap_or(Plan::Runtime)
        }
        Some(Semantics::FpConvert { .. }) => index_conversion(insn, flags_free)
            .or_else(|| all_passive(insn, !flags_free))
            .unwrap_or(Plan::Runtime),
        Some(Semantics::Move) => general_mov(insn, flags_free)
            .or_else(|| vector_move(insn, flags_free))
            .or_else(|| masked_move(insn, flags_free))
            .or_else(|| stack_move(insn, flags_free))
            .or_else(|| shadow_shuffle(insn, flags_free))
            .unwrap_or(Plan::Runtime),
        Some(Semantics::BitLogic(_)) if flags_free => {
            passive_unless_active(insn, false).unwrap_or(Plan::Runtime)
        }
        _ => Plan::Runtime,
    }
}

/// [`Plan::ShadowShuffle`] for `insn`, if it is one of those shuffles.
fn shadow_shuffle(insn: &Instruction, flags_free: bool) -> Option<Plan> {
    use Mnemonic::*;
    let shuffle = matches!(
        insn.mnemonic(),
        Unpcklpd
            | Unpckhpd
            | Unpcklps
            | Unpckhps
            | Punpcklqdq
            | Punpckhqdq
            | Punpckldq
            | Punpckhdq
            | Shufpd
            | Shufps
            | Pshufd
            | Movddup
            | Movshdup
            | Movsldup
            | Movlhps
            | Movhlps
            | Blendpd
            | Blendps
            | Vunpcklpd
            | Vunpckhpd
            | Vunpcklps
            | Vunpckhps
            | Vpunpcklqdq
            | Vpunpckhqdq
            | Vpunpckldq
            | Vpunpckhdq
            | Vshufpd
            | Vshufps
            | Vpshufd
            | Vmovddup
            | Vmovshdup
            | Vmovsldup
            | Vmovlhps
            | Vmovhlps
            | Vblendpd
            | Vblendps
    );
    let vex = match insn.encoding() {
        EncodingKind::Legacy => false,
        EncodingKind::VEX => true,
        _ => return None,
    };
    let dst = insn.op0_register();
    if !shuffle
        || insn.op0_kind() != OpKind::Register
        || !(dst.is_xmm() || vex && dst.is_ymm())
        || dst.number() >= 16
    {
        return None;
    }
    for i in 1..insn.op_count() {
        match insn.op_kind(i) {
            OpKind::Register => {
                let r = insn.op_register(i);
                if r.size() != dst.size() || r.number() >= 16 {
                    return None;
                }
            }
            // The last data operand, as a register form takes it.
            OpKind::Memory
                if flags_free
                    && insn.segment_prefix() == Register::None
                    && !insn.memory_index().is_vector_register()
                    && (i + 1 == insn.op_count()
                        || i + 2 == insn.op_count()
                            && insn.op_kind(i + 1) == OpKind::Immediate8) => {}
            OpKind::Immediate8 if i + 1 == insn.op_count() => {}
            _ => return None,
        }
    }
    Some(Plan::ShadowShuffle)
}

/// An integer read-modify-write of memory that writes nothing else a
/// shadow tracks (`add qword [mem], 1`, `dec dword [mem]`, …): the result is
/// passive, so the memory operand's shadow becomes 0. Needs dead flags.
fn passive_memory(insn: &Instruction, flags_free: bool) -> Option<Plan> {
    if !flags_free
        || insn.op0_kind() != OpKind::Memory
        || insn.segment_prefix() != Register::None
        || insn.memory_index().is_vector_register()
        || is_vector_op_code(insn)
    {
        return None;
    }
    let size = insn.memory_size().size();
    if !matches!(size, 1 | 2 | 4 | 8) {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    let writes_registers = info
        .used_registers()
        .iter()
        .any(|u| writes(u.access()) && !matches!(u.register(), Register::RIP | Register::EIP));
    let memory_writes = info
        .used_memory()
        .iter()
        .filter(|m| writes(m.access()))
        .count();
    (!writes_registers && memory_writes == 1).then_some(Plan::ZeroShadow { size: size as u8 })
}

/// Whether any operand is a vector register.
fn is_vector_op_code(insn: &Instruction) -> bool {
    (0..insn.op_count())
        .any(|i| insn.op_kind(i) == OpKind::Register && insn.op_register(i).is_vector_register())
}

/// `add` or `sub` on a 32- or 64-bit general register other than `rsp`:
/// what an exponent add by hand (`ldexp` of k·2^52 on a double's bits, or
/// k·2^23 on a float's) is made of. Such an instruction checks its inputs'
/// shadows inline; an active one goes to the runtime, which scales the
/// derivative for an exponent add and reports anything else.
pub fn is_gpr_add_sub(insn: &Instruction) -> bool {
    matches!(insn.mnemonic(), Mnemonic::Add | Mnemonic::Sub)
        && insn.op0_kind() == OpKind::Register
        && insn.op0_register().is_gpr()
        && matches!(insn.op0_register().size(), 4 | 8)
        && insn.op0_register().full_register() != Register::RSP
}

/// Integer add, subtract, multiply or shift on vector lanes (`paddd`,
/// `vpsllq`, …): on floating-point data these are exponent tricks (scaling
/// by 2^q), whose result dgad cannot differentiate.
pub fn is_vector_integer_arithmetic(insn: &Instruction) -> bool {
    // By mnemonic name, decided once per mnemonic (the runtime asks too).
    static BY_MNEMONIC: std::sync::OnceLock<Box<[bool]>> = std::sync::OnceLock::new();
    let table = BY_MNEMONIC.get_or_init(|| {
        iced_x86::Mnemonic::values()
            .map(|m| {
                // `Vpaddd` as well as `Paddd`: compare without the `v`, in
                // lower case (a case mismatch once hid every VEX form).
                let name = format!("{m:?}").to_ascii_lowercase();
                let name = name.strip_prefix('v').unwrap_or(&name);
                ["padd", "psub", "pmul", "psll", "psrl", "psra"]
                    .iter()
                    .any(|p| name.starts_with(p))
            })
            .collect()
    });
    table[insn.mnemonic() as usize]
        && (0..insn.op_count()).any(|i| {
            insn.op_kind(i) == OpKind::Register && insn.op_register(i).is_vector_register()
        })
}

/// `xor`/`sub` of a register with itself, in any encoding without a
/// mask: the result is 0 whatever the operand carries.
fn is_zero_idiom(insn: &Instruction) -> bool {
    use iced_x86::Code::*;
    let zeroing = matches!(
        insn.code(),
        Xor_r32_rm32
            | Xor_r64_rm64
            | Xor_rm32_r32
            | Xor_rm64_r64
            | Sub_r32_rm32
            | Sub_r64_rm64
            | Sub_rm32_r32
            | Sub_rm64_r64
            | Pxor_xmm_xmmm128
            | Xorps_xmm_xmmm128
            | Xorpd_xmm_xmmm128
            | Psubq_xmm_xmmm128
            | Psubd_xmm_xmmm128
            | VEX_Vpxor_xmm_xmm_xmmm128
            | VEX_Vpxor_ymm_ymm_ymmm256
            | VEX_Vxorps_xmm_xmm_xmmm128
            | VEX_Vxorps_ymm_ymm_ymmm256
            | VEX_Vxorpd_xmm_xmm_xmmm128
            | VEX_Vxorpd_ymm_ymm_ymmm256
            | EVEX_Vpxord_xmm_k1z_xmm_xmmm128b32
            | EVEX_Vpxord_ymm_k1z_ymm_ymmm256b32
            | EVEX_Vpxord_zmm_k1z_zmm_zmmm512b32
            | EVEX_Vpxorq_xmm_k1z_xmm_xmmm128b64
            | EVEX_Vpxorq_ymm_k1z_ymm_ymmm256b64
            | EVEX_Vpxorq_zmm_k1z_zmm_zmmm512b64
            | EVEX_Vxorps_xmm_k1z_xmm_xmmm128b32
            | EVEX_Vxorps_ymm_k1z_ymm_ymmm256b32
            | EVEX_Vxorps_zmm_k1z_zmm_zmmm512b32
            | EVEX_Vxorpd_xmm_k1z_xmm_xmmm128b64
            | EVEX_Vxorpd_ymm_k1z_ymm_ymmm256b64
            | EVEX_Vxorpd_zmm_k1z_zmm_zmmm512b64
    );
    if !zeroing || insn.op_mask() != Register::None {
        return false;
    }
    // The two sources: the last two operands (legacy: destination and
    // source; VEX/EVEX: both sources).
    let n = insn.op_count();
    n >= 2
        && insn.op_kind(n - 1) == OpKind::Register
        && insn.op_kind(n - 2) == OpKind::Register
        && insn.op_register(n - 1) == insn.op_register(n - 2)
}

/// [`Plan::AllPassive`] (registers only) for instructions whose operands are
/// general or vector registers (up to 32 bytes) and immediates; with
/// `memory_source`, also a memory operand that is only read (its shadow is
/// not checked: for reports, not for derivatives).
fn passive_unless_active(insn: &Instruction, memory_source: bool) -> Option<Plan> {
    if insn.op_mask() != Register::None
        || (memory_source && insn.op0_kind() == OpKind::Memory)
        || (0..insn.op_count()).any(|i| {
            let memory_ok = memory_source && insn.op_kind(i) == OpKind::Memory;
            !memory_ok
                && !matches!(
                    insn.op_kind(i),
                    OpKind::Register
                        | OpKind::Immediate8
                        | OpKind::Immediate8to32
                        | OpKind::Immediate8to64
                        | OpKind::Immediate32
                        | OpKind::Immediate32to64
                        | OpKind::Immediate64
                        | OpKind::Immediate16
                )
        })
    {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    let mut checks = Vec::new();
    for u in info.used_registers() {
        let r = u.register();
        if !matches!(
            u.access(),
            OpAccess::Read | OpAccess::ReadWrite | OpAccess::CondRead | OpAccess::ReadCondWrite
        ) || r.is_k()
        {
            continue;
        }
        if r.is_gpr() {
            checks.push(RegFile::gpr_offset(r.full_register().number(), 0) as u32);
        } else if r.is_xmm() || r.is_ymm() {
            let base = RegFile::vec_offset(r.number(), 0) as u32;
            checks.extend((0..r.size() as u32).step_by(8).map(|b| base + b));
        } else {
            return None;
        }
    }
    let (clears, others) = written_register_shadows(insn, info);
    if others || checks.len() > 8 {
        return None;
    }
    checks.sort_unstable();
    checks.dedup();
    Some(Plan::AllPassive {
        checks,
        clears,
        memory: None,
        save_flags: false,
    })
}

/// Inline plans for `mov` with general registers, memory and immediates.
fn general_mov(insn: &Instruction, flags_free: bool) -> Option<Plan> {
    use iced_x86::Code::*;
    let reg = |i: u32| RegFile::gpr_offset(insn.op_register(i).full_register().number(), 0) as u32;
    let plain_memory = |i: u32| {
        insn.op_kind(i) == OpKind::Memory
            && flags_free
            && matches!(insn.segment_prefix(), Register::None | Register::FS)
            && !insn.memory_index().is_vector_register()
    };
    let size = |code| {
        if matches!(code, Mov_r64_rm64 | Mov_rm64_r64 | Mov_rm64_imm32) {
            8
        } else {
            4
        }
    };
    // Operand `i` is a register whose shadow starts at its full register's
    // (not ah, ch, dh, bh).
    let low_gpr = |i: u32| {
        insn.op_kind(i) == OpKind::Register
            && !matches!(
                insn.op_register(i),
                Register::AH | Register::CH | Register::DH | Register::BH
            )
    };
    Some(match insn.code() {
        c @ (Mov_r64_rm64 | Mov_r32_rm32) if insn.op1_kind() == OpKind::Register => {
            Plan::CopyRegister {
                dst: reg(0),
                src: reg(1),
                narrow: size(c) == 4,
            }
        }
        c @ (Mov_rm64_r64 | Mov_rm32_r32) if insn.op0_kind() == OpKind::Register => {
            Plan::CopyRegister {
                dst: reg(0),
                src: reg(1),
                narrow: size(c) == 4,
            }
        }
        c @ (Mov_r64_rm64 | Mov_r32_rm32) if plain_memory(1) => Plan::LoadShadow {
            dst: reg(0),
            size: size(c),
            extend: true,
        },
        // Byte and word moves: shadow bytes move with the data, so that a
        // value copied piecewise keeps its index.
        c @ (Mov_r8_rm8 | Mov_r16_rm16) if plain_memory(1) && low_gpr(0) => Plan::LoadShadow {
            dst: reg(0),
            size: if c == Mov_r8_rm8 { 1 } else { 2 },
            extend: false,
        },
        c @ (Mov_rm8_r8 | Mov_rm16_r16) if plain_memory(0) && low_gpr(1) => Plan::StoreShadow {
            src: reg(1),
            size: if c == Mov_rm8_r8 { 1 } else { 2 },
        },
        c @ (Mov_rm8_imm8 | Mov_rm16_imm16) if plain_memory(0) => Plan::ZeroShadow {
            size: if c == Mov_rm8_imm8 { 1 } else { 2 },
        },
        c @ (Movzx_r32_rm8 | Movzx_r64_rm8 | Movzx_r32_rm16 | Movzx_r64_rm16)
            if plain_memory(1) =>
        {
            Plan::LoadShadow {
                dst: reg(0),
                size: if matches!(c, Movzx_r32_rm8 | Movzx_r64_rm8) {
                    1
                } else {
                    2
                },
                extend: true,
            }
        }
        c @ (Movzx_r32_rm8 | Movzx_r64_rm8 | Movzx_r32_rm16 | Movzx_r64_rm16)
            if insn.op1_kind() == OpKind::Register && low_gpr(1) =>
        {
            Plan::ExtendRegister {
                dst: reg(0),
                src: reg(1),
                size: if matches!(c, Movzx_r32_rm8 | Movzx_r64_rm8) {
                    1
                } else {
                    2
                },
            }
        }
        c @ (Mov_rm64_r64 | Mov_rm32_r32) if plain_memory(0) => Plan::StoreShadow {
            src: reg(1),
            size: size(c),
        },
        c @ (Mov_rm64_imm32 | Mov_rm32_imm32) if plain_memory(0) => {
            Plan::ZeroShadow { size: size(c) }
        }
        Mov_rm64_imm32 | Mov_rm32_imm32 | Mov_r64_imm64 | Mov_r32_imm32
            if insn.op0_kind() == OpKind::Register =>
        {
            Plan::ClearRegisters(vec![(reg(0), 8)])
        }
        _ => return None,
    })
}

/// Inline plans for 64-bit `push` of a register or an immediate, `pop`
/// into a register other than `rsp`, and `leave`.
fn stack_move(insn: &Instruction, flags_free: bool) -> Option<Plan> {
    use iced_x86::Code::*;
    if !flags_free {
        return None;
    }
    let reg = |r: Register| RegFile::gpr_offset(r.full_register().number(), 0) as u32;
    match insn.code() {
        Push_r64 => Some(Plan::Push {
            src: Some(reg(insn.op0_register())),
        }),
        Pushq_imm32 | Pushq_imm8 => Some(Plan::Push { src: None }),
        Pop_r64 if insn.op0_register() != Register::RSP => Some(Plan::Pop {
            dst: reg(insn.op0_register()),
        }),
        Leaveq => Some(Plan::Leave {
            rbp: reg(Register::RBP),
            rsp: reg(Register::RSP),
        }),
        _ => None,
    }
}

/// Whether `plan` only clobbers the flags as a side effect of straight-line
/// shadow bookkeeping (no branches to the runtime), so that it can run
/// between a save and a restore of the flags when they are live.
fn flags_can_be_saved_around(plan: &Plan) -> bool {
    matches!(
        plan,
        Plan::LoadShadow { .. }
            | Plan::StoreShadow { .. }
            | Plan::ZeroShadow { .. }
            | Plan::Push { .. }
            | Plan::Pop { .. }
            | Plan::Leave { .. }
            | Plan::VectorMove { .. }
            | Plan::MaskedMove { unit_bits: 0, .. }
            | Plan::ConvertIndex { .. }
    )
}

/// Inline recording for SSE2 and AVX (VEX, unmasked) double add/sub/mul/div,
/// and the VEX fused multiply-adds of doubles (132, 213, 231, each sign;
/// not the alternating forms): two blocks per lane, the product's and the
/// sum's.
fn inline_arithmetic(insn: &Instruction, op: FpOp, shape: Shape, flags_free: bool) -> Option<Plan> {
    let vex = match insn.encoding() {
        EncodingKind::Legacy if insn.op_count() == 2 => false,
        EncodingKind::VEX if insn.op_count() == 3 => true,
        _ => return None,
    };
    let fma = matches!(op, FpOp::Fma(form) if vex && !form.alternating && form.order.iter().all(|&o| (1..=3).contains(&o)));
    if !flags_free
        || !(matches!(op, FpOp::Add | FpOp::Sub | FpOp::Mul | FpOp::Div) || fma)
        || insn.op0_kind() != OpKind::Register
    {
        return None;
    }
    let last = insn.op_count() - 1;
    let src1 = if vex {
        insn.op1_register()
    } else {
        insn.op0_register()
    };
    let src = vector_side(insn, last, flags_free)?;
    let lanes = if shape == Shape::Scalar {
        1
    } else {
        (insn.op0_register().size() / 8) as u8
    };
    if lanes > 4 {
        return None;
    }
    let dst = RegFile::vec_offset(insn.op0_register().number(), 0) as u32;
    Some(Plan::Arithmetic(Arithmetic {
        op,
        lanes,
        dst,
        src1,
        src,
        vex,
        float: false,
    }))
}

/// [`Plan::DotArithmetic`] for `insn`, if it is such a form.
fn dot_arithmetic(
    insn: &Instruction,
    op: FpOp,
    elem: Elem,
    shape: Shape,
    flags_free: bool,
) -> Option<Plan> {
    // Square roots take one source: `vsqrtpd y, x` has two operands.
    let unary_packed = op == FpOp::Sqrt && shape != Shape::Scalar;
    let vex = match insn.encoding() {
        EncodingKind::Legacy if insn.op_count() == 2 => false,
        EncodingKind::VEX if insn.op_count() == 3 && !unary_packed => true,
        EncodingKind::VEX if insn.op_count() == 2 && unary_packed => true,
        _ => return None,
    };
    let dst = insn.op0_register();
    // Add, sub and FMA test their operands' activity (the flags).
    let fma = matches!(op, FpOp::Fma(form) if vex && !form.alternating && form.order.iter().all(|&o| (1..=3).contains(&o)));
    let tests = matches!(op, FpOp::Add | FpOp::Sub) || fma;
    if !(matches!(
        op,
        FpOp::Add | FpOp::Sub | FpOp::Mul | FpOp::Div | FpOp::Min | FpOp::Max | FpOp::Sqrt
    ) || fma)
        || tests && !flags_free
        || elem == Elem::F80
        || insn.op0_kind() != OpKind::Register
        || !(dst.is_xmm() || dst.is_ymm())
    {
        return None;
    }
    let last = insn.op_count() - 1;
    let src = match insn.op_kind(last) {
        OpKind::Register => Some(insn.op_register(last)),
        OpKind::Memory if flags_free && insn.segment_prefix() == Register::None => None,
        _ => return None,
    };
    Some(Plan::DotArithmetic(DotArithmetic {
        op,
        elem,
        scalar: shape == Shape::Scalar,
        width: dst.size() as u8,
        dst,
        src1: if vex && insn.op_count() == 3 {
            insn.op1_register()
        } else {
            dst
        },
        src,
        vex,
    }))
}

/// Inline plans for the plain SSE/AVX moves (no masking, no shuffling).
fn vector_move(insn: &Instruction, flags_free: bool) -> Option<Plan> {
    use iced_x86::Code::*;
    // The register forms of the VEX scalar merges (three operands).
    if matches!(insn.code(), VEX_Vmovss_xmm_xmm_xmm | VEX_Vmovsd_xmm_xmm_xmm) {
        let reg = |i: u32| RegFile::vec_offset(insn.op_register(i).number(), 0) as u32;
        return Some(Plan::ConvertIndex {
            src: MoveSide::Register(reg(2)),
            src1: reg(1),
            dst: reg(0),
            low: if insn.code() == VEX_Vmovsd_xmm_xmm_xmm {
                LowLane::Double
            } else {
                LowLane::Float
            },
        });
    }
    if insn.op_mask() != Register::None || insn.op_count() != 2 {
        return None;
    }
    let legacy = insn.encoding() == EncodingKind::Legacy;
    let gpr_move = matches!(
        insn.code(),
        Movq_rm64_xmm
            | Movq_xmm_rm64
            | Movd_rm32_xmm
            | Movd_xmm_rm32
            | VEX_Vmovq_rm64_xmm
            | VEX_Vmovq_xmm_rm64
            | VEX_Vmovd_rm32_xmm
            | VEX_Vmovd_xmm_rm32
    );
    let side = |i: u32| -> Option<MoveSide> {
        match insn.op_kind(i) {
            OpKind::Register => {
                let r = insn.op_register(i);
                if r.is_gpr() && gpr_move {
                    return Some(MoveSide::Register(RegFile::gpr_offset(
                        r.full_register().number(),
                        0,
                    ) as u32));
                }
                (r.is_xmm() || r.is_ymm() || r.is_zmm())
                    .then(|| MoveSide::Register(RegFile::vec_offset(r.number(), 0) as u32))
            }
            OpKind::Memory if plain_memory(insn, flags_free) => Some(MoveSide::Memory),
            _ => None,
        }
    };
    let (dst, src) = (side(0)?, side(1)?);
    // The legacy loads and stores of one 8-byte half of an xmm register
    // (`movhpd xmm, m64` beside `movsd` for a pair gcc -O2 loads): the
    // other half and everything above stay.
    let high = |side: MoveSide| match side {
        MoveSide::Register(off) => MoveSide::Register(off + 8),
        memory => memory,
    };
    match insn.code() {
        Movhpd_xmm_m64 | Movhps_xmm_m64 => {
            return Some(Plan::VectorMove {
                src,
                dst: high(dst),
                len: 8,
                zero: 0,
            })
        }
        Movlpd_xmm_m64 | Movlps_xmm_m64 | Movlps_m64_xmm => {
            return Some(Plan::VectorMove {
                src,
                dst,
                len: 8,
                zero: 0,
            })
        }
        Movhpd_m64_xmm | Movhps_m64_xmm => {
            return Some(Plan::VectorMove {
                src: high(src),
                dst,
                len: 8,
                zero: 0,
            })
        }
        _ => {}
    }
    // Bytes the destination register keeps above the moved ones: legacy SSE
    // keeps everything above 16 bytes; VEX/EVEX zero up to 64.
    let upper = |moved: u8| {
        if legacy {
            16 - moved.min(16)
        } else {
            64 - moved
        }
    };
    // Unmasked EVEX moves of a whole xmm, ymm or zmm (glibc's AVX-512
    // `memcpy` and `memset` are made of them); EVEX zeroes above the width.
    let evex_whole = insn.encoding() == EncodingKind::EVEX
        && matches!(
            insn.mnemonic(),
            Mnemonic::Vmovdqu8
                | Mnemonic::Vmovdqu16
                | Mnemonic::Vmovdqu32
                | Mnemonic::Vmovdqu64
                | Mnemonic::Vmovdqa32
                | Mnemonic::Vmovdqa64
                | Mnemonic::Vmovups
                | Mnemonic::Vmovupd
                | Mnemonic::Vmovaps
                | Mnemonic::Vmovapd
        );
    let (len, zero) = match insn.code() {
        _ if evex_whole => {
            let r = if insn.op0_kind() == OpKind::Register {
                insn.op0_register()
            } else {
                insn.op1_register()
            };
            let len = r.size() as u8;
            (len, upper(len))
        }
        // Full-width moves of 16, 32 or 64 bytes.
        Movapd_xmm_xmmm128 | Movapd_xmmm128_xmm | Movaps_xmm_xmmm128 | Movaps_xmmm128_xmm
        | Movupd_xmm_xmmm128 | Movupd_xmmm128_xmm | Movups_xmm_xmmm128 | Movups_xmmm128_xmm
        | Movdqa_xmm_xmmm128 | Movdqa_xmmm128_xmm | Movdqu_xmm_xmmm128 | Movdqu_xmmm128_xmm => {
            (16, 0)
        }
        VEX_Vmovapd_xmm_xmmm128
        | VEX_Vmovapd_xmmm128_xmm
        | VEX_Vmovaps_xmm_xmmm128
        | VEX_Vmovaps_xmmm128_xmm
        | VEX_Vmovupd_xmm_xmmm128
        | VEX_Vmovupd_xmmm128_xmm
        | VEX_Vmovups_xmm_xmmm128
        | VEX_Vmovups_xmmm128_xmm
        | VEX_Vmovdqa_xmm_xmmm128
        | VEX_Vmovdqa_xmmm128_xmm
        | VEX_Vmovdqu_xmm_xmmm128
        | VEX_Vmovdqu_xmmm128_xmm => (16, upper(16)),
        VEX_Vmovapd_ymm_ymmm256
        | VEX_Vmovapd_ymmm256_ymm
        | VEX_Vmovaps_ymm_ymmm256
        | VEX_Vmovaps_ymmm256_ymm
        | VEX_Vmovupd_ymm_ymmm256
        | VEX_Vmovupd_ymmm256_ymm
        | VEX_Vmovups_ymm_ymmm256
        | VEX_Vmovups_ymmm256_ymm
        | VEX_Vmovdqa_ymm_ymmm256
        | VEX_Vmovdqa_ymmm256_ymm
        | VEX_Vmovdqu_ymm_ymmm256
        | VEX_Vmovdqu_ymmm256_ymm => (32, upper(32)),
        // Scalar loads from memory zero the rest of the xmm (and, VEX, above).
        Movsd_xmm_xmmm64 | Movss_xmm_xmmm32 | VEX_Vmovsd_xmm_m64 | VEX_Vmovss_xmm_m32
            if matches!(src, MoveSide::Memory) =>
        {
            let w = if matches!(insn.code(), Movsd_xmm_xmmm64 | VEX_Vmovsd_xmm_m64) {
                8
            } else {
                4
            };
            (w, if legacy { 16 - w } else { 64 - w })
        }
        // Legacy scalar register moves merge the low lane only.
        Movsd_xmm_xmmm64 | Movss_xmm_xmmm32 => (
            if insn.code() == Movsd_xmm_xmmm64 {
                8
            } else {
                4
            },
            0,
        ),
        // Scalar stores.
        Movsd_xmmm64_xmm | VEX_Vmovsd_m64_xmm | Movlpd_m64_xmm | VEX_Vmovlpd_m64_xmm => (8, 0),
        Movss_xmmm32_xmm | VEX_Vmovss_m32_xmm => (4, 0),
        // movq between xmm registers or from memory zero-extends to 128 bits.
        Movq_xmm_xmmm64 | VEX_Vmovq_xmm_xmmm64 => (8, upper(8)),
        // Between a general register (or memory) and an xmm register: the
        // xmm is zero-extended; a 32-bit general register's upper half too.
        Movq_xmm_rm64 | VEX_Vmovq_xmm_rm64 => (8, upper(8)),
        Movd_xmm_rm32 | VEX_Vmovd_xmm_rm32 => (4, upper(4)),
        Movq_rm64_xmm | VEX_Vmovq_rm64_xmm => (8, 0),
        Movd_rm32_xmm | VEX_Vmovd_rm32_xmm => (
            4,
            if matches!(dst, MoveSide::Register(_)) {
                4
            } else {
                0
            },
        ),
        Movq_xmmm64_xmm | VEX_Vmovq_xmmm64_xmm if matches!(dst, MoveSide::Memory) => (8, 0),
        _ => return None,
    };
    if matches!(dst, MoveSide::Memory) && matches!(src, MoveSide::Memory) {
        return None;
    }
    // A store writes only `len` bytes: nothing to zero.
    let zero = if matches!(dst, MoveSide::Memory) {
        0
    } else {
        zero
    };
    Some(Plan::VectorMove {
        src,
        dst,
        len,
        zero,
    })
}

/// [`Plan::MaskedMove`] for the EVEX moves of whole elements under a mask:
/// loads into a register (merging or zeroing) and stores from one, and
/// moves between registers in the load form.
fn masked_move(insn: &Instruction, flags_free: bool) -> Option<Plan> {
    use Mnemonic::*;
    if insn.encoding() != EncodingKind::EVEX
        || insn.op_mask() == Register::None
        || insn.op_count() != 2
        || insn.has_segment_prefix()
        || !matches!(
            insn.mnemonic(),
            Vmovdqu8
                | Vmovdqu16
                | Vmovdqu32
                | Vmovdqu64
                | Vmovdqa32
                | Vmovdqa64
                | Vmovups
                | Vmovupd
                | Vmovaps
                | Vmovapd
        )
    {
        return None;
    }
    let vector = |i: u32| {
        let r = insn.op_register(i);
        (r.is_xmm() || r.is_ymm() || r.is_zmm())
            .then(|| MoveSide::Register(RegFile::vec_offset(r.number(), 0) as u32))
    };
    let memory =
        || (flags_free && !insn.memory_index().is_vector_register()).then_some(MoveSide::Memory);
    let unit_bits = match insn.mnemonic() {
        Vmovdqu8 => 4,
        Vmovdqu16 => 2,
        _ => 0,
    };
    if unit_bits != 0 && !flags_free {
        return None;
    }
    let (dst, src) = match (insn.op0_kind(), insn.op1_kind()) {
        // A load, or a register move in the load form (op1 may be memory).
        (OpKind::Register, OpKind::Register) if !is_store_form(insn) => (vector(0)?, vector(1)?),
        (OpKind::Register, OpKind::Memory) => (vector(0)?, memory()?),
        (OpKind::Memory, OpKind::Register) => (memory()?, vector(1)?),
        _ => return None,
    };
    Some(Plan::MaskedMove {
        src,
        dst,
        unit_bits,
    })
}

/// Whether an EVEX move's code is its store form (`…_zmmm512_k1z_zmm`):
/// its first operand is the register-or-memory one. By name, not through
/// `Code::op_code()`, whose table iced builds whole on first use (every
/// code's description formatted: about 2 ms of each process's start-up,
/// and glibc's EVEX string functions reach this at once).
fn is_store_form(insn: &Instruction) -> bool {
    use iced_x86::Code::*;
    matches!(
        insn.code(),
        EVEX_Vmovdqu8_xmmm128_k1z_xmm
            | EVEX_Vmovdqu8_ymmm256_k1z_ymm
            | EVEX_Vmovdqu8_zmmm512_k1z_zmm
            | EVEX_Vmovdqu16_xmmm128_k1z_xmm
            | EVEX_Vmovdqu16_ymmm256_k1z_ymm
            | EVEX_Vmovdqu16_zmmm512_k1z_zmm
            | EVEX_Vmovdqu32_xmmm128_k1z_xmm
            | EVEX_Vmovdqu32_ymmm256_k1z_ymm
            | EVEX_Vmovdqu32_zmmm512_k1z_zmm
            | EVEX_Vmovdqu64_xmmm128_k1z_xmm
            | EVEX_Vmovdqu64_ymmm256_k1z_ymm
            | EVEX_Vmovdqu64_zmmm512_k1z_zmm
            | EVEX_Vmovdqa32_xmmm128_k1z_xmm
            | EVEX_Vmovdqa32_ymmm256_k1z_ymm
            | EVEX_Vmovdqa32_zmmm512_k1z_zmm
            | EVEX_Vmovdqa64_xmmm128_k1z_xmm
            | EVEX_Vmovdqa64_ymmm256_k1z_ymm
            | EVEX_Vmovdqa64_zmmm512_k1z_zmm
            | EVEX_Vmovups_xmmm128_k1z_xmm
            | EVEX_Vmovups_ymmm256_k1z_ymm
            | EVEX_Vmovups_zmmm512_k1z_zmm
            | EVEX_Vmovupd_xmmm128_k1z_xmm
            | EVEX_Vmovupd_ymmm256_k1z_ymm
            | EVEX_Vmovupd_zmmm512_k1z_zmm
            | EVEX_Vmovaps_xmmm128_k1z_xmm
            | EVEX_Vmovaps_ymmm256_k1z_ymm
            | EVEX_Vmovaps_zmmm512_k1z_zmm
            | EVEX_Vmovapd_xmmm128_k1z_xmm
            | EVEX_Vmovapd_ymmm256_k1z_ymm
            | EVEX_Vmovapd_zmmm512_k1z_zmm
    )
}

/// Per instruction of a straight-line run: the vector registers xmm0–15
/// (bit n) whose values are dead before it, as `(low, whole)`: `low`, no
/// later instruction reads bits 0–127 before writing them all (legacy SSE
/// code may use it as scratch: it leaves the bits above alone); `whole`,
/// none reads any part before a VEX or EVEX write (which zeroes the bits
/// above) replaces it all (VEX code may use it). Branches, calls, returns,
/// the run's end and instructions that touch every register (`xsave`,
/// `vzeroupper`, …) keep everything live. Also, per instruction, the
/// registers xmm0–15 it names or uses at all (bit n), read or written, and
/// the general registers (bit n: the 64-bit register numbered n, `rax` 0
/// … `r15` 15) it names or uses in any width (branches, calls and returns:
/// none).
pub fn vectors_dead_before(insns: &[Instruction]) -> RunRegisters {
    use iced_x86::FlowControl;
    let mut live_low = u16::MAX;
    let mut live_whole = u16::MAX;
    let mut dead = vec![(0, 0); insns.len()];
    let mut used = vec![0u16; insns.len()];
    let mut gprs = vec![0u16; insns.len()];
    let mut factory = InstructionInfoFactory::new();
    for (i, insn) in insns.iter().enumerate().rev() {
        let barrier = insn.flow_control() != FlowControl::Next
            || matches!(
                semantics(insn.code()),
                Some(Semantics::Special(SpecialKind::StateSave)) | None
            )
            || matches!(insn.mnemonic(), Mnemonic::Vzeroupper | Mnemonic::Vzeroall);
        let zeroing = insn.encoding() != EncodingKind::Legacy;
        let mut reads = 0u16;
        let mut writes = (0u16, 0u16);
        // Branches, calls and returns name no vector register.
        let named = if insn.flow_control() == FlowControl::Next {
            factory.info(insn).used_registers()
        } else {
            &[]
        };
        for u in named {
            let r = u.register();
            if r.is_gpr() {
                gprs[i] |= 1 << r.full_register().number();
                continue;
            }
            if !(r.is_xmm() || r.is_ymm() || r.is_zmm()) || r.number() >= 16 {
                continue;
            }
            let bit = 1u16 << r.number();
            used[i] |= bit;
            if u.access() == OpAccess::Write {
                writes.0 |= bit;
                if zeroing {
                    writes.1 |= bit;
                }
            } else {
                reads |= bit;
            }
        }
        if barrier {
            live_low = u16::MAX;
            live_whole = u16::MAX;
        } else {
            live_low = live_low & !writes.0 | reads;
            live_whole = live_whole & !writes.1 | reads;
        }
        dead[i] = (!live_low, !live_whole);
    }
    RunRegisters { dead, used, gprs }
}

/// What [`vectors_dead_before`] finds, per instruction of a run.
pub struct RunRegisters {
    /// Vector registers dead before it, `(low, whole)`.
    pub dead: Vec<(u16, u16)>,
    /// Vector registers it names or uses.
    pub used: Vec<u16>,
    /// General registers it names or uses.
    pub gprs: Vec<u16>,
}

/// For each instruction of a straight-line run, whether the status flags
/// are dead just before it. Flags are taken as live at the end of the run
/// (the successor is unknown) and at side exits, dead before a call or a
/// return (the ABI passes none) — except a return in a run that restores
/// the flags with `popf`: that is how code called asynchronously returns
/// to the instruction it interrupted (Go's `asyncPreempt`, injected by its
/// signal handler between a `cmp` and its `jl`, ends `popfq; pop rbp;
/// ret`). Shifts or rotates by `cl` do not count as writing the flags (a
/// zero count leaves them unchanged).
pub fn flags_dead_before(insns: &[Instruction]) -> Vec<bool> {
    const STATUS: u32 = 0x3f; // OF SF ZF AF CF PF in iced's RflagsBits
    let restores_flags = insns.iter().any(|i| {
        matches!(
            i.mnemonic(),
            Mnemonic::Popf | Mnemonic::Popfd | Mnemonic::Popfq
        )
    });
    let mut live = STATUS;
    let mut dead = vec![false; insns.len()];
    for (i, insn) in insns.iter().enumerate().rev() {
        let count_in_cl = matches!(
            insn.mnemonic(),
            Mnemonic::Shl
                | Mnemonic::Shr
                | Mnemonic::Sal
                | Mnemonic::Sar
                | Mnemonic::Rol
                | Mnemonic::Ror
                | Mnemonic::Rcl
                | Mnemonic::Rcr
                | Mnemonic::Shld
                | Mnemonic::Shrd
        ) && (0..insn.op_count()).all(|k| insn.op_kind(k) != OpKind::Immediate8);
        if matches!(
            insn.flow_control(),
            iced_x86::FlowControl::Call | iced_x86::FlowControl::IndirectCall
        ) || insn.flow_control() == iced_x86::FlowControl::Return && !restores_flags
        {
            // The calling convention: no flags are passed to a callee or
            // back to the caller.
            live = 0;
        } else if insn.flow_control() == iced_x86::FlowControl::Return {
            live = STATUS;
        }
        if insn.flow_control() == iced_x86::FlowControl::ConditionalBranch {
            // A side exit: its target may read any flag.
            live = STATUS;
        }
        let written = if count_in_cl {
            0
        } else {
            insn.rflags_modified() & STATUS
        };
        live = (live & !written) | (insn.rflags_read() & STATUS);
        dead[i] = live == 0;
    }
    dead
}

/// The register shadows a passive instruction clears, or `None` when it
/// also writes memory or x87 state (left to the runtime).
fn passive_registers(insn: &Instruction) -> Option<Vec<(u32, u8)>> {
    // Merge masking keeps the lanes the mask leaves alone, with their
    // indices: the runtime clears only the others.
    if insn.fpu_stack_increment_info().increment() != 0
        || insn.op_mask() != Register::None && !insn.zeroing_masking()
    {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    if info.used_memory().iter().any(|m| writes(m.access())) {
        return None;
    }
    let (clears, others) = written_register_shadows(insn, info);
    // x87 and anything unexpected: leave it to the runtime.
    (!others).then_some(clears)
}

/// The shadow bytes of the general and vector registers `insn` writes, as
/// `(offset in the register file, length)` pieces of at most 8 bytes, and
/// whether it also writes other registers that may carry indices (x87).
/// A 32- or 64-bit write replaces a general register's whole shadow, a
/// narrower one spoils its low granule; legacy SSE writes only its xmm,
/// VEX/EVEX writes zero everything up to 64 bytes.
pub fn written_register_shadows(
    insn: &Instruction,
    info: &iced_x86::InstructionInfo,
) -> (Vec<(u32, u8)>, bool) {
    let legacy = insn.encoding() == EncodingKind::Legacy;
    let mut clears = Vec::new();
    let mut others = false;
    if insn.mnemonic() == Mnemonic::Vzeroupper {
        // Zeroes bytes 16..64 of the first 16 vector registers; the xmm
        // parts keep their values and their indices.
        for reg in 0..16 {
            let base = RegFile::vec_offset(reg, 0) as u32;
            clears.extend((16..64).step_by(8).map(|b| (base + b, 8)));
        }
        return (clears, false);
    }
    for u in info.used_registers() {
        let r = u.register();
        if !writes(u.access()) {
            continue;
        }
        if r.is_gpr() {
            let len = if r.size() >= 4 { 8 } else { 4 };
            clears.push((
                RegFile::gpr_offset(r.full_register().number(), 0) as u32,
                len,
            ));
        } else if r.is_xmm() || r.is_ymm() || r.is_zmm() {
            let len = if legacy { r.size() } else { 64 };
            let base = RegFile::vec_offset(r.number(), 0) as u32;
            for chunk in (0..len).step_by(8) {
                clears.push((base + chunk as u32, 8));
            }
        } else if !(r.is_k()
            || matches!(r, Register::RIP | Register::EIP)
            || r.is_segment_register())
        {
            // Masks and control state never carry indices.
            others = true;
        }
    }
    clears.sort_unstable();
    clears.dedup();
    (clears, others)
}

#[cfg(test)]
mod tests {
    use iced_x86::{Code, Instruction, Mnemonic, OpCodeOperandKind};

    /// [`super::is_store_form`]'s list is every EVEX code of the masked
    /// moves whose first operand is the register-or-memory one.
    #[test]
    fn store_forms_are_iceds() {
        use Mnemonic::*;
        let moves = [
            Vmovdqu8, Vmovdqu16, Vmovdqu32, Vmovdqu64, Vmovdqa32, Vmovdqa64, Vmovups, Vmovupd,
            Vmovaps, Vmovapd,
        ];
        let mut stores = 0;
        for code in Code::values() {
            if code.encoding() != iced_x86::EncodingKind::EVEX || !moves.contains(&code.mnemonic())
            {
                continue;
            }
            let op = code.op_code();
            let store = matches!(
                op.op_kind(0),
                OpCodeOperandKind::xmm_or_mem
                    | OpCodeOperandKind::ymm_or_mem
                    | OpCodeOperandKind::zmm_or_mem
            );
            let mut insn = Instruction::default();
            insn.set_code(code);
            assert_eq!(super::is_store_form(&insn), store, "{code:?}");
            stores += usize::from(store);
        }
        assert_eq!(stores, 30);
    }
}
