//! Server configuration: named models with their provider, parameters and prices, and the
//! limits that keep a public demo affordable. Read from a TOML file; API keys come only from
//! the environment (named per provider or per model), never from the file.
//!
//! ```toml
//! [[models]]
//! name = "gpt-5.4"            # what the browser and the CLI call it
//! provider = "openai"         # openai | anthropic | gemini | openai-compatible
//! model = "gpt-5.4"           # the provider's model id
//! temperature = 1.0
//! max_tokens = 8192
//! price_input_per_mtok = 1.25
//! price_output_per_mtok = 10.0
//!
//! [[models]]
//! name = "local-qwen"
//! provider = "openai-compatible"
//! base_url = "http://127.0.0.1:8000/v1"
//! model = "Qwen/Qwen3-8B"
//! api_key_env = "LOCAL_API_KEY"   # optional
//!
//! [[embeddings]]               # OpenAI-compatible `POST {base}/embeddings`
//! name = "te3"
//! provider = "openai"           # openai | openai-compatible
//! model = "text-embedding-3-large"
//! price_input_per_mtok = 0.13
//!
//! [limits]
//! embeddings_model = "te3"      # MatTools' documentation search, AlchemyBench's retrieval
//! daily_spend_usd = 20.0
//! run_spend_usd = 5.0
//! max_concurrency_per_provider = 8
//! request_timeout_secs = 300
//! max_retries = 4
//!
//! [cases]                       # the share-link store
//! max_per_client = 500
//! max_bytes_per_client = 33554432
//! max_total = 100000
//! max_total_bytes = 2147483648
//! ttl_days = 90                 # omit to keep cases until deleted
//!
//! [sandbox]                     # model-written code
//! backend = "wasm"              # wasm (embedded CPython on WASI) | bwrap | container | none
//! max_concurrent = 2
//! wall_secs = 10
//! memory_mb = 256
//!
//! [sandbox.pymatgen]            # MatTools' code tasks (the pinned stack)
//! backend = "bwrap"             # bwrap | container (scripts/container-image.sh) | none
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which API a model is reached through (the protocol's own enum).
pub use llm_protocol::provider::Provider as ProviderKind;

/// One configured model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    /// The name users pick (unique).
    pub name: String,
    /// The API it is reached through.
    pub provider: ProviderKind,
    /// The provider's model id.
    pub model: String,
    /// Endpoint base (required for `openai-compatible`; overrides the provider default).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Environment variable with the API key (overrides the provider default).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Sampling temperature (the AtomWorld reference used 1.0). Unset: the suite's paper
    /// setting where it has one (MatTools 0.7, AlchemyBench 0), else the provider's default.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling's `top_p`; unset: the provider's default.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Output token limit.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Reasoning effort for models that take one (`low`, `medium`, `high`).
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// USD per million input tokens.
    #[serde(default)]
    pub price_input_per_mtok: f64,
    /// USD per million output tokens.
    #[serde(default)]
    pub price_output_per_mtok: f64,
}

/// Output tokens assumed for the worst case of a model without `max_tokens` (for the spend
/// caps' reservations; set `max_tokens` to bound it exactly).
pub const ASSUMED_MAX_OUTPUT_TOKENS: u32 = 32_768;

/// Tokens added per message to its byte count for the worst case (role markers and the
/// chat template).
const TEMPLATE_TOKENS_PER_MESSAGE: u64 = 64;

/// Input tokens counted per image for the worst case: above what the providers charge for
/// one image (OpenAI's high detail and Anthropic's largest images stay under 5,000; Gemini
/// counts 258 per tile), since an image's bytes say little about its tokens.
pub const WORST_TOKENS_PER_IMAGE: u64 = 6_000;

impl ModelConfig {
    /// The most output tokens a call can produce: `max_tokens`, the 8,192 the Anthropic
    /// request sends without it, or [`ASSUMED_MAX_OUTPUT_TOKENS`].
    pub fn output_token_limit(&self) -> u32 {
        match (self.max_tokens, self.provider) {
            (Some(n), _) => n,
            (None, ProviderKind::Anthropic) => 8192,
            (None, _) => ASSUMED_MAX_OUTPUT_TOKENS,
        }
    }

    /// The most a call with `messages` can cost (USD): every byte of the prompt counted as a
    /// token (byte-level tokenizers never make more tokens than bytes) plus the template's
    /// tokens, [`WORST_TOKENS_PER_IMAGE`] per image, and the full output limit.
    pub fn worst_cost(&self, messages: &[benchmarks::task::Message]) -> f64 {
        self.worst_cost_with_tools(messages, &[])
    }

