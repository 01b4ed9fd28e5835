//! What the end-to-end tests share: a loopback API server with a NodePool
//! and pods, the controller started in-process against it, and the test
//! playing the kube-scheduler and the ReplicaSet controller.

#![allow(unreachable_pub)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use karpenter_apiserver::ApiServer;
use karpenter_core::api::{NodeClaim, NodePool};
use karpenter_core::resources::{milli_value, pod_requests};
use karpenter_kube::controller::{Args, LAUNCHED_LABEL, RunError, run_until};
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The fake cloud's instance types: 2 and 8 vCPU, in two zones.
pub const INSTANCE_TYPES: &str = r#"
apiVersion: karpenter.fake/v1alpha1
kind: InstanceType
metadata: {name: small}
capacity: {cpu: "2", memory: 8Gi, pods: "110"}
offerings:
- {zone: zone-a, capacityType: on-demand, price: 0.10}
- {zone: zone-b, capacityType: on-demand, price: 0.10}
---
apiVersion: karpenter.fake/v1alpha1
kind: InstanceType
metadata: {name: large}
capacity: {cpu: "8", memory: 32Gi, pods: "110"}
offerings:
- {zone: zone-a, capacityType: on-demand, price: 0.38}
- {zone: zone-b, capacityType: on-demand, price: 0.38}
"#;

/// A world: the API server, the kubeconfig and instance types the
/// controller reads, and the pods the test's "ReplicaSets" want.
pub struct World {
    pub server: ApiServer,
    pub dir: PathBuf,
    /// The pods that should exist, by name, with their cpu request.
    pub desired: BTreeMap<String, String>,
}

