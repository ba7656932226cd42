//! The runs and results tables.

use rusqlite::{params, OptionalExtension};
use sha2::{Digest, Sha256};
use wire::{ResultRow, ResultVerdict, RunSpec, RunStatus};

use super::{Storage, StorageError};

/// What start-up does with a run that was executing when the server stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unfinished {
    /// Resume it.
    Resume(String),
    /// It stored nothing since the previous automatic resume (it may be what stopped the
    /// server): marked `interrupted`, left for a person to resume.
    Held(String),
}

impl Storage {
    /// Create a run; its id is derived from the spec and a counter so ids are short and unique.
    pub fn create_run(&self, spec: &RunSpec) -> Result<String, StorageError> {
        let text = serde_json::to_string(spec).unwrap_or_default();
        self.with_conn(|c| {
            let n: i64 = c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?;
            let digest = hex::encode(Sha256::digest(format!("{n}:{text}").as_bytes()));
            let id = format!("run-{}", &digest[..10]);
            // The run and its brief together, or neither: a run missing from the list would
            // be lost to the page.
            let tx = c.unchecked_transaction()?;
            tx.execute(
                "INSERT INTO runs (id, spec, status) VALUES (?1, ?2, 'created')",
                params![id, text],
            )?;
            tx.execute(
                "INSERT INTO run_briefs (id, suite, brief, status, created_at)
                 SELECT id, ?2, ?3, status, created_at FROM runs WHERE id = ?1",
                params![id, spec.suite, brief(spec).to_string()],
            )?;
            tx.commit()?;
            Ok(id)
        })
    }

    /// Records that run `id` belongs to whoever holds the token whose digest is `digest`.
    pub fn set_run_owner(&self, id: &str, digest: &str) -> Result<(), StorageError> {
        self.with_conn(|c| {
            c.execute(
                "INSERT INTO run_owners (id, token_digest) VALUES (?1, ?2)",
                params![id, digest],
            )?;
            Ok(())
        })
    }

