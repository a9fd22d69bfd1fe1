//! `dgad`: runs a program under `libdgad.so` and prints what it asks for.
//!
//! ```text
//! dgad run      [opts] -- PROG ARGS     the engine alone (null mode)
//! dgad record   [opts] -- PROG ARGS     a record directory (--dir, or a fresh one it names)
//! dgad grad     [opts] -- PROG ARGS     record, seed the outputs, sweep, print the gradient
//! dgad jacobian [opts] -- PROG ARGS     record, sweep, print the whole Jacobian
//! dgad dot --seed … -- PROG ARGS        forward mode in the run: the outputs' tangents
//! dgad --tool=derivgrind [--record=DIR] PROG ARGS   Derivgrind's command line
//! ```
//!
//! The program is started with `LD_PRELOAD` and traced until the loader
//! has relocated it: the runtime takes over there, before any initialiser
//! runs, and the launcher detaches (`inject`). Static executables are not
//! supported yet (`docs/limitations.md`).
//!
//! `grad`, `jacobian` and `dot` without `--dir` work in a fresh private
//! directory and remove it afterwards (kept, and named, when the program
//! fails); `record` keeps its directory and names it.

mod derivgrind;
mod inject;
mod progress;
mod report;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// dgad: automatic differentiation of compiled programs.
#[derive(Parser, Debug)]
#[command(
    name = "dgad",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("DGAD_COMMIT"), ")"),
)]
struct Cli {
    #[command(subcommand)]
    command: Mode,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// Run the program under the engine alone (null mode): output as natively.
    Run(Common),
    /// Record a tape into a record directory.
    Record(Common),
    /// Record, seed every output with 1 (or --seed), sweep backwards and
    /// print the gradient of the seeded combination of outputs.
    Grad(Sweep),
    /// Record and print the Jacobian (one row per output).
    Jacobian(Sweep),
    /// Forward mode in the run: seed the marked inputs (--seed, one value
    /// per input) and print the marked outputs' tangents.
    Dot(Sweep),
}

#[derive(Args, Debug)]
struct Common {
    /// The record directory (created if missing; by default a fresh private
    /// one under $TMPDIR, named on stderr).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// One statistics line on stderr at the program's exit (DGAD_STATS).
    #[arg(long)]
    stats: bool,
    /// The CPU features the program's cpuid reports: avx2 or native
    /// (DGAD_CPUID).
    #[arg(long)]
    cpuid: Option<String>,
    /// Differentiate libm's machine code instead of answering its calls
    /// with analytic derivatives (DGAD_MATHWRAP=0).
    #[arg(long)]
    no_mathwrap: bool,
    /// The largest tape, in bytes with K, M, G or T (DGAD_TAPE_LIMIT).
    #[arg(long)]
    tape_limit: Option<String>,
    /// record, grad --keep-tape, jacobian --keep-tape: the tape file,
    /// compact (dg-tape-compact, dgad's own format: a quarter of the bytes;
    /// dg-eval reads it) or derivgrind (dg-tape, Derivgrind's 32-byte
    /// blocks, for its tape-evaluation) (DGAD_TAPE_FORMAT) [default: compact].
    #[arg(long, value_parser = ["compact", "derivgrind"])]
    tape_format: Option<String>,
    /// libdgad.so to load (default: beside this program).
    #[arg(long)]
    lib: Option<PathBuf>,
    /// Start the runtime in its constructor, as plain LD_PRELOAD does,
    /// instead of at the loader's rendezvous before every initialiser.
    #[arg(long)]
    no_early: bool,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    program: Vec<OsString>,
}

#[derive(Args, Debug)]
struct Sweep {
    #[command(flatten)]
    common: Common,
    /// Seeds: for grad one value per output, for dot one per input
    /// (comma- or space-separated; grad's default: every output 1).
    #[arg(long, allow_hyphen_values = true)]
    seed: Option<String>,
    /// Print JSON (the program's stdout then goes to stderr).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV (the program's stdout then goes to stderr).
    #[arg(long)]
    csv: bool,
    /// grad, jacobian: write the tape to the record directory and sweep it
    /// with dg-eval afterwards, instead of keeping it in the program's
    /// memory and sweeping there at exit (DGAD_GRAD).
    #[arg(long)]
    keep_tape: bool,
    /// grad, jacobian: the memory the tape may take in the program before
    /// it goes to a file, in bytes with K, M, G or T (DGAD_TAPE_MEMORY;
    /// default half the available memory).
    #[arg(long, conflicts_with = "keep_tape")]
    tape_memory: Option<String>,
}

