//! The instruction-semantics table: what each instruction does to shadows.
//!
//! One entry per iced-x86 [`Code`], derived once from the rule tables below,
//! which are keyed by mnemonic name (the operand forms of one mnemonic share
//! its semantics; widths and lanes come from the decoded operands). The
//! instrumentation reads this table and nothing else to decide what to do:
//! no semantic `match` arms elsewhere. `tests/semantics-table.txt` lists
//! every classified mnemonic; regenerate it with `DGAD_BLESS=1`.
//!
//! An instruction without an entry is still executed; its destinations get
//! the default rule (shadow cleared) and it is counted in the statistics as
//! "no semantic entry".

use iced_x86::{Code, Mnemonic};
use std::sync::OnceLock;

/// Floating-point element type of an arithmetic or conversion instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// binary32
    F32,
    /// binary64
    F64,
    /// x87 80-bit extended
    F80,
}

/// Whether an SSE/AVX operation works on the lowest lane only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Lowest lane only; the other destination lanes pass through.
    Scalar,
    /// Every lane.
    Packed,
}

/// A differentiable floating-point operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FpOp {
    /// a + b
    Add,
    /// a - b
    Sub,
    /// a * b
    Mul,
    /// a / b
    Div,
    /// sqrt(a)
    Sqrt,
    /// min(a, b) with x86 semantics (second operand on ties and NaN)
    Min,
    /// max(a, b) with x86 semantics
    Max,
    /// Horizontal add of adjacent lanes.
    HAdd,
    /// Horizontal subtract of adjacent lanes.
    HSub,
    /// Alternating subtract/add of lanes.
    AddSub,
    /// Approximate reciprocal 1/a.
    Rcp,
    /// Approximate reciprocal square root 1/sqrt(a).
    Rsqrt,
    /// Rounding to an integral value (derivative 0).
    Round,
    /// AVX-512 `vscalef`: a · 2^⌊b⌋ (∂/∂a = 2^⌊b⌋, ∂/∂b = 0).
    Scalef,
    /// AVX-512 `vgetmant`: a's significand scaled into the interval the
    /// immediate names, a / 2^k with a sign choice (∂/∂a = result / a).
    Mantissa,
    /// AVX-512 `vreduce`: a minus a rounded to the precision the immediate
    /// names (∂/∂a = 1).
    Reduce,
    /// AVX-512 `vrange`: one of a and b (min, max, or by magnitude, as the
    /// immediate says) with a sign the immediate chooses (∂ = ±1 for the
    /// operand picked).
    Range,
    /// Fused multiply-add family: ±(a·b) ± c; the operand order is in
    /// [`FmaForm`].
    Fma(FmaForm),
}

/// Which fused multiply-add: signs and operand order (132, 213, 231).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FmaForm {
    /// The product is negated (`fnm…`).
    pub neg_product: bool,
    /// The addend is subtracted (`…sub…`).
    pub sub_addend: bool,
    /// Alternating add/sub across lanes (`fmaddsub`, `fmsubadd`).
    pub alternating: bool,
    /// Operand numbers (1-based, destination first): product of the first
    /// two, plus the third; `[2, 1, 3]` for 213, `[2, 3, 4]` for FMA4.
    pub order: [u8; 3],
}

/// Bitwise operations that can implement abs, negation and copysign on
/// floating-point data (the bit-tricks of the forward-mode paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogicOp {
    /// a & b
    And,
    /// !a & b
    AndNot,
    /// a | b
    Or,
    /// a ^ b
    Xor,
    /// AVX-512 three-input logic with an immediate truth table.
    Ternary,
}

/// Special handling that does not fit the general classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialKind {
    /// x87 register-stack instruction (loads, stores, arithmetic, exchange).
    X87,
    /// String instruction (`movs`, `stos`, `lods`, …), possibly `rep`.
    String,
    /// Exchange of two locations (`xchg`, `xadd`, `cmpxchg`).
    Exchange,
    /// Control transfer or system interface (translated, not instrumented).
    Control,
    /// Gather or scatter with a vector of addresses: shadows move lane by
    /// lane between the vector and those addresses, under the mask (the
    /// runtime's `apply::gather_scatter`).
    GatherScatter,
    /// Saves or restores register state to or from memory (`xsave`,
    /// `xrstor`, `fxsave`, …): shadows go with the registers.
    StateSave,
}

