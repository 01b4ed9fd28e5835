//! [`InMemoryCluster`]: a [`Cluster`] held in memory that also plays the
//! kubelet, the kube-scheduler and the ReplicaSet controller.
//!
//! One file per part it plays, all over one store ([`objects`]) behind one
//! lock: what a test writes ([`apply`]), the Deployments it runs
//! ([`workloads`]), the kubelet ([`kubelet`]), the kube-scheduler
//! ([`scheduler`]), pods taken off their nodes ([`eviction`]), and the
//! [`Cluster`] trait the driver reads and writes through ([`api`]).

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use karpenter_core::api::NodeClaim;
#[cfg(doc)]
use karpenter_core::cluster::Cluster;
use karpenter_core::pods::{PodKey, bound_node, is_daemon_pod, is_terminal};

use objects::Objects;

mod api;
mod apply;
mod eviction;
mod kubelet;
mod objects;
mod scheduler;
mod workloads;

#[cfg(test)]
mod tests;

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
}
