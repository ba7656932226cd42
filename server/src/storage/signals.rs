//! Change signals: "room CODE took an attempt", heard by every instance on the store, so a
//! host's dashboard waiting on one instance wakes when an attempt arrives through another.
//!
//! Within a process a broadcast channel carries them. On PostgreSQL the attempt's
//! transaction also sends `NOTIFY` (delivered at commit, dropped with a rollback), and each
//! instance that has listeners keeps one extra connection that `LISTEN`s and forwards what it
//! hears into its channel. SQLite has one instance, so the channel is all it needs.

use std::sync::{Arc, OnceLock, Weak};

use tokio::sync::broadcast;

/// The PostgreSQL channel the signals travel on.
pub const ROOMS_CHANNEL: &str = "atomworld_rooms";

/// The signal that means "anything may have changed" (the listener was away and may have
/// missed some): every waiter reads again.
pub const ANY_ROOM: &str = "*";

/// How many signals a slow waiter may fall behind before it is told it lagged (it then
/// reads again, as for [`ANY_ROOM`]).
const BACKLOG: usize = 256;

/// The signals of one store.
pub struct Signals {
    local: broadcast::Sender<String>,
    listening: OnceLock<()>,
}

impl Signals {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            local: broadcast::channel(BACKLOG).0,
            listening: OnceLock::new(),
        })
    }

    /// Tell this process's waiters that room `code` changed.
    pub fn announce(&self, code: &str) {
        // No receiver is not an error: nobody is waiting.
        let _ = self.local.send(code.to_string());
    }

    /// Hear the signals from now on; `start_listener` is called once per store, on the
    /// first subscription, to start hearing other instances' (PostgreSQL).
    pub fn subscribe(
        self: &Arc<Self>,
        start_listener: impl FnOnce(Box<dyn Fn(String) -> bool + Send>),
    ) -> broadcast::Receiver<String> {
        let receiver = self.local.subscribe();
        self.listening.get_or_init(|| {
            let weak: Weak<Self> = Arc::downgrade(self);
            // The listener stops forwarding (returns false) once the store is gone.
            start_listener(Box::new(move |code| match weak.upgrade() {
                Some(signals) => {
                    signals.announce(&code);
                    true
                }
                None => false,
            }));
        });
        receiver
    }
}

/// Whether signal `heard` concerns room `code`.
pub fn concerns(heard: &str, code: &str) -> bool {
    heard == code || heard == ANY_ROOM
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscribers_hear_announcements_and_the_listener_starts_once() {
        let signals = Signals::new();
        let mut started = 0;
        let mut a = signals.subscribe(|_| started += 1);
        let mut b = signals.subscribe(|_| started += 1);
        assert_eq!(started, 1);
        signals.announce("ABC234");
        assert_eq!(a.try_recv().unwrap(), "ABC234");
        assert_eq!(b.try_recv().unwrap(), "ABC234");
        assert!(concerns("ABC234", "ABC234") && concerns(ANY_ROOM, "ABC234"));
        assert!(!concerns("XYZ789", "ABC234"));
    }

    #[test]
    fn the_forwarder_stops_once_the_store_is_gone() {
        let signals = Signals::new();
        let mut forward = None;
        let mut heard = signals.subscribe(|f| forward = Some(f));
        let forward = forward.unwrap();
        assert!(forward("ROOM22".into()));
        assert_eq!(heard.try_recv().unwrap(), "ROOM22");
        drop(signals);
        assert!(!forward("ROOM22".into()));
    }
}
