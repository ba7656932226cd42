//! The papers' tables laid out over several runs: OmniMatBench's overall score joins a
//! model's CAL and QA runs subfield by subfield ((CAL slot accuracy + QA macro-F1) / 2, the
//! paper's Eq. 3), repeat by repeat; every number here is recomputed by hand.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use benchmarks::omnimat::cal::score_response;
use benchmarks::omnimat::qa::{QaLabel, QaVerdict};
use benchmarks::task::layout::{PaperTable, SuiteRuns};
use benchmarks::task::report::{Repeat, Report, RunColumn};
use benchmarks::task::Registry;

/// A CAL verdict on a one-slot item: right or wrong.
fn cal(subfield: &str, right: bool) -> (String, serde_json::Value) {
    let answer = if right {
        "<answer>[\"1\"]</answer>"
    } else {
        "<answer>[\"7\"]</answer>"
    };
    let v = score_response(&["1".to_string()], answer);
    (subfield.into(), serde_json::to_value(v).unwrap())
}

/// A QA verdict both judges scored.
fn qa(subfield: &str, precision: f64, recall: f64) -> (String, serde_json::Value) {
    let f1 = 2.0 * precision * recall / (precision + recall);
    let v = QaVerdict {
        label: QaLabel::Scored,
        f1,
        precision: Some(precision),
        recall: Some(recall),
        precision_detail: None,
        recall_detail: None,
        judge_errors: Vec::new(),
        answer: "x".into(),
    };
    (subfield.into(), serde_json::to_value(v).unwrap())
}

fn run(model: &str, repeats: Vec<Vec<(String, serde_json::Value)>>) -> RunColumn {
    RunColumn {
        heading: format!("{model} (run)"),
        model: model.into(),
        repeats: repeats
            .into_iter()
            .map(|verdicts| Repeat {
                answers: verdicts.len(),
                successes: 0,
                verdicts,
            })
            .collect(),
    }
}

fn table<'a>(report: &'a Report, title: &str) -> &'a PaperTable {
    report
        .paper
        .iter()
        .find(|t| t.title.starts_with(title))
        .unwrap_or_else(|| panic!("no table {title}"))
}

fn cell(t: &PaperTable, row: &str, col: usize) -> Option<(f64, Option<f64>)> {
    let r = t.rows.iter().find(|r| r.label == row).unwrap();
    r.cells[col].map(|c| (c.mean, c.std))
}

