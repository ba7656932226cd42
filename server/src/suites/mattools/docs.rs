//! The retrieval indexes of the pinned stack: its documentation and its source code cut into
//! chunks ([`DocSource`]), each extracted once in the pymatgen sandbox
//! (`benchmarks::mattools::code::harness`), cached on disk by the stack's pins and the
//! extractor, and searched by BM25 (Okapi, the `rank-bm25` crate) offline, or by cosine
//! similarity of embeddings from a configured embeddings model ([`DocIndex::search_embedded`]:
//! every entry is embedded once per process through the gateway, whose cache keeps the vectors
//! across runs; a query costs one embedding).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

use benchmarks::mattools::code::agent::{DocEntry, DocSource};
use benchmarks::mattools::code::harness::{
    code_chunks_run, docs_run, marked_line, objects_program, objects_run, CODE_MARKER, DOCS_MARKER,
    EXTRACT_CODE, EXTRACT_DOCS,
};
use benchmarks::retrieval::{tokens, Embeddings, RetrievalError};
use benchmarks::task::{RunEnv, RunProgram};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use crate::agents::Effects;
use crate::execution::CodeRunner;
use crate::llm::spend::Budget;
use crate::llm::{Gateway, LlmError};

/// The pins the documentation comes from (its cache key, with the extractor).
const REQUIREMENTS: &str = include_str!("../../../../sandbox/python/mattools-requirements.txt");

/// A searchable set of entries.
pub struct DocIndex {
    entries: Vec<DocEntry>,
    /// The model that wrote the entries, when a model did.
    writer: Option<String>,
    index: rank_bm25::Index,
    /// The entries' embeddings per embeddings model, computed at most once each.
    embedded: Mutex<HashMap<String, Arc<OnceCell<Arc<Embeddings>>>>>,
}

/// Most characters of an entry that are embedded (an entry is a signature and a cut
/// docstring; this only guards the provider's input limit).
const MAX_EMBEDDED_CHARS: usize = 8000;

