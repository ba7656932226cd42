//! Share links: the current case in the URL fragment (`#case=…` for AtomWorld,
//! `#suite-case=…` for the other suites' tasks), so a link reproduces the case on any host,
//! static ones included.

use wire::case::{decode, decode_suite_case, encode, encode_suite_case, Case, SuiteCase};

const PREFIX: &str = "#case=";

fn hash() -> Option<String> {
    web_sys::window()?.location().hash().ok()
}

/// The case in the page's URL fragment, if there is a valid one.
pub fn case_from_location() -> Option<Case> {
    decode(hash()?.strip_prefix(PREFIX)?).ok()
}

/// Why the fragment's case could not be opened, if there is one that failed.
pub fn error_from_location() -> Option<String> {
    let h = hash()?;
    let body = h.strip_prefix(PREFIX)?;
    decode(body)
        .err()
        .map(|e| format!("Cannot open the shared case: {e}"))
}

/// Put `case` in the URL (without reloading); returns the link (see [`copy_to_clipboard`]).
pub fn publish(case: &Case) -> Option<String> {
    put_in_url(PREFIX, &encode(case))
}

/// Copy `text` to the clipboard; whether the browser allowed it (it may refuse without
/// permission or focus, and then the page says so instead of "copied").
pub async fn copy_to_clipboard(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let navigator = window.navigator();
    // No clipboard outside secure contexts (a workshop server on a LAN address over http).
    let has_clipboard = js_sys::Reflect::get(&navigator, &"clipboard".into())
        .is_ok_and(|c| !c.is_undefined() && !c.is_null());
    if !has_clipboard {
        return false;
    }
    let promise = navigator.clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}

/// Put `prefix` + `encoded` as this page's fragment (without reloading); returns the link.
fn put_in_url(prefix: &str, encoded: &str) -> Option<String> {
    let window = web_sys::window()?;
    let location = window.location();
    let base = format!("{}{}", location.origin().ok()?, location.pathname().ok()?);
    let link = format!("{base}{prefix}{encoded}");
    let _ = window.history().ok()?.replace_state_with_url(
        &wasm_bindgen::JsValue::NULL,
        "",
        Some(&link),
    );
    Some(link)
}

/// The address of a case kept by the server under `id`.
pub fn short_link(id: &str) -> Option<String> {
    let window = web_sys::window()?;
    Some(format!("{}/c/{id}", window.location().origin().ok()?))
}

/// The fragment prefix of a suite case (MatTools, OmniMatBench, AlchemyBench) on `/suites`.
const SUITE_PREFIX: &str = "#suite-case=";

/// The suite case in the page's URL fragment: `None` without one, `Some(Err)` when it is
/// damaged (said in plain words).
pub fn suite_case_from_location() -> Option<Result<SuiteCase, String>> {
    let h = hash()?;
    let body = h.strip_prefix(SUITE_PREFIX)?;
    Some(decode_suite_case(body).map_err(|e| format!("Cannot open the shared task: {e}")))
}

/// Put a suite case in the URL (without reloading) and copy the link; returns the link.
pub fn publish_suite_case(case: &SuiteCase) -> Option<String> {
    let link = put_in_url(SUITE_PREFIX, &encode_suite_case(case))?;
    let _ = web_sys::window()?.navigator().clipboard().write_text(&link);
    Some(link)
}
