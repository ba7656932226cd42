//! The agents that answer tool-usage tasks, as pure parts: their prompts, the critic's reply,
//! and when the self-reflection loop stops. The server runs the loop (model calls, sandbox
//! runs, documentation search) and stores every round.
//!
//! - `single`: one call with the task's prompt.
//! - `rag`: one call with the top [`TOP_K`] documentation entries for the question added.
//! - `reflect`: up to [`MAX_ROUNDS`] rounds of retrieve, generate, run; it stops when the code
//!   returns a dict with no `None` value; otherwise a critic call gives feedback and a new
//!   search query. Unlike the reference's published code, the run's output and the critique
//!   do reach the next generation (the MatTools reference code, `Grenzlinie/MatTools`).
//! - `rag-code`, `reflect-code`: the same, retrieving chunks of the pinned stack's source code
//!   (the paper's code-chunk source: 1,000 characters, 50 overlapping) instead of its
//!   documentation ([`DocSource`]).
//! - `rag-model-doc`, `reflect-model-doc`: the same, retrieving the documentation a model
//!   wrote from the source code (the paper's LLM-doc source, [`super::model_docs`]).
//! - `agentic`: the paper's agentic RAG: entities and sub-questions from the model, a search
//!   for each, the model's reranking of what was found, then one generation
//!   ([`super::agentic`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::harness::{marked, RESULT_MARKER};
use super::prompt::ANSWER_FORMAT;
use crate::task::{Message, RunResult};

/// Documentation entries retrieved per round.
pub const TOP_K: usize = 5;
/// Most rounds of the self-reflection agent.
pub const MAX_ROUNDS: usize = 5;
/// Most characters of a round's run output shown to the next generation.
const OUTPUT_SHOWN: usize = 3000;

/// Which agent answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// One call with the task's prompt.
    #[default]
    Single,
    /// One call with retrieved documentation.
    Rag,
    /// The self-reflection loop.
    Reflect,
    /// One call with retrieved chunks of source code.
    RagCode,
    /// The self-reflection loop over chunks of source code.
    ReflectCode,
    /// One call with retrieved model-written documentation.
    RagModelDoc,
    /// The self-reflection loop over model-written documentation.
    ReflectModelDoc,
    /// Entity extraction, query decomposition and reranking, then one call.
    Agentic,
}

/// What a retrieving agent searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DocSource {
    /// The pinned stack's documentation: signatures and docstrings of its public API.
    Documentation,
    /// The pinned stack's source code cut into chunks of 1,000 characters overlapping by 50
    /// (the paper's code-chunk retrieval source).
    CodeChunks,
    /// Documentation a model wrote from each object's source code (the paper's LLM-doc
    /// source; written once by `atomworld prepare`).
    ModelWritten,
}

impl AgentKind {
    /// Every agent, in the order the CLI lists them.
    pub const ALL: [AgentKind; 8] = [
        AgentKind::Single,
        AgentKind::Rag,
        AgentKind::Reflect,
        AgentKind::RagCode,
        AgentKind::ReflectCode,
        AgentKind::RagModelDoc,
        AgentKind::ReflectModelDoc,
        AgentKind::Agentic,
    ];

    /// The name the CLI and the API use.
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Single => "single",
            AgentKind::Rag => "rag",
            AgentKind::Reflect => "reflect",
            AgentKind::RagCode => "rag-code",
            AgentKind::ReflectCode => "reflect-code",
            AgentKind::RagModelDoc => "rag-model-doc",
            AgentKind::ReflectModelDoc => "reflect-model-doc",
            AgentKind::Agentic => "agentic",
        }
    }

    /// The agent called `name`.
    pub fn from_name(name: &str) -> Option<AgentKind> {
        AgentKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What the agent retrieves from; `None` when it retrieves nothing.
    pub fn source(self) -> Option<DocSource> {
        match self {
            AgentKind::Single => None,
            AgentKind::Rag | AgentKind::Reflect | AgentKind::Agentic => {
                Some(DocSource::Documentation)
            }
            AgentKind::RagCode | AgentKind::ReflectCode => Some(DocSource::CodeChunks),
            AgentKind::RagModelDoc | AgentKind::ReflectModelDoc => Some(DocSource::ModelWritten),
        }
    }

    /// Whether the agent runs the self-reflection loop.
    pub fn reflects(self) -> bool {
        matches!(
            self,
            AgentKind::Reflect | AgentKind::ReflectCode | AgentKind::ReflectModelDoc
        )
    }
}

