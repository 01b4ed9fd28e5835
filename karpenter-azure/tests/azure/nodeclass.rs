//! AKSNodeClass: defaults, validation, and the settings that change
//! instance types.

use karpenter_azure::instancetype::{instance_type, instance_types, labels};
use karpenter_azure::{AKSNodeClass, Catalog, ImageFamily, NetworkOptions, Settings};
use serde_json::json;

fn class(spec: serde_json::Value) -> AKSNodeClass {
    serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": spec}))
        .expect("an AKSNodeClass")
}

fn names(spec: serde_json::Value) -> Vec<String> {
    let settings = Settings::for_node_class(&class(spec), "eastus", &NetworkOptions::default())
        .expect("valid");
    instance_types(Catalog::embedded(), &settings)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

#[test]
fn an_empty_spec_takes_upstreams_defaults() {
    let settings =
        Settings::for_node_class(&class(json!({})), "eastus", &NetworkOptions::default())
            .expect("valid");
    assert_eq!(settings.image_family, ImageFamily::Ubuntu);
    assert_eq!(settings.os_disk_size_gb, 128);
    assert_eq!(settings.max_pods, 250);
    assert!(settings.gpu_driver_managed);
    assert!(!settings.encryption_at_host && !settings.fips);
    assert!(!settings.trusted_launch && !settings.local_dns);
    // maxPods follows the network when the class does not say.
    let node_subnet = NetworkOptions {
        plugin: "azure".into(),
        plugin_mode: String::new(),
    };
    assert_eq!(
        Settings::for_node_class(&class(json!({})), "eastus", &node_subnet)
            .expect("valid")
            .max_pods,
        30
    );
    let kubenet = NetworkOptions {
        plugin: "kubenet".into(),
        plugin_mode: String::new(),
    };
    assert_eq!(kubenet.default_max_pods(), 110);
}

#[test]
fn the_settings_shape_capacity_and_labels() {
    let catalog = Catalog::embedded();
    let sku = catalog.sku("Standard_D4s_v5").expect("D4s_v5");
    let spec = json!({"imageFamily": "AzureLinux", "osDiskSizeGB": 64, "maxPods": 30});
    let settings = Settings::for_node_class(&class(spec), "westeurope", &NetworkOptions::default())
        .expect("valid");
    let it = instance_type(catalog, sku, &settings).expect("offered");
    assert_eq!(it.capacity.get("pods"), 30_000);
    assert_eq!(it.capacity.get("ephemeral-storage"), 64_000_000_000_000);
    let single = it.requirements.labels();
    assert_eq!(single[labels::OS_SKU], "AzureLinux");
    assert_eq!(single["topology.kubernetes.io/region"], "westeurope");
    assert!(
        it.offerings
            .iter()
            .all(|o| o.zone == "0" || o.zone.starts_with("westeurope-"))
    );
}

#[test]
fn gpu_sizes_follow_the_image_family_and_the_driver_mode() {
    // An NVIDIA size whose GPU path does not support Azure Linux.
    assert!(names(json!({})).contains(&"Standard_NV12s_v3".to_owned()));
    assert!(!names(json!({"imageFamily": "AzureLinux"})).contains(&"Standard_NV12s_v3".to_owned()));
    // An AMD size: only without the managed driver.
    let amd = "Standard_ND96isr_MI300X_v5".to_owned();
    assert!(!names(json!({})).contains(&amd));
    assert!(names(json!({"gpu": {"mode": "None"}})).contains(&amd));
}

#[test]
fn encryption_at_host_and_artifact_streaming_narrow_the_sizes() {
    let all = names(json!({}));
    let encrypted = names(json!({"security": {"encryptionAtHost": true}}));
    // Standard_D2_v3 records EncryptionAtHostSupported=False.
    assert!(all.contains(&"Standard_D2_v3".to_owned()));
    assert!(!encrypted.contains(&"Standard_D2_v3".to_owned()));
    assert!(encrypted.contains(&"Standard_D2s_v3".to_owned()));
    let streaming = names(json!({"artifactStreaming": {"enabled": true}}));
    let catalog = Catalog::embedded();
    assert!(
        streaming
            .iter()
            .all(|n| catalog.sku(n).is_some_and(|s| s.arch == "amd64"))
    );
    assert!(
        all.iter()
            .any(|n| catalog.sku(n).is_some_and(|s| s.arch == "arm64"))
    );
}

#[test]
fn invalid_specs_name_their_field() {
    for (spec, field, words) in [
        (
            json!({"imageFamily": "Windows"}),
            "imageFamily",
            "is not Ubuntu",
        ),
        (json!({"osDiskSizeGB": 10}), "osDiskSizeGB", "30 to 2048"),
        (json!({"maxPods": 300}), "maxPods", "10 to 250"),
        (
            json!({"fipsMode": "Yes"}),
            "fipsMode",
            "not FIPS or Disabled",
        ),
        (
            json!({"fipsMode": "FIPS", "imageFamily": "Ubuntu2404"}),
            "fipsMode",
            "Ubuntu2404",
        ),
        (
            json!({"tags": {"a<b": "x"}}),
            "tags",
            "not a valid Azure tag name",
        ),
    ] {
        let error = class(spec.clone()).validate().expect_err("invalid");
        assert_eq!(error.field, field, "{spec}");
        assert!(error.to_string().contains(words), "{error}");
        assert!(
            error.to_string().starts_with("AKSNodeClass default: spec."),
            "{error}"
        );
    }
    assert!(
        class(json!({"fipsMode": "FIPS", "imageFamily": "Ubuntu2204"}))
            .validate()
            .is_ok()
    );
}

#[test]
fn fips_classes_only_take_fips_nodes() {
    let catalog = Catalog::embedded();
    let sku = catalog.sku("Standard_D4s_v5").expect("D4s_v5");
    let plain = Settings::for_node_class(&class(json!({})), "eastus", &NetworkOptions::default())
        .expect("valid");
    let fips = Settings::for_node_class(
        &class(json!({"fipsMode": "FIPS", "imageFamily": "Ubuntu2204"})),
        "eastus",
        &NetworkOptions::default(),
    )
    .expect("valid");
    let plain_type = instance_type(catalog, sku, &plain).expect("offered");
    let fips_type = instance_type(catalog, sku, &fips).expect("offered");
    assert!(
        plain_type
            .requirements
            .get(labels::FIPS_ENABLED)
            .operator()
            .to_string()
            == "DoesNotExist"
    );
    assert_eq!(
        fips_type.requirements.labels()[labels::FIPS_ENABLED],
        "true"
    );
}

#[test]
fn trusted_launch_keeps_the_sizes_that_can_run_it() {
    let all = names(json!({}));
    for trusted in [
        json!({"security": {"trustedLaunch": {"vtpm": true}}}),
        json!({"security": {"trustedLaunch": {"secureBoot": true}}}),
    ] {
        let kept = names(trusted.clone());
        // Generation 1 only: no trusted launch.
        assert!(all.contains(&"Standard_D2_v3".to_owned()));
        assert!(!kept.contains(&"Standard_D2_v3".to_owned()), "{trusted}");
        // Generation 2, but the API says TrustedLaunchDisabled.
        assert!(all.contains(&"Standard_D16plds_v5".to_owned()));
        assert!(
            !kept.contains(&"Standard_D16plds_v5".to_owned()),
            "{trusted}"
        );
        // Generation 2 without the flag.
        assert!(kept.contains(&"Standard_D2s_v3".to_owned()), "{trusted}");
        assert!(kept.contains(&"Standard_D2as_v6".to_owned()), "{trusted}");
    }
    // Both switched off is no trusted launch.
    let off = json!({"security": {"trustedLaunch": {"vtpm": false, "secureBoot": false}}});
    assert_eq!(names(off), all);
}

#[test]
fn local_dns_leaves_out_sizes_under_four_vcpus() {
    let catalog = Catalog::embedded();
    let vcpus = |name: &String| catalog.sku(name).map_or(0, |s| s.vcpus);
    let with_status = |state: &str, spec: serde_json::Value| {
        let class: AKSNodeClass = serde_json::from_value(json!({
            "metadata": {"name": "default"},
            "spec": spec,
            "status": {"localDNSState": state},
        }))
        .expect("an AKSNodeClass");
        let settings =
            Settings::for_node_class(&class, "eastus", &NetworkOptions::default()).expect("valid");
        instance_types(catalog, &settings)
            .into_iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
    };
    let all = names(json!({}));
    assert!(all.iter().any(|n| vcpus(n) == 2));
    let enabled = [
        with_status("Enabled", json!({})),
        // Before the status controller ran: Required is enabled.
        names(json!({"localDNS": {"mode": "Required"}})),
    ];
    for kept in &enabled {
        assert!(kept.iter().all(|n| vcpus(n) >= 4));
        let expected: Vec<&String> = all.iter().filter(|n| vcpus(n) >= 4).collect();
        assert_eq!(kept.iter().collect::<Vec<_>>(), expected);
    }
    // Preferred resolves to disabled on every Kubernetes version there is;
    // a resolved Disabled wins over the spec's mode.
    assert_eq!(names(json!({"localDNS": {"mode": "Preferred"}})), all);
    assert_eq!(
        with_status("Disabled", json!({"localDNS": {"mode": "Required"}})),
        all
    );
}

/// A node class as a Kubernetes client reads and writes it: a cluster-scoped
/// `karpenter.azure.com/v1beta1` resource whose body says what it is.
#[test]
fn a_node_class_is_a_resource_that_writes_its_type() {
    use k8s_openapi::{ListableResource, Metadata, Resource};

    assert_eq!(
        <AKSNodeClass as Resource>::API_VERSION,
        "karpenter.azure.com/v1beta1"
    );
    assert_eq!(<AKSNodeClass as Resource>::GROUP, "karpenter.azure.com");
    assert_eq!(<AKSNodeClass as Resource>::VERSION, "v1beta1");
    assert_eq!(
        <AKSNodeClass as Resource>::URL_PATH_SEGMENT,
        "aksnodeclasses"
    );
    assert_eq!(
        <AKSNodeClass as ListableResource>::LIST_KIND,
        "AKSNodeClassList"
    );

    let manifest = json!({
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
        "spec": {"imageFamily": "AzureLinux", "osDiskSizeGB": 64, "tags": {"team": "a"}},
        "status": {"kubernetesVersion": "1.33.2", "somethingNew": [1, 2]},
    });
    let mut read: AKSNodeClass = serde_json::from_value(manifest.clone()).expect("reads");
    assert_eq!(serde_json::to_value(&read).expect("writes"), manifest);
    read.metadata_mut().resource_version = Some("9".into());
    assert_eq!(read.metadata.resource_version.as_deref(), Some("9"));

    // Written without a type (a hand-written scenario), it gains one.
    let untyped = class(json!({}));
    let written = serde_json::to_value(&untyped).expect("writes");
    assert_eq!(written["apiVersion"], "karpenter.azure.com/v1beta1");
    assert_eq!(written["kind"], "AKSNodeClass");
}

#[test]
fn another_version_or_kind_is_refused_by_name() {
    let old = serde_json::from_value::<AKSNodeClass>(json!({
        "apiVersion": "karpenter.azure.com/v1alpha2",
        "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
    }))
    .expect_err("v1alpha2 is refused");
    assert!(
        old.to_string().contains("\"karpenter.azure.com/v1alpha2\""),
        "{old}"
    );
    let other = serde_json::from_value::<AKSNodeClass>(json!({
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "NodePool",
    }))
    .expect_err("a NodePool is not a node class");
    assert!(other.to_string().contains("\"NodePool\""), "{other}");
}
