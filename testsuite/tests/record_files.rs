//! The record directory and its files (issue 16): links and directories of
//! other users are never written through, a new recording leaves no stale
//! results, a program image after `execve` keeps its predecessor's
//! recording, index files survive `SIGKILL` and a full disk, and
//! `DGAD_TAPE_LIMIT` stops a recording cleanly. Tests run as root as well
//! (where permission checks do not apply, "another user" is `nobody`).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use testsuite::derivatives::eval_values;
use testsuite::recording::{listing, record as record_with, stderr};
use testsuite::{build_record_program, run_under_dgad, Invocation, OptLevel, Outcome, ScratchDir};

/// The user id of `nobody`, the "other user" of these tests when they run
/// as root (otherwise root is the other user, and files cannot be given
/// away: those parts are skipped).
const NOBODY: u32 = 65534;

/// Whether the tests run as root (the effective id of /proc/self/status).
fn running_as_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        == Some("0")
}

fn build(name: &str) -> PathBuf {
    build_record_program(name, &[], OptLevel::O3)
}

fn record(inv: &Invocation, dir: &Path) -> Outcome {
    record_with(inv, dir, &[])
}

/// The recurrence program of `record_errors.rs`: y_{k+1} = y_k x + 0.5.
fn recurrence(x: &str, n: usize) -> Invocation {
    Invocation::new(build("fatal_signal_after_recording.c")).args([x, &n.to_string()])
}

fn gradient(dir: &Path) -> Vec<f64> {
    eval_values(dir, "dg-output-bars", "1\n", "dg-input-bars", false)
}

/// Asserts that dgad refused the record directory at start: exit 125,
/// the program never ran, one `dgad: record:` line containing `reason`.
fn assert_refused(out: &Outcome, reason: &str) {
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(out.stdout.is_empty(), "the program ran: {out:?}");
    let err = stderr(out);
    assert!(
        err.starts_with("dgad: record: ") && err.lines().count() == 1 && err.contains(reason),
        "{err}"
    );
}

/// Links planted in the record directory (`dg-tape`, an index file, the
/// old write probe's name) are replaced, never followed: their targets
/// keep their contents (an older dgad truncated and overwrote them).
#[test]
fn links_planted_in_the_record_directory_are_not_written_through() {
    let scratch = ScratchDir::new("files-planted-links");
    let dir = scratch.path().join("run");
    fs::create_dir(&dir).unwrap();
    let mut victims = Vec::new();
    for name in ["dg-tape", "dg-input-indices", ".dgad-write-test"] {
        let victim = scratch.write(&format!("victim-{name}"), b"precious\n");
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        victims.push(victim);
    }
    let out = record(&recurrence("0.999", 100), &dir);
    assert!(out.status.success(), "{out:?}");
    for victim in &victims {
        assert_eq!(fs::read(victim).unwrap(), b"precious\n", "{victim:?}");
    }
    for name in ["dg-tape", "dg-input-indices"] {
        let meta = fs::symlink_metadata(dir.join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name}: {meta:?}");
    }
    let expected = {
        let (mut y, mut d, x) = (1.0f64, 0.0f64, 0.999f64);
        for _ in 0..100 {
            d = d * x + y;
            y = y * x + 0.5;
        }
        d
    };
    assert!((gradient(&dir)[0] - expected).abs() <= 1e-12 * expected);
}

/// The user's own `dg-tape` link to `/dev/null` discards the tape (how
/// `scripts/bench_record.py` measures the instrumented program alone): it
/// is kept, and the index files are written beside it.
#[test]
fn the_users_own_link_to_dev_null_discards_the_tape() {
    let scratch = ScratchDir::new("files-discard");
    let dir = scratch.path().join("run");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/null", dir.join("dg-tape")).unwrap();
    let out = record(&recurrence("0.999", 200000), &dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        fs::read_link(dir.join("dg-tape")).unwrap(),
        Path::new("/dev/null")
    );
    assert_eq!(
        fs::read_to_string(dir.join("dg-input-indices")).unwrap(),
        "1\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("dg-output-indices"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    if running_as_root() {
        // Another user's link to /dev/null is replaced, as any other.
        std::os::unix::fs::lchown(dir.join("dg-tape"), Some(NOBODY), None).unwrap();
        let out = record(&recurrence("0.999", 100), &dir);
        assert!(out.status.success(), "{out:?}");
        assert!(fs::symlink_metadata(dir.join("dg-tape"))
            .unwrap()
            .file_type()
            .is_file());
    }
}

