//! Evaluating a tape for many directions: seeding, splitting the directions
//! into passes of up to 8 lanes, running passes on threads within a memory
//! budget, and collecting the results.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tape_format::{check_row_count, file_name, FormatError, Recording, Tape, ValueTable};

use crate::derivative_memory::DerivativeMemory;
use crate::sweep::{forward_sweep, reverse_sweep};
use crate::window::{reverse_sweep_window, window_len, WINDOW};

/// The widest vector of derivatives swept in one pass: 8 lanes are one
/// 64-byte cache line per index, and one AVX-512 register.
pub const MAX_LANES: usize = 8;

/// Which way a sweep runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Bars of outputs → bars of inputs, blocks back to front.
    Reverse,
    /// Dots of inputs → dots of outputs, blocks front to back.
    Forward,
}

/// The seeds of an evaluation, one row per seeded variable (outputs in
/// reverse mode, inputs in forward mode), one column per direction.
#[derive(Clone, Copy, Debug)]
pub enum Seeds<'a> {
    /// Given values, e.g. the contents of `dg-output-bars`.
    Table(&'a ValueTable),
    /// As many directions as seeded variables; direction `k` seeds variable
    /// `k` with 1 and the others with 0 (a Jacobian).
    Identity,
}

/// Error of an evaluation: a bad record directory or not enough memory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A file of the record directory is missing, unreadable or inconsistent.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// Even one lane of derivatives does not fit into the memory budget.
    #[error(
        "the tape's {blocks} blocks need {needed} bytes of derivatives per direction, \
         but only {budget} bytes of memory are available"
    )]
    MemoryBudget {
        /// Blocks on the tape.
        blocks: u64,
        /// Bytes for one lane.
        needed: u64,
        /// The budget.
        budget: u64,
    },
    /// The results (e.g. a Jacobian of many inputs and outputs) do not fit
    /// into the memory budget.
    #[error(
        "the results, {rows} rows of {directions} values, need {needed} bytes of memory \
         (with their copies while they are collected), but only {budget} bytes are available"
    )]
    ResultBudget {
        /// Rows of the result (variables read).
        rows: usize,
        /// Values per row (directions).
        directions: usize,
        /// Bytes needed.
        needed: u64,
        /// The budget.
        budget: u64,
    },
    /// The operating system refused the memory for the derivatives.
    #[error("cannot allocate {bytes} bytes for the derivatives: {error}")]
    Alloc {
        /// Bytes asked for.
        bytes: u64,
        /// What the operating system said.
        error: std::io::Error,
    },
}

/// How an evaluation may use the machine.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Directions swept together in one pass, 1 to [`MAX_LANES`].
    pub max_lanes: usize,
    /// Passes run at the same time, each with its own derivative vector.
    pub threads: usize,
    /// Bytes the derivative vectors may take in total.
    pub memory_budget: u64,
    /// Slots (a power of two) of the window a reverse sweep keeps its bars
    /// in when one per block would leave fewer lanes or threads within the
    /// budget ([`crate::reverse_sweep_window`]; default [`WINDOW`]).
    pub window: usize,
}

impl Default for SweepOptions {
    /// 8 lanes, one thread per CPU, three quarters of the available memory
    /// (`MemAvailable`, or the address-space limit if that is lower).
    fn default() -> SweepOptions {
        SweepOptions {
            max_lanes: MAX_LANES,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_budget: available_memory().map_or(u64::MAX, |bytes| bytes / 4 * 3),
            window: WINDOW,
        }
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes, or the process's
/// address-space limit (`ulimit -v`) if that is lower.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kib * 1024).min(address_space_limit().unwrap_or(u64::MAX)))
}

/// The soft `RLIMIT_AS` of `/proc/self/limits`, in bytes (`None` when
/// unlimited or unknown).
fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// How the directions of an evaluation are split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Number of directions (columns of the seeds).
    pub directions: usize,
    /// Directions per pass (the last pass may have fewer).
    pub lanes: usize,
    /// Number of passes over the tape.
    pub passes: usize,
    /// Passes run at the same time.
    pub threads: usize,
}