/// What an instruction does to the shadows of what it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// Bytes move unchanged (possibly rearranged, masked or blended): shadow
    /// bytes move the same way, whatever the data type.
    Move,
    /// Floating-point arithmetic: one tape block per active result lane.
    FpArith {
        /// Operation.
        op: FpOp,
        /// Element type.
        elem: Elem,
        /// Scalar or packed.
        shape: Shape,
    },
    /// Conversion between floating-point formats: the value keeps its index.
    FpConvert {
        /// Source element type.
        from: Elem,
        /// Destination element type.
        to: Elem,
        /// Scalar or packed.
        shape: Shape,
    },
    /// Bitwise logic on data that may be floating-point (bit-tricks).
    BitLogic(LogicOp),
    /// Writes values that carry no derivative (integer results, masks,
    /// conversions to integers, loaded constants): destination shadows
    /// become 0.
    Passive,
    /// Writes nothing a shadow tracks (compares into flags, branches,
    /// fences, prefetches, no-ops).
    NoWrite,
    /// Needs dedicated handling.
    Special(SpecialKind),
}

/// The semantics of `code`, or `None` when the table has no entry for it.
pub fn semantics(code: Code) -> Option<Semantics> {
    // Classified on first use, code by code: classifying all ~4,900 codes
    // up front took most of a short process's start-up (35 of the 45
    // million instructions of `/bin/true` under dgad).
    static TABLE: OnceLock<Box<[OnceLock<Option<Semantics>>]>> = OnceLock::new();
    let entry =
        &TABLE.get_or_init(|| Code::values().map(|_| OnceLock::new()).collect())[code as usize];
    *entry.get_or_init(|| match code {
        // `movsd`/`cmpsd` name both SSE2 instructions and string instructions.
        Code::Movsd_m32_m32 | Code::Cmpsd_m32_m32 => Some(Semantics::Special(SpecialKind::String)),
        _ => classify_mnemonic(code.mnemonic()),
    })
}

/// The semantics of a mnemonic, from the rules below.
pub fn classify_mnemonic(m: Mnemonic) -> Option<Semantics> {
    let name = format!("{m:?}").to_ascii_lowercase();
    classify_name(&name)
}

/// Element and shape from an SSE/AVX suffix.
fn suffix(s: &str) -> Option<(Elem, Shape)> {
    Some(match s {
        "sd" => (Elem::F64, Shape::Scalar),
        "ss" => (Elem::F32, Shape::Scalar),
        "pd" => (Elem::F64, Shape::Packed),
        "ps" => (Elem::F32, Shape::Packed),
        _ => return None,
    })
}

/// Arithmetic stems, longest first so that `rsqrt` is not read as `sqrt`.
const FP_STEMS: &[(&str, FpOp)] = &[
    ("rsqrt14", FpOp::Rsqrt),
    ("rsqrt28", FpOp::Rsqrt),
    ("rsqrt", FpOp::Rsqrt),
    ("rcp14", FpOp::Rcp),
    ("rcp28", FpOp::Rcp),
    ("rcp", FpOp::Rcp),
    ("addsub", FpOp::AddSub),
    ("hadd", FpOp::HAdd),
    ("hsub", FpOp::HSub),
    ("sqrt", FpOp::Sqrt),
    ("add", FpOp::Add),
    ("sub", FpOp::Sub),
    ("mul", FpOp::Mul),
    ("div", FpOp::Div),
    ("min", FpOp::Min),
    ("max", FpOp::Max),
    ("round", FpOp::Round),
    ("rndscale", FpOp::Round),
    ("scalef", FpOp::Scalef),
    ("getmant", FpOp::Mantissa),
    ("reduce", FpOp::Reduce),
    ("range", FpOp::Range),
];

