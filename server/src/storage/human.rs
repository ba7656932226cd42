//! People's own scores of a run's results (AlchemyBench's human scoring), each under its
//! scorer's name.

use wire::HumanScore;

use super::engine::{now, params};
use super::{Storage, StorageError};

impl Storage {
    /// Sets (or, with no score, removes) one score of its scorer.
    pub fn put_human_score(&self, run_id: &str, s: &HumanScore) -> Result<(), StorageError> {
        match s.score {
            Some(score) => self.db().execute(
                "INSERT INTO human_scores (run_id, task_id, sample, criterion, scorer, score,
                                           updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (run_id, task_id, sample, criterion, scorer) DO UPDATE SET
                     score = excluded.score, updated_at = excluded.updated_at",
                params![
                    run_id,
                    &s.task_id,
                    s.sample,
                    &s.criterion,
                    &s.scorer,
                    score,
                    now()
                ],
            )?,
            None => self.db().execute(
                "DELETE FROM human_scores
                 WHERE run_id = ?1 AND task_id = ?2 AND sample = ?3 AND criterion = ?4
                   AND scorer = ?5",
                params![run_id, &s.task_id, s.sample, &s.criterion, &s.scorer],
            )?,
        };
        Ok(())
    }

    /// Every score of a run, everyone's, by task, sample, criterion and scorer.
    pub fn human_scores(&self, run_id: &str) -> Result<Vec<HumanScore>, StorageError> {
        self.db()
            .query(
                "SELECT task_id, sample, criterion, score, scorer FROM human_scores
                 WHERE run_id = ?1 ORDER BY task_id, sample, criterion, scorer",
                params![run_id],
            )?
            .iter()
            .map(|r| {
                Ok(HumanScore {
                    task_id: r.text(0)?,
                    sample: sample(r.int(1)?),
                    criterion: r.text(2)?,
                    score: r.opt_real(3)?,
                    scorer: r.text(4)?,
                })
            })
            .collect()
    }
}

/// A stored sample number (written from a `u32`).
pub(super) fn sample(x: i64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::testing::each_engine;
    use super::*;

    #[test]
    fn a_score_is_set_replaced_and_removed_per_scorer() {
        each_engine(|s| {
            let score = |scorer: &str, v: Option<f64>| HumanScore {
                task_id: "t".into(),
                sample: 0,
                criterion: "overall_score".into(),
                score: v,
                scorer: scorer.into(),
            };
            s.put_human_score("r", &score("ann", Some(3.0))).unwrap();
            s.put_human_score("r", &score("ann", Some(4.5))).unwrap();
            s.put_human_score("r", &score("bob", Some(2.0))).unwrap();
            let all = s.human_scores("r").unwrap();
            assert_eq!(all, vec![score("ann", Some(4.5)), score("bob", Some(2.0))]);
            s.put_human_score("r", &score("ann", None)).unwrap();
            assert_eq!(s.human_scores("r").unwrap(), vec![score("bob", Some(2.0))]);
            assert!(s.human_scores("other").unwrap().is_empty());
        });
    }
}
