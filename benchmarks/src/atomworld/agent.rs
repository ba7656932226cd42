//! The tool-augmented agent of the AtomWorld paper (its Appendix C: retrieval over pymatgen's
//! documentation, then code that carries out the action, run on the input CIF), as we build
//! it: the documentation is the index of the pinned pymatgen that MatTools' agents search;
//! the program runs in the pymatgen sandbox with the input as `input.cif` and must write
//! `output.cif`; the structure it writes is the answer, scored as any AtomWorld answer. The
//! paper prints neither its prompt nor how often the agent may retry: the instruction below
//! and the [`MAX_ATTEMPTS`] attempts (a failed program's error is shown to the next) are
//! ours, and its results are labelled with the agent's name ([`AGENT`]).
//!
//! This module holds the pure parts; the server's `suites::atomworld` makes the calls, the
//! searches and the runs.

use serde::{Deserialize, Serialize};

use super::evaluate::cif_answer;
use crate::mattools::code::agent::DocEntry;
use crate::task::{Message, RunEnv, RunProgram, RunResult};

/// The agent's name (`atomworld run --agent pymatgen`).
pub const AGENT: &str = "pymatgen";

/// Programs one answer may write (the first, and one per failure after it).
pub const MAX_ATTEMPTS: usize = 3;

/// Documentation entries shown with each attempt.
pub const TOP_K: usize = 5;

/// Wall-clock seconds of one program (pymatgen's import alone takes 4-6 s here).
pub const RUN_SECONDS: u64 = 60;

/// Memory of one program (MiB).
pub const RUN_MEMORY_MB: u64 = 1024;

/// The sandbox the programs run in.
pub const ENV: RunEnv = RunEnv::Pymatgen;

/// The line before the written structure in a run's output.
const OUTPUT_MARKER: &str = "=====ATOMWORLD OUTPUT.CIF=====";

/// The most characters of a failed run's output shown to the next attempt.
const MAX_SHOWN_CHARS: usize = 3_000;

/// The instruction (ours), before the documentation, the input and the action.
const INSTRUCTION: &str = "You are a crystallography expert who edits crystal structures \
with pymatgen. The input structure is the file input.cif in the working directory; its text \
is below. Write one Python program that reads it with pymatgen, carries out the action exactly \
as stated, and writes the resulting structure to output.cif with pymatgen.io.cif.CifWriter. \
Atom indices start at 0 and follow the order of the sites in the file; keep every site the \
action does not touch and the order of the sites. Positions, vectors and axes in the action are \
Cartesian, in angstrom, in the frame where lattice vector a lies along +x and b in the xy-plane \
(ASE's cellpar_to_cell); pymatgen's Lattice.from_parameters puts c along z instead, so convert \
or work in fractional coordinates. Reply with the program in one ```python block.";

/// One attempt, as stored with the result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// The attempt's number (from 1).
    pub number: usize,
    /// The documentation entries shown, by name.
    pub retrieved: Vec<String>,
    /// How they were found (`bm25`, `embeddings:<model>`).
    pub search: String,
    /// The model's reply.
    pub reply: String,
    /// The program it holds, if any.
    pub code: Option<String>,
    /// Its run, when it ran.
    pub run: Option<RunResult>,
    /// The structure it wrote, when it wrote one.
    pub written: Option<String>,
    /// What went wrong (no program, the sandbox failed, nothing written).
    pub error: Option<String>,
}

/// The messages of an attempt: the instruction, the documentation found, the input and the
/// action, and after a failed attempt its program and what went wrong.
pub fn messages(
    input_cif: &str,
    action_prompt: &str,
    docs: &[DocEntry],
    previous: Option<&Attempt>,
) -> Vec<Message> {
    let mut text = format!("{INSTRUCTION}\n\n");
    if !docs.is_empty() {
        text.push_str("Documentation of the installed pymatgen that may help:\n");
        for d in docs {
            text.push_str(&d.render());
            text.push('\n');
        }
        text.push('\n');
    }
    text.push_str(&format!(
        "Input CIF (input.cif):\n{input_cif}\n\nAction: {action_prompt}\n"
    ));
    if let Some(p) = previous {
        text.push_str(&format!(
            "\nYour previous program failed.\n```python\n{}\n```\nWhat went wrong:\n{}\n\
             Write a corrected program.\n",
            p.code.as_deref().unwrap_or(""),
            failure_text(p)
        ));
    }
    vec![Message::user(text)]
}

