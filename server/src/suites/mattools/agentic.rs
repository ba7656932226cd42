//! The `agentic` agent's calls and searches (its prompts and parsing are
//! `benchmarks::mattools::code::agentic`): entities and sub-questions (two calls at once), a
//! search for the question, each sub-question and each entity, the model's reranking of what
//! was found, then one generation with the chosen entries. Each step is kept in the round.

use benchmarks::mattools::code::agent::{generation_messages, DocSource, Round, TOP_K};
use benchmarks::mattools::code::agentic::{
    candidates, decomposition_messages, entity_messages, parse_list, parse_ranking,
    rerank_messages, Step, MAX_ENTITIES, MAX_QUERIES,
};
use benchmarks::mattools::code::CodeTask;

use super::docs::search;
use crate::agents::{AgentAnswer, Effects};
use crate::llm::{LlmError, Message};

/// Answers `task` as the agentic RAG agent does (no run of the code: like `rag`, the answer
/// is scored as it stands).
pub async fn answer(
    model: &str,
    task: &CodeTask,
    sample: u32,
    fx: &Effects<'_>,
) -> Result<AgentAnswer<Round>, LlmError> {
    let mut out = AgentAnswer {
        cached: true,
        ..AgentAnswer::default()
    };
    let source = DocSource::Documentation;
    let entity_prompt = entity_messages(&task.question);
    let split_prompt = decomposition_messages(&task.question);
    let (entities, split) = tokio::join!(
        fx.gateway
            .complete_within(model, &entity_prompt, sample, fx.budget),
        fx.gateway
            .complete_within(model, &split_prompt, sample, fx.budget),
    );
    let (entities, split) = (entities?, split?);
    out.add(&entities);
    out.add(&split);
    let entity_names = parse_list(&entities.text, "entities", MAX_ENTITIES);
    let queries = parse_list(&split.text, "queries", MAX_QUERIES);
    let mut steps = vec![
        Step {
            name: "entities".into(),
            outcome: entity_names.clone(),
            prompt: entity_prompt,
            response: entities.text,
        },
        Step {
            name: "decomposition".into(),
            outcome: queries.clone(),
            prompt: split_prompt,
            response: split.text,
        },
    ];

    let mut searched = Vec::new();
    let mut how = String::new();
    let mut errors: Vec<String> = Vec::new();
    let all_queries = std::iter::once(task.question.clone())
        .chain(queries)
        .chain(entity_names);
    for query in all_queries {
        let found = search(&query, TOP_K, source, fx).await?;
        out.input_tokens += found.input_tokens;
        out.cost_usd += found.cost_usd;
        if let Some(e) = found.error {
            if !errors.contains(&e) {
                errors.push(e);
            }
        }
        if how.is_empty() {
            how = found.how;
        }
        searched.push(found.docs);
    }
    let pool = candidates(&searched);

    let chosen = if pool.len() <= TOP_K {
        pool.clone()
    } else {
        let rerank_prompt = rerank_messages(&task.question, &pool, TOP_K);
        let c = fx
            .gateway
            .complete_within(model, &rerank_prompt as &[Message], sample, fx.budget)
            .await?;
        out.add(&c);
        let order = parse_ranking(&c.text, pool.len(), TOP_K);
        let chosen: Vec<_> = order.iter().filter_map(|&i| pool.get(i).cloned()).collect();
        steps.push(Step {
            name: "rerank".into(),
            outcome: chosen.iter().map(|d| d.name.clone()).collect(),
            prompt: rerank_prompt,
            response: c.text,
        });
        chosen
    };

    let prompt = generation_messages(&task.question, &chosen, None);
    let c = fx
        .gateway
        .complete_within(model, &prompt, sample, fx.budget)
        .await?;
    out.add(&c);
    out.response = c.text.clone();
    out.rounds.push(Round {
        number: 1,
        query: task.question.clone(),
        retrieved: chosen.iter().map(|d| d.name.clone()).collect(),
        search: how,
        prompt,
        response: c.text,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        steps,
        ..Round::default()
    });
    Ok(out)
}