#[test]
fn overall_joins_a_models_cal_and_qa_runs_subfield_by_subfield() {
    let registry = Registry::standard();
    let (cal_suite, qa_suite) = (
        registry.get("omnimat-cal").unwrap(),
        registry.get("omnimat-qa").unwrap(),
    );
    // Model m: CAL A right in both repeats, B right in the second; QA per repeat.
    let cal_runs = [
        run(
            "m",
            vec![
                vec![cal("A", true), cal("B", false)],
                vec![cal("A", true), cal("B", true)],
            ],
        ),
        // Model n ran CAL only: no overall for it.
        run("n", vec![vec![cal("A", false), cal("B", false)]]),
    ];
    let qa_runs = [run(
        "m",
        vec![
            vec![qa("A", 0.5, 0.5), qa("B", 1.0, 0.6)],
            vec![qa("A", 0.25, 0.25), qa("B", 1.0, 1.0)],
        ],
    )];
    let report = Report::of(&[
        SuiteRuns {
            suite: cal_suite.as_ref(),
            runs: &cal_runs,
        },
        SuiteRuns {
            suite: qa_suite.as_ref(),
            runs: &qa_runs,
        },
    ]);

    let overall = table(&report, "Overall score");
    assert_eq!(overall.columns, ["m"]);
    assert_eq!(overall.repeats, [2]);
    let std2 = |a: f64, b: f64| (a - b).abs() / 2f64.sqrt();
    // A: repeat 1 (1 + 0.5) / 2 = 0.75, repeat 2 (1 + 0.25) / 2 = 0.625.
    let (mean, std) = cell(overall, "A", 0).unwrap();
    assert!((mean - 0.6875).abs() < 1e-12);
    assert!((std.unwrap() - std2(0.75, 0.625)).abs() < 1e-12);
    // B: F1 of (1, 0.6) = 0.75; repeat 1 (0 + 0.75) / 2, repeat 2 (1 + 1) / 2.
    let (mean, _) = cell(overall, "B", 0).unwrap();
    assert!((mean - (0.375 + 1.0) / 2.0).abs() < 1e-12);
    // The mean row averages the subfields (the paper's average over subfields).
    let (mean, _) = cell(overall, "mean", 0).unwrap();
    assert!((mean - (0.6875 + 0.6875) / 2.0).abs() < 1e-12);

    // CAL per subfield: a column per (run, mode); n's A is 0 in its one repeat.
    let per = table(&report, "CAL slot accuracy per subfield");
    assert_eq!(
        per.columns,
        [
            "m (run): exact",
            "m (run): within 10 %",
            "n (run): exact",
            "n (run): within 10 %"
        ]
    );
    assert_eq!(cell(per, "A", 0), Some((1.0, Some(0.0))));
    assert_eq!(cell(per, "A", 2), Some((0.0, None)));
    // Error classes per model: m got one item wrong in repeat 1 and none in repeat 2; n two.
    // "7" for "1" is another value (not within 10 %, not a sign or power-of-ten slip).
    let classes = table(&report, "Wrong CAL items by error class");
    assert_eq!(
        cell(classes, "Wrong value", 0),
        Some((0.5, Some(0.5f64.sqrt())))
    );
    assert_eq!(cell(classes, "Wrong value", 1), Some((2.0, None)));
    assert_eq!(cell(classes, "Wrong sign", 1), Some((0.0, None)));
    // QA precision/recall/F1 per subfield, the mean of the repeats.
    let qa_table = table(&report, "QA precision, recall and macro-F1");
    assert_eq!(cell(qa_table, "A", 0).unwrap().0, 0.375);
    assert_eq!(cell(qa_table, "B", 1).unwrap().0, 0.8);
    // Every table is in the Markdown and the CSV.
    let md = report.markdown();
    assert!(md.contains("#### Overall score (CAL slot accuracy + QA macro-F1) / 2 per subfield (OmniMatBench, Eq. 3 and Table 3 (CAL in exact mode))"), "{md}");
    assert!(
        md.contains("| mean | 0.6875 ± 0.0000 |") || md.contains("| mean | 0.6875 |"),
        "{md}"
    );
    let csv = report.csv();
    assert!(
        csv.lines()
            .any(|l| l.starts_with("Overall score") || l.starts_with("\"Overall score")),
        "{csv}"
    );
}

#[test]
fn qa_per_domain_is_the_mean_of_its_subfields_and_names_the_grouping_as_ours() {
    let registry = Registry::standard();
    let qa_suite = registry.get("omnimat-qa").unwrap();
    // Two FMS subfields (one with two items) and one SEM subfield.
    let runs = [run(
        "m",
        vec![vec![
            qa("Materials Physics", 0.5, 0.5),
            qa("Materials Physics", 1.0, 1.0),
            qa("Materials Chemistry", 1.0, 0.6),
            qa("Polymer Materials", 0.25, 0.25),
        ]],
    )];
    let report = Report::of(&[SuiteRuns {
        suite: qa_suite.as_ref(),
        runs: &runs,
    }]);
    let t = table(&report, "QA precision, recall and macro-F1 per domain");
    assert!(t.source.contains("is ours"), "{}", t.source);
    assert_eq!(t.values, ["precision", "recall", "F1"]);
    let fms = "FMS · fundamental materials knowledge";
    let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, [fms, "SEM · structural and engineering materials"]);
    // Materials Physics: precision 0.75, recall 0.75, F1 0.75; Chemistry 1, 0.6, 0.75.
    // The domain averages the two subfields, not the three items.
    assert_eq!(cell(t, fms, 0).unwrap().0, 0.875);
    assert!((cell(t, fms, 1).unwrap().0 - 0.675).abs() < 1e-12);
    assert!((cell(t, fms, 2).unwrap().0 - 0.75).abs() < 1e-12);
    assert_eq!(
        cell(t, "SEM · structural and engineering materials", 2)
            .unwrap()
            .0,
        0.25
    );
}

