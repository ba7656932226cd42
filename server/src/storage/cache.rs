//! The model gateway's caches: answers and embeddings (first one wins, so repeated runs stay
//! identical), and their export as JSON lines.

use base64::Engine as _;

use super::engine::{params, Value};
use super::{Storage, StorageError};

/// Errors importing a cache file.
#[derive(Debug, thiserror::Error)]
pub enum CacheImportError {
    /// A line is not a cache entry.
    #[error("line {0}: {1}")]
    Line(usize, String),
    /// The database refused the entry.
    #[error("database error: {0}")]
    Storage(String),
}

const PUT_ANSWER: &str = "INSERT INTO llm_cache (key, model, response, input_tokens, output_tokens)
     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (key) DO NOTHING";
const PUT_EMBEDDING: &str = "INSERT INTO embedding_cache (key, model, dim, vector)
     VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key) DO NOTHING";

impl Storage {
    /// A cached response: (text, input tokens, output tokens).
    pub fn cache_get(&self, key: &str) -> Result<Option<(String, u64, u64)>, StorageError> {
        let row = self.db().query_opt(
            "SELECT response, input_tokens, output_tokens FROM llm_cache WHERE key = ?1",
            params![key],
        )?;
        row.map(|r| Ok((r.text(0)?, r.count(1)?, r.count(2)?)))
            .transpose()
    }

    /// Store a response in the cache (first answer wins: repeated runs stay identical).
    pub fn cache_put(
        &self,
        key: &str,
        model: &str,
        response: &str,
        input_tokens: u64,
        output_tokens: u64,
    ) -> Result<(), StorageError> {
        self.db().execute(
            PUT_ANSWER,
            params![key, model, response, input_tokens, output_tokens],
        )?;
        Ok(())
    }

    /// The cached embeddings of `keys`, in order (`None` where there is none, or where the
    /// stored bytes are not a whole number of `f32`s).
    pub fn embeddings_get(&self, keys: &[String]) -> Result<Vec<Option<Vec<f32>>>, StorageError> {
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let row = self.db().query_opt(
                "SELECT vector FROM embedding_cache WHERE key = ?1",
                params![key],
            )?;
            out.push(match row {
                Some(r) => floats(&r.blob(0)?),
                None => None,
            });
        }
        Ok(out)
    }

    /// Store embeddings `(key, vector)` of `model` in one transaction (first one wins).
    pub fn embeddings_put(
        &self,
        model: &str,
        entries: &[(String, Vec<f32>)],
    ) -> Result<(), StorageError> {
        self.db().tx(|c| {
            for (key, v) in entries {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                c.execute(PUT_EMBEDDING, params![key, model, v.len(), bytes])?;
            }
            Ok(())
        })
    }

    /// Export the response cache as JSON lines (for replaying a workshop offline): the
    /// answers, then the embeddings (`"kind": "embedding"`, the vector as base64 of its
    /// little-endian `f32`s).
    pub fn cache_export(&self) -> Result<Vec<String>, StorageError> {
        let mut lines = Vec::new();
        for r in self.db().query(
            "SELECT key, model, response, input_tokens, output_tokens FROM llm_cache ORDER BY key",
            &[],
        )? {
            lines.push(
                serde_json::json!({
                    "key": r.text(0)?,
                    "model": r.text(1)?,
                    "response": r.text(2)?,
                    "input_tokens": r.int(3)?,
                    "output_tokens": r.int(4)?,
                })
                .to_string(),
            );
        }
        for r in self.db().query(
            "SELECT key, model, vector FROM embedding_cache ORDER BY key",
            &[],
        )? {
            lines.push(
                serde_json::json!({
                    "kind": "embedding",
                    "key": r.text(0)?,
                    "model": r.text(1)?,
                    "vector": base64::engine::general_purpose::STANDARD.encode(r.blob(2)?),
                })
                .to_string(),
            );
        }
        Ok(lines)
    }

    /// Import cache lines written by [`Storage::cache_export`]; returns how many were new.
    /// Existing entries are kept (first answer wins).
    pub fn cache_import(&self, lines: &[String]) -> Result<usize, CacheImportError> {
        let mut added = 0;
        for (n, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (sql, params) = import_line(line).map_err(|e| CacheImportError::Line(n + 1, e))?;
            added += self
                .db()
                .execute(sql, &params)
                .map_err(|e| CacheImportError::Storage(e.to_string()))?;
        }
        Ok(usize::try_from(added).unwrap_or(usize::MAX))
    }
}

