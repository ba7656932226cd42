//! MatTools QA as a [`Suite`]: one user message per question, exact letter scoring, tabled
//! per data set (file).

use engine::interrupt::Interrupt;

use super::item::{parse_qa_bundle, parse_qa_file, Letter, QaTask};
use super::prompt::question_prompt;
use super::score::{accuracy_per_file, score_answer, FileAccuracy, QaLabel, QaVerdict};
use crate::task::layout::{Layout, Rows};
use crate::task::source::{self, Located, Position};
use crate::task::summary::TableWords;
use crate::task::PaperTemperatures;
use crate::task::{
    Headline, Message, NeedAnswer, Outcome, Prepared, Suite, TaskError, VerdictView,
};

/// The MatTools QA benchmark (`mattools-qa`).
#[derive(Clone, Copy, Debug, Default)]
pub struct MatToolsQa;

/// What scoring a QA answer needs: the correct letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QaState {
    /// The correct choice.
    pub correct: Letter,
}

/// The baseline that answers every question with its correct letter (bounds tables from
/// above: it must score 100 %).
pub const REFERENCE: &str = "reference";

/// The failure labels, in table order, with their headings.
const COLUMNS: [(&str, &str); 2] = [("Wrong", "Wrong"), ("NoAnswer", "No answer")];

impl Suite for MatToolsQa {
    const NAME: &'static str = "mattools-qa";
    type Task = QaTask;
    type State = QaState;
    type Verdict = QaVerdict;

    fn key(task: &QaTask) -> String {
        task.id.clone()
    }

