//! The cluster's own parts (kubelet, scheduler, ReplicaSet, revision) seen
//! through its public methods and the [`Cluster`] trait.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, NodeCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use karpenter_core::api::NodeClaim;
use karpenter_core::cluster::{Cluster, ClusterError, Eviction};
use karpenter_core::pods::{PodKey, bound_node, pod_key};

use super::InMemoryCluster;
use crate::generate::workload::{Shape, pending_pod};
use crate::test_support::block_on;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).expect("a time")
}

/// A launched claim with 2 cpu allocatable, launched at `at(0)`.
fn launched(name: &str) -> NodeClaim {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"requirements": []},
        "status": {
            "providerID": format!("fake:///{name}"),
            "capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"},
            "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
            "conditions": [{"type": "Launched", "status": "True", "lastTransitionTime": at(0).to_string()}],
        },
    }))
    .expect("a NodeClaim")
}

fn bound(cluster: &InMemoryCluster) -> Vec<PodKey> {
    cluster
        .pod_list()
        .iter()
        .filter(|p| bound_node(p).is_some())
        .map(pod_key)
        .collect()
}

#[test]
fn a_launched_claim_registers_after_the_delay_and_nominated_pods_bind_while_they_fit() {
    let cluster = InMemoryCluster::new().with_registration_delay(Duration::from_secs(30));
    block_on(cluster.create_node_claim(launched("node-a"))).expect("created");
    for i in 0..3 {
        cluster.apply_pod(pending_pod(&format!("p{i}"), Shape::Plain, "900m", "1Gi"));
        block_on(cluster.nominate_pod(&PodKey::new("default", &format!("p{i}")), "node-a"))
            .expect("nominated");
    }
    cluster.tick(at(29));
    assert!(cluster.node_list().is_empty());
    assert!(bound(&cluster).is_empty());
    cluster.tick(at(30));
    let nodes = cluster.node_list();
    assert_eq!(nodes.len(), 1);
    let labels = nodes[0].metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels["kubernetes.io/hostname"], "node-a");
    // Two of 900m fit in 2 cpu; the third waits.
    assert_eq!(bound(&cluster), ["default/p0", "default/p1"]);
}

