//! OmniMatBench with code execution (our own setting; see `benchmarks::omnimat::python_tool`): the
//! model may run up to three standard-library Python programs in the `python` (wasm)
//! sandbox before it answers. A model call that fails ends the answer with the error; a run
//! the sandbox cannot make is told to the model as such, and the exchange goes on.

use benchmarks::omnimat::python_tool::{
    assistant, output_message, program_of, run_program, with_tool, ToolRound, MAX_RUNS,
    NO_MORE_RUNS,
};
use benchmarks::task::{Message, RunEnv};

use crate::agents::{AgentAnswer, Effects};
use crate::llm::LlmError;

/// Answers the task given by its `messages` with `model`, running the programs it asks for.
pub async fn answer(
    model: &str,
    messages: &[Message],
    sample: u32,
    fx: &Effects<'_>,
) -> Result<AgentAnswer<ToolRound>, LlmError> {
    let mut out = AgentAnswer::<ToolRound> {
        cached: true,
        ..AgentAnswer::default()
    };
    let mut conversation = with_tool(messages);
    // MAX_RUNS programs, then one more call for the answer.
    for number in 1..=MAX_RUNS + 1 {
        let c = fx
            .gateway
            .complete_within(model, &conversation, sample, fx.budget)
            .await?;
        out.add(&c);
        out.response = c.text.clone();
        let mut round = ToolRound {
            number,
            reply: c.text.clone(),
            ..ToolRound::default()
        };
        let Some(code) = program_of(&c.text) else {
            out.rounds.push(round);
            break;
        };
        round.code = Some(code.to_string());
        conversation.push(assistant(&c.text));
        if number > MAX_RUNS {
            round.error = Some("no runs left".into());
            out.rounds.push(round);
            break;
        }
        let reply = match fx.code.run_need(RunEnv::Python, &run_program(code)).await {
            Ok(run) => {
                let message = output_message(&run);
                round.run = Some(run);
                message
            }
            Err(e) => {
                let why = format!("the sandbox could not run it: {e}");
                round.error = Some(why.clone());
                // The run was cancelled: no more rounds (each would be a paid model call).
                if fx.code.is_cancelled() {
                    out.rounds.push(round);
                    break;
                }
                Message::user(format!("<output>\n[not run: {why}]\n</output>"))
            }
        };
        conversation.push(if number == MAX_RUNS {
            Message::user(format!("{}\n{NO_MORE_RUNS}", reply.content))
        } else {
            reply
        });
        out.rounds.push(round);
    }
    Ok(out)
}
