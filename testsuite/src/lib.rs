//! End-to-end tests of dgad: programs run natively and under `libdgad.so`.
//!
//! The library part holds what the test files share: locating the built
//! `libdgad.so`, compiling the test programs, and running a command natively
//! and under the preload. Nothing here is needed at run time.
//!
//! A run "under dgad" sets `LD_PRELOAD` to the library and `DGAD_MODE=null`,
//! the mode in which the tool translates and runs the program from its code
//! cache without adding any analysis. The program must then behave exactly as
//! it does natively: same stdout bytes, same exit status, same stderr except
//! for lines starting with `dgad:`, which are the tool's own.

pub mod derivatives;
pub mod dgad_json;
pub mod harness;
pub mod mathfns;
pub mod mode_transparency;
pub mod recording;

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Prefix of the stderr lines that belong to the tool, not to the program.
pub const TOOL_STDERR_PREFIX: &[u8] = b"dgad:";

/// How to tell a developer to get a missing compiler or interpreter.
const SETUP_HINT: &str = "run scripts/setup.sh to install the toolchains and \
                          packages the test suite needs (listed in testsuite/README.md)";

/// Default limit for one run of one command, so that a hang fails the test
/// instead of blocking CI. `DGAD_TEST_TIMEOUT_SECS` overrides it, for slow
/// modes or debugging.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Root of the cargo workspace (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testsuite crate lives inside the workspace")
        .to_path_buf()
}

/// Directory holding the test programs' sources.
pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("programs")
}

/// Cargo's target directory: `CARGO_TARGET_DIR` (relative paths taken from
/// the workspace root), else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    path_from_env("CARGO_TARGET_DIR", || workspace_root().join("target"))
}

/// The path in environment variable `var` (relative paths taken from the
/// workspace root) if it is set and not empty, else `default()`.
pub fn path_from_env(var: &str, default: impl FnOnce() -> PathBuf) -> PathBuf {
    match std::env::var_os(var) {
        Some(path) if !path.is_empty() => workspace_root().join(path),
        _ => default(),
    }
}

/// Where compiled test programs go: `<target>/testsuite-build`.
pub fn build_root() -> PathBuf {
    target_dir().join("testsuite-build")
}

/// The preload library under test: `DGAD_LIB` if set (relative paths taken
/// from the workspace root), else `<target>/release/libdgad.so`.
///
/// # Panics
/// If the library does not exist, with a message saying how to build it.
pub fn dgad_lib() -> PathBuf {
    let lib = path_from_env("DGAD_LIB", || {
        target_dir().join("release").join("libdgad.so")
    });
    assert!(
        lib.is_file(),
        "the dgad preload library {} does not exist: build it with \
         `cargo build --release -p preload`, or point DGAD_LIB at a build",
        lib.display()
    );
    lib
}

/// The `dgad` launcher beside [`dgad_lib`].
pub fn dgad_launcher() -> PathBuf {
    let path = dgad_lib().with_file_name("dgad");
    assert!(
        path.is_file(),
        "{} missing: cargo build --release -p launcher",
        path.display()
    );
    path
}

fn run_timeout() -> Duration {
    match std::env::var("DGAD_TEST_TIMEOUT_SECS") {
        Ok(secs) => Duration::from_secs(secs.parse().unwrap_or_else(|_| {
            panic!("DGAD_TEST_TIMEOUT_SECS={secs:?} is not a number of seconds")
        })),
        Err(_) => DEFAULT_TIMEOUT,
    }
}

// ---------------------------------------------------------------------------
// Compiling the test programs
// ---------------------------------------------------------------------------

/// The compiler family axis of the compiled-program tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compiler {
    /// gcc for C, g++ for C++.
    Gcc,
    /// clang for C, clang++ for C++.
    Clang,
    /// gfortran, for Fortran only.
    Gfortran,
}

/// The optimisation axis of the compiled-program tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptLevel {
    /// `-O0`: naive code, lots of stack traffic.
    O0,
    /// `-O3`: baseline x86-64 (SSE2) vectorised code.
    O3,
    /// `-O3 -march=native`: whatever the machine has, AVX-512 included.
    O3Native,
}

