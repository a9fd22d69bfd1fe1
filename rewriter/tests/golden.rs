//! Golden-file tests of block translation.
//!
//! Each `tests/golden/NAME.golden` holds a comment line, the guest address,
//! guest instruction bytes (one instruction a line, its disassembly after
//! `;`), then `== translation at ADDR` and the expected cache code as
//! disassembly, with exit records and literals shown as data. Run with
//! `DGAD_BLESS=1` to rewrite the files from the current translator (and
//! refresh the guest disassembly comments); review the diff like code.

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter, Register};
use rewriter::translate::{
    translate_block, translate_native_call, ExitKind, TranslateOptions, Translation,
    LOOKUP_SLOT_RAX, LOOKUP_SLOT_RCX, SPILLS_RAX, SPILLS_RAX_STACK, SPILLS_RCX, SPILLS_RCX_STACK,
    SPILLS_RDX, SPILLS_SCRATCH,
};

/// The wrapper address of `# mode: native-call` cases.
const WRAPPER: u64 = 0x7000_0000_1000;
/// The descriptor those cases pass in `rdi`.
const DESC: u64 = 0x5555_0000_2000;
use rewriter::ContextLayout;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

struct Case {
    /// `# mode: record` in the file: translate with record-mode
    /// instrumentation.
    record: bool,
    /// `# mode: dot` in the file: translate with dot-mode instrumentation.
    dot: bool,
    /// `# mode: dot-cache` in the file: dot mode with the tangent cache,
    /// for a CPU with AVX-512 (translated on any machine).
    dot_cache: bool,
    /// `# mode: dot-hold` in the file: dot mode holding registers as
    /// temporaries across instructions, for a CPU without AVX-512.
    dot_hold: bool,
    /// `# mode: native-call` in the file: the stand-in for a function the
    /// runtime answers natively (wrapper [`WRAPPER`], descriptor
    /// [`DESC`] in `rdi`); the guest bytes are not decoded.
    native_call: bool,
    /// `# mode: verify` in the file: the block's code is in writable memory
    /// (its entry checks it).
    verify: bool,
    comment: String,
    guest_pc: u64,
    lines: Vec<Vec<u8>>,
    cache_pc: u64,
    expected: String,
}

fn parse_hex_u64(s: &str) -> u64 {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).expect("hex address")
}

fn parse(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).expect("read golden file");
    let (head, expected) = text
        .split_once("\n== translation at ")
        .expect("== translation at line");
    let (cache_addr, expected) = expected.split_once('\n').unwrap_or((expected, ""));
    let mut comment = String::new();
    let mut record = false;
    let mut dot = false;
    let mut dot_cache = false;
    let mut dot_hold = false;
    let mut native_call = false;
    let mut verify = false;
    let mut guest_pc = 0;
    let mut lines = Vec::new();
    for line in head.lines() {
        if line.trim() == "# mode: record" {
            record = true;
        } else if line.trim() == "# mode: dot" {
            dot = true;
        } else if line.trim() == "# mode: dot-cache" {
            dot_cache = true;
        } else if line.trim() == "# mode: dot-hold" {
            dot_hold = true;
        } else if line.trim() == "# mode: native-call" {
            native_call = true;
        } else if line.trim() == "# mode: verify" {
            verify = true;
        } else if let Some(c) = line.strip_prefix('#') {
            comment = c.trim().to_string();
        } else if let Some(a) = line.strip_prefix("guest ") {
            guest_pc = parse_hex_u64(a);
        } else if !line.trim().is_empty() {
            let hex = line.split(';').next().unwrap_or("");
            lines.push(
                hex.split_whitespace()
                    .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
                    .collect(),
            );
        }
    }
    Case {
        record,
        dot,
        dot_cache,
        dot_hold,
        native_call,
        verify,
        comment,
        guest_pc,
        lines,
        cache_pc: parse_hex_u64(cache_addr),
        expected: expected.to_string(),
    }
}

