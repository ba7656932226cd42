//! The playground's room banner: "In room CODE as NAME" and a button that sends the current
//! task and answer to the room (the server scores it and says what it found).

use leptos::prelude::*;
use wire::{AttemptKind, RoomAttempt};

use super::{forget, load, plain_label, Member, MEMBER_KEY};

/// The banner, shown only after joining a room.
#[component]
pub fn RoomSend(
    /// The task's input CIF (before any hand edit turned into the answer).
    input_cif: Memo<Option<String>>,
    /// The task's action sentence.
    prompt: RwSignal<String>,
    /// The answer.
    answer: RwSignal<String>,
    /// The model that wrote the answer, if one did.
    answered_by: RwSignal<Option<String>>,
    /// The answer made by hand edits, if the answer is one.
    hand_edit: RwSignal<Option<String>>,
) -> impl IntoView {
    let member = RwSignal::new(load::<Member>(MEMBER_KEY));
    let status = RwSignal::new(None::<Result<String, String>>);
    let sending = RwSignal::new(false);
    let kind = move || {
        let text = answer.get();
        if hand_edit.with(|h| h.as_deref() == Some(text.as_str())) {
            (AttemptKind::HandEdit, None)
        } else if let Some(m) = answered_by.get() {
            (AttemptKind::Model, Some(m))
        } else {
            (AttemptKind::Pasted, None)
        }
    };
    let send = move |_| {
        let Some(m) = member.get_untracked() else {
            return;
        };
        let Some(input) = input_cif.get_untracked() else {
            status.set(Some(Err("there is no task to send".into())));
            return;
        };
        let (kind, model) = kind();
        let attempt = RoomAttempt {
            who: m.who.clone(),
            kind,
            model,
            input_cif: input,
            prompt: prompt.get_untracked(),
            answer: answer.get_untracked(),
        };
        sending.set(true);
        status.set(None);
        leptos::task::spawn_local(async move {
            match crate::api::send_attempt(&m.code, &attempt).await {
                Ok(s) => status.set(Some(Ok(format!(
                    "Sent. The server's check: {} ({}).",
                    plain_label(&s.label),
                    s.label
                )))),
                Err(e) => status.set(Some(Err(e))),
            }
            sending.set(false);
        });
    };
    // On phones the banner is fixed at the screen's foot; the page leaves room for it.
    Effect::new(move |_| {
        let joined = member.with(Option::is_some);
        if let Some(body) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.body())
        {
            let _ = body.class_list().toggle_with_force("in-room", joined);
        }
    });
    on_cleanup(|| {
        if let Some(body) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.body())
        {
            let _ = body.class_list().remove_1("in-room");
        }
    });
    let leave = move |_| {
        forget(MEMBER_KEY);
        member.set(None);
    };
    move || {
        member.get().map(|m| {
            view! {
                <div class="notice room-banner" id="room-banner">
                    <span>"In room " <strong id="banner-code">{m.code.clone()}</strong> " as " <strong>{m.who.clone()}</strong>". "</span>
                    <button id="send-to-room" on:click=send
                        disabled=move || sending.get() || answer.with(|a| a.trim().is_empty())
                        title="send this task and your answer to the room's host">
                        {move || match kind().0 {
                            AttemptKind::HandEdit => "Send my hand edit to the room",
                            AttemptKind::Model => "Send the model's answer to the room",
                            AttemptKind::Pasted => "Send to room",
                        }}
                    </button>
                    " "
                    <button class="secondary small" id="leave-room" on:click=leave>"Leave the room"</button>
                    {move || status.get().map(|s| match s {
                        Ok(t) => view! { <span class="small" id="room-sent">{t}</span> }.into_any(),
                        Err(e) => view! { <span class="error small" id="room-sent">{format!("not sent: {e}")}</span> }.into_any(),
                    })}
                </div>
            }
        })
    }
}