impl OptLevel {
    fn flags(self) -> &'static [&'static str] {
        match self {
            OptLevel::O0 => &["-O0"],
            OptLevel::O3 => &["-O3"],
            OptLevel::O3Native => &["-O3", "-march=native"],
        }
    }

    /// The flags as they appear in build directory names.
    pub fn label(self) -> &'static str {
        match self {
            OptLevel::O0 => "O0",
            OptLevel::O3 => "O3",
            OptLevel::O3Native => "O3-native",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Language {
    C,
    Cxx,
    Fortran,
}

impl Language {
    fn of(source: &Path) -> Language {
        match source.extension().and_then(OsStr::to_str) {
            Some("c") => Language::C,
            Some("cpp" | "cc" | "cxx") => Language::Cxx,
            Some("f90" | "f95" | "f") => Language::Fortran,
            _ => panic!("no compiler known for {}", source.display()),
        }
    }

    fn compile_flags(self) -> &'static [&'static str] {
        // -g changes no generated code, and makes a failing program easier
        // to inspect under the tool.
        match self {
            Language::C => &["-std=gnu17", "-Wall", "-g"],
            Language::Cxx => &["-std=c++17", "-Wall", "-g"],
            Language::Fortran => &["-Wall", "-g"],
        }
    }

    /// Libraries go after the sources so that they resolve their symbols.
    fn link_flags(self) -> &'static [&'static str] {
        match self {
            Language::C => &["-pthread", "-ldl", "-lm"],
            Language::Cxx => &["-pthread"],
            Language::Fortran => &[],
        }
    }
}

impl Compiler {
    /// The compiler driver to run for a language.
    fn driver(self, language: Language) -> &'static str {
        match (self, language) {
            (Compiler::Gcc, Language::C) => "gcc",
            (Compiler::Gcc, Language::Cxx) => "g++",
            (Compiler::Clang, Language::C) => "clang",
            (Compiler::Clang, Language::Cxx) => "clang++",
            (Compiler::Gfortran, Language::Fortran) => "gfortran",
            (compiler, language) => panic!("{compiler:?} does not compile {language:?}"),
        }
    }
}

/// Compiles `source` (relative to [`programs_dir`]) into an executable at
/// `<build_root>/<driver>-<flags>/<stem>` and returns its path.
///
/// # Panics
/// If the compiler is missing (with a pointer to `scripts/setup.sh`) or the
/// compilation fails.
pub fn build_program(source: &str, compiler: Compiler, opt: OptLevel) -> PathBuf {
    compile(
        programs_dir().join(source),
        compiler,
        opt,
        OutputKind::Executable,
        &[],
        &[],
    )
}

/// Compiles a source given by its path (one generated under the target
/// directory, say) like [`build_program`], with `extra_args` after the
/// standard flags (include directories) and `link_args` after the source
/// (libraries). A change of the arguments rebuilds; a change of the files
/// they name does not, so a generator records what it depends on inside the
/// source.
pub fn build_program_at(
    source: &Path,
    compiler: Compiler,
    opt: OptLevel,
    extra_args: &[OsString],
    link_args: &[OsString],
) -> PathBuf {
    compile(
        source.to_path_buf(),
        compiler,
        opt,
        OutputKind::Executable,
        extra_args,
        link_args,
    )
}

/// Builds `programs/record/NAME` with gcc at `opt`, with dgad's client
/// headers (`include/`) and `link` arguments: the record-mode test programs.
/// Tests of one binary run in parallel and share programs, so builds run
/// one at a time.
pub fn build_record_program(name: &str, link: &[&str], opt: OptLevel) -> PathBuf {
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    let include: OsString = format!("-I{}", workspace_root().join("include").display()).into();
    let link: Vec<OsString> = link.iter().map(OsString::from).collect();
    build_program_at(
        &programs_dir().join("record").join(name),
        Compiler::Gcc,
        opt,
        &[include],
        &link,
    )
}

