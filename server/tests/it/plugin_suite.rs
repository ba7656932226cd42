//! A whole suite as one plugin, defined only here: a generator, an importer of its own file
//! layout, an agent on the server's side and a headline table. It runs through the server's
//! generic layers (run loop, HTTP API, task files) with no edit anywhere else.

use crate::common;

use std::sync::Arc;

use benchmarks::task::source::{Located, Position};
use benchmarks::task::{Generator, Headline, Message, Outcome, Prepared, Suite, TaskError};
use engine::interrupt::Interrupt;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use server::agents::{AgentAnswer, Effects};
use server::config::Config;
use server::http::{router, AppState};
use server::llm::{Gateway, GatewayOptions};
use server::storage::Storage;
use server::suites::{neutral, AgentError, AgentReply, AgentTask, Catalogue, SuiteHost};

/// "Is n even or odd?"
struct Parity;

#[derive(Serialize, Deserialize)]
struct ParityTask {
    id: String,
    n: u64,
}

/// The generator's parameters.
#[derive(Serialize, Deserialize)]
struct Draw {
    seed: u64,
    per_group: usize,
}

#[derive(Serialize, Deserialize)]
struct ParityVerdict {
    correct: bool,
}

fn truth(n: u64) -> &'static str {
    if n.is_multiple_of(2) {
        "even"
    } else {
        "odd"
    }
}

impl Suite for Parity {
    const NAME: &'static str = "parity";
    type Task = ParityTask;
    type State = u64;
    type Verdict = ParityVerdict;

    fn key(task: &ParityTask) -> String {
        task.id.clone()
    }

    fn generator(&self, seed: u64, per_group: usize) -> Option<Generator> {
        Some(Generator {
            params: serde_json::to_value(Draw { seed, per_group }).ok()?,
            at_most: 2 * per_group,
        })
    }

    /// `per_group` even numbers, then as many odd ones, from a linear congruential draw.
    fn generate(&self, params: &serde_json::Value) -> Result<Vec<ParityTask>, TaskError> {
        let draw = Draw::deserialize(params).map_err(|e| TaskError(e.to_string()))?;
        let mut x = draw.seed;
        let mut tasks = Vec::new();
        for parity in [0, 1] {
            for i in 0..draw.per_group {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let n = (x >> 33) / 2 * 2 + parity;
                tasks.push(ParityTask {
                    id: format!("{}-{i}", truth(n)),
                    n,
                });
            }
        }
        Ok(tasks)
    }

    /// The suite's own layout: one number per line, keyed by its line.
    fn read_tasks(&self, _name: &str, text: &str) -> Result<Vec<Located>, TaskError> {
        let numbered = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        numbered
            .map(|(i, l)| {
                let n: u64 = l.trim().parse().map_err(|e| {
                    TaskError(format!("line {}: {l:?} is not a number: {e}", i + 1))
                })?;
                let task = serde_json::json!({"id": format!("line-{}", i + 1), "n": n});
                Ok((Position::Line(i + 1), task))
            })
            .collect()
    }

    fn agents(&self) -> &'static [&'static str] {
        &["vote"]
    }

    fn columns(&self) -> &'static [(&'static str, &'static str)] {
        &[("Wrong", "Wrong")]
    }

    fn prepare(&self, t: &ParityTask) -> Result<Prepared<u64>, TaskError> {
        Ok(Prepared {
            messages: vec![Message::user(format!("Is {} even or odd?", t.n))],
            group: truth(t.n).into(),
            state: t.n,
        })
    }

    fn score(
        &self,
        n: &u64,
        response: &str,
        _: &[benchmarks::task::NeedAnswer],
        _: &Interrupt,
    ) -> ParityVerdict {
        ParityVerdict {
            correct: response.trim().eq_ignore_ascii_case(truth(*n)),
        }
    }

    fn outcome(v: &ParityVerdict) -> Outcome {
        Outcome {
            label: if v.correct { "Success" } else { "Wrong" }.into(),
            success: v.correct,
            metric: None,
            why: None,
        }
    }

    /// Balanced accuracy: the mean of the two groups' accuracies.
    fn headline(&self, rows: &[(&str, &ParityVerdict)]) -> Option<Headline> {
        let accuracy = |group: &str| {
            let of: Vec<bool> = rows
                .iter()
                .filter(|(g, _)| *g == group)
                .map(|(_, v)| v.correct)
                .collect();
            of.iter().filter(|c| **c).count() as f64 / of.len().max(1) as f64
        };
        let balanced = (accuracy("even") + accuracy("odd")) / 2.0;
        Some(Headline {
            text: format!("balanced accuracy {balanced:.3}"),
            json: serde_json::json!({"balanced_accuracy": balanced}),
        })
    }
}

