//! The scoring worker: a Web Worker the page starts (`/matcher_loader.js`, written by Trunk
//! from `index.html`'s `data-type="worker"` link) so that scoring an answer, which can take
//! seconds on a large target, never blocks the page. Speaks [`matcher_worker::Scoring`].

use std::cell::RefCell;

use matcher_worker::{score, TargetCache, Work};

fn main() {
    console_error_panic_hook::set_once();
    let cache = RefCell::new(TargetCache::default());
    matcher_worker::listen::listen(move |work: Work| score(&work, &mut cache.borrow_mut()));
}