/// Compiles `source` (relative to [`programs_dir`]) into a shared library
/// `lib<stem>.so`, next to the executables of the same configuration, for
/// programs that dlopen libraries of their own.
pub fn build_shared_library(source: &str, compiler: Compiler, opt: OptLevel) -> PathBuf {
    compile(
        programs_dir().join(source),
        compiler,
        opt,
        OutputKind::SharedLibrary,
        &[],
        &[],
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum OutputKind {
    Executable,
    SharedLibrary,
}

fn compile(
    source_path: PathBuf,
    compiler: Compiler,
    opt: OptLevel,
    kind: OutputKind,
    extra_args: &[OsString],
    link_args: &[OsString],
) -> PathBuf {
    let language = Language::of(&source_path);
    let driver = compiler.driver(language);
    let stem = source_path
        .file_stem()
        .and_then(OsStr::to_str)
        .expect("source file names are UTF-8");
    let out_dir = build_root().join(format!("{driver}-{}", opt.label()));
    let output = match kind {
        OutputKind::Executable => out_dir.join(stem),
        OutputKind::SharedLibrary => out_dir.join(format!("lib{stem}.so")),
    };

    let arguments = |output: &Path| {
        let mut args: Vec<OsString> = Vec::new();
        args.extend(opt.flags().iter().map(OsString::from));
        args.extend(language.compile_flags().iter().map(OsString::from));
        args.extend(extra_args.iter().cloned());
        if kind == OutputKind::SharedLibrary {
            args.extend(["-shared", "-fPIC"].map(OsString::from));
        }
        args.push("-o".into());
        args.push(output.into());
        args.push(source_path.clone().into());
        args.extend(link_args.iter().cloned());
        args.extend(language.link_flags().iter().map(OsString::from));
        args
    };

    // The command line is stored beside the output: a change of flags in
    // this file rebuilds, just like a change of the source does.
    let command_line = std::iter::once(OsString::from(driver))
        .chain(arguments(&output))
        .map(|a| shell_word(&a))
        .collect::<Vec<_>>()
        .join(" ");
    let stamp = output.with_file_name(format!("{}.cmd", file_name(&output)));
    let inputs: Vec<OsString> = extra_args.iter().chain(link_args).cloned().collect();
    if is_up_to_date(&output, &source_path, &inputs, &stamp, &command_line) {
        return output;
    }

    // The compiler writes to a private name that is renamed into place, so a
    // concurrent `cargo test` in the same target directory never runs a
    // half-written binary. The name is private to the process and to the
    // call: two tests of one binary may build the same program at once
    // (both renames then succeed, the second replacing an identical file).
    let partial = private_name(&output);
    fs::create_dir_all(&out_dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", out_dir.display()));
    let result = Command::new(driver)
        .args(arguments(&partial))
        .stdin(Stdio::null())
        .output();
    let result = match result {
        Ok(result) => result,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            panic!("compiler `{driver}` is not installed: {SETUP_HINT}")
        }
        Err(e) => panic!("cannot run `{driver}`: {e}"),
    };
    if !result.status.success() {
        let _ = fs::remove_file(&partial);
        panic!(
            "compiling {} failed ({}):\n$ {command_line}\n{}",
            source_path.display(),
            result.status,
            String::from_utf8_lossy(&result.stderr)
        );
    }
    fs::rename(&partial, &output)
        .unwrap_or_else(|e| panic!("cannot move the build to {}: {e}", output.display()));
    fs::write(&stamp, &command_line)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", stamp.display()));
    output
}

/// A name beside `path` that no other process and no other call in this
/// one uses: where a file is written before it is renamed into place.
pub(crate) fn private_name(path: &Path) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    path.with_file_name(format!(
        "{}.partial-{}-{}",
        file_name(path),
        std::process::id(),
        CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .expect("output paths have a file name")
        .to_string_lossy()
        .into_owned()
}

/// Whether `output` is newer than everything it was built from: the source,
/// the headers beside it, and what the compiler arguments `args` name —
/// files by path and, recursively, the directories given with `-I` or `-L`
/// (our headers, the Fortran client's module and library; not `-J`, where
/// compilations write modules) — and was built with `command_line`.
fn is_up_to_date(
    output: &Path,
    source: &Path,
    args: &[OsString],
    stamp: &Path,
    command_line: &str,
) -> bool {
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let (Some(built), Some(written)) = (modified(output), modified(source)) else {
        return false;
    };
    if written > built || !fs::read_to_string(stamp).is_ok_and(|s| s == command_line) {
        return false;
    }
    let mut inputs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = source.parent() {
        let headers = fs::read_dir(dir).into_iter().flatten().flatten();
        inputs.extend(headers.map(|e| e.path()).filter(|p| {
            matches!(
                p.extension().and_then(OsStr::to_str),
                Some("h" | "hpp" | "inc")
            )
        }));
    }
    for arg in args {
        let text = arg.to_string_lossy();
        if text.starts_with("-J") {
            continue;
        }
        let named = ["-I", "-L"]
            .iter()
            .find_map(|f| text.strip_prefix(f))
            .unwrap_or(&text);
        let path = Path::new(named);
        if path.is_dir() {
            collect_files(path, &mut inputs);
        } else if path.is_file() {
            inputs.push(path.to_path_buf());
        }
    }
    inputs
        .iter()
        .all(|p| modified(p).is_none_or(|m| m <= built))
}

/// Every file below `dir`, recursively.
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

// ---------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------

/// A command to run twice, natively and under dgad. (`std::process::Command`
/// cannot be cloned or inspected enough for that, hence this description.)
#[derive(Clone, Debug)]
pub struct Invocation {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    current_dir: Option<PathBuf>,
}

impl Invocation {
    /// Runs `program`, looked up in `PATH` unless it contains a slash.
    pub fn new(program: impl AsRef<OsStr>) -> Invocation {
        Invocation {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Invocation {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds several arguments.
    pub fn args<I>(mut self, args: I) -> Invocation
    where
        I: IntoIterator,
        I::Item: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for both runs.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Invocation {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Sets the working directory for both runs.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Invocation {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// The command line, for messages. Long arguments (inline scripts) are
    /// cut to their first line: the test names the source file anyway.
    pub fn display(&self) -> String {
        let mut line = shell_word(&self.program);
        for arg in &self.args {
            line.push(' ');
            let word = shell_word(arg);
            if word.len() > 120 && word.contains('\n') {
                let first = word
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && *l != "'")
                    .unwrap_or("");
                let _ = write!(
                    line,
                    "'{}...' ({} bytes)",
                    first.trim_start_matches('\''),
                    word.len()
                );
            } else {
                line.push_str(&word);
            }
        }
        if let Some(dir) = &self.current_dir {
            let _ = write!(line, " (in {})", dir.display());
        }
        line
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command
    }
}

fn shell_word(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+,:@%".contains(c));
    if plain {
        word.into_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What one run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Exit status (or terminating signal).
    pub status: ExitStatus,
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
}

impl Outcome {
    /// stdout as text, for messages and simple checks.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Checks a native run of a test program: expected exit status, a last
    /// stdout line `END <name>` (so a program that stopped early cannot pass
    /// by printing nothing under the tool as well), and no self-check line
    /// containing `WRONG`.
    pub fn assert_completed(&self, invocation: &Invocation, name: &str, expected_status: i32) {
        let stdout = self.stdout_text();
        let end_line = format!("END {name}");
        let mut problems = Vec::new();
        if self.status.code() != Some(expected_status) {
            problems.push(format!(
                "exit status is {}, expected {expected_status}",
                self.status
            ));
        }
        if stdout.lines().last() != Some(end_line.as_str()) {
            problems.push(format!("the last stdout line is not `{end_line}`"));
        }
        if let Some(line) = stdout.lines().find(|l| l.contains("WRONG")) {
            problems.push(format!("self-check failed: {line}"));
        }
        assert!(
            problems.is_empty(),
            "the NATIVE run of `{}` is already broken (a test program bug, not a dgad bug):\n  {}\n\
             --- stdout ---\n{}\n--- stderr ---\n{}",
            invocation.display(),
            problems.join("\n  "),
            tail(&self.stdout, 30),
            tail(&self.stderr, 30),
        );
    }
}

/// Runs `invocation` without the tool (any `LD_PRELOAD` and `DGAD_*`
/// variables of the test process removed), feeding it `stdin` if given.
pub fn run_native(invocation: &Invocation, stdin: Option<&[u8]>) -> Outcome {
    let mut command = invocation.command();
    command.env_remove("LD_PRELOAD");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("DGAD_") {
            command.env_remove(key);
        }
    }
    run_to_completion(command, stdin, invocation, "native")
}

/// Runs `invocation` under dgad: `LD_PRELOAD` set to [`dgad_lib`] (children
/// inherit it, so they run under the tool too) and `DGAD_MODE=null`, then
/// `extra_env` on top.
pub fn run_under_dgad(
    invocation: &Invocation,
    stdin: Option<&[u8]>,
    extra_env: &[(&str, &str)],
) -> Outcome {
    let mut command = invocation.command();
    command.env("LD_PRELOAD", dgad_lib());
    command.env("DGAD_MODE", "null");
    command.envs(extra_env.iter().copied());
    run_to_completion(command, stdin, invocation, "under dgad")
}

/// Runs `invocation` natively and under dgad and asserts that stdout, exit
/// status and stderr (minus the tool's `dgad:` lines) are identical.
/// Returns the native outcome for further checks.
pub fn assert_transparent(invocation: &Invocation, stdin: Option<&[u8]>) -> Outcome {
    let native = run_native(invocation, stdin);
    let dgad = run_under_dgad(invocation, stdin, &[]);
    assert_same_behaviour(invocation, &native, &dgad);
    native
}

/// The comparison behind [`assert_transparent`], for tests that check the
/// native run on its own before running under dgad.
pub fn assert_same_behaviour(invocation: &Invocation, native: &Outcome, dgad: &Outcome) {
    let (dgad_stderr, tool_lines) = split_tool_lines(&dgad.stderr);
    let mut problems = Vec::new();
    if native.status != dgad.status {
        problems.push(format!(
            "exit status differs: native {}, under dgad {}",
            native.status, dgad.status
        ));
    }
    if let Some(diff) = describe_difference("stdout", &native.stdout, &dgad.stdout) {
        problems.push(diff);
    }
    if let Some(diff) =
        describe_difference("stderr (without dgad: lines)", &native.stderr, &dgad_stderr)
    {
        problems.push(diff);
    }
    if problems.is_empty() {
        return;
    }
    let mut message = format!(
        "`{}` behaves differently under dgad (DGAD_MODE=null, LD_PRELOAD={}):\n",
        invocation.display(),
        dgad_lib().display()
    );
    for problem in problems {
        let _ = writeln!(message, "- {problem}");
    }
    if !tool_lines.is_empty() {
        let _ = writeln!(
            message,
            "the tool's own stderr lines (last 20):\n{}",
            tail(&tool_lines, 20)
        );
    }
    panic!("{message}");
}

/// Splits stderr into the program's part and the tool's `dgad:` lines.
fn split_tool_lines(stderr: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut program = Vec::new();
    let mut tool = Vec::new();
    for line in stderr.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(TOOL_STDERR_PREFIX) {
            tool.extend_from_slice(line);
        } else {
            program.extend_from_slice(line);
        }
    }
    (program, tool)
}

/// A short account of how two outputs differ: sizes, and the first line
/// that differs with the line before it for context.
fn describe_difference(what: &str, native: &[u8], dgad: &[u8]) -> Option<String> {
    if native == dgad {
        return None;
    }
    let native_lines: Vec<&[u8]> = native.split_inclusive(|&b| b == b'\n').collect();
    let dgad_lines: Vec<&[u8]> = dgad.split_inclusive(|&b| b == b'\n').collect();
    let mut message = format!(
        "{what} differs: native {} bytes in {} lines, under dgad {} bytes in {} lines",
        native.len(),
        native_lines.len(),
        dgad.len(),
        dgad_lines.len()
    );
    let first = (0..native_lines.len().max(dgad_lines.len()))
        .find(|&i| native_lines.get(i) != dgad_lines.get(i))
        .expect("different outputs differ in some line");
    let show = |lines: &[&[u8]], i: usize| match lines.get(i) {
        Some(line) => {
            let text = String::from_utf8_lossy(line);
            let mut shown: String = text.chars().take(300).collect();
            if shown.len() < text.len() {
                shown.push_str("...");
            }
            format!("{shown:?}")
        }
        None => "<end of output>".to_owned(),
    };
    let _ = write!(message, "\n    first difference at line {}:", first + 1);
    if first > 0 {
        let _ = write!(message, "\n    both:   {}", show(&native_lines, first - 1));
    }
    let _ = write!(message, "\n    native: {}", show(&native_lines, first));
    let _ = write!(message, "\n    dgad:   {}", show(&dgad_lines, first));
    Some(message)
}

/// The last `count` lines of an output, as text.
fn tail(output: &[u8], count: usize) -> String {
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

enum Report {
    Exited(io::Result<ExitStatus>),
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
}

/// Runs `command` with piped output, giving up after [`run_timeout`].
///
/// The child gets a process group of its own so that a timeout kills the
/// whole tree (a hung `bash -c` pipeline included), and so that the pipes,
/// which every descendant holds, really close.
fn run_to_completion(
    mut command: Command,
    stdin: Option<&[u8]>,
    invocation: &Invocation,
    label: &str,
) -> Outcome {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == io::ErrorKind::NotFound => panic!(
            "cannot run `{}` ({label}): {} is not installed or not in PATH: {SETUP_HINT}",
            invocation.display(),
            invocation.program.to_string_lossy()
        ),
        Err(e) => panic!("cannot run `{}` ({label}): {e}", invocation.display()),
    };
    let pid = child.id();
    let deadline = Instant::now() + run_timeout();
    let (reports, receiver) = mpsc::channel();

    if let (Some(mut pipe), Some(data)) = (child.stdin.take(), stdin) {
        let data = data.to_vec();
        // A program may legitimately stop reading early, so write errors
        // (EPIPE) are not failures; only the outputs are compared.
        thread::spawn(move || {
            let _ = pipe.write_all(&data);
        });
    }
    spawn_reader(child.stdout.take(), reports.clone(), Report::Stdout);
    spawn_reader(child.stderr.take(), reports.clone(), Report::Stderr);
    spawn_waiter(child, reports);

    let mut status = None;
    let mut stdout = None;
    let mut stderr = None;
    let mut timed_out = false;
    let mut main_process_had_exited = false;
    while status.is_none() || stdout.is_none() || stderr.is_none() {
        let report = if timed_out {
            // After SIGKILL to the group everything ends promptly, unless a
            // descendant left the group and holds a pipe: do not wait forever.
            receiver.recv_timeout(Duration::from_secs(10)).ok()
        } else {
            receiver
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .ok()
        };
        match report {
            Some(Report::Exited(result)) => {
                status = Some(
                    result
                        .unwrap_or_else(|e| panic!("waiting for `{}`: {e}", invocation.display())),
                )
            }
            Some(Report::Stdout(bytes)) => stdout = Some(bytes),
            Some(Report::Stderr(bytes)) => stderr = Some(bytes),
            None if timed_out => break,
            None => {
                timed_out = true;
                main_process_had_exited = status.is_some();
                kill_process_group(pid);
            }
        }
    }
    if timed_out {
        panic!(
            "`{}` ({label}) did not finish within {} s and was killed{}\n--- stdout (last lines) ---\n{}\n\
             --- stderr (last lines) ---\n{}",
            invocation.display(),
            run_timeout().as_secs(),
            if main_process_had_exited { " (its main process had exited; a descendant kept the output open)" } else { "" },
            tail(stdout.as_deref().unwrap_or_default(), 20),
            tail(stderr.as_deref().unwrap_or_default(), 20),
        );
    }
    Outcome {
        status: status.expect("loop ends with a status"),
        stdout: stdout.expect("loop ends with stdout"),
        stderr: stderr.expect("loop ends with stderr"),
    }
}

fn spawn_reader<R: Read + Send + 'static>(
    pipe: Option<R>,
    reports: mpsc::Sender<Report>,
    wrap: fn(Vec<u8>) -> Report,
) {
    let mut pipe = pipe.expect("output is piped");
    thread::spawn(move || {
        let mut bytes = Vec::new();
        // A read error ends the output like EOF would; what was read is kept.
        let _ = pipe.read_to_end(&mut bytes);
        let _ = reports.send(wrap(bytes));
    });
}

fn spawn_waiter(mut child: Child, reports: mpsc::Sender<Report>) {
    thread::spawn(move || {
        let _ = reports.send(Report::Exited(child.wait()));
    });
}

fn kill_process_group(pgid: u32) {
    extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    const SIGKILL: i32 = 9;
    let pgid = i32::try_from(pgid).expect("pids fit in i32");
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; a
    // negative pid names the process group the child leads.
    unsafe {
        kill(-pgid, SIGKILL);
    }
}

// ---------------------------------------------------------------------------
// Compiled test programs
// ---------------------------------------------------------------------------

/// A test program from [`programs_dir`] and how to run it.
#[derive(Clone, Copy, Debug)]
pub struct Program {
    /// Source file, relative to [`programs_dir`]. Its stem is the program's
    /// name, which its last output line `END <name>` repeats.
    pub source: &'static str,
    /// Shared libraries to build from these sources with the same compiler
    /// and flags; their paths are passed as the first arguments.
    pub libraries: &'static [&'static str],
    /// Arguments after the libraries.
    pub args: &'static [&'static str],
    /// Linker flags after the source.
    pub link_args: &'static [&'static str],
    /// The exit status the program is meant to end with.
    pub expected_status: i32,
}

impl Program {
    /// A program that takes no arguments and exits with status 0.
    pub const fn new(source: &'static str) -> Program {
        Program {
            source,
            libraries: &[],
            args: &[],
            link_args: &[],
            expected_status: 0,
        }
    }

    /// Sets linker flags (after the source).
    pub const fn link_args(self, link_args: &'static [&'static str]) -> Program {
        Program { link_args, ..self }
    }

    /// Sets the arguments.
    pub const fn args(self, args: &'static [&'static str]) -> Program {
        Program { args, ..self }
    }

    /// Sets the shared libraries to build and pass as first arguments.
    pub const fn libraries(self, libraries: &'static [&'static str]) -> Program {
        Program { libraries, ..self }
    }

    /// Sets the expected exit status.
    pub const fn expected_status(self, expected_status: i32) -> Program {
        Program {
            expected_status,
            ..self
        }
    }

    fn name(&self) -> &'static str {
        let file = self.source.rsplit('/').next().unwrap_or(self.source);
        file.split('.').next().unwrap_or(file)
    }
}

