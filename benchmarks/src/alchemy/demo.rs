//! Our own recipes (written for this project, in the Open Materials Guide's schema, split
//! `demo`): `benchmarks/data/alchemy_demo.jsonl`, one recipe a line.

use super::recipe::{import_jsonl, ImportError, Recipe};

/// The demo file's text.
pub const DEMO_JSONL: &str = include_str!("../../data/alchemy_demo.jsonl");

/// The demo recipes (a test checks that the embedded file imports).
pub fn demo_recipes() -> Result<Vec<Recipe>, ImportError> {
    import_jsonl(DEMO_JSONL)
}
