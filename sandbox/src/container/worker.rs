//! One worker container: the shared worker protocol ([`crate::worker`]) plus the
//! container's removal, which killing the engine's client alone does not do while a run is
//! going on (the container lives on under its monitor until the worker reads end of input).

use std::borrow::{Borrow, BorrowMut};
use std::ops::{Deref, DerefMut};

use super::engine::Engine;
use crate::worker::Worker;

/// Removes its container when dropped, on a thread of its own (the engine's client blocks).
pub(super) struct Removal {
    engine: Engine,
    name: String,
    armed: bool,
}

impl Removal {
    /// A removal of the container `name`.
    pub fn new(engine: Engine, name: String) -> Self {
        Removal {
            engine,
            name,
            armed: true,
        }
    }
}

impl Drop for Removal {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let engine = self.engine.clone();
        let name = std::mem::take(&mut self.name);
        std::thread::spawn(move || engine.remove(&name));
    }
}

/// A running worker container. Dropping it kills the client, then removes the container.
pub(super) struct ContainerWorker {
    // Field order is drop order: the client first, then the container.
    worker: Worker,
    removal: Removal,
}

impl ContainerWorker {
    /// Wraps a started worker and the removal of its container.
    pub fn new(worker: Worker, removal: Removal) -> Self {
        ContainerWorker { worker, removal }
    }

    /// The container's name.
    pub fn name(&self) -> &str {
        &self.removal.name
    }

    /// Ends a worker that has answered its one run (cold mode): its client exits once the
    /// worker has, and `--rm` has removed the container by then, so no removal is needed
    /// unless the client is still there after a short wait.
    pub async fn finish(mut self) {
        if self.worker.exit_status().await.is_some() {
            self.removal.armed = false;
        }
    }
}

impl Borrow<Worker> for ContainerWorker {
    fn borrow(&self) -> &Worker {
        &self.worker
    }
}

impl BorrowMut<Worker> for ContainerWorker {
    fn borrow_mut(&mut self) -> &mut Worker {
        &mut self.worker
    }
}

impl Deref for ContainerWorker {
    type Target = Worker;
    fn deref(&self) -> &Worker {
        &self.worker
    }
}

impl DerefMut for ContainerWorker {
    fn deref_mut(&mut self) -> &mut Worker {
        &mut self.worker
    }
}
