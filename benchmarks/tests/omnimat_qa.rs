#![allow(clippy::unwrap_used)]
//! QA judging: the judge prompts (one fixed transcript each, byte for byte), tolerant
//! reading of judge replies, item F1, and the importer on the public QA files; the demo items.

use std::path::PathBuf;

use benchmarks::omnimat::demo::demo_items;
use benchmarks::omnimat::qa::{
    parse_precision, parse_recall, precision_prompt, recall_prompt, score_answers, JudgeError,
    QaLabel, QaReference, QaSummary,
};
use benchmarks::omnimat::{import_qa_json, OmniMatCal, OmniMatQa};
use benchmarks::task::{Need, NeedAnswer, Role, Suite};
use engine::interrupt::Interrupt;

fn case(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/omnimat_qa")
        .join(name)
}

fn demo_qa(id: &str) -> benchmarks::omnimat::QaItem {
    demo_items().1.into_iter().find(|q| q.id == id).unwrap()
}

/// A model answer with backslashes, which the judges never see (one of the answers the
/// reference's prompts were recorded with).
const MODEL_ANSWER: &str = "Chromium forms a passive film of $\\mathrm{Cr_2O_3}$.";

/// The prompts the suite sends its two judges for `answer` to demo item `id`.
fn judge_prompts(id: &str, answer: &str) -> (String, String) {
    let item = demo_qa(id);
    let p = OmniMatQa.prepare(&item).unwrap();
    let response = format!("<think>passivity</think>\n<answer>{answer}</answer>");
    let needs = OmniMatQa.needs(&p.state, &response);
    assert_eq!(needs.len(), 2);
    let text = |n: &Need| match n {
        Need::Judge { messages } => {
            assert_eq!(messages.len(), 1);
            assert_eq!(messages[0].role, Role::User);
            messages[0].content.clone()
        }
        #[allow(unreachable_patterns)]
        _ => panic!("not a judge need"),
    };
    (text(&needs[0]), text(&needs[1]))
}

