//! `dg-eval` on compact tapes: `--export-compact` and `--export`, results
//! byte for byte equal to those of the block tape, `--print` and `--stats`,
//! and the errors of a broken compact tape.

mod common;

use std::fs;
use std::path::Path;

use common::{
    assert_fails, assert_no_leftovers, dg_eval, read, stderr, stdout, write, Rng, PRODUCT,
};
use tape_format::{file_name, write_compact, write_indices, write_tape, Block, Tape};

/// Runs `dg-eval DIR ARGS` and checks that it succeeds silently.
fn succeeds(dir: &Path, args: &[&str]) {
    let output = dg_eval(dir, args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    assert_eq!(stderr(&output), "", "{args:?}");
    assert_eq!(stdout(&output), "", "{args:?}");
}

const INPUTS: u64 = 5;

/// A tape of `n` blocks: inputs 1 to 5, then operations on earlier
/// results, partials mostly ±1, a run of 100 fresh indices, and, when
/// `passive_partials`, passive operands with partials (always beside an
/// active one).
fn random_tape(seed: u64, n: u64, passive_partials: bool) -> Vec<Block> {
    let mut rng = Rng(seed);
    let mut blocks = vec![Block::ZERO; INPUTS as usize + 1];
    while (blocks.len() as u64) < n {
        let i = blocks.len() as u64;
        if i == n / 3 {
            blocks.resize(blocks.len() + 100, Block::ZERO);
            continue;
        }
        let near = |rng: &mut Rng| {
            let j = i - 1 - rng.below(50.min(i - 1));
            if blocks[j as usize].is_zero() {
                1 + rng.below(INPUTS)
            } else {
                j
            }
        };
        let (a, b) = (near(&mut rng), near(&mut rng));
        let p = |rng: &mut Rng| match rng.below(4) {
            0 => 1.0,
            1 => -1.0,
            _ => rng.unit() * 1.5,
        };
        blocks.push(match rng.below(8) {
            0 => Block::unary(a, p(&mut rng)),
            1 => Block::binary(a, p(&mut rng), a, p(&mut rng)),
            2 if passive_partials => Block::binary(0, 2.5, b, p(&mut rng)),
            3 if passive_partials => Block::binary(a, p(&mut rng), 0, f64::NAN),
            _ => Block::binary(a, p(&mut rng), b, p(&mut rng)),
        });
    }
    blocks.truncate(n as usize);
    blocks
}

fn normalized(b: &Block) -> Block {
    Block {
        index1: b.index1,
        index2: b.index2,
        partial1: if b.index1 == 0 { 0.0 } else { b.partial1 },
        partial2: if b.index2 == 0 { 0.0 } else { b.partial2 },
    }
}

fn block_bytes<'a>(blocks: impl IntoIterator<Item = &'a Block>) -> Vec<u8> {
    blocks.into_iter().flat_map(|b| b.to_le_bytes()).collect()
}

/// A record directory of `blocks` as a block tape, 5 inputs, outputs
/// (one of them twice, one an input), and seed files of 3 columns (bars)
/// and 2 (dots).
fn record_dir(blocks: &[Block]) -> tempfile::TempDir {
    let n = blocks.len() as u64;
    let dir = tempfile::tempdir().unwrap();
    write_tape(&dir.path().join(file_name::TAPE), blocks).unwrap();
    let inputs: Vec<u64> = (1..=INPUTS).collect();
    let outputs = [n - 1, n - 2, n / 2, n - 1, 3, n * 2 / 3];
    write_indices(&dir.path().join(file_name::INPUT_INDICES), &inputs).unwrap();
    write_indices(&dir.path().join(file_name::OUTPUT_INDICES), &outputs).unwrap();
    let mut rng = Rng(n);
    let mut table = |rows: usize, cols: usize| -> String {
        (0..rows)
            .map(|_| {
                let row: Vec<String> = (0..cols).map(|_| format!("{}", rng.unit())).collect();
                row.join(" ") + "\n"
            })
            .collect()
    };
    write(dir.path(), file_name::OUTPUT_BARS, &table(outputs.len(), 3));
    write(dir.path(), file_name::INPUT_DOTS, &table(inputs.len(), 2));
    dir
}

