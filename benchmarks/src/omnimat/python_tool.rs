//! OmniMatBench with code execution: **our own setting, not the benchmark's** (the reference
//! asks for an answer in one call). The model may run standard-library Python in the
//! embedded `wasm` sandbox before it answers: it writes one `<python>…</python>` block and
//! stops; the program's output comes back as `<output>…</output>`; after at most
//! [`MAX_RUNS`] runs it must answer. Every step is kept as a [`ToolRound`]. Results of this
//! setting are labelled with the agent's name ([`AGENT`]) and are not the paper's numbers.
//!
//! This module holds the pure parts (the instruction, reading a reply, the output message);
//! the server's `suites::omnimat::python_tool` makes the calls and the runs.

use serde::{Deserialize, Serialize};

use crate::task::{Message, Role, RunProgram, RunResult};

/// The agent's name in run specs (`atomworld run --agent python`).
pub const AGENT: &str = "python";

/// The most programs one answer may run.
pub const MAX_RUNS: usize = 3;

/// Wall-clock seconds and memory (MiB) of one run.
pub const RUN_SECONDS: u64 = 10;
/// Memory of one run (MiB).
pub const RUN_MEMORY_MB: u64 = 256;

/// The most characters of a run's output shown to the model (the rest is cut, and the
/// message says so).
pub const MAX_OUTPUT_CHARS: usize = 4_000;

/// What the model is told, after the benchmark's own system prompt.
pub const TOOL_NOTE: &str = "You can run Python before you answer. To run a program, \
reply with one block <python>\n...\n</python> and nothing after it; its output will come back \
as <output>...</output>. Only the standard library is available (no network, no packages), \
each run may take 10 seconds and 256 MB, and you may run at most 3 programs. Print what you \
need to see. When you are done, give your final answer in the required format.";

/// Sent instead of a fourth program's output.
pub const NO_MORE_RUNS: &str =
    "No more programs can be run. Give your final answer now, in the required format.";

/// The task's messages with [`TOOL_NOTE`] added to the system message (or as one, first).
pub fn with_tool(messages: &[Message]) -> Vec<Message> {
    let mut out = messages.to_vec();
    match out.iter_mut().find(|m| m.role == Role::System) {
        Some(system) => {
            system.content.push_str("\n\n");
            system.content.push_str(TOOL_NOTE);
        }
        None => out.insert(0, Message::system(TOOL_NOTE)),
    }
    out
}

/// The program a reply asks to run: the text of its first `<python>…</python>` block, when
/// the reply gives no `<answer>` (an answer ends the exchange, whatever else it holds).
pub fn program_of(reply: &str) -> Option<&str> {
    if reply.contains("<answer>") {
        return None;
    }
    let start = reply.find("<python>")? + "<python>".len();
    let end = reply[start..].find("</python>")? + start;
    Some(reply[start..end].trim_matches('\n'))
}

/// The sandbox program that runs `code`.
pub fn run_program(code: &str) -> RunProgram {
    RunProgram {
        code: code.to_string(),
        files: Vec::new(),
        data_links: Vec::new(),
        wall_secs: RUN_SECONDS,
        memory_mb: RUN_MEMORY_MB,
        output_bytes: 0,
    }
}

/// The message that gives a run's result back to the model: stdout, then stderr, cut to
/// [`MAX_OUTPUT_CHARS`], and how the program ended when it did not exit with 0.
pub fn output_message(run: &RunResult) -> Message {
    let mut text = run.stdout.clone();
    if !run.stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&run.stderr);
    }
    if let Some((cut, _)) = text.char_indices().nth(MAX_OUTPUT_CHARS) {
        text.truncate(cut);
        text.push_str("\n[output cut]");
    }
    let end = match (&run.stopped_by, run.exit_code) {
        (Some(limit), _) => format!("\n[stopped: {limit}]"),
        (None, Some(0)) => String::new(),
        (None, Some(code)) => format!("\n[exit status {code}]"),
        (None, None) => "\n[stopped]".to_string(),
    };
    Message::user(format!("<output>\n{text}{end}\n</output>"))
}

/// An assistant message (a reply put back into the conversation).
pub fn assistant(reply: &str) -> Message {
    Message::assistant(reply)
}

/// One step of an answer, as stored with the result: the model's reply and, when it asked
/// for one, the program and how its run went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolRound {
    /// The step's number (from 1).
    pub number: usize,
    /// The model's reply.
    pub reply: String,
    /// The program the reply asked to run, if any.
    pub code: Option<String>,
    /// Its run, when it ran.
    pub run: Option<RunResult>,
    /// Why it did not run (the sandbox failed, or no runs were left).
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_runs_its_first_program_unless_it_answers() {
        assert_eq!(
            program_of("Let me compute.\n<python>\nprint(6*7)\n</python>"),
            Some("print(6*7)")
        );
        assert_eq!(
            program_of("<python>a=1</python><python>b=2</python>"),
            Some("a=1")
        );
        assert_eq!(program_of("<answer>42</answer> <python>x</python>"), None);
        assert_eq!(program_of("<python>unterminated"), None);
        assert_eq!(program_of("just text"), None);
    }

    #[test]
    fn the_note_joins_the_system_message() {
        let m = with_tool(&[Message::system("Be exact."), Message::user("Q")]);
        assert_eq!(m.len(), 2);
        assert!(m[0].content.starts_with("Be exact.\n\nYou can run Python"));
        let m = with_tool(&[Message::user("Q")]);
        assert_eq!((m.len(), m[0].role), (2, Role::System));
    }

    #[test]
    fn output_says_how_the_program_ended_and_is_cut() {
        let ok = RunResult {
            stdout: "42\n".into(),
            exit_code: Some(0),
            ..RunResult::default()
        };
        assert_eq!(output_message(&ok).content, "<output>\n42\n\n</output>");
        let failed = RunResult {
            stderr: "ZeroDivisionError".into(),
            exit_code: Some(1),
            ..RunResult::default()
        };
        assert!(output_message(&failed)
            .content
            .ends_with("ZeroDivisionError\n[exit status 1]\n</output>"));
        let long = RunResult {
            stdout: "x".repeat(MAX_OUTPUT_CHARS + 10),
            stopped_by: Some("timed_out".into()),
            ..RunResult::default()
        };
        let text = output_message(&long).content;
        assert!(text.contains("[output cut]") && text.contains("[stopped: timed_out]"));
    }
}
