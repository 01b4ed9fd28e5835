//! [`InMemoryCluster`]: a [`Cluster`] held in memory that also plays the
//! kubelet, the kube-scheduler and the ReplicaSet controller.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::core::v1::{
    Namespace, Node, NodeCondition, NodeSpec, NodeStatus, PersistentVolume, PersistentVolumeClaim,
    Pod, PodStatus, PodTemplate, Taint,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use karpenter_core::api::{
    CapacityBuffer, Condition, NodeClaim, NodeOverlay, NodePool, condition_types,
};
use karpenter_core::capacity_buffers::ScalableWorkload;
use karpenter_core::cluster::{Cluster, ClusterError, Eviction, eviction_refused};
use karpenter_core::provisioning::{PodKey, bound_node, is_daemon_pod, is_terminal, pod_key};
use karpenter_core::resources::{ResourceList, pod_requests};
use karpenter_core::scheduling::{LABEL_HOSTNAME, tolerates_all};
use karpenter_core::snapshot::{PodInfo, PodInterner};

use crate::deployments::{Running, key_of, surplus};
use crate::generate::workload::unschedulable_status;

/// What the cluster holds.
#[derive(Debug, Default)]
struct Objects {
    /// Bumped by every write to the objects the [`Cluster`] reads return (see
    /// [`Cluster::revision`]): the cluster's own changes (the kubelet, the
    /// scheduler, the ReplicaSet) and everyone else's.
    revision: u64,
    now: Timestamp,
    /// How long after a launch the kubelet registers the Node.
    registration_delay: Duration,
    node_pools: BTreeMap<String, NodePool>,
    /// Nodes by name, shared as a watch cache holds them (a read hands out
    /// `Arc`s; a write changes its own copy, [`Arc::make_mut`]).
    nodes: BTreeMap<String, Arc<Node>>,
    node_claims: BTreeMap<String, NodeClaim>,
    /// Pods by key, shared as a watch cache holds them: a read hands out
    /// `Arc`s, a write changes its own copy ([`Arc::make_mut`]).
    pods: BTreeMap<PodKey, Arc<Pod>>,
    /// Each pod as planning last read it, with the version it was read
    /// from: a pod written since is another `Arc` (a write to a shared pod
    /// copies it), so it is read again; the others are not.
    pod_infos: BTreeMap<PodKey, (Arc<Pod>, Arc<PodInfo>)>,
    /// Shares the specs of the pods read (replicas of a template keep one).
    interner: PodInterner,
    daemon_sets: Vec<DaemonSet>,
    pod_disruption_budgets: Vec<PodDisruptionBudget>,
    /// PersistentVolumes by name.
    persistent_volumes: BTreeMap<String, PersistentVolume>,
    /// PersistentVolumeClaims by `namespace/name`.
    persistent_volume_claims: BTreeMap<String, PersistentVolumeClaim>,
    /// StorageClasses by name.
    storage_classes: BTreeMap<String, StorageClass>,
    /// CSINodes by name (their Node's).
    csi_nodes: BTreeMap<String, CSINode>,
    /// Namespaces by name.
    namespaces: BTreeMap<String, Namespace>,
    /// NodeOverlays by name.
    node_overlays: BTreeMap<String, NodeOverlay>,
    /// CapacityBuffers by `namespace/name`.
    capacity_buffers: BTreeMap<String, CapacityBuffer>,
    /// PodTemplates by `namespace/name`.
    pod_templates: BTreeMap<String, PodTemplate>,
    /// Deployments, StatefulSets and ReplicaSets by kind, namespace and name.
    scalable_workloads: BTreeMap<(String, String, String), ScalableWorkload>,
    /// The Deployments whose pods the cluster runs, by `namespace/name`.
    deployments: BTreeMap<String, Running>,
}

impl Objects {
    /// Notes a change to what the reads return.
    fn changed(&mut self) {
        self.revision += 1;
    }
}

/// `namespace/name` of an object (`default` when it has no namespace).
fn namespaced(metadata: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        metadata.namespace.as_deref().unwrap_or("default"),
        metadata.name.as_deref().unwrap_or_default()
    )
}

/// The workload pods of an [`InMemoryCluster`] (see
/// [`pod_census`](InMemoryCluster::pod_census)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodCensus {
    /// The pods not bound to a node, by key, in key order.
    pub pending: Vec<PodKey>,
    /// How many are bound to a node.
    pub running: usize,
}

