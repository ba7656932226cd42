//! The OpenAI embeddings protocol (`POST {base}/embeddings`), which OpenAI-compatible
//! servers speak too.

use serde_json::{json, Value};

use super::{HttpCall, ProtocolError};

fn malformed(what: &str) -> ProtocolError {
    ProtocolError::Malformed(what.to_string())
}

/// The embeddings request for `texts` to `model` at `base` (no trailing `/`) with `key` (if
/// any): `{"model", "input": [...]}` (and `dimensions` when given), floats asked for
/// explicitly.
pub fn build_embeddings(
    base: &str,
    model: &str,
    dimensions: Option<u32>,
    texts: &[String],
    key: Option<&str>,
) -> HttpCall {
    let mut body = json!({ "model": model, "input": texts, "encoding_format": "float" });
    if let Some(d) = dimensions {
        body["dimensions"] = json!(d);
    }
    let mut headers = vec![("content-type".into(), "application/json".into())];
    if let Some(k) = key {
        headers.push(("authorization".into(), format!("Bearer {k}")));
    }
    HttpCall {
        url: format!("{base}/embeddings"),
        headers,
        body,
    }
}

/// The vectors (in input order) and the input tokens of an embeddings answer to `n` inputs:
/// `{"data": [{"index", "embedding": [...]}], "usage": {"prompt_tokens"}}`. Every input must
/// get exactly one vector, all of one non-zero length (`dim` when given), every value a
/// finite `f32`.
pub fn parse_embeddings(
    body: &Value,
    n: usize,
    dim: Option<usize>,
) -> Result<(Vec<Vec<f32>>, u64), ProtocolError> {
    let data = body["data"]
        .as_array()
        .ok_or_else(|| malformed("no data array"))?;
    if data.len() != n {
        return Err(ProtocolError::Malformed(format!(
            "{} embeddings for {n} inputs",
            data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    let mut len = dim;
    for (pos, item) in data.iter().enumerate() {
        let index = match &item["index"] {
            Value::Null => pos,
            v => v
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < n)
                .ok_or_else(|| ProtocolError::Malformed(format!("data[{pos}].index is {v}")))?,
        };
        let values = item["embedding"].as_array().ok_or_else(|| {
            ProtocolError::Malformed(format!(
                "data[{pos}].embedding is not a list of numbers (base64 is not asked for)"
            ))
        })?;
        let mut v = Vec::with_capacity(values.len());
        for (j, x) in values.iter().enumerate() {
            let f = x
                .as_f64()
                .map(|f| f as f32)
                .filter(|f| f.is_finite())
                .ok_or_else(|| {
                    ProtocolError::Malformed(format!(
                        "data[{pos}].embedding[{j}] is not a finite number"
                    ))
                })?;
            v.push(f);
        }
        match len {
            _ if v.is_empty() => {
                return Err(ProtocolError::Malformed(format!(
                    "data[{pos}].embedding is empty"
                )))
            }
            Some(d) if d != v.len() => {
                return Err(ProtocolError::Malformed(format!(
                    "data[{pos}].embedding has {} values, expected {d}",
                    v.len()
                )))
            }
            _ => len = Some(v.len()),
        }
        if out[index].replace(v).is_some() {
            return Err(ProtocolError::Malformed(format!(
                "index {index} answered twice"
            )));
        }
    }
    let vectors = out
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| malformed("an input got no embedding"))?;
    let u = &body["usage"];
    let tokens = u["prompt_tokens"]
        .as_u64()
        .or_else(|| u["total_tokens"].as_u64())
        .unwrap_or(0);
    Ok((vectors, tokens))
}
