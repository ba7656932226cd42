//! The runs and results tables.

use sha2::{Digest, Sha256};
use wire::{ResultRow, ResultVerdict, RunSpec, RunStatus};

use super::engine::{now, params, Row};
use super::human::sample;
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

const RESULT_COLUMNS: &str = "task_id, sample, action, prompt, response, verdict, label, error,
     input_tokens, output_tokens, cost_usd, latency_ms, cached, task, outcome, transcript";

impl Storage {
    /// Create a run; its id is derived from the spec and a counter so ids are short and unique.
    pub fn create_run(&self, spec: &RunSpec) -> Result<String, StorageError> {
        let text = serde_json::to_string(spec).unwrap_or_default();
        let brief = brief(spec).to_string();
        // The run and its brief together, or neither: a run missing from the list would be
        // lost to the page.
        self.db().tx(|c| {
            let n = c.query_one("SELECT COUNT(*) FROM runs", &[])?.int(0)?;
            let digest = hex::encode(Sha256::digest(format!("{n}:{text}").as_bytes()));
            let id = format!("run-{}", &digest[..10]);
            let created = now();
            c.execute(
                "INSERT INTO runs (id, spec, status, created_at) VALUES (?1, ?2, 'created', ?3)",
                params![&id, &text, &created],
            )?;
            c.execute(
                "INSERT INTO run_briefs (id, suite, brief, status, created_at)
                 VALUES (?1, ?2, ?3, 'created', ?4)",
                params![&id, &spec.suite, &brief, &created],
            )?;
            Ok(id)
        })
    }

    /// Records that run `id` belongs to whoever holds the token whose digest is `digest`.
    pub fn set_run_owner(&self, id: &str, digest: &str) -> Result<(), StorageError> {
        self.db().execute(
            "INSERT INTO run_owners (id, token_digest) VALUES (?1, ?2)",
            params![id, digest],
        )?;
        Ok(())
    }

    /// The digest of the token run `id` belongs to; `None` for a run of the operator's.
    pub fn run_owner(&self, id: &str) -> Result<Option<String>, StorageError> {
        self.db()
            .query_opt(
                "SELECT token_digest FROM run_owners WHERE id = ?1",
                params![id],
            )?
            .map(|r| r.text(0))
            .transpose()
    }

    /// Adds `usd` to what preparing run `id`'s tasks cost (embeddings computed for them).
    pub fn add_preparation_cost(&self, id: &str, usd: f64) -> Result<(), StorageError> {
        self.db().execute(
            "UPDATE runs SET preparation_cost_usd = preparation_cost_usd + ?2 WHERE id = ?1",
            params![id, usd],
        )?;
        Ok(())
    }

    /// What preparing run `id`'s tasks cost so far (0 for an unknown run).
    pub fn preparation_cost(&self, id: &str) -> Result<f64, StorageError> {
        self.db()
            .query_opt(
                "SELECT preparation_cost_usd FROM runs WHERE id = ?1",
                params![id],
            )?
            .map_or(Ok(0.0), |r| r.real(0))
    }

    /// The most recent run with exactly this spec that has not finished, if any.
    pub fn find_unfinished(&self, spec: &RunSpec) -> Result<Option<String>, StorageError> {
        let text = serde_json::to_string(spec).unwrap_or_default();
        self.db()
            .query_opt(
                "SELECT id FROM runs WHERE spec = ?1 AND status <> 'finished'
                 ORDER BY rowid DESC LIMIT 1",
                params![text],
            )?
            .map(|r| r.text(0))
            .transpose()
    }

    /// The runs left `running` or `created`, each either to resume (counted) or held back and
    /// marked `interrupted` when it made no progress since its previous automatic resume.
    pub fn unfinished_at_startup(&self) -> Result<Vec<Unfinished>, StorageError> {
        self.db().tx(|c| {
            let rows = c.query(
                "SELECT r.id, r.startup_resumes, r.done_at_resume,
                        (SELECT COUNT(*) FROM results s
                         WHERE s.run_id = r.id AND s.verdict IS NOT NULL)
                 FROM runs r WHERE r.status IN ('running', 'created') ORDER BY r.rowid",
                &[],
            )?;
            let mut out = Vec::new();
            for r in rows {
                let (id, resumes, done_then, done) =
                    (r.text(0)?, r.int(1)?, r.opt_int(2)?, r.int(3)?);
                if resumes > 0 && done_then == Some(done) {
                    for table in ["runs", "run_briefs"] {
                        c.execute(
                            &format!("UPDATE {table} SET status = 'interrupted' WHERE id = ?1"),
                            params![&id],
                        )?;
                    }
                    out.push(Unfinished::Held(id));
                } else {
                    c.execute(
                        "UPDATE runs SET startup_resumes = startup_resumes + 1,
                             done_at_resume = ?2 WHERE id = ?1",
                        params![&id, done],
                    )?;
                    out.push(Unfinished::Resume(id));
                }
            }
            Ok(out)
        })
    }

