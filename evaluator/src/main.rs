//! `dg-eval DIR`: evaluates the tape of a record directory, a drop-in for
//! Derivgrind's `tape-evaluation DIR [--forward|--stats|--print]` (same
//! files, same number format; `--stats` evaluates as well, `--print` has its
//! own layout). Exit code 1 for a failed evaluation, 2 for a usage error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::builder::TypedValueParser as _;
use clap::Parser;
use evaluator::{Evaluation, Mode, Plan, SweepOptions, MAX_LANES};
use tape_format::{
    file_name, read_values, tape_blocks, write_values, DisplayValue, Recording, TapeSummary,
};

/// Evaluate a recorded tape: reverse mode by default (dg-output-bars →
/// dg-input-bars), forward mode with --forward (dg-input-dots →
/// dg-output-dots).
///
/// A seed file with several values per line is evaluated in vector mode:
/// one direction per column, results with as many columns.
#[derive(Parser, Debug)]
#[command(name = "dg-eval", version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("DGAD_COMMIT"), ")"))]
struct Cli {
    /// Record directory with dg-tape, dg-input-indices and dg-output-indices.
    dir: PathBuf,
    /// Forward mode: read dg-input-dots, write dg-output-dots.
    #[arg(long)]
    forward: bool,
    /// Write the whole Jacobian to dg-jacobian (one line per output, one
    /// column per input), one direction per output, or per input with --forward.
    #[arg(long)]
    jacobian: bool,
    /// Print the tape's size, the counts of blocks by active operands (a full
    /// pass that also validates the tape), and the time and speed of the
    /// sweep. Unlike Derivgrind's --stats, which only counts, this also
    /// evaluates.
    #[arg(long)]
    stats: bool,
    /// Print every block of the tape and evaluate nothing.
    #[arg(long, conflicts_with_all = ["forward", "jacobian", "stats"])]
    print: bool,
    /// Write the tape as 32-byte blocks, Derivgrind's `dg-tape` format, to
    /// PATH (replaced atomically) and evaluate nothing: a compact tape for
    /// Derivgrind's tape-evaluation.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["forward", "jacobian", "stats", "print", "export_compact"])]
    export: Option<PathBuf>,
    /// Write the tape as a compact stream (dgad's own format, about a
    /// quarter of the bytes; dg-eval reads either) to PATH and evaluate nothing.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["forward", "jacobian", "stats", "print"])]
    export_compact: Option<PathBuf>,
    /// Directions swept together in one pass.
    #[arg(long, default_value_t = MAX_LANES, value_parser = clap::value_parser!(u8).range(1..=MAX_LANES as i64).map(usize::from))]
    lanes: usize,
    /// Passes run in parallel (each needs its own derivative vector) [default: number of CPUs].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..).map(usize::from))]
    threads: Option<usize>,
}

fn main() -> ExitCode {
    // Installed as `tape-evaluation` (`scripts/install.sh`): Derivgrind's
    // command line and output.
    if std::env::args_os()
        .next()
        .and_then(|a| PathBuf::from(a).file_name().map(|n| n == "tape-evaluation"))
        == Some(true)
    {
        return tape_evaluation(std::env::args_os().skip(1).collect());
    }
    // Usage errors exit with 2 inside `parse`.
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("dg-eval: {error:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut options = SweepOptions {
        max_lanes: cli.lanes,
        ..SweepOptions::default()
    };
    if let Some(threads) = cli.threads {
        options.threads = threads;
    }
    if let Some(path) = cli.export.as_ref().or(cli.export_compact.as_ref()) {
        let recording = Recording::open(&cli.dir)
            .with_context(|| format!("record directory {}", cli.dir.display()))?;
        if cli.export.is_some() {
            tape_format::export_blocks(path, &recording.tape)?;
        } else {
            tape_format::write_compact(path, &recording.tape)?;
        }
        return Ok(());
    }
    if !cli.print {
        // Before the tape is mapped and read: a tape whose derivatives
        // cannot fit is refused at once, however large (or sparse) it is.
        let blocks = tape_format::tape_path(&cli.dir)
            .and_then(|path| tape_blocks(&path))
            .with_context(|| format!("record directory {}", cli.dir.display()))?;
        Plan::new(blocks, 1, &options)
            .with_context(|| format!("record directory {}", cli.dir.display()))?;
    }
    let recording = Recording::open(&cli.dir)
        .with_context(|| format!("record directory {}", cli.dir.display()))?;
    let open_time = start.elapsed();

    if cli.print {
        return print_tape(&recording);
    }
    let summary = if cli.stats {
        let start = Instant::now();
        Some((recording.tape.validate()?, start.elapsed()))
    } else {
        None
    };

    let mode = if cli.forward {
        Mode::Forward
    } else {
        Mode::Reverse
    };

    let (evaluation, written) = if cli.jacobian {
        let evaluation = evaluator::jacobian(&recording, mode, &options)?;
        (evaluation, file_name::JACOBIAN)
    } else {
        let (seed_file, result_file) = match mode {
            Mode::Reverse => (file_name::OUTPUT_BARS, file_name::INPUT_BARS),
            Mode::Forward => (file_name::INPUT_DOTS, file_name::OUTPUT_DOTS),
        };
        let seeds = read_values(&recording.path(seed_file))?;
        let evaluation = match mode {
            Mode::Reverse => evaluator::reverse(&recording, &seeds, &options)?,
            Mode::Forward => evaluator::forward(&recording, &seeds, &options)?,
        };
        (evaluation, result_file)
    };
    write_values(&recording.path(written), &evaluation.values)?;

    if cli.stats {
        print_stats(
            &recording,
            mode,
            &evaluation,
            summary,
            open_time,
            start.elapsed(),
        );
    }
    Ok(())
}

