//! A real cluster dump reads without loss.
//!
//! The workspace's `tests/fixtures/cluster-dump.yaml` (shared with the root crate's
//! tests and `scripts/compare-outputs.sh`, so it stays there) is what `kubectl get
//! aksnodeclasses,nodepools,nodeclaims,pods,nodes,daemonsets,pdb,services -A -o yaml`
//! prints for a small Karpenter cluster on AKS: one `List` document, keys sorted and
//! scalars quoted as kubectl writes them. `cluster-dump.json` is the same list as
//! `kubectl get -o json` prints it. Every item the loader reads must write back as
//! exactly the item it was read from; the one kind it does not read (a `Service`) is
//! skipped with a warning. Pods are the exception by design: the loader keeps only what
//! planning reads of them (`PodInfo`), so a pod must write back as exactly what a
//! direct k8s-openapi read of its item keeps.
//!
//! `capacity-buffers-dump.yaml` is the same for the kinds a CapacityBuffer
//! brings (read with the `CapacityBuffer` feature gate on): the buffers, a
//! PodTemplate and the apps/v1 workloads a buffer may name; its one
//! `v1alpha1` CapacityBuffer is skipped with a warning.

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::Pod;
use karpenter_core::features::{FeatureGate, FeatureGates};
use karpenter_core::pods::PodInfo;
use karpenter_scenario::{LoadOptions, Scenario, Source, Sourced};
use serde::Serialize;
use serde_json::Value;

const YAML: &str = "cluster-dump.yaml";
const JSON: &str = "cluster-dump.json";

/// The list's item that the loader skips: `v1 Service kube-system/kube-dns`.
const SERVICE_ITEM: usize = 33;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

fn load(name: &str) -> Scenario {
    load_with(name, &LoadOptions::default())
}

fn load_with(name: &str, options: &LoadOptions) -> Scenario {
    Scenario::load_files(&[fixture(name)], options)
        .unwrap_or_else(|e| panic!("{name} does not load: {e}"))
}

/// The fixture read independently of the loader, as a generic value.
fn read_list(name: &str) -> Value {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    if name.ends_with(".json") {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
    } else {
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name} is not YAML: {e}"))
    }
}

fn list_items(name: &str) -> Vec<Value> {
    let list = read_list(name);
    assert_eq!(list["apiVersion"], "v1", "{name}: apiVersion");
    assert_eq!(list["kind"], "List", "{name}: kind");
    match list.get("items") {
        Some(Value::Array(items)) => items.clone(),
        other => panic!("{name}: items is not a list: {other:?}"),
    }
}

