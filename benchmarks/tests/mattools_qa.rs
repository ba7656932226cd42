#![allow(clippy::unwrap_used)]
//! Our shipped MatTools QA questions (`benchmarks/data/mattools_qa.json`): their shape, and the
//! scores of the baselines through the registered suite.

use std::collections::{BTreeMap, HashSet};

use benchmarks::mattools::qa::item::{parse_qa_bundle, Letter, QaTask};
use benchmarks::mattools::qa::score::accuracy_per_file;
use benchmarks::task::Registry;
use engine::interrupt::Interrupt;

const DATA: &str = include_str!("../data/mattools_qa.json");

fn tasks() -> Vec<QaTask> {
    parse_qa_bundle(DATA).unwrap()
}

#[test]
fn at_least_sixty_questions_in_two_files() {
    let tasks = tasks();
    assert!(tasks.len() >= 60, "{} questions", tasks.len());
    let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &tasks {
        *per_file.entry(t.file.as_str()).or_default() += 1;
    }
    let files: Vec<_> = per_file.keys().copied().collect();
    assert_eq!(files, ["ours_pymatgen_code_qa", "ours_pymatgen_doc_qa"]);
    assert!(per_file.values().all(|&n| n >= 25), "{per_file:?}");
}

#[test]
fn ids_are_unique_and_choices_sound() {
    let tasks = tasks();
    let ids: HashSet<_> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), tasks.len(), "duplicate task ids");
    for t in &tasks {
        assert!(!t.question.trim().is_empty(), "{}", t.id);
        assert!(!t.source.is_empty(), "{}", t.id);
        assert!(Letter::ALL.contains(&t.correct_answer));
        assert!(
            !t.choices.get(t.correct_answer).trim().is_empty(),
            "{}",
            t.id
        );
        let texts: HashSet<_> = Letter::ALL
            .iter()
            .map(|&l| t.choices.get(l).trim())
            .collect();
        assert_eq!(texts.len(), 4, "{}: empty or repeated choices", t.id);
        assert!(texts.iter().all(|c| !c.is_empty()), "{}", t.id);
    }
}

#[test]
fn every_question_has_a_check_for_the_pinned_pymatgen() {
    let raw: serde_json::Value = serde_json::from_str(DATA).unwrap();
    for (file, sources) in raw.as_object().unwrap() {
        for (i, source) in sources.as_array().unwrap().iter().enumerate() {
            for q in source["questions"].as_array().unwrap() {
                let check = q.get("check").and_then(|c| c.as_str()).unwrap_or("");
                assert!(
                    !check.trim().is_empty(),
                    "{file}/{i}/{} has no check",
                    q["question_id"]
                );
            }
        }
    }
}

/// Accuracy per file of `answer` over every task, through the registered suite.
fn accuracy_of(
    answer: impl Fn(&benchmarks::task::PreparedTask) -> String,
) -> BTreeMap<String, f64> {
    let suite = Registry::standard().get("mattools-qa").unwrap();
    let mut rows = Vec::new();
    for t in tasks() {
        let prepared = suite
            .prepare_json(&serde_json::to_value(&t).unwrap())
            .unwrap();
        assert_eq!(prepared.group, t.file);
        let scored = suite
            .score(&prepared, &answer(&prepared), &[], &Interrupt::new())
            .unwrap();
        rows.push((t.file, scored.outcome.success));
    }
    accuracy_per_file(rows.iter().map(|(f, ok)| (f.as_str(), *ok)))
        .into_iter()
        .map(|(f, a)| (f, a.accuracy))
        .collect()
}

#[test]
fn reference_baseline_scores_everything() {
    let suite = Registry::standard().get("mattools-qa").unwrap();
    let acc = accuracy_of(|p| suite.baseline_answer("reference", p).unwrap());
    assert_eq!(acc.len(), 2);
    assert!(acc.values().all(|&a| a == 1.0), "{acc:?}");
}

#[test]
fn constant_a_scores_the_share_of_a_answers() {
    let acc = accuracy_of(|_| "<answer>A</answer>".to_string());
    let mut expected: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for t in tasks() {
        let e = expected.entry(t.file).or_default();
        e.0 += usize::from(t.correct_answer == Letter::A);
        e.1 += 1;
    }
    for (file, (a, n)) in expected {
        assert_eq!(acc[&file], a as f64 / n as f64, "{file}");
        // The letters are spread evenly, so a constant answer is near chance.
        assert!((a as f64 / n as f64 - 0.25).abs() < 0.1, "{file}: {a}/{n}");
    }
    // Without tags, nothing counts.
    let acc = accuracy_of(|_| "A".to_string());
    assert!(acc.values().all(|&a| a == 0.0));
}
