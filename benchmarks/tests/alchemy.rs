#![allow(clippy::unwrap_used)]
//! AlchemyBench: the judge's two messages against the reference's own (recorded from its
//! files); the prompts that are ours by design (one-shot and RAG with K = 2 around our own
//! worked example, and the re-ask request: the reference has no example of ours and parses no
//! reply), each a fixed transcript in `tests/cases/alchemy/`, byte for byte
//! (`ALCHEMY_BLESS=1` rewrites those); reading judge replies, the re-ask through
//! `more_needs`, the demo recipes, the summary, and top-K against brute force.

use std::path::PathBuf;

use benchmarks::alchemy::demo::demo_recipes;
use benchmarks::alchemy::judge::{correction, parse_reply, JudgeError, KEYS};
use benchmarks::alchemy::retrieval::RecipeIndex;
use benchmarks::alchemy::summary::{AlchemySummary, MEAN7_LABEL, OVERALL_LABEL};
use benchmarks::alchemy::{Alchemy, AlchemyLabel, AlchemyTask, AlchemyVerdict, Recipe};
use benchmarks::retrieval::Embeddings;
use benchmarks::task::{Need, NeedAnswer, Registry, Role, Suite};
use engine::interrupt::Interrupt;
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn case(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cases/alchemy")
        .join(name)
}

/// `text` equals the case file `name` byte for byte (rewritten first under ALCHEMY_BLESS).
fn same_as_case(name: &str, text: &str) {
    if std::env::var_os("ALCHEMY_BLESS").is_some() {
        std::fs::write(case(name), text).unwrap();
    }
    let want = std::fs::read_to_string(case(name)).unwrap();
    assert!(text == want, "{name} differs from its transcript");
}

fn demo(id: &str) -> Recipe {
    demo_recipes()
        .unwrap()
        .into_iter()
        .find(|r| r.id == id)
        .unwrap()
}

fn task(id: &str, references: &[&str]) -> AlchemyTask {
    AlchemyTask {
        recipe: demo(id),
        references: references.iter().map(|r| demo(r).as_reference()).collect(),
        retrieval: None,
    }
}

/// A prediction as a model might write it (short, with a mistake the judge should see).
const PREDICTION: &str = "## Materials\n- BaCO3, 99 %: 19.7 g\n- TiO2 (anatase): 8.0 g\n\n## Synthesis Equipment\n- Ball mill, furnace\n\n## Synthesis Procedure\n1. Mill 4 h in water.\n2. Calcine at 900 °C for 2 h.\n3. Press and sinter at 1250 °C for 2 h.\n\n## Characterization Methods and Equipment\n- XRD\n\n## Product Characteristics\n- Cubic BaTiO3";

fn good_json(overall: f64) -> String {
    let mut o = serde_json::Map::new();
    for (i, k) in KEYS.iter().enumerate() {
        let v = if *k == "overall_score" {
            overall
        } else {
            1.0 + 0.5 * i as f64
        };
        o.insert(k.to_string(), serde_json::json!(v));
    }
    serde_json::Value::Object(o).to_string()
}

fn judge(text: &str) -> NeedAnswer {
    NeedAnswer::Judge { text: text.into() }
}

fn judge_messages(n: &Need) -> &[benchmarks::task::Message] {
    match n {
        Need::Judge { messages } => messages,
        other => panic!("not a judge need: {other:?}"),
    }
}

#[test]
fn one_shot_prompt_matches_its_transcript() {
    let p = Alchemy.prepare(&task("demo-01", &[])).unwrap();
    assert_eq!(p.messages.len(), 1, "one user message, no system message");
    assert_eq!(p.messages[0].role, Role::User);
    let text = &p.messages[0].content;
    same_as_case("one_shot_prompt.txt", text);
    assert!(text.contains("**key contributions**"));
    assert!(text.ends_with(&format!(
        "Now, predict the synthesis recipe for the given key contributions:\n{}",
        demo("demo-01").contribution
    )));
    assert_eq!(p.group, "demo");
}

