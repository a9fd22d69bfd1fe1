//! Files the runtime writes at a path the user names (`DGAD_LOG`,
//! `DGAD_DUMP_CACHE`), opened so that a link or a file another user planted
//! there is never written through (issue 16): the log is appended to only
//! when it is a regular file of the user's with one link, and never through
//! a symbolic link; the cache dump is written under a fresh temporary name
//! and renamed over the path.

use crate::sys;

/// `stat` of an open descriptor.
fn fstat(fd: i32) -> Result<libc::stat, i64> {
    // SAFETY: an all-zero `stat` is a valid value of the plain C struct.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: the kernel writes only `st`.
    let r = unsafe {
        sys::syscall3(
            libc::SYS_fstat,
            fd as u64,
            &mut st as *mut libc::stat as u64,
            0,
        )
    };
    if r < 0 {
        Err(-r)
    } else {
        Ok(st)
    }
}

fn open(path: &[u8], flags: i32, mode: u32) -> i64 {
    let mut p = path.to_vec();
    p.push(0);
    // SAFETY: p is NUL-terminated.
    unsafe {
        sys::syscall3(
            libc::SYS_open,
            p.as_ptr() as u64,
            (flags | libc::O_CLOEXEC | libc::O_NOFOLLOW) as u64,
            u64::from(mode),
        )
    }
}

fn errno_text(e: i64) -> String {
    std::io::Error::from_raw_os_error(e as i32).to_string()
}

/// Opens `path` for appending (`DGAD_LOG`), creating it; refuses a
/// symbolic link, anything but a regular file, a file of another user and
/// a file with more than one name. `setting` names it in the message.
pub fn open_for_append(setting: &str, path: &[u8]) -> Result<i32, String> {
    let shown = || format!("{setting}={}", String::from_utf8_lossy(path));
    let fd = open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND, 0o600);
    if fd == -(libc::ELOOP as i64) {
        return Err(format!(
            "cannot open {}: it is a symbolic link, which dgad does not write through",
            shown()
        ));
    }
    if fd < 0 {
        return Err(format!("cannot open {}: {}", shown(), errno_text(-fd)));
    }
    let fd = fd as i32;
    let why = match fstat(fd) {
        Err(e) => Some(errno_text(e)),
        Ok(st) if st.st_mode & libc::S_IFMT != libc::S_IFREG => {
            Some("it is not a regular file".to_string())
        }
        Ok(st) if st.st_uid != sys::geteuid() => {
            Some(format!("it is owned by user {}, not by you", st.st_uid))
        }
        Ok(st) if st.st_nlink > 1 => Some(format!(
            "it has {} names (hard links), so it may be another file",
            st.st_nlink
        )),
        Ok(_) => None,
    };
    if let Some(why) = why {
        sys::close(fd);
        return Err(format!("cannot open {}: {why}", shown()));
    }
    Ok(fd)
}

/// A file being written under a temporary name beside its path, which
/// [`Replacement::commit`] renames over the path.
pub struct Replacement {
    /// Where to write.
    pub fd: i32,
    temp: Vec<u8>,
    target: Vec<u8>,
}

/// Starts replacing the file at `path` (`DGAD_DUMP_CACHE`): a new file
/// `path.<pid>.tmp`, never through a link.
pub fn replace(setting: &str, path: &[u8]) -> Result<Replacement, String> {
    let mut temp = path.to_vec();
    temp.extend_from_slice(format!(".{}.tmp", crate::init::pid()).as_bytes());
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
    let fd = open(&temp, flags, 0o644);
    if fd < 0 {
        return Err(format!(
            "cannot write {setting}={}: creating {}: {}",
            String::from_utf8_lossy(path),
            String::from_utf8_lossy(&temp),
            errno_text(-fd)
        ));
    }
    let mut target = path.to_vec();
    target.push(0);
    temp.push(0);
    Ok(Replacement {
        fd: fd as i32,
        temp,
        target,
    })
}

impl Replacement {
    /// Closes the file and renames it over the path (replacing a link
    /// there, not what it points to).
    pub fn commit(self) -> Result<(), i64> {
        sys::close(self.fd);
        // SAFETY: both names are NUL-terminated; rename does not follow
        // a link at the target.
        let r = unsafe {
            sys::syscall3(
                libc::SYS_rename,
                self.temp.as_ptr() as u64,
                self.target.as_ptr() as u64,
                0,
            )
        };
        if r < 0 {
            // SAFETY: removing our own temporary file.
            unsafe { sys::syscall3(libc::SYS_unlink, self.temp.as_ptr() as u64, 0, 0) };
            return Err(-r);
        }
        Ok(())
    }
}
