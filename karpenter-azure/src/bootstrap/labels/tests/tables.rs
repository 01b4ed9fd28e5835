//! The longer tables: the instance-type suite's well-known labels and
//! restricted domains, and `labels_test.go`'s cases.

use super::*;

/// The size a claim requiring `key` = `value` launches on: upstream's
/// Standard_NC24ads_A100_v4 when it has that value, else the first size
/// that does (a size that leaves the key open has every value).
fn size_for(sizes: &[InstanceType], key: &str, value: &str) -> InstanceType {
    let fits =
        |t: &&InstanceType| !t.requirements.contains_key(key) || t.requirements.get(key).has(value);
    sizes
        .iter()
        .filter(|t| t.name == "Standard_NC24ads_A100_v4")
        .chain(sizes)
        .find(fits)
        .cloned()
        .unwrap_or_else(|| panic!("a size with {key}={value}"))
}

/// Upstream's well-known-label table: a pod selecting `key` = `value`
/// gives a claim requiring it; whether `key=value` is then in
/// KUBELET_NODE_LABELS. FIPS has its own test (it needs a FIPS class);
/// `topology.disk.csi.azure.com/zone` is left out: upstream's scheduler
/// reads it as `topology.kubernetes.io/zone`, which the engine's
/// normalization does not do yet, so a claim would still hold it.
const WELL_KNOWN: [(&str, &str, bool); 44] = [
    ("topology.kubernetes.io/region", REGION, true),
    ("karpenter.sh/nodepool", "default", true),
    ("topology.kubernetes.io/zone", ZONE_1, true),
    (
        "node.kubernetes.io/instance-type",
        "Standard_NC24ads_A100_v4",
        true,
    ),
    ("kubernetes.io/os", "linux", true),
    ("kubernetes.io/arch", "amd64", true),
    ("karpenter.sh/capacity-type", "on-demand", true),
    ("karpenter.azure.com/placement-scope", "zonal", true),
    (
        "karpenter.azure.com/sku-name",
        "Standard_NC24ads_A100_v4",
        true,
    ),
    ("karpenter.azure.com/sku-family", "N", true),
    ("karpenter.azure.com/sku-series", "NCads_v4", true),
    ("karpenter.azure.com/sku-version", "4", true),
    (
        "karpenter.azure.com/sku-storage-ephemeralos-maxsize",
        "429",
        true,
    ),
    (
        "karpenter.azure.com/sku-networking-accelerated",
        "true",
        true,
    ),
    (
        "karpenter.azure.com/sku-storage-premium-capable",
        "true",
        true,
    ),
    ("karpenter.azure.com/sku-storage-ultra-ssd", "true", true),
    ("karpenter.azure.com/sku-gpu-name", "A100", true),
    ("karpenter.azure.com/sku-gpu-manufacturer", "nvidia", true),
    ("karpenter.azure.com/sku-gpu-count", "1", true),
    ("karpenter.azure.com/sku-cpu", "24", true),
    ("karpenter.azure.com/sku-memory", "8192", true),
    ("kubernetes.azure.com/sku-cpu", "24", true),
    ("kubernetes.azure.com/sku-memory", "8192", true),
    ("kubernetes.azure.com/mode", "user", true),
    ("kubernetes.azure.com/mode", "system", true),
    ("kubernetes.azure.com/scalesetpriority", "regular", true),
    ("kubernetes.azure.com/scalesetpriority", "spot", true),
    ("kubernetes.azure.com/priority", "regular", true),
    ("kubernetes.azure.com/priority", "spot", true),
    ("kubernetes.azure.com/os-sku", "Ubuntu", true),
    // Deprecated keys: the claim holds them under their stable names.
    ("failure-domain.beta.kubernetes.io/region", REGION, false),
    ("failure-domain.beta.kubernetes.io/zone", ZONE_1, false),
    ("beta.kubernetes.io/arch", "amd64", false),
    ("beta.kubernetes.io/os", "linux", false),
    (
        "beta.kubernetes.io/instance-type",
        "Standard_NC24ads_A100_v4",
        false,
    ),
    // Unsupported, but in a namespace the kubelet may set.
    ("node.kubernetes.io/windows-build", "window", true),
    ("kubernetes.azure.com/cluster", "test-resourceGroup", true),
    // Allowed on claims, synced to the node by Karpenter: the kubelet may
    // not set them.
    ("kubernetes.io/custom-label", "custom-value", false),
    ("k8s.io/custom-label", "custom-value", false),
    ("kubelet.kubernetes.io/custom-label", "custom-value", true),
    // Not upstream's entries: the other values of keys a launch decides.
    ("karpenter.azure.com/sku-storage-ultra-ssd", "false", true),
    ("karpenter.sh/capacity-type", "spot", true),
    ("karpenter.azure.com/placement-scope", "regional", true),
    ("topology.kubernetes.io/zone", "0", true),
];