impl Plan {
    /// Splits `directions` over passes of at most `options.max_lanes` lanes
    /// and at most `options.threads` threads, so that the derivative vectors
    /// of a tape of `blocks` blocks fit into `options.memory_budget`,
    /// preferring fewer threads, then fewer lanes.
    pub fn new(blocks: u64, directions: usize, options: &SweepOptions) -> Result<Plan, EvalError> {
        let directions = directions.max(1);
        let per_lane = DerivativeMemory::bytes_for(blocks, 1);
        let lanes_fitting = options.memory_budget / per_lane.max(1);
        if lanes_fitting == 0 {
            return Err(EvalError::MemoryBudget {
                blocks,
                needed: per_lane,
                budget: options.memory_budget,
            });
        }
        let lanes = options
            .max_lanes
            .clamp(1, MAX_LANES)
            .min(directions)
            .min(usize::try_from(lanes_fitting).unwrap_or(usize::MAX));
        let passes = directions.div_ceil(lanes);
        let threads_fitting = lanes_fitting / lanes as u64;
        let threads = options
            .threads
            .max(1)
            .min(passes)
            .min(usize::try_from(threads_fitting).unwrap_or(usize::MAX));
        Ok(Plan {
            directions,
            lanes,
            passes,
            threads,
        })
    }
}

/// The result of an evaluation and what it cost.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// One row per read variable (inputs in reverse mode, outputs in forward
    /// mode), one column per direction.
    pub values: ValueTable,
    /// How the directions were split.
    pub plan: Plan,
    /// Time spent in the sweeps themselves, summed over passes.
    pub sweep_time: Duration,
    /// Wall time of the whole evaluation, allocation and seeding included.
    pub wall_time: Duration,
}

/// Evaluates `tape` in `mode`: puts the seeds at the indices `seeded` (row
/// `r` of the seeds at index `seeded[r]`; seeds at the same index add up),
/// sweeps, and returns the derivatives at the indices `read`.
///
/// # Panics
/// If a seed table's row count differs from `seeded.len()`, or an index is
/// not on the tape (a [`Recording`] has checked both).
pub fn evaluate(
    tape: &Tape,
    mode: Mode,
    seeded: &[u64],
    seeds: Seeds<'_>,
    read: &[u64],
    options: &SweepOptions,
) -> Result<Evaluation, EvalError> {
    let start = Instant::now();
    let directions = match seeds {
        Seeds::Table(table) => {
            assert_eq!(table.rows(), seeded.len(), "one row of seeds per index");
            table.width()
        }
        Seeds::Identity => seeded.len(),
    };
    // Derivatives per lane: one per block, or for a reverse sweep whose
    // full arrays would not let as many lanes and threads run within the
    // budget, a window of them (`crate::window`: less memory, about 15 %
    // more time per block).
    let blocks = tape.block_count();
    let full = Plan::new(blocks, directions, options);
    let (plan, window) = match mode {
        Mode::Forward => (full?, None),
        Mode::Reverse => {
            let slots = window_len(blocks, options.window.max(1).next_power_of_two());
            let windowed = Plan::new(slots as u64, directions, options)?;
            match full {
                Ok(f) if f.lanes >= windowed.lanes && f.threads >= windowed.threads => (f, None),
                _ => (windowed, Some(slots)),
            }
        }
    };
    let slots = window.map_or(blocks, |w| w as u64);
    // The table, the passes' pieces of it while they are collected, and a
    // Jacobian's transpose: checked before any of it is allocated.
    let table = (read.len() as u64)
        .saturating_mul(plan.directions as u64)
        .saturating_mul(8);
    if table.saturating_mul(3) > options.memory_budget {
        return Err(EvalError::ResultBudget {
            rows: read.len(),
            directions: plan.directions,
            needed: table.saturating_mul(3),
            budget: options.memory_budget,
        });
    }
    let mut values = ValueTable::zeros(read.len(), plan.directions);
    if directions == 0 {
        return Ok(Evaluation {
            values,
            plan,
            sweep_time: Duration::ZERO,
            wall_time: start.elapsed(),
        });
    }

    let next_pass = AtomicUsize::new(0);
    let finished = Mutex::new(Vec::with_capacity(plan.passes));
    let job = Pass {
        tape,
        mode,
        seeded,
        seeds,
        read,
        directions: plan.directions,
        window,
    };
    // A failed pass stops the others from starting new ones.
    let failed = AtomicBool::new(false);
    let worker = || -> Result<(), EvalError> {
        let bytes = DerivativeMemory::bytes_for(slots, plan.lanes);
        let mut memory =
            DerivativeMemory::new(bytes).map_err(|error| EvalError::Alloc { bytes, error })?;
        while !failed.load(Ordering::Relaxed) {
            let pass = next_pass.fetch_add(1, Ordering::Relaxed);
            if pass >= plan.passes {
                break;
            }
            let first = pass * plan.lanes;
            let lanes = plan.lanes.min(plan.directions - first);
            match job.run(&mut memory, first, lanes) {
                Ok(result) => finished
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(result),
                Err(error) => {
                    failed.store(true, Ordering::Relaxed);
                    return Err(error);
                }
            }
        }
        Ok(())
    };
    if plan.threads == 1 {
        // On the calling thread: the recording runtime sweeps inside the
        // program's process at exit, where it starts no thread.
        worker()?;
    } else {
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..plan.threads).map(|_| scope.spawn(worker)).collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })?;
    }

    let mut sweep_time = Duration::ZERO;
    for pass in finished.into_inner().unwrap_or_else(|e| e.into_inner()) {
        sweep_time += pass.sweep_time;
        for (r, lanes) in pass.values.chunks_exact(pass.lanes).enumerate() {
            values.row_mut(r)[pass.first..pass.first + pass.lanes].copy_from_slice(lanes);
        }
    }
    Ok(Evaluation {
        values,
        plan,
        sweep_time,
        wall_time: start.elapsed(),
    })
}