    /// [`worst_cost`](Self::worst_cost) of a call that also offers `tools` (their
    /// descriptions are sent with it) and carries earlier calls' names and arguments.
    pub fn worst_cost_with_tools(
        &self,
        messages: &[benchmarks::task::Message],
        tools: &[benchmarks::task::ToolSpec],
    ) -> f64 {
        let offered = if tools.is_empty() {
            0
        } else {
            serde_json::to_string(tools).map_or(0, |t| t.len() as u64)
        };
        let input: u64 = messages
            .iter()
            .map(|m| {
                let calls: usize = m
                    .tool_calls
                    .iter()
                    .map(|c| c.id.len() + c.name.len() + c.arguments.len())
                    .sum();
                m.content.len() as u64
                    + calls as u64
                    + TEMPLATE_TOKENS_PER_MESSAGE
                    + m.images.len() as u64 * WORST_TOKENS_PER_IMAGE
            })
            .sum();
        self.cost(input + offered, u64::from(self.output_token_limit()))
    }

    /// Cost in USD of a call with these token counts.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.price_input_per_mtok
            + output_tokens as f64 * self.price_output_per_mtok)
            / 1e6
    }
}

/// Inputs per embeddings request unless configured (OpenAI takes up to 2,048).
pub const DEFAULT_EMBEDDINGS_BATCH: usize = 64;

/// Most inputs per embeddings request that a configuration may ask for.
pub const MAX_EMBEDDINGS_BATCH: usize = 2048;

/// One configured embeddings model, reached through the OpenAI embeddings protocol
/// (`POST {base}/embeddings` with `{"model", "input": [...]}`): OpenAI itself or any
/// compatible server (vLLM, llama.cpp, Ollama, text-embeddings-inference).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingModelConfig {
    /// The name runs pick (unique among the embeddings models).
    pub name: String,
    /// `openai` or `openai-compatible`.
    pub provider: ProviderKind,
    /// The provider's model id.
    pub model: String,
    /// Endpoint base (required for `openai-compatible`; overrides the provider default).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Environment variable with the API key (overrides the provider default).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Output dimensions, for models that can shorten their vectors (sent as
    /// `dimensions`); `None`: the model's own.
    #[serde(default)]
    pub dimensions: Option<u32>,
    /// Inputs per request.
    #[serde(default = "default_batch")]
    pub batch_size: usize,
    /// USD per million input tokens.
    #[serde(default)]
    pub price_input_per_mtok: f64,
}

fn default_batch() -> usize {
    DEFAULT_EMBEDDINGS_BATCH
}

impl EmbeddingModelConfig {
    /// The most a request with `texts` can cost (USD): every byte counted as a token.
    pub fn worst_cost(&self, texts: &[String]) -> f64 {
        let bytes: u64 = texts.iter().map(|t| t.len() as u64 + 1).sum();
        self.cost(bytes)
    }

    /// Cost in USD of `input_tokens`.
    pub fn cost(&self, input_tokens: u64) -> f64 {
        input_tokens as f64 * self.price_input_per_mtok / 1e6
    }
}

/// Limits on spending and load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Stop new LLM calls once today's spend reaches this (USD); `None` = no cap.
    pub daily_spend_usd: Option<f64>,
    /// Stop a run's new LLM calls once it has spent this (USD); `None` = no cap.
    pub run_spend_usd: Option<f64>,
    /// Concurrent requests per provider.
    pub max_concurrency_per_provider: usize,
    /// Seconds before a request is abandoned (and retried).
    pub request_timeout_secs: u64,
    /// Retries after the first attempt (429, 5xx, timeouts, broken connections).
    pub max_retries: u32,
    /// First backoff delay in milliseconds (doubles each retry, with jitter).
    pub backoff_base_ms: u64,
    /// Longest single wait in milliseconds (also caps Retry-After).
    pub backoff_max_ms: u64,
    /// Seconds one answer's scoring (parse and match) may take before it is labelled
    /// `EvaluationTimeout`.
    pub match_budget_secs: u64,
    /// The configured model that answers a suite's judge questions (suites scored by an LLM
    /// judge); `None`: such answers are scored as judge failures.
    pub judge_model: Option<String>,
    /// The configured embeddings model (`[[embeddings]]`) that MatTools' documentation
    /// search and AlchemyBench's retrieval use unless a run names another; `None`: BM25 and
    /// stored embeddings only (no calls).
    pub embeddings_model: Option<String>,
    /// On a store several instances share: seconds an instance holds a run it executes
    /// without renewing (it renews every third of that); a killed instance's runs are taken
    /// over by another this long after its last renewal.
    pub run_lease_secs: u64,
    /// A run sent as a provider batch (`--batch`) asks how its batch stands after this many
    /// seconds, then twice as long each time, up to [`batch_poll_max_secs`](Self::batch_poll_max_secs).
    pub batch_poll_secs: u64,
    /// The longest wait between two questions about a batch.
    pub batch_poll_max_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            daily_spend_usd: None,
            run_spend_usd: None,
            max_concurrency_per_provider: 8,
            request_timeout_secs: 300,
            max_retries: 4,
            backoff_base_ms: 1000,
            backoff_max_ms: 60_000,
            match_budget_secs: 20,
            judge_model: None,
            embeddings_model: None,
            run_lease_secs: 30,
            batch_poll_secs: 30,
            batch_poll_max_secs: 600,
        }
    }
}