fn disasm_one(bytes: &[u8], ip: u64) -> (String, usize) {
    let insn = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE).decode();
    let mut s = String::new();
    IntelFormatter::new().format(&insn, &mut s);
    (s, insn.len())
}

/// The translation as text: instructions with their cache offsets, guest
/// boundaries as comments, exit records and literals as data.
fn render(t: &Translation, cache_pc: u64) -> String {
    let mut out = String::new();
    let mut off = 0;
    let records: Vec<usize> = t.exits.clone();
    let data_start = t.literals_start;
    let mut map = t.insn_map.iter().peekable();
    while off < t.code.len() {
        while let Some(e) = map.next_if(|e| e.cache_off as usize <= off) {
            let kind = match (e.boundary, e.flags_dead) {
                (true, true) => "boundary, flags dead",
                (true, false) => "boundary",
                _ => "inside",
            };
            let names = [
                (SPILLS_RAX, "rax"),
                (SPILLS_RCX, "rcx"),
                (SPILLS_RDX, "rdx"),
            ];
            let bias = e.stack_bias;
            let stack = [
                (
                    SPILLS_RAX_STACK,
                    format!("rax@[rsp{:+}]", bias as i32 + LOOKUP_SLOT_RAX),
                ),
                (
                    SPILLS_RCX_STACK,
                    format!("rcx@[rsp{:+}]", bias as i32 + LOOKUP_SLOT_RCX),
                ),
                (
                    SPILLS_SCRATCH,
                    format!("{:?}@scratch", Register::RAX + u32::from(e.scratch)).to_lowercase(),
                ),
            ];
            let spilled: Vec<String> = names
                .iter()
                .map(|&(b, n)| (b, n.to_string()))
                .chain(stack)
                .filter(|(b, _)| e.spills & b != 0)
                .map(|(_, n)| n)
                .collect();
            let rcx = if spilled.is_empty() {
                String::new()
            } else {
                format!(", spills {}", spilled.join(" "))
            };
            // Dot mode's tangent cache: registers newer than the file.
            let newer: Vec<String> = (0..16)
                .filter(|n| e.tangents & 1 << n != 0)
                .map(|n| format!("xmm{n}"))
                .collect();
            let newer = if newer.is_empty() {
                String::new()
            } else {
                format!(", newer tangents {}", newer.join(" "))
            };
            let _ = writeln!(out, "    ; guest {:#x} ({kind}{rcx}{newer})", e.guest_pc);
        }
        if records.contains(&off) {
            let target = u64::from_le_bytes(t.code[off..off + 8].try_into().unwrap());
            let kind = u32::from_le_bytes(t.code[off + 8..off + 12].try_into().unwrap());
            let patch = i32::from_le_bytes(t.code[off + 12..off + 16].try_into().unwrap());
            let kind = ExitKind::from_u32(kind);
            let patch = if patch == 0 {
                "none".into()
            } else {
                format!("{:+#x}", off as i64 + patch as i64)
            };
            if kind == Some(ExitKind::Instrument) {
                // The record ends with the address of the decoded
                // instruction, which differs from run to run.
                let _ = writeln!(
                    out,
                    "{off:04x}  .instrument target={target:#x} resume={patch} insn=<decoded>"
                );
                off += core::mem::size_of::<rewriter::translate::InstrumentRecord>();
                continue;
            }
            // A client request's or a verification's field is where the
            // block goes on.
            let field = if matches!(kind, Some(ExitKind::ClientRequest | ExitKind::Verify)) {
                "resume"
            } else {
                "patch-field"
            };
            let kind = kind.map_or("?".into(), |k| format!("{k:?}"));
            let _ = writeln!(
                out,
                "{off:04x}  .exit target={target:#x} kind={kind} {field}={patch}"
            );
            off += 16;
            continue;
        }
        if off < t.lookup_off as usize {
            // The complement of the block's guest address, which the
            // lookup entry checks targets against.
            let v = u64::from_le_bytes(t.code[off..off + 8].try_into().unwrap());
            let _ = writeln!(out, "{off:04x}  .quad !{:#x} ; guest address", !v);
            off += 8;
            continue;
        }
        if off >= data_start {
            if t.code[off] == 0xcc {
                off += 1;
                continue;
            }
            let v = u64::from_le_bytes(t.code[off..off + 8].try_into().unwrap());
            let _ = writeln!(out, "{off:04x}  .quad {v:#x}");
            off += 8;
            continue;
        }
        let (s, len) = disasm_one(&t.code[off..], cache_pc + off as u64);
        let _ = writeln!(out, "{off:04x}  {s}");
        off += len;
    }
    out
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn run_case(path: &Path) -> Result<(), String> {
    let case = parse(path);
    let code: Vec<u8> = case.lines.concat();
    let base = case.guest_pc;
    let mut read = |addr: u64, buf: &mut [u8]| {
        let start = (addr - base) as usize;
        let n = code.len().saturating_sub(start).min(buf.len());
        buf[..n].copy_from_slice(&code[start..start + n]);
        n
    };
    let mut opts = TranslateOptions::default();
    if case.record {
        opts.instrument = Some(rewriter::instrument::record_plan);
    }
    if case.dot {
        // Fixed, whatever this machine has: VEX code saves ymm temporaries.
        opts.instrument = Some(rewriter::instrument::dot_plan);
    }
    if case.dot_cache {
        opts.instrument = Some(rewriter::instrument::dot_plan);
        opts.zmm_state = true;
        opts.tangent_cache = true;
    }
    if case.dot_hold {
        opts.instrument = Some(rewriter::instrument::dot_plan);
        opts.hold_registers = true;
    }
    opts.verify_entry = case.verify;
    let t = if case.native_call {
        translate_native_call(
            case.guest_pc,
            case.cache_pc,
            &ContextLayout::EXAMPLE,
            WRAPPER,
            &[(7, DESC)],
        )
    } else {
        translate_block(
            &mut read,
            case.guest_pc,
            case.cache_pc,
            &ContextLayout::EXAMPLE,
            &opts,
        )
        .map_err(|e| format!("translation failed: {e:?}"))?
    };
    let actual = render(&t, case.cache_pc);
    if std::env::var_os("DGAD_BLESS").is_some() {
        let mode = if case.record {
            "# mode: record\n"
        } else if case.dot {
            "# mode: dot\n"
        } else if case.dot_cache {
            "# mode: dot-cache\n"
        } else if case.dot_hold {
            "# mode: dot-hold\n"
        } else if case.native_call {
            "# mode: native-call\n"
        } else if case.verify {
            "# mode: verify\n"
        } else {
            ""
        };
        let mut text = format!("{mode}# {}\nguest {:#x}\n", case.comment, case.guest_pc);
        let mut pc = case.guest_pc;
        for l in &case.lines {
            let hex: Vec<String> = l.iter().map(|b| format!("{b:02x}")).collect();
            let (dis, _) = disasm_one(l, pc);
            let _ = writeln!(text, "{:<40}; {dis}", hex.join(" "));
            pc += l.len() as u64;
        }
        let _ = write!(text, "== translation at {:#x}\n{actual}", case.cache_pc);
        std::fs::write(path, text).map_err(|e| e.to_string())?;
        return Ok(());
    }
    if actual != case.expected {
        return Err(format!(
            "{}: translation differs (DGAD_BLESS=1 to accept)\n--- expected\n{}--- actual\n{}",
            path.display(),
            case.expected,
            actual
        ));
    }
    Ok(())
}

#[test]
fn golden_translations() {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("tests/golden exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "golden"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "golden files missing");
    let failures: Vec<String> = paths.iter().filter_map(|p| run_case(p).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
