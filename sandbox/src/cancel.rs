//! Cancelling a run from outside.

use std::sync::Arc;

use tokio::sync::watch;

/// A cloneable token that cancels the runs it is given to. Cancelling is permanent.
///
/// Dropping a run's future also cancels it (the front cancels on drop), so a token is needed
/// only to cancel from elsewhere (another task, a shutdown path).
#[derive(Debug, Clone)]
pub struct CancelToken {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelToken {
    /// A token that has not been cancelled.
    pub fn new() -> Self {
        CancelToken {
            tx: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Cancels every run holding this token (or a clone of it).
    pub fn cancel(&self) {
        self.tx.send_replace(true);
    }

    /// Whether [`CancelToken::cancel`] was called (cheap, callable from any thread).
    pub fn is_cancelled(&self) -> bool {
        *self.tx.borrow()
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives as long as `self`, so `wait_for` cannot fail here.
        let _ = rx.wait_for(|cancelled| *cancelled).await;
    }

    /// A guard that cancels this token when dropped unless [`DropGuard::disarm`] is called.
    pub fn drop_guard(&self) -> DropGuard {
        DropGuard {
            token: Some(self.clone()),
        }
    }
}

/// Cancels its token when dropped (see [`CancelToken::drop_guard`]).
#[derive(Debug)]
pub struct DropGuard {
    token: Option<CancelToken>,
}

impl DropGuard {
    /// Drops the guard without cancelling.
    pub fn disarm(mut self) {
        self.token = None;
    }
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            token.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn cancel_wakes_waiters_and_guards_cancel_on_drop() {
        let t = CancelToken::new();
        assert!(!t.is_cancelled());
        let t2 = t.clone();
        let waiter = tokio::spawn(async move { t2.cancelled().await });
        drop(t.drop_guard());
        waiter.await.unwrap();
        assert!(t.is_cancelled());
        t.cancelled().await; // already cancelled: returns at once

        let u = CancelToken::new();
        u.drop_guard().disarm();
        assert!(!u.is_cancelled());
    }
}
