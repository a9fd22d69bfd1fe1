//! The derivative test matrix (`testsuite/derivatives/README.md`).
//!
//! Tests come from the formula table at run time, so this file is its own
//! harness (`harness = false` in Cargo.toml). It takes libtest's usual
//! arguments (filters, `--exact`, `--skip`, `--list`, `--test-threads`,
//! `--ignored`, `-q`) and ends with libtest's summary line. Test names:
//!
//! - `meta::…`: checks of the formula table and of the expected-failure list;
//! - `native_values::<formula>::<lang>_<compiler>_<opt>_<type>`: the native
//!   run prints the expected values;
//! - with `--features record-matrix`, `record::<formula>::<axis>`: values,
//!   a recording with the same output, and the Jacobian from `dg-eval`'s
//!   reverse and forward sweeps.
//!
//! A test listed in `testsuite/derivatives/expected_failures.rs` runs like
//! any other; it passes while it fails as expected and fails once it passes.

use std::collections::VecDeque;
use std::io::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;
use std::{cell::RefCell, thread};

use testsuite::derivatives::{
    check_expected_failures, check_formula_table, check_reference_jacobians, expected_failure,
    matrix_tests, Category, ExpectedFailure,
};

/// One test: a name and what to run.
struct Test {
    name: String,
    run: Box<dyn FnOnce() + Send>,
    expected_failure: Option<&'static ExpectedFailure>,
}

impl Test {
    fn new(name: String, run: impl FnOnce() + Send + 'static) -> Test {
        let expected_failure = expected_failure(&name);
        Test {
            name,
            run: Box::new(run),
            expected_failure,
        }
    }
}

fn all_tests() -> Vec<Test> {
    // Every name the matrix can have, whatever the feature says, so that the
    // expected-failure list is checked against the full matrix.
    let all_names: Vec<String> = [Category::NativeValues, Category::Record]
        .into_iter()
        .flat_map(matrix_tests)
        .map(|t| t.name())
        .collect();
    let mut tests = vec![
        Test::new("meta::formula_table".to_owned(), check_formula_table),
        Test::new(
            "meta::reference_jacobians_match_finite_differences".to_owned(),
            check_reference_jacobians,
        ),
        Test::new("meta::expected_failures".to_owned(), move || {
            check_expected_failures(&all_names);
        }),
    ];
    for test in matrix_tests(Category::NativeValues) {
        tests.push(Test::new(test.name(), move || test.run()));
    }
    #[cfg(feature = "record-matrix")]
    for test in matrix_tests(Category::Record) {
        tests.push(Test::new(test.name(), move || test.run()));
    }
    tests
}

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(101);
        }
    };
    if options.help {
        println!(
            "usage: derivatives [FILTER...] [--exact] [--skip PATTERN] [--list] \
             [--test-threads N] [-q]\n\nTests are named \
             <category>::<formula>::<lang>_<compiler>_<opt>_<type>; a FILTER selects \
             the names containing it."
        );
        return ExitCode::SUCCESS;
    }
    let mut tests = all_tests();
    let total = tests.len();
    tests.retain(|t| options.selects(&t.name));
    tests.sort_by(|a, b| a.name.cmp(&b.name));
    let filtered_out = total - tests.len();

    if options.list {
        for test in &tests {
            println!("{}: test", test.name);
        }
        if !options.quiet {
            println!("\n{} tests, 0 benchmarks", tests.len());
        }
        return ExitCode::SUCCESS;
    }
    if !cfg!(feature = "record-matrix") && !options.quiet {
        println!(
            "note: the record:: tests (recording, reverse and forward sweeps) are off; \
             run with `--features record-matrix` to include them"
        );
    }
    run(tests, filtered_out, &options)
}

// ---------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------

