//! Round trips through real files, and each validation error produced by a
//! crafted bad file, with its message checked word for word.

use std::fs;
use std::path::Path;

use tape_format::{
    check_row_count, file_name, parse_indices, parse_values, read_indices, read_values,
    write_indices, write_tape, write_values, Block, FormatError, Recording, Tape, TapeSummary,
    ValueTable,
};

/// y = x1 * x2 with x1 = 3, x2 = -4 (Figure 1 of the reverse-mode paper),
/// then an unrelated fresh index.
fn product_tape() -> Vec<Block> {
    vec![
        Block::ZERO,
        Block::ZERO,
        Block::ZERO,
        Block::binary(1, -4.0, 2, 3.0),
        Block::unary(3, 1.0),
        Block::ZERO,
    ]
}

/// A record directory holding `blocks`, `inputs` and `outputs`.
fn record_dir(blocks: &[Block], inputs: &[u64], outputs: &[u64]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_tape(&dir.path().join(file_name::TAPE), blocks).unwrap();
    write_indices(&dir.path().join(file_name::INPUT_INDICES), inputs).unwrap();
    write_indices(&dir.path().join(file_name::OUTPUT_INDICES), outputs).unwrap();
    dir
}

fn open_error(dir: &Path) -> String {
    match Recording::open(dir) {
        Ok(_) => panic!("{} opened although it is inconsistent", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn tape_round_trips_through_a_file_bit_exactly() {
    let blocks = vec![
        Block::ZERO,
        Block::ZERO,
        Block::unary(1, -0.0),
        Block::binary(
            2,
            f64::MIN_POSITIVE,
            1,
            f64::from_bits(0x7ff8_0000_0000_0001),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name::TAPE);
    assert_eq!(write_tape(&path, &blocks).unwrap(), 4);
    let bytes = fs::read(&path).unwrap();
    assert_eq!(bytes.len(), 4 * 32);
    assert_eq!(&bytes[96..104], &2u64.to_le_bytes());
    for prefault in [true, false] {
        let tape = Tape::open_with(&path, prefault).unwrap();
        assert_eq!(tape.block_count(), 4);
        assert_eq!(tape.byte_len(), 128);
        for (read, written) in tape.blocks().expect("a tape of blocks").iter().zip(&blocks) {
            assert_eq!(read.to_le_bytes(), written.to_le_bytes());
        }
    }
}

#[test]
fn indices_round_trip_one_decimal_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name::OUTPUT_INDICES);
    let indices = [5, 5, 0, u64::MAX, 1];
    write_indices(&path, &indices).unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "5\n5\n0\n18446744073709551615\n1\n"
    );
    assert_eq!(read_indices(&path).unwrap(), indices);
}

#[test]
fn values_round_trip_with_sixteen_digits_like_derivgrind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name::INPUT_BARS);
    write_values(
        &path,
        &ValueTable::column(vec![48.0, -0.5, 1e-7, 1.0 / 3.0, 0.1 + 0.2]),
    )
    .unwrap();
    // 0.1 + 0.2 = 0.30000000000000004 needs 17 digits; Derivgrind writes 16.
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "48\n-0.5\n1e-07\n0.3333333333333333\n0.3\n"
    );
    let back = read_values(&path).unwrap();
    assert_eq!(back.width(), 1);
    assert_eq!(back.values(), &[48.0, -0.5, 1e-7, 1.0 / 3.0, 0.3]);
}

#[test]
fn vector_values_round_trip_one_row_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name::OUTPUT_BARS);
    let table = ValueTable::new(3, vec![1.0, 0.0, -2.0, 0.25, 1e300, f64::NEG_INFINITY]);
    write_values(&path, &table).unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "1 0 -2\n0.25 1e+300 -inf\n"
    );
    assert_eq!(read_values(&path).unwrap(), table);
}

#[test]
fn parsers_accept_what_people_and_other_programs_write() {
    assert_eq!(parse_indices("3\r\n 4 \n\n\n", "f").unwrap(), [3, 4]);
    assert_eq!(parse_indices("", "f").unwrap(), Vec::<u64>::new());
    let values = parse_values("1.0\n-inf\n+2e3\n-nan\nNaN\n.5\n", "f").unwrap();
    assert_eq!(values.values()[..3], [1.0, f64::NEG_INFINITY, 2000.0]);
    assert!(values.values()[3].is_nan() && values.values()[3].is_sign_negative());
    assert!(values.values()[4].is_nan());
    assert_eq!(values.values()[5], 0.5);
    let empty = parse_values("\n", "f").unwrap();
    assert_eq!((empty.rows(), empty.width()), (0, 1));
}

#[test]
fn a_consistent_directory_opens_and_validates() {
    let dir = record_dir(&product_tape(), &[1, 2], &[4, 4]);
    let recording = Recording::open(dir.path()).unwrap();
    assert_eq!(recording.inputs, [1, 2]);
    assert_eq!(recording.outputs, [4, 4]);
    assert_eq!(
        recording.tape.validate().unwrap(),
        TapeSummary {
            blocks: 6,
            no_active_operand: 4,
            one_active_operand: 1,
            two_active_operands: 1,
        }
    );
}

#[test]
fn truncated_tape_is_reported_with_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name::TAPE);
    fs::write(&path, vec![0u8; 1000]).unwrap();
    let error = Tape::open(&path).err().unwrap();
    assert_eq!(
        error.to_string(),
        "dg-tape: 1000 bytes is not a multiple of 32 (31 whole blocks and 8 more bytes: \
         truncated while writing block 31?)"
    );
}

