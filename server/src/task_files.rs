//! A suite's tasks read from where the user keeps them: one file, or a folder holding a whole
//! upstream release (every file below it, sorted by path; OmniMatBench's release root is read
//! from its `cal/` or `qa/` folder, whichever the suite names). Suite-neutral: each file's
//! layout is the suite's ([`AnySuite::read_tasks`]).
//!
//! Nothing is lost in silence: a task key that repeats is an error naming both places; a task
//! the suite cannot run is left out with its place and reason ([`SkippedTask`]), which the
//! run's spec keeps and its summary counts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use benchmarks::task::source::Position;
use benchmarks::task::AnySuite;
use wire::SkippedTask;

/// Why the tasks could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TaskFilesError {
    /// A file or folder could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// What the system said.
        message: String,
    },
    /// A file is not in the suite's layout.
    #[error("{path}: {message}")]
    Layout {
        /// The file.
        path: String,
        /// What is wrong, and where in it.
        message: String,
    },
    /// Two tasks share a key: results would overwrite each other.
    #[error("two tasks share the key {key:?}: {first} and {second}")]
    Duplicate {
        /// The key.
        key: String,
        /// Where it was first read.
        first: String,
        /// Where it was read again.
        second: String,
    },
    /// The folder holds no file of tasks.
    #[error("{0} holds no task file (.json or .jsonl)")]
    NoFiles(String),
}

/// The tasks read, in order, and those left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadTasks {
    /// The tasks that can run, as their suite's JSON.
    pub tasks: Vec<serde_json::Value>,
    /// The tasks left out, with their places and reasons.
    pub skipped: Vec<SkippedTask>,
    /// How many files were read.
    pub files: usize,
}

impl ReadTasks {
    /// Tasks read in all: `tasks + skipped`.
    pub fn read(&self) -> usize {
        self.tasks.len() + self.skipped.len()
    }
}

/// The files of tasks at `path` for `suite`: the file itself, or every `.json`/`.jsonl` file
/// below the folder (its release folder when it has one), sorted by path.
pub fn task_files(suite: &dyn AnySuite, path: &Path) -> Result<Vec<PathBuf>, TaskFilesError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let root = match suite.release_folder().map(|f| path.join(f)) {
        Some(folder) if folder.is_dir() => folder,
        _ => path.to_path_buf(),
    };
    let mut files = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|e| io(&folder, &e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io(&folder, &e))?;
            let p = entry.path();
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if hidden {
                continue;
            }
            if p.is_dir() {
                folders.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "jsonl")
            ) {
                files.push(p);
            }
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(TaskFilesError::NoFiles(root.display().to_string()));
    }
    Ok(files)
}

/// Every task at `path` (see [`task_files`]) for `suite`, keys checked unique across all
/// files, tasks the suite cannot prepare left out with their reasons.
pub fn read_tasks(suite: &dyn AnySuite, path: &Path) -> Result<ReadTasks, TaskFilesError> {
    let files = task_files(suite, path)?;
    // Places are named from the folder given (or the file's own name).
    let base = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(Path::new(""))
    };
    let mut out = ReadTasks {
        files: files.len(),
        ..ReadTasks::default()
    };
    let mut seen: HashMap<String, String> = HashMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| io(file, &e))?;
        let shown = file
            .strip_prefix(base)
            .unwrap_or(file)
            .display()
            .to_string();
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let located = suite
            .read_tasks(&name, &text)
            .map_err(|e| TaskFilesError::Layout {
                path: file.display().to_string(),
                message: e.0,
            })?;
        for (position, task) in located {
            let place = place_of(&shown, position);
            let key = match suite.key_of(&task) {
                Ok(key) => key,
                Err(e) => {
                    out.skipped.push(SkippedTask { place, why: e.0 });
                    continue;
                }
            };
            if let Some(first) = seen.get(&key) {
                return Err(TaskFilesError::Duplicate {
                    key,
                    first: first.clone(),
                    second: place,
                });
            }
            seen.insert(key, place.clone());
            match suite.prepare_json(&task) {
                Ok(_) => out.tasks.push(task),
                Err(e) => out.skipped.push(SkippedTask { place, why: e.0 }),
            }
        }
    }
    Ok(out)
}

