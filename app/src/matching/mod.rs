//! Scoring answers off the page's thread: the playground hands each verdict to the matching
//! worker (the `matcher-worker` crate) and shows "matching…" until it comes back, so a match that
//! takes seconds (a 512-site supercell against a perturbed copy) never freezes the page.
//!
//! Only the latest request counts: every request gets a new id, answers to older ids are
//! dropped, and a worker still busy with an older request is stopped and replaced (a
//! running wasm computation cannot be interrupted otherwise). Without a worker (the browser
//! refuses to start one, or its script fails to load) the same [`Job::run`] runs in
//! the page.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use matcher_worker::{Done, FromWorker, Job, TargetCache};

/// Where Trunk writes the worker's loader (`data-type="worker"` with `data-loader-shim`).
const WORKER_URL: &str = "/matcher_loader.js";

/// The matching worker and the page's view of it. Copy: every handle is the same matcher.
#[derive(Clone, Copy)]
pub struct Matcher {
    /// The latest request and its result (`None` while it runs, or without a request).
    pub result: RwSignal<Option<(Job, Done)>>,
    /// Whether the latest request is still being computed.
    pub busy: RwSignal<bool>,
    state: StoredValue<Rc<RefCell<State>>, LocalStorage>,
}

#[derive(Default)]
struct State {
    /// The worker, once started (`None` before the first request or after it was stopped).
    worker: Option<web_sys::Worker>,
    /// The worker failed to start or to load: jobs run in the page.
    broken: bool,
    /// The worker said it listens.
    ready: bool,
    /// A job waiting for the worker to be ready.
    queued: Option<Job>,
    /// The job the worker is computing.
    in_flight: Option<Job>,
    /// The latest job.
    current: Option<Job>,
    /// The id of the latest request.
    latest: u64,
    /// The parsed target, for jobs run in the page.
    cache: TargetCache,
    /// The worker's handlers (kept alive with it).
    handlers: Vec<Closure<dyn FnMut(web_sys::MessageEvent)>>,
    /// Handlers of a stopped worker, freed at the next request (never while one may run).
    retired: Vec<Closure<dyn FnMut(web_sys::MessageEvent)>>,
}

impl Default for Matcher {
    fn default() -> Self {
        Self::new()
    }
}

impl Matcher {
    /// A matcher with no worker yet (it starts with the first request).
    pub fn new() -> Self {
        Self {
            result: RwSignal::new(None),
            busy: RwSignal::new(false),
            state: StoredValue::new_local(Rc::new(RefCell::new(State::default()))),
        }
    }

    /// Compute `job` (its `id` is replaced by a fresh one); any earlier request is forgotten.
    pub fn submit(&self, mut job: Job) {
        let state = self.state.get_value();
        let run_here = {
            let mut s = state.borrow_mut();
            s.retired.clear();
            s.latest += 1;
            job.id = s.latest;
            s.current = Some(job.clone());
            if s.in_flight.is_some() {
                // Busy with a request nobody wants any more: stop it rather than wait.
                stop(&mut s);
            }
            if s.worker.is_none() && !s.broken {
                self.start(&state, &mut s);
            }
            if s.broken {
                true
            } else {
                if s.ready {
                    post(&mut s, job.clone());
                } else {
                    s.queued = Some(job.clone());
                }
                false
            }
        };
        self.result.set(None);
        self.busy.set(true);
        if run_here {
            self.run_in_page(&state, job);
        }
    }

    /// Forget the latest request (there is nothing to score).
    pub fn clear(&self) {
        let state = self.state.get_value();
        {
            let mut s = state.borrow_mut();
            s.latest += 1;
            s.queued = None;
            s.current = None;
        }
        self.result.set(None);
        self.busy.set(false);
    }

    fn run_in_page(&self, state: &Rc<RefCell<State>>, job: Job) {
        let done = job.run(&mut state.borrow_mut().cache);
        self.finish(state, done);
    }

    /// Show `done` if it answers the latest request.
    fn finish(&self, state: &Rc<RefCell<State>>, done: Done) {
        let job = state.borrow().current.clone();
        if let Some(job) = job.filter(|j| j.id == done.id) {
            self.result.set(Some((job, done)));
            self.busy.set(false);
        }
    }

    /// Start the worker and listen to it; on failure, mark the matcher broken (jobs then run
    /// in the page).
    fn start(&self, state: &Rc<RefCell<State>>, s: &mut State) {
        let Ok(worker) = web_sys::Worker::new(WORKER_URL) else {
            s.broken = true;
            return;
        };
        let me = *self;
        let weak = Rc::downgrade(state);
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| {
                let Some(state) = weak.upgrade() else { return };
                let Some(message) = event
                    .data()
                    .as_string()
                    .and_then(|t| serde_json::from_str::<FromWorker>(&t).ok())
                else {
                    return;
                };
                match message {
                    FromWorker::Ready => {
                        let mut s = state.borrow_mut();
                        s.ready = true;
                        if let Some(job) = s.queued.take() {
                            post(&mut s, job);
                        }
                    }
                    FromWorker::Done(done) => {
                        {
                            let mut s = state.borrow_mut();
                            if s.in_flight.as_ref().is_some_and(|j| j.id == done.id) {
                                s.in_flight = None;
                            }
                        }
                        me.finish(&state, *done);
                    }
                }
            },
        );
        // The worker's script did not load or it crashed: score in the page from now on.
        let weak = Rc::downgrade(state);
        let on_error = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |_| {
            let Some(state) = weak.upgrade() else { return };
            let pending = {
                let mut s = state.borrow_mut();
                let pending = s.queued.take().or_else(|| s.in_flight.take());
                stop(&mut s);
                s.broken = true;
                pending
            };
            if let Some(job) = pending {
                me.run_in_page(&state, job);
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        s.handlers = vec![on_message, on_error];
        s.worker = Some(worker);
        s.ready = false;
    }
}

/// Whether `a` and `b` ask for the same work (ids aside).
pub fn same_work(a: &Job, b: &Job) -> bool {
    a.target_cif == b.target_cif
        && a.answer == b.answer
        && a.comparison == b.comparison
        && a.rows == b.rows
}

/// Send `job` to the worker, which is ready.
fn post(s: &mut State, job: Job) {
    let Some(worker) = &s.worker else { return };
    let Ok(text) = serde_json::to_string(&job) else {
        return;
    };
    if worker.post_message(&JsValue::from_str(&text)).is_ok() {
        s.in_flight = Some(job);
    }
}

/// Stop the worker (the next request starts a fresh one).
fn stop(s: &mut State) {
    if let Some(w) = s.worker.take() {
        w.set_onmessage(None);
        w.set_onerror(None);
        w.terminate();
    }
    let handlers = std::mem::take(&mut s.handlers);
    s.retired.extend(handlers);
    s.ready = false;
    s.in_flight = None;
    s.queued = None;
}
