//! `dg-eval` end to end on record directories in temporary folders: the
//! files it writes, its statistics, and the message and exit code of each
//! error.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{assert_fails, assert_no_leftovers, dg_eval, read, stderr, stdout, write, PRODUCT};
use tape_format::{file_name, write_indices, write_tape, Block};

/// The record directory of [`PRODUCT`] at x0 = 3, x1 = -4, without seeds.
fn product_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_tape(&dir.path().join(file_name::TAPE), &PRODUCT).unwrap();
    write_indices(&dir.path().join(file_name::INPUT_INDICES), &[1, 2]).unwrap();
    write_indices(&dir.path().join(file_name::OUTPUT_INDICES), &[4, 5]).unwrap();
    dir
}

#[test]
fn reverse_mode_writes_input_bars() {
    let dir = product_dir();
    write(dir.path(), file_name::OUTPUT_BARS, "1.0\n0.5\n");
    let output = dg_eval(dir.path(), &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "");
    // d/dx0 = x1 = -4; d/dx1 = x0 + 0.5 * 2 = 4.
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), "-4\n4\n");
}

#[test]
fn forward_mode_writes_output_dots() {
    let dir = product_dir();
    write(dir.path(), file_name::INPUT_DOTS, "0.25\n1\n");
    let output = dg_eval(dir.path(), &["--forward"]);
    assert!(output.status.success(), "{}", stderr(&output));
    // y0dot = -4 * 0.25 + 3 * 1 = 2; y1dot = 2.
    assert_eq!(read(dir.path(), file_name::OUTPUT_DOTS), "2\n2\n");
}

#[test]
fn seed_files_with_several_columns_run_in_vector_mode() {
    let dir = product_dir();
    write(dir.path(), file_name::OUTPUT_BARS, "1 0 2\n0 1 1\n");
    assert!(dg_eval(dir.path(), &[]).status.success());
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), "-4 0 -8\n3 2 8\n");
    write(dir.path(), file_name::INPUT_DOTS, "1 0\n0 1\n");
    assert!(dg_eval(dir.path(), &["--forward", "--lanes", "1"])
        .status
        .success());
    assert_eq!(read(dir.path(), file_name::OUTPUT_DOTS), "-4 3\n0 2\n");
}

#[test]
fn jacobian_is_one_line_per_output_in_either_mode() {
    let dir = product_dir();
    for args in [&["--jacobian"][..], &["--jacobian", "--forward"]] {
        fs::remove_file(dir.path().join(file_name::JACOBIAN)).ok();
        let output = dg_eval(dir.path(), args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        assert_eq!(
            read(dir.path(), file_name::JACOBIAN),
            "-4 3\n0 2\n",
            "{args:?}"
        );
    }
}

#[test]
fn stats_report_the_tape_and_the_sweep() {
    let dir = product_dir();
    write(dir.path(), file_name::OUTPUT_BARS, "1\n0\n");
    let output = dg_eval(dir.path(), &["--stats"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for expected in [
        "tape:             6 blocks, 192 bytes\n",
        "inputs:           2\n",
        "outputs:          2\n",
        "active operands:  0: 3 blocks, 1: 2, 2: 1 (validated in ",
        "plan:             reverse sweep; directions: 1, passes: 1, lanes: 1, threads: 1\n",
        "sweep:            ",
        " ns per block and pass, ",
        " GB/s of tape\n",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), "-4\n3\n");
}

#[test]
fn print_lists_every_block_with_its_role() {
    let dir = product_dir();
    let output = dg_eval(dir.path(), &["--print"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "index\tindex1\tindex2\tpartial1\tpartial2\trole\n\
         0\t0\t0\t0\t0\tpassive\n\
         1\t0\t0\t0\t0\tinput\n\
         2\t0\t0\t0\t0\tinput\n\
         3\t1\t2\t-4\t3\t\n\
         4\t3\t0\t1\t0\toutput\n\
         5\t2\t0\t2\t0\toutput\n"
    );
}

#[test]
fn missing_record_directory_fails_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let tape = missing.join(file_name::TAPE);
    assert_fails(
        &dg_eval(&missing, &[]),
        1,
        &format!(
            "dg-eval: record directory {}: cannot read {}: No such file or directory (os error 2)",
            missing.display(),
            tape.display()
        ),
    );
}

#[test]
fn missing_seed_file_fails_with_the_path() {
    let dir = product_dir();
    let bars = dir.path().join(file_name::OUTPUT_BARS);
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        &format!(
            "dg-eval: cannot read {}: No such file or directory (os error 2)",
            bars.display()
        ),
    );
}

#[test]
fn inconsistent_files_fail_with_file_line_and_expectation() {
    let context = |dir: &Path| format!("dg-eval: record directory {}: ", dir.display());

    let dir = product_dir();
    let mut tape = fs::read(dir.path().join(file_name::TAPE)).unwrap();
    tape.truncate(180);
    fs::write(dir.path().join(file_name::TAPE), tape).unwrap();
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        &format!(
            "{}dg-tape: 180 bytes is not a multiple of 32 (5 whole blocks and 20 more bytes: \
             truncated while writing block 5?)",
            context(dir.path())
        ),
    );

    let dir = product_dir();
    write(dir.path(), file_name::INPUT_INDICES, "1\n2\n5000\n");
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        &format!(
            "{}dg-input-indices line 3: index 5000 is beyond the tape's 6 blocks",
            context(dir.path())
        ),
    );

    let dir = product_dir();
    write(dir.path(), file_name::OUTPUT_INDICES, "4\nfive\n");
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        &format!(
            "{}dg-output-indices line 2: expected one decimal index, found \"five\"",
            context(dir.path())
        ),
    );
}

