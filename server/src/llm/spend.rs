//! Spend caps that hold at any concurrency: a call reserves its worst-case cost before it is
//! sent and settles its real cost after, so the calls in flight can never together carry a
//! cap further than one call's worst case.
//!
//! A call may start while the spend so far plus the reservations in flight plus its own worst
//! case stay within the cap, or, when nothing else is in flight, while the spend so far is
//! below the cap (so a cap smaller than one call's worst case still lets calls through one at
//! a time). Otherwise it waits for a call in flight to settle; once the cap is reached, it
//! is refused.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::LlmError;
use crate::storage::{Ledger as Book, SpendClaim, Storage};

/// Where a budget's settled spend is counted.
enum Ledger {
    /// In memory (a run's budget), starting from what the run spent earlier.
    Memory(f64),
    /// Today's row of the spend table, which every process sharing the database adds to.
    /// On a shared store the claims of calls in flight live there too (every instance's
    /// count against the cap), each kept at most `claim_secs`.
    Daily { storage: Storage, claim_secs: u64 },
    /// A run's row of the run spend table, on a store whose instances share the run's
    /// slices: its calls' claims live there too, each kept at most `claim_secs`.
    Run {
        storage: Storage,
        run: String,
        claim_secs: u64,
    },
}

#[derive(Default)]
struct Held {
    /// Worst-case costs of the calls in flight.
    reserved: f64,
    /// Calls in flight.
    calls: usize,
}

/// One spend cap and the calls reserved against it.
pub struct Budget {
    cap: f64,
    what: &'static str,
    ledger: Mutex<Ledger>,
    held: Mutex<Held>,
    settled: Notify,
}

impl Budget {
    /// A run's cap of `cap` USD, of which `spent` went to earlier sessions of the run.
    pub fn for_run(cap: f64, spent: f64) -> Arc<Self> {
        Arc::new(Self::new(cap, "the run's spend cap", Ledger::Memory(spent)))
    }

    /// Run `run`'s cap of `cap` USD over its spend in `storage`, shared by the instances
    /// that execute its slices; a call's claim lasts at most `claim_secs`. What the run spent
    /// before (`spent`, from its stored results) is counted once.
    pub fn for_shared_run(
        cap: f64,
        storage: Storage,
        run: &str,
        spent: f64,
        claim_secs: u64,
    ) -> Result<Arc<Self>, crate::storage::StorageError> {
        let book = Book::Run(run.to_string());
        let counted = storage.spent_in(&book)?;
        if spent > counted {
            storage.add_to(&book, spent - counted)?;
        }
        Ok(Arc::new(Self::new(
            cap,
            "the run's spend cap",
            Ledger::Run {
                storage,
                run: run.to_string(),
                claim_secs,
            },
        )))
    }

    /// The daily cap of `cap` USD over today's spend in `storage`; a call's claim lasts at
    /// most `claim_secs` (longer than any call may take) should its instance die holding it.
    pub fn daily(cap: f64, storage: Storage, claim_secs: u64) -> Arc<Self> {
        Arc::new(Self::new(
            cap,
            "the daily spend cap",
            Ledger::Daily {
                storage,
                claim_secs,
            },
        ))
    }

    fn new(cap: f64, what: &'static str, ledger: Ledger) -> Self {
        Self {
            cap,
            what,
            ledger: Mutex::new(ledger),
            held: Mutex::new(Held::default()),
            settled: Notify::new(),
        }
    }

    /// Settled spend so far.
    pub fn spent(&self) -> f64 {
        match &*lock(&self.ledger) {
            Ledger::Memory(s) => *s,
            Ledger::Daily { storage, .. } => {
                storage.spend_on(super::gateway::today()).unwrap_or(0.0)
            }
            Ledger::Run { storage, run, .. } => {
                storage.spent_in(&Book::Run(run.clone())).unwrap_or(0.0)
            }
        }
    }

    /// The store whose claims this budget uses, the ledger they count against and how long
    /// a claim lasts, when instances share it.
    fn shared(&self) -> Option<(Storage, Book, u64)> {
        match &*lock(&self.ledger) {
            Ledger::Daily {
                storage,
                claim_secs,
            } if storage.is_shared() => Some((
                storage.clone(),
                Book::Day(super::gateway::today()),
                *claim_secs,
            )),
            Ledger::Run {
                storage,
                run,
                claim_secs,
            } => Some((storage.clone(), Book::Run(run.clone()), *claim_secs)),
            _ => None,
        }
    }

