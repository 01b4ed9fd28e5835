//! [`KubeCluster`]: the engine's [`Cluster`] over a Kubernetes API server.
//!
//! Reads come from watch-backed stores (one reflector per kind, synced
//! before the first read answers), with this process's own writes read over
//! them until the watches catch up. Writes are made as upstream's
//! controllers make them: NodeClaims created with the termination finalizer
//! and their status written through the status subresource; the
//! `karpenter.sh/disrupted:NoSchedule` taint; eviction through the Eviction
//! subresource, where `429` means a PodDisruptionBudget holds the pod; the
//! finalizer released only once the instance is gone; every write under a
//! named field manager, and a `409 Conflict` answered by reading the object
//! afresh and making the same change again.

mod errors;
mod merge;
mod ordered;
mod overlay;
mod stores;
mod writes;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate, Taint,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use karpenter_core::capacity_buffers::ScalableWorkload;
use karpenter_core::cluster::{Cluster, ClusterError, Eviction};
use karpenter_core::pods::PodInfo;
use karpenter_core::pods::PodKey;
use karpenter_core::scheduling::{NODE_POOL_LABEL_KEY, TERMINATION_FINALIZER};
use kube::api::{DeleteParams, EvictParams, PostParams};
use kube::runtime::watcher;
use kube::{Api, Client};
use serde_json::Value;
use thiserror::Error;
use tokio::sync::watch;

use crate::events::{EventRecorder, nominated};
use errors::{cluster_error, is_not_found, retryable};
use overlay::Overlay;
use stores::{BufferStores, Reflectors, Stores};
use writes::{Part, Target};

/// The field manager karpenter-kube's writes name by default.
pub const FIELD_MANAGER: &str = "karpenter";

/// How a [`KubeCluster`] behaves.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct KubeClusterOptions {
    /// The field manager every write names (default [`FIELD_MANAGER`]).
    pub field_manager: String,
    /// How long this process's own writes are read over the watch stores
    /// at most, should a watch never show them (default 30 s).
    pub read_your_writes: Duration,
    /// Where the Kubernetes Events go (default: nowhere; the controller
    /// passes a recorder).
    pub events: EventRecorder,
    /// Whether to watch NodeOverlays (`karpenter.sh/v1alpha1`), which the
    /// driver reads with the `NodeOverlay` feature gate on; their CRD must
    /// then be installed. Default: off, and the cluster has none.
    pub node_overlays: bool,
    /// Whether to watch CapacityBuffers (`autoscaling.x-k8s.io/v1beta1`)
    /// and what they may refer to: PodTemplates, Deployments, StatefulSets
    /// and ReplicaSets, in every namespace. The driver reads them with the
    /// `CapacityBuffer` feature gate on; the CapacityBuffer CRD must then be
    /// installed. Default: off, and the cluster has none of them.
    pub capacity_buffers: bool,
}

impl Default for KubeClusterOptions {
    fn default() -> Self {
        KubeClusterOptions {
            field_manager: FIELD_MANAGER.to_owned(),
            read_your_writes: Duration::from_secs(30),
            events: EventRecorder::disabled(),
            node_overlays: false,
            capacity_buffers: false,
        }
    }
}

impl KubeClusterOptions {
    /// These options with writes under `manager`.
    pub fn with_field_manager(mut self, manager: impl Into<String>) -> Self {
        self.field_manager = manager.into();
        self
    }

    /// These options watching NodeOverlays, or not.
    pub fn with_node_overlays(mut self, watch: bool) -> Self {
        self.node_overlays = watch;
        self
    }

    /// These options watching CapacityBuffers, PodTemplates and the `apps`
    /// workloads, or not.
    pub fn with_capacity_buffers(mut self, watch: bool) -> Self {
        self.capacity_buffers = watch;
        self
    }

    /// These options with events recorded by `events`.
    pub fn with_events(mut self, events: EventRecorder) -> Self {
        self.events = events;
        self
    }
}

/// Why [`KubeCluster::wait_until_synced`] gave up.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SyncError {
    /// A watch stopped before its first list (the runtime is shutting down).
    #[error("a watch stopped before it had listed its objects")]
    Stopped,
    /// The watches had not listed everything in time.
    #[error("the watches had not listed every object after {0:?}")]
    Timeout(Duration),
}

