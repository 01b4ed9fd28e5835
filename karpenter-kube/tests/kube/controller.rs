//! karpenter-controller end to end, with `--provider fake`, against a
//! Kubernetes API served on 127.0.0.1 by the test (karpenter-apiserver),
//! the test playing the kube-scheduler and the ReplicaSet controller: it
//! provisions for pending pods, binds nothing itself, consolidates after a
//! scale-down, rolls a drifted pool, and survives a restart and a lost
//! Lease with no duplicate NodeClaim and no orphaned instance. Every
//! request it makes is one `deploy/`'s RBAC rules allow.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::support::World;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::PodTemplate;
use k8s_openapi::api::events::v1::Event as KubeEvent;
use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use karpenter_apiserver::Fault;
use karpenter_core::api::{CapacityBuffer, ConditionStatus, NodeClaim, condition_types};
use karpenter_core::scheduling::TERMINATION_FINALIZER;
use karpenter_kube::controller::RunError;
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(30);

/// The (group, resource, verb) triples `deploy/` grants.
fn granted() -> BTreeSet<(String, String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let mut rules = Vec::new();
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).expect("readable");
    let cluster_role: ClusterRole =
        serde_saphyr::from_str(&read("clusterrole.yaml")).expect("a ClusterRole");
    rules.extend(cluster_role.rules.unwrap_or_default());
    let roles: Vec<Role> = serde_saphyr::from_multiple(&read("role.yaml")).expect("Roles");
    for role in roles {
        rules.extend(role.rules.unwrap_or_default());
    }
    let mut granted = BTreeSet::new();
    for rule in rules {
        for group in rule.api_groups.unwrap_or_default() {
            for resource in rule.resources.clone().unwrap_or_default() {
                for verb in &rule.verbs {
                    granted.insert((group.clone(), resource.clone(), verb.clone()));
                }
            }
        }
    }
    granted
}

/// The requests the controller made, as RBAC names them: every one granted.
fn assert_allowed(world: &World) -> BTreeSet<(String, String, String)> {
    let used = world.server.verbs_used();
    let granted = granted();
    let refused: Vec<_> = used.difference(&granted).collect();
    assert!(
        refused.is_empty(),
        "requests deploy/ does not allow: {refused:?}"
    );
    used
}

/// A port nothing listens on now, as `127.0.0.1:port`.
fn free_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("an address").to_string()
}

/// The whole answer to `GET path` on `addr`.
async fn get(addr: &str, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("it listens");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("read");
    answer
}

fn is_true(claim: &NodeClaim, condition: &str) -> bool {
    claim
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == condition && c.status == ConditionStatus::True)
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_provisions_consolidates_and_rolls_a_drifted_pool() {
    let mut world = World::new("lifecycle").await;
    world.add_pool(json!({"team": "a"}));
    world.want("web", 6, "1");
    inject_write_conflicts(&world);
    let metrics = free_port();
    let health = free_port();
    // With NodeOverlay and CapacityBuffer on, the controller watches
    // NodeOverlays, CapacityBuffers, PodTemplates and the apps workloads too
    // (none here), so every grant of deploy/ is used.
    let controller = world.start(&[
        "--metrics-addr",
        &metrics,
        "--health-addr",
        &health,
        "--feature-gates",
        "NodeOverlay=true,CapacityBuffer=true",
    ]);

    let provisioned = assert_every_pod_runs_on_launched_nodes(&world).await;
    assert_events_metrics_and_readiness(&world, &metrics, &health).await;
    assert_a_scale_down_is_consolidated(&mut world).await;
    assert!(provisioned >= 1);
    assert_the_drifted_pool_is_rolled(&mut world).await;

    controller.stop().await.expect("a clean stop");
    assert_every_grant_is_used(&world);
}

/// Writes meet stale copies now and then: each is read afresh and made
/// again.
fn inject_write_conflicts(world: &World) {
    for kind in ["/nodeclaims/", "/nodes/"] {
        world.server.inject(
            Fault::new(409, "Conflict")
                .method("PUT")
                .path_contains(kind)
                .times(2),
        );
    }
}

