//! The AtomWorld suite: an input CIF, an action in words, and the CIF the model must return.

pub mod prompt;
