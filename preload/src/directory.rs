//! The record directory, opened once and trusted only after checks: every
//! file of the recording is then created relative to that descriptor, under
//! a fresh temporary name (`O_CREAT|O_EXCL|O_NOFOLLOW`) renamed into place,
//! so a link another user planted in the directory is replaced, never
//! followed (issue 16).
//!
//! A directory is refused when it is owned by another user, writable by
//! every user without the sticky bit, or reached through a symbolic link
//! owned by another user: in each case someone else could swap the files
//! between the check and their use.

use crate::sys;

/// Results of `dg-eval` that a new recording makes stale: removed when it
/// creates its files.
const STALE_RESULTS: [&str; 3] = [
    tape_format::file_name::INPUT_BARS,
    tape_format::file_name::OUTPUT_DOTS,
    tape_format::file_name::JACOBIAN,
];

/// Names the process that recorded into a directory (its id and start
/// time): a later image of the same process (after `execve`) finds it and
/// records into a subdirectory instead of replacing the recording.
pub const PROCESS_MARK: &str = ".dgad-recorded-by";

/// `stat` of `path` (not following a final symbolic link) or of `fd`.
fn stat_of(dirfd: i64, path: &[u8], flags: i32) -> Result<libc::stat, i64> {
    // SAFETY: an all-zero `stat` is a valid value of the plain C struct.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: path is NUL-terminated; the kernel writes only `st`.
    let r = unsafe {
        sys::syscall6(
            libc::SYS_newfstatat,
            dirfd as u64,
            path.as_ptr() as u64,
            &mut st as *mut libc::stat as u64,
            flags as u64,
            0,
            0,
        )
    };
    if r < 0 {
        Err(-r)
    } else {
        Ok(st)
    }
}

fn fstat(fd: i32) -> Result<libc::stat, i64> {
    stat_of(fd as i64, b"\0", libc::AT_EMPTY_PATH)
}

fn openat(dirfd: i32, name: &[u8], flags: i32, mode: u32) -> i64 {
    // SAFETY: name is NUL-terminated.
    unsafe {
        sys::syscall6(
            libc::SYS_openat,
            dirfd as u64,
            name.as_ptr() as u64,
            (flags | libc::O_CLOEXEC) as u64,
            u64::from(mode),
            0,
            0,
        )
    }
}

fn unlinkat(dirfd: i32, name: &[u8]) -> i64 {
    // SAFETY: name is NUL-terminated; unlinkat never follows a link.
    unsafe { sys::syscall3(libc::SYS_unlinkat, dirfd as u64, name.as_ptr() as u64, 0) }
}

fn c_name(name: &[u8]) -> Vec<u8> {
    let mut v = name.to_vec();
    v.push(0);
    v
}

/// Why a directory (already open as `fd`) may not hold a recording, or
/// `None`. `what` names it in the message.
fn untrusted(fd: i32, what: &str) -> Option<String> {
    let st = match fstat(fd) {
        Ok(st) => st,
        Err(e) => {
            return Some(format!(
                "cannot inspect {what}: {}",
                crate::sys::errno_text(e)
            ))
        }
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Some(format!("{what} is not a directory"));
    }
    let me = sys::geteuid();
    if st.st_uid != me {
        return Some(format!(
            "{what} is owned by user {}, not by you (user {me}): its owner could replace \
             the record files; use a directory of your own, e.g. `mktemp -d`",
            st.st_uid
        ));
    }
    if st.st_mode & 0o002 != 0 && st.st_mode & libc::S_ISVTX == 0 {
        return Some(format!(
            "{what} is writable by every user and has no sticky bit: anyone could replace \
             the record files; `chmod o-w` it or use a directory of your own"
        ));
    }
    None
}

