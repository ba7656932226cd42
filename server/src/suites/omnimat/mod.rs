//! OmniMatBench on the server: our demo items as the built-in sets, and the items' images.
//!
//! Images: our demo items' own images are built in; other stems are looked up in
//! `[suites] omnimat_images_dir` (`ATOMWORLD_OMNIMAT_IMAGES_DIR`, `atomworld run --images DIR`)
//! as `<dir>/<stem>.{png,jpg,jpeg,gif,webp}`, at most 5 MiB an image and 20 MiB an item
//! (`benchmarks::omnimat::images`). An item whose images cannot all be read says why, and is then
//! asked of no model.

pub mod python_tool;

use std::io::Read;
use std::path::Path;

use benchmarks::omnimat::images::{
    safe_stem, sniff_media_type, stems, EXTENSIONS, MAX_IMAGE_BYTES, MAX_ITEM_IMAGE_BYTES,
};
use benchmarks::task::Suite;

use futures_util::future::BoxFuture;

use super::{neutral, AgentError, AgentReply, AgentTask, SuiteHost, SuitesConfig, TaskSet};
use crate::agents::Effects;

/// The host of `omnimat-cal` or `omnimat-qa` (they differ only in their demo items).
pub struct OmniMat {
    name: &'static str,
    qa: bool,
}

impl OmniMat {
    /// The calculation suite's host.
    pub const CAL: OmniMat = OmniMat {
        name: benchmarks::omnimat::OmniMatCal::NAME,
        qa: false,
    };
    /// The question-answer suite's host.
    pub const QA: OmniMat = OmniMat {
        name: benchmarks::omnimat::OmniMatQa::NAME,
        qa: true,
    };
}

impl SuiteHost for OmniMat {
    fn name(&self) -> &'static str {
        self.name
    }

    fn task_set(&self, _config: &SuitesConfig) -> Option<TaskSet> {
        let (cal, qa) = benchmarks::omnimat::demo::demo_items();
        let tasks = if self.qa {
            qa.iter()
                .filter_map(|t| serde_json::to_value(t).ok())
                .collect()
        } else {
            cal.iter()
                .filter_map(|t| serde_json::to_value(t).ok())
                .collect()
        };
        Some((
            tasks,
            "our own demo items (benchmarks/data/omnimat_demo.json)".into(),
        ))
    }

    /// The `python` agent: up to three standard-library programs before the answer (our own
    /// setting, not the benchmark's).
    fn answer_with<'a>(
        &'a self,
        agent: &'a str,
        model: &'a str,
        task: AgentTask<'a>,
        fx: &'a Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<AgentReply, AgentError>>> {
        if agent != benchmarks::omnimat::python_tool::AGENT {
            return None;
        }
        Some(Box::pin(async move {
            let answer =
                python_tool::answer(model, &task.prepared.messages, task.sample, fx).await?;
            Ok(neutral(answer))
        }))
    }

    /// The item with `images` (in the order of its stems) or the reason they are
    /// unavailable in `images_unavailable` (the first stem that fails, or the item's total
    /// above 20 MiB).
    fn asked(&self, task: &serde_json::Value, config: &SuitesConfig) -> serde_json::Value {
        let stems = self.image_stems(task);
        if stems.is_empty() {
            return task.clone();
        }
        let dir = config.omnimat_images_dir.as_deref();
        let mut total = 0u64;
        let mut images = Vec::with_capacity(stems.len());
        let mut why = None;
        for stem in &stems {
            match load_image(dir, stem) {
                Ok((bytes, media)) => {
                    total += bytes.len() as u64;
                    images.push(benchmarks::task::Image::from_bytes(media, &bytes));
                }
                Err(e) => {
                    why = Some(e);
                    break;
                }
            }
        }
        if why.is_none() && total > MAX_ITEM_IMAGE_BYTES {
            why = Some(format!(
                "images unavailable ({total} bytes of images, more than the {} MiB allowed per item)",
                MAX_ITEM_IMAGE_BYTES / (1024 * 1024)
            ));
        }
        let mut asked = task.clone();
        if let Some(item) = asked.as_object_mut() {
            match why {
                Some(why) => item.insert("images_unavailable".into(), serde_json::json!(why)),
                None => item.insert("images".into(), serde_json::json!(images)),
            };
        }
        asked
    }

    fn image_stems(&self, task: &serde_json::Value) -> Vec<String> {
        stems(task["image_url"].as_str())
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn image(&self, stem: &str, config: &SuitesConfig) -> Result<(Vec<u8>, &'static str), String> {
        load_image(config.omnimat_images_dir.as_deref(), stem)
    }
}

/// The bytes and media type of image `stem`: our demo items' own images (built in), else
/// `<dir>/<stem>.{png,jpg,jpeg,gif,webp}`, the media type from the file's first bytes
/// (whatever its extension says), at most 5 MiB. `Err` says why it is unavailable, naming
/// the stem and the directory.
pub fn load_image(dir: Option<&Path>, stem: &str) -> Result<(Vec<u8>, &'static str), String> {
    if !safe_stem(stem) {
        return Err(format!(
            "images unavailable (stem {stem:?} is not a plain file name)"
        ));
    }
    if let Some(bytes) = benchmarks::omnimat::demo::demo_image(stem) {
        if let Some(media) = sniff_media_type(bytes) {
            return Ok((bytes.to_vec(), media));
        }
    }
    let Some(dir) = dir else {
        return Err(format!(
            "images unavailable (stem {stem}: no images directory is configured; set [suites] \
             omnimat_images_dir, ATOMWORLD_OMNIMAT_IMAGES_DIR or --images DIR)"
        ));
    };
    let Some(path) = EXTENSIONS
        .iter()
        .map(|ext| dir.join(format!("{stem}.{ext}")))
        .find(|p| p.is_file())
    else {
        return Err(format!(
            "images unavailable (stem {stem} not found in {})",
            dir.display()
        ));
    };
    let unreadable =
        |e: std::io::Error| format!("images unavailable (cannot read {}: {e})", path.display());
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .map_err(unreadable)?
        .take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(format!(
            "images unavailable ({}: more than the {} MiB allowed per image)",
            path.display(),
            MAX_IMAGE_BYTES / (1024 * 1024)
        ));
    }
    let media = sniff_media_type(&bytes).ok_or_else(|| {
        format!(
            "images unavailable ({}: not a PNG, JPEG, GIF or WebP image)",
            path.display()
        )
    })?;
    Ok((bytes, media))
}
