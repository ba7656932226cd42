//! Sandbox jobs across instances: an instance that lacks a sandbox environment (a web
//! server without the pymatgen sandbox) queues the program here; a worker that has the
//! environment (`atomworld worker --role sandbox`) claims it, runs it and stores the
//! outcome, which the asking instance reads. Workers say which environments they have and
//! when they were last seen, so a job is queued only while a worker that can run it lives.
//!
//! On PostgreSQL a claim takes the oldest waiting job with `FOR UPDATE SKIP LOCKED`, so
//! workers never wait for each other or take the same job; a job whose worker died (its
//! claim ran out) is claimed again.

use super::engine::{now, now_plus, params, Row};
use super::{Storage, StorageError};

/// A worker is alive while it was seen within this many seconds (it says so every third).
pub const WORKER_ALIVE_SECS: i64 = 30;

/// A job a worker claimed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedJob {
    /// The job's id.
    pub id: String,
    /// Its environment (`pymatgen`, `python`).
    pub env: String,
    /// The program, as JSON ([`benchmarks::task::RunProgram`]).
    pub program: String,
}

/// How a job ended: the result as JSON, or why it has none.
pub type JobOutcome = Result<String, String>;

impl Storage {
    /// Say that worker `id` lives, with `roles` and the sandbox environments `envs` it runs.
    pub fn worker_seen(&self, id: &str, roles: &str, envs: &[&str]) -> Result<(), StorageError> {
        let envs = format!(",{},", envs.join(","));
        self.db().execute(
            "INSERT INTO workers (id, roles, envs, seen_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (id) DO UPDATE SET roles = excluded.roles, envs = excluded.envs,
                 seen_at = excluded.seen_at",
            params![id, roles, envs, now()],
        )?;
        Ok(())
    }

    /// Forget worker `id` (it stops).
    pub fn worker_gone(&self, id: &str) -> Result<(), StorageError> {
        self.db()
            .execute("DELETE FROM workers WHERE id = ?1", params![id])?;
        Ok(())
    }

    /// How many live workers run environment `env`.
    pub fn workers_with(&self, env: &str) -> Result<u64, StorageError> {
        self.db()
            .query_one(
                "SELECT COUNT(*) FROM workers WHERE envs LIKE ?1 AND seen_at >= ?2",
                params![format!("%,{env},%"), now_plus(-WORKER_ALIVE_SECS)],
            )?
            .count(0)
    }

    /// Queue job `id`: `program` (JSON) to run in environment `env`.
    pub fn queue_job(&self, id: &str, env: &str, program: &str) -> Result<(), StorageError> {
        self.db().execute(
            "INSERT INTO sandbox_jobs (id, env, program, status, created_at)
             VALUES (?1, ?2, ?3, 'queued', ?4)",
            params![id, env, program, now()],
        )?;
        Ok(())
    }

    /// Claim for `worker`, for `secs` seconds, the oldest job in one of `envs` that waits,
    /// or whose worker died (its claim ran out, or it was not seen for
    /// [`WORKER_ALIVE_SECS`]).
    pub fn claim_job(
        &self,
        worker: &str,
        envs: &[&str],
        secs: i64,
    ) -> Result<Option<ClaimedJob>, StorageError> {
        if envs.is_empty() {
            return Ok(None);
        }
        let list = envs
            .iter()
            .map(|e| format!("'{}'", e.replace('\'', "")))
            .collect::<Vec<_>>()
            .join(", ");
        // SQLite has one writer at a time and no row locks to skip.
        let skip_locked = if self.is_shared() {
            "FOR UPDATE SKIP LOCKED"
        } else {
            ""
        };
        let row = self.db().query_opt(
            &format!(
                "UPDATE sandbox_jobs SET status = 'running', worker = ?1, claimed_until = ?2
                 WHERE id = (SELECT id FROM sandbox_jobs
                             WHERE env IN ({list})
                               AND (status = 'queued'
                                    OR (status = 'running'
                                        AND (claimed_until < ?3 OR worker NOT IN
                                             (SELECT id FROM workers WHERE seen_at >= ?4))))
                             ORDER BY created_at, id LIMIT 1 {skip_locked})
                 RETURNING id, env, program"
            ),
            params![worker, now_plus(secs), now(), now_plus(-WORKER_ALIVE_SECS)],
        )?;
        row.as_ref().map(claimed).transpose()
    }

