//! `KubeCluster` against a Kubernetes API served on 127.0.0.1 by the test
//! (karpenter-apiserver): what its watches see, and how its writes meet
//! the API server's answers.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, PodTemplate, Taint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use karpenter_apiserver::{ApiServer, Fault};
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay};
use karpenter_core::capacity_buffers::CapacityBuffers;
use karpenter_core::cluster::{Cluster, ClusterError, Eviction};
use karpenter_core::pods::PodKey;
use karpenter_core::scheduling::{DISRUPTED_NO_SCHEDULE_TAINT, TERMINATION_FINALIZER};
use karpenter_fake::conformance::run_cluster;
use karpenter_kube::{FIELD_MANAGER, KubeCluster, KubeClusterOptions};
use serde_json::json;

const SYNC: Duration = Duration::from_secs(10);

/// A client as karpenter-controller makes it: kube's own retries of 429s
/// off (the driver retries next round).
fn client(server: &ApiServer) -> kube::Client {
    let mut config = server.config();
    config.default_retry = false;
    kube::Client::try_from(config).expect("a client")
}

async fn synced(server: &ApiServer) -> KubeCluster {
    let cluster = KubeCluster::new(client(server));
    cluster
        .wait_until_synced(SYNC)
        .await
        .expect("the watches sync");
    cluster
}

/// Waits (at most ten seconds) until `check` holds.
async fn eventually<F: AsyncFn() -> bool>(what: &str, check: F) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} never happened");
}

fn node(name: &str) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"providerID": format!("kwok://{name}")},
    }))
    .expect("a node")
}

fn pod(namespace: &str, name: &str, labels: serde_json::Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"namespace": namespace, "name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "node-a"},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .expect("a pod")
}

fn claim(name: &str) -> NodeClaim {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "requirements": []},
    }))
    .expect("a claim")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kube_cluster_keeps_the_cluster_contract() {
    let server = ApiServer::start().await.expect("the server starts");
    let cluster = synced(&server).await;
    let checks = run_cluster(&cluster).await;
    let failed: Vec<_> = checks.iter().filter(|c| c.outcome.is_err()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(
        server.list::<NodeClaim>().is_empty(),
        "it cleans up after itself"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_come_from_the_watches_after_the_first_list() {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&node("node-b")).expect("put");
    server.put(&node("node-a")).expect("put");
    let cluster = synced(&server).await;
    let names: Vec<_> = cluster
        .nodes()
        .await
        .expect("nodes")
        .into_iter()
        .map(|n| n.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["node-a", "node-b"], "listed, in name order");
    // A change made by someone else arrives through the watch.
    server.put(&node("node-c")).expect("put");
    eventually("the new node is read", async || {
        cluster.nodes().await.expect("nodes").len() == 3
    })
    .await;
}

fn namespace(name: &str, labels: serde_json::Value) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}}))
        .expect("a namespace")
}

