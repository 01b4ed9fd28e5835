//! The pod as the engine plans with it: [`PodInfo`], what a k8s-openapi
//! [`Pod`] says that planning reads, and much smaller.
//!
//! A `Pod` is large even before anything is set, and grows with each
//! container: a big cluster's pods were most of a plan's memory, most of it
//! images, commands, probes and statuses no plan reads (the figures are in
//! `docs/performance.md`, "Pods as planning reads them"). A `PodInfo` keeps
//! the pod's metadata, its node, the four things of its status planning
//! asks about, and its spec trimmed to what scheduling reads. The trimmed
//! spec is shared: replicas of one template point at one copy (the spec's
//! `nodeName`, the one field that differs between them, is the pod's own
//! [`node_name`](PodInfo::node_name)). This is kube-scheduler's `PodInfo`
//! idea: the scheduler's view of a pod, built once when the pod is read.
//!
//! The fields keep the names and types `Pod` gives them, so code that reads
//! a pod reads either; [`PodFields`] is what the helpers that take both ask.

use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Pod, PodCondition, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

/// What a pod says that planning reads: its metadata (but `managedFields`),
/// its node, the part of its status planning asks about, and its spec
/// trimmed to what scheduling reads and shared between replicas.
///
/// A k8s-openapi `Pod` carries images, commands, probes and statuses no plan
/// reads (see the module documentation). This is kube-scheduler's
/// `PodInfo` idea, the scheduler's view of a pod built once when it is read.
/// The fields keep the names and types `Pod` gives them; build one with
/// [`PodInfo::of`], or with a [`PodInterner`] to share the specs of many.
///
/// ```
/// use karpenter_core::pods::{PodFields, PodInfo, PodInterner};
/// use k8s_openapi::api::core::v1::Pod;
///
/// let pod: Pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web-0", "namespace": "shop"},
///     "spec": {"nodeName": "node-a", "containers": [{"name": "app", "image": "shop/web:1"}]},
/// }))?;
/// let mut interner = PodInterner::new();
/// let info = interner.pod_info(&pod);
/// assert_eq!(info.node_name(), Some("node-a"));
/// assert_eq!(info.spec.as_ref().unwrap().containers[0].image, None);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodInfo {
    /// The pod's metadata, but for `managedFields`.
    pub metadata: ObjectMeta,
    /// The spec trimmed to what scheduling reads, shared between pods of
    /// one template; its `nodeName` is always unset (see
    /// [`node_name`](Self::node_name)).
    pub spec: Option<Arc<PodSpec>>,
    /// `spec.nodeName`: the node the pod is bound to.
    pub node_name: Option<String>,
    /// What of `status` planning reads.
    pub status: Option<PodInfoStatus>,
}

/// The part of a pod's `status` planning reads, under the names `PodStatus`
/// gives them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodInfoStatus {
    /// `phase`: whether the pod has finished.
    pub phase: Option<String>,
    /// The `PodScheduled` and `Ready` conditions, in their order, with their
    /// type, status and reason (messages and times are not read).
    pub conditions: Option<Vec<PodCondition>>,
    /// `nominatedNodeName`: where the kube-scheduler makes room for it.
    pub nominated_node_name: Option<String>,
    /// `startTime`: when a `do-not-disrupt` duration starts.
    pub start_time: Option<Time>,
}

/// The condition types a [`PodInfoStatus`] keeps.
const KEPT_CONDITIONS: [&str; 2] = ["PodScheduled", "Ready"];

impl PodInfoStatus {
    /// What planning reads of `status`.
    pub fn of(status: &PodStatus) -> Self {
        let conditions = status.conditions.as_ref().map(|conditions| {
            conditions
                .iter()
                .filter(|c| KEPT_CONDITIONS.contains(&c.type_.as_str()))
                .map(|c| PodCondition {
                    type_: c.type_.clone(),
                    status: c.status.clone(),
                    reason: c.reason.clone(),
                    ..PodCondition::default()
                })
                .collect()
        });
        PodInfoStatus {
            phase: status.phase.clone(),
            conditions,
            nominated_node_name: status.nominated_node_name.clone(),
            start_time: status.start_time.clone(),
        }
    }
}

impl PodInfo {
    /// What planning reads of `pod`, its spec its own. Use a [`PodInterner`]
    /// to share the specs of many pods.
    pub fn of(pod: &Pod) -> Self {
        Self::with_spec(pod, Arc::new)
    }

