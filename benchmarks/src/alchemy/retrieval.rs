//! [`RecipeIndex`]: the nearest recipes of a query recipe by cosine similarity of their
//! embeddings ([`crate::retrieval::Embeddings`]), the train split's in, the references out
//! (never the recipe itself).

use super::recipe::{Recipe, Reference};
use crate::retrieval::{Embeddings, Neighbour, RetrievalError};

/// The recipes of a retrieval set (upstream: the train split) and their embeddings.
#[derive(Clone, Debug)]
pub struct RecipeIndex {
    embeddings: Embeddings,
    /// Per row: the recipe's id and its two texts.
    rows: Vec<(String, Reference)>,
}

impl RecipeIndex {
    /// Indexes the recipes that have an embedding (the others are skipped); every embedding
    /// must have the first one's length. `None` when no recipe has one.
    pub fn build<'a>(
        recipes: impl IntoIterator<Item = &'a Recipe>,
    ) -> Result<Option<Self>, RetrievalError> {
        let mut index: Option<Self> = None;
        for r in recipes {
            let Some(e) = &r.contributions_embedding else {
                continue;
            };
            let ix = match &mut index {
                Some(ix) => ix,
                None => index.insert(Self {
                    embeddings: Embeddings::new(e.len())?,
                    rows: Vec::new(),
                }),
            };
            ix.embeddings.push(e).map_err(|err| match err {
                RetrievalError::Length { got, expected, .. } => RetrievalError::Length {
                    what: format!("the embedding of recipe {}", r.id),
                    got,
                    expected,
                },
                RetrievalError::NotFinite { index, .. } => RetrievalError::NotFinite {
                    what: format!("the embedding of recipe {}", r.id),
                    index,
                },
                other => other,
            })?;
            ix.rows.push((r.id.clone(), r.as_reference()));
        }
        Ok(index)
    }

    /// The id of the recipe in row `index` (a [`Neighbour`]'s index).
    pub fn id(&self, index: usize) -> Option<&str> {
        self.rows.get(index).map(|(id, _)| id.as_str())
    }

    /// The indexed embeddings.
    pub fn embeddings(&self) -> &Embeddings {
        &self.embeddings
    }

    /// The `k` nearest references to `embedding`, nearest first, leaving out the recipe
    /// whose id is `exclude_id` (a recipe is never its own reference).
    pub fn references(
        &self,
        embedding: &[f32],
        k: usize,
        exclude_id: &str,
    ) -> Result<Vec<(Neighbour, &Reference)>, RetrievalError> {
        let hits = self.embeddings.top_k_where(embedding, k, |i| {
            self.rows.get(i).is_some_and(|(id, _)| id != exclude_id)
        })?;
        Ok(hits
            .into_iter()
            .filter_map(|h| self.rows.get(h.index).map(|(_, r)| (h, r)))
            .collect())
    }
}
