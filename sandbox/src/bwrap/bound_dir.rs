//! The host directory every sandbox binds read-only at [`super::profile::WORKER_DIR`]: the
//! worker script, its launcher and the venv's rewritten `pyvenv.cfg`.
//!
//! The directory is named by a digest of its files and lives under the user's cache, so all
//! processes that need the same files share one copy, and a process that ends without
//! unwinding (SIGKILL, an abort, a power cut) leaves nothing the next one does not reuse.
//! It is filled under a temporary name and renamed into place, so a reader never sees it
//! half written, and two processes racing to make it both end up with the same directory.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// The directory under `base` holding exactly `files` (name, contents), made if missing.
pub fn materialize(base: &Path, files: &[(&str, &[u8])]) -> std::io::Result<PathBuf> {
    let dir = base.join(digest(files));
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(base)?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(base)?;
    for (name, bytes) in files {
        std::fs::write(staging.path().join(name), bytes)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755))?;
    }
    match std::fs::rename(staging.path(), &dir) {
        Ok(()) => {
            // Renamed away: there is nothing left for the guard to remove.
            let _ = staging.keep();
            Ok(dir)
        }
        // Another process renamed its identical copy into place first.
        Err(_) if dir.is_dir() => Ok(dir),
        Err(e) => Err(e),
    }
}

/// 32 hex digits of SHA-256 over every file's name and contents, each length-prefixed so no
/// two different file sets share an input.
fn digest(files: &[(&str, &[u8])]) -> String {
    let mut h = Sha256::new();
    for (name, bytes) in files {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    hex::encode(&h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_files_share_one_directory_and_other_files_get_another() {
        let base = tempfile::tempdir().unwrap();
        let a = materialize(base.path(), &[("w.py", b"print(1)"), ("c", b"x")]).unwrap();
        let again = materialize(base.path(), &[("w.py", b"print(1)"), ("c", b"x")]).unwrap();
        let other = materialize(base.path(), &[("w.py", b"print(2)"), ("c", b"x")]).unwrap();
        assert_eq!(a, again);
        assert_ne!(a, other);
        assert_eq!(std::fs::read(a.join("w.py")).unwrap(), b"print(1)");
        assert_eq!(std::fs::read(other.join("w.py")).unwrap(), b"print(2)");
        let names: Vec<_> = std::fs::read_dir(base.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no staging directory is left: {names:?}");
    }

    #[test]
    fn moving_bytes_between_name_and_contents_changes_the_digest() {
        assert_ne!(digest(&[("ab", b"c")]), digest(&[("a", b"bc")]));
        assert_ne!(digest(&[("a", b"")]), digest(&[("a", b""), ("", b"")]));
    }

    #[test]
    fn racing_makers_agree_on_one_complete_directory() {
        let base = tempfile::tempdir().unwrap();
        let files: &[(&str, &[u8])] = &[("w.py", &[7u8; 100_000])];
        let dirs: Vec<PathBuf> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| materialize(base.path(), files).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(dirs.iter().all(|d| *d == dirs[0]));
        assert_eq!(std::fs::read(dirs[0].join("w.py")).unwrap().len(), 100_000);
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 1);
    }
}
