//! The worker scores as the benchmarks' scorers do, kind by kind, and its target cache never
//! lets one task's structure stand in for another's.

use benchmarks::atomworld::evaluate::{cif_answer, Label};
use benchmarks::probes::cif_gen::evaluate::{evaluate as gen_evaluate, GenLabel};
use benchmarks::probes::cif_gen::generator::{generate as gen_tasks, CifGenTask, GenTaskSpec};
use benchmarks::probes::cif_repair::evaluate::evaluate as repair_evaluate;
use benchmarks::probes::cif_repair::generator::{generate as repair_tasks, RepairTaskSpec};
use benchmarks::probes::points::generator::{generate as point_tasks, PointTaskSpec};
use benchmarks::probes::points::prompt::points_json;
use benchmarks::probes::points::score::{evaluate as points_evaluate, PointLabel};

use super::*;

fn run(work: Work, cache: &mut TargetCache) -> Outcome {
    score(&work, cache)
}

/// `answer` to CIF-Gen `task` as the worker scores it, held to the probe's own scorer.
fn scored_gen(task: &CifGenTask, answer: &str, cache: &mut TargetCache) -> Outcome {
    let outcome = run(
        Work::Gen {
            reference_cif: task.reference_cif.clone(),
            answer: answer.to_string(),
        },
        cache,
    );
    let expected = gen_evaluate(task, answer).map_err(|e| e.to_string());
    assert_eq!(outcome, Outcome::Gen(expected), "{}", task.id);
    outcome
}

#[test]
fn repair_answers_are_scored_as_the_probe_scores_them() {
    let mut cache = TargetCache::default();
    let tasks = repair_tasks(&RepairTaskSpec::new(3, 4));
    assert!(tasks.len() >= 2);
    for task in &tasks {
        for answer in [
            cif_answer(&task.original_cif),
            cif_answer(&task.corrupted_cif),
        ] {
            let outcome = run(
                Work::Repair {
                    original_cif: task.original_cif.clone(),
                    removed_value: task.corruption.removed_value().map(str::to_string),
                    answer: answer.clone(),
                },
                &mut cache,
            );
            let expected = repair_evaluate(task, &answer).map_err(|e| e.to_string());
            assert_eq!(outcome, Outcome::Repair(expected), "{}", task.id);
        }
    }
    let truth = cif_answer(&tasks[0].original_cif);
    let Outcome::Repair(Ok(v)) = run(
        Work::Repair {
            original_cif: tasks[0].original_cif.clone(),
            removed_value: None,
            answer: truth,
        },
        &mut cache,
    ) else {
        panic!("the original CIF reads");
    };
    assert_eq!(v.verdict.label, Label::Success);
}

#[test]
fn gen_answers_are_scored_as_the_probe_scores_them() {
    let mut cache = TargetCache::default();
    let tasks = gen_tasks(&GenTaskSpec { seed: 5, count: 3 });
    assert!(tasks.len() >= 2);
    for task in &tasks {
        let truth = cif_answer(&task.reference_cif);
        let other = cif_answer(&tasks[0].reference_cif);
        for answer in [truth.clone(), other, "no CIF here".to_string()] {
            scored_gen(task, &answer, &mut cache);
        }
        let Outcome::Gen(Ok(v)) = run(
            Work::Gen {
                reference_cif: task.reference_cif.clone(),
                answer: truth,
            },
            &mut cache,
        ) else {
            panic!("the reference reads");
        };
        assert_eq!(v.label, GenLabel::Success, "{}", task.id);
    }
}

#[test]
fn point_answers_are_scored_as_the_probe_scores_them() {
    let mut cache = TargetCache::default();
    let task = point_tasks(&PointTaskSpec::per_action(2, 1))
        .into_iter()
        .next()
        .expect("a task");
    let truth = format!("<answer>{}</answer>", points_json(&task.target));
    let moved = format!("<answer>{}</answer>", points_json(&task.points));
    for answer in [truth.clone(), moved] {
        let outcome = run(
            Work::Points {
                target: task.target.clone(),
                answer: answer.clone(),
            },
            &mut cache,
        );
        assert_eq!(
            outcome,
            Outcome::Points(points_evaluate(&task.target, &answer))
        );
    }
    let Outcome::Points(v) = run(
        Work::Points {
            target: task.target.clone(),
            answer: truth,
        },
        &mut cache,
    ) else {
        panic!("a points outcome");
    };
    assert_eq!(v.label, PointLabel::Success);
}

#[test]
fn an_unreadable_structure_is_reported_not_scored() {
    let mut cache = TargetCache::default();
    let broken = "data_x\n_cell_length_a 3\n".to_string();
    let Outcome::Gen(Err(message)) = run(
        Work::Gen {
            reference_cif: broken.clone(),
            answer: "<cif>data_x</cif>".into(),
        },
        &mut cache,
    ) else {
        panic!("an unreadable reference is an error");
    };
    assert!(!message.is_empty());
    let Outcome::Answer(done) = run(
        Work::Answer(AnswerWork {
            target_cif: broken,
            answer: "<cif>data_x</cif>".into(),
            comparison: Comparison::Matcher,
            rows: None,
        }),
        &mut cache,
    ) else {
        panic!("an answer outcome");
    };
    assert_eq!(
        done,
        AnswerDone {
            verdict: None,
            overlay: None
        }
    );
}

#[test]
fn the_cache_follows_the_target() {
    let mut cache = TargetCache::default();
    let tasks = gen_tasks(&GenTaskSpec { seed: 9, count: 2 });
    let [a, b] = [&tasks[0], &tasks[1]];
    assert_ne!(a.reference_cif, b.reference_cif);
    // The same answer, first against its own reference, then against another one: the
    // second verdict must be the other reference's, not the cached first.
    let answer = cif_answer(&a.reference_cif);
    let mut outcomes = Vec::new();
    for task in [a, b, a] {
        outcomes.push(scored_gen(task, &answer, &mut cache));
    }
    assert_ne!(
        outcomes[0], outcomes[1],
        "the two references give different verdicts"
    );
    assert_eq!(outcomes[0], outcomes[2]);
}

#[test]
fn space_groups_are_the_searchs() {
    use benchmarks::atomworld::generator::pool::pool;
    let entry = pool()
        .into_iter()
        .find(|e| e.name.starts_with("Halite"))
        .expect("halite is in the pool");
    let g = search_space_group(&entry.structure).expect("halite has a space group");
    assert_eq!((g.number, g.symbol.as_str()), (225, "F m -3 m"));
    let empty = Structure::new(entry.structure.lattice.clone(), Vec::new());
    let e = search_space_group(&empty).expect_err("no sites, no space group");
    assert!(e.contains("without sites"), "{e}");
}

#[test]
fn a_job_and_its_answer_cross_as_json_bit_for_bit() {
    // The points probe's target carries arbitrary doubles: they must arrive unchanged.
    let task = point_tasks(&PointTaskSpec::per_action(4, 1))
        .into_iter()
        .next()
        .expect("a task");
    let job = Job {
        id: 11,
        work: Work::Points {
            target: task.target.clone(),
            answer: format!("<answer>{}</answer>", points_json(&task.target)),
        },
    };
    let text = serde_json::to_string(&job).expect("serialises");
    let back: Job<Work> = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, job);
    let done = FromWorker::Done(Box::new(Done {
        id: 11,
        outcome: score(&back.work, &mut TargetCache::default()),
    }));
    let text = serde_json::to_string(&done).expect("serialises");
    let back: FromWorker<Outcome> = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, done);
}
