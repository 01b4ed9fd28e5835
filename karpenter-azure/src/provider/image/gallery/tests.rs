use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use karpenter_core::cloudprovider::InstanceType;
use serde_json::{Value, json};

use crate::arm::{ArmError, ComputeApi, InMemoryCompute, PriceItem};
use crate::catalog::Catalog;
use crate::instancetype::{Settings, instance_types};
use crate::nodeclass::{AKSNodeClass, NetworkOptions};
use crate::provider::{AzureCloudProvider, AzureConfig, ClusterFacts, JoinConfig};
use crate::settings::AksSettings;

const UBUNTU: &str = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images";

fn config() -> AzureConfig {
    AzureConfig {
        subscription: "sub-1".into(),
        resource_group: "MC_rg_c_eastus".into(),
        region: "eastus".into(),
        cluster_name: "c".into(),
        subnet_id: "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s".into(),
        ssh_public_key: "ssh-ed25519 AAAA".into(),
        custom_data: None,
        network: NetworkOptions::default(),
        join: None,
    }
}

fn class(spec: Value, status: Value) -> AKSNodeClass {
    serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": spec, "status": status}))
        .expect("an AKSNodeClass")
}

fn settings(class: &AKSNodeClass) -> Settings {
    Settings::for_node_class(class, "eastus", &NetworkOptions::default()).expect("settings")
}

fn size(name: &str) -> InstanceType {
    instance_types(Catalog::embedded(), &settings(&AKSNodeClass::default()))
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} in eastus"))
}

/// A provider over `arm` whose clock a test moves.
fn provider<A: ComputeApi>(
    arm: A,
    config: AzureConfig,
) -> (AzureCloudProvider<A>, Arc<Mutex<Timestamp>>) {
    let now = Arc::new(Mutex::new(Timestamp::UNIX_EPOCH));
    let clock = Arc::clone(&now);
    let provider = AzureCloudProvider::new(arm, config)
        .with_clock(move || *clock.lock().unwrap_or_else(|e| e.into_inner()));
    (provider, now)
}

#[tokio::test]
async fn versions_are_listed_once_for_three_days() {
    let arm = InMemoryCompute::new();
    let (provider, now) = provider(arm.clone(), config());
    let ubuntu = class(json!({"imageFamily": "Ubuntu2204"}), json!({}));
    let s = settings(&ubuntu);
    let d2 = size("Standard_D2s_v3");
    let first = provider.image(&ubuntu, &s, &d2).await.expect("an image");
    assert_eq!(
        first,
        format!("{UBUNTU}/2204gen2containerd/versions/202505.27.0")
    );
    assert_eq!(
        provider.image(&ubuntu, &s, &d2).await.expect("again"),
        first
    );
    assert_eq!(arm.image_version_lists(), 1, "two launches, one list");
    // A newer build is published; the cache still answers within 3 days.
    arm.set_image_versions(
        "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2",
        "2204gen2containerd",
        vec![
            json!({"name": "202506.03.0", "properties": {"publishedDate": "2025-06-03T00:00:00Z"}}),
        ],
    );
    *now.lock().unwrap() += SignedDuration::from_hours(71);
    assert_eq!(
        provider.image(&ubuntu, &s, &d2).await.expect("cached"),
        first
    );
    assert_eq!(arm.image_version_lists(), 1);
    *now.lock().unwrap() += SignedDuration::from_hours(1);
    let after = provider.image(&ubuntu, &s, &d2).await.expect("listed anew");
    assert_eq!(
        after,
        format!("{UBUNTU}/2204gen2containerd/versions/202506.03.0")
    );
    assert_eq!(arm.image_version_lists(), 2);
}

#[tokio::test]
async fn another_kubernetes_version_is_listed_anew() {
    let arm = InMemoryCompute::new();
    let (provider, _) = provider(arm.clone(), config());
    let d2 = size("Standard_D2s_v3");
    for (version, lists) in [("1.31.0", 1), ("1.31.0", 1), ("1.31.1", 2)] {
        let c = class(
            json!({"imageFamily": "Ubuntu2204"}),
            json!({"kubernetesVersion": version}),
        );
        provider
            .image(&c, &settings(&c), &d2)
            .await
            .expect("an image");
        assert_eq!(arm.image_version_lists(), lists, "{version}");
    }
}