    fn with_spec(pod: &Pod, share: impl FnOnce(PodSpec) -> Arc<PodSpec>) -> Self {
        let mut metadata = pod.metadata.clone();
        metadata.managed_fields = None;
        PodInfo {
            metadata,
            spec: pod.spec.as_ref().map(|spec| share(scheduling_spec(spec))),
            node_name: pod.spec.as_ref().and_then(|spec| spec.node_name.clone()),
            status: pod.status.as_ref().map(PodInfoStatus::of),
        }
    }

    /// A `Pod` holding what this says (and nothing planning does not read):
    /// to write a snapshot out as manifests. Reading it back gives an equal
    /// `PodInfo`.
    pub fn to_pod(&self) -> Pod {
        let spec = self.spec.as_deref().map(|spec| PodSpec {
            node_name: self.node_name.clone(),
            ..spec.clone()
        });
        let status = self.status.as_ref().map(|status| PodStatus {
            phase: status.phase.clone(),
            conditions: status.conditions.clone(),
            nominated_node_name: status.nominated_node_name.clone(),
            start_time: status.start_time.clone(),
            ..PodStatus::default()
        });
        Pod {
            metadata: self.metadata.clone(),
            spec,
            status,
        }
    }
}

impl From<&Pod> for PodInfo {
    fn from(pod: &Pod) -> Self {
        PodInfo::of(pod)
    }
}

impl From<Pod> for PodInfo {
    fn from(pod: Pod) -> Self {
        PodInfo::of(&pod)
    }
}

/// `spec` with only what scheduling reads: where the pod may run
/// (`nodeSelector`, `affinity`, `tolerations`, `topologySpreadConstraints`),
/// what it needs (each container's and init container's name, resources,
/// ports and restart policy, in their order; pod-level resources, overhead,
/// resource claims, volumes) and its priority. `nodeName` is left unset.
fn scheduling_spec(spec: &PodSpec) -> PodSpec {
    let container = |c: &Container| Container {
        name: c.name.clone(),
        resources: c.resources.clone(),
        ports: c.ports.clone(),
        restart_policy: c.restart_policy.clone(),
        ..Container::default()
    };
    PodSpec {
        affinity: spec.affinity.clone(),
        containers: spec.containers.iter().map(container).collect(),
        init_containers: spec
            .init_containers
            .as_ref()
            .map(|init| init.iter().map(container).collect()),
        node_selector: spec.node_selector.clone(),
        overhead: spec.overhead.clone(),
        priority: spec.priority,
        priority_class_name: spec.priority_class_name.clone(),
        resource_claims: spec.resource_claims.clone(),
        resources: spec.resources.clone(),
        tolerations: spec.tolerations.clone(),
        topology_spread_constraints: spec.topology_spread_constraints.clone(),
        volumes: spec.volumes.clone(),
        ..PodSpec::default()
    }
}

/// Builds [`PodInfo`]s whose equal specs are one shared copy: replicas of a
/// template, read one after another, keep one spec between them.
#[derive(Debug, Default)]
pub struct PodInterner {
    specs: HashMap<u64, Vec<Arc<PodSpec>>>,
    /// How many specs `specs` holds: asked after every pod a watch reads.
    distinct: usize,
}

impl PodInterner {
    /// An interner that shares nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// What planning reads of `pod`, its spec shared with any equal one this
    /// interner has given out.
    pub fn pod_info(&mut self, pod: &Pod) -> PodInfo {
        PodInfo::with_spec(pod, |spec| self.share(spec))
    }

    /// Shares `pod`'s spec with any equal one this interner has given out:
    /// for pods read one by one (in parallel, say) and shared afterwards.
    pub fn intern(&mut self, pod: &mut PodInfo) {
        if let Some(spec) = pod.spec.take() {
            pod.spec = Some(self.share(Arc::unwrap_or_clone(spec)));
        }
    }

    /// Forgets the specs no pod shares any more (only the interner holds
    /// them): for an interner that lives as long as a watch, whose pods come
    /// and go.
    pub fn forget_unused(&mut self) {
        self.specs.retain(|_, same| {
            same.retain(|spec| Arc::strong_count(spec) > 1);
            !same.is_empty()
        });
        self.distinct = self.specs.values().map(Vec::len).sum();
    }