/// The Namespaces' labels are what `namespaceSelector`s select: they are
/// watched, and a snapshot holds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_are_watched_and_read_into_the_snapshot() {
    let server = ApiServer::start().await.expect("the server starts");
    server
        .put(&namespace("team-b", json!({"team": "b"})))
        .expect("put");
    server
        .put(&namespace("team-a", json!({"team": "a"})))
        .expect("put");
    let cluster = synced(&server).await;
    let snapshot = karpenter_core::cluster::read_snapshot(&cluster)
        .await
        .expect("a snapshot");
    let read: Vec<_> = snapshot
        .namespaces
        .iter()
        .map(|n| {
            let name = n.metadata.name.clone().unwrap_or_default();
            let team = n
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("team").cloned());
            (name, team)
        })
        .collect();
    assert_eq!(
        read,
        [
            ("team-a".to_owned(), Some("a".to_owned())),
            ("team-b".to_owned(), Some("b".to_owned()))
        ],
        "listed with their labels, in name order"
    );
    // A label changed by someone else arrives through the watch.
    server
        .put(&namespace("team-a", json!({"team": "c"})))
        .expect("put");
    eventually("the relabelled namespace is read", async || {
        let namespaces = cluster.namespaces().await.expect("namespaces");
        namespaces.iter().any(|n| {
            n.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("team"))
                .map(String::as_str)
                == Some("c")
        })
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_overlays_are_watched_only_when_asked() {
    let server = ApiServer::start().await.expect("the server starts");
    let overlay = |name: &str| -> NodeOverlay {
        serde_json::from_value(json!({
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": name},
            "spec": {"requirements": [], "priceAdjustment": "-10%"},
        }))
        .expect("an overlay")
    };
    server.put(&overlay("discount")).expect("put");
    // By default none are read (their CRD is optional).
    let plain = synced(&server).await;
    assert!(plain.node_overlays().await.expect("overlays").is_empty());
    let options = KubeClusterOptions::default().with_node_overlays(true);
    let watching = KubeCluster::with_options(client(&server), options);
    watching
        .wait_until_synced(SYNC)
        .await
        .expect("the watches sync");
    let names = |overlays: Vec<NodeOverlay>| -> Vec<String> {
        overlays
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect()
    };
    assert_eq!(
        names(watching.node_overlays().await.expect("overlays")),
        ["discount"]
    );
    server.put(&overlay("another")).expect("put");
    eventually("the new overlay is read", async || {
        watching.node_overlays().await.expect("overlays").len() == 2
    })
    .await;
}

/// A pod template: one container asking for `cpu`.
fn pod_template_spec(cpu: &str) -> serde_json::Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]},
    })
}

