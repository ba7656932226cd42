//! A worker's loop: read each JSON [`Job`] the page posts, answer it with a JSON
//! [`FromWorker::Done`], and say [`FromWorker::Ready`] once listening.

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::{Done, FromWorker, Job};

/// Answer every job with `handle` for as long as the worker lives. Does nothing when not
/// started as a worker (there is nothing to listen to).
pub fn listen<W, O>(mut handle: impl FnMut(W) -> O + 'static)
where
    W: DeserializeOwned + 'static,
    O: Serialize + 'static,
{
    let Ok(scope) = js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() else {
        return;
    };
    let reply_to = scope.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let Some(text) = event.data().as_string() else {
                return;
            };
            // The page only sends what it serialised itself; anything else is ignored.
            let Ok(job) = serde_json::from_str::<Job<W>>(&text) else {
                return;
            };
            let done = Done {
                id: job.id,
                outcome: handle(job.work),
            };
            post(&reply_to, &FromWorker::Done(Box::new(done)));
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget(); // the handler lives as long as the worker
    post(&scope, &FromWorker::<O>::Ready);
}

fn post<O: Serialize>(scope: &web_sys::DedicatedWorkerGlobalScope, message: &FromWorker<O>) {
    if let Ok(text) = serde_json::to_string(message) {
        let _ = scope.post_message(&JsValue::from_str(&text));
    }
}
