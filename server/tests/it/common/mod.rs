//! Helpers shared by the integration tests that drive the real `atomworld` binary.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![allow(dead_code)] // some helpers serve only the modules behind the wasm-sandbox feature

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Rock-salt NaCl as a two-site P1 cell.
pub const NACL: &str = "data_NaCl
_cell_length_a 5.64
_cell_length_b 5.64
_cell_length_c 5.64
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
loop_
_atom_site_type_symbol
_atom_site_label
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Na Na0 0 0 0
Cl Cl1 0.5 0.5 0.5
";

/// Rock-salt NaCl, the conventional cell (8 sites).
pub fn nacl_conventional() -> String {
    let rows = "Na Na1 0 0.5 0.5\nNa Na2 0.5 0 0.5\nNa Na3 0.5 0.5 0\nCl Cl5 0 0.5 0\n\
                Cl Cl6 0 0 0.5\nCl Cl7 0.5 0 0\n";
    format!("{NACL}{rows}")
}

/// GET a URL and parse its JSON body.
pub async fn get_json(c: &reqwest::Client, url: String) -> serde_json::Value {
    c.get(url).send().await.unwrap().json().await.unwrap()
}

/// GET a URL and return its body as text.
pub async fn get_text(c: &reqwest::Client, url: String) -> String {
    c.get(url).send().await.unwrap().text().await.unwrap()
}

/// POST `body` as JSON and parse the JSON answer.
pub async fn post_json(
    c: &reqwest::Client,
    url: String,
    body: &serde_json::Value,
) -> serde_json::Value {
    c.post(url)
        .json(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The tokens of the runs [`create_run`] started, by id.
static RUN_TOKENS: std::sync::LazyLock<Mutex<std::collections::HashMap<String, String>>> =
    std::sync::LazyLock::new(Default::default);

/// Starts a run with this body; returns its id (its token: [`run_token`]).
pub async fn create_run(c: &reqwest::Client, base: &str, body: serde_json::Value) -> String {
    let r = post_json(c, format!("{base}/api/runs"), &body).await;
    let id = r["run_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no run id: {r}"))
        .to_string();
    let token = r["run_token"].as_str().unwrap_or_default().to_string();
    RUN_TOKENS.lock().unwrap().insert(id.clone(), token);
    id
}

/// The token of run `id` (started by [`create_run`]), which cancelling or resuming it takes.
pub fn run_token(id: &str) -> String {
    RUN_TOKENS
        .lock()
        .unwrap()
        .get(id)
        .cloned()
        .unwrap_or_default()
}

/// Polls a run until `done(run)` or about 30 s; the last answer.
pub async fn wait_run(
    c: &reqwest::Client,
    base: &str,
    id: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let mut run = serde_json::Value::Null;
    for _ in 0..300 {
        run = get_json(c, format!("{base}/api/runs/{id}")).await;
        if done(&run) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    run
}

/// Asks `/api/health` every 25 ms from its own thread and runtime (so the test's own work,
/// e.g. sending fifty requests, never delays the asking) until stopped.
pub struct HealthProbe {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Duration>>,
}

impl HealthProbe {
    /// Start asking the server at `base`.
    pub fn start(base: &str) -> Self {
        let url = format!("{base}/api/health");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let c = reqwest::Client::new();
                let mut times = Vec::new();
                while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                    let t = std::time::Instant::now();
                    let r = c.get(&url).send().await.unwrap();
                    assert!(r.status().is_success(), "health: {}", r.status());
                    let _ = r.bytes().await;
                    times.push(t.elapsed());
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                times
            })
        });
        HealthProbe { stop, thread }
    }

    /// Stop; every answer's time, in order.
    pub fn stop(self) -> Vec<Duration> {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

/// The JSON of task `id` of `suite` as the server at `base` lists it.
pub async fn listed_task(base: &str, suite: &str, id: &str) -> serde_json::Value {
    let c = reqwest::Client::new();
    let tasks = get_json(&c, format!("{base}/api/suites/{suite}/tasks")).await;
    tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} of {suite}"))["task"]
        .clone()
}

/// Whether tests that need outside parts (the shared data, the MatTools venv, bubblewrap)
/// must fail rather than skip without them: under CI, or when asked.
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
        || std::env::var("ATOMWORLD_REQUIRE_SHARED").is_ok_and(|v| v == "1")
}

/// Prices that make a fake model's cost visible: 1 USD per million tokens each way.
pub const PRICED: &str = "price_input_per_mtok = 1.0\nprice_output_per_mtok = 1.0\n";

