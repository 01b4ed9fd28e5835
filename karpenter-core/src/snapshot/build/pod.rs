//! A pod written in code.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, Pod, PodSpec, PodStatus, ResourceRequirements, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use crate::pods::unschedulable_condition;

/// A pod in a namespace, pending (the kube-scheduler marked it
/// unschedulable) until it is put [on a node](Self::on_node). It has one
/// container, `app`, which asks for nothing until given requests.
#[derive(Clone, Debug)]
pub struct PodBuilder {
    pod: Pod,
}

impl PodBuilder {
    /// A pending pod `namespace/name`, its UID `namespace/name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        let (namespace, name) = (namespace.into(), name.into());
        let pod = Pod {
            metadata: ObjectMeta {
                uid: Some(format!("{namespace}/{name}")),
                name: Some(name),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".to_owned(),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some("Pending".to_owned()),
                conditions: Some(vec![unschedulable_condition()]),
                ..PodStatus::default()
            }),
        };
        Self { pod }
    }

    /// Requests `cpu` and `memory` (Kubernetes quantities: `"500m"`, `"1Gi"`).
    pub fn requests(self, cpu: impl Into<String>, memory: impl Into<String>) -> Self {
        self.request("cpu", cpu).request("memory", memory)
    }

    /// Requests `quantity` of `resource` (`nvidia.com/gpu`, ...).
    pub fn request(mut self, resource: impl Into<String>, quantity: impl Into<String>) -> Self {
        let container = &mut self.spec().containers[0];
        container
            .resources
            .get_or_insert_with(ResourceRequirements::default)
            .requests
            .get_or_insert_with(BTreeMap::new)
            .insert(resource.into(), Quantity(quantity.into()));
        self
    }

    /// Adds a label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.pod
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// Adds a `nodeSelector` entry.
    pub fn node_selector(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.spec()
            .node_selector
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// Adds a toleration.
    pub fn toleration(mut self, toleration: Toleration) -> Self {
        self.spec()
            .tolerations
            .get_or_insert_with(Vec::new)
            .push(toleration);
        self
    }

    /// When the pod was created (the queue takes older pods first on equal
    /// requests).
    pub fn created(mut self, at: Timestamp) -> Self {
        self.pod.metadata.creation_timestamp = Some(Time(at));
        self
    }

    /// Binds the pod to `node`: running there, no longer pending.
    pub fn on_node(mut self, node: impl Into<String>) -> Self {
        self.spec().node_name = Some(node.into());
        self.pod.status = Some(PodStatus {
            phase: Some("Running".to_owned()),
            ..PodStatus::default()
        });
        self
    }

    /// The pod.
    pub fn build(self) -> Pod {
        self.pod
    }

    fn spec(&mut self) -> &mut PodSpec {
        self.pod.spec.get_or_insert_with(PodSpec::default)
    }
}