/// The reference's recorded prompts, verdicts of judge replies (`reference_recorded.jsonl`,
/// made by `benchmarks/tests/omnimat_ref/record_qa.py` running the reference's own functions).
fn recorded() -> Vec<serde_json::Value> {
    std::fs::read_to_string(case("reference_recorded.jsonl"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The judge prompts are the reference's, byte for byte: for every demo item and each of four
/// answers (backslashes, quotes, braces, blank, trailing newline), as its `build_prompt`
/// writes them; and the suite sends exactly these for an answer's `<answer>` text.
#[test]
fn judge_prompts_are_the_references_byte_for_byte() {
    let cases: Vec<serde_json::Value> = recorded()
        .into_iter()
        .filter(|r| r["kind"] == "prompts")
        .collect();
    assert!(cases.len() >= 50, "{}", cases.len());
    for c in &cases {
        let r = QaReference::of(&demo_qa(c["item"].as_str().unwrap()));
        let answer = c["answer"].as_str().unwrap();
        assert_eq!(
            precision_prompt(&r, answer),
            c["precision"].as_str().unwrap(),
            "{c}"
        );
        assert_eq!(
            recall_prompt(&r, answer),
            c["recall"].as_str().unwrap(),
            "{c}"
        );
    }
    let (precision, recall) = judge_prompts("q07", MODEL_ANSWER);
    let sent = cases
        .iter()
        .find(|c| c["item"] == "q07" && c["answer"] == MODEL_ANSWER)
        .unwrap();
    assert_eq!(precision, sent["precision"].as_str().unwrap());
    assert_eq!(recall, sent["recall"].as_str().unwrap());
    assert!(!precision.contains('\\') && precision.contains("Cr_2O_3"));
}

/// The reference's reading of judge replies (fenced or not, prose around the object, lists or
/// strings of units, blank units, missing keys, broken JSON; quality scores as numbers,
/// strings, null, booleans, too few or too many): ours gives the same precision and recall
/// (rounded as the reference stores them) and fails where it fails.
#[test]
fn judge_replies_are_read_as_the_reference_reads_them() {
    let (mut precision, mut recall) = (0, 0);
    for c in recorded() {
        let reply = c["reply"].as_str().unwrap_or_default();
        let r = &c["ref"];
        if c["kind"] == "precision" {
            precision += 1;
            match (parse_precision(reply), r.get("failed")) {
                (Err(_), Some(_)) => {}
                (Ok(ours), None) => {
                    assert_eq!(ours.precision, r["precision"].as_f64().unwrap(), "{c}");
                    assert_eq!(serde_json::json!(ours.tp), r["tp"], "{c}");
                    assert_eq!(serde_json::json!(ours.fp), r["fp"], "{c}");
                }
                (ours, _) => panic!("precision reply {c}: ours {ours:?}"),
            }
        } else if c["kind"] == "recall" {
            recall += 1;
            let reference = QaReference::of(&demo_qa(c["item"].as_str().unwrap()));
            match (parse_recall(reply, &reference), r.get("failed")) {
                (Err(_), Some(_)) => {}
                (Ok(ours), None) => {
                    assert_eq!(ours.recall, r["recall"].as_f64().unwrap(), "{c}");
                }
                (ours, _) => panic!("recall reply {c}: ours {ours:?}"),
            }
        }
    }
    eprintln!("QA judge replies vs the reference's reading: {precision} precision, {recall} recall, all agree");
    assert!(precision >= 500 && recall >= 500);
}

fn reference() -> QaReference {
    QaReference::of(&demo_qa("q07"))
}

#[test]
fn precision_replies() {
    let ok = |t: &str| parse_precision(t).unwrap().precision;
    assert_eq!(ok(r#"{"tp_string": "a\nb\nc", "fp_string": "d"}"#), 0.75);
    assert_eq!(
        ok("```json\n{\"tp_string\": \"a\", \"fp_string\": \"\"}\n```"),
        1.0
    );
    assert_eq!(
        ok("```\n{\"tp_string\": \"a\", \"fp_string\": \"b\"}\n```"),
        0.5
    );
    assert_eq!(
        ok("Sure! {\"tp_string\": \"a\\n\\n  \\n\", \"fp_string\": \"[FP-Incorrect] b\"} Done."),
        0.5
    );
    assert_eq!(ok(r#"{"tp_string": ["a", "b", ""], "fp_string": []}"#), 1.0);
    assert_eq!(ok(r#"{"tp_string": "", "fp_string": ""}"#), 0.0);
    assert_eq!(ok(r#"{"tp_string": null, "fp_string": "x"}"#), 0.0);
    assert_eq!(
        parse_precision(r#"{"tp_string": "a"}"#),
        Err(JudgeError::MissingKey("fp_string"))
    );
    assert_eq!(
        parse_precision(r#"{"tp": "a", "fp": "b"}"#),
        Err(JudgeError::MissingKey("tp_string"))
    );
    assert_eq!(
        parse_precision("{\"tp_string\": \"a\", "),
        Err(JudgeError::NotJson)
    );
    assert_eq!(
        parse_precision("I cannot grade this."),
        Err(JudgeError::NotJson)
    );
    assert_eq!(parse_precision(""), Err(JudgeError::NotJson));
    assert_eq!(parse_precision("}{"), Err(JudgeError::NotJson));
}

#[test]
fn recall_replies() {
    let r = reference(); // weights 0.2, 0.4, 0.2, 0.2
    let rec = |t: &str| parse_recall(t, &r).unwrap().recall;
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    close(
        rec(r#"{"met": [1,1,1,1], "quality_score": [1.0,1.0,1.0,1.0], "reasoning": "all"}"#),
        1.0,
    );
    close(
        rec(r#"{"met": [1,1,0,0], "quality_score": [1.0,0.5,0,0], "reasoning": "x"}"#),
        0.4,
    );
    close(
        rec("```json\n{\"met\": [1,1,1,0], \"quality_score\": [0.1, 1, 0.5, 0]}\n```"),
        0.02 + 0.4 + 0.1,
    );
    // Short lists: missing points score 0; strings that are numbers count; junk counts 0.
    close(rec(r#"{"met": [1], "quality_score": [1.0]}"#), 0.2);
    close(
        rec(r#"{"met": [1,1], "quality_score": ["0.5", "high"]}"#),
        0.1,
    );
    // Keyed by point id.
    close(
        rec(r#"{"met": {"point_2": 1}, "quality_score": {"point_2": 1.0}}"#),
        0.4,
    );
    assert_eq!(
        parse_recall(r#"{"quality_score": [1]}"#, &r),
        Err(JudgeError::MissingKey("met"))
    );
    assert_eq!(
        parse_recall(r#"{"met": [1]}"#, &r),
        Err(JudgeError::MissingKey("quality_score"))
    );
    assert_eq!(
        parse_recall("{met: [1], quality_score: [1]}", &r),
        Err(JudgeError::NotJson)
    );
    // Equal weights when the rubric has none.
    let mut item = demo_qa("q07");
    item.scoring_weights.clear();
    let eq = QaReference::of(&item);
    close(
        parse_recall(r#"{"met": [1,0,0,0], "quality_score": [1,0,0,0]}"#, &eq)
            .unwrap()
            .recall,
        0.25,
    );
}

#[test]
fn item_f1_and_judge_failures() {
    let r = reference();
    let judge = |t: &str| NeedAnswer::Judge { text: t.into() };
    let good_p = judge(r#"{"tp_string": "a\nb\nc", "fp_string": "d"}"#);
    let good_r = judge(r#"{"met": [1,1,1,0], "quality_score": [1,1,0.5,0], "reasoning": ""}"#);
    let v = score_answers(&r, Some("answer"), &[good_p.clone(), good_r.clone()]);
    assert_eq!(v.label, QaLabel::Scored);
    let (p, rc) = (0.75, 0.2 + 0.4 + 0.1);
    assert!((v.f1 - 2.0 * p * rc / (p + rc)).abs() < 1e-12);
    // A failed call, malformed JSON or a missing key: JudgeFailed, F1 0, partial kept.
    for bad in [
        NeedAnswer::Failed {
            error: "timeout".into(),
        },
        judge("not json at all"),
        judge(r#"{"met": [1]}"#),
    ] {
        let v = score_answers(&r, Some("answer"), &[good_p.clone(), bad]);
        assert_eq!((v.label, v.f1), (QaLabel::JudgeFailed, 0.0));
        assert_eq!(v.precision, Some(0.75));
        assert!(v.recall.is_none());
        assert_eq!(v.judge_errors.len(), 1);
    }
    let v = score_answers(&r, Some("answer"), &[]);
    assert_eq!((v.label, v.judge_errors.len()), (QaLabel::JudgeFailed, 2));
    // Precision 0 and recall 0: F1 0, still scored.
    let v = score_answers(
        &r,
        Some("answer"),
        &[
            judge(r#"{"tp_string": "", "fp_string": "x"}"#),
            judge(r#"{"met": [0,0,0,0], "quality_score": [0,0,0,0]}"#),
        ],
    );
    assert_eq!((v.label, v.f1), (QaLabel::Scored, 0.0));
    // Failures are counted in the summary, never dropped.
    let failed = score_answers(&r, Some("answer"), std::slice::from_ref(&good_p));
    let scored = score_answers(&r, Some("answer"), &[good_p, good_r]);
    let s = QaSummary::of([("A", &scored), ("A", &failed), ("B", &scored)]);
    assert_eq!(s.judge_failed, 1);
    assert!((s.per_subfield["A"].macro_f1 - scored.f1 / 2.0).abs() < 1e-12);
    assert!((s.macro_f1 - (scored.f1 / 2.0 + scored.f1) / 2.0).abs() < 1e-12);
    // As the reference averages: the judge failure has no F1 and is left out.
    assert!((s.per_subfield["A"].macro_f1_reference - scored.f1).abs() < 1e-12);
    assert!((s.macro_f1_reference - scored.f1).abs() < 1e-12);
}

#[test]
fn the_suite_judges_only_the_answer_text() {
    let item = demo_qa("q01");
    let p = OmniMatQa.prepare(&item).unwrap();
    assert_eq!(p.group, "Metallic Materials");
    assert_eq!(p.messages[0].role, Role::System);
    assert!(p.messages[0].content.starts_with(
        "You are a materials science expert. Answer the question clearly and accurately."
    ));
    assert!(OmniMatQa.needs(&p.state, "no tags here").is_empty());
    assert!(OmniMatQa.needs(&p.state, "<answer>  </answer>").is_empty());
    let v = Suite::score(&OmniMatQa, &p.state, "no tags", &[], &Interrupt::default());
    assert_eq!(v.label, QaLabel::NoAnswer);
    let reference = Suite::baseline_answer(&OmniMatQa, "reference", &p.state).unwrap();
    assert_eq!(OmniMatQa.needs(&p.state, &reference).len(), 2);
    let outcome = OmniMatQa::outcome(&v);
    assert!(!outcome.success);
}

#[test]
fn demo_items_are_complete_and_their_golds_score_one() {
    let (cal, qa) = demo_items();
    assert!(cal.len() + qa.len() >= 30, "{} + {}", cal.len(), qa.len());
    assert!(cal.len() >= 15 && qa.len() >= 10);
    let subfields: std::collections::BTreeSet<&str> = cal
        .iter()
        .map(|c| c.subfield.as_str())
        .chain(qa.iter().map(|q| q.subfield.as_str()))
        .collect();
    assert!(subfields.len() >= 10);
    for item in &cal {
        let p = OmniMatCal.prepare(item).unwrap();
        assert!(p.messages[1]
            .content
            .contains("--- Final Answer Format Constraint ---"));
        let answer = Suite::baseline_answer(&OmniMatCal, "reference", &p.state).unwrap();
        let v = Suite::score(&OmniMatCal, &p.state, &answer, &[], &Interrupt::default());
        assert_eq!((v.item_exact, v.item_threshold), (1.0, 1.0), "{}", item.id);
    }
    for item in &qa {
        let total: f64 = item.scoring_weights.values().sum();
        assert!((total - 1.0).abs() < 1e-9, "{}", item.id);
        assert!(item
            .key_points
            .iter()
            .all(|k| item.scoring_weights.contains_key(&k.id)));
        OmniMatQa.prepare(item).unwrap();
    }
}

#[test]
fn every_public_qa_file_imports() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/omnimatbench/qa");
    if !dir.is_dir() {
        let required = std::env::var_os("CI").is_some()
            || std::env::var("ATOMWORLD_REQUIRE_SHARED").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "{} is missing (CI: this test must run)",
            dir.display()
        );
        eprintln!("skipped: {} is missing", dir.display());
        return;
    }
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let items = import_qa_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for item in items {
            n += 1;
            let p = OmniMatQa.prepare(&item).unwrap();
            let weights: f64 = p.state.weights.iter().sum();
            assert!(
                (weights - 1.0).abs() < 0.02,
                "{} {}: weights {weights}",
                path.display(),
                item.id
            );
        }
    }
    assert_eq!(n, 498);
}

/// A judge reply that cannot be read is asked again (at most three attempts in all); the
/// last attempt decides; a failed call is not re-asked.
#[test]
fn unreadable_judge_replies_are_asked_again_a_bounded_number_of_times() {
    let item = demo_qa("q07");
    let p = OmniMatQa.prepare(&item).unwrap();
    let answer = "<answer>an answer</answer>";
    let judge = |t: &str| NeedAnswer::Judge { text: t.into() };
    let good_p = judge(r#"{"tp_string": "a\nb\nc", "fp_string": "d"}"#);
    let good_r = judge(r#"{"met": [1,1,1,0], "quality_score": [1,1,0.5,0], "reasoning": ""}"#);
    let bad = judge("I think it is fine.");
    // Stage 1: the precision reply is unreadable, the recall one is fine: re-ask precision.
    let mut answered = vec![bad.clone(), good_r.clone()];
    let more = OmniMatQa.more_needs(&p.state, answer, &answered);
    assert_eq!(more.len(), 1);
    let Need::Judge { messages } = &more[0] else {
        panic!("a judge need")
    };
    let first = OmniMatQa.needs(&p.state, answer);
    let Need::Judge { messages: asked } = &first[0] else {
        panic!("a judge need")
    };
    assert_eq!(messages, asked, "the same question again");
    answered.push(good_p.clone());
    assert!(OmniMatQa.more_needs(&p.state, answer, &answered).is_empty());
    let v = Suite::score(
        &OmniMatQa,
        &p.state,
        answer,
        &answered,
        &Interrupt::default(),
    );
    assert_eq!(v.label, QaLabel::Scored, "{:?}", v.judge_errors);
    // Both unreadable, three times: two re-ask stages, then JudgeFailed saying so.
    let mut answered = vec![bad.clone(), bad.clone()];
    for stage in 0..2 {
        let more = OmniMatQa.more_needs(&p.state, answer, &answered);
        assert_eq!(more.len(), 2, "stage {stage}");
        answered.extend([bad.clone(), bad.clone()]);
    }
    assert!(OmniMatQa.more_needs(&p.state, answer, &answered).is_empty());
    let v = Suite::score(
        &OmniMatQa,
        &p.state,
        answer,
        &answered,
        &Interrupt::default(),
    );
    assert_eq!(v.label, QaLabel::JudgeFailed);
    assert!(
        v.judge_errors[0].contains("after 3 attempts"),
        "{:?}",
        v.judge_errors
    );
    // A failed call is final.
    let failed = NeedAnswer::Failed {
        error: "timeout".into(),
    };
    assert!(OmniMatQa
        .more_needs(&p.state, answer, &[failed, good_r])
        .is_empty());
}
