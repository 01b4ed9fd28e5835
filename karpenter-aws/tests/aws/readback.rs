//! Instances read back: `get`, `list` and `delete` over what `create`
//! started, and the conformance suite.

use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError};

use crate::common::{claim, ec2, is_in, label, pool, provider};

#[tokio::test]
async fn the_aws_provider_conforms() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let checks = karpenter_fake::conformance::run(&provider, &pool()).await;
    let failed: Vec<_> = checks.iter().filter(|c| c.outcome.is_err()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    for name in [
        "every label of the instance types is well known",
        "create, get, list, drift and delete",
    ] {
        assert!(checks.iter().any(|c| c.name == name), "{name}: {checks:#?}");
    }
    assert!(
        ec2.instances()
            .iter()
            .all(|i| i.state == karpenter_aws::ec2::InstanceState::Terminated),
        "the suite cleans up"
    );
}

#[tokio::test]
async fn a_launched_instance_is_got_listed_and_deleted_once() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let wanted = claim(
        "web-1",
        serde_json::json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
    );
    let launched = provider.create(&wanted).await.expect("a launch");
    let id = launched
        .status
        .as_ref()
        .and_then(|s| s.provider_id.clone())
        .expect("a provider ID");
    let got = provider.get(&id).await.expect("the instance");
    for key in [
        "node.kubernetes.io/instance-type",
        "topology.kubernetes.io/zone",
        "topology.k8s.aws/zone-id",
        "karpenter.sh/capacity-type",
        "karpenter.sh/nodepool",
    ] {
        assert_eq!(label(&got, key), label(&launched, key), "{key}");
    }
    assert_eq!(
        got.status.as_ref().and_then(|s| s.image_id.clone()),
        launched.status.as_ref().and_then(|s| s.image_id.clone())
    );
    assert_eq!(
        got.spec.node_class_ref.as_ref().map(|r| r.name.as_str()),
        Some("default")
    );
    let listed = provider.list().await.expect("a list");
    assert_eq!(listed.len(), 1);
    provider.delete(&launched).await.expect("terminated");
    assert!(matches!(
        provider.delete(&launched).await,
        Err(CloudProviderError::NodeClaimNotFound { .. })
    ));
    assert!(matches!(
        provider.get(&id).await,
        Err(CloudProviderError::NodeClaimNotFound { .. })
    ));
    assert!(provider.list().await.expect("a list").is_empty());
}
