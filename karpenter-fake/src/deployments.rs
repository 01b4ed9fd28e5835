//! Deployments run by the in-memory cluster: a Deployment's replicas are
//! pods `<deployment>-<n>` made from its template and owned by it; scaling
//! makes new ones pending, or deletes as a ReplicaSet does (pods not yet
//! bound first, then the newest).

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use karpenter_core::pods::{PodKey, bound_node, pod_key};

use crate::generate::workload::unschedulable_status;

/// What the cluster keeps of a Deployment to run its pods.
#[derive(Clone, Debug)]
pub(crate) struct Running {
    pub(crate) namespace: String,
    pub(crate) name: String,
    uid: String,
    template: PodTemplateSpec,
    /// The next pod's number: names are never reused.
    next: u64,
}

impl Running {
    /// A Deployment to run (its namespace `default` when unset).
    pub(crate) fn of(deployment: &Deployment) -> Running {
        let metadata = &deployment.metadata;
        let namespace = metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let name = metadata.name.clone().unwrap_or_default();
        let uid = metadata
            .uid
            .clone()
            .unwrap_or_else(|| format!("deployment/{namespace}/{name}"));
        Running {
            namespace,
            name,
            uid,
            template: deployment.spec.template.clone(),
            next: 0,
        }
    }

    /// Whether `pod` is one of this Deployment's: owned by it, or named as
    /// its pods are (`<deployment>-<n>`) in its namespace.
    pub(crate) fn owns(&self, pod: &Pod) -> bool {
        let metadata = &pod.metadata;
        if metadata.namespace.as_deref().unwrap_or("default") != self.namespace {
            return false;
        }
        let owned = metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "Deployment" && o.name == self.name);
        owned
            || self
                .number(metadata.name.as_deref().unwrap_or_default())
                .is_some()
    }

    /// `n` of a pod named `<deployment>-<n>`.
    fn number(&self, pod_name: &str) -> Option<u64> {
        pod_name
            .strip_prefix(self.name.as_str())?
            .strip_prefix('-')?
            .parse()
            .ok()
    }

    /// Takes its own among `pods` (see [`owns`](Self::owns)), so that new
    /// names come after theirs.
    pub(crate) fn adopt<'p>(&mut self, pods: impl IntoIterator<Item = &'p Pod>) {
        for pod in pods {
            if !self.owns(pod) {
                continue;
            }
            if let Some(n) = self.number(pod.metadata.name.as_deref().unwrap_or_default()) {
                self.next = self.next.max(n.saturating_add(1));
            }
        }
    }

    /// A new pending pod of this Deployment, created at `now`.
    pub(crate) fn new_pod(&mut self, now: Timestamp) -> Pod {
        let name = format!("{}-{}", self.name, self.next);
        self.next = self.next.saturating_add(1);
        let template = self.template.metadata.clone().unwrap_or_default();
        let owner = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            controller: Some(true),
            ..OwnerReference::default()
        };
        Pod {
            metadata: ObjectMeta {
                uid: Some(format!("{}-{name}", self.uid)),
                name: Some(name),
                namespace: Some(self.namespace.clone()),
                labels: template.labels,
                annotations: template.annotations,
                owner_references: Some(vec![owner]),
                creation_timestamp: Some(Time(now)),
                ..ObjectMeta::default()
            },
            spec: self.template.spec.clone(),
            status: Some(unschedulable_status(Time(now))),
        }
    }
}

/// The pods to delete to bring `owned` (a Deployment's pods) down to
/// `replicas`: as a ReplicaSet picks them, those not bound to a node
/// first, then the newest (highest number, then name).
pub(crate) fn surplus(
    running: &Running,
    owned: &BTreeMap<PodKey, Arc<Pod>>,
    replicas: usize,
) -> Vec<PodKey> {
    let Some(excess) = owned.len().checked_sub(replicas) else {
        return Vec::new();
    };
    let mut ranked: Vec<(bool, std::cmp::Reverse<u64>, &PodKey)> = owned
        .iter()
        .map(|(key, pod)| {
            let number = running
                .number(pod.metadata.name.as_deref().unwrap_or_default())
                .unwrap_or(0);
            (bound_node(pod).is_some(), std::cmp::Reverse(number), key)
        })
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(excess)
        .map(|(_, _, key)| key.clone())
        .collect()
}

/// The key of a pod.
pub(crate) fn key_of(pod: &Pod) -> PodKey {
    pod_key(pod)
}