#[test]
fn rag_prompt_with_two_references_matches_its_transcript() {
    let p = Alchemy
        .prepare(&task("demo-03", &["demo-04", "demo-05"]))
        .unwrap();
    assert_eq!(p.messages.len(), 1);
    let text = &p.messages[0].content;
    same_as_case("rag_k2_prompt.txt", text);
    let (r1, r2) = (demo("demo-04"), demo("demo-05"));
    assert!(text.contains(&format!(
        "Here are recipes from research papers with similar contributions.\n\n# Reference 1:\n{}\n\n{}\n\n# Reference 2:\n{}\n\n{}\n\nBased on these references, predict the synthesis recipe for the given key contributions:\n{}",
        r1.contribution, r1.recipe, r2.contribution, r2.recipe, demo("demo-03").contribution
    )));
    assert!(!text.contains("# Reference 3:") && !text.contains("--- Example ---"));
}

/// The judge's two messages are the reference's, byte for byte: its published system prompt
/// and its user template as `RecipeJudge.build_prompt` fills it, for every demo recipe with
/// two predictions (recorded from the reference's files by
/// `benchmarks/tests/alchemy_ref/record_judge.py`). The re-ask request is ours (the reference does
/// not parse replies): its transcript is our own.
#[test]
fn judge_messages_are_the_references_byte_for_byte() {
    let text = std::fs::read_to_string(case("reference_judge.jsonl")).unwrap();
    let cases: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(cases.len(), 24);
    for c in &cases {
        let p = Alchemy
            .prepare(&task(c["id"].as_str().unwrap(), &[]))
            .unwrap();
        let prediction = c["prediction"].as_str().unwrap();
        let needs = Alchemy.needs(&p.state, prediction);
        assert_eq!(needs.len(), 1);
        let m = judge_messages(&needs[0]);
        assert_eq!(
            m.iter().map(|m| m.role).collect::<Vec<_>>(),
            [Role::System, Role::User]
        );
        assert_eq!(m[0].content, c["system"].as_str().unwrap(), "{}", c["id"]);
        assert_eq!(m[1].content, c["user"].as_str().unwrap(), "{}", c["id"]);
    }
    let p = Alchemy.prepare(&task("demo-02", &[])).unwrap();
    let m = judge_messages(&Alchemy.needs(&p.state, PREDICTION)[0]).to_vec();
    for k in KEYS {
        assert!(m[0].content.contains(&format!("\"{k}\"")), "{k}");
    }
    let e = parse_reply("no JSON here").unwrap_err();
    same_as_case("judge_reask.txt", &correction(&e));
}

#[test]
fn fenced_and_prose_replies() {
    let g = good_json(3.5);
    for reply in [
        g.clone(),
        format!("Materials look right.\n\n```json\n{g}\n```"),
        format!("```JSON\n{g}\n```\nThat is all."),
        format!("Step 1 ... the scores: {g} (as requested)."),
        format!(
            "Earlier draft:\n```json\n{{\"overall_score\": 1}}\n```\nFinal:\n```json\n{g}\n```"
        ),
        format!("Criteria {{materials}} and {{equipment}}; result {g}"),
    ] {
        let r = parse_reply(&reply).unwrap_or_else(|e| panic!("{e}: {reply}"));
        assert_eq!(r.scores.overall_score, 3.5);
        assert_eq!(r.scores.characterization_similarity_score, 4.0);
    }
    // The last fence wins even if a bare object follows it.
    let reply = format!("```json\n{g}\n```\nalso {}", good_json(1.0));
    assert_eq!(parse_reply(&reply).unwrap().scores.overall_score, 3.5);
    // Malformed.
    assert_eq!(parse_reply("I cannot judge this."), Err(JudgeError::NoJson));
    assert_eq!(parse_reply(""), Err(JudgeError::NoJson));
    assert_eq!(parse_reply("{materials: 4}"), Err(JudgeError::NoJson));
    assert!(matches!(
        parse_reply("```json\n{\"overall_score\": 4,}\n```"),
        Err(JudgeError::BadFence { .. })
    ));
    assert!(matches!(
        parse_reply("```json\n[1, 2]\n```"),
        Err(JudgeError::BadFence { .. })
    ));
}

