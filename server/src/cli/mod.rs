//! Command-line subcommands other than `serve`, thin over `benchmarks`.

pub mod apply;
pub mod cache;
pub mod eval;
pub mod gen;
pub mod import;
pub mod output;
pub mod prepare;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod store;

/// A command-line failure: a one-line message for stderr and the exit status.
#[derive(Debug)]
pub struct CliError {
    /// The message (one line).
    pub message: String,
    /// Exit status: 2 for bad input, 1 for anything else.
    pub status: u8,
}

impl CliError {
    /// A failure that is not the input's fault: I/O, the database (exit status 1).
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            status: 1,
        }
    }

    /// Bad input from the user (exit status 2).
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            status: 2,
        }
    }
}