#[test]
fn seed_count_must_match_the_variables() {
    let dir = product_dir();
    write(dir.path(), file_name::OUTPUT_BARS, "1\n");
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        "dg-eval: dg-output-bars has 1 lines, but dg-output-indices lists 2 outputs",
    );
    write(dir.path(), file_name::INPUT_DOTS, "1\n2\n3\n");
    assert_fails(
        &dg_eval(dir.path(), &["--forward"]),
        1,
        "dg-eval: dg-input-dots has 3 lines, but dg-input-indices lists 2 inputs",
    );
    write(dir.path(), file_name::OUTPUT_BARS, "1\nx\n");
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        "dg-eval: dg-output-bars line 2: expected a floating-point value, found \"x\"",
    );
}

#[test]
fn a_bad_operand_is_reported_by_the_sweep() {
    let dir = product_dir();
    let mut blocks: Vec<Block> = vec![Block::ZERO; 6];
    blocks[3] = Block::binary(1, -4.0, 2, 3.0);
    blocks[4] = Block::unary(3, 1.0);
    blocks[5] = Block::unary(5, 2.0);
    write_tape(&dir.path().join(file_name::TAPE), &blocks).unwrap();
    write(dir.path(), file_name::OUTPUT_BARS, "1\n1\n");
    assert_fails(
        &dg_eval(dir.path(), &[]),
        1,
        "dg-eval: dg-tape block 5: operand index 5 is not smaller than 5",
    );
}

