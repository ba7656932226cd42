//! The prompt of a tool-usage task: the reference's question text, then the answer format.
//!
//! The question is `question.txt` unchanged. The answer-format paragraph is our wording of
//! the reference's format (the MatTools reference code, `Grenzlinie/MatTools`: the code inside `<code>` as a fenced
//! Python block, the function's name inside `<name>`, both inside `<answer>`); the
//! reference's exact wrapper text is not part of the data we have.

use crate::task::Message;

/// The answer-format paragraph appended to every question.
pub const ANSWER_FORMAT: &str = "Answer with the complete Python code and the name of the \
function to call, in exactly this form:\n\
<answer><code>```python\n# imports and the function\n```</code><name>function_name</name></answer>\n\
The function takes no arguments and returns the dictionary of properties.";

/// The messages a model receives for `question`.
pub fn messages(question: &str) -> Vec<Message> {
    vec![Message::user(format!(
        "{}\n\n{ANSWER_FORMAT}",
        question.trim_end()
    ))]
}
