//! The CIF-Repair prompt. **Ours**: the reference's own wording is not reproduced; results
//! with this prompt are marked [`PromptOrigin::Ours`](crate::probes::PromptOrigin::Ours).

/// The instructions before the corrupted CIF.
pub const INSTRUCTIONS: &str = "You are a CIF repair assistant. The CIF below was written by a standard CIF writer and then damaged in one way: either one essential line was removed, or some data names were replaced by misleading names. Repair it so that it is a valid CIF describing the same crystal structure, using the standard CIF data names (for example _cell_length_a, _cell_angle_alpha, _atom_site_label, _atom_site_fract_x). Keep every atom, the order of the atoms and their coordinates. If a value is missing and cannot be recovered from the rest of the file, write the placeholder [VALUE_TO_BE_INSERTED] where the value belongs; it will be replaced by the original value before your CIF is checked. Return the repaired CIF content within <cif> and </cif> tags.";

/// The whole user message: instructions, then the corrupted CIF.
pub fn model_prompt(corrupted_cif: &str) -> String {
    format!("{INSTRUCTIONS}\nCorrupted CIF content:\n{corrupted_cif}\n")
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::PLACEHOLDER;
    use super::*;

    #[test]
    fn the_prompt_names_the_placeholder_the_evaluator_replaces() {
        assert!(INSTRUCTIONS.contains(PLACEHOLDER));
        let p = model_prompt("data_X\n");
        assert!(p.ends_with("tags.\nCorrupted CIF content:\ndata_X\n\n"));
    }
}