/// The engine's [`Cluster`] over a Kubernetes API server, through `kube`.
///
/// Build its client with `kube::Config::default_retry` off, as
/// karpenter-controller does: kube's default client retries a `429` for
/// minutes, and an eviction a PodDisruptionBudget refuses is a `429` the
/// driver should hear at once (it tries again next round).
///
/// Create it inside a tokio runtime (it starts its watches there); wait for
/// [`wait_until_synced`](Self::wait_until_synced) before the first plan
/// (until then, reads fail with a retryable [`ClusterError::Api`]). Clones
/// share the watches, which stop when the last clone goes.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use karpenter_core::driver::Driver;
/// use karpenter_fake::FakeCloudProvider;
/// use karpenter_kube::KubeCluster;
///
/// let client = kube::Client::try_default().await?;
/// let cluster = KubeCluster::new(client);
/// cluster.wait_until_synced(std::time::Duration::from_secs(60)).await?;
/// let provider = Arc::new(FakeCloudProvider::new(vec![]));
/// let mut driver = Driver::new(provider, Arc::new(cluster));
/// driver.reconcile(jiff::Timestamp::now()).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct KubeCluster {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    stores: Stores,
    node_claims_written: Overlay<NodeClaim>,
    nodes_written: Overlay<Node>,
    params: PostParams,
    events: EventRecorder,
    synced: Arc<AtomicBool>,
    synced_changes: watch::Receiver<bool>,
    _reflectors: Reflectors,
}

impl fmt::Debug for KubeCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeCluster")
            .field("field_manager", &self.inner.params.field_manager)
            .field("synced", &self.is_synced())
            .finish_non_exhaustive()
    }
}

impl KubeCluster {
    /// A cluster over `client` with the default options; starts its watches.
    pub fn new(client: Client) -> Self {
        Self::with_options(client, KubeClusterOptions::default())
    }

    /// A cluster over `client`; starts its watches.
    pub fn with_options(client: Client, options: KubeClusterOptions) -> Self {
        let (stores, reflectors) = Stores::watch(&client, &watcher::Config::default(), &options);
        let synced = Arc::new(AtomicBool::new(false));
        let (tell, synced_changes) = watch::channel(false);
        {
            let stores = stores.clone();
            let synced = Arc::clone(&synced);
            tokio::spawn(async move {
                if stores.wait_until_ready().await.is_ok() {
                    synced.store(true, Ordering::Release);
                    tracing::info!("the watch caches have synced");
                    let _ = tell.send(true);
                }
            });
        }
        let params = PostParams {
            dry_run: false,
            field_manager: Some(options.field_manager),
        };
        KubeCluster {
            inner: Arc::new(Inner {
                client,
                stores,
                node_claims_written: Overlay::new(options.read_your_writes),
                nodes_written: Overlay::new(options.read_your_writes),
                params,
                events: options.events,
                synced,
                synced_changes,
                _reflectors: reflectors,
            }),
        }
    }

    /// Whether every watch has listed its objects once.
    pub fn is_synced(&self) -> bool {
        self.inner.synced.load(Ordering::Acquire)
    }

    /// Waits until every watch has listed its objects once, at most
    /// `timeout`.
    pub async fn wait_until_synced(&self, timeout: Duration) -> Result<(), SyncError> {
        let mut changes = self.inner.synced_changes.clone();
        match tokio::time::timeout(timeout, changes.wait_for(|synced| *synced)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(SyncError::Stopped),
            Err(_) => Err(SyncError::Timeout(timeout)),
        }
    }

    /// The client the cluster talks through.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The recorder the cluster's events go to.
    pub fn events(&self) -> &EventRecorder {
        &self.inner.events
    }

    fn ready(&self) -> Result<(), ClusterError> {
        if self.is_synced() {
            Ok(())
        } else {
            Err(retryable(
                "the watch caches have not listed every object yet".into(),
            ))
        }
    }

    fn claims(&self) -> Api<NodeClaim> {
        Api::all(self.inner.client.clone())
    }

