//! The image a launch boots when its class's status lists none: the
//! family's definitions the size can boot, in preference order, at their
//! newest community gallery version.

use karpenter_azure::arm::{ComputeApi, InMemoryCompute};
use karpenter_azure::{AKSNodeClass, AzureCloudProvider};
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::{Value, json};

use crate::common::{claim, config};

const UBUNTU: &str = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images";
const AZL: &str = "/CommunityGalleries/AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b/images";

fn class(spec: Value, status: Value) -> AKSNodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
        "spec": spec,
        "status": status,
    }))
    .expect("an AKSNodeClass")
}

/// Launches `size` and returns the community gallery image its VM boots.
async fn launched_image(
    provider: &AzureCloudProvider<InMemoryCompute>,
    arm: &InMemoryCompute,
    name: &str,
    size: &str,
) -> String {
    let wanted = claim(
        name,
        json!([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [size]}]),
    );
    provider.create(&wanted).await.expect("launched");
    let vm = arm
        .get_vm(&format!("aks-{name}"))
        .await
        .expect("read")
        .expect("the VM");
    vm["properties"]["storageProfile"]["imageReference"]["communityGalleryImageId"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn each_size_boots_its_familys_definition_at_the_newest_version() {
    let arm = InMemoryCompute::new();
    let provider = AzureCloudProvider::new(arm.clone(), config());
    // No Kubernetes version anywhere: the newest rules, Ubuntu 24.04.
    provider.apply_node_class(class(json!({}), json!({})));
    let cases = [
        ("Standard_D2s_v3", "2404gen2containerd"),
        ("Standard_D16plds_v5", "2404gen2arm64containerd"),
        ("Standard_D2_v2", "2404containerd"),
    ];
    for (index, (size, definition)) in cases.into_iter().enumerate() {
        let image = launched_image(&provider, &arm, &format!("default-{index}"), size).await;
        // InMemoryCompute lists 202505.27.0 (the later published) first of two.
        assert_eq!(
            image,
            format!("{UBUNTU}/{definition}/versions/202505.27.0"),
            "{size}"
        );
    }
    assert_eq!(arm.image_version_lists(), 3, "one list per definition");
    // A second Gen2 amd64 launch reads the cache.
    launched_image(&provider, &arm, "default-again", "Standard_D2s_v3").await;
    assert_eq!(arm.image_version_lists(), 3);
}

#[tokio::test]
async fn the_status_kubernetes_version_picks_the_release() {
    let arm = InMemoryCompute::new();
    let provider = AzureCloudProvider::new(arm.clone(), config());
    let azure_linux = json!({"imageFamily": "AzureLinux"});
    provider.apply_node_class(class(
        azure_linux.clone(),
        json!({"kubernetesVersion": "1.31.4"}),
    ));
    let image = launched_image(&provider, &arm, "default-v2", "Standard_D2s_v3").await;
    assert_eq!(image, format!("{AZL}/V2gen2/versions/202505.27.0"));
    provider.apply_node_class(class(azure_linux, json!({"kubernetesVersion": "1.32.0"})));
    let image = launched_image(&provider, &arm, "default-v3", "Standard_D2s_v3").await;
    assert_eq!(image, format!("{AZL}/V3gen2/versions/202505.27.0"));
}

#[tokio::test]
async fn a_definition_without_versions_gives_way_to_the_next() {
    let arm = InMemoryCompute::new();
    let gallery = "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2";
    arm.set_image_versions(gallery, "2204gen2containerd", vec![]);
    arm.set_image_versions(
        gallery,
        "2204containerd",
        vec![
            json!({"name": "202601.05.0", "properties": {"publishedDate": "2026-01-05T00:00:00Z"}}),
            json!({"name": "202612.01.0", "properties": {"publishedDate": "not a date"}}),
        ],
    );
    let provider = AzureCloudProvider::new(arm.clone(), config());
    provider.apply_node_class(class(json!({"imageFamily": "Ubuntu2204"}), json!({})));
    // D2s v3 runs Gen1 and Gen2: Gen2 has no version, so Gen1's newest.
    let image = launched_image(&provider, &arm, "default-1", "Standard_D2s_v3").await;
    assert_eq!(
        image,
        format!("{UBUNTU}/2204containerd/versions/202601.05.0")
    );
    // An Ampere size has one definition; without a version, no launch.
    arm.set_image_versions(gallery, "2204gen2arm64containerd", vec![]);
    let wanted = claim(
        "default-2",
        json!([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D16plds_v5"]}]),
    );
    let error = provider.create(&wanted).await.expect_err("no image");
    assert!(error.to_string().contains("NoCompatibleImage"), "{error}");
    assert!(!error.is_retryable());
    assert!(
        arm.nic_names().iter().all(|n| n != "aks-default-2"),
        "no NIC made"
    );
}
