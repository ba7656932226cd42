//! The per-run scratch directory: created fresh, filled with the program's files, measured,
//! read back and removed (backend-independent helpers).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::outcome::OutputFile;
use crate::program::{Program, MAIN_FILE};

/// Largest result file read back; larger ones are left out of [`crate::Outcome::files`].
pub const MAX_RESULT_FILE_BYTES: u64 = 1 << 20;
/// At most this many result files are read back (the first ones by path).
pub const MAX_RESULT_FILES: usize = 32;
/// Prefix of scratch directory names (to find leftovers).
pub const SCRATCH_PREFIX: &str = "atomworld-sandbox-";

/// A scratch directory, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
    inputs: HashMap<String, Vec<u8>>,
}

impl Scratch {
    /// Creates a fresh directory under `parent` (the system temp dir when `None`) holding the
    /// program's input files and its code as `main.py`. Fails with `InvalidProgram` when the
    /// inputs alone exceed `scratch_bytes`.
    pub fn create(
        parent: Option<&Path>,
        program: &Program,
        scratch_bytes: u64,
    ) -> Result<Self, SandboxError> {
        program.validate()?;
        let total: u64 = program.code.len() as u64
            + program
                .files
                .iter()
                .map(|(_, b)| b.len() as u64)
                .sum::<u64>();
        if total > scratch_bytes {
            return Err(SandboxError::InvalidProgram(format!(
                "the code and input files take {total} bytes, more than the scratch limit of \
                 {scratch_bytes} bytes"
            )));
        }
        let mut builder = tempfile::Builder::new();
        builder.prefix(SCRATCH_PREFIX);
        let dir = match parent {
            Some(p) => builder.tempdir_in(p),
            None => builder.tempdir(),
        }
        .map_err(SandboxError::Scratch)?;
        let mut inputs = HashMap::new();
        for (rel, bytes) in &program.files {
            let path = dir.path().join(rel);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(SandboxError::Scratch)?;
            }
            fs::write(&path, bytes).map_err(SandboxError::Scratch)?;
            inputs.insert(rel.clone(), bytes.clone());
        }
        fs::write(dir.path().join(MAIN_FILE), &program.code).map_err(SandboxError::Scratch)?;
        Ok(Scratch { dir, inputs })
    }

    /// The directory on the host.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Total size of the regular files in the directory (symlinks are not followed).
    pub fn size(&self) -> u64 {
        dir_size(self.dir.path())
    }

    /// Files created or changed by the run (not `main.py`, not unchanged inputs), regular files
    /// only (symlinks are never followed), each at most [`MAX_RESULT_FILE_BYTES`], at most
    /// [`MAX_RESULT_FILES`], sorted by path.
    pub fn result_files(&self) -> Result<Vec<OutputFile>, SandboxError> {
        let mut found = Vec::new();
        walk(self.dir.path(), &mut |path, meta| {
            if meta.len() <= MAX_RESULT_FILE_BYTES {
                found.push(path.to_path_buf());
            }
        })
        .map_err(SandboxError::Scratch)?;
        let mut out = Vec::new();
        for path in found {
            let Ok(rel) = path.strip_prefix(self.dir.path()) else {
                continue;
            };
            let Some(rel) = rel.to_str().map(|s| s.replace('\\', "/")) else {
                continue;
            };
            if rel == MAIN_FILE {
                continue;
            }
            let bytes = fs::read(&path).map_err(SandboxError::Scratch)?;
            if self.inputs.get(&rel) == Some(&bytes) {
                continue;
            }
            out.push(OutputFile { path: rel, bytes });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out.truncate(MAX_RESULT_FILES);
        Ok(out)
    }

    /// Removes the directory now (also done on drop), reporting failure.
    pub fn remove(self) -> Result<(), SandboxError> {
        self.dir.close().map_err(SandboxError::Scratch)
    }
}

/// Total size of regular files under `dir` without following symlinks (errors count as 0).
pub fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let _ = walk(dir, &mut |_, meta| total += meta.len());
    total
}

/// Calls `f` for each regular file under `dir` (not following symlinks).
fn walk(dir: &Path, f: &mut dyn FnMut(&Path, &fs::Metadata)) -> io::Result<()> {
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            let meta = fs::symlink_metadata(entry.path())?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                f(&entry.path(), &meta);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_round_trip_and_removal() {
        let parent = tempfile::tempdir().unwrap();
        let program = Program::new("print(1)")
            .with_file("in/data.txt", b"abc".to_vec())
            .with_file("same.txt", b"keep".to_vec());
        let s = Scratch::create(Some(parent.path()), &program, 1 << 20).unwrap();
        assert_eq!(
            fs::read_to_string(s.path().join("main.py")).unwrap(),
            "print(1)"
        );
        fs::write(s.path().join("in/data.txt"), b"changed").unwrap();
        fs::write(s.path().join("out.json"), b"{}").unwrap();
        fs::write(
            s.path().join("big.bin"),
            vec![0u8; MAX_RESULT_FILE_BYTES as usize + 1],
        )
        .unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", s.path().join("link")).unwrap();
        let files = s.result_files().unwrap();
        let names: Vec<_> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, ["in/data.txt", "out.json"]);
        assert!(s.size() > MAX_RESULT_FILE_BYTES);
        let path = s.path().to_path_buf();
        s.remove().unwrap();
        assert!(!path.exists());
        assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn inputs_over_the_limit_are_refused() {
        let program = Program::new("x").with_file("a", vec![0u8; 100]);
        let err = Scratch::create(None, &program, 50).unwrap_err();
        assert!(err.to_string().contains("scratch limit"), "{err}");
    }
}