#[test]
fn out_of_range_missing_and_off_grid_scores() {
    let with = |key: &str, v: serde_json::Value| {
        let mut o: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&good_json(3.0)).unwrap();
        o.insert(key.into(), v);
        serde_json::Value::Object(o).to_string()
    };
    assert_eq!(
        parse_reply(&with("overall_score", serde_json::json!(5.5))),
        Err(JudgeError::OutOfRange {
            key: "overall_score".into(),
            value: 5.5
        })
    );
    assert!(matches!(
        parse_reply(&with("procedure_similarity_score", serde_json::json!(0))),
        Err(JudgeError::OutOfRange { .. })
    ));
    assert!(matches!(
        parse_reply(&with("procedure_similarity_score", serde_json::json!("4"))),
        Err(JudgeError::NotANumber { .. })
    ));
    assert!(matches!(
        parse_reply(&with("procedure_similarity_score", serde_json::Value::Null)),
        Err(JudgeError::NotANumber { .. })
    ));
    // Bounds are inclusive; off-grid values are kept and noted.
    let r = parse_reply(&with(
        "materials_appropriateness_score",
        serde_json::json!(4.2),
    ))
    .unwrap();
    assert_eq!(r.off_grid, ["materials_appropriateness_score"]);
    assert!(parse_reply(&with("overall_score", serde_json::json!(5))).is_ok());
    assert!(parse_reply(&with("overall_score", serde_json::json!(1.0))).is_ok());
    // Missing keys are all named, in protocol order; extra keys are ignored.
    let mut o: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&good_json(3.0)).unwrap();
    o.remove("overall_score");
    o.remove("equipment_appropriateness_score");
    o.insert("comment".into(), serde_json::json!("fine"));
    assert_eq!(
        parse_reply(&serde_json::Value::Object(o).to_string()),
        Err(JudgeError::MissingKeys {
            keys: vec![
                "equipment_appropriateness_score".into(),
                "overall_score".into()
            ]
        })
    );
}

#[test]
fn reask_once_through_more_needs() {
    // Through the registry, as the server's needs loop drives it.
    let suite = Registry::standard().get("alchemy").unwrap();
    let t = serde_json::to_value(task("demo-02", &[])).unwrap();
    let p = suite.prepare_json(&t).unwrap();
    let first = suite.needs(&p, PREDICTION).unwrap();
    assert_eq!(first.len(), 1);
    let bad = "Overall the recipe is decent; I would give it about 3.";
    let good = format!("Reasoning...\n```json\n{}\n```", good_json(3.0));

    // Readable at once: nothing more is needed.
    assert!(suite
        .more_needs(&p, PREDICTION, &[judge(&good)])
        .unwrap()
        .is_empty());
    // Unreadable: one re-ask, the failed reply as the judge's turn, then the correction.
    let again = suite.more_needs(&p, PREDICTION, &[judge(bad)]).unwrap();
    assert_eq!(again.len(), 1);
    let m = judge_messages(&again[0]);
    let f = judge_messages(&first[0]);
    assert_eq!(m.len(), 4);
    assert_eq!(&m[..2], f);
    assert_eq!((m[2].role, m[2].content.as_str()), (Role::Assistant, bad));
    assert_eq!(m[3].role, Role::User);
    assert_eq!(m[3].content, correction(&JudgeError::NoJson));
    // Never a second re-ask.
    assert!(suite
        .more_needs(&p, PREDICTION, &[judge(bad), judge(bad)])
        .unwrap()
        .is_empty());
    // A failed call is not asked again (the gateway retries calls).
    let failed = NeedAnswer::Failed {
        error: "HTTP 500".into(),
    };
    assert!(suite
        .more_needs(&p, PREDICTION, std::slice::from_ref(&failed))
        .unwrap()
        .is_empty());

    let score = |answers: &[NeedAnswer]| {
        let s = suite
            .score(&p, PREDICTION, answers, &Interrupt::default())
            .unwrap();
        (
            serde_json::from_value::<AlchemyVerdict>(s.verdict).unwrap(),
            s.outcome,
            s.compact,
        )
    };
    // Scored after the re-ask.
    let (v, o, c) = score(&[judge(bad), judge(&good)]);
    assert_eq!(v.label, AlchemyLabel::Scored);
    assert!(v.reasked && o.success);
    assert_eq!(o.metric, Some(3.0));
    assert_eq!(v.judge_raw, [bad]);
    assert_eq!(c["label"], "Scored");
    assert_eq!(c["overall"], 3.0);
    assert_eq!(c["scores"]["overall_score"], 3.0);
    // mean7 = (1 + 1.5 + 2 + 2.5 + 3 + 3.5 + 4) / 7 = 2.5.
    assert_eq!(c["mean7"], 2.5);
    // Unreadable twice: judge-failed, with the reason and both raw replies.
    let (v, o, c) = score(&[judge(bad), judge("still no json")]);
    assert_eq!(v.label, AlchemyLabel::JudgeFailed);
    assert_eq!(v.judge_error, Some(JudgeError::NoJson));
    assert_eq!(v.judge_raw, [bad, "still no json"]);
    assert!(!o.success && o.metric.is_none());
    assert_eq!(o.label, "JudgeFailed");
    assert_eq!(
        c,
        serde_json::json!({"label": "JudgeFailed", "scores": null, "overall": null, "mean7": null})
    );
    // A failed call: judge-failed with the call's error.
    let (v, _, _) = score(&[failed]);
    assert_eq!(
        v.judge_error,
        Some(JudgeError::Call {
            message: "HTTP 500".into()
        })
    );
    // No answers at all.
    let (v, _, _) = score(&[]);
    assert_eq!(v.judge_error, Some(JudgeError::Missing));
}