/// A record directory another user owns, one every user may write to
/// without the sticky bit, and one reached through another user's
/// symbolic link are refused with the reason, and nothing is written.
#[test]
fn record_directories_others_control_are_refused() {
    let scratch = ScratchDir::new("files-others-dirs");
    let inv = recurrence("0.999", 10);

    let root = running_as_root();
    if root {
        let owned = scratch.path().join("owned-by-nobody");
        fs::create_dir(&owned).unwrap();
        std::os::unix::fs::chown(&owned, Some(NOBODY), None).unwrap();
        assert_refused(&record(&inv, &owned), "is owned by user 65534, not by you");
        assert!(listing(&owned).is_empty(), "{:?}", listing(&owned));
    } else {
        assert_refused(
            &record(&inv, Path::new("/")),
            "is owned by user 0, not by you",
        );
    }

    let open = scratch.path().join("world-writable");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    assert_refused(
        &record(&inv, &open),
        "is writable by every user and has no sticky bit",
    );
    assert!(listing(&open).is_empty(), "{:?}", listing(&open));
    // With the sticky bit nobody else can replace the files: accepted.
    fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
    let out = record(&inv, &open);
    assert!(out.status.success(), "{out:?}");

    if !root {
        return;
    }
    let mine = scratch.path().join("mine");
    fs::create_dir(&mine).unwrap();
    let link = scratch.path().join("link-of-nobody");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(NOBODY), None).unwrap();
    assert_refused(
        &record(&inv, &link),
        "is a symbolic link owned by user 65534, not by you",
    );
    assert!(listing(&mine).is_empty(), "{:?}", listing(&mine));
    // The user's own link is followed.
    std::os::unix::fs::lchown(&link, Some(fs::metadata(&mine).unwrap().uid()), None).unwrap();
    let out = record(&inv, &link);
    assert!(out.status.success(), "{out:?}");
    assert!(mine.join("dg-tape").is_file());
}