/// A [`Cluster`] held in memory, which also plays the parts of Kubernetes the
/// driver relies on: the kubelet registers a Node for each launched NodeClaim
/// (after a delay), the kube-scheduler binds each pending pod to the node it
/// was nominated to once that node is ready and has room, and a ReplicaSet
/// brings evicted pods back pending.
///
/// Time is what [`InMemoryCluster::tick`] was last given; nothing happens
/// between ticks, so a test steps the cluster as it likes.
#[derive(Debug)]
pub struct InMemoryCluster {
    objects: Mutex<Objects>,
}

impl Default for InMemoryCluster {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryCluster {
    /// An empty cluster whose kubelet registers a launched claim's Node 30
    /// seconds after the launch.
    pub fn new() -> Self {
        InMemoryCluster {
            objects: Mutex::new(Objects {
                registration_delay: Duration::from_secs(30),
                ..Objects::default()
            }),
        }
    }

    /// This cluster with another registration delay.
    pub fn with_registration_delay(self, delay: Duration) -> Self {
        self.set_registration_delay(delay);
        self
    }

    /// Changes the registration delay (a kubelet that got slow, say).
    pub fn set_registration_delay(&self, delay: Duration) {
        self.write().registration_delay = delay;
    }

    /// The objects, to read (or to write, calling [`Objects::changed`] when
    /// something changed).
    fn lock(&self) -> MutexGuard<'_, Objects> {
        // A panic while holding the lock leaves plain data behind: keep going.
        self.objects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The objects, to write: the revision is bumped whether or not the
    /// caller changes anything (a bump too many only costs a replan).
    fn write(&self) -> MutexGuard<'_, Objects> {
        let mut objects = self.lock();
        objects.changed();
        objects
    }

    /// Adds or replaces a NodePool, annotated with its template hash as
    /// upstream's hash controller annotates it (`karpenter.sh/nodepool-hash`):
    /// the driver copies it onto the claims it makes, so a later change of
    /// the template drifts them.
    pub fn apply_node_pool(&self, mut pool: NodePool) {
        pool.annotate_hash();
        let name = pool.metadata.name.clone().unwrap_or_default();
        self.write().node_pools.insert(name, pool);
    }

    /// Adds or replaces a NodeOverlay (read with the `NodeOverlay` gate on).
    pub fn apply_node_overlay(&self, overlay: NodeOverlay) {
        let name = overlay.metadata.name.clone().unwrap_or_default();
        self.write().node_overlays.insert(name, overlay);
    }

    /// Adds or replaces a pod (pending unless it names a node).
    pub fn apply_pod(&self, pod: Pod) {
        self.write().pods.insert(pod_key(&pod), Arc::new(pod));
    }

    /// Deletes a pod, as scaling a deployment down does (its node's claim
    /// notes the pod event).
    pub fn delete_pod(&self, key: &PodKey) -> bool {
        let mut objects = self.lock();
        let removed = remove_pod(&mut objects, key);
        if removed {
            objects.changed();
        }
        removed
    }

    /// Adds or replaces a Node (by name): a cluster's starting nodes. A
    /// managed Node's NodeClaim goes in through
    /// [`create_node_claim`](Cluster::create_node_claim), and its instance
    /// into the cloud (see `FakeCloudProvider::adopt`).
    pub fn apply_node(&self, node: Node) {
        let name = node.metadata.name.clone().unwrap_or_default();
        self.write().nodes.insert(name, Arc::new(node));
    }

    /// Adds a DaemonSet.
    pub fn apply_daemon_set(&self, daemon_set: DaemonSet) {
        self.write().daemon_sets.push(daemon_set);
    }

    /// Adds or replaces a PersistentVolume (by name).
    pub fn apply_persistent_volume(&self, volume: PersistentVolume) {
        let name = volume.metadata.name.clone().unwrap_or_default();
        self.write().persistent_volumes.insert(name, volume);
    }

    /// Adds or replaces a PersistentVolumeClaim (by namespace and name).
    pub fn apply_persistent_volume_claim(&self, claim: PersistentVolumeClaim) {
        let key = namespaced(&claim.metadata);
        self.write().persistent_volume_claims.insert(key, claim);
    }

