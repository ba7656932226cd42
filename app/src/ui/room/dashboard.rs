//! The host's screen: the code and a QR code to join, the tally per action for people and
//! each model side by side, the most common failures and the latest answers (each opens in
//! the playground), updated as attempts arrive; closing the room deletes it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use leptos::prelude::*;
use wire::{AttemptKind, AttemptView, RoomSummary};

use super::{plain_label, when};

/// The least time between two reads of the tally (a busy room answers every read at once).
const PACE_MS: i32 = 250;
/// The wait before reading again after a failed read.
const RETRY_MS: i32 = 2000;

/// The join link of a room as an SVG QR code (empty when the link does not fit one).
fn qr_svg(link: &str) -> String {
    qrcode::QrCode::new(link.as_bytes())
        .map(|q| {
            q.render::<qrcode::render::svg::Color>()
                .min_dimensions(180, 180)
                .quiet_zone(true)
                .build()
        })
        .unwrap_or_default()
}

/// A column's heading.
fn side_heading(side: &str) -> String {
    match side {
        "people" => "People (hand edits)".into(),
        "pasted" => "Pasted answers".into(),
        model => format!("Model: {model}"),
    }
}

/// How an attempt was made, in words.
fn how(a: &AttemptView) -> String {
    match (a.kind, &a.model) {
        (AttemptKind::HandEdit, _) => "hand edit".into(),
        (AttemptKind::Pasted, None) => "pasted".into(),
        (AttemptKind::Pasted, Some(m)) => format!("pasted ({m})"),
        (AttemptKind::Model, Some(m)) => format!("asked {m}"),
        (AttemptKind::Model, None) => "asked a model".into(),
    }
}

/// "2 of 3 (67%)".
fn rate(successes: u64, attempts: u64) -> String {
    if attempts == 0 {
        return "—".into();
    }
    format!(
        "{successes} of {attempts} ({:.0}%)",
        100.0 * successes as f64 / attempts as f64
    )
}