/// `tasks` (read by a suite's own reader) split into those `suite` can prepare and those it
/// cannot, with why, named by position and key.
pub fn checked(suite: &dyn AnySuite, tasks: Vec<serde_json::Value>) -> ReadTasks {
    let mut read = ReadTasks {
        files: 1,
        ..ReadTasks::default()
    };
    for (n, t) in tasks.into_iter().enumerate() {
        match suite.prepare_json(&t) {
            Ok(_) => read.tasks.push(t),
            Err(e) => read.skipped.push(SkippedTask {
                place: format!("item {} ({})", n + 1, suite.key_of(&t).unwrap_or_default()),
                why: e.0,
            }),
        }
    }
    read
}

fn place_of(file: &str, position: Position) -> String {
    if file.is_empty() {
        position.to_string()
    } else {
        format!("{file} {position}")
    }
}

fn io(path: &Path, e: &std::io::Error) -> TaskFilesError {
    TaskFilesError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchmarks::task::Registry;

    fn cal(subfield: &str, id: &str) -> String {
        format!(
            "{{\"id\": \"{id}\", \"type\": \"{subfield}\", \"question\": \"q\", \
             \"final_answer_list\": [\"1.5\"]}}\n"
        )
    }

    #[test]
    fn a_release_folder_is_read_whole_and_ids_may_repeat_across_subfields() {
        let registry = Registry::standard();
        let suite = registry.get("omnimat-cal").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("cal")).unwrap();
        std::fs::create_dir_all(dir.path().join("qa")).unwrap();
        std::fs::write(
            dir.path().join("cal/01_A.jsonl"),
            cal("A", "001") + &cal("A", "002"),
        )
        .unwrap();
        std::fs::write(dir.path().join("cal/02_B.jsonl"), cal("B", "001")).unwrap();
        std::fs::write(dir.path().join("qa/01_A_QA_rubric.json"), "[]").unwrap();
        let read = read_tasks(suite.as_ref(), dir.path()).unwrap();
        assert_eq!((read.files, read.tasks.len(), read.read()), (2, 3, 3));
        let keys: Vec<String> = read
            .tasks
            .iter()
            .map(|t| suite.key_of(t).unwrap())
            .collect();
        assert_eq!(keys, ["A/001", "A/002", "B/001"]);
    }

    #[test]
    fn a_repeated_key_names_both_places() {
        let registry = Registry::standard();
        let suite = registry.get("omnimat-cal").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.jsonl"), cal("A", "001")).unwrap();
        std::fs::write(
            dir.path().join("b.jsonl"),
            "\n".to_string() + &cal("A", "001"),
        )
        .unwrap();
        let e = read_tasks(suite.as_ref(), dir.path())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "two tasks share the key \"A/001\": a.jsonl line 1 and b.jsonl line 2"
        );
    }

    #[test]
    fn tasks_that_cannot_run_are_counted_with_their_reason() {
        let registry = Registry::standard();
        let suite = registry.get("omnimat-cal").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.jsonl");
        std::fs::write(&file, cal("A", "001") + "{\"question\": \"no id\"}\n").unwrap();
        let read = read_tasks(suite.as_ref(), &file).unwrap();
        assert_eq!((read.tasks.len(), read.skipped.len()), (1, 1));
        assert_eq!(read.skipped[0].place, "x.jsonl line 2");
        assert!(
            read.skipped[0].why.contains("missing field `id`"),
            "{:?}",
            read.skipped
        );
        let e = read_tasks(suite.as_ref(), dir.path().join("none.jsonl").as_path());
        assert!(matches!(e, Err(TaskFilesError::Io { .. })));
    }
}
