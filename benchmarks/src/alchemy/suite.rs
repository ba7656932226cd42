//! AlchemyBench as a [`Suite`] named `alchemy`: a recipe's key contributions in, a predicted
//! recipe out, one judge call (and at most one re-ask) to score it; tabled by split.
//!
//! A task is a [`Recipe`] with, for the RAG condition, its retrieved neighbours already
//! resolved into the task as `references: [{contribution, recipe}]` (nearest first; the
//! server runs [`RecipeIndex`](super::retrieval::RecipeIndex) over the train split), so
//! preparing stays pure. No references is the one-shot prompt (K = 0, see
//! [`prompt`](super::prompt)).

use engine::interrupt::Interrupt;
use serde::{Deserialize, Serialize};

use super::judge::{judge_messages, reask, verdict, AlchemyLabel, AlchemyVerdict};
use super::prompt::prompt;
use super::recipe::{Recipe, Reference};
use crate::task::layout::{Layout, Rows};
use crate::task::summary::TableWords;
use crate::task::PaperTemperatures;
use crate::task::{
    Headline, Message, Need, NeedAnswer, Outcome, Prepared, Suite, TaskError, VerdictView,
};

/// A criterion's numbers in the paper's tables.
const CRITERION_STATS: [(&str, &str); 4] = [
    ("mean", "stat.mean"),
    ("σ", "stat.sd"),
    ("min", "stat.min"),
    ("max", "stat.max"),
];
/// The same numbers of a [`super::summary::Stat`] itself.
const STATS: [(&str, &str); 4] = [
    ("mean", "mean"),
    ("σ", "sd"),
    ("min", "min"),
    ("max", "max"),
];

/// The baseline that answers with the ground-truth recipe.
pub const REFERENCE: &str = "reference";

/// The group of a task without a split.
const NO_SPLIT: &str = "(no split)";

/// An AlchemyBench task: the recipe and its resolved references.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlchemyTask {
    /// The recipe (X, Y and its bibliography).
    #[serde(flatten)]
    pub recipe: Recipe,
    /// Retrieved neighbours, nearest first (empty: the one-shot prompt).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<Reference>,
    /// How the references were found, for people reading the task (the prompt does not
    /// carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<Retrieval>,
}

/// How a task's references were retrieved: the method, and each reference's recipe id and
/// similarity, in the order of `references`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Retrieval {
    /// E.g. "cosine top-5 over stored embeddings".
    pub method: String,
    /// Per reference: (recipe id, similarity: cosine, or a BM25 score).
    pub hits: Vec<(String, f32)>,
}

/// What scoring needs of a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlchemyState {
    /// X: the key contributions (the judge's "Target Material").
    pub contribution: String,
    /// Y: the ground-truth recipe.
    pub recipe: String,
}

impl AlchemyState {
    /// The judge's first conversation for `prediction`.
    pub fn judge(&self, prediction: &str) -> Vec<Message> {
        judge_messages(&self.contribution, prediction, &self.recipe)
    }
}

/// AlchemyBench (Open Materials Guide): synthesis recipes predicted and judged.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alchemy;

const COLUMNS: [(&str, &str); 1] = [("JudgeFailed", "Judge")];

impl Suite for Alchemy {
    const NAME: &'static str = "alchemy";
    type Task = AlchemyTask;
    type State = AlchemyState;
    type Verdict = AlchemyVerdict;

    fn key(task: &AlchemyTask) -> String {
        task.recipe.id.clone()
    }

    fn human_scored(&self) -> bool {
        true
    }

    /// The RAG condition (K > 0 references) ranks recipes by embeddings.
    fn retrieves(&self, _agent: Option<&str>, references: usize) -> bool {
        references > 0
    }

    /// AlchemyBench decodes at 0 and judges (GPT-4o) at 0.
    fn paper_temperatures(&self) -> PaperTemperatures {
        PaperTemperatures {
            answer: Some(0.0),
            judge: Some(0.0),
        }
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "split",
            metric: "judge's overall",
        }
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn prepare(&self, task: &AlchemyTask) -> Result<Prepared<AlchemyState>, TaskError> {
        task.recipe.check().map_err(TaskError)?;
        if let Some(i) = task
            .references
            .iter()
            .position(|r| r.contribution.trim().is_empty() || r.recipe.trim().is_empty())
        {
            return Err(TaskError(format!(
                "recipe {}: reference {} has an empty contribution or recipe",
                task.recipe.id,
                i + 1
            )));
        }
        let split = task.recipe.split.trim();
        Ok(Prepared {
            messages: prompt(&task.recipe.contribution, &task.references),
            group: if split.is_empty() {
                NO_SPLIT.into()
            } else {
                split.to_string()
            },
            state: AlchemyState {
                contribution: task.recipe.contribution.clone(),
                recipe: task.recipe.recipe.clone(),
            },
        })
    }

