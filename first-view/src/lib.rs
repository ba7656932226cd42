//! The first view: the playground's first structure drawn by the viewer in 3D, from a module
//! of about 0.1 MB (compressed) that the page loads before the app's (about 1 MB). On a slow
//! network a visitor can look at and turn the structure seconds before the app starts; the
//! app then replaces the whole first screen.
//!
//! The structure is data here ([`first`]), not the pool the app reads it from: parsing the
//! pool would bring the CIF reader into the module (it nearly doubles its size). A test
//! checks the data is the app's first structure.

pub mod first;

#[cfg(all(target_arch = "wasm32", feature = "start"))]
mod start;
