//! `atomworld`: the AtomWorld Playground backend and command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

use benchmarks::atomworld::Semantics;
use server::cli::output::Output;
use server::cli::{self, CliError};
use server::http;
use wire::defaults;

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
    Serve(ServeArgs),
    /// Execute the runs of a shared PostgreSQL store (`--database`), serving no pages: the
    /// runs web-only instances record, and those whose instance died.
    Worker {
        /// The shared store.
        #[command(flatten)]
        store: cli::store::StoreArgs,
        /// Configuration file (models, prices, limits); keys come from the environment.
        #[arg(long)]
        config: Option<PathBuf>,
        /// What this worker takes: `runs` (model calls and scoring), `sandbox` (programs of
        /// instances that lack a sandbox environment this worker has: MatTools' scoring,
        /// the agents' code) or `all`.
        #[arg(long, value_enum, default_value_t = WorkerRole::All)]
        role: WorkerRole,
    },
    /// Apply an AtomWorld action prompt to a CIF and print the result as a CIF.
    Apply {
        /// The input CIF file.
        #[arg(long)]
        cif: PathBuf,
        /// The action prompt (any wording of the reference data sets).
        #[arg(long)]
        prompt: String,
        /// Which reading of the action to apply.
        #[arg(long, value_enum, default_value = "reference")]
        variant: Variant,
    },
    /// Score recorded model responses offline (JSON lines in, JSON lines out).
    Eval {
        /// The benchmark suite.
        #[arg(long, default_value = benchmarks::task::Registry::DEFAULT)]
        suite: String,
        /// Input JSONL: {"input_cif", "action_prompt", "target_cif" or null, "response"}.
        input: PathBuf,
        /// Output JSONL: each input object plus "verdict".
        #[arg(short, long)]
        output: PathBuf,
        /// The task set to look `"task": "<name>"` lines up in (mattools-code: the MatTools
        /// data folder, holding tasks/, test_files/ and missing-files.txt).
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// Configuration file (the sandbox that runs code tasks: `[sandbox.pymatgen]`).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Run a benchmark headless (resumes an unfinished run with the same settings).
    Run(Box<cli::run::RunArgs>),
    /// Have a model write what a suite's runs retrieve (MatTools: the model-written
    /// documentation the `rag-model-doc` and `reflect-model-doc` agents search).
    Prepare(cli::prepare::PrepareArgs),
    /// Run a program in the code sandbox, or say which backends work on this host.
    Sandbox {
        #[command(subcommand)]
        action: SandboxCommand,
    },
    /// Export or import the response cache (to replay a workshop offline).
    Cache {
        /// `export` or `import`.
        #[arg(value_parser = ["export", "import"])]
        action: String,
        /// The JSONL file to write or read.
        file: PathBuf,
        /// Where the cache is stored.
        #[command(flatten)]
        store: cli::store::StoreArgs,
    },
    /// Import AtomWorld tasks (and recorded answers) from the upstream layouts as JSON lines.
    Import {
        /// Task triples (JSONL), a data/simple task list, or an evaluation_results.json.
        input: PathBuf,
        /// Output JSONL (lines with a "response" are `eval` input).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// The tables of runs: one column per run, each number the mean ± standard deviation
    /// over the run's repeats (`--repeats`), one table per suite.
    Report {
        /// Run ids.
        #[arg(required = true)]
        runs: Vec<String>,
        /// md (Markdown), csv or json.
        #[arg(long, default_value = "md", value_parser = cli::report::FORMATS)]
        format: String,
        /// Where the runs are stored.
        #[command(flatten)]
        store: cli::store::StoreArgs,
    },
    /// Write a suite's seeded task set as JSON lines (the suites that generate their tasks).
    Gen {
        /// The benchmark suite.
        #[arg(long, default_value = benchmarks::task::Registry::DEFAULT)]
        suite: String,
        /// The seed.
        #[arg(long, default_value_t = defaults::SEED)]
        seed: u64,
        /// Tasks per group (AtomWorld: per action).
        #[arg(long, alias = "per-action", default_value_t = defaults::PER_ACTION_CLI)]
        per_group: usize,
        /// Draw the structures from this pool instead of the built-in one: a folder (or one
        /// file) of CIFs, pymatgen Structure JSON (`.json` lists, `.jsonl` lines), a Materials
        /// Project export or an OPTIMADE response.
        #[arg(long)]
        pool: Option<PathBuf>,
        /// A variant of the suite's set (AtomWorld: the prompt's wording: `data2026`,
        /// `newest`, `four_decimal`, `oldest`).
        #[arg(long)]
        variant: Option<String>,
        /// Output JSONL file.
        #[arg(short, long)]
        output: PathBuf,
    },
}

/// What `atomworld sandbox` does.
#[derive(Subcommand)]
enum SandboxCommand {
    /// Check every backend (wasm, bwrap, container) on this host and say why one does not work.
    Check,
    /// Run a Python file and print its outcome (stdout, stderr, exit code, the limit that
    /// stopped it, times) as one JSON object.
    Run {
        /// The backend.
        #[arg(long, default_value = "wasm")]
        backend: String,
        /// Wall-clock seconds (default: the configured limit).
        #[arg(long)]
        timeout: Option<f64>,
        /// Memory in MiB (default: the configured limit).
        #[arg(long)]
        memory_mb: Option<u64>,
        /// The program.
        file: PathBuf,
    },
}

/// The `--variant` values of `apply`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Variant {
    /// The reference implementation's semantics (the benchmark's ground truth).
    Reference,
    /// The physically sensible reading.
    Physical,
}

