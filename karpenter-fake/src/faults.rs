//! Fault injection, as decorators in object_store's style: each wraps any
//! [`CloudProvider`] and changes one thing about it.
//!
//! - [`Flaky`] fails calls at chosen rates with retryable API errors, and can
//!   lose a `create`'s answer after the instance launched (the case that
//!   orphans instances when a driver is careless).
//! - [`Latency`] makes every call wait (on tokio's timer) before it is passed
//!   on.
//!
//! Shortage of capacity for chosen offerings is the cloud's state rather than
//! a wrapper's: see [`FakeCloudProvider::sell_out`](crate::FakeCloudProvider::sell_out).
//! The random choices come from a seeded generator: the same seed and calls
//! fail the same way.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, InstanceType, RepairPolicy,
};
use karpenter_core::scheduling::WellKnownLabels;

use crate::generate::workload::SplitMix64;

/// How often [`Flaky`] fails. Rates are fractions of calls, 0 to 1.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlakyRates {
    /// Of every call but `repair_policies` and `name`: fails before reaching
    /// the cloud.
    pub error: f64,
    /// Of `create` calls that launched: the instance runs, the answer is lost.
    pub lost_create: f64,
}

/// A decorator whose calls fail at [`FlakyRates`]: with
/// [`CloudProviderError::Api`] errors marked retryable, and, for a `create`
/// that launched, an answer lost (the case that orphans instances when a
/// driver is careless). The random choices come from a seeded generator: the
/// same seed and calls fail the same way. Shortage of capacity for chosen
/// offerings is the cloud's state rather than a wrapper's: see
/// [`FakeCloudProvider::sell_out`](crate::FakeCloudProvider::sell_out).
#[derive(Debug)]
pub struct Flaky<P> {
    inner: P,
    rates: FlakyRates,
    rng: Mutex<SplitMix64>,
}

impl<P> Flaky<P> {
    /// Wraps `inner`, failing at `rates` as `seed` decides.
    pub fn new(inner: P, rates: FlakyRates, seed: u64) -> Self {
        Flaky {
            inner,
            rates,
            rng: Mutex::new(SplitMix64::new(seed)),
        }
    }

    /// The wrapped provider.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// Whether this call fails, at `rate`.
    fn roll(&self, rate: f64) -> bool {
        if rate <= 0.0 {
            return false;
        }
        let draw = self
            .rng
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next_u64();
        // 53 random bits as a fraction in [0, 1).
        ((draw >> 11) as f64 / (1u64 << 53) as f64) < rate
    }

    fn fail(&self, call: &str) -> Result<(), CloudProviderError> {
        if self.roll(self.rates.error) {
            return Err(CloudProviderError::Api {
                message: format!("injected failure of {call}"),
                retryable: true,
                source: None,
            });
        }
        Ok(())
    }
}

#[async_trait]
impl<P: CloudProvider> CloudProvider for Flaky<P> {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        self.fail("create")?;
        let launched = self.inner.create(claim).await?;
        if self.roll(self.rates.lost_create) {
            return Err(CloudProviderError::Api {
                message: "injected loss of create's answer (the instance was launched)".into(),
                retryable: true,
                source: None,
            });
        }
        Ok(launched)
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        self.fail("delete")?;
        self.inner.delete(claim).await
    }

    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        self.fail("get")?;
        self.inner.get(provider_id).await
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        self.fail("list")?;
        self.inner.list().await
    }

    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        self.fail("instance_types")?;
        self.inner.instance_types(pool).await
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        self.fail("is_drifted")?;
        self.inner.is_drifted(claim).await
    }

    fn repair_policies(&self) -> Vec<RepairPolicy> {
        self.inner.repair_policies()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn well_known_labels(&self) -> WellKnownLabels {
        self.inner.well_known_labels()
    }

    fn launch_rank(&self) -> karpenter_core::cloudprovider::LaunchRank {
        self.inner.launch_rank()
    }
}

/// A decorator whose calls each wait `delay` (on tokio's timer) before they
/// are passed on.
#[derive(Debug)]
pub struct Latency<P> {
    inner: P,
    delay: Duration,
}

impl<P> Latency<P> {
    /// Wraps `inner`, delaying every call by `delay`.
    pub fn new(inner: P, delay: Duration) -> Self {
        Latency { inner, delay }
    }

    /// The wrapped provider.
    pub fn inner(&self) -> &P {
        &self.inner
    }
}

#[async_trait]
impl<P: CloudProvider> CloudProvider for Latency<P> {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        tokio::time::sleep(self.delay).await;
        self.inner.create(claim).await
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        tokio::time::sleep(self.delay).await;
        self.inner.delete(claim).await
    }

    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        tokio::time::sleep(self.delay).await;
        self.inner.get(provider_id).await
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        tokio::time::sleep(self.delay).await;
        self.inner.list().await
    }

    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        tokio::time::sleep(self.delay).await;
        self.inner.instance_types(pool).await
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        tokio::time::sleep(self.delay).await;
        self.inner.is_drifted(claim).await
    }

    fn repair_policies(&self) -> Vec<RepairPolicy> {
        self.inner.repair_policies()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn well_known_labels(&self) -> WellKnownLabels {
        self.inner.well_known_labels()
    }

    fn launch_rank(&self) -> karpenter_core::cloudprovider::LaunchRank {
        self.inner.launch_rank()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::catalog::sized_instance_types;
    use crate::provider::FakeCloudProvider;

    fn claim() -> NodeClaim {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "claim-1"},
            "spec": {"requirements": [], "resources": {"requests": {"cpu": "1"}}},
        }))
        .expect("a NodeClaim")
    }

    #[tokio::test]
    async fn flaky_fails_at_its_rate_and_the_same_seed_fails_the_same_calls() {
        let outcomes = |seed| async move {
            let flaky = Flaky::new(
                FakeCloudProvider::new(sized_instance_types(2)),
                FlakyRates {
                    error: 0.3,
                    lost_create: 0.0,
                },
                seed,
            );
            let mut failed = Vec::new();
            for _ in 0..1000 {
                failed.push(flaky.list().await.is_err());
            }
            failed
        };
        let first = outcomes(1).await;
        let failures = first.iter().filter(|f| **f).count();
        assert!((250..350).contains(&failures), "{failures} of 1000");
        assert_eq!(first, outcomes(1).await);
        assert_ne!(first, outcomes(2).await);
    }

    #[tokio::test]
    async fn a_lost_create_answer_leaves_the_instance_running() {
        let flaky = Flaky::new(
            FakeCloudProvider::new(sized_instance_types(2)),
            FlakyRates {
                error: 0.0,
                lost_create: 1.0,
            },
            7,
        );
        let error = flaky
            .create(&claim())
            .await
            .expect_err("the answer is lost");
        assert!(matches!(
            error,
            CloudProviderError::Api {
                retryable: true,
                ..
            }
        ));
        let running = flaky.inner().list().await.expect("a list");
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].metadata.name.as_deref(), Some("claim-1"));
    }

    #[tokio::test(start_paused = true)]
    async fn latency_delays_every_call() {
        let slow = Latency::new(
            FakeCloudProvider::new(sized_instance_types(2)),
            Duration::from_millis(250),
        );
        let start = tokio::time::Instant::now();
        slow.list().await.expect("a list");
        slow.create(&claim()).await.expect("capacity");
        assert_eq!(start.elapsed(), Duration::from_millis(500));
    }
}