/// What a failed attempt's next prompt says went wrong: the error, then the run's output
/// (cut to its last [`MAX_SHOWN_CHARS`] characters, where a traceback ends).
fn failure_text(a: &Attempt) -> String {
    let mut out = a.error.clone().unwrap_or_default();
    if let Some(run) = &a.run {
        let both = format!("{}{}", run.stdout, run.stderr);
        let skip = both.chars().count().saturating_sub(MAX_SHOWN_CHARS);
        let tail: String = both.chars().skip(skip).collect();
        if !tail.trim().is_empty() {
            out.push('\n');
            out.push_str(tail.trim_end());
        }
    }
    out
}

/// The program of a reply: its first ```python block (or first fenced block).
pub fn code_of(reply: &str) -> Option<&str> {
    let start = reply
        .find("```python")
        .map(|i| i + "```python".len())
        .or_else(|| reply.find("```").map(|i| i + 3))?;
    let end = reply[start..].find("```")? + start;
    let code = reply[start..end].trim_matches(|c| c == '\n' || c == '\r');
    (!code.trim().is_empty()).then_some(code)
}

/// The sandbox program that runs `code` (as `answer.py`, beside `input.cif`) and prints what
/// it wrote to `output.cif` after a marker line.
pub fn program(code: &str, input_cif: &str) -> RunProgram {
    let runner = format!(
        "import os, runpy, sys\n\
         status = 0\n\
         try:\n    runpy.run_path('answer.py', run_name='__main__')\n\
         except SystemExit as e:\n    status = e.code if isinstance(e.code, int) else 0\n\
         sys.stdout.flush()\n\
         if os.path.exists('output.cif'):\n\
         \x20   print({OUTPUT_MARKER:?})\n\
         \x20   print(open('output.cif').read())\n\
         sys.exit(status)\n"
    );
    RunProgram {
        code: runner,
        files: vec![
            ("answer.py".into(), code.to_string()),
            ("input.cif".into(), input_cif.to_string()),
        ],
        data_links: Vec::new(),
        wall_secs: RUN_SECONDS,
        memory_mb: RUN_MEMORY_MB,
        output_bytes: 0,
    }
}

/// The structure a run wrote (the text after the marker), when it ended well and wrote one.
pub fn written(run: &RunResult) -> Result<String, String> {
    if let Some(limit) = &run.stopped_by {
        return Err(format!("the program was stopped: {limit}"));
    }
    if run.exit_code != Some(0) {
        return Err(format!(
            "the program failed (exit status {})",
            run.exit_code.map_or("none".into(), |c| c.to_string())
        ));
    }
    let at = run
        .stdout
        .rfind(OUTPUT_MARKER)
        .ok_or("the program wrote no output.cif")?;
    let cif = run.stdout[at + OUTPUT_MARKER.len()..].trim();
    if cif.is_empty() {
        return Err("output.cif is empty".into());
    }
    Ok(cif.to_string())
}

/// The answer the agent gives: the structure written, as a model's answer would carry it.
pub fn answer(cif: &str) -> String {
    cif_answer(cif)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_program_and_what_it_wrote() {
        let reply = "Here:\n```python\nprint(1)\n```\nand ```python\nprint(2)\n```";
        assert_eq!(code_of(reply), Some("print(1)"));
        assert_eq!(code_of("```\nx = 1\n```"), Some("x = 1"));
        assert_eq!(code_of("no code"), None);
        assert_eq!(code_of("```python\n\n```"), None);
        let run = RunResult {
            stdout: format!("chatter\n{OUTPUT_MARKER}\ndata_x\n_cell_length_a 3\n\n"),
            exit_code: Some(0),
            ..RunResult::default()
        };
        assert_eq!(written(&run).unwrap(), "data_x\n_cell_length_a 3");
        let failed = RunResult {
            exit_code: Some(1),
            ..run.clone()
        };
        assert!(written(&failed).unwrap_err().contains("exit status 1"));
        let silent = RunResult {
            stdout: "nothing".into(),
            ..run
        };
        assert_eq!(
            written(&silent).unwrap_err(),
            "the program wrote no output.cif"
        );
        let p = program("print(1)", "data_x");
        assert_eq!(p.files[0], ("answer.py".into(), "print(1)".into()));
        assert!(p.code.contains(OUTPUT_MARKER));
    }

    #[test]
    fn a_retry_shows_the_failed_program_and_its_error() {
        let failed = Attempt {
            number: 1,
            code: Some("boom()".into()),
            run: Some(RunResult {
                stderr: "NameError: name 'boom' is not defined".into(),
                exit_code: Some(1),
                ..RunResult::default()
            }),
            error: Some("the program failed (exit status 1)".into()),
            ..Attempt::default()
        };
        let m = messages("data_x", "Move the atom", &[], Some(&failed));
        let text = &m[0].content;
        assert!(text.starts_with(INSTRUCTION));
        assert!(text.contains("```python\nboom()\n```"));
        assert!(text.contains("NameError: name 'boom' is not defined"));
        assert!(text.contains("Action: Move the atom"));
    }
}