/// The whole configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Configured models.
    pub models: Vec<ModelConfig>,
    /// Configured embeddings models.
    pub embeddings: Vec<EmbeddingModelConfig>,
    /// Limits.
    pub limits: Limits,
    /// Quotas and expiry of the share-link case store.
    pub cases: CaseQuota,
    /// Where model-written code runs, and its limits.
    pub sandbox: SandboxConfig,
    /// Task sets the server offers beyond the built-in ones.
    pub suites: SuitesConfig,
}

/// Errors reading the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML is invalid (the message names line and column).
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong, and where.
        message: String,
    },
    /// A model entry is inconsistent.
    #[error("model '{name}': {message}")]
    Model {
        /// The model's name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

impl Config {
    /// Parse TOML text (`origin` names it in errors).
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: origin.to_string(),
            message: e.to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Read a TOML file; a missing file gives the default configuration plus the models
    /// implied by the environment.
    pub fn load(path: Option<&Path>) -> Result<Self, ConfigError> {
        let mut config = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.display().to_string(),
                    source,
                })?;
                Self::from_toml(&text, &p.display().to_string())?
            }
            None => Config::default(),
        };
        config.add_env_models();
        config.validate()?;
        Ok(config)
    }

    /// With `OPENAI_BASE_URL` and `OPENAI_MODEL` set, offer that model as `env-model`
    /// (handy for a local vLLM or Ollama server without writing a file).
    fn add_env_models(&mut self) {
        if let (Ok(base), Ok(model)) = (
            std::env::var("OPENAI_BASE_URL"),
            std::env::var("OPENAI_MODEL"),
        ) {
            if !self.models.iter().any(|m| m.name == "env-model") {
                self.models.push(ModelConfig {
                    name: "env-model".into(),
                    provider: ProviderKind::OpenaiCompatible,
                    model,
                    base_url: Some(base),
                    api_key_env: Some("OPENAI_API_KEY".into()),
                    temperature: None,
                    top_p: None,
                    max_tokens: None,
                    reasoning_effort: None,
                    price_input_per_mtok: 0.0,
                    price_output_per_mtok: 0.0,
                });
            }
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let mut seen = std::collections::HashSet::new();
        for m in &self.models {
            let err = |message: &str| ConfigError::Model {
                name: m.name.clone(),
                message: message.into(),
            };
            if !seen.insert(m.name.as_str()) {
                return Err(err("the name is used twice"));
            }
            if benchmarks::task::Registry::standard().is_baseline(&m.name) {
                return Err(err("the name is reserved for a built-in baseline"));
            }
            if m.provider == ProviderKind::OpenaiCompatible && m.base_url.is_none() {
                return Err(err("openai-compatible models need base_url"));
            }
            if m.price_input_per_mtok < 0.0 || m.price_output_per_mtok < 0.0 {
                return Err(err("prices must not be negative"));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for e in &self.embeddings {
            let err = |message: &str| ConfigError::Model {
                name: e.name.clone(),
                message: message.into(),
            };
            if !seen.insert(e.name.as_str()) {
                return Err(err("the name is used twice among [[embeddings]]"));
            }
            match e.provider {
                ProviderKind::Openai => {}
                ProviderKind::OpenaiCompatible if e.base_url.is_none() => {
                    return Err(err("openai-compatible embeddings models need base_url"))
                }
                ProviderKind::OpenaiCompatible => {}
                _ => {
                    return Err(err(
                        "embeddings models speak the OpenAI protocol: provider openai or openai-compatible",
                    ))
                }
            }
            if e.batch_size == 0 || e.batch_size > MAX_EMBEDDINGS_BATCH {
                return Err(err(&format!(
                    "batch_size must be 1 to {MAX_EMBEDDINGS_BATCH}"
                )));
            }
            if e.price_input_per_mtok < 0.0 {
                return Err(err("prices must not be negative"));
            }
        }
        if let Some(name) = &self.limits.embeddings_model {
            if self.embedding_model(name).is_none() {
                return Err(ConfigError::Model {
                    name: name.clone(),
                    message: "[limits] embeddings_model names no [[embeddings]] entry".into(),
                });
            }
        }
        Ok(())
    }

    /// The embeddings model called `name`.
    pub fn embedding_model(&self, name: &str) -> Option<&EmbeddingModelConfig> {
        self.embeddings.iter().find(|m| m.name == name)
    }

    /// The model called `name`.
    pub fn model(&self, name: &str) -> Option<&ModelConfig> {
        self.models.iter().find(|m| m.name == name)
    }
}

/// The `[sandbox.pymatgen]` section: the environment of MatTools' code tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PymatgenConfig {
    /// `bwrap` (default), `container` or `none`.
    pub backend: String,
    /// The venv (default `$ATOMWORLD_MATTOOLS_VENV` or `~/.cache/atomworld/venv-mattools`).
    pub venv: Option<PathBuf>,
    /// The `container` backend's image (default: the one `scripts/container-image.sh`
    /// builds for this version).
    pub image: Option<String>,
    /// Keep workers with pymatgen imported between runs (default true).
    pub warm: bool,
    /// Programs running at once (and warm workers kept).
    pub workers: usize,
    /// Wall-clock seconds a program may take at most (MatTools asks for 180 per answer and
    /// 300 for the documentation extraction).
    pub wall_secs: u64,
    /// Memory a program may use at most (MiB; pymatgen itself takes about 200).
    pub memory_mb: u64,
    /// Read-only data sets by name (MatTools' tasks use `mattools`: the folder holding
    /// `GaN.vasp` and the other test files). Default: `mattools` from
    /// `$ATOMWORLD_MATTOOLS_DATA` when set.
    pub data: BTreeMap<String, PathBuf>,
}

impl Default for PymatgenConfig {
    fn default() -> Self {
        let mut data = BTreeMap::new();
        if let Some(dir) = std::env::var_os("ATOMWORLD_MATTOOLS_DATA") {
            data.insert("mattools".to_string(), PathBuf::from(dir));
        }
        Self {
            backend: "bwrap".into(),
            venv: None,
            image: None,
            warm: true,
            workers: 2,
            wall_secs: 300,
            memory_mb: 2048,
            data,
        }
    }
}

/// The `[sandbox]` section of the configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxConfig {
    /// `wasm` (the embedded default), `bwrap`, `container` or `none`.
    pub backend: String,
    /// Programs running at once; more wait in a queue.
    pub max_concurrent: usize,
    /// Wall-clock seconds a program may take.
    pub wall_secs: u64,
    /// Memory a program may use (MiB).
    pub memory_mb: u64,
    /// Bytes of stdout (and, separately, of stderr) kept.
    pub output_bytes: u64,
    /// The pymatgen environment.
    pub pymatgen: PymatgenConfig,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        let limits = sandbox::Limits::default();
        Self {
            backend: "wasm".into(),
            max_concurrent: 2,
            wall_secs: limits.wall.as_secs(),
            memory_mb: limits.memory_bytes / (1024 * 1024),
            output_bytes: limits.output_bytes,
            pymatgen: PymatgenConfig::default(),
        }
    }
}

