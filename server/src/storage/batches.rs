//! Provider batches of a run: a run executed with `--batch` sends its requests as one batch
//! (OpenAI's Batch API, Anthropic's Message Batches) and stores the batch's id before it
//! waits, so an instance that restarts (or another that takes the run over) polls the same
//! batch instead of paying for a second one.

use serde::{Deserialize, Serialize};

use super::engine::{now, params, Row};
use super::{Storage, StorageError};

/// One request of a batch: its id in the batch and the task sample it answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchItem {
    /// The request's `custom_id` (letters, digits, `_` and `-`: Anthropic's rule).
    pub custom_id: String,
    /// The task it asks.
    pub task_id: String,
    /// The sample of the task.
    pub sample: u32,
}

/// A batch sent for a run and not yet collected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenBatch {
    /// The provider's id of the batch.
    pub batch_id: String,
    /// The configured model it was sent to.
    pub model: String,
    /// Its requests.
    pub items: Vec<BatchItem>,
    /// What the provider last said of it (`in_progress`), if it was asked yet.
    pub provider_status: Option<String>,
}

impl Storage {
    /// Record that batch `batch_id` of `items` was sent to `model` for run `run_id`.
    /// A batch id already recorded for the run is an error, never an overwrite.
    pub fn put_batch(
        &self,
        run_id: &str,
        batch_id: &str,
        model: &str,
        items: &[BatchItem],
    ) -> Result<(), StorageError> {
        let items = serde_json::to_string(items).map_err(|e| StorageError::Json(e.to_string()))?;
        self.db().execute(
            "INSERT INTO run_batches (run_id, batch_id, model, items, status, submitted_at)
             VALUES (?1, ?2, ?3, ?4, 'waiting', ?5)",
            params![run_id, batch_id, model, items, now()],
        )?;
        Ok(())
    }

    /// The batches of run `run_id` whose answers are not all stored yet, oldest first.
    pub fn open_batches(&self, run_id: &str) -> Result<Vec<OpenBatch>, StorageError> {
        self.db()
            .query(
                "SELECT batch_id, model, items, provider_status FROM run_batches
                 WHERE run_id = ?1 AND status = 'waiting' ORDER BY submitted_at, batch_id",
                params![run_id],
            )?
            .iter()
            .map(open_batch)
            .collect()
    }

    /// Note what the provider said of a batch (shown while the run waits).
    pub fn note_batch_status(
        &self,
        run_id: &str,
        batch_id: &str,
        provider_status: &str,
    ) -> Result<(), StorageError> {
        self.db().execute(
            "UPDATE run_batches SET provider_status = ?3 WHERE run_id = ?1 AND batch_id = ?2",
            params![run_id, batch_id, provider_status],
        )?;
        Ok(())
    }

    /// Mark a batch collected: every answer it brought is stored.
    pub fn batch_collected(&self, run_id: &str, batch_id: &str) -> Result<(), StorageError> {
        self.db().execute(
            "UPDATE run_batches SET status = 'collected' WHERE run_id = ?1 AND batch_id = ?2",
            params![run_id, batch_id],
        )?;
        Ok(())
    }
}

fn open_batch(r: &Row) -> Result<OpenBatch, StorageError> {
    Ok(OpenBatch {
        batch_id: r.text(0)?,
        model: r.text(1)?,
        items: serde_json::from_str(&r.text(2)?).map_err(|e| StorageError::Json(e.to_string()))?,
        provider_status: r.opt_text(3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::each_engine;
    use super::*;

    #[test]
    fn a_batch_is_kept_until_collected_and_never_recorded_twice() {
        each_engine(|s| {
            s.execute_for_test(
                "INSERT INTO runs (id, spec, status) VALUES ('run-b', '{}', 'running')",
            );
            let items = vec![
                BatchItem {
                    custom_id: "r0".into(),
                    task_id: "change-0001".into(),
                    sample: 0,
                },
                BatchItem {
                    custom_id: "r1".into(),
                    task_id: "change-0001".into(),
                    sample: 1,
                },
            ];
            s.put_batch("run-b", "batch_1", "fake", &items).unwrap();
            assert!(s.put_batch("run-b", "batch_1", "fake", &items).is_err());
            s.note_batch_status("run-b", "batch_1", "in_progress")
                .unwrap();
            let open = s.open_batches("run-b").unwrap();
            assert_eq!(open.len(), 1);
            assert_eq!(open[0].items, items);
            assert_eq!(open[0].provider_status.as_deref(), Some("in_progress"));
            s.batch_collected("run-b", "batch_1").unwrap();
            assert!(s.open_batches("run-b").unwrap().is_empty());
        });
    }
}
