//! The three-d crystal viewer: instanced atoms coloured by element, the unit cell as lines,
//! orbit controls (drag to rotate, wheel to zoom). Renders on demand, not every frame.

mod scene;

pub use scene::Viewer;