    fn node_api(&self) -> Api<Node> {
        Api::all(self.inner.client.clone())
    }

    fn claim_target<'a>(&'a self, api: &'a Api<NodeClaim>, name: &'a str) -> Target<'a, NodeClaim> {
        Target {
            api,
            params: &self.inner.params,
            kind: "NodeClaim",
            name,
        }
    }

    fn node_target<'a>(&'a self, api: &'a Api<Node>, name: &'a str) -> Target<'a, Node> {
        Target {
            api,
            params: &self.inner.params,
            kind: "Node",
            name,
        }
    }

    /// The claim `name` as last read or written.
    fn cached_claim(&self, name: &str) -> Option<NodeClaim> {
        let inner = &self.inner;
        inner
            .node_claims_written
            .get(&inner.stores.node_claims, None, name)
            .map(Arc::unwrap_or_clone)
    }

    /// The node `name` as last read or written.
    fn cached_node(&self, name: &str) -> Option<Node> {
        let inner = &self.inner;
        inner
            .nodes_written
            .get(&inner.stores.nodes, None, name)
            .map(Arc::unwrap_or_clone)
    }
}

/// Owned copies of shared objects.
fn owned<K: Clone>(objects: Vec<Arc<K>>) -> Vec<K> {
    objects.into_iter().map(Arc::unwrap_or_clone).collect()
}

/// `object` as JSON, for diffing.
fn json<K: serde::Serialize>(
    kind: &'static str,
    name: &str,
    object: &K,
) -> Result<Value, ClusterError> {
    serde_json::to_value(object).map_err(|error| ClusterError::Api {
        message: format!("{kind} {name} cannot be written as JSON: {error}"),
        retryable: false,
        source: Some(Box::new(error)),
    })
}

/// The name of `object`, or the error a nameless write deserves.
fn name_of<'a>(kind: &'static str, name: Option<&'a String>) -> Result<&'a str, ClusterError> {
    name.map(String::as_str).ok_or_else(|| ClusterError::Api {
        message: format!("a {kind} without metadata.name cannot be written"),
        retryable: false,
        source: None,
    })
}

#[async_trait]
impl Cluster for KubeCluster {
    async fn node_pools(&self) -> Result<Vec<NodePool>, ClusterError> {
        self.ready()?;
        Ok(self.hashed_pools())
    }

    /// The watch cache's Nodes (this process's writes read over them),
    /// shared: no Node is copied.
    async fn nodes(&self) -> Result<Vec<Arc<Node>>, ClusterError> {
        self.ready()?;
        let inner = &self.inner;
        Ok(inner.nodes_written.read(&inner.stores.nodes))
    }

    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError> {
        self.ready()?;
        let inner = &self.inner;
        let mut claims = owned(inner.node_claims_written.read(&inner.stores.node_claims));
        rehash(&self.hashed_pools(), &mut claims);
        Ok(claims)
    }

    /// The watch cache's pods, read as planning reads them when they
    /// arrived; shared: no pod is copied.
    async fn pods(&self) -> Result<Vec<Arc<PodInfo>>, ClusterError> {
        self.ready()?;
        Ok(self.inner.stores.pods.state())
    }

    async fn daemon_sets(&self) -> Result<Vec<DaemonSet>, ClusterError> {
        self.ready()?;
        Ok(owned(self.inner.stores.daemon_sets.state()))
    }

    async fn pod_disruption_budgets(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        self.ready()?;
        let stores = &self.inner.stores;
        Ok(owned(stores.pod_disruption_budgets.state()))
    }

    async fn persistent_volumes(&self) -> Result<Vec<PersistentVolume>, ClusterError> {
        self.ready()?;
        let stores = &self.inner.stores;
        Ok(owned(stores.persistent_volumes.state()))
    }

    async fn persistent_volume_claims(&self) -> Result<Vec<PersistentVolumeClaim>, ClusterError> {
        self.ready()?;
        let stores = &self.inner.stores;
        Ok(owned(stores.persistent_volume_claims.state()))
    }

    async fn storage_classes(&self) -> Result<Vec<StorageClass>, ClusterError> {
        self.ready()?;
        Ok(owned(self.inner.stores.storage_classes.state()))
    }