/// The kind of an entry that is a chunk of source code (`path:offset` its name).
pub const CODE_KIND: &str = "code";

/// One documentation entry (a module, class or function of the pinned stack), or a chunk of
/// its source code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocEntry {
    /// Dotted name (`pymatgen.core.structure.Structure.from_file`).
    pub name: String,
    /// `module`, `class`, `function`, `method`, `property`, or [`CODE_KIND`].
    pub kind: String,
    /// The call signature, when there is one.
    #[serde(default)]
    pub signature: String,
    /// The docstring (cut).
    #[serde(default)]
    pub doc: String,
}

impl DocEntry {
    /// The text a search indexes: the name's parts, the signature and the docstring.
    pub fn search_text(&self) -> String {
        format!("{} {} {}", self.name, self.signature, self.doc)
    }

    /// The entry as a prompt shows it: a chunk of code under a comment naming its file and
    /// offset, any other entry as its kind, name and signature over its indented docstring.
    pub fn render(&self) -> String {
        if self.kind == CODE_KIND {
            return format!("# {}\n{}", self.name, self.doc);
        }
        let head = format!("{} {}{}", self.kind, self.name, self.signature);
        if self.doc.trim().is_empty() {
            head
        } else {
            format!("{head}\n    {}", self.doc.trim().replace('\n', "\n    "))
        }
    }
}

/// The critic's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Critique {
    /// What is wrong and what to change.
    pub feedback: String,
    /// The next documentation search.
    pub query: String,
}

/// One round of an agent, as stored with the result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The round's number (from 1).
    pub number: usize,
    /// The search query (the question in round 1, the critic's query after).
    pub query: String,
    /// The names of the entries retrieved.
    pub retrieved: Vec<String>,
    /// How they were found: `bm25`, or `embeddings:<model>` (the configured embeddings
    /// model's cosine ranking); empty when the agent does not search.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub search: String,
    /// The messages sent to the model.
    pub prompt: Vec<Message>,
    /// The model's reply.
    pub response: String,
    /// The code's run (absent when no code could be extracted or the agent does not run).
    pub run: Option<RunResult>,
    /// Whether the run returned a dict with no `None` value (the loop's stop condition).
    pub complete: bool,
    /// The critic's answer (absent in the last round).
    pub critique: Option<Critique>,
    /// Why the round ended early (the model failed, no code), if it did.
    #[serde(default)]
    pub error: Option<String>,
    /// The planning and reranking calls before the generation (the `agentic` agent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<super::agentic::Step>,
}

/// Whether stage 1's run returned a non-empty dict with no `None` value (tagged JSON).
pub fn complete(run: &RunResult) -> bool {
    if run.exit_code != Some(0) {
        return false;
    }
    let Some((_, value)) = marked(&run.stdout, RESULT_MARKER) else {
        return false;
    };
    let Some(pairs) = value.get("$dict").and_then(Value::as_array) else {
        return false;
    };
    !pairs.is_empty()
        && pairs.iter().all(|p| {
            p.as_array()
                .and_then(|p| p.get(1))
                .is_some_and(|v| !v.is_null())
        })
}

