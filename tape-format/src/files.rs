//! Opening the files of a record directory: reads take regular files only
//! (a FIFO would hang the reader, `/dev/zero` would fill its memory), and
//! writes never go through a symbolic link and replace the file whole —
//! the new contents go to a fresh temporary file beside it, which is
//! synced and renamed over the old one, so a reader, a full disk or a kill
//! never sees half a result.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::FormatError;

/// Opens `path` for reading if it is a regular file. Opening does not
/// block on a FIFO (`O_NONBLOCK`, which regular files ignore).
pub fn open_regular(path: &Path) -> Result<File, FormatError> {
    let read_error = |error| FormatError::Read {
        path: path.to_owned(),
        error,
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read_error)?;
    let kind = file.metadata().map_err(read_error)?.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(FormatError::NotRegular {
            path: path.to_owned(),
            what,
        });
    }
    Ok(file)
}

/// A temporary name beside `path`: `.<name>.<pid>.tmp`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Replaces the file at `path` with what `body` writes: into a new
/// temporary file beside it (`O_EXCL|O_NOFOLLOW`, never through a link),
/// synced, then renamed over `path` (which replaces a link there instead
/// of following it) and the directory synced. On any error the temporary
/// file is removed and `path` is as it was.
pub fn replace_file(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), FormatError> {
    let temp = temp_path(path);
    let write = || -> io::Result<()> {
        let open = || {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&temp)
        };
        let file = match open() {
            // A leftover of an earlier process with our id.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                fs::remove_file(&temp)?;
                open()?
            }
            other => other?,
        };
        let mut out = BufWriter::new(file);
        body(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&temp, path)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()
    };
    write().map_err(|error| {
        let _ = fs::remove_file(&temp);
        FormatError::Write {
            path: path.to_owned(),
            error,
        }
    })
}

/// Creates (or truncates) `path` for writing, never through a link.
pub(crate) fn create_no_follow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}
