//! MatTools' agents for the tool-usage tasks (`single`, `rag` and the self-reflection loop;
//! their pure parts are `benchmarks::mattools::code::agent`). Every round (its prompt, the
//! retrieved entries, the code's run, the critique) is returned to be stored with the result.

use benchmarks::mattools::code::agent::{
    complete, critic_messages, generation_messages, parse_critique, AgentKind, DocEntry, Round,
    MAX_ROUNDS, TOP_K,
};
use benchmarks::mattools::code::extract::extract;
use benchmarks::mattools::code::harness::solution_run;
use benchmarks::mattools::code::CodeTask;

use super::docs;
use crate::agents::{AgentAnswer, Effects};
use crate::llm::{LlmError, Message};

/// What one documentation search gave: the entries, how they were found (a round's
/// `search`), why the chosen search failed if it did, and its embeddings cost.
struct Searched {
    docs: Vec<DocEntry>,
    how: String,
    error: Option<String>,
    input_tokens: u64,
    cost_usd: f64,
}

/// Search the documentation for `query`: by the embeddings model when one is chosen, else
/// by BM25. A failed embeddings search falls back to BM25 and says so in the round, except
/// a spend cap, which ends the answer as a model call's would.
async fn search(query: &str, fx: &Effects<'_>) -> Result<Searched, LlmError> {
    let index = match docs::index(fx.code).await {
        Ok(index) => index,
        Err(e) => {
            return Ok(Searched {
                docs: Vec::new(),
                how: String::new(),
                error: Some(format!("no documentation: {e}")),
                input_tokens: 0,
                cost_usd: 0.0,
            })
        }
    };
    let bm25 = |error: Option<String>| Searched {
        docs: index.search(query, TOP_K),
        how: "bm25".into(),
        error,
        input_tokens: 0,
        cost_usd: 0.0,
    };
    let Some(model) = fx.embeddings else {
        return Ok(bm25(None));
    };
    match index
        .search_embedded(fx.gateway, model, query, TOP_K, fx.budget)
        .await
    {
        Ok(found) => Ok(Searched {
            docs: found.entries,
            how: format!("embeddings:{model}"),
            error: None,
            input_tokens: found.input_tokens,
            cost_usd: found.cost_usd,
        }),
        Err(docs::SearchError::Llm(e @ LlmError::SpendCap(_))) => Err(e),
        Err(e) => Ok(bm25(Some(format!("{e}; searched by BM25 instead")))),
    }
}

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
    let mut out = AgentAnswer {
        cached: true,
        ..AgentAnswer::default()
    };
    let rounds = if kind == AgentKind::Reflect {
        MAX_ROUNDS
    } else {
        1
    };
    let mut query = task.question.clone();
    for number in 1..=rounds {
        let found = match kind {
            AgentKind::Single => None,
            _ => Some(search(&query, fx).await?),
        };
        let (docs, doc_error, how) = match found {
            None => (Vec::new(), None, String::new()),
            Some(f) => {
                out.input_tokens += f.input_tokens;
                out.cost_usd += f.cost_usd;
                (f.docs, f.error, f.how)
            }
        };
        let prompt = match kind {
            AgentKind::Single => benchmarks::mattools::code::prompt::messages(&task.question),
            _ => generation_messages(&task.question, &docs, out.rounds.last()),
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
        if kind != AgentKind::Reflect {
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
