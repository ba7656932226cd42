//! Work off the page's thread: the playground and the probes hand each answer to the scoring
//! worker, and the playground a pasted or edited structure to the symmetry worker (both of the
//! `matcher-worker` crate), and show the result when it comes back. A match that takes
//! seconds (a 512-site supercell against a perturbed copy) never freezes the page, and the
//! page's own module carries neither the matcher nor the symmetry search.
//!
//! Only the latest request counts: every request gets a new id, answers to older ids are
//! dropped, and a worker still busy with an older request is stopped and replaced (a
//! running wasm computation cannot be interrupted otherwise). A browser that cannot start
//! the worker (or load its script) gets [`Worker::failure`] in place of results.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use matcher_worker::{Done, FromWorker, Job, Protocol};

/// How long a request runs before [`Worker::slow`] says so.
const SLOW_NOTE_DELAY_MS: u64 = 150;

/// How long a worker may take to start (fetch and compile its module, then say it listens)
/// before the page gives up on it: minutes on the slowest mobile link for its few hundred kB.
const START_TIMEOUT_S: u64 = 120;

/// The latest request and its result.
type Answered<P> = Option<(Job<<P as Protocol>::Work>, Done<<P as Protocol>::Outcome>)>;

/// A worker speaking `P` and the page's view of it. Copy: every handle is the same worker.
pub struct Worker<P: Protocol> {
    /// The latest request and its result (`None` while it runs, or without a request).
    result: RwSignal<Answered<P>>,
    /// Whether the latest request is still being computed.
    pub busy: RwSignal<bool>,
    /// Whether it has been computed for a noticeable while: a note says so only then, since
    /// most take milliseconds and a note flashing on every keystroke would make the page jump.
    pub slow: RwSignal<bool>,
    /// Why the worker cannot work in this browser (it did not start, load or answer).
    pub failure: RwSignal<Option<String>>,
    state: StoredValue<Rc<RefCell<State<P>>>, LocalStorage>,
}

impl<P: Protocol> Clone for Worker<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: Protocol> Copy for Worker<P> {}

struct State<P: Protocol> {
    /// The worker, once started (`None` before the first request or after it was stopped).
    worker: Option<web_sys::Worker>,
    /// The worker failed to start or to load: nothing is done.
    broken: bool,
    /// The worker said it listens.
    ready: bool,
    /// How many workers were started (which one a start timeout is about).
    starts: u64,
    /// A job waiting for the worker to be ready.
    queued: Option<Job<P::Work>>,
    /// The job the worker is computing.
    in_flight: Option<Job<P::Work>>,
    /// The latest job.
    current: Option<Job<P::Work>>,
    /// The id of the latest request.
    latest: u64,
    /// The worker's handlers (kept alive with it).
    handlers: Vec<Closure<dyn FnMut(web_sys::MessageEvent)>>,
    /// Handlers of a stopped worker, freed at the next request (never while one may run).
    retired: Vec<Closure<dyn FnMut(web_sys::MessageEvent)>>,
}

impl<P: Protocol> Default for State<P> {
    fn default() -> Self {
        Self {
            worker: None,
            broken: false,
            ready: false,
            starts: 0,
            queued: None,
            in_flight: None,
            current: None,
            latest: 0,
            handlers: Vec::new(),
            retired: Vec::new(),
        }
    }
}

impl<P: Protocol> Default for Worker<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Protocol> Worker<P> {
    /// A worker not started yet (it starts with the first request).
    pub fn new() -> Self {
        let me = Self {
            result: RwSignal::new(None),
            busy: RwSignal::new(false),
            slow: RwSignal::new(false),
            failure: RwSignal::new(None),
            state: StoredValue::new_local(Rc::new(RefCell::new(State::default()))),
        };
        Effect::new(move |_| {
            if !me.busy.get() {
                me.slow.set(false);
                return;
            }
            set_timeout(
                // The page may have gone meanwhile: then there is nothing to set.
                move || {
                    if let Some(busy) = me.busy.try_get_untracked() {
                        me.slow.try_set(busy);
                    }
                },
                std::time::Duration::from_millis(SLOW_NOTE_DELAY_MS),
            );
        });
        me
    }

