//! What the model calls cost: the spend per day and per run, and the claims calls in flight
//! hold against the daily cap and a run's cap. Claims live in the database so that instances
//! sharing it share the caps: a claim is made in one transaction that reads the ledger's
//! spend and every live claim, and it expires on its own if its instance dies before giving
//! it back.

use super::engine::{now, now_plus, params, Value};
use super::{Storage, StorageError};

/// What asking for a claim on a cap gave.
#[derive(Clone, Debug, PartialEq)]
pub enum SpendClaim {
    /// Claimed: the call may start.
    Granted,
    /// Other calls in flight hold the rest of the cap: ask again once one settles.
    Wait,
    /// The cap is reached: this much is spent.
    Reached(f64),
}

/// Whose spend a cap counts: a day's (the daily cap, every call of every run) or one run's.
#[derive(Clone, Debug, PartialEq)]
pub enum Ledger {
    /// Day number since the Unix epoch, UTC.
    Day(i64),
    /// A run, by id.
    Run(String),
}

impl Ledger {
    /// The spend table, the claims table and their key column.
    fn tables(&self) -> (&'static str, &'static str, &'static str) {
        match self {
            Ledger::Day(_) => ("llm_spend", "spend_claims", "day"),
            Ledger::Run(_) => ("run_spend", "run_spend_claims", "run_id"),
        }
    }

    fn key(&self) -> Value {
        match self {
            Ledger::Day(d) => Value::from(*d),
            Ledger::Run(r) => Value::from(r.as_str()),
        }
    }
}

impl Storage {
    /// Add to the spend of day `day` (days since the Unix epoch, UTC).
    pub fn add_spend(&self, day: i64, cost_usd: f64) -> Result<(), StorageError> {
        self.add_to(&Ledger::Day(day), cost_usd)
    }

    /// Add to the spend counted in `ledger`.
    pub fn add_to(&self, ledger: &Ledger, cost_usd: f64) -> Result<(), StorageError> {
        let (spend, _, key) = ledger.tables();
        self.db().execute(
            &format!(
                "INSERT INTO {spend} ({key}, cost_usd) VALUES (?1, ?2)
                 ON CONFLICT ({key}) DO UPDATE SET cost_usd = {spend}.cost_usd + excluded.cost_usd"
            ),
            &[ledger.key(), Value::from(cost_usd)],
        )?;
        Ok(())
    }

    /// The spend of day `day` in USD.
    pub fn spend_on(&self, day: i64) -> Result<f64, StorageError> {
        self.spent_in(&Ledger::Day(day))
    }

    /// The spend counted in `ledger`, in USD.
    pub fn spent_in(&self, ledger: &Ledger) -> Result<f64, StorageError> {
        let (spend, _, key) = ledger.tables();
        let row = self.db().query_opt(
            &format!("SELECT cost_usd FROM {spend} WHERE {key} = ?1"),
            &[ledger.key()],
        )?;
        row.map_or(Ok(0.0), |r| r.real(0))
    }

    /// Claims `worst` USD of day `day`'s `cap` for a call: [`Self::claim_in`].
    pub fn claim_spend(
        &self,
        day: i64,
        cap: f64,
        worst: f64,
        id: &str,
        ttl_secs: u64,
    ) -> Result<SpendClaim, StorageError> {
        self.claim_in(&Ledger::Day(day), cap, worst, id, ttl_secs)
    }

    /// Claims `worst` USD of `ledger`'s `cap` for a call (claim `id`, kept `ttl_secs` at
    /// most): granted while the ledger's spend plus every live claim plus `worst` stays
    /// within the cap, or when no claim is live and the spend is below the cap (so a cap
    /// smaller than one call's worst case lets calls through one at a time).
    pub fn claim_in(
        &self,
        ledger: &Ledger,
        cap: f64,
        worst: f64,
        id: &str,
        ttl_secs: u64,
    ) -> Result<SpendClaim, StorageError> {
        let ttl = i64::try_from(ttl_secs).unwrap_or(i64::MAX / 2);
        let (spend, claims, key) = ledger.tables();
        self.db().tx(|c| {
            let spent = c
                .query_opt(
                    &format!("SELECT cost_usd FROM {spend} WHERE {key} = ?1"),
                    &[ledger.key()],
                )?
                .map_or(Ok(0.0), |r| r.real(0))?;
            if spent >= cap {
                return Ok(SpendClaim::Reached(spent));
            }
            let held = c.query_one(
                &format!(
                    "SELECT COUNT(*), COALESCE(SUM(usd), 0) FROM {claims}
                     WHERE {key} = ?1 AND expires_at > ?2"
                ),
                &[ledger.key(), Value::from(now())],
            )?;
            if held.count(0)? > 0 && spent + held.real(1)? + worst > cap {
                return Ok(SpendClaim::Wait);
            }
            c.execute(
                &format!(
                    "INSERT INTO {claims} (id, {key}, usd, expires_at) VALUES (?1, ?2, ?3, ?4)"
                ),
                &[
                    Value::from(id),
                    ledger.key(),
                    Value::from(worst),
                    Value::from(now_plus(ttl)),
                ],
            )?;
            Ok(SpendClaim::Granted)
        })
    }

