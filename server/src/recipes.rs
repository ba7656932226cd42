//! AlchemyBench's recipe files and the RAG condition's references, on the server side.
//!
//! [`read_recipes`] reads a file of recipes in the spec's fields (JSONL, one recipe a line);
//! a recipe without a `split` takes the split its file name names (`train`,
//! `test_standard_impact`, `test_high_impact`), as the upstream files are split by file.
//! [`with_references`] gives each recipe its K nearest train recipes by exact cosine
//! (`bench::alchemy::RecipeIndex`) over the stored `contributions_embedding`s, and computes
//! the missing ones through the gateway's embeddings endpoint (cached) when an embeddings
//! model is chosen.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bench::alchemy::{import_jsonl, AlchemyTask, ImportError, Recipe, RecipeIndex, RetrievalError};

use crate::llm::spend::Budget;
use crate::llm::{Gateway, LlmError};

/// The three upstream splits, longest name first (none is a part of another, but a file
/// name may hold more than one word).
pub const SPLITS: [&str; 3] = ["test_standard_impact", "test_high_impact", "train"];

/// Why a recipe file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecipeFileError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A JSONL line is not a usable recipe.
    #[error("{path}: {source}")]
    Jsonl {
        /// The file.
        path: PathBuf,
        /// What is wrong, and on which line.
        source: ImportError,
    },
}

