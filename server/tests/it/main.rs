//! The server's integration tests, one module per concern, in one test binary: each binary
//! links the whole dependency tree (wasmtime, axum, the suites), so one binary instead of
//! two dozen compiles and links the tree once, and its tests share the test threads instead
//! of running binary after binary. Most drive the real `atomworld` binary (`common`).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

mod api;
mod architecture;
mod atomworld_agent;
mod batches;
mod cli;
mod embeddings;
mod escape;
mod gateway;
mod hardening;
mod http;
mod limits;
mod mattools;
mod omnimat_images;
mod omnimat_python;
mod plugin_suite;
mod postgres;
mod probes;
mod releases;
mod report;
mod rooms;
mod run_list;
mod runs;
mod sandbox_cli;
mod suites;
