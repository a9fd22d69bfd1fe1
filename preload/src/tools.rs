//! The registry of tools: the one place of the engine that names them
//! (`DGAD_MODE`). Everything else reaches the chosen tool through
//! [`crate::tool::tool`].

use crate::init::Mode;
use crate::tool::{NullTool, Tool};

/// The record tool's settings: `DGAD_TAPE_LIMIT`, `DGAD_GRAD`,
/// `DGAD_TAPE_MEMORY`, `DGAD_TAPE_FORMAT`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordSettings<'a> {
    /// The largest tape.
    pub tape_limit: Option<&'a [u8]>,
    /// The gradient swept in the process at exit.
    pub grad: Option<&'a [u8]>,
    /// The memory the tape may take with `grad`.
    pub tape_memory: Option<&'a [u8]>,
    /// The tape file's format: `derivgrind` (`dg-tape`) or `compact`.
    pub tape_format: Option<&'a [u8]>,
}

/// The tool for `mode`, armed with its settings (`record`: the record
/// directory and `record_settings`). An error is for the user.
pub fn for_mode(
    mode: Mode,
    record_dir: Option<&[u8]>,
    record_settings: RecordSettings<'_>,
) -> Result<&'static dyn Tool, String> {
    match mode {
        Mode::Null => Ok(&NullTool),
        Mode::Record => {
            crate::record::init(record_dir.unwrap_or_default(), &record_settings)?;
            Ok(&crate::record::tool::RECORD)
        }
        Mode::Dot => {
            if let Some(dir) = record_dir {
                crate::dot::files::init(dir)?;
            }
            Ok(&crate::dot::tool::DOT)
        }
    }
}

#[cfg(test)]
mod tests {
    /// The dependency rule of `docs/architecture.md`: the engine never
    /// names a tool. Only this registry and the tools' own modules may
    /// refer to them; a new reference from an engine file fails here.
    #[test]
    fn engine_files_do_not_name_a_tool() {
        const TOOLS: &[&str] = &["record", "dot"];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offences = Vec::new();
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() || !name.ends_with(".rs") || name == "tools.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for tool in TOOLS {
                    if code.contains(&format!("crate::{tool}::"))
                        || code.contains(&format!("crate::{tool};"))
                    {
                        offences.push(format!("{name}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(
            offences.is_empty(),
            "engine files name a tool (reach it through crate::tool):\n{}",
            offences.join("\n")
        );
    }
}
