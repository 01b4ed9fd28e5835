//! Tests of volume topology: the requirements a pod's volumes add, and the reasons a claim blocks it.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::*;

/// The alternatives, or the reason a plan would show.
fn requirements_or_reason(snapshot: &Snapshot, pod: &Pod) -> Result<Vec<Requirements>, String> {
    volume_requirements(snapshot, pod).map_err(|e| e.to_string())
}
use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, LABEL_TOPOLOGY_ZONE, Requirement};

const ZONE: &str = LABEL_TOPOLOGY_ZONE;

fn zone_in(zones: &[&str]) -> Requirements {
    [Requirement::in_values(ZONE, zones)].into_iter().collect()
}

fn from<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("valid test object")
}

/// A pod in `default` with the given volumes.
fn pod(name: &str, volumes: Value) -> Pod {
    from(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "app"}], "volumes": volumes},
    }))
}

fn pvc_volume(volume: &str, claim: &str) -> Value {
    json!({"name": volume, "persistentVolumeClaim": {"claimName": claim}})
}

/// A claim bound to `volume` (binding completed).
fn bound_claim(name: &str, volume: &str) -> PersistentVolumeClaim {
    from(json!({
        "metadata": {
            "name": name, "namespace": "default",
            "annotations": {BIND_COMPLETED_ANNOTATION: "yes"},
        },
        "spec": {"volumeName": volume, "storageClassName": "standard"},
        "status": {"phase": "Bound"},
    }))
}

/// An unbound claim; `class` `None` leaves `storageClassName` out.
fn unbound_claim(name: &str, class: Option<&str>) -> PersistentVolumeClaim {
    let mut spec = json!({});
    if let Some(class) = class {
        spec["storageClassName"] = json!(class);
    }
    from(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": {"phase": "Pending"},
    }))
}

/// A CSI volume whose required node affinity has these terms.
fn volume(name: &str, terms: Value) -> PersistentVolume {
    from(json!({
        "metadata": {"name": name},
        "spec": {
            "csi": {"driver": "test.driver", "volumeHandle": name},
            "nodeAffinity": {"required": {"nodeSelectorTerms": terms}},
        },
    }))
}

fn zone_term(zones: &[&str]) -> Value {
    json!({"matchExpressions": [{"key": ZONE, "operator": "In", "values": zones}]})
}

/// A WaitForFirstConsumer class with these allowedTopologies entries.
fn class(name: &str, topologies: Value) -> StorageClass {
    from(json!({
        "metadata": {"name": name},
        "provisioner": "test-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": topologies,
    }))
}

fn zone_topology(zones: &[&str]) -> Value {
    json!({"matchLabelExpressions": [{"key": ZONE, "values": zones}]})
}

fn snapshot(
    claims: Vec<PersistentVolumeClaim>,
    volumes: Vec<PersistentVolume>,
    classes: Vec<StorageClass>,
) -> Snapshot {
    Snapshot {
        persistent_volume_claims: claims,
        persistent_volumes: volumes,
        storage_classes: classes,
        ..Snapshot::default()
    }
}

fn requirements(pairs: &[(&str, &[&str])]) -> Requirements {
    pairs
        .iter()
        .map(|(key, values)| Requirement::in_values(key, *values))
        .collect()
}

#[test]
fn pod_without_claims_has_no_constraint() {
    let pod = pod(
        "web",
        json!([{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}]),
    );
    assert_eq!(
        requirements_or_reason(&Snapshot::default(), &pod),
        Ok(vec![])
    );
}

#[test]
fn bound_volume_brings_its_zone_affinity() {
    let snapshot = snapshot(
        vec![bound_claim("data", "pv-1")],
        vec![volume("pv-1", json!([zone_term(&["test-zone-2"])]))],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-2"])])
    );
}

#[test]
fn bound_volume_without_node_affinity_has_no_constraint() {
    let unpinned: PersistentVolume = from(json!({
        "metadata": {"name": "pv-1"},
        "spec": {"nfs": {"server": "fake.server", "path": "/x"}},
    }));
    let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![unpinned], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(requirements_or_reason(&snapshot, &pod), Ok(vec![]));
}