/// How results are printed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An aligned table.
    Table,
    /// One JSON object.
    Json,
    /// Comma-separated values with a header line.
    Csv,
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // Installed as `valgrind` and `derivgrind` (`scripts/install.sh`), or
    // called with Valgrind's `--tool=`: Derivgrind's command line.
    let name = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let result = if name.as_deref() == Some("vgdb") {
        derivgrind::vgdb(&args[1..])
    } else if args.get(1).is_some_and(|a| a == "vgdb") {
        derivgrind::vgdb(&args[2..])
    } else if name.as_deref() == Some("derivgrind") {
        derivgrind::run(&args[1..], true)
    } else if name.as_deref() == Some("valgrind")
        || args
            .get(1)
            .is_some_and(|a| a.to_string_lossy().starts_with("--tool="))
    {
        derivgrind::run(&args[1..], false)
    } else {
        run(Cli::parse())
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dgad: {e:#}");
            ExitCode::from(125)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Mode::Run(c) => {
            let status = launch(&c, "null", None, false, &[])?;
            Ok(exit_code(status))
        }
        Mode::Record(c) => {
            let dir = record_dir(&c)?;
            let status = launch(&c, "record", Some(&dir), false, &[])?;
            eprintln!("dgad: recorded into {}", dir.display());
            Ok(exit_code(status))
        }
        Mode::Grad(s) => sweep(&s, false),
        Mode::Jacobian(s) => sweep(&s, true),
        Mode::Dot(s) => dot(&s),
    }
}

fn format_of(s: &Sweep) -> Format {
    if s.json {
        Format::Json
    } else if s.csv {
        Format::Csv
    } else {
        Format::Table
    }
}

/// The exit code of the program, or 128 + its signal.
pub(crate) fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c as u8),
        (None, Some(s)) => ExitCode::from(128 + s as u8),
        _ => ExitCode::FAILURE,
    }
}

/// A file beside this executable (`libdgad.so`, `dg-eval`).
pub(crate) fn beside_me(name: &str) -> Result<PathBuf> {
    let me = std::env::current_exe().context("cannot find the dgad executable")?;
    let dir = me
        .parent()
        .context("the dgad executable has no directory")?;
    for candidate in [dir.join(name), dir.join("../lib").join(name)] {
        if candidate.exists() {
            return Ok(candidate);
        }
    }
    bail!(
        "{name} not found beside {} (build it: cargo build --release -p preload -p evaluator)",
        me.display()
    )
}