/// Derivgrind's `tape-evaluation PATH [--stats|--forward]`: the same
/// sweeps as `dg-eval PATH [--forward]`; `--stats` prints Derivgrind's one
/// line of three block counts (no operand — block 0 and the inputs —, one,
/// two) and evaluates nothing. Every error exits with 1, as Derivgrind's.
fn tape_evaluation(args: Vec<std::ffi::OsString>) -> ExitCode {
    let usage = || {
        eprintln!("Usage: tape-evaluation path [--stats|--forward]");
        ExitCode::from(1)
    };
    let (dir, flag) = match args.as_slice() {
        [dir] => (PathBuf::from(dir), None),
        [dir, flag] => (PathBuf::from(dir), flag.to_str()),
        _ => return usage(),
    };
    // Derivgrind's releases before the bars and dots names read
    // dg-output-adjoints and wrote dg-input-adjoints: scripts of that time
    // seed the one, so answer in the other.
    let legacy = dir.join(LEGACY_SEEDS);
    let result = match flag {
        None if !dir.join(file_name::OUTPUT_BARS).exists() && legacy.exists() => {
            reverse_with_names(&dir, LEGACY_SEEDS, LEGACY_RESULTS)
        }
        None | Some("--forward") => run(&Cli {
            dir,
            forward: flag.is_some(),
            jacobian: false,
            stats: false,
            print: false,
            export: None,
            export_compact: None,
            lanes: MAX_LANES,
            threads: None,
        }),
        Some("--stats") => tape_counts(&dir),
        Some(_) => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tape-evaluation: {error:#}");
            ExitCode::from(1)
        }
    }
}

/// Derivgrind's earlier names of the reverse sweep's seed and result files.
const LEGACY_SEEDS: &str = "dg-output-adjoints";
const LEGACY_RESULTS: &str = "dg-input-adjoints";

/// A reverse sweep seeded from `dir/seeds`, its result written to
/// `dir/results`.
fn reverse_with_names(dir: &std::path::Path, seeds: &str, results: &str) -> anyhow::Result<()> {
    let recording =
        Recording::open(dir).with_context(|| format!("record directory {}", dir.display()))?;
    let seeds = read_values(&recording.path(seeds))?;
    let evaluation = evaluator::reverse(&recording, &seeds, &SweepOptions::default())?;
    write_values(&recording.path(results), &evaluation.values)?;
    Ok(())
}

/// `tape-evaluation PATH --stats`.
fn tape_counts(dir: &std::path::Path) -> anyhow::Result<()> {
    let tape = tape_format::tape_path(dir)
        .and_then(|path| tape_format::Tape::open(&path))
        .with_context(|| format!("record directory {}", dir.display()))?;
    let s = tape.validate()?;
    println!(
        "{} {} {}",
        s.no_active_operand, s.one_active_operand, s.two_active_operands
    );
    Ok(())
}

fn print_stats(
    recording: &Recording,
    mode: Mode,
    evaluation: &Evaluation,
    summary: Option<(TapeSummary, Duration)>,
    open_time: Duration,
    total_time: Duration,
) {
    let tape = &recording.tape;
    let plan = &evaluation.plan;
    println!("record directory: {}", recording.dir.display());
    println!(
        "tape:             {} blocks, {} bytes{}",
        tape.block_count(),
        tape.byte_len(),
        if tape.is_compact() { " (compact)" } else { "" }
    );
    println!("inputs:           {}", recording.inputs.len());
    println!("outputs:          {}", recording.outputs.len());
    if let Some((s, time)) = summary {
        println!(
            "active operands:  0: {} blocks, 1: {}, 2: {} (validated in {:.3} s)",
            s.no_active_operand,
            s.one_active_operand,
            s.two_active_operands,
            time.as_secs_f64()
        );
    }
    println!(
        "plan:             {} sweep; directions: {}, passes: {}, lanes: {}, threads: {}",
        match mode {
            Mode::Reverse => "reverse",
            Mode::Forward => "forward",
        },
        plan.directions,
        plan.passes,
        plan.lanes,
        plan.threads
    );
    let sweep = evaluation.sweep_time.as_secs_f64();
    let blocks_swept = tape.block_count() as f64 * plan.passes as f64;
    println!(
        "sweep:            {:.6} s, {:.3} ns per block and pass, {:.3} GB/s of tape",
        sweep,
        sweep * 1e9 / blocks_swept,
        tape.byte_len() as f64 * plan.passes as f64 / sweep / 1e9,
    );
    println!(
        "open:             {:.6} s (map and pre-fault the tape, read the index files)",
        open_time.as_secs_f64()
    );
    println!("total:            {:.6} s", total_time.as_secs_f64());
}

fn print_tape(recording: &Recording) -> anyhow::Result<()> {
    use std::io::Write as _;
    let (inputs, outputs) = (sorted(&recording.inputs), sorted(&recording.outputs));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(out, "index\tindex1\tindex2\tpartial1\tpartial2\trole")?;
    recording
        .tape
        .try_for_each_entry(|i, block| -> std::io::Result<()> {
            let role = match (
                inputs.binary_search(&i).is_ok(),
                outputs.binary_search(&i).is_ok(),
            ) {
                _ if i == 0 => "passive",
                (true, true) => "input, output",
                (true, false) => "input",
                (false, true) => "output",
                (false, false) => "",
            };
            writeln!(
                out,
                "{i}\t{}\t{}\t{}\t{}\t{role}",
                block.index1,
                block.index2,
                DisplayValue(block.partial1),
                DisplayValue(block.partial2)
            )
        })?;
    out.flush()?;
    Ok(())
}

fn sorted(indices: &[u64]) -> Vec<u64> {
    let mut v = indices.to_vec();
    v.sort_unstable();
    v
}