#[test]
fn each_node_affinity_term_is_an_alternative() {
    let snapshot = snapshot(
        vec![bound_claim("data", "pv-1")],
        vec![volume(
            "pv-1",
            json!([zone_term(&["test-zone-1"]), zone_term(&["test-zone-2"])]),
        )],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-1"]), zone_in(&["test-zone-2"])])
    );
}

#[test]
fn beta_zone_label_is_normalised() {
    let term = json!({"matchExpressions": [{
        "key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["test-zone-1"],
    }]});
    let snapshot = snapshot(
        vec![bound_claim("data", "pv-1")],
        vec![volume("pv-1", json!([term]))],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-1"])])
    );
}

#[test]
fn unbound_claim_brings_allowed_topologies_one_alternative_per_entry() {
    let snapshot = snapshot(
        vec![unbound_claim("data", Some("zonal"))],
        vec![],
        vec![class(
            "zonal",
            json!([
                zone_topology(&["test-zone-3"]),
                zone_topology(&["test-zone-1", "test-zone-2"]),
                {}
            ]),
        )],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![
            zone_in(&["test-zone-3"]),
            zone_in(&["test-zone-1", "test-zone-2"])
        ])
    );
}

#[test]
fn storage_class_without_allowed_topologies_has_no_constraint() {
    let snapshot = snapshot(
        vec![unbound_claim("data", Some("anywhere"))],
        vec![],
        vec![class("anywhere", Value::Null)],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(requirements_or_reason(&snapshot, &pod), Ok(vec![]));
}

#[test]
fn claim_without_class_uses_the_newest_default_class() {
    let mut old_default = class("old-default", json!([zone_topology(&["test-zone-1"])]));
    old_default.metadata.annotations = Some(
        [(DEFAULT_CLASS_ANNOTATION.to_owned(), "true".to_owned())]
            .into_iter()
            .collect(),
    );
    old_default.metadata.creation_timestamp = Some(from(json!("2024-01-01T00:00:00Z")));
    let mut new_default = class("new-default", json!([zone_topology(&["test-zone-3"])]));
    new_default.metadata.annotations = old_default.metadata.annotations.clone();
    new_default.metadata.creation_timestamp = Some(from(json!("2024-06-01T00:00:00Z")));
    let not_default = class("other", json!([zone_topology(&["test-zone-2"])]));
    let snapshot = snapshot(
        vec![unbound_claim("data", None)],
        vec![],
        vec![old_default, not_default, new_default],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-3"])])
    );
}

#[test]
fn claim_without_class_and_no_default_is_an_error() {
    let snapshot = snapshot(
        vec![unbound_claim("data", None)],
        vec![],
        vec![class("other", json!([zone_topology(&["test-zone-2"])]))],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(error.contains("no default storageclass"), "{error}");
}

#[test]
fn unbound_claim_with_empty_class_name_is_an_error() {
    let snapshot = snapshot(vec![unbound_claim("data", Some(""))], vec![], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(error.contains("storageClassName is empty"), "{error}");
}

#[test]
fn unbound_claim_with_missing_class_is_an_error() {
    let snapshot = snapshot(vec![unbound_claim("data", Some("gone"))], vec![], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Err(
            "volume \"data\": persistentvolumeclaim \"default/data\" is unbound and its \
             storageclass \"gone\" does not exist"
                .to_owned()
        )
    );
}

#[test]
fn bound_claim_ignores_its_class() {
    // Upstream schedules a bound claim whose StorageClass is missing.
    let snapshot = snapshot(
        vec![bound_claim("data", "pv-1")],
        vec![volume("pv-1", json!([zone_term(&["test-zone-1"])]))],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-1"])])
    );
}

#[test]
fn unbound_claim_with_immediate_binding_is_an_error() {
    let mut immediate = class("fast", json!([zone_topology(&["test-zone-1"])]));
    immediate.volume_binding_mode = Some("Immediate".to_owned());
    let snapshot = snapshot(
        vec![unbound_claim("data", Some("fast"))],
        vec![],
        vec![immediate],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(error.contains("volumeBindingMode Immediate"), "{error}");
}

#[test]
fn unset_binding_mode_is_not_immediate() {
    // Upstream rejects only an explicit Immediate (the API server fills the
    // field in, so a manifest without it is read as written).
    let mut unset = class("plain", json!([zone_topology(&["test-zone-1"])]));
    unset.volume_binding_mode = None;
    let snapshot = snapshot(
        vec![unbound_claim("data", Some("plain"))],
        vec![],
        vec![unset],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-1"])])
    );
}

#[test]
fn missing_claim_is_an_error() {
    let pod = pod("web", json!([pvc_volume("data", "nowhere")]));
    assert_eq!(
        requirements_or_reason(&Snapshot::default(), &pod),
        Err("volume \"data\": persistentvolumeclaim \"default/nowhere\" not found".to_owned())
    );
}

#[test]
fn claim_in_another_namespace_is_not_found() {
    let mut claim = bound_claim("data", "pv-1");
    claim.metadata.namespace = Some("other".to_owned());
    let snapshot = snapshot(
        vec![claim],
        vec![volume("pv-1", json!([zone_term(&["test-zone-1"])]))],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert!(requirements_or_reason(&snapshot, &pod).is_err());
}

#[test]
fn deleting_claim_is_an_error() {
    let mut claim = unbound_claim("data", Some("zonal"));
    claim.metadata.deletion_timestamp = Some(from(json!("2024-01-01T00:00:00Z")));
    let snapshot = snapshot(
        vec![claim],
        vec![],
        vec![class("zonal", json!([zone_topology(&["test-zone-1"])]))],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(error.contains("is being deleted"), "{error}");
}

#[test]
fn lost_claim_is_an_error() {
    let mut claim = bound_claim("data", "pv-1");
    claim.status = Some(from(json!({"phase": "Lost"})));
    let snapshot = snapshot(vec![claim], vec![], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(error.contains("is Lost"), "{error}");
}

#[test]
fn claim_bound_to_missing_volume_is_an_error() {
    let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Err(
            "volume \"data\": persistentvolumeclaim \"default/data\" is bound to \
             persistentvolume \"pv-1\", which does not exist"
                .to_owned()
        )
    );
}

#[test]
fn claim_bound_to_deleting_volume_is_an_error() {
    let mut pv = volume("pv-1", json!([zone_term(&["test-zone-1"])]));
    pv.metadata.deletion_timestamp = Some(from(json!("2024-01-01T00:00:00Z")));
    let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![pv], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(error.contains("which is being deleted"), "{error}");
}

#[test]
fn claim_naming_a_volume_without_bind_completed_is_an_error() {
    let mut claim = bound_claim("data", "pv-1");
    claim.metadata.annotations = None;
    let snapshot = snapshot(
        vec![claim],
        vec![volume("pv-1", json!([zone_term(&["test-zone-1"])]))],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(error.contains(BIND_COMPLETED_ANNOTATION), "{error}");
}

#[test]
fn ephemeral_volume_uses_the_claim_named_after_pod_and_volume() {
    let snapshot = snapshot(
        vec![unbound_claim("web-scratch", Some("zonal"))],
        vec![],
        vec![class("zonal", json!([zone_topology(&["test-zone-3"])]))],
    );
    let pod = pod(
        "web",
        json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]),
    );
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-3"])])
    );
    let error = requirements_or_reason(&Snapshot::default(), &pod).unwrap_err();
    assert!(
        error.contains("\"default/web-scratch\" not found"),
        "{error}"
    );
}

#[test]
fn two_volumes_keep_compatible_pairs_first() {
    // a: [z1 or z2] | [z3]; b: [z3] | [z2]. Of the four pairs only (z1|z2, z2) and
    // (z3, z3) intersect; they are kept, in order.
    let snapshot = snapshot(
        vec![
            unbound_claim("a", Some("class-a")),
            unbound_claim("b", Some("class-b")),
        ],
        vec![],
        vec![
            class(
                "class-a",
                json!([
                    zone_topology(&["test-zone-1", "test-zone-2"]),
                    zone_topology(&["test-zone-3"])
                ]),
            ),
            class(
                "class-b",
                json!([
                    zone_topology(&["test-zone-3"]),
                    zone_topology(&["test-zone-2"])
                ]),
            ),
        ],
    );
    let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-2"]), zone_in(&["test-zone-3"])])
    );
}

#[test]
fn two_volumes_on_different_keys_multiply() {
    let capacity = |values: &[&str]| json!({"matchLabelExpressions": [{"key": CAPACITY_TYPE_LABEL_KEY, "values": values}]});
    let snapshot = snapshot(
        vec![
            bound_claim("a", "pv-a"),
            unbound_claim("b", Some("class-b")),
        ],
        vec![volume(
            "pv-a",
            json!([zone_term(&["test-zone-1"]), zone_term(&["test-zone-2"])]),
        )],
        vec![class(
            "class-b",
            json!([capacity(&["spot"]), capacity(&["on-demand"])]),
        )],
    );
    let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
    let spot: &[&str] = &["spot"];
    let on_demand: &[&str] = &["on-demand"];
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![
            requirements(&[(ZONE, &["test-zone-1"]), (CAPACITY_TYPE_LABEL_KEY, spot)]),
            requirements(&[
                (ZONE, &["test-zone-1"]),
                (CAPACITY_TYPE_LABEL_KEY, on_demand)
            ]),
            requirements(&[(ZONE, &["test-zone-2"]), (CAPACITY_TYPE_LABEL_KEY, spot)]),
            requirements(&[
                (ZONE, &["test-zone-2"]),
                (CAPACITY_TYPE_LABEL_KEY, on_demand)
            ]),
        ])
    );
}

#[test]
fn two_volumes_with_no_compatible_pair_keep_every_pair() {
    let snapshot = snapshot(
        vec![bound_claim("a", "pv-a"), bound_claim("b", "pv-b")],
        vec![
            volume("pv-a", json!([zone_term(&["test-zone-1"])])),
            volume(
                "pv-b",
                json!([zone_term(&["test-zone-2"]), zone_term(&["test-zone-3"])]),
            ),
        ],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
    let alternatives = requirements_or_reason(&snapshot, &pod).unwrap();
    assert_eq!(alternatives.len(), 2);
    for alternative in &alternatives {
        // Both are the empty zone set: nothing can meet them.
        assert_eq!(alternative.get_defined(ZONE).map(Requirement::len), Some(0));
    }
}

#[test]
fn a_volume_without_constraint_does_not_multiply() {
    let snapshot = snapshot(
        vec![
            bound_claim("a", "pv-a"),
            unbound_claim("b", Some("anywhere")),
        ],
        vec![volume("pv-a", json!([zone_term(&["test-zone-1"])]))],
        vec![class("anywhere", Value::Null)],
    );
    let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-1"])])
    );
}

#[test]
fn local_volume_drops_hostname_affinity() {
    let mut local = volume(
        "pv-local",
        json!([
            {"matchExpressions": [
                {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
                {"key": ZONE, "operator": "In", "values": ["test-zone-1"]},
            ]},
            {"matchExpressions": [
                {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
            ]},
        ]),
    );
    let spec = local.spec.as_mut().unwrap();
    spec.csi = None;
    spec.local = Some(from(json!({"path": "/mnt/local-disks"})));
    let snapshot = snapshot(vec![bound_claim("data", "pv-local")], vec![local], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    // The mixed term keeps its zone; the hostname-only term becomes an
    // unconstrained alternative.
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![zone_in(&["test-zone-1"]), Requirements::new()])
    );
}

#[test]
fn host_path_volume_drops_hostname_affinity() {
    let mut host_path = volume(
        "pv-host",
        json!([{"matchExpressions": [
            {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
        ]}]),
    );
    let spec = host_path.spec.as_mut().unwrap();
    spec.csi = None;
    spec.host_path = Some(from(json!({"path": "/mnt/disks"})));
    let snapshot = snapshot(
        vec![bound_claim("data", "pv-host")],
        vec![host_path],
        vec![],
    );
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![Requirements::new()])
    );
}

#[test]
fn network_volume_keeps_hostname_affinity() {
    let pinned = volume(
        "pv-1",
        json!([{"matchExpressions": [
            {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
        ]}]),
    );
    let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![pinned], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    assert_eq!(
        requirements_or_reason(&snapshot, &pod),
        Ok(vec![requirements(&[(LABEL_HOSTNAME, &["old-node"])])])
    );
}

#[test]
fn invalid_node_affinity_is_an_error() {
    let broken = volume(
        "pv-1",
        json!([{"matchExpressions": [{"key": ZONE, "operator": "Near", "values": ["x"]}]}]),
    );
    let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![broken], vec![]);
    let pod = pod("web", json!([pvc_volume("data", "data")]));
    let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
    assert!(
        error.contains("persistentvolume \"pv-1\" node affinity"),
        "{error}"
    );
}