/// A second directory with `tape` as its `dg-tape` and copies of the index
/// and seed files of `like`.
fn twin_dir(like: &Path, tape: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(file_name::TAPE), tape).unwrap();
    for name in [
        file_name::INPUT_INDICES,
        file_name::OUTPUT_INDICES,
        file_name::OUTPUT_BARS,
        file_name::INPUT_DOTS,
    ] {
        fs::copy(like.join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// The compact twin of `blocks`' record directory, made by
/// `dg-eval --export-compact`.
fn exported_pair(blocks: &[Block]) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = record_dir(blocks);
    let out = tempfile::tempdir().unwrap();
    let compact = out.path().join("compact");
    succeeds(dir.path(), &["--export-compact", compact.to_str().unwrap()]);
    let bytes = fs::read(&compact).unwrap();
    assert_eq!(&bytes[..8], b"dgadtape");
    let twin = twin_dir(dir.path(), &bytes);
    (dir, twin)
}

#[test]
fn a_compact_tape_evaluates_to_the_same_result_files_byte_for_byte() {
    let blocks = random_tape(11, 9000, true);
    let (dir, twin) = exported_pair(&blocks);
    let size = fs::metadata(twin.path().join(file_name::TAPE))
        .unwrap()
        .len();
    assert!(
        size < 32 * blocks.len() as u64 / 2,
        "{size} bytes for {} blocks",
        blocks.len()
    );
    for (args, result) in [
        (&[][..], file_name::INPUT_BARS),
        (&["--forward"], file_name::OUTPUT_DOTS),
        (&["--jacobian"], file_name::JACOBIAN),
        (&["--jacobian", "--forward"], file_name::JACOBIAN),
        (&["--lanes", "1", "--threads", "2"], file_name::INPUT_BARS),
        (&["--forward", "--lanes", "3"], file_name::OUTPUT_DOTS),
    ] {
        for d in [dir.path(), twin.path()] {
            let _ = fs::remove_file(d.join(result));
            succeeds(d, args);
        }
        let expected = read(dir.path(), result);
        assert_eq!(read(twin.path(), result), expected, "{args:?}");
        // Real derivatives, not zeros.
        let nonzero = expected
            .split_whitespace()
            .filter(|v| v.parse::<f64>().unwrap() != 0.0)
            .count();
        assert!(nonzero >= 3, "{args:?}: {expected}");
    }
    // One line per output, one column per column of seeds.
    let dots = read(twin.path(), file_name::OUTPUT_DOTS);
    assert_eq!(dots.lines().count(), 6);
    assert!(dots.lines().all(|l| l.split_whitespace().count() == 2));
}

#[test]
fn export_of_a_compact_tape_gives_the_blocks_with_passive_partials_zeroed() {
    let blocks = random_tape(12, 6000, true);
    assert!(blocks
        .iter()
        .any(|b| b.index1 == 0 && b.partial1 != 0.0 && b.index2 != 0));
    let (dir, twin) = exported_pair(&blocks);
    let out = tempfile::tempdir().unwrap();

    let from_compact = out.path().join("from-compact");
    succeeds(twin.path(), &["--export", from_compact.to_str().unwrap()]);
    let normalized: Vec<Block> = blocks.iter().map(normalized).collect();
    assert_eq!(fs::read(&from_compact).unwrap(), block_bytes(&normalized));

    // A block tape exports unchanged.
    let from_blocks = out.path().join("from-blocks");
    succeeds(dir.path(), &["--export", from_blocks.to_str().unwrap()]);
    assert_eq!(
        fs::read(&from_blocks).unwrap(),
        fs::read(dir.path().join(file_name::TAPE)).unwrap()
    );

    // A compact tape exports to the same compact stream (the passive
    // partials sit beside active operands, so the entries that are all
    // zero are the same).
    let again = out.path().join("again");
    succeeds(twin.path(), &["--export-compact", again.to_str().unwrap()]);
    assert_eq!(
        fs::read(&again).unwrap(),
        fs::read(twin.path().join(file_name::TAPE)).unwrap()
    );

    // The exported blocks evaluate as the compact tape does.
    let third = twin_dir(dir.path(), &fs::read(&from_compact).unwrap());
    for d in [twin.path(), third.path()] {
        succeeds(d, &[]);
    }
    assert_eq!(
        read(third.path(), file_name::INPUT_BARS),
        read(twin.path(), file_name::INPUT_BARS)
    );
}

#[test]
fn a_tape_converts_in_place_both_ways() {
    let blocks = random_tape(17, 5000, true);
    let dir = record_dir(&blocks);
    let tape = dir.path().join(file_name::TAPE);
    let original = fs::read(&tape).unwrap();
    succeeds(dir.path(), &[]);
    let bars = read(dir.path(), file_name::INPUT_BARS);

    // dg-tape replaced by its compact stream while dg-eval has it mapped.
    succeeds(dir.path(), &["--export-compact", tape.to_str().unwrap()]);
    let compact = fs::read(&tape).unwrap();
    assert_eq!(&compact[..8], b"dgadtape");
    assert!(compact.len() < original.len() / 2);
    fs::remove_file(dir.path().join(file_name::INPUT_BARS)).unwrap();
    succeeds(dir.path(), &[]);
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), bars);

    // And back to blocks, passive partials zeroed.
    succeeds(dir.path(), &["--export", tape.to_str().unwrap()]);
    let normalized: Vec<Block> = blocks.iter().map(normalized).collect();
    assert_eq!(fs::read(&tape).unwrap(), block_bytes(&normalized));
    fs::remove_file(dir.path().join(file_name::INPUT_BARS)).unwrap();
    succeeds(dir.path(), &[]);
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), bars);
    assert_no_leftovers(dir.path());
}