/// What every pass shares.
struct Pass<'a> {
    tape: &'a Tape,
    mode: Mode,
    seeded: &'a [u64],
    seeds: Seeds<'a>,
    read: &'a [u64],
    directions: usize,
    /// Slots of the window a reverse sweep keeps its bars in (`None`: one
    /// per block).
    window: Option<usize>,
}

/// Derivatives of directions `first..first + lanes` at the read indices.
struct PassResult {
    first: usize,
    lanes: usize,
    /// `read.len() × lanes`, row-major.
    values: Vec<f64>,
    sweep_time: Duration,
}

impl Pass<'_> {
    fn run(
        &self,
        memory: &mut DerivativeMemory,
        first: usize,
        lanes: usize,
    ) -> Result<PassResult, EvalError> {
        // One instance of the sweep per lane count, so the lane loops unroll.
        macro_rules! by_lanes {
            ($($l:literal)*) => {
                match lanes {
                    $($l => self.run_lanes::<$l>(memory, first),)*
                    _ => unreachable!("at most {MAX_LANES} lanes"),
                }
            };
        }
        by_lanes!(1 2 3 4 5 6 7 8)
    }

    fn run_lanes<const L: usize>(
        &self,
        memory: &mut DerivativeMemory,
        first: usize,
    ) -> Result<PassResult, EvalError> {
        debug_assert!(first + L <= self.directions);
        // Row `r`'s seeds for this pass's lanes.
        let seed = |r: usize| -> [f64; L] {
            let mut v = [0.0; L];
            match self.seeds {
                Seeds::Table(table) => v.copy_from_slice(&table.row(r)[first..first + L]),
                Seeds::Identity => {
                    if (first..first + L).contains(&r) {
                        v[r - first] = 1.0;
                    }
                }
            }
            v
        };
        let blocks = self.tape.block_count() as usize;
        let (values, sweep_time) = match (self.mode, self.window) {
            (Mode::Reverse, Some(slots)) => {
                let ring = memory.zeroed::<L>(slots);
                let seeds: Vec<(u64, [f64; L])> = self
                    .seeded
                    .iter()
                    .enumerate()
                    .map(|(r, &index)| (index, seed(r)))
                    .collect();
                let start = Instant::now();
                let bars = reverse_sweep_window::<L>(self.tape, ring, &seeds, self.read)?;
                let sweep_time = start.elapsed();
                (bars.into_iter().flatten().collect(), sweep_time)
            }
            (mode, _) => {
                let derivatives = memory.zeroed::<L>(blocks);
                for (r, &index) in self.seeded.iter().enumerate() {
                    // Index 0 is passive: seeding it would have no effect
                    // in reverse mode and would break the zero dot of
                    // passive operands forward.
                    if index == 0 {
                        continue;
                    }
                    let v = seed(r);
                    for (k, d) in derivatives[index as usize].iter_mut().enumerate() {
                        *d += v[k];
                    }
                }
                let start = Instant::now();
                match mode {
                    Mode::Reverse => reverse_sweep::<L>(self.tape, derivatives)?,
                    Mode::Forward => forward_sweep::<L>(self.tape, derivatives)?,
                }
                let sweep_time = start.elapsed();
                let mut values = Vec::with_capacity(self.read.len() * L);
                for &index in self.read {
                    values.extend_from_slice(&derivatives[index as usize]);
                }
                (values, sweep_time)
            }
        };
        Ok(PassResult {
            first,
            lanes: L,
            values,
            sweep_time,
        })
    }
}

