//! A flag another thread raises to stop a long computation (the server's time budget for
//! matching). Plain atomics, so it works the same natively and in wasm; the engine itself
//! never reads a clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared stop flag; the default is one nobody can raise.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Option<Arc<AtomicBool>>);

impl Interrupt {
    /// A flag that starts lowered.
    pub fn new() -> Self {
        Self(Some(Arc::new(AtomicBool::new(false))))
    }

    /// Raise the flag: computations watching it stop at their next check.
    pub fn raise(&self) {
        if let Some(flag) = &self.0 {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the flag is raised.
    pub fn is_raised(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// Two interrupts are equal when they are the same flag (or both are the inert default):
/// an interrupt never changes what a computation answers, only whether it finishes.
impl PartialEq for Interrupt {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raised_by_any_clone() {
        let i = Interrupt::new();
        let j = i.clone();
        assert!(!i.is_raised());
        j.raise();
        assert!(i.is_raised());
        Interrupt::default().raise();
        assert!(!Interrupt::default().is_raised());
        assert_eq!(i, j);
        assert_ne!(i, Interrupt::new());
    }
}
