//! `DGAD_TAPE_LIMIT=SIZE`: the largest tape a recording may write, in
//! bytes with an optional binary suffix.

/// The accepted forms, for messages.
const FORMS: &str = "a number of bytes, optionally followed by K, M, G or T (powers of \
                     1024), e.g. 4096, 500M or 20G";

/// Bytes of `text` (`4096`, `500M`, `20G`, `1T`; suffixes in either case),
/// or `None` when it is not such a size or is 0.
pub fn parse(text: &[u8]) -> Option<u64> {
    let (digits, shift) = match text.last()?.to_ascii_uppercase() {
        b'K' => (&text[..text.len() - 1], 10),
        b'M' => (&text[..text.len() - 1], 20),
        b'G' => (&text[..text.len() - 1], 30),
        b'T' => (&text[..text.len() - 1], 40),
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = core::str::from_utf8(digits).ok()?.parse().ok()?;
    let bytes = n.checked_mul(1u64 << shift)?;
    (bytes > 0).then_some(bytes)
}

/// The message for a value [`parse`] refused.
pub fn usage(text: &[u8]) -> String {
    format!(
        "DGAD_TAPE_LIMIT={} is not a tape size: give {FORMS}",
        String::from_utf8_lossy(text)
    )
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn sizes_take_binary_suffixes_and_nothing_else() {
        assert_eq!(parse(b"4096"), Some(4096));
        assert_eq!(parse(b"500M"), Some(500 << 20));
        assert_eq!(parse(b"20G"), Some(20 << 30));
        assert_eq!(parse(b"20g"), Some(20 << 30));
        assert_eq!(parse(b"1T"), Some(1 << 40));
        assert_eq!(parse(b"3k"), Some(3072));
        for bad in [
            &b""[..],
            b"0",
            b"G",
            b"20GB",
            b"1.5G",
            b"-1",
            b" 20G",
            b"20 G",
            b"20P",
            b"99999999999999999999",
            b"16777216T",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