    /// Adds or replaces a CSINode (by name, its Node's): the Node's volume
    /// attach limits.
    pub fn apply_csi_node(&self, csi_node: CSINode) {
        let name = csi_node.metadata.name.clone().unwrap_or_default();
        self.write().csi_nodes.insert(name, csi_node);
    }

    /// Adds or replaces a Namespace (by name): its labels are what pod
    /// (anti-)affinity terms' `namespaceSelector`s select.
    pub fn apply_namespace(&self, namespace: Namespace) {
        let name = namespace.metadata.name.clone().unwrap_or_default();
        self.write().namespaces.insert(name, namespace);
    }

    /// Adds or replaces a CapacityBuffer (by namespace and name): headroom
    /// the driver keeps with the `CapacityBuffer` feature gate on.
    pub fn apply_capacity_buffer(&self, buffer: CapacityBuffer) {
        let key = namespaced(&buffer.metadata);
        self.write().capacity_buffers.insert(key, buffer);
    }

    /// Deletes a CapacityBuffer; whether there was one.
    pub fn delete_capacity_buffer(&self, namespace: &str, name: &str) -> bool {
        let key = format!("{namespace}/{name}");
        self.write().capacity_buffers.remove(&key).is_some()
    }

    /// Adds or replaces a PodTemplate (by namespace and name), which a
    /// CapacityBuffer's `podTemplateRef` may name.
    pub fn apply_pod_template(&self, template: PodTemplate) {
        let key = namespaced(&template.metadata);
        self.write().pod_templates.insert(key, template);
    }

    /// Adds or replaces a workload (by kind, namespace and name), which a
    /// CapacityBuffer's `scalableRef` may name. Only its template and
    /// replicas are kept: it runs no pods here.
    pub fn apply_scalable_workload(&self, workload: ScalableWorkload) {
        let key = (
            workload.kind.clone(),
            workload.namespace.clone(),
            workload.name.clone(),
        );
        self.write().scalable_workloads.insert(key, workload);
    }

    /// Runs a Deployment (by namespace and name): the pods already here that
    /// are its own (owned by it, or named `<deployment>-<n>` in its
    /// namespace) are kept, and pods are made pending or deleted to hold
    /// `spec.replicas` (1 when unset), as [`scale_deployment`](Self::scale_deployment)
    /// does. A CapacityBuffer's `scalableRef` sees it too. Returns how many
    /// pods were made and deleted.
    pub fn apply_deployment(&self, deployment: &Deployment) -> (usize, usize) {
        let mut running = Running::of(deployment);
        let replicas = deployment.spec.replicas.unwrap_or(1);
        let mut objects = self.write();
        running.adopt(objects.pods.values().map(Arc::as_ref));
        let key = format!("{}/{}", running.namespace, running.name);
        objects.deployments.insert(key, running);
        let workload = ScalableWorkload::from(deployment);
        objects.scalable_workloads.insert(
            (
                workload.kind.clone(),
                workload.namespace.clone(),
                workload.name.clone(),
            ),
            workload,
        );
        let name = deployment.metadata.name.clone().unwrap_or_default();
        let namespace = deployment
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        scale(&mut objects, &namespace, &name, replicas).unwrap_or_default()
    }

    /// Scales a Deployment [applied](Self::apply_deployment) before to
    /// `replicas`: new pods `<deployment>-<n>` (a name never reused) are made
    /// pending, created now; surplus pods are deleted as a ReplicaSet picks
    /// them, those not bound to a node first, then the newest. Returns how
    /// many were made and deleted; [`ClusterError::NotFound`] for a
    /// Deployment the cluster does not run.
    pub fn scale_deployment(
        &self,
        namespace: &str,
        name: &str,
        replicas: i32,
    ) -> Result<(usize, usize), ClusterError> {
        scale(&mut self.write(), namespace, name, replicas)
    }

    /// Adds or replaces a StorageClass (by name).
    pub fn apply_storage_class(&self, class: StorageClass) {
        let name = class.metadata.name.clone().unwrap_or_default();
        self.write().storage_classes.insert(name, class);
    }

