//! AtomWorld as a [`Suite`]: the task's one user message, the evaluator, the table columns.

use engine::interrupt::Interrupt;

use serde::Deserialize;

use super::evaluate::{evaluate_with_same_crystal, parse_target, Comparison, Label, Verdict};
use super::generator::pool::require_builtin;
use super::generator::user_pool::read_pool;
use super::generator::{
    generate, generate_from, GeneratedTask, GenerationReport, StructureDraw, TaskSetSpec,
};
use super::noop::copy_would_pass;
use super::prompt::model_prompt;
use super::same_crystal::SAME_CRYSTAL_MATCHER;
use super::task::AtomWorldTask;
use super::wording::Wording;
use crate::task::layout::Layout;
use crate::task::source::{Located, Position};
use crate::task::summary::TableWords;
use crate::task::{
    Generator, Headline, Message, NeedAnswer, Outcome, Prepared, Suite, TaskError, Variant,
};
use engine::cif::PymatgenCif;

/// The AtomWorld benchmark (and its move_all probe).
#[derive(Clone, Copy, Debug, Default)]
pub struct AtomWorld;

/// What scoring an AtomWorld answer needs: the parsed target and the comparison rule (and,
/// for the baselines, the input and target texts).
#[derive(Clone, Debug)]
pub struct Reference {
    /// The target as pymatgen's reader parses it.
    pub target: PymatgenCif,
    /// How answers are compared with it.
    pub comparison: Comparison,
    /// The input CIF as the model sees it.
    pub input_cif: String,
    /// The target CIF.
    pub target_cif: String,
}

/// The baseline that answers with the input unchanged (bounds tables from below).
pub const COPY_INPUT: &str = "copy-input";
/// The baseline that answers with the ground truth (bounds tables from above).
pub const REFERENCE: &str = "reference";

/// The wordings a run may choose, by [`Wording`]'s names.
const VARIANTS: [Variant; 4] = [
    Variant {
        name: "data2026",
        condition: "2026 data wording",
    },
    Variant {
        name: "newest",
        condition: "Table 1 wording",
    },
    Variant {
        name: "four_decimal",
        condition: "four-decimal wording",
    },
    Variant {
        name: "oldest",
        condition: "oldest wording",
    },
];

/// The failure labels of the paper's table, with their headings.
const COLUMNS: [(&str, &str); 5] = [
    ("OutputFormatError", "Format"),
    ("CifParsingError", "Parse"),
    ("AtomCountMismatch", "Count"),
    ("StructureMismatch", "Match"),
    ("EvaluationTimeout", "Timeout"),
];

/// The task set `params` describe, over the built-in pool only (a user's pool is read by
/// [`Suite::generated_lines_from_pool`], and its tasks are run from the file it writes).
fn task_set(params: &serde_json::Value) -> Result<TaskSetSpec, TaskError> {
    let spec = TaskSetSpec::deserialize(params)
        .map_err(|e| TaskError(format!("not an AtomWorld task set: {e}")))?;
    require_builtin(&spec.pool).map_err(TaskError)?;
    Ok(spec)
}

/// Generated tasks as `gen` writes them, and a line on how they were drawn.
fn lines(
    spec: &TaskSetSpec,
    tasks: &[GeneratedTask],
    report: &GenerationReport,
) -> (Vec<serde_json::Value>, String) {
    let lines = tasks.iter().map(GeneratedTask::line).collect();
    let rejected: usize = report.no_ops_rejected.values().sum();
    let failed: usize = report.failed.values().sum();
    let structures = match spec.structures {
        StructureDraw::Shared => {
            let substituted: usize = report.substituted.values().sum();
            format!(
                "; every action on one list of {} structures (10-100 atoms, H to Os), \
                 {substituted} tasks moved to the next structure",
                report.shared_structures
            )
        }
        StructureDraw::PerTask => "; a structure drawn per task".into(),
    };
    let text = format!(
        "{} tasks (seed {}, pool {}{structures}); {rejected} no-op draws rejected; {failed} \
         tasks impossible",
        tasks.len(),
        spec.seed,
        spec.pool
    );
    (lines, text)
}