/// Run a CLI subcommand: print its error on one line and exit with its status.
fn finish(result: Result<(), CliError>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.message.replace('\n', " "));
            std::process::ExitCode::from(e.status)
        }
    }
}

fn main() -> anyhow::Result<std::process::ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Apply {
            cif,
            prompt,
            variant,
        } => {
            let semantics = match variant {
                Variant::Reference => Semantics::Reference,
                Variant::Physical => Semantics::Physical,
            };
            Ok(finish(
                cli::apply::run(&cif, &prompt, semantics).map(|out| print!("{out}")),
            ))
        }
        Command::Eval {
            suite,
            input,
            output,
            tasks,
            config,
        } => Ok(finish((|| {
            let context = cli::eval::context(&suite, tasks.as_deref(), config.as_deref())?;
            let file = std::fs::File::open(&input)
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", input.display())))?;
            let mut out = Output::create(&output, &[&input])?;
            let summary = cli::eval::run_with(
                &benchmarks::task::Registry::standard(),
                &suite,
                std::io::BufReader::new(file),
                &mut out,
                &context,
            )?;
            out.commit()?;
            eprint!("{summary}");
            Ok(())
        })())),
        Command::Cache {
            action,
            file,
            store,
        } => Ok(finish(cli::cache::run(&action, &file, &store))),
        Command::Import { input, output } => Ok(finish((|| {
            let content = std::fs::read_to_string(&input)
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", input.display())))?;
            let mut out = Output::create(&output, &[&input])?;
            let report = cli::import::run(&content, &mut out)?;
            out.commit()?;
            eprintln!("{report}");
            Ok(())
        })())),
        Command::Gen {
            suite,
            seed,
            per_group,
            pool,
            variant,
            output,
        } => Ok(finish((|| {
            let registry = benchmarks::task::Registry::standard();
            let suite = registry
                .get(&suite)
                .map_err(|e| cli::CliError::input(e.to_string()))?;
            let pool = pool.as_deref().map(cli::gen::pool_files).transpose()?;
            let mut out = Output::create(&output, &[])?;
            let report = cli::gen::run(
                suite.as_ref(),
                (seed, per_group, variant.as_deref()),
                pool.as_deref(),
                &mut out,
            )?;
            out.commit()?;
            eprintln!("{report}");
            Ok(())
        })())),
        Command::Report {
            runs,
            format,
            store,
        } => Ok(finish((|| {
            let tables =
                cli::report::tables(&runs, &store, &benchmarks::task::Registry::standard())?;
            print!("{}", cli::report::render(&tables, &format)?);
            Ok(())
        })())),
        Command::Worker {
            store,
            config,
            role,
        } => {
            let runtime = tokio::runtime::Runtime::new()?;
            let result = runtime.block_on(worker(store, config, role));
            runtime.shutdown_timeout(std::time::Duration::from_secs(2));
            result
        }
        Command::Serve(args) => {
            let runtime = tokio::runtime::Runtime::new()?;
            let result = runtime.block_on(serve(args));
            // Runs still executing stop here (their stored results are kept and they resume
            // at the next start); computations in flight see their interrupt raised.
            runtime.shutdown_timeout(std::time::Duration::from_secs(2));
            result
        }
        Command::Prepare(args) => {
            let runtime = tokio::runtime::Runtime::new()?;
            Ok(finish(
                runtime
                    .block_on(cli::prepare::prepare(args))
                    .map(|line| print!("{line}")),
            ))
        }
        Command::Sandbox { action } => match action {
            SandboxCommand::Check => {
                print!("{}", cli::sandbox::check());
                Ok(std::process::ExitCode::SUCCESS)
            }
            SandboxCommand::Run {
                backend,
                timeout,
                memory_mb,
                file,
            } => {
                let runtime = tokio::runtime::Runtime::new()?;
                Ok(finish(
                    runtime
                        .block_on(cli::sandbox::run(&backend, &file, timeout, memory_mb))
                        .map(|json| println!("{json}")),
                ))
            }
        },
        Command::Run(args) => {
            let runtime = tokio::runtime::Runtime::new()?;
            Ok(finish(
                runtime
                    .block_on(cli::run::run(*args))
                    .map(|table| print!("{table}")),
            ))
        }
    }
}

