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
    let mut gdbserver = false;
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
            // its start until gdb attaches (`target remote | vgdb`), which
            // then sets breakpoints and sends Derivgrind's monitor commands.
            "--vgdb-error" if value.and_then(|v| v.trim().parse::<u64>().ok()) == Some(0) => {
                gdbserver = true
            }
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
    let mut cmd = crate::inject::command(&args[p], &lib)?;
    cmd.args(&args[p + 1..]).env("LD_PRELOAD", &lib);
    match &record {
        // Derivgrind's tape-evaluation reads dg-tape.
        Some(dir) => cmd
            .env("DGAD_MODE", "record")
            .env("DGAD_RECORD", dir)
            .env("DGAD_TAPE_FORMAT", "derivgrind"),
        None => cmd.env("DGAD_MODE", "dot").env_remove("DGAD_RECORD"),
    };
    if gdbserver {
        // The runtime names this relay in the `target remote` line it
        // prints: `dgad vgdb --pid=PID` connects gdb's pipe to it.
        let me = std::env::current_exe()?;
        cmd.env("DGAD_GDBSERVER", format!("{} vgdb", me.display()));
    }
    let (status, _) = crate::inject::run(&mut cmd, &lib, true)?;
    Ok(crate::exit_code(status))
}

/// `vgdb --pid=PID` (`dgad vgdb`, or installed as `vgdb`): what gdb runs
/// for `target remote | …` — relays its stdin and stdout to the gdbserver
/// of the runtime in process PID (an abstract Unix socket `dgad-gdb-PID`).
pub fn vgdb(args: &[OsString]) -> Result<ExitCode> {
    use std::io::{Read, Write};
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixStream};
    let pid = args
        .iter()
        .find_map(|a| a.to_str()?.strip_prefix("--pid="))
        .and_then(|p| p.parse::<u32>().ok());
    let Some(pid) = pid else {
        bail!("vgdb: --pid=PID names the process to debug (the one dgad said waits for gdb)");
    };
    let addr = SocketAddr::from_abstract_name(format!("dgad-gdb-{pid}"))?;
    let stream = UnixStream::connect_addr(&addr).map_err(|e| {
        anyhow::anyhow!(
            "vgdb: no dgad gdbserver in process {pid} ({e}): was it started with --vgdb-error=0?"
        )
    })?;
    let mut to_server = stream.try_clone()?;
    // gdb's side is read until gdb closes it, also after the process is
    // gone: gdb still acknowledges its exit, and a closed pipe would make
    // that an error.
    let from_gdb = std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 4096];
        let mut open = true;
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 {
                break;
            }
            open = open && to_server.write_all(&buf[..n]).is_ok();
        }
        let _ = to_server.shutdown(std::net::Shutdown::Write);
    });
    let mut from_server = stream;
    let mut stdout = std::io::stdout();
    let mut buf = [0u8; 4096];
    while let Ok(n) = from_server.read(&mut buf) {
        if n == 0 || stdout.write_all(&buf[..n]).is_err() || stdout.flush().is_err() {
            break;
        }
    }
    let _ = from_gdb.join();
    Ok(ExitCode::SUCCESS)
}
