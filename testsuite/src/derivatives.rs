//! The derivative test matrix: formulas with hand-derived Jacobians, compiled
//! for every language × compiler × optimisation level × floating-point type,
//! run natively and recorded under dgad, the tape checked in both directions.
//!
//! A [`Formula`] (the table is `testsuite/derivatives/formulas.rs`) is one
//! definition: a code snippet per language, input values, the expected
//! outputs and the expected Jacobian `d output_k / d input_i`, both written
//! as Rust expressions. The generator turns the whole table into one source
//! file per (language, float type) under `<target>/testsuite-build/derivatives/`,
//! a program that runs the formula named by its first argument on the inputs
//! that follow, marks them with `DG_INPUTF`, marks the results with
//! `DG_OUTPUTF` and prints them. That source is compiled once per [`Axis`]
//! (compiler and flags) through the suite's build cache.
//!
//! Three checks use a program: [`check_native_values`] runs it natively and
//! compares the printed values; [`check_recording`] also records it
//! (`DGAD_RECORD`), requires the same output, and evaluates the tape with
//! `dg-eval` once per output (reverse: `dg-output-bars` → `dg-input-bars`)
//! and once per input (forward: `dg-input-dots` → `dg-output-dots`);
//! [`check_dot`] runs it in forward mode (`DGAD_MODE=dot`) once per input,
//! seeded through the program's tangent hooks ([`DOT_SEEDS_VAR`],
//! [`DOT_OUT_VAR`]), and compares the output tangents with the Jacobian and
//! with `dg-eval --forward` on one recording.
//! Known failures are listed in `testsuite/derivatives/expected_failures.rs`
//! with a reason that `docs/limitations.md` must repeat.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::{
    build_program_at, build_root, dgad_lib, path_from_env, run_native, run_under_dgad, target_dir,
    workspace_root, Compiler, Invocation, OptLevel, Outcome,
};

#[path = "../derivatives/expected_failures.rs"]
mod expected_failures;
#[path = "../derivatives/formulas.rs"]
mod formulas;

pub use expected_failures::{COPYSIGN_X87_TOP_BYTE, DOT_X87_SIGN_BYTE, EXPECTED_FAILURES};
pub use formulas::FORMULAS;

// ---------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------

/// One formula of the matrix. See `testsuite/derivatives/README.md` for how
/// to write one.
pub struct Formula {
    /// Identifier: the program's first argument and the test name's middle
    /// part (`[a-z][a-z0-9_]*`).
    pub name: &'static str,
    /// What the formula exercises, for failure messages.
    pub about: &'static str,
    /// Input variables and their values, which must be exact in `float` so
    /// that every type computes from the same numbers.
    pub inputs: &'static [(&'static str, f64)],
    /// Output variables, declared by the snippets.
    pub outputs: &'static [&'static str],
    /// C snippet; also C++ unless [`Formula::cxx`] says otherwise.
    pub c: Snippet,
    /// C++ snippet, usually [`Snippet::SameAsC`].
    pub cxx: Snippet,
    /// Fortran snippet.
    pub fortran: Snippet,
    /// The expected outputs, computed in `f64` from the inputs.
    pub value: fn(&[f64]) -> Vec<f64>,
    /// The expected Jacobian, `jacobian(x)[k][i] = d output_k / d input_i`,
    /// derived by hand.
    pub jacobian: fn(&[f64]) -> Vec<Vec<f64>>,
    /// False where `value` is not differentiable at the inputs (a tie that a
    /// branch decides): the self-check against finite differences skips it.
    pub smooth: bool,
}

/// The code of a formula in one language.
pub enum Snippet {
    /// `body` runs with the inputs as local variables of the float type and
    /// declares the outputs. `support` goes before it at file scope (C, C++)
    /// or into the module (Fortran: what precedes a line `contains` goes to
    /// the specification part, the rest after the module's `contains`).
    Code {
        /// File-scope helpers: functions, types, variables.
        support: &'static str,
        /// Statements computing the outputs from the inputs.
        body: &'static str,
    },
    /// C++ only: the C snippet as it is.
    SameAsC,
    /// The formula does not exist in this language, for the reason given.
    Absent(&'static str),
}

/// A snippet without support code.
pub const fn code(body: &'static str) -> Snippet {
    Snippet::Code { support: "", body }
}

/// A snippet with support code.
pub const fn code_with(support: &'static str, body: &'static str) -> Snippet {
    Snippet::Code { support, body }
}

impl Formula {
    /// The snippet for a language, or why there is none.
    pub fn snippet(
        &self,
        language: Language,
    ) -> Result<(&'static str, &'static str), &'static str> {
        let snippet = match (language, &self.cxx) {
            (Language::C, _) | (Language::Cxx, Snippet::SameAsC) => &self.c,
            (Language::Cxx, cxx) => cxx,
            (Language::Fortran, _) => &self.fortran,
        };
        match snippet {
            Snippet::Code { support, body } => Ok((support, body)),
            Snippet::Absent(reason) => Err(reason),
            Snippet::SameAsC => Err("SameAsC is only meaningful for C++"),
        }
    }

    /// The input values, in order.
    pub fn input_values(&self) -> Vec<f64> {
        self.inputs.iter().map(|&(_, v)| v).collect()
    }

    fn describe(&self) -> String {
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .map(|(name, v)| format!("{name} = {v:?}"))
            .collect();
        format!(
            "{} ({}), inputs {}, outputs {}",
            self.name,
            self.about,
            inputs.join(", "),
            self.outputs.join(", ")
        )
    }
}

// ---------------------------------------------------------------------------
// Axes
// ---------------------------------------------------------------------------

/// The language axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// C (gnu17), gcc and clang.
    C,
    /// C++17, g++ and clang++.
    Cxx,
    /// Fortran 2008, gfortran.
    Fortran,
}

impl Language {
    /// Every language of the matrix.
    pub const ALL: [Language; 3] = [Language::C, Language::Cxx, Language::Fortran];

    /// Label in test names.
    pub fn label(self) -> &'static str {
        match self {
            Language::C => "c",
            Language::Cxx => "cxx",
            Language::Fortran => "fortran",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Language::C => "c",
            Language::Cxx => "cpp",
            Language::Fortran => "f90",
        }
    }

    fn compilers(self) -> &'static [Compiler] {
        match self {
            Language::C | Language::Cxx => &[Compiler::Gcc, Compiler::Clang],
            Language::Fortran => &[Compiler::Gfortran],
        }
    }

    fn opt_levels(self) -> &'static [OptLevel] {
        match self {
            Language::C | Language::Cxx => &[OptLevel::O0, OptLevel::O3, OptLevel::O3Native],
            // As in the transparency suite: -march=native adds little to
            // Fortran that C does not already cover.
            Language::Fortran => &[OptLevel::O0, OptLevel::O3],
        }
    }
}

/// The floating-point type axis: `float`/`double`/`long double` in C and
/// C++, `real(4)`/`real(8)`/`real(10)` in Fortran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatType {
    /// IEEE binary32.
    Float,
    /// IEEE binary64.
    Double,
    /// x87 80-bit extended precision.
    LongDouble,
}

/// How close a result must be to the expectation:
/// `|actual - expected| <= tolerance * max(|expected|, 1)`.
///
/// The expectations are computed in `f64`, and the tape stores `f64`
/// partial derivatives, so `long double` cannot be checked much beyond
/// double precision: its bounds leave room for a few `f64` roundings in the
/// reference and in the sweep. `float` gets ~100 ulps for the same reason in
/// its own precision.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// For the printed output values.
    pub value: f64,
    /// For the derivatives from `dg-eval`.
    pub derivative: f64,
}

impl FloatType {
    /// Every type of the matrix.
    pub const ALL: [FloatType; 3] = [FloatType::Float, FloatType::Double, FloatType::LongDouble];

    /// Label in test names, spelled as the language spells the type.
    pub fn label(self, language: Language) -> &'static str {
        match (language, self) {
            (Language::Fortran, FloatType::Float) => "real4",
            (Language::Fortran, FloatType::Double) => "real8",
            (Language::Fortran, FloatType::LongDouble) => "real10",
            (_, FloatType::Float) => "float",
            (_, FloatType::Double) => "double",
            (_, FloatType::LongDouble) => "long_double",
        }
    }

    /// The comparison bounds for this type.
    pub fn tolerance(self) -> Tolerance {
        match self {
            FloatType::Float => Tolerance {
                value: 1e-5,
                derivative: 1e-5,
            },
            FloatType::Double => Tolerance {
                value: 1e-12,
                derivative: 1e-12,
            },
            FloatType::LongDouble => Tolerance {
                value: 1e-14,
                derivative: 1e-13,
            },
        }
    }
}

