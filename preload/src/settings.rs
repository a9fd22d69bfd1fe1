//! The `DGAD_*` environment variables: one table of every name the runtime
//! knows, and the one way each kind of value is read.
//!
//! Rules, the same for every setting (README, "Settings"):
//! - an empty value (`DGAD_STATS=`) is the same as an unset variable;
//! - a switch is `1`/`0`, `yes`/`no`, `true`/`false` or `on`/`off`, in any
//!   case; anything else stops the program before it runs (status 125);
//! - a `DGAD_` name not in [`SETTINGS`] gets one warning line per process
//!   that reads the environment, and is otherwise ignored.
//!
//! Adding a setting: one row in [`SETTINGS`], one row in the README's table
//! (a unit test compares the two), and the code in `init::read_config` that
//! reads it through [`value`] or [`switch`].

use core::fmt;

/// How a setting's value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// On or off ([`parse_switch`]); `default` when unset or empty.
    Switch {
        /// The value when unset or empty.
        default: bool,
    },
    /// A path (file or directory).
    Path,
    /// A number of bytes, with an optional `K`, `M`, `G` or `T` suffix
    /// (`record::tape_limit` reads it).
    Size,
    /// One word of a fixed list.
    Choice(&'static [&'static str]),
    /// Not read by `libdgad.so`: a variable of dgad's Python package or test
    /// suite, which may be in the environment of programs run under the
    /// preload. Known, so that it is not warned about.
    Tool,
}

/// One `DGAD_` variable.
#[derive(Debug)]
pub struct Setting {
    /// The variable's name.
    pub name: &'static str,
    /// How its value is read.
    pub kind: Kind,
    /// What it does, in one line.
    pub meaning: &'static str,
}

const fn setting(name: &'static str, kind: Kind, meaning: &'static str) -> Setting {
    Setting {
        name,
        kind,
        meaning,
    }
}

/// Every `DGAD_` variable, settings of the runtime first (the README's
/// table lists those, in this order), then the tools'.
pub const SETTINGS: &[Setting] = &[
    setting(
        "DGAD_RECORD",
        Kind::Path,
        "record mode: the record directory",
    ),
    setting(
        "DGAD_MODE",
        Kind::Choice(&["null", "record", "dot"]),
        "null (translate only), record (the default when DGAD_RECORD is set) or dot (forward mode)",
    ),
    setting(
        "DGAD_TAPE_LIMIT",
        Kind::Size,
        "record mode: the largest tape, in bytes (K, M, G, T suffixes)",
    ),
    setting(
        "DGAD_GRAD",
        Kind::Choice(&["ones", "seeds", "jacobian"]),
        "record mode: keep the tape in memory and write the gradient at exit (dg-input-bars, or dg-jacobian)",
    ),
    setting(
        "DGAD_TAPE_FORMAT",
        Kind::Choice(&["derivgrind", "compact"]),
        "record mode: the tape file, dg-tape (Derivgrind's 32-byte blocks, the default) or dg-tape-compact (dgad's own, a quarter of the bytes)",
    ),
    setting(
        "DGAD_TAPE_MEMORY",
        Kind::Size,
        "with DGAD_GRAD: the memory the tape may take before it goes to a file",
    ),
    setting(
        "DGAD_GDBSERVER",
        Kind::Path,
        "stop before the program's first instruction and wait for gdb (`target remote | VGDB --pid=PID`, VGDB being this value; Derivgrind's monitor commands get, set, mark, index)",
    ),
    setting(
        "DGAD_STATIC_EXEC",
        Kind::Path,
        "set by dgad for a statically linked program: the program the runtime maps and runs inside the host `dgad-static-host` (decision 45)",
    ),
    setting(
        "DGAD_STATS",
        Kind::Switch { default: false },
        "one statistics line on stderr at exit",
    ),
    setting(
        "DGAD_TAPE_WRITER",
        Kind::Switch { default: true },
        "record mode: full tape chunks written by dgad's writer thread",
    ),
    setting(
        "DGAD_LAZY",
        Kind::Switch { default: true },
        "record and dot mode: plain translations until a client request may make data active (decision 53)",
    ),
    setting(
        "DGAD_TANGENT_CACHE",
        Kind::Switch { default: true },
        "dot mode on CPUs with AVX-512: tangents kept in xmm16–xmm28 within a block (decision 46)",
    ),
    setting(
        "DGAD_MATHWRAP",
        Kind::Switch { default: true },
        "record and dot mode: libm calls answered natively with analytic derivatives",
    ),
    setting("DGAD_LOG", Kind::Path, "debug log appended to this file"),
    setting(
        "DGAD_TRACE",
        Kind::Switch { default: false },
        "with DGAD_LOG: log every instrumented instruction",
    ),
    setting(
        "DGAD_CPUID",
        Kind::Choice(&["avx2", "native"]),
        "the CPU features the program's cpuid reports",
    ),
    setting(
        "DGAD_DISABLE",
        Kind::Switch { default: false },
        "load the library but run natively",
    ),
    setting(
        "DGAD_DUMP_CACHE",
        Kind::Path,
        "write the code cache to this file at exit",
    ),
    setting(
        "DGAD_LIB",
        Kind::Tool,
        "Python package, test suite: libdgad.so to use",
    ),
    setting(
        "DGAD_EVAL",
        Kind::Tool,
        "Python package, test suite: dg-eval to use",
    ),
    setting(
        "DGAD_PY_CLIENT",
        Kind::Tool,
        "Python package: its client library",
    ),
    setting(
        "DGAD_PY_CACHE",
        Kind::Tool,
        "Python package: where it builds its client library",
    ),
    setting(
        "DGAD_PY_KEEP",
        Kind::Tool,
        "Python package: keep grad's record directories",
    ),
    setting(
        "DGAD_INCLUDE",
        Kind::Tool,
        "test suite: the C include directory",
    ),
    setting(
        "DGAD_FORTRAN_CLIENT",
        Kind::Tool,
        "test suite: the Fortran client",
    ),
    setting(
        "DGAD_TEST_TIMEOUT_SECS",
        Kind::Tool,
        "test suite: limit for one run",
    ),
    setting("DGAD_BLESS", Kind::Tool, "test suite: rewrite golden files"),
    setting(
        "DGAD_SELFTEST_REQUIRE_ALL",
        Kind::Tool,
        "client self-test: missing tools fail",
    ),
];