/// Arguments of `atomworld serve`.
#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Where runs, cases, rooms and the response cache are stored.
    #[command(flatten)]
    store: cli::store::StoreArgs,
    /// Directory with the built app (Trunk's output).
    #[arg(long, default_value = "dist")]
    dist: PathBuf,
    /// Configuration file (models, prices, limits); keys come from the environment.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Serve model answers only from the response cache (offline workshops).
    #[arg(long)]
    replay_only: bool,
    /// Requests per minute per client on model, run and share endpoints.
    #[arg(long, default_value_t = 30)]
    rate_limit: u32,
    /// Open connections accepted in total.
    #[arg(long, default_value_t = 4096)]
    max_connections: usize,
    /// Open connections accepted per client address.
    #[arg(long, default_value_t = 128)]
    max_connections_per_client: usize,
    /// Seconds a client has to send a request's headers (also the keep-alive idle
    /// timeout).
    #[arg(long, default_value_t = 10)]
    header_timeout_secs: u64,
    /// A load balancer or reverse proxy in front of this server (an address or a network,
    /// `10.0.0.0/8`; repeatable): for requests from it, the client is read from
    /// `X-Forwarded-For`, so per-client limits count each client, not the proxy.
    #[arg(long = "trusted-proxy")]
    trusted_proxy: Vec<String>,
    /// Execute no run here: record them for the instances and workers (`atomworld worker`)
    /// of the same shared store.
    #[arg(long)]
    web_only: bool,
}