/// One point of the matrix without the formula: how a program is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Source language.
    pub language: Language,
    /// Compiler family.
    pub compiler: Compiler,
    /// Optimisation flags.
    pub opt: OptLevel,
    /// Floating-point type of inputs, outputs and arithmetic.
    pub float: FloatType,
}

impl Axis {
    /// `c_gcc_O3_native_double`, `fortran_gfortran_O0_real10`: the test
    /// name's last part.
    pub fn label(&self) -> String {
        format!(
            "{}_{}_{}_{}",
            self.language.label(),
            compiler_label(self.compiler),
            self.opt.label().replace('-', "_"),
            self.float.label(self.language)
        )
    }

    fn describe(&self) -> String {
        format!(
            "{}, {} {}, {}",
            self.language.label(),
            compiler_label(self.compiler),
            self.opt.label(),
            self.float.label(self.language)
        )
    }
}

fn compiler_label(compiler: Compiler) -> &'static str {
    match compiler {
        Compiler::Gcc => "gcc",
        Compiler::Clang => "clang",
        Compiler::Gfortran => "gfortran",
    }
}

/// Every axis of the matrix: 18 each for C and C++, 6 for Fortran.
pub fn all_axes() -> Vec<Axis> {
    let mut axes = Vec::new();
    for language in Language::ALL {
        for &compiler in language.compilers() {
            for &opt in language.opt_levels() {
                for float in FloatType::ALL {
                    axes.push(Axis {
                        language,
                        compiler,
                        opt,
                        float,
                    });
                }
            }
        }
    }
    axes
}

/// The axes of the two example programs: C, `double`, both compilers, all
/// three optimisation levels.
pub fn example_axes() -> Vec<Axis> {
    all_axes()
        .into_iter()
        .filter(|a| a.language == Language::C && a.float == FloatType::Double)
        .collect()
}

// ---------------------------------------------------------------------------
// The test list
// ---------------------------------------------------------------------------

/// The category of a test, its name's first part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// `native_values::`: the native run prints the expected values.
    NativeValues,
    /// `record::`: values, then record, reverse and forward sweeps.
    Record,
    /// `dot::`: values, then one run in forward mode (`DGAD_MODE=dot`) per
    /// input with a unit tangent on it; the output tangents against the
    /// Jacobian's column and against `dg-eval --forward` on a recording.
    Dot,
}

impl Category {
    /// The name prefix.
    pub fn label(self) -> &'static str {
        match self {
            Category::NativeValues => "native_values",
            Category::Record => "record",
            Category::Dot => "dot",
        }
    }
}

/// What a test of the matrix checks.
#[derive(Clone, Copy)]
pub enum Subject {
    /// A formula of the table.
    Formula(&'static Formula),
    /// `testsuite/derivatives/readme_gradient.c`.
    ReadmeGradient,
    /// `testsuite/derivatives/derivgrind_cube.c`.
    DerivgrindCube,
}

impl Subject {
    fn name(&self) -> &'static str {
        match self {
            Subject::Formula(formula) => formula.name,
            Subject::ReadmeGradient => "example_readme_gradient",
            Subject::DerivgrindCube => "example_derivgrind_cube",
        }
    }
}

/// One test of the matrix.
#[derive(Clone, Copy)]
pub struct MatrixTest {
    /// Native values only, or the full record check.
    pub category: Category,
    /// Formula or example program.
    pub subject: Subject,
    /// Build configuration.
    pub axis: Axis,
}

impl MatrixTest {
    /// `<category>::<formula>::<axis>`.
    pub fn name(&self) -> String {
        format!(
            "{}::{}::{}",
            self.category.label(),
            self.subject.name(),
            self.axis.label()
        )
    }

    /// Runs the test; panics with a full account on failure.
    pub fn run(&self) {
        let name = self.name();
        match (self.category, self.subject) {
            (Category::NativeValues, Subject::Formula(f)) => {
                check_native_values(&name, f, self.axis);
            }
            (Category::Record, Subject::Formula(f)) => check_recording(&name, f, self.axis),
            (Category::NativeValues, Subject::ReadmeGradient) => {
                check_readme_gradient(&name, self.axis, false);
            }
            (Category::Record, Subject::ReadmeGradient) => {
                check_readme_gradient(&name, self.axis, true);
            }
            (Category::NativeValues, Subject::DerivgrindCube) => {
                check_derivgrind_cube(&name, self.axis, false);
            }
            (Category::Record, Subject::DerivgrindCube) => {
                check_derivgrind_cube(&name, self.axis, true);
            }
            (Category::Dot, Subject::Formula(f)) => check_dot(&name, f, self.axis),
            (Category::Dot, _) => panic!(
                "{name}: the example programs have no dot-mode hooks; matrix_tests makes no \
                 such test"
            ),
        }
    }
}

/// Every test of one category: each formula on each axis of a language it
/// exists in, then the two examples (not for `dot::`: the examples are
/// plain programs without the generated programs' tangent hooks).
pub fn matrix_tests(category: Category) -> Vec<MatrixTest> {
    let mut tests = Vec::new();
    for formula in FORMULAS {
        for axis in all_axes() {
            if formula.snippet(axis.language).is_ok() {
                tests.push(MatrixTest {
                    category,
                    subject: Subject::Formula(formula),
                    axis,
                });
            }
        }
    }
    let examples: &[Subject] = match category {
        Category::Dot => &[],
        _ => &[Subject::ReadmeGradient, Subject::DerivgrindCube],
    };
    for &subject in examples {
        for axis in example_axes() {
            tests.push(MatrixTest {
                category,
                subject,
                axis,
            });
        }
    }
    tests
}

// ---------------------------------------------------------------------------
// Generating and building the programs
// ---------------------------------------------------------------------------

/// Where the generated sources, Fortran module files and record
/// directories go.
pub fn matrix_dir() -> PathBuf {
    build_root().join("derivatives")
}

/// The C include directory holding `valgrind/derivgrind.h`: `DGAD_INCLUDE`
/// (relative paths from the workspace root), else `<workspace>/include`.
pub fn include_dir() -> PathBuf {
    let dir = path_from_env("DGAD_INCLUDE", || workspace_root().join("include"));
    assert!(
        dir.join("valgrind/derivgrind.h").is_file(),
        "{} does not exist: the derivative tests include <valgrind/derivgrind.h> \
         (client requests DG_INPUTF/DG_OUTPUTF); point DGAD_INCLUDE at a directory \
         that has it",
        dir.join("valgrind/derivgrind.h").display()
    );
    dir
}

/// The Fortran client's directory, with the Makefile that builds its
/// library: `DGAD_FORTRAN_CLIENT` (relative paths from the workspace root),
/// else `<workspace>/preload/client`.
pub fn fortran_client_dir() -> PathBuf {
    let dir = path_from_env("DGAD_FORTRAN_CLIENT", || {
        workspace_root().join("preload").join("client")
    });
    assert!(
        dir.join("Makefile").is_file(),
        "{} does not exist: the Fortran derivative tests build the client library \
         (module derivgrind_clientrequests, -ldgadclient) with it; point \
         DGAD_FORTRAN_CLIENT at the client's directory",
        dir.join("Makefile").display()
    );
    dir
}

/// The files the Fortran client is built from (the directory's own files,
/// not its subdirectories), for the dependency hash.
fn fortran_client_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(fortran_client_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files
}

/// Builds the Fortran client library once per test process, as its README
/// says (`make -C <client> BUILD=<dir>` with this suite's gfortran), into
/// `<target>/testsuite-build/derivatives/fortran-client`, and returns that
/// directory: programs compile with `-I<dir>` and link `-L<dir> -ldgadclient`.
pub fn fortran_client_build() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let build = matrix_dir().join("fortran-client");
        let invocation = Invocation::new("make")
            .arg("-C")
            .arg(fortran_client_dir())
            .arg(format!("BUILD={}", build.display()))
            .args(["FC=gfortran", "CC=gcc"]);
        let outcome = run_native(&invocation, None);
        if outcome.status.success() {
            Ok(build)
        } else {
            Err(format!(
                "building the Fortran client library failed: `{}`: {}",
                invocation.display(),
                outcome_text(&outcome)
            ))
        }
    });
    built.clone().unwrap_or_else(|message| panic!("{message}"))
}