thread_local! {
    /// The message of the last panic on this thread, kept by the hook
    /// instead of printed, and shown with the test's failure.
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

enum Verdict {
    Passed,
    ExpectedFailure,
    Failed(String),
}

fn run_one(test: Test) -> (String, Verdict) {
    PANIC_MESSAGE.with(|m| m.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(test.run));
    let verdict = match (result, test.expected_failure) {
        (Ok(()), None) => Verdict::Passed,
        (Err(_), None) => Verdict::Failed(
            PANIC_MESSAGE
                .with(|m| m.borrow_mut().take())
                .unwrap_or_else(|| "panicked".to_owned()),
        ),
        (Err(_), Some(_)) => Verdict::ExpectedFailure,
        (Ok(()), Some(failure)) => Verdict::Failed(format!(
            "listed as an expected failure ({:?}: {}), but it passes now: remove the entry \
             from testsuite/derivatives/expected_failures.rs and the limitation from \
             docs/limitations.md",
            failure.tests, failure.reason
        )),
    };
    (test.name, verdict)
}

fn run(tests: Vec<Test>, filtered_out: usize, options: &Options) -> ExitCode {
    let started = Instant::now();
    let count = tests.len();
    println!(
        "\nrunning {count} test{}",
        if count == 1 { "" } else { "s" }
    );
    panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(message));
    }));

    let queue = Arc::new(Mutex::new(VecDeque::from(tests)));
    let (results, received) = mpsc::channel();
    let workers: Vec<_> = (0..options.threads().min(count.max(1)))
        .map(|_| {
            let queue = Arc::clone(&queue);
            let results = results.clone();
            thread::spawn(move || loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                let Some(test) = next else { break };
                if results.send(run_one(test)).is_err() {
                    break;
                }
            })
        })
        .collect();
    drop(results);

    let (mut passed, mut expected, mut failures) = (0, 0, Vec::new());
    let mut column = 0;
    for (name, verdict) in received {
        let (word, mark) = match &verdict {
            Verdict::Passed => ("ok", '.'),
            Verdict::ExpectedFailure => ("ok (expected failure)", '.'),
            Verdict::Failed(_) => ("FAILED", 'F'),
        };
        if options.quiet {
            print!("{mark}");
            column += 1;
            if column % 88 == 0 {
                println!(" {column}/{count}");
            }
            let _ = std::io::stdout().flush();
        } else {
            println!("test {name} ... {word}");
        }
        match verdict {
            Verdict::Passed => passed += 1,
            Verdict::ExpectedFailure => expected += 1,
            Verdict::Failed(message) => failures.push((name, message)),
        }
    }
    for worker in workers {
        let _ = worker.join();
    }
    if options.quiet && column % 88 != 0 {
        println!();
    }
    let _ = panic::take_hook();

    if !failures.is_empty() {
        failures.sort();
        println!("\nfailures:\n");
        for (name, message) in &failures {
            println!("---- {name} stdout ----\n{message}\n");
        }
        println!("\nfailures:");
        for (name, _) in &failures {
            println!("    {name}");
        }
    }
    if expected > 0 {
        println!(
            "\n{expected} expected failure{} (testsuite/derivatives/expected_failures.rs)",
            if expected == 1 { "" } else { "s" }
        );
    }
    println!(
        "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; {filtered_out} \
         filtered out; finished in {:.2}s\n",
        if failures.is_empty() { "ok" } else { "FAILED" },
        passed + expected,
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    }
}

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

/// The libtest arguments this harness understands.
#[derive(Default)]
struct Options {
    filters: Vec<String>,
    skip: Vec<String>,
    exact: bool,
    list: bool,
    quiet: bool,
    help: bool,
    /// `--ignored`, or `--bench` without `--test`: nothing of ours runs.
    nothing: bool,
    threads: Option<usize>,
}

impl Options {
    fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut options = Options::default();
        let mut args = args.peekable();
        let (mut bench, mut test) = (false, false);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => {
                    (flag.to_owned(), Some(value.to_owned()))
                }
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| -> Result<String, String> {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match flag.as_str() {
                "--exact" => options.exact = true,
                "--list" => options.list = true,
                "-q" | "--quiet" => options.quiet = true,
                "-h" | "--help" => options.help = true,
                "--ignored" => options.nothing = true,
                "--bench" => bench = true,
                "--test" => test = true,
                "--skip" => options.skip.push(value("--skip")?),
                "--test-threads" => {
                    let text = value("--test-threads")?;
                    options.threads = Some(
                        text.parse()
                            .ok()
                            .filter(|&n: &usize| n > 0)
                            .ok_or_else(|| {
                                format!("--test-threads {text:?} is not a positive number")
                            })?,
                    );
                }
                "--format" => {
                    let format = value("--format")?;
                    match format.as_str() {
                        "pretty" => {}
                        "terse" => options.quiet = true,
                        other => return Err(format!("--format {other} is not supported")),
                    }
                }
                // Accepted for compatibility; they change nothing here.
                "--include-ignored"
                | "--nocapture"
                | "--show-output"
                | "--report-time"
                | "--ensure-time"
                | "--shuffle"
                | "--force-run-in-process"
                | "--exclude-should-panic" => {}
                "--color" | "--logfile" | "--shuffle-seed" | "-Z" => {
                    value(&flag)?;
                }
                _ if flag.starts_with('-') => return Err(format!("unknown option {arg}")),
                _ => options.filters.push(arg),
            }
        }
        if bench && !test {
            options.nothing = true;
        }
        Ok(options)
    }

    fn selects(&self, name: &str) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        !self.nothing
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
    }

    fn threads(&self) -> usize {
        self.threads
            .or_else(|| std::env::var("RUST_TEST_THREADS").ok()?.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| thread::available_parallelism().map_or(1, |n| n.get()))
    }
}
