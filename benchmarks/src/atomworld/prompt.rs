//! The model prompt of AtomWorld's LLM mode (the reference's prompt), byte-exact.

/// The fixed parts of the prompt, joined by single spaces before the CIF and the action.
const PREAMBLE: [&str; 6] = [
    "You are a CIF operation assistant.",
    "You will be given an input CIF content and an action prompt.",
    "Your task is to apply the action described in the action prompt to the initial CIF content.",
    "The coordinates in the action are in Cartesian format, and the indices of atoms are started from 0.\n",
    "Return the modified CIF content in cif format within \"<cif>\" and \"</cif>\" tags.\n",
    "Please ensure the output is a valid CIF file, with correct formula, and atom positions.",
];

/// The single user message sent to a model for one task (no system prompt).
pub fn model_prompt(input_cif: &str, action_prompt: &str) -> String {
    let mut parts: Vec<String> = PREAMBLE.iter().map(|s| s.to_string()).collect();
    parts.push(format!("Input CIF content:\n{input_cif}\n"));
    parts.push(format!("Action prompt: {action_prompt} "));
    parts.join(" ")
}

/// The input CIF and the action prompt of a message [`model_prompt`] wrote (for opening a
/// stored run result as a case); `None` for any other text.
pub fn split_model_prompt(prompt: &str) -> Option<(&str, &str)> {
    const CIF: &str = "Input CIF content:\n";
    const ACTION: &str = "\n Action prompt: ";
    let start = prompt.find(CIF)? + CIF.len();
    let mid = prompt.rfind(ACTION)?;
    let action = prompt[mid + ACTION.len()..].strip_suffix(' ')?;
    Some((prompt.get(start..mid)?, action))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_prompt_splits_back_into_its_parts() {
        let cif = "data_x\n_cell_length_a 1\nAction prompt: not this one\n";
        let action = "Move the atom at index 0 by [1 0 0] angstrom in the cif file.";
        assert_eq!(
            split_model_prompt(&model_prompt(cif, action)),
            Some((cif, action))
        );
        assert_eq!(split_model_prompt("hello"), None);
    }

    #[test]
    fn prompt_joins_parts_with_single_spaces() {
        let p = model_prompt("data_x", "Remove the atom at index 0.");
        assert!(p.starts_with("You are a CIF operation assistant. You will be given"));
        assert!(p.contains("started from 0.\n Return the modified CIF content"));
        assert!(p.contains("tags.\n Please ensure"));
        assert!(p.ends_with(
            "positions. Input CIF content:\ndata_x\n Action prompt: Remove the atom at index 0. "
        ));
    }
}
