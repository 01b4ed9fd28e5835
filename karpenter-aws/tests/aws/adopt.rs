//! Instances of claims launched before the provider started, adopted into
//! the in-memory EC2: read back by `get` and `list` as their claims, not
//! drifted, counted against their subnet and reservation; bad claims named.

use karpenter_aws::AdoptError;
use karpenter_aws::ec2::InstanceState;
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::{Value, json};

use crate::common::{ec2, label, provider};

const ID: &str = "aws:///us-east-1a/i-0123456789abcdef0";

/// A launched claim `old-1` of pool `default` and class `default` with
/// these labels (merged over an on-demand `m5.large` in us-east-1a) and
/// provider ID.
fn launched(labels: Value, provider_id: Option<&str>) -> NodeClaim {
    let mut all = json!({
        "karpenter.sh/nodepool": "default",
        "node.kubernetes.io/instance-type": "m5.large",
        "topology.kubernetes.io/zone": "us-east-1a",
        "karpenter.sh/capacity-type": "on-demand",
    });
    for (key, value) in labels.as_object().into_iter().flatten() {
        all[key] = value.clone();
    }
    let all: serde_json::Map<String, Value> = (all.as_object().into_iter().flatten())
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": "old-1", "labels": all,
                     "creationTimestamp": "2025-12-31T12:00:00Z"},
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [],
        },
        "status": {"providerID": provider_id},
    }))
    .expect("a NodeClaim")
}

#[tokio::test]
async fn an_adopted_instance_reads_back_as_its_claim() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let claim = launched(json!({"karpenter.sh/capacity-type": "spot"}), Some(ID));
    provider.adopt(&claim).expect("adopted");
    let got = provider.get(ID).await.expect("the instance");
    for key in [
        "node.kubernetes.io/instance-type",
        "topology.kubernetes.io/zone",
        "karpenter.sh/capacity-type",
        "karpenter.sh/nodepool",
    ] {
        assert_eq!(label(&got, key), label(&claim, key), "{key}");
    }
    assert_eq!(label(&got, "topology.k8s.aws/zone-id"), "use1-az1");
    assert_eq!(got.metadata.name.as_deref(), Some("old-1"));
    // The class's image for an amd64 type: nothing has drifted.
    assert_eq!(
        got.status.as_ref().and_then(|s| s.image_id.as_deref()),
        Some("ami-amd64")
    );
    assert_eq!(provider.is_drifted(&claim).await.expect("drift"), None);
    let listed = provider.list().await.expect("the list");
    let ids: Vec<_> = (listed.iter())
        .filter_map(|c| c.status.as_ref()?.provider_id.as_deref())
        .collect();
    assert_eq!(ids, [ID]);
    // In the roomier of us-east-1a's subnets, one address taken; launched
    // when the claim was made; a spot instance EC2 can reclaim.
    let instance = &ec2.instances()[0];
    assert_eq!(instance.subnet_id, "subnet-a2");
    assert_eq!(
        ec2.subnet("subnet-a2")
            .expect("subnet")
            .available_ip_address_count,
        499
    );
    assert_eq!(instance.launch_time.to_string(), "2025-12-31T12:00:00Z");
    assert_eq!(instance.security_group_ids, ["sg-1"]);
    assert!(ec2.reclaim_spot("i-0123456789abcdef0"));
    assert_eq!(ec2.instances()[0].state, InstanceState::Terminated);
    assert!(provider.get(ID).await.is_err(), "gone once reclaimed");
}

#[tokio::test]
async fn an_adopted_claim_on_another_image_has_drifted() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let mut claim = launched(json!({}), Some(ID));
    claim.status.get_or_insert_default().image_id = Some("ami-new".into());
    provider.adopt(&claim).expect("adopted");
    assert_eq!(ec2.instances()[0].image_id, "ami-new");
    assert_eq!(
        provider.is_drifted(&claim).await.expect("drift").as_deref(),
        Some("AMIDrift")
    );
}

#[test]
fn bad_claims_are_named_with_their_field() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let refused = |claim: NodeClaim| provider.adopt(&claim).expect_err("refused");
    let cases = [
        (launched(json!({}), None), "status.providerID"),
        (
            launched(json!({}), Some("azure:///subscriptions/x")),
            "status.providerID",
        ),
        (
            launched(json!({"node.kubernetes.io/instance-type": null}), Some(ID)),
            "metadata.labels[node.kubernetes.io/instance-type]",
        ),
        (
            launched(
                json!({"node.kubernetes.io/instance-type": "m9.huge"}),
                Some(ID),
            ),
            "metadata.labels[node.kubernetes.io/instance-type]",
        ),
        (
            launched(
                json!({"topology.kubernetes.io/zone": "us-east-1b"}),
                Some(ID),
            ),
            "metadata.labels[topology.kubernetes.io/zone]",
        ),
        (
            launched(
                json!({"topology.kubernetes.io/zone": "us-east-1c"}),
                Some("aws:///us-east-1c/i-0123456789abcdef0"),
            ),
            "metadata.labels[topology.kubernetes.io/zone]",
        ),
        (
            launched(json!({"karpenter.sh/capacity-type": "reserved"}), Some(ID)),
            "metadata.labels[karpenter.k8s.aws/capacity-reservation-id]",
        ),
    ];
    for (claim, field) in cases {
        let error = refused(claim);
        assert_eq!(error.field(), field, "{error}");
        assert!(error.to_string().contains("old-1"), "{error}");
    }
    assert!(ec2.instances().is_empty(), "nothing refused was put in");
    // The same instance twice: the second claim is refused.
    provider
        .adopt(&launched(json!({}), Some(ID)))
        .expect("adopted");
    let again = refused(launched(json!({}), Some(ID)));
    assert!(
        matches!(again, AdoptError::AlreadyRunning { .. }),
        "{again}"
    );
}