fn join(kubernetes_version: &str) -> JoinConfig {
    let env = [
        ("CLUSTER_NAME", "c"),
        ("CLUSTER_ENDPOINT", "https://c.hcp.eastus.azmk8s.io:443"),
        ("KUBELET_BOOTSTRAP_TOKEN", "abcdef.0123456789abcdef"),
        ("SSH_PUBLIC_KEY", "ssh-ed25519 AAAA"),
        (
            "VNET_SUBNET_ID",
            "/subscriptions/12345678-1234-1234-1234-123456789012/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s",
        ),
        ("AZURE_NODE_RESOURCE_GROUP", "MC_rg_c_eastus"),
        ("LOCATION", "eastus"),
    ];
    let settings = AksSettings::from_lookup(|name| {
        env.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    })
    .expect("settings");
    JoinConfig {
        settings,
        cluster: ClusterFacts {
            ca_bundle: String::new(),
            kubernetes_version: kubernetes_version.to_owned(),
            cluster_dns: [10, 0, 0, 10].into(),
        },
    }
}

#[tokio::test]
async fn the_clusters_version_stands_in_for_the_status() {
    let mut with_join = config();
    with_join.join = Some(join("1.33.2"));
    let (provider, _) = provider(InMemoryCompute::new(), with_join);
    let d2 = size("Standard_D2s_v3");
    let ubuntu = class(json!({}), json!({}));
    let image = provider.image(&ubuntu, &settings(&ubuntu), &d2).await;
    // Before 1.34 the default Ubuntu is 22.04...
    assert_eq!(
        image.expect("an image"),
        format!("{UBUNTU}/2204gen2containerd/versions/202505.27.0")
    );
    // ... and the class's own status wins over the cluster's version.
    let upgraded = class(json!({}), json!({"kubernetesVersion": "1.34.0"}));
    let image = provider.image(&upgraded, &settings(&upgraded), &d2).await;
    assert_eq!(
        image.expect("an image"),
        format!("{UBUNTU}/2404gen2containerd/versions/202505.27.0")
    );
}

/// ARM refusing every call.
#[derive(Debug)]
struct Throttled;

fn throttled() -> ArmError {
    ArmError::Azure {
        status: 429,
        code: "TooManyRequests".to_owned(),
        message: "slow down".to_owned(),
    }
}

#[async_trait]
impl ComputeApi for Throttled {
    async fn create_nic(&self, _: &str, _: &Value) -> Result<Value, ArmError> {
        Err(throttled())
    }
    async fn create_vm(&self, _: &str, _: &Value) -> Result<Value, ArmError> {
        Err(throttled())
    }
    async fn get_vm(&self, _: &str) -> Result<Option<Value>, ArmError> {
        Err(throttled())
    }
    async fn delete_vm(&self, _: &str) -> Result<bool, ArmError> {
        Err(throttled())
    }
    async fn delete_nic(&self, _: &str) -> Result<bool, ArmError> {
        Err(throttled())
    }
    async fn list_vms(&self) -> Result<Vec<Value>, ArmError> {
        Err(throttled())
    }
    async fn resource_skus(&self, _: &str) -> Result<Vec<Value>, ArmError> {
        Err(throttled())
    }
    async fn retail_prices(&self, _: &str) -> Result<Vec<PriceItem>, ArmError> {
        Err(throttled())
    }
    async fn list_load_balancers(&self) -> Result<Vec<Value>, ArmError> {
        Err(throttled())
    }
    async fn list_network_security_groups(&self) -> Result<Vec<Value>, ArmError> {
        Err(throttled())
    }
    async fn get_virtual_network(&self, _: &str, _: &str) -> Result<Option<Value>, ArmError> {
        Err(throttled())
    }
    async fn list_community_gallery_image_versions(
        &self,
        _: &str,
        _: &str,
        _: &str,
    ) -> Result<Vec<Value>, ArmError> {
        Err(throttled())
    }
}

#[tokio::test]
async fn an_arm_failure_fails_the_launch_to_be_retried() {
    let (provider, _) = provider(Throttled, config());
    let ubuntu = class(json!({}), json!({}));
    let error = provider
        .image(&ubuntu, &settings(&ubuntu), &size("Standard_D2s_v3"))
        .await
        .expect_err("no versions");
    assert!(error.is_retryable());
    assert!(error.to_string().contains("2404gen2containerd"), "{error}");
}

#[tokio::test]
async fn fips_without_status_images_has_no_community_image() {
    let (provider, _) = provider(InMemoryCompute::new(), config());
    let fips = class(json!({"fipsMode": "FIPS"}), json!({}));
    let error = provider
        .image(&fips, &settings(&fips), &size("Standard_D2s_v3"))
        .await
        .expect_err("no FIPS image in the community gallery");
    assert!(!error.is_retryable());
    let message = error.to_string();
    assert!(message.contains("NoCompatibleImage"), "{message}");
    assert!(message.contains("FIPS"), "{message}");
}
