//! The runner of the test files whose tests come from a table at run time
//! (`tests/derivatives.rs`, `tests/mathfns.rs`; `harness = false` in
//! Cargo.toml).
//!
//! It takes libtest's usual arguments (filters, `--exact`, `--skip`,
//! `--list`, `--test-threads`, `--ignored`, `-q`), runs the tests on worker
//! threads, each under `catch_unwind` with the panic message kept for the
//! report, and ends with libtest's summary line.
//!
//! A test file may have a list of expected failures ([`ExpectedFailures`]):
//! a listed test still runs; it is reported as `ok (expected failure)` while
//! it fails and fails the suite once it passes. Its `meta::expected_failures`
//! test ([`ExpectedFailures::meta_test`]) requires every reason to appear in
//! `docs/limitations.md` and every pattern to match some test.

use std::collections::VecDeque;
use std::fs;
use std::io::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;
use std::{cell::RefCell, thread};

use crate::workspace_root;

// ---------------------------------------------------------------------------
// Expected failures
// ---------------------------------------------------------------------------

/// One known failure.
pub struct ExpectedFailure {
    /// Test name pattern; `*` matches any characters, e.g.
    /// `record::fma_call::*_long_double` or `record::*::fortran_*`.
    pub tests: &'static str,
    /// Why it fails, as `docs/limitations.md` says it.
    pub reason: &'static str,
    /// The failure comes from code the compiler emits for this machine
    /// (`-march=native` axes): expected where that code is emitted, and a
    /// pass is accepted on a CPU for which the compiler emits other code.
    /// Only for `*_native_*` patterns (`check` enforces it).
    pub codegen_dependent: bool,
}

/// A test file's list of known failures.
#[derive(Clone, Copy)]
pub struct ExpectedFailures {
    /// The file that holds the list, relative to the workspace root; the
    /// messages name it.
    pub file: &'static str,
    /// The list.
    pub list: &'static [ExpectedFailure],
}