/// Provisioning: every pod runs on nodes the controller launched, whose
/// claims are complete, and it bound nothing itself; how many claims.
async fn assert_every_pod_runs_on_launched_nodes(world: &World) -> usize {
    world
        .until("provisioning", LIMIT, |w| {
            let claims: Vec<NodeClaim> = w.server.list();
            w.all_running()
                && w.claims_and_nodes_match()
                && claims
                    .iter()
                    .all(|c| is_true(c, condition_types::INITIALIZED))
        })
        .await;
    let claims: Vec<NodeClaim> = world.server.list();
    assert!(!claims.is_empty());
    for claim in &claims {
        assert_eq!(
            claim.metadata.finalizers.as_deref(),
            Some(&[TERMINATION_FINALIZER.to_owned()][..])
        );
        for condition in [
            condition_types::LAUNCHED,
            condition_types::REGISTERED,
            condition_types::INITIALIZED,
        ] {
            assert!(is_true(claim, condition), "{condition} on {claim:?}");
        }
        let status = claim.status.as_ref().expect("a status");
        assert!(status.provider_id.is_some() && status.allocatable.is_some());
    }
    // It bound nothing itself: the test's scheduler did.
    let used = world.server.verbs_used();
    for verb in ["update", "patch", "create"] {
        assert!(!used.contains(&(String::new(), "pods".into(), verb.into())));
        assert!(!used.contains(&(String::new(), "pods/binding".into(), verb.into())));
    }
    world.claim_names().len()
}

/// What users look for: the decisions as Kubernetes Events, the counts as
/// metrics, readiness once synced.
async fn assert_events_metrics_and_readiness(world: &World, metrics: &str, health: &str) {
    // Events are published in the background: the last may land a moment
    // after the claim it is about.
    let wanted = ["Nominated", "Launched", "Registered", "Initialized"];
    let reasons = |w: &World| -> BTreeSet<String> {
        w.server
            .list::<KubeEvent>()
            .into_iter()
            .filter_map(|e| e.reason)
            .collect()
    };
    world
        .until("events", LIMIT, |w| {
            let seen = reasons(w);
            wanted.iter().all(|r| seen.contains(*r))
        })
        .await;
    let scraped = get(metrics, "/metrics").await;
    assert!(scraped.starts_with("HTTP/1.1 200"), "{scraped}");
    assert!(
        scraped.contains(
            "karpenter_nodeclaims_created_total{nodepool=\"default\",reason=\"provisioning\"}"
        ),
        "{scraped}"
    );
    assert!(scraped.contains("karpenter_scheduler_scheduling_duration_seconds_count"));
    assert!(get(health, "/readyz").await.starts_with("HTTP/1.1 200"));
}

/// Consolidation: after a scale-down to one small pod, one node is enough.
async fn assert_a_scale_down_is_consolidated(world: &mut World) {
    world.desired.clear();
    world.want("web", 1, "1");
    world
        .until("consolidation", LIMIT, |w| {
            w.all_running() && w.claims_and_nodes_match() && w.claim_names().len() == 1
        })
        .await;
}

/// Drift: the pool's template changes; the node is replaced by one with the
/// new label, its pod moved there.
async fn assert_the_drifted_pool_is_rolled(world: &mut World) {
    world.want("web", 3, "1");
    world
        .until("growing again", LIMIT, |w| {
            w.all_running() && w.claims_and_nodes_match()
        })
        .await;
    let before: BTreeSet<String> = world.claim_names().into_iter().collect();
    world.add_pool(json!({"team": "b"}));
    world
        .until("rolling the drifted pool", Duration::from_secs(60), |w| {
            let claims: Vec<NodeClaim> = w.server.list();
            w.all_running()
                && w.claims_and_nodes_match()
                && !claims.is_empty()
                && claims.iter().all(|c| {
                    c.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("team"))
                        .map(String::as_str)
                        == Some("b")
                })
        })
        .await;
    let after: BTreeSet<String> = world.claim_names().into_iter().collect();
    assert!(
        before.is_disjoint(&after),
        "{before:?} were all replaced by {after:?}"
    );
}