    /// Do `work` as the latest request; any earlier request is forgotten.
    fn submit(&self, work: P::Work) {
        let state = self.state.get_value();
        let broken = {
            let mut s = state.borrow_mut();
            s.retired.clear();
            s.latest += 1;
            let job = Job { id: s.latest, work };
            s.current = Some(job.clone());
            if s.in_flight.is_some() {
                // Busy with a request nobody wants any more: stop it rather than wait.
                stop(&mut s);
            }
            if s.worker.is_none() && !s.broken {
                self.start(&state, &mut s);
            }
            if !s.broken {
                if s.ready {
                    post(&mut s, job);
                } else {
                    s.queued = Some(job);
                }
            }
            s.broken
        };
        self.result.set(None);
        self.busy.set(!broken);
    }

    /// Start the worker ahead of its first request (fetching and compiling its module takes a
    /// second or more on a slow link): called when a person shows they are about to answer.
    /// Nothing happens once it runs, or when it cannot.
    pub fn warm(&self) {
        let state = self.state.get_value();
        let mut s = state.borrow_mut();
        if s.worker.is_none() && !s.broken {
            self.start(&state, &mut s);
        }
    }

    /// Forget the latest request (there is nothing to do).
    fn clear(&self) {
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

    /// Do `work` whenever it changes; its result as a signal: the worker's outcome while it
    /// answers exactly the latest `work` (never an older one, not even for the moment before
    /// a new job is sent), `None` without work or while it is computed.
    pub fn follow(&self, work: Memo<Option<P::Work>>) -> Memo<Option<P::Outcome>> {
        let me = *self;
        Effect::new(move |_| match work.get() {
            Some(w) => me.submit(w),
            None => me.clear(),
        });
        Memo::new(move |_| {
            let current = work.get()?;
            me.result.with(|r| {
                r.as_ref()
                    .filter(|(j, _)| j.work == current)
                    .map(|(_, d)| d.outcome.clone())
            })
        })
    }

    /// Show `done` if it answers the latest request.
    fn finish(&self, state: &Rc<RefCell<State<P>>>, done: Done<P::Outcome>) {
        let job = state.borrow().current.clone();
        if let Some(job) = job.filter(|j| j.id == done.id) {
            self.result.set(Some((job, done)));
            self.busy.set(false);
        }
    }

    /// Give up on the worker: no result will come, and the page says why.
    fn fail(&self, s: &mut State<P>, why: &str) {
        s.broken = true;
        self.busy.set(false);
        self.failure.set(Some(why.to_string()));
    }

    /// Start the worker and listen to it; on failure, mark it broken.
    fn start(&self, state: &Rc<RefCell<State<P>>>, s: &mut State<P>) {
        let Ok(worker) = web_sys::Worker::new(P::LOADER) else {
            self.fail(s, "this browser did not start a Web Worker");
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
                    .and_then(|t| serde_json::from_str::<FromWorker<P::Outcome>>(&t).ok())
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
        // The worker's script did not load or it crashed: nothing more is done here.
        let weak = Rc::downgrade(state);
        let on_error = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |_| {
            let Some(state) = weak.upgrade() else { return };
            let mut s = state.borrow_mut();
            stop(&mut s);
            me.fail(&mut s, "its worker did not load or stopped");
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        s.handlers = vec![on_message, on_error];
        s.worker = Some(worker);
        s.ready = false;
        s.starts += 1;
        // A module that fails inside the worker (its wasm not fetched, say) raises no error
        // event here: a worker silent for too long is given up on, with a reason shown.
        let (weak, started) = (Rc::downgrade(state), s.starts);
        set_timeout(
            move || {
                let Some(state) = weak.upgrade() else { return };
                let mut s = state.borrow_mut();
                if s.starts == started && s.worker.is_some() && !s.ready {
                    stop(&mut s);
                    me.fail(
                        &mut s,
                        &format!("its worker did not start within {START_TIMEOUT_S} s"),
                    );
                }
            },
            std::time::Duration::from_secs(START_TIMEOUT_S),
        );
    }
}

impl<P: Protocol> Drop for State<P> {
    /// A page that goes (the worker's owner is disposed) takes its worker with it.
    fn drop(&mut self) {
        stop(self);
    }
}

/// Send `job` to the worker, which is ready.
fn post<P: Protocol>(s: &mut State<P>, job: Job<P::Work>) {
    let Some(worker) = &s.worker else { return };
    let Ok(text) = serde_json::to_string(&job) else {
        return;
    };
    if worker.post_message(&JsValue::from_str(&text)).is_ok() {
        s.in_flight = Some(job);
    }
}

/// Stop the worker (the next request starts a fresh one).
fn stop<P: Protocol>(s: &mut State<P>) {
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
