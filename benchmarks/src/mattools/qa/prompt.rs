//! The message a model receives for a QA task.
//!
//! The spec fixes the rule (answer with only the letter inside `<answer></answer>`), not the
//! text: every word of [`question_prompt`] is ours ([`PROMPT_ORIGIN`] =
//! [`PromptOrigin::Ours`]), so accuracies measured with it are close to, but not strictly
//! comparable with, the paper's. Like the reference, the task is one user message and the model
//! sees no documentation: the question is asked closed-book.

use super::item::{Letter, QaTask};
use crate::probes::PromptOrigin;

/// Where the prompt's wording comes from: written for this project.
pub const PROMPT_ORIGIN: PromptOrigin = PromptOrigin::Ours;

/// The one user message for `task`: the question, the four choices on lines of their own
/// (`A. …`), and the answer rule.
pub fn question_prompt(task: &QaTask) -> String {
    let mut text = String::from(
        "The following is a multiple-choice question about pymatgen (Python Materials \
         Genomics), the Python library for materials analysis. Exactly one choice is \
         correct.\n\n",
    );
    text.push_str("Question: ");
    text.push_str(task.question.trim());
    text.push_str("\n\n");
    for letter in Letter::ALL {
        text.push_str(letter.as_str());
        text.push_str(". ");
        text.push_str(task.choices.get(letter).trim());
        text.push('\n');
    }
    text.push_str(
        "\nReply with the letter of the correct choice only, inside answer tags: \
         <answer>X</answer>, where X is A, B, C or D. Write nothing else: no explanation, \
         no other text before or after the tags.",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mattools::qa::item::QaChoices;

    #[test]
    fn prompt_lists_choices_and_the_rule() {
        let task = QaTask {
            id: "f/0/1".into(),
            file: "f".into(),
            source: String::new(),
            question: "What does `Element(\"Fe\").Z` return? ".into(),
            choices: QaChoices {
                a: "26".into(),
                b: "55.845".into(),
                c: "\"Fe\"".into(),
                d: "8".into(),
            },
            correct_answer: Letter::A,
        };
        let p = question_prompt(&task);
        assert!(p.contains("Question: What does `Element(\"Fe\").Z` return?\n\nA. 26\nB. 55.845\nC. \"Fe\"\nD. 8\n"));
        assert!(p.contains("<answer>X</answer>"));
        assert!(!p.contains("f/0/1"), "the id is not shown");
    }
}