/// The accepted spellings of a switch, for messages.
pub const SWITCH_SPELLINGS: &str = "1/0, yes/no, true/false or on/off (any case)";

/// `Some(on)` if `v` spells a switch position ([`SWITCH_SPELLINGS`]).
pub fn parse_switch(v: &[u8]) -> Option<bool> {
    const ON: [&[u8]; 4] = [b"1", b"yes", b"true", b"on"];
    const OFF: [&[u8]; 4] = [b"0", b"no", b"false", b"off"];
    let is = |words: &[&[u8]]| words.iter().any(|w| w.eq_ignore_ascii_case(v));
    if is(&ON) {
        Some(true)
    } else if is(&OFF) {
        Some(false)
    } else {
        None
    }
}

/// The row of `name`.
///
/// # Panics
/// If `name` is not in [`SETTINGS`] (a setting read without its row).
fn row(name: &str) -> &'static Setting {
    SETTINGS
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} has no row in settings::SETTINGS"))
}

/// Each entry (`NAME=value`) of the NULL-terminated environment `envp`.
fn entries(envp: *const *const libc::c_char) -> impl Iterator<Item = &'static [u8]> {
    let mut p = envp;
    core::iter::from_fn(move || {
        if p.is_null() {
            return None;
        }
        // SAFETY: envp is the NULL-terminated environment array the loader
        // passes to initialisers; its strings live for the whole process.
        let entry = unsafe { *p };
        if entry.is_null() {
            p = core::ptr::null();
            return None;
        }
        // SAFETY: as above; p stays within the array (its NULL ends the walk).
        p = unsafe { p.add(1) };
        // SAFETY: a non-NULL entry is a NUL-terminated string (as above).
        Some(unsafe { core::ffi::CStr::from_ptr(entry) }.to_bytes())
    })
}

/// The value of `name` in `envp`; `None` if unset or empty.
pub fn value(envp: *const *const libc::c_char, name: &str) -> Option<&'static [u8]> {
    let name = name.as_bytes();
    entries(envp)
        .find_map(|e| e.strip_prefix(name)?.strip_prefix(b"="))
        .filter(|v| !v.is_empty())
}

/// The position of switch `name` in `envp` (its default if unset or
/// empty); another value stops the process with status 125.
pub fn switch(envp: *const *const libc::c_char, name: &str) -> bool {
    let Kind::Switch { default } = row(name).kind else {
        panic!("{name} is not a switch");
    };
    match value(envp, name) {
        None => default,
        Some(v) => parse_switch(v).unwrap_or_else(|| {
            fail(format_args!(
                "{name}={} is not a switch: use {SWITCH_SPELLINGS}; unset or empty is {}",
                String::from_utf8_lossy(v),
                if default { "on" } else { "off" }
            ))
        }),
    }
}

fn fail(msg: fmt::Arguments) -> ! {
    crate::dgad_eprintln!("{}", msg);
    crate::sys::exit_group(125)
}