/// Whole mnemonics (after dropping a VEX/EVEX `v`) that move data.
const MOVES: &[&str] = &[
    "mov",
    "movsd",
    "movss",
    "movapd",
    "movaps",
    "movupd",
    "movups",
    "movdqa",
    "movdqu",
    "movdqa32",
    "movdqa64",
    "movdqu8",
    "movdqu16",
    "movdqu32",
    "movdqu64",
    "movq",
    "movd",
    "movhpd",
    "movlpd",
    "movhps",
    "movlps",
    "movhlps",
    "movlhps",
    "movddup",
    "movshdup",
    "movsldup",
    "movntdq",
    "movntdqa",
    "movnti",
    "movntpd",
    "movntps",
    "movntq",
    "lddqu",
    "unpcklpd",
    "unpckhpd",
    "unpcklps",
    "unpckhps",
    "punpcklqdq",
    "punpckhqdq",
    "punpckldq",
    "punpckhdq",
    "punpcklwd",
    "punpckhwd",
    "punpcklbw",
    "punpckhbw",
    "shufpd",
    "shufps",
    "pshufd",
    "pshufb",
    "pshufhw",
    "pshuflw",
    "palignr",
    "alignd",
    "alignq",
    "pslldq",
    "psrldq",
    "permilpd",
    "permilps",
    "permpd",
    "permps",
    "permd",
    "permq",
    "perm2f128",
    "perm2i128",
    "permt2pd",
    "permt2ps",
    "permt2d",
    "permt2q",
    "permi2pd",
    "permi2ps",
    "permi2d",
    "permi2q",
    "permb",
    "permw",
    "permt2b",
    "permt2w",
    "broadcastsd",
    "broadcastss",
    "broadcastf128",
    "broadcasti128",
    "broadcastf32x2",
    "broadcastf32x4",
    "broadcastf32x8",
    "broadcastf64x2",
    "broadcastf64x4",
    "broadcasti32x2",
    "broadcasti32x4",
    "broadcasti32x8",
    "broadcasti64x2",
    "broadcasti64x4",
    "pbroadcastb",
    "pbroadcastw",
    "pbroadcastd",
    "pbroadcastq",
    "insertf128",
    "inserti128",
    "insertf32x4",
    "insertf32x8",
    "insertf64x2",
    "insertf64x4",
    "inserti32x4",
    "inserti32x8",
    "inserti64x2",
    "inserti64x4",
    "extractf128",
    "extracti128",
    "extractf32x4",
    "extractf32x8",
    "extractf64x2",
    "extractf64x4",
    "extracti32x4",
    "extracti32x8",
    "extracti64x2",
    "extracti64x4",
    "insertps",
    "extractps",
    "pinsrq",
    "pextrq",
    "pinsrd",
    "pextrd",
    "pinsrw",
    "pextrw",
    "pinsrb",
    "pextrb",
    "blendpd",
    "blendps",
    "blendvpd",
    "blendvps",
    "pblendd",
    "pblendw",
    "pblendvb",
    "blendmpd",
    "blendmps",
    "pblendmd",
    "pblendmq",
    "pblendmb",
    "pblendmw",
    "maskmovpd",
    "maskmovps",
    "pmaskmovd",
    "pmaskmovq",
    "maskmovdqu",
    "compresspd",
    "compressps",
    "expandpd",
    "expandps",
    // Truncating qword → dword: the low 4 bytes of each lane, an index
    // granule (a float in the low half moves with its index).
    "pmovqd",
    "pcompressd",
    "pcompressq",
    "pexpandd",
    "pexpandq",
    "shuff32x4",
    "shuff64x2",
    "shufi32x4",
    "shufi64x2",
    "push",
    "pop",
    "cmovo",
    "cmovno",
    "cmovb",
    "cmovae",
    "cmove",
    "cmovne",
    "cmovbe",
    "cmova",
    "cmovs",
    "cmovns",
    "cmovp",
    "cmovnp",
    "cmovl",
    "cmovge",
    "cmovle",
    "cmovg",
    "leave",
    // Zero extension moves bytes and fills with zeros: exactly a move of
    // shadow bytes (byte-wise copies at -O0 go through movzx).
    "movzx",
];