/// Every request was one deploy/ allows, and a running controller exercises
/// every ClusterRule verb but the Lease's (no --leader-elect here) and the
/// Azure provider's (its AKSNodeClasses, the kube-dns Service).
fn assert_every_grant_is_used(world: &World) {
    let used = assert_allowed(world);
    let unused: Vec<_> = granted()
        .difference(&used)
        .filter(|(group, resource, _)| {
            group != "coordination.k8s.io"
                && group != "karpenter.azure.com"
                && !(group.is_empty() && resource == "services")
        })
        .cloned()
        .collect();
    assert!(unused.is_empty(), "granted but never used: {unused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_and_a_lost_lease_leave_no_duplicate_claim_and_no_orphan() {
    let mut world = World::new("restart").await;
    world.add_pool(json!({}));
    world.want("web", 4, "1");
    let leader = [
        "--leader-elect",
        "--lease-namespace",
        "karpenter",
        "--lease-duration",
        "2s",
        "--renew-deadline",
        "1s",
        "--retry-period",
        "200ms",
    ];
    let first = world.start(&leader);
    world
        .until("provisioning", LIMIT, |w| {
            w.all_running() && w.claims_and_nodes_match()
        })
        .await;
    let claims: BTreeSet<String> = world.claim_names().into_iter().collect();

    // A restart: the first releases the Lease on its way out, the second
    // takes it and finds everything in place.
    first.stop().await.expect("a clean stop");
    assert_eq!(world.lease_holder(), "", "released");
    let second = world.start(&leader);
    world
        .until("the second takes the Lease", LIMIT, |w| {
            !w.lease_holder().is_empty()
        })
        .await;
    // More than the nodes there hold: the second must launch.
    world.want("web", 12, "1");
    world
        .until("after the restart", LIMIT, |w| {
            w.all_running() && w.claims_and_nodes_match()
        })
        .await;
    let now: BTreeSet<String> = world.claim_names().into_iter().collect();
    assert!(claims.is_subset(&now), "{claims:?} kept in {now:?}");

    // A lost Lease: someone else holds it now; the leader stops acting.
    let mut lease = world
        .server
        .get::<Lease>(Some("karpenter"), "karpenter-leader-election")
        .expect("a Lease");
    let spec = lease.spec.get_or_insert_with(Default::default);
    spec.holder_identity = Some("intruder".into());
    spec.lease_duration_seconds = Some(2);
    spec.renew_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
        jiff::Timestamp::now(),
    ));
    world.server.put(&lease).expect("put");
    let ended = tokio::time::timeout(LIMIT, second.task)
        .await
        .expect("the leader stops")
        .expect("the task ends");
    assert!(matches!(ended, Err(RunError::LostLease)), "{ended:?}");

    // A third takes over once the intruder's Lease runs out, and carries on
    // where they left off.
    let third = world.start(&leader);
    world
        .until("the third takes the Lease", LIMIT, |w| {
            let held = w.lease_holder();
            !held.is_empty() && held != "intruder"
        })
        .await;
    world.want("web", 20, "1");
    world
        .until("after the lost Lease", LIMIT, |w| {
            w.all_running() && w.claims_and_nodes_match()
        })
        .await;
    let names = world.claim_names();
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "no duplicate claims: {names:?}");
    third.stop().await.expect("a clean stop");
    assert_allowed(&world);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_plans_and_writes_nothing() {
    let mut world = World::new("dry").await;
    world.add_pool(json!({}));
    world.want("web", 3, "1");
    world.play_cluster();
    world.server.clear_requests();
    let ended = world
        .start(&["--dry-run", "--once"])
        .task
        .await
        .expect("ends");
    assert!(ended.is_ok(), "{ended:?}");
    let writes: Vec<_> = world
        .server
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert!(world.claim_names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_runs_one_round_and_exits() {
    let mut world = World::new("once").await;
    world.add_pool(json!({}));
    world.want("web", 2, "1");
    world.play_cluster();
    let ended = world.start(&["--once"]).task.await.expect("ends");
    assert!(ended.is_ok(), "{ended:?}");
    assert!(!world.claim_names().is_empty(), "one round created claims");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capacity_buffer_launches_a_node_only_with_its_gate() {
    let world = World::new("buffer").await;
    world.add_pool(json!({}));
    // No pod is pending: only the buffer's two chunks of 1 cpu want room.
    let template: PodTemplate = serde_json::from_value(json!({
        "metadata": {"namespace": "default", "name": "chunk"},
        "template": {"spec": {"containers": [
            {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", "memory": "256Mi"}}},
        ]}},
    }))
    .expect("a PodTemplate");
    world.server.put(&template).expect("put");
    let buffer: CapacityBuffer = serde_json::from_value(json!({
        "apiVersion": "autoscaling.x-k8s.io/v1beta1",
        "kind": "CapacityBuffer",
        "metadata": {"namespace": "default", "name": "headroom"},
        "spec": {"podTemplateRef": {"name": "chunk"}, "replicas": 2},
    }))
    .expect("a CapacityBuffer");
    world.server.put(&buffer).expect("put");

    // Without the gate the buffer is not even read: nothing to launch.
    let ended = world.start(&["--once"]).task.await.expect("ends");
    assert!(ended.is_ok(), "{ended:?}");
    assert!(world.claim_names().is_empty(), "{:?}", world.claim_names());
    assert!(
        !world
            .server
            .verbs_used()
            .iter()
            .any(|(_, resource, _)| resource == "capacitybuffers"),
        "not watched without the gate"
    );

    // With it, one round launches room for the chunks, and writes nothing
    // to the buffer.
    world.server.clear_requests();
    let ended = world
        .start(&["--once", "--feature-gates", "CapacityBuffer=true"])
        .task
        .await
        .expect("ends");
    assert!(ended.is_ok(), "{ended:?}");
    assert!(!world.claim_names().is_empty(), "a claim for the buffer");
    let buffer_writes: Vec<_> = world
        .server
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET" && r.path.contains("capacitybuffers"))
        .collect();
    assert!(buffer_writes.is_empty(), "{buffer_writes:?}");
    assert_allowed(&world);
}
