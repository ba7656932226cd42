//! The task sets the server offers the page (`GET /api/suites/{name}/tasks`): our own items
//! shipped with `bench` (OmniMatBench demo items, MatTools QA questions, AlchemyBench recipes) and MatTools'
//! tool-usage tasks when the server is pointed at their folder (`[suites] mattools_dir`, or
//! `ATOMWORLD_MATTOOLS_DIR`). Upstream data is never shipped; it is read where the user keeps it.
//!
//! OmniMatBench's images are read here too ([`with_images`], [`load_image`]): our demo items'
//! own images are built in; other stems are looked up in `[suites] omnimat_images_dir`
//! (`ATOMWORLD_OMNIMAT_IMAGES_DIR`, `atomworld run --images DIR`) as
//! `<dir>/<stem>.{png,jpg,jpeg,gif,webp}`, at most 5 MiB an image and 20 MiB an item
//! (`bench::omnimat::images`). An item whose images cannot all be read says why, and is then
//! asked of no model.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bench::task::{AnySuite, Registry};
use bench::wire::{SuiteInfo, SuiteTask};
use serde::{Deserialize, Serialize};

/// The `[suites]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SuitesConfig {
    /// MatTools' data folder (holding `tasks/`, `test_files/`, `missing-files.txt`).
    pub mattools_dir: Option<PathBuf>,
    /// The folder of OmniMatBench's images, one file per stem (`<stem>.png`, `.jpg`, …; the
    /// upstream `images/` folders merged into one).
    pub omnimat_images_dir: Option<PathBuf>,
}

impl Default for SuitesConfig {
    fn default() -> Self {
        Self {
            mattools_dir: std::env::var_os("ATOMWORLD_MATTOOLS_DIR").map(PathBuf::from),
            omnimat_images_dir: std::env::var_os("ATOMWORLD_OMNIMAT_IMAGES_DIR").map(PathBuf::from),
        }
    }
}

/// Tasks by suite, each as its suite's JSON, with where they came from.
///
/// Cloning shares the sets: the server's state is cloned for every request, and a deep copy
/// of every task per request stalled the async threads under a burst of requests.
#[derive(Clone, Debug, Default)]
pub struct TaskSets {
    sets: Arc<BTreeMap<String, (Vec<serde_json::Value>, String)>>,
    images_dir: Option<PathBuf>,
}

fn values<T: Serialize>(items: &[T]) -> Vec<serde_json::Value> {
    items
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect()
}

impl TaskSets {
    /// The built-in sets plus what `config` points at. A folder that cannot be read is
    /// reported in the set's source line (and the log), not fatal.
    pub fn load(config: &SuitesConfig) -> Self {
        let mut sets = BTreeMap::new();
        let (cal, qa) = bench::omnimat::demo::demo_items();
        let ours = "our own demo items (bench/data/omnimat_demo.json)".to_string();
        sets.insert("omnimat-cal".to_string(), (values(&cal), ours.clone()));
        sets.insert("omnimat-qa".to_string(), (values(&qa), ours));
        let qa = bench::mattools::qa::item::parse_qa_bundle(bench::mattools::qa::item::BUNDLE)
            .unwrap_or_default();
        sets.insert(
            "mattools-qa".to_string(),
            (
                values(&qa),
                "our own questions on pymatgen 2024.8.9 (bench/data/mattools_qa.json)".into(),
            ),
        );
        let code = match &config.mattools_dir {
            None => (
                Vec::new(),
                "none: point the server at MatTools' data folder ([suites] mattools_dir or \
                 ATOMWORLD_MATTOOLS_DIR)"
                    .to_string(),
            ),
            Some(dir) => match crate::cli::mattools::TaskDir::at(dir).and_then(|d| d.load()) {
                Ok(tasks) => (values(&tasks), format!("{}", dir.display())),
                Err(e) => {
                    tracing::warn!("MatTools tasks in {}: {}", dir.display(), e.message);
                    (Vec::new(), format!("{}: {}", dir.display(), e.message))
                }
            },
        };
        sets.insert("mattools-code".to_string(), code);
        let recipes = bench::alchemy::demo::demo_recipes().unwrap_or_default();
        let tasks: Vec<bench::alchemy::AlchemyTask> = recipes
            .into_iter()
            .map(|recipe| bench::alchemy::AlchemyTask {
                recipe,
                references: Vec::new(),
                retrieval: None,
            })
            .collect();
        sets.insert(
            "alchemy".to_string(),
            (
                values(&tasks),
                "our own recipes (bench/data/alchemy_demo.jsonl), one-shot prompt".into(),
            ),
        );
        TaskSets {
            sets: Arc::new(sets),
            images_dir: config.omnimat_images_dir.clone(),
        }
    }

    /// Whether MatTools' code tasks are listed (their folder is configured and read): code
    /// will then run in the pymatgen sandbox.
    pub fn has_mattools_code(&self) -> bool {
        self.sets
            .get("mattools-code")
            .is_some_and(|(tasks, _)| !tasks.is_empty())
    }

    /// The tasks of `suite` as JSON and where they come from.
    pub fn raw(&self, suite: &str) -> (Vec<serde_json::Value>, String) {
        self.sets
            .get(suite)
            .cloned()
            .unwrap_or_else(|| (Vec::new(), "no task set".into()))
    }