/// Whole mnemonics whose results carry no derivative.
const PASSIVE: &[&str] = &[
    // integer arithmetic, shifts, bit manipulation on general registers
    "add",
    "sub",
    "adc",
    "sbb",
    "adcx",
    "adox",
    "imul",
    "mul",
    "div",
    "idiv",
    "inc",
    "dec",
    "neg",
    "not",
    "shl",
    "shr",
    "sar",
    "sal",
    "rol",
    "ror",
    "rcl",
    "rcr",
    "shld",
    "shrd",
    "lea",
    "movsx",
    "movsxd",
    "bswap",
    "bts",
    "btr",
    "btc",
    "bsf",
    "bsr",
    "lzcnt",
    "tzcnt",
    "popcnt",
    "seto",
    "setno",
    "setb",
    "setae",
    "sete",
    "setne",
    "setbe",
    "seta",
    "sets",
    "setns",
    "setp",
    "setnp",
    "setl",
    "setge",
    "setle",
    "setg",
    "cwd",
    "cdq",
    "cqo",
    "cbw",
    "cwde",
    "cdqe",
    "bextr",
    "blsi",
    "blsr",
    "blsmsk",
    "bzhi",
    "pdep",
    "pext",
    "rorx",
    "sarx",
    "shlx",
    "shrx",
    "mulx",
    "crc32",
    "rdtsc",
    "rdtscp",
    "rdrand",
    "rdseed",
    "rdpid",
    "movbe",
    "lahf",
    "pushfq",
    "xgetbv",
    "rdfsbase",
    "rdgsbase",
    "rdpkru",
    "rdsspq",
    // vector integer arithmetic, compares, shifts, packs, masks
    "paddb",
    "paddw",
    "paddd",
    "paddq",
    "psubb",
    "psubw",
    "psubd",
    "psubq",
    "paddsb",
    "paddsw",
    "paddusb",
    "paddusw",
    "psubsb",
    "psubsw",
    "psubusb",
    "psubusw",
    "pmullw",
    "pmulld",
    "pmullq",
    "pmulhw",
    "pmulhuw",
    "pmuludq",
    "pmuldq",
    "pmaddwd",
    "pmaddubsw",
    "pavgb",
    "pavgw",
    "psadbw",
    "pminsb",
    "pminsw",
    "pminsd",
    "pminsq",
    "pminub",
    "pminuw",
    "pminud",
    "pminuq",
    "pmaxsb",
    "pmaxsw",
    "pmaxsd",
    "pmaxsq",
    "pmaxub",
    "pmaxuw",
    "pmaxud",
    "pmaxuq",
    "pabsb",
    "pabsw",
    "pabsd",
    "pabsq",
    "pcmpeqb",
    "pcmpeqw",
    "pcmpeqd",
    "pcmpeqq",
    "pcmpgtb",
    "pcmpgtw",
    "pcmpgtd",
    "pcmpgtq",
    "pcmpb",
    "pcmpw",
    "pcmpd",
    "pcmpq",
    "pcmpub",
    "pcmpuw",
    "pcmpud",
    "pcmpuq",
    "psllw",
    "pslld",
    "psllq",
    "psrlw",
    "psrld",
    "psrlq",
    "psraw",
    "psrad",
    "psraq",
    "psllvd",
    "psllvq",
    "psrlvd",
    "psrlvq",
    "psravd",
    "psravq",
    "prold",
    "prolq",
    "prord",
    "prorq",
    "pmovzxbw",
    "pmovzxbd",
    "pmovzxbq",
    "pmovzxwd",
    "pmovzxwq",
    "pmovzxdq",
    "pmovsxbw",
    "pmovsxbd",
    "pmovsxbq",
    "pmovsxwd",
    "pmovsxwq",
    "pmovsxdq",
    "pmovqb",
    "pmovqw",
    "pmovdb",
    "pmovdw",
    "pmovwb",
    "packsswb",
    "packssdw",
    "packuswb",
    "packusdw",
    "pmovmskb",
    "movmskpd",
    "movmskps",
    "ptest",
    "pcmpestri",
    "pcmpestrm",
    "pcmpistri",
    "pcmpistrm",
    "pclmulqdq",
    "aesenc",
    "aesenclast",
    "aesdec",
    "aesdeclast",
    "aesimc",
    "aeskeygenassist",
    "sha1rnds4",
    "sha1nexte",
    "sha1msg1",
    "sha1msg2",
    "sha256rnds2",
    "sha256msg1",
    "sha256msg2",
    "pshufbitqmb",
    "psignb",
    "psignw",
    "psignd",
    "phaddw",
    "phaddd",
    "phsubw",
    "phsubd",
    "pmulhrsw",
    "plzcntd",
    "plzcntq",
    "popcntb",
    "popcntw",
    "popcntd",
    "popcntq",
    "pconflictd",
    "pconflictq",
    "kmovb",
    "kmovw",
    "kmovd",
    "kmovq",
    "kandb",
    "kandw",
    "kandd",
    "kandq",
    "korb",
    "korw",
    "kord",
    "korq",
    "kxorb",
    "kxorw",
    "kxord",
    "kxorq",
    "kxnorb",
    "kxnorw",
    "kxnord",
    "kxnorq",
    "knotb",
    "knotw",
    "knotd",
    "knotq",
    "kandnb",
    "kandnw",
    "kandnd",
    "kandnq",
    "kshiftlb",
    "kshiftlw",
    "kshiftld",
    "kshiftlq",
    "kshiftrb",
    "kshiftrw",
    "kshiftrd",
    "kshiftrq",
    "kunpckbw",
    "kunpckwd",
    "kunpckdq",
    "kaddb",
    "kaddw",
    "kaddd",
    "kaddq",
    "pmovb2m",
    "pmovw2m",
    "pmovd2m",
    "pmovq2m",
    "pmovm2b",
    "pmovm2w",
    "pmovm2d",
    "pmovm2q",
    "ptestmb",
    "ptestmw",
    "ptestmd",
    "ptestmq",
    "ptestnmb",
    "ptestnmw",
    "ptestnmd",
    "ptestnmq",
    "pdpbusd",
    "pdpbusds",
    "pdpwssd",
    "pdpwssds",
    "gf2p8affineqb",
    "gf2p8affineinvqb",
    "gf2p8mulb",
    "dbpsadbw",
    "mpsadbw",
    "phminposuw",
    "pmadd52luq",
    "pmadd52huq",
    "zeroupper",
    "zeroall",
    // floating-point compares (into masks), classification, conversions to integers
    "cmpsd",
    "cmpss",
    "cmppd",
    "cmpps",
    "fpclasspd",
    "fpclassps",
    "fpclasssd",
    "fpclassss",
    "cvtsd2si",
    "cvttsd2si",
    "cvtss2si",
    "cvttss2si",
    "cvtsd2usi",
    "cvttsd2usi",
    "cvtss2usi",
    "cvttss2usi",
    "cvtpd2dq",
    "cvttpd2dq",
    "cvtps2dq",
    "cvttps2dq",
    "cvtpd2qq",
    "cvttpd2qq",
    "cvtps2qq",
    "cvttps2qq",
    "cvtpd2udq",
    "cvttpd2udq",
    "cvtps2udq",
    "cvttps2udq",
    "cvtpd2uqq",
    "cvttpd2uqq",
    "cvtps2uqq",
    "cvttps2uqq",
    "cvtpd2pi",
    "cvttpd2pi",
    "cvtps2pi",
    "cvttps2pi",
    // integer to floating-point: the value is a constant as far as AD goes
    "cvtsi2sd",
    "cvtsi2ss",
    "cvtusi2sd",
    "cvtusi2ss",
    "cvtdq2pd",
    "cvtdq2ps",
    "cvtqq2pd",
    "cvtqq2ps",
    "cvtudq2pd",
    "cvtudq2ps",
    "cvtuqq2pd",
    "cvtuqq2ps",
    "cvtpi2pd",
    "cvtpi2ps",
    // half precision (no f16 AD support): results are treated as constants
    "cvtph2ps",
    "cvtps2ph",
    // exponent/mantissa extraction: piecewise-constant or not supported yet
    "getexppd",
    "getexpps",
    "getexpsd",
    "getexpss",
];

