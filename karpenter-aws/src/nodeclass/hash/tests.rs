//! The static hash: which fields count, lists as sets, zero values, and the
//! controller's annotation rules, after upstream's hash tests.

use serde_json::{Value, json};

use super::*;

fn class(spec: Value) -> EC2NodeClass {
    serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": spec}))
        .expect("a valid EC2NodeClass")
}

fn base() -> Value {
    json!({
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "role": "KarpenterNodeRole",
        "tags": {"team": "a"},
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeType": "gp3"}},
            {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "40Gi"}}
        ]
    })
}

fn with(field: &str, value: Value) -> EC2NodeClass {
    let mut spec = base();
    spec[field] = value;
    class(spec)
}

fn hash(class: &EC2NodeClass) -> String {
    class.static_hash(None)
}

#[test]
fn hashed_fields_change_the_hash() {
    let before = hash(&class(base()));
    let changes = [
        ("role", json!("OtherRole")),
        ("userData", json!("#!/bin/bash")),
        ("tags", json!({"team": "b"})),
        (
            "blockDeviceMappings",
            json!([{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "30Gi"}}]),
        ),
        ("instanceStorePolicy", json!("RAID0")),
        ("detailedMonitoring", json!(true)),
        ("associatePublicIPAddress", json!(false)),
        ("metadataOptions", json!({"httpTokens": "optional"})),
        ("context", json!("fleet-context")),
        ("placementGroupSelector", json!({"name": "pg"})),
        (
            "networkInterfaces",
            json!([{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]),
        ),
        ("connectionTracking", json!({"udpTimeout": 40})),
        ("cpuOptions", json!({"nestedVirtualization": "enabled"})),
        ("kubelet", json!({"maxPods": 20})),
    ];
    for (field, value) in changes {
        assert_ne!(hash(&with(field, value)), before, "{field} must drift");
    }
}

#[test]
fn ignored_fields_leave_the_hash() {
    let before = hash(&class(base()));
    let changes = [
        ("subnetSelectorTerms", json!([{"id": "subnet-1"}])),
        ("securityGroupSelectorTerms", json!([{"id": "sg-1"}])),
        ("capacityReservationSelectorTerms", json!([{"id": "cr-1"}])),
        ("amiSelectorTerms", json!([{"alias": "al2023@v20240807"}])),
        ("ipPrefixCount", json!(2)),
        ("unknownField", json!("x")),
    ];
    for (field, value) in changes {
        assert_eq!(hash(&with(field, value)), before, "{field} must not drift");
    }
}

#[test]
fn the_resolved_family_is_hashed_not_the_literal_field() {
    let before = hash(&class(base()));
    assert_eq!(hash(&with("amiFamily", json!("AL2023"))), before);
    assert_ne!(hash(&with("amiFamily", json!("Custom"))), before);
}

#[test]
fn the_ca_bundle_is_hashed() {
    let class = class(base());
    assert_ne!(class.static_hash(Some("bundle")), class.static_hash(None));
    assert_eq!(class.static_hash(Some("b")), class.static_hash(Some("b")));
}

#[test]
fn lists_are_sets_and_empty_is_absent() {
    let before = hash(&class(base()));
    let reordered = json!([
        {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "40Gi"}},
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeType": "gp3"}}
    ]);
    assert_eq!(hash(&with("blockDeviceMappings", reordered)), before);
    let mut spec = base();
    spec["userData"] = json!("");
    spec["blockDeviceMappings"][0]["rootVolume"] = json!(false);
    assert_eq!(hash(&class(spec)), before);
    let no_tags = hash(&with("tags", json!(null)));
    assert_eq!(hash(&with("tags", json!({}))), no_tags);
}

#[test]
fn kubelet_lists_keep_their_order_as_upstream_hashes_its_text() {
    let a = with("kubelet", json!({"clusterDNS": ["10.0.0.1", "10.0.0.2"]}));
    let b = with("kubelet", json!({"clusterDNS": ["10.0.0.2", "10.0.0.1"]}));
    assert_ne!(hash(&a), hash(&b));
    assert_eq!(hash(&with("kubelet", json!({}))), hash(&class(base())));
}

#[test]
fn annotate_hash_sets_both_annotations_once() {
    let mut class = class(base());
    assert!(class.needs_claim_rehash());
    assert!(class.annotate_hash(None));
    assert!(!class.annotate_hash(None));
    assert!(!class.needs_claim_rehash());
    let annotations = class.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations[HASH_ANNOTATION], class.static_hash(None));
    assert_eq!(annotations[HASH_VERSION_ANNOTATION], HASH_VERSION);
    class.spec.role = Some("Other".to_owned());
    assert!(class.annotate_hash(None));
}

fn claim(annotations: Value, conditions: Value) -> NodeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": "c", "annotations": annotations},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
        "status": {"conditions": conditions}
    }))
    .expect("a valid NodeClaim")
}

#[test]
fn rehash_claim_updates_old_versions_and_keeps_drifted_hashes() {
    let class = class(base());
    let old = json!({HASH_ANNOTATION: "123", HASH_VERSION_ANNOTATION: UPSTREAM_HASH_VERSION});
    let mut fresh = claim(old.clone(), json!([]));
    assert!(class.rehash_claim(&mut fresh, None));
    let annotations = fresh.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations[HASH_ANNOTATION], class.static_hash(None));
    assert_eq!(annotations[HASH_VERSION_ANNOTATION], HASH_VERSION);
    assert!(!class.rehash_claim(&mut fresh, None));

    let drifted_condition = json!([{"type": "Drifted", "status": "True",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "NodeClassDrift", "message": ""}]);
    let mut drifted = claim(old, drifted_condition);
    assert!(class.rehash_claim(&mut drifted, None));
    let annotations = drifted.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations[HASH_ANNOTATION], "123");
    assert_eq!(annotations[HASH_VERSION_ANNOTATION], HASH_VERSION);
}
