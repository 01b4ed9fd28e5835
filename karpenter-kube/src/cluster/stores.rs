//! The watch-backed stores: one reflector per kind the engine reads, each a
//! `kube::runtime` watcher (list, then watch from the list's
//! `resourceVersion`, bookmarks on; a `410 Gone` starts it over with a fresh
//! list; failures back off exponentially) feeding a cache ordered by
//! namespace and name.

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use karpenter_core::capacity_buffers::ScalableWorkload;
use karpenter_core::pods::{PodInfo, PodInterner};
use kube::runtime::watcher::Event;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

use super::KubeClusterOptions;
use super::ordered::{Cached, Ordered, Watched, ordered};
use tokio::task::JoinHandle;

/// How many versions before the current one a store of Nodes or NodeClaims
/// keeps. A plan takes about a second; a node or claim changes a few times
/// in a minute at most.
const HISTORY: usize = 4;

/// The fewest distinct pod specs at which the pod cache's interner forgets
/// the unused ones.
const FORGET_FLOOR: usize = 1024;

/// The stores of every kind the engine reads.
#[derive(Clone)]
pub(crate) struct Stores {
    pub(crate) node_pools: Ordered<NodePool>,
    pub(crate) nodes: Ordered<Node>,
    pub(crate) node_claims: Ordered<NodeClaim>,
    pub(crate) pods: Ordered<PodInfo>,
    pub(crate) daemon_sets: Ordered<DaemonSet>,
    pub(crate) pod_disruption_budgets: Ordered<PodDisruptionBudget>,
    pub(crate) persistent_volumes: Ordered<PersistentVolume>,
    pub(crate) persistent_volume_claims: Ordered<PersistentVolumeClaim>,
    pub(crate) storage_classes: Ordered<StorageClass>,
    pub(crate) csi_nodes: Ordered<CSINode>,
    pub(crate) namespaces: Ordered<Namespace>,
    /// Watched only when asked (their CRD is optional).
    pub(crate) node_overlays: Option<Ordered<NodeOverlay>>,
    /// Watched only when asked (their CRD is optional, and the workloads
    /// are many).
    pub(crate) capacity_buffers: Option<BufferStores>,
}

/// The CapacityBuffers and what their references may name.
#[derive(Clone)]
pub(crate) struct BufferStores {
    pub(crate) buffers: Ordered<CapacityBuffer>,
    pub(crate) pod_templates: Ordered<PodTemplate>,
    pub(crate) deployments: Ordered<Workload>,
    pub(crate) stateful_sets: Ordered<Workload>,
    pub(crate) replica_sets: Ordered<Workload>,
}

impl BufferStores {
    /// The Deployments, then the StatefulSets, then the ReplicaSets, each
    /// by namespace and name.
    pub(crate) fn workloads(&self) -> Vec<ScalableWorkload> {
        [&self.deployments, &self.stateful_sets, &self.replica_sets]
            .into_iter()
            .flat_map(Ordered::state)
            .map(|cached| cached.workload.clone())
            .collect()
    }

    async fn wait_until_ready(&self) -> Result<(), tokio::sync::watch::error::RecvError> {
        self.buffers.wait_until_ready().await?;
        self.pod_templates.wait_until_ready().await?;
        self.deployments.wait_until_ready().await?;
        self.stateful_sets.wait_until_ready().await?;
        self.replica_sets.wait_until_ready().await
    }
}

/// A Deployment, StatefulSet or ReplicaSet as a CapacityBuffer's
/// `scalableRef` reads it ([`ScalableWorkload`]: its pod template and
/// replicas), read when its event arrives: the cache holds no status,
/// selector, strategy, annotations or labels of the object itself. A
/// cluster has many ReplicaSets (each Deployment keeps its old ones).
#[derive(Clone, Debug)]
pub(crate) struct Workload {
    /// Only the object's namespace, name and `resourceVersion`.
    metadata: ObjectMeta,
    pub(crate) workload: ScalableWorkload,
}

