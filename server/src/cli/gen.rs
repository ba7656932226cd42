//! `atomworld gen`: write a suite's seeded task set as JSON lines (one task per line), as its
//! generator draws it for a run with the same seed and size.

use std::io::Write;
use std::path::Path;

use benchmarks::task::AnySuite;

use super::CliError;

/// Generate `per_group` tasks of each of `suite`'s groups with `seed` (in the suite's
/// `variant`, if one is named) into `output`, from the structure pool `pool` (its files) when
/// one is given; returns a one-line report.
pub fn run(
    suite: &dyn AnySuite,
    (seed, per_group, variant): (u64, usize, Option<&str>),
    pool: Option<&[(String, String)]>,
    mut output: impl Write,
) -> Result<String, CliError> {
    let generator = suite
        .generator_for(seed, per_group, variant)
        .map_err(|e| CliError::input(e.to_string()))?;
    let generator = generator.ok_or_else(|| {
        CliError::input(format!(
            "suite {} has no task generator; its tasks come from files (`run --tasks`)",
            suite.name()
        ))
    })?;
    let (lines, report) = match pool {
        Some(files) => suite
            .generated_lines_from_pool(&generator.params, files)
            .map_err(|e| CliError::input(e.to_string()))?,
        None => suite
            .generated_lines(&generator.params)
            .map_err(|e| CliError::failure(e.to_string()))?,
    };
    for line in &lines {
        writeln!(output, "{line}")
            .map_err(|e| CliError::failure(format!("writing output: {e}")))?;
    }
    Ok(report)
}

/// The files of a structure pool at `path`: the file itself, or every `.cif`, `.json` and
/// `.jsonl` file in the folder and its subfolders (other files are left alone), each named by
/// its path within the folder.
pub fn pool_files(path: &Path) -> Result<Vec<(String, String)>, CliError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map_err(|e| CliError::input(format!("cannot read {}: {e}", p.display())))
    };
    if path.is_file() {
        return Ok(vec![(path.display().to_string(), read(path)?)]);
    }
    let mut files = Vec::new();
    let mut folders = vec![path.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .map_err(|e| CliError::input(format!("cannot read {}: {e}", folder.display())))?;
        for entry in entries {
            let p = entry
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", folder.display())))?
                .path();
            if p.is_dir() {
                folders.push(p);
                continue;
            }
            let pool_file = p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ["cif", "json", "jsonl"].contains(&e.to_ascii_lowercase().as_str())
            });
            if pool_file {
                let name = p.strip_prefix(path).unwrap_or(&p).display().to_string();
                files.push((name, read(&p)?));
            }
        }
    }
    if files.is_empty() {
        return Err(CliError::input(format!(
            "{}: no .cif, .json or .jsonl file in the pool folder",
            path.display()
        )));
    }
    Ok(files)
}