/// Writes `dir/config.toml` with one OpenAI-compatible model named `fake` served at `base`
/// (a fake provider's `/v1` URL); `extra` follows the model's table verbatim.
pub fn fake_model_config(dir: &Path, base: &str, extra: &str) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[[models]]\nname = \"fake\"\nprovider = \"openai-compatible\"\nmodel = \"f\"\n\
             base_url = \"{base}\"\n{extra}"
        ),
    )
    .unwrap();
    path
}

/// `atomworld run --model fake` with `config` and `data`; the caller adds the suite and agent.
pub fn run_fake(config: &Path, data: &Path) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_atomworld"));
    c.args(["run", "--model", "fake", "--config"])
        .arg(config)
        .arg("--data-dir")
        .arg(data);
    c
}

/// The `atomworld` binary built for these tests.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_atomworld"))
}

/// Serve `app` on 127.0.0.1 (a fake provider); its base URL with `/v1`.
pub async fn spawn_app(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

/// Serve our own router on 127.0.0.1 with client addresses (as `atomworld serve` does); its
/// base URL.
pub async fn serve_router(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
        .unwrap()
    });
    format!("http://{addr}")
}

/// A model `name` served by an OpenAI-compatible fake at `base_url`: no key, no price.
pub fn free_model(name: &str, base_url: String) -> server::config::ModelConfig {
    server::config::ModelConfig {
        name: name.into(),
        provider: server::config::ProviderKind::OpenaiCompatible,
        model: name.into(),
        base_url: Some(base_url),
        api_key_env: None,
        temperature: None,
        top_p: None,
        max_tokens: None,
        reasoning_effort: None,
        price_input_per_mtok: 0.0,
        price_output_per_mtok: 0.0,
    }
}

/// An OpenAI-compatible chat completion answering `content` (a fake provider's reply).
pub fn completion(content: &str, prompt_tokens: u64) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({
        "choices": [{"message": {"content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1}
    }))
}

/// A running `atomworld serve` whose output is collected.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    child: Child,
    output: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Start `atomworld serve` on a free port with its data in `dir`, extra arguments and
    /// environment set by `env`.
    pub async fn start(dir: &Path, args: &[&str], env: impl FnOnce(&mut Command)) -> Self {
        let dist = dir.join("dist");
        std::fs::create_dir_all(&dist).unwrap();
        let mut cmd = bin();
        cmd.args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("data"))
            .arg("--dist")
            .arg(&dist)
            .args(args)
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        env(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let mut readers = Vec::new();
        let stdout = child.stdout.take().unwrap();
        let out = output.clone();
        readers.push(std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.split("listening on ").nth(1) {
                    let _ = tx.send(url.trim().trim_end_matches('/').to_string());
                }
                let mut o = out.lock().unwrap();
                o.push_str(&line);
                o.push('\n');
            }
        }));
        let mut stderr = child.stderr.take().unwrap();
        let out = output.clone();
        readers.push(std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            out.lock().unwrap().push_str(&text);
        }));
        let base = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "the server did not start: {}",
                    output.lock().unwrap().as_str()
                )
            });
        Server {
            base,
            child,
            output,
            readers,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send SIGTERM and wait for the exit; everything the server printed.
    pub fn stop(mut self) -> String {
        terminate(self.child.id());
        let _ = self.child.wait();
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let out = self.output.lock().unwrap().clone();
        out
    }

    /// Send SIGTERM; how long the process took to exit (None: still running after `limit`,
    /// then killed).
    pub fn stop_within(mut self, limit: Duration) -> Option<Duration> {
        let started = std::time::Instant::now();
        terminate(self.child.id());
        while started.elapsed() < limit {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Some(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }

    /// Kill the process at once (SIGKILL), as a crash would.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn terminate(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
}

/// Words a fake embeddings model treats as one concept each (its first eight dimensions);
/// any other word lands in one of eight more by its letters. So "vacancy" and "defect" point
/// the same way although they share no letters, which BM25 cannot see.
pub const CONCEPTS: [&[&str]; 8] = [
    &["vacancy", "vacancies", "defect", "defects", "missing"],
    &["poscar", "file", "read", "load"],
    &["structure", "crystal", "lattice", "cell"],
    &["energy", "enthalpy", "formation"],
    &["nanoparticle", "nanoparticles", "colloid", "colloidal"],
    &["battery", "cathode", "anode", "electrode"],
    &["perovskite", "halide"],
    &["catalyst", "catalytic", "catalysis"],
];

/// The fake embeddings model's vector of `text`: per lower-case word, 1 in its concept's
/// dimension, or in dimension 8 + (sum of its bytes mod 8) for other words.
pub fn concept_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; 16];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = word.to_lowercase();
        match CONCEPTS.iter().position(|c| c.contains(&w.as_str())) {
            Some(i) => v[i] += 1.0,
            None => v[8 + w.bytes().map(usize::from).sum::<usize>() % 8] += 1.0,
        }
    }
    v
}

