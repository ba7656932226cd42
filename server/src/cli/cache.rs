//! `atomworld cache export|import FILE`: move the response cache (answers and embeddings)
//! between machines, so a workshop can replay answers offline (`serve --replay-only`).

use std::path::Path;

use super::store::StoreArgs;
use super::CliError;

/// Export the cache of the store `store` names to `file` (`action = "export"`), or
/// import `file` into it (`"import"`).
pub fn run(action: &str, file: &Path, store: &StoreArgs) -> Result<(), CliError> {
    let storage = store.open()?;
    match action {
        "export" => {
            let lines = storage
                .cache_export()
                .map_err(|e| CliError::failure(e.to_string()))?;
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(file, text)
                .map_err(|e| CliError::input(format!("cannot write {}: {e}", file.display())))?;
            eprintln!(
                "exported {} cached answers and embeddings to {}",
                lines.len(),
                file.display()
            );
        }
        "import" => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", file.display())))?;
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            let added = storage
                .cache_import(&lines)
                .map_err(|e| CliError::input(format!("{}: {e}", file.display())))?;
            eprintln!(
                "imported {added} new cached answers and embeddings from {}",
                file.display()
            );
        }
        other => return Err(CliError::input(format!("unknown cache action '{other}'"))),
    }
    Ok(())
}