/// FNV-1a over the contents of `paths` (directories recursively, in name
/// order), so that a generated source changes, and its programs are rebuilt,
/// when a header or module it uses changes.
pub(crate) fn contents_hash(paths: &[PathBuf]) -> u64 {
    fn visit(path: &Path, hash: &mut u64) {
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = fs::read_dir(path)
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            entries.sort();
            for entry in entries {
                visit(&entry, hash);
            }
        } else {
            let bytes = fs::read(path).unwrap_or_default();
            for byte in path.as_os_str().as_encoded_bytes().iter().chain(&bytes) {
                *hash ^= u64::from(*byte);
                *hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut hash = 0xcbf2_9ce4_8422_2325;
    for path in paths {
        visit(path, &mut hash);
    }
    hash
}

/// Writes `contents` to `path` unless it is there already, through a
/// private name and a rename so that concurrent test runs never compile a
/// half-written file, and an unchanged source keeps its time stamp (and its
/// programs stay built).
pub(crate) fn write_if_changed(path: &Path, contents: &str) {
    if fs::read_to_string(path).is_ok_and(|old| old == contents) {
        return;
    }
    let dir = path.parent().expect("generated files live in a directory");
    fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let partial = crate::private_name(path);
    fs::write(&partial, contents)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", partial.display()));
    fs::rename(&partial, path)
        .unwrap_or_else(|e| panic!("cannot move {} into place: {e}", path.display()));
}

/// The generated source of one (language, type), written on first use.
fn generated_source(language: Language, float: FloatType) -> PathBuf {
    static WRITTEN: Mutex<Vec<(Language, FloatType)>> = Mutex::new(Vec::new());
    let path = matrix_dir().join("src").join(format!(
        "derivatives_{}_{}.{}",
        language.label(),
        float.label(language),
        language.extension()
    ));
    let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    if !written.contains(&(language, float)) {
        let text = match language {
            Language::C | Language::Cxx => generate_c_family(language, float),
            Language::Fortran => generate_fortran(float),
        };
        write_if_changed(&path, &text);
        written.push((language, float));
    }
    path
}

/// Builds `source` for `axis` once per test process, however many tests
/// ask at the same time; a failed build fails every test that needs it with
/// the compiler's message.
fn build_once(
    source: &Path,
    axis: Axis,
    extra_args: Vec<OsString>,
    link_args: Vec<OsString>,
) -> PathBuf {
    static BUILDS: crate::Slots<Result<PathBuf, String>> = OnceLock::new();
    let key = format!(
        "{}|{}|{}",
        source.display(),
        compiler_label(axis.compiler),
        axis.opt.label()
    );
    let built = crate::once(&BUILDS, key, || {
        Ok(build_program_at(
            source,
            axis.compiler,
            axis.opt,
            &extra_args,
            &link_args,
        ))
    });
    match built {
        Ok(program) => program,
        Err(message) => panic!("building for {} failed:\n{message}", axis.label()),
    }
}

/// The compiler arguments beyond the suite's standard ones: those before
/// the source and the libraries after it.
fn extra_compile_args(axis: Axis, stem: &str) -> (Vec<OsString>, Vec<OsString>) {
    let flag = |flag: &str, path: &Path| {
        let mut arg = OsString::from(flag);
        arg.push(path);
        arg
    };
    let mut args: Vec<OsString> = vec!["-fopenmp-simd".into()];
    let mut link_args = Vec::new();
    if axis.language == Language::Fortran {
        // Module files of the program per build, so that parallel builds
        // never share one; the client's modules come from its build.
        let modules = matrix_dir().join("modules").join(format!(
            "{}-{}-{stem}",
            compiler_label(axis.compiler),
            axis.opt.label()
        ));
        fs::create_dir_all(&modules)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", modules.display()));
        let client = fortran_client_build();
        args.push(flag("-J", &modules));
        args.push(flag("-I", &client));
        link_args.push(flag("-L", &client));
        link_args.push("-ldgadclient".into());
    } else {
        args.push(flag("-I", &include_dir()));
    }
    (args, link_args)
}

/// The program holding every formula for `axis`, built if needed.
pub fn formula_program(axis: Axis) -> PathBuf {
    let source = generated_source(axis.language, axis.float);
    let stem = source
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("generated names are UTF-8")
        .to_owned();
    let (args, link_args) = extra_compile_args(axis, &stem);
    build_once(&source, axis, args, link_args)
}

/// The header comment's note of what the generated code depends on: the
/// directories and a hash of their files' contents.
pub(crate) fn dependency_note(language: Language) -> String {
    let mut directories = vec![include_dir()];
    let mut files = vec![include_dir()];
    if language == Language::Fortran {
        directories.push(fortran_client_dir());
        files.extend(fortran_client_files());
    }
    let names: Vec<String> = directories
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    format!(
        "uses {} (contents hash {:016x})",
        names.join(" and "),
        contents_hash(&files)
    )
}

pub(crate) fn indent(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        out.push_str(prefix);
        out.push_str(line);
        out.push('\n');
    }
    out
}

// ---------------------------------------------------------------------------
// The dot-mode hooks of the generated programs
// ---------------------------------------------------------------------------

/// The variable holding the input tangents of a `dot::` run, one number per
/// input in marking order, separated by blanks. (Not `DGAD_…`: the runtime
/// warns about `DGAD_` variables it does not know.)
pub const DOT_SEEDS_VAR: &str = "DGTEST_DOT_SEEDS";

/// The variable naming the file the output tangents go to, one per line.
pub const DOT_OUT_VAR: &str = "DGTEST_DOT_OUT";

/// C functions (after the `real` typedef; they need `<stdio.h>`,
/// `<stdlib.h>`, `<math.h>` and `<valgrind/derivgrind.h>`) through which the
/// generated programs of both matrices seed and read tangents:
/// `dot_seeds_begin_()`, `dot_seed_(&x)` after each `DG_INPUTF`,
/// `dot_seeds_end_()`, and `dot_write_(y, count)` after the outputs are
/// marked. Without the two variables they do nothing.
pub(crate) fn c_dot_hooks(float: FloatType) -> String {
    let (strto, print) = match float {
        FloatType::Float => ("strtof", "\"%.9g\\n\", (double)dot"),
        FloatType::Double => ("strtod", "\"%.17g\\n\", dot"),
        FloatType::LongDouble => ("strtold", "\"%.21Lg\\n\", dot"),
    };
    format!(
        r#"
/* The dot:: tests' hooks (testsuite/derivatives/README.md). With
   {DOT_SEEDS_VAR}="s1 s2 ..." input i gets the tangent s_i by
   DG_SET_DOTVALUE right after its DG_INPUTF; with {DOT_OUT_VAR}=FILE the
   outputs' tangents (DG_GET_DOTVALUE) go to FILE, one per line. Natively and
   in record mode both requests leave memory alone, so FILE then holds nan,
   the value the buffer starts with. stdout is the same either way. */
static const char *dot_seeds_; /* the rest of {DOT_SEEDS_VAR}, or NULL */

static void dot_seeds_begin_(void)
{{
    dot_seeds_ = getenv("{DOT_SEEDS_VAR}");
}}

/* Gives *x the next seed as its tangent; 0 if there is none. */
static int dot_seed_(real *x)
{{
    if (!dot_seeds_)
        return 1;
    char *end;
    real seed = {strto}(dot_seeds_, &end);
    if (end == dot_seeds_) {{
        fputs("{DOT_SEEDS_VAR} has fewer numbers than there are inputs\n", stderr);
        return 0;
    }}
    dot_seeds_ = end;
    DG_SET_DOTVALUE(x, &seed, sizeof seed);
    return 1;
}}

/* 1 unless seeds are left over. */
static int dot_seeds_end_(void)
{{
    if (!dot_seeds_)
        return 1;
    while (*dot_seeds_ == ' ' || *dot_seeds_ == '\t' || *dot_seeds_ == '\n')
        dot_seeds_++;
    if (*dot_seeds_ == '\0')
        return 1;
    fputs("{DOT_SEEDS_VAR} has more numbers than there are inputs\n", stderr);
    return 0;
}}

/* Writes the tangents of y[0..count) to {DOT_OUT_VAR}, if set; 0 on error. */
static int dot_write_(const real *y, int count)
{{
    const char *path = getenv("{DOT_OUT_VAR}");
    if (!path)
        return 1;
    FILE *file = fopen(path, "w");
    if (!file) {{
        perror(path);
        return 0;
    }}
    for (int k = 0; k < count; k++) {{
        real dot = (real)NAN; /* stays NaN unless the request is answered */
        DG_GET_DOTVALUE(&y[k], &dot, sizeof dot);
        fprintf(file, {print});
    }}
    return fclose(file) == 0;
}}
"#
    )
}

/// A Fortran module `dgtest_dot` (placed before the program) with the same
/// hooks as [`c_dot_hooks`]: `call dot_seeds_read(count)` once, `call
/// dot_seed(x(i), i)` after each `dg_inputf`, `call dot_write(y, count)`
/// after the outputs are marked.
pub(crate) fn fortran_dot_hooks(float: FloatType) -> String {
    let c_kind = match float {
        FloatType::Float => "c_float",
        FloatType::Double => "c_double",
        FloatType::LongDouble => "c_long_double",
    };
    format!(
        r#"
! The dot:: tests' hooks (testsuite/derivatives/README.md). With
! {DOT_SEEDS_VAR}="s1 s2 ..." input i gets the tangent s_i by dg_set_dotvalue
! right after its dg_inputf; with {DOT_OUT_VAR}=FILE the outputs' tangents
! (dg_get_dotvalue) go to FILE, one per line. Natively and in record mode
! both requests leave memory alone, so FILE then holds NaN, the value the
! buffer starts with. stdout is the same either way.
module dgtest_dot
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use, intrinsic :: iso_fortran_env, only: error_unit
  use derivgrind_clientrequests
  implicit none
  private
  public :: dot_seeds_read, dot_seed, dot_write
  integer, parameter :: wp = {c_kind}
  logical :: seeded = .false.
  real(wp), allocatable, target :: seeds(:)
contains
  ! Reads {DOT_SEEDS_VAR}, if set: exactly count numbers.
  subroutine dot_seeds_read(count)
    integer, intent(in) :: count
    character(len=:), allocatable :: text
    real(wp) :: extra
    integer :: length, status
    call get_environment_variable('{DOT_SEEDS_VAR}', length=length, status=status)
    if (status /= 0) return
    allocate (character(len=length) :: text)
    call get_environment_variable('{DOT_SEEDS_VAR}', value=text)
    allocate (seeds(count))
    read (text, *, iostat=status) seeds
    if (status /= 0) then
      write (error_unit, '(a)') '{DOT_SEEDS_VAR} has fewer numbers than there are inputs'
      error stop 2
    end if
    read (text, *, iostat=status) seeds, extra
    if (status == 0) then
      write (error_unit, '(a)') '{DOT_SEEDS_VAR} has more numbers than there are inputs'
      error stop 2
    end if
    seeded = .true.
  end subroutine dot_seeds_read

  ! Gives x seed i as its tangent.
  subroutine dot_seed(x, i)
    real(wp), target, intent(inout) :: x
    integer, intent(in) :: i
    if (seeded) call dg_set_dotvalue(c_loc(x), c_loc(seeds(i)), int(c_sizeof(x), c_int))
  end subroutine dot_seed

  ! Writes the tangents of y(1:count) to {DOT_OUT_VAR}, if set.
  subroutine dot_write(y, count)
    integer, intent(in) :: count
    real(wp), target, intent(in) :: y(count)
    character(len=:), allocatable :: path
    real(wp), target :: dot
    integer :: length, status, unit, k
    call get_environment_variable('{DOT_OUT_VAR}', length=length, status=status)
    if (status /= 0) return
    allocate (character(len=length) :: path)
    call get_environment_variable('{DOT_OUT_VAR}', value=path)
    open (newunit=unit, file=path, status='replace', action='write')
    do k = 1, count
      dot = ieee_value(dot, ieee_quiet_nan) ! stays NaN unless the request is answered
      call dg_get_dotvalue(c_loc(y(k)), c_loc(dot), int(c_sizeof(dot), c_int))
      write (unit, '(es30.20e4)') dot
    end do
    close (unit)
  end subroutine dot_write
end module dgtest_dot
"#
    )
}

fn max_arity() -> usize {
    FORMULAS
        .iter()
        .map(|f| f.inputs.len().max(f.outputs.len()))
        .max()
        .unwrap_or(1)
}

/// How C spells what differs between the float types.
struct CSpelling {
    real: &'static str,
    /// `R(literal)` expands to this.
    literal: &'static str,
    strto: &'static str,
    print: &'static str,
    /// The type after the default argument promotions.
    va: &'static str,
    /// Of the libm functions: `fabsf`, `fabs`, `fabsl`.
    suffix: &'static str,
    powi: &'static str,
}

impl CSpelling {
    fn of(float: FloatType) -> CSpelling {
        match float {
            FloatType::Float => CSpelling {
                real: "float",
                literal: "literal##f",
                strto: "strtof",
                print: "printf(\"%.9g\\n\", (double)(v))",
                va: "double",
                suffix: "f",
                powi: "__builtin_powif",
            },
            FloatType::Double => CSpelling {
                real: "double",
                literal: "literal",
                strto: "strtod",
                print: "printf(\"%.17g\\n\", (double)(v))",
                va: "double",
                suffix: "",
                powi: "__builtin_powi",
            },
            FloatType::LongDouble => CSpelling {
                real: "long double",
                literal: "literal##L",
                strto: "strtold",
                print: "printf(\"%.21Lg\\n\", (long double)(v))",
                va: "long double",
                suffix: "l",
                powi: "__builtin_powil",
            },
        }
    }
}

/// The per-type definitions every C and C++ snippet may use.
fn c_family_type_prelude(language: Language, float: FloatType) -> String {
    let CSpelling {
        real,
        literal,
        strto,
        print,
        va,
        suffix,
        powi,
    } = CSpelling::of(float);
    let mut text = format!(
        "typedef {real} real; /* the type under test */\n\
         #define R(literal) {literal} /* a literal of type real; needs a '.' or an exponent */\n\
         #define STRTOREAL {strto}\n\
         #define PRINT_REAL(v) {print}\n\
         #define VA_REAL {va} /* real after the default promotions of '...' */\n\
         #define POWI {powi}\n\
         #define NOINLINE __attribute__((noinline))\n"
    );
    let functions = [
        ("FABS", "fabs"),
        ("FMIN", "fmin"),
        ("FMAX", "fmax"),
        ("FMA", "fma"),
        ("SQRT", "sqrt"),
        ("COPYSIGN", "copysign"),
        ("FLOOR", "floor"),
        ("CEIL", "ceil"),
    ];
    for (macro_name, function) in functions {
        let _ = match language {
            // The overloads of <cmath>, as C++ code calls them.
            Language::Cxx => writeln!(text, "#define {macro_name} std::{function}"),
            _ => writeln!(text, "#define {macro_name} {function}{suffix}"),
        };
    }
    if language == Language::C {
        let _ = writeln!(
            text,
            "typedef {real} _Complex complex_real; /* set with __real__ and __imag__ */"
        );
    }
    text
}

fn generate_c_family(language: Language, float: FloatType) -> String {
    let mut text = format!(
        "/* Generated by testsuite/src/derivatives.rs from testsuite/derivatives/formulas.rs\n \
         * ({}, {}); do not edit: the derivative tests rewrite it.\n \
         * {} */\n",
        language.label(),
        float.label(language),
        dependency_note(language)
    );
    let headers: &[&str] = match language {
        Language::C => &[
            "valgrind/derivgrind.h",
            "complex.h",
            "math.h",
            "stdarg.h",
            "stdint.h",
            "stdio.h",
            "stdlib.h",
            "string.h",
        ],
        _ => &[
            "valgrind/derivgrind.h",
            "algorithm",
            "array",
            "cmath",
            "complex",
            "cstdarg",
            "cstdint",
            "cstdio",
            "cstdlib",
            "cstring",
            "numeric",
            "vector",
        ],
    };
    for header in headers {
        let _ = writeln!(text, "#include <{header}>");
    }
    text.push('\n');
    text.push_str(&c_family_type_prelude(language, float));
    text.push_str(&c_dot_hooks(float));

    let mut table = String::new();
    for formula in FORMULAS {
        let Ok((support, body)) = formula.snippet(language) else {
            continue;
        };
        let _ = writeln!(text, "\n/* {}: {} */", formula.name, formula.about);
        text.push_str(&indent(support, ""));
        let _ = writeln!(
            text,
            "static void f_{}(const real *in_, real *out_)\n{{",
            formula.name
        );
        for (i, (input, _)) in formula.inputs.iter().enumerate() {
            let _ = writeln!(text, "    real {input} = in_[{i}]; (void){input};");
        }
        text.push_str(&indent(body, "    "));
        for (k, output) in formula.outputs.iter().enumerate() {
            let _ = writeln!(text, "    out_[{k}] = {output};");
        }
        text.push_str("}\n");
        let _ = writeln!(
            table,
            "    {{\"{}\", {}, {}, f_{}}},",
            formula.name,
            formula.inputs.len(),
            formula.outputs.len(),
            formula.name
        );
    }
    let _ = write!(
        text,
        r#"
struct formula {{
    const char *name;
    int inputs, outputs;
    void (*run)(const real *, real *);
}};

static const struct formula formulas[] = {{
{table}}};

/* FORMULA INPUT...: marks the inputs, runs the formula, marks and prints
   the outputs, one per line (and seeds and writes tangents for the dot::
   tests, see above). */
int main(int argc, char **argv)
{{
    if (argc < 2) {{
        fputs("usage: PROGRAM FORMULA INPUT...\n", stderr);
        return 2;
    }}
    for (size_t f = 0; f < sizeof formulas / sizeof formulas[0]; f++) {{
        if (strcmp(argv[1], formulas[f].name) != 0)
            continue;
        if (argc != 2 + formulas[f].inputs) {{
            fprintf(stderr, "%s takes %d inputs\n", argv[1], formulas[f].inputs);
            return 2;
        }}
        real in[{arity}], out[{arity}];
        for (int i = 0; i < formulas[f].inputs; i++)
            in[i] = STRTOREAL(argv[2 + i], NULL);
        dot_seeds_begin_();
        for (int i = 0; i < formulas[f].inputs; i++) {{
            DG_INPUTF(in[i]);
            if (!dot_seed_(&in[i]))
                return 2;
        }}
        if (!dot_seeds_end_())
            return 2;
        formulas[f].run(in, out);
        for (int k = 0; k < formulas[f].outputs; k++)
            DG_OUTPUTF(out[k]);
        if (!dot_write_(out, formulas[f].outputs))
            return 2;
        for (int k = 0; k < formulas[f].outputs; k++)
            PRINT_REAL(out[k]);
        return 0;
    }}
    fprintf(stderr, "unknown formula %s\n", argv[1]);
    return 2;
}}
"#,
        arity = max_arity()
    );
    text
}

fn generate_fortran(float: FloatType) -> String {
    // The C kinds, equal to 4, 8 and 10 in gfortran, make the bind(C)
    // interfaces interoperable.
    let (kind, c_kind, fma) = match float {
        FloatType::Float => (4, "c_float", "fmaf"),
        FloatType::Double => (8, "c_double", "fma"),
        FloatType::LongDouble => (10, "c_long_double", "fmal"),
    };
    let mut specification = String::new();
    let mut procedures = String::new();
    let mut cases = String::new();
    for formula in FORMULAS {
        let Ok((support, body)) = formula.snippet(Language::Fortran) else {
            continue;
        };
        let (spec, procs) = split_fortran_support(support);
        if !spec.trim().is_empty() {
            let _ = writeln!(specification, "  ! {}", formula.name);
            specification.push_str(&indent(&spec, "  "));
        }
        let _ = writeln!(procedures, "\n  ! {}: {}", formula.name, formula.about);
        procedures.push_str(&indent(&procs, "  "));
        let names: Vec<&str> = formula.inputs.iter().map(|(n, _)| *n).collect();
        let _ = writeln!(
            procedures,
            "  subroutine f_{}(in_, out_)\n    \
             real(wp), intent(in) :: in_(:)\n    \
             real(wp), intent(out) :: out_(:)\n    \
             real(wp) :: {}",
            formula.name,
            names.join(", ")
        );
        for (i, name) in names.iter().enumerate() {
            let _ = writeln!(procedures, "    {name} = in_({})", i + 1);
        }
        procedures.push_str("    block\n");
        procedures.push_str(&indent(body, "      "));
        for (k, output) in formula.outputs.iter().enumerate() {
            let _ = writeln!(procedures, "      out_({}) = {output}", k + 1);
        }
        let _ = writeln!(
            procedures,
            "    end block\n  end subroutine f_{}",
            formula.name
        );
        let _ = writeln!(
            cases,
            "  case ('{0}')\n    nin = {1}\n    nout = {2}",
            formula.name,
            formula.inputs.len(),
            formula.outputs.len()
        );
    }
    let mut calls = String::new();
    for formula in FORMULAS {
        if formula.snippet(Language::Fortran).is_ok() {
            let _ = writeln!(
                calls,
                "  case ('{0}')\n    call f_{0}(x(1:nin), y(1:nout))",
                formula.name
            );
        }
    }
    format!(
        r#"! Generated by testsuite/src/derivatives.rs from testsuite/derivatives/formulas.rs
! (fortran, real({kind})); do not edit: the derivative tests rewrite it.
! {dependencies}
module dg_formulas
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int8, int32, int64
  implicit none
  ! The type under test.
  integer, parameter :: wp = {c_kind}
  interface
    function c_fma(x, y, z) bind(C, name='{fma}')
      import :: wp
      real(wp), value :: x, y, z
      real(wp) :: c_fma
    end function c_fma
  end interface
{specification}contains
{procedures}end module dg_formulas
{dot_hooks}
! FORMULA INPUT...: marks the inputs, runs the formula, marks and prints
! the outputs, one per line (and seeds and writes tangents for the dot::
! tests, see module dgtest_dot).
program derivatives
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use derivgrind_clientrequests
  use dg_formulas
  use dgtest_dot
  implicit none
  character(len=64) :: name, arg
  real(wp), target :: x({arity}), y({arity})
  integer :: i, nin, nout
  if (command_argument_count() < 1) then
    write (error_unit, '(a)') 'usage: PROGRAM FORMULA INPUT...'
    error stop 2
  end if
  call get_command_argument(1, name)
  select case (trim(name))
{cases}  case default
    write (error_unit, '(2a)') 'unknown formula ', trim(name)
    error stop 2
  end select
  if (command_argument_count() /= nin + 1) then
    write (error_unit, '(a, i0, a)') 'the formula takes ', nin, ' inputs'
    error stop 2
  end if
  do i = 1, nin
    call get_command_argument(i + 1, arg)
    read (arg, *) x(i)
  end do
  call dot_seeds_read(nin)
  do i = 1, nin
    call dg_inputf(c_loc(x(i)))
    call dot_seed(x(i), i)
  end do
  select case (trim(name))
{calls}  end select
  do i = 1, nout
    call dg_outputf(c_loc(y(i)))
  end do
  call dot_write(y, nout)
  do i = 1, nout
    write (*, '(es30.20e4)') y(i)
  end do
end program derivatives
"#,
        dependencies = dependency_note(Language::Fortran),
        arity = max_arity(),
        dot_hooks = fortran_dot_hooks(float),
    )
}

/// Splits Fortran support code at its line `contains`: specification part
/// before, procedures after; without such a line it is all procedures.
fn split_fortran_support(support: &str) -> (String, String) {
    let lines: Vec<&str> = support.lines().collect();
    match lines.iter().position(|l| l.trim() == "contains") {
        Some(at) => (lines[..at].join("\n"), lines[at + 1..].join("\n")),
        None => (String::new(), support.to_owned()),
    }
}

/// Copies an example program from `testsuite/derivatives/` next to the
/// generated sources, with the header's hash in a first comment line so a
/// new header rebuilds it, and builds it for `axis`.
fn example_program(file: &str, axis: Axis) -> PathBuf {
    let original = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("derivatives")
        .join(file);
    let text = fs::read_to_string(&original)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", original.display()));
    let copy = matrix_dir().join("src").join(file);
    {
        static LOCK: Mutex<()> = Mutex::new(());
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        write_if_changed(
            &copy,
            &format!(
                "/* Copied from testsuite/derivatives/{file}; {} */\n{text}",
                dependency_note(Language::C)
            ),
        );
    }
    let mut include = OsString::from("-I");
    include.push(include_dir());
    build_once(&copy, axis, vec![include], Vec::new())
}

// ---------------------------------------------------------------------------
// Running and comparing
// ---------------------------------------------------------------------------

/// The command that runs `formula` with its inputs.
pub fn formula_invocation(program: &Path, formula: &Formula) -> Invocation {
    Invocation::new(program)
        .arg(formula.name)
        .args(formula.inputs.iter().map(|(_, v)| format!("{v:?}")))
}

fn within(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs().max(1.0)
}

/// The numbers of a text file or output, one or more per line.
fn parse_numbers(text: &str) -> Result<Vec<f64>, String> {
    text.split_whitespace()
        .map(|word| {
            word.parse::<f64>()
                .map_err(|_| format!("{word:?} is not a number"))
        })
        .collect()
}

fn outcome_text(outcome: &Outcome) -> String {
    format!(
        "{}\n--- stdout ---\n{}--- stderr ---\n{}",
        outcome.status,
        outcome.stdout_text(),
        String::from_utf8_lossy(&outcome.stderr)
    )
}

/// Parses a run's output as `count` numbers; `Err` explains why not.
fn printed_values(outcome: &Outcome, count: usize) -> Result<Vec<f64>, String> {
    if !outcome.status.success() {
        return Err(format!("the program failed: {}", outcome_text(outcome)));
    }
    match parse_numbers(&outcome.stdout_text()) {
        Ok(values) if values.len() == count => Ok(values),
        Ok(values) => Err(format!(
            "printed {} values, expected {count}: {}",
            values.len(),
            outcome_text(outcome)
        )),
        Err(e) => Err(format!("{e}: {}", outcome_text(outcome))),
    }
}

/// Compares printed values with the expectation; one line per difference.
/// A zero expectation also fixes the sign of the zero.
fn value_differences(
    formula: &Formula,
    actual: &[f64],
    expected: &[f64],
    tolerance: f64,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (k, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let sign_differs = e == 0.0 && a == 0.0 && a.is_sign_negative() != e.is_sign_negative();
        if !within(a, e, tolerance) || sign_differs || a.is_nan() {
            problems.push(format!(
                "value of {}: expected {e:?}, got {a:?}",
                formula.outputs[k]
            ));
        }
    }
    problems
}

fn fail(test: &str, what: &str, subject: &str, axis: Axis, details: &str) -> ! {
    panic!(
        "{test}: {what}\n  formula: {subject}\n  axis:    {}\n{details}",
        axis.describe()
    )
}

/// The native part: the program prints the expected values.
pub fn check_native_values(test: &str, formula: &Formula, axis: Axis) {
    let program = formula_program(axis);
    let invocation = formula_invocation(&program, formula);
    let native = run_native(&invocation, None);
    native_values_checked(test, formula, axis, &invocation, &native);
}

fn native_values_checked(
    test: &str,
    formula: &Formula,
    axis: Axis,
    invocation: &Invocation,
    native: &Outcome,
) -> Vec<f64> {
    let expected = (formula.value)(&formula.input_values());
    let actual = printed_values(native, formula.outputs.len()).unwrap_or_else(|e| {
        fail(
            test,
            "the native run did not print the outputs",
            &formula.describe(),
            axis,
            &format!("  command: {}\n  {e}", invocation.display()),
        )
    });
    let problems = value_differences(formula, &actual, &expected, axis.float.tolerance().value);
    if !problems.is_empty() {
        fail(
            test,
            "the native run printed wrong values (a test or compiler problem, not dgad)",
            &formula.describe(),
            axis,
            &format!(
                "  {}\n  command: {}",
                problems.join("\n  "),
                invocation.display()
            ),
        );
    }
    actual
}

/// The evaluator: `DGAD_EVAL` if set (relative paths from the workspace
/// root; e.g. another build, or Derivgrind's `tape-evaluation`), else
/// `<target>/release/dg-eval`.
pub fn dg_eval() -> PathBuf {
    let path = path_from_env("DGAD_EVAL", || target_dir().join("release").join("dg-eval"));
    assert!(
        path.is_file(),
        "the evaluator {} does not exist: build it with \
         `cargo build --release -p evaluator`, or point DGAD_EVAL at one",
        path.display()
    );
    path
}

/// For tests: writes `seeds` to `DIR/seed_file`, runs `dg-eval DIR`
/// (`--forward` if `forward`) and returns the values of `DIR/result_file`;
/// panics with dg-eval's message when it fails.
pub fn eval_values(
    dir: &Path,
    seed_file: &str,
    seeds: &str,
    result_file: &str,
    forward: bool,
) -> Vec<f64> {
    let text =
        run_dg_eval(dir, seed_file, seeds, result_file, forward).unwrap_or_else(|e| panic!("{e}"));
    parse_numbers(&text).unwrap_or_else(|e| panic!("{result_file}: {e}"))
}

/// A fresh directory for one test's recording, kept when the test fails.
fn record_dir(test: &str) -> PathBuf {
    let dir = matrix_dir().join("record").join(test.replace("::", "__"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// What a recording and its sweeps produced.
struct Sweeps {
    /// `reverse[k][i]`: `dg-input-bars` for a 1 on output `k`.
    reverse: Vec<Result<Vec<f64>, String>>,
    /// `forward[i][k]`: `dg-output-dots` for a 1 on input `i`.
    forward: Vec<Result<Vec<f64>, String>>,
}

/// Records `invocation` into `dir`, checks that the output is the native
/// one and that the index files have one line per mark, then runs the
/// reverse sweep once per output and the forward sweep once per input.
/// `Err` is a reason the sweeps cannot run at all.
fn record_and_sweep(
    invocation: &Invocation,
    stdin: Option<&[u8]>,
    native: &Outcome,
    dir: &Path,
    inputs: usize,
    outputs: usize,
) -> Result<Sweeps, String> {
    record_checked(invocation, stdin, native, dir, inputs, outputs)?;
    let reverse = (0..outputs)
        .map(|k| {
            sweep(
                dir,
                "dg-output-bars",
                &unit_seed(outputs, k),
                "dg-input-bars",
                inputs,
                false,
            )
        })
        .collect();
    Ok(Sweeps {
        reverse,
        forward: forward_sweeps(dir, inputs, outputs),
    })
}

/// Records `invocation` into `dir` and checks that the run behaves as the
/// native one (exit status, stdout byte for byte), wrote a tape, and wrote
/// one line per mark to the index files.
fn record_checked(
    invocation: &Invocation,
    stdin: Option<&[u8]>,
    native: &Outcome,
    dir: &Path,
    inputs: usize,
    outputs: usize,
) -> Result<(), String> {
    let dir_text = dir.to_str().expect("target paths are UTF-8");
    let recorded = run_under_dgad(
        invocation,
        stdin,
        &[("DGAD_MODE", "record"), ("DGAD_RECORD", dir_text)],
    );
    if recorded.status != native.status || recorded.stdout != native.stdout {
        return Err(format!(
            "the recording run (DGAD_MODE=record DGAD_RECORD={dir_text} LD_PRELOAD={}) \
             does not behave as the native run\n--- native ---\n{}\n--- recorded ---\n{}",
            dgad_lib().display(),
            outcome_text(native),
            outcome_text(&recorded)
        ));
    }
    if !crate::recording::has_tape(dir) {
        return Err("the recording wrote no tape (dg-tape or dg-tape-compact)".to_owned());
    }
    for (file, count) in [("dg-input-indices", inputs), ("dg-output-indices", outputs)] {
        let text = fs::read_to_string(dir.join(file)).unwrap_or_default();
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        if lines != count {
            return Err(format!(
                "{file} has {lines} lines, expected one per mark: {count}"
            ));
        }
    }
    Ok(())
}

/// A unit vector of `count` numbers, one per line, with the 1 at `at`.
fn unit_seed(count: usize, at: usize) -> String {
    (0..count)
        .map(|j| if j == at { "1.0\n" } else { "0.0\n" })
        .collect()
}

/// The forward sweep over the tape in `dir` once per input `i`, with a
/// unit `dg-input-dots`: `forward[i][k]` is d output k / d input i.
fn forward_sweeps(dir: &Path, inputs: usize, outputs: usize) -> Vec<Result<Vec<f64>, String>> {
    (0..inputs)
        .map(|i| {
            sweep(
                dir,
                "dg-input-dots",
                &unit_seed(inputs, i),
                "dg-output-dots",
                outputs,
                true,
            )
        })
        .collect()
}

/// One `dg-eval` run: writes the seed file, runs, reads the result file.
fn sweep(
    dir: &Path,
    seed_file: &str,
    seed: &str,
    result_file: &str,
    count: usize,
    forward: bool,
) -> Result<Vec<f64>, String> {
    let text = run_dg_eval(dir, seed_file, seed, result_file, forward)?;
    let values = parse_numbers(&text).map_err(|e| format!("{result_file}: {e}"))?;
    if values.len() == count {
        Ok(values)
    } else {
        Err(format!(
            "{result_file} has {} values, expected {count}",
            values.len()
        ))
    }
}

/// Writes `seed` to `DIR/seed_file`, runs `dg-eval DIR` (`--forward`) and
/// returns the text of `DIR/result_file`.
pub(crate) fn run_dg_eval(
    dir: &Path,
    seed_file: &str,
    seed: &str,
    result_file: &str,
    forward: bool,
) -> Result<String, String> {
    fs::write(dir.join(seed_file), seed)
        .map_err(|e| format!("cannot write {}: {e}", dir.join(seed_file).display()))?;
    let _ = fs::remove_file(dir.join(result_file));
    let mut invocation = Invocation::new(dg_eval()).arg(dir);
    if forward {
        invocation = invocation.arg("--forward");
    }
    let outcome = run_native(&invocation, None);
    if !outcome.status.success() {
        return Err(format!(
            "`{}` failed: {}",
            invocation.display(),
            outcome_text(&outcome)
        ));
    }
    fs::read_to_string(dir.join(result_file))
        .map_err(|e| format!("`{}` wrote no {result_file}: {e}", invocation.display()))
}

/// Compares both sweeps with a Jacobian; one line per difference.
fn sweep_differences(
    sweeps: &Sweeps,
    jacobian: &[Vec<f64>],
    input_names: &[&str],
    output_names: &[&str],
    tolerance: f64,
) -> Vec<String> {
    let compare = |direction: &str, k: usize, i: usize, actual: f64| {
        let expected = jacobian[k][i];
        (!within(actual, expected, tolerance) || actual.is_nan()).then(|| {
            format!(
                "{direction}: d {}/d {} expected {expected:?}, got {actual:?}",
                output_names[k], input_names[i]
            )
        })
    };
    let mut problems = Vec::new();
    for (k, row) in sweeps.reverse.iter().enumerate() {
        match row {
            Ok(bars) => problems.extend(
                bars.iter()
                    .enumerate()
                    .filter_map(|(i, &bar)| compare("reverse (bars)", k, i, bar)),
            ),
            Err(e) => problems.push(format!("reverse sweep for {}: {e}", output_names[k])),
        }
    }
    for (i, column) in sweeps.forward.iter().enumerate() {
        match column {
            Ok(dots) => problems.extend(
                dots.iter()
                    .enumerate()
                    .filter_map(|(k, &dot)| compare("forward (dots)", k, i, dot)),
            ),
            Err(e) => problems.push(format!("forward sweep for {}: {e}", input_names[i])),
        }
    }
    problems
}

/// The full check: native values, a recording with the same output, and
/// the Jacobian from reverse and forward sweeps over its tape.
pub fn check_recording(test: &str, formula: &Formula, axis: Axis) {
    let program = formula_program(axis);
    let invocation = formula_invocation(&program, formula);
    let native = run_native(&invocation, None);
    native_values_checked(test, formula, axis, &invocation, &native);
    let dir = record_dir(test);
    let inputs: Vec<&str> = formula.inputs.iter().map(|(n, _)| *n).collect();
    let jacobian = (formula.jacobian)(&formula.input_values());
    let problems = match record_and_sweep(
        &invocation,
        None,
        &native,
        &dir,
        inputs.len(),
        formula.outputs.len(),
    ) {
        Ok(sweeps) => sweep_differences(
            &sweeps,
            &jacobian,
            &inputs,
            formula.outputs,
            axis.float.tolerance().derivative,
        ),
        Err(reason) => vec![reason],
    };
    finish_recording(test, &formula.describe(), axis, &invocation, &dir, problems);
}

fn finish_recording(
    test: &str,
    subject: &str,
    axis: Axis,
    invocation: &Invocation,
    dir: &Path,
    problems: Vec<String>,
) {
    if problems.is_empty() {
        let _ = fs::remove_dir_all(dir);
        return;
    }
    fail(
        test,
        "the recording or its derivatives are wrong",
        subject,
        axis,
        &format!(
            "  {}\n  command: {}\n  record directory (kept): {}",
            problems.join("\n  "),
            invocation.display(),
            dir.display()
        ),
    );
}

// ---------------------------------------------------------------------------
// Forward mode
// ---------------------------------------------------------------------------

/// `invocation` with the tangent hooks on (`seeds` for the inputs, the
/// output tangents to `out`), and the two settings as a command line
/// shows them.
pub(crate) fn with_dot_hooks(
    invocation: &Invocation,
    seeds: &[f64],
    out: &Path,
) -> (Invocation, String) {
    let seeds: Vec<String> = seeds.iter().map(|v| format!("{v:?}")).collect();
    let seeds = seeds.join(" ");
    let settings = format!("{DOT_SEEDS_VAR}='{seeds}' {DOT_OUT_VAR}={}", out.display());
    let hooked = invocation
        .clone()
        .env(DOT_SEEDS_VAR, seeds)
        .env(DOT_OUT_VAR, out);
    (hooked, settings)
}

/// The numbers the hooks wrote to `path`: `Err` unless there are `count`.
fn dot_file(path: &Path, count: usize) -> Result<Vec<f64>, String> {
    let text = fs::read_to_string(path)
        .map_err(|e| format!("the program wrote no {}: {e}", path.display()))?;
    let values = parse_numbers(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if values.len() == count {
        Ok(values)
    } else {
        Err(format!(
            "{} has {} numbers, expected one per output: {count}",
            path.display(),
            values.len()
        ))
    }
}

/// `dot::`: the native values; the hooks change nothing natively or in
/// record mode (stdout byte for byte, output tangents left NaN); then, for
/// each input i, a run with `DGAD_MODE=dot` and a unit tangent on input i
/// must behave as the native run, and its output tangents must match column
/// i of the Jacobian and the forward sweep of `dg-eval` over one recording
/// (seeded with the same unit vector), both to the type's tolerance.
pub fn check_dot(test: &str, formula: &Formula, axis: Axis) {
    let program = formula_program(axis);
    let invocation = formula_invocation(&program, formula);
    let native = run_native(&invocation, None);
    native_values_checked(test, formula, axis, &invocation, &native);
    let dir = record_dir(test);
    let inputs: Vec<&str> = formula.inputs.iter().map(|(n, _)| *n).collect();
    let (n_in, n_out) = (inputs.len(), formula.outputs.len());
    let jacobian = (formula.jacobian)(&formula.input_values());
    let tolerance = axis.float.tolerance().derivative;
    let unit = |i: usize| -> Vec<f64> { (0..n_in).map(|j| f64::from(u8::from(i == j))).collect() };
    let mut problems = Vec::new();
    let mut commands = Vec::new();

    // Natively and in record mode the requests must leave memory alone:
    // the output tangents stay NaN.
    let untouched = |what: &str, out: &Path, problems: &mut Vec<String>| match dot_file(out, n_out)
    {
        Ok(dots) if dots.iter().all(|d| d.is_nan()) => {}
        Ok(dots) => problems.push(format!(
            "{what}: DG_GET_DOTVALUE changed its buffer (NaN before), got {dots:?}"
        )),
        Err(e) => problems.push(format!("{what}: {e}")),
    };
    let out = dir.join("dots-native");
    let (hooked, settings) = with_dot_hooks(&invocation, &unit(0), &out);
    let outcome = run_native(&hooked, None);
    if outcome.status == native.status && outcome.stdout == native.stdout {
        untouched("the native run", &out, &mut problems);
    } else {
        problems.push(format!(
            "the native run with the tangent hooks on (`{settings} {}`) does not behave as \
             without them\n--- without ---\n{}\n--- with ---\n{}",
            hooked.display(),
            outcome_text(&native),
            outcome_text(&outcome)
        ));
    }
    let out = dir.join("dots-record");
    let (hooked, settings) = with_dot_hooks(&invocation, &unit(0), &out);
    let forward = match record_checked(&hooked, None, &native, &dir, n_in, n_out) {
        Ok(()) => {
            untouched("the recording", &out, &mut problems);
            forward_sweeps(&dir, n_in, n_out)
        }
        Err(reason) => {
            problems.push(format!("with the tangent hooks on ({settings}): {reason}"));
            Vec::new()
        }
    };

    for i in 0..n_in {
        let out = dir.join(format!("dots-{i}"));
        let (hooked, settings) = with_dot_hooks(&invocation, &unit(i), &out);
        let dotted = run_under_dgad(&hooked, None, &[("DGAD_MODE", "dot")]);
        commands.push(format!(
            "{settings} DGAD_MODE=dot LD_PRELOAD={} {}",
            dgad_lib().display(),
            hooked.display()
        ));
        if dotted.status != native.status || dotted.stdout != native.stdout {
            problems.push(format!(
                "the dot-mode run for d/d {} does not behave as the native run\n\
                 --- native ---\n{}\n--- dot mode ---\n{}",
                inputs[i],
                outcome_text(&native),
                outcome_text(&dotted)
            ));
            continue;
        }
        let dots = match dot_file(&out, n_out) {
            Ok(dots) => dots,
            Err(e) => {
                problems.push(format!("dot mode, d/d {}: {e}", inputs[i]));
                continue;
            }
        };
        for (k, &dot) in dots.iter().enumerate() {
            let expected = jacobian[k][i];
            if !within(dot, expected, tolerance) || dot.is_nan() {
                problems.push(format!(
                    "dot mode: d {}/d {} expected {expected:?}, got {dot:?}",
                    formula.outputs[k], inputs[i]
                ));
            }
            match forward.get(i) {
                Some(Ok(column)) if !within(dot, column[k], tolerance) || dot.is_nan() => {
                    problems.push(format!(
                        "dot mode and dg-eval --forward disagree: d {}/d {} is {dot:?} in dot \
                         mode, {:?} from the tape",
                        formula.outputs[k], inputs[i], column[k]
                    ));
                }
                _ => {}
            }
        }
    }
    for (i, column) in forward.iter().enumerate() {
        if let Err(e) = column {
            problems.push(format!("forward sweep for {}: {e}", inputs[i]));
        }
    }
    if problems.is_empty() {
        let _ = fs::remove_dir_all(&dir);
        return;
    }
    fail(
        test,
        "the dot-mode runs or their tangents are wrong",
        &formula.describe(),
        axis,
        &format!(
            "  {}\n  dot-mode runs:\n    {}\n  record directory (kept, with the dots-* files \
             the runs wrote): {}",
            problems.join("\n  "),
            commands.join("\n    "),
            dir.display()
        ),
    );
}

// ---------------------------------------------------------------------------
// The example programs
// ---------------------------------------------------------------------------

/// Inputs of `readme_gradient.c`.
const README_INPUTS: [f64; 3] = [1.5, -0.75, 2.0];

/// Its two outputs, computed here to check the native run.
fn readme_reference(x: &[f64]) -> Vec<f64> {
    vec![
        x[0] * x[1] + x[1] * x[2] * x[2] - x[0] / x[2],
        (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt(),
    ]
}

/// The example's Jacobian by central differences of native runs with step
/// `h_scale * max(|x_i|, 1)`: `jacobian[k][i]`.
fn readme_finite_differences(program: &Path, h_scale: f64) -> Vec<Vec<f64>> {
    let run_at = |x: &[f64]| -> Vec<f64> {
        let invocation = Invocation::new(program).args(x.iter().map(|v| format!("{v:?}")));
        let outcome = run_native(&invocation, None);
        printed_values(&outcome, 2).unwrap_or_else(|e| panic!("`{}`: {e}", invocation.display()))
    };
    let mut jacobian = vec![vec![0.0; 3]; 2];
    for i in 0..3 {
        let h = h_scale * README_INPUTS[i].abs().max(1.0);
        let mut plus = README_INPUTS;
        let mut minus = README_INPUTS;
        plus[i] += h;
        minus[i] -= h;
        let (f_plus, f_minus) = (run_at(&plus), run_at(&minus));
        for k in 0..2 {
            jacobian[k][i] = (f_plus[k] - f_minus[k]) / (2.0 * h);
        }
    }
    jacobian
}

/// The README's example: 3 inputs, 2 outputs. Natively: the values, and
/// finite differences that agree with themselves at two step sizes; with
/// `record`, both sweeps against those finite differences (1e-6).
fn check_readme_gradient(test: &str, axis: Axis, record: bool) {
    const SUBJECT: &str = "testsuite/derivatives/readme_gradient.c, inputs 1.5 -0.75 2.0";
    let program = example_program("readme_gradient.c", axis);
    let invocation = Invocation::new(&program).args(README_INPUTS.iter().map(|v| format!("{v:?}")));
    let native = run_native(&invocation, None);
    let values = printed_values(&native, 2).unwrap_or_else(|e| {
        fail(
            test,
            "the native run failed",
            SUBJECT,
            axis,
            &format!("  {e}"),
        )
    });
    let expected = readme_reference(&README_INPUTS);
    for k in 0..2 {
        if !within(values[k], expected[k], 1e-12) {
            fail(
                test,
                "the native run printed a wrong value",
                SUBJECT,
                axis,
                &format!(
                    "  output {k}: expected {:?}, got {:?}",
                    expected[k], values[k]
                ),
            );
        }
    }
    let jacobian = readme_finite_differences(&program, 1e-6);
    let coarse = readme_finite_differences(&program, 2e-6);
    for k in 0..2 {
        for i in 0..3 {
            if !within(jacobian[k][i], coarse[k][i], 1e-6) {
                fail(
                    test,
                    "finite differences are not converged",
                    SUBJECT,
                    axis,
                    &format!(
                        "  d f{k}/d x{i}: {:?} with h = 1e-6, {:?} with h = 2e-6",
                        jacobian[k][i], coarse[k][i]
                    ),
                );
            }
        }
    }
    if !record {
        return;
    }
    let dir = record_dir(test);
    let problems = match record_and_sweep(&invocation, None, &native, &dir, 3, 2) {
        Ok(sweeps) => {
            sweep_differences(&sweeps, &jacobian, &["x0", "x1", "x2"], &["f0", "f1"], 1e-6)
        }
        Err(reason) => vec![reason],
    };
    finish_recording(test, SUBJECT, axis, &invocation, &dir, problems);
}

/// Derivgrind's pattern: read x from stdin, `y = x*x*x`; one bar of 1.0
/// gives `3x²`, and so does one dot.
fn check_derivgrind_cube(test: &str, axis: Axis, record: bool) {
    const SUBJECT: &str = "testsuite/derivatives/derivgrind_cube.c, x = 1.5 on stdin";
    const X: f64 = 1.5;
    let program = example_program("derivgrind_cube.c", axis);
    let invocation = Invocation::new(&program);
    let stdin = format!("{X:?}\n");
    let native = run_native(&invocation, Some(stdin.as_bytes()));
    let values = printed_values(&native, 1).unwrap_or_else(|e| {
        fail(
            test,
            "the native run failed",
            SUBJECT,
            axis,
            &format!("  {e}"),
        )
    });
    if values[0] != X * X * X {
        fail(
            test,
            "the native run printed a wrong value",
            SUBJECT,
            axis,
            &format!("  y: expected {:?}, got {:?}", X * X * X, values[0]),
        );
    }
    if !record {
        return;
    }
    let dir = record_dir(test);
    let jacobian = vec![vec![3.0 * X * X]];
    let problems = match record_and_sweep(&invocation, Some(stdin.as_bytes()), &native, &dir, 1, 1)
    {
        Ok(sweeps) => sweep_differences(&sweeps, &jacobian, &["x"], &["y"], 1e-12),
        Err(reason) => vec![reason],
    };
    finish_recording(test, SUBJECT, axis, &invocation, &dir, problems);
}

// ---------------------------------------------------------------------------
// Checks of the table itself
// ---------------------------------------------------------------------------

/// The formula table is well formed: unique identifiers, inputs exact in
/// `float`, Jacobians of the right shape, every absence explained, and
/// enough formulas.
pub fn check_formula_table() {
    let mut problems = Vec::new();
    let mut names = std::collections::HashSet::new();
    for formula in FORMULAS {
        let name = formula.name;
        let identifier = |s: &str| {
            s.starts_with(|c: char| c.is_ascii_lowercase())
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        };
        if !identifier(name) || name.len() > 50 {
            problems.push(format!("{name:?} is not a short lower-case identifier"));
        }
        if !names.insert(name) {
            problems.push(format!("{name}: defined twice"));
        }
        if formula.about.is_empty() {
            problems.push(format!("{name}: says nothing about what it tests"));
        }
        if formula.inputs.is_empty() || formula.outputs.is_empty() {
            problems.push(format!("{name}: needs inputs and outputs"));
        }
        for &(input, value) in formula.inputs {
            if !identifier(input) || f64::from(value as f32) != value {
                problems.push(format!(
                    "{name}: input {input} = {value:?} must be an identifier with a value exact in float"
                ));
            }
        }
        let x = formula.input_values();
        let value = (formula.value)(&x);
        let jacobian = (formula.jacobian)(&x);
        if value.len() != formula.outputs.len() || value.iter().any(|v| !v.is_finite()) {
            problems.push(format!(
                "{name}: value() must give one finite number per output"
            ));
        }
        if jacobian.len() != formula.outputs.len()
            || jacobian
                .iter()
                .any(|row| row.len() != formula.inputs.len() || row.iter().any(|v| !v.is_finite()))
        {
            problems.push(format!(
                "{name}: jacobian() must be {} rows of {} finite numbers",
                formula.outputs.len(),
                formula.inputs.len()
            ));
        }
        for language in Language::ALL {
            if formula.snippet(language) == Err("") {
                problems.push(format!(
                    "{name}: no {} snippet and no reason why",
                    language.label()
                ));
            }
        }
        if matches!(formula.c, Snippet::SameAsC) || matches!(formula.fortran, Snippet::SameAsC) {
            problems.push(format!("{name}: SameAsC is for the C++ snippet only"));
        }
    }
    if FORMULAS.len() < 60 {
        problems.push(format!(
            "only {} formulas; the matrix needs at least 60",
            FORMULAS.len()
        ));
    }
    assert!(
        problems.is_empty(),
        "the formula table has problems:\n  {}",
        problems.join("\n  ")
    );
}

/// The hand-written Jacobians agree with central differences of the
/// hand-written values (a check of the table, not of dgad: catches a typo
/// in either).
pub fn check_reference_jacobians() {
    let mut problems = Vec::new();
    for formula in FORMULAS.iter().filter(|f| f.smooth) {
        let x = formula.input_values();
        let jacobian = (formula.jacobian)(&x);
        for i in 0..x.len() {
            let h = 1e-6 * x[i].abs().max(1.0);
            let (mut plus, mut minus) = (x.clone(), x.clone());
            plus[i] += h;
            minus[i] -= h;
            let (f_plus, f_minus) = ((formula.value)(&plus), (formula.value)(&minus));
            for k in 0..formula.outputs.len() {
                let difference = (f_plus[k] - f_minus[k]) / (2.0 * h);
                if !within(jacobian[k][i], difference, 1e-5) {
                    problems.push(format!(
                        "{}: d {}/d {} is {:?} by hand, {difference:?} by finite differences",
                        formula.name, formula.outputs[k], formula.inputs[i].0, jacobian[k][i]
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "hand-written Jacobians disagree with their values:\n  {}",
        problems.join("\n  ")
    );
}
