//! The shared AD rules on data, through dot mode's back-end, without a
//! compiler or a runtime: each case in
//! `preload/tests/rules/*.rules` gives an instruction (its bytes), the
//! registers' values and tangents before it, and the tangents expected
//! after the rule (dot mode's back-end, the shared rules). The cases run in
//! microseconds; `DGAD_BLESS=1` rewrites the `expect` lines with what the
//! rules give (review the diff), as for the golden translations.
//!
//! ```text
//! # mulsd: dot = dA·b + a·dB
//! insn f2 0f 59 c1
//! xmm0 f64 1.5 dot 1
//! xmm1 f64 2 dot 0.5
//! expect xmm0 2.75
//! ```
//! A register line: `xmmN`/`ymmN` with `f64` or `f32` lanes (values, then
//! `dot` and the lanes' tangents; lanes not given are 0), or a general
//! register `rax`… with a 64-bit value (`0x…` or a double's bits: `f64
//! 1.5`) and `dot` with the tangent of the double it holds, or `shadow
//! 0x…` with its shadow's 8 bytes as they are. `expect REG
//! [f32|f64] t0 t1 …`: the tangents of the register's lanes after, in the
//! type given or the instruction's.

use super::mode::{load, store, DOT_MODE};
use crate::ad::apply::instrument;
use crate::context::ThreadCtx;
use iced_x86::{Decoder, DecoderOptions, Register};
use rewriter::semantics::Elem;
use shadowmem::RegFile;

/// A register named in a case, with its lane type.
#[derive(Clone, Copy)]
struct RegSpec {
    reg: Register,
    elem: Elem,
}

fn parse_reg(name: &str, elem: Option<&str>) -> Result<RegSpec, String> {
    let elem = match elem {
        Some("f32") => Elem::F32,
        _ => Elem::F64,
    };
    let num = |p: &str| name.strip_prefix(p).and_then(|n| n.parse::<u32>().ok());
    let reg = if let Some(n) = num("xmm") {
        Register::XMM0 + n
    } else if let Some(n) = num("ymm") {
        Register::YMM0 + n
    } else {
        const GPRS: [&str; 16] = [
            "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11",
            "r12", "r13", "r14", "r15",
        ];
        let n = GPRS
            .iter()
            .position(|g| *g == name)
            .ok_or_else(|| format!("unknown register {name}"))?;
        Register::RAX + n as u32
    };
    Ok(RegSpec { reg, elem })
}

fn lane_bytes(e: Elem) -> usize {
    if e == Elem::F32 {
        4
    } else {
        8
    }
}

fn number(s: &str) -> Result<f64, String> {
    s.parse::<f64>().map_err(|_| format!("not a number: {s}"))
}

/// Sets vector register `n`'s value in the context's `xsave` image (the
/// legacy area for the low 16 bytes, the AVX area above).
fn set_vec(ctx: &mut ThreadCtx, n: usize, bytes: &[u8; 64]) {
    let avx = core::arch::x86_64::__cpuid_count(0xd, 2).ebx as usize;
    ctx.xsave.0[160 + 16 * n..][..16].copy_from_slice(&bytes[..16]);
    ctx.xsave.0[avx + 16 * n..][..16].copy_from_slice(&bytes[16..32]);
    // XSTATE_BV: SSE and AVX state present.
    ctx.xsave.0[512] |= 0b110;
}

fn shadow_bytes(ctx: &mut ThreadCtx) -> &mut [u8] {
    // SAFETY: the register file is plain bytes.
    unsafe {
        core::slice::from_raw_parts_mut(
            &mut ctx.shadow as *mut RegFile as *mut u8,
            core::mem::size_of::<RegFile>(),
        )
    }
}

