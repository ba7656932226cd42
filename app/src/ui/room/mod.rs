//! Workshop rooms: `/room` opens a room (host) or joins one (participant); the host sees the
//! attempts live; `/room/open` opens one attempt as a playground case. What the page keeps
//! in the browser: the host token of the room it opened, and the room it joined.

mod dashboard;
mod send;

use leptos::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use wire::case::{encode, Case, CaseStructure, CASE_VERSION};
use wire::{RoomCreate, RoomCreated};

pub use send::RoomSend;

/// Where the browser keeps the room it opened (with the host token).
const HOST_KEY: &str = "atomworld.room.host";
/// Where the browser keeps the room it joined and the nickname.
const MEMBER_KEY: &str = "atomworld.room.member";

/// The room this browser opened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Hosted {
    code: String,
    token: String,
    name: String,
    expires_at: String,
}

/// The room this browser joined.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Member {
    code: String,
    who: String,
}

fn local() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn load<T: DeserializeOwned>(key: &str) -> Option<T> {
    serde_json::from_str(&local()?.get_item(key).ok()??).ok()
}

fn save<T: Serialize>(key: &str, value: &T) {
    if let (Some(s), Ok(text)) = (local(), serde_json::to_string(value)) {
        let _ = s.set_item(key, &text);
    }
}

fn forget(key: &str) {
    if let Some(s) = local() {
        let _ = s.remove_item(key);
    }
}

/// A value of the address's query (`?name=value`).
fn query(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('=').map(str::to_string))
        .filter(|s| !s.is_empty())
}

fn go(path: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.location().assign(path);
    }
}

/// A server timestamp (`2025-01-02T03:04:05Z`) as people read it.
fn when(stamp: &str) -> String {
    stamp.replace('T', " ").replace('Z', " UTC")
}

/// A label in plain words.
fn plain_label(label: &str) -> &'static str {
    match label {
        "Success" => "right",
        "OutputFormatError" => "no CIF in the answer",
        "CifParsingError" => "the CIF cannot be read",
        "AtomCountMismatch" => "wrong number of atoms",
        "StructureMismatch" => "atoms in the wrong places",
        "EvaluationTimeout" => "took too long to check",
        _ => "other",
    }
}

/// How long a host may keep a room: (hours, words).
const KEEP_FOR: [(u32, &str); 5] = [
    (1, "1 hour"),
    (3, "3 hours"),
    (24, "1 day"),
    (72, "3 days"),
    (168, "7 days"),
];

/// The `/room` page.
#[component]
pub fn Room() -> impl IntoView {
    let hosted = RwSignal::new(load::<Hosted>(HOST_KEY));
    let invited = query("code");
    let join_first = invited.is_some();
    let host_part = move || match hosted.get() {
        Some(h) => view! {
            <dashboard::Dashboard
                code=h.code.clone()
                token=h.token.clone()
                name=h.name.clone()
                expires_at=h.expires_at.clone()
                on_closed=Callback::new(move |()| {
                    forget(HOST_KEY);
                    hosted.set(None);
                })
            />
        }
        .into_any(),
        None => view! {
            <HostForm on_open=Callback::new(move |h: Hosted| {
                save(HOST_KEY, &h);
                hosted.set(Some(h));
            }) />
        }
        .into_any(),
    };
    view! {
        <section class="room-page" id="room-page">
            <h2>"Workshop room"</h2>
            <p class="muted">
                "A host opens a room and shows its code. Everyone else joins with the code, "
                "works in the playground and sends their answers to the room; the host sees "
                "who got what right, live. The server checks every answer itself."
            </p>
            {if join_first {
                view! { <JoinForm invited=invited.clone() />{host_part} }.into_any()
            } else {
                view! { {host_part}<JoinForm invited=None /> }.into_any()
            }}
        </section>
    }
}