    /// The digest of the token run `id` belongs to; `None` for a run of the operator's.
    pub fn run_owner(&self, id: &str) -> Result<Option<String>, StorageError> {
        self.with_conn(|c| {
            c.query_row(
                "SELECT token_digest FROM run_owners WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
        })
    }

    /// Adds `usd` to what preparing run `id`'s tasks cost (embeddings computed for them).
    pub fn add_preparation_cost(&self, id: &str, usd: f64) -> Result<(), StorageError> {
        self.with_conn(|c| {
            c.execute(
                "UPDATE runs SET preparation_cost_usd = preparation_cost_usd + ?2 WHERE id = ?1",
                params![id, usd],
            )?;
            Ok(())
        })
    }

    /// What preparing run `id`'s tasks cost so far (0 for an unknown run).
    pub fn preparation_cost(&self, id: &str) -> Result<f64, StorageError> {
        self.with_conn(|c| {
            Ok(c.query_row(
                "SELECT preparation_cost_usd FROM runs WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0.0))
        })
    }

    /// The most recent run with exactly this spec that has not finished, if any.
    pub fn find_unfinished(&self, spec: &RunSpec) -> Result<Option<String>, StorageError> {
        let text = serde_json::to_string(spec).unwrap_or_default();
        self.with_conn(|c| {
        c.query_row(
            "SELECT id FROM runs WHERE spec = ?1 AND status != 'finished' ORDER BY rowid DESC LIMIT 1",
            [text],
            |r| r.get(0),
        )
        .optional()
    })
    }

    /// The runs left `running` or `created`, each either to resume (counted) or held back and
    /// marked `interrupted` when it made no progress since its previous automatic resume.
    pub fn unfinished_at_startup(&self) -> Result<Vec<Unfinished>, StorageError> {
        self.with_conn(|c| {
        let mut st = c.prepare(
            "SELECT r.id, r.startup_resumes, r.done_at_resume,
                    (SELECT COUNT(*) FROM results s WHERE s.run_id = r.id AND s.verdict IS NOT NULL)
             FROM runs r WHERE r.status IN ('running', 'created') ORDER BY r.rowid",
        )?;
        let rows: Vec<(String, i64, Option<i64>, i64)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for (id, resumes, done_then, done) in rows {
            if resumes > 0 && done_then == Some(done) {
                c.execute(
                    "UPDATE runs SET status = 'interrupted' WHERE id = ?1",
                    [&id],
                )?;
                c.execute(
                    "UPDATE run_briefs SET status = 'interrupted' WHERE id = ?1",
                    [&id],
                )?;
                out.push(Unfinished::Held(id));
            } else {
                c.execute(
                    "UPDATE runs SET startup_resumes = startup_resumes + 1, done_at_resume = ?2 WHERE id = ?1",
                    params![id, done],
                )?;
                out.push(Unfinished::Resume(id));
            }
        }
        Ok(out)
    })
    }

    /// The spec and status of a run.
    pub fn load_run(&self, id: &str) -> Result<Option<(RunSpec, RunStatus)>, StorageError> {
        let row: Option<(String, String)> = self.with_conn(|c| {
            c.query_row("SELECT spec, status FROM runs WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
        })?;
        Ok(row.and_then(|(spec, status)| {
            let status = RunStatus::from_name(&status)?;
            serde_json::from_str(&spec).ok().map(|s| (s, status))
        }))
    }

    /// Set a run's status.
    pub fn set_status(&self, id: &str, status: RunStatus) -> Result<(), StorageError> {
        self.with_conn(|c| {
            let tx = c.unchecked_transaction()?;
            tx.execute(
                "UPDATE runs SET status = ?2 WHERE id = ?1",
                params![id, status.name()],
            )?;
            tx.execute(
                "UPDATE run_briefs SET status = ?2 WHERE id = ?1",
                params![id, status.name()],
            )?;
            tx.commit()
        })?;
        Ok(())
    }

    /// (task, sample) pairs with a final result (a verdict, not a failed call).
    pub fn finished(&self, id: &str) -> Result<Vec<(String, u32)>, StorageError> {
        self.with_conn(|c| {
            let mut st = c.prepare(
                "SELECT task_id, sample FROM results WHERE run_id = ?1 AND verdict IS NOT NULL",
            )?;
            let rows = st.query_map([id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u32)))?;
            rows.collect()
        })
    }

    /// Store a result; a later result for the same (task, sample) replaces a failed call, never
    /// a verdict.
    pub fn put_result(&self, id: &str, r: &ResultRow) -> Result<(), StorageError> {
        let verdict = r
            .verdict
            .as_ref()
            .and_then(|v| serde_json::to_string(v).ok());
        let task = r.task.as_ref().map(|t| t.to_string());
        let outcome = r
            .outcome
            .as_ref()
            .and_then(|o| serde_json::to_string(o).ok());
        let transcript = r.transcript.as_ref().map(|t| t.to_string());
        self.with_conn(|c| {
            c.execute(
            "INSERT INTO results (run_id, task_id, sample, action, prompt, response, verdict, label,
                                  error, input_tokens, output_tokens, cost_usd, latency_ms, cached,
                                  task, outcome, transcript)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
             ON CONFLICT(run_id, task_id, sample) DO UPDATE SET
                 response = excluded.response, verdict = excluded.verdict, label = excluded.label,
                 error = excluded.error, input_tokens = excluded.input_tokens,
                 output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd,
                 latency_ms = excluded.latency_ms, cached = excluded.cached,
                 task = excluded.task, outcome = excluded.outcome,
                 transcript = excluded.transcript
             WHERE results.verdict IS NULL",
            params![
                id,
                r.task_id,
                r.sample,
                r.group,
                r.prompt,
                r.response,
                verdict,
                r.label,
                r.error,
                r.input_tokens as i64,
                r.output_tokens as i64,
                r.cost_usd,
                r.latency_ms as i64,
                r.cached,
                task,
                outcome,
                transcript,
            ],
        )
        })?;
        Ok(())
    }

    /// All results of a run, ordered by task and sample.
    pub fn results(&self, id: &str) -> Result<Vec<ResultRow>, StorageError> {
        self.with_conn(|c| {
            let mut st = c.prepare(
            "SELECT task_id, sample, action, prompt, response, verdict, label, error, input_tokens,
                    output_tokens, cost_usd, latency_ms, cached, task, outcome, transcript
             FROM results WHERE run_id = ?1 ORDER BY task_id, sample",
        )?;
            let rows = st.query_map([id], |r| {
                Ok(ResultRow {
                    task_id: r.get(0)?,
                    sample: r.get::<_, i64>(1)? as u32,
                    group: r.get(2)?,
                    prompt: r.get(3)?,
                    response: r.get(4)?,
                    verdict: r
                        .get::<_, Option<String>>(5)?
                        .and_then(|t| serde_json::from_str::<ResultVerdict>(&t).ok()),
                    label: r.get(6)?,
                    error: r.get(7)?,
                    input_tokens: r.get::<_, i64>(8)? as u64,
                    output_tokens: r.get::<_, i64>(9)? as u64,
                    cost_usd: r.get(10)?,
                    latency_ms: r.get::<_, i64>(11)? as u64,
                    cached: r.get(12)?,
                    task: r
                        .get::<_, Option<String>>(13)?
                        .and_then(|t| serde_json::from_str(&t).ok()),
                    outcome: r
                        .get::<_, Option<String>>(14)?
                        .and_then(|t| serde_json::from_str(&t).ok()),
                    transcript: r
                        .get::<_, Option<String>>(15)?
                        .and_then(|t| serde_json::from_str(&t).ok()),
                })
            })?;
            rows.collect()
        })
    }

    /// One page of runs as a list shows them (newest first, of `suite` if given), read from
    /// `run_briefs`, never their specs; and how many runs there are in all pages.
    pub fn list_run_items(
        &self,
        suite: Option<&str>,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<wire::RunListItem>, usize), StorageError> {
        const WHERE: &str = "WHERE ?1 IS NULL OR suite = ?1";
        self.with_conn(|c| {
            let total: i64 = c.query_row(
                &format!("SELECT COUNT(*) FROM run_briefs {WHERE}"),
                [suite],
                |r| r.get(0),
            )?;
            let mut st = c.prepare(&format!(
                "SELECT id, suite, brief, status, created_at FROM run_briefs {WHERE}
                 ORDER BY seq DESC LIMIT ?2 OFFSET ?3"
            ))?;
            let rows =
                st.query_map(rusqlite::params![suite, limit as i64, offset as i64], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                })?;
            let mut items = Vec::new();
            for row in rows {
                let (id, suite, brief, status, created_at) = row?;
                // A run whose brief or status no longer reads is left out, as in `list_runs`.
                let Some(b) = serde_json::from_str::<Brief>(&brief).ok() else {
                    continue;
                };
                let Some(status) = RunStatus::from_name(&status) else {
                    continue;
                };
                items.push(wire::RunListItem {
                    id,
                    suite,
                    model: b.model,
                    agent: b.agent,
                    condition: b.condition,
                    samples: b.samples.unwrap_or(1),
                    given_tasks: b.given_tasks,
                    status,
                    created_at,
                });
            }
            Ok((items, usize::try_from(total).unwrap_or(0)))
        })
    }

    /// Every run (id, spec, status), newest first; runs whose spec no longer reads are left out.
    pub fn list_runs(&self) -> Result<Vec<(String, RunSpec, RunStatus)>, StorageError> {
        let rows: Vec<(String, String, String)> = self.with_conn(|c| {
            let mut st = c.prepare("SELECT id, spec, status FROM runs ORDER BY rowid DESC")?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect()
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, spec, status)| {
                Some((
                    id,
                    serde_json::from_str(&spec).ok()?,
                    RunStatus::from_name(&status)?,
                ))
            })
            .collect())
    }
}

/// What a list shows of a run beyond its suite and status (`run_briefs.brief`).
#[derive(serde::Serialize, serde::Deserialize)]
struct Brief {
    model: String,
    agent: Option<String>,
    condition: Option<String>,
    samples: Option<u32>,
    given_tasks: Option<usize>,
}

fn brief(spec: &RunSpec) -> serde_json::Value {
    serde_json::json!(Brief {
        model: spec.model.clone(),
        agent: spec.agent.clone(),
        condition: spec.condition.clone(),
        samples: Some(spec.samples),
        given_tasks: match &spec.tasks {
            wire::TaskSource::Imported(t) => Some(t.tasks.len()),
            wire::TaskSource::Generated(_) => None,
        },
    })
}