    /// Adds or replaces (by namespace and name) a PodDisruptionBudget. Its
    /// status is taken as given: a budget that allows no disruption refuses
    /// the eviction of every pod it selects, one that allows some lets them
    /// through (nothing here recounts it).
    pub fn apply_pod_disruption_budget(&self, budget: PodDisruptionBudget) {
        let mut objects = self.write();
        let budgets = &mut objects.pod_disruption_budgets;
        let same = |b: &PodDisruptionBudget| {
            b.metadata.namespace == budget.metadata.namespace
                && b.metadata.name == budget.metadata.name
        };
        match budgets.iter_mut().find(|b| same(b)) {
            Some(existing) => *existing = budget,
            None => budgets.push(budget),
        }
    }

    /// Sets a condition on a node (a failing kubelet, an interruption
    /// notice), replacing one of the same type.
    pub fn set_node_condition(&self, node: &str, condition: NodeCondition) -> bool {
        let mut objects = self.lock();
        let Some(node) = objects.nodes.get_mut(node) else {
            return false;
        };
        put_condition(Arc::make_mut(node), condition);
        objects.changed();
        true
    }

    /// Shuts a node down, as the cloud does when it takes the instance
    /// away: the Node turns NotReady and its pods stop (a DaemonSet's go,
    /// the others come back pending, as their ReplicaSets recreate them).
    /// Whether there was such a node.
    pub fn shut_down_node(&self, name: &str) -> bool {
        let mut objects = self.lock();
        let now = objects.now;
        let Some(node) = objects.nodes.get_mut(name) else {
            return false;
        };
        put_condition(
            Arc::make_mut(node),
            NodeCondition {
                type_: "Ready".to_owned(),
                status: "False".to_owned(),
                reason: Some("NodeShutdown".to_owned()),
                last_transition_time: Some(Time(now)),
                ..NodeCondition::default()
            },
        );
        evict(&mut objects, name);
        objects.changed();
        true
    }

    /// A copy of every pod.
    pub fn pod_list(&self) -> Vec<Pod> {
        self.lock().pods.values().map(|p| Pod::clone(p)).collect()
    }

    /// The workload pods (not a DaemonSet's, not finished) waiting for a
    /// node, and how many are bound to one; nothing is copied but the keys
    /// of the waiting ones.
    pub fn pod_census(&self) -> PodCensus {
        let objects = self.lock();
        let mut census = PodCensus::default();
        for (key, pod) in &objects.pods {
            if is_daemon_pod(pod) || is_terminal(pod) {
                continue;
            }
            if bound_node(pod).is_some() {
                census.running += 1;
            } else {
                census.pending.push(key.clone());
            }
        }
        census
    }

    /// A copy of every Node.
    pub fn node_list(&self) -> Vec<Node> {
        self.lock().nodes.values().map(|n| Node::clone(n)).collect()
    }

    /// A copy of every NodeClaim.
    pub fn node_claim_list(&self) -> Vec<NodeClaim> {
        self.lock().node_claims.values().cloned().collect()
    }

    /// Moves the cluster to `now`: the kubelet registers the Nodes of claims
    /// launched at least the registration delay ago, then the scheduler binds
    /// nominated pods.
    pub fn tick(&self, now: Timestamp) {
        let mut objects = self.lock();
        objects.now = now;
        let delay =
            SignedDuration::try_from(objects.registration_delay).unwrap_or(SignedDuration::MAX);
        // Only the claims whose Node is not there yet are read: a tick at
        // every step of a long replay would otherwise go through every claim.
        let registered: Vec<(String, Node)> = objects
            .node_claims
            .iter()
            .filter(|(name, _)| !objects.nodes.contains_key(name.as_str()))
            .filter(|(_, c)| c.metadata.deletion_timestamp.is_none())
            .filter(|(_, c)| {
                c.status
                    .as_ref()
                    .and_then(|s| s.provider_id.as_ref())
                    .is_some()
                    && launched_at(c)
                        .is_some_and(|t| t.saturating_add(delay).is_ok_and(|t| t <= now))
            })
            .map(|(name, claim)| (name.clone(), node_for(claim, name, now)))
            .collect();
        let mut changed = !registered.is_empty();
        for (name, node) in registered {
            objects.nodes.insert(name, Arc::new(node));
        }
        changed |= bind_nominated(&mut objects, now);
        // A tick that registers and binds nothing leaves the reads as they
        // were: the revision stays, so that a quiet cluster stays quiet.
        if changed {
            objects.changed();
        }
    }
}