impl Workload {
    /// `object` as a buffer reads it.
    fn read<W>(object: &W) -> Workload
    where
        W: Cached,
        for<'a> ScalableWorkload: From<&'a W>,
    {
        let meta = object.metadata();
        Workload {
            metadata: ObjectMeta {
                namespace: meta.namespace.clone(),
                name: meta.name.clone(),
                resource_version: meta.resource_version.clone(),
                ..ObjectMeta::default()
            },
            workload: ScalableWorkload::from(object),
        }
    }
}

impl Cached for Workload {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
}

/// The reflectors' tasks: aborted when the last handle goes, so dropping
/// every `KubeCluster` clone stops the watches.
#[derive(Debug, Default)]
pub(crate) struct Reflectors(Vec<JoinHandle<()>>);

impl Drop for Reflectors {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

impl Stores {
    /// Starts a reflector per kind on the current tokio runtime (for
    /// NodeOverlays and for CapacityBuffers and what they refer to only
    /// when `options` ask for them).
    pub(crate) fn watch(
        client: &Client,
        config: &watcher::Config,
        options: &KubeClusterOptions,
    ) -> (Stores, Reflectors) {
        let mut tasks = Vec::new();
        let mut spawner = Spawner {
            client,
            config,
            tasks: &mut tasks,
        };
        let stores = Stores {
            node_pools: spawner.all("NodePool"),
            nodes: spawner.all_with_history("Node"),
            node_claims: spawner.all_with_history("NodeClaim"),
            pods: spawner.pods(),
            daemon_sets: spawner.all("DaemonSet"),
            pod_disruption_budgets: spawner.all("PodDisruptionBudget"),
            persistent_volumes: spawner.all("PersistentVolume"),
            persistent_volume_claims: spawner.all("PersistentVolumeClaim"),
            storage_classes: spawner.all("StorageClass"),
            csi_nodes: spawner.all("CSINode"),
            namespaces: spawner.all("Namespace"),
            node_overlays: options.node_overlays.then(|| spawner.all("NodeOverlay")),
            capacity_buffers: options.capacity_buffers.then(|| BufferStores {
                buffers: spawner.all("CapacityBuffer"),
                pod_templates: spawner.all("PodTemplate"),
                deployments: spawner.workloads::<Deployment>("Deployment"),
                stateful_sets: spawner.workloads::<StatefulSet>("StatefulSet"),
                replica_sets: spawner.workloads::<ReplicaSet>("ReplicaSet"),
            }),
        };
        (stores, Reflectors(tasks))
    }

    /// Waits until every store has its first complete list. `Err` only when
    /// a reflector stopped before it had one.
    pub(crate) async fn wait_until_ready(
        &self,
    ) -> Result<(), tokio::sync::watch::error::RecvError> {
        self.node_pools.wait_until_ready().await?;
        self.nodes.wait_until_ready().await?;
        self.node_claims.wait_until_ready().await?;
        self.pods.wait_until_ready().await?;
        self.daemon_sets.wait_until_ready().await?;
        self.pod_disruption_budgets.wait_until_ready().await?;
        self.persistent_volumes.wait_until_ready().await?;
        self.persistent_volume_claims.wait_until_ready().await?;
        self.storage_classes.wait_until_ready().await?;
        self.csi_nodes.wait_until_ready().await?;
        self.namespaces.wait_until_ready().await?;
        if let Some(overlays) = &self.node_overlays {
            overlays.wait_until_ready().await?;
        }
        if let Some(buffers) = &self.capacity_buffers {
            buffers.wait_until_ready().await?;
        }
        Ok(())
    }
}

/// Starts one reflector.
struct Spawner<'a> {
    client: &'a Client,
    config: &'a watcher::Config,
    tasks: &'a mut Vec<JoinHandle<()>>,
}

