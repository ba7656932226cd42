//! The `LISTEN` connection: it hears other instances' `NOTIFY`s and forwards their payloads.

use std::time::Duration;

use tokio_postgres::{AsyncMessage, Config, NoTls};

use crate::storage::signals::ANY_ROOM;

/// How long to wait before opening a lost listening connection again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// Listen on `channel` until `forward` returns false (the store is gone); runs on a thread
/// of its own with its own runtime.
pub(super) fn run(
    config: Config,
    channel: &'static str,
    forward: Box<dyn Fn(String) -> bool + Send>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::warn!("cannot listen for other instances' changes: {e}");
            return;
        }
    };
    runtime.block_on(async move {
        while listen_once(&config, channel, &*forward).await {
            tokio::time::sleep(RECONNECT_AFTER).await;
        }
    });
}

/// One connection's life: `LISTEN`, then forward until it is lost (true: open another) or
/// `forward` refuses (false: stop).
async fn listen_once(
    config: &Config,
    channel: &str,
    forward: &(dyn Fn(String) -> bool + Send),
) -> bool {
    let (client, mut connection) = match config.connect(NoTls).await {
        Ok(pair) => pair,
        Err(e) => {
            tracing::warn!("listening for other instances' changes: {e}");
            return true;
        }
    };
    let (sender, mut heard) = tokio::sync::mpsc::unbounded_channel();
    // The connection is polled by a task of its own: the client's LISTEN needs it driven,
    // and notifications arrive only through it.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if sender.send(n.payload().to_string()).is_err() {
                        break;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!("listening connection lost: {e}");
                    break;
                }
                None => break,
            }
        }
    });
    let mut keep_going = true;
    match client.batch_execute(&format!("LISTEN {channel}")).await {
        Ok(()) => {
            // Whatever was sent while no connection listened is unknown: everyone reads again.
            keep_going = forward(ANY_ROOM.to_string());
            while keep_going {
                match heard.recv().await {
                    Some(payload) => keep_going = forward(payload),
                    None => break,
                }
            }
        }
        Err(e) => tracing::warn!("LISTEN {channel}: {e}"),
    }
    driver.abort();
    keep_going
}