#[test]
fn well_known_labels_reach_the_kubelet_as_upstream_writes_them() {
    let class = default_class();
    let sizes = sizes(&class);
    let mut present = BTreeSet::new();
    let mut expected = BTreeSet::new();
    for (key, value, in_kubelet) in WELL_KNOWN {
        let claim = requiring(key, &[value]);
        let size = size_for(
            &sizes,
            karpenter_core::scheduling::normalize_label_key(key),
            value,
        );
        let labels = kubelet_node_labels(&settings(), "1.31.2", &class, &size, &claim);
        let item = format!("{key}={value}");
        if items(&labels).contains(&item) {
            present.insert(item.clone());
        }
        if in_kubelet {
            expected.insert(item);
        }
    }
    assert_eq!(present, expected);
}

#[test]
fn fips_classes_label_their_nodes() {
    let fips = class(
        json!({"fipsMode": "FIPS", "imageFamily": "AzureLinux"}),
        json!({}),
    );
    let labels = labels_for("1.31.2", &fips, "Standard_D2s_v3");
    assert_eq!(labels[FIPS_ENABLED], "true");
    let plain = labels_for("1.31.2", &default_class(), "Standard_D2s_v3");
    assert!(!plain.contains_key(FIPS_ENABLED));
}

#[test]
fn restricted_domains_stay_off_the_kubelet() {
    // Upstream's table: node-restriction.kubernetes.io refused,
    // node.kubernetes.io allowed, each with a subdomain.
    for (domain, allowed) in [
        ("node-restriction.kubernetes.io", false),
        ("node.kubernetes.io", true),
    ] {
        let keys = [
            format!("{domain}/team"),
            format!("{domain}/custom-label"),
            format!("subdomain.{domain}/custom-label"),
        ];
        let requirements: Vec<Value> = keys
            .iter()
            .map(|k| json!({"key": k, "operator": "In", "values": ["v"]}))
            .collect();
        let claim = claim(json!(requirements), json!({}), json!([]), json!([]));
        let labels = kubelet_node_labels(
            &settings(),
            "1.31.2",
            &default_class(),
            &size("Standard_D2s_v3"),
            &claim,
        );
        for key in &keys {
            assert_eq!(labels.contains_key(key), allowed, "{key}");
        }
    }
}

#[test]
fn kubelet_may_set_upstreams_cases() {
    let cases = [
        ("example.com/custom-label", true),
        ("kubernetes.io/hostname", true),
        ("beta.kubernetes.io/instance-type", true),
        ("topology.kubernetes.io/zone", true),
        ("kubelet.kubernetes.io/custom", true),
        ("my-component.kubelet.kubernetes.io/custom", true),
        ("node.kubernetes.io/custom", true),
        ("my-component.node.kubernetes.io/custom", true),
        ("node-restriction.kubernetes.io/test", false),
        ("custom.node-restriction.kubernetes.io/test", false),
        ("scheduler.kubernetes.io/custom", false),
        ("example.k8s.io/custom", false),
    ];
    for (key, expected) in cases {
        assert_eq!(kubelet_may_set(key), expected, "{key}");
    }
    // A domain that only ends in the same letters is not a subdomain.
    assert!(kubelet_may_set("notkubernetes.io/x"));
    assert!(!kubelet_may_set("mynode.kubernetes.io/x"));
}

#[test]
fn single_valued_requirements_become_labels() {
    // labels_test.go: only `In` one value gives a label.
    let cases: [(Value, &[(&str, &str)]); 3] = [
        (
            json!([
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]},
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["westus-1"]},
            ]),
            &[
                ("node.kubernetes.io/instance-type", "Standard_D2s_v3"),
                ("topology.kubernetes.io/zone", "westus-1"),
            ],
        ),
        (
            json!([
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
                {"key": "kubernetes.azure.com/scalesetpriority", "operator": "In", "values": ["regular", "spot"]},
                {"key": "kubernetes.azure.com/priority", "operator": "In", "values": ["regular", "spot"]},
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["westus-1"]},
            ]),
            &[
                ("node.kubernetes.io/instance-type", "Standard_D2s_v3"),
                ("topology.kubernetes.io/zone", "westus-1"),
            ],
        ),
        (
            json!([
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["westus-1", "westus-2"]},
                {"key": "team", "operator": "Exists"},
            ]),
            &[],
        ),
    ];
    for (requirements, expected) in cases {
        let claim = claim(requirements, json!({}), json!([]), json!([]));
        let expected: BTreeMap<String, String> = expected
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(claim_requirements(&claim).labels(), expected);
    }
}

#[test]
fn later_sources_win() {
    // The claim's label beats the base mode, its requirement beats its
    // label, and the size's own value beats the claim's.
    let claim = claim(
        json!([{"key": "team", "operator": "In", "values": ["blue"]}]),
        json!({"kubernetes.azure.com/mode": "system", "team": "red",
               "karpenter.azure.com/sku-name": "Standard_Other"}),
        json!([]),
        json!([]),
    );
    let labels = kubelet_node_labels(
        &settings(),
        "1.31.2",
        &default_class(),
        &size("Standard_D2s_v3"),
        &claim,
    );
    assert_eq!(labels[MODE], "system");
    assert_eq!(labels["team"], "blue");
    assert_eq!(labels["karpenter.azure.com/sku-name"], "Standard_D2s_v3");
    // No pinned offering: the launch's own, cheapest first, spot before
    // on-demand at one price, zonal before regional.
    assert_eq!(labels[CAPACITY_TYPE_LABEL_KEY], "spot");
    assert_eq!(labels[PLACEMENT_SCOPE], "zonal");
    assert_eq!(labels[SKU_STORAGE_ULTRA_SSD], "false");
}

