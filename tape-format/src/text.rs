//! The text files of a record directory: index lists and value tables.
//!
//! Both are line-oriented: line `k` (1-based) belongs to the `k`-th input or
//! output in declaration order. Empty lines are allowed only at the end, so
//! that a line number always identifies a variable. Values are written like
//! Derivgrind's `tape-evaluation` writes them (C++ `std::setprecision(16)` on
//! a default-formatted stream, i.e. `printf("%.16g")`), one line per variable;
//! a table of several directions puts its values on one line separated by
//! single spaces.

use std::fmt;
use std::fs;
use std::io::{BufWriter, Read as _, Write};
use std::path::Path;

use crate::error::FormatError;
pub use crate::value::{format_value, VALUE_PRECISION};
use crate::value::{parse_value, push_value};

/// The name shown in error messages for a file: its last path component.
pub(crate) fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

pub(crate) fn read_text(path: &Path) -> Result<String, FormatError> {
    let mut text = String::new();
    crate::files::open_regular(path)?
        .read_to_string(&mut text)
        .map_err(|error| FormatError::Read {
            path: path.to_owned(),
            error,
        })?;
    Ok(text)
}

/// Lines that carry data, numbered from 1; trailing empty lines are dropped,
/// an empty line before a non-empty one is reported.
fn data_lines<'t>(
    text: &'t str,
    file: &str,
    expected: &'static str,
) -> Result<Vec<(usize, &'t str)>, FormatError> {
    let mut lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(k, l)| (k + 1, l.trim()))
        .collect();
    while lines.last().is_some_and(|(_, l)| l.is_empty()) {
        lines.pop();
    }
    if let Some(&(line, _)) = lines.iter().find(|(_, l)| l.is_empty()) {
        return Err(FormatError::Parse {
            file: file.to_owned(),
            line,
            expected,
            found: String::new(),
        });
    }
    Ok(lines)
}

/// Parses an index file (`dg-input-indices`, `dg-output-indices`): one decimal
/// `u64` per line. `file` names the file in error messages.
pub fn parse_indices(text: &str, file: &str) -> Result<Vec<u64>, FormatError> {
    const EXPECTED: &str = "one decimal index";
    data_lines(text, file, EXPECTED)?
        .into_iter()
        .map(|(line, l)| {
            l.parse::<u64>().map_err(|_| FormatError::Parse {
                file: file.to_owned(),
                line,
                expected: EXPECTED,
                found: l.to_owned(),
            })
        })
        .collect()
}

/// Reads an index file; see [`parse_indices`].
pub fn read_indices(path: &Path) -> Result<Vec<u64>, FormatError> {
    parse_indices(&read_text(path)?, &display_name(path))
}

/// Writes an index file: one decimal index per line, each line ending in `\n`
/// (as Derivgrind's recorder writes them with `"%llu\n"`).
pub fn write_indices(path: &Path, indices: &[u64]) -> Result<(), FormatError> {
    write_with(path, |out| {
        for index in indices {
            writeln!(out, "{index}")?;
        }
        Ok(())
    })
}

/// A table of values, one row per variable and one column per direction:
/// the contents of `dg-output-bars`, `dg-input-bars`, `dg-input-dots`,
/// `dg-output-dots` and `dg-jacobian`. A scalar file is a table of width 1.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueTable {
    width: usize,
    values: Vec<f64>,
}

impl ValueTable {
    /// A table of `values.len() / width` rows, row-major.
    ///
    /// # Panics
    /// If `width` is 0 or does not divide `values.len()`.
    pub fn new(width: usize, values: Vec<f64>) -> ValueTable {
        assert!(width > 0, "a value table has at least one column");
        assert!(
            values.len() % width == 0,
            "{} values do not fill rows of {width}",
            values.len()
        );
        ValueTable { width, values }
    }

    /// A table with one value per row (the scalar files).
    pub fn column(values: Vec<f64>) -> ValueTable {
        ValueTable { width: 1, values }
    }

    /// A `rows × width` table of zeros.
    pub fn zeros(rows: usize, width: usize) -> ValueTable {
        ValueTable::new(width, vec![0.0; rows * width])
    }