#[test]
fn empty_tape_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name::TAPE);
    fs::write(&path, b"").unwrap();
    assert_eq!(
        Tape::open(&path).err().unwrap().to_string(),
        "dg-tape: the file is empty, but a tape holds at least block 0 (32 zero bytes)"
    );
}

#[test]
fn nonzero_block_0_is_reported() {
    let mut blocks = product_tape();
    blocks[0] = Block::unary(0, 1.0);
    let dir = record_dir(&blocks, &[1, 2], &[4]);
    assert_eq!(
        open_error(dir.path()),
        "dg-tape: block 0 is not all-zero (found Block { index1: 0, index2: 0, \
         partial1: 1.0, partial2: 0.0 })"
    );
}

#[test]
fn operand_not_before_its_block_is_reported_by_validate() {
    let mut blocks = product_tape();
    blocks[4] = Block::binary(3, 1.0, 4, 1.0);
    let tape = Tape::from_blocks(blocks, "dg-tape").unwrap();
    assert_eq!(
        tape.validate().err().unwrap().to_string(),
        "dg-tape block 4: operand index 4 is not smaller than 4"
    );
    let mut blocks = vec![Block::ZERO; 18];
    blocks[17] = Block::binary(3, 1.0, 20, 1.0);
    let tape = Tape::from_blocks(blocks, "dg-tape").unwrap();
    assert_eq!(
        tape.validate().err().unwrap().to_string(),
        "dg-tape block 17: operand index 20 is not smaller than 17"
    );
}

#[test]
fn index_beyond_the_tape_is_reported_with_its_line() {
    let dir = record_dir(&product_tape(), &[1, 2, 5000], &[4]);
    assert_eq!(
        open_error(dir.path()),
        "dg-input-indices line 3: index 5000 is beyond the tape's 6 blocks"
    );
    let dir = record_dir(&product_tape(), &[1, 2], &[6]);
    assert_eq!(
        open_error(dir.path()),
        "dg-output-indices line 1: index 6 is beyond the tape's 6 blocks"
    );
}

#[test]
fn input_with_a_recorded_operation_is_reported() {
    let dir = record_dir(&product_tape(), &[1, 3], &[4]);
    assert_eq!(
        open_error(dir.path()),
        "dg-input-indices line 2: input index 3 has a block that is not all-zero (found \
         Block { index1: 1, index2: 2, partial1: -4.0, partial2: 3.0 }); an input's block \
         must be all-zero"
    );
}

#[test]
fn missing_index_file_names_its_path() {
    let dir = record_dir(&product_tape(), &[1, 2], &[4]);
    fs::remove_file(dir.path().join(file_name::OUTPUT_INDICES)).unwrap();
    let message = open_error(dir.path());
    let path = dir.path().join(file_name::OUTPUT_INDICES);
    assert!(
        message.starts_with(&format!("cannot read {}: ", path.display())),
        "{message}"
    );
    assert!(message.contains("No such file or directory"), "{message}");
}

#[test]
fn malformed_lines_are_reported_with_file_and_line() {
    let cases: &[(&str, Result<(), FormatError>, &str)] = &[
        (
            "index with a fraction",
            parse_indices("1\n2.5\n", "dg-input-indices").map(drop),
            "dg-input-indices line 2: expected one decimal index, found \"2.5\"",
        ),
        (
            "negative index",
            parse_indices("-1\n", "dg-output-indices").map(drop),
            "dg-output-indices line 1: expected one decimal index, found \"-1\"",
        ),
        (
            "two indices on a line",
            parse_indices("1 2\n", "dg-input-indices").map(drop),
            "dg-input-indices line 1: expected one decimal index, found \"1 2\"",
        ),
        (
            "blank line between indices",
            parse_indices("1\n\n2\n", "dg-input-indices").map(drop),
            "dg-input-indices line 2: expected one decimal index, found \"\"",
        ),
        (
            "word among values",
            parse_values("1.0\n2.0\nabc\n", "dg-output-bars").map(drop),
            "dg-output-bars line 3: expected a floating-point value, found \"abc\"",
        ),
        (
            "decimal comma",
            parse_values("1,5\n", "dg-input-dots").map(drop),
            "dg-input-dots line 1: expected a floating-point value, found \"1,5\"",
        ),
        (
            "ragged table",
            parse_values("1 2\n3 4\n5 6 7\n", "dg-output-bars").map(drop),
            "dg-output-bars line 3: expected 2 values as on line 1 (one per direction), found 3",
        ),
    ];
    for (what, result, expected) in cases {
        match result {
            Ok(()) => panic!("{what}: parsed"),
            Err(e) => assert_eq!(e.to_string(), *expected, "{what}"),
        }
    }
}

#[test]
fn value_count_must_match_the_index_count() {
    let bars = ValueTable::column(vec![1.0, 2.0]);
    let error = check_row_count(
        &bars,
        Path::new("/run/dg-output-bars"),
        file_name::OUTPUT_INDICES,
        3,
        "outputs",
    )
    .err()
    .unwrap();
    assert_eq!(
        error.to_string(),
        "dg-output-bars has 2 lines, but dg-output-indices lists 3 outputs"
    );
    check_row_count(&bars, Path::new("x"), "y", 2, "outputs").unwrap();
}