    /// The spec and status of a run.
    pub fn load_run(&self, id: &str) -> Result<Option<(RunSpec, RunStatus)>, StorageError> {
        let Some(row) = self
            .db()
            .query_opt("SELECT spec, status FROM runs WHERE id = ?1", params![id])?
        else {
            return Ok(None);
        };
        let (spec, status) = (row.text(0)?, row.text(1)?);
        Ok(RunStatus::from_name(&status)
            .and_then(|status| serde_json::from_str(&spec).ok().map(|s| (s, status))))
    }

    /// Set a run's status.
    pub fn set_status(&self, id: &str, status: RunStatus) -> Result<(), StorageError> {
        self.db().tx(|c| {
            for table in ["runs", "run_briefs"] {
                c.execute(
                    &format!("UPDATE {table} SET status = ?2 WHERE id = ?1"),
                    params![id, status.name()],
                )?;
            }
            Ok(())
        })
    }

    /// (task, sample) pairs with a final result (a verdict, not a failed call).
    pub fn finished(&self, id: &str) -> Result<Vec<(String, u32)>, StorageError> {
        self.db()
            .query(
                "SELECT task_id, sample FROM results WHERE run_id = ?1 AND verdict IS NOT NULL",
                params![id],
            )?
            .iter()
            .map(|r| Ok((r.text(0)?, sample(r.int(1)?))))
            .collect()
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
        self.db().execute(
            &format!(
                "INSERT INTO results (run_id, {RESULT_COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
                 ON CONFLICT (run_id, task_id, sample) DO UPDATE SET
                     response = excluded.response, verdict = excluded.verdict,
                     label = excluded.label, error = excluded.error,
                     input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
                     cost_usd = excluded.cost_usd, latency_ms = excluded.latency_ms,
                     cached = excluded.cached, task = excluded.task, outcome = excluded.outcome,
                     transcript = excluded.transcript
                 WHERE results.verdict IS NULL"
            ),
            params![
                id,
                &r.task_id,
                r.sample,
                &r.group,
                &r.prompt,
                r.response.as_deref(),
                verdict,
                r.label.as_deref(),
                r.error.as_deref(),
                r.input_tokens,
                r.output_tokens,
                r.cost_usd,
                r.latency_ms,
                r.cached,
                task,
                outcome,
                transcript,
            ],
        )?;
        Ok(())
    }

    /// All results of a run, ordered by task and sample.
    pub fn results(&self, id: &str) -> Result<Vec<ResultRow>, StorageError> {
        self.db()
            .query(
                &format!(
                    "SELECT {RESULT_COLUMNS} FROM results WHERE run_id = ?1
                     ORDER BY task_id, sample"
                ),
                params![id],
            )?
            .iter()
            .map(result_row)
            .collect()
    }

    /// One page of runs as a list shows them (newest first, of `suite` if given), read from
    /// `run_briefs`, never their specs; and how many runs there are in all pages.
    pub fn list_run_items(
        &self,
        suite: Option<&str>,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<wire::RunListItem>, usize), StorageError> {
        const WHERE: &str = "WHERE CAST(?1 AS TEXT) IS NULL OR suite = ?1";
        let total = self
            .db()
            .query_one(
                &format!("SELECT COUNT(*) FROM run_briefs {WHERE}"),
                params![suite],
            )?
            .count(0)?;
        let rows = self.db().query(
            &format!(
                "SELECT id, suite, brief, status, created_at FROM run_briefs {WHERE}
                 ORDER BY seq DESC LIMIT ?2 OFFSET ?3"
            ),
            params![suite, limit, offset],
        )?;
        let mut items = Vec::new();
        for r in rows {
            let (brief, status) = (r.text(2)?, r.text(3)?);
            // A run whose brief or status no longer reads is left out, as in `list_runs`.
            let Some(b) = serde_json::from_str::<Brief>(&brief).ok() else {
                continue;
            };
            let Some(status) = RunStatus::from_name(&status) else {
                continue;
            };
            items.push(wire::RunListItem {
                id: r.text(0)?,
                suite: r.text(1)?,
                model: b.model,
                agent: b.agent,
                condition: b.condition,
                samples: b.samples.unwrap_or(1),
                given_tasks: b.given_tasks,
                status,
                created_at: r.text(4)?,
            });
        }
        Ok((items, usize::try_from(total).unwrap_or(usize::MAX)))
    }