/// Whole mnemonics that write no tracked location.
const NO_WRITE: &[&str] = &[
    "cmp",
    "test",
    "bt",
    "comisd",
    "comiss",
    "ucomisd",
    "ucomiss",
    "nop",
    "pause",
    "lfence",
    "sfence",
    "mfence",
    "prefetch",
    "prefetchw",
    "prefetchnta",
    "prefetcht0",
    "prefetcht1",
    "prefetcht2",
    "prefetchwt1",
    "endbr64",
    "endbr32",
    "clflush",
    "clflushopt",
    "clwb",
    "ldmxcsr",
    "stmxcsr",
    "cld",
    "std",
    "clc",
    "stc",
    "cmc",
    "sahf",
    "popfq",
    "xtest",
    "xend",
    "xabort",
    "ud2",
    "int3",
    "hlt",
    "serialize",
    "fwait",
    "wait",
    "fnop",
    "fincstp",
    "fdecstp",
    "ffree",
    "fnclex",
    "fninit",
    "fldcw",
    "fnstcw",
    "fstcw",
    "fnstenv",
    "fldenv",
    "ffreep",
    "kortestb",
    "kortestw",
    "kortestd",
    "kortestq",
    "ktestb",
    "ktestw",
    "ktestd",
    "ktestq",
    "wrpkru",
    "emms",
    "rdsspd",
    "incsspq",
];

