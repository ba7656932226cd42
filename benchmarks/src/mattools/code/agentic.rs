//! The agentic RAG agent's pure parts (MatTools' third retrieval system: entity extraction,
//! query decomposition and reranking before one generation). The server makes the calls and
//! the searches; this module writes the prompts, reads the replies and merges what was found.
//!
//! The steps, each a model call except the searches:
//! 1. **Entities**: the pymatgen classes, functions and modules the task needs.
//! 2. **Decomposition**: the task split into short sub-questions.
//! 3. **Search**: the top [`TOP_K`](super::agent::TOP_K) entries for the question, for each
//!    sub-question and for each entity, merged by [`candidates`] (best of each search first,
//!    no entry twice, at most [`MAX_CANDIDATES`]).
//! 4. **Reranking**: the model orders the candidates; the first `TOP_K` go to the generation
//!    prompt (`agent::generation_messages`).
//!
//! The replies are JSON objects; a reply that cannot be read costs only its step (no entities,
//! no sub-questions, or the search order kept), never the answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::DocEntry;
use crate::task::Message;

/// Most entities kept from step 1.
pub const MAX_ENTITIES: usize = 6;
/// Most sub-questions kept from step 2.
pub const MAX_QUERIES: usize = 4;
/// Most candidates shown to the reranker.
pub const MAX_CANDIDATES: usize = 20;
/// Most characters of a candidate the reranker sees.
const CANDIDATE_CHARS: usize = 400;

/// One planning or reranking call, kept with the round so a person sees what the agent did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// `entities`, `decomposition` or `rerank`.
    pub name: String,
    /// What the step concluded (the entities, the sub-questions, the chosen entries' names).
    pub outcome: Vec<String>,
    /// The messages sent.
    pub prompt: Vec<Message>,
    /// The model's reply.
    pub response: String,
}

/// Step 1's messages.
pub fn entity_messages(question: &str) -> Vec<Message> {
    vec![Message::user(format!(
        "A Python task to be solved with pymatgen follows.\n\n{}\n\n\
         Name the pymatgen classes, functions and modules (dotted names where you know them) \
         that the solution will need, at most {MAX_ENTITIES}. Answer with only a JSON object: \
         {{\"entities\": [\"...\"]}}",
        question.trim_end()
    ))]
}

/// Step 2's messages.
pub fn decomposition_messages(question: &str) -> Vec<Message> {
    vec![Message::user(format!(
        "A Python task to be solved with pymatgen follows.\n\n{}\n\n\
         Split it into at most {MAX_QUERIES} short sub-questions, each a search query for the \
         pymatgen documentation (one step of the solution each). Answer with only a JSON \
         object: {{\"queries\": [\"...\"]}}",
        question.trim_end()
    ))]
}

/// Step 4's messages: the candidates numbered from 1.
pub fn rerank_messages(question: &str, candidates: &[DocEntry], keep: usize) -> Vec<Message> {
    let listed: Vec<String> = candidates
        .iter()
        .enumerate()
        .map(|(i, d)| format!("[{}] {}", i + 1, cut(&d.render(), CANDIDATE_CHARS)))
        .collect();
    vec![Message::user(format!(
        "A Python task to be solved with pymatgen follows.\n\n{}\n\n\
         Documentation entries found for it:\n\n{}\n\n\
         Choose the {keep} entries most useful for writing the solution, most useful first. \
         Answer with only a JSON object: {{\"ranking\": [numbers]}}",
        question.trim_end(),
        listed.join("\n\n")
    ))]
}

/// The strings of `key` in the reply's last JSON object that has it, trimmed, empty ones and
/// repeats dropped, at most `max`.
pub fn parse_list(reply: &str, key: &str, max: usize) -> Vec<String> {
    let Some(items) = last_object_with(reply, key) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let Some(s) = item.as_str().map(str::trim).filter(|s| !s.is_empty()) else {
            continue;
        };
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
        if out.len() == max {
            break;
        }
    }
    out
}

