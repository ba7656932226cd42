//! The user's own API key: kept in this browser only (in memory, or in localStorage when
//! they ask the page to remember it) and sent only to the provider they chose, straight from
//! the page (`llm_protocol::direct` builds the request). Nothing of it goes to our server.

use benchmarks::task::Message;
use leptos::prelude::*;
use llm_protocol::direct::{DirectAnswer, DirectModel};
use serde::{Deserialize, Serialize};

/// Where a remembered key is kept (only when the user ticks "remember").
pub const STORAGE_KEY: &str = "atomworld.own-key";

/// A model set up with the user's own key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnKey {
    /// Provider, base URL and model name.
    pub model: DirectModel,
    /// The API key (may be empty for a local OpenAI-compatible server).
    pub key: String,
}

impl OwnKey {
    /// How the model is named in the model list.
    pub fn name(&self) -> String {
        format!("{} (your key)", self.model.model.trim())
    }
}

/// The page's own-key settings, shared by every "Ask the model" control.
#[derive(Clone, Copy)]
pub struct OwnKeys {
    /// The model in use, once the user has set one up.
    pub current: RwSignal<Option<OwnKey>>,
    /// Whether it is remembered in this browser's localStorage.
    pub remember: RwSignal<bool>,
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

impl OwnKeys {
    /// The settings, with a remembered key if the user asked for one earlier.
    pub fn load() -> Self {
        let remembered = storage()
            .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
            .and_then(|text| serde_json::from_str::<OwnKey>(&text).ok());
        Self {
            remember: RwSignal::new(remembered.is_some()),
            current: RwSignal::new(remembered),
        }
    }

    /// Use `own`; keep it in localStorage only if `remember`, and otherwise make sure no
    /// earlier copy stays there.
    pub fn set(&self, own: OwnKey, remember: bool) {
        if let Some(s) = storage() {
            match serde_json::to_string(&own) {
                Ok(text) if remember => {
                    let _ = s.set_item(STORAGE_KEY, &text);
                }
                _ => {
                    let _ = s.remove_item(STORAGE_KEY);
                }
            }
        }
        self.remember.set(remember);
        self.current.set(Some(own));
    }

    /// Forget the key, here and in localStorage.
    pub fn forget(&self) {
        if let Some(s) = storage() {
            let _ = s.remove_item(STORAGE_KEY);
        }
        self.remember.set(false);
        self.current.set(None);
    }
}

/// The settings provided by the app (or fresh ones outside it).
pub fn use_own_keys() -> OwnKeys {
    use_context::<OwnKeys>().unwrap_or_else(OwnKeys::load)
}

/// Ask the model `own` names, straight from the browser; `signal` aborts the call.
pub async fn ask(
    own: &OwnKey,
    messages: &[Message],
    signal: &web_sys::AbortSignal,
) -> Result<DirectAnswer, String> {
    let call = own
        .model
        .request(&own.key, messages)
        .map_err(|e| e.to_string())?;
    let mut request = gloo_net::http::Request::post(&call.url).abort_signal(Some(signal));
    for (name, value) in &call.headers {
        request = request.header(name, value);
    }
    let host = call
        .url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or(&call.url)
        .to_string();
    let res = request
        .body(call.body)
        .map_err(|e| e.to_string())?
        .send()
        .await
        .map_err(|_| {
            format!(
                "could not reach {host}: it is down or the address is wrong, or it does not \
                 accept calls from a web page (a local server must allow this page's origin, \
                 e.g. OLLAMA_ORIGINS for Ollama)"
            )
        })?;
    let status = res.status();
    let body = res
        .text()
        .await
        .map_err(|_| format!("the answer from {host} broke off"))?;
    own.model
        .read_answer(status, &body, &own.key)
        .map_err(|e| e.to_string())
}