impl Suite for AtomWorld {
    const NAME: &'static str = "atomworld";
    type Task = AtomWorldTask;
    type State = Reference;
    type Verdict = Verdict;

    fn key(task: &AtomWorldTask) -> String {
        task.id.clone()
    }

    /// AtomMotor-style sets: `per_group` tasks of each of the ten actions over the shipped
    /// pool, draws the unchanged input would pass rejected.
    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        let spec = TaskSetSpec::per_action(seed, per_group);
        Some(Generator {
            at_most: spec.counts.values().sum(),
            params: serde_json::to_value(spec).ok()?,
        })
    }

    /// The prompt wordings of the reference's data sets, for a prompt ablation.
    fn variants(&self) -> &'static [Variant] {
        &VARIANTS
    }

    /// The default set with its prompts in the wording `name`.
    fn variant_generator(&self, seed: u64, per_group: usize, name: &str) -> Option<Generator> {
        let wording = Wording::deserialize(serde_json::Value::from(name)).ok()?;
        let spec = TaskSetSpec {
            wording,
            ..TaskSetSpec::per_action(seed, per_group)
        };
        Some(Generator {
            at_most: spec.counts.values().sum(),
            params: serde_json::to_value(spec).ok()?,
        })
    }

    fn generate(&self, params: &serde_json::Value) -> Result<Vec<AtomWorldTask>, TaskError> {
        let spec = task_set(params)?;
        let (tasks, _) = generate(&spec, &copy_would_pass);
        Ok(tasks.iter().map(|t| t.task()).collect())
    }

    /// Each task with its structure's name, its action's parameters and whether its
    /// readings differ (what the Python reference's driver reads), and the draws left out.
    fn generated_lines(
        &self,
        params: &serde_json::Value,
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        let spec = task_set(params)?;
        let (tasks, report) = generate(&spec, &copy_would_pass);
        Ok(lines(&spec, &tasks, &report))
    }

    /// The same drawn from a pool of the user's (CIFs, pymatgen JSON, a Materials Project or
    /// OPTIMADE export): the tasks name the pool by the digest of its files.
    fn generated_lines_from_pool(
        &self,
        params: &serde_json::Value,
        files: &[(String, String)],
    ) -> Result<(Vec<serde_json::Value>, String), TaskError> {
        let pool = read_pool(files).map_err(|e| TaskError(e.to_string()))?;
        let spec = TaskSetSpec {
            pool: pool.id.clone(),
            ..task_set(params)?
        };
        let (tasks, report) = generate_from(&spec, &pool.entries, &copy_would_pass);
        let (lines, text) = lines(&spec, &tasks, &report);
        let mut text = format!(
            "{text}; {} structures read from the pool",
            pool.entries.len()
        );
        if !pool.skipped.is_empty() {
            text.push_str(&format!("; {} unreadable, left out:", pool.skipped.len()));
            for s in &pool.skipped {
                text.push_str(&format!("\n  {}: {}", s.place, s.why));
            }
        }
        Ok((lines, text))
    }

    /// The upstream layouts [`super::import`] reads (task triples as JSON lines, the
    /// reference's `data/simple/<Action>.json`, its `evaluation_results.json`).
    fn read_tasks(&self, _name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        let (_, records) = super::import::import(text).map_err(|e| TaskError(e.to_string()))?;
        records
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let value = serde_json::to_value(r.task).map_err(|e| TaskError(e.to_string()))?;
                Ok((Position::Item(i + 1), value))
            })
            .collect()
    }

    /// The paper's tool-augmented agent (documentation search, then a pymatgen program run on
    /// the input: [`super::agent`]) and our own (the engine's operations as tools through
    /// function calling: [`super::tools`]).
    fn agents(&self) -> &'static [&'static str] {
        &[super::agent::AGENT, super::tools::AGENT]
    }

    /// The agent searches the documentation.
    fn retrieves(&self, agent: Option<&str>, _references: usize) -> bool {
        agent == Some(super::agent::AGENT)
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "action",
            metric: "max_dist",
        }
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn prepare(&self, task: &AtomWorldTask) -> Result<Prepared<Reference>, TaskError> {
        AtomWorld::prepare_resolved(task, task.resolve()?)
    }

    fn score(
        &self,
        state: &Reference,
        response: &str,
        _answers: &[NeedAnswer],
        interrupt: &Interrupt,
    ) -> Verdict {
        evaluate_with_same_crystal(&state.target, response, state.comparison, interrupt)
    }

    /// A budget per [`super::evaluate::SITES_PER_BUDGET`] sites of the target.
    fn scoring_scale(&self, state: &Reference) -> u32 {
        super::evaluate::scoring_scale(state.target.structure.len())
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE, COPY_INPUT]
    }

    fn baseline_answer(&self, name: &str, state: &Reference) -> Option<String> {
        let cif = match name {
            REFERENCE => &state.target_cif,
            COPY_INPUT => &state.input_cif,
            _ => return None,
        };
        Some(super::evaluate::cif_answer(cif))
    }

    /// `{"label", "rms", "max_dist", "max_dist_angstrom", "detail"}`, and `"same_crystal":
    /// {"fit", "rms", "max_dist"}` whenever both structures parsed.
    fn eval_verdict(v: &Verdict) -> serde_json::Value {
        let mut out = serde_json::json!({
            "label": v.label.name(),
            "rms": v.rms,
            "max_dist": v.max_dist,
            "max_dist_angstrom": v.max_dist_angstrom,
            "detail": v.detail,
        });
        if let (Some(s), Some(map)) = (v.same_crystal, out.as_object_mut()) {
            map.insert("same_crystal".into(), serde_json::json!(s));
        }
        out
    }

    /// The paper's figures per action ([`super::figures`]), and how often the benchmark is
    /// stricter than chemistry: failed answers that are the target's crystal in another cell
    /// ([`super::same_crystal`]).
    fn headline(&self, rows: &[(&str, &Verdict)]) -> Option<Headline> {
        if rows.is_empty() {
            return None;
        }
        let per_action = super::figures::per_action(rows);
        let checked = rows.iter().filter(|(_, v)| v.same_crystal.is_some());
        let failed: Vec<&Verdict> = checked
            .clone()
            .map(|(_, v)| *v)
            .filter(|v| v.label != Label::Success)
            .collect();
        let stricter = failed
            .iter()
            .filter(|v| v.same_crystal.is_some_and(|s| s.fit))
            .count();
        let checked = checked.count();
        let text = if checked == 0 {
            String::new()
        } else if failed.is_empty() {
            format!(
                "Stricter than chemistry: no answer failed, so none can be the target's crystal \
                 in another cell ({checked} answers checked by {SAME_CRYSTAL_MATCHER})\n"
            )
        } else {
            format!(
                "Stricter than chemistry: {stricter} of {} failed answers are the target's \
                 crystal in another cell by {SAME_CRYSTAL_MATCHER} (a second opinion, not the \
                 score; {checked} answers checked)\n",
                failed.len()
            )
        };
        Some(Headline {
            text,
            json: serde_json::json!({
                "matcher": SAME_CRYSTAL_MATCHER,
                "checked": checked,
                "failed": failed.len(),
                "stricter_than_chemistry": stricter,
                "per_action": per_action,
            }),
        })
    }

    fn layouts(&self) -> &'static [Layout] {
        &super::figures::LAYOUTS
    }

    fn outcome(v: &Verdict) -> Outcome {
        Outcome {
            label: v.label.name().to_string(),
            success: v.label == Label::Success,
            metric: if v.label == Label::Success {
                v.max_dist
            } else {
                None
            },
            why: None,
        }
    }
}