    /// The reference's QA file (a JSON list of sources, the data set named by the file's
    /// stem), our bundle of several (one JSON object), or JSON lines of tasks.
    fn read_tasks(&self, name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let parsed = if text.trim_start().starts_with('[') {
            let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            parse_qa_file(if stem.is_empty() { "qa" } else { stem }, text)
        } else if serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.is_object()) {
            parse_qa_bundle(text)
        } else {
            return source::json_lines(text);
        };
        parsed
            .map_err(|e| TaskError(e.to_string()))?
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let value = serde_json::to_value(t).map_err(|e| TaskError(e.to_string()))?;
                Ok((Position::Item(i + 1), value))
            })
            .collect()
    }

    /// MatTools' paper samples at 0.7.
    fn paper_temperatures(&self) -> PaperTemperatures {
        PaperTemperatures {
            answer: Some(0.7),
            judge: None,
        }
    }

    fn table_words(&self) -> TableWords {
        TableWords {
            group: "file",
            metric: "metric",
        }
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &COLUMNS
    }

    fn prepare(&self, task: &QaTask) -> Result<Prepared<QaState>, TaskError> {
        if task.file.is_empty() {
            return Err(TaskError(format!(
                "task {}: no data set (file) name",
                task.id
            )));
        }
        let correct = task.correct_answer;
        if task.choices.get(correct).trim().is_empty() {
            return Err(TaskError(format!(
                "task {}: the correct choice {correct} is empty",
                task.id
            )));
        }
        Ok(Prepared {
            messages: vec![Message::user(question_prompt(task))],
            group: task.file.clone(),
            state: QaState { correct },
        })
    }

    fn score(
        &self,
        state: &QaState,
        response: &str,
        _answers: &[NeedAnswer],
        _interrupt: &Interrupt,
    ) -> QaVerdict {
        score_answer(response, state.correct)
    }

    fn outcome(v: &QaVerdict) -> Outcome {
        Outcome {
            label: v.label.name().to_string(),
            success: v.label == QaLabel::Correct,
            metric: None,
            why: None,
        }
    }

    fn view(v: &QaVerdict) -> VerdictView {
        let mut view = VerdictView::default();
        view.facts
            .push(format!("the right choice is {}", v.expected));
        if let Some(letter) = v.letter {
            view.facts.push(format!("answered {letter}"));
        }
        if let Some(read) = v.extracted.filter(|read| v.letter != Some(*read)) {
            view.facts
                .push(format!("read as {read} by our reasoning-model extraction"));
        }
        view.text("Why", v.detail.as_deref().unwrap_or_default(), true)
    }

    fn layouts(&self) -> &'static [Layout] {
        &[
            Layout {
                title: "Accuracy per question file, with its 95 % Wilson interval",
                source: "MatTools, Table 1",
                row_heading: "file",
                rows: Rows::Each {
                    at: "",
                    label: None,
                },
                values: &[("accuracy", "accuracy"), ("low", "low"), ("high", "high")],
                mean_row: false,
            },
            Layout {
                title: "Accuracy per question file with the letter read out of reasoning text \
                    (reasoning blocks dropped, the last answer tag, decorated or named letters)",
                source: "ours: the paper extracts reasoning models' answers (Table S1) by a rule \
                     it does not publish",
                row_heading: "file",
                rows: Rows::Each {
                    at: "",
                    label: None,
                },
                values: &[
                    ("accuracy", "reasoning.accuracy"),
                    ("low", "reasoning.low"),
                    ("high", "reasoning.high"),
                ],
                mean_row: false,
            },
        ]
    }

    /// Accuracy per file with its 95 % Wilson interval, by the exact rule and (under
    /// `reasoning`) with our extraction for reasoning models.
    fn headline(&self, rows: &[(&str, &QaVerdict)]) -> Option<Headline> {
        let strict = accuracy_per_file(rows.iter().map(|(g, v)| (*g, v.label == QaLabel::Correct)));
        let reasoning = accuracy_per_file(rows.iter().map(|(g, v)| (*g, v.extracted_correct())));
        let mut text = String::new();
        let mut json = serde_json::Map::new();
        for (file, a) in &strict {
            let r = reasoning
                .get(file)
                .copied()
                .unwrap_or(FileAccuracy::of(0, 0));
            text.push_str(&format!(
                "{file}: accuracy {:.2} % ({} of {}), 95 % interval {:.2}–{:.2} %; \
                 with reasoning text read (ours) {:.2} % ({} of {})\n",
                100.0 * a.accuracy,
                a.correct,
                a.n,
                100.0 * a.low,
                100.0 * a.high,
                100.0 * r.accuracy,
                r.correct,
                r.n,
            ));
            let mut row = serde_json::to_value(a).unwrap_or_default();
            row["reasoning"] = serde_json::to_value(r).unwrap_or_default();
            json.insert(file.clone(), row);
        }
        Some(Headline {
            text,
            json: serde_json::Value::Object(json),
        })
    }

    /// `{"label", "letter", "expected", "extracted"}`.
    fn eval_verdict(v: &QaVerdict) -> serde_json::Value {
        serde_json::json!({
            "label": v.label.name(),
            "letter": v.letter,
            "expected": v.expected,
            "extracted": v.extracted,
        })
    }

    fn baselines(&self) -> &'static [&'static str] {
        &[REFERENCE]
    }

    fn baseline_answer(&self, name: &str, state: &QaState) -> Option<String> {
        (name == REFERENCE).then(|| format!("<answer>{}</answer>", state.correct))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mattools::qa::item::QaChoices;
    use crate::task::{AnySuite, Registry};

    fn task(correct: Letter) -> QaTask {
        QaTask {
            id: "ours_code/0/1".into(),
            file: "ours_code".into(),
            source: "pymatgen/core/periodic_table.py/Element".into(),
            question: "What is `Element(\"O\").Z`?".into(),
            choices: QaChoices {
                a: "8".into(),
                b: "16".into(),
                c: "6".into(),
                d: "15.999".into(),
            },
            correct_answer: correct,
        }
    }

    #[test]
    fn prepares_one_user_message_grouped_by_file() {
        let p = MatToolsQa.prepare(&task(Letter::A)).unwrap();
        assert_eq!(p.messages.len(), 1);
        assert_eq!(p.messages[0].role, crate::task::Role::User);
        assert_eq!(p.group, "ours_code");
        assert_eq!(p.state.correct, Letter::A);
    }

    #[test]
    fn refuses_an_empty_correct_choice() {
        let mut t = task(Letter::B);
        t.choices.b = "  ".into();
        assert!(MatToolsQa.prepare(&t).is_err());
    }

    #[test]
    fn registered_and_reference_baseline_scores() {
        let suite = Registry::standard().get("mattools-qa").unwrap();
        let json = serde_json::to_value(task(Letter::C)).unwrap();
        let prepared = suite.prepare_json(&json).unwrap();
        assert_eq!(prepared.id, "ours_code/0/1");
        let answer = suite.baseline_answer(REFERENCE, &prepared).unwrap();
        assert_eq!(answer, "<answer>C</answer>");
        let scored = suite
            .score(&prepared, &answer, &[], &Interrupt::new())
            .unwrap();
        assert_eq!(scored.outcome.label, "Correct");
        assert!(scored.outcome.success);
        assert_eq!(
            scored.compact,
            serde_json::json!({"label": "Correct", "letter": "C", "expected": "C", "extracted": "C"})
        );
        let scored = suite.score(&prepared, "C", &[], &Interrupt::new()).unwrap();
        assert_eq!(scored.outcome.label, "NoAnswer");
        assert!(!scored.outcome.success);
        assert!(suite.baseline_answer("copy-input", &prepared).is_none());
        assert_eq!(AnySuite::columns(&MatToolsQa).len(), 2);
    }

    #[test]
    fn headline_reports_the_reasoning_reading_beside_the_exact_rule() {
        let state = QaState { correct: Letter::C };
        let score = |r: &str| Suite::score(&MatToolsQa, &state, r, &[], &Interrupt::new());
        let exact = score("<answer>C</answer>");
        let wrapped = score("<think>A? no.</think>\n<answer>(C)</answer>");
        let wrong = score("The answer is B");
        assert_eq!(wrapped.label, QaLabel::Wrong);
        assert_eq!(wrapped.extracted, Some(Letter::C));
        assert!(MatToolsQa::view(&wrapped)
            .facts
            .iter()
            .any(|f| f == "read as C by our reasoning-model extraction"));
        let rows = [
            ("code", &exact),
            ("code", &wrapped),
            ("code", &wrong),
            ("doc", &wrapped),
        ];
        let h = Suite::headline(&MatToolsQa, &rows).unwrap();
        // Exact rule: 1 of 3 and 0 of 1; read as reasoning: 2 of 3 and 1 of 1.
        assert_eq!(h.json["code"]["correct"], 1);
        assert_eq!(h.json["code"]["n"], 3);
        assert_eq!(h.json["code"]["reasoning"]["correct"], 2);
        assert_eq!(h.json["doc"]["correct"], 0);
        assert_eq!(h.json["doc"]["reasoning"]["accuracy"], 1.0);
        assert!(
            h.text.contains("code: accuracy 33.33 % (1 of 3)"),
            "{}",
            h.text
        );
        assert!(
            h.text
                .contains("with reasoning text read (ours) 66.67 % (2 of 3)"),
            "{}",
            h.text
        );
    }
}