    /// Every run (id, spec, status), newest first; runs whose spec no longer reads are left out.
    pub fn list_runs(&self) -> Result<Vec<(String, RunSpec, RunStatus)>, StorageError> {
        let rows = self
            .db()
            .query("SELECT id, spec, status FROM runs ORDER BY rowid DESC", &[])?;
        let mut out = Vec::new();
        for r in rows {
            let (spec, status) = (r.text(1)?, r.text(2)?);
            if let (Ok(spec), Some(status)) =
                (serde_json::from_str(&spec), RunStatus::from_name(&status))
            {
                out.push((r.text(0)?, spec, status));
            }
        }
        Ok(out)
    }
}

/// A stored result row (columns in [`RESULT_COLUMNS`]' order); a JSON column that does not
/// read (written by another version) is left empty rather than failing the whole list.
fn result_row(r: &Row) -> Result<ResultRow, StorageError> {
    let json = |i: usize| -> Result<Option<serde_json::Value>, StorageError> {
        Ok(r.opt_text(i)?.and_then(|t| serde_json::from_str(&t).ok()))
    };
    Ok(ResultRow {
        task_id: r.text(0)?,
        sample: sample(r.int(1)?),
        group: r.text(2)?,
        prompt: r.text(3)?,
        response: r.opt_text(4)?,
        verdict: r
            .opt_text(5)?
            .and_then(|t| serde_json::from_str::<ResultVerdict>(&t).ok()),
        label: r.opt_text(6)?,
        error: r.opt_text(7)?,
        input_tokens: r.count(8)?,
        output_tokens: r.count(9)?,
        cost_usd: r.real(10)?,
        latency_ms: r.count(11)?,
        cached: r.bool(12)?,
        task: json(13)?,
        outcome: r.opt_text(14)?.and_then(|t| serde_json::from_str(&t).ok()),
        transcript: json(15)?,
    })
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

#[cfg(test)]
mod tests {
    use super::super::testing::each_engine;
    use wire::{ResultRow, RunSpec};

    fn row(task_id: &str) -> ResultRow {
        ResultRow {
            task_id: task_id.into(),
            sample: 0,
            group: "remove".into(),
            task: None,
            transcript: None,
            prompt: "p".into(),
            response: Some("r".into()),
            verdict: None,
            label: None,
            outcome: None,
            error: Some("timeout".into()),
            input_tokens: 1,
            output_tokens: 2,
            cost_usd: 0.5,
            latency_ms: 3,
            cached: true,
        }
    }

    /// Results come back in byte order of their task ids on both engines, whatever the
    /// PostgreSQL database's collation (the test databases' is ICU's en-US).
    #[test]
    fn results_read_back_whole_and_in_byte_order() {
        each_engine(|s| {
            let spec: RunSpec = serde_json::from_value(serde_json::json!({
                "suite": benchmarks::task::Registry::DEFAULT, "model": "reference",
                "samples": 1, "concurrency": 1, "tasks": {"imported_from": "t", "tasks": []}
            }))
            .unwrap();
            let id = s.create_run(&spec).unwrap();
            let ids = ["a_b", "a-b", "A", "b", "ab", "a10", "a9"];
            for t in ids {
                s.put_result(&id, &row(t)).unwrap();
            }
            let back = s.results(&id).unwrap();
            let mut sorted = ids.to_vec();
            sorted.sort_unstable();
            let order: Vec<&str> = back.iter().map(|r| r.task_id.as_str()).collect();
            assert_eq!(order, sorted);
            assert_eq!(back[0], row("A"));
        });
    }
}