    /// How many distinct specs it holds.
    pub fn distinct_specs(&self) -> usize {
        self.distinct
    }

    fn share(&mut self, spec: PodSpec) -> Arc<PodSpec> {
        let mut hasher = HashWriter(rustc_hash::FxHasher::default());
        // PodSpec has no `Hash`: its JSON is hashed instead, and equal
        // hashes confirmed with `==`. A spec that cannot be written as JSON
        // (none can fail; the error is only the writer's) shares nothing.
        if serde_json::to_writer(&mut hasher, &spec).is_err() {
            return Arc::new(spec);
        }
        let same = self.specs.entry(hasher.0.finish()).or_default();
        if let Some(shared) = same.iter().find(|shared| ***shared == spec) {
            return Arc::clone(shared);
        }
        let shared = Arc::new(spec);
        same.push(Arc::clone(&shared));
        self.distinct += 1;
        shared
    }
}

/// Feeds what is written to a hasher.
struct HashWriter<H>(H);

impl<H: Hasher> std::io::Write for HashWriter<H> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The fields of a pod the engine's pod helpers read, from a full [`Pod`] or
/// a [`PodInfo`] alike: the helpers ([`bound_node`](super::bound_node),
/// [`is_terminal`](super::is_terminal), ...) take either.
pub trait PodFields {
    /// `metadata`.
    fn metadata(&self) -> &ObjectMeta;
    /// `spec`, as far as scheduling reads it (`nodeName` aside: see
    /// [`node_name`](Self::node_name)).
    fn scheduling(&self) -> Option<&PodSpec>;
    /// `spec.nodeName`, as written (possibly empty).
    fn node_name(&self) -> Option<&str>;
    /// `status.phase`.
    fn phase(&self) -> Option<&str>;
    /// `status.conditions` (those of type `PodScheduled` and `Ready` at least).
    fn conditions(&self) -> Option<&[PodCondition]>;
    /// `status.nominatedNodeName`, as written (possibly empty).
    fn nominated_node_name(&self) -> Option<&str>;
    /// `status.startTime`.
    fn start_time(&self) -> Option<&Time>;
}

/// The status half of `PodFields`, for a `Pod` and a `PodInfo` alike: their
/// statuses name these fields the same.
macro_rules! status_fields {
    () => {
        fn phase(&self) -> Option<&str> {
            self.status.as_ref()?.phase.as_deref()
        }
        fn conditions(&self) -> Option<&[PodCondition]> {
            self.status.as_ref()?.conditions.as_deref()
        }
        fn nominated_node_name(&self) -> Option<&str> {
            self.status.as_ref()?.nominated_node_name.as_deref()
        }
        fn start_time(&self) -> Option<&Time> {
            self.status.as_ref()?.start_time.as_ref()
        }
    };
}

impl PodFields for Pod {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn scheduling(&self) -> Option<&PodSpec> {
        self.spec.as_ref()
    }
    fn node_name(&self) -> Option<&str> {
        self.spec.as_ref()?.node_name.as_deref()
    }
    status_fields!();
}

impl PodFields for PodInfo {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn scheduling(&self) -> Option<&PodSpec> {
        self.spec.as_deref()
    }
    fn node_name(&self) -> Option<&str> {
        self.node_name.as_deref()
    }
    status_fields!();
}

/// `PodFields` for a pointer to pods: what the pod pointed at says.
macro_rules! forward_pod_fields {
    ($($pointer:ty),*) => {$(
        impl<P: PodFields + ?Sized> PodFields for $pointer {
            fn metadata(&self) -> &ObjectMeta {
                (**self).metadata()
            }
            fn scheduling(&self) -> Option<&PodSpec> {
                (**self).scheduling()
            }
            fn node_name(&self) -> Option<&str> {
                (**self).node_name()
            }
            fn phase(&self) -> Option<&str> {
                (**self).phase()
            }
            fn conditions(&self) -> Option<&[PodCondition]> {
                (**self).conditions()
            }
            fn nominated_node_name(&self) -> Option<&str> {
                (**self).nominated_node_name()
            }
            fn start_time(&self) -> Option<&Time> {
                (**self).start_time()
            }
        }
    )*};
}

forward_pod_fields!(&P, Arc<P>);

#[cfg(test)]
mod tests;
