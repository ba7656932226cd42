//! MatTools' agents for the tool-usage tasks (`single`, `rag` and the self-reflection loop,
//! the last two over the documentation or over chunks of source code, and `agentic`, in
//! `super::agentic`;
//! their pure parts are `benchmarks::mattools::code::agent`). Every round (its prompt, the
//! retrieved entries, the code's run, the critique) is returned to be stored with the result.

use benchmarks::mattools::code::agent::{
    complete, critic_messages, generation_messages, parse_critique, AgentKind, Round, MAX_ROUNDS,
    TOP_K,
};
use benchmarks::mattools::code::extract::extract;
use benchmarks::mattools::code::harness::solution_run;
use benchmarks::mattools::code::CodeTask;

use super::docs::search;
use crate::agents::{AgentAnswer, Effects};
use crate::llm::{LlmError, Message};

/// Answers `task` with agent `kind` and model `model`. A model call that fails ends the
/// answer with the error (as a plain call would); a failed sandbox run or documentation
/// search is recorded in the round and the loop goes on.
pub async fn answer(
    kind: AgentKind,
    model: &str,
    task: &CodeTask,
    sample: u32,
    fx: &Effects<'_>,
) -> Result<AgentAnswer<Round>, LlmError> {
    if kind == AgentKind::Agentic {
        return super::agentic::answer(model, task, sample, fx).await;
    }
    let mut out = AgentAnswer {
        cached: true,
        ..AgentAnswer::default()
    };
    let rounds = if kind.reflects() { MAX_ROUNDS } else { 1 };
    let mut query = task.question.clone();
    for number in 1..=rounds {
        let found = match kind.source() {
            None => None,
            Some(source) => Some(search(&query, TOP_K, source, fx).await?),
        };
        let (docs, doc_error, how) = match found {
            None => (Vec::new(), None, String::new()),
            Some(f) => {
                out.input_tokens += f.input_tokens;
                out.cost_usd += f.cost_usd;
                (f.docs, f.error, f.how)
            }
        };
        let prompt = match kind.source() {
            None => benchmarks::mattools::code::prompt::messages(&task.question),
            Some(_) => generation_messages(&task.question, &docs, out.rounds.last()),
        };
        let c = fx
            .gateway
            .complete_within(model, &prompt, sample, fx.budget)
            .await?;
        out.add(&c);
        let mut round = Round {
            number,
            query: query.clone(),
            retrieved: docs.iter().map(|d| d.name.clone()).collect(),
            search: how,
            prompt,
            response: c.text.clone(),
            error: doc_error,
            ..Round::default()
        };
        out.response = c.text;
        if !kind.reflects() {
            out.rounds.push(round);
            break;
        }
        match extract(&round.response) {
            Ok(e) => {
                let (env, program) = solution_run(&e.code, &e.name);
                match fx.code.run_need(env, &program).await {
                    Ok(run) => {
                        round.complete = complete(&run);
                        round.run = Some(run);
                    }
                    Err(e) => round.error = Some(format!("the sandbox could not run it: {e}")),
                }
            }
            Err(e) => round.error = Some(e.to_string()),
        }
        // The run was cancelled: no critique (a paid model call) and no further round.
        if round.complete || number == rounds || fx.code.is_cancelled() {
            out.rounds.push(round);
            break;
        }
        let critic = critic_messages(&task.question, &round);
        let c = fx
            .gateway
            .complete_within(model, &critic as &[Message], sample, fx.budget)
            .await?;
        out.add(&c);
        let critique = parse_critique(&c.text, &task.question);
        query = critique.query.clone();
        round.critique = Some(critique);
        out.rounds.push(round);
    }
    Ok(out)
}
