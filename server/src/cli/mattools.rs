//! MatTools' tool-usage tasks from their folder layout (`tasks/<name>/question.txt`,
//! `properties.json`, `new_unit_test.py`, with `missing-files.txt` and `test_files/` beside
//! `tasks/`), as the reference repository and `shared/data/mattools` lay them out.

use std::path::{Path, PathBuf};

use bench::mattools::code::CodeTask;

use super::CliError;

/// Where a MatTools data folder keeps its parts.
#[derive(Debug, Clone)]
pub struct TaskDir {
    /// The folder of task folders.
    pub tasks: PathBuf,
    /// The test files the questions read, if present.
    pub test_files: Option<PathBuf>,
    /// `missing-files.txt`, if present.
    pub missing: Option<PathBuf>,
}

impl TaskDir {
    /// `dir` is the data folder (holding `tasks/`) or the folder of task folders itself.
    pub fn at(dir: &Path) -> Result<TaskDir, CliError> {
        let (tasks, root) = if dir.join("tasks").is_dir() {
            (dir.join("tasks"), dir.to_path_buf())
        } else {
            (
                dir.to_path_buf(),
                dir.parent().map_or(dir.to_path_buf(), Path::to_path_buf),
            )
        };
        if !tasks.is_dir() {
            return Err(CliError::input(format!(
                "{} is not a folder",
                dir.display()
            )));
        }
        let existing = |p: PathBuf| p.exists().then_some(p);
        Ok(TaskDir {
            tasks,
            test_files: existing(root.join("test_files")),
            missing: existing(root.join("missing-files.txt")),
        })
    }

    /// Every task, sorted by name.
    pub fn load(&self) -> Result<Vec<CodeTask>, CliError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p)
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", p.display())))
        };
        let missing: Vec<String> = match &self.missing {
            Some(p) => read(p)?.lines().map(str::to_string).collect(),
            None => Vec::new(),
        };
        let present: Option<Vec<String>> = match &self.test_files {
            Some(dir) => Some(
                std::fs::read_dir(dir)
                    .map_err(|e| CliError::input(format!("cannot list {}: {e}", dir.display())))?
                    .filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect(),
            ),
            None => None,
        };
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.tasks)
            .map_err(|e| CliError::input(format!("cannot list {}: {e}", self.tasks.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("question.txt").is_file())
            .collect();
        names.sort();
        let mut tasks = Vec::new();
        for folder in names {
            let Some(name) = folder.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let task = CodeTask::from_files(
                name,
                &read(&folder.join("question.txt"))?,
                &read(&folder.join("properties.json"))?,
                &read(&folder.join("new_unit_test.py"))?,
                &missing,
                present.as_deref(),
            )
            .map_err(|e| CliError::input(e.to_string()))?;
            tasks.push(task);
        }
        if tasks.is_empty() {
            return Err(CliError::input(format!(
                "no task folders (with question.txt) in {}",
                self.tasks.display()
            )));
        }
        Ok(tasks)
    }
}