async fn serve(args: ServeArgs) -> anyhow::Result<std::process::ExitCode> {
    let ServeArgs {
        addr,
        store,
        dist,
        config,
        replay_only,
        rate_limit,
        max_connections,
        max_connections_per_client,
        header_timeout_secs,
        trusted_proxy,
        web_only,
    } = args;
    let proxies =
        http::proxy::TrustedProxies::parse(&trusted_proxy).map_err(|e| anyhow::anyhow!(e))?;
    let connections = http::listener::ConnectionLimits {
        total: max_connections,
        per_client: max_connections_per_client,
        header_read_timeout: std::time::Duration::from_secs(header_timeout_secs.max(1)),
        ..Default::default()
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .init();
    {
        let storage = store.open().map_err(|e| anyhow::anyhow!(e.message))?;
        tracing::info!("{} store at {}", storage.engine_name(), storage.describe());
        anyhow::ensure!(
            !web_only || storage.is_shared(),
            "--web-only needs a shared store (--database postgres://…): with SQLite no other \
             instance could execute the runs"
        );
        if !dist.join("index.html").is_file() {
            tracing::warn!(
                "{} has no index.html: build the app first (scripts/run.sh does); serving the API only",
                dist.display()
            );
        }
        let config = server::config::Config::load(config.as_deref())?;
        let models = config.models.len();
        let gateway = server::llm::Gateway::new(
            config,
            storage.clone(),
            server::llm::GatewayOptions {
                cache: true,
                replay_only,
            },
        )?;
        // A passcode, when set, guards model and run endpoints (public demos).
        let passcode = std::env::var("ATOMWORLD_PASSCODE")
            .ok()
            .filter(|p| !p.is_empty());
        tracing::info!(
            models,
            passcode = passcode.is_some(),
            "models configured (plus the copy-input and reference baselines)"
        );
        let mut state = http::AppState::with_gateway(storage, gateway, passcode, rate_limit)
            .with_trusted_proxies(proxies);
        if web_only {
            state = state.web_only();
        }
        state.check_sandbox();
        state.resume_runs();
        http::assets::precompress_in_background(dist.clone());
        let app = http::router(state, &dist);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        // The e2e harness and the README's run script read this line to find the URL.
        println!("AtomWorld Playground listening on http://{local}/");
        let connections = connections.within_descriptor_limit();
        http::listener::serve(listener, app, connections, shutdown_signal()).await;
        tracing::info!("stopped");
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// What a worker takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum WorkerRole {
    /// Runs: their model calls and scoring.
    Runs,
    /// Sandbox jobs of other instances.
    Sandbox,
    /// Both.
    All,
}

/// `atomworld worker`: the runs and sandbox jobs of a shared store, until SIGTERM or Ctrl-C.
async fn worker(
    store: cli::store::StoreArgs,
    config: Option<PathBuf>,
    role: WorkerRole,
) -> anyhow::Result<std::process::ExitCode> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let storage = store.open().map_err(|e| anyhow::anyhow!(e.message))?;
    anyhow::ensure!(
        storage.is_shared(),
        "a worker needs a shared store (--database postgres://… or ATOMWORLD_DATABASE)"
    );
    let config = server::config::Config::load(config.as_deref())?;
    let gateway = server::llm::Gateway::new(
        config,
        storage.clone(),
        server::llm::GatewayOptions {
            cache: true,
            replay_only: false,
        },
    )?;
    // It serves no requests: the rate limit is never asked.
    let state =
        http::AppState::with_gateway(storage.clone(), gateway, None, http::DEFAULT_RATE_LIMIT);
    let takes_runs = role != WorkerRole::Sandbox;
    let takes_jobs = role != WorkerRole::Runs;
    let code = state.code().clone();
    let envs = tokio::task::spawn_blocking(move || {
        code.check();
        code.check_pymatgen();
        code.usable_here()
    })
    .await?;
    anyhow::ensure!(
        !takes_jobs || !envs.is_empty() || takes_runs,
        "a sandbox worker needs a sandbox environment that works here (atomworld sandbox check)"
    );
    let roles = match role {
        WorkerRole::Runs => "runs",
        WorkerRole::Sandbox => "sandbox",
        WorkerRole::All => "runs,sandbox",
    };
    let jobs = takes_jobs.then(|| {
        server::execution::remote::Worker::start(
            storage.clone(),
            state.code().clone(),
            roles,
            envs.clone(),
        )
    });
    if takes_runs {
        state.check_sandbox();
        state.resume_runs();
    }
    println!(
        "AtomWorld worker ({roles}; sandbox environments: {}) on {}",
        if envs.is_empty() {
            "none".to_string()
        } else {
            envs.join(", ")
        },
        storage.describe()
    );
    shutdown_signal().await;
    if let Some(jobs) = jobs {
        jobs.stop().await;
    }
    tracing::info!("stopped");
    Ok(std::process::ExitCode::SUCCESS)
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
