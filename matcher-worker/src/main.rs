//! The matching worker: a Web Worker the playground starts (`/matcher_loader.js`, written by
//! Trunk from `index.html`'s `data-type="worker"` link) so that scoring an answer, which can
//! take seconds on a large target, never blocks the page. It reads a JSON [`Job`]
//! per message and posts a JSON [`FromWorker`] back.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use matcher_worker::{FromWorker, Job, TargetCache};

thread_local! {
    static CACHE: RefCell<TargetCache> = RefCell::new(TargetCache::default());
}

fn post(scope: &web_sys::DedicatedWorkerGlobalScope, message: &FromWorker) {
    if let Ok(text) = serde_json::to_string(message) {
        let _ = scope.post_message(&JsValue::from_str(&text));
    }
}

fn main() {
    console_error_panic_hook::set_once();
    let Ok(scope) = js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() else {
        return; // not started as a worker: nothing to listen to
    };
    let reply_to = scope.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let Some(text) = event.data().as_string() else {
                return;
            };
            // The page only sends what it serialised itself; anything else is ignored.
            let Ok(job) = serde_json::from_str::<Job>(&text) else {
                return;
            };
            let done = CACHE.with(|c| job.run(&mut c.borrow_mut()));
            post(&reply_to, &FromWorker::Done(Box::new(done)));
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget(); // the handler lives as long as the worker
    post(&scope, &FromWorker::Ready);
}
