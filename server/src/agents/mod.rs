//! What every suite's agents share: an agent answers a task in several steps (model calls,
//! sandbox runs, searches), each round returned to be stored with the result, and it calls
//! the world only through [`Effects`]. The agents themselves live with their suites
//! (`suites::mattools::agents`, `suites::omnimat::python_tool`).

use std::sync::Arc;

use crate::execution::CodeRunner;
use crate::llm::spend::Budget;
use crate::llm::{Completion, Gateway};

/// An agent's final answer, its rounds and what its calls cost together.
#[derive(Clone, Debug)]
pub struct AgentAnswer<R> {
    /// The last generation's reply (what is scored).
    pub response: String,
    /// Every round.
    pub rounds: Vec<R>,
    /// Tokens and cost of every call (generations and critiques).
    pub input_tokens: u64,
    /// Output tokens of every call.
    pub output_tokens: u64,
    /// Cost of every call.
    pub cost_usd: f64,
    /// Whether every call came from the cache.
    pub cached: bool,
}

impl<R> Default for AgentAnswer<R> {
    fn default() -> Self {
        Self {
            response: String::new(),
            rounds: Vec::new(),
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            cached: false,
        }
    }
}

impl<R> AgentAnswer<R> {
    /// Count call `c` into the answer's tokens, cost and caching.
    pub fn add(&mut self, c: &Completion) {
        self.input_tokens += c.input_tokens;
        self.output_tokens += c.output_tokens;
        self.cost_usd += c.cost_usd;
        self.cached &= c.cached;
    }
}

/// What an agent calls.
pub struct Effects<'a> {
    /// Model calls.
    pub gateway: &'a Gateway,
    /// The run's spend budget, if capped.
    pub budget: Option<&'a Arc<Budget>>,
    /// The sandboxes (and the documentation store).
    pub code: &'a CodeRunner,
    /// The embeddings model that searches the documentation; `None`: BM25.
    pub embeddings: Option<&'a str>,
}
