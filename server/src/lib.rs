//! The AtomWorld Playground backend: HTTP API, static app serving and storage.
//!
//! The `atomworld` binary (`main.rs`) is a thin CLI over this library so that integration
//! tests drive the same router the binary serves.

pub mod agents;
pub mod build_info;
pub mod cli;
pub mod config;
pub mod cpu;
pub mod execution;
pub mod http;
pub mod llm;
pub mod runs;
pub mod storage;
pub mod suites;
pub mod task_files;
pub mod task_sets;