/// The record directory: the one given, or a fresh private one.
fn record_dir(c: &Common) -> Result<PathBuf> {
    if let Some(d) = &c.dir {
        return Ok(d.clone());
    }
    let base = std::env::var_os("TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let mut template = base
        .join("dgad-XXXXXX")
        .into_os_string()
        .into_encoded_bytes();
    template.push(0);
    // SAFETY: `template` is a writable NUL-terminated buffer ending in
    // XXXXXX, as mkdtemp requires; it creates the directory mode 0700.
    let p = unsafe { libc::mkdtemp(template.as_mut_ptr() as *mut libc::c_char) };
    if p.is_null() {
        bail!(
            "cannot create a record directory in {}: {}",
            base.display(),
            std::io::Error::last_os_error()
        );
    }
    template.pop();
    // SAFETY: the bytes came from an OsString and mkdtemp only replaced X's
    // with ASCII.
    Ok(PathBuf::from(unsafe {
        OsString::from_encoded_bytes_unchecked(template)
    }))
}

/// Runs the program under the runtime in `mode`, with `env` added; waits
/// for it.
fn launch(
    c: &Common,
    mode: &str,
    dir: Option<&Path>,
    stdout_to_stderr: bool,
    env: &[(&str, &str)],
) -> Result<std::process::ExitStatus> {
    let lib = match &c.lib {
        Some(l) => l.clone(),
        None => beside_me("libdgad.so")?,
    };
    let mut cmd = inject::command(&c.program[0], &lib)?;
    cmd.args(&c.program[1..]);
    let mut preload = lib.clone().into_os_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(" ");
        preload.push(old);
    }
    cmd.env("LD_PRELOAD", preload).env("DGAD_MODE", mode);
    if let Some(d) = dir {
        cmd.env("DGAD_RECORD", d);
    }
    if c.stats {
        cmd.env("DGAD_STATS", "1");
    }
    if let Some(v) = &c.cpuid {
        cmd.env("DGAD_CPUID", v);
    }
    if c.no_mathwrap {
        cmd.env("DGAD_MATHWRAP", "0");
    }
    if let Some(v) = &c.tape_limit {
        cmd.env("DGAD_TAPE_LIMIT", v);
    }
    // A tape kept in the program's memory (DGAD_GRAD) has no file format:
    // the runtime refuses one, also from the user's environment.
    if env.iter().any(|(k, _)| *k == "DGAD_GRAD") {
        cmd.env_remove("DGAD_TAPE_FORMAT");
    } else if mode == "record" {
        cmd.env(
            "DGAD_TAPE_FORMAT",
            c.tape_format.as_deref().unwrap_or("compact"),
        );
    }
    cmd.envs(env.iter().copied());
    if stdout_to_stderr {
        // The results own stdout: the program's output goes to stderr.
        // SAFETY: dup of our own stderr, whose descriptor is open.
        let fd = unsafe { libc::dup(2) };
        if fd >= 0 {
            // SAFETY: `fd` is a new descriptor nobody else owns.
            cmd.stdout(unsafe { <Stdio as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        }
    }
    let _progress = (mode == "record")
        .then(|| progress::Progress::start("recording", dir.map(Path::to_path_buf)));
    let (status, _) = inject::run(&mut cmd, &lib, !c.no_early)
        .with_context(|| format!("cannot start {}", c.program[0].to_string_lossy()))?;
    Ok(status)
}

/// The values of `--seed`.
fn parse_seed(s: &str) -> Result<Vec<f64>> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            tape_format::value::parse_value(t)
                .with_context(|| format!("--seed: {t:?} is not a number"))
        })
        .collect()
}

fn read_values(dir: &Path, name: &str) -> Result<tape_format::ValueTable> {
    tape_format::read_values(&dir.join(name))
        .with_context(|| format!("reading {}", dir.join(name).display()))
}

/// A seed file: one value per line, replaced whole (`tape_format`'s writer).
fn write_column(dir: &Path, name: &str, values: &[f64]) -> Result<()> {
    let path = dir.join(name);
    tape_format::write_values(&path, &tape_format::ValueTable::column(values.to_vec()))
        .with_context(|| format!("writing {}", path.display()))
}

fn dg_eval(dir: &Path, extra: &[&str]) -> Result<()> {
    let eval = beside_me("dg-eval")?;
    let _progress = progress::Progress::start("sweeping", Some(dir.to_path_buf()));
    let status = Command::new(&eval)
        .arg(dir)
        .args(extra)
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("cannot start {}", eval.display()))?;
    if !status.success() {
        bail!(
            "dg-eval {} {} failed ({status})",
            dir.display(),
            extra.join(" ")
        );
    }
    Ok(())
}