impl ExpectedFailures {
    /// The expected failure covering a test, if any.
    pub fn covering(&self, test_name: &str) -> Option<&'static ExpectedFailure> {
        self.list
            .iter()
            .find(|failure| glob_matches(failure.tests, test_name))
    }

    /// Every expected failure has a reason that `docs/limitations.md`
    /// repeats (word for word, formatting aside) and matches at least one
    /// test of the full matrix (`all_names`), so that the list can neither
    /// hide anything nor go stale.
    pub fn check(&self, all_names: &[String]) {
        let limitations_path = workspace_root().join("docs").join("limitations.md");
        let limitations = fs::read_to_string(&limitations_path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", limitations_path.display()));
        // Compared as words, without Markdown's emphasis and code marks, so
        // the document may wrap and format the sentence.
        let normalise = |s: &str| {
            s.replace(['*', '`'], "")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let limitations = normalise(&limitations);
        let mut problems = Vec::new();
        for failure in self.list {
            if failure.reason.trim().is_empty() {
                problems.push(format!("{}: no reason", failure.tests));
            } else if !limitations.contains(&normalise(failure.reason)) {
                problems.push(format!(
                    "{}: the reason {:?} is not in docs/limitations.md",
                    failure.tests, failure.reason
                ));
            }
            if failure.codegen_dependent && !failure.tests.contains("native") {
                problems.push(format!(
                    "{}: only -march=native axes may depend on the machine's code",
                    failure.tests
                ));
            }
            if !all_names
                .iter()
                .any(|name| glob_matches(failure.tests, name))
            {
                problems.push(format!("{}: matches no test", failure.tests));
            }
        }
        assert!(
            problems.is_empty(),
            "expected failures:\n  {}",
            problems.join("\n  ")
        );
    }

    /// The `meta::expected_failures` test: [`ExpectedFailures::check`]
    /// against `all_names`, every name the test file can have.
    pub fn meta_test(self, all_names: Vec<String>) -> Test {
        Test::new("meta::expected_failures", move || self.check(&all_names))
    }
}

/// `*` matches any run of characters, everything else itself.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

// ---------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------

/// One test: a name and what to run.
pub struct Test {
    /// The full name, `<category>::<subject>::<axis>` or `meta::<check>`.
    pub name: String,
    run: Box<dyn FnOnce() + Send>,
}

impl Test {
    /// A test that passes when `run` returns and fails when it panics.
    pub fn new(name: impl Into<String>, run: impl FnOnce() + Send + 'static) -> Test {
        Test {
            name: name.into(),
            run: Box::new(run),
        }
    }
}

/// A test file's harness: what its `main` runs.
pub struct Harness {
    /// The test file's name, for `--help`.
    pub name: &'static str,
    /// What the second part of a test name is, for `--help` (`formula`,
    /// `function`).
    pub subject: &'static str,
    /// The known failures.
    pub expected_failures: ExpectedFailures,
    /// A line printed before the tests run, unless `-q`.
    pub note: Option<&'static str>,
}

impl Harness {
    /// Parses the arguments, then lists or runs the selected tests of
    /// `tests`; the exit status is libtest's.
    pub fn main(&self, tests: impl FnOnce() -> Vec<Test>) -> ExitCode {
        let options = match Options::parse(std::env::args().skip(1)) {
            Ok(options) => options,
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::from(101);
            }
        };
        if options.help {
            println!(
                "usage: {} [FILTER...] [--exact] [--skip PATTERN] [--list] \
                 [--test-threads N] [-q]\n\nTests are named \
                 <category>::<{}>::<lang>_<compiler>_<opt>_<type>; a FILTER selects \
                 the names containing it.",
                self.name, self.subject
            );
            return ExitCode::SUCCESS;
        }
        let mut tests = tests();
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
        if let (Some(note), false) = (self.note, options.quiet) {
            println!("{note}");
        }
        self.run(tests, filtered_out, &options)
    }

    fn run(&self, tests: Vec<Test>, filtered_out: usize, options: &Options) -> ExitCode {
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

        let queue: VecDeque<_> = tests
            .into_iter()
            .map(|test| {
                let expected = self.expected_failures.covering(&test.name);
                (test, expected)
            })
            .collect();
        let queue = Arc::new(Mutex::new(queue));
        let file = self.expected_failures.file;
        let (results, received) = mpsc::channel();
        let workers: Vec<_> = (0..options.threads().min(count.max(1)))
            .map(|_| {
                let queue = Arc::clone(&queue);
                let results = results.clone();
                thread::spawn(move || loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some((test, expected)) = next else { break };
                    if results.send(run_one(test, expected, file)).is_err() {
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
                "\n{expected} expected failure{} ({file})",
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

/// Runs one test; `file` is where `expected` is listed.
fn run_one(
    test: Test,
    expected: Option<&'static ExpectedFailure>,
    file: &str,
) -> (String, Verdict) {
    PANIC_MESSAGE.with(|m| m.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(test.run));
    let verdict = match (result, expected) {
        (Ok(()), None) => Verdict::Passed,
        (Err(_), None) => Verdict::Failed(
            PANIC_MESSAGE
                .with(|m| m.borrow_mut().take())
                .unwrap_or_else(|| "panicked".to_owned()),
        ),
        (Err(_), Some(_)) => Verdict::ExpectedFailure,
        (Ok(()), Some(failure)) if failure.codegen_dependent => Verdict::Passed,
        (Ok(()), Some(failure)) => Verdict::Failed(format!(
            "listed as an expected failure ({:?}: {}), but it passes now: remove the entry \
             from {file} and the limitation from docs/limitations.md",
            failure.tests, failure.reason
        )),
    };
    (test.name, verdict)
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

#[cfg(test)]
mod tests {
    use super::glob_matches;

    #[test]
    fn globs() {
        assert!(glob_matches(
            "record::add::*",
            "record::add::c_gcc_O0_float"
        ));
        assert!(glob_matches(
            "*_long_double",
            "record::add::c_gcc_O0_long_double"
        ));
        assert!(glob_matches(
            "record::*::c_*_O3_*",
            "record::mul::c_gcc_O3_float"
        ));
        assert!(!glob_matches(
            "record::*::c_*_O3_*",
            "record::mul::cxx_gcc_O0_float"
        ));
        assert!(glob_matches("exact", "exact"));
        assert!(!glob_matches("exact", "exactly"));
        assert!(glob_matches("*", "anything"));
    }
}
