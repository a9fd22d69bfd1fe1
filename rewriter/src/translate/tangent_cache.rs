//! Dot mode's tangent cache (decision 46): within a block, the tangent of
//! guest `xmm0`–`xmm12` is kept in `xmm16`–`xmm28`, so that the tangent
//! code of one instruction takes its operands' tangents from registers
//! instead of loading what the instruction before stored.
//!
//! ```text
//! movsd  xmm1, [m]      vmovsd xmm17, [shadow(m)]
//! movapd xmm2, xmm1     vmovdqa64 xmm18, xmm17
//! mulsd  xmm2, xmm3     vmulsd xmm30, xmm18, xmm3      ; dA·b
//!                       vmulsd xmm29, xmm19, xmm2      ; dB·a
//!                       vaddsd xmm29, xmm30, xmm29
//!                       vucomisd xmm29, xmm31 ; je →   ; ±0 or NaN: masked
//!                       vmovapd xmm18, xmm29           ;   code, out of line
//! ```
//!
//! - **Write-back.** A computed tangent stays in its register, newer than
//!   the shadow register file's, until something else needs the file: an
//!   exit (every branch, the block's end), a client request, an
//!   instruction the cache does not handle (its ordinary code, which may
//!   enter the runtime), or ordinary code reading that register's shadow.
//!   Each map entry of the block says which registers are newer there
//!   (`InsnMapEntry::tangents`): a fault or a signal at that point has the
//!   runtime copy them from the interrupted state into the file before
//!   anything reads it. `xmm29`–`xmm31` and `k1`–`k3` are the cache's
//!   temporaries: no program register is saved and restored around
//!   tangent code any more.
//! - **Validity.** A register's entry is loaded from the file at its first
//!   use in the block. An instruction the cache does not handle drops every
//!   entry (after writing them back); one that touches only general
//!   registers and memory keeps them; one that clears or checks register
//!   shadows writes back and drops only those.
//! - **Common paths straight, the rest after the block.** A scalar `add`
//!   or `sub` with both tangents nonzero (one test of their product for
//!   register operands) and a scalar product of registers whose tangent
//!   is neither ±0 nor NaN take a path without mask registers (`vptestm`,
//!   `kxor`, `kshift` all run on one port, which bounded Burgers' loop);
//!   `xmm31` is zeroed once for the tests and kept so. The masked code
//!   that handles every case is emitted after the block's last exit
//!   ([`RarePath`]); so is a scalar `add`/`sub` with exactly one passive
//!   operand, which computes in the cache unless that operand's value is
//!   in a rounding trick's shifter binades, where the ordinary code (and
//!   the runtime) looks.
//! - **Whose registers.** `xmm16`–`xmm31` and `k1`–`k3` exist only on CPUs
//!   with AVX-512, and only AVX-512 code (EVEX-encoded) names them; the
//!   cache is used only in blocks of legacy SSE code, where no instruction
//!   is VEX- or EVEX-encoded. Compilers never mix the two encodings in a
//!   function (code built for AVX encodes its SSE instructions with VEX),
//!   blocks end at calls and returns, and the ABI leaves these registers
//!   to the callee, so no program value lives in them while such a block
//!   runs: glibc's `strchr` and `memcpy` on this kind of CPU keep theirs
//!   in `ymm16`–`ymm31`, within their own EVEX blocks. A signal handler
//!   that interrupts AVX-512 code gets its registers back from the frame;
//!   the runtime saves and restores them with the rest. Hand-written
//!   assembly that keeps a value in `xmm16`–`xmm31` or `k1`–`k3` across
//!   legacy SSE instructions would see it change: `DGAD_TANGENT_CACHE=0`
//!   (`docs/limitations.md`).
//! - **Legacy SSE only**, also because VEX code would need the bits above
//!   128 of each tangent.

use super::{gs_operand, TranslateError, Translator, SPILLS_RAX};
use crate::emit::Gpr;
use crate::instrument::{DotArithmetic, MoveSide, Plan};
use crate::semantics::{Elem, FpOp};
use iced_x86::{Code, EncodingKind, Instruction, MemoryOperand, Register};
use shadowmem::RegFile;

/// Guest xmm registers whose tangents the cache holds: `0..CACHED`.
pub(super) const CACHED: u32 = 13;
/// The cache's temporaries.
const T0: Register = Register::XMM29;
const T1: Register = Register::XMM30;
const T2: Register = Register::XMM31;

/// The register holding guest xmm `n`'s tangent.
fn hi(n: u32) -> Register {
    Register::XMM16 + n
}

/// Whether `insn` is VEX- or EVEX-encoded or names a mask register: a
/// block with one does not use the cache.
pub(super) fn not_legacy_code(insn: &Instruction) -> bool {
    !matches!(insn.encoding(), EncodingKind::Legacy | EncodingKind::D3NOW)
        || (0..insn.op_count()).any(|i| insn.op_register(i).is_k())
}