#[test]
fn a_joined_table_needs_every_part() {
    let registry = Registry::standard();
    let cal_suite = registry.get("omnimat-cal").unwrap();
    let cal_runs = [run("m", vec![vec![cal("A", true)]])];
    let report = Report::of(&[SuiteRuns {
        suite: cal_suite.as_ref(),
        runs: &cal_runs,
    }]);
    assert!(report.paper.iter().all(|t| !t.title.starts_with("Overall")));
    // CAL's own two: slot accuracy per subfield and the error classes.
    let titles: Vec<&str> = report.paper.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "CAL slot accuracy per subfield",
            "Wrong CAL items by error class"
        ]
    );
}

#[test]
fn atomworld_figures_per_action_from_its_own_verdicts() {
    use engine::interrupt::Interrupt;
    let registry = Registry::standard();
    let suite = registry.get("atomworld").unwrap();
    let generator = suite.generator(7, 1).unwrap();
    let tasks = suite.generate(&generator.params).unwrap();
    // The reference answers every task right; `copy-input` answers with the input.
    let mut repeats = Vec::new();
    for baseline in ["reference", "copy-input"] {
        let mut verdicts = Vec::new();
        for t in &tasks {
            let p = suite.prepare_json(t).unwrap();
            let answer = suite.baseline_answer(baseline, &p).unwrap();
            let scored = suite.score(&p, &answer, &[], &Interrupt::new()).unwrap();
            verdicts.push((p.group.clone(), scored.verdict));
        }
        repeats.push(run(baseline, vec![verdicts]));
    }
    let report = Report::of(&[SuiteRuns {
        suite: suite.as_ref(),
        runs: &repeats,
    }]);
    let success = table(&report, "Success rate per action");
    assert_eq!(success.rows.len(), 11, "ten actions and the mean");
    for row in &success.rows {
        assert_eq!(row.cells[0].map(|c| c.mean), Some(1.0), "{}", row.label);
        assert_eq!(row.cells[1].map(|c| c.mean), Some(0.0), "{}", row.label);
    }
    // copy-input's failures by type add up to all its answers in every action.
    let stack = table(&report, "Answers by failure type per action");
    assert_eq!(
        stack.columns.len(),
        10,
        "five failure types for each of two runs"
    );
    for row in &stack.rows {
        let copy: f64 = row.cells[5..].iter().map(|c| c.unwrap().mean).sum();
        assert!((copy - 1.0).abs() < 1e-12, "{}: {copy}", row.label);
    }
    let spread = table(&report, "max_dist of the successes per action");
    for row in &spread.rows {
        let (q1, med, q3, max) = (
            row.cells[0].unwrap().mean,
            row.cells[1].unwrap().mean,
            row.cells[2].unwrap().mean,
            row.cells[3].unwrap().mean,
        );
        assert!(
            q1 <= med && med <= q3 && q3 <= max && max < 1e-6,
            "{}",
            row.label
        );
        assert!(row.cells[4].is_none(), "copy-input has no success");
    }
    // The reference's successes all lie in the first bin; copy-input has none to bin.
    let bins = table(
        &report,
        "max_dist of the successes per action (shares per bin)",
    );
    assert_eq!(bins.values, ["< 0.001", "0.001-0.01", "0.01-0.1", ">= 0.1"]);
    for row in &bins.rows {
        let shares: Vec<f64> = row.cells[..4].iter().map(|c| c.unwrap().mean).collect();
        assert_eq!(shares, [1.0, 0.0, 0.0, 0.0], "{}", row.label);
        assert!(row.cells[4..].iter().all(Option::is_none), "{}", row.label);
    }
}