/// `grad` and `jacobian`: record, sweep, print.
fn sweep(s: &Sweep, jacobian: bool) -> Result<ExitCode> {
    let format = format_of(s);
    let dir = record_dir(&s.common)?;
    // Given seeds of a gradient swept in the program's process are written
    // before the run: the runtime reads them at exit (with --keep-tape
    // they are written for dg-eval after it).
    if s.common.tape_format.is_some() && !s.keep_tape {
        bail!("--tape-format is the format of a tape file: it needs --keep-tape");
    }
    let seeds = s.seed.as_deref().map(parse_seed).transpose()?;
    if let (Some(seeds), false, false) = (&seeds, s.keep_tape, jacobian) {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        write_column(&dir, tape_format::file_name::OUTPUT_BARS, seeds)?;
    }
    let mut env = Vec::new();
    if !s.keep_tape {
        env.push((
            "DGAD_GRAD",
            match (jacobian, &seeds) {
                (true, _) => "jacobian",
                (false, None) => "ones",
                (false, Some(_)) => "seeds",
            },
        ));
        if let Some(m) = &s.tape_memory {
            env.push(("DGAD_TAPE_MEMORY", m));
        }
    }
    let status = launch(
        &s.common,
        "record",
        Some(&dir),
        format != Format::Table,
        &env,
    )?;
    if let (false, Some(seeds)) = (status.success(), &seeds) {
        // The runtime refused seeds that do not fit (and said so).
        let marked = tape_format::read_indices(&dir.join(tape_format::file_name::OUTPUT_INDICES));
        if let Ok(outputs) = marked.map(|o| o.len()) {
            if outputs != seeds.len() {
                bail!(
                    "--seed has {} values; the program marked {outputs} outputs (the recording \
                     is in {})",
                    seeds.len(),
                    dir.display()
                );
            }
        }
    }
    if !status.success() {
        eprintln!(
            "dgad: the program ended with {status}; no derivatives (the recording is in {})",
            dir.display()
        );
        return Ok(exit_code(status));
    }
    let inputs = tape_format::read_indices(&dir.join(tape_format::file_name::INPUT_INDICES))
        .context("the program marked no inputs (DG_INPUTF, dgad_input)")?
        .len();
    let outputs = tape_format::read_indices(&dir.join(tape_format::file_name::OUTPUT_INDICES))
        .context("the program marked no outputs (DG_OUTPUTF, dgad_output)")?
        .len();
    // No table of nothing: a run that marked none has no derivatives to
    // print, which a user should hear about rather than read off an empty
    // table (marks made before the runtime came in: --no-early, no ptrace).
    for (n, what, how) in [
        (inputs, "inputs", "DG_INPUTF, dgad_input"),
        (outputs, "outputs", "DG_OUTPUTF, dgad_output"),
    ] {
        if n == 0 {
            bail!(
                "the program marked no {what} ({how}) while it ran under dgad: no derivatives \
                 (the recording is in {})",
                dir.display()
            );
        }
    }
    if jacobian {
        if s.keep_tape {
            dg_eval(&dir, &["--jacobian"])?;
        }
        let j = read_values(&dir, tape_format::file_name::JACOBIAN)?;
        report::jacobian(format, &dir, inputs, outputs, &j);
    } else {
        let seeds = seeds.unwrap_or_else(|| vec![1.0; outputs]);
        if seeds.len() != outputs {
            bail!(
                "--seed has {} values; the program marked {outputs} outputs",
                seeds.len()
            );
        }
        if s.keep_tape {
            write_column(&dir, tape_format::file_name::OUTPUT_BARS, &seeds)?;
            dg_eval(&dir, &[])?;
        }
        let g = read_values(&dir, tape_format::file_name::INPUT_BARS)?;
        report::gradient(format, &dir, &seeds, g.values());
    }
    if s.common.dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(ExitCode::SUCCESS)
}

/// `dot`: forward mode in the run.
fn dot(s: &Sweep) -> Result<ExitCode> {
    let format = format_of(s);
    let Some(seed) = &s.seed else {
        bail!("dgad dot needs --seed with one value per marked input (the direction)");
    };
    let seeds = parse_seed(seed)?;
    let dir = record_dir(&s.common)?;
    std::fs::create_dir_all(&dir)?;
    write_column(&dir, tape_format::file_name::INPUT_DOTS, &seeds)?;
    let status = launch(&s.common, "dot", Some(&dir), format != Format::Table, &[])?;
    if !status.success() {
        eprintln!(
            "dgad: the program ended with {status}; no tangents (files in {})",
            dir.display()
        );
        return Ok(exit_code(status));
    }
    let t = read_values(&dir, tape_format::file_name::OUTPUT_DOTS)?;
    report::tangents(format, &seeds, t.values());
    if s.common.dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(ExitCode::SUCCESS)
}
