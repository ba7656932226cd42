//! What the model is asked: a system message and the question, for QA and CAL.
//!
//! The first sentence of each system text and the CAL format-constraint block are the
//! reference's; the tag instructions around them are our wording of the same request
//! (`<think>…</think>`, then `<answer>…</answer>`). A multimodal item's images follow the
//! user message's text (after CAL's format constraint), in the order `image_url` lists their
//! stems, as the reference sends them; an item whose images are unavailable gets the text
//! only here, and runs never send it (see [`super::images`]).

use crate::task::Message;

use super::item::{CalItem, QaItem};

/// The QA system message.
pub const QA_SYSTEM: &str = "You are a materials science expert. Answer the question clearly and accurately.\n\nReply in two parts, exactly:\n<think>your step-by-step reasoning</think>\n<answer>a concise final answer that addresses the question directly</answer>";

/// The CAL system message.
pub const CAL_SYSTEM: &str = "You are a materials science expert. Solve the calculation accurately.\n\nReply in two parts, exactly:\n<think>your step-by-step reasoning</think>\n<answer>only the final answer</answer>\n\nWhen a final_answer_format is given, the content of <answer> must follow it exactly: the same grouping, order and number of slots. Fill each empty-string slot with one final number, expression or formula, and nothing else.";

/// The one reminder a runner may add (once) when an answer has no `<answer>`.
pub const ANSWER_REMINDER: &str = "\n\nYour previous reply did not follow the required format. Reply again with <think>...</think> and then <answer>...</answer>.";

/// The reference's `max_tokens` for CAL answers.
pub const CAL_MAX_TOKENS: u32 = 32768;

/// JSON as Python's `json.dumps(value, ensure_ascii=False)` writes it (", " and ": "
/// separators), for the format constraint.
pub fn py_dumps(v: &serde_json::Value) -> String {
    use serde_json::Value as V;
    match v {
        V::Array(a) => {
            let items: Vec<String> = a.iter().map(py_dumps).collect();
            format!("[{}]", items.join(", "))
        }
        V::Object(o) => {
            let items: Vec<String> = o
                .iter()
                .map(|(k, x)| format!("{}: {}", dump_str(k), py_dumps(x)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        V::String(s) => dump_str(s),
        other => other.to_string(),
    }
}

fn dump_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The CAL format-constraint block (appended to the question).
pub fn format_constraint(format: &serde_json::Value) -> String {
    format!(
        "\n\n--- Final Answer Format Constraint ---\nfinal_answer_format: {}\nInside <answer>, output only the filled answer structure.",
        py_dumps(format)
    )
}

/// The messages of a CAL item.
pub fn cal_messages(item: &CalItem) -> Vec<Message> {
    let user = format!(
        "{}{}",
        item.question,
        format_constraint(&item.answer_format())
    );
    let images = item.images().map(<[_]>::to_vec).unwrap_or_default();
    vec![
        Message::system(CAL_SYSTEM),
        Message::user(user).with_images(images),
    ]
}

/// The messages of a QA item.
pub fn qa_messages(item: &QaItem) -> Vec<Message> {
    let images = item.images().map(<[_]>::to_vec).unwrap_or_default();
    vec![
        Message::system(QA_SYSTEM),
        Message::user(item.question.clone()).with_images(images),
    ]
}

/// The `<answer>` text of a reply as the reference's answer step cuts it: from the first
/// `<answer>` to the next `</answer>` (or the end), trimmed; `None` without `<answer>`.
pub fn answer_text(response: &str) -> Option<&str> {
    let start = response.find("<answer>")? + "<answer>".len();
    let rest = &response[start..];
    let end = rest.find("</answer>").unwrap_or(rest.len());
    Some(rest[..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraint_block_is_pythons_dump() {
        let f = serde_json::json!([["", ""], ["é\"", ""]]);
        assert_eq!(
            format_constraint(&f),
            "\n\n--- Final Answer Format Constraint ---\nfinal_answer_format: [[\"\", \"\"], [\"é\\\"\", \"\"]]\nInside <answer>, output only the filled answer structure."
        );
    }

    #[test]
    fn answer_cut() {
        assert_eq!(
            answer_text("<think>a</think><answer> b </answer>"),
            Some("b")
        );
        assert_eq!(answer_text("<answer> open"), Some("open"));
        assert_eq!(answer_text("none"), None);
    }
}