#[test]
fn an_export_that_cannot_be_written_fails_with_the_path() {
    let blocks = random_tape(18, 300, false);
    let (dir, twin) = exported_pair(&blocks);
    let missing = dir.path().join("no-such-dir").join("out");
    for (d, flag) in [(dir.path(), "--export-compact"), (twin.path(), "--export")] {
        assert_fails(
            &dg_eval(d, &[flag, missing.to_str().unwrap()]),
            1,
            &format!(
                "dg-eval: cannot write {}: No such file or directory (os error 2)",
                missing.display()
            ),
        );
    }
}

#[test]
fn export_refuses_to_be_combined_with_an_evaluation() {
    let blocks = random_tape(13, 300, false);
    let dir = record_dir(&blocks);
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("target");
    let other = out.path().join("other");
    let (target_s, other_s) = (target.to_str().unwrap(), other.to_str().unwrap());
    for args in [
        &["--export", target_s, "--forward"][..],
        &["--forward", "--export", target_s],
        &["--export", target_s, "--jacobian"],
        &["--export", target_s, "--stats"],
        &["--export", target_s, "--print"],
        &["--export", target_s, "--export-compact", other_s],
        &["--export-compact", target_s, "--forward"],
        &["--export-compact", target_s, "--print"],
        &["--export"],
    ] {
        let output = dg_eval(dir.path(), args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains("--help"),
            "{err}"
        );
        assert_eq!(stdout(&output), "");
        assert!(!target.exists() && !other.exists(), "{args:?}");
    }
    // No result file was written either.
    assert!(!dir.path().join(file_name::OUTPUT_DOTS).exists());
    assert!(!dir.path().join(file_name::JACOBIAN).exists());
}

