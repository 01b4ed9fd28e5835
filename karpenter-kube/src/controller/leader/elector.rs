//! Acquiring the Lease: read, decide, write, and retry until held.

use std::sync::Arc;

use jiff::Timestamp;

use super::decision::{self, Decision};
use super::store::{LeaseStore, status_code};
use super::{LeaderElectionConfig, LeaderError};

/// The wall clock Lease times are read and written with.
pub(super) type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// A candidate for leadership through one Lease.
#[derive(Clone)]
pub struct LeaderElector<S> {
    pub(super) store: S,
    pub(super) lease_name: String,
    pub(super) identity: String,
    pub(super) config: LeaderElectionConfig,
    pub(super) clock: Clock,
}

impl<S> std::fmt::Debug for LeaderElector<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("lease_name", &self.lease_name)
            .field("identity", &self.identity)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// One attempt's outcome.
pub(super) enum Attempt {
    /// The write went through: this candidate holds the Lease.
    Held,
    /// Another candidate holds the Lease.
    Waiting {
        /// Its identity.
        holder: String,
        /// When its lease runs out unless renewed.
        until: Timestamp,
    },
}

impl<S: LeaseStore> LeaderElector<S> {
    /// A candidate named `identity` (see
    /// [`default_identity`](super::default_identity)) for the Lease
    /// `lease_name` in `store` (an [`Api<Lease>`](kube::Api) on its
    /// namespace).
    pub fn new(
        store: S,
        lease_name: impl Into<String>,
        identity: impl Into<String>,
        config: LeaderElectionConfig,
    ) -> Result<Self, LeaderError> {
        config.validate()?;
        let lease_name = lease_name.into();
        let identity = identity.into();
        if lease_name.is_empty() {
            return Err(LeaderError::Empty("lease name"));
        }
        if identity.is_empty() {
            return Err(LeaderError::Empty("identity"));
        }
        Ok(Self {
            store,
            lease_name,
            identity,
            config,
            clock: Arc::new(Timestamp::now),
        })
    }

    /// This candidate's identity, as the Lease's `holderIdentity` names it.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The Lease's name.
    pub fn lease_name(&self) -> &str {
        &self.lease_name
    }

    /// Replaces the wall clock (tests run on a paused one).
    #[cfg(test)]
    pub(super) fn with_clock(
        mut self,
        clock: impl Fn() -> Timestamp + Send + Sync + 'static,
    ) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Returns a refused access as an error; logs anything else (a lost race
    /// quietly).
    pub(super) fn check_retryable(
        &self,
        verb: &'static str,
        error: kube::Error,
    ) -> Result<(), LeaderError> {
        match status_code(&error) {
            Some(401 | 403) => Err(LeaderError::Forbidden {
                verb,
                lease: self.lease_name.clone(),
                source: error,
            }),
            Some(409) => {
                tracing::debug!(lease = %self.lease_name, "another candidate wrote the lease first");
                Ok(())
            }
            _ => {
                tracing::warn!(lease = %self.lease_name, %error, verb, "leader election call failed; retrying");
                Ok(())
            }
        }
    }

    /// One read, decision and (unless waiting) write. A leader `renewing`
    /// never takes the Lease over: finding it without a holder, it reports
    /// waiting on nobody (the Lease is no longer its). Errors name the verb
    /// that failed.
    pub(super) async fn attempt(
        &self,
        renewing: bool,
    ) -> Result<Attempt, (&'static str, kube::Error)> {
        let read = self
            .store
            .get(&self.lease_name)
            .await
            .map_err(|e| ("get", e))?;
        let now = (self.clock)();
        let (identity, duration) = (self.identity.as_str(), self.config.lease_duration);
        let write = match (decision::decide(read.as_ref(), identity, now), read) {
            (Decision::Wait { holder, until }, _) => {
                return Ok(Attempt::Waiting { holder, until });
            }
            (Decision::TakeOver, _) if renewing => {
                return Ok(Attempt::Waiting {
                    holder: String::new(),
                    until: now,
                });
            }
            (Decision::Renew, Some(read)) => decision::renewed(&read, identity, now, duration),
            (Decision::TakeOver, Some(read)) => {
                decision::taken_over(&read, identity, now, duration)
            }
            (Decision::Create | Decision::Renew | Decision::TakeOver, _) => {
                let created = decision::created(&self.lease_name, identity, now, duration);
                return self
                    .store
                    .create(&created)
                    .await
                    .map(|_| Attempt::Held)
                    .map_err(|e| ("create", e));
            }
        };
        self.store
            .replace(&self.lease_name, &write)
            .await
            .map(|_| Attempt::Held)
            .map_err(|e| ("update", e))
    }
}