/// An `apps/v1` workload's manifest (Deployment, StatefulSet or
/// ReplicaSet): `replicas` of `pod_template_spec(cpu)`.
fn workload(namespace: &str, name: &str, replicas: i32, cpu: &str) -> serde_json::Value {
    json!({
        "metadata": {"namespace": namespace, "name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template_spec(cpu),
        },
        "status": {"replicas": replicas},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capacity_buffers_and_what_they_name_are_watched_only_when_asked() {
    let server = ApiServer::start().await.expect("the server starts");
    let client = client(&server);
    let deployment = create_buffer_template_and_deployment(&client).await;

    // By default none are read (the CRD is optional, the workloads many).
    let plain = synced(&server).await;
    assert_no_buffer_nor_what_it_names_is_read(&server, &plain).await;

    let options = KubeClusterOptions::default().with_capacity_buffers(true);
    let watching = KubeCluster::with_options(client.clone(), options);
    watching
        .wait_until_synced(SYNC)
        .await
        .expect("the watches sync");
    assert_the_buffer_and_what_it_names_are_read(&watching, &deployment).await;

    assert_new_workloads_and_deletions_arrive(&server, &watching).await;
    // The cluster without the option still reads none.
    assert!(
        plain
            .scalable_workloads()
            .await
            .expect("workloads")
            .is_empty()
    );
}

/// Creates, in `shop`, a CapacityBuffer of two `chunk`s, the PodTemplate
/// `chunk` and a Deployment `web` of four pods; the Deployment as created.
async fn create_buffer_template_and_deployment(client: &kube::Client) -> Deployment {
    let params = kube::api::PostParams::default();
    let buffer: CapacityBuffer = serde_json::from_value(json!({
        "apiVersion": "autoscaling.x-k8s.io/v1beta1",
        "kind": "CapacityBuffer",
        "metadata": {"namespace": "shop", "name": "headroom"},
        "spec": {"podTemplateRef": {"name": "chunk"}, "replicas": 2},
    }))
    .expect("a buffer");
    kube::Api::<CapacityBuffer>::namespaced(client.clone(), "shop")
        .create(&params, &buffer)
        .await
        .expect("created");
    let template: PodTemplate = serde_json::from_value(json!({
        "metadata": {"namespace": "shop", "name": "chunk"},
        "template": pod_template_spec("1"),
    }))
    .expect("a template");
    kube::Api::<PodTemplate>::namespaced(client.clone(), "shop")
        .create(&params, &template)
        .await
        .expect("created");
    let deployment: Deployment =
        serde_json::from_value(workload("shop", "web", 4, "500m")).expect("a deployment");
    kube::Api::<Deployment>::namespaced(client.clone(), "shop")
        .create(&params, &deployment)
        .await
        .expect("created");
    deployment
}

/// A cluster without the option reads no buffer, template or workload, and
/// does not even list them.
async fn assert_no_buffer_nor_what_it_names_is_read(server: &ApiServer, plain: &KubeCluster) {
    assert!(plain.capacity_buffers().await.expect("buffers").is_empty());
    assert!(plain.pod_templates().await.expect("templates").is_empty());
    assert!(
        plain
            .scalable_workloads()
            .await
            .expect("workloads")
            .is_empty()
    );
    let used = server.verbs_used();
    for (group, resource) in [
        ("autoscaling.x-k8s.io", "capacitybuffers"),
        ("", "podtemplates"),
        ("apps", "deployments"),
        ("apps", "statefulsets"),
        ("apps", "replicasets"),
    ] {
        let listed = (group.to_owned(), resource.to_owned(), "list".to_owned());
        assert!(!used.contains(&listed), "{resource} not even listed");
    }
}

/// A cluster with the option reads the buffer, its template and the
/// Deployment, and resolves the buffer to two chunks.
async fn assert_the_buffer_and_what_it_names_are_read(
    watching: &KubeCluster,
    deployment: &Deployment,
) {
    let buffers = watching.capacity_buffers().await.expect("buffers");
    assert_eq!(buffers.len(), 1);
    assert_eq!(buffers[0].metadata.name.as_deref(), Some("headroom"));
    assert_eq!(buffers[0].namespace(), "shop");
    assert_eq!(buffers[0].spec.replicas, Some(2));
    let templates = watching.pod_templates().await.expect("templates");
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].metadata.name.as_deref(), Some("chunk"));
    let workloads = watching.scalable_workloads().await.expect("workloads");
    assert_eq!(workloads.len(), 1);
    let web = &workloads[0];
    assert_eq!(
        (
            web.api_group.as_str(),
            web.kind.as_str(),
            web.namespace.as_str(),
            web.name.as_str()
        ),
        ("apps", "Deployment", "shop", "web")
    );
    assert_eq!(web.replicas, Some(4));
    assert_eq!(
        web,
        &karpenter_core::capacity_buffers::ScalableWorkload::from(deployment)
    );
    // What the driver makes of them: the buffer resolves to two chunks.
    let resolved = CapacityBuffers::new(buffers, templates, workloads);
    assert!(
        resolved.states()[0].is_resolved(),
        "{:?}",
        resolved.states()
    );
    assert_eq!(resolved.virtual_pod_count(), 2);
}

/// The other kinds, and changes, arrive through the watches: the workloads
/// read Deployments, then StatefulSets, then ReplicaSets; a deleted buffer
/// goes.
async fn assert_new_workloads_and_deletions_arrive(server: &ApiServer, watching: &KubeCluster) {
    let set: StatefulSet = serde_json::from_value(workload("shop", "db", 2, "1")).expect("a set");
    server.put(&set).expect("put");
    let replicas: ReplicaSet =
        serde_json::from_value(workload("shop", "web-1", 4, "500m")).expect("a replica set");
    server.put(&replicas).expect("put");
    eventually("the new workloads are read", async || {
        let kinds: Vec<String> = watching
            .scalable_workloads()
            .await
            .expect("workloads")
            .into_iter()
            .map(|w| w.kind)
            .collect();
        kinds == ["Deployment", "StatefulSet", "ReplicaSet"]
    })
    .await;
    server.remove::<CapacityBuffer>(Some("shop"), "headroom");
    eventually("the deleted buffer goes", async || {
        watching
            .capacity_buffers()
            .await
            .expect("buffers")
            .is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watches_recover_from_a_disconnect_and_from_410_gone() {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&node("node-a")).expect("put");
    let cluster = synced(&server).await;
    server.disconnect_watches();
    server.put(&node("node-b")).expect("put");
    eventually("the node after a disconnect is read", async || {
        cluster.nodes().await.expect("nodes").len() == 2
    })
    .await;
    // History gone: the watch resumes with 410 and lists again; what was
    // deleted meanwhile leaves the store.
    server.compact();
    server.remove::<Node>(None, "node-a");
    server.put(&node("node-c")).expect("put");
    eventually("the relist is read", async || {
        let names: Vec<_> = cluster
            .nodes()
            .await
            .expect("nodes")
            .into_iter()
            .filter_map(|n| n.metadata.name.clone())
            .collect();
        names == ["node-b", "node-c"]
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_claim_has_the_termination_finalizer_and_its_status_written() {
    let server = ApiServer::start().await.expect("the server starts");
    let cluster = synced(&server).await;
    let mut created = claim("default-00001");
    created
        .status
        .get_or_insert_with(Default::default)
        .provider_id = Some("kwok://x".into());
    cluster.create_node_claim(created).await.expect("create");
    let stored = server
        .get::<NodeClaim>(None, "default-00001")
        .expect("stored");
    assert_eq!(
        stored.metadata.finalizers.as_deref(),
        Some(&[TERMINATION_FINALIZER.to_owned()][..])
    );
    assert_eq!(
        stored.status.and_then(|s| s.provider_id).as_deref(),
        Some("kwok://x"),
        "the status went through its subresource"
    );
    // Read at once, before the watch has it.
    assert_eq!(cluster.node_claims().await.expect("claims").len(), 1);
    let writes: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect();
    assert!(!writes.is_empty());
    for write in &writes {
        assert_eq!(
            write.field_manager.as_deref(),
            Some(FIELD_MANAGER),
            "{write:?}"
        );
    }
    assert!(server.verbs_used().contains(&(
        "karpenter.sh".into(),
        "nodeclaims/status".into(),
        "update".into()
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_after_a_conflict_reads_afresh_and_keeps_the_other_writers_change() {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&claim("default-00001")).expect("put");
    let cluster = synced(&server).await;
    let mut mine = cluster.node_claims().await.expect("claims").remove(0);
    // Someone else labels the claim after we read it.
    label_theirs(&server, "1");
    // Our label, written from the stale copy.
    mine.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("mine".into(), "1".into());
    // The store may have caught up already; make sure the first write is
    // refused as stale.
    server.inject(
        Fault::new(409, "Conflict")
            .method("PUT")
            .path_contains("/nodeclaims/default-00001")
            .times(1),
    );
    cluster
        .update_node_claim(mine)
        .await
        .expect("the update lands");
    let labels = claim_labels(&server);
    assert_eq!(labels.get("mine").map(String::as_str), Some("1"));
    assert_eq!(labels.get("theirs").map(String::as_str), Some("1"));
}

/// Fails unless `error` is one to try again later.
fn assert_retryable(error: &ClusterError) {
    assert!(
        matches!(
            error,
            ClusterError::Api {
                retryable: true,
                ..
            }
        ),
        "{error:?}"
    );
}

/// The labels of the claim `default-00001` as the API server has them.
fn claim_labels(server: &ApiServer) -> std::collections::BTreeMap<String, String> {
    server
        .get::<NodeClaim>(None, "default-00001")
        .expect("there")
        .metadata
        .labels
        .unwrap_or_default()
}

/// Labels the claim `theirs=value` on the API server, as someone else would.
fn label_theirs(server: &ApiServer, value: &str) {
    let mut theirs = server
        .get::<NodeClaim>(None, "default-00001")
        .expect("there");
    theirs
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("theirs".into(), value.into());
    server.put(&theirs).expect("put");
}

/// Labels the claim as someone else would, `times` times, and waits until
/// the cluster's cache holds the last of these.
async fn label_elsewhere(server: &ApiServer, cluster: &KubeCluster, times: usize) {
    for round in 1..=times {
        label_theirs(server, &round.to_string());
    }
    let last = times.to_string();
    eventually("the cache holds the other writer's change", async || {
        cluster.node_claims().await.expect("claims")[0]
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get("theirs"))
            == Some(&last)
    })
    .await;
}

/// Reads the claim, lets someone else label it `others` times, then labels
/// the copy read and updates the claim from it.
async fn label_a_copy_others_changed_since(others: usize) -> (ApiServer, Result<(), ClusterError>) {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&claim("default-00001")).expect("put");
    let cluster = synced(&server).await;
    let mut mine = cluster.node_claims().await.expect("claims").remove(0);
    label_elsewhere(&server, &cluster, others).await;
    mine.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("mine".into(), "1".into());
    let updated = cluster.update_node_claim(mine).await;
    (server, updated)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_from_a_copy_older_than_the_cache_keeps_the_other_writers_change() {
    let (server, updated) = label_a_copy_others_changed_since(2).await;
    updated.expect("the update lands");
    let labels = claim_labels(&server);
    assert_eq!(labels.get("mine").map(String::as_str), Some("1"));
    assert_eq!(labels.get("theirs").map(String::as_str), Some("2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_from_a_copy_older_than_every_version_kept_is_refused_for_now() {
    let (server, updated) = label_a_copy_others_changed_since(8).await;
    let error = updated.expect_err("the copy is too old to tell what changed");
    assert_retryable(&error);
    let labels = claim_labels(&server);
    assert_eq!(labels.get("mine"), None, "nothing written");
    assert_eq!(labels.get("theirs").map(String::as_str), Some("8"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_without_end_give_a_retryable_error() {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&node("node-a")).expect("put");
    let cluster = synced(&server).await;
    server.inject(Fault::new(409, "Conflict").method("PUT").times(100));
    let error = cluster
        .taint_node("node-a", DISRUPTED_NO_SCHEDULE_TAINT.to_taint())
        .await
        .expect_err("it gives up");
    assert_retryable(&error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taints_are_added_and_removed_once() {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&node("node-a")).expect("put");
    let cluster = synced(&server).await;
    let taint: Taint = DISRUPTED_NO_SCHEDULE_TAINT.to_taint();
    cluster
        .taint_node("node-a", taint.clone())
        .await
        .expect("taint");
    cluster
        .taint_node("node-a", taint.clone())
        .await
        .expect("again");
    let taints = |server: &ApiServer| {
        server
            .get::<Node>(None, "node-a")
            .and_then(|n| n.spec)
            .and_then(|s| s.taints)
            .unwrap_or_default()
    };
    assert_eq!(taints(&server), std::slice::from_ref(&taint));
    cluster
        .untaint_node("node-a", &taint.key)
        .await
        .expect("untaint");
    cluster
        .untaint_node("node-a", &taint.key)
        .await
        .expect("again");
    assert!(taints(&server).is_empty());
    assert!(matches!(
        cluster.taint_node("nobody", taint).await,
        Err(ClusterError::NotFound { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eviction_a_budget_forbids_is_blocked_not_an_error() {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&node("node-a")).expect("put");
    server
        .put(&pod("web", "held", json!({"app": "held"})))
        .expect("put");
    server
        .put(&pod("web", "free", json!({"app": "free"})))
        .expect("put");
    let budget: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": {"namespace": "web", "name": "held"},
        "spec": {"selector": {"matchLabels": {"app": "held"}}, "maxUnavailable": 0},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1},
    }))
    .expect("a budget");
    server.put(&budget).expect("put");
    let cluster = synced(&server).await;
    assert_eq!(
        cluster
            .evict_pod(&PodKey::new("web", "held"))
            .await
            .expect("answers"),
        Eviction::Blocked
    );
    assert!(server.get::<Pod>(Some("web"), "held").is_some());
    assert_eq!(
        cluster
            .evict_pod(&PodKey::new("web", "free"))
            .await
            .expect("answers"),
        Eviction::Evicted
    );
    assert!(server.get::<Pod>(Some("web"), "free").is_none());
    // Gone already: nothing left to do.
    assert_eq!(
        cluster
            .evict_pod(&PodKey::new("web", "free"))
            .await
            .expect("answers"),
        Eviction::Evicted
    );
    assert!(server.verbs_used().contains(&(
        String::new(),
        "pods/eviction".into(),
        "create".into()
    )));
    // Throttling is not a budget: a 429 without the budget's cause is a
    // retryable error.
    server.inject(Fault::new(429, "TooManyRequests").path_contains("/eviction"));
    let throttled = cluster.evict_pod(&PodKey::new("web", "held")).await;
    assert!(
        matches!(
            throttled,
            Err(ClusterError::Api {
                retryable: true,
                ..
            })
        ),
        "{throttled:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_claim_releases_its_finalizer_and_deletes_its_node() {
    let server = ApiServer::start().await.expect("the server starts");
    server.put(&node("node-a")).expect("put");
    let cluster = synced(&server).await;
    let mut launched = claim("default-00001");
    launched
        .status
        .get_or_insert_with(Default::default)
        .node_name = Some("node-a".into());
    cluster.create_node_claim(launched).await.expect("create");
    cluster
        .delete_node_claim("default-00001")
        .await
        .expect("delete");
    let deleting = server
        .get::<NodeClaim>(None, "default-00001")
        .expect("still there");
    assert!(
        deleting.metadata.deletion_timestamp.is_some(),
        "the finalizer holds it"
    );
    cluster
        .remove_node_claim("default-00001")
        .await
        .expect("remove");
    assert!(server.get::<NodeClaim>(None, "default-00001").is_none());
    assert!(server.get::<Node>(None, "node-a").is_none());
    assert!(
        cluster.node_claims().await.expect("claims").is_empty(),
        "read at once"
    );
    assert!(matches!(
        cluster.remove_node_claim("default-00001").await,
        Err(ClusterError::NotFound { .. })
    ));
}

/// The pod a DaemonSet's overhead is read from is the newest it controls, as
/// the watches show the pods, the same as a dump or the in-memory cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_sets_overhead_is_read_from_its_newest_live_pod() {
    use karpenter_core::Snapshot;
    use karpenter_core::cluster::read_snapshot;
    use karpenter_core::provisioning::plan_provisioning;
    use karpenter_core::scheduling::CapacityType;
    use karpenter_core::snapshot::build::{InstanceTypeBuilder, NodePoolBuilder, PodBuilder};

    let server = ApiServer::start().await.expect("the server starts");
    let agent: DaemonSet = serde_json::from_value(json!({
        "metadata": {"name": "agent", "namespace": "kube-system", "uid": "uid-agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [
                {"name": "agent", "image": "i", "resources": {"requests": {"cpu": "3"}}},
            ]}},
        },
    }))
    .expect("a DaemonSet");
    let agent = server.put(&agent).expect("put");
    let uid = agent.metadata.uid.clone().expect("the server keeps a uid");
    for (name, created, cpu) in [
        ("agent-new", "2026-05-02T00:00:00Z", "500m"),
        ("agent-old", "2026-05-01T00:00:00Z", "2"),
    ] {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {
                "namespace": "kube-system", "name": name, "labels": {"app": "agent"},
                "creationTimestamp": created,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                     "name": "agent", "uid": uid, "controller": true}],
            },
            "spec": {"containers": [
                {"name": "agent", "image": "i", "resources": {"requests": {"cpu": cpu}}},
            ]},
        }))
        .expect("a pod");
        server.put(&pod).expect("put");
    }
    let cluster = synced(&server).await;
    let read = read_snapshot(&cluster).await.expect("a snapshot");
    let types = ["2", "4"].map(|cpu| {
        InstanceTypeBuilder::new(format!("c-{cpu}"))
            .cpu(cpu)
            .memory("8Gi")
            .offering(
                "zone-a",
                CapacityType::OnDemand,
                cpu.parse::<f64>().expect("a number"),
            )
            .build()
    });
    let snapshot = Snapshot {
        node_pools: vec![NodePoolBuilder::new("default").build()],
        ..read
    }
    .with_pods([PodBuilder::new("default", "web")
        .requests("1", "1Gi")
        .build()])
    .with_instance_types("default", types.to_vec());
    let plan = plan_provisioning(&snapshot);
    let launched: Vec<_> = plan
        .node_claims
        .iter()
        .filter_map(|claim| claim.launch.as_ref().map(|l| l.instance_type.as_str()))
        .collect();
    // 1 cpu beside agent-new's 500m fits 2 cpu; beside agent-old's 2 or the
    // template's 3 it would need the 4-cpu type.
    assert_eq!(launched, ["c-2"]);
}