/// Runs one case; returns the `expect` lines the rules give.
fn run_case(lines: &[&str]) -> Result<Vec<String>, String> {
    let ctx = ThreadCtx::allocate().ok_or("no context")?;
    let mut insn_bytes = Vec::new();
    let mut expects = Vec::new();
    for line in lines {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut w = line.split_whitespace();
        match w.next() {
            None => {}
            Some("insn") => {
                for b in w {
                    insn_bytes.push(u8::from_str_radix(b, 16).map_err(|e| e.to_string())?);
                }
            }
            Some("expect") => {
                let name = w.next().ok_or("expect without register")?;
                let ty = w.next().filter(|t| matches!(*t, "f32" | "f64" | "shadow"));
                expects.push((name.to_string(), ty.map(str::to_string)));
            }
            Some(name) => {
                let mut rest: Vec<&str> = w.collect();
                let ty = rest.first().copied().filter(|t| *t == "f32" || *t == "f64");
                if ty.is_some() {
                    rest.remove(0);
                }
                let spec = parse_reg(name, ty)?;
                let split = rest.iter().position(|t| *t == "dot").unwrap_or(rest.len());
                let (values, dots) = (&rest[..split], &rest[(split + 1).min(rest.len())..]);
                if spec.reg.is_gpr() {
                    let v = values.first().ok_or("no value")?;
                    let bits = match v.strip_prefix("0x") {
                        Some(hex) => u64::from_str_radix(hex, 16).map_err(|e| e.to_string())?,
                        None => number(v)?.to_bits(),
                    };
                    ctx.regs.gpr[spec.reg.number()] = bits;
                    if let Some(i) = rest.iter().position(|t| *t == "shadow") {
                        let raw = rest.get(i + 1).ok_or("shadow without bytes")?;
                        let raw = u64::from_str_radix(raw.trim_start_matches("0x"), 16)
                            .map_err(|e| e.to_string())?;
                        let off = RegFile::gpr_offset(spec.reg.number(), 0);
                        shadow_bytes(ctx)[off..off + 8].copy_from_slice(&raw.to_le_bytes());
                    }
                    if let Some(d) = dots.first() {
                        let off = RegFile::gpr_offset(spec.reg.number(), 0);
                        shadow_bytes(ctx)[off..off + 8].copy_from_slice(&number(d)?.to_le_bytes());
                    }
                    continue;
                }
                let w = lane_bytes(spec.elem);
                let mut data = [0u8; 64];
                let mut sh = [0u8; 64];
                for (k, v) in values.iter().enumerate() {
                    match v.strip_prefix("0x") {
                        Some(hex) => {
                            let bits = u64::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                            data[w * k..][..w].copy_from_slice(&bits.to_le_bytes()[..w]);
                        }
                        None => store(&mut data[w * k..][..w], spec.elem, number(v)?),
                    }
                }
                for (k, d) in dots.iter().enumerate() {
                    store(&mut sh[w * k..][..w], spec.elem, number(d)?);
                }
                set_vec(ctx, spec.reg.number(), &data);
                let off = RegFile::vec_offset(spec.reg.number(), 0);
                shadow_bytes(ctx)[off..off + 64].copy_from_slice(&sh);
            }
        }
    }
    let insn = Decoder::with_ip(64, &insn_bytes, 0x40_1000, DecoderOptions::NONE).decode();
    if insn.is_invalid() {
        return Err("invalid instruction".into());
    }
    instrument(ctx, &insn, &DOT_MODE);
    let mut out = Vec::new();
    for (name, ty) in expects {
        let spec = parse_reg(&name, None)?;
        if spec.reg.is_gpr() {
            let off = RegFile::gpr_offset(spec.reg.number(), 0);
            let raw = u64::from_le_bytes(shadow_bytes(ctx)[off..off + 8].try_into().unwrap());
            if ty.as_deref() == Some("shadow") {
                out.push(format!("expect {name} shadow {raw:#018x}"));
            } else {
                out.push(format!("expect {name} {}", f64::from_bits(raw)));
            }
            continue;
        }
        // The lane type: given, or the instruction's destination's.
        let elem = match (ty.as_deref(), rewriter::semantics::semantics(insn.code())) {
            (Some("f32"), _) => Elem::F32,
            (Some(_), _) => Elem::F64,
            (None, Some(rewriter::semantics::Semantics::FpArith { elem, .. })) => elem,
            (None, Some(rewriter::semantics::Semantics::FpConvert { to, .. })) => to,
            _ => Elem::F64,
        };
        let typed = ty.map_or(String::new(), |t| format!("{t} "));
        let w = lane_bytes(elem);
        let off = RegFile::vec_offset(spec.reg.number(), 0);
        let size = if spec.reg.is_ymm() { 32 } else { 16 };
        let sh = shadow_bytes(ctx)[off..off + size].to_vec();
        let lanes: Vec<String> = sh
            .chunks(w)
            .map(|c| match elem {
                Elem::F32 => (load(c, elem) as f32).to_string(),
                _ => load(c, elem).to_string(),
            })
            .collect();
        out.push(format!("expect {name} {typed}{}", lanes.join(" ")));
    }
    Ok(out)
}

#[test]
fn rules_give_the_expected_tangents() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules");
    let bless = std::env::var_os("DGAD_BLESS").is_some();
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("preload/tests/rules")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rules"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut blessed = String::new();
        for block in text.split("\n\n") {
            let lines: Vec<&str> = block.lines().collect();
            if lines
                .iter()
                .all(|l| l.trim().is_empty() || l.trim().starts_with('#'))
            {
                blessed.push_str(block);
                blessed.push_str("\n\n");
                continue;
            }
            cases += 1;
            let title = lines.first().copied().unwrap_or("");
            match run_case(&lines) {
                Ok(got) => {
                    let want: Vec<String> = lines
                        .iter()
                        .filter(|l| l.trim_start().starts_with("expect"))
                        .map(|l| l.split('#').next().unwrap().trim().to_string())
                        .collect();
                    if !bless && got != want {
                        failures.push(format!(
                            "{}: {title}\n  want {want:?}\n  got  {got:?}",
                            path.display()
                        ));
                    }
                    let kept: Vec<&str> = lines
                        .iter()
                        .copied()
                        .filter(|l| !l.trim_start().starts_with("expect"))
                        .collect();
                    blessed.push_str(&kept.join("\n"));
                    blessed.push('\n');
                    blessed.push_str(&got.join("\n"));
                    blessed.push_str("\n\n");
                }
                Err(e) => failures.push(format!("{}: {title}: {e}", path.display())),
            }
        }
        if bless {
            std::fs::write(&path, blessed.trim_end().to_string() + "\n").unwrap();
        }
    }
    assert!(cases > 0, "no cases in {}", dir.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