/// Sets a condition on a node, replacing one of the same type.
fn put_condition(node: &mut Node, condition: NodeCondition) {
    let conditions = node
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != condition.type_);
    conditions.push(condition);
}

/// When the claim's instance launched.
fn launched_at(claim: &NodeClaim) -> Option<Timestamp> {
    let launched: &Condition = claim.condition(condition_types::LAUNCHED)?;
    launched.is_true().then_some(())?;
    launched.last_transition_time.as_ref().map(|t| t.0)
}

/// The Node a kubelet registers for the claim: its labels, taints, capacity
/// and provider ID, ready at once.
fn node_for(claim: &NodeClaim, name: &str, now: Timestamp) -> Node {
    let mut labels = claim.metadata.labels.clone().unwrap_or_default();
    labels.insert(LABEL_HOSTNAME.to_owned(), name.to_owned());
    let status = claim.status.clone().unwrap_or_default();
    let mut taints: Vec<Taint> = claim.spec.taints().to_vec();
    taints.extend_from_slice(claim.spec.startup_taints());
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(labels),
            creation_timestamp: Some(Time(now)),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            provider_id: status.provider_id,
            taints: (!taints.is_empty()).then_some(taints),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: status.capacity.map(|q| q.as_map().clone()),
            allocatable: status.allocatable.map(|q| q.as_map().clone()),
            conditions: Some(vec![NodeCondition {
                type_: "Ready".to_owned(),
                status: "True".to_owned(),
                last_transition_time: Some(Time(now)),
                ..NodeCondition::default()
            }]),
            ..NodeStatus::default()
        }),
    }
}

/// What a pod requests; a pod whose requests do not parse asks for nothing.
fn requests(pod: &Pod) -> ResourceList {
    pod.spec
        .as_ref()
        .and_then(|s| pod_requests(s).ok())
        .unwrap_or_default()
}

/// Binds each pending pod nominated to a ready, schedulable node it
/// tolerates and fits on; whether it bound any.
fn bind_nominated(objects: &mut Objects, now: Timestamp) -> bool {
    // The nodes pending pods are nominated to: only their pods' requests
    // are added up (none at all, most ticks, when no pod waits).
    let targets: std::collections::BTreeSet<&str> = objects
        .pods
        .values()
        .filter(|pod| bound_node(pod).is_none())
        .filter_map(|pod| pod.status.as_ref()?.nominated_node_name.as_deref())
        .collect();
    if targets.is_empty() {
        return false;
    }
    let mut used: BTreeMap<String, ResourceList> = BTreeMap::new();
    for pod in objects.pods.values() {
        if let Some(node) = bound_node(pod).filter(|node| targets.contains(node)) {
            let entry = used.entry(node.to_owned()).or_default();
            *entry = entry
                .checked_add(&requests(pod))
                .unwrap_or_else(|| entry.clone());
        }
    }
    let mut bound = std::collections::BTreeSet::new();
    let Objects { pods, nodes, .. } = objects;
    for pod in pods.values_mut() {
        if bound_node(pod).is_some() {
            continue;
        }
        let Some(target) = pod
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone())
        else {
            continue;
        };
        let Some(node) = nodes.get(&target) else {
            continue;
        };
        if !schedulable(node, pod) {
            continue;
        }
        let allocatable = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.as_ref())
            .and_then(|a| ResourceList::from_quantities(a).ok())
            .unwrap_or_default();
        let asks = requests(pod);
        let on_node = used.entry(target.clone()).or_default();
        let Some(after) = on_node.checked_add(&asks) else {
            continue;
        };
        if !after.fits(&allocatable) {
            continue;
        }
        *on_node = after;
        bound.insert(target.clone());
        let pod = Arc::make_mut(pod);
        pod.spec.get_or_insert_with(Default::default).node_name = Some(target);
        let status = pod.status.get_or_insert_with(PodStatus::default);
        status.phase = Some("Running".to_owned());
        status.nominated_node_name = None;
        status.start_time = Some(Time(now));
    }
    for node in &bound {
        pod_event(objects, node, now);
    }
    !bound.is_empty()
}

