//! A record directory: its file names, and opening it with every cross-file
//! check that does not need a pass over the whole tape.

use std::path::{Path, PathBuf};

use crate::error::FormatError;
use crate::file_name;
use crate::tape::Tape;
use crate::text::{display_name, read_indices, ValueTable};

/// An opened record directory: the tape and the input and output indices,
/// checked against each other.
pub struct Recording {
    /// The directory.
    pub dir: PathBuf,
    /// The mapped `dg-tape`.
    pub tape: Tape,
    /// Contents of `dg-input-indices`.
    pub inputs: Vec<u64>,
    /// Contents of `dg-output-indices`.
    pub outputs: Vec<u64>,
}

impl Recording {
    /// Opens `dir`: maps the tape (see [`Tape::open`]), reads both index
    /// files, and checks that every index is on the tape and that every
    /// input's block is all-zero. A missing index file is an error.
    pub fn open(dir: &Path) -> Result<Recording, FormatError> {
        let tape = Tape::open(&tape_path(dir)?)?;
        let inputs = read_indices(&dir.join(file_name::INPUT_INDICES))?;
        let outputs = read_indices(&dir.join(file_name::OUTPUT_INDICES))?;
        check_indices(&tape, &inputs, file_name::INPUT_INDICES, true)?;
        check_indices(&tape, &outputs, file_name::OUTPUT_INDICES, false)?;
        Ok(Recording {
            dir: dir.to_owned(),
            tape,
            inputs,
            outputs,
        })
    }

    /// Path of the file `name` (see [`file_name`]) in this directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// The tape file of the record directory `dir`: `dg-tape`, or
/// `dg-tape-compact` where there is no `dg-tape`. Both at once are an
/// error: they come from two recordings, and which one the index files
/// belong to cannot be told.
pub fn tape_path(dir: &Path) -> Result<PathBuf, FormatError> {
    let blocks = dir.join(file_name::TAPE);
    let compact = dir.join(file_name::COMPACT_TAPE);
    // `symlink_metadata`: a link counts as present (opening it reports it).
    match (
        blocks.symlink_metadata().is_ok(),
        compact.symlink_metadata().is_ok(),
    ) {
        (true, true) => Err(FormatError::TwoTapes {
            dir: dir.to_owned(),
        }),
        (false, true) => Ok(compact),
        _ => Ok(blocks),
    }
}

/// Checks that each of `indices` (read from `file`) names a block of `tape`
/// and, for inputs, that the block is all-zero. Index 0 is allowed for both:
/// a variable declared while recording was disabled is passive.
pub fn check_indices(
    tape: &Tape,
    indices: &[u64],
    file: &str,
    are_inputs: bool,
) -> Result<(), FormatError> {
    for (k, &index) in indices.iter().enumerate() {
        let line = k + 1;
        let Some(zero) = tape.entry_is_zero(index) else {
            return Err(FormatError::IndexBeyondTape {
                file: file.to_owned(),
                line,
                index,
                blocks: tape.block_count(),
            });
        };
        if are_inputs && !zero {
            return Err(FormatError::InputBlockNotZero {
                file: file.to_owned(),
                line,
                index,
                block: tape.entry(index).unwrap_or_default(),
            });
        }
    }
    Ok(())
}

/// Checks that a value file (`values`, read from `values_path`) has one line
/// per index listed in `index_file` (`expected` of them, described as `what`).
pub fn check_row_count(
    values: &ValueTable,
    values_path: &Path,
    index_file: &str,
    expected: usize,
    what: &'static str,
) -> Result<(), FormatError> {
    if values.rows() != expected {
        return Err(FormatError::CountMismatch {
            file: display_name(values_path),
            found: values.rows(),
            other_file: index_file.to_owned(),
            expected,
            what,
        });
    }
    Ok(())
}
