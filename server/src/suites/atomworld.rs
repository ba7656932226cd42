//! AtomWorld's server side: its agents. The paper's tool-augmented agent (its pure parts are
//! `benchmarks::atomworld::agent`); our own engine-tools agent
//! (`benchmarks::atomworld::tools`) is at the end. Each attempt searches the documentation of the pinned
//! pymatgen (the index MatTools' agents search), asks the model for a program, and runs it in
//! the pymatgen sandbox on the input CIF; the structure it writes is the answer. A failed
//! attempt's program and error go to the next; a model call that fails ends the answer.

use benchmarks::atomworld::agent::{
    answer as written_answer, code_of, messages, program, written, Attempt, AGENT, ENV,
    MAX_ATTEMPTS, TOP_K,
};
use benchmarks::atomworld::{tools, AtomWorldTask};
use benchmarks::mattools::code::agent::DocSource;
use futures_util::future::BoxFuture;

use super::mattools::docs::search;
use super::{neutral, AgentError, AgentReply, AgentTask, SuiteHost};
use crate::agents::{AgentAnswer, Effects};
use crate::cpu::CpuPool;
use crate::llm::LlmError;

/// AtomWorld's host.
pub struct AtomWorld;

impl SuiteHost for AtomWorld {
    fn name(&self) -> &'static str {
        <benchmarks::atomworld::AtomWorld as benchmarks::task::Suite>::NAME
    }

    /// The paper's pymatgen agent and our engine-tools agent.
    fn answer_with<'a>(
        &'a self,
        agent: &'a str,
        model: &'a str,
        task: AgentTask<'a>,
        fx: &'a Effects<'a>,
    ) -> Option<BoxFuture<'a, Result<AgentReply, AgentError>>> {
        if agent != AGENT && agent != tools::AGENT {
            return None;
        }
        Some(Box::pin(async move {
            let t: AtomWorldTask = serde_json::from_value(task.json.clone())
                .map_err(|e| AgentError::Task(format!("not an AtomWorld task: {e}")))?;
            if agent == AGENT {
                return Ok(neutral(answer(model, &t, task.sample, fx).await?));
            }
            let input = engine::cif::read_cif(&t.input_cif)
                .map_err(|e| AgentError::Task(format!("input_cif: {e}")))?;
            let messages = &task.prepared.messages;
            Ok(neutral(
                with_tools(model, input, messages, task.sample, fx).await?,
            ))
        }))
    }
}

/// Answers with `model` using the engine's tools on `input` (our agent, not the paper's):
/// up to [`tools::MAX_TURNS`] model turns; `write_cif` ends the task with its structure as
/// the answer, a turn without calls with its text.
async fn with_tools(
    model: &str,
    input: engine::Structure,
    messages: &[benchmarks::task::Message],
    sample: u32,
    fx: &Effects<'_>,
) -> Result<AgentAnswer<tools::Turn>, AgentError> {
    let mut out = AgentAnswer::<tools::Turn> {
        cached: true,
        ..AgentAnswer::default()
    };
    let specs = tools::specs();
    let mut conversation = tools::with_note(messages);
    let mut work = input;
    for number in 1..=tools::MAX_TURNS {
        let (c, calls) = fx
            .gateway
            .complete_with_tools(model, &conversation, &specs, sample, fx.budget)
            .await?;
        out.add(&c);
        out.response = c.text.clone();
        let mut turn = tools::Turn {
            number,
            reply: c.text.clone(),
            calls: Vec::new(),
        };
        if calls.is_empty() {
            out.rounds.push(turn);
            break;
        }
        conversation.push(benchmarks::task::Message::assistant_calls(
            c.text,
            calls.clone(),
        ));
        let mut answer = None;
        for call in calls {
            // Structures are read and changed on the CPU pool, never on an async worker.
            let job = call.clone();
            let (done, outcome) = CpuPool::global()
                .run(move || {
                    let mut w = work;
                    let o = tools::call(&mut w, &job);
                    (w, o)
                })
                .await
                .map_err(|e| AgentError::Task(format!("a tool could not run: {e}")))?;
            work = done;
            conversation.push(benchmarks::task::Message::tool_result(
                &call,
                outcome.result.clone(),
            ));
            turn.calls.push(tools::Used {
                name: call.name,
                arguments: call.arguments,
                result: outcome.result,
            });
            answer = answer.or(outcome.answer);
        }
        out.rounds.push(turn);
        if let Some(cif) = answer {
            out.response = written_answer(&cif);
            break;
        }
        // The run was cancelled: no further turn (each is a paid model call).
        if fx.code.is_cancelled() {
            break;
        }
    }
    Ok(out)
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
    let found = search(&task.action_prompt, TOP_K, DocSource::Documentation, fx).await?;
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