#[test]
fn the_revision_moves_with_every_change_and_only_then() {
    let cluster = InMemoryCluster::new().with_registration_delay(Duration::ZERO);
    let revision = || cluster.revision().expect("a revision");
    let mut last = revision();
    let mut moved = |what: &str, expected: bool| {
        let now = revision();
        assert_eq!(now != last, expected, "{what}");
        last = now;
    };
    block_on(cluster.create_node_claim(launched("node-a"))).expect("created");
    moved("a claim created", true);
    cluster.tick(at(1));
    moved("a node registered", true);
    cluster.tick(at(2));
    moved("a tick with nothing to do", false);
    cluster.apply_pod(pending_pod("p0", Shape::Plain, "100m", "1Gi"));
    moved("a pod applied", true);
    cluster.apply_namespace(Namespace {
        metadata: ObjectMeta {
            name: Some("team-a".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    });
    moved("a namespace applied", true);
    let snapshot = block_on(karpenter_core::cluster::read_snapshot(&cluster)).expect("read");
    let names: Vec<_> = snapshot
        .namespaces
        .iter()
        .map(|n| n.metadata.name.as_deref())
        .collect();
    assert_eq!(names, [Some("team-a")], "the snapshot holds the namespaces");
    moved("a snapshot read", false);
    block_on(cluster.nominate_pod(&PodKey::new("default", "p0"), "node-a")).expect("nominated");
    moved("a pod nominated", true);
    cluster.tick(at(3));
    moved("a pod bound", true);
    let _ = block_on(cluster.pods()).expect("pods");
    let _ = block_on(cluster.nodes()).expect("nodes");
    moved("reads", false);
    let taint = karpenter_core::scheduling::DISRUPTED_NO_SCHEDULE_TAINT.to_taint();
    block_on(cluster.taint_node("node-a", taint.clone())).expect("tainted");
    moved("a taint", true);
    block_on(cluster.taint_node("node-a", taint)).expect("tainted");
    moved("the same taint again", false);
    block_on(cluster.untaint_node("node-a", "karpenter.sh/disrupted")).expect("untainted");
    moved("the taint removed", true);
    block_on(cluster.untaint_node("node-a", "karpenter.sh/disrupted")).expect("untainted");
    moved("no taint to remove", false);
    block_on(cluster.evict_pod(&PodKey::new("default", "p0"))).expect("evicted");
    moved("an eviction", true);
    block_on(cluster.delete_node_claim("node-a")).expect("deleting");
    moved("a deletion asked", true);
    block_on(cluster.delete_node_claim("node-a")).expect("deleting");
    moved("the same deletion asked again", false);
    assert!(cluster.set_node_condition("node-a", NodeCondition::default()));
    moved("a node condition", true);
    block_on(cluster.remove_node_claim("node-a")).expect("removed");
    moved("a claim removed", true);
    assert!(!cluster.delete_pod(&PodKey::new("default", "gone")));
    moved("no pod to delete", false);
}

#[test]
fn pods_are_read_once_per_version() {
    let cluster = InMemoryCluster::new();
    cluster.apply_pod(pending_pod("p0", Shape::Plain, "100m", "1Gi"));
    cluster.apply_pod(pending_pod("p1", Shape::Plain, "100m", "1Gi"));
    let first = block_on(cluster.pods()).expect("pods");
    let again = block_on(cluster.pods()).expect("pods");
    assert!(
        Arc::ptr_eq(&first[0], &again[0]),
        "unchanged: the same read"
    );
    // A write is seen at the next read; the other pod is not read again.
    block_on(cluster.nominate_pod(&PodKey::new("default", "p0"), "node-a")).expect("nominated");
    let after = block_on(cluster.pods()).expect("pods");
    let nominated = after[0]
        .status
        .as_ref()
        .and_then(|s| s.nominated_node_name.as_deref());
    assert_eq!(nominated, Some("node-a"));
    assert!(!Arc::ptr_eq(&first[0], &after[0]));
    assert!(Arc::ptr_eq(&first[1], &after[1]));
    assert!(cluster.delete_pod(&PodKey::new("default", "p1")));
    assert_eq!(block_on(cluster.pods()).expect("pods").len(), 1);
}

#[test]
fn a_tainted_node_takes_no_pod_and_eviction_brings_pods_back_pending() {
    let cluster = InMemoryCluster::new().with_registration_delay(Duration::ZERO);
    block_on(cluster.create_node_claim(launched("node-a"))).expect("created");
    cluster.tick(at(1));
    let taint = karpenter_core::scheduling::DISRUPTED_NO_SCHEDULE_TAINT.to_taint();
    block_on(cluster.taint_node("node-a", taint)).expect("tainted");
    cluster.apply_pod(pending_pod("p0", Shape::Plain, "100m", "1Gi"));
    block_on(cluster.nominate_pod(&PodKey::new("default", "p0"), "node-a")).expect("nominated");
    cluster.tick(at(2));
    assert!(bound(&cluster).is_empty());
    block_on(cluster.untaint_node("node-a", "karpenter.sh/disrupted")).expect("untainted");
    cluster.tick(at(3));
    assert_eq!(bound(&cluster), ["default/p0"]);
    let p0 = PodKey::new("default", "p0");
    assert_eq!(
        block_on(cluster.evict_pod(&p0)).expect("evicted"),
        Eviction::Evicted
    );
    assert!(bound(&cluster).is_empty());
    assert_eq!(cluster.pod_list().len(), 1, "the ReplicaSet brings it back");
    // A pod that is not there has nothing left to evict.
    let gone = PodKey::new("default", "gone");
    assert_eq!(
        block_on(cluster.evict_pod(&gone)).expect("evicted"),
        Eviction::Evicted
    );
}

#[test]
fn a_budget_allowing_no_disruption_refuses_the_eviction() {
    let cluster = InMemoryCluster::new().with_registration_delay(Duration::ZERO);
    block_on(cluster.create_node_claim(launched("node-a"))).expect("created");
    cluster.tick(at(1));
    let mut pod = pending_pod("db-0", Shape::Plain, "100m", "1Gi");
    pod.metadata.labels = Some([("app".to_owned(), "db".to_owned())].into());
    cluster.apply_pod(pod);
    let key = PodKey::new("default", "db-0");
    block_on(cluster.nominate_pod(&key, "node-a")).expect("nominated");
    cluster.tick(at(2));
    let budget = |allowed: i32| {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}, "maxUnavailable": 0},
            "status": {
                "disruptionsAllowed": allowed, "currentHealthy": 1,
                "desiredHealthy": 1, "expectedPods": 1,
            },
        }))
        .expect("a PodDisruptionBudget")
    };
    cluster.apply_pod_disruption_budget(budget(0));
    assert_eq!(
        block_on(cluster.evict_pod(&key)).expect("answered"),
        Eviction::Blocked
    );
    assert_eq!(bound(&cluster), ["default/db-0"]);
}

#[test]
fn deletion_is_asked_then_removal_takes_the_node_and_evicts() {
    let cluster = InMemoryCluster::new().with_registration_delay(Duration::ZERO);
    block_on(cluster.create_node_claim(launched("node-a"))).expect("created");
    cluster.tick(at(5));
    block_on(cluster.delete_node_claim("node-a")).expect("deleting");
    // An update does not undo the deletion.
    block_on(cluster.update_node_claim(launched("node-a"))).expect("updated");
    let claim = &cluster.node_claim_list()[0];
    assert_eq!(claim.metadata.deletion_timestamp, Some(Time(at(5))));
    block_on(cluster.remove_node_claim("node-a")).expect("removed");
    assert!(cluster.node_claim_list().is_empty());
    assert!(cluster.node_list().is_empty());
    assert!(matches!(
        block_on(cluster.remove_node_claim("node-a")),
        Err(ClusterError::NotFound {
            kind: "NodeClaim",
            ..
        })
    ));
    assert!(matches!(
        block_on(cluster.create_node_claim(launched("x")))
            .and(block_on(cluster.create_node_claim(launched("x")))),
        Err(ClusterError::AlreadyExists { .. })
    ));
}