fn docs_block(docs: &[DocEntry]) -> String {
    if docs.is_empty() {
        return String::new();
    }
    let entries: Vec<String> = docs.iter().map(DocEntry::render).collect();
    let what = if docs.iter().all(|d| d.kind == CODE_KIND) {
        "Source code"
    } else {
        "Documentation"
    };
    format!(
        "{what} of the installed pymatgen that may help:\n\n{}\n\n",
        entries.join("\n\n")
    )
}

fn cut_tail(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let tail: String = text.chars().skip(n - max).collect();
    format!("…{tail}")
}

/// What a run printed, as the next prompt shows it (the harness's own lines removed).
pub fn shown_output(run: &RunResult) -> String {
    let printed = super::harness::printed(&run.stdout);
    let mut out = String::new();
    if !printed.trim().is_empty() {
        out.push_str(&format!(
            "stdout:\n{}\n",
            cut_tail(printed.trim_end(), OUTPUT_SHOWN)
        ));
    }
    if !run.stderr.trim().is_empty() {
        out.push_str(&format!(
            "stderr:\n{}\n",
            cut_tail(run.stderr.trim_end(), OUTPUT_SHOWN)
        ));
    }
    if let Some((_, value)) = marked(&run.stdout, RESULT_MARKER) {
        out.push_str(&format!(
            "returned: {}\n",
            super::harness::python_repr(&value)
        ));
    }
    if let Some(limit) = &run.stopped_by {
        out.push_str(&format!("stopped by the sandbox: {limit}\n"));
    }
    if out.is_empty() {
        out.push_str("(no output)\n");
    }
    out
}

/// The generator's messages: the question, retrieved documentation, and (after round 1) the
/// previous attempt, its output and the critique.
pub fn generation_messages(
    question: &str,
    docs: &[DocEntry],
    previous: Option<&Round>,
) -> Vec<Message> {
    let mut text = format!("{}\n\n", question.trim_end());
    text.push_str(&docs_block(docs));
    if let Some(p) = previous {
        text.push_str("Your previous attempt:\n\n");
        text.push_str(&p.response);
        text.push_str("\n\nWhat it did in the sandbox:\n");
        match &p.run {
            Some(run) => text.push_str(&shown_output(run)),
            None => text.push_str(p.error.as_deref().unwrap_or("it did not run")),
        }
        if let Some(c) = &p.critique {
            text.push_str(&format!(
                "\nA reviewer's feedback:\n{}\n",
                c.feedback.trim()
            ));
        }
        text.push_str("\nWrite a corrected version.\n\n");
    }
    text.push_str(ANSWER_FORMAT);
    vec![Message::user(text)]
}

/// The critic's messages for a round whose code did not complete.
pub fn critic_messages(question: &str, round: &Round) -> Vec<Message> {
    let ran = match &round.run {
        Some(run) => shown_output(run),
        None => round
            .error
            .clone()
            .unwrap_or_else(|| "it did not run".into()),
    };
    vec![Message::user(format!(
        "You review Python code written with pymatgen for this task:\n\n{}\n\n\
         The code:\n\n{}\n\nWhat it did in the sandbox:\n{}\n\
         Every property must be computed (no None values). Say briefly what is wrong and how \
         to fix it, and give a short search query for the pymatgen documentation that would \
         help. Answer with only a JSON object: {{\"feedback\": \"...\", \"query\": \"...\"}}",
        question.trim_end(),
        round.response.trim(),
        ran
    ))]
}