#[test]
fn demo_recipes_import_and_score_as_reference() {
    let recipes = demo_recipes().unwrap();
    assert!(recipes.len() >= 10);
    let mut ids: Vec<&str> = recipes.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), recipes.len());
    for r in &recipes {
        assert_eq!(r.split, "demo", "{}", r.id);
        assert!(
            r.contribution.starts_with("## Key Contributions\n"),
            "{}",
            r.id
        );
        for b in [
            "- **Novel materials or compounds**: ",
            "- **Unique synthesis methods**: ",
            "- **Specific applications or domains**: ",
        ] {
            assert_eq!(r.contribution.matches(b).count(), 1, "{} {b}", r.id);
        }
        let mut at = 0;
        for s in [
            "## Materials\n",
            "## Synthesis Equipment\n",
            "## Synthesis Procedure\n",
            "## Characterization Methods and Equipment\n",
            "## Product Characteristics\n",
        ] {
            let i = r.recipe[at..]
                .find(s)
                .unwrap_or_else(|| panic!("{}: {s}", r.id));
            at += i + s.len();
        }
        assert!(!r.title.is_empty() && r.year.is_some() && !r.authors.is_empty());
        let p = Alchemy.prepare(&AlchemyTask {
            recipe: r.clone(),
            references: Vec::new(),
            retrieval: None,
        });
        let p = p.unwrap();
        assert_eq!(
            Alchemy.baseline_answer("reference", &p.state).as_deref(),
            Some(r.recipe.as_str())
        );
    }
}

#[test]
fn summary_counts_failures_and_labels_both_overalls() {
    let scored = |o: f64| benchmarks::alchemy::judge::verdict(&[judge(&good_json(o))]);
    let failed = benchmarks::alchemy::judge::verdict(&[judge("x"), judge("y")]);
    let rows = [
        ("test_high_impact", scored(3.0)),
        ("test_high_impact", scored(4.0)),
        ("test_high_impact", failed.clone()),
        ("test_standard_impact", scored(5.0)),
    ];
    let s = AlchemySummary::of(rows.iter().map(|(k, v)| (*k, v)));
    let hi = &s.per_split["test_high_impact"];
    assert_eq!(
        (hi.items, hi.scored, hi.judge_failed, hi.reasked),
        (3, 2, 1, 1)
    );
    assert_eq!(hi.overall.mean, Some(3.5));
    assert!((hi.overall.sd.unwrap() - 0.5f64.sqrt()).abs() < 1e-12);
    assert_eq!(hi.mean7.mean, Some(2.5));
    assert_eq!(hi.mean7.sd, Some(0.0));
    assert_eq!(hi.criteria.len(), 7);
    assert_eq!(hi.criteria[0].stat.mean, Some(1.0));
    assert_eq!(s.all.items, 4);
    assert_eq!(s.all.judge_failed, 1);
    assert_eq!(s.all.overall.mean, Some(4.0));
    assert_eq!(
        (s.all.overall.min, s.all.overall.max),
        (Some(3.0), Some(5.0))
    );
    let md = s.to_markdown();
    assert!(md.contains(OVERALL_LABEL) && md.contains(MEAN7_LABEL));
    assert!(md.contains("| judge failed | 1 | 0 | 1 |"), "{md}");
    assert!(
        md.contains("| 3.500 ± 0.707 [3–4] | 5.000 [5–5] | 4.000 ± 1.000 [3–5] |"),
        "{md}"
    );
}

