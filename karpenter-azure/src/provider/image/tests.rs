use karpenter_core::cloudprovider::InstanceType;
use serde_json::json;

use super::*;
use crate::catalog::Catalog;
use crate::instancetype::{Settings, instance_types};
use crate::nodeclass::{AKSNodeClass, NetworkOptions};

const GEN2_AMD64: &str = "/CommunityGalleries/g/images/2204gen2containerd/versions/1";
const GEN1_AMD64: &str = "/CommunityGalleries/g/images/2204containerd/versions/1";
const GEN2_ARM64: &str = "/CommunityGalleries/g/images/2204gen2arm64containerd/versions/1";

/// An image `id` for nodes of `arch` and Hyper-V generation `generation`,
/// as upstream's status controller writes it.
fn image(id: &str, arch: &str, generation: &str) -> serde_json::Value {
    json!({"id": id, "requirements": [
        {"key": "karpenter.azure.com/sku-hyperv-generation", "operator": "In", "values": [generation]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": [arch]},
    ]})
}

fn class(images: serde_json::Value) -> AKSNodeClass {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
        "spec": {},
        "status": {"images": images},
    }))
    .expect("an AKSNodeClass")
}

fn size(name: &str) -> InstanceType {
    let default = AKSNodeClass::default();
    let settings = Settings::for_node_class(&default, "eastus", &NetworkOptions::default())
        .expect("the default settings");
    instance_types(Catalog::embedded(), &settings)
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} in eastus"))
}

/// Upstream's preference order: Gen2 amd64, Gen1 amd64, Gen2 arm64.
fn ubuntu() -> AKSNodeClass {
    class(json!([
        image(GEN2_AMD64, "amd64", "2"),
        image(GEN1_AMD64, "amd64", "1"),
        image(GEN2_ARM64, "arm64", "2"),
    ]))
}

#[test]
fn each_size_boots_the_first_image_for_its_architecture_and_generation() {
    let class = ubuntu();
    // D2s v3 runs Gen1 and Gen2: the first listed, Gen2, wins.
    assert_eq!(
        image_for(&class, &size("Standard_D2s_v3"))
            .unwrap()
            .as_deref(),
        Some(GEN2_AMD64)
    );
    // An Ampere size is arm64 and Gen2 only.
    assert_eq!(
        image_for(&class, &size("Standard_D16plds_v5"))
            .unwrap()
            .as_deref(),
        Some(GEN2_ARM64)
    );
    // D2 v2 and D2 v3 are Gen1 only.
    for gen1 in ["Standard_D2_v2", "Standard_D2_v3"] {
        assert_eq!(
            image_for(&class, &size(gen1)).unwrap().as_deref(),
            Some(GEN1_AMD64),
            "{gen1}"
        );
    }
}

#[test]
fn a_size_of_unknown_generation_is_judged_by_its_architecture() {
    // The catalog does not know these sizes' Hyper-V generations.
    let class = ubuntu();
    assert_eq!(
        image_for(&class, &size("Standard_D2s_v5"))
            .unwrap()
            .as_deref(),
        Some(GEN2_AMD64)
    );
    assert_eq!(
        image_for(&class, &size("Standard_D2ps_v5"))
            .unwrap()
            .as_deref(),
        Some(GEN2_ARM64)
    );
}

#[test]
fn the_status_order_decides_between_images_a_size_can_boot() {
    let class = class(json!([
        image(GEN1_AMD64, "amd64", "1"),
        image(GEN2_AMD64, "amd64", "2"),
    ]));
    assert_eq!(
        image_for(&class, &size("Standard_D2s_v3"))
            .unwrap()
            .as_deref(),
        Some(GEN1_AMD64)
    );
    // A Gen2-only size skips the Gen1 image.
    assert_eq!(
        image_for(&class, &size("Standard_D2as_v6"))
            .unwrap()
            .as_deref(),
        Some(GEN2_AMD64)
    );
}

#[test]
fn a_size_no_image_is_for_fails_the_launch_naming_it() {
    let amd64_only = class(json!([image(GEN2_AMD64, "amd64", "2")]));
    // Gen1 only: no Gen2 image boots it.
    assert!(image_for(&amd64_only, &size("Standard_D2_v2")).is_err());
    let error = image_for(&amd64_only, &size("Standard_D2ps_v5")).unwrap_err();
    match &error {
        CloudProviderError::Create {
            reason, message, ..
        } => {
            assert_eq!(reason, "NoCompatibleImage");
            assert!(message.contains("Standard_D2ps_v5"), "{message}");
            assert!(message.contains("AKSNodeClass default"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!error.is_retryable());
}

#[test]
fn a_class_without_status_images_leaves_the_choice_to_its_family() {
    let none = class(json!([]));
    assert_eq!(image_for(&none, &size("Standard_D2s_v5")).unwrap(), None);
    let mut no_status = ubuntu();
    no_status.status = None;
    assert_eq!(
        image_for(&no_status, &size("Standard_D2s_v5")).unwrap(),
        None
    );
}

#[test]
fn an_image_requirement_that_is_not_one_names_its_entry() {
    let broken = class(json!([
        image(GEN2_AMD64, "amd64", "2"),
        {"id": "x", "requirements": [{"key": "kubernetes.io/arch", "operator": "Sometimes"}]},
    ]));
    // The first image fits an amd64 size: the broken one is never read.
    assert_eq!(
        image_for(&broken, &size("Standard_D2s_v5"))
            .unwrap()
            .as_deref(),
        Some(GEN2_AMD64)
    );
    let error = image_for(&broken, &size("Standard_D2ps_v5")).unwrap_err();
    assert!(
        error.to_string().contains("status.images[1].requirements"),
        "{error}"
    );
}