impl SandboxConfig {
    /// The limits these settings give.
    pub fn limits(&self) -> sandbox::Limits {
        sandbox::Limits {
            wall: Duration::from_secs(self.wall_secs.max(1)),
            memory_bytes: self.memory_mb.max(16) * 1024 * 1024,
            output_bytes: self.output_bytes.max(1024),
            ..sandbox::Limits::default()
        }
    }
}

/// Quotas and expiry of the case store (the `[cases]` section of the configuration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CaseQuota {
    /// Cases one client address may store (among those not expired).
    pub max_per_client: u64,
    /// Bytes one client address may store.
    pub max_bytes_per_client: u64,
    /// Cases in the store.
    pub max_total: u64,
    /// Bytes in the store.
    pub max_total_bytes: u64,
    /// Days a case is kept; `None` keeps cases until the operator deletes them.
    pub ttl_days: Option<u32>,
}

impl Default for CaseQuota {
    fn default() -> Self {
        Self {
            max_per_client: 500,
            max_bytes_per_client: 32 * 1024 * 1024,
            max_total: 100_000,
            max_total_bytes: 2 * 1024 * 1024 * 1024,
            ttl_days: None,
        }
    }
}

/// The `[suites]` section of the configuration: where the suites' data lives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SuitesConfig {
    /// MatTools' data folder (holding `tasks/`, `test_files/`, `missing-files.txt`).
    pub mattools_dir: Option<PathBuf>,
    /// The folder of OmniMatBench's images, one file per stem (`<stem>.png`, `.jpg`, …; the
    /// upstream `images/` folders merged into one).
    pub omnimat_images_dir: Option<PathBuf>,
}