/// Opens the directory `path` (absolute, no NUL), creating it if missing,
/// and checks it (see the module). `shown` names it in messages. Returns
/// its descriptor.
pub fn open(path: &[u8], shown: &str) -> Result<i32, String> {
    let what = format!("the record directory DGAD_RECORD={shown}");
    let p = c_name(path);
    // SAFETY: p is NUL-terminated.
    let r = unsafe { sys::syscall3(libc::SYS_mkdir, p.as_ptr() as u64, 0o755, 0) };
    if r < 0 && r != -(libc::EEXIST as i64) {
        return Err(format!(
            "cannot create {what}: {}",
            crate::sys::errno_text(-r)
        ));
    }
    let st = stat_of(libc::AT_FDCWD as i64, &p, libc::AT_SYMLINK_NOFOLLOW)
        .map_err(|e| format!("cannot inspect {what}: {}", crate::sys::errno_text(e)))?;
    let mut flags = libc::O_RDONLY | libc::O_DIRECTORY;
    if st.st_mode & libc::S_IFMT == libc::S_IFLNK {
        // A link is followed only when its owner is the user or root, as
        // the kernel's protected_symlinks does in sticky directories.
        if st.st_uid != sys::geteuid() && st.st_uid != 0 {
            return Err(format!(
                "{what} is a symbolic link owned by user {}, not by you: its owner could point \
                 it anywhere; give the directory itself",
                st.st_uid
            ));
        }
    } else {
        // Not a link a moment ago: it must not have become one.
        flags |= libc::O_NOFOLLOW;
    }
    let fd = open_trusted(libc::AT_FDCWD, &p, flags, &what)?;
    if let Err(e) = probe(fd) {
        sys::close(fd);
        return Err(format!(
            "{what} is not writable: {}",
            crate::sys::errno_text(e)
        ));
    }
    Ok(fd)
}

/// Creates and removes a file in the directory, to fail at start rather
/// than at the first input when it cannot be written.
fn probe(dirfd: i32) -> Result<(), i64> {
    let name = temp_name(".dgad-write-test");
    let fd = create_exclusive(dirfd, &name)?;
    sys::close(fd);
    unlinkat(dirfd, &name);
    Ok(())
}

/// `.<base>.<pid>.tmp`, NUL-terminated.
fn temp_name(base: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(base.len() + 20);
    v.push(b'.');
    v.extend_from_slice(base.trim_start_matches('.').as_bytes());
    v.push(b'.');
    v.extend_from_slice(crate::init::pid().to_string().as_bytes());
    v.extend_from_slice(b".tmp\0");
    v
}

/// A new file `name` (NUL-terminated) in `dirfd`, never through a link; a
/// leftover of this name (a temporary of an earlier process with our id)
/// is removed first.
fn create_exclusive(dirfd: i32, name: &[u8]) -> Result<i32, i64> {
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
    let mut fd = openat(dirfd, name, flags, 0o644);
    if fd == -(libc::EEXIST as i64) {
        unlinkat(dirfd, name);
        fd = openat(dirfd, name, flags, 0o644);
    }
    if fd < 0 {
        Err(-fd)
    } else {
        Ok(fd as i32)
    }
}

/// A file of the recording: created under a temporary name, given
/// `contents`, and renamed to `name`, replacing whatever was there (a
/// link included, which is not followed).
pub fn create(dirfd: i32, name: &str, contents: &[u8]) -> Result<i32, i64> {
    let temp = temp_name(name);
    let fd = create_exclusive(dirfd, &temp)?;
    if let Err((e, _)) = sys::pwrite_all(fd, contents, 0) {
        sys::close(fd);
        unlinkat(dirfd, &temp);
        return Err(e);
    }
    let target = c_name(name.as_bytes());
    // SAFETY: both names are NUL-terminated; renameat replaces the target
    // entry itself, whatever it is, without following it.
    let r = unsafe {
        sys::syscall6(
            libc::SYS_renameat,
            dirfd as u64,
            temp.as_ptr() as u64,
            dirfd as u64,
            target.as_ptr() as u64,
            0,
            0,
        )
    };
    if r < 0 {
        sys::close(fd);
        unlinkat(dirfd, &temp);
        return Err(-r);
    }
    Ok(fd)
}

/// A file to be created later, maybe in signal context, and then renamed
/// into place: its directory and both names prepared (NUL-terminated) in
/// normal context, so that creating, writing and renaming it are system
/// calls alone, with no allocation.
pub struct PreparedFile {
    dirfd: i32,
    temp: Vec<u8>,
    target: Vec<u8>,
}