#[test]
fn usage_errors_exit_with_2() {
    let dir = product_dir();
    for args in [
        &["--lanes", "9"][..],
        &["--no-such-flag"],
        &["--print", "--forward"],
    ] {
        let output = dg_eval(dir.path(), args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        let err = stderr(&output);
        assert!(
            err.starts_with("error: ") && err.contains("--help"),
            "{err}"
        );
    }
    let output = Command::new(env!("CARGO_BIN_EXE_dg-eval"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// Issue 16: a result file is replaced, not written through a link another
/// user planted in the directory (the link's target keeps its contents).
#[test]
fn results_replace_a_planted_link_instead_of_following_it() {
    let dir = product_dir();
    write(dir.path(), file_name::OUTPUT_BARS, "1\n0\n");
    let victim = dir.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join(file_name::INPUT_BARS)).unwrap();
    let output = dg_eval(dir.path(), &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let meta = fs::symlink_metadata(dir.path().join(file_name::INPUT_BARS)).unwrap();
    assert!(meta.file_type().is_file(), "{meta:?}");
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), "-4\n3\n");
}

/// A record directory of `inputs` unused inputs and one output (y = 2 x_1).
fn wide_dir(inputs: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut blocks = vec![Block::ZERO; inputs as usize + 1];
    blocks.push(Block::unary(1, 2.0));
    write_tape(&dir.path().join(file_name::TAPE), &blocks).unwrap();
    let ins: Vec<u64> = (1..=inputs).collect();
    write_indices(&dir.path().join(file_name::INPUT_INDICES), &ins).unwrap();
    write_indices(&dir.path().join(file_name::OUTPUT_INDICES), &[inputs + 1]).unwrap();
    dir
}

/// Issue 16: a result that cannot be written whole (here a file-size limit
/// of 1 KiB standing in for a full disk) leaves the previous result as it
/// was, not a truncated file beside the error message.
#[test]
fn a_full_disk_leaves_the_previous_result_not_half_a_new_one() {
    let dir = wide_dir(1000);
    write(dir.path(), file_name::OUTPUT_BARS, "1\n");
    write(dir.path(), file_name::INPUT_BARS, "previous\n");
    let script = format!(
        "ulimit -f 1; trap '' XFSZ; exec {} {}",
        env!("CARGO_BIN_EXE_dg-eval"),
        dir.path().display()
    );
    let output = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("File too large"),
        "{}",
        stderr(&output)
    );
    assert_eq!(read(dir.path(), file_name::INPUT_BARS), "previous\n");
    assert_no_leftovers(dir.path());
}

/// Issue 16: a FIFO or a device in place of a file of the record directory
/// is refused at once (a FIFO hung dg-eval, `/dev/zero` as an index file
/// filled its memory).
#[test]
fn files_that_are_not_regular_are_refused() {
    for (name, make) in [
        (file_name::INPUT_INDICES, "fifo"),
        (file_name::OUTPUT_INDICES, "/dev/zero"),
        (file_name::TAPE, "fifo"),
        (file_name::OUTPUT_BARS, "fifo"),
    ] {
        let dir = product_dir();
        write(dir.path(), file_name::OUTPUT_BARS, "1\n0\n");
        let path = dir.path().join(name);
        let _ = fs::remove_file(&path);
        let what = if make == "fifo" {
            let status = Command::new("mkfifo").arg(&path).status().unwrap();
            assert!(status.success());
            "a FIFO"
        } else {
            std::os::unix::fs::symlink(make, &path).unwrap();
            "a character device"
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_dg-eval"))
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("dg-eval hangs on {name} as {make}");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{name}: {}", stderr(&output));
        let expected = format!(
            "cannot read {}: it is {what}, not a regular file\n",
            path.display()
        );
        assert!(stderr(&output).ends_with(&expected), "{}", stderr(&output));
    }
}

/// Issue 16: a tape whose derivatives cannot fit into memory is refused
/// before it is mapped or read, with the bytes needed and available (a
/// 2 TB sparse tape, under an 8 GB address-space limit; an older dg-eval
/// tried to map and pre-fault it).
#[test]
fn a_tape_too_large_for_memory_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let tape = fs::File::create(dir.path().join(file_name::TAPE)).unwrap();
    tape.set_len(2_000_000_000_000).unwrap();
    write(dir.path(), file_name::INPUT_INDICES, "1\n");
    write(dir.path(), file_name::OUTPUT_INDICES, "2\n");
    write(dir.path(), file_name::OUTPUT_BARS, "1\n");
    let script = format!(
        "ulimit -v 8000000; exec {} {}",
        env!("CARGO_BIN_EXE_dg-eval"),
        dir.path().display()
    );
    let start = std::time::Instant::now();
    let output = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "the tape's 62500000000 blocks need 500000000000 bytes of derivatives per direction, \
             but only "
        ),
        "{}",
        stderr(&output)
    );
    assert!(start.elapsed().as_secs() < 10, "took {:?}", start.elapsed());
}

/// Issue 16: a Jacobian too large for memory (200,000 inputs × 200,000
/// outputs: 320 GB of values) is refused before it is allocated, with the
/// bytes needed (an older dg-eval aborted in the allocator).
#[test]
fn a_jacobian_too_large_for_memory_is_refused_before_it_is_allocated() {
    let n: u64 = 200_000;
    let dir = tempfile::tempdir().unwrap();
    let mut blocks = vec![Block::ZERO; n as usize + 1];
    blocks.extend((1..=n).map(|i| Block::unary(i, 2.0)));
    write_tape(&dir.path().join(file_name::TAPE), &blocks).unwrap();
    let ins: Vec<u64> = (1..=n).collect();
    let outs: Vec<u64> = (n + 1..=2 * n).collect();
    write_indices(&dir.path().join(file_name::INPUT_INDICES), &ins).unwrap();
    write_indices(&dir.path().join(file_name::OUTPUT_INDICES), &outs).unwrap();
    let script = format!(
        "ulimit -v 8000000; exec {} {} --jacobian",
        env!("CARGO_BIN_EXE_dg-eval"),
        dir.path().display()
    );
    let output = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).starts_with(
            "dg-eval: the results, 200000 rows of 200000 values, need 960000000000 bytes"
        ),
        "{}",
        stderr(&output)
    );
    assert!(!dir.path().join(file_name::JACOBIAN).exists());
}