    async fn csi_nodes(&self) -> Result<Vec<CSINode>, ClusterError> {
        self.ready()?;
        Ok(owned(self.inner.stores.csi_nodes.state()))
    }

    async fn namespaces(&self) -> Result<Vec<Namespace>, ClusterError> {
        self.ready()?;
        Ok(owned(self.inner.stores.namespaces.state()))
    }

    async fn node_overlays(&self) -> Result<Vec<NodeOverlay>, ClusterError> {
        self.ready()?;
        let overlays = self.inner.stores.node_overlays.as_ref();
        Ok(overlays
            .map(|store| owned(store.state()))
            .unwrap_or_default())
    }

    async fn capacity_buffers(&self) -> Result<Vec<CapacityBuffer>, ClusterError> {
        self.ready()?;
        let stores = self.inner.stores.capacity_buffers.as_ref();
        Ok(stores
            .map(|stores| owned(stores.buffers.state()))
            .unwrap_or_default())
    }

    async fn pod_templates(&self) -> Result<Vec<PodTemplate>, ClusterError> {
        self.ready()?;
        let stores = self.inner.stores.capacity_buffers.as_ref();
        Ok(stores
            .map(|stores| owned(stores.pod_templates.state()))
            .unwrap_or_default())
    }

    /// The Deployments, StatefulSets and ReplicaSets, as read when their
    /// events arrived.
    async fn scalable_workloads(&self) -> Result<Vec<ScalableWorkload>, ClusterError> {
        self.ready()?;
        let stores = self.inner.stores.capacity_buffers.as_ref();
        Ok(stores.map(BufferStores::workloads).unwrap_or_default())
    }

