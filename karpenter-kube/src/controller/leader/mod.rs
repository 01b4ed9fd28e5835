//! Leader election over a `coordination.k8s.io/v1` Lease, as client-go's
//! `leaderelection` does it: one replica acts, the others wait to take over.
//!
//! [`decide`] is the whole policy, pure: given the Lease as read, it says
//! whether to create it, renew it, take it over or wait. [`LeaderElector`]
//! runs it against the API server: [`acquire`](LeaderElector::acquire)
//! retries until this replica holds the Lease, and the [`Leadership`] it
//! returns renews the Lease in the background, reports its loss, and
//! releases it on shutdown.

mod decision;
mod elector;
mod leadership;
mod store;

use std::time::Duration;

pub use decision::{Decision, decide};
pub use elector::LeaderElector;
pub use leadership::Leadership;
pub use store::LeaseStore;

/// The Lease upstream Karpenter elects its leader with.
pub const DEFAULT_LEASE_NAME: &str = "karpenter-leader-election";

/// Leader election's timings, client-go's defaults unless set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// How long a Lease holds after its last renewal: candidates wait this
    /// long before taking over from a silent holder (whole seconds).
    pub lease_duration: Duration,
    /// How long the leader keeps acting without a successful renewal:
    /// shorter than `lease_duration`, so that it stops before anyone can
    /// take over.
    pub renew_deadline: Duration,
    /// The pause between attempts, to acquire or to renew.
    pub retry_period: Duration,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl LeaderElectionConfig {
    /// Checks that the timings make sense together: a lease of at least a
    /// second, longer than the renew deadline, itself longer than the retry
    /// period, which is not zero.
    pub fn validate(&self) -> Result<(), LeaderError> {
        let problem = if self.lease_duration < Duration::from_secs(1) {
            "the lease duration is under a second"
        } else if self.lease_duration <= self.renew_deadline {
            "the lease duration is not longer than the renew deadline"
        } else if self.renew_deadline <= self.retry_period {
            "the renew deadline is not longer than the retry period"
        } else if self.retry_period.is_zero() {
            "the retry period is zero"
        } else {
            return Ok(());
        };
        Err(LeaderError::Config(problem))
    }
}

/// What leader election can fail with.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// The settings are unusable (see [`LeaderElectionConfig::validate`]).
    #[error("invalid leader election settings: {0}")]
    Config(&'static str),
    /// The identity or the Lease name is empty.
    #[error("leader election needs a non-empty {0}")]
    Empty(&'static str),
    /// The API server refused access to the Lease (401 or 403): a
    /// misconfiguration (RBAC, credentials) retrying will not mend.
    #[error("not allowed to {verb} lease {lease}")]
    Forbidden {
        /// What was attempted: `get`, `create` or `update`.
        verb: &'static str,
        /// The Lease's name.
        lease: String,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
    /// Giving the Lease up failed; it expires on its own.
    #[error("could not release lease {lease}")]
    Release {
        /// The Lease's name.
        lease: String,
        /// What went wrong.
        #[source]
        source: kube::Error,
    },
    /// Giving the Lease up took longer than the renew deadline; it expires
    /// on its own.
    #[error("releasing lease {lease} timed out")]
    ReleaseTimeout {
        /// The Lease's name.
        lease: String,
    },
    /// The background renewal task ended abnormally.
    #[error("the lease renewal task failed")]
    Task(#[source] tokio::task::JoinError),
}

/// A candidate identity unique to this process: the pod's name (`POD_NAME`,
/// else `HOSTNAME`, else `karpenter`), an underscore, and a random suffix,
/// so that a restarted pod never mistakes its predecessor's Lease for its
/// own.
pub fn default_identity() -> String {
    let base = ["POD_NAME", "HOSTNAME"]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "karpenter".to_owned());
    format!("{}_{:016x}", base.trim(), random_u64())
}

/// 64 random bits, from the standard library's randomly seeded hasher, the
/// clock and the process id.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    hasher.finish()
}

#[cfg(test)]
mod tests;