    /// Store how job `id`, claimed by `worker`, ended; false when the job is gone (its asker
    /// gave up) or another worker holds it now.
    pub fn finish_job(
        &self,
        id: &str,
        worker: &str,
        outcome: &JobOutcome,
    ) -> Result<bool, StorageError> {
        let (result, error) = match outcome {
            Ok(r) => (Some(r.as_str()), None),
            Err(e) => (None, Some(e.as_str())),
        };
        Ok(self.db().execute(
            "UPDATE sandbox_jobs SET status = 'done', result = ?3, error = ?4
             WHERE id = ?1 AND worker = ?2 AND status = 'running'",
            params![id, worker, result, error],
        )? > 0)
    }

    /// How job `id` ended, once it has.
    pub fn job_outcome(&self, id: &str) -> Result<Option<JobOutcome>, StorageError> {
        let Some(r) = self.db().query_opt(
            "SELECT result, error FROM sandbox_jobs WHERE id = ?1 AND status = 'done'",
            params![id],
        )?
        else {
            return Ok(None);
        };
        Ok(Some(match (r.opt_text(0)?, r.opt_text(1)?) {
            (Some(result), _) => Ok(result),
            (None, error) => Err(error.unwrap_or_default()),
        }))
    }

    /// Remove job `id` (read, or given up).
    pub fn drop_job(&self, id: &str) -> Result<(), StorageError> {
        self.db()
            .execute("DELETE FROM sandbox_jobs WHERE id = ?1", params![id])?;
        Ok(())
    }
}

fn claimed(r: &Row) -> Result<ClaimedJob, StorageError> {
    Ok(ClaimedJob {
        id: r.text(0)?,
        env: r.text(1)?,
        program: r.text(2)?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::each_engine;

    #[test]
    fn jobs_go_to_workers_of_their_environment_once() {
        each_engine(|s| {
            assert_eq!(s.workers_with("pymatgen").unwrap(), 0);
            s.worker_seen("w1", "sandbox", &["python", "pymatgen"])
                .unwrap();
            s.worker_seen("w2", "sandbox", &["python"]).unwrap();
            assert_eq!(s.workers_with("pymatgen").unwrap(), 1);
            assert_eq!(s.workers_with("python").unwrap(), 2);
            s.queue_job("j1", "pymatgen", "{\"code\":\"1\"}").unwrap();
            s.queue_job("j2", "python", "{\"code\":\"2\"}").unwrap();
            // w2 has no pymatgen: it gets the python job only.
            let j = s.claim_job("w2", &["python"], 60).unwrap().unwrap();
            assert_eq!((j.id.as_str(), j.env.as_str()), ("j2", "python"));
            assert!(s.claim_job("w2", &["python"], 60).unwrap().is_none());
            let j = s
                .claim_job("w1", &["python", "pymatgen"], 60)
                .unwrap()
                .unwrap();
            assert_eq!(j.id, "j1");
            assert_eq!(s.job_outcome("j1").unwrap(), None);
            // Only the holder finishes a job.
            assert!(!s.finish_job("j1", "w2", &Ok("{}".into())).unwrap());
            assert!(s
                .finish_job("j1", "w1", &Ok("{\"stdout\":\"x\"}".into()))
                .unwrap());
            assert_eq!(
                s.job_outcome("j1").unwrap(),
                Some(Ok("{\"stdout\":\"x\"}".into()))
            );
            s.drop_job("j1").unwrap();
            assert_eq!(s.job_outcome("j1").unwrap(), None);
            // A claim that ran out (its worker died) is claimed again.
            s.queue_job("j3", "python", "{}").unwrap();
            assert!(s.claim_job("w2", &["python"], -1).unwrap().is_some());
            let again = s.claim_job("w1", &["python"], 60).unwrap().unwrap();
            assert_eq!(again.id, "j3");
            assert!(s
                .finish_job("j3", "w1", &Err("backend failed".into()))
                .unwrap());
            assert_eq!(
                s.job_outcome("j3").unwrap(),
                Some(Err("backend failed".into()))
            );
            s.worker_gone("w1").unwrap();
            assert_eq!(s.workers_with("pymatgen").unwrap(), 0);
        });
    }
}
