//! The task sets the server offers the page (`GET /api/suites/{name}/tasks`) and runs given
//! no tasks: each suite's built-in set from its host ([`crate::suites`]): our own items
//! shipped with `benchmarks`, or MatTools' tool-usage tasks when the server is pointed at their
//! folder. Upstream data is never shipped; it is read where the user keeps it.

use std::collections::BTreeMap;
use std::sync::Arc;

use benchmarks::task::{AnySuite, Registry, RunEnv};
use wire::{SuiteInfo, SuiteTask};

use crate::suites::{Hosts, SuitesConfig};

/// Tasks by suite, each as its suite's JSON, with where they came from.
///
/// Cloning shares the sets: the server's state is cloned for every request, and a deep copy
/// of every task per request stalled the async threads under a burst of requests.
#[derive(Clone, Default)]
pub struct TaskSets {
    sets: Arc<BTreeMap<String, (Vec<serde_json::Value>, String)>>,
    config: SuitesConfig,
    hosts: Hosts,
}

impl std::fmt::Debug for TaskSets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSets")
            .field("suites", &self.sets.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl TaskSets {
    /// Every host's built-in set under `config`. A folder that cannot be read is reported in
    /// the set's source line (and the log), not fatal.
    pub fn load(config: &SuitesConfig, hosts: &Hosts) -> Self {
        let sets = hosts
            .all()
            .filter_map(|h| Some((h.name().to_string(), h.task_set(config)?)))
            .collect();
        TaskSets {
            sets: Arc::new(sets),
            config: config.clone(),
            hosts: hosts.clone(),
        }
    }

    /// Whether some suite of `registry` with tasks listed here scores by running code in the
    /// pymatgen sandbox (its warm workers are then worth starting).
    pub fn runs_pymatgen(&self, registry: &Registry) -> bool {
        self.sets.iter().any(|(name, (tasks, _))| {
            !tasks.is_empty()
                && registry
                    .get(name)
                    .is_ok_and(|s| s.scoring_env() == Some(RunEnv::Pymatgen))
        })
    }

    /// The host of suite `name`, as these sets were loaded with.
    pub fn host(&self, name: &str) -> std::sync::Arc<dyn crate::suites::SuiteHost> {
        self.hosts.get(name)
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
                    generates: suite.generates(),
                    agents: suite.agents().iter().map(|a| a.to_string()).collect(),
                    code_answers: suite.code_answers(),
                    reference_counts: self.hosts.get(suite.name()).reference_counts().to_vec(),
                    human_scored: suite.human_scored(),
                    variants: suite
                        .variants()
                        .iter()
                        .map(|v| wire::VariantInfo {
                            name: v.name.into(),
                            condition: v.condition.into(),
                        })
                        .collect(),
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
        let host = self.hosts.get(suite.name());
        let p = suite
            .prepare_json(&host.asked(t, &self.config))
            .map_err(|e| e.to_string())?;
        Ok(SuiteTask {
            id: p.id.clone(),
            group: p.group.clone(),
            prompt: benchmarks::task::prompt_text(&p.messages),
            messages: p.messages.clone(),
            images: host.image_stems(t),
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
        let host = self.hosts.get(suite.name());
        let named = tasks
            .iter()
            .filter(|t| suite.key_of(t).is_ok_and(|k| k == key))
            .any(|t| host.image_stems(t).iter().any(|s| s == stem));
        if !named {
            return Ok(None);
        }
        host.image(stem, &self.config).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server's state is cloned per request: its task sets must be shared, not copied.
    #[test]
    fn clones_share_the_sets() {
        let config = SuitesConfig {
            mattools_dir: None,
            omnimat_images_dir: None,
        };
        let sets = TaskSets::load(&config, &Hosts::standard());
        assert!(!sets.sets.is_empty());
        assert!(Arc::ptr_eq(&sets.sets, &sets.clone().sets));
    }
}