impl Spawner<'_> {
    /// A store of every object of `K`, in every namespace, kept by a
    /// reflector task.
    fn all<K: Watched>(&mut self, kind: &'static str) -> Ordered<K> {
        self.watch(kind, 0)
    }

    /// As [`all`](Self::all), keeping each object's last few versions too:
    /// for the kinds the driver updates from a copy it read earlier.
    fn all_with_history<K: Watched>(&mut self, kind: &'static str) -> Ordered<K> {
        self.watch(kind, HISTORY)
    }

    fn watch<K: Watched>(&mut self, kind: &'static str, history: usize) -> Ordered<K> {
        // Managed fields are most of an object's size, and the engine never
        // reads them.
        self.watch_as(kind, history, |mut object: K| {
            object.managed_fields_mut().clear();
            object
        })
    }

    /// The pods, each read as planning reads it ([`PodInfo`]) when its event
    /// arrives, so the cache holds no full `Pod` and a snapshot copies none.
    /// Replicas share their specs; the specs no pod uses any more are
    /// forgotten whenever their number has doubled.
    fn pods(&mut self) -> Ordered<PodInfo> {
        let mut interner = PodInterner::new();
        let mut forget_at = FORGET_FLOOR;
        self.watch_as("Pod", 0, move |pod: Pod| {
            let info = interner.pod_info(&pod);
            if interner.distinct_specs() >= forget_at {
                interner.forget_unused();
                forget_at = (2 * interner.distinct_specs()).max(FORGET_FLOOR);
            }
            info
        })
    }

    /// The workloads of kind `W`, each read as a CapacityBuffer reads it
    /// ([`Workload`]) when its event arrives.
    fn workloads<W>(&mut self, kind: &'static str) -> Ordered<Workload>
    where
        W: Watched,
        for<'a> ScalableWorkload: From<&'a W>,
    {
        self.watch_as(kind, 0, |object: W| Workload::read(&object))
    }

    /// A store of every object of `W`, in every namespace, each held as
    /// `read` makes it, kept by a reflector task.
    fn watch_as<W: Watched, K: Cached>(
        &mut self,
        kind: &'static str,
        history: usize,
        mut read: impl FnMut(W) -> K + Send + 'static,
    ) -> Ordered<K> {
        let (reader, mut writer) = ordered(history);
        let api: Api<W> = Api::all(self.client.clone());
        let stream = watcher(api, self.config.clone()).default_backoff();
        self.tasks.push(tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                match event {
                    Ok(event) => writer.apply(read_event(event, &mut read)),
                    // The watcher backs off and starts again (a fresh list
                    // after `410 Gone`); the cache keeps what it had.
                    Err(error) => tracing::warn!(kind, error = %error, "watch failed; retrying"),
                }
            }
        }));
        reader
    }
}

/// `event` with its object read by `read`.
fn read_event<W, K>(event: Event<W>, read: &mut impl FnMut(W) -> K) -> Event<K> {
    match event {
        Event::Init => Event::Init,
        Event::InitApply(object) => Event::InitApply(read(object)),
        Event::InitDone => Event::InitDone,
        Event::Apply(object) => Event::Apply(read(object)),
        Event::Delete(object) => Event::Delete(read(object)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_workload_is_cached_as_a_buffer_reads_it() {
        let deployment: Deployment = serde_json::from_value(json!({
            "metadata": {
                "namespace": "shop",
                "name": "web",
                "resourceVersion": "7",
                "labels": {"app": "web"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            },
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            },
            "status": {"replicas": 3, "readyReplicas": 3},
        }))
        .expect("a deployment");
        let cached = Workload::read(&deployment);
        assert_eq!(cached.workload, ScalableWorkload::from(&deployment));
        assert_eq!(cached.workload.kind, "Deployment");
        let kept = ObjectMeta {
            namespace: Some("shop".into()),
            name: Some("web".into()),
            resource_version: Some("7".into()),
            ..ObjectMeta::default()
        };
        assert_eq!(cached.metadata(), &kept);
    }
}