/// The file offset where guest xmm `n`'s shadow starts.
fn file_start(n: u32) -> u32 {
    RegFile::vec_offset(n as usize, 0) as u32
}

/// The vector register whose shadow starts at file offset `off`, if `off`
/// is the start of a cached one.
fn cached_register_at(off: u32) -> Option<u32> {
    (0..CACHED).find(|&n| file_start(n) == off)
}

/// Sets a `{k}{z}` mask on `i`.
fn masked(mut i: Instruction, k: Register) -> Instruction {
    i.set_op_mask(k);
    i.set_zeroing_masking(true);
    i
}

impl Translator<'_> {
    /// Runs `plan` through the cache. Returns `None` when the cache emitted
    /// the instruction's tangent code, else the plan for the ordinary
    /// emitters, after dropping the entries their code may make stale.
    pub(super) fn cached_plan(
        &mut self,
        insn: &Instruction,
        plan: Plan,
    ) -> Result<Option<Plan>, TranslateError> {
        let dirty = self.dirty;
        let plan = self.cached_plan_inner(insn, plan)?;
        if plan.is_some() && self.dirty != dirty {
            // Written back for the ordinary code, which may change the
            // file next (the runtime's rule, a clear): from here on a
            // fault in the instruction must not write those back again.
            self.mark_tangents(insn);
        }
        Ok(plan)
    }

    fn cached_plan_inner(
        &mut self,
        insn: &Instruction,
        plan: Plan,
    ) -> Result<Option<Plan>, TranslateError> {
        match plan {
            // Its inner plan (`SaveFlags`) comes through here again.
            ref p if p.general_registers_and_memory_only() => return Ok(Some(plan)),
            Plan::ClearRegisters(ref clears) => {
                // A register whose cached 16 bytes are all cleared
                // (`xorpd x, x`) gets a zero entry, as the file will;
                // partly cleared ones are written back and dropped.
                for n in 0..CACHED {
                    let start = file_start(n);
                    let mut covered = 0u32;
                    for &(off, len) in clears {
                        for byte in off..off + u32::from(len) {
                            if (start..start + 16).contains(&byte) {
                                covered |= 1 << (byte - start);
                            }
                        }
                    }
                    if covered == 0xffff {
                        let z = hi(n);
                        self.asm(Instruction::with3(
                            Code::EVEX_Vpxord_xmm_k1z_xmm_xmmm128b32,
                            z,
                            z,
                            z,
                        ));
                        self.cached |= 1 << n;
                        self.dirty &= !(1 << n);
                    } else if covered != 0 {
                        self.written_by_file_code(start, 16);
                    }
                }
                return Ok(Some(plan));
            }
            // Its checks read the file (and the runtime, when one is not
            // zero, reads the operands there); its clears write it.
            Plan::AllPassive {
                ref checks,
                ref clears,
                ..
            } => {
                for &off in checks {
                    self.read_by_file_code(off, 8);
                }
                for &(off, len) in clears {
                    self.written_by_file_code(off, u32::from(len));
                }
                return Ok(Some(plan));
            }
            _ => {}
        }
        let handled = match plan {
            Plan::VectorMove {
                src,
                dst,
                len,
                zero,
            } if insn.encoding() == EncodingKind::Legacy => {
                self.cached_move(insn, src, dst, len, zero)?
            }
            Plan::DotArithmetic(a) if cacheable(&a) => {
                self.cached_arithmetic(insn, a)?;
                true
            }
            _ => false,
        };
        if handled {
            self.tangent_cache_used = true;
            return Ok(None);
        }
        self.drop_tangents();
        Ok(Some(plan))
    }

    /// The cached registers whose first 16 shadow bytes overlap file bytes
    /// `off..off + len`.
    fn cached_overlapping(off: u32, len: u32) -> impl Iterator<Item = u32> {
        (0..CACHED).filter(move |&n| {
            let start = file_start(n);
            off < start + 16 && off + len > start
        })
    }

    /// Ordinary code will read file bytes `off..off + len`: the tangents
    /// there are written back first (the entries stay).
    fn read_by_file_code(&mut self, off: u32, len: u32) {
        for n in Self::cached_overlapping(off, len) {
            if self.dirty & 1 << n != 0 {
                self.write_through(n);
                self.dirty &= !(1 << n);
            }
        }
    }

    /// Ordinary code will write file bytes `off..off + len`: the entries
    /// there are dropped, after writing back what the write may not cover.
    fn written_by_file_code(&mut self, off: u32, len: u32) {
        self.read_by_file_code(off, len);
        for n in Self::cached_overlapping(off, len) {
            self.cached &= !(1 << n);
        }
    }

    /// Writes every tangent newer than the file's back to it (`tangents`
    /// of the map entries: none after this).
    pub(super) fn flush_tangents(&mut self) {
        for n in 0..CACHED {
            if self.dirty & 1 << n != 0 {
                self.write_through(n);
            }
        }
        self.dirty = 0;
    }

    /// [`Self::flush_tangents`], and forgets every entry: the code that
    /// follows may change the file.
    pub(super) fn drop_tangents(&mut self) {
        self.flush_tangents();
        self.cached = 0;
    }

    /// Guest xmm `d`'s register now holds its new tangent, which the file
    /// does not: from here on (an inside entry of `insn`'s code, keeping
    /// its spills) a signal writes it back.
    fn changed(&mut self, insn: &Instruction, d: u32) {
        self.cached |= 1 << d;
        self.dirty |= 1 << d;
        self.mark_tangents(insn);
    }

    /// An inside entry of `insn`'s code here, with its spills and the
    /// current `dirty` set.
    fn mark_tangents(&mut self, insn: &Instruction) {
        let (spills, stack_bias) = self
            .insn_map
            .last()
            .filter(|e| e.guest_pc == insn.ip())
            .map_or((0, 0), |e| (e.spills, e.stack_bias));
        self.inside(insn.ip(), spills, stack_bias);
    }

    /// The file's bytes of guest xmm `n`'s shadow.
    fn file(&self, n: u32) -> MemoryOperand {
        gs_operand(self.layout.shadow_regs + file_start(n))
    }

    /// Loads guest xmm `n`'s tangent (16 bytes) into its register unless it
    /// is there: two 8-byte loads, since the file was often written 8 bytes
    /// at a time just before (as [`Self::load_shadow`] does).
    fn ensure(&mut self, n: u32) {
        if self.cached & 1 << n != 0 {
            return;
        }
        let m = self.file(n);
        self.load16(hi(n), m);
        self.cached |= 1 << n;
    }

    /// `r` = the 16 bytes at `m`, as two 8-byte loads.
    fn load16(&mut self, r: Register, m: MemoryOperand) {
        let mut upper = m;
        upper.displacement += 8;
        upper.displ_size = upper.displ_size.max(1);
        self.asm(Instruction::with2(Code::EVEX_Vmovsd_xmm_k1z_m64, r, m));
        self.asm(Instruction::with3(
            Code::EVEX_Vmovhpd_xmm_xmm_m64,
            r,
            r,
            upper,
        ));
    }

    /// Stores guest xmm `n`'s cached tangent in the file (bytes 0–16).
    fn write_through(&mut self, n: u32) {
        let m = self.file(n);
        self.asm(Instruction::with2(
            Code::EVEX_Vmovdqu64_xmmm128_k1z_xmm,
            m,
            hi(n),
        ));
    }

    /// [`Plan::VectorMove`] of a legacy SSE move through the cache, or
    /// false (nothing emitted) for a shape it does not take.
    fn cached_move(
        &mut self,
        insn: &Instruction,
        src: MoveSide,
        dst: MoveSide,
        len: u8,
        zero: u8,
    ) -> Result<bool, TranslateError> {
        use Code::*;
        let l = *self.layout;
        match (src, dst) {
            (MoveSide::Register(s), MoveSide::Register(d)) => {
                let (Some(s), Some(d)) = (cached_register_at(s), cached_register_at(d)) else {
                    return Ok(false);
                };
                match (len, zero) {
                    (16, 0) => {
                        self.ensure(s);
                        self.asm(Instruction::with2(
                            EVEX_Vmovdqa64_xmm_k1z_xmmm128,
                            hi(d),
                            hi(s),
                        ));
                    }
                    (8 | 4, 0) => {
                        self.ensure(s);
                        self.ensure(d);
                        let code = if len == 8 {
                            EVEX_Vmovsd_xmm_k1z_xmm_xmm
                        } else {
                            EVEX_Vmovss_xmm_k1z_xmm_xmm
                        };
                        self.asm(Instruction::with3(code, hi(d), hi(d), hi(s)));
                    }
                    _ => return Ok(false),
                }
                self.changed(insn, d);
            }
            (MoveSide::Memory, MoveSide::Register(d)) => {
                let Some(d) = cached_register_at(d) else {
                    return Ok(false);
                };
                if !matches!(len, 4 | 8 | 16) || u32::from(len) + u32::from(zero) != 16 {
                    return Ok(false);
                }
                let at = self.shadow_operand_in_spilled_rax(insn)?;
                match len {
                    // One load: shadow memory is rarely written 8 bytes at a
                    // time just before a 16-byte load of it (unlike the
                    // file), and two loads and a merge cost a shuffle.
                    16 => self.asm(Instruction::with2(
                        EVEX_Vmovdqu64_xmm_k1z_xmmm128,
                        hi(d),
                        at,
                    )),
                    8 => self.asm(Instruction::with2(EVEX_Vmovsd_xmm_k1z_m64, hi(d), at)),
                    _ => self.asm(Instruction::with2(EVEX_Vmovss_xmm_k1z_m32, hi(d), at)),
                }
                self.e.load_gs(Gpr::RAX, l.spill_rax);
                self.changed(insn, d);
            }
            (MoveSide::Register(s), MoveSide::Memory) => {
                let Some(s) = cached_register_at(s) else {
                    return Ok(false);
                };
                let code = match len {
                    16 => EVEX_Vmovdqu64_xmmm128_k1z_xmm,
                    8 => EVEX_Vmovsd_m64_k1_xmm,
                    4 => EVEX_Vmovss_m32_k1_xmm,
                    _ => return Ok(false),
                };
                self.ensure(s);
                let at = self.shadow_operand_in_spilled_rax(insn)?;
                self.asm(Instruction::with2(code, at, hi(s)));
                self.e.load_gs(Gpr::RAX, l.spill_rax);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// [`Plan::DotArithmetic`] of a legacy SSE `add`, `sub`, `mul`, `div`,
    /// `sqrt`, `min` or `max` through the cache: the same tangents as
    /// [`Self::dot_arithmetic`] (a term whose tangent is ±0 is left out), as
    /// masked EVEX code ([`Self::masked_arithmetic`]); a scalar `add`, `sub`
    /// or `mul` where the flags are free first tries a path without mask
    /// registers (their tests all run on one port, which bounded Burgers'
    /// loop): `add`/`sub` with both tangents nonzero, `mul` with a nonzero
    /// result, everything else on the masked code, out of line.
    fn cached_arithmetic(
        &mut self,
        insn: &Instruction,
        a: DotArithmetic,
    ) -> Result<(), TranslateError> {
        use Code::*;
        let l = *self.layout;
        let double = a.elem == Elem::F64;
        let d = a.dst.number() as u32;
        let f = ArithForm {
            double,
            scalar: a.scalar,
        };
        self.ensure(d);
        // b's value and tangent.
        let (b, db) = match a.src {
            Some(r) => {
                let n = r.number() as u32;
                self.ensure(n);
                (Register::XMM0 + n, hi(n))
            }
            None => {
                // The value first: the only load that can fault, before
                // any register of the cache changes.
                self.spilled(insn, SPILLS_RAX);
                self.e.store_gs(l.spill_rax, Gpr::RAX);
                self.lea_of_operand(Register::RAX, insn);
                let at = MemoryOperand::with_base(Register::RAX);
                let load = f.pick(
                    EVEX_Vmovupd_xmm_k1z_xmmm128,
                    EVEX_Vmovsd_xmm_k1z_m64,
                    EVEX_Vmovups_xmm_k1z_xmmm128,
                    EVEX_Vmovss_xmm_k1z_m32,
                );
                self.asm(Instruction::with2(load, T0, at));
                self.e.shadow_mask_rax(l.shadow_mask);
                let at = super::shadow_of_masked_rax();
                match (a.scalar, double) {
                    (false, _) => self.load16(T1, at),
                    (true, true) => self.asm(Instruction::with2(EVEX_Vmovsd_xmm_k1z_m64, T1, at)),
                    (true, false) => self.asm(Instruction::with2(EVEX_Vmovss_xmm_k1z_m32, T1, at)),
                }
                self.e.load_gs(Gpr::RAX, l.spill_rax);
                (T0, T1)
            }
        };
        let ops = Operands {
            d,
            b,
            db,
            a: Register::XMM0 + d,
        };
        let before = self.dirty;
        let flags_free = self.flags_dead.get(self.index).copied().unwrap_or(false);
        // (A product over a memory operand keeps the masked code: its
        // value and tangent occupy two of the three temporaries.)
        let plain = a.scalar
            && flags_free
            && match a.op {
                FpOp::Add | FpOp::Sub => true,
                FpOp::Mul => a.src.is_some(),
                _ => false,
            };
        if plain {
            let to_masked = self.plain_scalar(f, a.op, ops);
            self.changed(insn, d);
            self.rare_paths.push(RarePath {
                insn: *insn,
                a,
                kind: RareKind::Masked {
                    ops,
                    fields: to_masked,
                },
                back: self.e.offset(),
                index: self.index,
                dirty: before,
            });
            return Ok(());
        }
        let rare = self.masked_arithmetic(f, a.op, ops);
        self.changed(insn, d);
        if let Some(field) = rare {
            self.rare_paths.push(RarePath {
                insn: *insn,
                a,
                kind: RareKind::Ordinary { field, ops },
                back: self.e.offset(),
                index: self.index,
                dirty: before,
            });
        }
        Ok(())
    }

    /// The common path of a scalar `add`, `sub` or `mul` with free flags,
    /// without mask registers; returns the `je`s to the masked code.
    /// `add`/`sub`: both tangents nonzero (`vucomisd` against zero: ±0 and
    /// NaN leave), then the sum. `mul`: both products unmasked, kept where
    /// their sum is neither ±0 nor NaN — there it equals the masked sum
    /// bit for bit (a product with a ±0 tangent is ±0, and x + ±0 = x for
    /// x ≠ 0); a ±0 or NaN sum leaves for the masked code, which gets the
    /// sign of a zero and `∞·0` right.
    fn plain_scalar(&mut self, f: ArithForm, op: FpOp, o: Operands) -> Vec<usize> {
        use Code::*;
        let ucomi = if f.double {
            EVEX_Vucomisd_xmm_xmmm64_sae
        } else {
            EVEX_Vucomiss_xmm_xmmm32_sae
        };
        let op3 = |code: Code, x: Register, y: Register, z: Register| {
            Instruction::with3(code, x, y, z).expect("EVEX arithmetic on registers encodes")
        };
        // T2 = 0, a zeroing idiom (`vucomisd` against a zero constant in
        // the context measured 7 % slower on Burgers), kept from one test
        // to the next until other code uses T2.
        self.zero_t2();
        let mut out = Vec::new();
        match op {
            FpOp::Add | FpOp::Sub => {
                if o.b == T0 {
                    // A memory operand's value and tangent fill T0 and T1
                    // (the rare path needs the value): one test per tangent.
                    for t in [hi(o.d), o.db] {
                        self.asm(Instruction::with2(ucomi, t, T2));
                        out.push(self.e.jcc_rel32_placeholder(0x4)); // je: ±0 or NaN
                    }
                } else {
                    // Both tangents nonzero and neither NaN: their product
                    // is neither ±0 nor NaN (a product too small for the
                    // type leaves too, for the masked code's same result).
                    // One test instead of one per tangent.
                    self.asm(Ok(op3(f.mul(), T0, hi(o.d), o.db)));
                    self.asm(Instruction::with2(ucomi, T0, T2));
                    out.push(self.e.jcc_rel32_placeholder(0x4)); // je: ±0 or NaN
                }
                let code = if op == FpOp::Add {
                    f.pick(
                        EVEX_Vaddpd_xmm_k1z_xmm_xmmm128b64,
                        EVEX_Vaddsd_xmm_k1z_xmm_xmmm64_er,
                        EVEX_Vaddps_xmm_k1z_xmm_xmmm128b32,
                        EVEX_Vaddss_xmm_k1z_xmm_xmmm32_er,
                    )
                } else {
                    f.pick(
                        EVEX_Vsubpd_xmm_k1z_xmm_xmmm128b64,
                        EVEX_Vsubsd_xmm_k1z_xmm_xmmm64_er,
                        EVEX_Vsubps_xmm_k1z_xmm_xmmm128b32,
                        EVEX_Vsubss_xmm_k1z_xmm_xmmm32_er,
                    )
                };
                self.asm(Ok(op3(code, hi(o.d), hi(o.d), o.db)));
            }
            _ => {
                // Register operands only: T0 = dA·b + dB·a (dA's upper
                // lanes with the first product, as the instruction keeps
                // them), the operands' registers left for the masked code.
                let (mul, add) = (f.mul(), f.add());
                self.asm(Ok(op3(mul, T1, hi(o.d), o.b)));
                self.asm(Ok(op3(mul, T0, o.db, o.a)));
                self.asm(Ok(op3(add, T0, T1, T0)));
                self.asm(Instruction::with2(ucomi, T0, T2));
                out.push(self.e.jcc_rel32_placeholder(0x4)); // je: ±0 or NaN
                self.asm(Instruction::with2(
                    EVEX_Vmovapd_xmm_k1z_xmmm128,
                    hi(o.d),
                    T0,
                ));
            }
        }
        out
    }

    /// T2 = 0, unless it holds zero already.
    fn zero_t2(&mut self) {
        if !self.t2_zero {
            self.asm(Instruction::with3(
                Code::EVEX_Vpxord_xmm_k1z_xmm_xmmm128b32,
                T2,
                T2,
                T2,
            ));
            self.t2_zero = true;
        }
    }

    /// The tangent by masked EVEX code: terms whose tangent is ±0 masked
    /// off (`vptestm` against the sign-less mask, as the `ptest`s of the
    /// ordinary code). For `add` and `sub`, returns the `jnz` taken when
    /// some lane has exactly one passive operand (the ordinary code's
    /// rare path, where rounding tricks are found).
    fn masked_arithmetic(&mut self, f: ArithForm, op: FpOp, o: Operands) -> Option<usize> {
        use Code::*;
        let ptestm = if f.double {
            EVEX_Vptestmq_kr_k1_xmm_xmmm128b64
        } else {
            EVEX_Vptestmd_kr_k1_xmm_xmmm128b32
        };
        let mask = gs_operand(self.layout.abs_masks + if f.double { 0 } else { 16 });
        let op3 = |code: Code, x: Register, y: Register, z: Register| {
            Instruction::with3(code, x, y, z).expect("EVEX arithmetic on registers encodes")
        };
        let (d, b, db, av) = (o.d, o.b, o.db, o.a);
        let mut rare = None;
        // Products, quotients and roots compute in T2.
        self.t2_zero &= matches!(op, FpOp::Add | FpOp::Sub | FpOp::Min | FpOp::Max);
        match op {
            FpOp::Add | FpOp::Sub => {
                // k3 = lanes with exactly one passive operand (in a scalar
                // operation, lane 0 only: shifted to the top, alone).
                self.asm(Instruction::with3(ptestm, Register::K1, hi(d), mask));
                self.asm(Instruction::with3(ptestm, Register::K2, db, mask));
                self.asm(Instruction::with3(
                    VEX_Kxorw_kr_kr_kr,
                    Register::K3,
                    Register::K1,
                    Register::K2,
                ));
                if f.scalar {
                    self.asm(Instruction::with3(
                        VEX_Kshiftlw_kr_kr_imm8,
                        Register::K3,
                        Register::K3,
                        15u32,
                    ));
                }
                self.asm(Instruction::with2(
                    VEX_Kortestw_kr_kr,
                    Register::K3,
                    Register::K3,
                ));
                rare = Some(self.e.jcc_rel32_placeholder(0x5)); // jnz
                let code = if op == FpOp::Add { f.add() } else { f.sub() };
                self.asm(Ok(op3(code, hi(d), hi(d), db)));
            }
            FpOp::Mul => {
                let (mul, add) = (f.mul(), f.add());
                self.asm(Instruction::with3(ptestm, Register::K1, hi(d), mask));
                self.asm(Instruction::with3(ptestm, Register::K2, db, mask));
                // T2 = dA·b where dA ≠ 0 (a scalar form keeps dA's upper
                // lanes, the destination's as the instruction leaves them).
                self.asm(Ok(masked(op3(mul, T2, hi(d), b), Register::K1)));
                // dB·a where dB ≠ 0: in place over a memory operand's
                // tangent (T1; T0 holds its value), else in T0.
                let t = if db == T1 { T1 } else { T0 };
                self.asm(Ok(masked(op3(mul, t, db, av), Register::K2)));
                self.asm(Ok(op3(add, hi(d), T2, t)));
            }
            FpOp::Div => {
                let (div, mul, sub) = (f.div(), f.mul(), f.sub());
                // T2 = (a/b)·dB where dB ≠ 0; numerator dA − T2 (dA's upper
                // lanes); divided by b where it is not ±0.
                self.asm(Instruction::with3(ptestm, Register::K2, db, mask));
                self.asm(Ok(op3(div, T2, av, b)));
                self.asm(Ok(masked(op3(mul, T2, T2, db), Register::K2)));
                self.asm(Ok(op3(sub, T2, hi(d), T2)));
                self.asm(Instruction::with3(ptestm, Register::K1, T2, mask));
                self.asm(Ok(masked(op3(div, hi(d), T2, b), Register::K1)));
            }
            FpOp::Sqrt => {
                // dB / (2·√b) where dB ≠ 0 (√0 would make 0/0); a scalar
                // form merges it into dA's lane 0.
                let (sqrt, add, div) = (f.sqrt(), f.add(), f.div());
                if f.scalar {
                    self.asm(Ok(op3(sqrt, T2, T2, b)));
                } else {
                    self.asm(Instruction::with2(sqrt, T2, b));
                }
                self.asm(Ok(op3(add, T2, T2, T2)));
                self.asm(Instruction::with3(ptestm, Register::K2, db, mask));
                if f.scalar {
                    self.asm(Ok(masked(op3(div, T2, db, T2), Register::K2)));
                    self.asm(Ok(op3(f.merge(), hi(d), hi(d), T2)));
                } else {
                    self.asm(Ok(masked(op3(div, hi(d), db, T2), Register::K2)));
                }
            }
            FpOp::Min | FpOp::Max => {
                // The operand the instruction returns: a where a < b (min)
                // or b < a (max), else b (ties and NaN: the second); dB
                // merged into the lanes where it is b.
                let cmp = f.pick(
                    EVEX_Vcmppd_kr_k1_xmm_xmmm128b64_imm8,
                    EVEX_Vcmpsd_kr_k1_xmm_xmmm64_imm8_sae,
                    EVEX_Vcmpps_kr_k1_xmm_xmmm128b32_imm8,
                    EVEX_Vcmpss_kr_k1_xmm_xmmm32_imm8_sae,
                );
                let (x, y) = if op == FpOp::Min { (av, b) } else { (b, av) };
                self.asm(Instruction::with4(cmp, Register::K1, x, y, 1u32)); // LT_OS
                self.asm(Instruction::with2(
                    VEX_Knotw_kr_kr,
                    Register::K2,
                    Register::K1,
                ));
                let mut i = if f.scalar {
                    op3(f.merge(), hi(d), hi(d), db)
                } else {
                    let copy = if f.double {
                        EVEX_Vmovapd_xmm_k1z_xmmm128
                    } else {
                        EVEX_Vmovaps_xmm_k1z_xmmm128
                    };
                    Instruction::with2(copy, hi(d), db).expect("EVEX move encodes")
                };
                i.set_op_mask(Register::K2);
                self.asm(Ok(i));
            }
            _ => unreachable!("only add, sub, mul, div, sqrt, min and max are cached"),
        }
        rare
    }
}

/// The registers of a cached arithmetic instruction's tangent code.
#[derive(Clone, Copy)]
pub(super) struct Operands {
    /// The destination (and first source): guest xmm number.
    d: u32,
    /// b's value: the guest register, or `T0` (a memory operand's).
    b: Register,
    /// b's tangent: its cache register, or `T1`.
    db: Register,
    /// a's value: the destination's guest register.
    a: Register,
}

/// The element type and shape of cached arithmetic.
#[derive(Clone, Copy)]
struct ArithForm {
    double: bool,
    scalar: bool,
}

impl ArithForm {
    fn pick(self, pd: Code, sd: Code, ps: Code, ss: Code) -> Code {
        match (self.double, self.scalar) {
            (true, false) => pd,
            (true, true) => sd,
            (false, false) => ps,
            (false, true) => ss,
        }
    }
    fn add(self) -> Code {
        use Code::*;
        self.pick(
            EVEX_Vaddpd_xmm_k1z_xmm_xmmm128b64,
            EVEX_Vaddsd_xmm_k1z_xmm_xmmm64_er,
            EVEX_Vaddps_xmm_k1z_xmm_xmmm128b32,
            EVEX_Vaddss_xmm_k1z_xmm_xmmm32_er,
        )
    }
    fn sub(self) -> Code {
        use Code::*;
        self.pick(
            EVEX_Vsubpd_xmm_k1z_xmm_xmmm128b64,
            EVEX_Vsubsd_xmm_k1z_xmm_xmmm64_er,
            EVEX_Vsubps_xmm_k1z_xmm_xmmm128b32,
            EVEX_Vsubss_xmm_k1z_xmm_xmmm32_er,
        )
    }
    fn mul(self) -> Code {
        use Code::*;
        self.pick(
            EVEX_Vmulpd_xmm_k1z_xmm_xmmm128b64,
            EVEX_Vmulsd_xmm_k1z_xmm_xmmm64_er,
            EVEX_Vmulps_xmm_k1z_xmm_xmmm128b32,
            EVEX_Vmulss_xmm_k1z_xmm_xmmm32_er,
        )
    }
    fn sqrt(self) -> Code {
        use Code::*;
        self.pick(
            EVEX_Vsqrtpd_xmm_k1z_xmmm128b64,
            EVEX_Vsqrtsd_xmm_k1z_xmm_xmmm64_er,
            EVEX_Vsqrtps_xmm_k1z_xmmm128b32,
            EVEX_Vsqrtss_xmm_k1z_xmm_xmmm32_er,
        )
    }
    /// The scalar merge `x = (low lane of z, rest of y)`.
    fn merge(self) -> Code {
        if self.double {
            Code::EVEX_Vmovsd_xmm_k1z_xmm_xmm
        } else {
            Code::EVEX_Vmovss_xmm_k1z_xmm_xmm
        }
    }
    fn div(self) -> Code {
        use Code::*;
        self.pick(
            EVEX_Vdivpd_xmm_k1z_xmm_xmmm128b64,
            EVEX_Vdivsd_xmm_k1z_xmm_xmmm64_er,
            EVEX_Vdivps_xmm_k1z_xmm_xmmm128b32,
            EVEX_Vdivss_xmm_k1z_xmm_xmmm32_er,
        )
    }
}

/// The less common paths of a cached instruction, emitted after the
/// block's code so that the common path runs straight.
pub(super) enum RareKind {
    /// A scalar operation's masked code ([`Translator::masked_arithmetic`]),
    /// from the `je`s of its plain path; back when done (an `add` or `sub`
    /// may go on to its ordinary path, another entry).
    Masked { ops: Operands, fields: Vec<usize> },
    /// An `add` or `sub` with exactly one passive operand in some lane,
    /// from the `jnz` `field`: the file made current, the ordinary code of
    /// [`Translator::dot_arithmetic`] (which may have the runtime apply the
    /// rule), the destination's new tangent loaded into its register, and
    /// back. The paths meet with the common path's state: the rare path's
    /// registers are clean, which a later write-back may repeat.
    Ordinary { field: usize, ops: Operands },
}

/// A rare path ([`RareKind`]) of the instruction `insn`.
pub(super) struct RarePath {
    insn: Instruction,
    a: DotArithmetic,
    kind: RareKind,
    /// Where the instruction itself starts (the paths meet).
    back: usize,
    /// The instruction's place in the block.
    index: usize,
    /// The registers newer than the file when the `jnz` leaves.
    dirty: u16,
}

impl Translator<'_> {
    /// Emits the rare paths of the block ending at `end_pc` (see
    /// [`RarePath`]), then maps the code after them (exit stubs) to
    /// `end_pc` with nothing cached.
    pub(super) fn rare_tangent_paths(&mut self, end_pc: u64) -> Result<(), TranslateError> {
        if self.rare_paths.is_empty() {
            return Ok(());
        }
        let index = self.index;
        // In order; a masked path may queue its instruction's ordinary one.
        let mut queue: std::collections::VecDeque<RarePath> =
            core::mem::take(&mut self.rare_paths).into();
        while let Some(RarePath {
            insn,
            a,
            kind,
            back,
            index: at,
            dirty,
        }) = queue.pop_front()
        {
            self.index = at;
            self.dirty = dirty;
            let here = self.e.offset();
            match kind {
                RareKind::Masked { ops, fields } => {
                    for field in fields {
                        self.e.bind_rel32(field, here);
                    }
                    self.inside(insn.ip(), 0, 0);
                    let f = ArithForm {
                        double: a.elem == Elem::F64,
                        scalar: a.scalar,
                    };
                    if let Some(field) = self.masked_arithmetic(f, a.op, ops) {
                        queue.push_back(RarePath {
                            insn,
                            a,
                            kind: RareKind::Ordinary { field, ops },
                            back,
                            index: at,
                            dirty,
                        });
                    }
                }
                RareKind::Ordinary { field, ops } => {
                    self.e.bind_rel32(field, here);
                    self.inside(insn.ip(), 0, 0);
                    if a.scalar {
                        self.lone_passive_outside_shifters(&insn, a, ops, back);
                    }
                    self.flush_tangents();
                    self.mark_tangents(&insn);
                    self.dot_arithmetic(&insn, a)?;
                    let d = a.dst.number() as u32;
                    let m = self.file(d);
                    self.load16(hi(d), m);
                }
            }
            // The code at `back` may count on T2 being zero.
            self.t2_zero = false;
            self.zero_t2();
            let jmp = self.e.jmp_rel32_placeholder();
            self.e.bind_rel32(jmp, back);
        }
        self.index = index;
        self.dirty = 0;
        self.inside(end_pc, 0, 0);
        Ok(())
    }
}

impl Translator<'_> {
    /// The rare path of a scalar `add` or `sub` whose one operand is
    /// passive (entered from the masked code's `jnz`, k1 = dA ≠ 0): if that
    /// operand's value lies outside the binades of rounding tricks'
    /// shifters ([2^42, 2^54) for doubles, [2^13, 2^25) for floats, as the
    /// ordinary code's `in_shifter_binades`), the tangent is the plain sum
    /// or difference (x ± 0 = x, 0 ± x = ±x: the ordinary code's result
    /// bit for bit) and the path goes back to `back`; else it falls
    /// through to the ordinary code, which has the runtime look. Converged
    /// solutions make such operations common (a difference of equal
    /// tangents is 0), and the ordinary code writes every cached tangent
    /// back first.
    fn lone_passive_outside_shifters(
        &mut self,
        insn: &Instruction,
        a: DotArithmetic,
        o: Operands,
        back: usize,
    ) {
        use Code::*;
        let double = a.elem == Elem::F64;
        let f = ArithForm {
            double,
            scalar: true,
        };
        let l = *self.layout;
        // T2 = the passive operand's value: b where dA ≠ 0, else a.
        let blend = if double {
            EVEX_Vblendmpd_xmm_k1z_xmm_xmmm128b64
        } else {
            EVEX_Vblendmps_xmm_k1z_xmm_xmmm128b32
        };
        let mut i = Instruction::with3(blend, T2, o.a, o.b).expect("EVEX blend encodes");
        i.set_op_mask(Register::K1);
        self.asm(Ok(i));
        self.t2_zero = false;
        // Its exponent in a shifter binade: the ordinary code.
        self.spilled(insn, SPILLS_RAX);
        self.e.store_gs(l.spill_rax, Gpr::RAX);
        if double {
            self.asm(Instruction::with2(EVEX_Vmovq_rm64_xmm, Register::RAX, T2));
        } else {
            self.asm(Instruction::with2(EVEX_Vmovd_rm32_xmm, Register::EAX, T2));
        }
        self.shifter_binade_compare(double);
        self.e.load_gs(Gpr::RAX, l.spill_rax);
        let shifter = self.e.jcc_rel32_placeholder(0x6); // jbe
        self.inside(insn.ip(), 0, 0);
        let code = if a.op == FpOp::Add { f.add() } else { f.sub() };
        self.asm(Instruction::with3(code, hi(o.d), hi(o.d), o.db));
        self.zero_t2();
        let jmp = self.e.jmp_rel32_placeholder();
        self.e.bind_rel32(jmp, back);
        let here = self.e.offset();
        self.e.bind_rel32(shifter, here);
        self.inside(insn.ip(), 0, 0);
    }
}

/// Whether the cache computes this operation's tangent.
fn cacheable(a: &DotArithmetic) -> bool {
    let small = |r: Register| (r.number() as u32) < CACHED;
    !a.vex
        && a.width == 16
        && matches!(
            a.op,
            FpOp::Add | FpOp::Sub | FpOp::Mul | FpOp::Div | FpOp::Sqrt | FpOp::Min | FpOp::Max
        )
        && a.dst == a.src1
        && small(a.dst)
        && a.src.is_none_or(small)
}
