//! Human-readable disassembly, for diagnostics and golden files.

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

/// The first instruction in `bytes` (at address `ip`), Intel syntax, or a
/// note with the raw bytes when they do not decode.
pub fn one_insn(bytes: &[u8], ip: u64) -> String {
    let insn = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE).decode();
    if insn.is_invalid() {
        let hex: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return format!("(undecodable: {})", hex.join(" "));
    }
    let mut s = String::new();
    IntelFormatter::new().format(&insn, &mut s);
    s
}