#[test]
fn print_of_a_compact_tape_equals_print_of_its_block_tape() {
    let blocks = random_tape(14, 400, false);
    let (dir, twin) = exported_pair(&blocks);
    let printed = dg_eval(dir.path(), &["--print"]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    let text = stdout(&printed);
    assert_eq!(text.lines().count(), 401);
    assert!(text.contains("\n3\t0\t0\t0\t0\tinput, output\n"), "{text}");
    let compact = dg_eval(twin.path(), &["--print"]);
    assert!(compact.status.success(), "{}", stderr(&compact));
    assert_eq!(stdout(&compact), text);
}

#[test]
fn print_of_a_compact_tape_shows_passive_partials_as_zero() {
    let blocks = random_tape(15, 400, true);
    let (dir, twin) = exported_pair(&blocks);
    let normalized: Vec<Block> = blocks.iter().map(normalized).collect();
    let normalized_dir = twin_dir(dir.path(), &block_bytes(&normalized));
    let print = |d: &Path| {
        let output = dg_eval(d, &["--print"]);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let compact = print(twin.path());
    assert_eq!(compact, print(normalized_dir.path()));
    let original = print(dir.path());
    assert_ne!(compact, original);
    // The lines differ exactly where a passive operand has a partial.
    let differing: Vec<usize> = compact
        .lines()
        .zip(original.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(k, _)| k - 1)
        .collect();
    let expected: Vec<usize> = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            (b.index1 == 0 && b.partial1 != 0.0) || (b.index2 == 0 && b.partial2.is_nan())
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(differing, expected);
}

#[test]
fn stats_of_a_compact_tape_say_compact_and_count_the_same() {
    let blocks = random_tape(16, 5000, true);
    let (dir, twin) = exported_pair(&blocks);
    let size = fs::metadata(twin.path().join(file_name::TAPE))
        .unwrap()
        .len();
    let stats = |d: &Path| {
        let output = dg_eval(d, &["--stats"]);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let (original, compact) = (stats(dir.path()), stats(twin.path()));
    assert!(
        compact.contains(&format!(
            "tape:             5000 blocks, {size} bytes (compact)\n"
        )),
        "{compact}"
    );
    assert!(
        original.contains("tape:             5000 blocks, 160000 bytes\n"),
        "{original}"
    );
    let counts = |text: &str| -> String {
        let line = text
            .lines()
            .find(|l| l.starts_with("active operands:"))
            .unwrap_or_else(|| panic!("{text}"));
        line[..line.find(" (validated").unwrap()].to_owned()
    };
    assert_eq!(counts(&compact), counts(&original));
    assert_eq!(
        read(twin.path(), file_name::INPUT_BARS),
        read(dir.path(), file_name::INPUT_BARS)
    );
}

/// A record directory of `blocks` ([`PRODUCT`] or a variant of it) with its
/// tape written compact, its inputs and outputs, and seeds for both modes.
fn compact_product_dir(blocks: &[Block]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let tape = Tape::from_blocks(blocks.to_vec(), "dg-tape").unwrap();
    write_compact(&dir.path().join(file_name::TAPE), &tape).unwrap();
    write_indices(&dir.path().join(file_name::INPUT_INDICES), &[1, 2]).unwrap();
    write_indices(&dir.path().join(file_name::OUTPUT_INDICES), &[4, 5]).unwrap();
    write(dir.path(), file_name::OUTPUT_BARS, "1.0\n0.5\n");
    write(dir.path(), file_name::INPUT_DOTS, "0.25\n1\n");
    dir
}

#[test]
fn a_compact_product_tape_gives_the_analytic_derivatives() {
    let dir = compact_product_dir(&PRODUCT);
    succeeds(dir.path(), &[]);
    // d/dx0 = x1 = -4; d/dx1 = x0 + 0.5 * 2 = 4.
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), "-4\n4\n");
    succeeds(dir.path(), &["--forward"]);
    assert_eq!(read(dir.path(), file_name::OUTPUT_DOTS), "2\n2\n");
}

#[test]
fn a_broken_compact_tape_is_reported_with_the_directory() {
    let context = |dir: &Path| format!("dg-eval: record directory {}: ", dir.display());

    let dir = compact_product_dir(&PRODUCT);
    let path = dir.path().join(file_name::TAPE);
    let mut bytes = fs::read(&path).unwrap();
    bytes[8] = 2;
    fs::write(&path, &bytes).unwrap();
    for args in [&[][..], &["--print"], &["--export", "/nonexistent/x"]] {
        assert_fails(
            &dg_eval(dir.path(), args),
            1,
            &format!(
                "{}dg-tape: not a valid compact tape at byte 8: compact tape version 2; this dgad \
                 reads version 1",
                context(dir.path())
            ),
        );
    }

    // Cut off in the middle of its piece.
    let dir = compact_product_dir(&PRODUCT);
    let path = dir.path().join(file_name::TAPE);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 9]).unwrap();
    assert_fails(
        &dg_eval(dir.path(), &["--forward"]),
        1,
        &format!(
            "{}dg-tape: not a valid compact tape at byte 24: the piece at index 0 is cut off",
            context(dir.path())
        ),
    );

    let dir = compact_product_dir(&PRODUCT);
    write(dir.path(), file_name::INPUT_INDICES, "1\n2\n5000\n");
    write(dir.path(), file_name::INPUT_DOTS, "1\n1\n1\n");
    assert_fails(
        &dg_eval(dir.path(), &["--forward"]),
        1,
        &format!(
            "{}dg-input-indices line 3: index 5000 is beyond the tape's 6 blocks",
            context(dir.path())
        ),
    );

    let dir = compact_product_dir(&PRODUCT);
    write(dir.path(), file_name::INPUT_INDICES, "3\n2\n");
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        &format!(
            "{}dg-input-indices line 1: input index 3 has a block that is not all-zero (found \
             Block {{ index1: 1, index2: 2, partial1: -4.0, partial2: 3.0 }}); an input's block \
             must be all-zero",
            context(dir.path())
        ),
    );
}

#[test]
fn a_bad_operand_of_a_compact_tape_is_reported_by_the_sweep() {
    let mut blocks = PRODUCT;
    blocks[5] = Block::unary(5, 2.0);
    let dir = compact_product_dir(&blocks);
    for args in [&[][..], &["--forward"], &["--jacobian"], &["--stats"]] {
        assert_fails(
            &dg_eval(dir.path(), args),
            1,
            "dg-eval: dg-tape block 5: operand index 5 is not smaller than 5",
        );
    }
    assert!(!dir.path().join(file_name::INPUT_BARS).exists());
}
