//! People's own scores of a run's results (AlchemyBench's human scoring), each under its
//! scorer's name.

use rusqlite::params;
use wire::HumanScore;

use super::{Storage, StorageError};

impl Storage {
    /// Sets (or, with no score, removes) one score of its scorer.
    pub fn put_human_score(&self, run_id: &str, s: &HumanScore) -> Result<(), StorageError> {
        self.with_conn(|c| {
            match s.score {
                Some(score) => c.execute(
                    "INSERT INTO human_scores (run_id, task_id, sample, criterion, scorer, score)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(run_id, task_id, sample, criterion, scorer) DO UPDATE SET
                         score = excluded.score,
                         updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
                    params![run_id, s.task_id, s.sample, s.criterion, s.scorer, score],
                )?,
                None => c.execute(
                    "DELETE FROM human_scores
                     WHERE run_id = ?1 AND task_id = ?2 AND sample = ?3 AND criterion = ?4
                       AND scorer = ?5",
                    params![run_id, s.task_id, s.sample, s.criterion, s.scorer],
                )?,
            };
            Ok(())
        })
    }

    /// Every score of a run, everyone's, by task, sample, criterion and scorer.
    pub fn human_scores(&self, run_id: &str) -> Result<Vec<HumanScore>, StorageError> {
        self.with_conn(|c| {
            let mut st = c.prepare(
                "SELECT task_id, sample, criterion, score, scorer FROM human_scores
                 WHERE run_id = ?1 ORDER BY task_id, sample, criterion, scorer",
            )?;
            let rows = st.query_map([run_id], |r| {
                Ok(HumanScore {
                    task_id: r.get(0)?,
                    sample: r.get::<_, i64>(1)? as u32,
                    criterion: r.get(2)?,
                    score: r.get(3)?,
                    scorer: r.get(4)?,
                })
            })?;
            rows.collect()
        })
    }
}