/// The statement that stores one exported line, and its parameters.
fn import_line(line: &str) -> Result<(&'static str, Vec<Value>), String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let field = |k: &str| {
        v[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("missing \"{k}\""))
    };
    if v["kind"] == "embedding" {
        let (key, model, vector) = (field("key")?, field("model")?, field("vector")?);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(vector)
            .ok()
            .filter(|b| floats(b).is_some())
            .ok_or("\"vector\" is not base64 of f32s")?;
        let dim = bytes.len() / 4;
        return Ok((PUT_EMBEDDING, params![key, model, dim, bytes].to_vec()));
    }
    let (key, model, response) = (field("key")?, field("model")?, field("response")?);
    let tokens = |k: &str| v[k].as_i64().unwrap_or(0);
    Ok((
        PUT_ANSWER,
        params![
            key,
            model,
            response,
            tokens("input_tokens"),
            tokens("output_tokens")
        ]
        .to_vec(),
    ))
}

/// Little-endian `f32`s from bytes, unless they are empty or not a whole number of them.
fn floats(bytes: &[u8]) -> Option<Vec<f32>> {
    (bytes.len().is_multiple_of(4) && !bytes.is_empty()).then(|| {
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::each_engine;

    #[test]
    fn cache_export_import_round_trip() {
        each_engine(|s| {
            s.cache_put("k1", "m", "answer one", 3, 4).unwrap();
            s.cache_put("k2", "m", "answer two", 5, 6).unwrap();
            let v = vec![0.25f32, -1.5e-7, 3.0];
            s.embeddings_put("e", &[("ek".into(), v.clone())]).unwrap();
            let lines = s.cache_export().unwrap();
            // Into a store of the same engine: SQLite's each_engine runs first, so the
            // second store is made by hand from the same location kind.
            let other = tempfile::tempdir().unwrap();
            let t = crate::storage::Storage::open(other.path()).unwrap();
            assert_eq!(t.cache_import(&lines).unwrap(), 3);
            assert_eq!(t.cache_import(&lines).unwrap(), 0);
            assert_eq!(t.embeddings_get(&["ek".into()]).unwrap(), vec![Some(v)]);
            let e = t
                .cache_import(&[
                    "{\"kind\": \"embedding\", \"key\": \"x\", \"model\": \"e\", \"vector\": \"AAA\"}"
                        .into(),
                ])
                .unwrap_err();
            assert!(e.to_string().contains("base64 of f32s"), "{e}");
            assert_eq!(
                t.cache_get("k2").unwrap(),
                Some(("answer two".into(), 5, 6))
            );
            let e = t.cache_import(&["{\"key\": 1}".into()]).unwrap_err();
            assert!(e.to_string().starts_with("line 1:"), "{e}");
            // And back: what SQLite exported imports into this engine too.
            s.execute_for_test("DELETE FROM llm_cache");
            assert_eq!(s.cache_import(&t.cache_export().unwrap()).unwrap(), 2);
            assert_eq!(
                s.cache_get("k1").unwrap(),
                Some(("answer one".into(), 3, 4))
            );
        });
    }

    #[test]
    fn embeddings_round_trip_bit_for_bit() {
        each_engine(|s| {
            let v = vec![0.1f32, -3.5e-12, f32::MAX];
            s.embeddings_put("m", &[("k".into(), v.clone())]).unwrap();
            s.embeddings_put("m", &[("k".into(), vec![9.0])]).unwrap();
            assert_eq!(
                s.embeddings_get(&["x".into(), "k".into()]).unwrap(),
                vec![None, Some(v)]
            );
        });
    }
}