/// One warning line for each `DGAD_` variable of `envp` that is not in
/// [`SETTINGS`] (a typo would otherwise be ignored without a word).
pub fn warn_unknown(envp: *const *const libc::c_char) {
    for entry in entries(envp).filter(|e| e.starts_with(b"DGAD_")) {
        let name = entry.split(|&c| c == b'=').next().unwrap_or(entry);
        if SETTINGS.iter().any(|s| s.name.as_bytes() == name) {
            continue;
        }
        let shown = String::from_utf8_lossy(&name[..name.len().min(64)]);
        match closest(name) {
            Some(near) => crate::dgad_eprintln!(
                "unknown setting {shown} ignored: did you mean {near}? (known: {})",
                Known
            ),
            None => crate::dgad_eprintln!("unknown setting {shown} ignored (known: {})", Known),
        }
    }
}

/// The runtime's settings, comma-separated.
struct Known;

impl fmt::Display for Known {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = SETTINGS.iter().filter(|s| s.kind != Kind::Tool);
        for (i, s) in names.enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(s.name)?;
        }
        Ok(())
    }
}

/// The known name closest to `name`, if a few edits away.
fn closest(name: &[u8]) -> Option<&'static str> {
    SETTINGS
        .iter()
        .map(|s| (edit_distance(name, s.name.as_bytes()), s.name))
        .filter(|&(d, _)| d <= 3)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// Levenshtein distance (insertions, deletions, substitutions), ignoring
/// case; names longer than 64 bytes are far from everything.
fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    const MAX: usize = 64;
    if a.len() > MAX || b.len() > MAX {
        return usize::MAX;
    }
    let mut prev = [0usize; MAX + 1];
    let mut cur = [0usize; MAX + 1];
    for (j, p) in prev.iter_mut().enumerate().take(b.len() + 1) {
        *p = j;
    }
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(!ca.eq_ignore_ascii_case(&cb));
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        core::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Why nothing records, for a message in null mode: from the `DGAD_`
/// entries the process started with (`Config::own_env`).
pub fn why_not_recording(own_env: &[Vec<u8>]) -> &'static str {
    let record_set = own_env
        .iter()
        .any(|e| e.starts_with(b"DGAD_RECORD=") && e.len() > b"DGAD_RECORD=\0".len());
    if record_set {
        "DGAD_MODE=null"
    } else {
        "DGAD_RECORD is not set"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_have_one_spelling_set() {
        for on in ["1", "yes", "YES", "true", "True", "on", "ON"] {
            assert_eq!(parse_switch(on.as_bytes()), Some(true), "{on}");
        }
        for off in ["0", "no", "No", "false", "FALSE", "off", "Off"] {
            assert_eq!(parse_switch(off.as_bytes()), Some(false), "{off}");
        }
        for bad in ["", "maybe", "2", "y", "n", "enable", " 1", "1 "] {
            assert_eq!(parse_switch(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn empty_values_are_unset() {
        let entries = [
            c"DGAD_STATS=".as_ptr(),
            c"DGAD_LOG=/tmp/x".as_ptr(),
            core::ptr::null(),
        ];
        assert_eq!(value(entries.as_ptr(), "DGAD_STATS"), None);
        assert_eq!(value(entries.as_ptr(), "DGAD_LOG"), Some(&b"/tmp/x"[..]));
        assert_eq!(value(entries.as_ptr(), "DGAD_LO"), None);
        assert!(!switch(entries.as_ptr(), "DGAD_STATS"));
        assert!(switch(entries.as_ptr(), "DGAD_MATHWRAP"));
    }

    #[test]
    fn typos_find_their_setting() {
        assert_eq!(closest(b"DGAD_RECORDS"), Some("DGAD_RECORD"));
        assert_eq!(closest(b"DGAD_STAT"), Some("DGAD_STATS"));
        assert_eq!(closest(b"DGAD_mathwarp"), Some("DGAD_MATHWRAP"));
        assert_eq!(closest(b"DGAD_SOMETHING_ELSE_ENTIRELY"), None);
    }

    #[test]
    fn names_are_unique_and_prefixed() {
        for (i, s) in SETTINGS.iter().enumerate() {
            assert!(s.name.starts_with("DGAD_"), "{}", s.name);
            assert!(!s.meaning.is_empty(), "{}", s.name);
            assert!(
                SETTINGS[..i].iter().all(|t| t.name != s.name),
                "{} twice",
                s.name
            );
        }
    }

    /// The README's variable table lists exactly the runtime's settings, in
    /// the table's order.
    #[test]
    fn readme_table_lists_every_setting() {
        let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"));
        let in_readme: Vec<&str> = readme
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter(|l| l.starts_with("DGAD_"))
            .map(|l| {
                let end = l
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(l.len());
                &l[..end]
            })
            .collect();
        let known: Vec<&str> = SETTINGS
            .iter()
            .filter(|s| s.kind != Kind::Tool)
            .map(|s| s.name)
            .collect();
        assert_eq!(in_readme, known, "README.md's table vs settings::SETTINGS");
    }
}