/// Control transfers and system interfaces: handled by the translator.
const CONTROL: &[&str] = &[
    "jmp", "call", "ret", "jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja", "js", "jns", "jp",
    "jnp", "jl", "jge", "jle", "jg", "jrcxz", "jecxz", "loop", "loope", "loopne", "syscall",
    "cpuid", "xbegin", "int", "iretq", "sysenter", "enter",
];

/// Register-state save and restore.
const STATE_SAVES: &[&str] = &[
    "xsave",
    "xsave64",
    "xsavec",
    "xsavec64",
    "xsaveopt",
    "xsaveopt64",
    "xsaves",
    "xsaves64",
    "xrstor",
    "xrstor64",
    "xrstors",
    "xrstors64",
    "fxsave",
    "fxsave64",
    "fxrstor",
    "fxrstor64",
];

const STRINGS: &[&str] = &[
    "movsb", "movsw", "movsq", "stosb", "stosw", "stosd", "stosq", "lodsb", "lodsw", "lodsd",
    "lodsq", "scasb", "scasw", "scasd", "scasq", "cmpsb", "cmpsw", "cmpsq",
];

fn classify_name(name: &str) -> Option<Semantics> {
    if CONTROL.contains(&name) {
        return Some(Semantics::Special(SpecialKind::Control));
    }
    if STATE_SAVES.contains(&name) {
        return Some(Semantics::Special(SpecialKind::StateSave));
    }
    if STRINGS.contains(&name) {
        return Some(Semantics::Special(SpecialKind::String));
    }
    if matches!(
        name,
        "xchg" | "xadd" | "cmpxchg" | "cmpxchg8b" | "cmpxchg16b"
    ) {
        return Some(Semantics::Special(SpecialKind::Exchange));
    }
    if name.starts_with('f') && !name.starts_with("fma") && !NO_WRITE.contains(&name) {
        return x87(name);
    }
    // SSE forms and their VEX/EVEX twins share one rule ("addsd", "vaddsd").
    let base = name
        .strip_prefix('v')
        .filter(|_| name.len() > 3)
        .unwrap_or(name);
    for n in [name, base] {
        if NO_WRITE.contains(&n) {
            return Some(Semantics::NoWrite);
        }
        if MOVES.contains(&n) {
            return Some(Semantics::Move);
        }
        if PASSIVE.contains(&n) {
            return Some(Semantics::Passive);
        }
        if let Some(s) = logic(n) {
            return Some(s);
        }
    }
    if base.starts_with("gather")
        || base.starts_with("pgather")
        || base.starts_with("scatter")
        || base.starts_with("pscatter")
    {
        return Some(Semantics::Special(SpecialKind::GatherScatter));
    }
    if let Some(s) = fma(base) {
        return Some(s);
    }
    if let Some(s) = convert(base) {
        return Some(s);
    }
    for &(stem, op) in FP_STEMS {
        if let Some(rest) = base.strip_prefix(stem) {
            if let Some((elem, shape)) = suffix(rest) {
                return Some(Semantics::FpArith { op, elem, shape });
            }
        }
    }
    None
}