/// Why the references could not be found.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// A recipe has no stored embedding and no embeddings model is chosen.
    #[error(
        "recipe {0} has no contributions_embedding: choose an embeddings model \
         (--embeddings-model, or [limits] embeddings_model) to compute the missing ones"
    )]
    NoEmbedding(String),
    /// No train recipe can be retrieved.
    #[error("the train split has no recipe")]
    EmptyTrain,
    /// The embeddings call failed.
    #[error("computing embeddings: {0}")]
    Llm(#[from] LlmError),
    /// The vectors do not fit together (a stored embedding of another model's length).
    #[error("{0} (stored embeddings and computed ones must come from one model)")]
    Retrieval(#[from] RetrievalError),
}

/// The split a file name names, if exactly one.
pub fn split_of(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    let mut found = SPLITS.iter().filter(|s| name.contains(*s));
    let first = found.next()?;
    found.next().is_none().then_some(*first)
}

/// The recipes of a JSONL file; a recipe without a split takes its file name's.
pub fn read_recipes(path: &Path) -> Result<Vec<Recipe>, RecipeFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| RecipeFileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut recipes = import_jsonl(&text).map_err(|source| RecipeFileError::Jsonl {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(split) = split_of(path) {
        for r in recipes.iter_mut().filter(|r| r.split.trim().is_empty()) {
            r.split = split.to_string();
        }
    }
    Ok(recipes)
}

/// What computing embeddings cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EmbeddingUse {
    /// Recipes whose embedding was computed (or taken from the embeddings cache).
    pub computed: usize,
    /// Of those, how many came from the cache.
    pub cached: usize,
    /// Input tokens sent.
    pub input_tokens: u64,
    /// Cost in USD.
    pub cost_usd: f64,
}

/// Embeddings for the recipes that lack one, by embeddings model `model` (`None`: an error
/// names the first recipe without one).
async fn fill_embeddings(
    recipes: &mut [&mut Recipe],
    embedder: Option<(&Gateway, &str)>,
    budget: Option<&Arc<Budget>>,
    used: &mut EmbeddingUse,
) -> Result<(), ReferenceError> {
    let missing: Vec<usize> = (0..recipes.len())
        .filter(|&i| recipes[i].contributions_embedding.is_none())
        .collect();
    let Some(&first) = missing.first() else {
        return Ok(());
    };
    let Some((gateway, model)) = embedder else {
        return Err(ReferenceError::NoEmbedding(recipes[first].id.clone()));
    };
    let texts: Vec<String> = missing
        .iter()
        .map(|&i| recipes[i].contribution.clone())
        .collect();
    let got = gateway.embed(model, &texts, budget).await?;
    used.computed += texts.len();
    used.cached += got.cached;
    used.input_tokens += got.input_tokens;
    used.cost_usd += got.cost_usd;
    for (&i, v) in missing.iter().zip(got.vectors) {
        recipes[i].contributions_embedding = Some(v);
    }
    Ok(())
}

/// AlchemyBench tasks of `recipes`, each with its `k` nearest recipes of `train` (never
/// itself) as references, nearest first; none when `k` is 0 (the one-shot prompt). Stored
/// embeddings are used as they are; the missing ones, of train and query recipes alike, are
/// computed by `embedder` (gateway and embeddings model), so that model must be the one the
/// stored ones came from (upstream: text-embedding-3-large) wherever a set mixes the two.
/// The tasks do not carry the embeddings further.
pub async fn with_references(
    mut recipes: Vec<Recipe>,
    mut train: Vec<Recipe>,
    k: usize,
    embedder: Option<(&Gateway, &str)>,
    budget: Option<&Arc<Budget>>,
) -> Result<(Vec<AlchemyTask>, EmbeddingUse), ReferenceError> {
    let mut used = EmbeddingUse::default();
    let mut tasks = Vec::with_capacity(recipes.len());
    if k == 0 {
        for mut recipe in recipes {
            recipe.contributions_embedding = None;
            tasks.push(AlchemyTask {
                recipe,
                references: Vec::new(),
            });
        }
        return Ok((tasks, used));
    }
    {
        let mut all: Vec<&mut Recipe> = train.iter_mut().chain(recipes.iter_mut()).collect();
        fill_embeddings(&mut all, embedder, budget, &mut used).await?;
    }
    let index = RecipeIndex::build(&train)?.ok_or(ReferenceError::EmptyTrain)?;
    for mut recipe in recipes {
        let e = recipe
            .contributions_embedding
            .take()
            .ok_or_else(|| ReferenceError::NoEmbedding(recipe.id.clone()))?;
        let references = index
            .references(&e, k, &recipe.id)
            .map_err(|err| match err {
                RetrievalError::Length { got, expected, .. } => RetrievalError::Length {
                    what: format!("the embedding of recipe {}", recipe.id),
                    got,
                    expected,
                },
                other => other,
            })?
            .into_iter()
            .map(|(_, r)| r.clone())
            .collect();
        tasks.push(AlchemyTask { recipe, references });
    }
    Ok((tasks, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_from_the_file_name() {
        assert_eq!(
            split_of(Path::new("/d/train-00000-of-00002.parquet")),
            Some("train")
        );
        assert_eq!(
            split_of(Path::new("test_high_impact.jsonl")),
            Some("test_high_impact")
        );
        assert_eq!(split_of(Path::new("recipes.jsonl")), None);
        assert_eq!(split_of(Path::new("train_vs_test_high_impact.jsonl")), None);
    }

    fn recipe(id: &str, e: Option<Vec<f32>>) -> Recipe {
        let mut r: Recipe = serde_json::from_value(serde_json::json!({
            "id": id, "contribution": format!("X {id}"), "recipe": format!("Y {id}")
        }))
        .unwrap();
        r.contributions_embedding = e;
        r
    }

    #[tokio::test]
    async fn stored_embeddings_need_no_model_and_missing_ones_do() {
        let train = vec![
            recipe("a", Some(vec![1.0, 0.0])),
            recipe("b", Some(vec![0.0, 1.0])),
            recipe("c", Some(vec![0.7, 0.7])),
        ];
        let queries = vec![
            recipe("q", Some(vec![0.1, 1.0])),
            recipe("b", Some(vec![0.0, 1.0])),
        ];
        let (tasks, used) = with_references(queries, train.clone(), 2, None, None)
            .await
            .unwrap();
        assert_eq!(used, EmbeddingUse::default());
        let ids = |t: &AlchemyTask| -> Vec<String> {
            t.references
                .iter()
                .map(|r| r.contribution.clone())
                .collect()
        };
        assert_eq!(ids(&tasks[0]), ["X b", "X c"]);
        assert_eq!(
            ids(&tasks[1]),
            ["X c", "X a"],
            "a recipe is not its own reference"
        );
        assert!(tasks
            .iter()
            .all(|t| t.recipe.contributions_embedding.is_none()));
        let err = with_references(vec![recipe("q", None)], train, 1, None, None)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ReferenceError::NoEmbedding(id) if id == "q"),
            "{err}"
        );
        let (one_shot, _) = with_references(vec![recipe("q", None)], Vec::new(), 0, None, None)
            .await
            .unwrap();
        assert!(one_shot[0].references.is_empty());
    }
}
