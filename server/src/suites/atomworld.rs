//! AtomWorld's server side: the paper's tool-augmented agent (its pure parts are
//! `benchmarks::atomworld::agent`). Each attempt searches the documentation of the pinned
//! pymatgen (the index MatTools' agents search), asks the model for a program, and runs it in
//! the pymatgen sandbox on the input CIF; the structure it writes is the answer. A failed
//! attempt's program and error go to the next; a model call that fails ends the answer.

use benchmarks::atomworld::agent::{
    answer as written_answer, code_of, messages, program, written, Attempt, AGENT, ENV,
    MAX_ATTEMPTS, TOP_K,
};
use benchmarks::atomworld::AtomWorldTask;
use futures_util::future::BoxFuture;

use super::mattools::docs::search;
use super::{neutral, AgentError, AgentReply, AgentTask, SuiteHost};
use crate::agents::{AgentAnswer, Effects};
use crate::llm::LlmError;

/// AtomWorld's host.
pub struct AtomWorld;

impl SuiteHost for AtomWorld {
    fn name(&self) -> &'static str {
        <benchmarks::atomworld::AtomWorld as benchmarks::task::Suite>::NAME
    }

    fn answer_with<'a>(
        &'a self,
        agent: &'a str,
        model: &'a str,
        task: AgentTask<'a>,
        fx: &'a Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<AgentReply, AgentError>>> {
        (agent == AGENT).then(|| -> BoxFuture<'a, Result<AgentReply, AgentError>> {
            Box::pin(async move {
                let t: AtomWorldTask = serde_json::from_value(task.json.clone())
                    .map_err(|e| AgentError::Task(format!("not an AtomWorld task: {e}")))?;
                Ok(neutral(answer(model, &t, task.sample, fx).await?))
            })
        })
    }
}

/// Answers `task` with `model` through at most [`MAX_ATTEMPTS`] programs.
async fn answer(
    model: &str,
    task: &AtomWorldTask,
    sample: u32,
    fx: &Effects<'_>,
) -> Result<AgentAnswer<Attempt>, LlmError> {
    let mut out = AgentAnswer::<Attempt> {
        cached: true,
        ..AgentAnswer::default()
    };
    let found = search(&task.action_prompt, TOP_K, fx).await?;
    out.input_tokens += found.input_tokens;
    out.cost_usd += found.cost_usd;
    for number in 1..=MAX_ATTEMPTS {
        let prompt = messages(
            &task.input_cif,
            &task.action_prompt,
            &found.docs,
            out.rounds.last(),
        );
        let c = fx
            .gateway
            .complete_within(model, &prompt, sample, fx.budget)
            .await?;
        out.add(&c);
        out.response = c.text.clone();
        let mut attempt = Attempt {
            number,
            retrieved: found.docs.iter().map(|d| d.name.clone()).collect(),
            search: found.how.clone(),
            reply: c.text.clone(),
            error: found.error.clone(),
            ..Attempt::default()
        };
        let Some(code) = code_of(&c.text) else {
            attempt.error = Some("the reply holds no program".into());
            out.rounds.push(attempt);
            continue;
        };
        attempt.code = Some(code.to_string());
        match fx.code.run_need(ENV, &program(code, &task.input_cif)).await {
            Ok(run) => {
                match written(&run) {
                    Ok(cif) => {
                        out.response = written_answer(&cif);
                        attempt.written = Some(cif);
                        attempt.error = None;
                    }
                    Err(why) => attempt.error = Some(why),
                }
                attempt.run = Some(run);
            }
            Err(e) => attempt.error = Some(format!("the sandbox could not run it: {e}")),
        }
        let done = attempt.written.is_some();
        out.rounds.push(attempt);
        // The run was cancelled: no further attempt (each is a paid model call).
        if done || fx.code.is_cancelled() {
            break;
        }
    }
    Ok(out)
}