    /// One judge call on the whole reply (an empty reply is judged too: it scores low,
    /// as it would upstream).
    fn needs(&self, state: &AlchemyState, response: &str) -> Vec<Need> {
        vec![Need::Judge {
            messages: state.judge(response),
        }]
    }

    /// The re-ask, once, when the first judge reply is text that cannot be read.
    fn more_needs(
        &self,
        state: &AlchemyState,
        response: &str,
        answered: &[NeedAnswer],
    ) -> Vec<Need> {
        reask(&state.judge(response), answered)
            .map(|messages| Need::Judge { messages })
            .into_iter()
            .collect()
    }

    fn score(
        &self,
        _state: &AlchemyState,
        _response: &str,
        answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> AlchemyVerdict {
        verdict(answers)
    }

    /// A scored recipe is a success with the judge's `overall_score` as its metric; a
    /// judge failure is a failure with none.
    fn outcome(v: &AlchemyVerdict) -> Outcome {
        Outcome {
            label: v.label.name().to_string(),
            success: v.label == AlchemyLabel::Scored,
            metric: v.overall,
            why: v
                .judge_error
                .as_ref()
                .map(|e| format!("The judge could not score this answer: {e}.")),
        }
    }

    fn view(v: &AlchemyVerdict) -> VerdictView {
        v.view()
    }

    fn layouts(&self) -> &'static [Layout] {
        &[
            Layout {
                title: "Judge scores per criterion (1-5), every item",
                source: "AlchemyBench, Tables 5 and 10",
                row_heading: "criterion",
                rows: Rows::Each {
                    at: "all.criteria",
                    label: Some("key"),
                },
                values: &CRITERION_STATS,
                mean_row: false,
            },
            Layout {
                title: "The judge's overall score and the mean of the seven criteria, every item",
                source: "AlchemyBench, Tables 5 and 10",
                row_heading: "criterion",
                rows: Rows::Listed(&[
                    ("overall_score", "all.overall"),
                    ("mean of the 7 criteria", "all.mean7"),
                ]),
                values: &STATS,
                mean_row: false,
            },
        ]
    }

    /// Per split: each criterion's mean and σ, the judge's overall and the mean of the seven
    /// criteria (labelled apart), and the judge failures.
    fn headline(&self, rows: &[(&str, &AlchemyVerdict)]) -> Option<Headline> {
        let s = super::summary::AlchemySummary::of(rows.iter().map(|(g, v)| (*g, *v)));
        Some(Headline {
            text: s.to_markdown(),
            json: serde_json::to_value(&s).unwrap_or_default(),
        })
    }

    /// `{"label", "scores": {eight keys} | null, "overall", "mean7"}`.
    fn eval_verdict(v: &AlchemyVerdict) -> serde_json::Value {
        serde_json::json!({
            "label": v.label.name(),
            "scores": v.scores,
            "overall": v.overall,
            "mean7": v.mean7,
        })
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE]
    }

    fn baseline_answer(&self, name: &str, state: &AlchemyState) -> Option<String> {
        (name == REFERENCE).then(|| state.recipe.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(split: &str) -> AlchemyTask {
        serde_json::from_value(serde_json::json!({
            "id": "t1", "contribution": "## Key Contributions\n- x", "recipe": "## Materials\n- y",
            "split": split, "references": [{"contribution": "X1", "recipe": "Y1"}]
        }))
        .unwrap()
    }

    #[test]
    fn prepare_groups_by_split_and_keeps_references() {
        let p = Alchemy.prepare(&task("test_high_impact")).unwrap();
        assert_eq!(p.group, "test_high_impact");
        assert!(p.messages[0].content.contains("# Reference 1:\nX1\n\nY1"));
        assert_eq!(Alchemy.prepare(&task(" ")).unwrap().group, NO_SPLIT);
        let answer = Alchemy.baseline_answer(REFERENCE, &p.state).unwrap();
        assert_eq!(answer, "## Materials\n- y");
        let mut bad = task("x");
        bad.references[0].recipe.clear();
        assert!(Alchemy.prepare(&bad).is_err());
        let back: AlchemyTask =
            serde_json::from_value(serde_json::to_value(task("s")).unwrap()).unwrap();
        assert_eq!(back, task("s"));
    }
}
