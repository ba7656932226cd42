//! The app's files compressed once, beside themselves (`app_bg.wasm.br`, `.gz`), so that a
//! room of first visits costs the server file reads instead of a brotli pass over several
//! megabytes each. `ServeDir` sends a compressed sibling to a browser that accepts it; until
//! the siblings exist (they are written in the background at start, kept across restarts,
//! and redone when a file is newer than its sibling), the compression layer compresses on
//! the fly as before. A `dist` the server cannot write to is served that way throughout.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Files smaller than this are sent as they are (compression gains nothing worth a read).
const MIN_BYTES: u64 = 1024;

/// The kinds of file worth compressing (the page's code, styles and markup).
const COMPRESSIBLE: [&str; 7] = ["wasm", "js", "css", "html", "svg", "json", "txt"];

/// Brotli's densest setting: done once per build, so its cost is paid once.
const BROTLI_QUALITY: u32 = 11;
/// Brotli's window (log2 bytes): 22 (4 MiB), what every browser decodes.
const BROTLI_WINDOW: u32 = 22;

/// What [`precompress`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Precompressed {
    /// Files compressed now.
    pub written: usize,
    /// Files whose siblings were already up to date.
    pub current: usize,
    /// Their bytes, and their brotli siblings' bytes.
    pub bytes: (u64, u64),
}

/// Write the brotli and gzip siblings of every compressible file under `dist` that lacks an
/// up-to-date one.
pub fn precompress(dist: &Path) -> io::Result<Precompressed> {
    let mut done = Precompressed::default();
    for file in files(dist)? {
        let len = std::fs::metadata(&file)?.len();
        let br = sibling(&file, "br");
        let gz = sibling(&file, "gz");
        if is_current(&file, &br) && is_current(&file, &gz) {
            done.current += 1;
            done.bytes.0 += len;
            done.bytes.1 += std::fs::metadata(&br)?.len();
            continue;
        }
        let data = std::fs::read(&file)?;
        let brotli = brotli_of(&data)?;
        write_atomically(&br, &brotli)?;
        write_atomically(&gz, &gzip_of(&data)?)?;
        done.written += 1;
        done.bytes.0 += len;
        done.bytes.1 += brotli.len() as u64;
    }
    Ok(done)
}

/// [`precompress`] on a thread of its own, logging what it did (or why it could not).
pub fn precompress_in_background(dist: PathBuf) {
    std::thread::spawn(move || {
        let started = Instant::now();
        match precompress(&dist) {
            Ok(p) => tracing::info!(
                written = p.written,
                current = p.current,
                bytes = p.bytes.0,
                brotli_bytes = p.bytes.1,
                secs = started.elapsed().as_secs_f64(),
                "the app's files are served precompressed"
            ),
            Err(e) => tracing::warn!(
                "cannot precompress the app's files in {} ({e}); they are compressed per request",
                dist.display()
            ),
        }
    });
}

/// Every compressible file under `dir` of at least [`MIN_BYTES`], in a stable order.
fn files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && path
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| COMPRESSIBLE.contains(&e))
                && entry.metadata()?.len() >= MIN_BYTES
            {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `file` with `.ext` appended (`app.wasm` → `app.wasm.br`).
fn sibling(file: &Path, ext: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

/// Whether `compressed` exists and is no older than `file`.
fn is_current(file: &Path, compressed: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((modified(file), modified(compressed)), (Some(f), Some(c)) if c >= f)
}

fn brotli_of(data: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 3);
    {
        let mut w =
            brotli::CompressorWriter::new(&mut out, 64 * 1024, BROTLI_QUALITY, BROTLI_WINDOW);
        w.write_all(data)?;
        w.flush()?;
    }
    Ok(out)
}

fn gzip_of(data: &[u8]) -> io::Result<Vec<u8>> {
    let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    w.write_all(data)?;
    w.finish()
}

/// Write `bytes` to `path` through a temporary file and a rename, so a request never reads
/// a half-written sibling.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = sibling(path, "part");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn siblings_decode_to_the_file_and_are_redone_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..400)
            .map(|i| format!("line {i} of the page\n"))
            .collect();
        std::fs::create_dir(dir.path().join("static")).unwrap();
        let (js, small, png) = (
            dir.path().join("static/app.js"),
            dir.path().join("tiny.css"),
            dir.path().join("logo.png"),
        );
        std::fs::write(&js, &text).unwrap();
        std::fs::write(&small, "a{}").unwrap();
        std::fs::write(&png, text.as_bytes()).unwrap();
        let first = precompress(dir.path()).unwrap();
        assert_eq!((first.written, first.current), (1, 0));
        let mut back = Vec::new();
        brotli::Decompressor::new(std::fs::File::open(sibling(&js, "br")).unwrap(), 4096)
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, text.as_bytes());
        let mut back = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(sibling(&js, "gz")).unwrap())
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, text);
        assert!(!sibling(&small, "br").exists() && !sibling(&png, "br").exists());
        // Unchanged: nothing to do; a newer file: compressed again.
        assert_eq!(precompress(dir.path()).unwrap().current, 1);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&js, format!("{text}more\n")).unwrap();
        assert_eq!(precompress(dir.path()).unwrap().written, 1);
    }
}
