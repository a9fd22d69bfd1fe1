//! Derivgrind's command line: `dgad --tool=derivgrind [--record=DIR]
//! [options] PROG ARGS` (what `valgrind --tool=derivgrind …` takes), so
//! scripts written for Derivgrind run with `dgad` in place of `valgrind`.
//! Without `--record` Derivgrind runs in forward mode, where the program
//! seeds and reads tangents itself (`DG_SET_DOTVALUE`/`DG_GET_DOTVALUE`);
//! with it, it records a tape into DIR.

use anyhow::{bail, Result};
use std::ffi::OsString;
use std::process::ExitCode;

/// Options of Valgrind's core and Derivgrind's that change nothing here.
const ACCEPTED: &[&str] = &[
    "-q",
    "--quiet",
    "-v",
    "--verbose",
    "--trace-children",
    "--error-limit",
    "--log-file",
    "--log-fd",
    "--vex-iropt-register-updates",
    "--diffquotdebug",
    "--typegrind",
    "--support-external-libraries",
];

/// Runs `args` (Valgrind's options, then the program). `tool_implied`:
/// invoked as `derivgrind` (Derivgrind's own wrapper script passes
/// `--tool=derivgrind` itself); otherwise `--tool=derivgrind` must be given,
/// as Valgrind would run another tool without it.
pub fn run(args: &[OsString], tool_implied: bool) -> Result<ExitCode> {
    let mut record = None;
    let mut tool = tool_implied;
    let mut program = None;
    for (i, a) in args.iter().enumerate() {
        let s = a.to_string_lossy();
        if !s.starts_with('-') {
            program = Some(i);
            break;
        }
        let (name, value) = s
            .split_once('=')
            .map_or((s.as_ref(), None), |(n, v)| (n, Some(v)));
        match name {
            "--tool" if value == Some("derivgrind") => tool = true,
            "--tool" => bail!(
                "--tool={}: dgad is Derivgrind's drop-in; only --tool=derivgrind",
                value.unwrap_or("")
            ),
            "--record" => record = value.map(str::to_string),
            // Valgrind's gdbserver: `--vgdb-error=0` stops the program at
            // its start until gdb attaches (Derivgrind's tests then mark
            // variables with monitor commands). dgad has no gdbserver: run
            // on, and gdb would wait for a connection that never comes.
            "--vgdb-error" if value.and_then(|v| v.trim().parse::<u64>().ok()) == Some(0) => bail!(
                "--vgdb-error=0: dgad has no gdbserver for gdb to attach to (Valgrind's vgdb, \
                 Derivgrind's monitor commands mark, index, get, set): mark inputs and outputs \
                 in the program (DG_INPUTF, DG_OUTPUTF, DG_SET_DOTVALUE, DG_GET_DOTVALUE)"
            ),
            // Other values only stop after that many errors, which
            // Derivgrind never reports; `--vgdb=no|yes|full` only says
            // whether a gdb may attach.
            "--vgdb-error"
            | "--vgdb"
            | "--vgdb-prefix"
            | "--vgdb-poll"
            | "--vgdb-shadow-registers" => {}
            n if ACCEPTED.contains(&n) => {}
            _ => eprintln!("dgad: {s} is not a Derivgrind option dgad knows; ignored"),
        }
    }
    if !tool {
        bail!("no --tool=derivgrind: dgad is Derivgrind's drop-in, not Valgrind's other tools");
    }
    let Some(p) = program else {
        bail!("no program given: dgad --tool=derivgrind [--record=DIR] PROG ARGS");
    };
    let lib = crate::beside_me("libdgad.so")?;
    let mut cmd = std::process::Command::new(&args[p]);
    cmd.args(&args[p + 1..]).env("LD_PRELOAD", &lib);
    match &record {
        // Derivgrind's tape-evaluation reads dg-tape.
        Some(dir) => cmd
            .env("DGAD_MODE", "record")
            .env("DGAD_RECORD", dir)
            .env("DGAD_TAPE_FORMAT", "derivgrind"),
        None => cmd.env("DGAD_MODE", "dot").env_remove("DGAD_RECORD"),
    };
    let (status, _) = crate::inject::run(&mut cmd, &lib, true)?;
    Ok(crate::exit_code(status))
}