impl Default for SuitesConfig {
    fn default() -> Self {
        Self {
            mattools_dir: std::env::var_os("ATOMWORLD_MATTOOLS_DIR").map(PathBuf::from),
            omnimat_images_dir: std::env::var_os("ATOMWORLD_OMNIMAT_IMAGES_DIR").map(PathBuf::from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_models_and_limits_and_reports_errors_with_position() {
        let c = Config::from_toml(
            "[[models]]\nname = \"m\"\nprovider = \"openai-compatible\"\nmodel = \"x\"\nbase_url = \"http://127.0.0.1:1/v1\"\nprice_input_per_mtok = 2.0\n[limits]\nmax_retries = 2\n",
            "test",
        )
        .unwrap();
        assert_eq!(c.models[0].cost(1_000_000, 0), 2.0);
        assert_eq!(c.limits.max_retries, 2);
        assert_eq!(c.limits.max_concurrency_per_provider, 8);
        let e = Config::from_toml(
            "[[models]]\nname = \"m\"\nprovider = \"nope\"\n",
            "cfg.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cfg.toml") && e.contains("line 3"), "{e}");
        let e = Config::from_toml(
            "[[models]]\nname = \"m\"\nprovider = \"openai-compatible\"\nmodel = \"x\"\n",
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("base_url"));
        let e = Config::from_toml(
            "[[models]]\nname = \"reference\"\nprovider = \"openai\"\nmodel = \"x\"\n",
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("reserved"));
    }

    /// A call that offers tools and carries earlier calls reserves for their bytes too.
    #[test]
    fn the_worst_case_counts_the_tools_offered_and_the_calls_made() {
        let c = Config::from_toml(
            "[[models]]\nname = \"m\"\nprovider = \"openai\"\nmodel = \"x\"\nmax_tokens = 10\nprice_input_per_mtok = 1.0\n",
            "t",
        )
        .unwrap();
        let m = c.model("m").unwrap();
        let call = benchmarks::task::ToolCall {
            id: "c1".into(),
            name: "distance".into(),
            arguments: r#"{"i":0,"j":1}"#.into(),
        };
        let messages = vec![
            benchmarks::task::Message::user("task"),
            benchmarks::task::Message::assistant_calls("", vec![call.clone()]),
            benchmarks::task::Message::tool_result(&call, "2.5"),
        ];
        let tools = [benchmarks::task::ToolSpec {
            name: "distance".into(),
            description: "d".into(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        let plain = m.worst_cost(&messages[..1]);
        assert_eq!(plain, (4 + 64) as f64 / 1e6);
        let calls = (2 + 8 + 13) as f64 / 1e6;
        let offered = serde_json::to_string(&tools).unwrap().len() as f64 / 1e6;
        let all = m.worst_cost_with_tools(&messages, &tools);
        assert!(
            (all - (plain + (64.0 + 64.0 + 3.0) / 1e6 + calls + offered)).abs() < 1e-15,
            "{all}"
        );
    }

    #[test]
    fn embeddings_models_are_checked() {
        let ok = "[[embeddings]]\nname = \"e\"\nprovider = \"openai-compatible\"\nmodel = \"x\"\nbase_url = \"http://127.0.0.1:1/v1\"\nprice_input_per_mtok = 0.5\n";
        let c =
            Config::from_toml(&format!("{ok}[limits]\nembeddings_model = \"e\"\n"), "t").unwrap();
        let e = c.embedding_model("e").unwrap();
        assert_eq!(e.batch_size, DEFAULT_EMBEDDINGS_BATCH);
        assert_eq!(e.cost(2_000_000), 1.0);
        assert_eq!(e.worst_cost(&["abc".into()]), 4.0 * 0.5 / 1e6);
        for (text, want) in [
            (
                format!("{ok}[limits]\nembeddings_model = \"nope\"\n"),
                "names no [[embeddings]]",
            ),
            (format!("{ok}{ok}"), "used twice"),
            (
                ok.replace("openai-compatible", "anthropic"),
                "OpenAI protocol",
            ),
            (ok.replace("base_url", "# base_url"), "need base_url"),
            (format!("{ok}batch_size = 0\n"), "batch_size"),
        ] {
            let e = Config::from_toml(&text, "t").unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
