//! `atomworld`: the AtomWorld Playground backend and command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

use server::{http, storage::Storage};

#[derive(Parser)]
#[command(
    name = "atomworld",
    version,
    about = "AtomWorld Playground server and CLI"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web app and the JSON API.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
        /// Directory for the SQLite database and other state (created if missing).
        #[arg(long, default_value = "data/local")]
        data_dir: PathBuf,
        /// Directory with the built app (Trunk's output).
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .init();
    match Cli::parse().command {
        Command::Serve {
            addr,
            data_dir,
            dist,
        } => {
            let storage = Storage::open(&data_dir)
                .with_context(|| format!("opening the database in {}", data_dir.display()))?;
            if !dist.join("index.html").is_file() {
                tracing::warn!(
                    "{} has no index.html: build the app first (see README); serving the API only",
                    dist.display()
                );
            }
            let app = http::router(http::AppState::new(storage), &dist);
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding {addr}"))?;
            let local = listener.local_addr()?;
            // The e2e harness and the README's run script read this line to find the URL.
            println!("AtomWorld Playground listening on http://{local}/");
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown_signal())
                .await?;
        }
    }
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