/// The host's dashboard.
#[component]
pub fn Dashboard(
    code: String,
    token: String,
    name: String,
    expires_at: String,
    /// Called once the room is closed (or found gone).
    on_closed: Callback<()>,
) -> impl IntoView {
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    let link = format!("{origin}/room?code={code}");
    let svg = qr_svg(&link);
    let summary = RwSignal::new(None::<RoomSummary>);
    let error = RwSignal::new(None::<String>);
    let gone = RwSignal::new(false);
    // One request at a time, each answered when an attempt arrives (or after the server's
    // wait): the tally is current within moments, whichever instance took the attempt.
    let alive = Arc::new(AtomicBool::new(true));
    {
        let (code, token, alive) = (code.clone(), token.clone(), alive.clone());
        leptos::task::spawn_local(async move {
            let mut after = None;
            loop {
                let read = crate::api::room_summary(&code, &token, after).await;
                if !alive.load(Ordering::Relaxed) {
                    break;
                }
                match read {
                    Ok(s) => {
                        after = Some(s.total);
                        error.set(None);
                        summary.set(Some(s));
                        crate::ui::pause::pause(PACE_MS).await;
                    }
                    Err(e) if e.contains("no open room") => {
                        gone.set(true);
                        break;
                    }
                    Err(e) => {
                        after = None;
                        error.set(Some(e));
                        crate::ui::pause::pause(RETRY_MS).await;
                    }
                }
            }
        });
    }
    on_cleanup(move || alive.store(false, Ordering::Relaxed));
    let confirming = RwSignal::new(false);
    let close = {
        let (code, token) = (code.clone(), token.clone());
        move |_| {
            if !confirming.get_untracked() {
                confirming.set(true);
                return;
            }
            let (code, token) = (code.clone(), token.clone());
            leptos::task::spawn_local(async move {
                match crate::api::close_room(&code, &token).await {
                    Ok(()) => on_closed.run(()),
                    Err(e) => error.set(Some(e)),
                }
            });
        }
    };
    let tally = move || {
        summary.get().map(|s| {
            let sides = s.sides.clone();
            view! {
                <p id="room-counts">{format!(
                    "{} answer{} from {} participant{}.",
                    s.total, if s.total == 1 { "" } else { "s" },
                    s.participants, if s.participants == 1 { "" } else { "s" },
                )}</p>
                {(s.total == 0).then(|| view! {
                    <p class="muted">"Nothing yet: answers appear here as they are sent."</p>
                })}
                <div class="table-scroll">
                <table class="room-tally" id="room-tally">
                    <thead><tr>
                        <th>"Action"</th>
                        {sides.iter().map(|side| view! { <th>{side_heading(side)}</th> }).collect_view()}
                    </tr></thead>
                    <tbody>
                        {s.actions.iter().map(|row| view! {
                            <tr>
                                <td>{row.action.clone()}</td>
                                {row.cells.iter().map(|c| view! {
                                    <td data-action=row.action.clone() data-side=c.side.clone()
                                        data-attempts=c.attempts data-successes=c.successes>
                                        {rate(c.successes, c.attempts)}
                                    </td>
                                }).collect_view()}
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
                <h4>"Most common mistakes"</h4>
                {if s.failures.is_empty() {
                    view! { <p class="muted" id="room-failures">"None so far."</p> }.into_any()
                } else {
                    view! {
                        <ol id="room-failures">
                            {s.failures.iter().map(|f| view! {
                                <li data-label=f.label.clone()>
                                    {format!("{}: {} ", plain_label(&f.label), f.count)}
                                    <span class="muted small">{format!("({})", f.label)}</span>
                                </li>
                            }).collect_view()}
                        </ol>
                    }.into_any()
                }}
                <h4>"Latest answers"</h4>
                <div class="table-scroll">
                <table class="room-latest" id="room-latest">
                    <thead><tr><th>"When"</th><th>"Who"</th><th>"How"</th><th>"Action"</th><th>"Result"</th><th></th></tr></thead>
                    <tbody>
                        {s.latest.iter().map(|a| {
                            let open = format!("/room/open?code={}&attempt={}", s.room.code, a.id);
                            view! {
                                <tr data-attempt=a.id data-label=a.label.clone()>
                                    <td class="when">{a.created_at.get(11..19).unwrap_or_default().to_string()}</td>
                                    <td class="who">{a.who.clone()}</td>
                                    <td class="how">{how(a)}</td>
                                    <td class="action">{a.action.clone()}</td>
                                    <td class="result" class:right=a.label == "Success" title=a.label.clone()>{plain_label(&a.label)}</td>
                                    <td class="open"><a class="open-attempt" href=open target="_blank" title="open this answer in the playground">"open"</a></td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
            }
        })
    };
    view! {
        <div class="panel room-host" id="room-dashboard">
            <h3>{format!("Room \u{201c}{name}\u{201d}")}</h3>
            <div class="room-join-info">
                <div class="room-qr" id="room-qr" inner_html=svg></div>
                <div>
                    <p>"Join code: " <strong class="room-code" id="room-code">{code.clone()}</strong></p>
                    <p class="small">"or open " <a id="room-link" href=link.clone() target="_blank">{link.clone()}</a></p>
                    <p class="muted small" id="room-expiry">{format!(
                        "Everything in this room is deleted at {}, or when you close it.", when(&expires_at)
                    )}</p>
                    <button class="secondary" id="close-room" on:click=close>
                        {move || if confirming.get() { "Delete the room and every answer now?" } else { "Close the room now" }}
                    </button>
                </div>
            </div>
            {move || gone.get().then(|| view! {
                <p class="notice" id="room-gone">"This room has closed (its time ran out). "
                    <button class="secondary small" on:click=move |_| on_closed.run(())>"Open another"</button></p>
            })}
            {move || error.get().map(|e| view! { <p class="error" id="room-error">{e}</p> })}
            {tally}
        </div>
    }
}