fn random_unitish(rng: &mut ChaCha8Rng, dim: usize) -> Vec<f32> {
    // Not unit length on purpose: each vector gets its own scale.
    let scale = 0.1 + (rng.next_u32() % 100) as f32;
    (0..dim)
        .map(|_| scale * ((rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32 - 0.5))
        .collect()
}

#[test]
fn top_k_against_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(20_260_301);
    let dim = 96;
    let rows: Vec<Vec<f32>> = (0..1500).map(|_| random_unitish(&mut rng, dim)).collect();
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    let e = Embeddings::from_flat(dim, flat).unwrap();
    let cosine = |a: &[f32], b: &[f32]| {
        let d: f64 = a
            .iter()
            .zip(b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum();
        let n = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        d / (n(a) * n(b))
    };
    for _ in 0..10 {
        let q = random_unitish(&mut rng, dim);
        // Brute force: every cosine in f64, fully sorted (ties by index).
        let mut all: Vec<(usize, f64)> = rows.iter().map(|r| cosine(r, &q)).enumerate().collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        // Through the exact kernel's own scores, fully sorted.
        let mut exact: Vec<(usize, f32)> = e
            .scores(&q)
            .unwrap()
            .into_iter()
            .enumerate()
            .map(|(i, s)| (i, s.unwrap()))
            .collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for k in [1, 10, 25, 100] {
            let top = e.top_k(&q, k).unwrap();
            assert_eq!(top.len(), k);
            let got: Vec<(usize, f32)> = top.iter().map(|n| (n.index, n.score)).collect();
            assert_eq!(got, exact[..k], "k = {k}");
            for (n, (_, want)) in top.iter().zip(&all) {
                assert!((f64::from(n.score) - want).abs() < 1e-5);
                assert!((f64::from(n.score) - cosine(&rows[n.index], &q)).abs() < 1e-5);
            }
        }
    }
}

#[test]
fn recipe_index_never_returns_the_query_itself() {
    let mut recipes = demo_recipes().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for r in recipes.iter_mut() {
        r.contributions_embedding = Some(random_unitish(&mut rng, 16));
    }
    recipes[11].contributions_embedding = None;
    let index = RecipeIndex::build(&recipes).unwrap().unwrap();
    assert_eq!(index.embeddings().len(), 11);
    let q = &recipes[3];
    let refs = index
        .references(q.contributions_embedding.as_deref().unwrap(), 5, &q.id)
        .unwrap();
    assert_eq!(refs.len(), 5);
    assert!(refs.iter().all(|(_, r)| r.recipe != q.recipe));
    assert!(refs.windows(2).all(|w| w[0].0.score >= w[1].0.score));
    // Resolved into a task, they make the RAG prompt.
    let t = AlchemyTask {
        recipe: q.clone(),
        references: refs.iter().map(|(_, r)| (*r).clone()).collect(),
        retrieval: None,
    };
    let p = Alchemy.prepare(&t).unwrap();
    assert!(p.messages[0].content.contains("# Reference 5:\n"));
    // A wrong-length embedding is refused with the recipe's id.
    recipes[0].contributions_embedding = Some(vec![1.0; 3]);
    let e = RecipeIndex::build(&recipes[..2]).unwrap_err().to_string();
    assert!(e.contains("demo-02"), "{e}");
}