/// Why a search by embeddings failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The embeddings call failed.
    #[error("embeddings: {0}")]
    Llm(#[from] LlmError),
    /// The vectors could not be indexed or compared (lengths differ, a zero query).
    #[error("embeddings: {0}")]
    Retrieval(#[from] RetrievalError),
}

/// Entries found by embeddings, and what finding them cost.
#[derive(Clone, Debug, Default)]
pub struct Found {
    /// The entries, best first.
    pub entries: Vec<DocEntry>,
    /// Input tokens of the embeddings calls (the index's, the first time, and the query's).
    pub input_tokens: u64,
    /// Their cost in USD.
    pub cost_usd: f64,
}

impl DocIndex {
    /// Indexes `entries`; `None` when there are none.
    pub fn new(entries: Vec<DocEntry>) -> Option<DocIndex> {
        let mut builder = rank_bm25::Builder::new(rank_bm25::Params::okapi());
        for e in &entries {
            let t = tokens(&e.search_text());
            builder.add_document(t.iter().map(String::as_str)).ok()?;
        }
        let index = builder.build().ok()?;
        Some(DocIndex {
            entries,
            writer: None,
            index,
            embedded: Mutex::new(HashMap::new()),
        })
    }

    /// The same index, its entries written by model `writer`.
    pub fn written_by(self, writer: String) -> DocIndex {
        DocIndex {
            writer: Some(writer),
            ..self
        }
    }

    /// How a search of this index found its entries: `how`, and who wrote them when a model
    /// did (`bm25 · written by <model>`).
    pub fn described(&self, how: &str) -> String {
        match &self.writer {
            Some(w) => format!("{how} · written by {w}"),
            None => how.to_string(),
        }
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `k` entries that best match `query` (ties by order), best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<DocEntry> {
        let q = tokens(query);
        let scores = self.index.get_scores(&q);
        let mut order: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        order
            .into_iter()
            .take(k)
            .filter_map(|i| self.entries.get(i).cloned())
            .collect()
    }
}

impl DocIndex {
    /// The `k` entries whose embeddings by embeddings model `model` are most similar (cosine)
    /// to `query`'s, best first (ties by order). The entries are embedded the first time a
    /// model is asked for (through the gateway and its cache); that cost lands on the call
    /// that embedded them.
    pub async fn search_embedded(
        &self,
        gateway: &Gateway,
        model: &str,
        query: &str,
        k: usize,
        budget: Option<&Arc<Budget>>,
    ) -> Result<Found, SearchError> {
        let cell = {
            let mut map = self
                .embedded
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            map.entry(model.to_string()).or_default().clone()
        };
        let mut found = Found::default();
        let vectors = cell
            .get_or_try_init(|| async {
                let texts: Vec<String> = self
                    .entries
                    .iter()
                    .map(|e| e.search_text().chars().take(MAX_EMBEDDED_CHARS).collect())
                    .collect();
                let got = gateway.embed(model, &texts, budget).await?;
                found.input_tokens += got.input_tokens;
                found.cost_usd += got.cost_usd;
                let dim = got.vectors.first().map_or(0, Vec::len);
                let mut e = Embeddings::new(dim)?;
                for v in &got.vectors {
                    e.push(v)?;
                }
                Ok::<_, SearchError>(Arc::new(e))
            })
            .await?
            .clone();
        let q = gateway.embed(model, &[query.to_string()], budget).await?;
        found.input_tokens += q.input_tokens;
        found.cost_usd += q.cost_usd;
        let qv = q.vectors.first().map(Vec::as_slice).unwrap_or_default();
        found.entries = vectors
            .top_k(qv, k)?
            .into_iter()
            .filter_map(|n| self.entries.get(n.index).cloned())
            .collect();
        Ok(found)
    }
}

/// What the sandbox extracts from the pinned stack.
#[derive(Clone, Copy)]
pub(super) enum Extract {
    /// Its documentation.
    Docs,
    /// Its source code in chunks.
    CodeChunks,
    /// Its classes, functions, methods and properties with their source code.
    Objects,
}

/// How something is extracted: its program, its run, the marker before its JSON line, and
/// the name of its cache file.
struct Extractor {
    program: String,
    run: fn() -> (RunEnv, RunProgram),
    marker: &'static str,
    cache_name: &'static str,
}

fn extractor(what: Extract) -> Extractor {
    match what {
        Extract::Docs => Extractor {
            program: EXTRACT_DOCS.into(),
            run: docs_run,
            marker: DOCS_MARKER,
            cache_name: "mattools-docs",
        },
        Extract::CodeChunks => Extractor {
            program: EXTRACT_CODE.into(),
            run: code_chunks_run,
            marker: CODE_MARKER,
            cache_name: "mattools-code-chunks",
        },
        Extract::Objects => Extractor {
            program: objects_program(),
            run: objects_run,
            marker: DOCS_MARKER,
            cache_name: "mattools-objects",
        },
    }
}

/// A file under the cache directory named `name-<key>.json`, the key a hash of the pins and
/// `parts` (what the file's contents depend on).
pub(super) fn cache_path(name: &str, parts: &[&str]) -> PathBuf {
    let mut h = Sha256::new();
    h.update(REQUIREMENTS.as_bytes());
    for p in parts {
        h.update(p.as_bytes());
    }
    let key = hex::encode(&h.finalize()[..8]);
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(format!(".cache/atomworld/{name}-{key}.json"))
}

/// The index of each source, built once per process (it cannot change while the process
/// runs; an index that could not be built is tried again next time).
static INDEXES: LazyLock<[OnceCell<Arc<DocIndex>>; 3]> =
    LazyLock::new(|| [OnceCell::new(), OnceCell::new(), OnceCell::new()]);

/// The index of `source`: from the disk cache, else extracted in `code`'s pymatgen sandbox
/// the first time (a few seconds); the model-written documentation only from its file.
pub async fn index(code: &CodeRunner, source: DocSource) -> Result<Arc<DocIndex>, String> {
    let cell = match source {
        DocSource::Documentation => &INDEXES[0],
        DocSource::CodeChunks => &INDEXES[1],
        DocSource::ModelWritten => &INDEXES[2],
    };
    cell.get_or_try_init(|| async {
        let (entries, writer) = match source {
            DocSource::Documentation => (extracted(code, Extract::Docs).await?, None),
            DocSource::CodeChunks => (extracted(code, Extract::CodeChunks).await?, None),
            DocSource::ModelWritten => {
                let docs = super::model_docs::written()?;
                (docs.entries, Some(docs.writer))
            }
        };
        let index = DocIndex::new(entries).ok_or_else(|| "the index is empty".to_string())?;
        Ok(Arc::new(match writer {
            Some(w) => index.written_by(w),
            None => index,
        }))
    })
    .await
    .cloned()
}

/// The entries `what` extracts, read as `T`.
pub(super) async fn extracted<T: serde::de::DeserializeOwned>(
    code: &CodeRunner,
    what: Extract,
) -> Result<Vec<T>, String> {
    let x = extractor(what);
    let line = load(code, &x).await?;
    serde_json::from_str(&line).map_err(|e| format!("{} JSON: {e}", x.cache_name))
}

/// The extractor's JSON line: from the cache file, else from a run in the sandbox (then
/// cached).
async fn load(code: &CodeRunner, x: &Extractor) -> Result<String, String> {
    let file = cache_path(x.cache_name, &[&x.program]);
    if let Ok(text) = tokio::fs::read_to_string(&file).await {
        if serde_json::from_str::<Vec<serde::de::IgnoredAny>>(&text).is_ok() {
            return Ok(text);
        }
    }
    let (env, program) = (x.run)();
    let run = code
        .run_need(env, &program)
        .await
        .map_err(|e| format!("extracting {}: {e}", x.cache_name))?;
    let line = marked_line(&run.stdout, x.marker).ok_or_else(|| {
        format!(
            "the extractor of {} gave no result: {}",
            x.cache_name,
            run.stderr.lines().last().unwrap_or_default()
        )
    })?;
    serde_json::from_str::<Vec<serde::de::IgnoredAny>>(line)
        .map_err(|e| format!("{} JSON: {e}", x.cache_name))?;
    if let Some(dir) = file.parent() {
        let _ = tokio::fs::create_dir_all(dir).await;
    }
    // A cache that cannot be written only costs the next start a few seconds.
    let _ = tokio::fs::write(&file, line).await;
    Ok(line.to_string())
}

/// What one documentation search gave: the entries, how they were found (a round's
/// `search`), why the chosen search failed if it did, and its embeddings cost.
pub struct Searched {
    /// The entries, best first.
    pub docs: Vec<DocEntry>,
    /// How they were found (`bm25`, `embeddings:<model>`).
    pub how: String,
    /// Why the chosen search failed, if it did.
    pub error: Option<String>,
    /// Input tokens of the embeddings calls.
    pub input_tokens: u64,
    /// Their cost.
    pub cost_usd: f64,
}

/// The `k` entries of `source` best for `query` (MatTools' agents and AtomWorld's search
/// the documentation): by the embeddings model when one is chosen, else by BM25. A failed
/// embeddings search falls back to BM25 and says so in the round, except a spend cap, which
/// ends the answer as a model call's would.
pub async fn search(
    query: &str,
    k: usize,
    source: DocSource,
    fx: &Effects<'_>,
) -> Result<Searched, LlmError> {
    let index = match index(fx.code, source).await {
        Ok(index) => index,
        Err(e) => {
            return Ok(Searched {
                docs: Vec::new(),
                how: String::new(),
                error: Some(format!("nothing to search: {e}")),
                input_tokens: 0,
                cost_usd: 0.0,
            })
        }
    };
    let bm25 = |error: Option<String>| Searched {
        docs: index.search(query, k),
        how: index.described("bm25"),
        error,
        input_tokens: 0,
        cost_usd: 0.0,
    };
    let Some(model) = fx.embeddings else {
        return Ok(bm25(None));
    };
    match index
        .search_embedded(fx.gateway, model, query, k, fx.budget)
        .await
    {
        Ok(found) => Ok(Searched {
            docs: found.entries,
            how: index.described(&format!("embeddings:{model}")),
            error: None,
            input_tokens: found.input_tokens,
            cost_usd: found.cost_usd,
        }),
        Err(SearchError::Llm(e @ LlmError::SpendCap(_))) => Err(e),
        Err(e) => Ok(bm25(Some(format!("{e}; searched by BM25 instead")))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, doc: &str) -> DocEntry {
        DocEntry {
            name: name.into(),
            kind: "class".into(),
            signature: String::new(),
            doc: doc.into(),
        }
    }

    #[test]
    fn search_ranks_by_bm25() {
        let index = DocIndex::new(vec![
            entry("pymatgen.core.Structure", "A periodic crystal structure."),
            entry(
                "pymatgen.analysis.defects.generators.AntiSiteGenerator",
                "Generate antisite defects.",
            ),
            entry("pymatgen.io.vasp.Poscar", "Read and write POSCAR files."),
        ])
        .unwrap();
        let hits = index.search("antisite defects generator", 2);
        assert_eq!(
            hits[0].name,
            "pymatgen.analysis.defects.generators.AntiSiteGenerator"
        );
        assert_eq!(hits.len(), 1, "entries that share no term are not returned");
    }
}