/// Notes a pod bound to or gone from `node` on its NodeClaim
/// (`status.lastPodEventTime`), as upstream's pod events controller does:
/// consolidation waits `consolidateAfter` from it.
fn pod_event(objects: &mut Objects, node: &str, now: Timestamp) {
    // A claim names its Node, or shares its provider ID.
    let provider_id = objects
        .nodes
        .get(node)
        .and_then(|n| n.spec.as_ref())
        .and_then(|s| s.provider_id.clone());
    for claim in objects.node_claims.values_mut() {
        let Some(status) = claim.status.as_mut() else {
            continue;
        };
        let joined = status.node_name.as_deref() == Some(node)
            || (provider_id.is_some() && status.provider_id == provider_id);
        if joined {
            status.last_pod_event_time = Some(Time(now));
        }
    }
}

/// Deletes a pod; its node's claim notes the event. Whether there was one.
fn remove_pod(objects: &mut Objects, key: &PodKey) -> bool {
    let Some(pod) = objects.pods.remove(key) else {
        return false;
    };
    if let Some(node) = bound_node(&pod) {
        let now = objects.now;
        pod_event(objects, node, now);
    }
    true
}

/// Whether a pod may be bound to the node: ready, not being deleted, every
/// taint tolerated.
fn schedulable(node: &Node, pod: &Pod) -> bool {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or_default();
    ready
        && node.metadata.deletion_timestamp.is_none()
        && tolerates_all(taints, tolerations).is_ok()
}

/// Takes every pod off `node` (see [`take_off`]).
fn evict(objects: &mut Objects, node: &str) {
    let on_node: Vec<PodKey> = objects
        .pods
        .iter()
        .filter(|(_, pod)| bound_node(pod) == Some(node))
        .map(|(key, _)| key.clone())
        .collect();
    for key in &on_node {
        take_off(objects, key);
    }
}

/// Takes the pod off its node: a DaemonSet pod goes, any other comes back
/// pending (as its ReplicaSet recreates it), marked unschedulable by the
/// scheduler (which binds only the pods nominated to a node).
fn take_off(objects: &mut Objects, key: &PodKey) {
    let now = objects.now;
    let Some(pod) = objects.pods.get_mut(key) else {
        return;
    };
    if is_daemon_pod(pod) {
        objects.pods.remove(key);
        return;
    }
    let pod = Arc::make_mut(pod);
    let node = pod.spec.as_mut().and_then(|spec| spec.node_name.take());
    pod.status = Some(unschedulable_status(Time(now)));
    if let Some(node) = node {
        pod_event(objects, &node, now);
    }
}

/// Brings the Deployment `namespace/name` to `replicas` pods (a negative
/// count as 0), keeping its workload's replicas in step.
fn scale(
    objects: &mut Objects,
    namespace: &str,
    name: &str,
    replicas: i32,
) -> Result<(usize, usize), ClusterError> {
    let key = format!("{namespace}/{name}");
    let now = objects.now;
    let Some(running) = objects.deployments.get_mut(&key) else {
        return Err(not_found("Deployment", &key));
    };
    let want = usize::try_from(replicas).unwrap_or(0);
    let owned: BTreeMap<PodKey, Arc<Pod>> = objects
        .pods
        .iter()
        .filter(|(_, p)| running.owns(p))
        .map(|(k, p)| (k.clone(), Arc::clone(p)))
        .collect();
    let workload_key = (
        "Deployment".to_owned(),
        namespace.to_owned(),
        name.to_owned(),
    );
    if let Some(workload) = objects.scalable_workloads.get_mut(&workload_key) {
        workload.replicas = Some(replicas.max(0));
    }
    let mut made = Vec::new();
    for _ in owned.len()..want {
        made.push(running.new_pod(now));
    }
    let deleted = surplus(running, &owned, want);
    for key in &deleted {
        remove_pod(objects, key);
    }
    let created = made.len();
    for pod in made {
        objects.pods.insert(key_of(&pod), Arc::new(pod));
    }
    Ok((created, deleted.len()))
}

fn not_found(kind: &'static str, name: &str) -> ClusterError {
    ClusterError::NotFound {
        kind,
        name: name.to_owned(),
    }
}

#[async_trait]
impl Cluster for InMemoryCluster {
    async fn node_pools(&self) -> Result<Vec<NodePool>, ClusterError> {
        Ok(self.lock().node_pools.values().cloned().collect())
    }

