//! The nominal memory operand of every instruction code, as iced's opcode
//! table gives it (`Code::op_code().memory_size()`), kept in a file of two
//! bytes per code (`code_sizes.bin`): iced builds its opcode table whole on
//! first use, formatting every code's description, which cost each process
//! about 2 ms when the runtime looked up one EVEX instruction's element
//! size. The test below checks the file against iced and rewrites it with
//! `DGAD_BLESS=1` (after an iced update).

use iced_x86::Code;

/// Per code: the memory operand's size in bytes (at most 255), then its
/// element's size in bytes; zeros without a memory operand.
static SIZES: &[u8] = include_bytes!("code_sizes.bin");

fn entry(code: Code) -> (usize, usize) {
    let i = code as usize * 2;
    SIZES
        .get(i..i + 2)
        .map_or((0, 0), |b| (usize::from(b[0]), usize::from(b[1])))
}

/// The bytes the instruction `code` reads or writes through its memory
/// operand (a broadcast: the whole vector), up to 255; 0 without one. For
/// register forms, the size the memory form would have.
pub fn memory_bytes(code: Code) -> usize {
    entry(code).0
}

/// The bytes of one element of `code`'s memory operand (a packed
/// operation's lane); 0 without a memory operand.
pub fn element_bytes(code: Code) -> usize {
    entry(code).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_iced() -> Vec<u8> {
        Code::values()
            .flat_map(|c| {
                let m = c.op_code().memory_size();
                [m.size().min(255) as u8, m.element_size().min(255) as u8]
            })
            .collect()
    }

    #[test]
    fn the_file_is_iceds_opcode_table() {
        let expected = from_iced();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/code_sizes.bin");
        if std::env::var_os("DGAD_BLESS").is_some() {
            std::fs::write(path, &expected).unwrap();
        }
        assert_eq!(
            SIZES.len(),
            expected.len(),
            "one entry per code (DGAD_BLESS=1 to rewrite)"
        );
        for (c, (got, want)) in Code::values().zip(SIZES.chunks(2).zip(expected.chunks(2))) {
            assert_eq!(got, want, "{c:?} (DGAD_BLESS=1 to rewrite)");
        }
        assert_eq!(
            memory_bytes(Code::EVEX_Vaddpd_zmm_k1z_zmm_zmmm512b64_er),
            64
        );
        assert_eq!(element_bytes(Code::EVEX_Vmovdqu16_zmm_k1z_zmmm512), 2);
        assert_eq!(memory_bytes(Code::Add_r32_rm32), 4);
        assert_eq!(memory_bytes(Code::Nopd), 0);
    }
}