impl PreparedFile {
    /// `name` in `dirfd`, written first under this process's temporary name.
    pub fn new(dirfd: i32, name: &str) -> PreparedFile {
        PreparedFile {
            dirfd,
            temp: temp_name(name),
            target: c_name(name.as_bytes()),
        }
    }

    /// Creates the temporary file (replacing a leftover of ours, never
    /// through a link) and returns its descriptor. Signal-safe.
    pub fn create(&self) -> Result<i32, i64> {
        create_exclusive(self.dirfd, &self.temp)
    }

    /// Removes the file under its target name if it exists. Signal-safe.
    pub fn remove_target(&self) {
        unlinkat(self.dirfd, &self.target);
    }

    /// Renames the temporary file to the target name, replacing what is
    /// there without following it. Signal-safe.
    pub fn publish(&self) -> Result<(), i64> {
        // SAFETY: both names are NUL-terminated and live in `self`.
        let r = unsafe {
            sys::syscall6(
                libc::SYS_renameat,
                self.dirfd as u64,
                self.temp.as_ptr() as u64,
                self.dirfd as u64,
                self.target.as_ptr() as u64,
                0,
                0,
            )
        };
        if r < 0 {
            Err(-r)
        } else {
            Ok(())
        }
    }
}

/// Whether `dg-tape` is the user's own symbolic link to `/dev/null`: the
/// tape is then discarded (benchmarks measure the instrumented program
/// without the cost of the file). Only a link the user owns counts;
/// another's is replaced like any other file.
pub fn tape_discarded(dirfd: i32) -> bool {
    let name = c_name(tape_format::file_name::TAPE.as_bytes());
    let owned_link = stat_of(dirfd as i64, &name, libc::AT_SYMLINK_NOFOLLOW)
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK && st.st_uid == sys::geteuid());
    if !owned_link {
        return false;
    }
    let mut target = [0u8; 16];
    // SAFETY: name is NUL-terminated; the kernel writes at most
    // target.len() bytes into our buffer.
    let n = unsafe {
        sys::syscall6(
            libc::SYS_readlinkat,
            dirfd as u64,
            name.as_ptr() as u64,
            target.as_mut_ptr() as u64,
            target.len() as u64,
            0,
            0,
        )
    };
    n > 0 && &target[..n as usize] == b"/dev/null"
}

/// `/dev/null` opened for writing, for a discarded tape.
pub fn open_null() -> Result<i32, i64> {
    let fd = openat(libc::AT_FDCWD, b"/dev/null\0", libc::O_WRONLY, 0);
    if fd < 0 {
        Err(-fd)
    } else {
        Ok(fd as i32)
    }
}

/// Removes the results of an earlier evaluation and the tape they came
/// from (unless `keep_tape`: a discarded tape's link), before a new
/// recording's files replace the rest.
pub fn remove_stale(dirfd: i32, keep_tape: bool) -> Result<(), (i64, &'static str)> {
    let tape: &[&str] = if keep_tape {
        &[tape_format::file_name::COMPACT_TAPE]
    } else {
        &[
            tape_format::file_name::TAPE,
            tape_format::file_name::COMPACT_TAPE,
        ]
    };
    for name in STALE_RESULTS.iter().chain(tape) {
        let r = unlinkat(dirfd, &c_name(name.as_bytes()));
        if r < 0 && r != -(libc::ENOENT as i64) {
            return Err((-r, name));
        }
    }
    Ok(())
}

/// Removes the `exec-2`, `exec-3`, … subdirectories an earlier process
/// left (a new recording into `dirfd` replaces all of it): their record
/// files and results, and the directory itself when that empties it
/// (seeds the user wrote keep it). A link in their place is removed.
pub fn remove_exec_dirs(dirfd: i32) {
    for n in 2.. {
        let name = c_name(format!("exec-{n}").as_bytes());
        let sub = openat(
            dirfd,
            &name,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        );
        if sub == -(libc::ENOENT as i64) {
            return;
        }
        if sub >= 0 {
            let sub = sub as i32;
            let files = STALE_RESULTS.iter().chain(&[
                tape_format::file_name::TAPE,
                tape_format::file_name::COMPACT_TAPE,
                tape_format::file_name::INPUT_INDICES,
                tape_format::file_name::OUTPUT_INDICES,
                PROCESS_MARK,
            ]);
            for file in files {
                unlinkat(sub, &c_name(file.as_bytes()));
            }
            sys::close(sub);
            // SAFETY: name is NUL-terminated; only an empty directory goes.
            unsafe {
                sys::syscall3(
                    libc::SYS_unlinkat,
                    dirfd as u64,
                    name.as_ptr() as u64,
                    libc::AT_REMOVEDIR as u64,
                )
            };
        } else {
            unlinkat(dirfd, &name);
        }
    }
}