    async fn node_overlays(&self) -> Result<Vec<NodeOverlay>, ClusterError> {
        Ok(self.lock().node_overlays.values().cloned().collect())
    }

    /// The Nodes as stored: a Node not written since the last read is the
    /// same `Arc`, nothing copied.
    async fn nodes(&self) -> Result<Vec<Arc<Node>>, ClusterError> {
        Ok(self.lock().nodes.values().cloned().collect())
    }

    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError> {
        Ok(self.node_claim_list())
    }

    /// Its pods read as planning reads them, each version once (as a watch
    /// cache converts each version it is sent): a pod not written since the
    /// last call is handed out as read then.
    async fn pods(&self) -> Result<Vec<Arc<PodInfo>>, ClusterError> {
        let mut objects = self.lock();
        let Objects {
            pods,
            pod_infos,
            interner,
            ..
        } = &mut *objects;
        pod_infos.retain(|key, _| pods.contains_key(key));
        let infos = pods
            .iter()
            .map(|(key, pod)| match pod_infos.get(key) {
                Some((read, info)) if Arc::ptr_eq(read, pod) => Arc::clone(info),
                _ => {
                    let info = Arc::new(interner.pod_info(pod));
                    pod_infos.insert(key.clone(), (Arc::clone(pod), Arc::clone(&info)));
                    info
                }
            })
            .collect();
        // Specs of pods gone are let go once they are most of those held.
        if interner.distinct_specs() > 2 * pods.len() + 64 {
            interner.forget_unused();
        }
        Ok(infos)
    }

    async fn daemon_sets(&self) -> Result<Vec<DaemonSet>, ClusterError> {
        Ok(self.lock().daemon_sets.clone())
    }

    async fn pod_disruption_budgets(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        Ok(self.lock().pod_disruption_budgets.clone())
    }

    async fn persistent_volumes(&self) -> Result<Vec<PersistentVolume>, ClusterError> {
        Ok(self.lock().persistent_volumes.values().cloned().collect())
    }

    async fn persistent_volume_claims(&self) -> Result<Vec<PersistentVolumeClaim>, ClusterError> {
        Ok(self
            .lock()
            .persistent_volume_claims
            .values()
            .cloned()
            .collect())
    }

    async fn storage_classes(&self) -> Result<Vec<StorageClass>, ClusterError> {
        Ok(self.lock().storage_classes.values().cloned().collect())
    }

    async fn csi_nodes(&self) -> Result<Vec<CSINode>, ClusterError> {
        Ok(self.lock().csi_nodes.values().cloned().collect())
    }

    async fn namespaces(&self) -> Result<Vec<Namespace>, ClusterError> {
        Ok(self.lock().namespaces.values().cloned().collect())
    }

    async fn capacity_buffers(&self) -> Result<Vec<CapacityBuffer>, ClusterError> {
        Ok(self.lock().capacity_buffers.values().cloned().collect())
    }

    async fn pod_templates(&self) -> Result<Vec<PodTemplate>, ClusterError> {
        Ok(self.lock().pod_templates.values().cloned().collect())
    }

    async fn scalable_workloads(&self) -> Result<Vec<ScalableWorkload>, ClusterError> {
        Ok(self.lock().scalable_workloads.values().cloned().collect())
    }

    /// Bumped by every write, whoever makes it (the driver, a test, the
    /// cluster's own kubelet, scheduler and ReplicaSet), except those that
    /// change nothing (a tick that registers and binds nothing, a taint
    /// already there, an eviction refused), so that a quiet cluster keeps
    /// its revision.
    fn revision(&self) -> Option<u64> {
        Some(self.lock().revision)
    }

