//! `atomworld apply --cif FILE --prompt TEXT [--variant reference|physical]`.

use std::path::Path;

use benchmarks::atomworld::{apply, parse_prompt, Semantics};
use engine::cif::{read_cif, write_cif};

use super::CliError;

/// Apply the action described by `prompt` to the CIF in `cif_path`; the result as CIF text.
pub fn run(cif_path: &Path, prompt: &str, semantics: Semantics) -> Result<String, CliError> {
    let text = std::fs::read_to_string(cif_path)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", cif_path.display())))?;
    let structure =
        read_cif(&text).map_err(|e| CliError::input(format!("{}: {e}", cif_path.display())))?;
    let action =
        parse_prompt(prompt, &structure).map_err(|e| CliError::input(format!("prompt: {e}")))?;
    let result = apply(&structure, &action, semantics)
        .map_err(|e| CliError::input(format!("{}: {e}", action.kind().name())))?;
    Ok(write_cif(&result.structure.wrapped()))
}