/// The reranker's order as indices into `n` candidates: its numbers (from 1) that name a
/// candidate, each once, then the candidates it left out in search order; `keep` of them.
pub fn parse_ranking(reply: &str, n: usize, keep: usize) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::new();
    for item in last_object_with(reply, "ranking").unwrap_or_default() {
        let number = item
            .as_u64()
            .or_else(|| item.as_str().and_then(|s| s.trim().parse().ok()));
        if let Some(i) = number
            .and_then(|k| usize::try_from(k).ok())
            .filter(|&k| (1..=n).contains(&k))
            .map(|k| k - 1)
        {
            if !order.contains(&i) {
                order.push(i);
            }
        }
    }
    order.extend((0..n).filter(|i| !order.contains(i)).collect::<Vec<_>>());
    order.truncate(keep);
    order
}

/// The searches' results merged: the first of each list, then the second of each, and so
/// on, each entry (by name) once, at most [`MAX_CANDIDATES`].
pub fn candidates(lists: &[Vec<DocEntry>]) -> Vec<DocEntry> {
    let mut out: Vec<DocEntry> = Vec::new();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    for rank in 0..longest {
        for list in lists {
            if let Some(entry) = list.get(rank) {
                if out.len() < MAX_CANDIDATES && !out.iter().any(|e| e.name == entry.name) {
                    out.push(entry.clone());
                }
            }
        }
    }
    out
}

/// The array under `key` in the last JSON object of `reply` that has one.
fn last_object_with(reply: &str, key: &str) -> Option<Vec<Value>> {
    let starts: Vec<usize> = reply.match_indices('{').map(|(i, _)| i).collect();
    starts.into_iter().rev().find_map(|start| {
        let mut stream = serde_json::Deserializer::from_str(&reply[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => v.get(key).and_then(Value::as_array).cloned(),
            _ => None,
        }
    })
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> DocEntry {
        DocEntry {
            name: name.into(),
            kind: "class".into(),
            signature: String::new(),
            doc: format!("about {name}"),
        }
    }

    #[test]
    fn lists_are_read_from_the_last_object_that_has_them() {
        let reply = "Thinking {\"x\": 1}\n```json\n{\"entities\": [\"Structure\", \" \", \
                     \"Structure\", \"pymatgen.analysis.defects.generators.VacancyGenerator\", 3]}\n```";
        assert_eq!(
            parse_list(reply, "entities", 6),
            vec![
                "Structure".to_string(),
                "pymatgen.analysis.defects.generators.VacancyGenerator".to_string()
            ]
        );
        assert!(parse_list("no JSON here", "queries", 4).is_empty());
        let many = "{\"queries\": [\"a\", \"b\", \"c\", \"d\", \"e\"]}";
        assert_eq!(parse_list(many, "queries", MAX_QUERIES).len(), 4);
    }

    #[test]
    fn the_ranking_keeps_valid_numbers_once_then_fills_in_search_order() {
        let reply = "{\"ranking\": [3, \"1\", 3, 9, 0, -2]}";
        assert_eq!(parse_ranking(reply, 5, 4), vec![2, 0, 1, 3]);
        assert_eq!(parse_ranking("nonsense", 3, 5), vec![0, 1, 2]);
    }

    #[test]
    fn candidates_interleave_the_searches_without_repeats() {
        let a = vec![entry("A1"), entry("A2"), entry("S")];
        let b = vec![entry("S"), entry("B2")];
        let c = vec![entry("C1")];
        let names: Vec<String> = candidates(&[a, b, c]).into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["A1", "S", "C1", "A2", "B2"]);
        let long: Vec<DocEntry> = (0..50).map(|i| entry(&format!("E{i}"))).collect();
        assert_eq!(candidates(&[long]).len(), MAX_CANDIDATES);
    }

    #[test]
    fn the_reranker_sees_numbered_candidates() {
        let m = rerank_messages("Compute X.", &[entry("A"), entry("B")], 5);
        let text = &m[0].content;
        assert!(
            text.contains("[1] class A") && text.contains("[2] class B"),
            "{text}"
        );
        assert!(text.contains("Choose the 5 entries"), "{text}");
    }
}