/// Builds `program` with `compiler` at `opt`, checks that its native run
/// completes as intended, and that it behaves the same under dgad.
pub fn check_program(program: &Program, compiler: Compiler, opt: OptLevel) {
    let link: Vec<OsString> = program.link_args.iter().map(OsString::from).collect();
    let executable = build_program_at(
        &programs_dir().join(program.source),
        compiler,
        opt,
        &[],
        &link,
    );
    let invocation = Invocation::new(&executable)
        .args(
            program
                .libraries
                .iter()
                .map(|source| build_shared_library(source, compiler, opt)),
        )
        .args(program.args);
    let native = run_native(&invocation, None);
    native.assert_completed(&invocation, program.name(), program.expected_status);
    let dgad = run_under_dgad(&invocation, None, &[]);
    assert_same_behaviour(&invocation, &native, &dgad);
}

// ---------------------------------------------------------------------------
// Scratch space
// ---------------------------------------------------------------------------

/// A fresh directory for one test's generated files, removed when dropped.
/// It lives under the target directory, not in /tmp, so that it is cleaned
/// with the rest of the build.
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates `<build_root>/scratch/<label>-<pid>-<n>`, emptied first;
    /// `n` counts the scratch directories of this process, so tests running
    /// in parallel never share one.
    pub fn new(label: &str) -> ScratchDir {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = build_root()
            .join("scratch")
            .join(format!("{label}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        ScratchDir { path }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes a file into the directory (creating subdirectories) and
    /// returns its path.
    pub fn write(&self, relative: &str, contents: &[u8]) -> PathBuf {
        let path = self.path.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        fs::write(&path, contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

type Slot<T> = std::sync::Arc<std::sync::OnceLock<T>>;
/// Per-key results computed once per test process (see [`once`]).
pub(crate) type Slots<T> =
    std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, Slot<T>>>>;

/// `compute()` once per key and test process, however many tests ask at the
/// same time (the others wait); a panic becomes an `Err` that every asker
/// gets.
pub(crate) fn once<T: Clone>(
    slots: &'static Slots<Result<T, String>>,
    key: String,
    compute: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    let slot = slots
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone();
    slot.get_or_init(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(compute))
            .unwrap_or_else(|payload| Err(panic_text(payload.as_ref())))
    })
    .clone()
}

/// The message of a panic payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else {
        "(no message)".to_owned()
    }
}

/// A C99 hexadecimal float as printf's `%a` writes it.
pub fn parse_hex_float(s: &str) -> f64 {
    let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
    let s = s.strip_prefix("0x").expect("0x prefix");
    let (mantissa, exp) = s.split_once('p').expect("binary exponent");
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut v = u64::from_str_radix(int, 16).expect("hex digits") as f64;
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += f64::from(c.to_digit(16).expect("hex digit")) * scale;
        scale /= 16.0;
    }
    let v = v * 2f64.powi(exp.parse().expect("exponent"));
    if neg {
        -v
    } else {
        v
    }
}
