//! The task sets the server offers the page (`GET /api/suites/{name}/tasks`): our own items
//! shipped with `bench` (OmniMatBench demo items, MatTools QA questions, AlchemyBench recipes) and MatTools'
//! tool-usage tasks when the server is pointed at their folder (`[suites] mattools_dir`, or
//! `ATOMWORLD_MATTOOLS_DIR`). Upstream data is never shipped; it is read where the user keeps it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bench::task::{AnySuite, Registry};
use bench::wire::{SuiteInfo, SuiteTask};
use serde::{Deserialize, Serialize};

/// The `[suites]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SuitesConfig {
    /// MatTools' data folder (holding `tasks/`, `test_files/`, `missing-files.txt`).
    pub mattools_dir: Option<PathBuf>,
}

impl Default for SuitesConfig {
    fn default() -> Self {
        Self {
            mattools_dir: std::env::var_os("ATOMWORLD_MATTOOLS_DIR").map(PathBuf::from),
        }
    }
}

/// Tasks by suite, each as its suite's JSON, with where they came from.
#[derive(Clone, Debug, Default)]
pub struct TaskSets {
    sets: BTreeMap<String, (Vec<serde_json::Value>, String)>,
}

fn values<T: Serialize>(items: &[T]) -> Vec<serde_json::Value> {
    items
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect()
}

impl TaskSets {
    /// The built-in sets plus what `config` points at. A folder that cannot be read is
    /// reported in the set's source line (and the log), not fatal.
    pub fn load(config: &SuitesConfig) -> Self {
        let mut sets = BTreeMap::new();
        let (cal, qa) = bench::omnimat::demo::demo_items();
        let ours = "our own demo items (bench/data/omnimat_demo.json)".to_string();
        sets.insert("omnimat-cal".to_string(), (values(&cal), ours.clone()));
        sets.insert("omnimat-qa".to_string(), (values(&qa), ours));
        let qa = bench::mattools::qa::item::parse_qa_bundle(bench::mattools::qa::item::BUNDLE)
            .unwrap_or_default();
        sets.insert(
            "mattools-qa".to_string(),
            (
                values(&qa),
                "our own questions on pymatgen 2024.8.9 (bench/data/mattools_qa.json)".into(),
            ),
        );
        let code = match &config.mattools_dir {
            None => (
                Vec::new(),
                "none: point the server at MatTools' data folder ([suites] mattools_dir or \
                 ATOMWORLD_MATTOOLS_DIR)"
                    .to_string(),
            ),
            Some(dir) => match crate::cli::mattools::TaskDir::at(dir).and_then(|d| d.load()) {
                Ok(tasks) => (values(&tasks), format!("{}", dir.display())),
                Err(e) => {
                    tracing::warn!("MatTools tasks in {}: {}", dir.display(), e.message);
                    (Vec::new(), format!("{}: {}", dir.display(), e.message))
                }
            },
        };
        sets.insert("mattools-code".to_string(), code);
        let recipes = bench::alchemy::demo::demo_recipes().unwrap_or_default();
        let tasks: Vec<bench::alchemy::AlchemyTask> = recipes
            .into_iter()
            .map(|recipe| bench::alchemy::AlchemyTask {
                recipe,
                references: Vec::new(),
            })
            .collect();
        sets.insert(
            "alchemy".to_string(),
            (
                values(&tasks),
                "our own recipes (bench/data/alchemy_demo.jsonl), one-shot prompt".into(),
            ),
        );
        TaskSets { sets }
    }

    /// Whether MatTools' code tasks are listed (their folder is configured and read): code
    /// will then run in the pymatgen sandbox.
    pub fn has_mattools_code(&self) -> bool {
        self.sets
            .get("mattools-code")
            .is_some_and(|(tasks, _)| !tasks.is_empty())
    }

    /// The tasks of `suite` as JSON and where they come from.
    pub fn raw(&self, suite: &str) -> (Vec<serde_json::Value>, String) {
        self.sets
            .get(suite)
            .cloned()
            .unwrap_or_else(|| (Vec::new(), "no task set".into()))
    }

    /// Every suite of `registry` with its task count.
    pub fn list(&self, registry: &Registry) -> Vec<SuiteInfo> {
        registry
            .names()
            .into_iter()
            .filter_map(|name| registry.get(name).ok())
            .map(|suite| {
                let (tasks, source) = self
                    .sets
                    .get(suite.name())
                    .map(|(t, s)| (t.len(), s.clone()))
                    .unwrap_or((0, "generated in the page".into()));
                SuiteInfo {
                    name: suite.name().to_string(),
                    baselines: suite.baselines().iter().map(|b| b.to_string()).collect(),
                    tasks,
                    source,
                }
            })
            .collect()
    }

    /// The tasks of `suite`, prepared (tasks that cannot be prepared are left out).
    pub fn tasks(&self, suite: &dyn AnySuite) -> Vec<SuiteTask> {
        let Some((tasks, _)) = self.sets.get(suite.name()) else {
            return Vec::new();
        };
        tasks
            .iter()
            .filter_map(|t| {
                let p = suite.prepare_json(t).ok()?;
                Some(SuiteTask {
                    id: p.id.clone(),
                    group: p.group.clone(),
                    prompt: crate::runs::prompt_text(&p.messages),
                    messages: p.messages.clone(),
                    task: t.clone(),
                })
            })
            .collect()
    }
}