    fn reached(&self, spent: f64) -> LlmError {
        LlmError::SpendCap(format!(
            "{} ${:.2} is reached (${spent:.4} spent)",
            self.what, self.cap
        ))
    }

    /// [`reserve`](Self::reserve) against the claims in the shared store: asked again every
    /// 50 ms while other calls (of any instance) hold the rest of the cap.
    async fn reserve_shared(
        self: &Arc<Self>,
        worst: f64,
        storage: Storage,
        book: Book,
        claim_secs: u64,
    ) -> Result<Reservation, LlmError> {
        let id = format!("{:032x}", rand::random::<u128>());
        loop {
            let (s, claim, cap, b) = (storage.clone(), id.clone(), self.cap, book.clone());
            let asked =
                tokio::task::spawn_blocking(move || s.claim_in(&b, cap, worst, &claim, claim_secs))
                    .await;
            match asked {
                Ok(Ok(SpendClaim::Granted)) => {
                    return Ok(Reservation {
                        budget: self.clone(),
                        worst,
                        open: true,
                        claim: Some((storage, book, id)),
                    })
                }
                Ok(Ok(SpendClaim::Reached(spent))) => return Err(self.reached(spent)),
                Ok(Ok(SpendClaim::Wait)) => {}
                Ok(Err(e)) => {
                    return Err(LlmError::SpendCap(format!(
                        "{} cannot be checked: {e}",
                        self.what
                    )))
                }
                Err(e) => return Err(LlmError::SpendCap(format!("{}: {e}", self.what))),
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Wait until a call whose cost is at most `worst` USD may start; an error once the cap
    /// is reached.
    pub async fn reserve(self: &Arc<Self>, worst: f64) -> Result<Reservation, LlmError> {
        let worst = if worst.is_finite() {
            worst.max(0.0)
        } else {
            0.0
        };
        if let Some((storage, book, claim_secs)) = self.shared() {
            return self.reserve_shared(worst, storage, book, claim_secs).await;
        }
        loop {
            let notified = self.settled.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                // Read the spend while holding the claims: a settling call writes its cost
                // before it gives its claim back, so the two are never both missed.
                let mut held = lock(&self.held);
                let spent = self.spent();
                if spent >= self.cap {
                    return Err(self.reached(spent));
                }
                if held.calls == 0 || spent + held.reserved + worst <= self.cap {
                    held.reserved += worst;
                    held.calls += 1;
                    return Ok(Reservation {
                        budget: self.clone(),
                        worst,
                        open: true,
                        claim: None,
                    });
                }
            }
            notified.await;
        }
    }

    fn release(&self, worst: f64, cost: Option<f64>) {
        if let (Some(cost), Ledger::Memory(spent)) = (cost, &mut *lock(&self.ledger)) {
            *spent += cost;
        }
        {
            let mut held = lock(&self.held);
            held.reserved = (held.reserved - worst).max(0.0);
            held.calls = held.calls.saturating_sub(1);
            if held.calls == 0 {
                held.reserved = 0.0;
            }
        }
        self.settled.notify_waiters();
    }
}

/// A call's claim on a budget; dropping it unsettled releases the claim at no cost (the
/// call failed and providers do not charge failed calls).
pub struct Reservation {
    budget: Arc<Budget>,
    worst: f64,
    open: bool,
    /// The claim in the shared store, when the budget's instances share one.
    claim: Option<(Storage, Book, String)>,
}

impl Reservation {
    /// The call cost `cost` USD. (For the daily budget the cost is already in the spend
    /// table: settle after writing it there, so it is never counted in neither place. A
    /// shared run budget writes it here, before its claim is given back.)
    pub fn settle(mut self, cost: f64) {
        self.open = false;
        if let Some((storage, book @ Book::Run(_), _)) = &self.claim {
            if let Err(e) = storage.add_to(book, cost) {
                tracing::warn!("a call's cost is missing from its run's spend: {e}");
            }
        }
        self.give_back();
        self.budget.release(self.worst, Some(cost));
    }

    /// Gives the shared claim back (it expires on its own should this fail).
    fn give_back(&mut self) {
        if let Some((storage, book, id)) = self.claim.take() {
            if let Err(e) = storage.release_in(&book, &id) {
                tracing::warn!("a spend claim stays until it expires: {e}");
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.give_back();
        if self.open {
            self.budget.release(self.worst, None);
        }
    }
}

/// Locks a mutex whose data stays valid even if a holder panicked (plain numbers).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn concurrent_calls_never_carry_the_cap_past_one_worst_case() {
        let b = Budget::for_run(0.10, 0.0);
        let made = thirty_two_calls(std::slice::from_ref(&b), |_| {}).await;
        assert_cap_held(b.spent(), made);
    }

    /// 32 calls at once, spread over `budgets` in turn, each with a worst case of $0.03 and
    /// a real cost of $0.025, which `record` writes before the call settles; how many went.
    async fn thirty_two_calls(
        budgets: &[Arc<Budget>],
        record: impl Fn(f64) + Clone + Send + 'static,
    ) -> usize {
        let mut tasks = Vec::new();
        for i in 0..32 {
            let (b, record) = (budgets[i % budgets.len()].clone(), record.clone());
            tasks.push(tokio::spawn(async move {
                match b.reserve(0.03).await {
                    Ok(r) => {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        record(0.025);
                        r.settle(0.025);
                        true
                    }
                    Err(_) => false,
                }
            }));
        }
        let mut made = 0;
        for t in tasks {
            made += usize::from(t.await.unwrap_or(false));
        }
        made
    }

    /// A $0.10 cap passed by at most one worst case, and not stopped early.
    fn assert_cap_held(spent: f64, made: usize) {
        assert!(spent <= 0.10 + 0.03 + 1e-9, "spent {spent} in {made} calls");
        assert!(spent >= 0.0999, "stopped early at {spent}");
        assert!((4..=5).contains(&made), "{made} calls for {spent}");
    }

    #[tokio::test]
    async fn a_cap_below_one_worst_case_lets_calls_through_one_at_a_time() {
        let b = Budget::for_run(0.01, 0.0);
        let r = b.reserve(1.0).await.unwrap();
        // A second call waits until the first settles, then sees the cap reached.
        let b2 = b.clone();
        let waiter = tokio::spawn(async move { b2.reserve(1.0).await.is_err() });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        r.settle(0.02);
        assert!(waiter.await.unwrap());
        // A failed call (dropped reservation) costs nothing and frees its claim.
        let b = Budget::for_run(0.05, 0.0);
        drop(b.reserve(1.0).await.unwrap());
        assert_eq!(b.spent(), 0.0);
        assert!(b.reserve(1.0).await.is_ok());
    }

    /// Two instances' stores on one fresh PostgreSQL database, if a server is configured.
    fn two_instances() -> Option<(Storage, Storage)> {
        let mut url = None;
        crate::storage::testing::each_postgres(|u| url = Some(u.to_string()));
        let open = |url: &str| {
            Storage::open_at(&crate::storage::Location::Postgres(url.to_string())).unwrap()
        };
        url.map(|u| (open(&u), open(&u)))
    }

    /// Two instances on one PostgreSQL database, 32 calls at once spread over both, under
    /// one daily cap: together they pass the cap by at most one call's worst case.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn instances_sharing_a_database_share_the_daily_cap() {
        let Some((a, b)) = two_instances() else {
            return;
        };
        let budgets = [
            Budget::daily(0.10, a.clone(), 600),
            Budget::daily(0.10, b, 600),
        ];
        let writer = a.clone();
        let made = thirty_two_calls(&budgets, move |cost| {
            writer
                .add_spend(crate::llm::gateway::today(), cost)
                .unwrap();
        })
        .await;
        assert_cap_held(a.spend_on(crate::llm::gateway::today()).unwrap(), made);
    }

    /// Two instances executing one run's slices, 32 calls at once spread over both, under the
    /// run's $0.10 cap: together they pass it by at most one call's worst case.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn instances_sharing_a_run_share_its_cap() {
        let Some((a, b)) = two_instances() else {
            return;
        };
        let budgets = [
            Budget::for_shared_run(0.10, a.clone(), "run-1", 0.0, 600).unwrap(),
            Budget::for_shared_run(0.10, b, "run-1", 0.0, 600).unwrap(),
        ];
        let made = thirty_two_calls(&budgets, |_| {}).await;
        assert_cap_held(a.spent_in(&Book::Run("run-1".into())).unwrap(), made);
        // Another run's ledger is apart, and what a run spent before counts once.
        let c = Budget::for_shared_run(0.10, a.clone(), "run-2", 0.04, 600).unwrap();
        assert_eq!(c.spent(), 0.04);
        let again = Budget::for_shared_run(0.10, a, "run-2", 0.04, 600).unwrap();
        assert_eq!(again.spent(), 0.04);
    }
}
