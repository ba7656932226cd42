//! The CIF-Repair prompt: the reference's, byte for byte (AtomWorldBench,
//! `src/prompts/cif_repair_prompt.py`, the prompt of the paper's CIF-Repair probe): its
//! sentences joined by single spaces, the corrupted CIF last. Results are marked
//! [`PromptOrigin::Reference`](crate::probes::PromptOrigin::Reference).

/// The reference's sentences before the CIF, in order.
pub const SENTENCES: [&str; 6] = [
    "You are a CIF operation assistant.",
    "You will be given a CIF content that may be corrupted or incomplete.",
    "Your task is to examine the CIF content and fix any issues to ensure it is a valid CIF file.",
    "If there are missing values that cannot be repaired directly, you can use the [VALUE_TO_BE_INSERTED] as hints to fill in the missing values.",
    "Please ensure the output is a correct CIF file.",
    "Return the fixed CIF content within <cif> and </cif> tags.",
];

/// The whole user message: the sentences, then the corrupted CIF, joined as the reference
/// joins its parts (`" ".join`).
pub fn model_prompt(corrupted_cif: &str) -> String {
    format!(
        "{} Input CIF content:\n{corrupted_cif}\n",
        SENTENCES.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::PLACEHOLDER;
    use super::*;

    #[test]
    fn the_prompt_is_the_references_and_names_the_placeholder_the_evaluator_replaces() {
        assert!(SENTENCES[3].contains(PLACEHOLDER));
        assert_eq!(
            model_prompt("data_X\n"),
            "You are a CIF operation assistant. You will be given a CIF content that may be \
             corrupted or incomplete. Your task is to examine the CIF content and fix any issues \
             to ensure it is a valid CIF file. If there are missing values that cannot be \
             repaired directly, you can use the [VALUE_TO_BE_INSERTED] as hints to fill in the \
             missing values. Please ensure the output is a correct CIF file. Return the fixed \
             CIF content within <cif> and </cif> tags. Input CIF content:\ndata_X\n\n"
        );
    }
}