fn logic(n: &str) -> Option<Semantics> {
    let op = match n {
        "and" | "andpd" | "andps" | "pand" | "pandd" | "pandq" => LogicOp::And,
        "andn" | "andnpd" | "andnps" | "pandn" | "pandnd" | "pandnq" => LogicOp::AndNot,
        "or" | "orpd" | "orps" | "por" | "pord" | "porq" => LogicOp::Or,
        "xor" | "xorpd" | "xorps" | "pxor" | "pxord" | "pxorq" => LogicOp::Xor,
        "pternlogd" | "pternlogq" => LogicOp::Ternary,
        _ => return None,
    };
    Some(Semantics::BitLogic(op))
}

fn fma(n: &str) -> Option<Semantics> {
    let (neg_product, rest) = match n.strip_prefix("fnm") {
        Some(r) => (true, r),
        None => (false, n.strip_prefix("fm")?),
    };
    let (sub_addend, alternating, rest) = if let Some(r) = rest.strip_prefix("addsub") {
        (false, true, r)
    } else if let Some(r) = rest.strip_prefix("subadd") {
        (true, true, r)
    } else if let Some(r) = rest.strip_prefix("add") {
        (false, false, r)
    } else {
        (true, false, rest.strip_prefix("sub")?)
    };
    // FMA3 names carry the operand order (132, 213, 231); AMD's FMA4 forms
    // have four operands and compute op2 * op3 + op4.
    let (order, rest) = match rest.get(..3).map(str::as_bytes) {
        Some(d) if d.iter().all(u8::is_ascii_digit) => {
            ([d[0] - b'0', d[1] - b'0', d[2] - b'0'], &rest[3..])
        }
        _ => ([2, 3, 4], rest),
    };
    let (elem, shape) = suffix(rest)?;
    let form = FmaForm {
        neg_product,
        sub_addend,
        alternating,
        order,
    };
    Some(Semantics::FpArith {
        op: FpOp::Fma(form),
        elem,
        shape,
    })
}

fn convert(n: &str) -> Option<Semantics> {
    let (from, to, shape) = match n {
        "cvtsd2ss" => (Elem::F64, Elem::F32, Shape::Scalar),
        "cvtss2sd" => (Elem::F32, Elem::F64, Shape::Scalar),
        "cvtpd2ps" => (Elem::F64, Elem::F32, Shape::Packed),
        "cvtps2pd" => (Elem::F32, Elem::F64, Shape::Packed),
        _ => return None,
    };
    Some(Semantics::FpConvert { from, to, shape })
}