    async fn create_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let mut claim = claim;
        let name = name_of("NodeClaim", claim.metadata.name.as_ref())?.to_owned();
        let finalizers = claim.metadata.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == TERMINATION_FINALIZER) {
            finalizers.push(TERMINATION_FINALIZER.to_owned());
        }
        // The status is the status subresource's: the create drops it.
        let status = claim.status.take();
        let api = self.claims();
        let created = api
            .create(&self.inner.params, &claim)
            .await
            .map_err(|e| cluster_error("NodeClaim", &name, e))?;
        let written = match status {
            Some(status) if status != Default::default() => self
                .claim_target(&api, &name)
                .modify(Some(created.clone()), Part::Status, |c| {
                    c.status = Some(status.clone());
                    true
                })
                .await?
                .unwrap_or(created),
            _ => created,
        };
        self.inner.node_claims_written.wrote(written);
        Ok(())
    }

    async fn update_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let name = name_of("NodeClaim", claim.metadata.name.as_ref())?.to_owned();
        let api = self.claims();
        let target = self.claim_target(&api, &name);
        let inner = &self.inner;
        let base = target
            .base_of(
                &claim,
                &inner.node_claims_written,
                &inner.stores.node_claims,
            )
            .await?;
        let (base_json, desired_json) = (
            json("NodeClaim", &name, &base)?,
            json("NodeClaim", &name, &claim)?,
        );
        // Finalizers are not the driver's to drop through an update: the
        // termination finalizer goes in `remove_node_claim`.
        let main = merge::diff(
            &without_finalizers(merge::writable(&base_json)),
            &without_finalizers(merge::writable(&desired_json)),
        );
        let status = merge::diff(&merge::status(&base_json), &merge::status(&desired_json));
        let mut current = Some(base);
        let mut last = None;
        if let Some(patch) = main
            && let Some(written) = target.patch(current.take(), Part::Main, &patch).await?
        {
            current = Some(written.clone());
            last = Some(written);
        }
        if let Some(patch) = status
            && let Some(written) = target.patch(current.take(), Part::Status, &patch).await?
        {
            last = Some(written);
        }
        if let Some(written) = last {
            self.inner.node_claims_written.wrote(written);
        }
        Ok(())
    }

    async fn delete_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        let deleted = self
            .claims()
            .delete(name, &DeleteParams::default())
            .await
            .map_err(|e| cluster_error("NodeClaim", name, e))?;
        match deleted.left() {
            Some(deleting) => self.inner.node_claims_written.wrote(deleting),
            None => self.inner.node_claims_written.removed(None, name),
        }
        Ok(())
    }

    async fn remove_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        let api = self.claims();
        let target = self.claim_target(&api, name);
        let claim = match self.cached_claim(name) {
            Some(claim) => claim,
            None => target.fresh().await?,
        };
        // Its Node goes first: once the claim is gone nothing names it.
        if let Some(node) = self.node_of(&claim) {
            match self
                .node_api()
                .delete(&node, &DeleteParams::default())
                .await
            {
                Ok(_) => self.inner.nodes_written.removed(None, &node),
                Err(error) if is_not_found(&error) => {}
                Err(error) => return Err(cluster_error("Node", &node, error)),
            }
        }
        let mut claim = claim;
        if claim.metadata.deletion_timestamp.is_none() {
            match api.delete(name, &DeleteParams::default()).await {
                Ok(deleted) => match deleted.left() {
                    Some(deleting) => claim = deleting,
                    None => {
                        self.inner.node_claims_written.removed(None, name);
                        return Ok(());
                    }
                },
                Err(error) => return Err(cluster_error("NodeClaim", name, error)),
            }
        }
        let released = target
            .modify(Some(claim), Part::Main, |c| {
                let finalizers = c.metadata.finalizers.get_or_insert_with(Vec::new);
                let before = finalizers.len();
                finalizers.retain(|f| f != TERMINATION_FINALIZER);
                finalizers.len() != before
            })
            .await;
        match released {
            Ok(_) | Err(ClusterError::NotFound { .. }) => {
                self.inner.node_claims_written.removed(None, name);
                Ok(())
            }
            Err(error) => Err(error),
        }
    }

    async fn update_node(&self, node: Node) -> Result<(), ClusterError> {
        let name = name_of("Node", node.metadata.name.as_ref())?.to_owned();
        let api = self.node_api();
        let target = self.node_target(&api, &name);
        let inner = &self.inner;
        let base = target
            .base_of(&node, &inner.nodes_written, &inner.stores.nodes)
            .await?;
        let main = merge::diff(
            &without_finalizers(merge::writable(&json("Node", &name, &base)?)),
            &without_finalizers(merge::writable(&json("Node", &name, &node)?)),
        );
        if let Some(patch) = main
            && let Some(written) = target.patch(Some(base), Part::Main, &patch).await?
        {
            self.inner.nodes_written.wrote(written);
        }
        Ok(())
    }

    async fn taint_node(&self, name: &str, taint: Taint) -> Result<(), ClusterError> {
        let api = self.node_api();
        let written = self
            .node_target(&api, name)
            .modify(self.cached_node(name), Part::Main, |node| {
                let taints = node
                    .spec
                    .get_or_insert_with(Default::default)
                    .taints
                    .get_or_insert_with(Vec::new);
                if taints
                    .iter()
                    .any(|t| t.key == taint.key && t.effect == taint.effect)
                {
                    return false;
                }
                taints.push(taint.clone());
                true
            })
            .await?;
        if let Some(written) = written {
            self.inner.nodes_written.wrote(written);
        }
        Ok(())
    }

    async fn untaint_node(&self, name: &str, key: &str) -> Result<(), ClusterError> {
        let api = self.node_api();
        let written = self
            .node_target(&api, name)
            .modify(self.cached_node(name), Part::Main, |node| {
                let Some(taints) = node.spec.as_mut().and_then(|s| s.taints.as_mut()) else {
                    return false;
                };
                let before = taints.len();
                taints.retain(|t| t.key != key);
                taints.len() != before
            })
            .await?;
        if let Some(written) = written {
            self.inner.nodes_written.wrote(written);
        }
        Ok(())
    }

    async fn evict_pod(&self, pod: &PodKey) -> Result<Eviction, ClusterError> {
        let api: Api<Pod> = Api::namespaced(self.inner.client.clone(), pod.namespace());
        let params = EvictParams {
            delete_options: None,
            post_options: self.inner.params.clone(),
        };
        match api.evict(pod.name(), &params).await {
            Ok(_) => Ok(Eviction::Evicted),
            Err(error) if is_not_found(&error) => Ok(Eviction::Evicted),
            Err(error) if errors::is_budget_refusal(&error) => Ok(Eviction::Blocked),
            Err(error) => Err(cluster_error("Pod", pod.as_str(), error)),
        }
    }

    async fn nominate_pod(&self, pod: &PodKey, node: &str) -> Result<(), ClusterError> {
        // The driver nominates pods it read from the cache: one the cache
        // no longer has is gone.
        if self
            .inner
            .stores
            .pods
            .get(Some(pod.namespace()), pod.name())
            .is_none()
        {
            return Err(ClusterError::NotFound {
                kind: "Pod",
                name: pod.as_str().to_owned(),
            });
        }
        // As upstream: an event, not a write to the pod (the kube-scheduler
        // binds it).
        let is_claim = self.cached_claim(node).is_some();
        self.inner.events.record(nominated(pod, node, is_claim));
        Ok(())
    }
}

