//! AlchemyBench on the server: recipes read from JSONL or the upstream Parquet files, our own
//! recipes as the built-in set, and each task's references retrieved before a run (with
//! embeddings computed through the gateway, within the run's spend cap).

pub mod recipes;

use std::path::Path;

use benchmarks::alchemy::{AlchemyTask, Recipe};
use benchmarks::task::{AnySuite, Suite};
use futures_util::future::BoxFuture;

use super::{LoadError, Preparation, SuiteHost, SuitesConfig, TaskSet};
use crate::llm::spend::Budget;
use crate::llm::Gateway;
use crate::suites::EmbeddingUse;
use crate::task_files::ReadTasks;
use recipes::{bm25_references, read_recipes, with_references, ReferenceError};

/// AlchemyBench's host.
pub struct Alchemy;

impl SuiteHost for Alchemy {
    fn name(&self) -> &'static str {
        benchmarks::alchemy::Alchemy::NAME
    }

    fn task_set(&self, _config: &SuitesConfig) -> Option<TaskSet> {
        let tasks =
            without_references(benchmarks::alchemy::demo::demo_recipes().unwrap_or_default());
        Some((
            tasks,
            "our own recipes (benchmarks/data/alchemy_demo.jsonl), one-shot prompt".into(),
        ))
    }

    /// Recipes as JSONL or Parquet (the split from the file's name), without references.
    fn read(&self, suite: &dyn AnySuite, path: &Path) -> Result<ReadTasks, LoadError> {
        let recipes = read_recipes(path).map_err(|e| LoadError::Input(e.to_string()))?;
        Ok(crate::task_files::checked(
            suite,
            without_references(recipes),
        ))
    }

    /// Each recipe with its K nearest recipes of the reference pool (none when K is 0);
    /// missing embeddings are computed through the gateway, within the run's spend cap.
    fn prepare<'a>(
        &'a self,
        tasks: Vec<serde_json::Value>,
        how: &'a Preparation<'a>,
    ) -> BoxFuture<'a, Result<(Vec<serde_json::Value>, EmbeddingUse), LoadError>> {
        Box::pin(async move {
            let mut recipes = Vec::with_capacity(tasks.len());
            for t in tasks {
                let task: AlchemyTask = serde_json::from_value(t)
                    .map_err(|e| LoadError::Input(format!("not an AlchemyBench task: {e}")))?;
                recipes.push(task.recipe);
            }
            let pool = match (how.references, how.reference_pool) {
                (0, _) => Vec::new(),
                (_, None) => {
                    return Err(LoadError::Input(
                        "--rag-k needs --train TRAIN.jsonl|.parquet".into(),
                    ))
                }
                (_, Some(p)) => read_recipes(p).map_err(|e| LoadError::Input(e.to_string()))?,
            };
            let embedder = how.embeddings.map(|m| (how.gateway, m));
            // The run does not exist yet (its spec holds these tasks), so its cap starts from
            // nothing here; what this costs is then recorded on the run and counts against
            // the same cap.
            let budget = how
                .gateway
                .config()
                .limits
                .run_spend_usd
                .map(|cap| Budget::for_run(cap, 0.0));
            let (tasks, used) =
                with_references(recipes, pool, how.references, embedder, budget.as_ref())
                    .await
                    .map_err(load_error)?;
            let mut out = Vec::with_capacity(tasks.len());
            for task in tasks {
                out.push(
                    serde_json::to_value(&task).map_err(|e| LoadError::Failure(e.to_string()))?,
                );
            }
            Ok((out, used))
        })
    }

    fn reference_counts(&self) -> &'static [usize] {
        &K
    }

    /// By cosine over embeddings when an embeddings model is configured (computed through
    /// the gateway and cached), else by BM25, labelled as an offline stand-in; the task's
    /// `retrieval` says which, with each reference's id and score.
    fn with_references<'a>(
        &'a self,
        task: serde_json::Value,
        k: usize,
        pool: Vec<serde_json::Value>,
        gateway: &'a Gateway,
        embeddings: Option<&'a str>,
    ) -> Option<BoxFuture<'a, Result<serde_json::Value, LoadError>>> {
        Some(Box::pin(async move {
            if !K.contains(&k) {
                return Err(LoadError::Input(format!(
                    "k is {k}; AlchemyBench retrieves 0, 1, 5, 10 or 25 references"
                )));
            }
            let task: AlchemyTask = serde_json::from_value(task)
                .map_err(|e| LoadError::Input(format!("not an AlchemyBench task: {e}")))?;
            let pool: Vec<Recipe> = pool
                .into_iter()
                .filter_map(|t| serde_json::from_value::<AlchemyTask>(t).ok())
                .map(|t| t.recipe)
                .collect();
            let retrieved = match (k, embeddings) {
                (0, _) => AlchemyTask {
                    recipe: task.recipe,
                    references: Vec::new(),
                    retrieval: None,
                },
                (k, Some(model)) => {
                    let (mut tasks, _) =
                        with_references(vec![task.recipe], pool, k, Some((gateway, model)), None)
                            .await
                            .map_err(load_error)?;
                    tasks
                        .pop()
                        .ok_or_else(|| LoadError::Failure("no task came back".into()))?
                }
                (k, None) => bm25_references(task.recipe, &pool, k),
            };
            serde_json::to_value(&retrieved).map_err(|e| LoadError::Failure(e.to_string()))
        }))
    }
}

/// `recipes` as tasks with no references (the one-shot prompt), as JSON.
fn without_references(recipes: Vec<Recipe>) -> Vec<serde_json::Value> {
    recipes
        .into_iter()
        .map(|recipe| AlchemyTask {
            recipe,
            references: Vec::new(),
            retrieval: None,
        })
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect()
}

/// The numbers of references AlchemyBench's RAG condition is run with.
pub const K: [usize; 5] = [0, 1, 5, 10, 25];

fn load_error(e: ReferenceError) -> LoadError {
    match e {
        ReferenceError::Llm(e) => LoadError::Llm(e),
        other => LoadError::Input(other.to_string()),
    }
}