    /// Gives claim `id` back (its call settled or failed), and forgets expired claims.
    pub fn release_spend(&self, id: &str) -> Result<(), StorageError> {
        self.release_in(&Ledger::Day(0), id)
    }

    /// Gives claim `id` on `ledger`'s kind of cap back, and forgets expired claims.
    pub fn release_in(&self, ledger: &Ledger, id: &str) -> Result<(), StorageError> {
        let (_, claims, _) = ledger.tables();
        self.db().execute(
            &format!("DELETE FROM {claims} WHERE id = ?1 OR expires_at <= ?2"),
            params![id, now()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::each_engine;
    use super::*;

    #[test]
    fn spend_adds_up_per_day() {
        each_engine(|s| {
            s.add_spend(20_000, 0.25).unwrap();
            s.add_spend(20_000, 0.5).unwrap();
            s.add_spend(20_001, 1.0).unwrap();
            assert_eq!(s.spend_on(20_000).unwrap(), 0.75);
            assert_eq!(s.spend_on(20_001).unwrap(), 1.0);
            assert_eq!(s.spend_on(19_999).unwrap(), 0.0);
        });
    }

    #[test]
    fn claims_hold_the_cap_and_expire() {
        each_engine(|s| {
            let claim = |id: &str, worst: f64| s.claim_spend(7, 0.10, worst, id, 600).unwrap();
            assert_eq!(claim("a", 0.06), SpendClaim::Granted);
            assert_eq!(
                claim("b", 0.06),
                SpendClaim::Wait,
                "0.12 would pass the cap"
            );
            assert_eq!(claim("c", 0.03), SpendClaim::Granted);
            s.add_spend(7, 0.05).unwrap();
            s.release_spend("a").unwrap();
            assert_eq!(
                claim("d", 0.015),
                SpendClaim::Granted,
                "0.05 + 0.03 + 0.015"
            );
            assert_eq!(claim("e", 0.03), SpendClaim::Wait);
            s.release_spend("c").unwrap();
            s.release_spend("d").unwrap();
            // Alone, a call larger than what is left still goes (the cap is not reached).
            assert_eq!(claim("f", 1.0), SpendClaim::Granted);
            // A claim whose instance died expires.
            s.execute_for_test("UPDATE spend_claims SET expires_at = '2000-01-01T00:00:00Z'");
            assert_eq!(claim("g", 0.01), SpendClaim::Granted);
            s.add_spend(7, 0.05).unwrap();
            assert_eq!(claim("h", 0.01), SpendClaim::Reached(0.1));
        });
    }

    #[test]
    fn a_runs_ledger_is_apart_from_the_days() {
        each_engine(|s| {
            let run = Ledger::Run("run-x".into());
            s.add_to(&run, 0.05).unwrap();
            s.add_spend(7, 1.0).unwrap();
            assert_eq!(s.spent_in(&run).unwrap(), 0.05);
            assert_eq!(
                s.claim_in(&run, 0.10, 0.03, "a", 600).unwrap(),
                SpendClaim::Granted
            );
            assert_eq!(
                s.claim_in(&run, 0.10, 0.03, "b", 600).unwrap(),
                SpendClaim::Wait
            );
            // The day's claims do not see the run's.
            assert_eq!(
                s.claim_spend(7, 2.0, 0.9, "c", 600).unwrap(),
                SpendClaim::Granted
            );
            s.release_in(&run, "a").unwrap();
            assert_eq!(
                s.claim_in(&run, 0.10, 0.03, "b", 600).unwrap(),
                SpendClaim::Granted
            );
            s.add_to(&run, 0.05).unwrap();
            s.release_in(&run, "b").unwrap();
            assert_eq!(
                s.claim_in(&run, 0.10, 0.01, "d", 600).unwrap(),
                SpendClaim::Reached(0.1)
            );
        });
    }
}