/// This process's identity across `execve`: its id and start time (clock
/// ticks after boot, `/proc/self/stat` field 22), as one line.
pub fn process_identity() -> Vec<u8> {
    let mut buf = [0u8; 1024];
    let mut start = &b"?"[..];
    let fd = openat(libc::AT_FDCWD, b"/proc/self/stat\0", libc::O_RDONLY, 0);
    let mut n = 0;
    if fd >= 0 {
        n = sys::read(fd as i32, &mut buf).max(0) as usize;
        sys::close(fd as i32);
    }
    // Fields after the command name, which may hold spaces and ')'.
    if let Some(end) = buf[..n].iter().rposition(|&c| c == b')') {
        if let Some(f) = buf[end + 1..n]
            .split(|&c| c == b' ')
            .filter(|f| !f.is_empty())
            .nth(19)
        {
            start = f;
        }
    }
    let mut line = format!("pid {} start ", crate::init::pid()).into_bytes();
    line.extend_from_slice(start);
    line.push(b'\n');
    line
}

/// Whether the directory was recorded into by an earlier image of this
/// process (its [`PROCESS_MARK`] is `identity`).
pub fn recorded_by(dirfd: i32, identity: &[u8]) -> bool {
    let fd = openat(
        dirfd,
        &c_name(PROCESS_MARK.as_bytes()),
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0,
    );
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 128];
    let n = sys::read(fd as i32, &mut buf);
    sys::close(fd as i32);
    n > 0 && &buf[..n as usize] == identity
}

/// Opens (creating it) the subdirectory `name` of `dirfd`, checked as the
/// record directory is.
pub fn subdirectory(dirfd: i32, name: &str, shown: &str) -> Result<i32, String> {
    let what = format!("the record directory {shown}");
    let n = c_name(name.as_bytes());
    // SAFETY: n is NUL-terminated.
    let r = unsafe { sys::syscall3(libc::SYS_mkdirat, dirfd as u64, n.as_ptr() as u64, 0o755) };
    if r < 0 && r != -(libc::EEXIST as i64) {
        return Err(format!(
            "cannot create {what}: {}",
            crate::sys::errno_text(-r)
        ));
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    open_trusted(dirfd, &n, flags, &what)
}

/// Opens the directory `name` (NUL-terminated) relative to `dirfd` with
/// `flags` and checks it ([`untrusted`]); `what` names it in messages.
fn open_trusted(dirfd: i32, name: &[u8], flags: i32, what: &str) -> Result<i32, String> {
    let fd = openat(dirfd, name, flags, 0);
    if fd < 0 {
        return Err(format!(
            "cannot open {what}: {}",
            crate::sys::errno_text(-fd)
        ));
    }
    let fd = fd as i32;
    if let Some(why) = untrusted(fd, what) {
        sys::close(fd);
        return Err(why);
    }
    Ok(fd)
}

/// Closes a directory descriptor of this module.
pub fn close_dir(fd: i32) {
    sys::close(fd);
}

/// The contents of file `name` of the directory (not through a link).
pub fn read_file(dirfd: i32, name: &str) -> Result<Vec<u8>, i64> {
    let fd = openat(
        dirfd,
        &c_name(name.as_bytes()),
        libc::O_RDONLY | libc::O_NOFOLLOW,
        0,
    );
    if fd < 0 {
        return Err(-fd);
    }
    let fd = fd as i32;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match sys::read(fd, &mut buf) {
            0 => break,
            n if n < 0 => {
                sys::close(fd);
                return Err(-n);
            }
            n => out.extend_from_slice(&buf[..n as usize]),
        }
    }
    sys::close(fd);
    Ok(out)
}