/// A fake OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`) answering
/// [`concept_vector`]s, one token per input byte, with what it was asked.
#[derive(Clone, Default)]
pub struct FakeEmbeddings {
    /// The inputs of every request, in order.
    pub requests: Arc<Mutex<Vec<Vec<String>>>>,
    /// The `authorization` header of every request.
    pub auth: Arc<Mutex<Vec<Option<String>>>>,
    /// Statuses to answer before answering normally (each used once).
    pub fail_first: Arc<Mutex<Vec<(u16, String)>>>,
    /// How long each answer takes.
    pub delay: Arc<Mutex<Duration>>,
    /// Requests being answered now, and the most at once so far.
    pub in_flight: Arc<Mutex<(usize, usize)>>,
}

impl FakeEmbeddings {
    /// Every input sent so far.
    pub fn inputs(&self) -> Vec<String> {
        self.requests.lock().unwrap().concat()
    }

    /// Requests answered so far.
    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

async fn fake_embeddings_handler(
    axum::extract::State(f): axum::extract::State<FakeEmbeddings>,
    headers: axum::http::HeaderMap,
    axum::Json(body): axum::Json<serde_json::Value>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let failure = {
        let mut fails = f.fail_first.lock().unwrap();
        (!fails.is_empty()).then(|| fails.remove(0))
    };
    if let Some((status, message)) = failure {
        return (
            axum::http::StatusCode::from_u16(status).unwrap(),
            axum::Json(serde_json::json!({"error": {"message": message}})),
        )
            .into_response();
    }
    let delay = *f.delay.lock().unwrap();
    {
        let mut n = f.in_flight.lock().unwrap();
        n.0 += 1;
        n.1 = n.1.max(n.0);
    }
    tokio::time::sleep(delay).await;
    f.in_flight.lock().unwrap().0 -= 1;
    let inputs: Vec<String> = body["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    f.auth.lock().unwrap().push(
        headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    );
    let tokens: usize = inputs.iter().map(String::len).sum();
    // Answered in reverse order: the gateway must put them back by `index`.
    let data: Vec<serde_json::Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": concept_vector(t)}))
        .collect();
    f.requests.lock().unwrap().push(inputs);
    axum::Json(serde_json::json!({
        "object": "list", "data": data, "model": body["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}
    }))
    .into_response()
}

/// Serve a [`FakeEmbeddings`] on 127.0.0.1; its base URL (with `/v1`) and the handle.
pub async fn fake_embeddings() -> (String, FakeEmbeddings) {
    let fake = FakeEmbeddings::default();
    let app = axum::Router::new()
        .route(
            "/v1/embeddings",
            axum::routing::post(fake_embeddings_handler),
        )
        .with_state(fake.clone());
    (spawn_app(app).await, fake)
}

/// A MatTools code answer: `code` in the tags the suite reads, its function `name`.
pub fn mattools_answer(code: &str, name: &str) -> String {
    format!("<answer><code>```python\n{code}\n```</code><name>{name}</name></answer>")
}

/// A right answer to MatTools' `test_antisite_generator` (function `names`).
pub const ANTISITE_NAMES: &str = "from pymatgen.core import Structure\n\
    from pymatgen.analysis.defects.generators import AntiSiteGenerator\n\
    def names():\n    s = Structure.from_file('tool_source_code/pymatgen-analysis-defects/tests/test_files/GaN.vasp')\n\
    \x20   return {'antisite_defect_names': sorted(d.name for d in AntiSiteGenerator().get_defects(s))}\n";

/// The shared MatTools data (`../shared/data/mattools`).
pub fn mattools_data() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/mattools")
}

/// The one run a CLI command stored in `data` (its id, spec and result rows): a second run
/// there fails the test, since the caller would be reading the wrong one.
pub fn only_run(data: &Path) -> (String, wire::RunSpec, Vec<wire::ResultRow>) {
    let storage = server::storage::Storage::open(data).unwrap();
    let mut runs = storage.list_runs().unwrap();
    assert_eq!(runs.len(), 1, "one run in {}: {runs:?}", data.display());
    let (id, spec, _) = runs.remove(0);
    let rows = storage.results(&id).unwrap();
    (id, spec, rows)
}