/// `DGAD_LOG` and `DGAD_DUMP_CACHE` are not written through a planted
/// link: the log is refused (exit 125, the program does not run), the
/// dump replaces the link.
#[test]
fn log_and_cache_dump_are_not_written_through_links() {
    let scratch = ScratchDir::new("files-log-links");
    let victim = scratch.write("victim", b"precious\n");
    let log = scratch.path().join("log");
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    let inv = recurrence("0.999", 10);
    let out = run_under_dgad(&inv, None, &[("DGAD_LOG", log.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        stderr(&out).contains("is a symbolic link, which dgad does not write through"),
        "{}",
        stderr(&out)
    );
    if running_as_root() {
        let owned = scratch.write("log-of-nobody", b"");
        std::os::unix::fs::chown(&owned, Some(NOBODY), None).unwrap();
        let out = run_under_dgad(&inv, None, &[("DGAD_LOG", owned.to_str().unwrap())]);
        assert_eq!(out.status.code(), Some(125), "{out:?}");
        assert!(
            stderr(&out).contains("owned by user 65534"),
            "{}",
            stderr(&out)
        );
    }

    let dump = scratch.path().join("dump");
    std::os::unix::fs::symlink(&victim, &dump).unwrap();
    let out = run_under_dgad(&inv, None, &[("DGAD_DUMP_CACHE", dump.to_str().unwrap())]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fs::read(&victim).unwrap(), b"precious\n");
    let meta = fs::symlink_metadata(&dump).unwrap();
    assert!(meta.file_type().is_file(), "{meta:?}");
    assert!(fs::read_to_string(&dump).unwrap().starts_with("block "));
}

/// A new recording removes the results an earlier evaluation left (they
/// belonged to the old tape) and keeps the seeds the user wrote.
#[test]
fn a_new_recording_removes_the_previous_results() {
    let scratch = ScratchDir::new("files-stale");
    let dir = scratch.path().join("run");
    fs::create_dir(&dir).unwrap();
    for name in [
        "dg-input-bars",
        "dg-output-dots",
        "dg-jacobian",
        "dg-output-bars",
    ] {
        fs::write(dir.join(name), "42\n").unwrap();
    }
    let out = record(&recurrence("0.999", 10), &dir);
    assert!(out.status.success(), "{out:?}");
    for name in ["dg-input-bars", "dg-output-dots", "dg-jacobian"] {
        assert!(!dir.join(name).exists(), "stale {name} left");
    }
    assert_eq!(
        fs::read_to_string(dir.join("dg-output-bars")).unwrap(),
        "42\n"
    );
}

/// A program that recorded and then `execve`s another recording program
/// keeps its recording: the new image records into `DIR/exec-2` and says
/// so (an older dgad let it replace the files).
#[test]
fn a_recording_survives_an_execve_into_another_recording_program() {
    let prog = build("exec_after_recording.c");
    let scratch = ScratchDir::new("files-exec");
    let dir = scratch.path().join("run");
    let out = record(&Invocation::new(&prog).args(["2", "again"]), &dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout_text(), "8\n27\n");
    assert!(
        stderr(&out).contains("this one records into") && stderr(&out).contains("exec-2/"),
        "{}",
        stderr(&out)
    );
    assert_eq!(gradient(&dir), vec![12.0], "first image: d(x^3)/dx at 2");
    assert_eq!(
        gradient(&dir.join("exec-2")),
        vec![27.0],
        "second image: d(x^3)/dx at 3"
    );
    // A new run of the whole again replaces both (another process).
    let out = record(&Invocation::new(&prog).args(["1", "again"]), &dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(gradient(&dir), vec![3.0]);
    assert_eq!(gradient(&dir.join("exec-2")), vec![12.0]);
    // A run without the execve leaves nothing of the earlier run's exec-2
    // but the seeds written there.
    let out = record(&Invocation::new(&prog).arg("1"), &dir);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(listing(&dir.join("exec-2")), ["dg-output-bars"]);
    fs::remove_file(dir.join("exec-2").join("dg-output-bars")).unwrap();
    let out = record(&Invocation::new(&prog).arg("1"), &dir);
    assert!(out.status.success(), "{out:?}");
    assert!(!dir.join("exec-2").exists());
    assert_eq!(gradient(&dir), vec![3.0]);
}

/// A process killed with SIGKILL after declaring its input and output
/// leaves both in the index files (an older dgad buffered them: both files
/// were empty).
#[test]
fn index_files_hold_every_declaration_after_sigkill() {
    let prog = build("killed_after_declaring.c");
    let scratch = ScratchDir::new("files-sigkill");
    let dir = scratch.path().join("run");
    let inv = Invocation::new(&prog).args(["0.999", "100", "100000"]);
    let out = record(&inv, &dir);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(9),
        "{out:?}"
    );
    let inputs = fs::read_to_string(dir.join("dg-input-indices")).unwrap();
    let outputs = fs::read_to_string(dir.join("dg-output-indices")).unwrap();
    assert_eq!(inputs, "1\n");
    assert_eq!(outputs.lines().count(), 1, "{outputs:?}");
    let index: u64 = outputs.trim().parse().unwrap();
    assert!(index > 100, "output index {index}");
}

/// A full disk (a 100 KiB file-size limit) while the index file is written:
/// the recording stops with exit 125 and says how many lines the file
/// holds, which are whole (an older dgad lost the lines and exited 0).
#[test]
fn a_full_disk_under_the_index_file_stops_and_says_what_it_holds() {
    let prog = build("repeated_outputs.c");
    let scratch = ScratchDir::new("files-full-index");
    let dir = scratch.path().join("run");
    let script = format!(
        "ulimit -f 100; trap '' XFSZ; exec {} 1.5 60000",
        prog.display()
    );
    let out = record(&Invocation::new("bash").args(["-c", &script]), &dir);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let text = fs::read_to_string(dir.join("dg-output-indices")).unwrap();
    assert!(text.ends_with('\n') && text.lines().all(|l| l == "1"));
    let lines = text.lines().count();
    assert!(
        stderr(&out).contains(&format!(
            "writing {}/dg-output-indices failed: File too large",
            dir.display()
        )) && stderr(&out).contains(&format!(
            "dg-output-indices lists only the first {lines} declarations"
        )),
        "{}",
        stderr(&out)
    );
}

/// A full disk under the tape: the tape is cut to the blocks that were all
/// written, and the message says how many and what the index files hold;
/// both claims are true (an older dgad said "complete up to the last
/// flushed block").
#[test]
fn a_full_disk_under_the_tape_says_exactly_what_is_usable() {
    let prog = build("fatal_signal_after_recording.c");
    let scratch = ScratchDir::new("files-full-tape");
    for writer in ["1", "0"] {
        let dir = scratch.path().join(format!("run-{writer}"));
        let script = format!(
            "ulimit -f 100; trap '' XFSZ; exec {} 0.999 200000",
            prog.display()
        );
        let inv = Invocation::new("bash").args(["-c", &script]);
        let out = record_with(&inv, &dir, &[("DGAD_TAPE_WRITER", writer)]);
        assert_eq!(out.status.code(), Some(125), "{out:?}");
        let err = stderr(&out);
        let blocks: u64 = err
            .split("cut to its first ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no block count: {err}"));
        let size = fs::metadata(dir.join("dg-tape")).unwrap().len();
        assert_eq!(size, blocks * 32, "{err}");
        assert!(blocks > 1000, "{err}");
        assert!(
            err.contains("dg-input-indices lists the 1 inputs and dg-output-indices the 0 outputs"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(dir.join("dg-input-indices")).unwrap(),
            "1\n"
        );
        // Every written block is whole: the tape validates.
        fs::write(dir.join("dg-output-indices"), format!("{}\n", blocks - 1)).unwrap();
        fs::write(dir.join("dg-output-bars"), "1\n").unwrap();
        let check = std::process::Command::new(testsuite::derivatives::dg_eval())
            .arg(&dir)
            .arg("--stats")
            .output()
            .unwrap();
        assert!(check.status.success(), "{check:?}");
    }
}

/// `DGAD_TAPE_LIMIT` stops the program when the tape would grow beyond it:
/// exit 125, a message naming the limit, and a tape of at most that size
/// that validates, with every declaration made; a value that is no size
/// is refused at start with the accepted forms, writing nothing.
#[test]
fn tape_limit_stops_the_recording_cleanly() {
    let scratch = ScratchDir::new("files-tape-limit");
    let inv = recurrence("0.999", 200000);
    for (limit, bytes) in [("1M", 1u64 << 20), ("300000", 300000), ("4k", 4096)] {
        for writer in ["1", "0"] {
            let dir = scratch.path().join(format!("run-{limit}-{writer}"));
            let out = record_with(
                &inv,
                &dir,
                &[("DGAD_TAPE_LIMIT", limit), ("DGAD_TAPE_WRITER", writer)],
            );
            assert_eq!(out.status.code(), Some(125), "{out:?}");
            let err = stderr(&out);
            assert!(
                err.contains(&format!(
                    "the tape reached DGAD_TAPE_LIMIT={limit}; stopping"
                )),
                "{err}"
            );
            let size = fs::metadata(dir.join("dg-tape")).unwrap().len();
            assert_eq!(size, bytes / 32 * 32, "{limit}");
            assert_eq!(
                fs::read_to_string(dir.join("dg-input-indices")).unwrap(),
                "1\n"
            );
            fs::write(
                dir.join("dg-output-indices"),
                format!("{}\n", size / 32 - 1),
            )
            .unwrap();
            fs::write(dir.join("dg-output-bars"), "1\n").unwrap();
            let check = std::process::Command::new(testsuite::derivatives::dg_eval())
                .arg(&dir)
                .arg("--stats")
                .output()
                .unwrap();
            assert!(check.status.success(), "{check:?}");
        }
    }
    // Under the limit nothing changes.
    let dir = scratch.path().join("run-enough");
    let out = record_with(
        &recurrence("0.999", 1000),
        &dir,
        &[("DGAD_TAPE_LIMIT", "1M")],
    );
    assert!(out.status.success(), "{out:?}");

    // (An empty value is an unset one, as for every setting.)
    for bad in ["20GB", "1.5G", "-1", "0", "G"] {
        let dir = scratch.path().join("run-bad");
        let out = record_with(&inv, &dir, &[("DGAD_TAPE_LIMIT", bad)]);
        assert_refused(
            &out,
            &format!("DGAD_TAPE_LIMIT={bad} is not a tape size: give"),
        );
        assert!(stderr(&out).contains("K, M, G or T"), "{}", stderr(&out));
        assert!(!dir.exists(), "{bad}: the record directory was created");
    }
}