impl KubeCluster {
    /// The NodePools, each with its template's hash annotated as upstream's
    /// hash controller keeps it (see [`NodePool::annotate_hash`]), whether or
    /// not [`write_hashes`](Self::write_hashes) has written it yet.
    fn hashed_pools(&self) -> Vec<NodePool> {
        let mut pools = owned(self.inner.stores.node_pools.state());
        for pool in &mut pools {
            pool.annotate_hash();
        }
        pools
    }

    /// Writes what upstream's NodePool hash controller writes: each pool's
    /// template hash, and the hash of each claim made under another hash
    /// version (a claim upstream Karpenter made) brought to this one, so it
    /// is not taken for drifted. Reads show both already; this makes them
    /// visible to everyone else. Returns how many objects it wrote.
    pub async fn write_hashes(&self) -> Result<usize, ClusterError> {
        self.ready()?;
        let mut written = 0;
        let api: Api<NodePool> = Api::all(self.inner.client.clone());
        for pool in self.inner.stores.node_pools.state() {
            let mut hashed = (*pool).clone();
            if !hashed.annotate_hash() {
                continue;
            }
            let name = hashed.metadata.name.clone().unwrap_or_default();
            let target = Target {
                api: &api,
                params: &self.inner.params,
                kind: "NodePool",
                name: &name,
            };
            match target
                .modify(Some((*pool).clone()), Part::Main, NodePool::annotate_hash)
                .await
            {
                Ok(_) => written += 1,
                Err(ClusterError::NotFound { .. }) => {}
                Err(error) => return Err(error),
            }
        }
        let stored = owned(
            self.inner
                .node_claims_written
                .read(&self.inner.stores.node_claims),
        );
        let mut rehashed = stored.clone();
        rehash(&self.hashed_pools(), &mut rehashed);
        for (before, after) in stored.iter().zip(rehashed) {
            if before.metadata.annotations != after.metadata.annotations {
                self.update_node_claim(after).await?;
                written += 1;
            }
        }
        Ok(written)
    }

    /// The name of the claim's Node: its status says, or the Node with its
    /// provider ID.
    fn node_of(&self, claim: &NodeClaim) -> Option<String> {
        let status = claim.status.as_ref()?;
        if let Some(node) = &status.node_name {
            return Some(node.clone());
        }
        let provider_id = status.provider_id.as_deref()?;
        self.inner
            .stores
            .nodes
            .find(|node| {
                node.spec.as_ref().and_then(|s| s.provider_id.as_deref()) == Some(provider_id)
            })
            .and_then(|node| node.metadata.name.clone())
    }
}

/// Brings each claim's hash to its pool's version (see
/// [`NodePool::rehash_claim`]).
fn rehash(pools: &[NodePool], claims: &mut [NodeClaim]) {
    for claim in claims {
        let pool_name = claim
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(NODE_POOL_LABEL_KEY))
            .cloned();
        if let Some(pool) = pools
            .iter()
            .find(|p| p.metadata.name.is_some() && p.metadata.name == pool_name)
        {
            pool.rehash_claim(claim);
        }
    }
}

/// `writable` without `metadata.finalizers`.
fn without_finalizers(mut writable: Value) -> Value {
    if let Some(metadata) = writable.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("finalizers");
    }
    writable
}