/// Reverse mode on a record directory: `bars` (the contents of
/// `dg-output-bars`, one row per output) → bars of the inputs, one row per
/// input with as many columns as `bars`.
pub fn reverse(
    recording: &Recording,
    bars: &ValueTable,
    options: &SweepOptions,
) -> Result<Evaluation, EvalError> {
    check_row_count(
        bars,
        &recording.path(file_name::OUTPUT_BARS),
        file_name::OUTPUT_INDICES,
        recording.outputs.len(),
        "outputs",
    )?;
    evaluate(
        &recording.tape,
        Mode::Reverse,
        &recording.outputs,
        Seeds::Table(bars),
        &recording.inputs,
        options,
    )
}

/// Forward mode on a record directory: `dots` (the contents of
/// `dg-input-dots`, one row per input) → dots of the outputs, one row per
/// output with as many columns as `dots`.
pub fn forward(
    recording: &Recording,
    dots: &ValueTable,
    options: &SweepOptions,
) -> Result<Evaluation, EvalError> {
    check_row_count(
        dots,
        &recording.path(file_name::INPUT_DOTS),
        file_name::INPUT_INDICES,
        recording.inputs.len(),
        "inputs",
    )?;
    evaluate(
        &recording.tape,
        Mode::Forward,
        &recording.inputs,
        Seeds::Table(dots),
        &recording.outputs,
        options,
    )
}

/// The Jacobian of a record directory: one row per output, one column per
/// input, computed with one direction per output (`Mode::Reverse`, cheaper
/// when there are fewer outputs than inputs) or one per input
/// (`Mode::Forward`).
pub fn jacobian(
    recording: &Recording,
    mode: Mode,
    options: &SweepOptions,
) -> Result<Evaluation, EvalError> {
    let (inputs, outputs) = (&recording.inputs, &recording.outputs);
    if inputs.is_empty() || outputs.is_empty() {
        return Ok(Evaluation {
            values: ValueTable::new(inputs.len().max(1), Vec::new()),
            plan: Plan::new(recording.tape.block_count(), 0, options)?,
            sweep_time: Duration::ZERO,
            wall_time: Duration::ZERO,
        });
    }
    match mode {
        Mode::Forward => evaluate(
            &recording.tape,
            Mode::Forward,
            inputs,
            Seeds::Identity,
            outputs,
            options,
        ),
        Mode::Reverse => {
            let mut evaluation = evaluate(
                &recording.tape,
                Mode::Reverse,
                outputs,
                Seeds::Identity,
                inputs,
                options,
            )?;
            // Rows are inputs and columns outputs; the Jacobian is the transpose.
            let by_input = &evaluation.values;
            let mut by_output = ValueTable::zeros(outputs.len(), inputs.len());
            for i in 0..inputs.len() {
                for (o, &v) in by_input.row(i).iter().enumerate() {
                    by_output.row_mut(o)[i] = v;
                }
            }
            evaluation.values = by_output;
            Ok(evaluation)
        }
    }
}