impl World {
    pub async fn new(test: &str) -> World {
        // The controller's logs, shown with a failing test's output.
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| "info".into()),
            )
            .try_init();
        let server = ApiServer::start().await.expect("the API server starts");
        let dir = std::env::temp_dir().join(format!("karpenter-e2e-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        server
            .write_kubeconfig(dir.join("kubeconfig"))
            .expect("a kubeconfig");
        std::fs::write(dir.join("instance-types.yaml"), INSTANCE_TYPES).expect("writable");
        World {
            server,
            dir,
            desired: BTreeMap::new(),
        }
    }

    /// The controller's flags for this world, with `extra` after them.
    pub fn args(&self, extra: &[&str]) -> Args {
        let kubeconfig = self.dir.join("kubeconfig");
        let types = self.dir.join("instance-types.yaml");
        let mut argv: Vec<String> = [
            "karpenter-controller",
            "--kubeconfig",
            kubeconfig.to_str().expect("utf-8"),
            "--instance-types",
            types.to_str().expect("utf-8"),
            "--metrics-addr",
            "off",
            "--health-addr",
            "off",
            "--interval",
            "100ms",
            "--sync-timeout",
            "20s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // A flag in `extra` replaces the default given here.
        for flag in extra.iter().filter(|f| f.starts_with("--")) {
            if let Some(at) = argv.iter().position(|a| a == flag)
                && argv.get(at + 1).is_some_and(|v| !v.starts_with("--"))
            {
                argv.drain(at..at + 2);
            }
        }
        argv.extend(extra.iter().map(|s| s.to_string()));
        Args::try_parse_from(argv).expect("the flags parse")
    }

    /// Starts a controller in this process; stop it with the returned
    /// sender.
    pub fn start(&self, extra: &[&str]) -> Controller {
        let (stop, stopping) = watch::channel(false);
        let task = tokio::spawn(run_until(self.args(extra), stopping));
        Controller { stop, task }
    }

    pub fn add_pool(&self, template_labels: serde_json::Value) {
        let pool: NodePool = serde_json::from_value(json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "default"},
            "spec": {
                "template": {
                    "metadata": {"labels": template_labels},
                    "spec": {
                        "requirements": [],
                        "expireAfter": "Never",
                        "nodeClassRef": {"group": "karpenter.fake", "kind": "FakeNodeClass", "name": "default"},
                    },
                },
                "disruption": {
                    "consolidationPolicy": "WhenEmptyOrUnderutilized",
                    "consolidateAfter": "0s",
                    "budgets": [{"nodes": "100%"}],
                },
            },
        }))
        .expect("a NodePool");
        self.server.put(&pool).expect("put");
    }

    /// Wants `count` pods of `cpu` named `prefix-<i>`.
    pub fn want(&mut self, prefix: &str, count: usize, cpu: &str) {
        for i in 0..count {
            self.desired.insert(format!("{prefix}-{i}"), cpu.to_owned());
        }
    }

    /// Plays the ReplicaSet controller and the kube-scheduler once: creates
    /// the desired pods that are missing (pending), deletes the undesired,
    /// and binds each pending pod to the first untainted, ready node with
    /// room for it.
    pub fn play_cluster(&self) {
        let pods: Vec<Pod> = self.server.list();
        let existing: BTreeSet<String> = pods
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        for pod in &pods {
            let name = pod.metadata.name.clone().unwrap_or_default();
            if !self.desired.contains_key(&name) {
                self.server.remove::<Pod>(Some("default"), &name);
            }
        }
        for (name, cpu) in &self.desired {
            if !existing.contains(name) {
                self.server.put(&pending(name, cpu)).expect("put");
            }
        }
        self.schedule();
    }

    fn schedule(&self) {
        let nodes: Vec<Node> = self.server.list();
        let pods: Vec<Pod> = self.server.list();
        let mut used: BTreeMap<String, i64> = BTreeMap::new();
        for pod in &pods {
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                *used.entry(node).or_default() += millicores(pod);
            }
        }
        for pod in pods
            .iter()
            .filter(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_none()))
        {
            let need = millicores(pod);
            let fits = nodes.iter().find(|node| {
                let name = node.metadata.name.clone().unwrap_or_default();
                let tainted = node
                    .spec
                    .as_ref()
                    .and_then(|s| s.taints.as_ref())
                    .is_some_and(|t| t.iter().any(|t| t.effect == "NoSchedule"));
                let allocatable = node
                    .status
                    .as_ref()
                    .and_then(|s| s.allocatable.as_ref())
                    .and_then(|a| a.get("cpu"))
                    .map(|q| milli_value(q).unwrap_or(0))
                    .unwrap_or(0);
                node.metadata.deletion_timestamp.is_none()
                    && !tainted
                    && used.get(&name).copied().unwrap_or(0) + need <= allocatable
            });
            if let Some(node) = fits {
                let name = node.metadata.name.clone().unwrap_or_default();
                *used.entry(name.clone()).or_default() += need;
                let mut bound = pod.clone();
                bound.spec.as_mut().expect("a spec").node_name = Some(name);
                bound.status = Some(
                    serde_json::from_value(json!({
                        "phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True"}],
                    }))
                    .expect("a status"),
                );
                self.server.put(&bound).expect("put");
            }
        }
    }

    /// Plays the cluster every 100 ms until `done` holds; panics after
    /// `limit`.
    pub async fn until(&self, what: &str, limit: Duration, done: impl Fn(&World) -> bool) {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            self.play_cluster();
            if done(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "{what}: not done after {limit:?}; claims {:?}, nodes {:?}, pending {:?}",
            self.claim_names(),
            self.launched_nodes(),
            self.pending()
        );
    }

    pub fn pending(&self) -> Vec<String> {
        self.server
            .list::<Pod>()
            .into_iter()
            .filter(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_none()))
            .filter_map(|p| p.metadata.name)
            .collect()
    }

    pub fn all_running(&self) -> bool {
        let pods: Vec<Pod> = self.server.list();
        pods.len() == self.desired.len() && self.pending().is_empty()
    }

    pub fn claim_names(&self) -> Vec<String> {
        self.server
            .list::<NodeClaim>()
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect()
    }

    pub fn launched_nodes(&self) -> Vec<String> {
        self.server
            .list::<Node>()
            .into_iter()
            .filter(|n| {
                n.metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key(LAUNCHED_LABEL))
            })
            .filter_map(|n| n.metadata.name)
            .collect()
    }

    /// Every launched node has its claim and every claim past launch its
    /// node: no orphaned instance, no claim without one.
    pub fn claims_and_nodes_match(&self) -> bool {
        let claims: Vec<NodeClaim> = self.server.list();
        let nodes: BTreeSet<String> = self.launched_nodes().into_iter().collect();
        let claimed: BTreeSet<String> = claims
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        nodes == claimed
    }
}

impl World {
    /// Who holds the controller's Lease (empty when nobody does).
    pub fn lease_holder(&self) -> String {
        self.server
            .get::<Lease>(Some("karpenter"), "karpenter-leader-election")
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
            .unwrap_or_default()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// A controller running in this process.
pub struct Controller {
    pub stop: watch::Sender<bool>,
    pub task: JoinHandle<Result<(), RunError>>,
}

impl Controller {
    /// Stops it as SIGTERM would, and returns how it ended.
    pub async fn stop(self) -> Result<(), RunError> {
        let _ = self.stop.send(true);
        self.task.await.expect("the controller task ends")
    }
}

fn millicores(pod: &Pod) -> i64 {
    pod.spec
        .as_ref()
        .and_then(|spec| pod_requests(spec).ok())
        .map_or(0, |requests| requests.get("cpu"))
}

/// A pending pod of `cpu` in `default`.
pub fn pending(name: &str, cpu: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": "default", "name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
    }))
    .expect("a pod")
}