    /// Every suite of `registry` with its task count.
    pub fn list(&self, registry: &Registry) -> Vec<SuiteInfo> {
        registry
            .names()
            .into_iter()
            .filter_map(|name| registry.get(name).ok())
            .map(|suite| {
                let (tasks, source) = self
                    .sets
                    .get(suite.name())
                    .map(|(t, s)| (t.len(), s.clone()))
                    .unwrap_or((0, "generated in the page".into()));
                SuiteInfo {
                    name: suite.name().to_string(),
                    baselines: suite.baselines().iter().map(|b| b.to_string()).collect(),
                    tasks,
                    source,
                }
            })
            .collect()
    }

    /// The tasks of `suite`, prepared (tasks that cannot be prepared are left out).
    pub fn tasks(&self, suite: &dyn AnySuite) -> Vec<SuiteTask> {
        let Some((tasks, _)) = self.sets.get(suite.name()) else {
            return Vec::new();
        };
        tasks
            .iter()
            .filter_map(|t| self.task(suite, t).ok())
            .collect()
    }

    /// One task of `suite` (its JSON `t`) prepared for the page, or why it cannot be.
    pub fn task(&self, suite: &dyn AnySuite, t: &serde_json::Value) -> Result<SuiteTask, String> {
        let dir = self.images_dir.as_deref();
        let p = suite
            .prepare_json(&with_images(suite.name(), t, dir))
            .map_err(|e| e.to_string())?;
        Ok(SuiteTask {
            id: p.id.clone(),
            group: p.group.clone(),
            prompt: crate::runs::prompt_text(&p.messages),
            messages: p.messages.clone(),
            images: stems_of(suite.name(), t),
            unavailable: suite.unanswerable(&p).map(|u| u.why),
            task: t.clone(),
        })
    }

    /// Image `stem` of the task of `suite` keyed `key` (bytes and media type), for the page:
    /// only a stem the task itself names is looked up. `Ok(None)`: no such task or stem.
    pub fn image(
        &self,
        suite: &dyn AnySuite,
        key: &str,
        stem: &str,
    ) -> Result<Option<(Vec<u8>, &'static str)>, String> {
        let Some((tasks, _)) = self.sets.get(suite.name()) else {
            return Ok(None);
        };
        let named = tasks
            .iter()
            .filter(|t| suite.key_of(t).is_ok_and(|k| k == key))
            .any(|t| stems_of(suite.name(), t).iter().any(|s| s == stem));
        if !named {
            return Ok(None);
        }
        load_image(self.images_dir.as_deref(), stem).map(Some)
    }
}

/// The image stems a task of `suite` names (OmniMatBench's `image_url`; none elsewhere).
fn stems_of(suite: &str, task: &serde_json::Value) -> Vec<String> {
    if !IMAGE_SUITES.contains(&suite) {
        return Vec::new();
    }
    bench::omnimat::images::stems(task["image_url"].as_str())
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The suites whose items may name images.
const IMAGE_SUITES: [&str; 2] = ["omnimat-cal", "omnimat-qa"];

/// The bytes and media type of image `stem`: our demo items' own images (built in), else
/// `<dir>/<stem>.{png,jpg,jpeg,gif,webp}`, the media type from the file's first bytes
/// (whatever its extension says), at most 5 MiB. `Err` says why it is unavailable, naming
/// the stem and the directory.
pub fn load_image(dir: Option<&Path>, stem: &str) -> Result<(Vec<u8>, &'static str), String> {
    use bench::omnimat::images::{safe_stem, sniff_media_type, EXTENSIONS, MAX_IMAGE_BYTES};
    if !safe_stem(stem) {
        return Err(format!(
            "images unavailable (stem {stem:?} is not a plain file name)"
        ));
    }
    if let Some(bytes) = bench::omnimat::demo::demo_image(stem) {
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

/// `task` (a task of `suite` as JSON) as it is asked: an OmniMatBench item that names images
/// gets them in `images`, in the order of its stems, or the reason they are unavailable in
/// `images_unavailable` (the first stem that fails, or the item's total above 20 MiB). Other
/// tasks come back unchanged. The stored task stays the file's; only the asked copy carries
/// the images.
pub fn with_images(suite: &str, task: &serde_json::Value, dir: Option<&Path>) -> serde_json::Value {
    use bench::omnimat::images::MAX_ITEM_IMAGE_BYTES;
    let stems = stems_of(suite, task);
    if stems.is_empty() {
        return task.clone();
    }
    let mut total = 0u64;
    let mut images = Vec::with_capacity(stems.len());
    let mut why = None;
    for stem in &stems {
        match load_image(dir, stem) {
            Ok((bytes, media)) => {
                total += bytes.len() as u64;
                images.push(bench::task::Image::from_bytes(media, &bytes));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The server's state is cloned per request: its task sets must be shared, not copied.
    #[test]
    fn clones_share_the_sets() {
        let sets = TaskSets::load(&SuitesConfig {
            mattools_dir: None,
            omnimat_images_dir: None,
        });
        assert!(!sets.sets.is_empty());
        assert!(Arc::ptr_eq(&sets.sets, &sets.clone().sets));
    }
}
