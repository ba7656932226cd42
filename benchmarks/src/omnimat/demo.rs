//! Our own demo items (written for this project, same schema as the upstream files):
//! `benchmarks/data/omnimat_demo.json`, `{"cal": [CalItem…], "qa": [QaItem…]}`, and the images
//! of our multimodal ones, built in so they work without an images directory.
//!
//! CAL c21's image, `benchmarks/data/omnimat_images/awp_demo_c21_img.png` (414 bytes, a centred
//! square cell), was drawn by `scripts/omnimat-demo-image.py` (standard library only; run it
//! again to get the same bytes).

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

/// Our demo items' images: (stem, PNG bytes).
const DEMO_IMAGES: [(&str, &[u8]); 1] = [(
    "awp_demo_c21_img",
    include_bytes!("../../data/omnimat_images/awp_demo_c21_img.png"),
)];

/// The bytes of our demo image `stem`, if it is one.
pub fn demo_image(stem: &str) -> Option<&'static [u8]> {
    DEMO_IMAGES
        .iter()
        .find(|(s, _)| *s == stem)
        .map(|(_, bytes)| *bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stem_of_a_demo_item_is_a_built_in_png() {
        let (cal, qa) = demo_items();
        let urls = cal
            .iter()
            .map(|c| c.image_url.as_deref())
            .chain(qa.iter().map(|q| q.image_url.as_deref()));
        let mut stems = 0;
        for url in urls {
            for stem in super::super::images::stems(url) {
                let bytes = demo_image(stem).unwrap();
                assert_eq!(
                    super::super::images::sniff_media_type(bytes),
                    Some("image/png")
                );
                stems += 1;
            }
        }
        assert!(stems >= 1);
    }
}
