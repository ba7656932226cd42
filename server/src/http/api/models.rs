//! `GET /api/models`.

use axum::extract::State;
use axum::Json;
use wire::{ModelInfo, ModelList};

use crate::http::AppState;

/// Configured models, then every suite's baselines (names and providers only).
#[utoipa::path(get, path = "/api/models", responses((status = 200, body = ModelList)))]
pub async fn models(State(state): State<AppState>) -> Json<ModelList> {
    let mut models: Vec<ModelInfo> = state
        .gateway
        .config()
        .models
        .iter()
        .map(|m| ModelInfo {
            name: m.name.clone(),
            provider: serde_json::to_value(m.provider)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            baseline: false,
        })
        .collect();
    let registry = state.runs.registry();
    for name in registry.names() {
        let Ok(suite) = registry.get(name) else {
            continue;
        };
        for b in suite.baselines() {
            if !models.iter().any(|m| m.name == *b) {
                models.push(ModelInfo {
                    name: (*b).to_string(),
                    provider: "baseline".into(),
                    baseline: true,
                });
            }
        }
    }
    Json(ModelList { models })
}
