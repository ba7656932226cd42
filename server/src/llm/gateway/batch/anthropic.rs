//! Anthropic's Message Batches: the requests go in one `POST /messages/batches` (each with
//! its `custom_id` and the body it would have alone as `params`), the batch is polled (`GET
//! /messages/batches/{id}`) until its `processing_status` is `ended`, and its results are
//! read from its `results_url`: one line per request, `custom_id` and a `result` that
//! `succeeded` (with the message) or `errored`, was `canceled` or `expired`.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{create, json_of, str_at, text_of, Endpoint, ProviderBatch};
use crate::llm::LlmError;

/// Make a batch of the requests; its id.
pub(super) async fn submit(
    client: &reqwest::Client,
    at: &Endpoint,
    bodies: Vec<(String, Value)>,
) -> Result<String, LlmError> {
    let requests: Vec<Value> = bodies
        .into_iter()
        .map(|(custom_id, params)| json!({"custom_id": custom_id, "params": params}))
        .collect();
    let url = format!("{}/messages/batches", at.base);
    create(client, at, &url, &json!({ "requests": requests })).await
}

/// How batch `id` stands; once ended, its results read.
pub(super) async fn poll(
    client: &reqwest::Client,
    at: &Endpoint,
    id: &str,
) -> Result<ProviderBatch, LlmError> {
    let own = format!("{}/messages/batches/{id}", at.base);
    let batch = json_of(at.with_headers(client.get(&own)).send().await).await?;
    let status = str_at(&batch, "/processing_status", "the batch")?.to_string();
    if status != "ended" {
        return Ok(ProviderBatch::Waiting(status));
    }
    // The key goes only where the batch itself is: a results URL elsewhere is not followed.
    let results_url = batch
        .pointer("/results_url")
        .and_then(Value::as_str)
        .filter(|u| u.starts_with(&at.base))
        .map_or_else(|| format!("{own}/results"), str::to_string);
    let text = text_of(at.with_headers(client.get(results_url)).send().await).await?;
    let mut results = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (custom_id, result) = result_line(line)?;
        results.insert(custom_id, result);
    }
    Ok(ProviderBatch::Ended { status, results })
}

/// One result line: the request's id and its message, or why it has none.
fn result_line(line: &str) -> Result<(String, Result<Value, String>), LlmError> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| LlmError::Malformed(format!("a batch result line: {e}")))?;
    let custom_id = str_at(&v, "/custom_id", "a batch result line")?.to_string();
    let result = match v.pointer("/result/type").and_then(Value::as_str) {
        Some("succeeded") => v
            .pointer("/result/message")
            .cloned()
            .ok_or_else(|| "succeeded without a message".to_string()),
        Some("errored") => Err(v
            .pointer("/result/error/error/message")
            .or_else(|| v.pointer("/result/error/message"))
            .and_then(Value::as_str)
            .unwrap_or("errored")
            .to_string()),
        Some(other) => Err(format!("the request was {other}")),
        None => Err("a result without a type".to_string()),
    };
    Ok((custom_id, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_give_messages_or_the_reason_there_is_none() {
        let ok = r#"{"custom_id":"r0","result":{"type":"succeeded","message":{"content":[{"type":"text","text":"hi"}]}}}"#;
        assert_eq!(
            result_line(ok).unwrap(),
            (
                "r0".into(),
                Ok(json!({"content": [{"type": "text", "text": "hi"}]}))
            )
        );
        let errored = r#"{"custom_id":"r1","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens too large"}}}}"#;
        assert_eq!(
            result_line(errored).unwrap().1,
            Err("max_tokens too large".into())
        );
        let expired = r#"{"custom_id":"r2","result":{"type":"expired"}}"#;
        assert_eq!(
            result_line(expired).unwrap().1,
            Err("the request was expired".into())
        );
    }
}
