//! Meeting a suite's needs: judge calls through the gateway, programs in the sandbox, in
//! stages ([`benchmarks::task::Suite::more_needs`]) until the suite needs nothing more.

use benchmarks::task::{AnySuite, Need, NeedAnswer, PreparedTask, MAX_NEED_STAGES};

use crate::execution::CodeRunner;
use crate::llm::Gateway;

/// Answers one need. Without a gateway (offline `eval`) a judge need fails with a reason.
pub async fn meet(need: Need, gateway: Option<&Gateway>, code: &CodeRunner) -> NeedAnswer {
    match need {
        Need::Judge { messages } => {
            let Some(gateway) = gateway else {
                return NeedAnswer::Failed {
                    error: "eval scores offline: no judge model is called".into(),
                };
            };
            match &gateway.config().limits.judge_model {
                Some(judge) => match gateway.complete(judge, &messages, 0).await {
                    Ok(c) => NeedAnswer::Judge { text: c.text },
                    Err(e) => NeedAnswer::Failed {
                        error: e.to_string(),
                    },
                },
                None => NeedAnswer::Failed {
                    error: "no judge model is configured ([limits] judge_model)".into(),
                },
            }
        }
        Need::Run { env, program } => match code.run_need(env, &program).await {
            Ok(result) => NeedAnswer::Ran { result },
            Err(e) => NeedAnswer::Failed {
                error: e.to_string(),
            },
        },
    }
}

/// Why a task of a cancelled run has no verdict.
pub const CANCELLED: &str =
    "the run was cancelled while this answer was being scored; resuming the run asks it again";

/// Every answer scoring `response` to `task` needs, stage after stage; an error when `code`
/// was cancelled meanwhile (its programs stopped, so their results are no evidence).
pub async fn meet_all(
    suite: &dyn AnySuite,
    task: &PreparedTask,
    response: &str,
    gateway: Option<&Gateway>,
    code: &CodeRunner,
) -> Result<Vec<NeedAnswer>, String> {
    // The judge at the suite's paper temperature where its configuration sets none.
    let judging = gateway.map(|g| g.with_default_temperature(suite.paper_temperatures().judge));
    let gateway = judging.as_ref();
    let mut answers = Vec::new();
    let mut needs = suite.needs(task, response).map_err(|e| e.to_string())?;
    for _ in 0..=MAX_NEED_STAGES {
        if needs.is_empty() {
            break;
        }
        for need in needs {
            let answer = meet(need, gateway, code).await;
            // A program stopped because its run was cancelled says nothing of the answer:
            // no verdict (resuming the run asks and scores the task again).
            if code.is_cancelled() {
                return Err(CANCELLED.into());
            }
            answers.push(answer);
        }
        needs = suite
            .more_needs(task, response, &answers)
            .map_err(|e| e.to_string())?;
    }
    Ok(answers)
}
