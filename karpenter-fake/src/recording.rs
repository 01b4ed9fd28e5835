//! [`Recording`]: a decorator that remembers every call made to the provider
//! it wraps, in the style of object_store's wrappers, so tests can check what
//! a driver asked of the cloud.

use std::sync::Mutex;

use async_trait::async_trait;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, InstanceType, RepairPolicy,
};
use karpenter_core::scheduling::WellKnownLabels;

/// One call made to a provider, with what names its subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `create`, with the claim's name.
    Create(String),
    /// `delete`, with the claim's provider ID (else its name).
    Delete(String),
    /// `get`, with the provider ID asked for.
    Get(String),
    /// `list`.
    List,
    /// `instance_types`, with the NodePool's name.
    InstanceTypes(String),
    /// `is_drifted`, with the claim's name.
    IsDrifted(String),
}

/// A decorator that records each call, then passes it to `inner`, in the
/// style of object_store's wrappers, so tests can check what a driver asked
/// of the cloud.
#[derive(Debug)]
pub struct Recording<P> {
    inner: P,
    calls: Mutex<Vec<Call>>,
}

impl<P> Recording<P> {
    /// Wraps `inner`.
    pub fn new(inner: P) -> Recording<P> {
        Recording {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The calls so far, in the order they were made.
    pub fn calls(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The wrapped provider.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    fn record(&self, call: Call) {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(call);
    }
}

fn name(claim: &NodeClaim) -> String {
    claim.metadata.name.clone().unwrap_or_default()
}

#[async_trait]
impl<P: CloudProvider> CloudProvider for Recording<P> {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        self.record(Call::Create(name(claim)));
        self.inner.create(claim).await
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        let id = claim.status.as_ref().and_then(|s| s.provider_id.clone());
        self.record(Call::Delete(id.unwrap_or_else(|| name(claim))));
        self.inner.delete(claim).await
    }

    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        self.record(Call::Get(provider_id.to_owned()));
        self.inner.get(provider_id).await
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        self.record(Call::List);
        self.inner.list().await
    }

    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        self.record(Call::InstanceTypes(
            pool.metadata.name.clone().unwrap_or_default(),
        ));
        self.inner.instance_types(pool).await
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        self.record(Call::IsDrifted(name(claim)));
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
    use crate::test_support::block_on;

    #[test]
    fn every_call_is_recorded_in_order_and_passed_on() {
        let provider = Recording::new(FakeCloudProvider::new(sized_instance_types(2)));
        let claim: NodeClaim = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "claim-1"},
            "spec": {
                "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
                "requirements": [],
            },
        }))
        .expect("a NodeClaim");
        let launched = block_on(provider.create(&claim)).expect("capacity");
        let id = launched
            .status
            .as_ref()
            .and_then(|s| s.provider_id.clone())
            .expect("an ID");
        assert_eq!(block_on(provider.list()).map(|l| l.len()).ok(), Some(1));
        assert!(block_on(provider.delete(&launched)).is_ok());
        assert!(block_on(provider.get(&id)).is_err());
        assert_eq!(
            provider.calls(),
            [
                Call::Create("claim-1".into()),
                Call::List,
                Call::Delete(id.clone()),
                Call::Get(id),
            ]
        );
        assert_eq!(provider.name(), "fake");
    }
}