fn x87(name: &str) -> Option<Semantics> {
    const X87: &[&str] = &[
        "fld", "fst", "fstp", "fxch", "fadd", "faddp", "fsub", "fsubp", "fsubr", "fsubrp", "fmul",
        "fmulp", "fdiv", "fdivp", "fdivr", "fdivrp", "fchs", "fabs", "fsqrt", "fcmovb", "fcmove",
        "fcmovbe", "fcmovu", "fcmovnb", "fcmovne", "fcmovnbe", "fcmovnu", "frndint", "fiadd",
        "fisub", "fisubr", "fimul", "fidiv", "fidivr", "fscale", "fprem", "fprem1", "fsin", "fcos",
        "fsincos", "fptan", "fpatan", "f2xm1", "fyl2x", "fyl2xp1", "fxtract",
    ];
    const X87_PASSIVE: &[&str] = &[
        "fild", "fist", "fistp", "fisttp", "fld1", "fldz", "fldpi", "fldl2e", "fldl2t", "fldlg2",
        "fldln2", "fnstsw", "fstsw", "fcom", "fcomp", "fcompp", "fcomi", "fcomip", "fucom",
        "fucomp", "fucompp", "fucomi", "fucomip", "ficom", "ficomp", "ftst", "fxam", "fbld",
        "fbstp", "fnsave", "frstor",
    ];
    if X87.contains(&name) {
        Some(Semantics::Special(SpecialKind::X87))
    } else if X87_PASSIVE.contains(&name) {
        Some(Semantics::Passive)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representative_entries() {
        use Semantics::*;
        let arith = |op, elem, shape| Some(FpArith { op, elem, shape });
        assert_eq!(
            semantics(Code::Addsd_xmm_xmmm64),
            arith(FpOp::Add, Elem::F64, Shape::Scalar)
        );
        assert_eq!(
            semantics(Code::EVEX_Vmulpd_zmm_k1z_zmm_zmmm512b64_er),
            arith(FpOp::Mul, Elem::F64, Shape::Packed)
        );
        assert_eq!(
            semantics(Code::VEX_Vsqrtss_xmm_xmm_xmmm32),
            arith(FpOp::Sqrt, Elem::F32, Shape::Scalar)
        );
        assert_eq!(
            semantics(Code::Rsqrtps_xmm_xmmm128),
            arith(FpOp::Rsqrt, Elem::F32, Shape::Packed)
        );
        let fma213 = FmaForm {
            neg_product: false,
            sub_addend: false,
            alternating: false,
            order: [2, 1, 3],
        };
        assert_eq!(
            semantics(Code::VEX_Vfmadd213sd_xmm_xmm_xmmm64),
            arith(FpOp::Fma(fma213), Elem::F64, Shape::Scalar)
        );
        let fnmsub231 = FmaForm {
            neg_product: true,
            sub_addend: true,
            alternating: false,
            order: [2, 3, 1],
        };
        assert_eq!(
            semantics(Code::EVEX_Vfnmsub231pd_zmm_k1z_zmm_zmmm512b64_er),
            arith(FpOp::Fma(fnmsub231), Elem::F64, Shape::Packed)
        );
        assert_eq!(semantics(Code::Movsd_xmm_xmmm64), Some(Move));
        assert_eq!(semantics(Code::EVEX_Vmovupd_zmmm512_k1z_zmm), Some(Move));
        assert_eq!(semantics(Code::Mov_rm64_r64), Some(Move));
        assert_eq!(
            semantics(Code::Xorpd_xmm_xmmm128),
            Some(BitLogic(LogicOp::Xor))
        );
        assert_eq!(semantics(Code::Xor_rm64_r64), Some(BitLogic(LogicOp::Xor)));
        assert_eq!(semantics(Code::Add_rm64_r64), Some(Passive));
        assert_eq!(semantics(Code::Cvttsd2si_r64_xmmm64), Some(Passive));
        assert_eq!(
            semantics(Code::Cvtss2sd_xmm_xmmm32),
            Some(FpConvert {
                from: Elem::F32,
                to: Elem::F64,
                shape: Shape::Scalar
            })
        );
        assert_eq!(semantics(Code::Ucomisd_xmm_xmmm64), Some(NoWrite));
        assert_eq!(semantics(Code::Fld_m80fp), Some(Special(SpecialKind::X87)));
        assert_eq!(semantics(Code::Fild_m64int), Some(Passive));
        assert_eq!(
            semantics(Code::Movsb_m8_m8),
            Some(Special(SpecialKind::String))
        );
    }
}
