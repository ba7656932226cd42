//! SQLite's schema migrations, applied in order on open (`PRAGMA user_version` counts them).

use rusqlite_migration::{Migrations, M};

/// Schema migrations, applied in order; never edit a released one, append a new one.
pub fn all() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(
            "CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO server_meta (key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));",
        ),
        M::up(
            "CREATE TABLE llm_cache (
                 key TEXT PRIMARY KEY,
                 model TEXT NOT NULL,
                 response TEXT NOT NULL,
                 input_tokens INTEGER NOT NULL,
                 output_tokens INTEGER NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
             CREATE TABLE llm_spend (day INTEGER PRIMARY KEY, cost_usd REAL NOT NULL);
             CREATE TABLE runs (
                 id TEXT PRIMARY KEY,
                 spec TEXT NOT NULL,
                 status TEXT NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
             CREATE TABLE results (
                 run_id TEXT NOT NULL REFERENCES runs(id),
                 task_id TEXT NOT NULL,
                 sample INTEGER NOT NULL,
                 action TEXT NOT NULL,
                 prompt TEXT NOT NULL,
                 response TEXT,
                 verdict TEXT,
                 label TEXT,
                 error TEXT,
                 input_tokens INTEGER NOT NULL DEFAULT 0,
                 output_tokens INTEGER NOT NULL DEFAULT 0,
                 cost_usd REAL NOT NULL DEFAULT 0,
                 latency_ms INTEGER NOT NULL DEFAULT 0,
                 cached INTEGER NOT NULL DEFAULT 0,
                 PRIMARY KEY (run_id, task_id, sample));
             CREATE TABLE cases (
                 id TEXT PRIMARY KEY,
                 body TEXT NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));",
        ),
        // Automatic resumes at start-up and the progress each found (a run that made none
        // since the last one is not resumed again); who stored a case and its size (quotas);
        // a row the health check writes (and rolls back) to prove the database is writable.
        M::up(
            "ALTER TABLE runs ADD COLUMN startup_resumes INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE runs ADD COLUMN done_at_resume INTEGER;
             ALTER TABLE cases ADD COLUMN client TEXT;
             ALTER TABLE cases ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
             UPDATE cases SET bytes = length(body);
             CREATE INDEX cases_by_client ON cases(client);
             CREATE INDEX cases_by_age ON cases(created_at);
             CREATE TABLE health_probe (id INTEGER PRIMARY KEY, at TEXT NOT NULL);",
        ),
        // Each result keeps its task (for AtomWorld: input, action prompt, target), so a
        // row opens as a case without taking the prompt apart.
        M::up(
            "ALTER TABLE results ADD COLUMN task TEXT;
             ALTER TABLE results ADD COLUMN outcome TEXT;",
        ),
        // An agent's rounds (MatTools' self-reflection: prompts, retrieved entries, runs,
        // critiques), kept with the result they led to.
        M::up("ALTER TABLE results ADD COLUMN transcript TEXT;"),
        // A person's own 1-5 scores next to the judge's (AlchemyBench's human scoring).
        M::up(
            "CREATE TABLE human_scores (
                 run_id TEXT NOT NULL,
                 task_id TEXT NOT NULL,
                 sample INTEGER NOT NULL,
                 criterion TEXT NOT NULL,
                 score REAL NOT NULL,
                 updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                 PRIMARY KEY (run_id, task_id, sample, criterion));",
        ),
        // Workshop rooms (kept until the host's expiry, or closed by the host) and the
        // attempts sent to them, scored by the server; deleting a room deletes its attempts.
        M::up(
            "CREATE TABLE rooms (
                 code TEXT PRIMARY KEY,
                 name TEXT NOT NULL,
                 host_hash TEXT NOT NULL,
                 client TEXT NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                 expires_at TEXT NOT NULL);
             CREATE INDEX rooms_by_client ON rooms(client);
             CREATE INDEX rooms_by_expiry ON rooms(expires_at);
             CREATE TABLE room_attempts (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 room TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
                 who TEXT NOT NULL,
                 kind TEXT NOT NULL,
                 model TEXT,
                 side TEXT NOT NULL,
                 action TEXT NOT NULL,
                 input_cif TEXT NOT NULL,
                 prompt TEXT NOT NULL,
                 answer TEXT NOT NULL,
                 label TEXT NOT NULL,
                 max_dist REAL,
                 same_crystal INTEGER,
                 bytes INTEGER NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
             CREATE INDEX room_attempts_by_room ON room_attempts(room, id);",
        ),
        // Embeddings computed through the gateway, one row per (endpoint, model, dimensions,
        // text): the vector as little-endian f32.
        M::up(
            "CREATE TABLE embedding_cache (
                 key TEXT PRIMARY KEY,
                 model TEXT NOT NULL,
                 dim INTEGER NOT NULL,
                 vector BLOB NOT NULL,
                 created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));",
        ),
        // What preparing a run's tasks cost before its first answer (AlchemyBench's
        // embeddings), counted in the run's spend.
        M::up("ALTER TABLE runs ADD COLUMN preparation_cost_usd REAL NOT NULL DEFAULT 0;"),
        // Several people may score the same results (their agreement is AlchemyBench's
        // ICC(3,k)): a score belongs to its scorer too; earlier scores are the unnamed one's.
        M::up(
            "CREATE TABLE human_scores_by_scorer (
                 run_id TEXT NOT NULL,
                 task_id TEXT NOT NULL,
                 sample INTEGER NOT NULL,
                 criterion TEXT NOT NULL,
                 scorer TEXT NOT NULL DEFAULT '',
                 score REAL NOT NULL,
                 updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
                 PRIMARY KEY (run_id, task_id, sample, criterion, scorer));
             INSERT INTO human_scores_by_scorer (run_id, task_id, sample, criterion, score, updated_at)
                 SELECT run_id, task_id, sample, criterion, score, updated_at FROM human_scores;
             DROP TABLE human_scores;
             ALTER TABLE human_scores_by_scorer RENAME TO human_scores;",
        ),
        // What a list of runs shows of each (suite, model, agent, condition, repeats, how
        // many tasks were given) and its status, in a table of its own: a run's row holds its
        // whole spec, and SQLite reads every overflow page of a long spec to reach the
        // columns after it, so a list read from `runs` would read every task list.
        M::up(
            "CREATE TABLE run_briefs (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 id TEXT NOT NULL UNIQUE REFERENCES runs(id),
                 suite TEXT NOT NULL,
                 brief TEXT NOT NULL,
                 status TEXT NOT NULL,
                 created_at TEXT NOT NULL);
             CREATE INDEX run_briefs_by_suite ON run_briefs(suite, seq);
             INSERT INTO run_briefs (id, suite, brief, status, created_at)
                 SELECT id, json_extract(spec, '$.suite'), json_object(
                     'model', json_extract(spec, '$.model'),
                     'agent', json_extract(spec, '$.agent'),
                     'condition', json_extract(spec, '$.condition'),
                     'samples', json_extract(spec, '$.samples'),
                     'given_tasks', json_array_length(spec, '$.tasks.tasks')),
                     status, created_at
                 FROM runs WHERE json_extract(spec, '$.suite') IS NOT NULL ORDER BY rowid;",
        ),
        // Who may stop or resume a run started over HTTP: the digest of the token its
        // starter was given. Runs without a row (the CLI's) are the operator's.
        M::up(
            "CREATE TABLE run_owners (
                 id TEXT PRIMARY KEY REFERENCES runs(id),
                 token_digest TEXT NOT NULL);",
        ),
        // Which instance executes a run and until when it holds it (leases: on a shared
        // store another instance takes over a run whose lease ran out).
        M::up(
            "ALTER TABLE runs ADD COLUMN lease_owner TEXT;
             ALTER TABLE runs ADD COLUMN lease_until TEXT;",
        ),
        // What calls in flight hold against the daily spend cap (shared by instances).
        M::up(
            "CREATE TABLE spend_claims (
                 id TEXT PRIMARY KEY,
                 day INTEGER NOT NULL,
                 usd REAL NOT NULL,
                 expires_at TEXT NOT NULL);
             CREATE INDEX spend_claims_by_day ON spend_claims(day);",
        ),
        // A person asked, through any instance, to cancel a run another instance executes.
        M::up("ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;"),
        // A run's requests sent as a provider batch: the batch's id, which task sample each
        // request answers, and whether its answers are stored yet.
        M::up(
            "CREATE TABLE run_batches (
                 run_id TEXT NOT NULL REFERENCES runs(id),
                 batch_id TEXT NOT NULL,
                 model TEXT NOT NULL,
                 items TEXT NOT NULL,
                 status TEXT NOT NULL,
                 provider_status TEXT,
                 submitted_at TEXT NOT NULL,
                 PRIMARY KEY (run_id, batch_id));",
        ),
        // Workers and what they offer (roles, sandbox environments), and the sandbox jobs
        // an instance without an environment leaves to a worker that has it.
        M::up(
            "CREATE TABLE workers (
                 id TEXT PRIMARY KEY,
                 roles TEXT NOT NULL,
                 envs TEXT NOT NULL,
                 seen_at TEXT NOT NULL);
             CREATE TABLE sandbox_jobs (
                 id TEXT PRIMARY KEY,
                 env TEXT NOT NULL,
                 program TEXT NOT NULL,
                 status TEXT NOT NULL,
                 worker TEXT,
                 claimed_until TEXT,
                 result TEXT,
                 error TEXT,
                 created_at TEXT NOT NULL);
             CREATE INDEX sandbox_jobs_waiting ON sandbox_jobs(status, env, created_at);",
        ),
        // A run's tasks in slices that instances sharing the store claim one at a time.
        M::up(
            "CREATE TABLE run_slices (
                 run_id TEXT NOT NULL REFERENCES runs(id),
                 slice INTEGER NOT NULL,
                 owner TEXT,
                 lease_until TEXT,
                 done INTEGER NOT NULL DEFAULT 0,
                 PRIMARY KEY (run_id, slice));",
        ),
        // A run's spend and the claims of its calls in flight, for a run cap that holds
        // while several instances execute the run's slices.
        M::up(
            "CREATE TABLE run_spend (
                 run_id TEXT PRIMARY KEY,
                 cost_usd REAL NOT NULL);
             CREATE TABLE run_spend_claims (
                 id TEXT PRIMARY KEY,
                 run_id TEXT NOT NULL,
                 usd REAL NOT NULL,
                 expires_at TEXT NOT NULL);
             CREATE INDEX run_spend_claims_by_run ON run_spend_claims(run_id);",
        ),
    ])
}
