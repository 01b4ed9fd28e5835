//! The fake provider, bare and decorated, passes the conformance suite; a
//! provider that breaks the contract fails it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, InstanceType, OfferingKey, RepairPolicy,
};
use karpenter_core::scheduling::Requirement;
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::Latency;
use karpenter_fake::Recording;
use karpenter_fake::conformance::{Check, run};
use karpenter_fake::generate::catalog::{assorted_instance_types, sized_instance_types};

fn pool() -> NodePool {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {
            "requirements": [],
            "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
        }}},
    }))
    .expect("a NodePool")
}

/// The types with a label of the provider's own: `example.com/family`, `even`
/// or `odd` by their place in the list.
fn labelled(mut types: Vec<InstanceType>) -> Vec<InstanceType> {
    for (i, t) in types.iter_mut().enumerate() {
        let family = if i % 2 == 0 { "even" } else { "odd" };
        t.requirements
            .add(Requirement::in_values("example.com/family", [family]));
    }
    types
}

fn failures(checks: &[Check]) -> Vec<&Check> {
    checks.iter().filter(|c| c.outcome.is_err()).collect()
}

#[tokio::test]
async fn the_fake_conforms() {
    for types in [
        sized_instance_types(8),
        assorted_instance_types(),
        labelled(sized_instance_types(8)),
    ] {
        let provider = FakeCloudProvider::new(types);
        let checks = run(&provider, &pool()).await;
        assert!(failures(&checks).is_empty(), "{:#?}", failures(&checks));
        assert!(checks.len() >= 9);
        assert!(
            provider.list().await.expect("a list").is_empty(),
            "the suite cleans up"
        );
    }
}

#[tokio::test]
async fn the_fake_conforms_with_an_offering_sold_out() {
    let provider = FakeCloudProvider::new(sized_instance_types(4));
    let sold_out = OfferingKey::new("fake-it-2", "test-zone-2", "spot");
    provider.sell_out([sold_out.clone()]);
    // A launch finds it sold out; from then on the provider reports it
    // unavailable, and the suite checks that launching it fails.
    let pinned: NodeClaim = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "pinned"},
        "spec": {"requirements": [
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["fake-it-2"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test-zone-2"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        ]},
    }))
    .expect("a NodeClaim");
    assert!(matches!(
        provider.create(&pinned).await,
        Err(CloudProviderError::InsufficientCapacity { .. })
    ));
    let checks = run(&provider, &pool()).await;
    assert!(failures(&checks).is_empty(), "{:#?}", failures(&checks));
    assert!(
        checks
            .iter()
            .any(|c| c.name.contains("unavailable offering"))
    );
}

#[tokio::test(start_paused = true)]
async fn decorated_fakes_conform() {
    let fake = Arc::new(FakeCloudProvider::new(labelled(sized_instance_types(4))));
    let recording = Recording::new(Latency::new(fake.clone(), Duration::from_millis(50)));
    let checks = run(&recording, &pool()).await;
    assert!(failures(&checks).is_empty(), "{:#?}", failures(&checks));
    assert!(
        checks
            .iter()
            .any(|c| c.name.contains("selecting a provider label")),
        "{checks:#?}"
    );
    assert!(!recording.calls().is_empty());
}

/// Launches, but forgets to say where, and never lets go.
#[derive(Debug)]
struct Careless(FakeCloudProvider);

#[async_trait]
impl CloudProvider for Careless {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        let mut launched = self.0.create(claim).await?;
        if let Some(labels) = launched.metadata.labels.as_mut() {
            labels.remove("topology.kubernetes.io/zone");
        }
        Ok(launched)
    }
    async fn delete(&self, _: &NodeClaim) -> Result<(), CloudProviderError> {
        Ok(())
    }
    async fn get(&self, provider_id: &str) -> Result<NodeClaim, CloudProviderError> {
        self.0.get(provider_id).await
    }
    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        self.0.list().await
    }
    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        self.0.instance_types(pool).await
    }
    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        self.0.is_drifted(claim).await
    }
    fn repair_policies(&self) -> Vec<RepairPolicy> {
        self.0.repair_policies()
    }
    fn name(&self) -> &str {
        "careless"
    }
}

#[tokio::test]
async fn a_provider_breaking_the_contract_fails() {
    // Its types have a label of their own, which it does not say is well known.
    let provider = Careless(FakeCloudProvider::new(labelled(sized_instance_types(4))));
    let checks = run(&provider, &pool()).await;
    let failed: Vec<&str> = failures(&checks).iter().map(|c| c.name).collect();
    assert!(
        failed.contains(&"every label of the instance types is well known"),
        "{failed:?}"
    );
    assert!(
        failed.contains(&"delete of an unknown claim is not found"),
        "{failed:?}"
    );
    assert!(
        failed.contains(&"create, get, list, drift and delete"),
        "{failed:?}"
    );
}
