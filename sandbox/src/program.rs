//! What to run: a program's code, its input files, its stdin and an optional entry call.

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;

/// The file name the program's code is written to inside the scratch directory.
pub const MAIN_FILE: &str = "main.py";

/// A Python program to run in a sandbox.
///
/// The code is written to `main.py` in a fresh scratch directory, which is also the working
/// directory; `files` are written next to it first. When `entry` names a function, `main.py`
/// is loaded (as `__main__`), that function is called with no arguments, and its return value
/// is printed as one line of JSON at the end of stdout (see [`crate::Outcome::entry_result`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    /// Python source code.
    pub code: String,
    /// Input files as (relative path inside the scratch directory, contents). Paths use `/`,
    /// must be relative, and may not contain `..`, `.` or empty components.
    #[serde(default)]
    pub files: Vec<(String, Vec<u8>)>,
    /// Bytes given to the program on stdin (empty: stdin is at end of file).
    #[serde(default)]
    pub stdin: Vec<u8>,
    /// A function defined by the code to call after it has loaded; its return value is printed
    /// as JSON on the last line of stdout.
    #[serde(default)]
    pub entry: Option<String>,
    /// Read-only data shown inside the scratch directory: (relative path of a symlink, name
    /// of one of the backend's data mounts). Only backends with data mounts take them
    /// (`bwrap`); MatTools' tasks read their test files this way.
    #[serde(default)]
    pub data_links: Vec<(String, String)>,
}

impl Program {
    /// A program made of `code` only.
    pub fn new(code: impl Into<String>) -> Self {
        Program {
            code: code.into(),
            ..Program::default()
        }
    }

    /// Adds an input file (builder style).
    pub fn with_file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), bytes.into()));
        self
    }

    /// Sets stdin (builder style).
    pub fn with_stdin(mut self, stdin: impl Into<Vec<u8>>) -> Self {
        self.stdin = stdin.into();
        self
    }

    /// Sets the entry function (builder style).
    pub fn with_entry(mut self, entry: impl Into<String>) -> Self {
        self.entry = Some(entry.into());
        self
    }

    /// Adds a data link (builder style): `mount` appears at `path` in the scratch directory.
    pub fn with_data_link(mut self, path: impl Into<String>, mount: impl Into<String>) -> Self {
        self.data_links.push((path.into(), mount.into()));
        self
    }

    /// Checks what can be checked before running: file paths and the entry's name.
    pub fn validate(&self) -> Result<(), SandboxError> {
        for (path, mount) in &self.data_links {
            validate_relative_path(path)?;
            if self.files.iter().any(|(f, _)| f == path) || path == MAIN_FILE {
                return Err(SandboxError::InvalidProgram(format!(
                    "data link {path:?} has the name of an input file"
                )));
            }
            if mount.is_empty()
                || !mount
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(SandboxError::InvalidProgram(format!(
                    "data mount name {mount:?} must be letters, digits, '-' or '_'"
                )));
            }
        }
        for (path, _) in &self.files {
            validate_relative_path(path)?;
            if path == MAIN_FILE {
                return Err(SandboxError::InvalidProgram(format!(
                    "input file {path:?} would be overwritten by the program's code"
                )));
            }
        }
        if let Some(entry) = &self.entry {
            let mut chars = entry.chars();
            let ok = chars
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
            if !ok {
                return Err(SandboxError::InvalidProgram(format!(
                    "entry {entry:?} is not a Python identifier (letters, digits, '_')"
                )));
            }
        }
        Ok(())
    }
}

/// Checks that `path` is a plain relative path that stays inside the scratch directory.
pub(crate) fn validate_relative_path(path: &str) -> Result<(), SandboxError> {
    let bad = |why: &str| {
        Err(SandboxError::InvalidProgram(format!(
            "input file path {path:?} {why}"
        )))
    };
    if path.is_empty() {
        return bad("is empty");
    }
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return bad("must be relative, use '/' and contain no NUL");
    }
    for part in path.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return bad("has an empty, '.' or '..' component");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked() {
        for ok in ["a.txt", "dir/b.cif", "x/y/z"] {
            assert!(validate_relative_path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "./a",
            "a\\b",
            "a/",
        ] {
            assert!(validate_relative_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn entry_and_main_are_checked() {
        assert!(Program::new("").with_entry("solve_1").validate().is_ok());
        assert!(Program::new("").with_entry("1x").validate().is_err());
        assert!(Program::new("").with_entry("a.b").validate().is_err());
        assert!(Program::new("")
            .with_file("main.py", b"x".to_vec())
            .validate()
            .is_err());
    }
}
