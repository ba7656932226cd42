//! MatTools on the server: the tool-usage tasks from their folder layout
//! (`tasks/<name>/question.txt`, `properties.json`, `new_unit_test.py`, with
//! `missing-files.txt` and `test_files/` beside `tasks/`, as the reference repository and
//! `shared/data/mattools` lay them out), the test files they read, and our own QA questions.

mod agentic;
pub mod agents;
pub mod docs;
mod model_docs;

use std::path::{Path, PathBuf};

use benchmarks::mattools::code::CodeTask;
use benchmarks::task::AnySuite;

use benchmarks::mattools::code::agent::{AgentKind, DocSource};
use futures_util::future::BoxFuture;

use super::{
    neutral, AgentError, AgentReply, AgentTask, LoadError, SuiteHost, SuitesConfig, TaskSet,
};
use crate::agents::Effects;
use crate::task_files::ReadTasks;

/// The name of the sandbox data set holding the test files.
const DATA_SET: &str = benchmarks::mattools::code::harness::DATA_SET;

/// The tool-usage suite's host.
pub struct MatToolsCode;

impl SuiteHost for MatToolsCode {
    fn name(&self) -> &'static str {
        <benchmarks::mattools::code::MatToolsCode as benchmarks::task::Suite>::NAME
    }

    /// The tasks of `[suites] mattools_dir`; none when it is not set (the page says how).
    fn task_set(&self, config: &SuitesConfig) -> Option<TaskSet> {
        Some(match &config.mattools_dir {
            None => (
                Vec::new(),
                "none: point the server at MatTools' data folder ([suites] mattools_dir or \
                 ATOMWORLD_MATTOOLS_DIR)"
                    .to_string(),
            ),
            Some(dir) => match TaskDir::at(dir).and_then(|d| d.load()) {
                Ok(tasks) => (values(&tasks), format!("{}", dir.display())),
                Err(e) => {
                    tracing::warn!("MatTools tasks in {}: {e}", dir.display());
                    (Vec::new(), format!("{}: {e}", dir.display()))
                }
            },
        })
    }

    /// The data folder's test files, as the sandbox's data set.
    fn sandbox_data(&self, tasks: Option<&Path>, config: &SuitesConfig) -> Vec<(String, PathBuf)> {
        let folder = match tasks {
            Some(dir) => Some(dir).filter(|d| d.is_dir()),
            None => config.mattools_dir.as_deref(),
        };
        folder
            .and_then(|d| TaskDir::at(d).ok()?.test_files)
            .map(|files| vec![(DATA_SET.to_string(), files)])
            .unwrap_or_default()
    }

    /// The model-written documentation the `*-model-doc` agents search.
    fn prepare_with_model<'a>(
        &'a self,
        model: &'a str,
        limit: Option<usize>,
        fx: &'a Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<String, String>>> {
        Some(Box::pin(model_docs::write(model, limit, fx)))
    }

    /// Every agent of `benchmarks::mattools::code::agent::AgentKind` (documentation, code or
    /// model-written documentation search, self-reflection, agentic RAG).
    fn answer_with<'a>(
        &'a self,
        agent: &'a str,
        model: &'a str,
        task: AgentTask<'a>,
        fx: &'a Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<AgentReply, AgentError>>> {
        let kind = AgentKind::from_name(agent)?;
        Some(Box::pin(async move {
            let code_task: CodeTask = serde_json::from_value(task.json.clone())
                .map_err(|e| AgentError::Task(format!("not a MatTools code task: {e}")))?;
            // Without the documentation a model writes beforehand, these agents would answer
            // as `single` under another name: refuse instead.
            if kind.source() == Some(DocSource::ModelWritten) {
                docs::index(fx.code, DocSource::ModelWritten)
                    .await
                    .map_err(AgentError::Task)?;
            }
            let answer = agents::answer(kind, model, &code_task, task.sample, fx).await?;
            Ok(neutral(answer))
        }))
    }

    /// A data folder (or its folder of task folders); a file of tasks as JSON lines.
    fn read(&self, suite: &dyn AnySuite, path: &Path) -> Result<ReadTasks, LoadError> {
        if !path.is_dir() {
            return crate::task_files::read_tasks(suite, path)
                .map_err(|e| LoadError::Input(e.to_string()));
        }
        let tasks = values(&TaskDir::at(path)?.load()?);
        Ok(crate::task_files::checked(suite, tasks))
    }
}

/// The QA suite's host: our own questions are its built-in set.
pub struct MatToolsQa;

impl SuiteHost for MatToolsQa {
    fn name(&self) -> &'static str {
        <benchmarks::mattools::qa::suite::MatToolsQa as benchmarks::task::Suite>::NAME
    }

    fn task_set(&self, _config: &SuitesConfig) -> Option<TaskSet> {
        use benchmarks::mattools::qa::item::{parse_qa_bundle, BUNDLE};
        let qa = parse_qa_bundle(BUNDLE).unwrap_or_default();
        Some((
            values(&qa),
            "our own questions on pymatgen 2024.8.9 (benchmarks/data/mattools_qa.json)".into(),
        ))
    }
}

fn values<T: serde::Serialize>(items: &[T]) -> Vec<serde_json::Value> {
    items
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect()
}

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
    pub fn at(dir: &Path) -> Result<TaskDir, LoadError> {
        let (tasks, root) = if dir.join("tasks").is_dir() {
            (dir.join("tasks"), dir.to_path_buf())
        } else {
            (
                dir.to_path_buf(),
                dir.parent().map_or(dir.to_path_buf(), Path::to_path_buf),
            )
        };
        if !tasks.is_dir() {
            return Err(LoadError::Input(format!(
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
    pub fn load(&self) -> Result<Vec<CodeTask>, LoadError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p)
                .map_err(|e| LoadError::Input(format!("cannot read {}: {e}", p.display())))
        };
        let missing: Vec<String> = match &self.missing {
            Some(p) => read(p)?.lines().map(str::to_string).collect(),
            None => Vec::new(),
        };
        let present: Option<Vec<String>> = match &self.test_files {
            Some(dir) => Some(
                std::fs::read_dir(dir)
                    .map_err(|e| LoadError::Input(format!("cannot list {}: {e}", dir.display())))?
                    .filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect(),
            ),
            None => None,
        };
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.tasks)
            .map_err(|e| LoadError::Input(format!("cannot list {}: {e}", self.tasks.display())))?
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
            .map_err(|e| LoadError::Input(e.to_string()))?;
            tasks.push(task);
        }
        if tasks.is_empty() {
            return Err(LoadError::Input(format!(
                "no task folders (with question.txt) in {}",
                self.tasks.display()
            )));
        }
        Ok(tasks)
    }
}