impl AtomWorld {
    /// [`Suite::prepare`] of `task` once resolved (a study that read its group from the
    /// resolved task does not resolve it again).
    pub fn prepare_resolved(
        task: &AtomWorldTask,
        resolved: super::task::Resolved,
    ) -> Result<Prepared<Reference>, TaskError> {
        let target = parse_target(&resolved.target_cif).map_err(|e| TaskError(e.to_string()))?;
        Ok(Prepared {
            messages: vec![Message::user(model_prompt(
                &task.input_cif,
                &task.action_prompt,
            ))],
            group: resolved.group().to_string(),
            state: Reference {
                target,
                comparison: resolved.comparison(),
                input_cif: task.input_cif.clone(),
                target_cif: resolved.target_cif,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::AnySuite;

    /// Scoring a large task may take more budgets: one per 2,000 target sites begun, read
    /// from the task's target (8 × 8³ = 4,096 sites: three), one for the paper's sizes.
    #[test]
    fn the_scoring_budget_grows_with_the_target() {
        let cif = "data_x\n_cell_length_a 5.64\n_cell_length_b 5.64\n_cell_length_c 5.64\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\nloop_\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nNa 0 0 0\nNa 0 .5 .5\nNa .5 0 .5\nNa .5 .5 0\nCl .5 .5 .5\nCl .5 0 0\nCl 0 .5 0\nCl 0 0 .5\n";
        let task = |prompt: &str| serde_json::json!({"id": "t", "input_cif": cif, "action_prompt": prompt});
        let big = AtomWorld
            .prepare_json(&task("Create a supercell with the size 8×8×8."))
            .unwrap();
        assert_eq!(big.scoring_scale, 3);
        let small = AtomWorld
            .prepare_json(&task("Create a supercell with the size 2×2×2."))
            .unwrap();
        assert_eq!(small.scoring_scale, 1);
        assert_eq!(super::super::evaluate::scoring_scale(2_000), 1);
        assert_eq!(super::super::evaluate::scoring_scale(2_001), 2);
        assert_eq!(super::super::evaluate::scoring_scale(0), 1);
    }

    /// A variant draws the default set's tasks with their prompts in its wording; a name the
    /// suite lacks is refused with the names it has.
    #[test]
    fn a_wording_variant_rewords_the_same_tasks() {
        let default = AtomWorld.generator_for(9, 2, None).unwrap().unwrap();
        let newest = AtomWorld
            .generator_for(9, 2, Some("newest"))
            .unwrap()
            .unwrap();
        let plain = AnySuite::generate(&AtomWorld, &default.params).unwrap();
        let reworded = AnySuite::generate(&AtomWorld, &newest.params).unwrap();
        assert_eq!(plain.len(), reworded.len());
        let mut differ = 0;
        for (a, b) in plain.iter().zip(&reworded) {
            assert_eq!(a["input_cif"], b["input_cif"], "{}", a["id"]);
            let reworded = a["action_prompt"] != b["action_prompt"];
            differ += usize::from(reworded);
            if a["id"].as_str().unwrap().starts_with("insert_between") {
                assert!(reworded, "{a}");
            }
            let pa = AtomWorld.prepare_json(a).unwrap();
            let pb = AtomWorld.prepare_json(b).unwrap();
            assert_eq!(pa.group, pb.group);
        }
        assert!(differ >= 2, "{differ} of {} prompts reworded", plain.len());
        let insert = reworded
            .iter()
            .find(|t| t["id"].as_str().unwrap().starts_with("insert_between"))
            .unwrap();
        assert!(
            insert["action_prompt"]
                .as_str()
                .unwrap()
                .contains("atom in the line between atoms at indices"),
            "{insert}"
        );
        let e = AtomWorld.generator_for(9, 2, Some("fancy")).unwrap_err();
        assert!(
            e.0.contains("data2026, newest, four_decimal, oldest"),
            "{e}"
        );
        for v in AnySuite::variants(&AtomWorld) {
            assert!(AtomWorld
                .generator_for(9, 1, Some(v.name))
                .unwrap()
                .is_some());
        }
    }
}