/// Open a room: name, how long it is kept, the server's passcode when it has one.
#[component]
fn HostForm(on_open: Callback<Hosted>) -> impl IntoView {
    let name = RwSignal::new("Workshop".to_string());
    let hours = RwSignal::new(3u32);
    let passcode = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let open = move |_| {
        let request = RoomCreate {
            name: name.get_untracked(),
            ttl_hours: hours.get_untracked(),
        };
        let pass = passcode.get_untracked();
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            match crate::api::create_room(&request, &pass).await {
                Ok(RoomCreated {
                    code,
                    host_token,
                    expires_at,
                }) => on_open.run(Hosted {
                    code,
                    token: host_token,
                    name: request.name.trim().to_string(),
                    expires_at,
                }),
                Err(e) => error.set(Some(e)),
            }
            busy.set(false);
        });
    };
    view! {
        <div class="panel room-host">
            <h3>"Host a room"</h3>
            <div class="room-form">
                <label>"Name " <input id="room-name" maxlength="80" prop:value=move || name.get()
                    on:input=move |e| name.set(event_target_value(&e)) /></label>
                <label>"Keep it for "
                    <select id="room-ttl" on:change=move |e| {
                        if let Ok(h) = event_target_value(&e).parse() { hours.set(h) }
                    }>
                        {KEEP_FOR.iter().map(|(h, words)| view! {
                            <option value=h.to_string() selected=*h == 3>{*words}</option>
                        }).collect_view()}
                    </select>
                </label>
                <label>"Passcode " <input id="room-passcode" type="password" placeholder="only if this server has one"
                    prop:value=move || passcode.get() on:input=move |e| passcode.set(event_target_value(&e)) /></label>
                <button id="open-room" on:click=open disabled=move || busy.get()>"Open the room"</button>
            </div>
            <p class="muted small">
                "The room and every answer sent to it are deleted when the time is up, or "
                "earlier when you close it."
            </p>
            {move || error.get().map(|e| view! { <p class="error" id="room-error">{e}</p> })}
        </div>
    }
}

/// Join a room with its code and a nickname; then the playground shows the room's banner.
#[component]
fn JoinForm(invited: Option<String>) -> impl IntoView {
    let member = load::<Member>(MEMBER_KEY);
    let code = RwSignal::new(
        invited
            .or_else(|| member.as_ref().map(|m| m.code.clone()))
            .unwrap_or_default(),
    );
    let who = RwSignal::new(member.as_ref().map(|m| m.who.clone()).unwrap_or_default());
    let error = RwSignal::new(None::<String>);
    let join = move |_| {
        let (c, w) = (code.get_untracked(), who.get_untracked().trim().to_string());
        if w.is_empty() {
            error.set(Some("Pick a nickname first.".into()));
            return;
        }
        leptos::task::spawn_local(async move {
            match crate::api::room(&c).await {
                Ok(Some(info)) => {
                    save(
                        MEMBER_KEY,
                        &Member {
                            code: info.code,
                            who: w,
                        },
                    );
                    go("/");
                }
                Ok(None) => error.set(Some(
                    "There is no open room with this code. Check the letters, or ask the host."
                        .into(),
                )),
                Err(e) => error.set(Some(e)),
            }
        });
    };
    view! {
        <div class="panel room-join">
            <h3>"Join a room"</h3>
            {member.map(|m| view! {
                <p class="muted" id="room-joined">
                    {format!("You are in room {} as {}. ", m.code, m.who)}
                    <a href="/">"Back to the playground"</a>
                </p>
            })}
            <div class="room-form">
                <label>"Code " <input id="join-code" maxlength="12" autocapitalize="characters"
                    prop:value=move || code.get() on:input=move |e| code.set(event_target_value(&e)) /></label>
                <label>"Your nickname " <input id="join-name" maxlength="40"
                    prop:value=move || who.get() on:input=move |e| who.set(event_target_value(&e)) /></label>
                <button id="join-room" on:click=join>"Join"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="error" id="join-error">{e}</p> })}
        </div>
    }
}

/// `/room/open?code=…&attempt=…`: fetch one attempt with the host token and open it in the
/// playground as a share link (`/#case=…`) would.
#[component]
pub fn OpenAttempt() -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let code = query("code").unwrap_or_default();
    let attempt = query("attempt").and_then(|a| a.parse::<i64>().ok());
    let hosted = load::<Hosted>(HOST_KEY).filter(|h| h.code == code);
    match (hosted, attempt) {
        (Some(h), Some(id)) => leptos::task::spawn_local(async move {
            match crate::api::room_attempt(&h.code, id, &h.token).await {
                Ok(d) => {
                    let case = Case {
                        v: CASE_VERSION,
                        structure: CaseStructure::Cif { cif: d.input_cif },
                        prompt: d.prompt,
                        semantics: Default::default(),
                        answer: d.answer,
                        model: d.attempt.model,
                        seed: None,
                    };
                    if let Some(w) = web_sys::window() {
                        let _ = w.location().replace(&format!("/#case={}", encode(&case)));
                    }
                }
                Err(e) => error.set(Some(e)),
            }
        }),
        _ => error.set(Some(
            "Only the browser that opened this room can open its answers.".into(),
        )),
    }
    view! {
        <section class="panel">
            {move || match error.get() {
                None => view! { <p class="muted" id="attempt-loading">"Opening the answer…"</p> }.into_any(),
                Some(e) => view! {
                    <p class="error" id="attempt-error">{format!("This answer cannot be opened: {e}")}</p>
                    <a href="/room">"Back to the room"</a>
                }.into_any(),
            }}
        </section>
    }
}
