//! The model-written documentation (`benchmarks::mattools::code::model_docs`): written once
//! by `atomworld prepare --suite mattools-code --model M`, one model call per class, function,
//! method and property of the pinned stack, into one file that later runs search
//! (`rag-model-doc`, `reflect-model-doc`). The file is
//! `~/.cache/atomworld/mattools-model-docs-<key>.json` (the key hashes the pins, the
//! extractor and the writing prompt), or the file `ATOMWORLD_MODEL_DOCS` names. Writing
//! again goes on where it stopped, with the same writer model only.

use std::path::PathBuf;

use benchmarks::mattools::code::harness::objects_program;
use benchmarks::mattools::code::model_docs::{ModelDocs, SourcedObject};
use futures_util::stream::{self, StreamExt};

use super::docs::{cache_path, extracted, Extract};
use crate::agents::Effects;

/// Objects documented at once.
const AT_ONCE: usize = 4;
/// Objects documented between two saves of the file.
const SAVE_EVERY: usize = 40;

/// Where the written documentation is.
pub fn file() -> PathBuf {
    if let Some(path) = std::env::var_os("ATOMWORLD_MODEL_DOCS") {
        return PathBuf::from(path);
    }
    let empty = SourcedObject {
        name: String::new(),
        kind: String::new(),
        signature: String::new(),
        source: String::new(),
    };
    let prompt = empty.writing_messages().remove(0).content;
    cache_path("mattools-model-docs", &[&objects_program(), &prompt])
}

/// The written documentation, or why there is none.
pub fn written() -> Result<ModelDocs, String> {
    let path = file();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "no model-written documentation at {} ({e}): write it first with `atomworld \
             prepare --suite mattools-code --model MODEL`",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Documents with `model` the objects not yet documented (at most `limit` of them), saving
/// the file as it goes; a line saying what was written and what it cost. A failed call stops
/// the writing with what was written so far saved.
pub async fn write(model: &str, limit: Option<usize>, fx: &Effects<'_>) -> Result<String, String> {
    let path = file();
    let mut docs = if path.exists() {
        written()?
    } else {
        ModelDocs {
            writer: model.to_string(),
            entries: Vec::new(),
        }
    };
    if docs.writer != model {
        return Err(format!(
            "{} was written by {}: go on with --model {}, or remove the file to start again",
            path.display(),
            docs.writer,
            docs.writer
        ));
    }
    let objects: Vec<SourcedObject> = extracted(fx.code, Extract::Objects).await?;
    let documentable: Vec<&SourcedObject> = objects.iter().filter(|o| o.documentable()).collect();
    let done: std::collections::HashSet<String> =
        docs.entries.iter().map(|e| e.name.clone()).collect();
    let todo: Vec<SourcedObject> = documentable
        .iter()
        .filter(|o| !done.contains(&o.name))
        .take(limit.unwrap_or(usize::MAX))
        .map(|o| (*o).clone())
        .collect();
    let (mut cost, mut failure) = (0.0, None);
    let mut written_now = 0;
    for batch in todo.chunks(SAVE_EVERY) {
        let (gateway, budget) = (fx.gateway, fx.budget);
        let replies: Vec<(SourcedObject, _)> = stream::iter(batch.to_vec())
            .map(|o: SourcedObject| async move {
                let reply = gateway
                    .complete_within(model, &o.writing_messages(), 0, budget)
                    .await;
                (o, reply)
            })
            .buffered(AT_ONCE)
            .collect()
            .await;
        for (o, reply) in replies {
            match reply {
                Ok(c) => {
                    cost += c.cost_usd;
                    written_now += 1;
                    docs.entries.push(o.written(&c.text));
                }
                Err(e) => {
                    failure.get_or_insert_with(|| format!("{}: {e}", o.name));
                }
            }
        }
        save(&path, &docs)?;
        if failure.is_some() {
            break;
        }
    }
    let line = format!(
        "{written_now} objects documented by {model} (${cost:.4}); {} of {} in {}",
        docs.entries.len(),
        documentable.len(),
        path.display()
    );
    match failure {
        Some(f) => Err(format!("{line}; stopped at {f}")),
        None => Ok(line),
    }
}

fn save(path: &std::path::Path, docs: &ModelDocs) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string(docs).map_err(|e| e.to_string())?;
    // Written beside and renamed, so a stop mid-write never leaves half a file.
    let part = path.with_extension("json.part");
    std::fs::write(&part, text).map_err(|e| format!("{}: {e}", part.display()))?;
    std::fs::rename(&part, path).map_err(|e| format!("{}: {e}", path.display()))
}