/// Reads the critic's reply: the last JSON object with `feedback` (and `query`); a reply
/// that is not JSON is taken whole as the feedback, with the question as the query.
pub fn parse_critique(text: &str, question: &str) -> Critique {
    let mut starts: Vec<usize> = text.match_indices('{').map(|(i, _)| i).collect();
    starts.reverse();
    for start in starts {
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = stream.next() {
            let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
            if let Some(feedback) = field("feedback") {
                return Critique {
                    feedback,
                    query: field("query")
                        .filter(|q| !q.trim().is_empty())
                        .unwrap_or_else(|| question.to_string()),
                };
            }
        }
    }
    Critique {
        feedback: text.trim().to_string(),
        query: question.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stdout: &str, stderr: &str, exit: i32) -> RunResult {
        RunResult {
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit_code: Some(exit),
            ..RunResult::default()
        }
    }

    #[test]
    fn the_loop_stops_on_a_dict_without_none() {
        assert!(complete(&run(
            "\x1eAWRESULT {\"$dict\": [[\"a\", 1]]}\n",
            "",
            0
        )));
        assert!(!complete(&run(
            "\x1eAWRESULT {\"$dict\": [[\"a\", null]]}\n",
            "",
            0
        )));
        assert!(!complete(&run("\x1eAWRESULT {\"$dict\": []}\n", "", 0)));
        assert!(!complete(&run("", "AttributeError: x\n", 1)));
    }

    #[test]
    fn the_next_prompt_carries_the_output_and_the_critique() {
        let previous = Round {
            number: 1,
            response: "<answer><code>x</code><name>f</name></answer>".into(),
            run: Some(run(
                "hello\n",
                "Traceback\nAttributeError: 'Structure' object has no attribute 'foo'\n",
                1,
            )),
            critique: Some(Critique {
                feedback: "Use get_defects, not foo.".into(),
                query: "defects".into(),
            }),
            ..Round::default()
        };
        let docs = [DocEntry {
            name: "pymatgen.core.Structure".into(),
            kind: "class".into(),
            signature: "(lattice, species, coords)".into(),
            doc: "A structure.".into(),
        }];
        let m = generation_messages("Compute x.", &docs, Some(&previous));
        let text = &m[0].content;
        for needle in [
            "Compute x.",
            "class pymatgen.core.Structure(lattice, species, coords)",
            "AttributeError: 'Structure' object has no attribute 'foo'",
            "Use get_defects, not foo.",
            "stdout:\nhello",
            "<name>function_name</name>",
        ] {
            assert!(text.contains(needle), "{needle} missing in {text}");
        }
        let first = generation_messages("Compute x.", &[], None);
        assert!(!first[0].content.contains("previous attempt"));
    }

    #[test]
    fn critiques_are_read_tolerantly() {
        let c = parse_critique(
            "Sure.\n```json\n{\"feedback\": \"f\", \"query\": \"q\"}\n```",
            "question",
        );
        assert_eq!((c.feedback.as_str(), c.query.as_str()), ("f", "q"));
        let c = parse_critique("{\"feedback\": \"only\"}", "question");
        assert_eq!(c.query, "question");
        let c = parse_critique("plain words", "question");
        assert_eq!(
            (c.feedback.as_str(), c.query.as_str()),
            ("plain words", "question")
        );
        assert_eq!(AgentKind::from_name("reflect"), Some(AgentKind::Reflect));
    }

    #[test]
    fn code_chunks_are_shown_as_code_under_their_file() {
        let chunk = DocEntry {
            name: "pymatgen/core/structure.py:950".into(),
            kind: CODE_KIND.into(),
            signature: String::new(),
            doc: "    def copy(self):\n        return self".into(),
        };
        assert_eq!(
            chunk.render(),
            "# pymatgen/core/structure.py:950\n    def copy(self):\n        return self"
        );
        let text = &generation_messages("Q", std::slice::from_ref(&chunk), None)[0].content;
        assert!(
            text.contains("Source code of the installed pymatgen that may help:"),
            "{text}"
        );
        assert_eq!(
            AgentKind::from_name("reflect-code"),
            Some(AgentKind::ReflectCode)
        );
        assert_eq!(AgentKind::RagCode.source(), Some(DocSource::CodeChunks));
        assert_eq!(AgentKind::Rag.source(), Some(DocSource::Documentation));
        assert_eq!(AgentKind::Single.source(), None);
        assert!(AgentKind::ReflectCode.reflects() && !AgentKind::RagCode.reflects());
    }
}
