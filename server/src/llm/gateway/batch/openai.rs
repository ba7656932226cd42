//! OpenAI's Batch API: the requests go up as a JSON-lines file (`POST /files`, purpose
//! `batch`), a batch is made of it (`POST /batches`, 24 h window), polled (`GET
//! /batches/{id}`), and once it ended its output and error files are read (`GET
//! /files/{id}/content`): one line per request, `custom_id` and the response's body.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{create, json_of, str_at, text_of, Endpoint, ProviderBatch};
use crate::llm::LlmError;

/// The statuses after which a batch changes no more.
const ENDED: [&str; 4] = ["completed", "failed", "expired", "cancelled"];

/// Upload the requests and make a batch of them; its id.
pub(super) async fn submit(
    client: &reqwest::Client,
    at: &Endpoint,
    bodies: Vec<(String, Value)>,
) -> Result<String, LlmError> {
    let lines: String = bodies
        .into_iter()
        .map(|(custom_id, body)| {
            json!({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                   "body": body})
            .to_string()
                + "\n"
        })
        .collect();
    let file = reqwest::multipart::Part::bytes(lines.into_bytes())
        .file_name("atomworld-batch.jsonl")
        .mime_str("application/jsonl")
        .map_err(|e| LlmError::Batch(e.to_string()))?;
    let form = reqwest::multipart::Form::new()
        .text("purpose", "batch")
        .part("file", file);
    let uploaded = json_of(
        at.with_headers(client.post(format!("{}/files", at.base)))
            .multipart(form)
            .send()
            .await,
    )
    .await?;
    let file_id = str_at(&uploaded, "/id", "the uploaded batch file")?;
    let made = json!({"input_file_id": file_id, "endpoint": "/v1/chat/completions",
                      "completion_window": "24h"});
    create(client, at, &format!("{}/batches", at.base), &made).await
}

/// How batch `id` stands; once ended, its output and error files read.
pub(super) async fn poll(
    client: &reqwest::Client,
    at: &Endpoint,
    id: &str,
) -> Result<ProviderBatch, LlmError> {
    let batch = json_of(
        at.with_headers(client.get(format!("{}/batches/{id}", at.base)))
            .send()
            .await,
    )
    .await?;
    let status = str_at(&batch, "/status", "the batch")?.to_string();
    if !ENDED.contains(&status.as_str()) {
        return Ok(ProviderBatch::Waiting(status));
    }
    let mut results = HashMap::new();
    for file in ["/output_file_id", "/error_file_id"] {
        let Some(file_id) = batch.pointer(file).and_then(Value::as_str) else {
            continue;
        };
        let text = text_of(
            at.with_headers(client.get(format!("{}/files/{file_id}/content", at.base)))
                .send()
                .await,
        )
        .await?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (custom_id, result) = result_line(line)?;
            results.insert(custom_id, result);
        }
    }
    // A batch that failed as a whole (its file refused) names why in `errors`.
    if let Some(why) = batch
        .pointer("/errors/data/0/message")
        .and_then(Value::as_str)
    {
        return Ok(ProviderBatch::Ended {
            status: format!("{status}: {why}"),
            results,
        });
    }
    Ok(ProviderBatch::Ended { status, results })
}

/// One line of an output or error file: the request's id and its answer's body, or why it
/// has none.
fn result_line(line: &str) -> Result<(String, Result<Value, String>), LlmError> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| LlmError::Malformed(format!("a batch result line: {e}")))?;
    let custom_id = str_at(&v, "/custom_id", "a batch result line")?.to_string();
    let code = v.pointer("/response/status_code").and_then(Value::as_u64);
    let result = match (v.pointer("/response/body"), code) {
        (Some(body), Some(200)) => Ok(body.clone()),
        (body, code) => Err(v
            .pointer("/error/message")
            .or_else(|| body.and_then(|b| b.pointer("/error/message")))
            .and_then(Value::as_str)
            .map_or_else(
                || format!("answered HTTP {}", code.unwrap_or(0)),
                str::to_string,
            )),
    };
    Ok((custom_id, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_give_bodies_or_the_reason_there_is_none() {
        let ok = r#"{"id":"b1","custom_id":"r0","response":{"status_code":200,"body":{"choices":[]}},"error":null}"#;
        assert_eq!(
            result_line(ok).unwrap(),
            ("r0".into(), Ok(json!({"choices": []})))
        );
        let refused = r#"{"custom_id":"r1","response":{"status_code":400,"body":{"error":{"message":"bad model"}}},"error":null}"#;
        assert_eq!(result_line(refused).unwrap().1, Err("bad model".into()));
        let expired = r#"{"custom_id":"r2","response":null,"error":{"code":"batch_expired","message":"This request could not be executed before the completion window expired."}}"#;
        assert!(result_line(expired)
            .unwrap()
            .1
            .unwrap_err()
            .contains("completion window"));
        assert!(result_line("{}").is_err());
    }
}
