//! The symmetry worker: a Web Worker the page starts (`/symmetry_loader.js`) for the space
//! group of a structure the pool's table does not have, so that the scoring worker need not
//! carry the symmetry search. Speaks [`matcher_worker::Symmetry`].

use engine::Structure;
use matcher_worker::search_space_group;

fn main() {
    console_error_panic_hook::set_once();
    matcher_worker::listen::listen(|structure: Structure| search_space_group(&structure));
}