/// `kind namespace/name` of a list item, for messages.
fn describe(item: &Value) -> String {
    let kind = item["kind"].as_str().unwrap_or("?");
    let name = item["metadata"]["name"].as_str().unwrap_or("?");
    match item["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// A serialized typed object with the kind it was read as.
struct Written {
    kind: &'static str,
    value: Value,
    source: Source,
}

/// Every typed object of the scenario, serialized, keyed by its item index in the list.
fn written_by_item(scenario: &Scenario) -> BTreeMap<usize, Written> {
    fn add<T: Serialize>(
        out: &mut BTreeMap<usize, Written>,
        kind: &'static str,
        objects: &[Sourced<T>],
    ) {
        for sourced in objects {
            let item = sourced
                .source
                .item
                .unwrap_or_else(|| panic!("{kind} at {} is not a list item", sourced.source));
            let value = serde_json::to_value(&sourced.object)
                .unwrap_or_else(|e| panic!("{kind} at {} does not serialize: {e}", sourced.source));
            let written = Written {
                kind,
                value,
                source: sourced.source.clone(),
            };
            if let Some(other) = out.insert(item, written) {
                panic!(
                    "item {item} was read twice: as {} and as {kind}",
                    other.kind
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    let pods: Vec<Sourced<Pod>> = scenario
        .pods
        .iter()
        .map(|pod| Sourced {
            object: pod.object.to_pod(),
            source: pod.source.clone(),
        })
        .collect();
    add(&mut out, "Pod", &pods);
    add(&mut out, "Node", &scenario.nodes);
    add(&mut out, "NodePool", &scenario.node_pools);
    add(&mut out, "NodeClaim", &scenario.node_claims);
    add(&mut out, "DaemonSet", &scenario.daemon_sets);
    add(
        &mut out,
        "PodDisruptionBudget",
        &scenario.pod_disruption_budgets,
    );
    add(
        &mut out,
        "PersistentVolumeClaim",
        &scenario.persistent_volume_claims,
    );
    add(&mut out, "PersistentVolume", &scenario.persistent_volumes);
    add(&mut out, "StorageClass", &scenario.storage_classes);
    add(&mut out, "AKSNodeClass", &scenario.aks_node_classes);
    add(&mut out, "InstanceType", &scenario.instance_types);
    add(&mut out, "NodeOverlay", &scenario.node_overlays);
    add(&mut out, "CSINode", &scenario.csi_nodes);
    add(&mut out, "Namespace", &scenario.namespaces);
    add(&mut out, "CapacityBuffer", &scenario.capacity_buffers);
    add(&mut out, "PodTemplate", &scenario.pod_templates);
    add(&mut out, "Deployment", &scenario.deployments);
    add(&mut out, "StatefulSet", &scenario.stateful_sets);
    add(&mut out, "ReplicaSet", &scenario.replica_sets);
    out
}

/// Every difference between what was read and what was written, by JSON path.
fn diff(path: &str, read: &Value, written: &Value, out: &mut Vec<String>) {
    match (read, written) {
        (Value::Object(r), Value::Object(w)) => {
            for (key, rv) in r {
                let at = format!("{path}.{key}");
                match w.get(key) {
                    Some(wv) => diff(&at, rv, wv, out),
                    // Kubernetes reads an explicit null as an absent field (kubectl
                    // prints `lastProbeTime: null` for an unset time), and the typed
                    // objects cannot tell the two apart: the one normalization.
                    None if rv.is_null() => {}
                    None => out.push(format!("{at}: read {rv}, not written")),
                }
            }
            for (key, wv) in w {
                if !r.contains_key(key) {
                    out.push(format!("{path}.{key}: not read, written {wv}"));
                }
            }
        }
        (Value::Array(r), Value::Array(w)) if r.len() == w.len() => {
            for (i, (rv, wv)) in r.iter().zip(w).enumerate() {
                diff(&format!("{path}[{i}]"), rv, wv, out);
            }
        }
        _ if read == written => {}
        _ => out.push(format!("{path}: read {read}, written {written}")),
    }
}

/// Checks that every item of the fixture `name` writes back exactly as read.
fn assert_lossless(name: &str) {
    assert_lossless_with(name, &LoadOptions::default(), &[SERVICE_ITEM]);
}

/// Checks that every item of the fixture `name` read with `options` but the
/// `skipped` ones writes back exactly as read.
fn assert_lossless_with(name: &str, options: &LoadOptions, skipped: &[usize]) {
    let items = list_items(name);
    let scenario = load_with(name, options);
    let written = written_by_item(&scenario);
    let mut losses = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let what = describe(item);
        let Some(object) = written.get(&index) else {
            assert!(
                skipped.contains(&index),
                "{name}: item {index} ({what}) was not read"
            );
            continue;
        };
        assert_eq!(
            Some(object.kind),
            item["kind"].as_str(),
            "{name}: item {index} ({what}) was read as a {}",
            object.kind
        );
        let mut expected = item.clone();
        if object.kind == "Pod" {
            // What planning reads of the pod, read straight from the item.
            let pod: Pod = serde_json::from_value(item.clone())
                .unwrap_or_else(|e| panic!("{name}: item {index} is not a Pod: {e}"));
            expected = serde_json::to_value(PodInfo::of(&pod).to_pod()).expect("serialize");
        }
        if object.kind == "InstanceType" {
            // The fake's InstanceType leaves apiVersion and kind to the loader
            // and does not write them; every Kubernetes kind writes its own.
            let fields = expected.as_object_mut().expect("an item is a map");
            fields.remove("apiVersion");
            fields.remove("kind");
        }
        let mut found = Vec::new();
        diff("", &expected, &object.value, &mut found);
        losses.extend(
            found
                .into_iter()
                .map(|d| format!("item {index} ({what}) {d}")),
        );
    }
    assert_eq!(
        written.len(),
        items.len() - skipped.len(),
        "{name}: every item but the skipped ones ({skipped:?}) is read"
    );
    assert!(
        losses.is_empty(),
        "{name}: {} differences between the dump and the objects written back:\n{}",
        losses.len(),
        losses.join("\n")
    );
}

#[test]
fn yaml_dump_reads_every_kind_with_its_source() {
    let scenario = load(YAML);
    assert_eq!(scenario.aks_node_classes.len(), 1);
    assert_eq!(scenario.node_pools.len(), 2);
    assert_eq!(scenario.node_claims.len(), 3);
    assert_eq!(scenario.pods.len(), 20);
    assert_eq!(scenario.nodes.len(), 3);
    assert_eq!(scenario.daemon_sets.len(), 2);
    assert_eq!(scenario.pod_disruption_budgets.len(), 2);
    assert_eq!(scenario.persistent_volume_claims.len(), 0);
    assert_eq!(scenario.persistent_volumes.len(), 0);
    assert_eq!(scenario.storage_classes.len(), 0);
    assert_eq!(scenario.instance_types.len(), 0);
    assert_eq!(scenario.object_count(), 33);

    // The Service is skipped, with a warning that names it and says where it is.
    assert_eq!(scenario.warnings.len(), 1, "{:?}", scenario.warnings);
    let warning = &scenario.warnings[0];
    assert!(
        warning.message.contains("v1 Service kube-system/kube-dns"),
        "{warning}"
    );
    assert_eq!(warning.source.document, 1);
    assert_eq!(warning.source.item, Some(SERVICE_ITEM));
    assert!(warning.source.file.ends_with(YAML), "{warning}");

    // Everything is item `n` of document 1, in list order.
    let at = |item: usize| Source {
        file: scenario.aks_node_classes[0].source.file.clone(),
        document: 1,
        item: Some(item),
    };
    assert!(scenario.aks_node_classes[0].source.file.ends_with(YAML));
    assert_eq!(scenario.aks_node_classes[0].source, at(0));
    assert_eq!(scenario.node_pools[1].name(), Some("gpu"));
    assert_eq!(scenario.node_pools[1].source, at(2));
    assert_eq!(scenario.node_claims[1].name(), Some("general-b9q4m"));
    assert_eq!(scenario.node_claims[1].source, at(4));
    let pod = |i: usize| scenario.pods[i].metadata.name.as_deref();
    assert_eq!(pod(0), Some("nightly-report-29211840-7wqkz"));
    assert_eq!(scenario.pods[0].source, at(6));
    assert_eq!(pod(19), Some("store-front-7c9d8f6b5-zn8hv"));
    assert_eq!(scenario.pods[19].source, at(25));
    assert_eq!(
        scenario.nodes[2].metadata.name.as_deref(),
        Some("aks-gpu-x4tzn")
    );
    assert_eq!(scenario.nodes[2].source, at(28));
    assert_eq!(scenario.daemon_sets[1].source, at(30));
    assert_eq!(scenario.pod_disruption_budgets[1].source, at(32));
    assert_eq!(
        scenario.pod_disruption_budgets[1].source.to_string(),
        format!(
            "{}, document 1, item 32",
            scenario.pod_disruption_budgets[1].source.file
        )
    );
    let written = written_by_item(&scenario);
    assert_eq!(
        written.keys().copied().collect::<Vec<_>>(),
        (0..SERVICE_ITEM).collect::<Vec<_>>()
    );
    assert!(written.values().all(|w| w.source.document == 1));

    // What the dump holds: pending, succeeded and daemon pods beside bound ones.
    let pending = scenario
        .pods
        .iter()
        .filter(|p| p.spec.is_some() && p.node_name.is_none())
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending"))
        .count();
    assert_eq!(pending, 4);
    let succeeded = scenario
        .pods
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded"))
        .count();
    assert_eq!(succeeded, 1);
    let daemon = scenario
        .pods
        .iter()
        .filter(|p| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "DaemonSet")
        })
        .count();
    assert_eq!(daemon, 4);
    let drifted = scenario
        .node_claims
        .iter()
        .filter(|c| c.condition("Drifted").is_some_and(|d| d.is_true()))
        .filter_map(|c| c.name())
        .collect::<Vec<_>>();
    assert_eq!(drifted, ["general-b9q4m"]);
}

#[test]
fn every_item_of_the_yaml_dump_writes_back_exactly() {
    assert_lossless(YAML);
}

#[test]
fn every_item_of_the_json_dump_writes_back_exactly() {
    assert_lossless(JSON);
}

#[test]
fn json_and_yaml_fixtures_hold_the_same_list() {
    let mut differences = Vec::new();
    diff("", &read_list(YAML), &read_list(JSON), &mut differences);
    assert!(
        differences.is_empty(),
        "the JSON fixture differs from the YAML one (read = YAML, written = JSON):\n{}",
        differences.join("\n")
    );
}

#[test]
fn json_dump_reads_to_the_same_objects_as_the_yaml_dump() {
    let from_yaml = load(YAML);
    let from_json = load(JSON);
    assert_eq!(from_json.object_count(), from_yaml.object_count());
    let yaml_objects = written_by_item(&from_yaml);
    let json_objects = written_by_item(&from_json);
    assert_eq!(
        json_objects.keys().collect::<Vec<_>>(),
        yaml_objects.keys().collect::<Vec<_>>()
    );
    for (item, y) in &yaml_objects {
        let j = &json_objects[item];
        assert_eq!(j.kind, y.kind, "item {item}");
        assert_eq!(
            (j.source.document, j.source.item),
            (y.source.document, y.source.item),
            "item {item}"
        );
        assert!(j.source.file.ends_with(JSON), "{}", j.source);
        assert!(j.value == y.value, "item {item} ({}) differs", y.kind);
    }
    let warnings = |s: &Scenario| {
        s.warnings
            .iter()
            .map(|w| (w.source.document, w.source.item, w.message.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(warnings(&from_json), warnings(&from_yaml));
}

/// The kinds a CapacityBuffer brings, read with its gate on.
const BUFFERS: &str = "capacity-buffers-dump.yaml";

/// `capacity-buffers-dump.yaml`'s `v1alpha1` CapacityBuffer, skipped.
const OLD_BUFFER_ITEM: usize = 6;

fn buffers_on() -> LoadOptions {
    LoadOptions::default()
        .with_feature_gates(FeatureGates::UPSTREAM.with(FeatureGate::CapacityBuffer, true))
}

#[test]
fn capacity_buffers_and_what_they_name_write_back_exactly() {
    assert_lossless_with(BUFFERS, &buffers_on(), &[OLD_BUFFER_ITEM]);
    let scenario = load_with(BUFFERS, &buffers_on());
    assert_eq!(scenario.capacity_buffers.len(), 2);
    assert_eq!(scenario.pod_templates.len(), 1);
    assert_eq!(scenario.deployments.len(), 1);
    assert_eq!(scenario.replica_sets.len(), 1);
    assert_eq!(scenario.stateful_sets.len(), 1);
    assert_eq!(scenario.object_count(), 6);
    // Only the v1alpha1 buffer is skipped, naming the version read.
    assert_eq!(scenario.warnings.len(), 1, "{:?}", scenario.warnings);
    let warning = &scenario.warnings[0];
    assert_eq!(warning.source.item, Some(OLD_BUFFER_ITEM));
    for part in [
        "autoscaling.x-k8s.io/v1alpha1 CapacityBuffer shop/legacy-headroom",
        "only autoscaling.x-k8s.io/v1beta1 CapacityBuffer is read",
    ] {
        assert!(warning.message.contains(part), "{warning}");
    }
}

#[test]
fn capacity_buffers_are_skipped_with_their_gate_off_and_the_rest_is_read() {
    let scenario = load(BUFFERS);
    assert_eq!(scenario.capacity_buffers.len(), 0);
    assert_eq!(scenario.object_count(), 4);
    let warnings: Vec<String> = scenario.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(
        warnings[0].contains(
            "CapacityBuffer shop/checkout-headroom: the CapacityBuffer feature gate is off"
        ),
        "{warnings:?}"
    );
    assert!(
        warnings[1].contains("CapacityBuffer shop/store-front-headroom"),
        "{warnings:?}"
    );
    assert!(warnings[2].contains("v1alpha1"), "{warnings:?}");
}