    async fn create_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let mut objects = self.lock();
        if objects.node_claims.contains_key(&name) {
            return Err(ClusterError::AlreadyExists {
                kind: "NodeClaim",
                name,
            });
        }
        objects.node_claims.insert(name, claim);
        objects.changed();
        Ok(())
    }

    async fn update_node_claim(&self, claim: NodeClaim) -> Result<(), ClusterError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let mut objects = self.lock();
        let stored = objects
            .node_claims
            .get_mut(&name)
            .ok_or_else(|| not_found("NodeClaim", &name))?;
        // The API server keeps the deletion timestamp whatever an update says.
        let deleting = stored.metadata.deletion_timestamp.take();
        // The pod events this cluster noted since the writer read the claim
        // stay, as another controller's status patch would.
        let noted = stored
            .status
            .as_ref()
            .and_then(|s| s.last_pod_event_time.clone());
        *stored = claim;
        if deleting.is_some() {
            stored.metadata.deletion_timestamp = deleting;
        }
        if let Some(noted) = noted
            && let Some(status) = stored.status.as_mut()
            && status
                .last_pod_event_time
                .as_ref()
                .is_none_or(|t| t.0 < noted.0)
        {
            status.last_pod_event_time = Some(noted);
        }
        objects.changed();
        Ok(())
    }

    async fn delete_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let now = objects.now;
        let claim = objects
            .node_claims
            .get_mut(name)
            .ok_or_else(|| not_found("NodeClaim", name))?;
        if claim.metadata.deletion_timestamp.is_none() {
            claim.metadata.deletion_timestamp = Some(Time(now));
            objects.changed();
        }
        Ok(())
    }

    async fn remove_node_claim(&self, name: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let claim = objects
            .node_claims
            .remove(name)
            .ok_or_else(|| not_found("NodeClaim", name))?;
        objects.changed();
        let provider_id = claim.status.and_then(|s| s.provider_id);
        let nodes: Vec<String> = objects
            .nodes
            .iter()
            .filter(|(_, n)| {
                provider_id.is_some()
                    && n.spec.as_ref().and_then(|s| s.provider_id.as_ref()) == provider_id.as_ref()
            })
            .map(|(name, _)| name.clone())
            .collect();
        for node in nodes {
            evict(&mut objects, &node);
            objects.nodes.remove(&node);
        }
        Ok(())
    }

    async fn update_node(&self, node: Node) -> Result<(), ClusterError> {
        let name = node.metadata.name.clone().unwrap_or_default();
        let mut objects = self.lock();
        let stored = objects
            .nodes
            .get_mut(&name)
            .ok_or_else(|| not_found("Node", &name))?;
        *stored = Arc::new(node);
        objects.changed();
        Ok(())
    }

    async fn taint_node(&self, name: &str, taint: Taint) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let node = objects
            .nodes
            .get_mut(name)
            .ok_or_else(|| not_found("Node", name))?;
        // Tainting a tainted node changes nothing (not even its copy): a
        // node draining for long is tainted again at every pass, and stays
        // quiet.
        let tainted = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|taints| {
                taints
                    .iter()
                    .any(|t| t.key == taint.key && t.effect == taint.effect)
            });
        if !tainted {
            Arc::make_mut(node)
                .spec
                .get_or_insert_with(Default::default)
                .taints
                .get_or_insert_with(Vec::new)
                .push(taint);
            objects.changed();
        }
        Ok(())
    }

    async fn untaint_node(&self, name: &str, key: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let node = objects
            .nodes
            .get_mut(name)
            .ok_or_else(|| not_found("Node", name))?;
        let tainted = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|taints| taints.iter().any(|t| t.key == key));
        if tainted
            && let Some(taints) = Arc::make_mut(node)
                .spec
                .as_mut()
                .and_then(|s| s.taints.as_mut())
        {
            taints.retain(|t| t.key != key);
            objects.changed();
        }
        Ok(())
    }

    async fn evict_pod(&self, key: &PodKey) -> Result<Eviction, ClusterError> {
        let mut objects = self.lock();
        let Some(pod) = objects.pods.get(key) else {
            return Ok(Eviction::Evicted);
        };
        if eviction_refused(&objects.pod_disruption_budgets, pod) {
            return Ok(Eviction::Blocked);
        }
        take_off(&mut objects, key);
        objects.changed();
        Ok(Eviction::Evicted)
    }

    async fn nominate_pod(&self, pod: &PodKey, node: &str) -> Result<(), ClusterError> {
        let mut objects = self.lock();
        let stored = objects
            .pods
            .get_mut(pod)
            .ok_or_else(|| not_found("Pod", pod.as_str()))?;
        Arc::make_mut(stored)
            .status
            .get_or_insert_with(PodStatus::default)
            .nominated_node_name = Some(node.to_owned());
        objects.changed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
