//! Output files of the CLI, written whole or not at all: the text goes to a temporary file
//! beside the target, which replaces the target only when the command succeeds. An output
//! that is one of the command's inputs is refused (it would be emptied before it is read).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::CliError;

/// An output file being written.
pub struct Output {
    file: BufWriter<tempfile::NamedTempFile>,
    path: PathBuf,
}

/// True when `a` and `b` name the same existing file (also through links).
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    }
}

impl Output {
    /// Start writing `path`, refusing it when it is one of `inputs`.
    pub fn create(path: &Path, inputs: &[&Path]) -> Result<Self, CliError> {
        if let Some(input) = inputs.iter().find(|i| same_file(i, path)) {
            return Err(CliError::input(format!(
                "the output {} is the input {}: write to another file",
                path.display(),
                input.display()
            )));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".atomworld-")
            .tempfile_in(dir)
            .map_err(|e| CliError::input(format!("cannot create {}: {e}", path.display())))?;
        Ok(Self {
            file: BufWriter::new(tmp),
            path: path.to_path_buf(),
        })
    }

    /// Put the finished file in place (until then the target is untouched).
    pub fn commit(self) -> Result<(), CliError> {
        let fail =
            |e: String| CliError::failure(format!("cannot write {}: {e}", self.path.display()));
        let tmp = self.file.into_inner().map_err(|e| fail(e.to_string()))?;
        tmp.as_file().sync_all().map_err(|e| fail(e.to_string()))?;
        tmp.persist(&self.path).map_err(|e| fail(e.to_string()))?;
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_whole_or_not_at_all_and_never_over_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, "keep me\n").unwrap();
        let e = Output::create(&input, &[&input]).err().unwrap();
        assert!(e.message.contains("is the input"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "keep me\n");

        let out = dir.path().join("out.jsonl");
        std::fs::write(&out, "old\n").unwrap();
        let mut o = Output::create(&out, &[&input]).unwrap();
        writeln!(o, "half").unwrap();
        drop(o); // a failed command: nothing replaced, no temporary file left
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        let mut o = Output::create(&out, &[&input]).unwrap();
        writeln!(o, "new").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new\n");
    }
}
