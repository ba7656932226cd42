//! Where a command keeps its state: `--database` names a PostgreSQL database (several
//! instances may share it), else SQLite in `--data-dir`.

use std::path::PathBuf;

use super::CliError;
use crate::storage::{Location, Storage};

/// The store options every command that reads or writes runs takes.
#[derive(clap::Args, Clone, Debug)]
pub struct StoreArgs {
    /// Directory of the SQLite database (created if missing); unused with `--database`.
    #[arg(long, default_value = "data/local")]
    pub data_dir: PathBuf,
    /// A PostgreSQL database instead of SQLite: postgres://user:password@host:port/db
    /// (better given in the environment, where the password stays out of `ps`).
    #[arg(long, env = "ATOMWORLD_DATABASE", hide_env_values = true)]
    pub database: Option<String>,
}

impl StoreArgs {
    /// Where the store is.
    pub fn location(&self) -> Result<Location, CliError> {
        Location::new(self.database.as_deref(), &self.data_dir)
            .map_err(|e| CliError::input(e.to_string()))
    }

    /// The store, opened and migrated.
    pub fn open(&self) -> Result<Storage, CliError> {
        let location = self.location()?;
        Storage::open_at(&location).map_err(|e| {
            CliError::failure(format!("opening the database {}: {e}", describe(&location)))
        })
    }
}

/// A location as a message may name it (a URL's password hidden).
pub fn describe(location: &Location) -> String {
    match location {
        Location::Sqlite(dir) => format!("in {}", dir.display()),
        Location::Postgres(url) => match url.split_once('@') {
            Some((_, host)) => format!("at postgres://…@{host}"),
            None => format!("at {url}"),
        },
    }
}