/// The server's side of the suite: its `vote` agent asks the model three times and answers
/// with the majority.
struct ParityHost;

impl SuiteHost for ParityHost {
    fn name(&self) -> &'static str {
        Parity::NAME
    }

    fn answer_with<'a>(
        &'a self,
        agent: &'a str,
        model: &'a str,
        task: AgentTask<'a>,
        fx: &'a Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<AgentReply, AgentError>>> {
        (agent == "vote").then(|| -> BoxFuture<'a, _> {
            Box::pin(async move {
                let mut answer = AgentAnswer::<String>::default();
                for vote in 0..3 {
                    let sample = task.sample * 3 + vote;
                    let c = fx
                        .gateway
                        .complete_within(model, &task.prepared.messages, sample, fx.budget)
                        .await?;
                    answer.add(&c);
                    answer.rounds.push(c.text.trim().to_lowercase());
                }
                let even = answer.rounds.iter().filter(|r| *r == "even").count();
                answer.response = if even >= 2 { "even" } else { "odd" }.into();
                Ok(neutral(answer))
            })
        })
    }
}

fn catalogue() -> Catalogue {
    Catalogue::standard().with(Parity, Some(Arc::new(ParityHost)))
}

/// A model that answers "even", "even", "odd", … in turn.
async fn alternating_model() -> String {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move { common::completion(["even", "even", "odd"][n % 3], 1) }
        }),
    );
    common::spawn_app(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_run_answered_by_the_suites_agent() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open(dir.path()).unwrap();
    let config = Config {
        models: vec![common::free_model("voter", alternating_model().await)],
        ..Config::default()
    };
    let gateway = Gateway::new(config, storage.clone(), GatewayOptions::default()).unwrap();
    let state = AppState::with_suites(storage, gateway, None, 1000, catalogue());
    let base = common::serve_router(router(state, dir.path())).await;
    let c = reqwest::Client::new();

    let listed = common::get_json(&c, format!("{base}/api/suites")).await;
    let info = listed["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "parity");
    let info = info.unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(info["generates"], true);
    assert_eq!(info["agents"][0], "vote");

    let body = serde_json::json!({"suite": "parity", "model": "voter", "agent": "vote",
        "seed": 7, "per_group": 3, "concurrency": 1});
    let id = common::create_run(&c, &base, body).await;
    let run = common::wait_run(&c, &base, &id, |r| r["status"] == "finished").await;
    assert_eq!(run["status"], "finished", "{run}");
    // Six drawn tasks, each voted on by three calls that say even twice: every even number
    // is right and every odd one wrong.
    let summary = &run["summary"];
    assert_eq!(summary["overall"]["n"], 6, "{summary}");
    assert_eq!(summary["per_group"]["even"]["success_rate"], 1.0);
    assert_eq!(summary["per_group"]["odd"]["success_rate"], 0.0);
    assert_eq!(summary["headline"]["json"]["balanced_accuracy"], 0.5);
    let results = common::get_json(&c, format!("{base}/api/runs/{id}/results")).await;
    let row = &results["results"][0];
    assert_eq!(
        row["transcript"],
        serde_json::json!(["even", "even", "odd"]),
        "{row}"
    );
}

#[test]
fn its_own_file_layout_is_read_with_places() {
    let suites = catalogue();
    let suite = suites.registry.get("parity").unwrap();
    let host = suites.hosts.get("parity");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("numbers.txt");
    std::fs::write(&file, "4\n\n7\n").unwrap();
    let read = host.read(suite.as_ref(), &file).unwrap();
    let keys: Vec<String> = read
        .tasks
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys, ["line-1", "line-3"]);
    std::fs::write(&file, "4\nfour\n").unwrap();
    let e = host.read(suite.as_ref(), &file).err().unwrap().to_string();
    assert!(e.contains("line 2") && e.contains("\"four\""), "{e}");
}
