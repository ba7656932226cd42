//! Our own demo items (written for this project, same schema as the upstream files):
//! `bench/data/omnimat_demo.json`, `{"cal": [CalItem…], "qa": [QaItem…]}`.

use serde::Deserialize;

use super::item::{CalItem, QaItem};

/// The demo file's text.
pub const DEMO_JSON: &str = include_str!("../../data/omnimat_demo.json");

#[derive(Deserialize)]
struct Demo {
    cal: Vec<CalItem>,
    qa: Vec<QaItem>,
}

/// The demo items: CAL, then QA (empty if the embedded file were malformed; a test checks
/// it is not).
pub fn demo_items() -> (Vec<CalItem>, Vec<QaItem>) {
    match serde_json::from_str::<Demo>(DEMO_JSON) {
        Ok(d) => (d.cal, d.qa),
        Err(_) => (Vec::new(), Vec::new()),
    }
}