    /// Values per row (directions); 1 for an empty file.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows (variables).
    pub fn rows(&self) -> usize {
        self.values.len() / self.width
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> &[f64] {
        &self.values[r * self.width..(r + 1) * self.width]
    }

    /// Row `r`, mutably.
    pub fn row_mut(&mut self, r: usize) -> &mut [f64] {
        &mut self.values[r * self.width..(r + 1) * self.width]
    }

    /// All values, row-major.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The rows in order.
    pub fn iter_rows(&self) -> impl Iterator<Item = &[f64]> {
        self.values.chunks_exact(self.width)
    }
}

/// Parses a value file: per line one or more floating-point values separated
/// by whitespace, the same number on every line. An empty file is an empty
/// table of width 1. Accepts what C++ and Python print, including `inf`,
/// `-inf`, `nan` and `-nan`.
pub fn parse_values(text: &str, file: &str) -> Result<ValueTable, FormatError> {
    const EXPECTED: &str = "floating-point values";
    let lines = data_lines(text, file, EXPECTED)?;
    let mut width = 0;
    let mut values = Vec::with_capacity(lines.len());
    for (line, l) in lines {
        let before = values.len();
        for token in l.split_whitespace() {
            let value = parse_value(token).ok_or_else(|| FormatError::Parse {
                file: file.to_owned(),
                line,
                expected: "a floating-point value",
                found: token.to_owned(),
            })?;
            values.push(value);
        }
        let found = values.len() - before;
        if width == 0 {
            width = found;
        } else if found != width {
            return Err(FormatError::RowWidth {
                file: file.to_owned(),
                line,
                expected: width,
                found,
            });
        }
    }
    Ok(ValueTable::new(width.max(1), values))
}

/// Reads a value file; see [`parse_values`].
pub fn read_values(path: &Path) -> Result<ValueTable, FormatError> {
    parse_values(&read_text(path)?, &display_name(path))
}

/// Writes a value file: each row on one line, values as by [`format_value`]
/// separated by single spaces, each line ending in `\n`.
pub fn write_values(path: &Path, table: &ValueTable) -> Result<(), FormatError> {
    write_with(path, |out| {
        let mut line = String::new();
        for row in table.iter_rows() {
            line.clear();
            push_row(&mut line, row);
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    })
}

/// The text [`write_values`] writes, in memory (for a writer that creates
/// its files its own way, as the recording runtime does).
pub fn values_text(table: &ValueTable) -> String {
    let mut text = String::new();
    for row in table.iter_rows() {
        push_row(&mut text, row);
    }
    text
}

/// One line of a value file, `\n` included.
fn push_row(line: &mut String, row: &[f64]) {
    for (k, &v) in row.iter().enumerate() {
        if k > 0 {
            line.push(' ');
        }
        push_value(line, v);
    }
    line.push('\n');
}

fn write_with(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<fs::File>) -> std::io::Result<()>,
) -> Result<(), FormatError> {
    crate::files::replace_file(path, body)
}

/// Displays an `f64` like [`format_value`], without allocating.
#[derive(Clone, Copy, Debug)]
pub struct DisplayValue(pub f64);

impl fmt::Display for DisplayValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        push_value(&mut s, self.0);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_formatted_like_printf_g16() {
        // Expected strings printed by glibc's printf("%.16g").
        let cases: &[(f64, &str)] = &[
            (48.0, "48"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0 / 3.0, "0.6666666666666666"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1e-4, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456"),
            (12345678901234567.0, "1.234567890123457e+16"),
            (9999999999999999.0, "1e+16"),
            (1e-300, "1e-300"),
            (f64::MAX, "1.797693134862316e+308"),
            (f64::MIN_POSITIVE, "2.225073858507201e-308"),
            (5e-324, "4.940656458412465e-324"),
            (0.30000000000000004, "0.3"),
            (123.456, "123.456"),
            (-0.000123, "-0.000123"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-f64::NAN, "-nan"),
            (0.5, "0.5"),
            (100.0, "100"),
        ];
        for &(v, expected) in cases {
            assert_eq!(format_value(v), expected, "formatting {v:e}");
        }
    }
}