fn on_default_size(version: &str, class: &AKSNodeClass, name: &str) -> BTreeMap<String, String> {
    kubelet_node_labels(&settings(), version, class, &size(name), &empty_claim())
}

#[test]
fn local_dns_state_labels() {
    // labels_test.go's cases: the resolved state decides; no state and no
    // Required mode is disabled.
    let cases = [
        (json!({"mode": "Required"}), Some("Enabled"), "enabled"),
        (json!({"mode": "Disabled"}), Some("Disabled"), "disabled"),
        (json!({"mode": "Preferred"}), Some("Disabled"), "disabled"),
        (json!({"mode": "Preferred"}), Some("Enabled"), "enabled"),
        (Value::Null, None, "disabled"),
        (json!({"mode": ""}), None, "disabled"),
    ];
    for (local_dns, state, expected) in cases {
        let spec = if local_dns.is_null() {
            json!({})
        } else {
            json!({"localDNS": local_dns})
        };
        let status = state.map_or_else(|| json!({}), |s| json!({"localDNSState": s}));
        // The size as the default class shapes it: a LocalDNS class's
        // types leave out the small sizes.
        let labels = on_default_size("1.35.0", &class(spec, status), "Standard_D2s_v3");
        assert_eq!(labels[LOCAL_DNS_STATE], expected, "{local_dns} {state:?}");
    }
}

#[test]
fn os_sku_labels_follow_family_and_version() {
    // labels_test.go's TestLabelsGet: family, version, then os-sku,
    // os-sku-requested, os-sku-effective.
    let cases = [
        ("Ubuntu", "1.33.9", "Ubuntu", "Ubuntu2204"),
        ("Ubuntu", "1.34.0", "Ubuntu", "Ubuntu2404"),
        ("Ubuntu2204", "1.31.0", "Ubuntu", "Ubuntu2204"),
        ("Ubuntu2204", "1.35.0", "Ubuntu", "Ubuntu2204"),
        ("Ubuntu2404", "1.31.0", "Ubuntu", "Ubuntu2404"),
        ("Ubuntu2404", "1.35.0", "Ubuntu", "Ubuntu2404"),
        ("AzureLinux", "1.31.9", "AzureLinux", "AzureLinux2"),
        ("AzureLinux", "1.32.0", "AzureLinux", "AzureLinux3"),
    ];
    for (family, version, os_sku, effective) in cases {
        let class = class(json!({"imageFamily": family}), json!({}));
        let labels = labels_for(version, &class, "Standard_D2s_v3");
        assert_eq!(labels[OS_SKU], os_sku, "{family} {version}");
        assert_eq!(labels[OS_SKU_REQUESTED], family, "{family} {version}");
        assert_eq!(labels[OS_SKU_EFFECTIVE], effective, "{family} {version}");
    }
    // No family is the CRD's default, Ubuntu.
    let labels = labels_for("1.34.0", &default_class(), "Standard_D2s_v3");
    assert_eq!(labels[OS_SKU_REQUESTED], "Ubuntu");
}

#[test]
fn fips_and_trusted_launch_pin_the_default_ubuntu() {
    let trusted = json!({"trustedLaunch": {"vtpm": true}});
    let cases = [
        (json!({"fipsMode": "FIPS"}), "Ubuntu"),
        (
            json!({"fipsMode": "FIPS", "security": trusted}),
            "Ubuntu2204",
        ),
        (json!({"security": trusted}), "Ubuntu2204"),
    ];
    for (spec, effective) in cases {
        let labels = labels_for("1.34.0", &class(spec.clone(), json!({})), "Standard_D2s_v3");
        assert_eq!(labels[OS_SKU_EFFECTIVE], effective, "{spec}");
    }
}

#[test]
fn artifact_streaming_only_when_on_and_not_on_arm64() {
    // labels_test.go: unset, enabled, disabled on amd64 and arm64.
    let cases = [
        (Value::Null, "Standard_D2s_v3", false),
        (Value::Null, "Standard_D2ps_v5", false),
        (json!(true), "Standard_D2s_v3", true),
        (json!(true), "Standard_D2ps_v5", false),
        (json!(false), "Standard_D2s_v3", false),
        (json!(false), "Standard_D2ps_v5", false),
    ];
    for (enabled, size_name, expected) in cases {
        let spec = if enabled.is_null() {
            json!({})
        } else {
            json!({"artifactStreaming": {"enabled": enabled}})
        };
        // The size as the default class shapes it: an artifact-streaming
        // class's types leave out arm64.
        let labels = on_default_size("1.35.0", &class(spec, json!({})), size_name);
        let got = labels.get(ARTIFACT_STREAMING_ENABLED).map(String::as_str);
        assert_eq!(got, expected.then_some("true"), "{enabled} {size_name}");
    }
}
